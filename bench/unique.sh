#!/usr/bin/env bash
# bench/unique.sh — the Unique issue's benchmark: idempotent inserts into a
# unique index on random UUIDs, INSERT ... ON CONFLICT (u) DO NOTHING with a
# share of duplicates, btree vs lsm, next to the same table with no index.
#
#   bash bench/unique.sh [--duration S | --quick] [--clients N] [--batch N]
#                        [--dup-every N] [--reps N] [--variants LIST]
#                        [--out DIR]                                   (as root)
#
# Per variant (default noindex,btree,lsm; the unique index is
# CREATE UNIQUE INDEX ev_u ON ev USING <am> (u); noindex has none and takes
# every row), on one throwaway cluster: a table ev(u uuid, n bigint), 10,000
# rows to start with, and N clients (default 2, pgbench) each running for
# --duration seconds (default 240; --quick 60)
#   INSERT INTO ev SELECT md5(n::text)::uuid, n FROM (SELECT CASE
#     WHEN g % DUP = 0 THEN <an n already taken> ELSE nextval('ev_seq') END
#     FROM generate_series(1, BATCH) g) ...  ON CONFLICT (u) DO NOTHING
# (batch 1,000; every --dup-every-th row, 20 by default = 5%, repeats the key
# of a row inserted before, committed or still in flight).  The keys are
# md5 of a counter: random UUIDs whose duplicates are known, so the rows
# rejected are counted exactly: every statement's duplicates, no other row.
# Reported over the last third of the run's time (the steady state, the index
# several times shared_buffers): rows/s offered and taken, p50/p99 statement
# latency; the index's WAL per row offered (pg_waldump --relation; a
# replication slot keeps the WAL), its size against shared_buffers; rows
# rejected against those expected, and that the table has no two rows with
# one key; for lsm, lsm_am.lookup_stats over the run (bloom filter probes and
# run data pages read per row).  --reps N repeats every variant, medians.
# Targets (the issue's; reported, not asserted): lsm rows/s >= 2x btree,
# lsm index WAL per row <= 1/5 of btree's, rejected rows equal.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"

DURATION=240
CLIENTS=2
BATCH=1000
DUP_EVERY=20
REPS=1
SELECTED=noindex,btree,lsm
OUT=
while [ $# -gt 0 ]; do
	case $1 in
	--duration) DURATION=${2:?}; shift 2 ;;
	--quick) DURATION=60; shift ;;
	--clients) CLIENTS=${2:?}; shift 2 ;;
	--batch) BATCH=${2:?}; shift 2 ;;
	--dup-every) DUP_EVERY=${2:?}; shift 2 ;;
	--reps) REPS=${2:?}; shift 2 ;;
	--variants) SELECTED=${2:?}; shift 2 ;;
	--out) OUT=${2:?}; shift 2 ;;
	-h | --help) sed -n '2,/^set /{/^#/p}' "$0"; exit 0 ;;
	*) lsm_die "unique.sh: unknown argument $1 (try --help)" ;;
	esac
done
for n in "$DURATION" "$CLIENTS" "$BATCH" "$DUP_EVERY" "$REPS"; do
	[[ $n =~ ^[1-9][0-9]*$ ]] || lsm_die "--duration, --clients, --batch, --dup-every and --reps take positive integers"
done
IFS=, read -r -a VAR_LIST <<<"$SELECTED"
for v in "${VAR_LIST[@]}"; do
	case $v in noindex | btree | lsm) ;; *) lsm_die "unknown variant $v (noindex, btree, lsm)" ;; esac
done
require_root
command -v "$PG_BINDIR/pgbench" >/dev/null || lsm_die "pgbench not found in $PG_BINDIR"

OUT=$(bench_results_dir "$OUT")
RAW=$OUT/unique_raw.csv
MED=$OUT/unique.csv
csv_init "$RAW"

bench_cluster unique "max_wal_size = '1GB'" "checkpoint_timeout = '5min'" "autovacuum = off" \
	"max_replication_slots = 4"
q "CREATE EXTENSION lsm_am" >/dev/null
SB_BYTES=$(q "SELECT setting::bigint * 8192 FROM pg_settings WHERE name = 'shared_buffers'")
WORK=$BENCH_SCRATCH/work
mkdir -p "$WORK"
chown "$PG_USER:" "$WORK"

pgb() { as_pg PGHOST="$PGHOST" PGPORT="$PGPORT" pgbench -n "$@" postgres; }

pct() { # pct FILE P: P-th percentile of a sorted one-column file
	awk -v p="$2" '{ a[NR] = $1 } END { r = int(NR * p / 100 + 0.999999); if (r < 1) r = 1; if (r > NR) r = NR; print a[r] }' "$1"
}

run_one() { # run_one VARIANT REP
	local var=$1 rep=$2 start_lsn end_lsn rel="" t0 idx_stats idx_bytes idx_fpi
	q "DROP TABLE IF EXISTS ev; DROP SEQUENCE IF EXISTS ev_seq;
	   CREATE SEQUENCE ev_seq;
	   CREATE TABLE ev (u uuid NOT NULL, n bigint NOT NULL);" >/dev/null
	[ "$var" = noindex ] || q "CREATE UNIQUE INDEX ev_u ON ev USING $var (u)" >/dev/null
	q "INSERT INTO ev SELECT md5(n::text)::uuid, n FROM (SELECT nextval('ev_seq') AS n FROM generate_series(1, 10000)) s" >/dev/null
	# every DUP_EVERY-th row repeats a key taken before (1 .. last_value: each
	# of those was given to one row of a statement that commits)
	local conflict="ON CONFLICT (u) DO NOTHING"
	[ "$var" != noindex ] || conflict=""
	cat >"$WORK/ins.sql" <<EOF
INSERT INTO ev SELECT md5(n::text)::uuid, n FROM (
  SELECT CASE WHEN g % $DUP_EVERY = 0 THEN 1 + floor(random() * (SELECT last_value FROM ev_seq))::bigint
              ELSE nextval('ev_seq') END AS n
    FROM generate_series(1, $BATCH) g) s
  $conflict;
EOF
	chmod 644 "$WORK/ins.sql"
	rm -f "$WORK"/pgb_log*
	q "CHECKPOINT" >/dev/null
	q "SELECT pg_drop_replication_slot('bench') FROM pg_replication_slots WHERE slot_name = 'bench'" >/dev/null
	q "SELECT pg_create_physical_replication_slot('bench', true)" >/dev/null
	[ "$var" = noindex ] || rel=$(relspec ev_u)
	[ "$var" != lsm ] || q "SELECT lsm_am.reset_lookup_stats('ev_u')" >/dev/null
	local n0
	n0=$(q "SELECT count(*) FROM ev")
	start_lsn=$(q "SELECT pg_current_wal_insert_lsn()")
	lsm_log "unique: $var (rep $rep): $CLIENTS clients x $BATCH rows (1 in $DUP_EVERY a duplicate) for $DURATION s"
	t0=$(date +%s.%N)
	(cd "$WORK" && pgb -c "$CLIENTS" -j "$CLIENTS" -T "$DURATION" -M prepared -f "$WORK/ins.sql" \
		-l --log-prefix="$WORK/pgb_log" >"$WORK/pgbench.out" 2>&1) ||
		{ cat "$WORK/pgbench.out" >&2; lsm_die "pgbench failed for $var"; }
	end_lsn=$(wal_lsn)
	idx_bytes=n/a
	idx_fpi=n/a
	if [ -n "$rel" ]; then
		idx_stats=$(as_pg pg_waldump -p "$BENCH_DATADIR/pg_wal" -s "$start_lsn" -e "$end_lsn" \
			--relation="$rel" --stats=record 2>"$WORK/waldump.err" | awk '$1 == "Total" { print $7, $5 }') || true
		[ -z "$idx_stats" ] || read -r idx_bytes idx_fpi <<<"$idx_stats"
	fi
	q "SELECT pg_drop_replication_slot('bench')" >/dev/null

	# pgbench log: client tx latency_us script epoch us -> "done_s latency_ms"
	cat "$WORK"/pgb_log* | awk -v t0="$t0" '{ printf "%.6f %.3f\n", $5 + $6 / 1e6 - t0, $3 / 1000 }' |
		sort -g -k1,1 >"$WORK/tx.txt"
	local ntx cut tmax tcut n nd last offered expected
	ntx=$(wc -l <"$WORK/tx.txt")
	[ "$ntx" -gt 0 ] || lsm_die "pgbench wrote no per-statement log for $var"
	cut=$(awk 'NR == FNR { t = $1; next } $1 > t * 2 / 3 { print FNR; exit }' <(tail -n1 "$WORK/tx.txt") "$WORK/tx.txt")
	[ -n "$cut" ] || cut=$ntx
	tmax=$(tail -n1 "$WORK/tx.txt" | cut -d' ' -f1)
	tcut=$(awk -v t="$tmax" 'BEGIN { printf "%.6f", t * 2 / 3 }')
	awk '{ print $2 }' "$WORK/tx.txt" | sort -g >"$WORK/lat_all.txt"
	tail -n +"$cut" "$WORK/tx.txt" | awk '{ print $2 }' | sort -g >"$WORK/lat_late.txt"
	read -r n nd last < <(q "SELECT count(*), count(DISTINCT u), (SELECT last_value FROM ev_seq) FROM ev" | tr '|' ' ')
	offered=$((ntx * BATCH))
	expected=$((ntx * (BATCH / DUP_EVERY)))
	add() { csv_add "$RAW" unique "$rep" "$var" uuid "$1" "$2"; }
	add statements "$ntx"
	add rows_offered "$offered"
	add rows_taken "$((n - n0))"
	add rows_rejected "$((offered - (n - n0)))"
	add rows_rejected_expected "$( [ "$var" = noindex ] && echo 0 || echo "$expected")"
	add duplicate_keys_in_table "$((n - nd))"
	add rows_equal_counter "$( [ "$var" = noindex ] && echo n/a || { [ "$n" = "$last" ] && echo yes || echo "no ($n rows, counter $last)"; })"
	add rows_per_s_last_third "$(awk -v c="$((ntx - cut + 1))" -v b="$BATCH" -v t="$tmax" -v x="$tcut" 'BEGIN { printf "%.1f", c * b / (t - x) }')"
	add rows_per_s "$(awk -v c="$ntx" -v b="$BATCH" -v t="$tmax" 'BEGIN { printf "%.1f", c * b / t }')"
	add p50_ms_last_third "$(pct "$WORK/lat_late.txt" 50)"
	add p99_ms_last_third "$(pct "$WORK/lat_late.txt" 99)"
	add p99_ms "$(pct "$WORK/lat_all.txt" 99)"
	add index_wal_bytes_per_row "$(awk -v a="$idx_bytes" -v n="$offered" 'BEGIN { if (a ~ /^[0-9]+$/) printf "%.2f", a / n; else print "n/a" }')"
	add index_fpi_bytes_per_row "$(awk -v a="$idx_fpi" -v n="$offered" 'BEGIN { if (a ~ /^[0-9]+$/) printf "%.2f", a / n; else print "n/a" }')"
	if [ "$var" != noindex ]; then
		local ib
		ib=$(q "SELECT pg_relation_size('ev_u')")
		add index_mb "$(awk -v a="$ib" 'BEGIN { printf "%.1f", a / 1048576 }')"
		add index_x_shared_buffers "$(awk -v a="$ib" -v s="$SB_BYTES" 'BEGIN { printf "%.2f", a / s }')"
	fi
	if [ "$var" = lsm ]; then
		local lk fp fn dp
		read -r lk fp fn dp < <(q "SELECT lookups, filter_probes, filter_negatives, data_pages_read FROM lsm_am.lookup_stats('ev_u')" | tr '|' ' ')
		add filter_probes_per_row "$(awk -v a="$fp" -v n="$offered" 'BEGIN { printf "%.2f", a / n }')"
		add filter_negatives_per_probe "$(awk -v a="$fn" -v b="$fp" 'BEGIN { if (b > 0) printf "%.3f", a / b; else print "n/a" }')"
		add data_pages_read_per_row "$(awk -v a="$dp" -v n="$offered" 'BEGIN { printf "%.3f", a / n }')"
		add lsm_runs "$(q "SELECT runs FROM lsm_am.index_stats('ev_u')")"
	fi
	awk -F, -v v="$var" -v r="$rep" '$1 == "unique" && $2 == r && $3 == v { printf "    %s=%s", $5, $6 } END { print "" }' "$RAW" | fold -w 160 >&2
}

for rep in $(seq 1 "$REPS"); do
	for v in "${VAR_LIST[@]}"; do run_one "$v" "$rep"; done
done
bench_median_csv "$RAW" "$MED"

m() { med "$MED" unique "$1" uuid "$2"; }
{
	echo
	echo "== unique: INSERT ... ON CONFLICT (u) DO NOTHING, random UUIDs, 1 row in $DUP_EVERY a duplicate, $CLIENTS clients, $DURATION s (medians of $REPS)"
	printf '  %-8s %11s %11s %11s %9s %9s %11s %11s %9s %9s\n' index "rows/s" "rejected" "expected" "p50 ms" "p99 ms" "index WAL" "index MB" "x shared" "dup keys"
	printf '  %-8s %11s %11s %11s %9s %9s %11s %11s %9s %9s\n' "" "last 1/3" "" "" "last 1/3" "last 1/3" "B/row" "" "buffers" "in table"
	for v in "${VAR_LIST[@]}"; do
		printf '  %-8s %11s %11s %11s %9s %9s %11s %11s %9s %9s\n' "$v" \
			"$(fmt_int "$(m "$v" rows_per_s_last_third)")" "$(fmt_int "$(m "$v" rows_rejected)")" \
			"$(fmt_int "$(m "$v" rows_rejected_expected)")" "$(m "$v" p50_ms_last_third)" "$(m "$v" p99_ms_last_third)" \
			"$(m "$v" index_wal_bytes_per_row)" "$(m "$v" index_mb)" "$(m "$v" index_x_shared_buffers)" \
			"$(m "$v" duplicate_keys_in_table)"
	done
	if [[ " ${VAR_LIST[*]} " == *" lsm "* ]]; then
		echo "  lsm per row offered: $(m lsm filter_probes_per_row) bloom filter probes ($(m lsm filter_negatives_per_probe) of them negative), $(m lsm data_pages_read_per_row) run data pages read; $(m lsm lsm_runs) runs at the end"
	fi
	if [[ " ${VAR_LIST[*]} " == *" btree "* && " ${VAR_LIST[*]} " == *" lsm "* ]]; then
		local_r=$(ratio "$(m lsm rows_per_s_last_third)" "$(m btree rows_per_s_last_third)")
		local_w=$(ratio "$(m lsm index_wal_bytes_per_row)" "$(m btree index_wal_bytes_per_row)" 3)
		echo " targets (reported, not asserted)"
		printf '  %-62s %7s  %s\n' "lsm/btree rows/s, last third (target >= 2)" "$local_r" "$(verdict "$local_r" '>=' 2)"
		printf '  %-62s %7s  %s\n' "lsm/btree index WAL per row (target <= 0.2)" "$local_w" "$(verdict "$local_w" '<=' 0.2)"
		if [[ " ${VAR_LIST[*]} " == *" noindex "* ]]; then
			printf '  %-62s %7s\n' "lsm/no index rows/s, last third" "$(ratio "$(m lsm rows_per_s_last_third)" "$(m noindex rows_per_s_last_third)")"
		fi
		same=$([ "$(m lsm rows_rejected)" = "$(m lsm rows_rejected_expected)" ] &&
			[ "$(m btree rows_rejected)" = "$(m btree rows_rejected_expected)" ] && echo yes || echo NO)
		printf '  %-62s %7s\n' "each index rejected exactly the duplicates offered" "$same"
	fi
} | tee "$OUT/unique_table.txt"
