#!/usr/bin/env bash
# tests/check_layers.sh — the C shim's floors point down, and only down.
#
#   bash tests/check_layers.sh          # includes; and calls when the objects are built
#
# Floors, highest first (doc/impl.md, "Layers"):
#   am/ > maint/ > storage/ > shmem/ > key/ > base (src/lsm_compat.h,
#   src/lsm_options.{c,h}) and the C++ core (src/core/, reached only through
#   core/lsm_core.h).
# Checks:
#   1. includes: every #include "..." of a shim file that names a file of this
#      tree names one of the same floor or a lower one;
#   2. the core firewall: no file of src/core/ includes postgres.h or a shim
#      header, and the shim includes no core header but core/lsm_core.h;
#   3. calls (when every object file is built and newer than its source): no
#      object of a floor uses a symbol (function or variable) defined by an
#      object of a higher floor (nm);
#   4. sizes (a report, not a failure): source files over 800 lines.
# Exit status 1 when a check fails, with one line per violation.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 2

rank() { # rank PATH-relative-to-src -> number (higher floor: larger)
	case $1 in
	am/*) echo 5 ;;
	maint/*) echo 4 ;;
	storage/*) echo 3 ;;
	shmem/*) echo 2 ;;
	key/*) echo 1 ;;
	core/*) echo 0 ;;
	*) echo 0 ;;
	esac
}
floor() {
	case $1 in */*) echo "${1%%/*}/" ;; *) echo "base" ;; esac
}

fail=0
violation() {
	echo "LAYERS: $*"
	fail=1
}

# ---------------------------------------------------------------- 1, 2: includes
nfiles=0
while IFS= read -r f; do
	rel=${f#src/}
	nfiles=$((nfiles + 1))
	r=$(rank "$rel")
	dir=$(dirname "$f")
	while IFS= read -r line; do
		lineno=${line%%:*}
		inc=$(sed -E 's/^[0-9]+:[[:space:]]*#[[:space:]]*include[[:space:]]+"([^"]+)".*/\1/' <<<"$line")
		# resolve as the compiler does: the including file's folder, then src/
		if [ -f "$dir/$inc" ]; then
			target=$(realpath --relative-to=src "$dir/$inc")
		elif [ -f "src/$inc" ]; then
			target=$inc
		else
			# not ours (PostgreSQL, system); postgres.h is checked for the core below
			if [[ $rel == core/* ]] && [[ $inc == postgres.h || $inc == postgres_fe.h || $inc == c.h ]]; then
				violation "$f:$lineno: the C++ core includes $inc"
			fi
			continue
		fi
		if [[ $rel == core/* ]]; then
			[[ $target == core/* ]] ||
				violation "$f:$lineno: the C++ core includes shim header $inc"
			continue
		fi
		if [[ $target == core/* ]] && [ "$target" != core/lsm_core.h ]; then
			violation "$f:$lineno: includes core header $inc (the shim sees only core/lsm_core.h)"
			continue
		fi
		t=$(rank "$target")
		if [ "$t" -gt "$r" ]; then
			violation "$f:$lineno: $(floor "$rel") includes $inc of the higher floor $(floor "$target")"
		fi
	done < <(grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]+"' "$f")
done < <(find src -type f \( -name '*.c' -o -name '*.h' -o -name '*.cc' \) | sort)
echo "includes: $nfiles files checked"

# ---------------------------------------------------------------- 3: calls
objs=()
stale=0
while IFS= read -r c; do
	o=${c%.c}.o
	if [ ! -f "$o" ] || [ "$c" -nt "$o" ]; then
		stale=1
		break
	fi
	objs+=("$o")
done < <(find src -mindepth 1 -name '*.c' | sort)
if [ $stale = 1 ] || [ ${#objs[@]} -eq 0 ]; then
	echo "calls: skipped (object files missing or older than their sources; run make first)"
elif ! command -v nm >/dev/null; then
	echo "calls: skipped (nm not installed)"
else
	declare -A owner
	for o in "${objs[@]}"; do
		while read -r _ _ sym; do
			owner[$sym]=${o#src/}
		done < <(nm --defined-only -g "$o" | awk 'NF == 3')
	done
	ncalls=0
	for o in "${objs[@]}"; do
		rel=${o#src/}
		r=$(rank "$rel")
		while read -r _ sym; do
			def=${owner[$sym]:-}
			[ -n "$def" ] || continue
			ncalls=$((ncalls + 1))
			t=$(rank "$def")
			if [ "$t" -gt "$r" ]; then
				violation "${rel%.o}.c uses $sym of ${def%.o}.c (higher floor $(floor "$def"))"
			fi
		done < <(nm -u "$o" | awk '$1 == "U"')
	done
	echo "calls: ${#objs[@]} objects, $ncalls uses of shim symbols checked"
fi

# ---------------------------------------------------------------- 4: sizes
while IFS= read -r f; do
	n=$(wc -l <"$f")
	[ "$n" -gt 800 ] && echo "size: $f has $n lines (over 800)"
done < <(find src -type f \( -name '*.c' -o -name '*.h' -o -name '*.cc' \) | sort)

if [ $fail = 0 ]; then
	echo "layers: ok"
else
	echo "layers: FAILED"
fi
exit $fail
