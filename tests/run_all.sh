#!/usr/bin/env bash
# tests/run_all.sh — the project's test command.  Run as root:
#
#   bash tests/run_all.sh                      # setup + every stage
#   bash tests/run_all.sh --only tap           # one stage (unit|regress|pgtap|tap)
#   bash tests/run_all.sh --only tap 004 002   # TAP/pgTAP/regress files matching a word
#   bash tests/run_all.sh --skip-setup ...     # do not install packages or rebuild
#                                              # (warns if the installed build is older
#                                              # than src/)
#   bash tests/run_all.sh --pg 18              # on PostgreSQL 18 (built once by
#                                              # tests/build_pg18.sh, cached)
#   bash tests/run_all.sh --pg 15,18           # on each version in turn
#   LSM_PG=15,18                               # the same as --pg (CI sets it)
#   LSM_DIFF_SEED=N                            # seed of tap/004_differential
#   LSM_TAP_TIMEOUT=900                        # seconds before a TAP file is killed
#   LSM_FUZZ_SECONDS=20                        # seconds per fuzz target (unit stage)
#
# Stages: unit (tests/check_layers.sh, tests/check_docs.sh, then GoogleTest, `make -C tests/unit
# check`, the same under ASan+UBSan, `make -C tests/unit check SANITIZE=1`, and
# the libFuzzer targets, tests/fuzz/run.sh, LSM_FUZZ_SECONDS=20 per target; with
# --pg 15,18 these two run with the first version only), regress (pg_regress,
# sql/*.sql against expected/*.out), pgtap (pg_prove, tests/pgtap/*.sql), tap
# (prove, tests/t/*.pl with PostgreSQL::Test::Cluster).  Servers run as the
# postgres user from a scratch copy in a temporary directory on private
# sockets.  Each test file (the unit binary and the layering check count
# as one each) is one result;
# the last line printed is "N passed, N failed" (summed over the versions)
# and the exit status is non-zero when anything failed.  Without --pg/LSM_PG
# the PostgreSQL of PG_CONFIG is used (the system's 15 by default).
# LSM_KEEP_SCRATCH=1 keeps the scratch directory.
set -uo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

STAGES=()
FILTERS=()
SKIP_SETUP=0
PG_VERSIONS=${LSM_PG:-}
CHILD_ARGS=()
while [ $# -gt 0 ]; do
	case $1 in
	--only)
		[ $# -ge 2 ] || lsm_die "--only needs unit, regress, pgtap or tap"
		IFS=, read -r -a more <<<"$2"
		STAGES+=("${more[@]}")
		CHILD_ARGS+=("$1" "$2")
		shift 2
		;;
	--only=*)
		IFS=, read -r -a more <<<"${1#--only=}"
		STAGES+=("${more[@]}")
		CHILD_ARGS+=("$1")
		shift
		;;
	--pg)
		[ $# -ge 2 ] || lsm_die "--pg needs 15, 18 or 15,18"
		PG_VERSIONS=$2
		shift 2
		;;
	--pg=*) PG_VERSIONS=${1#--pg=}; shift ;;
	--skip-setup) SKIP_SETUP=1; CHILD_ARGS+=("$1"); shift ;;
	-h | --help) sed -n '2,25p' "$0"; exit 0 ;;
	-*) lsm_die "unknown option $1" ;;
	*) FILTERS+=("$1"); CHILD_ARGS+=("$1"); shift ;;
	esac
done
[ ${#STAGES[@]} -gt 0 ] || STAGES=(unit regress pgtap tap)
for s in "${STAGES[@]}"; do
	case $s in unit | regress | pgtap | tap) ;; *) lsm_die "unknown stage '$s'" ;; esac
done

require_root
cd "$LSM_REPO"

# ---------------------------------------------------------------- versions
IFS=', ' read -r -a VERSIONS <<<"$PG_VERSIONS"
for v in "${VERSIONS[@]}"; do
	case $v in 15 | 18) ;; *) lsm_die "unsupported PostgreSQL version '$v' (15 or 18)" ;; esac
done
if [ ${#VERSIONS[@]} -gt 1 ]; then
	# One run of this script per version; the counts are summed.
	total_pass=0 total_fail=0 lines=()
	for v in "${VERSIONS[@]}"; do
		lsm_log "==================== PostgreSQL $v ===================="
		t0=$SECONDS
		out=$(mktemp)
		# the sanitizer build and the fuzzers test the core and the key codec,
		# the same for every server version: the first version's run has them
		LSM_UNIT_ONCE_DONE=$([ "$v" = "${VERSIONS[0]}" ] && echo 0 || echo 1) \
			bash "$LSM_REPO/tests/run_all.sh" --pg "$v" "${CHILD_ARGS[@]}" 2>&1 | tee "$out"
		rc=${PIPESTATUS[0]}
		last=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$out" | tail -n 1)
		rm -f "$out"
		if [ -n "$last" ]; then
			p=${last%% passed*}
			f=${last#*, }
			f=${f%% failed*}
		else
			p=0 f=1
		fi
		[ $rc -ne 0 ] && [ "$f" -eq 0 ] && f=1
		total_pass=$((total_pass + p))
		total_fail=$((total_fail + f))
		lines+=("PostgreSQL $v: $p passed, $f failed ($((SECONDS - t0))s)")
	done
	echo
	echo "==================== lsm_am test summary, all versions ===================="
	for l in "${lines[@]}"; do echo "  $l"; done
	echo "$total_pass passed, $total_fail failed"
	[ "$total_fail" -eq 0 ]
	exit
fi
if [ ${#VERSIONS[@]} -eq 1 ]; then
	lsm_select_pg "${VERSIONS[0]}" "$SKIP_SETUP" ||
		{ echo "0 passed, 1 failed"; lsm_die "PostgreSQL ${VERSIONS[0]} is not available"; }
fi
lsm_log "testing on $("$PG_CONFIG" --version) ($PG_CONFIG)"

PASSED=0
FAILED=0
FAILED_NAMES=()
TIMINGS=()

record() { # record ok|fail NAME
	if [ "$1" = ok ]; then
		PASSED=$((PASSED + 1))
	else
		FAILED=$((FAILED + 1))
		FAILED_NAMES+=("$2")
	fi
}

want_stage() {
	local s
	for s in "${STAGES[@]}"; do [ "$s" = "$1" ] && return 0; done
	return 1
}

# Does file name $1 match the command-line filters (all files when none)?
# MATCHED counts the files a filter matched: a filter that matches nothing
# is a failure, not "0 passed, 0 failed".
MATCHED=0
wanted() {
	local f
	[ ${#FILTERS[@]} -eq 0 ] && return 0
	for f in "${FILTERS[@]}"; do
		case $(basename "$1") in *"$f"*) MATCHED=$((MATCHED + 1)); return 0 ;; esac
	done
	return 1
}

summary() {
	local t
	echo
	echo "==================== lsm_am test summary: PostgreSQL $PG_MAJOR ===================="
	for t in "${TIMINGS[@]}"; do echo "  $t"; done
	if [ ${#FAILED_NAMES[@]} -gt 0 ]; then
		echo "  failed:"
		for t in "${FAILED_NAMES[@]}"; do echo "    - $t"; done
	fi
	echo "$PASSED passed, $FAILED failed"
}

SCRATCH=
SMALL_FS=
cleanup() {
	local d
	[ -n "$SCRATCH" ] || return 0
	for d in "$SCRATCH"/cluster-*; do
		[ -d "$d" ] && cluster_stop "$d"
	done
	if [ -n "$SMALL_FS" ] && mountpoint -q "$SMALL_FS"; then
		umount "$SMALL_FS" || umount -l "$SMALL_FS"
	fi
	if [ "${LSM_KEEP_SCRATCH:-0}" = 1 ]; then
		echo "scratch kept in $SCRATCH" >&2
	else
		rm -rf "$SCRATCH"
	fi
	SCRATCH=
}
trap 'cleanup >/dev/null 2>&1' EXIT
trap 'exit 130' INT TERM

# ---------------------------------------------------------------- setup
if [ "$SKIP_SETUP" = 0 ]; then
	start=$SECONDS
	lsm_log "setup: packages, build, install"
	if ! bash "$LSM_REPO/tests/setup.sh"; then
		record fail "setup (tests/setup.sh: package install or build failed)"
		TIMINGS+=("setup    $((SECONDS - start))s  FAILED")
		summary
		exit 1
	fi
	TIMINGS+=("setup    $((SECONDS - start))s")
	lsm_use_pg_config "$PG_CONFIG" # installed now: the paths it reports
else
	# --skip-setup does not build: say so when the installed library is
	# older than the sources it would test (a stale build passes or fails
	# for reasons that are not in this tree)
	so=$("$PG_CONFIG" --pkglibdir)/lsm_am.so
	if [ ! -f "$so" ]; then
		lsm_log "WARNING: --skip-setup, and lsm_am is not installed in $("$PG_CONFIG" --pkglibdir)"
	elif [ -n "$(find "$LSM_REPO/src" -newer "$so" \( -name '*.c' -o -name '*.h' -o -name '*.cc' \) -print -quit)" ]; then
		lsm_log "WARNING: --skip-setup, and $so is older than the sources in $LSM_REPO/src: it tests another build (make install PG_CONFIG=$PG_CONFIG, or run without --skip-setup)"
	fi
fi

SCRATCH=$(make_scratch_dir run) || lsm_die "cannot make a scratch directory"
SRC=$SCRATCH/src
mkdir -p "$SRC"
copy_tests_to "$SRC"

# ---------------------------------------------------------------- unit
run_unit() {
	local start=$SECONDS log=$SCRATCH/unit.log rc t0
	# The floors of the C shim point down (includes, and calls when built).
	lsm_log "unit: tests/check_layers.sh"
	if bash "$LSM_REPO/tests/check_layers.sh"; then
		record ok unit/layers
	else
		record fail "unit/layers (tests/check_layers.sh: an include or call points up)"
	fi
	# README's Functions table names the functions' columns as the SQL does.
	lsm_log "unit: tests/check_docs.sh"
	if bash "$LSM_REPO/tests/check_docs.sh"; then
		record ok unit/docs
	else
		record fail "unit/docs (tests/check_docs.sh: README's Functions table and the SQL differ)"
	fi
	lsm_log "unit: make -C tests/unit check"
	if [ ! -f "$LSM_REPO/tests/unit/Makefile" ]; then
		echo "tests/unit/Makefile is missing: no unit tests to run" >&2
		record fail "unit (tests/unit/Makefile missing)"
	else
		make -C "$LSM_REPO/tests/unit" check PG_CONFIG="$PG_CONFIG" >"$log" 2>&1
		rc=$?
		# The GoogleTest summary lines, or the whole tail when it did not get there
		grep -E '^\[(==========|  PASSED  |  FAILED  )\]' "$log" || tail -n 40 "$log"
		if [ $rc -eq 0 ]; then
			record ok unit
		else
			echo "---- unit test output (tail) ----"
			tail -n 80 "$log"
			record fail "unit (make -C tests/unit check exited $rc)"
		fi
	fi
	if [ "${LSM_UNIT_ONCE_DONE:-0}" = 1 ]; then
		lsm_log "unit: ASan+UBSan and the fuzzers ran with the first PostgreSQL version"
		TIMINGS+=("unit     $((SECONDS - start))s")
		return
	fi
	# The same tests under ASan + UBSan (a second build, tests/unit/build/sanitize).
	lsm_log "unit: make -C tests/unit check SANITIZE=1"
	t0=$SECONDS
	if make -C "$LSM_REPO/tests/unit" -j2 check SANITIZE=1 PG_CONFIG="$PG_CONFIG" >"$SCRATCH/unit-asan.log" 2>&1; then
		grep -E '^\[(  PASSED  |  FAILED  )\]' "$SCRATCH/unit-asan.log"
		record ok unit/asan
	else
		echo "---- unit tests under ASan+UBSan (tail) ----"
		tail -n 80 "$SCRATCH/unit-asan.log"
		record fail "unit/asan (make -C tests/unit check SANITIZE=1: a test failed or a sanitizer report)"
	fi
	TIMINGS+=("unit/asan $((SECONDS - t0))s")
	# The decoders of disk bytes under libFuzzer, LSM_FUZZ_SECONDS (20) per target.
	lsm_log "unit: tests/fuzz/run.sh (${LSM_FUZZ_SECONDS:-20}s per target)"
	t0=$SECONDS
	if bash "$LSM_REPO/tests/fuzz/run.sh" >"$SCRATCH/fuzz.log" 2>&1; then
		sed -n '/^==> fuzz summary/,$p' "$SCRATCH/fuzz.log"
		record ok unit/fuzz
	else
		grep -vE '^==> fuzz: [a-z]+ for' "$SCRATCH/fuzz.log" | tail -n 80
		record fail "unit/fuzz (tests/fuzz/run.sh: a crash or a contract violation, reproducer above)"
	fi
	TIMINGS+=("unit/fuzz $((SECONDS - t0))s")
	TIMINGS+=("unit     $((SECONDS - start))s")
}

# ---------------------------------------------------------------- regress
run_regress() {
	local start=$SECONDS dir=$SCRATCH/cluster-regress tests=() f name rc line
	local out=$SRC/regress_out log=$SCRATCH/regress.log nfail=0 nseen=0
	# lsm_setup first, always: the extension and the shared helpers
	[ -e "$SRC/sql/lsm_setup.sql" ] && tests+=(lsm_setup)
	for f in "$SRC"/sql/*.sql; do
		[ -e "$f" ] || continue
		name=$(basename "$f" .sql)
		case $name in lsm_am--* | lsm_setup) continue ;; esac
		wanted "$f" && tests+=("$name")
	done
	lsm_log "regress: ${#tests[@]} pg_regress tests"
	if [ ${#tests[@]} -eq 0 ]; then
		TIMINGS+=("regress  0s (no tests)")
		return
	fi
	mkdir -p "$dir" "$out" && chown "$PG_USER:" "$dir" "$out"
	if ! cluster_start "$dir" "$(pick_port)"; then
		record fail "regress (could not start a cluster)"
		TIMINGS+=("regress  $((SECONDS - start))s")
		return
	fi
	(cd "$SRC" && as_pg "$PG_REGRESS" --inputdir="$SRC" --outputdir="$out" \
		--bindir="$PG_BINDIR" --host="$dir" --port="$CLUSTER_PORT" \
		--dbname=contrib_regression "${tests[@]}") >"$log" 2>&1
	rc=$?
	cat "$log"
	# 15: "test NAME ... ok  12 ms" / "test NAME ... FAILED  12 ms"
	# 16+: "ok 1  - NAME  12 ms" / "not ok 1  - NAME  12 ms" (+ in groups)
	local res tname
	while IFS= read -r line; do
		res=
		if [[ $line =~ ^(test[[:space:]]+)?[[:space:]]*([A-Za-z0-9_.-]+)[[:space:]]+\.\.\.[[:space:]]+(ok|FAILED|failed) ]]; then
			tname=${BASH_REMATCH[2]}
			res=${BASH_REMATCH[3]}
		elif [[ $line =~ ^(not[[:space:]]+)?ok[[:space:]]+[0-9]+[[:space:]]+[-+][[:space:]]+([A-Za-z0-9_.-]+) ]]; then
			tname=${BASH_REMATCH[2]}
			if [ -n "${BASH_REMATCH[1]}" ]; then res=FAILED; else res=ok; fi
		fi
		if [ -n "$res" ]; then
			nseen=$((nseen + 1))
			if [ "$res" = ok ]; then
				record ok "regress/$tname"
			else
				record fail "regress/$tname"
				nfail=$((nfail + 1))
			fi
		fi
	done <"$log"
	if [ $rc -ne 0 ] && [ $nfail -eq 0 ]; then
		record fail "regress (pg_regress exited $rc)"
	fi
	if [ $nseen -lt ${#tests[@]} ] && [ $rc -eq 0 ]; then
		record fail "regress (only $nseen of ${#tests[@]} tests reported)"
	fi
	if [ -s "$out/regression.diffs" ]; then
		echo "---- regression.diffs ----"
		cat "$out/regression.diffs"
	fi
	if [ $rc -ne 0 ]; then
		echo "---- server log (tail) ----"
		tail -n 40 "$dir/server.log"
	fi
	cluster_stop "$dir"
	TIMINGS+=("regress  $((SECONDS - start))s")
}

# ---------------------------------------------------------------- pgtap
run_pgtap() {
	local start=$SECONDS dir=$SCRATCH/cluster-pgtap files=() f db n=0 rc nfail=0
	for f in "$SRC"/tests/pgtap/*.sql; do
		[ -e "$f" ] && wanted "$f" && files+=("$f")
	done
	lsm_log "pgtap: ${#files[@]} files"
	if [ ${#files[@]} -eq 0 ]; then
		TIMINGS+=("pgtap    0s (no tests)")
		return
	fi
	mkdir -p "$dir" && chown "$PG_USER:" "$dir"
	if ! cluster_start "$dir" "$(pick_port)"; then
		record fail "pgtap (could not start a cluster)"
		TIMINGS+=("pgtap    $((SECONDS - start))s")
		return
	fi
	for f in "${files[@]}"; do
		n=$((n + 1))
		db=pgtap_$n
		# Each file gets a fresh database; the file creates its extensions.
		(cd "$SRC" && as_pg PGHOST="$dir" PGPORT="$CLUSTER_PORT" createdb "$db") &&
			(cd "$SRC" && as_pg pg_prove --ext .sql -h "$dir" -p "$CLUSTER_PORT" \
				-d "$db" --failures "tests/pgtap/$(basename "$f")") 2>&1
		rc=$?
		if [ "$rc" -eq 0 ]; then
			record ok "pgtap/$(basename "$f")"
		else
			record fail "pgtap/$(basename "$f")"
			nfail=$((nfail + 1))
		fi
	done
	if [ $nfail -gt 0 ]; then
		echo "---- pgtap server log (tail) ----"
		tail -n 30 "$dir/server.log"
	fi
	cluster_stop "$dir"
	TIMINGS+=("pgtap    $((SECONDS - start))s")
}

# ---------------------------------------------------------------- tap
TAP_TIMEOUT=${LSM_TAP_TIMEOUT:-900}

# Stop servers a killed TAP test left running under its own directory.
stop_leftover_servers() {
	local pidfile
	while IFS= read -r pidfile; do
		as_pg pg_ctl -D "$(dirname "$pidfile")" -m immediate -w stop >/dev/null 2>&1 || true
	done < <(find "$1" -name postmaster.pid 2>/dev/null)
}

# A small file system for the disk-full test (025_resources): a 24 MB tmpfs
# in the scratch directory, when this runs as root and may mount; the test
# skips that part otherwise.  Unmounted by cleanup.
mount_small_fs() {
	local d=$SCRATCH/smallfs
	[ "$(id -u)" = 0 ] || return 0
	mkdir -p "$d"
	if mount -t tmpfs -o size=24m,mode=0700 lsm_am_small "$d" 2>/dev/null; then
		chown "$PG_USER:" "$d"
		SMALL_FS=$d
	else
		lsm_log "tap: could not mount a tmpfs: 025_resources skips its disk-full part"
	fi
}

run_tap() {
	local start=$SECONDS files=() f name tdir rc t0 lf
	for f in "$SRC"/tests/t/*.pl; do
		[ -e "$f" ] && wanted "$f" && files+=("$f")
	done
	lsm_log "tap: ${#files[@]} files"
	[ ${#files[@]} -gt 0 ] && mount_small_fs
	for f in "${files[@]}"; do
		name=$(basename "$f" .pl)
		tdir=$SCRATCH/tap-$name
		mkdir -p "$tdir" && chown "$PG_USER:" "$tdir"
		t0=$SECONDS
		(cd "$SRC/tests" && as_pg PERL5LIB="$PG_TAP_PERL" PG_REGRESS="$PG_REGRESS" \
			TESTDIR="$tdir" TESTDATADIR="$tdir/tmp_check" TESTLOGDIR="$tdir/tmp_check/log" \
			LSM_UPGRADE_FROM="$(dirname "$("$LSM_PG15_CONFIG" --bindir)")" \
			${LSM_DIFF_SEED:+LSM_DIFF_SEED="$LSM_DIFF_SEED"} \
			${SMALL_FS:+LSM_SMALL_FS="$SMALL_FS"} \
			timeout -k 10 "$TAP_TIMEOUT" prove --timer "t/$name.pl")
		rc=$?
		stop_leftover_servers "$tdir"
		if [ $rc -eq 0 ]; then
			record ok "tap/$name"
		else
			[ $rc -eq 124 ] && echo "tap/$name: killed after ${TAP_TIMEOUT}s (LSM_TAP_TIMEOUT)"
			record fail "tap/$name"
			for lf in "$tdir"/tmp_check/log/*; do
				[ -f "$lf" ] || continue
				echo "---- tail of $(basename "$lf") ----"
				tail -n 60 "$lf"
			done
		fi
		TIMINGS+=("tap/$name $((SECONDS - t0))s")
	done
	TIMINGS+=("tap      $((SECONDS - start))s")
}

want_stage unit && run_unit
want_stage regress && run_regress
want_stage pgtap && run_pgtap
want_stage tap && run_tap

if [ ${#FILTERS[@]} -gt 0 ] && [ "$MATCHED" -eq 0 ] &&
	{ want_stage regress || want_stage pgtap || want_stage tap; }; then
	echo "no regress, pgTAP or TAP file matches ${FILTERS[*]} (stages: ${STAGES[*]})" >&2
	record fail "filter '${FILTERS[*]}' matches no test file"
fi

cleanup
trap - EXIT
summary
[ "$FAILED" -eq 0 ]
