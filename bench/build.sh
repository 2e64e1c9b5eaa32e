#!/usr/bin/env bash
# bench/build.sh — (d) CREATE INDEX on the 1.5M rows of the Acme Shop sample,
# btree vs lsm: time, size, and the WAL the build writes.
#
#   bash bench/build.sh [--runs N] [--out DIR]     (as root; run.sh calls it)
#
# order_events (bench/acme_data.sql) is generated on a throwaway cluster; each
# run builds an index on order_id with each access method (alternating, table
# already in shared buffers), with maintenance_work_mem at its default (64MB)
# and max_parallel_maintenance_workers = 0 (a single process for both;
# bench/parallel.sh measures builds with workers).  Default 5 runs; medians.  Target (d): an lsm
# index no larger than a fresh btree build.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"

RUNS=5
OUT=
while [ $# -gt 0 ]; do
	case $1 in
	--runs) RUNS=${2:?--runs needs a number}; shift 2 ;;
	--out) OUT=${2:?--out needs a directory}; shift 2 ;;
	-h | --help) sed -n '2,/^set /{/^#/p}' "$0"; exit 0 ;;
	*) lsm_die "build.sh: unknown argument $1 (try --help)" ;;
	esac
done
[[ $RUNS =~ ^[1-9][0-9]*$ ]] || lsm_die "--runs must be a positive integer"
require_root

OUT=$(bench_results_dir "$OUT")
RAW=$OUT/build_raw.csv
MED=$OUT/build.csv
csv_init "$RAW"

bench_cluster build "max_wal_size = '4GB'" "checkpoint_timeout = '1h'" "autovacuum = off"
q "CREATE EXTENSION lsm_am" >/dev/null
lsm_log "generating the Acme Shop sample (bench/acme_data.sql)"
bench_load_acme
q "SELECT count(*) FROM order_events" >/dev/null # into shared buffers

for run in $(seq 1 "$RUNS"); do
	for am in btree lsm; do
		q "DROP INDEX IF EXISTS order_events_order_id_idx; CHECKPOINT" >/dev/null
		lsn0=$(q "SELECT pg_current_wal_insert_lsn()")
		ms=$(pg_psql -d postgres -qAt <<SQL | awk '/^Time:/ { print $2 }'
SET max_parallel_maintenance_workers = 0;
\\timing on
CREATE INDEX order_events_order_id_idx ON order_events USING $am (order_id);
SQL
		)
		lsn1=$(wal_lsn)
		[ -n "$ms" ] || lsm_die "CREATE INDEX USING $am failed"
		pages=$(q "SELECT pg_relation_size('order_events_order_id_idx') / 8192")
		wal=$(wal_diff "$lsn0" "$lsn1")
		csv_add "$RAW" build "$run" "$am" order_id ms "$ms"
		csv_add "$RAW" build "$run" "$am" order_id pages "$pages"
		csv_add "$RAW" build "$run" "$am" order_id wal_bytes "$wal"
		printf '    run %d %-6s %10s ms %8s pages %12s WAL bytes\n' "$run" "$am" "$ms" "$pages" "$wal" >&2
	done
done
q "DROP INDEX IF EXISTS order_events_order_id_idx" >/dev/null
bench_median_csv "$RAW" "$MED"

M() { med "$MED" build "$1" order_id "$2"; }
{
	echo
	echo "(d) CREATE INDEX ON order_events (order_id), 1,500,000 rows   (median of $RUNS runs)"
	printf '  %-28s %14s %14s %10s\n' "" btree lsm lsm/btree
	printf '  %-28s %14s %14s %10s\n' "time (ms)" "$(fmt_num "$(M btree ms)" 0)" "$(fmt_num "$(M lsm ms)" 0)" "$(ratio "$(M lsm ms)" "$(M btree ms)")"
	printf '  %-28s %14s %14s %10s\n' "size (pages)" "$(fmt_int "$(M btree pages)")" "$(fmt_int "$(M lsm pages)")" "$(ratio "$(M lsm pages)" "$(M btree pages)")"
	printf '  %-28s %14s %14s %10s\n' "size (MB)" "$(fmt_num "$(awk -v p="$(M btree pages)" 'BEGIN { print p * 8192 / 1048576 }')" 1)" \
		"$(fmt_num "$(awk -v p="$(M lsm pages)" 'BEGIN { print p * 8192 / 1048576 }')" 1)" ""
	printf '  %-28s %14s %14s %10s\n' "WAL written (bytes)" "$(fmt_int "$(M btree wal_bytes)")" "$(fmt_int "$(M lsm wal_bytes)")" "$(ratio "$(M lsm wal_bytes)" "$(M btree wal_bytes)")"
	r=$(ratio "$(M lsm pages)" "$(M btree pages)" 3)
	echo " target (reported, not asserted)"
	printf '  %-58s %8s  %s\n' "lsm index size <= fresh btree build (lsm/btree)" "$r" "$(verdict "$r" '<=' 1)"
	echo
	bench_machine
	echo " maintenance_work_mem=64MB (default), max_parallel_maintenance_workers=0"
	echo " raw: $RAW   medians: $MED"
} | tee "$OUT/build_table.txt"
