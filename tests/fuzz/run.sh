#!/usr/bin/env bash
# tests/fuzz/run.sh — build the libFuzzer targets, make the seed corpus from
# real pages (gen_corpus) and run each target for a bounded time over it.
#
#   bash tests/fuzz/run.sh                  # LSM_FUZZ_SECONDS (20) per target
#   bash tests/fuzz/run.sh --seconds 3600   # long mode: an hour per target
#   bash tests/fuzz/run.sh --long           # the same as --seconds 3600
#   bash tests/fuzz/run.sh datapage key     # only these targets
#
# Targets: datapage fence runheader bloom logpage key (tests/fuzz/fuzz_*.cc,
# fuzz_key.c).  Each first replays the seeds and every input in
# tests/fuzz/regress/<target>/ (inputs that once failed), then mutates.  The
# corpus a run grows is kept in $LSM_FUZZ_OUT/corpus/<target> (default
# tests/fuzz/build/out) and reused by the next run.  A crash, a sanitizer
# report or a contract violation fails the run: the reproducer's path is
# printed (replay it with build/fuzz_<target> PATH; keep it in
# regress/<target>/ once fixed).  Prints, per target, executions per second
# and the coverage (libFuzzer's cov: edges and ft: features) at the end.
# PG_CONFIG names the PostgreSQL whose server headers fuzz_key and
# gen_corpus compile against (the shim's key codec).
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SECONDS_PER_TARGET=${LSM_FUZZ_SECONDS:-20}
ALL_TARGETS=(datapage fence runheader bloom logpage key)
TARGETS=()
while [ $# -gt 0 ]; do
	case $1 in
	--seconds)
		[ $# -ge 2 ] || { echo "--seconds needs a number" >&2; exit 2; }
		SECONDS_PER_TARGET=$2
		shift 2
		;;
	--long) SECONDS_PER_TARGET=3600; shift ;;
	-h | --help) sed -n '2,21p' "$0"; exit 0 ;;
	-*) echo "unknown option $1" >&2; exit 2 ;;
	*) TARGETS+=("$1"); shift ;;
	esac
done
[ ${#TARGETS[@]} -gt 0 ] || TARGETS=("${ALL_TARGETS[@]}")
for t in "${TARGETS[@]}"; do
	[ -f "$HERE/fuzz_$t.cc" ] || [ -f "$HERE/fuzz_$t.c" ] ||
		{ echo "no fuzz target '$t' (${ALL_TARGETS[*]})" >&2; exit 2; }
done
case $SECONDS_PER_TARGET in '' | *[!0-9]*) echo "--seconds: not a number" >&2; exit 2 ;; esac

PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
OUT=${LSM_FUZZ_OUT:-$HERE/build${LSM_BUILD_SUFFIX:-}/out}
mkdir -p "$OUT"

echo "==> fuzz: building (make -C tests/fuzz, clang $(clang-14 --version 2>/dev/null | sed -n 's/.*version \([0-9.]*\).*/\1/p;q'))"
if ! make -s -C "$HERE" -j2 PG_CONFIG="$PG_CONFIG" >"$OUT/build.log" 2>&1; then
	tail -n 40 "$OUT/build.log"
	echo "fuzz: the build failed (clang-14 and libclang-rt-14-dev installed? tests/setup.sh installs them)" >&2
	exit 1
fi
rm -rf "$OUT/seeds"
ASAN_OPTIONS=detect_leaks=0 "$HERE/build${LSM_BUILD_SUFFIX:-}/gen_corpus" "$OUT/seeds" || exit 1

export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export ASAN_OPTIONS=abort_on_error=1:detect_leaks=1
failed=0
summary=()
for t in "${TARGETS[@]}"; do
	work=$OUT/corpus/$t
	crashes=$OUT/crashes/$t
	log=$OUT/$t.log
	mkdir -p "$work" "$crashes"
	dirs=("$work" "$OUT/seeds/$t")
	[ -d "$HERE/regress/$t" ] && dirs+=("$HERE/regress/$t")
	echo "==> fuzz: $t for ${SECONDS_PER_TARGET}s"
	# -max_len: a page's content area is under 8 kB; -timeout: an input that
	# takes seconds is a hang (a loop on bad bytes), reported like a crash.
	"$HERE/build${LSM_BUILD_SUFFIX:-}/fuzz_$t" -max_total_time="$SECONDS_PER_TARGET" -max_len=8192 \
		-timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
		-artifact_prefix="$crashes/" "${dirs[@]}" >"$log" 2>&1
	rc=$?
	done_line=$(grep -E '^#[0-9]+[[:space:]]+DONE' "$log" | tail -n 1)
	cov=$(sed -nE 's/.* cov: ([0-9]+) .*/\1/p' <<<"$done_line")
	ft=$(sed -nE 's/.* ft: ([0-9]+) .*/\1/p' <<<"$done_line")
	execs=$(sed -nE 's/^stat::number_of_executed_units: *([0-9]+).*/\1/p' "$log" | tail -n 1)
	eps=$(sed -nE 's/^stat::average_exec_per_sec: *([0-9]+).*/\1/p' "$log" | tail -n 1)
	rss=$(sed -nE 's/^stat::peak_rss_mb: *([0-9]+).*/\1/p' "$log" | tail -n 1)
	corp=$(find "$work" -type f | wc -l)
	artifact=$(sed -nE 's/.*Test unit written to (.*)$/\1/p' "$log" | tail -n 1)
	if [ $rc -ne 0 ] || [ -n "$artifact" ]; then
		failed=1
		echo "---- fuzz_$t failed (exit $rc); tail of $log ----"
		grep -vE '^#[0-9]+[[:space:]]+(NEW|REDUCE|pulse)' "$log" | tail -n 40
		echo "fuzz: $t: reproducer ${artifact:-(none written)}"
		echo "fuzz: replay with: $HERE/build${LSM_BUILD_SUFFIX:-}/fuzz_$t ${artifact:-INPUT}"
		summary+=("$(printf '%-10s FAILED  reproducer %s' "$t" "${artifact:-none}")")
	else
		summary+=("$(printf '%-10s ok  %9s execs  %7s exec/s  cov %5s  ft %6s  corpus %5s  rss %sMB' \
			"$t" "${execs:-?}" "${eps:-?}" "${cov:-?}" "${ft:-?}" "$corp" "${rss:-?}")")
	fi
done
echo "==> fuzz summary (${SECONDS_PER_TARGET}s per target, logs in $OUT)"
printf '  %s\n' "${summary[@]}"
exit $failed
