# tests/lib.sh — shell functions shared by tests/setup.sh, tests/run_all.sh,
# bench/demo.sh and .ci/run.  Source it; it defines functions and variables
# and runs nothing.
#
# Everything that starts a PostgreSQL server runs as the unprivileged
# `postgres` user (the server refuses root), from a scratch directory that
# user owns, on a private Unix socket: nothing here touches a system cluster
# or port 5432.

LSM_REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# The Debian release and its own PostgreSQL: 12 (bookworm) packages 15, 13
# (trixie, in the chroot of tests/chroot.sh) packages 17.
LSM_DEB_CODENAME=$(. /etc/os-release 2>/dev/null && echo "${VERSION_CODENAME:-}")
case $LSM_DEB_CODENAME in
trixie) LSM_DEB_PG=17 ;;
*) LSM_DEB_PG=15 ;;
esac
# Build products of another Debian (the checkout is shared with the chroot)
# go to other directories: tests/unit/build-trixie, tests/fuzz/build-trixie.
if [ "$LSM_DEB_PG" = 15 ]; then LSM_BUILD_SUFFIX=; else LSM_BUILD_SUFFIX=-$LSM_DEB_CODENAME; fi
export LSM_BUILD_SUFFIX
# The Debian 13 chroot that PostgreSQL 17 is tested in (tests/chroot.sh).
LSM_PG17_CHROOT=${LSM_PG17_CHROOT:-trixie-pg17}
# The PostgreSQL to build against and test with: PG_CONFIG names it (the
# system's PostgreSQL 15 by default); every other path is derived from it.
# lsm_use_pg_config PATH switches to another installation (tests/run_all.sh
# --pg 18 does, with the build of tests/build_pg18.sh).
lsm_use_pg_config() {
	PG_CONFIG=$1
	if [ -x "$PG_CONFIG" ]; then
		PG_BINDIR=$("$PG_CONFIG" --bindir)
		PGXS_DIR=$(dirname "$("$PG_CONFIG" --pgxs)")
		PGXS_DIR=$(cd "$PGXS_DIR/../.." 2>/dev/null && pwd || echo "$PGXS_DIR/../..")
		PG_MAJOR=$("$PG_CONFIG" --version | sed -E 's/^PostgreSQL ([0-9]+).*/\1/')
	else
		# Not installed yet (a fresh machine before tests/setup.sh): Debian's
		# layout, .../postgresql/NN/bin/pg_config.
		PG_BINDIR=$(dirname "$PG_CONFIG")
		PGXS_DIR=$PG_BINDIR/../lib/pgxs
		PG_MAJOR=$(echo "$PG_CONFIG" | sed -nE 's|.*/postgresql/([0-9]+)/bin/pg_config$|\1|p')
	fi
	PG_TAP_PERL=$PGXS_DIR/src/test/perl
	PG_REGRESS=$PGXS_DIR/src/test/regress/pg_regress
	export PG_CONFIG
}
if [ -n "${PG_CONFIG:-}" ]; then
	lsm_use_pg_config "$PG_CONFIG"
elif [ -n "${PG_BINDIR:-}" ]; then
	lsm_use_pg_config "$PG_BINDIR/pg_config"
else
	lsm_use_pg_config "/usr/lib/postgresql/$LSM_DEB_PG/bin/pg_config"
fi
# The system's PostgreSQL (15 on Debian 12, 17 on Debian 13: LSM_DEB_PG) to
# test on and to pg_upgrade from: LSM_PG15_CONFIG (its name is older than
# the Debian 13 chroot), else PG_CONFIG when it names that version (a
# relocated copy), else the system's.
if [ -z "${LSM_PG15_CONFIG:-}" ]; then
	if [ "$PG_MAJOR" = "$LSM_DEB_PG" ]; then
		LSM_PG15_CONFIG=$PG_CONFIG
	else
		LSM_PG15_CONFIG=/usr/lib/postgresql/$LSM_DEB_PG/bin/pg_config
	fi
fi
export LSM_PG15_CONFIG
# Where tests/build_pg18.sh builds PostgreSQL 18 (LSM_PG18_CONFIG overrides).
LSM_PG18_CACHE=${LSM_PG18_CACHE:-/var/cache/lsm_am}
export LSM_PG18_CACHE

# lsm_select_pg VERSION SKIP_SETUP: switch to PostgreSQL VERSION (15, 17 or 18).
# 18 is built by tests/build_pg18.sh unless already built (with SKIP_SETUP=1
# an existing build is required).
lsm_select_pg() {
	local v=$1 skip=${2:-0} pgc start=$SECONDS
	case $v in
	15) lsm_use_pg_config "$LSM_PG15_CONFIG" ;;
	17)
		# Debian 13's own package: inside the chroot (tests/run_all.sh --pg 17
		# runs itself there)
		# (its first run there installs the packages first)
		if [ ! -x /usr/lib/postgresql/17/bin/pg_config ] && [ "$LSM_DEB_PG" = 17 ] && [ "$skip" != 1 ]; then
			ensure_packages >&2 || return 1
		fi
		[ -x /usr/lib/postgresql/17/bin/pg_config ] ||
			{ lsm_log "PostgreSQL 17 is tested inside the Debian 13 chroot (tests/run_all.sh --pg 17 goes there)"; return 1; }
		lsm_use_pg_config /usr/lib/postgresql/17/bin/pg_config
		;;
	18)
		if [ -n "${LSM_PG18_CONFIG:-}" ]; then
			lsm_use_pg_config "$LSM_PG18_CONFIG"
		elif [ "$skip" = 1 ] && [ -x "$LSM_PG18_CACHE/pg18/bin/pg_config" ]; then
			lsm_use_pg_config "$LSM_PG18_CACHE/pg18/bin/pg_config"
		else
			pgc=$(bash "$LSM_REPO/tests/build_pg18.sh" | tail -n 1) && [ -x "$pgc" ] ||
				{ lsm_log "building PostgreSQL 18 failed (tests/build_pg18.sh)"; return 1; }
			lsm_use_pg_config "$pgc"
			lsm_log "PostgreSQL 18 ready in $((SECONDS - start))s"
		fi
		;;
	*) lsm_log "unsupported PostgreSQL version '$v' (15, 17 or 18)"; return 1 ;;
	esac
	[ "$PG_MAJOR" = "$v" ] || { lsm_log "$PG_CONFIG is PostgreSQL $PG_MAJOR, not $v"; return 1; }
}
PG_USER=postgres

# Debian packages the build and every test stage need.
# (the Debian release's own PostgreSQL; clang with libFuzzer's runtime: 14
# on Debian 12, the default clang on 13)
LSM_PACKAGES=(
	"postgresql-$LSM_DEB_PG" "postgresql-server-dev-$LSM_DEB_PG" "postgresql-$LSM_DEB_PG-pgtap"
	libtap-parser-sourcehandler-pgtap-perl libipc-run-perl
	libxxhash-dev libgtest-dev g++ make locales ccache unzip
)
case $LSM_DEB_PG in
15) LSM_PACKAGES+=(clang-14 libclang-rt-14-dev) ;;
*) LSM_PACKAGES+=(clang libclang-rt-dev libicu-dev procps psmisc git) ;;
esac

# The libc locale the collation error test refuses (any non-C libc locale).
LSM_TEST_LIBC_LOCALE=en_US.UTF-8

lsm_log() { printf '==> %s\n' "$*" >&2; }
lsm_die() { printf 'ERROR: %s\n' "$*" >&2; exit 1; }

require_root() {
	[ "$(id -u)" -eq 0 ] || lsm_die "$(basename "$0") must run as root (it installs packages and the extension)"
}

# Install the Debian packages that are missing; do nothing when all are present.
ensure_packages() {
	local missing=() p
	for p in "${LSM_PACKAGES[@]}"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
			missing+=("$p")
	done
	if [ ${#missing[@]} -gt 0 ]; then
		lsm_log "installing packages: ${missing[*]}"
		export DEBIAN_FRONTEND=noninteractive
		apt-get update -qq
		# Keep the package from creating (and starting) a cluster on port 5432:
		# install postgresql-common first and turn create_main_cluster off.
		if ! dpkg-query -W -f='${Status}' postgresql-common 2>/dev/null | grep -q 'install ok installed'; then
			apt-get install -y -qq --no-install-recommends postgresql-common >/dev/null
		fi
		if [ -f /etc/postgresql-common/createcluster.conf ]; then
			sed -i 's/^#\?\s*create_main_cluster\s*=.*/create_main_cluster = false/' \
				/etc/postgresql-common/createcluster.conf
		fi
		apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
	fi
	id "$PG_USER" >/dev/null 2>&1 || lsm_die "user $PG_USER does not exist after package install"
	# A non-C libc locale, so the tests can check that lsm refuses it.
	if ! locale -a 2>/dev/null | grep -qi '^en_US\.utf-\?8$'; then
		lsm_log "generating locale $LSM_TEST_LIBC_LOCALE"
		localedef -i en_US -f UTF-8 en_US.UTF-8 || lsm_die "localedef en_US.UTF-8 failed"
	fi
}

# Build the extension and install it into the PostgreSQL of PG_CONFIG (as
# root).  Object files of a build against another PostgreSQL are cleaned
# first (.pg_build_stamp records which one they belong to).
build_and_install() {
	local stamp=$LSM_REPO/.pg_build_stamp want
	# (the Debian too: 18 has the same path in the Debian 13 chroot)
	want="$PG_CONFIG $("$PG_CONFIG" --version) ${LSM_DEB_CODENAME:-}"
	if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
		make -s -C "$LSM_REPO" clean PG_CONFIG="$PG_CONFIG" >&2 || return 1
	fi
	lsm_log "building lsm_am against $("$PG_CONFIG" --version)"
	make -s -C "$LSM_REPO" -j2 PG_CONFIG="$PG_CONFIG" >&2 || return 1
	echo "$want" >"$stamp"
	make -s -C "$LSM_REPO" install PG_CONFIG="$PG_CONFIG" >&2 || return 1
}

# Run a command as the postgres user with the PostgreSQL binaries first on PATH.
# Extra environment: pass VAR=value words before the command, as with env(1).
as_pg() {
	runuser -u "$PG_USER" -- env PATH="$PG_BINDIR:/usr/local/bin:/usr/bin:/bin" \
		HOME="${PG_HOME:-/tmp}" LANG=C.UTF-8 LC_ALL= "$@"
}

# Make a fresh directory owned by postgres and print its path.
make_scratch_dir() {
	local d
	d=$(mktemp -d "${TMPDIR:-/tmp}/lsm_am.${1:-scratch}.XXXXXX") || return 1
	chown "$PG_USER:" "$d"
	chmod 755 "$d"
	printf '%s\n' "$d"
}

# Copy the repository's test material (no build products) into a scratch dir.
copy_tests_to() {
	local dest=$1
	tar -C "$LSM_REPO" -cf - --exclude=.git --exclude='*.o' --exclude='*.so' \
		--exclude='*.bc' --exclude=tmp_check --exclude=regress_out --exclude='tests/unit/build*' --exclude='tests/fuzz/build*' \
		sql expected tests bench 2>/dev/null | tar -C "$dest" -xf -
	chown -R "$PG_USER:" "$dest"
}

# A port number for a private cluster.  It only names the socket file inside
# the cluster's own directory (listen_addresses is empty), so it cannot clash.
pick_port() {
	echo $((50000 + RANDOM % 10000))
}

# cluster_start DIR [PORT] [extra postgresql.conf lines...]
# initdb DIR/data (UTF8, C.UTF-8), preload lsm_am, listen only on a socket in
# DIR, start.  Sets CLUSTER_DIR, CLUSTER_PORT, PGHOST, PGPORT.
cluster_start() {
	local dir=$1 port=${2:-$(pick_port)}
	shift 2 || shift $#
	CLUSTER_DIR=$dir
	CLUSTER_PORT=$port
	as_pg initdb -D "$dir/data" -E UTF8 --locale=C.UTF-8 -U "$PG_USER" \
		--auth=trust -N >"$dir/initdb.log" 2>&1 ||
		{ cat "$dir/initdb.log" >&2; return 1; }
	{
		echo "# added by tests/lib.sh"
		echo "port = $port"
		echo "listen_addresses = ''"
		echo "unix_socket_directories = '$dir'"
		echo "shared_preload_libraries = 'lsm_am'"
		echo "fsync = off"
		echo "max_connections = 50"
		echo "log_min_messages = warning"
		echo "lc_messages = 'C'"
		local line
		for line in "$@"; do echo "$line"; done
	} >>"$dir/data/postgresql.conf"
	chown "$PG_USER:" "$dir/data/postgresql.conf"
	cluster_pg_start "$dir" || return 1
	export PGHOST=$dir PGPORT=$port
}

# cluster_pg_start DIR: start the cluster in DIR/data (initialized).  With
# LSM_CLUSTER_CGROUP_PROCS set (a cgroup's cgroup.procs file), the server
# starts inside that cgroup: a subshell joins it and pg_ctl inherits it, and
# so do the postmaster and every process it forks (bench/common.sh,
# bench_cgroup_make: a memory cap).
cluster_pg_start() {
	local dir=$1
	(
		if [ -n "${LSM_CLUSTER_CGROUP_PROCS:-}" ]; then
			echo "$BASHPID" >"$LSM_CLUSTER_CGROUP_PROCS" ||
				{ echo "cannot join the cgroup of $LSM_CLUSTER_CGROUP_PROCS" >&2; exit 1; }
		fi
		as_pg pg_ctl -D "$dir/data" -l "$dir/server.log" -w -t 300 start >/dev/null
	) || { tail -n 50 "$dir/server.log" >&2; return 1; }
}

# cluster_stop DIR: fast shutdown if running (quiet when it is not).
cluster_stop() {
	local dir=${1:-$CLUSTER_DIR}
	[ -n "$dir" ] && [ -f "$dir/data/postmaster.pid" ] || return 0
	as_pg pg_ctl -D "$dir/data" -m fast -w -t 60 stop >/dev/null 2>&1 ||
		as_pg pg_ctl -D "$dir/data" -m immediate -w stop >/dev/null 2>&1 || true
}

# psql as postgres against the current cluster; extra args go to psql.
pg_psql() {
	as_pg PGHOST="$PGHOST" PGPORT="$PGPORT" psql -X -v ON_ERROR_STOP=1 "$@"
}
