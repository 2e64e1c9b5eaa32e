#!/usr/bin/env bash
# bench/stalls.sh — where an lsm index's write stops and slowdowns come
# from: 2 pgbench clients insert 1,000 random int8 keys per statement into a
# table with one lsm index (default policy, or --policy) for --seconds
# (default 150), while a third session samples lsm_am.indexes every 100 ms
# (level-0 runs, immutable memtables waiting for a flush, the active
# memtable's fill, stops, slowdowns).  Prints the statements per second,
# the stops counted between two samples grouped by the state of the sample
# before them (which condition stopped the inserts: 36 level-0 runs, or a
# full memtable with both immutables waiting), and how often level 0 and
# the immutables stood at each count.
#
#   bash bench/stalls.sh [--seconds S] [--policy leveled|tiered|lazy]
#                        [--memtable-kb N] [--out DIR]               (as root)
#
# Uses the installed lsm_am (run bench/run.sh or tests/run_all.sh first to
# build and install it).
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"

SECS=150
POLICY=leveled
MEMTABLE_KB=
OUT=
while [ $# -gt 0 ]; do
	case $1 in
	--seconds) SECS=${2:?--seconds needs a number}; shift 2 ;;
	--policy) POLICY=${2:?--policy needs leveled, tiered or lazy}; shift 2 ;;
	--memtable-kb) MEMTABLE_KB=${2:?--memtable-kb needs a number}; shift 2 ;;
	--out) OUT=${2:?--out needs a directory}; shift 2 ;;
	-h | --help) sed -n '2,/^set /{/^#/p}' "$0"; exit 0 ;;
	*) lsm_die "stalls.sh: unknown argument $1 (try --help)" ;;
	esac
done
[[ $SECS =~ ^[1-9][0-9]*$ ]] || lsm_die "--seconds takes a positive number"
case $POLICY in leveled | tiered | lazy) ;; *) lsm_die "--policy: leveled, tiered or lazy" ;; esac
[ -z "$MEMTABLE_KB" ] || [[ $MEMTABLE_KB =~ ^[1-9][0-9]*$ ]] || lsm_die "--memtable-kb takes a number"
require_root
[ -f "$("$PG_CONFIG" --pkglibdir)/lsm_am.so" ] || lsm_die "lsm_am is not installed (run bash bench/run.sh first)"
OUT=$(bench_results_dir "$OUT")
bench_cluster stalls "max_wal_size = '1GB'" "autovacuum = off"

opts="compaction = $POLICY${MEMTABLE_KB:+, memtable_size = $MEMTABLE_KB}"
q "CREATE EXTENSION lsm_am;
   CREATE TABLE ing (k int8);
   CREATE INDEX ing_k ON ing USING lsm (k) WITH ($opts);
   CREATE TABLE samples (t timestamptz, l0 int, imm int, fill float8, stops int8, slowdowns int8)" >/dev/null
echo "INSERT INTO ing SELECT (random() * 9.2e18)::int8 FROM generate_series(1, 1000);" >"$BENCH_SCRATCH/insert.sql"
cat >"$BENCH_SCRATCH/sample.sql" <<'SQL'
INSERT INTO samples
SELECT clock_timestamp(), coalesce(runs_per_level[1], 0), immutable_memtables,
       memtable_fill, stops, slowdowns
FROM lsm_am.indexes WHERE indexrelname = 'ing_k';
\sleep 100 ms
SQL
chmod 644 "$BENCH_SCRATCH"/*.sql
lsm_log "2 clients inserting into an lsm index ($opts) for $SECS s, sampled every 100 ms"
as_pg "$PG_BINDIR/pgbench" -h "$PGHOST" -p "$PGPORT" -n -c 1 -T "$SECS" -f "$BENCH_SCRATCH/sample.sql" postgres \
	>"$BENCH_SCRATCH/sampler.log" 2>&1 &
sampler=$!
tps=$(as_pg "$PG_BINDIR/pgbench" -h "$PGHOST" -p "$PGPORT" -n -c 2 -j 2 -T "$SECS" -f "$BENCH_SCRATCH/insert.sql" postgres 2>&1 |
	awk '/^tps/ { print $3 }')
wait "$sampler" || lsm_die "the sampler failed: $(tail -n 3 "$BENCH_SCRATCH/sampler.log")"
q "COPY samples TO STDOUT WITH (FORMAT csv, HEADER)" >"$OUT/stalls_samples.csv"

echo
echo "stalls: $opts, 2 clients x 1,000 random int8 keys per INSERT, $SECS s"
echo "  statements/s: ${tps:-?}   rows/s: $(awk -v t="${tps:-0}" 'BEGIN { printf "%.0f", t * 1000 }')"
q "SELECT '  samples: ' || count(*) || ', stops: ' || max(stops) - min(stops) ||
          ', delayed batches: ' || max(slowdowns) - min(slowdowns) ||
          ', level-0 runs at most: ' || max(l0) FROM samples"
echo "  stops between two samples, by the state the first one saw:"
echo "    level-0 runs | immutables waiting | active memtable fill | stops"
q "SELECT l0, imm, fill, sum(d) FROM (
     SELECT stops - lag(stops) OVER w AS d, lag(l0) OVER w AS l0, lag(imm) OVER w AS imm,
            round(lag(fill) OVER w::numeric, 1) AS fill
     FROM samples WINDOW w AS (ORDER BY t)) x
   WHERE d > 0 GROUP BY 1, 2, 3 ORDER BY 4 DESC, 1 LIMIT 20" |
	awk -F'|' '{ printf "    %12s | %18s | %20s | %5s\n", $1, $2, $3, $4 }'
echo "  share of samples with N immutable memtables waiting:"
q "SELECT imm, round(100.0 * count(*) / sum(count(*)) OVER (), 1) FROM samples GROUP BY 1 ORDER BY 1" |
	awk -F'|' '{ printf "    %d waiting: %5s%%\n", $1, $2 }'
echo "  share of samples with level 0 at (buckets of 4 runs):"
q "SELECT l0 / 4 * 4, round(100.0 * count(*) / sum(count(*)) OVER (), 1) FROM samples GROUP BY 1 ORDER BY 1" |
	awk -F'|' '{ printf "    %2d-%2d runs: %5s%%\n", $1, $1 + 3, $2 }'
echo "  samples: $OUT/stalls_samples.csv"
bench_machine
