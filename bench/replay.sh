#!/usr/bin/env bash
# bench/replay.sh — how long the first use of an lsm index after a restart
# takes (its memtable is rebuilt from the log), and how soon it, or a second
# session waiting for it, can be cancelled (issue 13, item 4).  One index whose
# memtable holds every row (memtable_size = 1 GB), so the log is one chain of
# N rows; after each immediate restart:
#   load_ms        the first query's time (the whole load, then the scan);
#   timeout_ms     the first query with statement_timeout = 200 ms: time to
#                  its error;
#   waiter_ms      a second session, started 300 ms into the first one's load,
#                  with statement_timeout = 200 ms: time to its error (or to
#                  its result, if it could not be cancelled).
#
#   bash bench/replay.sh [rows] [runs]    (default 3000000 rows, 3 runs; medians)
#
# Run as root; measures the lsm_am installed for PG_CONFIG, on a throwaway
# cluster.  Results: bench/results/<stamp>/replay.csv
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
require_root

ROWS=${1:-3000000}
RUNS=${2:-3}
OUT=$(bench_results_dir "${BENCH_OUT:-}")
CSV=$OUT/replay.csv
csv_init "$CSV"
bench_cluster replay "lsm_am.memory = 1024MB" "lsm_am.max_workers = 0" "autovacuum = off" \
	"max_wal_size = 8GB" "checkpoint_timeout = 1h"
q "CREATE EXTENSION lsm_am"
q "CREATE TABLE t (k int8)"
q "CREATE INDEX t_k ON t USING lsm (k) WITH (memtable_size = 1048576)"
lsm_log "inserting $ROWS random keys"
q "INSERT INTO t SELECT (random() * 1e15)::int8 FROM generate_series(1, $ROWS)"
q "CHECKPOINT"
PAGES=$(q "SELECT log_pages FROM lsm_am.index_stats('t_k')")
lsm_log "the log holds $PAGES pages"
QUERY="SET enable_seqscan = off; SET enable_bitmapscan = off; SELECT count(*) FROM t WHERE k >= 0"

restart() {
	as_pg pg_ctl -D "$BENCH_DATADIR" -m immediate -w stop >/dev/null
	as_pg pg_ctl -D "$BENCH_DATADIR" -l "$BENCH_SCRATCH/server.log" -w -t 120 start >/dev/null
}
now_ms() { date +%s%3N; }

for run in $(seq 1 "$RUNS"); do
	restart
	t0=$(now_ms)
	q "$QUERY" >/dev/null
	csv_add "$CSV" replay "$run" lsm load load_ms $(($(now_ms) - t0))

	restart
	t0=$(now_ms)
	q "SET statement_timeout = '200ms'; $QUERY" >/dev/null 2>&1 || true
	csv_add "$CSV" replay "$run" lsm timeout timeout_ms $(($(now_ms) - t0))

	restart
	q "$QUERY" >/dev/null &
	loader=$!
	sleep 0.3
	t0=$(now_ms)
	q "SET statement_timeout = '200ms'; $QUERY" >/dev/null 2>&1 || true
	csv_add "$CSV" replay "$run" lsm waiter waiter_ms $(($(now_ms) - t0))
	wait "$loader"
done

printf '\n%s rows, %s log pages, medians of %s runs (ms)\n' "$ROWS" "$PAGES" "$RUNS"
for m in load_ms timeout_ms waiter_ms; do
	printf '  %-11s %s\n' "$m" "$(awk -F, -v m="$m" '$5 == m { print $6 }' "$CSV" | sort -n |
		awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')"
done
