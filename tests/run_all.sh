#!/usr/bin/env bash
# tests/run_all.sh — the project's test command.  Run as root:
#
#   bash tests/run_all.sh                      # setup + every stage (CI size)
#   bash tests/run_all.sh --long               # the long settings (see below)
#   bash tests/run_all.sh --jobs 1             # one test file at a time
#   bash tests/run_all.sh --only tap           # one stage (unit|regress|pgtap|tap|package)
#   bash tests/run_all.sh --only tap 004 002   # TAP/pgTAP/regress files matching a word
#   bash tests/run_all.sh --only package trixie  # the Debian package of one Debian
#   bash tests/run_all.sh --skip-setup ...     # do not install packages or rebuild
#                                              # (warns if the installed build is older
#                                              # than src/)
#   bash tests/run_all.sh --pg 18              # on PostgreSQL 18 (built once by
#                                              # tests/build_pg18.sh, cached)
#   bash tests/run_all.sh --pg 15,18           # on each version in turn
#   bash tests/run_all.sh --pg 17              # on Debian 13's PostgreSQL 17, in a
#                                              # Debian 13 chroot (tests/chroot.sh,
#                                              # made once), then pg_upgrade 17 to 18
#                                              # there (18 built there once)
#   LSM_PG=15,17,18                            # the same as --pg (CI sets it)
#   LSM_PG17_FULL=1                            # with --pg 15,17,18: the whole suite
#                                              # on 17 (default: regress, pgTAP, the
#                                              # differential, crash, upgrade, parallel build and scan TAP
#                                              # files; --long runs it whole)
#   LSM_TAP_FILES="002 004"                    # the TAP stage runs only these files
#   LSM_JOBS=N                                 # the same as --jobs N
#   LSM_DIFF_SEED=N                            # seed of tap/004_differential
#   LSM_TAP_TIMEOUT=1800                       # seconds before a TAP file is killed
#   LSM_FUZZ_SECONDS=20                        # seconds per fuzz target (unit stage)
#
# Stages: unit (tests/check_layers.sh, tests/check_docs.sh, then GoogleTest, `make -C tests/unit
# check`, the same under ASan+UBSan, `make -C tests/unit check SANITIZE=1`, and
# the libFuzzer targets, tests/fuzz/run.sh; with --pg 15,18 these two run
# with the first version only; and tests/dist_test.sh, the PGXN zip built
# and installed with PGXS alone), regress (pg_regress, sql/*.sql against
# expected/*.out), pgtap (pg_prove, tests/pgtap/*.sql), tap (prove,
# tests/t/*.pl with PostgreSQL::Test::Cluster), package (tests/deb_test.sh:
# the Debian packages built with dpkg-buildpackage in a clean chroot of
# Debian 12 and of Debian 13, installed there with apt, tested with `make
# installcheck` against the installed copy and purged; two jobs,
# package/bookworm and package/trixie, with the first version only, on
# this machine only (not inside the Debian 13 chroot of --pg 17); a word
# bookworm or trixie after the options picks one; the first run on a
# machine makes their chroots, about ten minutes).
#
# Jobs: the unit tests, the sanitizer build, the fuzzers, the distribution
# test, pg_regress, pgTAP and every TAP file are separate jobs; up to --jobs
# of them (default 4 on this project's 2-core machines: the TAP files spend much of their time
# waiting on servers, and 4 kept both cores 93% busy) run at once, the slowest first (their last times are
# kept in $LSM_PG18_CACHE/test-times-PGMAJOR).  Each job has its own
# directory, TMPDIR, log and clusters; a job's output is printed whole when
# it ends, so lines never interleave.  Servers run as the postgres user from a
# scratch copy in a temporary directory on private sockets (the TAP files
# share one port-reservation directory, PG_TEST_PORT_DIR).
#
# --long: the crash matrix at 8 PANIC passes (LSM_FAULT_PANIC_PASSES; CI: 3),
# the soak for 600 s (LSM_SOAK_SECONDS; CI: 60), the memory pressure test
# for 120 s (LSM_PRESSURE_SECONDS; CI: 20) and 600 s per fuzz target
# (LSM_FUZZ_SECONDS: an hour in all; CI: 20), TAP files killed after an hour;
# about 65 minutes on 15, the fuzzers' hour being the longest job (an
# estimate from the parts).  A variable set in the environment wins over both.
#
# Each test file (the unit binary and the layering check count as one each)
# is one result; at the end a table lists every job and stage, slowest
# first; the last line printed is "N passed, N failed" (summed over the
# versions) and the exit status is non-zero when anything failed.  Without
# --pg/LSM_PG the PostgreSQL of PG_CONFIG is used (the system's 15 by
# default).  LSM_KEEP_SCRATCH=1 keeps the scratch directory.
set -uo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

STAGES=()
FILTERS=()
SKIP_SETUP=0
LONG=${LSM_LONG:-0}
JOBS=${LSM_JOBS:-4}
PG_VERSIONS=${LSM_PG:-}
CHILD_ARGS=()
while [ $# -gt 0 ]; do
	case $1 in
	--only)
		[ $# -ge 2 ] || lsm_die "--only needs unit, regress, pgtap, tap or package"
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
		[ $# -ge 2 ] || lsm_die "--pg needs 15, 17, 18 or a list such as 15,17,18"
		PG_VERSIONS=$2
		shift 2
		;;
	--pg=*) PG_VERSIONS=${1#--pg=}; shift ;;
	--jobs | -j)
		[ $# -ge 2 ] || lsm_die "--jobs needs a number"
		JOBS=$2
		shift 2
		;;
	--jobs=*) JOBS=${1#--jobs=}; shift ;;
	--long) LONG=1; shift ;;
	--skip-setup) SKIP_SETUP=1; CHILD_ARGS+=("$1"); shift ;;
	-h | --help) awk 'NR > 1 && /^set -uo pipefail/ { exit } NR > 1' "$0"; exit 0 ;;
	-*) lsm_die "unknown option $1" ;;
	*) FILTERS+=("$1"); CHILD_ARGS+=("$1"); shift ;;
	esac
done
USER_STAGES=${#STAGES[@]} # stages named by --only (0: all)
[ ${#STAGES[@]} -gt 0 ] || STAGES=(unit regress pgtap tap package)
for s in "${STAGES[@]}"; do
	case $s in unit | regress | pgtap | tap | package) ;; *) lsm_die "unknown stage '$s'" ;; esac
done
case $JOBS in '' | *[!0-9]* | 0) lsm_die "--jobs needs a positive number, not '$JOBS'" ;; esac
export LSM_JOBS=$JOBS LSM_LONG=$LONG

# The short (CI) and long settings; a value in the environment wins.
if [ "$LONG" = 1 ]; then
	export LSM_FAULT_PANIC_PASSES=${LSM_FAULT_PANIC_PASSES:-8}
	export LSM_SOAK_SECONDS=${LSM_SOAK_SECONDS:-600}
	export LSM_PRESSURE_SECONDS=${LSM_PRESSURE_SECONDS:-120}
	export LSM_FUZZ_SECONDS=${LSM_FUZZ_SECONDS:-600}
	export LSM_TAP_TIMEOUT=${LSM_TAP_TIMEOUT:-3600}
else
	export LSM_FAULT_PANIC_PASSES=${LSM_FAULT_PANIC_PASSES:-3}
	export LSM_SOAK_SECONDS=${LSM_SOAK_SECONDS:-60}
	export LSM_PRESSURE_SECONDS=${LSM_PRESSURE_SECONDS:-20}
	export LSM_FUZZ_SECONDS=${LSM_FUZZ_SECONDS:-20}
	export LSM_TAP_TIMEOUT=${LSM_TAP_TIMEOUT:-1800}
fi

require_root
cd "$LSM_REPO"

# ---------------------------------------------------------------- versions
IFS=', ' read -r -a VERSIONS <<<"$PG_VERSIONS"
for v in "${VERSIONS[@]}"; do
	case $v in 15 | 17 | 18) ;; *) lsm_die "unsupported PostgreSQL version '$v' (15, 17 or 18)" ;; esac
done
# The TAP files of 17 in a run of several versions, unless --long or
# LSM_PG17_FULL=1: the differential, crash and upgrade files, and the
# parallel build (from 17 the server plans lsm's build workers itself).
LSM_PG17_CI_TAP=${LSM_PG17_CI_TAP:-"002_crash 004_differential 007_recovery 012_upgrade 030_parallel_build 031_parallel_scan"}
if [ ${#VERSIONS[@]} -gt 1 ]; then
	# One run of this script per version; the counts are summed.
	total_pass=0 total_fail=0 lines=() fail_text=
	for v in "${VERSIONS[@]}"; do
		lsm_log "==================== PostgreSQL $v ===================="
		t0=$SECONDS
		out=$(mktemp)
		# the sanitizer build and the fuzzers test the core and the key codec,
		# the same for every server version: the first version's run has them
		vargs=("${CHILD_ARGS[@]}") venv=()
		if [ "$v" = 17 ] && [ "$LONG" != 1 ] && [ "${LSM_PG17_FULL:-0}" != 1 ] &&
			[ ${#FILTERS[@]} -eq 0 ] && [ "$USER_STAGES" -eq 0 ]; then
			vargs+=(--only regress,pgtap,tap)
			venv=(LSM_TAP_FILES="$LSM_PG17_CI_TAP")
			lsm_log "PostgreSQL 17: regress, pgTAP and the TAP files $LSM_PG17_CI_TAP (LSM_PG17_FULL=1 or --long: all)"
		fi
		env LSM_UNIT_ONCE_DONE=$([ "$v" = "${VERSIONS[0]}" ] && echo 0 || echo 1) "${venv[@]}" \
			bash "$LSM_REPO/tests/run_all.sh" --pg "$v" "${vargs[@]}" 2>&1 | tee "$out"
		rc=${PIPESTATUS[0]}
		last=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$out" | tail -n 1)
		# this version's list of failures and their excerpts (its summary's
		# "failed:" part), repeated in the summary of all versions
		vfail=$(awk '/^==================== lsm_am test summary: PostgreSQL/ { s = 1 }
			s && /^  failed:$/ { f = 1 }
			f && /^[0-9]+ passed, [0-9]+ failed$/ { f = 0 }
			f' "$out" | sed "s/^  failed:\$/  failed on $v:/")
		[ -z "$vfail" ] || fail_text+=$vfail$'\n'
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
	[ -n "$fail_text" ] && printf '%s' "$fail_text"
	echo "  total: ${SECONDS}s wall"
	echo "$total_pass passed, $total_fail failed"
	[ "$total_fail" -eq 0 ]
	exit
fi
# PostgreSQL 17 as Debian 13 packages it: this script again, inside the
# Debian 13 chroot of tests/chroot.sh (made once, about ten minutes; its
# packages, and the 18 it upgrades to, are installed there by its own first
# run), then the pg_upgrade test from 17 to 18 in the same chroot.
if [ ${#VERSIONS[@]} -eq 1 ] && [ "${VERSIONS[0]}" = 17 ] && [ -z "${LSM_IN_CHROOT:-}" ]; then
	t0=$SECONDS
	if ! bash "$LSM_REPO/tests/chroot.sh" ensure "$LSM_PG17_CHROOT" trixie >/dev/null; then
		echo "0 passed, 1 failed"
		lsm_die "the Debian 13 chroot for PostgreSQL 17 could not be made (tests/chroot.sh)"
	fi
	# the child's arguments: its stages and filters, --skip-setup (jobs and
	# --long travel in LSM_JOBS and LSM_LONG)
	out=$(mktemp)
	bash "$LSM_REPO/tests/chroot.sh" run "$LSM_PG17_CHROOT" \
		bash "$LSM_REPO/tests/run_all.sh" --pg 17 "${CHILD_ARGS[@]}" 2>&1 | tee "$out"
	rc=${PIPESTATUS[0]}
	up=0
	for s in "${STAGES[@]}"; do [ "$s" = tap ] && up=1; done
	if [ $up = 1 ] && [ -n "${LSM_TAP_FILES:-}" ]; then
		case " $LSM_TAP_FILES " in *012*) ;; *) up=0 ;; esac
	fi
	if [ $up = 1 ] && [ ${#FILTERS[@]} -gt 0 ]; then
		up=0
		for f in "${FILTERS[@]}"; do case 012_upgrade.pl in *"$f"*) up=1 ;; esac; done
	fi
	if [ $up = 1 ]; then
		lsm_log "pg_upgrade from 17 to 18 in the chroot (18 built there once by tests/build_pg18.sh)"
		skip=()
		[ "$SKIP_SETUP" = 1 ] && skip=(--skip-setup)
		bash "$LSM_REPO/tests/chroot.sh" run "$LSM_PG17_CHROOT" env LSM_TAP_FILES= LSM_UPGRADE_REQUIRED=1 \
			bash "$LSM_REPO/tests/run_all.sh" --pg 18 "${skip[@]}" --only tap 012_upgrade 2>&1 | tee -a "$out"
		[ "${PIPESTATUS[0]}" = 0 ] || rc=1
	fi
	p=0 f=0
	while read -r a _ b _; do p=$((p + a)) f=$((f + b)); done < <(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$out")
	rm -f "$out"
	[ $rc -ne 0 ] && [ $f -eq 0 ] && f=1
	echo "  PostgreSQL 17 (Debian 13 chroot $LSM_PG17_CHROOT)$([ $up = 1 ] && echo ', with pg_upgrade 17 to 18'): $((SECONDS - t0))s"
	echo "$p passed, $f failed"
	[ $f -eq 0 ]
	exit
fi
if [ ${#VERSIONS[@]} -eq 1 ]; then
	lsm_select_pg "${VERSIONS[0]}" "$SKIP_SETUP" ||
		{ echo "0 passed, 1 failed"; lsm_die "PostgreSQL ${VERSIONS[0]} is not available"; }
fi
lsm_log "testing on $("$PG_CONFIG" --version) ($PG_CONFIG), $JOBS jobs at once$([ "$LONG" = 1 ] && echo ', long settings')"

PASSED=0
FAILED=0
FAILED_NAMES=()
FAIL_LOGS=()
TIMINGS=() # "SECONDS<TAB>NAME<TAB>NOTE", the table at the end

# record ok|fail NAME: one result.  Inside a job it goes to the job's
# results file (JOB_RESULTS), which the pool reads when the job ends.
record() {
	if [ -n "${JOB_RESULTS:-}" ]; then
		printf '%s\t%s\n' "$1" "$2" >>"$JOB_RESULTS"
		return
	fi
	if [ "$1" = ok ]; then
		PASSED=$((PASSED + 1))
	else
		FAILED=$((FAILED + 1))
		FAILED_NAMES+=("$2")
	fi
}

# timing SECONDS NAME [NOTE]: a row of the table at the end (a job's own
# rows, e.g. its parts, go to its results file too).
timing() {
	if [ -n "${JOB_RESULTS:-}" ]; then
		printf 'time\t%s\t%s\t%s\n' "$1" "$2" "${3:-}" >>"$JOB_RESULTS"
		return
	fi
	TIMINGS+=("$1"$'\t'"$2"$'\t'"${3:-}")
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
	echo "  time (slowest first; jobs ran $JOBS at once, so they add up to more than the wall time):"
	printf '%s\n' "${TIMINGS[@]}" | sort -t $'\t' -k1,1nr |
		awk -F '\t' '{ printf "  %6ss  %-34s %s\n", $1, $2, $3 }'
	echo "  wall: ${SECONDS}s"
	if [ ${#FAILED_NAMES[@]} -gt 0 ]; then
		echo "  failed:"
		for t in "${FAILED_NAMES[@]}"; do echo "    - $t"; done
		# The failing jobs' own words again, here at the end, where a reader
		# of only the last lines of a long run (CI's) still finds them: the
		# lines that say what failed, then the log's last lines.
		for t in "${FAIL_LOGS[@]}"; do
			echo "  --- $PG_MAJOR ${t%%$'\t'*}: its failures, then its last lines ---"
			grep -E 'not ok|Failed test|^ *# +(got|expected|at )|ERROR|PANIC|TRAP|FAILED|Dubious|died' "${t#*$'\t'}" |
				grep -v 'TODO' | head -n 40 | sed 's/^/    | /'
			echo "    | ..."
			tail -n 15 "${t#*$'\t'}" | sed 's/^/    | /'
		done
	fi
	echo "$PASSED passed, $FAILED failed"
}

SCRATCH=
SMALL_FS=
CG_ROOT=
declare -A JOB_OF_PID=() START_OF_PID=()
cleanup() {
	local d pid
	[ -n "$SCRATCH" ] || return 0
	# jobs still running (an interrupt): stop them and their servers
	for pid in "${!JOB_OF_PID[@]}"; do
		kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null
	done
	[ -d "$SCRATCH" ] && stop_leftover_servers "$SCRATCH"
	remove_cgroups
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

# Stop servers a killed test left running under directory $1.
stop_leftover_servers() {
	local pidfile
	while IFS= read -r pidfile; do
		as_pg pg_ctl -D "$(dirname "$pidfile")" -m immediate -w stop >/dev/null 2>&1 || true
	done < <(find "$1" -name postmaster.pid 2>/dev/null)
}

# ---------------------------------------------------------------- setup
if [ "$SKIP_SETUP" = 0 ]; then
	start=$SECONDS
	lsm_log "setup: packages, build, install"
	if ! bash "$LSM_REPO/tests/setup.sh"; then
		record fail "setup (tests/setup.sh: package install or build failed)"
		timing $((SECONDS - start)) setup FAILED
		summary
		exit 1
	fi
	timing $((SECONDS - start)) setup
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
mkdir -p "$SRC" "$SCRATCH/jobs" "$SCRATCH/portlock"
chown "$PG_USER:" "$SCRATCH/portlock"
copy_tests_to "$SRC"

# ---------------------------------------------------------------- jobs
# Each job_* function runs in a background subshell with its output in its
# own log; record and timing go to its results file.

# The unit stage's builds (GoogleTest, its sanitizer build, the fuzzers) go
# through ccache when it is installed (setup installs it), with its cache in
# $LSM_PG18_CACHE/ccache: a later run on this machine, a fresh clone's
# included, recompiles only what changed.  LSM_CCACHE=0 turns it off.
UNIT_MAKE_ARGS=()
if [ "${LSM_CCACHE:-1}" = 1 ] && command -v ccache >/dev/null; then
	# (the checkout's directory is not hashed: clones in other folders share it)
	export CCACHE_DIR=${CCACHE_DIR:-$LSM_PG18_CACHE/ccache} CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-2G} \
		CCACHE_BASEDIR=$LSM_REPO CCACHE_NOHASHDIR=true
	UNIT_MAKE_ARGS=(CXX="ccache ${CXX:-g++}")
	command -v clang-14 >/dev/null && export CLANG="ccache $(command -v clang-14)" CLANGXX="ccache $(command -v clang++-14)"
fi

job_unit() {
	local log=$JOB_DIR/unit.log rc
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
		return
	fi
	make -C "$LSM_REPO/tests/unit" check PG_CONFIG="$PG_CONFIG" "${UNIT_MAKE_ARGS[@]}" >"$log" 2>&1
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
}

# The same tests under ASan + UBSan (a second build, tests/unit/build/sanitize).
job_asan() {
	local log=$JOB_DIR/unit-asan.log
	lsm_log "unit: make -C tests/unit check SANITIZE=1"
	if make -C "$LSM_REPO/tests/unit" check SANITIZE=1 PG_CONFIG="$PG_CONFIG" "${UNIT_MAKE_ARGS[@]}" >"$log" 2>&1; then
		grep -E '^\[(  PASSED  |  FAILED  )\]' "$log"
		record ok unit/asan
	else
		echo "---- unit tests under ASan+UBSan (tail) ----"
		tail -n 80 "$log"
		record fail "unit/asan (make -C tests/unit check SANITIZE=1: a test failed or a sanitizer report)"
	fi
}

# The PGXN distribution: META.json valid and agreeing with lsm_am.control,
# and the zip of `make dist` (of HEAD) built and installed with PGXS alone,
# against this run's PostgreSQL, into a temporary DESTDIR.
job_dist() {
	local log=$JOB_DIR/dist.log
	lsm_log "unit: tests/dist_test.sh"
	if TMPDIR=$JOB_DIR bash "$LSM_REPO/tests/dist_test.sh" >"$log" 2>&1; then
		grep '^dist: ' "$log"
		record ok unit/dist
	else
		echo "---- tests/dist_test.sh (tail) ----"
		tail -n 60 "$log"
		record fail "unit/dist (tests/dist_test.sh: META.json, make dist, or the zip's PGXS build and install)"
	fi
}

# The decoders of disk bytes under libFuzzer, LSM_FUZZ_SECONDS per target.
job_fuzz() {
	local log=$JOB_DIR/fuzz.log
	lsm_log "unit: tests/fuzz/run.sh (${LSM_FUZZ_SECONDS}s per target)"
	if bash "$LSM_REPO/tests/fuzz/run.sh" >"$log" 2>&1; then
		sed -n '/^==> fuzz summary/,$p' "$log"
		record ok unit/fuzz
	else
		grep -vE '^==> fuzz: [a-z]+ for' "$log" | tail -n 80
		record fail "unit/fuzz (tests/fuzz/run.sh: a crash or a contract violation, reproducer above)"
	fi
}

# The Debian package of one Debian (bookworm: postgresql-15-lsm-am, trixie:
# postgresql-17-lsm-am): tests/deb_test.sh SUITE, in chroots of its own
# (deb-build-SUITE, and an overlay on it per run, deb-SUITE-PID), its
# cluster on a private socket.
job_package() {
	local suite=$1 log=$JOB_DIR/package-$1.log
	lsm_log "package: tests/deb_test.sh $suite"
	if TMPDIR=$JOB_DIR bash "$LSM_REPO/tests/deb_test.sh" "$suite" >"$log" 2>&1; then
		grep -E '^(==> )?deb\[' "$log"
		record ok "package/$suite"
	else
		echo "---- tests/deb_test.sh $suite (tail) ----"
		tail -n 80 "$log"
		record fail "package/$suite (tests/deb_test.sh $suite: $(grep -m 1 -o 'FAILED: .*' "$log" | cut -c 9- | cut -c 1-120))"
	fi
}

REGRESS_TESTS=()
job_regress() {
	local dir=$JOB_DIR/cluster rc line nfail=0 nseen=0
	local out=$JOB_DIR/regress_out log=$JOB_DIR/regress.log
	lsm_log "regress: ${#REGRESS_TESTS[@]} pg_regress tests"
	mkdir -p "$dir" "$out" && chown "$PG_USER:" "$dir" "$out"
	if ! cluster_start "$dir" "$(pick_port)"; then
		record fail "regress (could not start a cluster)"
		return
	fi
	(cd "$SRC" && as_pg "$PG_REGRESS" --inputdir="$SRC" --outputdir="$out" \
		--bindir="$PG_BINDIR" --host="$dir" --port="$CLUSTER_PORT" \
		--dbname=contrib_regression "${REGRESS_TESTS[@]}") >"$log" 2>&1
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
	if [ $nseen -lt ${#REGRESS_TESTS[@]} ] && [ $rc -eq 0 ]; then
		record fail "regress (only $nseen of ${#REGRESS_TESTS[@]} tests reported)"
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
}

PGTAP_FILES=()
job_pgtap() {
	local dir=$JOB_DIR/cluster f db n=0 rc nfail=0
	lsm_log "pgtap: ${#PGTAP_FILES[@]} files"
	mkdir -p "$dir" && chown "$PG_USER:" "$dir"
	if ! cluster_start "$dir" "$(pick_port)"; then
		record fail "pgtap (could not start a cluster)"
		return
	fi
	for f in "${PGTAP_FILES[@]}"; do
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

# job_tap NAME: one TAP file, in its own directory and TMPDIR.
job_tap() {
	local name=$1 tdir=$JOB_DIR rc lf
	mkdir -p "$tdir/tmp" && chown -R "$PG_USER:" "$tdir"
	(cd "$SRC/tests" && as_pg PERL5LIB="$PG_TAP_PERL" PG_REGRESS="$PG_REGRESS" \
		TESTDIR="$tdir" TESTDATADIR="$tdir/tmp_check" TESTLOGDIR="$tdir/tmp_check/log" \
		TMPDIR="$tdir/tmp" PG_TEST_PORT_DIR="$SCRATCH/portlock" \
		LSM_UPGRADE_FROM="$(dirname "$("$LSM_PG15_CONFIG" --bindir)")" \
		LSM_FAULT_PANIC_PASSES="$LSM_FAULT_PANIC_PASSES" LSM_SOAK_SECONDS="$LSM_SOAK_SECONDS" \
		LSM_PRESSURE_SECONDS="$LSM_PRESSURE_SECONDS" \
		${LSM_FAULT_ERROR_PASSES:+LSM_FAULT_ERROR_PASSES="$LSM_FAULT_ERROR_PASSES"} \
		${LSM_DIFF_SEED:+LSM_DIFF_SEED="$LSM_DIFF_SEED"} \
		${LSM_SCAN_SEED:+LSM_SCAN_SEED="$LSM_SCAN_SEED"} \
		${SMALL_FS:+LSM_SMALL_FS="$SMALL_FS"} \
		timeout -k 10 "$LSM_TAP_TIMEOUT" prove --timer "t/$name.pl") </dev/null
	rc=$?
	stop_leftover_servers "$tdir"
	if [ $rc -eq 0 ]; then
		record ok "tap/$name"
	else
		[ $rc -eq 124 ] && echo "tap/$name: killed after ${LSM_TAP_TIMEOUT}s (LSM_TAP_TIMEOUT)"
		record fail "tap/$name"
		for lf in "$tdir"/tmp_check/log/*; do
			[ -f "$lf" ] || continue
			echo "---- tail of $(basename "$lf") ----"
			tail -n 60 "$lf"
		done
	fi
}

# ---------------------------------------------------------------- the pool
# JOB_IDS: "ID<TAB>FUNCTION ARGS"; ID names the job in the table
# (unit, unit/asan, regress, tap/004_differential, ...).
JOB_LIST=()
add_job() { JOB_LIST+=("$1"$'\t'"$2"); }

if want_stage unit; then
	add_job unit job_unit
	add_job unit/dist job_dist
	if [ "${LSM_UNIT_ONCE_DONE:-0}" != 1 ]; then
		add_job unit/asan job_asan
		add_job unit/fuzz job_fuzz
	fi
fi
if want_stage regress; then
	# lsm_setup first, always: the extension and the shared helpers
	[ -e "$SRC/sql/lsm_setup.sql" ] && REGRESS_TESTS+=(lsm_setup)
	for f in "$SRC"/sql/*.sql; do
		[ -e "$f" ] || continue
		name=$(basename "$f" .sql)
		case $name in lsm_am--* | lsm_setup) continue ;; esac
		wanted "$f" && REGRESS_TESTS+=("$name")
	done
	[ ${#REGRESS_TESTS[@]} -gt 0 ] && add_job regress job_regress
fi
if want_stage pgtap; then
	for f in "$SRC"/tests/pgtap/*.sql; do
		[ -e "$f" ] && wanted "$f" && PGTAP_FILES+=("$f")
	done
	[ ${#PGTAP_FILES[@]} -gt 0 ] && add_job pgtap job_pgtap
fi
# The Debian packages: once per run (the first version's), and from this
# machine only (they make chroots of their own).  A word naming a Debian
# picks it; other words do not apply.
if want_stage package && [ "${LSM_UNIT_ONCE_DONE:-0}" != 1 ] && [ -z "${LSM_IN_CHROOT:-}" ]; then
	suites=()
	for s in bookworm trixie; do
		for f in "${FILTERS[@]}"; do [ "$f" = "$s" ] && suites+=("$s"); done
	done
	[ ${#suites[@]} -gt 0 ] && MATCHED=$((MATCHED + ${#suites[@]})) || suites=(bookworm trixie)
	for s in "${suites[@]}"; do add_job "package/$s" "job_package $s"; done
fi
NTAP=0
if want_stage tap; then
	for f in "$SRC"/tests/t/*.pl; do
		[ -e "$f" ] && wanted "$f" || continue
		name=$(basename "$f" .pl)
		if [ -n "${LSM_TAP_FILES:-}" ]; then
			keep=0
			for w in $LSM_TAP_FILES; do case $name in *"$w"*) keep=1 ;; esac; done
			[ $keep = 1 ] || continue
		fi
		add_job "tap/$name" "job_tap $name"
		NTAP=$((NTAP + 1))
	done
	[ $NTAP -gt 0 ] && mount_small_fs
fi

# The slowest first, by the times of the last run on this machine; a job
# with no time there takes its estimate below (4 jobs at once on 2 cores,
# PostgreSQL 15), one not listed goes first: it may be slow.
declare -A DEFAULT_TIME=(
	[package/trixie]=480 [package/bookworm]=470
	[tap/021_faults]=295 [tap/008_merge]=288 [unit/asan]=164 [unit/fuzz]=133
	[tap/013_space]=121 [unit]=113 [tap/022_memory_pressure]=87 [unit/dist]=80
	[tap/006_concurrency]=70 [tap/023_soak]=65 [tap/012_upgrade]=60
	[tap/024_unique]=56 [tap/011_streaming_scans]=56 [tap/003_standby]=55
	[tap/015_space_pieces]=42 [tap/018_replay_cancel]=41
	[tap/014_space_standby]=39 [tap/020_progress]=33 [tap/017_core_memory]=33
	[tap/004_differential]=30 [tap/026_memtable_filter]=28 [tap/002_crash]=26
	[tap/007_recovery]=25 [tap/025_resources]=22 [tap/005_lifecycle]=20
	[tap/016_scan_keys]=20 [tap/009_batching]=19 [tap/019_verify]=18
	[tap/010_corruption]=16 [pgtap]=13 [regress]=12 [tap/001_preload]=10
	[tap/027_first_lookup]=10 [tap/035_warm]=10 [tap/028_session]=6
	[tap/036_free_list]=35 [tap/037_last_piece]=35
)
TIMES_FILE=${LSM_TEST_TIMES:-$LSM_PG18_CACHE/test-times-$PG_MAJOR$([ "$LONG" = 1 ] && echo -long)}
declare -A LAST_TIME=()
if [ -r "$TIMES_FILE" ]; then
	while IFS=$'\t' read -r id secs; do
		[ -n "$id" ] && LAST_TIME[$id]=$secs
	done <"$TIMES_FILE"
fi
ORDERED=()
while IFS= read -r line; do ORDERED+=("${line#*$'\t'}"); done < <(
	for j in "${JOB_LIST[@]}"; do
		id=${j%%$'\t'*}
		printf '%s\t%s\n' "${LAST_TIME[$id]:-${DEFAULT_TIME[$id]:-100000}}" "$j"
	done | sort -t $'\t' -k1,1nr -s)

NJOBS=${#ORDERED[@]}
NDONE=0
set -m # each job its own process group, so an interrupt can stop it whole

# CPU seconds of each job, its servers included (they leave the job's
# process tree): each job runs in a cgroup of its own when one can be made,
# cgroup v1's cpuacct or a v2 hierarchy; else the table has no CPU column.
CG_ROOT= CG_KIND=
if [ -w /sys/fs/cgroup/cpuacct/cgroup.procs ]; then
	CG_ROOT=/sys/fs/cgroup/cpuacct CG_KIND=v1
else
	v2=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
	[ -n "$v2" ] && [ -w "$v2/cgroup.procs" ] && CG_ROOT=$v2 CG_KIND=v2
fi
if [ -n "$CG_ROOT" ]; then
	CG_ROOT=$CG_ROOT/lsm_am_tests.$$
	mkdir -p "$CG_ROOT" 2>/dev/null || CG_ROOT=
fi
job_cgroup() { echo "$CG_ROOT/${1//\//-}"; }
# job_cpu ID: the job's CPU seconds so far ('' without a cgroup)
job_cpu() {
	local cg ns
	[ -n "$CG_ROOT" ] || return 0
	cg=$(job_cgroup "$1")
	if [ "$CG_KIND" = v1 ]; then
		ns=$(cat "$cg/cpuacct.usage" 2>/dev/null) || return 0
		echo $((ns / 1000000000))
	else
		ns=$(awk '$1 == "usage_usec" { print $2 }' "$cg/cpu.stat" 2>/dev/null)
		[ -n "$ns" ] && echo $((ns / 1000000))
	fi
}
remove_cgroups() {
	local cg
	[ -n "$CG_ROOT" ] && [ -d "$CG_ROOT" ] || return 0
	for cg in "$CG_ROOT"/*/; do
		[ -d "$cg" ] || continue
		# a process left behind goes back to the root group first
		while read -r p; do echo "$p" >"$CG_ROOT/../cgroup.procs" 2>/dev/null; done <"$cg/cgroup.procs"
		rmdir "$cg" 2>/dev/null
	done
	rmdir "$CG_ROOT" 2>/dev/null
}

start_job() {
	local id=${1%%$'\t'*} cmd=${1#*$'\t'} dir pid
	dir=$SCRATCH/jobs/${id//\//-}
	mkdir -p "$dir" && chown "$PG_USER:" "$dir"
	: >"$dir/results"
	[ -n "$CG_ROOT" ] && mkdir -p "$(job_cgroup "$id")" 2>/dev/null
	(
		set +m
		[ -n "$CG_ROOT" ] && echo "$BASHPID" >"$(job_cgroup "$id")/cgroup.procs" 2>/dev/null
		JOB_DIR=$dir JOB_RESULTS=$dir/results
		$cmd
	) >"$dir/log" 2>&1 </dev/null &
	pid=$!
	JOB_OF_PID[$pid]=$1
	START_OF_PID[$pid]=$SECONDS
}

# Wait for a job to end; print its output and take its results.
reap_job() {
	local pid rc j id dir secs kind rest name note cpu n_ok=0 n_fail=0
	wait -n -p pid
	rc=$?
	if [ $rc -eq 127 ] && [ -z "${pid:-}" ]; then
		# no child left, yet jobs are listed: they were reaped elsewhere
		for pid in "${!JOB_OF_PID[@]}"; do
			record fail "${JOB_OF_PID[$pid]%%$'\t'*} (lost track of the job)"
			unset "JOB_OF_PID[$pid]"
		done
		return 0
	fi
	[ -n "${pid:-}" ] && [ -n "${JOB_OF_PID[$pid]:-}" ] || return 0
	j=${JOB_OF_PID[$pid]}
	id=${j%%$'\t'*}
	dir=$SCRATCH/jobs/${id//\//-}
	secs=$((SECONDS - START_OF_PID[$pid]))
	unset "JOB_OF_PID[$pid]" "START_OF_PID[$pid]"
	NDONE=$((NDONE + 1))
	while IFS=$'\t' read -r kind rest; do
		case $kind in
		ok) record ok "$rest"; n_ok=$((n_ok + 1)) ;;
		fail) record fail "$rest"; n_fail=$((n_fail + 1)) ;;
		time) TIMINGS+=("$rest") ;;
		esac
	done <"$dir/results"
	if [ $n_ok -eq 0 ] && [ $n_fail -eq 0 ]; then
		record fail "$id (the job ended with status $rc and reported nothing)"
		n_fail=1
	fi
	note=
	cpu=$(job_cpu "$id")
	[ -n "$cpu" ] && note="cpu ${cpu}s" && CPU_TOTAL=$((CPU_TOTAL + cpu))
	[ $n_fail -gt 0 ] && note="$note${note:+  }FAILED"
	TIMINGS+=("$secs"$'\t'"$id"$'\t'"$note")
	[ $n_fail -eq 0 ] && printf '%s\t%s\n' "$id" "$secs" >>"$SCRATCH/times.new"
	echo "==> [$NDONE/$NJOBS] $id: $([ $n_fail -eq 0 ] && echo ok || echo FAILED), ${secs}s"
	sed 's/^/    /' "$dir/log"
	[ $n_fail -gt 0 ] && FAIL_LOGS+=("$id"$'\t'"$dir/log")
	return 0
}

STAGE_START=$SECONDS
CPU_TOTAL=0
lsm_log "$NJOBS jobs, $JOBS at once: ${ORDERED[*]%%$'\t'*}"
for j in "${ORDERED[@]}"; do
	while [ ${#JOB_OF_PID[@]} -ge "$JOBS" ]; do reap_job; done
	lsm_log "start ${j%%$'\t'*}"
	start_job "$j"
done
while [ ${#JOB_OF_PID[@]} -gt 0 ]; do reap_job; done
set +m
[ $NJOBS -gt 0 ] && timing $((SECONDS - STAGE_START)) "(all jobs, wall)" \
	"$([ -n "$CG_ROOT" ] && echo "cpu ${CPU_TOTAL}s of $(($(nproc) * (SECONDS - STAGE_START)))s")"
remove_cgroups

# Keep this run's times for the next run's order (jobs that passed).
if [ -s "$SCRATCH/times.new" ] && mkdir -p "$(dirname "$TIMES_FILE")" 2>/dev/null; then
	{
		cat "$SCRATCH/times.new"
		[ ! -r "$TIMES_FILE" ] || cat "$TIMES_FILE"
	} | awk -F '\t' '!seen[$1]++' >"$TIMES_FILE.tmp" && mv "$TIMES_FILE.tmp" "$TIMES_FILE"
fi

if [ ${#FILTERS[@]} -gt 0 ] && [ "$MATCHED" -eq 0 ] &&
	{ want_stage regress || want_stage pgtap || want_stage tap; }; then
	echo "no regress, pgTAP or TAP file matches ${FILTERS[*]} (stages: ${STAGES[*]})" >&2
	record fail "filter '${FILTERS[*]}' matches no test file"
fi

# the summary first: it quotes the failing jobs' logs, which are in $SCRATCH
summary
cleanup
trap - EXIT
[ "$FAILED" -eq 0 ]
