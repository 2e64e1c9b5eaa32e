#!/usr/bin/env bash
# bench/unique.sh — the Unique issue's figures (issue 17), and the same in a
# memory cap (issue 31, item 3): an idempotency key.
# A table of random UUIDs with a unique index, btree or lsm, preloaded with
# ROWS rows (the index several times shared_buffers), then 2 pgbench clients
# for DURATION seconds, one row per statement:
#     INSERT INTO ev VALUES (gen_random_uuid(), 1) ON CONFLICT (u) DO NOTHING   (95%)
#     INSERT INTO ev SELECT u, 2 FROM dupkeys WHERE i = :i ON CONFLICT ... (5%: a key already there)
# Reports rows/s (all, and over the last third of the time), p99 statement
# latency over the last third, index WAL per row (pg_waldump of the index
# relation; a replication slot keeps the WAL), duplicates rejected
# (statements of the duplicate script, against rows that went in: every
# duplicate must be rejected and every new key inserted), and for lsm the
# run pages read and bloom filter probes per uniqueness check
# (lsm_am.lookup_stats).
#
#   bash bench/unique.sh [--rows N] [--duration S] [--batch B[,B...]] [--quick]
#                        [--cap MIB] [--out DIR] [--variant 'NAME|INDEX OPTIONS']
#
# --variant adds one more lsm index to compare, e.g.
# --variant 'lsm-tiered|compaction = tiered' (USING lsm (u) WITH (...)); it
# may be given more than once.  The variants run one after another, each on
# its own table, and the table prints a column for each.
#
# --batch B (1, or a multiple of 20): B rows per statement instead, 95% new
# keys and 5% keys already there in each (INSERT ... SELECT ... UNION ALL
# ...).  A list (--batch 1,100) runs each batch size in turn on the same
# preloaded table, in the order given (so the second run starts from the
# index as the first left it).
#
# --cap MIB (issue 31): the server runs in a memory cgroup capped at MIB MiB,
# page cache included (bench_cgroup_make; where no cgroup is writable the
# script says why and exits 0, measuring nothing), and the defaults become
# those of the beyond-memory figures: as many rows as make a freshly built
# unique btree 4 times the cap (69M for 512 MiB), --batch 1,100, 300 s per
# batch size.  The cgroup's peak memory is reported, and the server's disk
# bytes read and written per row (/proc/PID/io of its processes).
#
# Run as root; uses a throwaway cluster (synchronous_commit = off, so the
# figures are the index's, not the commit flush's).  Results:
# <out>/unique.csv and unique_table.txt.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
require_root

ROWS=
DURATION=
BATCHES=
CAP=
OUT=
# NAME|AM|WITH options of each index compared (NAME names its tables)
VARIANTS=("btree|btree|" "lsm|lsm|")
while [ $# -gt 0 ]; do
	case $1 in
	--rows) ROWS=${2:?}; shift 2 ;;
	--duration) DURATION=${2:?}; shift 2 ;;
	--batch) BATCHES=${2:?}; shift 2 ;;
	--quick) ROWS=${ROWS:-300000}; DURATION=${DURATION:-20}; shift ;;
	--cap) CAP=${2:?}; shift 2 ;;
	--out) OUT=${2:?}; shift 2 ;;
	--variant)
		v=${2:?}
		[[ $v == *"|"* && ${v%%|*} =~ ^lsm[a-z0-9_-]*$ ]] ||
			lsm_die "unique.sh: --variant takes 'NAME|INDEX OPTIONS', NAME starting with lsm (letters, digits, - and _), e.g. 'lsm-tiered|compaction = tiered'"
		n=${v%%|*}
		for x in "${VARIANTS[@]%%|*}"; do
			[ "${x//-/_}" != "${n//-/_}" ] ||
				lsm_die "unique.sh: --variant name $n is taken (its tables would be those of $x)"
		done
		VARIANTS+=("${v%%|*}|lsm|${v#*|}")
		shift 2 ;;
	*) lsm_die "unique.sh: unknown argument $1" ;;
	esac
done
[ -z "$CAP" ] || [[ $CAP =~ ^[1-9][0-9]*$ ]] || lsm_die "--cap takes a positive number of MiB"
if [ -n "$CAP" ]; then
	bench_cgroup_make unique "$CAP" || {
		lsm_log "no memory cap to be had here ($BENCH_CGROUP_WHY): nothing measured"
		lsm_log "(--cap needs a writable cgroup: v1's /sys/fs/cgroup/memory or v2's /sys/fs/cgroup with the memory controller)"
		exit 0
	}
	lsm_log "the server runs in the memory cgroup $BENCH_CGROUP (v$BENCH_CGROUP_VERSION), capped at $CAP MiB"
	# a freshly built unique btree of random UUIDs: 31.3 bytes an entry
	ROWS=${ROWS:-$(awk -v c="$CAP" 'BEGIN { printf "%d", 4 * c * 1048576 / 31.3 }')}
	DURATION=${DURATION:-300}
	BATCHES=${BATCHES:-1,100}
fi
ROWS=${ROWS:-10000000}
DURATION=${DURATION:-120}
BATCHES=${BATCHES:-1}
IFS=, read -r -a BATCH_LIST <<<"$BATCHES"
for b in "${BATCH_LIST[@]}"; do
	[[ $b =~ ^[1-9][0-9]*$ ]] && { [ "$b" = 1 ] || [ $((b % 20)) = 0 ]; } ||
		lsm_die "unique.sh: --batch takes 1 or multiples of 20, comma-separated (got $BATCHES)"
done
OUT=$(bench_results_dir "${OUT:-${BENCH_OUT:-}}")
CSV=$OUT/unique.csv
csv_init "$CSV"
bench_cluster unique "max_wal_size = '1GB'" "checkpoint_timeout = '5min'" "autovacuum = off" \
	"synchronous_commit = off" "max_wal_senders = 2"
WORK=$BENCH_SCRATCH/work
mkdir -p "$WORK"
chown postgres "$WORK"
q "CREATE EXTENSION lsm_am"
pgb() { as_pg PGHOST="$PGHOST" PGPORT="$PGPORT" pgbench -n "$@" postgres; }

# unique_run: one run of BATCH rows per statement into table $t (index ${t}_u)
unique_run() {
	local c="b$BATCH" size n0 dup0 start_lsn end_lsn t0 rel idx_wal idx_fpi n1 dup_in
	local ntx nnew ndup tmax late late_s p99 inserted nrows io_pid io_rows io_r io_w
	size=$(q "SELECT pg_relation_size('${t}_u')")
	if [ "$BATCH" = 1 ]; then
		echo "INSERT INTO $t VALUES (gen_random_uuid(), 1) ON CONFLICT (u) DO NOTHING;" >"$WORK/new.sql"
		printf '\\set i random(1, 100000)\nINSERT INTO %s SELECT u, 2 FROM dupkeys_%s WHERE i = :i ON CONFLICT (u) DO NOTHING;\n' \
			"$t" "$id" >"$WORK/dup.sql"
		SCRIPTS=(-f "$WORK/new.sql@95" -f "$WORK/dup.sql@5")
	else
		printf '\\set i random(1, 99000)\nINSERT INTO %s SELECT gen_random_uuid(), 1 FROM generate_series(1, %d) UNION ALL SELECT u, 2 FROM dupkeys_%s WHERE i >= :i AND i < :i + %d ON CONFLICT (u) DO NOTHING;\n' \
			"$t" "$((BATCH - BATCH / 20))" "$id" "$((BATCH / 20))" >"$WORK/new.sql"
		SCRIPTS=(-f "$WORK/new.sql")
	fi
	chmod 644 "$WORK"/*.sql
	[ "$am" = btree ] || q "SELECT lsm_am.reset_lookup_stats('${t}_u')" >/dev/null
	[ -z "${BENCH_CGROUP:-}" ] || bench_cgroup_peak_reset
	q "SELECT pg_create_physical_replication_slot('bench', true)" >/dev/null
	n0=$(q "SELECT count(*) FROM $t")
	dup0=$(q "SELECT count(*) FROM $t WHERE v = 2")
	rm -f "$WORK"/log_"$id"* "$WORK"/io_*.txt
	start_lsn=$(wal_lsn)
	t0=$(date +%s.%N)
	# disk bytes of the server's processes from a third of the run to 3 s
	# before its end (the clients' backends exit with pgbench)
	(
		sleep "$((DURATION / 3))"
		{ date +%s.%N; bench_proc_snap; } >"$WORK/io_a.txt"
		sleep "$((DURATION - DURATION / 3 - 3))"
		{ date +%s.%N; bench_proc_snap; } >"$WORK/io_b.txt"
	) &
	io_pid=$!
	BENCH_BG_PIDS="$io_pid"
	(cd "$WORK" && pgb -c 2 -j 2 -T "$DURATION" -M prepared "${SCRIPTS[@]}" \
		-l --log-prefix="$WORK/log_$id" >"$WORK/pgbench_$id.out" 2>&1) ||
		{ cat "$WORK/pgbench_$id.out" >&2; lsm_die "pgbench failed on $t"; }
	wait "$io_pid" || true
	BENCH_BG_PIDS=
	end_lsn=$(wal_lsn)
	rel=$(relspec "${t}_u")
	read -r idx_wal idx_fpi <<<"$(as_pg pg_waldump -p "$BENCH_DATADIR/pg_wal" -s "$start_lsn" -e "$end_lsn" \
		--relation="$rel" --stats=record 2>/dev/null | awk '$1 == "Total" { print $7, $5 }')"
	q "SELECT pg_drop_replication_slot('bench')" >/dev/null
	n1=$(q "SELECT count(*) FROM $t")
	dup_in=$(($(q "SELECT count(*) FROM $t WHERE v = 2") - dup0))
	# pgbench log "client tx latency script epoch us": "t latency_ms script"
	cat "$WORK"/log_"$id"* | awk -v t0="$t0" '{ printf "%.6f %.3f %d\n", $5 + $6 / 1e6 - t0, $3 / 1000, $4 }' | sort -g >"$WORK/tx_$id.txt"
	read -r ntx nnew ndup tmax late late_s <<<"$(awk '{ n++; c[$3]++; t[n] = $1 } END {
		tm = t[n]; l = 0; for (i = 1; i <= n; i++) if (t[i] > tm * 2 / 3) l++
		print n, c[0] + 0, c[1] + 0, tm, l, tm / 3 }' "$WORK/tx_$id.txt")"
	p99=$(awk -v tm="$tmax" '$1 > tm * 2 / 3 { print $2 }' "$WORK/tx_$id.txt" | sort -g |
		awk '{ a[NR] = $1 } END { r = int(NR * 0.99 + 0.999999); if (r < 1) r = 1; print a[r] }')
	# statements (rows) completed between the two disk snapshots
	io_rows=n/a io_r=n/a io_w=n/a
	if [ -s "$WORK/io_a.txt" ] && [ -s "$WORK/io_b.txt" ]; then
		io_rows=$(awk -v a="$(head -n1 "$WORK/io_a.txt")" -v b="$(head -n1 "$WORK/io_b.txt")" -v t0="$t0" -v bt="$BATCH" \
			'$1 + t0 > a && $1 + t0 <= b { n++ } END { print n * bt }' "$WORK/tx_$id.txt")
		# bench_proc_snap's lines "pid group ticks rbytes wbytes"
		read -r io_r io_w <<<"$(awk 'FNR == 1 { f++; next } NF != 5 { next } f == 1 { r[$1] = $4; w[$1] = $5; next }
			($1 in r) { dr += $4 - r[$1]; dw += $5 - w[$1] } END { print dr + 0, dw + 0 }' "$WORK/io_a.txt" "$WORK/io_b.txt")"
	fi
	inserted=$((n1 - n0))
	if [ "$BATCH" != 1 ]; then
		nnew=$((ntx * (BATCH - BATCH / 20)))
		ndup=$((ntx * (BATCH / 20)))
		late=$((late * BATCH))
	fi
	nrows=$((nnew + ndup))
	add() { csv_add "$CSV" unique 1 "$name" "$c" "$1" "$2"; }
	add index_mb_before "$(awk -v s="$size" 'BEGIN { printf "%.0f", s / 1048576 }')"
	add statements "$ntx"
	add rows_per_s "$(awk -v n="$nrows" -v t="$tmax" 'BEGIN { printf "%.0f", n / t }')"
	add rows_per_s_last_third "$(awk -v n="$late" -v t="$late_s" 'BEGIN { printf "%.0f", n / t }')"
	add p99_ms_last_third "$p99"
	add index_wal_bytes_per_row "$(awk -v w="${idx_wal:-0}" -v n="$nrows" 'BEGIN { printf "%.1f", w / n }')"
	add index_fpi_bytes_per_row "$(awk -v w="${idx_fpi:-0}" -v n="$nrows" 'BEGIN { printf "%.1f", w / n }')"
	add new_keys_sent "$nnew"
	add duplicates_sent "$ndup"
	add rows_inserted "$inserted"
	add duplicates_rejected "$((nrows - inserted))"
	add duplicates_inserted "$dup_in"
	[ "$inserted" = "$nnew" ] && [ "$dup_in" = 0 ] ||
		lsm_log "WARNING: $t: $nnew new keys sent, $inserted rows inserted, $dup_in duplicates inserted"
	if [ "$io_rows" != n/a ] && [ "$io_rows" -gt 0 ]; then
		add disk_read_bytes_per_row "$(awk -v b="$io_r" -v n="$io_rows" 'BEGIN { printf "%.0f", b / n }')"
		add disk_write_bytes_per_row "$(awk -v b="$io_w" -v n="$io_rows" 'BEGIN { printf "%.0f", b / n }')"
	fi
	if [ "$am" = lsm ]; then
		IFS='|' read -r lookups probes negatives fps pages <<<"$(q "SELECT lookups, filter_probes, filter_negatives, false_positives, data_pages_read FROM lsm_am.lookup_stats('${t}_u')")"
		add checks "$lookups"
		add run_pages_read_per_check "$(awk -v p="$pages" -v n="$lookups" 'BEGIN { printf "%.4f", n ? p / n : 0 }')"
		add filter_probes_per_check "$(awk -v p="$probes" -v n="$lookups" 'BEGIN { printf "%.2f", n ? p / n : 0 }')"
		add filter_false_positives "$fps"
		add runs "$(q "SELECT count(*) FROM lsm_am.index_info('${t}_u')")"
	fi
	add index_mb_after "$(q "SELECT round(pg_relation_size('${t}_u') / 1048576.0)")"
	[ -z "${BENCH_CGROUP:-}" ] ||
		add cgroup_peak_mb "$(awk -v p="$(bench_cgroup_peak)" 'BEGIN { if (p ~ /^[0-9]+$/) printf "%.0f", p / 1048576; else print "n/a" }')"
	lsm_log "$t, $BATCH rows per statement: $(awk -v n="$late" -v t="$late_s" 'BEGIN { printf "%.0f", n / t }') rows/s over the last third"
}

for variant in "${VARIANTS[@]}"; do
	IFS='|' read -r name am with <<<"$variant"
	id=${name//-/_}
	t="ev_$id"
	lsm_log "$t: preloading $ROWS random UUIDs, unique $am index${with:+ WITH ($with)}"
	q "CREATE TABLE $t (u uuid NOT NULL, v int NOT NULL);
	   INSERT INTO $t SELECT gen_random_uuid(), 0 FROM generate_series(1, $ROWS);
	   CREATE UNIQUE INDEX ${t}_u ON $t USING $am (u)${with:+ WITH ($with)};
	   CREATE TABLE dupkeys_$id AS SELECT row_number() OVER () AS i, u FROM (SELECT u FROM $t LIMIT 100000) s;
	   CREATE INDEX ON dupkeys_$id (i);" >/dev/null
	q "VACUUM ANALYZE $t" >/dev/null
	q "CHECKPOINT" >/dev/null
	for BATCH in "${BATCH_LIST[@]}"; do
		unique_run
	done
	q "DROP TABLE $t" >/dev/null
done

{
	echo "Unique index on random UUIDs: $ROWS rows preloaded, 2 clients x $DURATION s per batch size, INSERT ... ON CONFLICT (u) DO NOTHING, $BATCHES rows per statement, 5% duplicates"
	echo "(shared_buffers $BENCH_SHARED_BUFFERS, synchronous_commit off${CAP:+; the server in a $CAP MiB memory cap, page cache included (cgroup v$BENCH_CGROUP_VERSION)})"
	names=$(printf '%s\n' "${VARIANTS[@]}" | cut -d'|' -f1 | paste -sd' ')
	for BATCH in "${BATCH_LIST[@]}"; do
		echo
		echo "== $BATCH row(s) per statement"
		awk -F, -v names="$names" -v c="b$BATCH" 'NR > 1 && $4 == c { v[$5, $3] = $6; if (!($5 in seen)) { seen[$5] = 1; o[++m] = $5 } }
			END { nn = split(names, nm, " "); printf "%-28s", "metric"; for (j = 1; j <= nn; j++) printf " %14s", nm[j]; print ""
			      for (i = 1; i <= m; i++) { printf "%-28s", o[i]; for (j = 1; j <= nn; j++) printf " %14s", v[o[i], nm[j]]; print "" } }' "$CSV"
		val() { awk -F, -v n="$1" -v c="b$BATCH" -v m="$2" '$3 == n && $4 == c && $5 == m { print $6 }' "$CSV"; }
		b=$(val btree rows_per_s_last_third)
		bw=$(val btree index_wal_bytes_per_row)
		bp=$(val btree p99_ms_last_third)
		# the targets: issue 17's in memory; issue 31's in a memory cap
		wt=0.2
		[ -z "$CAP" ] || wt=0.333
		for name in $names; do
			[ "$name" != btree ] || continue
			l=$(val "$name" rows_per_s_last_third)
			lw=$(val "$name" index_wal_bytes_per_row)
			lp=$(val "$name" p99_ms_last_third)
			echo "$name: target rows/s last third >= 2x btree: $(ratio "$l" "$b")x ($(verdict "$(ratio "$l" "$b")" '>=' 2))"
			echo "$name: target index WAL per row <= $([ "$wt" = 0.2 ] && echo 1/5 || echo 1/3) of btree: $(ratio "$lw" "$bw" 3) ($(verdict "$(ratio "$lw" "$bw" 3)" '<=' "$wt"))"
			[ -z "$CAP" ] ||
				echo "$name: target p99 latency last third <= btree: $(ratio "$lp" "$bp" 2)x ($(verdict "$(ratio "$lp" "$bp" 2)" '<=' 1))"
		done
	done
	echo "results: $CSV"
} | tee "$OUT/unique_table.txt"
