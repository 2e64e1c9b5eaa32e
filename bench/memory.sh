#!/usr/bin/env bash
# bench/memory.sh — the memory a big CREATE INDEX and a big compaction take
# in the backend (issue 16, item 6), next to btree's CREATE INDEX.
#
# The C++ core allocates outside PostgreSQL's memory contexts (run builder,
# bloom filter, merge cursors), so its use must be bounded by what the run
# needs, not by the data: the bound stated here is
#     maintenance_work_mem (the build's sort, PostgreSQL's own)
#   + the run's bloom filter (keys x bloom_bits_per_key / 8)
#   + 32 MB (page buffers, cursors, the backend's own baseline)
# The backend's anonymous resident memory (RssAnon in /proc/PID/status: the
# heap and mmap'd allocations, not shared buffers) is sampled every 50 ms
# during (1) CREATE INDEX USING lsm on N rows, (2) CREATE INDEX USING btree
# on the same rows, (3) lsm_am.compact() of the index after N/4 more rows
# in four level-0 runs: a merge of N + N/4 entries into one run.  Prints
# the peaks and the bound; exits 1 if an lsm peak is over it.
#
#   bash bench/memory.sh [rows]        (default 10000000)
#
# Run as root; measures the lsm_am installed for PG_CONFIG, on a throwaway
# cluster.  Results: bench/results/<stamp>/memory.csv
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
require_root

ROWS=${1:-10000000}
MWM_MB=64
BITS=10
OUT=$(bench_results_dir "${BENCH_OUT:-}")
CSV=$OUT/memory.csv
csv_init "$CSV"
bench_cluster memory "lsm_am.max_workers = 0" "autovacuum = off" \
	"maintenance_work_mem = '${MWM_MB}MB'" "max_parallel_maintenance_workers = 0" \
	"max_wal_size = 8GB" "checkpoint_timeout = 1h"
q "CREATE EXTENSION lsm_am"
lsm_log "loading $ROWS rows"
q "CREATE TABLE t (k int8)"
q "INSERT INTO t SELECT (random() * 1e15)::int8 FROM generate_series(1, $ROWS)"
q "VACUUM ANALYZE t"

# peak SQL: run SQL in one session; print the peak RssAnon (kB) of its backend
peak() {
	local sql=$1 pidfile=$BENCH_SCRATCH/backend.pid script=$BENCH_SCRATCH/peak.sql max=0 pid rss
	rm -f "$pidfile"
	printf '%s\n' "\\o $pidfile" 'SELECT pg_backend_pid();' '\o' 'SELECT pg_sleep(0.5);' "$sql;" >"$script"
	chmod 644 "$script"
	pg_psql -d postgres -qAt -f "$script" >/dev/null &
	local client=$!
	while [ ! -s "$pidfile" ] && kill -0 "$client" 2>/dev/null; do sleep 0.05; done
	pid=$(tr -dc '0-9' <"$pidfile" 2>/dev/null || true)
	while kill -0 "$client" 2>/dev/null; do
		rss=$(awk '/^RssAnon:/ { print $2 }' "/proc/$pid/status" 2>/dev/null || true)
		[ -n "$rss" ] && [ "$rss" -gt "$max" ] && max=$rss
		sleep 0.05
	done
	wait "$client" || lsm_die "the statement failed: $sql"
	echo "$max"
}

BLOOM_KB=$((ROWS * BITS / 8 / 1024))
BOUND_KB=$((MWM_MB * 1024 + BLOOM_KB + 32 * 1024))

lsm_log "CREATE INDEX USING lsm"
LSM_BUILD=$(peak "CREATE INDEX t_lsm ON t USING lsm (k) WITH (bloom_bits_per_key = $BITS)")
csv_add "$CSV" memory 1 lsm create_index peak_rss_anon_kb "$LSM_BUILD"
lsm_log "CREATE INDEX USING btree"
BT_BUILD=$(peak "CREATE INDEX t_bt ON t (k)")
csv_add "$CSV" memory 1 btree create_index peak_rss_anon_kb "$BT_BUILD"
q "DROP INDEX t_bt"

lsm_log "four level-0 runs of $((ROWS / 16)) rows each, then lsm_am.compact()"
for i in 1 2 3 4; do
	q "INSERT INTO t SELECT (random() * 1e15)::int8 FROM generate_series(1, $((ROWS / 16)))"
	q "SELECT lsm_am.flush('t_lsm')" >/dev/null
done
RUNS=$(q "SELECT runs FROM lsm_am.index_stats('t_lsm')")
LSM_COMPACT=$(peak "SELECT lsm_am.compact('t_lsm')")
csv_add "$CSV" memory 1 lsm compact peak_rss_anon_kb "$LSM_COMPACT"

printf '\n%-34s %12s\n' "peak anonymous memory (RssAnon)" "MB"
printf '%-34s %12s\n' "CREATE INDEX USING btree ($ROWS rows)" "$((BT_BUILD / 1024))"
printf '%-34s %12s\n' "CREATE INDEX USING lsm" "$((LSM_BUILD / 1024))"
printf '%-34s %12s\n' "lsm_am.compact() of $RUNS runs" "$((LSM_COMPACT / 1024))"
printf '%-34s %12s\n' "bound (mwm + filter + 32 MB)" "$((BOUND_KB / 1024))"
fail=0
for v in "$LSM_BUILD" "$LSM_COMPACT"; do
	[ "$v" -le "$BOUND_KB" ] || fail=1
done
if [ "$fail" -ne 0 ]; then
	echo "OVER THE BOUND" >&2
	exit 1
fi
echo "within the bound"
