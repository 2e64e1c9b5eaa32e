#!/usr/bin/env bash
# bench/lookups.sh — the Bloom issue's figures, on the Acme workload: 1.5M
# order_events inserted in time order, then 50,000 reviews of random orders,
# into a table with an lsm index on order_id (and, for comparison, the same
# rows into a table with a btree index).  The lsm index is left as the
# workers leave it (several runs, not compacted).  Then:
#   - 4,000 lookups by random order_id: run data pages read per lookup
#     (memtable excluded), bloom filter probes, negatives and false
#     positives (lsm_am.lookup_stats), and the measured false-positive rate
#     against the theoretical rate for bloom_bits_per_key = 10;
#   - 200 lookups under EXPLAIN (ANALYZE, BUFFERS): shared buffers touched
#     per lookup, lsm and btree.
# Two lsm indexes: the defaults (leveled, 4 MB memtable), and one kept with
# many runs (tiered, 256 kB memtable).
#
#   bash bench/lookups.sh [runs]      (default 3 repetitions; medians)
#
# Run as root; uses a throwaway cluster.  Results: bench/results/<stamp>/lookups.csv
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
require_root

RUNS=${1:-3}
OUT=$(bench_results_dir "${BENCH_OUT:-}")
CSV=$OUT/lookups.csv
csv_init "$CSV"
bench_cluster lookups "max_wal_size = 8GB" "checkpoint_timeout = 1h" "lsm_am.max_workers = 2"
q "CREATE EXTENSION lsm_am"
bench_load_acme

lsm_log "loading ev_lsm and ev_bt: 1.5M events in time order, then 50,000 random reviews"
pg_psql -d postgres -q -v ON_ERROR_STOP=1 <<'SQL' >/dev/null
CREATE TABLE ev_lsm (LIKE order_events);
CREATE TABLE ev_tiered (LIKE order_events);
CREATE TABLE ev_bt (LIKE order_events);
CREATE INDEX ev_lsm_order ON ev_lsm USING lsm (order_id);
-- many runs: tiered compaction and a 256 kB memtable
CREATE INDEX ev_tiered_order ON ev_tiered USING lsm (order_id)
  WITH (compaction = tiered, memtable_size = 256);
CREATE INDEX ev_bt_order ON ev_bt (order_id);
SELECT setseed(0.42);
CREATE TABLE reviews AS
SELECT 1500000 + g AS id, (1 + floor(random() * 500000))::bigint AS order_id,
       'reviewed'::text AS kind,
       timestamptz '2026-10-03 18:00:00+00' + g * interval '1 second' AS happened_at
  FROM generate_series(1, 50000) g;
DO $$
BEGIN
  FOR b IN 0..29 LOOP
    INSERT INTO ev_lsm SELECT * FROM order_events WHERE id > b * 50000 AND id <= (b + 1) * 50000 ORDER BY id;
    INSERT INTO ev_tiered SELECT * FROM order_events WHERE id > b * 50000 AND id <= (b + 1) * 50000 ORDER BY id;
    INSERT INTO ev_bt SELECT * FROM order_events WHERE id > b * 50000 AND id <= (b + 1) * 50000 ORDER BY id;
    COMMIT;
  END LOOP;
  FOR b IN 0..49 LOOP
    INSERT INTO ev_lsm SELECT * FROM reviews WHERE id > 1500000 + b * 1000 AND id <= 1500000 + (b + 1) * 1000 ORDER BY id;
    INSERT INTO ev_tiered SELECT * FROM reviews WHERE id > 1500000 + b * 1000 AND id <= 1500000 + (b + 1) * 1000 ORDER BY id;
    INSERT INTO ev_bt SELECT * FROM reviews WHERE id > 1500000 + b * 1000 AND id <= 1500000 + (b + 1) * 1000 ORDER BY id;
    COMMIT;
  END LOOP;
END $$;
VACUUM ANALYZE ev_lsm;
VACUUM ANALYZE ev_tiered;
VACUUM ANALYZE ev_bt;
SQL
SHAPES=""
for t in lsm tiered; do
	q "SELECT lsm_am.wait_for_merges('ev_${t}_order', '10 minutes')" >/dev/null
	shape=$(q "SELECT runs_per_level::text || ' (' || (SELECT count(*) FROM lsm_am.index_info('ev_${t}_order')) || ' runs)' FROM lsm_am.maintenance_stats('ev_${t}_order')")
	lsm_log "ev_${t}_order: runs per level $shape"
	SHAPES+="  ev_${t}_order: runs per level L0.. $shape"$'\n'
done

for run in $(seq 1 "$RUNS"); do
	for t in lsm tiered; do
		IFS='|' read -r lookups probes negatives fps pages <<<"$(q "
			SELECT lsm_am.reset_lookup_stats('ev_${t}_order');
			SET enable_seqscan = off;
			SELECT setseed(0.$run);
			DO \$\$
			DECLARE n bigint; k bigint;
			BEGIN
			  FOR i IN 1..4000 LOOP
			    k := 1 + floor(random() * 500000);   -- a parameter, not a volatile qual
			    SELECT count(*) INTO n FROM ev_$t WHERE order_id = k;
			  END LOOP;
			END \$\$;
			SELECT lookups, filter_probes, filter_negatives, false_positives, data_pages_read
			  FROM lsm_am.lookup_stats('ev_${t}_order');" | tail -n1)"
		c() { csv_add "$CSV" lookups "$run" "lsm_$t" acme "$1" "$2"; }
		c lookups "$lookups"
		c data_pages_per_lookup "$(q "SELECT round($pages::numeric / $lookups, 3)")"
		c filter_probes_per_lookup "$(q "SELECT round($probes::numeric / $lookups, 2)")"
		c false_positive_rate_pct "$(q "SELECT round(100.0 * $fps / greatest($fps + $negatives, 1), 3)")"
		c false_positives "$fps"
		c filter_negatives "$negatives"
	done

	# shared buffers per lookup, every index, same 200 keys
	for t in lsm tiered bt; do
		b=$(q "
			SET enable_seqscan = off;
			SELECT setseed(0.5$run);
			CREATE TEMP TABLE keys AS SELECT (1 + floor(random() * 500000))::bigint AS k FROM generate_series(1, 200);
			DO \$\$
			DECLARE p json; tot bigint := 0; r record;
			BEGIN
			  FOR r IN SELECT k FROM keys LOOP
			    EXECUTE format('EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) SELECT count(*) FROM ev_$t WHERE order_id = %s', r.k) INTO p;
			    tot := tot + (p->0->'Plan'->>'Shared Hit Blocks')::bigint + (p->0->'Plan'->>'Shared Read Blocks')::bigint;
			  END LOOP;
			  RAISE WARNING 'buffers %', round(tot / 200.0, 2);
			END \$\$;" 2>&1 | sed -n 's/.*buffers //p')
		csv_add "$CSV" lookups "$run" "$([ $t = bt ] && echo btree || echo "lsm_$t")" acme buffers_per_lookup "$b"
	done
done

THEORY=$(q "SELECT round(100 * power(1 - exp(-7.0 / 10), 7), 3)")
bench_median_csv "$CSV" "$OUT/lookups_median.csv"
echo
echo "Acme lookups by random order_id, medians of $RUNS runs"
printf '%s' "$SHAPES"
echo "theoretical false-positive rate at 10 bits per key (k = 7): $THEORY %"
column -t -s, "$OUT/lookups_median.csv"
echo "results: $CSV"
