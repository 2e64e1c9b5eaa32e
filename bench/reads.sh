#!/usr/bin/env bash
# bench/reads.sh — reads, lsm vs btree, in the index states users meet.
#
#   bash bench/reads.sh [--rows N] [--reps N] [--seconds S] [--out DIR] [--quick]
#                       [--cover-keys]
#
# One table of N random int8 keys (default 1,000,000) under an lsm index, its
# copy under a btree, and the same keys in a second pair of tables (k, a int4,
# b int8) under covering indexes (k) INCLUDE (a, b), lsm and btree
# (--cover-keys: (k, a, b), all key columns), on a throwaway cluster (shared_buffers 128MB, jit off, warm
# cache, no background workers, so the index stays in each state while it is
# measured).  The same queries run against both in each state:
#
#   compacted      one sorted run, empty memtable (after lsm_am.compact())
#   mem 100k       plus 100,000 new rows in the memtable (btree: same rows)
#   mem 1M         plus 1,000,000 new rows in the memtable
#   L0 trigger     level 0 at its compaction trigger (4 flushed runs) and a
#                  full memtable of 100,000 rows on top
#
# Queries: ORDER BY k LIMIT 10, ORDER BY k DESC LIMIT 10, max(k); count(*)
# over ranges of 10, 1,000 and 100,000 rows as index-only scans and as plain
# index scans (reading the heap); point lookups that hit and that miss; the
# first point lookup of a new connection (pgbench -C); and the Parity issue's
# two: cover1000, SELECT k, a, b over a range of 1,000 rows of the covering
# index as an index-only scan (target <= 1.1x btree after compact()), and
# any100, SELECT * WHERE k = ANY(100 existing keys, drawn anew per state) as
# an index scan (any100_ios: SELECT k, index-only; target <= 1.2x btree for
# both, in every state, as point lookups have theirs).  The plans of these
# three are asserted in every state (custom and generic plan, lsm and btree:
# Index Only Scan / Index Scan, never bitmap); the run stops if one differs.
# Their plans (reads_plan_*.txt) and the rows and heap fetches of the run
# plan are kept.  Each figure is the
# median over --reps runs of pgbench's average statement latency over
# --seconds seconds, and of the backend's CPU time per statement (psql, the
# same queries with parameters drawn alike; /proc/self/schedstat).
# Prints one table with the ratio lsm/btree and the
# Reads and Parity issues' targets (hit/missed); writes reads_states.csv (raw),
# reads_states_median.csv and reads_states.txt into the results directory.
#
# Run as root; assumes tests/setup.sh has installed lsm_am (bench/run.sh
# does that; --skip-setup there leaves it as it is).
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"

ROWS=1000000
REPS=3
SECS=2
OUT=
COVER=include
while [ $# -gt 0 ]; do
	case $1 in
	--rows) ROWS=${2:?}; shift 2 ;;
	--reps) REPS=${2:?}; shift 2 ;;
	--seconds) SECS=${2:?}; shift 2 ;;
	--out) OUT=${2:?}; shift 2 ;;
	--quick) ROWS=200000; REPS=1; SECS=1; shift ;;
	--cover-keys) COVER=keys; shift ;;
	-h | --help) sed -n '2,/^set /{/^#/p}' "$0"; exit 0 ;;
	*) lsm_die "reads.sh: unknown argument $1 (try --help)" ;;
	esac
done
require_root
OUT=$(bench_results_dir "$OUT")
RAW=$OUT/reads_states.csv
MED=$OUT/reads_states_median.csv
rm -f "$RAW"
MEM_BIG=$((ROWS / 10 * 10))		# "mem 1M": as many new rows as the table had
MEM_SMALL=$((ROWS / 10))		# "mem 100k"

# A memtable large enough for MEM_BIG entries (about 40 bytes each).
# jit = off: the scripts look a probe key up before each measured statement;
# a probe table read by a sequential scan under enable_seqscan = off costs
# over jit_above_cost, and its JIT compilation (30-40 ms a statement) slowed
# the measured statement after it 5-10x, for either index (hence the primary
# keys on the probe tables too).
bench_cluster reads "jit = off" "lsm_am.memory = 512" "lsm_am.max_workers = 0" "autovacuum = off" \
	"lsm_am.l0_compaction_trigger = 64" "lsm_am.l0_slowdown_trigger = 100" "lsm_am.l0_stop_trigger = 100"
WORK=$BENCH_SCRATCH/work
mkdir -p "$WORK" && chown "$PG_USER:" "$WORK"

pgb() { as_pg PGHOST="$PGHOST" PGPORT="$PGPORT" PGOPTIONS="${PGB_OPTIONS:-}" pgbench -n "$@" postgres; }

# add_rows N: N new random keys into both tables (the same rows)
add_rows() {
	q "INSERT INTO rd_l (k, pad) SELECT (random() * 1e12)::int8, repeat('x', 40) FROM generate_series(1, $1);
	   INSERT INTO rd_b SELECT * FROM rd_l WHERE id > (SELECT coalesce(max(id), 0) FROM rd_b);
	   INSERT INTO rd_cl SELECT id, k, (k % 1000000)::int4, id FROM rd_l WHERE id > (SELECT coalesce(max(id), 0) FROM rd_cl);
	   INSERT INTO rd_cb SELECT * FROM rd_cl WHERE id > (SELECT coalesce(max(id), 0) FROM rd_cb);" >/dev/null
}

lsm_log "loading $ROWS rows"
# Two tables of one shape, the id's default included: a new connection's
# first statement on a table with a column default also reads pg_attrdef,
# which only rd_l had to before.
q "CREATE EXTENSION lsm_am;
   CREATE TABLE rd_l (id bigserial, k int8, pad text);
   CREATE TABLE rd_b (id bigserial, k int8, pad text);
   CREATE TABLE rd_cl (id int8, k int8, a int4, b int8);
   CREATE TABLE rd_cb (id int8, k int8, a int4, b int8);
   SELECT setseed(0.42);" >/dev/null
add_rows "$ROWS"
q "CREATE INDEX rd_l_k ON rd_l USING lsm (k) WITH (memtable_size = 1048576);
   CREATE INDEX rd_b_k ON rd_b (k);" >/dev/null
# The covering indexes: (k) INCLUDE (a, b) on both sides; --cover-keys makes
# them (k, a, b), all key columns (for an lsm without INCLUDE, or to compare).
if [ "$COVER" = include ]; then
	q "CREATE INDEX rd_cl_cov ON rd_cl USING lsm (k) INCLUDE (a, b) WITH (memtable_size = 1048576)" >/dev/null ||
		lsm_die "lsm refused (k) INCLUDE (a, b): a build without INCLUDE columns? (--cover-keys measures (k, a, b) instead)"
	q "CREATE INDEX rd_cb_cov ON rd_cb (k) INCLUDE (a, b)" >/dev/null
else
	q "CREATE INDEX rd_cl_cov ON rd_cl USING lsm (k, a, b) WITH (memtable_size = 1048576);
	   CREATE INDEX rd_cb_cov ON rd_cb (k, a, b);" >/dev/null
fi

# probe tables: keys that exist, range bounds N rows apart (computed on btree)
make_probes() {
	q "DROP TABLE IF EXISTS probe, probe_r10, probe_r1000, probe_r100000, probe_any" >/dev/null
	# The visibility map for index-only scans, without touching the indexes:
	# a plain VACUUM flushes an lsm index's memtable into a level-0 run (on
	# 17, with no dead rows: 1,000 memtable entries became a run), which
	# turned "mem 100k" and "mem 1M" into flushed runs and put a fifth
	# level-0 run under "L0 trigger"
	q "VACUUM (INDEX_CLEANUP off, ANALYZE) rd_l, rd_b, rd_cl, rd_cb" >/dev/null
	q "CREATE TABLE probe AS SELECT row_number() OVER () AS i, k
	     FROM (SELECT k FROM rd_b TABLESAMPLE SYSTEM (1) REPEATABLE (7) LIMIT 2000) s;
	   ALTER TABLE probe ADD PRIMARY KEY (i);" >/dev/null
	local n p
	for n in 10 1000 100000; do
		case $n in 10) p=200 ;; 1000) p=100 ;; 100000) p=10 ;; esac
		q "SET enable_seqscan = off;
		   CREATE TABLE probe_r$n AS SELECT row_number() OVER () AS i, lo, hi FROM (
		     SELECT p.k AS lo, (SELECT k FROM rd_b WHERE k >= p.k ORDER BY k OFFSET $((n - 1)) LIMIT 1) AS hi
		       FROM probe p WHERE p.i <= $((p * 2))) s WHERE hi IS NOT NULL LIMIT $p;
		   ALTER TABLE probe_r$n ADD PRIMARY KEY (i);" >/dev/null
	done
	# = ANY: 100 arrays of 100 existing keys each, drawn from the whole table
	# (the rows added for this state included), in no particular order
	q "CREATE TABLE probe_any AS SELECT i, array_agg(k ORDER BY hashint8(k # 77)) AS ks FROM (
	     SELECT k, 1 + (row_number() OVER (ORDER BY hashint8(k)) - 1) / 100 AS i
	       FROM (SELECT k FROM rd_b TABLESAMPLE SYSTEM (5) REPEATABLE (11) LIMIT 10000) s) s
	     GROUP BY i HAVING count(*) = 100;
	   ALTER TABLE probe_any ADD PRIMARY KEY (i);" >/dev/null
}

# the pgbench scripts, for table T
write_scripts() {
	local t=$1 n
	echo "SELECT k FROM $t ORDER BY k LIMIT 10;" >"$WORK/orderby_$t.sql"
	echo "SELECT k FROM $t ORDER BY k DESC LIMIT 10;" >"$WORK/orderby_desc_$t.sql"
	echo "SELECT max(k) FROM $t;" >"$WORK/max_$t.sql"
	cat >"$WORK/point_hit_$t.sql" <<EOF
\\set i random(1, $(q "SELECT count(*) FROM probe"))
SELECT k FROM probe WHERE i = :i \\gset
SELECT count(*) FROM $t WHERE k = :k;
EOF
	cat >"$WORK/point_miss_$t.sql" <<EOF
\\set k -1 * random(1, 1000000000000)
SELECT count(*) FROM $t WHERE k = :k;
EOF
	cp "$WORK/point_hit_$t.sql" "$WORK/first_lookup_$t.sql"
	for n in 10 1000 100000; do
		cat >"$WORK/range${n}_ios_$t.sql" <<EOF
\\set i random(1, $(q "SELECT count(*) FROM probe_r$n"))
SELECT lo, hi FROM probe_r$n WHERE i = :i \\gset
SELECT count(*) FROM $t WHERE k BETWEEN :lo AND :hi;
EOF
		cat >"$WORK/range${n}_plain_$t.sql" <<EOF
\\set i random(1, $(q "SELECT count(*) FROM probe_r$n"))
SELECT lo, hi FROM probe_r$n WHERE i = :i \\gset
SELECT count(pad) FROM $t WHERE k BETWEEN :lo AND :hi;
EOF
	done
	# the covering index (rd_cl / rd_cb): an index-only scan returning its rows
	cat >"$WORK/cover1000_$t.sql" <<EOF
\\set i random(1, $(q "SELECT count(*) FROM probe_r1000"))
SELECT lo, hi FROM probe_r1000 WHERE i = :i \\gset
SELECT k, a, b FROM ${t/rd_/rd_c} WHERE k BETWEEN :lo AND :hi;
EOF
	cat >"$WORK/any100_$t.sql" <<EOF
\\set i random(1, $(q "SELECT count(*) FROM probe_any"))
SELECT ks FROM probe_any WHERE i = :i \\gset
SELECT * FROM $t WHERE k = ANY(:ks);
EOF
	cat >"$WORK/any100_ios_$t.sql" <<EOF
\\set i random(1, $(q "SELECT count(*) FROM probe_any"))
SELECT ks FROM probe_any WHERE i = :i \\gset
SELECT k FROM $t WHERE k = ANY(:ks);
EOF
	chmod 644 "$WORK"/*.sql
}

QUERIES=(orderby orderby_desc max point_hit point_miss first_lookup
	range10_ios range1000_ios range100000_ios range10_plain range1000_plain range100000_plain
	cover1000 any100 any100_ios)

# latency QUERY TABLE: average latency (ms) of the script's last statement
latency() {
	local qn=$1 t=$2 opts="-c enable_seqscan=off -c enable_bitmapscan=off" extra=() lat
	case $qn in *_plain) opts="$opts -c enable_indexonlyscan=off" ;; esac
	case $qn in first_lookup) extra=(-C) ;; esac
	lat=$(cd "$WORK" && PGB_OPTIONS="$opts" pgb -c 1 -T "$SECS" -M prepared -r "${extra[@]}" \
		-f "$WORK/${qn}_$t.sql" 2>&1 |
		awk '/statement latencies/ { s = 1; next } s && $1 ~ /^[0-9.]+$/ { last = $1 } END { print last }')
	[ -n "$lat" ] || lsm_die "pgbench $qn on $t failed"
	echo "$lat"
}

# cpu_us QUERY TABLE: backend CPU per statement (µs): /proc/self/schedstat of
# a psql session's backend around N statements of the query, with parameters
# drawn as the pgbench script draws them (wall clock on a shared machine
# moves by +-50%; CPU time much less).  "-" for first_lookup (a connection).
cpu_us() {
	local qn=$1 t=$2 n gen opts="SET enable_seqscan = off; SET enable_bitmapscan = off;"
	local st="SELECT split_part(pg_read_file('/proc/self/schedstat'), ' ', 1)::bigint"
	case $qn in
	first_lookup) echo -; return ;;
	range100000*) n=20 ;;
	range1000_* | cover1000 | any100*) n=200 ;;
	*) n=1000 ;;
	esac
	case $qn in *_plain) opts="$opts SET enable_indexonlyscan = off;" ;; esac
	case $qn in
	orderby) gen="SELECT 'SELECT k FROM $t ORDER BY k LIMIT 10' FROM generate_series(1, $n)" ;;
	orderby_desc) gen="SELECT 'SELECT k FROM $t ORDER BY k DESC LIMIT 10' FROM generate_series(1, $n)" ;;
	max) gen="SELECT 'SELECT max(k) FROM $t' FROM generate_series(1, $n)" ;;
	point_hit) gen="SELECT format('SELECT count(*) FROM $t WHERE k = %s', k) FROM probe, generate_series(1, $n) g WHERE i = 1 + g % (SELECT count(*) FROM probe)" ;;
	point_miss) gen="SELECT format('SELECT count(*) FROM $t WHERE k = %s', -1 - (random() * 1e12)::int8) FROM generate_series(1, $n)" ;;
	range*_ios) gen="SELECT format('SELECT count(*) FROM $t WHERE k BETWEEN %s AND %s', lo, hi) FROM probe_r${qn//[!0-9]/}, generate_series(1, $n) g WHERE i = 1 + g % (SELECT count(*) FROM probe_r${qn//[!0-9]/})" ;;
	range*_plain) gen="SELECT format('SELECT count(pad) FROM $t WHERE k BETWEEN %s AND %s', lo, hi) FROM probe_r${qn//[!0-9]/}, generate_series(1, $n) g WHERE i = 1 + g % (SELECT count(*) FROM probe_r${qn//[!0-9]/})" ;;
	cover1000) gen="SELECT format('SELECT k, a, b FROM ${t/rd_/rd_c} WHERE k BETWEEN %s AND %s', lo, hi) FROM probe_r1000, generate_series(1, $n) g WHERE i = 1 + g % (SELECT count(*) FROM probe_r1000)" ;;
	any100) gen="SELECT format('SELECT * FROM $t WHERE k = ANY(%L::int8[])', ks) FROM probe_any, generate_series(1, $n) g WHERE i = 1 + g % (SELECT count(*) FROM probe_any)" ;;
	any100_ios) gen="SELECT format('SELECT k FROM $t WHERE k = ANY(%L::int8[])', ks) FROM probe_any, generate_series(1, $n) g WHERE i = 1 + g % (SELECT count(*) FROM probe_any)" ;;
	esac
	{
		echo "$opts"
		echo "$st AS c0 \\gset"
		q "$gen" | sed 's|$| \\g /dev/null|'
		echo "SELECT round(($st - :c0) / 1000.0 / $n, 1);"
	} >"$WORK/cpu_${qn}_$t.sql"
	chmod 644 "$WORK/cpu_${qn}_$t.sql"
	as_pg psql -X -q -At -h "$PGHOST" -p "$PGPORT" -d postgres -f "$WORK/cpu_${qn}_$t.sql" | tail -n1
}

# check_plan STATE QUERY TABLE: the plan of the query's last statement must
# be the scan the query is there to measure (cover1000 and any100_ios: an
# Index Only Scan; any100: an Index Scan, not a bitmap scan), for lsm and
# btree alike, both as the custom plan of the first parameters and as the
# generic plan pgbench -M prepared may switch to; else the run stops here.
# The custom plan, run (EXPLAIN ANALYZE), goes to reads_plan_*.txt; its
# rows and heap fetches to the CSV.
check_plan() {
	local state=$1 qn=$2 t=$3 node idx tab sql psql args plan gplan am
	am=$([ "$t" = rd_l ] && echo lsm || echo btree)
	case $qn in
	cover1000)
		node="Index Only Scan" tab=${t/rd_/rd_c} idx=${t/rd_/rd_c}_cov
		sql="SELECT k, a, b FROM $tab WHERE k BETWEEN \$1 AND \$2" args="(int8, int8)"
		psql="SELECT lo || ', ' || hi FROM probe_r1000 WHERE i = 1" ;;
	any100 | any100_ios)
		node="Index Scan" tab=$t idx=${t}_k
		[ "$qn" = any100 ] && sql="SELECT * FROM $tab WHERE k = ANY(\$1)" ||
			{ node="Index Only Scan"; sql="SELECT k FROM $tab WHERE k = ANY(\$1)"; }
		args="(int8[])" psql="SELECT quote_literal(ks) FROM probe_any WHERE i = 1" ;;
	esac
	local params
	params=$(q "$psql")
	plan=$(q "SET enable_seqscan = off; SET enable_bitmapscan = off;
		PREPARE p$args AS $sql;
		EXPLAIN (ANALYZE, COSTS off, TIMING off, SUMMARY off) EXECUTE p($params)")
	gplan=$(q "SET enable_seqscan = off; SET enable_bitmapscan = off; SET plan_cache_mode = force_generic_plan;
		PREPARE p$args AS $sql;
		EXPLAIN (COSTS off) EXECUTE p($params)")
	printf '%s\n\n-- generic plan:\n%s\n' "$plan" "$gplan" >"$OUT/reads_plan_${state// /_}_${qn}_$am.txt"
	local want="$node using $idx on $tab"
	if [ "$(head -n1 <<<"$plan" | sed 's/  *(actual.*//')" != "$want" ] || [ "$(head -n1 <<<"$gplan")" != "$want" ]; then
		printf '%s\n-- generic plan:\n%s\n' "$plan" "$gplan" >&2
		lsm_die "reads.sh: $qn on $am ($state) is not planned as \"$want\" (plans above)"
	fi
	csv_add "$RAW" reads 1 "$am" "$state" "${qn}_rows" "$(head -n1 <<<"$plan" | grep -o 'rows=[0-9]*' | cut -d= -f2)"
	[ "$node" != "Index Only Scan" ] ||
		csv_add "$RAW" reads 1 "$am" "$state" "${qn}_heap_fetches" "$(grep -m1 -o 'Heap Fetches: [0-9]*' <<<"$plan" | awk '{ print $3 }')"
}

measure() { # measure STATE
	local state=$1 rep qn t
	make_probes
	lsm_log "measuring: $state ($(q "SELECT memtable_entries || ' memtable entries, ' || runs || ' runs' FROM lsm_am.index_stats('rd_l_k')"); covering index: $(q "SELECT memtable_entries || ' memtable entries, ' || runs || ' runs' FROM lsm_am.index_stats('rd_cl_cov')"))"
	csv_add "$RAW" reads 1 lsm "$state" memtable_entries "$(q "SELECT memtable_entries FROM lsm_am.index_stats('rd_l_k')")"
	write_scripts rd_l
	write_scripts rd_b
	for qn in cover1000 any100 any100_ios; do
		for t in rd_b rd_l; do check_plan "$state" "$qn" "$t"; done
	done
	csv_add "$RAW" reads 1 lsm "$state" runs_per_level "$(q "SELECT array_to_string(runs_per_level, '/') FROM lsm_am.maintenance_stats('rd_l_k')")"
	csv_add "$RAW" reads 1 lsm "$state" cover_runs_per_level "$(q "SELECT array_to_string(runs_per_level, '/') FROM lsm_am.maintenance_stats('rd_cl_cov')")"
	for rep in $(seq 1 "$REPS"); do
		for qn in "${QUERIES[@]}"; do
			for t in rd_b rd_l; do
				csv_add "$RAW" reads "$rep" "$([ $t = rd_l ] && echo lsm || echo btree)" "$state" "$qn" "$(latency "$qn" "$t")"
				csv_add "$RAW" reads "$rep" "$([ $t = rd_l ] && echo lsm || echo btree)" "$state" "${qn}_cpu" "$(cpu_us "$qn" "$t")"
			done
		done
	done
}

q "SELECT lsm_am.compact('rd_l_k'), lsm_am.compact('rd_cl_cov')" >/dev/null
measure compacted
add_rows "$MEM_SMALL"
measure "mem 100k"
add_rows $((MEM_BIG - MEM_SMALL))
measure "mem 1M"
# level 0 at the trigger: four flushed runs, then a memtable of MEM_SMALL rows
q "SELECT lsm_am.flush('rd_l_k'), lsm_am.flush('rd_cl_cov')" >/dev/null
for i in 1 2 3; do
	add_rows "$MEM_SMALL"
	q "SELECT lsm_am.flush('rd_l_k'), lsm_am.flush('rd_cl_cov')" >/dev/null
done
add_rows "$MEM_SMALL"
measure "L0 trigger"

bench_median_csv "$RAW" "$MED"

# ---------------------------------------------------------------- the table
target_of() { # target_of STATE QUERY: the issue's bound on lsm/btree, or "-"
	case $2 in
	orderby | orderby_desc | max) echo 2.0 ;;
	range*) case $1 in compacted) echo 1.0 ;; "L0 trigger") echo 1.5 ;; *) echo - ;; esac ;;
	point_hit | point_miss) echo 1.1 ;;
	first_lookup) echo 2.0 ;;
	cover1000) case $1 in compacted) echo 1.1 ;; *) echo - ;; esac ;;
	any100 | any100_ios) echo 1.2 ;;
	esac
}
{
	echo
	echo "(c) reads: $ROWS random int8 keys, warm cache, medians of $REPS x ${SECS}s (pgbench, one client)"
	echo "  (cover1000: SELECT k, a, b over 1,000 rows of a $([ "$COVER" = include ] && echo "(k) INCLUDE (a, b)" || echo "(k, a, b) key-only (--cover-keys)") index, index-only;"
	echo "   any100: SELECT * WHERE k = ANY(100 existing keys), index scan; any100_ios: SELECT k, index-only)"
	echo "  (wall: pgbench latency; CPU: the backend's CPU per statement, /proc/self/schedstat)"
	printf '  %-11s %-17s %10s %10s %8s %8s %-7s %10s %10s %8s\n' state query "btree ms" "lsm ms" lsm/bt target result "btree µs" "lsm µs" "CPU l/b"
	for state in compacted "mem 100k" "mem 1M" "L0 trigger"; do
		for qn in "${QUERIES[@]}"; do
			b=$(med "$MED" reads btree "$state" "$qn")
			l=$(med "$MED" reads lsm "$state" "$qn")
			r=$(ratio "$l" "$b")
			tg=$(target_of "$state" "$qn")
			v=-
			[ "$tg" = - ] || v=$(verdict "$r" '<=' "$tg")
			bc=$(med "$MED" reads btree "$state" "${qn}_cpu")
			lc=$(med "$MED" reads lsm "$state" "${qn}_cpu")
			printf '  %-11s %-17s %10s %10s %8s %8s %-7s %10s %10s %8s\n' "$state" "$qn" "$(fmt_num "$b" 3)" "$(fmt_num "$l" 3)" "$r" "$tg" "$v" \
				"$(fmt_num "$bc" 1)" "$(fmt_num "$lc" 1)" "$(ratio "$lc" "$bc")"
		done
		printf '  %-11s memtable entries: %s; runs per level (L0/L1/...): %s (covering index: %s)\n' "" \
			"$(fmt_int "$(med "$MED" reads lsm "$state" memtable_entries)")" "$(med "$MED" reads lsm "$state" runs_per_level)" \
			"$(med "$MED" reads lsm "$state" cover_runs_per_level)"
		printf '  %-11s rows returned btree/lsm: cover1000 %s/%s (heap fetches %s/%s), any100 %s/%s, any100_ios %s/%s (heap fetches %s/%s)\n' "" \
			"$(med "$MED" reads btree "$state" cover1000_rows)" "$(med "$MED" reads lsm "$state" cover1000_rows)" \
			"$(med "$MED" reads btree "$state" cover1000_heap_fetches)" "$(med "$MED" reads lsm "$state" cover1000_heap_fetches)" \
			"$(med "$MED" reads btree "$state" any100_rows)" "$(med "$MED" reads lsm "$state" any100_rows)" \
			"$(med "$MED" reads btree "$state" any100_ios_rows)" "$(med "$MED" reads lsm "$state" any100_ios_rows)" \
			"$(med "$MED" reads btree "$state" any100_ios_heap_fetches)" "$(med "$MED" reads lsm "$state" any100_ios_heap_fetches)"
	done
	echo
	echo "  $(bench_machine)"
} | tee "$OUT/reads_states.txt"
