#!/usr/bin/env bash
# bench/space.sh — the Space issue's (12) figures: how large an lsm index's
# file is against its live pages (runs, log pages, metapage), a fresh build
# and a btree, in three scenarios on one throwaway cluster:
#   repro    the issue's repro: 100,000 keys, compact(); then ten rounds of
#            20,000 keys + lsm_am.compact(), memtable_size = 64 (file, run
#            and free pages after every round);
#   workers  40 rounds of 20,000 random keys, workers doing every flush and
#            compaction (wait_for_merges between rounds), memtable_size =
#            64; then VACUUM, then compact();
#   random   1,000,000 random keys in 10 statements (default memtable), then
#            compact();
#   bulk     1,000,000 random keys in one INSERT (default memtable); the
#            file when the workers are done and idle (they shrink it without
#            a VACUUM), then after VACUUM.
#   ingest   sustained random int8 ingest for --seconds (default 300) per
#            compaction policy (leveled, tiered, lazy): 2 pgbench clients
#            inserting 1,000 random keys per statement into a table with the
#            lsm index and a btree on the same column (so both see the same
#            rows); every 10 s the lsm file, its space amplification (file
#            pages / live pages, maintenance_stats) and the btree's size; at
#            the end the peak and median amplification, the amplification
#            when the workers are idle, and after VACUUM.  Not run by
#            default (--only ingest, or --all).
# Every scenario but ingest ends with a fresh CREATE INDEX USING lsm and a
# btree on the same rows for comparison.  Figures are pages (8 kB); no
# timings.
#
#   bash bench/space.sh [--only repro|workers|random|bulk|ingest] [--all]
#                       [--seconds S] [--policies LIST] [--out DIR]   (as root)
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"

ONLY=
OUT=
ALL=0
SECONDS_PER_POLICY=300
POLICIES=leveled,tiered,lazy
while [ $# -gt 0 ]; do
	case $1 in
	--only) ONLY=${2:?--only needs repro, workers, random, bulk or ingest}; shift 2 ;;
	--all) ALL=1; shift ;;
	--seconds) SECONDS_PER_POLICY=${2:?}; shift 2 ;;
	--policies) POLICIES=${2:?}; shift 2 ;;
	--out) OUT=${2:?--out needs a directory}; shift 2 ;;
	-h | --help) sed -n '2,/^set /{/^#/p}' "$0"; exit 0 ;;
	*) lsm_die "space.sh: unknown argument $1 (try --help)" ;;
	esac
done
require_root
OUT=$(bench_results_dir "$OUT")
CSV=$OUT/space.csv
csv_init "$CSV"
bench_cluster space "autovacuum = off"
q "CREATE EXTENSION lsm_am" >/dev/null

want() {
	if [ "$1" = ingest ]; then [ "$ONLY" = ingest ] || [ "$ALL" = 1 ]; return; fi
	[ -z "$ONLY" ] || [ "$ONLY" = "$1" ]
}

# pages SCENARIO STEP INDEX: check_index's accounting, printed and recorded
pages() {
	local row
	row=$(q "SELECT total_pages, run_pages, log_pages, free_pages, unused_pages,
	                round(total_pages::numeric / (1 + run_pages + log_pages), 2)
	           FROM lsm_am.check_index('$3')")
	IFS='|' read -r total run log free unused amp <<<"$row"
	printf '  %-9s %-22s %8s %8s %6s %8s %8s %8s\n' "$1" "$2" "$(fmt_int "$total")" \
		"$(fmt_int "$run")" "$log" "$(fmt_int "$free")" "$(fmt_int "$unused")" "$amp"
	csv_add "$CSV" space 1 lsm "$1/$2" total_pages "$total"
	csv_add "$CSV" space 1 lsm "$1/$2" live_pages "$((1 + run + log))"
}

# compare SCENARIO TABLE INDEX: a fresh lsm build and a btree on the same rows
compare() {
	local total fresh btree
	q "CREATE INDEX space_fresh ON $2 USING lsm (k); CREATE INDEX space_btree ON $2 (k)" >/dev/null
	total=$(q "SELECT pg_relation_size('$3') / 8192")
	fresh=$(q "SELECT pg_relation_size('space_fresh') / 8192")
	btree=$(q "SELECT pg_relation_size('space_btree') / 8192")
	printf '  %-9s %-22s %8s   (fresh lsm build %s pages, btree %s: lsm/fresh %s, lsm/btree %s)\n' "$1" "vs fresh builds" \
		"$(fmt_int "$total")" "$(fmt_int "$fresh")" "$(fmt_int "$btree")" \
		"$(ratio "$total" "$fresh")" "$(ratio "$total" "$btree")"
	csv_add "$CSV" space 1 lsm "$1" fresh_lsm_pages "$fresh"
	csv_add "$CSV" space 1 btree "$1" fresh_btree_pages "$btree"
	q "DROP INDEX space_fresh, space_btree; DROP TABLE $2" >/dev/null
}

{
	echo "space: file pages against live pages (runs + log + metapage); amp = total / live"
	printf '  %-9s %-22s %8s %8s %6s %8s %8s %8s\n' scenario step total runs log free unused amp
} | tee "$OUT/space.txt"

if want repro; then
	q "CREATE TABLE gm (k bigint); CREATE INDEX gm_k ON gm USING lsm (k) WITH (memtable_size = 64);
	   INSERT INTO gm SELECT g FROM generate_series(1, 100000) g" >/dev/null
	q "SELECT lsm_am.compact('gm_k')" >/dev/null
	for i in $(seq 1 10); do
		q "INSERT INTO gm SELECT g FROM generate_series(1, 20000) g" >/dev/null
		q "SELECT lsm_am.compact('gm_k')" >/dev/null
		pages repro "round $i + compact()" gm_k
	done | tee -a "$OUT/space.txt"
	compare repro gm gm_k | tee -a "$OUT/space.txt"
fi

if want workers; then
	q "CREATE TABLE wk (k bigint); CREATE INDEX wk_k ON wk USING lsm (k) WITH (memtable_size = 64)" >/dev/null
	for i in $(seq 1 40); do
		q "INSERT INTO wk SELECT (random() * 1e15)::bigint FROM generate_series(1, 20000)" >/dev/null
		q "SELECT lsm_am.wait_for_merges('wk_k', '10 minutes')" >/dev/null
		[ $((i % 10)) -ne 0 ] || pages workers "round $i" wk_k
	done | tee -a "$OUT/space.txt"
	q "VACUUM wk" >/dev/null
	pages workers "VACUUM" wk_k | tee -a "$OUT/space.txt"
	q "SELECT lsm_am.compact('wk_k')" >/dev/null
	pages workers "compact()" wk_k | tee -a "$OUT/space.txt"
	compare workers wk wk_k | tee -a "$OUT/space.txt"
fi

if want random; then
	q "CREATE TABLE rn (k bigint); CREATE INDEX rn_k ON rn USING lsm (k)" >/dev/null
	for i in $(seq 1 10); do
		q "INSERT INTO rn SELECT (random() * 1e15)::bigint FROM generate_series(1, 100000)" >/dev/null
	done
	q "SELECT lsm_am.wait_for_merges('rn_k', '10 minutes')" >/dev/null
	pages random "1M inserts, merged" rn_k | tee -a "$OUT/space.txt"
	q "SELECT lsm_am.compact('rn_k')" >/dev/null
	pages random "compact()" rn_k | tee -a "$OUT/space.txt"
	compare random rn rn_k | tee -a "$OUT/space.txt"
fi

if want bulk; then
	q "CREATE TABLE bk (k bigint); CREATE INDEX bk_k ON bk USING lsm (k)" >/dev/null
	q "INSERT INTO bk SELECT (random() * 1e15)::bigint FROM generate_series(1, 1000000)" >/dev/null
	q "SELECT lsm_am.wait_for_merges('bk_k', '10 minutes')" >/dev/null
	pages bulk "one INSERT, merged" bk_k | tee -a "$OUT/space.txt"
	# the workers shrink an idle index themselves (worker_naptime, back-off 1 s)
	sleep 5
	pages bulk "idle workers, 5 s" bk_k | tee -a "$OUT/space.txt"
	q "VACUUM bk" >/dev/null
	pages bulk "VACUUM" bk_k | tee -a "$OUT/space.txt"
	compare bulk bk bk_k | tee -a "$OUT/space.txt"
fi

if want ingest; then
	WORK=$BENCH_SCRATCH/work
	mkdir -p "$WORK"
	chown "$PG_USER:" "$WORK"
	echo "INSERT INTO ig SELECT (random() * 9.2e18)::int8 FROM generate_series(1, 1000);" >"$WORK/ins.sql"
	chmod 644 "$WORK/ins.sql"
	{
		echo "ingest: $SECONDS_PER_POLICY s of random int8 inserts per policy, 2 clients x 1,000 rows per statement;"
		echo "  lsm and btree indexes on the same table; MB = file size; amp = lsm file pages / live pages"
	} | tee -a "$OUT/space.txt"
	IFS=, read -r -a POLICY_LIST <<<"$POLICIES"
	for pol in "${POLICY_LIST[@]}"; do
		q "DROP TABLE IF EXISTS ig; CREATE TABLE ig (k int8 NOT NULL);
		   CREATE INDEX ig_lsm ON ig USING lsm (k) WITH (compaction = $pol);
		   CREATE INDEX ig_btree ON ig (k)" >/dev/null
		q "CHECKPOINT" >/dev/null
		(
			t0=$(date +%s)
			while :; do
				echo "$(($(date +%s) - t0)) $(q "SELECT (SELECT n_tup_ins FROM pg_stat_user_tables WHERE relname = 'ig'),
				          file_pages, round(space_amplification::numeric, 2),
				          pg_relation_size('ig_btree') / 8192
				     FROM lsm_am.maintenance_stats('ig_lsm')" | tr '|' ' ')"
				sleep 10
			done
		) >"$WORK/samples_$pol.txt" 2>/dev/null &
		BENCH_BG_PIDS=$!
		as_pg PGHOST="$PGHOST" PGPORT="$PGPORT" pgbench -n -c 2 -j 2 -T "$SECONDS_PER_POLICY" \
			-f "$WORK/ins.sql" postgres >"$WORK/pgbench_$pol.out" 2>&1 ||
			{ cat "$WORK/pgbench_$pol.out" >&2; lsm_die "pgbench failed ($pol)"; }
		kill "$BENCH_BG_PIDS" 2>/dev/null || true
		wait "$BENCH_BG_PIDS" 2>/dev/null || true
		BENCH_BG_PIDS=
		end=$(q "SELECT file_pages, round(space_amplification::numeric, 2) FROM lsm_am.maintenance_stats('ig_lsm')")
		q "SELECT lsm_am.wait_for_merges('ig_lsm', '10 minutes')" >/dev/null
		sleep 5
		idle=$(q "SELECT file_pages, round(space_amplification::numeric, 2) FROM lsm_am.maintenance_stats('ig_lsm')")
		q "VACUUM ig" >/dev/null
		vac=$(q "SELECT file_pages, round(space_amplification::numeric, 2) FROM lsm_am.maintenance_stats('ig_lsm')")
		rows=$(q "SELECT count(*) FROM ig")
		btree=$(q "SELECT pg_relation_size('ig_btree') / 8192")
		q "SELECT leaked_pages FROM lsm_am.check_index('ig_lsm')" | grep -qx 0 ||
			lsm_die "check_index found leaked pages ($pol)"
		{
			printf '  %-8s %6s %12s %10s %10s %6s\n' policy "t (s)" rows "btree MB" "lsm MB" amp
			awk -v pol="$pol" 'NF == 5 && $2 != "" && ($1 % 30 < 10) {
				printf "  %-8s %6d %12d %10.1f %10.1f %6.2f\n", pol, $1, $2, $5 / 128, $3 / 128, $4 }' \
				"$WORK/samples_$pol.txt"
			sort -g -k4,4 "$WORK/samples_$pol.txt" | awk -v pol="$pol" -v rows="$rows" -v btree="$btree" \
				-v end="$end" -v idle="$idle" -v vac="$vac" '
				NF == 5 && $2 != "" && $2 > 0 { a[++n] = $4 }
				END {
				  split(end, e, "|"); split(idle, i, "|"); split(vac, v, "|")
				  printf "  %-8s %s rows; btree %.1f MB; lsm amp peak %.2f, median %.2f; end %.1f MB amp %s; idle %.1f MB amp %s; VACUUM %.1f MB amp %s\n",
				    pol, rows, btree / 128, a[n], a[int((n + 1) / 2)], e[1] / 128, e[2], i[1] / 128, i[2], v[1] / 128, v[2]
				}'
		} | tee -a "$OUT/space.txt"
		peak=$(sort -g -k4,4 "$WORK/samples_$pol.txt" | awk 'NF == 5 && $2 > 0 { p = $4 } END { print p }')
		csv_add "$CSV" space 1 "lsm-$pol" ingest amp_peak "$peak"
		csv_add "$CSV" space 1 "lsm-$pol" ingest amp_end "${end#*|}"
		csv_add "$CSV" space 1 "lsm-$pol" ingest amp_idle "${idle#*|}"
		csv_add "$CSV" space 1 "lsm-$pol" ingest amp_vacuum "${vac#*|}"
		csv_add "$CSV" space 1 "lsm-$pol" ingest rows "$rows"
		csv_add "$CSV" space 1 btree ingest btree_pages "$btree"
		cp "$WORK/samples_$pol.txt" "$OUT/space_ingest_$pol.txt"
	done
fi

bench_machine | tee -a "$OUT/space.txt"
echo " raw: $CSV"
