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
#   bulk     1,000,000 random keys in one INSERT (default memtable), then
#            VACUUM (the bulk path: what autovacuum does after a load).
# Every scenario ends with a fresh CREATE INDEX USING lsm and a btree on the
# same rows for comparison.  Figures are pages (8 kB); no timings.
#
#   bash bench/space.sh [--only repro|workers|random|bulk] [--out DIR]   (as root)
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"

ONLY=
OUT=
while [ $# -gt 0 ]; do
	case $1 in
	--only) ONLY=${2:?--only needs repro, workers, random or bulk}; shift 2 ;;
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

want() { [ -z "$ONLY" ] || [ "$ONLY" = "$1" ]; }

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
	q "VACUUM bk" >/dev/null
	pages bulk "VACUUM" bk_k | tee -a "$OUT/space.txt"
	compare bulk bk bk_k | tee -a "$OUT/space.txt"
fi

bench_machine | tee -a "$OUT/space.txt"
echo " raw: $CSV"
