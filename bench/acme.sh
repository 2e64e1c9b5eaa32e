#!/usr/bin/env bash
# bench/acme.sh — (a) the Acme Shop run of the seed's "Try it", with
# ev_order_id_idx as a btree and as lsm, side by side, each also with
# wal_compression = lz4 and zstd (the seed advises compressing full-page
# images before switching engines, so lsm is compared with the best btree
# setup too).
#
#   bash bench/acme.sh [--runs N] [--out DIR]      (as root; run.sh calls it)
#   BENCH_ACME_KINDS="btree btree_zstd lsm"        the kinds to run (AM[_METHOD];
#                                                  default all six)
#
# Per run and index kind, on a throwaway cluster of the PostgreSQL that
# PG_CONFIG names (bench/run.sh --pg 15|18):
#   load     the first 1,450,000 events of order_events in id (= time) order
#   CHECKPOINT
#   batch 1  the next 50,000 events, in time order
#   CHECKPOINT
#   batch 2  50,000 'reviewed' events for random orders (setseed 0.42)
# and for every batch: EXPLAIN (ANALYZE, WAL) records, full-page images and
# bytes; the WAL of the index relation alone (pg_waldump --relation); the WAL
# the lsm_am workers write for the index after the batch, until the cluster is
# idle ("n/a" with lsm_am.max_workers = 0: backends then flush and merge
# themselves, inside the batch's own figures; a worker's flush or merge that
# runs while the batch runs is in the batch's index WAL); the index pages whose LSN is newer than a mark
# taken before the batch (pageinspect).  Then the buffers and time of the
# point lookup of order 181236 (a new connection's first lookup, and the
# median of 9 more in that connection), a check that both indexes return the same rows, the index
# size after the run, after lsm_am.flush(), after a full compaction
# (lsm_am.compact() where it exists, else "n/a until the Merge issue") and of a
# fresh CREATE INDEX.  Default 3 runs; the table shows medians (page and WAL
# counts are the same in every run; times vary).
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"

RUNS=3
OUT=
while [ $# -gt 0 ]; do
	case $1 in
	--runs) RUNS=${2:?--runs needs a number}; shift 2 ;;
	--out) OUT=${2:?--out needs a directory}; shift 2 ;;
	-h | --help) sed -n '2,/^set /{/^#/p}' "$0"; exit 0 ;;
	*) lsm_die "acme.sh: unknown argument $1 (try --help)" ;;
	esac
done
[[ $RUNS =~ ^[1-9][0-9]*$ ]] || lsm_die "--runs must be a positive integer"
read -r -a KINDS <<<"${BENCH_ACME_KINDS:-btree btree_lz4 btree_zstd lsm lsm_lz4 lsm_zstd}"
for k in "${KINDS[@]}"; do
	case $k in btree | lsm | btree_lz4 | btree_zstd | btree_pglz | lsm_lz4 | lsm_zstd | lsm_pglz) ;;
	*) lsm_die "BENCH_ACME_KINDS: unknown kind $k (AM or AM_METHOD: btree_zstd, lsm_lz4, ...)" ;; esac
done
[[ " ${KINDS[*]} " == *" btree "* && " ${KINDS[*]} " == *" lsm "* ]] ||
	lsm_die "BENCH_ACME_KINDS must include btree and lsm (the table divides by them)"
require_root
command -v "$PG_BINDIR/pg_waldump" >/dev/null || lsm_die "pg_waldump not found in $PG_BINDIR (run bench/run.sh without --skip-setup)"

OUT=$(bench_results_dir "$OUT")
RAW=$OUT/acme_raw.csv
MED=$OUT/acme.csv
csv_init "$RAW"

# No checkpoint may start on its own between the marks, and the WAL of a batch
# must still be in pg_wal when pg_waldump reads it.
bench_cluster acme "max_wal_size = '8GB'" "checkpoint_timeout = '1h'" "autovacuum = off"

q "CREATE EXTENSION lsm_am; CREATE EXTENSION pageinspect; CREATE EXTENSION pgstattuple" >/dev/null
lsm_log "generating the Acme Shop sample (bench/acme_data.sql)"
bench_load_acme
# lsm_am.compact() (a full compaction) exists from the Merge work on; before
# it, the compaction row says n/a.
HAVE_COMPACT=$(q "SELECT count(*) FROM pg_proc WHERE oid::regprocedure::text = 'lsm_am.compact(regclass)'")

# One batch: EXPLAIN (ANALYZE, BUFFERS, WAL) of SQL after a mark; records the
# statement's WAL, the index relation's WAL, the background WAL and the pages
# changed.  batch_run RUN AM CASE SQL ROWS
batch_run() {
	local run=$1 am=$2 case=$3 sql=$4 rows=$5 rel start end plan r f b ms ir if ib bg changed
	rel=$(relspec ev_order_id_idx)
	q "UPDATE mark SET lsn = pg_current_wal_insert_lsn()" >/dev/null
	start=$(q "SELECT lsn FROM mark")
	plan=$(q "EXPLAIN (ANALYZE, BUFFERS, WAL, COSTS OFF, TIMING OFF) $sql")
	end=$(wal_lsn)
	printf '%s\n' "$plan" >"$OUT/acme_plan_${am}_${case}_run$run.txt"
	read -r r f b ms < <(explain_wal "$plan")
	read -r ir if ib < <(waldump_rel "$start" "$end" "$rel")
	bg=$(bg_wal_until_idle "$end" "$rel")
	changed=$(q "SELECT pages_changed('ev_order_id_idx')")
	csv_add "$RAW" acme "$run" "$am" "$case" stmt_records "$r"
	csv_add "$RAW" acme "$run" "$am" "$case" stmt_fpi "$f"
	csv_add "$RAW" acme "$run" "$am" "$case" stmt_bytes "$b"
	csv_add "$RAW" acme "$run" "$am" "$case" exec_ms "$ms"
	csv_add "$RAW" acme "$run" "$am" "$case" index_records "$ir"
	csv_add "$RAW" acme "$run" "$am" "$case" index_fpi "$if"
	csv_add "$RAW" acme "$run" "$am" "$case" index_bytes "$ib"
	csv_add "$RAW" acme "$run" "$am" "$case" index_bytes_per_row "$(awk -v b="$ib" -v n="$rows" 'BEGIN { printf "%.2f", b / n }')"
	if [ "$bg" = "n/a" ]; then
		csv_add "$RAW" acme "$run" "$am" "$case" bg_bytes "n/a"
		csv_add "$RAW" acme "$run" "$am" "$case" index_plus_bg_bytes "$ib"
	else
		local br bf bb bs
		read -r br bf bb bs <<<"$bg"
		csv_add "$RAW" acme "$run" "$am" "$case" bg_records "$br"
		csv_add "$RAW" acme "$run" "$am" "$case" bg_fpi "$bf"
		csv_add "$RAW" acme "$run" "$am" "$case" bg_bytes "$bb"
		csv_add "$RAW" acme "$run" "$am" "$case" bg_seconds "$bs"
		csv_add "$RAW" acme "$run" "$am" "$case" index_plus_bg_bytes "$((ib + bb))"
	fi
	csv_add "$RAW" acme "$run" "$am" "$case" pages_changed "$changed"
	csv_add "$RAW" acme "$run" "$am" "$case" index_pages "$(q "SELECT pg_relation_size('ev_order_id_idx') / 8192")"
	printf '    %-7s %-6s stmt WAL %9s rec %6s fpi %11s B | index WAL %9s rec %6s fpi %11s B | pages changed %6s | %8s ms\n' \
		"$case" "$am" "$r" "$f" "$b" "$ir" "$if" "$ib" "$changed" "$ms" >&2
}

# Set wal_compression for every process of the cluster (the lsm_am workers'
# full-page images too) and wait until a new session sees it.
set_wal_compression() {
	local m=$1 i
	q "ALTER SYSTEM SET wal_compression = '$m'" >/dev/null
	q "SELECT pg_reload_conf()" >/dev/null
	for i in $(seq 1 50); do
		[ "$(q "SHOW wal_compression")" = "$m" ] && return 0
		sleep 0.1
	done
	lsm_die "wal_compression did not become $m"
}

one_run() { # one_run RUN KIND (KIND: AM or AM_METHOD, e.g. btree_zstd)
	local run=$1 am=$2 plan AM=${2%%_*} walc=off
	[[ $am == *_* ]] && walc=${am#*_}
	set_wal_compression "$walc"
	q "DROP TABLE IF EXISTS ev, late_events, mark CASCADE;
	   DROP FUNCTION IF EXISTS pages_changed(regclass);" >/dev/null
	# The seed's "Try it", with USING $am.
	q "CREATE TABLE ev (id bigint PRIMARY KEY, order_id bigint NOT NULL,
	                    kind text NOT NULL, happened_at timestamptz NOT NULL);
	   CREATE INDEX ev_order_id_idx ON ev USING $AM (order_id);
	   -- pages of a relation whose last change is newer than the mark
	   CREATE TABLE mark (lsn pg_lsn);
	   INSERT INTO mark VALUES (pg_current_wal_insert_lsn());
	   CREATE FUNCTION pages_changed(rel regclass) RETURNS bigint LANGUAGE sql AS \$\$
	     SELECT count(*) FROM generate_series(0, pg_relation_size(rel) / 8192 - 1) AS b
	     WHERE (page_header(get_raw_page(rel::text, b::int))).lsn > (SELECT lsn FROM mark) \$\$;" >/dev/null
	batch_run "$run" "$am" load \
		"INSERT INTO ev SELECT * FROM order_events WHERE id <= 1450000 ORDER BY id" 1450000
	q "VACUUM ANALYZE ev" >/dev/null
	# 1. the next 50,000 events, in time order
	q "CHECKPOINT" >/dev/null
	batch_run "$run" "$am" ordered \
		"INSERT INTO ev SELECT * FROM order_events WHERE id > 1450000 ORDER BY id" 50000
	# 2. 50,000 reviews for orders picked at random
	pg_psql -d postgres -qAt >/dev/null <<'SQL'
SELECT setseed(0.42);
CREATE TABLE late_events AS
SELECT 1500000 + g AS id, (1 + floor(random() * 500000))::bigint AS order_id,
       'reviewed'::text AS kind,
       timestamptz '2026-10-03 18:00:00+00' + g * interval '1 second' AS happened_at
FROM generate_series(1, 50000) AS g;
VACUUM late_events;
SQL
	q "CHECKPOINT" >/dev/null
	batch_run "$run" "$am" random \
		"INSERT INTO ev SELECT * FROM late_events ORDER BY id" 50000

	# 3. what a read costs: the point lookup of one order, timed two ways.
	#   - As a new connection's first statement (each q is a new connection;
	#     a first one, not recorded, reads the pages from disk into shared
	#     buffers, so that both ways find them there).  A new process touches
	#     every page of shared memory it reads for the first time, and lsm's
	#     lookup reads more of them than btree's (its memtable, a filter page
	#     per run, the header of each run it descends): on a VM each first
	#     touch is a page fault of tens of microseconds (README, "Tuning").
	#   - In a connection that has run it before (the median of 9 more runs
	#     in that connection): what an application on a connection pool meets.
	local lookup="SET enable_seqscan = off; SET enable_bitmapscan = off;
	              EXPLAIN (ANALYZE, BUFFERS, COSTS OFF, TIMING OFF) SELECT * FROM ev WHERE order_id = 181236"
	q "$lookup" >/dev/null
	plan=$(q "$lookup")
	printf '%s\n' "$plan" >"$OUT/acme_plan_${am}_lookup_run$run.txt"
	csv_add "$RAW" acme "$run" "$am" lookup buffers "$(explain_buffers "$plan")"
	csv_add "$RAW" acme "$run" "$am" lookup rows "$(grep -m1 -o 'actual rows=[0-9]*' <<<"$plan" | cut -d= -f2)"
	csv_add "$RAW" acme "$run" "$am" lookup exec_ms "$(explain_wal "$plan" | awk '{ print $4 }')"
	csv_add "$RAW" acme "$run" "$am" lookup node "$(head -n1 <<<"$plan" | sed 's/ *(actual.*//; s/,/;/g; s/^ *//')"
	local warm
	warm=$(for _ in $(seq 1 10); do echo "$lookup;"; done | pg_psql -d postgres -qAt |
		awk '/^Execution Time:/ { n++; if (n > 1) print $3 }' | sort -g |
		awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)] }')
	csv_add "$RAW" acme "$run" "$am" lookup warm_ms "${warm:-n/a}"

	# the same answers from both indexes: one order, and a range of orders
	csv_add "$RAW" acme "$run" "$am" answers check "$(q "SET enable_seqscan = off; SET enable_bitmapscan = off;
		SELECT (SELECT count(*) || ':' || sum(id) FROM ev WHERE order_id = 181236) || '/' ||
		       (SELECT count(*) || ':' || sum(id) FROM ev WHERE order_id BETWEEN 100000 AND 101000)")"

	# 4. sizes
	local pages
	pages=$(q "SELECT pg_relation_size('ev_order_id_idx') / 8192")
	csv_add "$RAW" acme "$run" "$am" size pages_after_run "$pages"
	if [ "$AM" = lsm ]; then
		q "SELECT runs || ' runs, ' || memtable_entries || ' entries in the memtable'
		     FROM lsm_am.index_stats('ev_order_id_idx')" | sed 's/^/    lsm after the run: /' >&2
		csv_add "$RAW" acme "$run" "$am" size runs_after_run "$(q "SELECT runs FROM lsm_am.index_stats('ev_order_id_idx')")"
		q "SELECT lsm_am.flush('ev_order_id_idx')" >/dev/null
		csv_add "$RAW" acme "$run" "$am" size pages_after_flush "$(q "SELECT pg_relation_size('ev_order_id_idx') / 8192")"
		csv_add "$RAW" acme "$run" "$am" size runs_after_flush "$(q "SELECT runs FROM lsm_am.index_stats('ev_order_id_idx')")"
		if [ "$HAVE_COMPACT" = 1 ]; then
			q "SELECT lsm_am.compact('ev_order_id_idx')" >/dev/null
			csv_add "$RAW" acme "$run" "$am" size pages_after_compaction "$(q "SELECT pg_relation_size('ev_order_id_idx') / 8192")"
			csv_add "$RAW" acme "$run" "$am" size live_pages_after_compaction "$(q "SELECT sum(pages) FROM lsm_am.index_info('ev_order_id_idx')")"
		else
			csv_add "$RAW" acme "$run" "$am" size pages_after_compaction "n/a"
		fi
	else
		csv_add "$RAW" acme "$run" "$am" size leaf_density "$(q "SELECT avg_leaf_density FROM pgstatindex('ev_order_id_idx')")"
	fi
	# a fresh build of the same kind over the same 1,550,000 rows
	q "SET max_parallel_maintenance_workers = 0; CREATE INDEX ev_fresh_idx ON ev USING $AM (order_id)" >/dev/null
	csv_add "$RAW" acme "$run" "$am" size pages_fresh_build "$(q "SELECT pg_relation_size('ev_fresh_idx') / 8192")"
	q "DROP INDEX ev_fresh_idx" >/dev/null
}

for run in $(seq 1 "$RUNS"); do
	for am in "${KINDS[@]}"; do
		lsm_log "acme run $run/$RUNS: $am"
		one_run "$run" "$am"
	done
done
q "DROP TABLE IF EXISTS ev, late_events, mark CASCADE" >/dev/null
set_wal_compression off
bench_median_csv "$RAW" "$MED"

# ---------------------------------------------------------------- the table
M() { med "$MED" acme "$1" "$2" "$3"; }
# The best btree setup: btree with zstd (else lz4) when it ran.
BEST=btree
for k in btree_lz4 btree_zstd; do [[ " ${KINDS[*]} " == *" $k "* ]] && BEST=$k; done
header() {
	local k
	printf '  %-40s' ""
	for k in "${KINDS[@]}"; do printf ' %12s' "${k/_/+}"; done
	printf ' %11s' "lsm/btree"
	[ "$BEST" = btree ] || printf ' %11s' "lsm/${BEST/_/+}"
	echo
}
row() { # row LABEL CASE METRIC [int|num|raw] [ratio]
	local label=$1 case=$2 metric=$3 kind=${4:-int} k v
	printf '  %-40s' "$label"
	for k in "${KINDS[@]}"; do
		v=$(M "$k" "$case" "$metric")
		case $kind in
		int) v=$(fmt_int "$v") ;;
		num) v=$(fmt_num "$v" 1) ;;
		ms) v=$(fmt_num "$v" 3) ;;
		esac
		printf ' %12s' "$v"
	done
	if [ "${5:-ratio}" = ratio ]; then
		printf ' %11s' "$(ratio "$(M lsm "$case" "$metric")" "$(M btree "$case" "$metric")")"
		[ "$BEST" = btree ] || printf ' %11s' "$(ratio "$(M lsm "$case" "$metric")" "$(M "$BEST" "$case" "$metric")")"
	fi
	echo
}
# row for one value per kind where only lsm kinds have one
lsmrow() { # lsmrow LABEL CASE METRIC
	local label=$1 case=$2 metric=$3 k v
	printf '  %-40s' "$label"
	for k in "${KINDS[@]}"; do
		if [[ $k == lsm* ]]; then v=$(M "$k" "$case" "$metric"); else v=-; fi
		case $v in n/a | -) ;; *) v=$(fmt_int "$v") ;; esac
		printf ' %12s' "$v"
	done
	echo
}
bgrow() {
	local case=$1 l
	l=$(M lsm "$case" bg_bytes)
	if [ "$l" = "n/a" ] || [ "$l" = "-" ]; then
		lsmrow "background WAL until idle*" "$case" bg_bytes
	else
		lsmrow "background WAL until idle (bytes)" "$case" bg_bytes
	fi
}
{
	echo
	echo "(a) Acme Shop: ev_order_id_idx as btree vs lsm   (median of $RUNS runs; $("$PG_CONFIG" --version))"
	echo "    +lz4, +zstd: with wal_compression = lz4, zstd (full-page images compressed)"
	header
	for c in load ordered random; do
		case $c in
		load) echo " load: the first 1,450,000 events (no checkpoint before)" ;;
		ordered) echo " batch 1: the next 50,000 events in time order, after CHECKPOINT" ;;
		random) echo " batch 2: 50,000 reviews for random orders, after CHECKPOINT" ;;
		esac
		row "statement WAL records" "$c" stmt_records
		row "statement full-page images" "$c" stmt_fpi
		row "statement WAL bytes" "$c" stmt_bytes
		row "index WAL records (pg_waldump)" "$c" index_records
		row "index full-page images" "$c" index_fpi
		row "index WAL bytes" "$c" index_bytes
		row "index WAL bytes / row" "$c" index_bytes_per_row num
		bgrow "$c"
		row "index pages changed (LSN > mark)" "$c" pages_changed
		row "index pages after the batch" "$c" index_pages
		row "execution time (ms)" "$c" exec_ms num
	done
	echo " reads and space after the run"
	row "point lookup order 181236: buffers" lookup buffers
	row "  rows" lookup rows int none
	row "  ms, a new connection's first lookup" lookup exec_ms ms
	row "  ms, again in the same connection" lookup warm_ms ms
	row "index pages after the run" size pages_after_run
	lsmrow "index pages after lsm_am.flush()" size pages_after_flush
	if [ "$HAVE_COMPACT" = 1 ]; then
		lsmrow "index pages after lsm_am.compact()" size pages_after_compaction
		lsmrow "  of which live runs (index_info)" size live_pages_after_compaction
	else
		printf '  %-40s %14s\n' "index pages after a full compaction" "n/a until the Merge issue"
	fi
	row "fresh CREATE INDEX, same rows (pages)" size pages_fresh_build
	printf '  %-40s %12s\n' "btree avg leaf density (%)" "$(fmt_num "$(M btree size leaf_density)" 1)"
	echo "  * index WAL: everything pg_waldump attributes to the index while the batch"
	echo "    runs, the lsm_am workers' flushes and merges included; background WAL:"
	echo "    what they write for the index after the batch, until idle."
	echo "  * point lookup: execution time of EXPLAIN ANALYZE, all pages in shared buffers."
	echo "    A new connection's first lookup touches each page of shared memory it reads"
	echo "    for the first time in that process, and lsm reads more of them than btree"
	echo "    (its memtable, a bloom filter page per run, each descended run's header):"
	echo "    on a VM a first touch is a page fault of tens of microseconds.  Again in the"
	echo "    same connection (the median of 9) is what an application on a connection"
	echo "    pool meets.  huge_pages = on cuts the first (README, \"Tuning\")."
	echo
	# targets
	bi=$(M btree random index_bytes)
	li=$(M lsm random index_bytes)
	lib=$(M lsm random index_plus_bg_bytes)
	r1=$(ratio "$li" "$bi" 3)
	r2=$(ratio "$lib" "$bi" 3)
	echo " targets (reported, not asserted)"
	if [ "$BEST" != btree ]; then
		bz=$(M "$BEST" random index_bytes)
		printf '  %-58s %8s  %s\n' "random batch: index WAL lsm / ${BEST/_/+} (best btree setup)" \
			"$(ratio "$li" "$bz" 3)" "(reported)"
		for k in lsm_lz4 lsm_zstd; do
			[[ " ${KINDS[*]} " == *" $k "* ]] || continue
			printf '  %-58s %8s  %s\n' "random batch: index WAL ${k/_/+} / ${BEST/_/+}" \
				"$(ratio "$(M "$k" random index_bytes)" "$bz" 3)" "(reported)"
		done
	fi
	printf '  %-58s %8s  %s\n' "random batch: index WAL lsm/btree <= 0.125 (1/8)" "$r1" \
		"$(verdict "$r1" '<=' 0.125)$(awk -v r="$r1" 'BEGIN { if (r + 0 > 0.125) printf " (%.1fx over the target)", r / 0.125 }')"
	printf '  %-58s %8s  %s\n' "random batch: with background work lsm/btree <= 0.333 (1/3)" "$r2" \
		"$(verdict "$r2" '<=' 0.3334)$(awk -v r="$r2" 'BEGIN { if (r + 0 > 0.3334) printf " (%.1fx over the target)", r / 0.3334 }')"
	fb=$(M btree size pages_fresh_build)
	la=$(M lsm size pages_after_run)
	lf=$(M lsm size pages_after_flush)
	lc=$(M lsm size pages_after_compaction)
	printf '  %-58s %8s  %s\n' "index size after the run <= fresh btree build (lsm/fresh)" "$(ratio "$la" "$fb")" \
		"$(verdict "$(ratio "$la" "$fb" 4)" '<=' 1)"
	printf '  %-58s %8s  %s\n' "  after lsm_am.flush() (lsm/fresh btree)" "$(ratio "$lf" "$fb")" \
		"$(verdict "$(ratio "$lf" "$fb" 4)" '<=' 1)"
	printf '  %-58s %8s  %s\n' "  after a full compaction (lsm/fresh btree)" "$(ratio "$lc" "$fb")" \
		"$(verdict "$(ratio "$lc" "$fb" 4)" '<=' 1)"
	echo
	ab=$(M btree answers check)
	al=$(M lsm answers check)
	if [ "$ab" = "$al" ]; then
		echo " answers: btree and lsm agree (order 181236 / orders 100000-101000: count:sum(id) $al)"
	else
		echo " answers DISAGREE: btree $ab, lsm $al"
	fi
	echo
	echo " data: $ACME_FINGERPRINT"
	bench_machine
	echo " raw: $RAW   medians: $MED   plans: $OUT/acme_plan_*.txt"
} | tee "$OUT/acme_table.txt"
# Every run must give the same answers through both indexes.
if [ "$(awk -F, '$5 == "check" { print $6 }' "$RAW" | sort -u | wc -l)" != 1 ]; then
	lsm_die "btree and lsm returned different rows (see $RAW, metric check)"
fi
