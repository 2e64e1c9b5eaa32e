#!/usr/bin/env bash
# tests/chroot.sh — Debian chroots for testing lsm_am on a PostgreSQL that
# this machine's Debian does not package (17, as Debian 13 ships it) and for
# building and installing the Debian packages on a clean system.  Run as
# root.  A chroot is made once with debootstrap from Debian's archive (the
# URI in the machine's own apt configuration) and kept in
# $LSM_PG18_CACHE/chroot/NAME; its packages stay installed between runs.
#
#   bash tests/chroot.sh ensure NAME [SUITE]   # make NAME (default suite: trixie); print its root
#   bash tests/chroot.sh fresh NAME [SUITE]    # NAME made anew from the suite's base copy
#   bash tests/chroot.sh clone FROM NAME       # NAME made anew as a copy of chroot FROM
#   bash tests/chroot.sh run NAME CMD [ARG...] # CMD inside NAME (see below)
#   bash tests/chroot.sh remove NAME           # delete NAME
#
# `run` gives CMD a mount namespace of its own: /proc, /sys, /dev, a private
# /dev/shm, and the checkout bind-mounted at the same path as outside, so
# "$LSM_REPO/tests/run_all.sh" means the same file in and out.  The mounts
# go away with the command.  CMD sees a clean environment (PATH, HOME, LANG
# and the LSM_*, PG_TEST_*, CI variables of the caller); TMPDIR is the
# chroot's /tmp.  The chroot's postgres user is its own, made by its
# postgresql-common.  No service starts inside (policy-rc.d), and its
# postgresql-common makes no cluster.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

CHROOTS=${LSM_CHROOT_DIR:-$LSM_PG18_CACHE/chroot}

usage() { sed -n '2,22p' "$0" >&2; exit 2; }

# The main archive URI of the machine's apt configuration (deb822 .sources
# or a sources.list line), as tests/build_pg18.sh finds it.
archive_uri() {
	local f
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] || continue
		awk 'BEGIN{RS="";FS="\n"} { t="";u=""
			for(i=1;i<=NF;i++){ if($i ~ /^Types:/) t=$i; if($i ~ /^URIs:/){ u=$i; sub(/^URIs:[ \t]*/,"",u) } }
			if (t ~ /deb/ && u != "") { n=split(u,a," "); for(j=1;j<=n;j++) print a[j] } }' "$f"
	done
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -f "$f" ] || continue
		awk '$1=="deb" { for(i=2;i<=NF;i++) if ($i ~ /^(http|https|ftp|file):/) { print $i; break } }' "$f"
	done
}

main_archive() {
	archive_uri | grep -v -e security -e updates -e nodesource -e google | head -n 1
}

# base_of SUITE: the suite's pristine copy (debootstrap once), printed.
base_of() {
	local suite=$1 base=$CHROOTS/base-$1 uri tmp
	if [ -f "$base/.lsm_am_base_done" ]; then
		echo "$base"
		return
	fi
	uri=$(main_archive) || true
	[ -n "$uri" ] || lsm_die "no Debian archive URI found in the machine's apt configuration"
	if ! command -v debootstrap >/dev/null; then
		lsm_log "installing debootstrap"
		# wait for another apt user (a parallel build_pg18.sh) instead of
		# failing at once; a command substitution runs this without set -e,
		# so each step says itself why it stops
		DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 update -qq ||
			lsm_die "apt-get update failed (is another apt-get running?)"
		DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq \
			--no-install-recommends debootstrap >/dev/null ||
			lsm_die "apt-get install debootstrap failed (is another apt-get running?)"
	fi
	tmp=$base.partial
	rm -rf "$tmp"
	mkdir -p "$CHROOTS"
	lsm_log "debootstrap $suite from $uri into $base (about a minute)"
	debootstrap --variant=minbase "$suite" "$tmp" "$uri" >"$CHROOTS/debootstrap-$suite.log" 2>&1 ||
		{ tail -n 30 "$CHROOTS/debootstrap-$suite.log" >&2; lsm_die "debootstrap $suite failed (log: $CHROOTS/debootstrap-$suite.log)"; }
	# the suite's updates and security fixes, as an installed Debian has them
	local sec=${uri%/debian}/debian-security
	cat >"$tmp/etc/apt/sources.list" <<EOF
deb $uri $suite main
deb $uri $suite-updates main
deb $sec $suite-security main
EOF
	# no service starts in the chroot; postgresql-common makes no cluster
	printf '#!/bin/sh\nexit 101\n' >"$tmp/usr/sbin/policy-rc.d"
	chmod 755 "$tmp/usr/sbin/policy-rc.d"
	mkdir -p "$tmp/etc/postgresql-common/createcluster.d"
	echo 'create_main_cluster = false' >"$tmp/etc/postgresql-common/createcluster.d/lsm_am.conf"
	# apt inside the chroot: no recommends, no docs (smaller, as in a builder)
	cat >"$tmp/etc/apt/apt.conf.d/90lsm_am" <<EOF
APT::Install-Recommends "false";
APT::Install-Suggests "false";
EOF
	echo "$suite" >"$tmp/.lsm_am_suite"
	touch "$tmp/.lsm_am_base_done"
	mv "$tmp" "$base"
	echo "$base"
}

root_of() { echo "$CHROOTS/$1"; }

# The machine's own apt policy for the archive, into the chroot: where the
# machine's apt takes Release files past their Valid-Until date (an archive
# snapshot serves forky's that way) or goes through a proxy, so does the
# chroot's (else apt inside refuses "expired" suites: tests/build_pg18.sh
# looks for postgresql-18 in forky).
sync_apt_policy() {
	local root=$1
	apt-config dump 2>/dev/null |
		grep -E '^Acquire::(Check-Valid-Until|Check-Date|https?::Proxy) ' \
			>"$root/etc/apt/apt.conf.d/91lsm_am_machine" || true
}

ensure() {
	local name=$1 suite=${2:-trixie} root base
	root=$(root_of "$name")
	if [ -f "$root/.lsm_am_base_done" ]; then
		[ "$(cat "$root/.lsm_am_suite")" = "$suite" ] ||
			lsm_die "chroot $name is $(cat "$root/.lsm_am_suite"), not $suite (tests/chroot.sh remove $name)"
		echo "$root"
		return
	fi
	base=$(base_of "$suite")
	lsm_log "making chroot $name ($suite) from $base"
	rm -rf "$root.partial"
	cp -a "$base" "$root.partial"
	mv "$root.partial" "$root"
	echo "$root"
}

fresh() {
	local name=$1 suite=${2:-trixie}
	remove "$name"
	ensure "$name" "$suite"
}

# clone FROM NAME: NAME made anew as a copy of the chroot FROM (its
# packages and all; tests/deb_test.sh copies a chroot that has the build
# dependencies installed); its root printed.
clone() {
	local from root
	from=$(root_of "$1")
	[ -f "$from/.lsm_am_base_done" ] || lsm_die "no chroot $1 to copy"
	remove "$2"
	root=$(root_of "$2")
	lsm_log "making chroot $2 as a copy of $1"
	rm -rf "$root.partial"
	cp -a "$from" "$root.partial"
	mv "$root.partial" "$root"
	echo "$root"
}

remove() {
	local root
	root=$(root_of "$1")
	[ -d "$root" ] || return 0
	# a run still inside keeps its mounts in its own namespace only; refuse
	# to delete under a live process all the same
	if command -v fuser >/dev/null && fuser -s "$root" 2>/dev/null; then
		lsm_die "chroot $1 is in use"
	fi
	rm -rf --one-file-system "$root"
}

run() {
	local name=$1 root envs=() v
	shift
	[ $# -gt 0 ] || usage
	root=$(root_of "$name")
	[ -f "$root/.lsm_am_base_done" ] || lsm_die "no chroot $name (tests/chroot.sh ensure $name)"
	cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
	sync_apt_policy "$root"
	for v in $(compgen -e); do
		case $v in
		# paths and facts of the machine, not of the chroot (tests/lib.sh
		# works them out again inside)
		LSM_PG15_CONFIG | LSM_PG18_CONFIG | LSM_PG18_CACHE | LSM_BUILD_SUFFIX | LSM_DEB_* | LSM_CHROOT_DIR) ;;
		LSM_* | PG_TEST_* | CI | PROVE_* | DEBIAN_FRONTEND) envs+=("$v=${!v}") ;;
		esac
	done
	# LSM_PG18_CACHE and the like name places on this machine: inside, the
	# chroot's own /var/cache/lsm_am (built by the chroot's own runs)
	envs+=(LSM_PG18_CACHE=/var/cache/lsm_am LSM_IN_CHROOT="$name")
	mkdir -p "$root$LSM_REPO"
	# shellcheck disable=SC2016
	unshare --mount --propagation private -- bash -c '
		set -e
		root=$1 repo=$2; shift 2
		mount -t proc proc "$root/proc"
		mount --rbind /sys "$root/sys"
		mount --rbind /dev "$root/dev"
		mount -t tmpfs -o size=4g,mode=1777 tmpfs "$root/dev/shm"
		mount --bind "$repo" "$root$repo"
		exec chroot "$root" "$@"' lsm-chroot "$root" "$LSM_REPO" \
		/usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		HOME=/root LANG=C.UTF-8 TMPDIR=/tmp TERM="${TERM:-dumb}" "${envs[@]}" "$@"
}

require_root
[ $# -ge 2 ] || usage
cmd=$1
shift
case $cmd in
ensure) ensure "$@" ;;
fresh) fresh "$@" ;;
clone) [ $# -eq 2 ] || usage; clone "$@" ;;
run) run "$@" ;;
remove) remove "$1" ;;
*) usage ;;
esac
