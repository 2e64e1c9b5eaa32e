#!/usr/bin/env bash
# tests/build_pg18.sh — build PostgreSQL 18 (TAP tests, ICU, lz4, zstd, the
# contrib modules the tests use) and pgTAP for it from Debian's source
# packages, once, into a cache directory outside the repository; later runs
# find the stamp of a good build and do nothing.  Run as root.
#
#   bash tests/build_pg18.sh          # prints the pg_config path last
#   LSM_PG18_CACHE=/var/cache/lsm_am  # where sources and the prefix go
#
# The sources come through apt's ordinary client with a private
# configuration in the cache directory: the archive URIs are the machine's
# own (its deb822 sources or sources.list), the suite the first later one
# that carries postgresql-18.  The system's package lists are not changed.
# Build dependencies come from the machine's own suites.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

CACHE=${LSM_PG18_CACHE:-/var/cache/lsm_am}
PREFIX=$CACHE/pg18
APTDIR=$CACHE/apt
SRCDIR=$CACHE/src
# Later suites, nearest first; the first whose Sources carry the package wins.
SUITES=(${LSM_PG18_SUITES:-trixie-backports forky sid trixie})
CONTRIB=(pageinspect pgstattuple amcheck)
# --libdir names "postgresql": Debian's 50-per-version-dirs.patch then leaves
# pkglibdir alone (else it points at /usr/lib/postgresql/18/lib, outside
# the prefix).
CONFIGURE_FLAGS=(--libdir="$PREFIX/lib/postgresql" --enable-tap-tests --with-icu --with-lz4 --with-zstd
	--with-readline --with-zlib --without-llvm)
BUILD_DEPS=(dpkg-dev xz-utils bison flex pkg-config libicu-dev liblz4-dev
	libzstd-dev libreadline-dev zlib1g-dev libipc-run-perl
	libtap-parser-sourcehandler-pgtap-perl make gcc g++ patch)
STAMP=$PREFIX/.lsm_am_build_stamp
# What a good build recorded; a change here (flags, contrib) rebuilds.
WANT_STAMP="flags=${CONFIGURE_FLAGS[*]} contrib=${CONTRIB[*]} pgtap=yes"

require_root
mkdir -p "$CACHE"
exec 9>"$CACHE/.build.lock"
flock 9

good_build() {
	[ -f "$STAMP" ] && [ -x "$PREFIX/bin/pg_config" ] &&
		[ "$("$PREFIX/bin/pg_config" --pkglibdir)" = "$PREFIX/lib/postgresql" ] &&
		grep -qxF "$WANT_STAMP" "$STAMP" &&
		"$PREFIX/bin/pg_config" --version | grep -q '^PostgreSQL 18' &&
		[ -f "$PREFIX/share/postgresql/extension/pgtap.control" -o \
			-f "$("$PREFIX/bin/pg_config" --sharedir)/extension/pgtap.control" ]
}

if good_build; then
	lsm_log "PostgreSQL 18 already built in $PREFIX ($("$PREFIX/bin/pg_config" --version))"
	echo "$PREFIX/bin/pg_config"
	exit 0
fi

# ------------------------------------------------------------ build deps
missing=()
for p in "${BUILD_DEPS[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	lsm_log "installing build dependencies: ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# ------------------------------------------------------------ private apt
# The machine's archive URIs and keyring, from deb822 .sources files (first
# stanza with Types: deb) or one-line sources.list entries.
archive_uris() {
	local f
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] || continue
		awk 'BEGIN{RS="";FS="\n"} {
			types="";uris="";keys=""
			for(i=1;i<=NF;i++){
				if($i ~ /^Types:/) types=$i
				if($i ~ /^URIs:/){ uris=$i; sub(/^URIs:[ \t]*/,"",uris) }
				if($i ~ /^Signed-By:/){ keys=$i; sub(/^Signed-By:[ \t]*/,"",keys) }
			}
			if(types ~ /deb/ && uris != "") { n=split(uris,u," "); for(j=1;j<=n;j++) print u[j] " " keys }
		}' "$f"
	done
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -f "$f" ] || continue
		awk '$1=="deb" || $1=="deb-src" { u=$2; if (u ~ /^\[/) { for(i=2;i<=NF;i++) if ($i !~ /\]$/ && $i ~ /^http|^file|^ftp/) { u=$i; break } else if ($i ~ /^http|^file|^ftp/) { u=$i; break } } print u " " }' "$f"
	done
}

mkdir -p "$APTDIR/lists/partial" "$APTDIR/archives/partial" "$APTDIR/sources.list.d" "$SRCDIR"
APT_OPTS=(-o "Dir::Etc::sourcelist=$APTDIR/sources.list"
	-o "Dir::Etc::sourceparts=$APTDIR/sources.list.d"
	-o "Dir::State::Lists=$APTDIR/lists"
	-o "Dir::Cache=$APTDIR/cache"
	-o "Dir::Cache::archives=$APTDIR/archives"
	-o "APT::Get::List-Cleanup=0")
mkdir -p "$APTDIR/cache"

# The main archive: the URI whose name does not say security/updates.
read -r URI KEYRING < <(archive_uris | grep -v -e security -e updates | head -n 1) ||
	lsm_die "no Debian archive URI found in the machine's apt configuration"
lsm_log "archive from the machine's apt configuration: $URI"

sources_list() { # sources_list SUITE...: the private list of deb-src lines
	local s
	for s in "$@"; do
		if [ -n "$KEYRING" ]; then
			echo "deb-src [signed-by=$KEYRING] $URI $s main"
		else
			echo "deb-src $URI $s main"
		fi
	done >"$APTDIR/sources.list"
}

SUITE=
for s in "${SUITES[@]}"; do
	sources_list "$s"
	lsm_log "looking for postgresql-18 in $s"
	apt-get "${APT_OPTS[@]}" update -qq >/dev/null 2>&1 || { lsm_log "apt-get update failed for $s"; continue; }
	if apt-cache "${APT_OPTS[@]}" showsrc postgresql-18 2>/dev/null | grep -q '^Package: postgresql-18$'; then
		SUITE=$s
		break
	fi
done
[ -n "$SUITE" ] || lsm_die "no suite among ${SUITES[*]} carries postgresql-18 (set LSM_PG18_SUITES)"
lsm_log "suite $SUITE carries postgresql-18"

# fetch_source PACKAGE: download and unpack the newest version that the
# configured suites offer and the archive still holds; print the directory.
fetch_source() {
	local pkg=$1 ver dir
	for ver in $(apt-cache "${APT_OPTS[@]}" showsrc "$pkg" | awk '/^Version:/{print $2}' | sort -Vru); do
		dir=$(ls -d "$SRCDIR/$pkg"-*/ 2>/dev/null | grep -F "$pkg-${ver%%-*}/" | head -n 1 || true)
		if [ -z "$dir" ]; then
			if ! (cd "$SRCDIR" && apt-get "${APT_OPTS[@]}" source -qq "$pkg=$ver" >&2); then
				# The archive may serve the upstream tarball of a version
				# whose .dsc it no longer has: build from that alone.
				orig=$(ls "$SRCDIR/${pkg}_${ver%%-*}".orig.tar.* 2>/dev/null | head -n 1 || true)
				if [ -n "$orig" ] && tar -C "$SRCDIR" -xf "$orig" 2>/dev/null &&
					[ -d "$SRCDIR/$pkg-${ver%%-*}" ]; then
					lsm_log "apt-get source $pkg=$ver: no .dsc; using its upstream tarball $(basename "$orig")"
				else
					lsm_log "apt-get source $pkg=$ver failed; trying an older version"
					continue
				fi
			fi
			dir=$(ls -d "$SRCDIR/$pkg"-*/ | grep -F "$pkg-${ver%%-*}/" | head -n 1)
		fi
		printf '%s\n' "${dir%/}"
		return 0
	done
	lsm_die "no version of $pkg could be fetched"
}

# ------------------------------------------------------------ PostgreSQL
PG_STAMP=$PREFIX/.lsm_am_pg_stamp
if [ -f "$PG_STAMP" ] && grep -qxF "$WANT_STAMP" "$PG_STAMP" && [ -x "$PREFIX/bin/pg_config" ]; then
	lsm_log "PostgreSQL 18 already built in $PREFIX"
else
	PGSRC=$(fetch_source postgresql-18)
	lsm_log "PostgreSQL source in $PGSRC"
	rm -rf "$PREFIX"
	BUILD=$CACHE/build-pg18
	rm -rf "$BUILD"
	mkdir -p "$BUILD"
	lsm_log "configuring PostgreSQL 18 into $PREFIX"
	(cd "$BUILD" && "$PGSRC/configure" --prefix="$PREFIX" "${CONFIGURE_FLAGS[@]}" \
		>"$BUILD/configure.log" 2>&1) || { tail -n 30 "$BUILD/configure.log" >&2; lsm_die "configure failed"; }
	lsm_log "building PostgreSQL 18 (make -j2; several minutes)"
	make -C "$BUILD" -s -j2 >"$BUILD/make.log" 2>&1 || { tail -n 40 "$BUILD/make.log" >&2; lsm_die "make failed"; }
	make -C "$BUILD" -s install >>"$BUILD/make.log" 2>&1 || { tail -n 40 "$BUILD/make.log" >&2; lsm_die "make install failed"; }
	for c in "${CONTRIB[@]}"; do
		make -C "$BUILD/contrib/$c" -s -j2 install >>"$BUILD/make.log" 2>&1 ||
			{ tail -n 40 "$BUILD/make.log" >&2; lsm_die "contrib/$c failed"; }
	done
	echo "$WANT_STAMP" >"$PG_STAMP"
	rm -rf "$BUILD"
fi

# ------------------------------------------------------------ pgTAP
# Any of the suites' pgtap builds against 18: the newest the archive holds.
sources_list "${SUITES[@]}"
apt-get "${APT_OPTS[@]}" update -qq >/dev/null 2>&1 || lsm_log "apt-get update failed for some of ${SUITES[*]}"
TAPSRC=$(fetch_source pgtap)
lsm_log "building pgTAP from $TAPSRC"
rm -rf "$CACHE/build-pgtap"
cp -a "$TAPSRC" "$CACHE/build-pgtap"
make -C "$CACHE/build-pgtap" -s PG_CONFIG="$PREFIX/bin/pg_config" >"$CACHE/pgtap.log" 2>&1 &&
	make -C "$CACHE/build-pgtap" -s install PG_CONFIG="$PREFIX/bin/pg_config" >>"$CACHE/pgtap.log" 2>&1 ||
	{ tail -n 40 "$CACHE/pgtap.log" >&2; lsm_die "pgTAP build failed"; }

chmod -R a+rX "$PREFIX"
echo "$WANT_STAMP" >"$STAMP"
good_build || lsm_die "PostgreSQL 18 build in $PREFIX is incomplete"
rm -rf "$CACHE/build-pgtap"
lsm_log "PostgreSQL 18 built: $("$PREFIX/bin/pg_config" --version) in $PREFIX"
echo "$PREFIX/bin/pg_config"
