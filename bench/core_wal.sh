#!/usr/bin/env bash
# bench/core_wal.sh — WAL of 50,000 random int8 keys inserted right after a
# CHECKPOINT into a 1.5M-row table indexed by btree, then by lsm (the Core
# issue's figure).  Run as root; uses a throwaway cluster.
#
#   bash bench/core_wal.sh [runs]     (default 3 runs each; medians reported)
#
# Reports, per index kind: EXPLAIN (ANALYZE, WAL) records, full-page images
# and bytes of the INSERT statement, and the WAL attributed to the index
# relation alone (pg_waldump --relation), per row and as a ratio to btree.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/../tests/lib.sh"
require_root

RUNS=${1:-3}
SCRATCH=$(make_scratch_dir core_wal)
trap 'cluster_stop "$SCRATCH"; rm -rf "$SCRATCH"' EXIT
cluster_start "$SCRATCH" "$(pick_port)" "shared_buffers = 256MB" "max_wal_size = 4GB" \
	"checkpoint_timeout = 1h" "fsync = off"

pg_psql -q -d postgres <<'SQL'
CREATE EXTENSION lsm_am;
-- 1.5M events of 500,000 orders in time order (Acme-like), 50,000 late reviews
SELECT setseed(0.17);
CREATE TABLE src AS
SELECT g AS id, ((g - 1) / 3 + 1)::bigint AS order_id,
       (ARRAY['placed','paid','shipped'])[(g - 1) % 3 + 1] AS kind,
       timestamptz '2025-10-01' + g * interval '21 seconds' AS happened_at
FROM generate_series(1, 1500000) g;
SELECT setseed(0.42);
CREATE TABLE late AS
SELECT 1500000 + g AS id, (1 + floor(random() * 500000))::bigint AS order_id,
       'reviewed'::text AS kind,
       timestamptz '2026-10-03 18:00:00+00' + g * interval '1 second' AS happened_at
FROM generate_series(1, 50000) g;
VACUUM ANALYZE src;
VACUUM ANALYZE late;
SQL

DATADIR=$SCRATCH/data
one_run() {
	local am=$1
	pg_psql -q -d postgres <<SQL >/dev/null
DROP TABLE IF EXISTS ev;
CREATE TABLE ev (id bigint PRIMARY KEY, order_id bigint NOT NULL, kind text NOT NULL,
                 happened_at timestamptz NOT NULL);
INSERT INTO ev SELECT * FROM src ORDER BY id;
CREATE INDEX ev_order_id_idx ON ev USING $am (order_id);
VACUUM ANALYZE ev;
CHECKPOINT;
SQL
	local start_lsn relpath explain end_lsn
	start_lsn=$(pg_psql -Atq -d postgres -c "SELECT pg_current_wal_lsn()")
	relpath=$(pg_psql -Atq -d postgres -c "SELECT pg_relation_filepath('ev_order_id_idx')")
	explain=$(pg_psql -Atq -d postgres -c \
		"EXPLAIN (ANALYZE, WAL, COSTS OFF, TIMING OFF) INSERT INTO ev SELECT * FROM late ORDER BY id" |
		grep -m1 'WAL:')
	end_lsn=$(pg_psql -Atq -d postgres -c "SELECT pg_current_wal_lsn()")
	# WAL records of the index relation alone: base/DB/REL -> spc/db/rel
	local db rel idx_bytes idx_fpi idx_recs
	db=$(echo "$relpath" | cut -d/ -f2)
	rel=$(echo "$relpath" | cut -d/ -f3)
	read -r idx_recs idx_fpi idx_bytes < <(as_pg pg_waldump -p "$DATADIR/pg_wal" -s "$start_lsn" -e "$end_lsn" \
		--relation="1663/$db/$rel" 2>/dev/null |
		awk '{ n++; for (i = 1; i <= NF; i++) if ($i == "len" ) { } }
		     /len \(rec\/tot\):/ { split($0, a, "len \\(rec/tot\\): *"); split(a[2], b, ","); split(b[1], c, "/"); tot += c[2] }
		     /FPW/ { f += gsub(/FPW/, "FPW") }
		     END { printf "%d %d %d\n", n, f, tot }')
	local recs fpi bytes
	recs=$(echo "$explain" | sed -n 's/.*records=\([0-9]*\).*/\1/p')
	fpi=$(echo "$explain" | sed -n 's/.*fpi=\([0-9]*\).*/\1/p')
	bytes=$(echo "$explain" | sed -n 's/.*bytes=\([0-9]*\).*/\1/p')
	fpi=${fpi:-0}
	echo "$am $recs $fpi $bytes $idx_recs $idx_fpi $idx_bytes"
}

median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }

RESULTS=$SCRATCH/results.txt
: >"$RESULTS"
for r in $(seq 1 "$RUNS"); do
	for am in btree lsm; do
		one_run "$am" | tee -a "$RESULTS" >&2
	done
done

printf '\n50,000 random int8 keys into a 1.5M-row table after CHECKPOINT (median of %d runs)\n' "$RUNS"
printf '%-6s %10s %8s %12s %10s | %10s %8s %12s %10s\n' index stmt_recs stmt_fpi stmt_bytes bytes/row \
	idx_recs idx_fpi idx_bytes bytes/row
for am in btree lsm; do
	cols=()
	for c in 2 3 4 5 6 7; do
		cols+=("$(awk -v am="$am" -v c="$c" '$1 == am { print $c }' "$RESULTS" | median)")
	done
	printf '%-6s %10s %8s %12s %10.1f | %10s %8s %12s %10.1f\n' "$am" "${cols[0]}" "${cols[1]}" "${cols[2]}" \
		"$(echo "${cols[2]} / 50000" | bc -l)" "${cols[3]}" "${cols[4]}" "${cols[5]}" "$(echo "${cols[5]} / 50000" | bc -l)"
	eval "${am}_stmt=${cols[2]} ${am}_idx=${cols[5]}"
done
printf 'lsm/btree: statement WAL %.3f, index WAL %.3f\n' \
	"$(echo "$lsm_stmt / $btree_stmt" | bc -l)" "$(echo "$lsm_idx / $btree_idx" | bc -l)"
machine=$(uname -srm; nproc; free -g | awk '/Mem:/ { print $2 " GiB" }')
echo "machine: $(echo $machine)"
