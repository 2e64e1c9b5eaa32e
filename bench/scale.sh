#!/usr/bin/env bash
# bench/scale.sh — beyond memory: sustained ingest and reads with the server
# capped well below the size of its indexes (issue 31), btree vs lsm, next to
# the table without an index (the ceiling).
#
#   bash bench/scale.sh [--quick] [--cap MIB] [--minutes M] [--only headline|others|unique]
#                       [--out DIR]                                    (as root)
#
# Every part runs bench/ingest.sh on a throwaway server inside a memory
# cgroup (--cap, default 512 MiB, shared_buffers 128MB inside it; page cache
# included; cgroup v1 or v2).  Where no cgroup is writable (a container
# without one, say) it says why and exits 0, measuring nothing.  Each
# indexed table is first preloaded with random keys so that a freshly built
# btree is 4 times the cap (for 512 MiB: 96M int8 or 69M UUID keys; the
# int8 table is then 3.3 GB), the index is built, and 2 clients insert
# 1,000-row batches of random keys over several checkpoint cycles
# (checkpoint_timeout 5min, max_wal_size 1GB).  Then the reads of the same
# regime, right after the ingest and after a restart with the page cache
# evicted: point lookups of existing and missing keys, 1,000-row ranges and
# ORDER BY k LIMIT 10, with the pages and bytes each read from disk.
#
#   headline  random int8: no index, btree, lsm (leveled, the default),
#             M minutes each (--minutes, default 20), but the table without
#             an index 3 minutes: it appends up to 2M rows/s (70 MB/s of
#             heap), 20 minutes of which would need 80 GB of disk; 3 minutes
#             still span a dozen checkpoints (max_wal_size 1GB)
#   others    random UUID: no index, btree, lsm; random int8: lsm tiered and
#             lsm lazy; 5 minutes each
#   unique    a unique index of random UUIDs (bench/unique.sh --cap): INSERT
#             ... ON CONFLICT DO NOTHING with 5% duplicates, 1 then 100 rows
#             per statement, 5 minutes each, btree and lsm, the table
#             preloaded with 69M rows (a unique btree 4x the cap)
#   --quick   a first look in about a quarter of an hour: the headline with
#             a 256 MiB cap (shared_buffers 64MB), 100 s per variant
#
# Reported (bench/ingest.sh's tables, one directory per part under the
# results directory, with its plots when gnuplot is installed): rows/s over
# time and over the last third, p50/p99 latency, WAL and index WAL per row,
# disk bytes read and written per row, stalls, CPU per row, the index file
# over time and against its live data (lsm), the cgroup's peak memory; the
# reads' latencies, pages and bytes read per statement, warm and cold; and
# the issue's targets (reported, not asserted): lsm >= 10x btree's rows/s,
# p99 <= btree's, the index's disk writes per row <= 1/3 of btree's, a point
# lookup's pages read <= btree's + 0.5, ranges and ORDER BY LIMIT <= 1.5x
# btree's time, the file <= 1.5x its live data.
#
# The full run takes about 2.5 hours on the 2-core machine (the headline
# took 54 minutes on 2026-12-05).  Keep the machine otherwise idle: the figures are rates.
set -euo pipefail
# the caller's shared_buffers, if any: common.sh sets its own default (128MB),
# which --quick replaces with 64MB (until 2026-12-07 it did not: quick runs
# had 128MB in the 256 MiB cap)
SCALE_SHARED_BUFFERS=${BENCH_SHARED_BUFFERS:-}
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"

QUICK=0
CAP=
MINUTES=20
ONLY=
OUT=
while [ $# -gt 0 ]; do
	case $1 in
	--quick) QUICK=1; shift ;;
	--cap) CAP=${2:?}; shift 2 ;;
	--minutes) MINUTES=${2:?}; shift 2 ;;
	--only) ONLY=${2:?}; shift 2 ;;
	--out) OUT=${2:?}; shift 2 ;;
	-h | --help) sed -n '2,/^set /{/^#/p}' "$0"; exit 0 ;;
	*) lsm_die "scale.sh: unknown argument $1 (try --help)" ;;
	esac
done
[[ $MINUTES =~ ^[1-9][0-9]*$ ]] || lsm_die "--minutes takes a positive integer"
[ -z "$CAP" ] || [[ $CAP =~ ^[1-9][0-9]*$ ]] || lsm_die "--cap takes a positive number of MiB"
case $ONLY in '' | headline | others | unique) ;; *) lsm_die "--only takes headline, others or unique" ;; esac
require_root

# a cgroup to be had? (ingest.sh checks again and makes its own)
bench_cgroup_make probe 64 || {
	lsm_log "no memory cap to be had here ($BENCH_CGROUP_WHY): nothing measured"
	exit 0
}
bench_cgroup_remove

OUT=$(bench_results_dir "$OUT")
part() { # part NAME ingest.sh args...
	local name=$1 t0=$SECONDS
	shift
	lsm_log "scale: part $name"
	bash "$BENCH_DIR/ingest.sh" --cap "$CAP" --preload 4 --cold-reads --read-reps 3 \
		--read-seconds 5 --out "$OUT/$name" "$@"
	lsm_log "scale: part $name took $(((SECONDS - t0) / 60)) min"
	if command -v gnuplot >/dev/null; then
		bash "$BENCH_DIR/plot.sh" "$OUT/$name" 2> >(grep -v 'empty x range' >&2) || lsm_log "WARNING: plotting failed"
	fi
}

if [ "$QUICK" = 1 ]; then
	CAP=${CAP:-256}
	BENCH_SHARED_BUFFERS=${SCALE_SHARED_BUFFERS:-64MB} part quick \
		--keys rand-int8 --variants noindex,btree,lsm --duration 100
else
	CAP=${CAP:-512}
	[ -n "$ONLY" ] && [ "$ONLY" != headline ] ||
		part headline --keys rand-int8 --variants noindex,btree,lsm --duration $((MINUTES * 60)) --ceiling-seconds 180
	if [ -z "$ONLY" ] || [ "$ONLY" = others ]; then
		part uuid --keys rand-uuid --variants noindex,btree,lsm --duration 300 --ceiling-seconds 180
		part policies --keys rand-int8 --variants lsm-tiered,lsm-lazy --duration 300
	fi
	if [ -z "$ONLY" ] || [ "$ONLY" = unique ]; then
		t0=$SECONDS
		lsm_log "scale: part unique"
		bash "$BENCH_DIR/unique.sh" --cap "$CAP" --out "$OUT/unique"
		lsm_log "scale: part unique took $(((SECONDS - t0) / 60)) min"
	fi
fi
# every part's tables in one file
for d in quick headline uuid policies; do
	[ ! -f "$OUT/$d/ingest_table.txt" ] || { echo "== beyond memory: part $d"; cat "$OUT/$d/ingest_table.txt"; }
done >"$OUT/scale_table.txt"
[ ! -f "$OUT/unique/unique_table.txt" ] ||
	{ echo "== beyond memory: part unique"; cat "$OUT/unique/unique_table.txt"; } >>"$OUT/scale_table.txt"
lsm_log "scale: results in $OUT (scale_table.txt; each part's CSV files and plots in its directory)"
