# bench/common.sh — helpers shared by the benchmark scripts (acme.sh,
# ingest.sh, build.sh, run.sh).  Source it; it sources tests/lib.sh (cluster
# helpers) and defines functions only.
#
# Conventions
# - Every measurement is appended to a long-format CSV:
#     part,run,am,case,metric,value
#   (part = acme|ingest|reads|build; case = batch, key kind or query).
# - Medians over runs are computed from that file by bench_median_csv.
# - Results go to bench/results/<stamp>/ (git-ignored), overridable by --out.

# shellcheck source=../tests/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../tests/lib.sh"

BENCH_DIR=$LSM_REPO/bench

# The benchmark clusters' common settings.  shared_buffers is small on
# purpose: "an index several times shared_buffers" must be reachable in
# minutes on a 2-core machine.
BENCH_SHARED_BUFFERS=${BENCH_SHARED_BUFFERS:-128MB}

bench_results_dir() { # bench_results_dir [DIR]: make (and print) the results directory
	local d=${1:-}
	[ -n "$d" ] || d=$BENCH_DIR/results/$(date -u +%Y%m%d-%H%M%S)
	mkdir -p "$d" || lsm_die "cannot create results directory $d"
	(cd "$d" && pwd)
}

# bench_cluster NAME [extra postgresql.conf lines...]: start a throwaway
# cluster (as postgres, private socket) and remove it on exit.  Sets
# BENCH_SCRATCH, BENCH_DATADIR, PGHOST, PGPORT.
bench_cluster() {
	local name=$1
	shift
	BENCH_SCRATCH=$(make_scratch_dir "bench_$name") || lsm_die "cannot create a scratch directory"
	BENCH_DATADIR=$BENCH_SCRATCH/data
	# shellcheck disable=SC2064
	trap "bench_cleanup" EXIT
	trap 'exit 130' INT TERM
	lsm_log "starting a throwaway cluster in $BENCH_SCRATCH"
	BENCH_SO_AT_START=$(lsm_so_id)
	cluster_start "$BENCH_SCRATCH" "$(pick_port)" "shared_buffers = '$BENCH_SHARED_BUFFERS'" \
		"max_parallel_workers_per_gather = 0" "client_min_messages = warning" "$@" ||
		lsm_die "the benchmark cluster did not start (log above)"
}

# lsm_so_id: identity of the installed lsm_am.so (md5 prefix and mtime).  The
# cluster loads it once at start (shared_preload_libraries), so a reinstall
# during a run does not change the code under test; bench_machine warns if it
# happened anyway, since the next part's cluster would load the new build.
lsm_so_id() {
	local so
	so=$("$PG_CONFIG" --pkglibdir)/lsm_am.so
	[ -f "$so" ] || { echo "not installed"; return; }
	echo "md5 $(md5sum "$so" | cut -c1-12), installed $(date -u -r "$so" '+%Y-%m-%d %H:%M:%S UTC')"
}

bench_cleanup() {
	local rc=$?
	if [ -n "${BENCH_BG_PIDS:-}" ]; then
		local p
		for p in $BENCH_BG_PIDS; do kill "$p" 2>/dev/null || true; done
	fi
	if [ -n "${BENCH_SCRATCH:-}" ] && [ -d "$BENCH_SCRATCH" ]; then
		cluster_stop "$BENCH_SCRATCH"
		if [ "$rc" -ne 0 ] && [ -f "$BENCH_SCRATCH/server.log" ]; then
			echo "---- last lines of the server log ($BENCH_SCRATCH/server.log)" >&2
			tail -n 20 "$BENCH_SCRATCH/server.log" >&2 || true
		fi
		rm -rf "$BENCH_SCRATCH"
	fi
	bench_cgroup_remove
	exit "$rc"
}

bench_proc_snap() { # the benchmark cluster's processes' CPU ticks (utime + stime) and disk bytes read and written: "pid group ticks rbytes wbytes", then "machine idle total"
	local pm pid args g
	pm=$(head -n1 "$BENCH_DATADIR/postmaster.pid")
	for pid in $(ps --ppid "$pm" -o pid=); do
		args=$(ps -o args= -p "$pid" 2>/dev/null) || continue
		case $args in
		*"lsm_am worker"*) g=workers ;;
		*"[local]"* | *"127.0.0.1"*) g=clients ;;
		*) g=server ;;
		esac
		awk -v p="$pid" -v g="$g" '
			FILENAME ~ /stat$/ { sub(/^.*\) /, ""); t = $12 + $13; next }
			$1 == "read_bytes:" { r = $2 } $1 == "write_bytes:" { w = $2 }
			END { if (t != "") print p, g, t, r + 0, w + 0 }' "/proc/$pid/stat" "/proc/$pid/io" 2>/dev/null || true
	done
	awk '$1 == "cpu" { t = 0; for (i = 2; i <= NF; i++) t += $i; print "machine", $5 + $6, t }' /proc/stat
}

# ------------------------------------------------------------ memory caps
# bench_cgroup_make NAME MIB: a memory cgroup that caps its processes at MIB
# MiB, page cache included (cgroup v1: memory.limit_in_bytes under
# /sys/fs/cgroup/memory; v2: memory.max, swap off, under /sys/fs/cgroup with
# the memory controller enabled for children).  Sets BENCH_CGROUP (its
# directory), BENCH_CGROUP_VERSION, and LSM_CLUSTER_CGROUP_PROCS, so that
# cluster_start / cluster_pg_start start the server inside it.  Returns 1
# with the reason in BENCH_CGROUP_WHY when no cgroup can be made here.
bench_cgroup_make() {
	local name=$1 mib=$2 root bytes
	bytes=$((mib * 1048576))
	BENCH_CGROUP= BENCH_CGROUP_WHY=
	if [ "$(stat -fc %T /sys/fs/cgroup 2>/dev/null)" = cgroup2fs ]; then
		root=/sys/fs/cgroup
		BENCH_CGROUP_VERSION=2
		grep -qw memory "$root/cgroup.controllers" 2>/dev/null ||
			{ BENCH_CGROUP_WHY="cgroup v2 without the memory controller"; return 1; }
		grep -qw memory "$root/cgroup.subtree_control" 2>/dev/null ||
			echo +memory >"$root/cgroup.subtree_control" 2>/dev/null ||
			{ BENCH_CGROUP_WHY="cannot enable the memory controller in $root/cgroup.subtree_control"; return 1; }
		BENCH_CGROUP=$root/lsm_bench_${name}_$$
		mkdir "$BENCH_CGROUP" 2>/dev/null && echo "$bytes" >"$BENCH_CGROUP/memory.max" 2>/dev/null ||
			{ BENCH_CGROUP_WHY="$root is not writable"; rmdir "$BENCH_CGROUP" 2>/dev/null; BENCH_CGROUP=; return 1; }
		[ ! -f "$BENCH_CGROUP/memory.swap.max" ] || echo 0 >"$BENCH_CGROUP/memory.swap.max" 2>/dev/null || true
	elif [ -d /sys/fs/cgroup/memory ]; then
		root=/sys/fs/cgroup/memory
		BENCH_CGROUP_VERSION=1
		BENCH_CGROUP=$root/lsm_bench_${name}_$$
		mkdir "$BENCH_CGROUP" 2>/dev/null && echo "$bytes" >"$BENCH_CGROUP/memory.limit_in_bytes" 2>/dev/null ||
			{ BENCH_CGROUP_WHY="$root is not writable"; rmdir "$BENCH_CGROUP" 2>/dev/null; BENCH_CGROUP=; return 1; }
		# no swap either, where the kernel accounts it
		[ ! -f "$BENCH_CGROUP/memory.memsw.limit_in_bytes" ] ||
			echo "$bytes" >"$BENCH_CGROUP/memory.memsw.limit_in_bytes" 2>/dev/null || true
	else
		BENCH_CGROUP_WHY="no cgroup file system at /sys/fs/cgroup (neither v2 nor v1's memory controller)"
		return 1
	fi
	[ "$(bench_cgroup_limit)" -le "$bytes" ] ||
		{ BENCH_CGROUP_WHY="the cap did not take ($(bench_cgroup_limit) bytes)"; bench_cgroup_remove; return 1; }
	export LSM_CLUSTER_CGROUP_PROCS=$BENCH_CGROUP/cgroup.procs
	# removed on any exit from here on, also before bench_cluster sets
	# the same trap (a missing TMPDIR used to leave the group behind)
	trap "bench_cleanup" EXIT
	trap 'exit 130' INT TERM
}

bench_cgroup_file() { # bench_cgroup_file V1NAME V2NAME: the file's content
	if [ "$BENCH_CGROUP_VERSION" = 2 ]; then cat "$BENCH_CGROUP/$2"; else cat "$BENCH_CGROUP/$1"; fi
}
bench_cgroup_limit() { bench_cgroup_file memory.limit_in_bytes memory.max; }
# the most bytes in use (processes and page cache) since the last reset
bench_cgroup_peak() {
	if [ "$BENCH_CGROUP_VERSION" = 2 ]; then
		cat "$BENCH_CGROUP/memory.peak" 2>/dev/null || echo n/a
	else
		cat "$BENCH_CGROUP/memory.max_usage_in_bytes"
	fi
}
bench_cgroup_peak_reset() {
	if [ "$BENCH_CGROUP_VERSION" = 2 ]; then
		echo 0 >"$BENCH_CGROUP/memory.peak" 2>/dev/null || true # 6.12 and later
	else
		echo 0 >"$BENCH_CGROUP/memory.max_usage_in_bytes" 2>/dev/null || true
	fi
}

# bench_cgroup_drop_cache: evict the cgroup's page cache (call with the
# server stopped: a cold start).  v1: memory.force_empty; v2: memory.reclaim.
bench_cgroup_drop_cache() {
	[ -n "${BENCH_CGROUP:-}" ] || return 0
	if [ "$BENCH_CGROUP_VERSION" = 2 ]; then
		echo "$(bench_cgroup_limit)" >"$BENCH_CGROUP/memory.reclaim" 2>/dev/null || true
	else
		echo 0 >"$BENCH_CGROUP/memory.force_empty" 2>/dev/null || true
	fi
}

# bench_cgroup_remove: remove the cgroup (its processes gone).
bench_cgroup_remove() {
	[ -n "${BENCH_CGROUP:-}" ] && [ -d "$BENCH_CGROUP" ] || return 0
	bench_cgroup_drop_cache
	rmdir "$BENCH_CGROUP" 2>/dev/null || lsm_log "WARNING: could not remove the cgroup $BENCH_CGROUP"
	BENCH_CGROUP=
	unset LSM_CLUSTER_CGROUP_PROCS
}

# bench_restart [cold]: stop the benchmark cluster and start it again (in its
# cgroup, if any); "cold" first evicts the cgroup's page cache.
bench_restart() {
	cluster_stop "$BENCH_SCRATCH"
	[ "${1:-}" != cold ] || bench_cgroup_drop_cache
	cluster_pg_start "$BENCH_SCRATCH" || lsm_die "the benchmark cluster did not restart (log above)"
}

# q SQL [psql args]: one query in database $BENCH_DB (default postgres), unaligned.
q() {
	local sql=$1
	shift
	pg_psql -d "${BENCH_DB:-postgres}" -qAt "$@" -c "$sql"
}

# Load the Acme Shop sample (bench/acme_data.sql) into the current database
# and print its fingerprint (identical on every run: the generator is
# deterministic).
bench_load_acme() {
	local t0 t1
	t0=$(date +%s.%N)
	pg_psql -d "${BENCH_DB:-postgres}" -q -f "$BENCH_DIR/acme_data.sql" >/dev/null ||
		lsm_die "bench/acme_data.sql failed"
	t1=$(date +%s.%N)
	ACME_FINGERPRINT=$(q "SET TimeZone = 'UTC';
		SELECT count(*) || ' rows, md5 ' || md5(string_agg(id || ':' || order_id || ':' || kind || ':' || happened_at, ',' ORDER BY id))
		  FROM order_events" | tail -n1)
	lsm_log "order_events generated in $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }') s: $ACME_FINGERPRINT"
}

# relspec REL: the "tablespace/database/relfilenode" triple pg_waldump's
# --relation wants, for a relation in the default tablespace.
relspec() {
	local path
	path=$(q "SELECT pg_relation_filepath('$1')")
	case $path in
	base/*/*) echo "1663/$(echo "$path" | cut -d/ -f2)/$(echo "$path" | cut -d/ -f3)" ;;
	*) lsm_die "relation $1 is not in the default tablespace ($path)" ;;
	esac
}

# waldump_rel START_LSN END_LSN RELSPEC: "records fpi bytes" of the WAL
# records between the two LSNs that touch a block of that relation.  bytes is
# the records' total length (record + full-page images), as pg_waldump's
# "len (rec/tot)" reports it.  The WAL must still be in pg_wal.
waldump_rel() {
	local start=$1 end=$2 rel=$3
	if [ "$start" = "$end" ]; then
		echo "0 0 0"
		return
	fi
	as_pg pg_waldump -p "$BENCH_DATADIR/pg_wal" -s "$start" -e "$end" --relation="$rel" 2>/dev/null |
		awk '/^rmgr:/ {
		       n++
		       if (match($0, /len \(rec\/tot\): *[0-9]+\/ *[0-9]+/)) {
		         s = substr($0, RSTART, RLENGTH); sub(/.*\/ */, "", s); tot += s
		       }
		       f += gsub(/ FPW/, "")
		     }
		     END { printf "%d %d %d\n", n, f, tot }'
}

# wal_lsn: the WAL position up to which everything is on disk (after a commit,
# everything the transaction wrote).
wal_lsn() { q "SELECT pg_current_wal_flush_lsn()"; }
wal_diff() { q "SELECT pg_wal_lsn_diff('$2', '$1')::bigint"; }

# lsm_workers: lsm_am.max_workers of the server (0: no background workers,
# backends flush and merge themselves; workers exit when idle, so counting
# live ones would not tell).
lsm_workers() {
	local n
	n=$(q "SELECT coalesce(current_setting('lsm_am.max_workers', true), '0')")
	echo "${n:-0}"
}

# bg_wal_until_idle START_LSN RELSPEC: the WAL an lsm background worker writes
# for the index after a statement ended, until it is idle.  Prints
# "records fpi bytes seconds", or "n/a" when the server runs no lsm worker
# (lsm_am.max_workers = 0: flushes and merges run in the inserting backend and
# are included in the statement's figures).  Idle = the cluster's WAL insert position has not
# moved for 3 s (autovacuum is off in the benchmark clusters); at most 300 s.
bg_wal_until_idle() {
	local start=$1 rel=$2
	if [ "$(lsm_workers)" = 0 ]; then
		echo "n/a"
		return
	fi
	local last cur still=0 waited=0
	last=$(q "SELECT pg_current_wal_insert_lsn()")
	while [ "$still" -lt 3 ] && [ "$waited" -lt 300 ]; do
		sleep 1
		waited=$((waited + 1))
		cur=$(q "SELECT pg_current_wal_insert_lsn()")
		if [ "$cur" = "$last" ]; then still=$((still + 1)); else still=0; last=$cur; fi
	done
	q "SELECT pg_switch_wal()" >/dev/null # make the last record readable
	echo "$(waldump_rel "$start" "$(wal_lsn)" "$rel") $((waited - still))"
}

# explain_wal PLAN: "records fpi bytes exec_ms" from the top node's WAL line of
# EXPLAIN (ANALYZE, WAL) output.
explain_wal() {
	local plan=$1 wal recs fpi bytes ms
	wal=$(grep -m1 'WAL:' <<<"$plan" || true)
	recs=$(grep -o 'records=[0-9]*' <<<"$wal" | cut -d= -f2 || true)
	fpi=$(grep -o 'fpi=[0-9]*' <<<"$wal" | cut -d= -f2 || true)
	bytes=$(grep -o 'bytes=[0-9]*' <<<"$wal" | cut -d= -f2 || true)
	ms=$(grep -o 'Execution Time: [0-9.]*' <<<"$plan" | awk '{ print $3 }' || true)
	echo "${recs:-0} ${fpi:-0} ${bytes:-0} ${ms:-0}"
}

# explain_buffers PLAN: total shared buffers (hit + read) of the top node.
explain_buffers() {
	grep -m1 'Buffers:' <<<"$1" | awk '{
		t = 0
		for (i = 1; i <= NF; i++) if ($i ~ /^(hit|read)=/) { split($i, a, "="); t += a[2] }
		print t }'
}

# csv_init FILE: start a long-format CSV with its header.
csv_init() { echo "part,run,am,case,metric,value" >"$1"; }

# csv_add FILE part run am case metric value
csv_add() {
	local f=$1
	shift
	[ -s "$f" ] || csv_init "$f"
	local IFS=,
	echo "$*" >>"$f"
}

# bench_median_csv RAW OUT: median of every (part, am, case, metric) over
# runs; non-numeric values keep the first run's value.
bench_median_csv() {
	awk -F, 'NR == 1 { next }
		{ k = $1 "," $3 "," $4 "," $5
		  if (!(k in n)) { order[++m] = k }
		  v[k, ++n[k]] = $6
		  if ($6 !~ /^-?[0-9.]+([eE][-+]?[0-9]+)?$/ && !(k in txt)) txt[k] = $6 }
		END {
		  print "part,am,case,metric,value,runs"
		  for (i = 1; i <= m; i++) {
		    k = order[i]; c = n[k]
		    if (k in txt) { print k "," txt[k] "," c; continue }
		    for (a = 1; a <= c; a++) s[a] = v[k, a] + 0
		    for (a = 2; a <= c; a++) { x = s[a]; b = a - 1; while (b > 0 && s[b] > x) { s[b + 1] = s[b]; b-- } s[b + 1] = x }
		    med = (c % 2) ? s[(c + 1) / 2] : (s[c / 2] + s[c / 2 + 1]) / 2
		    printf "%s,%.10g,%d\n", k, med, c
		  }
		}' "$1" >"$2"
}

# med FILE part am case metric: one value from a medians file ("-" if absent).
med() {
	awk -F, -v p="$2" -v a="$3" -v c="$4" -v m="$5" \
		'$1 == p && $2 == a && $3 == c && $4 == m { print $5; f = 1; exit } END { if (!f) print "-" }' "$1"
}

# ratio A B [digits]: A/B, or "-".
ratio() {
	awk -v a="$1" -v b="$2" -v d="${3:-2}" 'BEGIN {
		if (a ~ /^-?[0-9.]+([eE][-+]?[0-9]+)?$/ && b ~ /^-?[0-9.]+([eE][-+]?[0-9]+)?$/ && b + 0 != 0)
			printf "%.*f", d, a / b
		else print "-" }'
}

# fmt_int N: thousands separators; non-numbers unchanged.
fmt_int() {
	awk -v x="$1" 'BEGIN {
		if (x !~ /^-?[0-9.]+([eE][-+]?[0-9]+)?$/) { print x; exit }
		s = sprintf("%.0f", x); neg = ""
		if (substr(s, 1, 1) == "-") { neg = "-"; s = substr(s, 2) }
		r = ""
		while (length(s) > 3) { r = "," substr(s, length(s) - 2) r; s = substr(s, 1, length(s) - 3) }
		print neg s r }'
}

# fmt_num N [digits]
fmt_num() {
	awk -v x="$1" -v d="${2:-1}" 'BEGIN {
		if (x ~ /^-?[0-9.]+([eE][-+]?[0-9]+)?$/) printf "%.*f\n", d, x; else print x }'
}

# verdict VALUE OP LIMIT: "hit" or "missed" (OP is <= or >=).
verdict() {
	awk -v v="$1" -v op="$2" -v l="$3" 'BEGIN {
		if (v !~ /^-?[0-9.]+([eE][-+]?[0-9]+)?$/) { print "n/a"; exit }
		ok = (op == "<=") ? (v + 0 <= l + 0) : (v + 0 >= l + 0)
		print ok ? "hit" : "missed" }'
}

# bench_machine [FILE]: machine and software details (printed with results).
bench_machine() {
	local cpu mem commit dirty pgv
	cpu=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo 2>/dev/null || echo unknown)
	mem=$(awk '/^MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo 2>/dev/null || echo unknown)
	commit=$(git -C "$LSM_REPO" rev-parse --short HEAD 2>/dev/null || echo unknown)
	dirty=$(git -C "$LSM_REPO" status --porcelain --untracked-files=no 2>/dev/null | grep -q . && echo "+uncommitted changes" || true)
	pgv=$("$PG_BINDIR/postgres" --version 2>/dev/null || echo unknown)
	{
		echo "machine:    $(uname -srm), $(nproc) cores ($cpu), $mem RAM"
		echo "load:       $(cut -d' ' -f1-3 /proc/loadavg) (1/5/15 min load average at the end; other jobs share this machine)"
		echo "software:   $pgv; lsm_am.so loaded at cluster start: ${BENCH_SO_AT_START:-$(lsm_so_id)}"
		[ -z "${BENCH_BUILD_INFO:-}" ] || echo "build:      $BENCH_BUILD_INFO"
		[ -z "${BENCH_SO_AT_START:-}" ] || [ "$BENCH_SO_AT_START" = "$(lsm_so_id)" ] ||
			echo "WARNING:    lsm_am.so was reinstalled during this part (now $(lsm_so_id)); this part ran the build loaded at its start"
		echo "repository: lsm_am $commit$dirty at the end of this part"
		echo "cluster:    shared_buffers=$BENCH_SHARED_BUFFERS, fsync=off, autovacuum=off, max_parallel_workers_per_gather=0, full_page_writes=on, data checksums $(q "SHOW data_checksums" 2>/dev/null || echo "? (initdb default: off on 15, on on 18)")"
		echo "date:       $(date -u '+%Y-%m-%d %H:%M UTC')"
	} | tee ${1:+-a "$1"}
}
