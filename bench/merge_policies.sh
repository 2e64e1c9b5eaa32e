#!/usr/bin/env bash
# bench/merge_policies.sh — the Merge issue's figures: 1M random int8 keys
# inserted (in 100 transactions of 10,000 rows) into a table with an lsm
# index under each compaction policy (leveled, tiered, lazy), background
# workers doing the flushes and compactions; then, per policy:
#   - write amplification: bytes written to runs (flushes + compactions)
#     divided by the bytes of the entries (15 bytes per int8 entry: null
#     flag, 8 key bytes, 6 TID bytes);
#   - WAL bytes per row, split into log appends, flushes and compactions
#     (lsm_am.maintenance_stats: each process counts the WAL it writes);
#   - runs per level at the end, compactions, trivial moves, write stalls;
#   - the index's size, and after lsm_am.compact() its single run against
#     a fresh CREATE INDEX on the same rows.
# btree's WAL for the same inserts is measured in the same run for scale.
#
#   bash bench/merge_policies.sh [rows] [runs] [memtable_kB]
#        (default 1000000 rows, 1 run, a 256 kB memtable: about 90 flushes,
#        so that every policy builds several levels; with the default 4 MB
#        memtable 1M keys make only 6 flushes)
#
# Run as root; uses a throwaway cluster.  Results: bench/results/<stamp>/merge.csv
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
require_root

ROWS=${1:-1000000}
RUNS=${2:-1}
MEMTABLE_KB=${3:-256}
BATCH=10000
OUT=$(bench_results_dir "${BENCH_OUT:-}")
CSV=$OUT/merge.csv
csv_init "$CSV"
bench_cluster merge "max_wal_size = 8GB" "checkpoint_timeout = 1h" \
	"lsm_am.max_workers = 2" "max_worker_processes = 16"
q "CREATE EXTENSION lsm_am"

load() { # load TABLE: ROWS random keys in transactions of BATCH rows
	local t=$1 done=0 sql=""
	while [ "$done" -lt "$ROWS" ]; do
		sql+="INSERT INTO $t SELECT (random() * 9e18)::int8 FROM generate_series(1, $BATCH);"$'\n'
		done=$((done + BATCH))
	done
	printf '%s' "$sql" | pg_psql -d postgres -q -v ON_ERROR_STOP=1 >/dev/null
}

for run in $(seq 1 "$RUNS"); do
	# btree, for scale
	q "DROP TABLE IF EXISTS bt; CREATE TABLE bt (k int8); CREATE INDEX bt_i ON bt (k); CHECKPOINT"
	l0=$(wal_lsn); t0=$(date +%s.%N)
	load bt
	t1=$(date +%s.%N); l1=$(wal_lsn)
	csv_add "$CSV" merge "$run" btree random wal_bytes_per_row "$(q "SELECT round($(wal_diff "$l0" "$l1")::numeric / $ROWS, 1)")"
	csv_add "$CSV" merge "$run" btree random seconds "$(echo "$t1 - $t0" | bc)"
	csv_add "$CSV" merge "$run" btree random index_pages "$(q "SELECT pg_relation_size('bt_i') / 8192")"

	for policy in leveled tiered lazy; do
		lsm_log "run $run: $policy"
		q "DROP TABLE IF EXISTS t; CREATE TABLE t (k int8); CREATE INDEX t_i ON t USING lsm (k) WITH (compaction = $policy, memtable_size = $MEMTABLE_KB); CHECKPOINT"
		l0=$(wal_lsn); t0=$(date +%s.%N)
		load t
		t1=$(date +%s.%N)
		q "SELECT lsm_am.wait_for_merges('t_i', '10 minutes')" >/dev/null
		t2=$(date +%s.%N); l1=$(wal_lsn)
		IFS='|' read -r levels flushes compactions moves pf pc slow stops stall_ms backend wlog wflush wcompact free_pages <<<"$(q "
			SELECT runs_per_level, flushes, compactions, trivial_moves, pages_flushed, pages_compacted,
			       slowdowns, stops, round(stall_ms::numeric), backend_flushes,
			       wal_log_bytes, wal_flush_bytes, wal_compact_bytes, free_pages
			FROM lsm_am.maintenance_stats('t_i')")"
		entry_bytes=$((ROWS * 15))
		wa=$(q "SELECT round(($pf + $pc) * 8192.0 / $entry_bytes, 2)")
		c() { csv_add "$CSV" merge "$run" "$policy" random "$1" "$2"; }
		c write_amplification "$wa"
		c flush_write_amplification "$(q "SELECT round($pf * 8192.0 / $entry_bytes, 2)")"
		c wal_bytes_per_row "$(q "SELECT round($(wal_diff "$l0" "$l1")::numeric / $ROWS, 1)")"
		c wal_log_per_row "$(q "SELECT round($wlog::numeric / $ROWS, 1)")"
		c wal_flush_per_row "$(q "SELECT round($wflush::numeric / $ROWS, 1)")"
		c wal_compact_per_row "$(q "SELECT round($wcompact::numeric / $ROWS, 1)")"
		c flushes "$flushes"
		c compactions "$compactions"
		c trivial_moves "$moves"
		c slowdowns "$slow"
		c stops "$stops"
		c stall_ms "$stall_ms"
		c backend_flushes "$backend"
		c runs_per_level "L0..Ln:${levels//,/\/}"
		c seconds_insert "$(echo "$t1 - $t0" | bc)"
		c seconds_settle "$(echo "$t2 - $t1" | bc)"
		c index_pages "$(q "SELECT pg_relation_size('t_i') / 8192")"
		c free_pages "$free_pages"
		q "SELECT lsm_am.compact('t_i')" >/dev/null
		c compacted_run_pages "$(q "SELECT sum(pages) FROM lsm_am.index_info('t_i')")"
		c compacted_runs "$(q "SELECT count(*) FROM lsm_am.index_info('t_i')")"
		q "CREATE INDEX t_fresh ON t USING lsm (k)"
		c fresh_build_pages "$(q "SELECT sum(pages) FROM lsm_am.index_info('t_fresh')")"
		c leaked_pages "$(q "SELECT leaked_pages FROM lsm_am.check_index('t_i')")"
		q "DROP INDEX t_fresh"
	done
done

echo
echo "$ROWS random int8 inserts per compaction policy, memtable $MEMTABLE_KB kB (median of $RUNS run(s)); btree for scale"
bench_median_csv "$CSV" "$OUT/merge_median.csv"
column -t -s, "$OUT/merge_median.csv"
echo
echo "results: $CSV"
