#!/usr/bin/env bash
# bench/demo.sh — the WAL cost of random-key inserts: btree vs lsm.
#
#   sudo bash bench/demo.sh [--skip-setup] [--rows N] [--batch N]
#
# Installs what is missing, builds and installs lsm_am, starts a throwaway
# PostgreSQL 15 cluster (as the postgres user, private socket), loads an
# order_events table (default 200,000 events with random order_id) into three
# identical tables — no index, a btree index on order_id, an lsm index on
# order_id — and after a CHECKPOINT inserts the same batch of 50,000 events
# with random order_id into each, under EXPLAIN (ANALYZE, WAL, BUFFERS).
# Prints the plans, lsm_am.index_stats, a few lookups that must agree, and a
# side-by-side summary.  The cluster is removed on exit.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/../tests/lib.sh"

ROWS=200000
BATCH=50000
SKIP_SETUP=0
while [ $# -gt 0 ]; do
	case $1 in
	--skip-setup) SKIP_SETUP=1; shift ;;
	--rows) ROWS=$2; shift 2 ;;
	--batch) BATCH=$2; shift 2 ;;
	-h | --help) sed -n '2,13p' "$0"; exit 0 ;;
	*) lsm_die "unknown argument $1" ;;
	esac
done

require_root
[ "$SKIP_SETUP" = 1 ] || bash "$LSM_REPO/tests/setup.sh"

DIR=$(make_scratch_dir demo)
cleanup() {
	cluster_stop "$DIR"
	rm -rf "$DIR"
}
trap cleanup EXIT

lsm_log "starting a throwaway cluster in $DIR"
cluster_start "$DIR" "$(pick_port)" "max_wal_size = '4GB'" "checkpoint_timeout = '1h'" \
	"shared_buffers = '256MB'"

q() { pg_psql -d postgres -qAt -c "$1"; }

lsm_log "loading $ROWS events into ev_heap, ev_btree and ev_lsm"
pg_psql -d postgres -q <<SQL
CREATE EXTENSION lsm_am;
SELECT setseed(0.42);
CREATE TABLE ev_heap (id bigint, order_id bigint, kind text, happened_at timestamptz);
INSERT INTO ev_heap
SELECT g, (random() * 1000000)::bigint,
       (ARRAY['placed', 'paid', 'shipped', 'review'])[1 + g % 4],
       timestamptz '2024-01-01' + g * interval '1 second'
  FROM generate_series(1, $ROWS) g;
CREATE TABLE ev_btree (LIKE ev_heap);
CREATE TABLE ev_lsm (LIKE ev_heap);
INSERT INTO ev_btree SELECT * FROM ev_heap;
INSERT INTO ev_lsm SELECT * FROM ev_heap;
CREATE INDEX ev_btree_order_id ON ev_btree USING btree (order_id);
CREATE INDEX ev_lsm_order_id ON ev_lsm USING lsm (order_id);
-- the batch: random order_ids, i.e. keys spread over the whole index
CREATE TABLE batch AS
SELECT $ROWS + g AS id, (random() * 1000000)::bigint AS order_id,
       'review'::text AS kind,
       timestamptz '2024-03-01' + g * interval '1 second' AS happened_at
  FROM generate_series(1, $BATCH) g;
VACUUM ANALYZE ev_heap, ev_btree, ev_lsm, batch;
SQL

declare -A RECORDS FPI BYTES LSNBYTES MS
measure() { # measure TABLE
	local t=$1 plan lsn0 lsn1
	q "CHECKPOINT" >/dev/null
	lsn0=$(q "SELECT pg_current_wal_insert_lsn()")
	plan=$(q "EXPLAIN (ANALYZE, WAL, BUFFERS, COSTS OFF, TIMING OFF)
	          INSERT INTO $t SELECT * FROM batch")
	lsn1=$(q "SELECT pg_current_wal_insert_lsn()")
	echo
	echo "---- EXPLAIN (ANALYZE, WAL, BUFFERS) INSERT INTO $t SELECT * FROM batch  ($BATCH rows)"
	echo "$plan"
	# The Insert node's line is the first "WAL:" line.
	local wal
	wal=$(grep -m1 'WAL:' <<<"$plan")
	RECORDS[$t]=$(grep -o 'records=[0-9]*' <<<"$wal" | cut -d= -f2)
	FPI[$t]=$(grep -o 'fpi=[0-9]*' <<<"$wal" | cut -d= -f2)
	BYTES[$t]=$(grep -o 'bytes=[0-9]*' <<<"$wal" | cut -d= -f2)
	MS[$t]=$(grep -o 'Execution Time: [0-9.]*' <<<"$plan" | awk '{print $3}')
	LSNBYTES[$t]=$(q "SELECT pg_wal_lsn_diff('$lsn1', '$lsn0')::bigint")
	: "${RECORDS[$t]:=0}" "${FPI[$t]:=0}" "${BYTES[$t]:=0}"
}

measure ev_heap
measure ev_btree
measure ev_lsm

echo
echo "---- lsm_am.index_stats('ev_lsm_order_id')"
pg_psql -d postgres -c "SELECT * FROM lsm_am.index_stats('ev_lsm_order_id')"
echo "---- index sizes"
pg_psql -d postgres -c "SELECT c.relname AS index, pg_size_pretty(pg_relation_size(c.oid)) AS size,
       pg_relation_size(c.oid) / 8192 AS pages
  FROM pg_class c WHERE c.relname IN ('ev_btree_order_id', 'ev_lsm_order_id') ORDER BY 1"

echo "---- lookups (each through its index; the answers must be identical)"
MISMATCH=0
keys=$(q "SELECT string_agg(order_id::text, ' ') FROM (SELECT order_id FROM batch ORDER BY id LIMIT 4) s")
keys="$keys 0 424242 999999"
printf '%-10s  %-28s  %-28s\n' order_id "btree (rows, sum id)" "lsm (rows, sum id)"
for k in $keys; do
	b=$(pg_psql -d postgres -qAt -c "SET enable_seqscan = off" \
		-c "SELECT count(*) || ', ' || coalesce(sum(id), 0) FROM ev_btree WHERE order_id = $k")
	l=$(pg_psql -d postgres -qAt -c "SET enable_seqscan = off" \
		-c "SELECT count(*) || ', ' || coalesce(sum(id), 0) FROM ev_lsm WHERE order_id = $k")
	flag=
	[ "$b" = "$l" ] || { flag="  <-- MISMATCH"; MISMATCH=1; }
	printf '%-10s  %-28s  %-28s%s\n' "$k" "$b" "$l" "$flag"
done
b=$(pg_psql -d postgres -qAt -c "SET enable_seqscan = off" \
	-c "SELECT count(*) || ', ' || sum(id) FROM ev_btree WHERE order_id BETWEEN 100000 AND 101000")
l=$(pg_psql -d postgres -qAt -c "SET enable_seqscan = off" \
	-c "SELECT count(*) || ', ' || sum(id) FROM ev_lsm WHERE order_id BETWEEN 100000 AND 101000")
flag=
[ "$b" = "$l" ] || { flag="  <-- MISMATCH"; MISMATCH=1; }
printf '%-10s  %-28s  %-28s%s\n' "range" "$b" "$l" "$flag"
echo "plan of the lsm lookup:"
pg_psql -d postgres -qAt -c "SET enable_seqscan = off" \
	-c "EXPLAIN (COSTS OFF) SELECT count(*) FROM ev_lsm WHERE order_id = 424242" | sed 's/^/  /'

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2fx", a / b; else print "-" }'; }
per_row() { awk -v a="$1" -v n="$BATCH" 'BEGIN { printf "%.1f", a / n }'; }
idx() { echo $(($1 - $2)); }

echo
echo "==================== $BATCH random-key inserts after a CHECKPOINT ===================="
printf '%-26s %14s %14s %14s %12s\n' "" "heap only" "btree" "lsm" "btree/lsm"
for m in RECORDS FPI BYTES LSNBYTES; do
	declare -n arr=$m
	case $m in
	RECORDS) label="WAL records" ;;
	FPI) label="full-page images" ;;
	BYTES) label="WAL bytes (EXPLAIN)" ;;
	LSNBYTES) label="WAL bytes (LSN diff)" ;;
	esac
	printf '%-26s %14s %14s %14s %12s\n' "$label" "${arr[ev_heap]}" "${arr[ev_btree]}" \
		"${arr[ev_lsm]}" "$(ratio "${arr[ev_btree]}" "${arr[ev_lsm]}")"
	unset -n arr
done
printf '%-26s %14s %14s %14s %12s\n' "WAL bytes / row" "$(per_row "${BYTES[ev_heap]}")" \
	"$(per_row "${BYTES[ev_btree]}")" "$(per_row "${BYTES[ev_lsm]}")" \
	"$(ratio "${BYTES[ev_btree]}" "${BYTES[ev_lsm]}")"
bi=$(idx "${BYTES[ev_btree]}" "${BYTES[ev_heap]}")
li=$(idx "${BYTES[ev_lsm]}" "${BYTES[ev_heap]}")
printf '%-26s %14s %14s %14s %12s\n' "index WAL bytes / row" "-" "$(per_row "$bi")" \
	"$(per_row "$li")" "$(ratio "$bi" "$li")"
printf '%-26s %14s %14s %14s %12s\n' "execution time (ms)" "${MS[ev_heap]}" "${MS[ev_btree]}" \
	"${MS[ev_lsm]}" "$(ratio "${MS[ev_btree]}" "${MS[ev_lsm]}")"
echo "(index WAL = table's WAL minus the heap-only table's WAL for the same rows)"
if [ "$MISMATCH" = 1 ]; then
	echo "lookups DISAGREE between btree and lsm" >&2
	exit 1
fi
echo "lookups agree"
