#!/usr/bin/env bash
# bench/cover.sh — covering index-only ranges, lsm vs btree, CPU per query in
# paired rounds (the Parity issue's covering figure, steadier than
# bench/reads.sh's wall clock on a shared machine).
#
#   bash bench/cover.sh [--rows N] [--rounds N] [--queries N] [--reps N] [--out DIR]
#
# One table pair of N random int8 keys (default 1,000,000) with an int4 and
# an int8 column, under (k) INCLUDE (a, b): lsm (after lsm_am.compact()) and
# btree, on a throwaway cluster (shared_buffers 128MB, warm cache, no
# background workers).  In one backend, a round runs --queries (default 300)
# 1,000-row ranges through the lsm index, then as many through the btree
# index (a correlated subquery per range: an Index Only Scan summing a + b,
# no rows sent to the client), timed by the backend's own CPU time
# (/proc/self/schedstat); --rounds (default 10) rounds alternate the two, so
# both see the same machine.  Two forms of the range: BETWEEN (both bounds
# inclusive) and k > lo AND k < hi (both strict).  --reps (default 3)
# separate sessions; prints the median µs per query of each and the ratio,
# against the Parity issue's target (<= 1.1x btree).  The plans are asserted.
#
# Run as root; assumes tests/setup.sh has installed lsm_am.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"

ROWS=1000000
ROUNDS=10
QUERIES=300
REPS=3
OUT=
while [ $# -gt 0 ]; do
	case $1 in
	--rows) ROWS=${2:?}; shift 2 ;;
	--rounds) ROUNDS=${2:?}; shift 2 ;;
	--queries) QUERIES=${2:?}; shift 2 ;;
	--reps) REPS=${2:?}; shift 2 ;;
	--out) OUT=${2:?}; shift 2 ;;
	-h | --help) sed -n '2,/^set /{/^#/p}' "$0"; exit 0 ;;
	*) lsm_die "cover.sh: unknown argument $1 (try --help)" ;;
	esac
done
require_root
OUT=$(bench_results_dir "$OUT")
CSV=$OUT/cover.csv
csv_init "$CSV"

bench_cluster cover "jit = off" "lsm_am.max_workers = 0" "autovacuum = off"

lsm_log "loading $ROWS rows"
q "CREATE EXTENSION lsm_am;
   SELECT setseed(0.42);
   CREATE TABLE cv_l (k int8, a int4, b int8);
   INSERT INTO cv_l SELECT (random() * 9e18)::int8, (random() * 1e6)::int4, (random() * 1e12)::int8
     FROM generate_series(1, $ROWS);
   CREATE TABLE cv_b AS SELECT * FROM cv_l;
   CREATE INDEX cv_l_cov ON cv_l USING lsm (k) INCLUDE (a, b);
   CREATE INDEX cv_b_cov ON cv_b (k) INCLUDE (a, b);
   SELECT lsm_am.compact('cv_l_cov');" >/dev/null
q "VACUUM ANALYZE cv_l, cv_b" >/dev/null

# A range of about 1,000 keys: the key space over the rows, times 1,000.
WIDTH=$(q "SELECT (9e18 / $ROWS * 1000)::int8")
q "CREATE FUNCTION cv_cpu_us(tab regclass, n int, form text) RETURNS float8 LANGUAGE plpgsql AS \$f\$
DECLARE c0 int8; s numeric; cond text;
BEGIN
  cond := CASE form WHEN 'between' THEN 'c.k BETWEEN g.x AND g.x + $WIDTH'
                    ELSE 'c.k > g.x AND c.k < g.x + $WIDTH' END;
  c0 := split_part(pg_read_file('/proc/self/schedstat'), ' ', 1)::int8;
  EXECUTE format('SELECT sum((SELECT sum(c.a + c.b) FROM %s c WHERE %s))
                    FROM (SELECT (random() * (9e18 - $WIDTH))::int8 AS x FROM generate_series(1, \$1)) g',
                 tab, cond) INTO s USING n;
  RETURN (split_part(pg_read_file('/proc/self/schedstat'), ' ', 1)::int8 - c0) / 1000.0 / n;
END \$f\$;
CREATE FUNCTION cv_pair(n int, rounds int, form text) RETURNS text LANGUAGE plpgsql AS \$f\$
DECLARE l float8 := 0; b float8 := 0;
BEGIN
  PERFORM cv_cpu_us('cv_l', 20, form), cv_cpu_us('cv_b', 20, form);
  FOR i IN 1 .. rounds LOOP
    l := l + cv_cpu_us('cv_l', n, form);
    b := b + cv_cpu_us('cv_b', n, form);
  END LOOP;
  RETURN round((l / rounds)::numeric, 2) || ',' || round((b / rounds)::numeric, 2);
END \$f\$;" >/dev/null

SETS="SET enable_seqscan = off; SET enable_bitmapscan = off;"
for form in between strict; do
	cond="k BETWEEN 1000 AND 2000"
	[ "$form" = between ] || cond="k > 1000 AND k < 2000"
	for t in cv_l cv_b; do
		plan=$(q "$SETS EXPLAIN (COSTS OFF) SELECT sum(a + b) FROM $t WHERE $cond")
		grep -q "Index Only Scan using ${t}_cov" <<<"$plan" ||
			lsm_die "cover.sh: $t ($form) is not an Index Only Scan of ${t}_cov:
$plan"
	done
done

for rep in $(seq "$REPS"); do
	for form in between strict; do
		r=$(q "$SETS SELECT cv_pair($QUERIES, $ROUNDS, '$form')")
		csv_add "$CSV" cover "$rep" lsm "$form" cpu_us "${r%,*}"
		csv_add "$CSV" cover "$rep" btree "$form" cpu_us "${r#*,}"
		lsm_log "rep $rep, $form: lsm ${r%,*} µs, btree ${r#*,} µs per query"
	done
done

bench_median_csv "$CSV" "$OUT/cover_median.csv"
{
	echo
	echo "Covering index-only ranges of about 1,000 rows, (k) INCLUDE (a, b), $ROWS rows, after compact():"
	echo "backend CPU per query, medians of $REPS sessions of $ROUNDS paired rounds x $QUERIES queries"
	printf '  %-26s %10s %10s %9s %8s %s\n' form "btree µs" "lsm µs" lsm/btree target result
	for form in between strict; do
		b=$(med "$OUT/cover_median.csv" cover btree "$form" cpu_us)
		l=$(med "$OUT/cover_median.csv" cover lsm "$form" cpu_us)
		r=$(ratio "$l" "$b")
		label=$([ "$form" = between ] && echo "k BETWEEN lo AND hi" || echo "k > lo AND k < hi")
		printf '  %-26s %10s %10s %9s %8s %s\n' "$label" "$b" "$l" "$r" 1.1 "$(verdict "$r" "<=" 1.1)"
	done
	echo
} | tee "$OUT/cover.txt"
bench_machine "$OUT/cover.txt"
