#!/usr/bin/env bash
# tests/deb_test.sh — the Debian packages (debian/): built with
# `dpkg-buildpackage -us -uc -b` in a clean Debian chroot, installed there
# with apt, tested against that installed copy, and purged without a trace.
#
#   bash tests/deb_test.sh [bookworm|trixie|all]   # default: all (one after the other)
#
# Targets: bookworm (Debian 12, postgresql-15-lsm-am) and trixie (Debian 13,
# postgresql-17-lsm-am).  Per target, as Debian's own builders do, the build
# runs in a chroot of that Debian holding nothing but a minimal system,
# build-essential and the Build-Depends of debian/control.  That chroot is
# kept ($LSM_PG18_CACHE/chroot/deb-build-SUITE, made with tests/chroot.sh
# from the suite's debootstrap copy; made anew when the Build-Depends
# change, or with LSM_DEB_REFRESH=1; apt-get update and dist-upgrade when
# it is older than LSM_DEB_MAX_AGE hours, default 24) and each run works in
# a chroot of its own made from it, deb-SUITE-PID: an overlay mount on it
# (what the run changes goes to a directory beside it), or a copy where
# overlayfs cannot be mounted (or LSM_DEB_OVERLAY=0; copying 1.5 GB took
# 6 s and deleting it 7 s on a quiet machine, 15 to 35 s and 70 s at a load
# average of 14), dropped at the end
# (LSM_KEEP_SCRATCH=1 keeps it).  In it, as root unless said:
#
#   1. the committed tree (HEAD, `git archive`; uncommitted changes are not
#      in it) is unpacked into /build/lsm-am-VERSION;
#   2. `dpkg-buildpackage -us -uc -b` as an unprivileged user `builder`
#      (DEB_BUILD_OPTIONS=parallel=2; LSM_DEB_JOBS=N); the package holds
#      lsm_am.so, the control file and every sql/lsm_am--*.sql, and no JIT
#      bitcode; with LSM_DEB_LINTIAN=1, lintian (installed in the run's chroot for
#      that run: it is not in the cached chroot);
#   3. `apt-get install ./postgresql-NN-lsm-am_VERSION_ARCH.deb`, which
#      pulls postgresql-NN; `dpkg -S` says the installed lsm_am.so is the
#      package's, `dpkg --verify` finds its files unchanged;
#   4. a fresh cluster as postgres on a private socket (tests/lib.sh
#      cluster_start: shared_preload_libraries = 'lsm_am'), CREATE EXTENSION
#      lsm_am, an lsm index used by a query; the postmaster has the
#      package's lsm_am.so mapped;
#   5. `make installcheck` as postgres (TAP needs a non-root user) from a
#      second unpacked copy of the tree that is never built (no *.o, no
#      *.so: PGXS's installcheck builds nothing), against that cluster:
#      pg_regress (sql/*.sql) and the TAP files of LSM_DEB_PROVE_TESTS
#      (default tests/t/001_preload.pl tests/t/004_differential.pl; all of
#      tests/t would take ten minutes; with IPC::Run, libipc-run-perl,
#      installed after the build);
#   6. `apt-get purge postgresql-NN-lsm-am`: none of the files `dpkg -L`
#      listed remains, nor a directory of its own, and nothing named
#      lsm_am* is left in pkglibdir, its bitcode directory or the
#      extension directory.
#
# Lines "deb[SUITE]: ..." say what each step did; the last lines are a
# summary per target, then "deb: N passed, N failed"; the exit status is
# non-zero when a target failed.  Run as root (debootstrap, chroots); needs
# git and Debian's archive (deb.debian.org).  The first run of a target
# makes its build chroot (the suite's debootstrap too if missing, several
# minutes).  Two runs of the same target at once work in chroots of their
# own (the cached chroot is made or refreshed under an exclusive lock, and
# runs hold it shared).
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
PROVE_TESTS_DEFAULT=${LSM_DEB_PROVE_TESTS:-tests/t/001_preload.pl tests/t/004_differential.pl}

# ================================================================ inside
# `tests/deb_test.sh --inside SUITE`: steps 2-6 in the chroot (run by the
# outer part through tests/chroot.sh run, after step 1).
if [ "${1:-}" = --inside ]; then
	suite=$2
	say() { printf 'deb[%s]: %s\n' "$suite" "$*"; }
	fail() { printf 'deb[%s]: FAILED: %s\n' "$suite" "$*"; exit 1; }
	export DEBIAN_FRONTEND=noninteractive
	t_all=$SECONDS
	cd /build
	src=$(echo /build/lsm-am-*/)
	src=${src%/}
	[ -d "$src/debian" ] || fail "no unpacked tree with debian/ in /build"

	# ---- 2. build
	version=$(cd "$src" && dpkg-parsechangelog -S Version)
	arch=$(dpkg --print-architecture)
	pg=$LSM_DEB_PG
	pkg=postgresql-$pg-lsm-am
	deb=/build/${pkg}_${version}_$arch.deb
	chown -R builder: /build
	t=$SECONDS
	if ! (cd "$src" && runuser -u builder -- env HOME=/home/builder DEB_BUILD_OPTIONS="parallel=${LSM_DEB_JOBS:-2}" \
		dpkg-buildpackage -us -uc -b) >/build/build.log 2>&1; then
		tail -n 60 /build/build.log
		fail "dpkg-buildpackage -us -uc -b (log above)"
	fi
	build_secs=$((SECONDS - t))
	[ -f "$deb" ] || { ls -l /build; fail "dpkg-buildpackage wrote no $(basename "$deb")"; }
	say "dpkg-buildpackage -us -uc -b (as user builder): ${build_secs}s; wrote $(cd /build && echo *.deb)"
	dpkg-deb -c "$deb" | awk '{ print $NF }' | sed 's|^\./|/|' >/build/contents
	libdir=/usr/lib/postgresql/$pg/lib
	extdir=/usr/share/postgresql/$pg/extension
	grep -qx "$libdir/lsm_am.so" /build/contents || fail "the package has no $libdir/lsm_am.so"
	grep -qx "$extdir/lsm_am.control" /build/contents || fail "the package has no $extdir/lsm_am.control"
	nsql=0
	for f in "$src"/sql/lsm_am--*.sql; do
		grep -qx "$extdir/$(basename "$f")" /build/contents || fail "the package has no $extdir/$(basename "$f")"
		nsql=$((nsql + 1))
	done
	! grep -q -e '/bitcode' -e '\.bc$' /build/contents || fail "the package holds JIT bitcode: $(grep -e /bitcode -e '\.bc$' /build/contents | head -n 3 | tr '\n' ' ')"
	say "$(basename "$deb"): $(wc -c <"$deb") bytes, lsm_am.so, lsm_am.control, $nsql sql/lsm_am--*.sql, no bitcode; Depends: $(dpkg-deb -f "$deb" Depends)"
	say "its files: $(dpkg-deb -c "$deb" | awk '$1 !~ /^d/ { sub(/^\./, "", $6); print $6 }' | tr '\n' ' ')"
	if [ "${LSM_DEB_LINTIAN:-0}" = 1 ]; then
		t=$SECONDS
		command -v lintian >/dev/null || apt-get install -y -qq lintian >>/build/apt.log 2>&1 || fail "apt-get install lintian"
		chown builder: /build
		lintian_rc=0
		(cd /build && runuser -u builder -- env HOME=/home/builder lintian --fail-on error ./*.changes) >/build/lintian.log 2>&1 || lintian_rc=$?
		sed 's/^/    /' /build/lintian.log
		[ $lintian_rc -eq 0 ] || fail "lintian reports errors (above)"
		say "lintian: $(grep -c '^[EWIP]: ' /build/lintian.log || true) tags, no error ($((SECONDS - t))s)"
	fi

	# ---- 3. install the package where it was built
	t=$SECONDS
	dpkg-query -W -f='${Status}' "postgresql-$pg" 2>/dev/null | grep -q 'install ok installed' &&
		fail "postgresql-$pg is installed before the package (the build chroot should not have it)"
	apt-get install -y -q "./$(basename "$deb")" >/build/install.log 2>&1 ||
		{ tail -n 30 /build/install.log; fail "apt-get install ./$(basename "$deb")"; }
	say "apt-get install ./$(basename "$deb"): $((SECONDS - t))s; it brought $(dpkg-query -W -f='${Package} ${Version}' "postgresql-$pg")"
	lsm_use_pg_config "/usr/lib/postgresql/$pg/bin/pg_config"
	[ "$("$PG_CONFIG" --pkglibdir)" = "$libdir" ] || fail "pg_config --pkglibdir is $("$PG_CONFIG" --pkglibdir), not $libdir"
	owner=$(dpkg -S "$libdir/lsm_am.so" 2>/dev/null | cut -d: -f1) || true
	[ "$owner" = "$pkg" ] || fail "dpkg -S $libdir/lsm_am.so says '$owner', not $pkg"
	verify=$(dpkg --verify "$pkg" 2>&1) || true
	[ -z "$verify" ] || fail "dpkg --verify $pkg: $verify"
	say "dpkg -S $libdir/lsm_am.so: $owner; dpkg --verify: its files are as packaged"
	apt-get install -y -qq libipc-run-perl >>/build/install.log 2>&1 ||
		{ tail -n 20 /build/install.log; fail "apt-get install libipc-run-perl (for the TAP files)"; }

	# ---- 4. a fresh cluster with the package's library preloaded
	dir=$(make_scratch_dir deb) || fail "no scratch directory"
	trap 'cluster_stop "$dir"' EXIT
	cluster_start "$dir" "$(pick_port)" || fail "the cluster did not start (initdb or pg_ctl start with shared_preload_libraries = 'lsm_am')"
	out=$(pg_psql -d postgres -qAt -c 'CREATE DATABASE deb_check' -c '\c deb_check' \
		-c 'CREATE EXTENSION lsm_am' \
		-c 'CREATE TABLE t (k int8, v text)' \
		-c "INSERT INTO t SELECT g, 'v' || g FROM generate_series(1, 5000) g ORDER BY random()" \
		-c 'CREATE INDEX t_k ON t USING lsm (k)' \
		-c 'SET enable_seqscan = off' -c 'SET enable_bitmapscan = off' \
		-c "SELECT extversion || ' ' || (SELECT count(*) FROM t WHERE k BETWEEN 100 AND 199) FROM pg_extension WHERE extname = 'lsm_am'" 2>&1) ||
		fail "CREATE EXTENSION lsm_am and an lsm index: $out"
	ext=$(printf '%s\n' "$out" | tail -n 1)
	upstream=${version%-*}
	[ "${ext%% *}" = "$upstream" ] || fail "extversion is '${ext%% *}', not $upstream"
	[ "${ext#* }" = 100 ] || fail "the lsm index answered ${ext#* } rows for k in [100, 199], not 100"
	pm=$(head -n 1 "$dir/data/postmaster.pid")
	grep -q " $libdir/lsm_am.so\$" "/proc/$pm/maps" || fail "the postmaster ($pm) has no $libdir/lsm_am.so mapped"
	say "cluster on $("$PG_CONFIG" --version): preloads $libdir/lsm_am.so (the postmaster maps it); CREATE EXTENSION lsm_am: $upstream; an lsm index answered a range scan"

	# ---- 5. make installcheck from an unbuilt copy of the tree
	check=$dir/check
	mkdir -p "$check" && tar -C "$check" -xf /build/src.tar && chown -R "$PG_USER:" "$check"
	check=$(echo "$check"/lsm-am-*/)
	check=${check%/}
	prove_tests=${LSM_DEB_PROVE_TESTS:-$PROVE_TESTS_DEFAULT}
	t=$SECONDS
	rc=0
	(cd "$check" && as_pg PGHOST="$PGHOST" PGPORT="$PGPORT" \
		make installcheck PG_CONFIG="$PG_CONFIG" PROVE_TESTS="$prove_tests") >/build/installcheck.log 2>&1 || rc=$?
	ic_secs=$((SECONDS - t))
	regress=$(grep -oE 'All [0-9]+ tests passed|[0-9]+ of [0-9]+ tests failed' /build/installcheck.log | head -n 1)
	tap=$(sed -nE 's/^Files=([0-9]+), Tests=([0-9]+),.*/\1 files, \2 tests/p' /build/installcheck.log | tail -n 1)
	tap="$tap$(sed -nE 's/^Result: ([A-Z]+).*/, \1/p' /build/installcheck.log | tail -n 1)"
	if [ $rc -ne 0 ]; then
		tail -n 60 /build/installcheck.log
		[ -f "$check/regress_out/regression.diffs" ] && head -n 80 "$check/regress_out/regression.diffs"
		fail "make installcheck exited $rc (pg_regress: ${regress:-no summary}; TAP: ${tap:-no summary})"
	fi
	built=$(cd "$check" && find . \( -name '*.o' -o -name '*.so' -o -name '*.bc' \) -print | head -n 3)
	[ -z "$built" ] || fail "make installcheck built something in the source copy: $built"
	say "make installcheck (as $PG_USER, PROVE_TESTS=$prove_tests): ${ic_secs}s; pg_regress: ${regress:-?}; TAP: ${tap:-?}; nothing built"
	cluster_stop "$dir"
	trap - EXIT

	# ---- 6. purge: nothing left
	dpkg -L "$pkg" | sort >/build/listed
	apt-get purge -y -q "$pkg" >/build/purge.log 2>&1 || { tail -n 20 /build/purge.log; fail "apt-get purge $pkg"; }
	st=$(dpkg-query -W -f='${db:Status-Abbrev}' "$pkg" 2>/dev/null || true)
	[ -z "$st" ] || [ "$st" = "un " ] || fail "after purge, dpkg still knows $pkg ($st)"
	left=()
	while IFS= read -r p; do
		[ -n "$p" ] && [ "$p" != /. ] || continue
		if [ -d "$p" ] && [ ! -L "$p" ]; then
			# a directory may stay when another package has it too
			dpkg -S "$p" >/dev/null 2>&1 || left+=("$p/")
		elif [ -e "$p" ] || [ -L "$p" ]; then
			left+=("$p")
		fi
	done </build/listed
	[ ${#left[@]} -eq 0 ] || fail "after purge, left of what dpkg -L listed: ${left[*]}"
	stray=$(find "$libdir" "$extdir" -maxdepth 3 -name 'lsm_am*' 2>/dev/null | head -n 5)
	[ -z "$stray" ] || fail "after purge, left in $libdir or $extdir: $stray"
	say "apt-get purge $pkg: none of its $(wc -l </build/listed) dpkg -L paths is left (directories shared with other packages aside), nothing named lsm_am* in $libdir or $extdir"
	say "ok: $pkg $version built in ${build_secs}s, installcheck passed (${ic_secs}s), purged clean; $((SECONDS - t_all))s in the chroot"
	echo "RESULT	$suite	$pkg $version	${build_secs}	pg_regress ${regress:-?}, TAP ${tap:-?}	clean"
	exit 0
fi

# ================================================================ outside
require_root
targets=${1:-all}
case $targets in
all) targets="bookworm trixie" ;;
bookworm | trixie) ;;
*) lsm_die "usage: bash tests/deb_test.sh [bookworm|trixie|all]" ;;
esac
command -v git >/dev/null || lsm_die "git is not installed"
cd "$LSM_REPO"
head=$(git rev-parse --short HEAD) || lsm_die "$LSM_REPO is not a git checkout"
git cat-file -e HEAD:debian/control 2>/dev/null || lsm_die "debian/ is not committed (this tests HEAD)"
[ -z "$(git status --porcelain -- debian src sql Makefile lsm_am.control)" ] ||
	lsm_log "note: uncommitted changes in the checkout; this tests HEAD ($head)"
CHROOTS=${LSM_CHROOT_DIR:-$LSM_PG18_CACHE/chroot}
mkdir -p "$CHROOTS"
version=$(git show HEAD:debian/changelog | sed -n '1s/^[^(]*(\([^)]*\)).*/\1/p')
upstream=${version%-*}

# The cached chroot deb-build-SUITE, with build-essential and the
# Build-Depends of HEAD's debian/control installed (and the server package
# and IPC::Run of the test downloaded, not installed: each run installs them
# from the apt cache).  Made when missing or when those Build-Depends change
# (a stamp holds them), or with LSM_DEB_REFRESH=1; brought up to date
# (apt-get update, dist-upgrade) when older than LSM_DEB_MAX_AGE hours
# (default 24), so that the runs need not.
#
# build_chroot_todo SUITE: prints make, refresh or nothing.
build_chroot_todo() {
	local root=$CHROOTS/deb-build-$1
	if [ "${LSM_DEB_REFRESH:-0}" = 1 ] || [ ! -f "$root/.lsm_am_deb_build" ] ||
		[ "$(cat "$root/.lsm_am_deb_build")" != "$(build_chroot_stamp "$1")" ]; then
		echo make
	elif [ -n "$(find "$root/.lsm_am_deb_build" -mmin +$((60 * ${LSM_DEB_MAX_AGE:-24})))" ]; then
		echo refresh
	fi
}
build_chroot_deps() {
	git show HEAD:debian/control | awk '/^Build-Depends:/ { on = 1; sub(/^Build-Depends:/, ""); }
		on && /^[A-Z][A-Za-z-]*:/ && !/^Build-Depends:/ { on = 0 } on { printf "%s", $0 }' | tr -s ' \t' ' '
}
build_chroot_stamp() { echo "suite=$1 deps=$(build_chroot_deps) builder=1"; }

# build_chroot SUITE make|refresh
build_chroot() {
	local suite=$1 mode=$2 name=deb-build-$1 root=$CHROOTS/deb-build-$1
	if [ "$mode" = make ]; then
		lsm_log "deb[$suite]: making the build chroot $name (build-essential and the Build-Depends:$(build_chroot_deps))"
		bash "$LSM_REPO/tests/chroot.sh" fresh "$name" "$suite" >/dev/null || return 1
		mkdir -p "$root/build/deps/debian"
		git show HEAD:debian/control >"$root/build/deps/debian/control"
	else
		lsm_log "deb[$suite]: bringing the build chroot $name up to date (older than ${LSM_DEB_MAX_AGE:-24} hours)"
	fi
	bash "$LSM_REPO/tests/chroot.sh" run "$name" bash -c '
		set -e
		export DEBIAN_FRONTEND=noninteractive
		apt-get update -qq
		if [ "$1" = make ]; then
			apt-get install -y -qq build-essential >/dev/null
			# (apt-get build-dep DIR: the Build-Depends of DIR/debian/control)
			apt-get build-dep -y -qq /build/deps >/dev/null
			id builder >/dev/null 2>&1 || useradd --create-home --shell /bin/bash builder
			rm -rf /build
		else
			apt-get -y -qq dist-upgrade >/dev/null
		fi
		apt-get clean
		pg=$(/usr/share/postgresql-common/supported-versions | tail -n 1)
		apt-get install -y -qq --download-only "postgresql-$pg" libipc-run-perl >/dev/null
		echo "PostgreSQL $pg; $(dpkg-query -W -f="\${db:Status-Abbrev}\n" | grep -c "^ii") packages installed"
	' deb-build "$mode" >"$CHROOTS/$name.log" 2>&1 || { tail -n 30 "$CHROOTS/$name.log" >&2; return 1; }
	lsm_log "deb[$suite]: $name: $(tail -n 1 "$CHROOTS/$name.log"), $(du -sh "$root" | cut -f1)"
	build_chroot_stamp "$suite" >"$root/.lsm_am_deb_build"
}

# The run's chroot deb-SUITE-PID: an overlay on deb-build-SUITE (nothing
# copied: what the run changes goes to .deb-SUITE-PID.overlay beside it and
# is dropped at the end), or a copy (tests/chroot.sh clone) where overlayfs
# cannot be mounted.  The run holds a shared lock on the cached chroot; its
# making or refreshing takes it exclusively.
# run_chroot_make SUITE NAME: prints "overlay" or "copy".
run_chroot_make() {
	local lower=$CHROOTS/deb-build-$1 root=$CHROOTS/$2 up=$CHROOTS/.$2.overlay
	rm -rf "$up"
	mkdir -p "$root" "$up/upper" "$up/work"
	if [ "${LSM_DEB_OVERLAY:-1}" = 1 ] &&
		mount -t overlay "lsm_am_$2" -o "lowerdir=$lower,upperdir=$up/upper,workdir=$up/work" "$root" 2>/dev/null; then
		echo overlay
		return
	fi
	rmdir "$root" 2>/dev/null
	rm -rf "$up"
	bash "$LSM_REPO/tests/chroot.sh" clone "deb-build-$1" "$2" >/dev/null || return 1
	echo copy
}
# run_chroot_drop NAME
run_chroot_drop() {
	local root=$CHROOTS/$1 up=$CHROOTS/.$1.overlay
	if mountpoint -q "$root"; then
		umount "$root" 2>/dev/null || umount -l "$root"
		rmdir "$root" 2>/dev/null || true
		rm -rf "$up"
	elif [ -d "$root" ]; then
		bash "$LSM_REPO/tests/chroot.sh" remove "$1" >/dev/null 2>&1
	fi
	rm -rf "$up"
}

declare -A RESULT=()
PASS=0 FAIL=0
RUN_CHROOTS=()
cleanup() {
	local n
	[ "${LSM_KEEP_SCRATCH:-0}" = 1 ] && return 0
	for n in "${RUN_CHROOTS[@]}"; do run_chroot_drop "$n" || true; done
}
trap cleanup EXIT
trap 'exit 130' INT TERM

for suite in $targets; do
	t0=$SECONDS
	name=deb-$suite-$$
	# chroots a killed run left behind (its process gone; not kept on purpose)
	for d in "$CHROOTS/.deb-$suite"-*.overlay; do
		p=${d%.overlay}
		p=${p##*-}
		[ -d "$d" ] && [ ! -d "${d%.overlay}" ] && [[ $p =~ ^[0-9]+$ ]] && ! kill -0 "$p" 2>/dev/null && rm -rf "$d" || true
	done
	for d in "$CHROOTS/deb-$suite"-*; do
		p=${d##*-}
		[ -d "$d" ] && [[ $p =~ ^[0-9]+$ ]] && [ ! -f "$d/.lsm_am_keep" ] && ! kill -0 "$p" 2>/dev/null || continue
		lsm_log "deb[$suite]: removing $(basename "$d"), left by an earlier run"
		run_chroot_drop "$(basename "$d")" || true
	done
	out=$(mktemp "${TMPDIR:-/tmp}/lsm_am_deb.XXXXXX")
	RUN_CHROOTS+=("$name")
	set +e
	{
		t=$SECONDS
		exec 9>"$CHROOTS/.deb-build-$suite.lock"
		flock -s 9
		todo=$(build_chroot_todo "$suite")
		if [ -n "$todo" ]; then
			flock -x 9
			todo=$(build_chroot_todo "$suite")
			if [ -n "$todo" ] && ! build_chroot "$suite" "$todo" 9>&-; then
				echo "deb[$suite]: FAILED: the build chroot deb-build-$suite could not be made"
				exit 1
			fi
			flock -s 9
		fi
		how=$(run_chroot_make "$suite" "$name") ||
			{ echo "deb[$suite]: FAILED: could not make the chroot $name from deb-build-$suite"; exit 1; }
		[ "$how" = overlay ] || { flock -u 9; exec 9>&-; }
		root=$CHROOTS/$name
		echo "deb[$suite]: chroot $name, $([ "$how" = overlay ] && echo "an overlay on" || echo "a copy of") deb-build-$suite ($(du -sh "$CHROOTS/deb-build-$suite" | cut -f1)): $((SECONDS - t))s"
		mkdir -p "$root/build"
		git archive --format=tar --prefix="lsm-am-$upstream/" HEAD >"$root/build/src.tar"
		tar -C "$root/build" -xf "$root/build/src.tar"
		echo "deb[$suite]: the committed tree of $head in /build/lsm-am-$upstream"
		# (the settings on the command line: tests/chroot.sh does not pass
		# LSM_DEB_* inside, those of tests/lib.sh being the machine's)
		bash "$LSM_REPO/tests/chroot.sh" run "$name" env LSM_DEB_JOBS="${LSM_DEB_JOBS:-2}" \
			LSM_DEB_LINTIAN="${LSM_DEB_LINTIAN:-0}" LSM_DEB_PROVE_TESTS="$PROVE_TESTS_DEFAULT" \
			bash "$LSM_REPO/tests/deb_test.sh" --inside "$suite" 9>&-
		rc=$?
		t=$SECONDS
		if [ "${LSM_KEEP_SCRATCH:-0}" != 1 ]; then
			run_chroot_drop "$name"
			echo "deb[$suite]: dropped the chroot $name: $((SECONDS - t))s"
		elif [ "$how" = overlay ]; then
			touch "$root/.lsm_am_keep"
			echo "deb[$suite]: chroot kept, mounted: $root (umount $root; rm -rf $root $CHROOTS/.$name.overlay)"
		else
			touch "$root/.lsm_am_keep"
			echo "deb[$suite]: chroot kept: $root (bash tests/chroot.sh remove $name)"
		fi
		exit $rc
	} 2>&1 | tee "$out"
	rc=${PIPESTATUS[0]}
	set -e
	line=$(grep '^RESULT	' "$out" | tail -n 1 || true)
	if [ "$rc" -eq 0 ] && [ -n "$line" ]; then
		IFS=$'\t' read -r _ _ what bsecs ic purge <<<"$line"
		RESULT[$suite]="ok      $what: build ${bsecs}s, installcheck: $ic, purge: $purge; $((SECONDS - t0))s in all"
		PASS=$((PASS + 1))
	else
		why=$(grep -m 1 "^deb\[$suite\]: FAILED" "$out" | sed "s/^deb\[$suite\]: FAILED: //")
		RESULT[$suite]="FAILED  ${why:-exit status $rc}; $((SECONDS - t0))s"
		FAIL=$((FAIL + 1))
	fi
	rm -f "$out"
done

echo
echo "==================== Debian packages (tests/deb_test.sh, $head) ===================="
for suite in $targets; do printf '  %-9s %s\n' "$suite" "${RESULT[$suite]}"; done
echo "deb: $PASS passed, $FAIL failed"
[ "$FAIL" -eq 0 ]
