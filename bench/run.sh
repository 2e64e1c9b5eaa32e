#!/usr/bin/env bash
# bench/run.sh — the benchmark suite: lsm vs btree, on throwaway clusters.
#
#   bash bench/run.sh                 (a) the Acme Shop comparison (~2-3 min)
#   bash bench/run.sh --all           (a) + (d) CREATE INDEX + (b) sustained
#                                     ingest with (c) reads after it, then the
#                                     bloom lookup figures (lookups.sh) and the
#                                     compaction policies (merge_policies.sh),
#                                     then reads in four index states
#                                     (reads.sh), then INSERT ... ON CONFLICT
#                                     into unique indexes (unique.sh), then
#                                     beyond memory: ingest and reads with the
#                                     server in a 512 MiB memory cgroup
#                                     (scale.sh) (~3.5 hours)
#   options:  --pg 15|18     the PostgreSQL to run on (default: LSM_PG, else
#                            PG_CONFIG, else the system's 15); 18 is built once
#                            by tests/build_pg18.sh and cached
#             --skip-setup   do not install packages / build / install lsm_am
#             --runs N       repetitions of (a) (default 3; medians)
#             --out DIR      results directory (default bench/results/<UTC time>)
#             --quick        --all at a fraction of the sizes (a smoke test)
#
# Run as root on Debian 12: it installs what is missing (tests/lib.sh's
# ensure_packages, plus gnuplot-nox for the plots), builds and installs
# lsm_am, then runs each part on its own throwaway PostgreSQL cluster (as
# the postgres user, private socket, shared_buffers 128MB), removed on exit.
# Prints the tables; writes CSV files (raw per run, and medians), the plans,
# and PNG plots into the results directory (git-ignored).  doc/benchmarks.md
# describes the method and the latest results.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"

ALL=0
SKIP_SETUP=0
RUNS=3
QUICK=0
OUT=
PG_VERSION_WANTED=${LSM_PG:-}
while [ $# -gt 0 ]; do
	case $1 in
	--all) ALL=1; shift ;;
	--pg) PG_VERSION_WANTED=${2:?--pg needs 15 or 18}; shift 2 ;;
	--pg=*) PG_VERSION_WANTED=${1#--pg=}; shift ;;
	--skip-setup) SKIP_SETUP=1; shift ;;
	--runs) RUNS=${2:?--runs needs a number}; shift 2 ;;
	--out) OUT=${2:?--out needs a directory}; shift 2 ;;
	--quick) QUICK=1; ALL=1; shift ;;
	-h | --help) sed -n '2,/^set /{/^#/p}' "$0"; exit 0 ;;
	*) lsm_die "run.sh: unknown argument $1 (try --help)" ;;
	esac
done
[[ $RUNS =~ ^[1-9][0-9]*$ ]] || lsm_die "--runs must be a positive integer"
require_root
case $PG_VERSION_WANTED in
'') ;;
15 | 18) lsm_select_pg "$PG_VERSION_WANTED" "$SKIP_SETUP" || lsm_die "PostgreSQL $PG_VERSION_WANTED is not available" ;;
*) lsm_die "--pg: one version, 15 or 18 (got '$PG_VERSION_WANTED')" ;;
esac
lsm_log "benchmarking on $("$PG_CONFIG" --version) ($PG_CONFIG)"

if [ "$SKIP_SETUP" = 0 ]; then
	ensure_packages
	lsm_use_pg_config "$PG_CONFIG" # installed now: the paths it reports
	if ! command -v gnuplot >/dev/null; then
		lsm_log "installing gnuplot-nox (plots)"
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends gnuplot-nox >/dev/null ||
			{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends gnuplot-nox >/dev/null; } ||
			lsm_log "WARNING: could not install gnuplot-nox; the plots will be skipped"
	fi
	build_and_install || lsm_die "building or installing lsm_am failed (output above)"
	BENCH_BUILD_INFO="built by this run from $(git -C "$LSM_REPO" rev-parse --short HEAD 2>/dev/null || echo '?')$(git -C "$LSM_REPO" status --porcelain --untracked-files=no -- src sql Makefile 2>/dev/null | grep -q . && echo ' + uncommitted changes in src/sql' || true): $(lsm_so_id)"
else
	BENCH_BUILD_INFO="--skip-setup: the lsm_am.so already installed ($(lsm_so_id))"
fi
export BENCH_BUILD_INFO
[ -x "$PG_BINDIR/postgres" ] || lsm_die "PostgreSQL is not installed in $PG_BINDIR (run without --skip-setup)"
[ -f "$("$PG_CONFIG" --pkglibdir)/lsm_am.so" ] || lsm_die "lsm_am is not installed (run without --skip-setup)"

OUT=$(bench_results_dir "$OUT")
lsm_log "results go to $OUT"
T0=$(date +%s)
part_time() { lsm_log "$1 took $(($(date +%s) - $2)) s"; }

t=$(date +%s)
bash "$BENCH_DIR/acme.sh" --runs "$RUNS" --out "$OUT"
part_time "(a) acme" "$t"
if [ "$ALL" = 1 ]; then
	t=$(date +%s)
	if [ "$QUICK" = 1 ]; then
		bash "$BENCH_DIR/build.sh" --runs 1 --out "$OUT"
	else
		bash "$BENCH_DIR/build.sh" --out "$OUT"
	fi
	part_time "(d) build" "$t"
	t=$(date +%s)
	if [ "$QUICK" = 1 ]; then
		bash "$BENCH_DIR/ingest.sh" --duration 15 --read-reps 1 --read-seconds 1 --out "$OUT"
	else
		bash "$BENCH_DIR/ingest.sh" --out "$OUT"
	fi
	part_time "(b)+(c) ingest and reads" "$t"
	# the Bloom issue's lookup figures and the Merge issue's per-policy figures
	t=$(date +%s)
	if [ "$QUICK" = 1 ]; then
		BENCH_OUT=$OUT bash "$BENCH_DIR/lookups.sh" 1 | tee "$OUT/lookups_table.txt"
	else
		BENCH_OUT=$OUT bash "$BENCH_DIR/lookups.sh" 3 | tee "$OUT/lookups_table.txt"
	fi
	part_time "lookups (bloom filters)" "$t"
	t=$(date +%s)
	if [ "$QUICK" = 1 ]; then
		BENCH_OUT=$OUT bash "$BENCH_DIR/merge_policies.sh" 100000 1 | tee "$OUT/merge_table.txt"
	else
		BENCH_OUT=$OUT bash "$BENCH_DIR/merge_policies.sh" 1000000 1 | tee "$OUT/merge_table.txt"
	fi
	part_time "merge policies" "$t"
	# the Reads issue's targets, in four index states
	t=$(date +%s)
	if [ "$QUICK" = 1 ]; then
		bash "$BENCH_DIR/reads.sh" --quick --out "$OUT"
	else
		bash "$BENCH_DIR/reads.sh" --out "$OUT"
	fi
	part_time "reads in four index states" "$t"
	# the Unique issue's figures: ON CONFLICT on random UUIDs, btree vs lsm
	t=$(date +%s)
	if [ "$QUICK" = 1 ]; then
		bash "$BENCH_DIR/unique.sh" --quick --out "$OUT"
	else
		bash "$BENCH_DIR/unique.sh" --out "$OUT"
	fi
	part_time "unique indexes (ON CONFLICT)" "$t"
	# the Scale issue's: the server in a memory cap (nothing where no cgroup is writable)
	t=$(date +%s)
	if [ "$QUICK" = 1 ]; then
		bash "$BENCH_DIR/scale.sh" --quick --out "$OUT/scale"
	else
		bash "$BENCH_DIR/scale.sh" --out "$OUT/scale"
	fi
	[ ! -f "$OUT/scale/scale_table.txt" ] || cp "$OUT/scale/scale_table.txt" "$OUT/scale_table.txt"
	part_time "beyond memory (scale)" "$t"
fi

if command -v gnuplot >/dev/null; then
	bash "$BENCH_DIR/plot.sh" "$OUT" 2> >(grep -v 'empty x range' >&2) || lsm_log "WARNING: plotting failed"
else
	lsm_log "gnuplot not installed: no plots"
fi

# All tables together in one file (and, after --all, once more on the terminal).
for f in acme_table build_table ingest_table lookups_table merge_table reads_states unique_table scale_table; do
	[ ! -f "$OUT/$f.txt" ] || cat "$OUT/$f.txt"
done >"$OUT/summary.txt"
[ "$ALL" = 0 ] || cat "$OUT/summary.txt"
echo
echo "total time: $(($(date +%s) - T0)) s.  Results in $OUT:"
(cd "$OUT" && ls -1 -- *.csv *.png *.txt 2>/dev/null | grep -v '_plan_' | tr '\n' ' ')
echo
