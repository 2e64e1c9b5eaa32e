#!/usr/bin/env bash
# tests/dist_test.sh — the PGXN distribution: META.json is valid (PGXN Meta
# Spec 1.0.0: JSON, the required keys, their forms) and agrees with
# lsm_am.control; the zip `make dist` writes builds and installs with PGXS
# alone.
#
#   bash tests/dist_test.sh          # PG_CONFIG names the PostgreSQL to build against
#
# What is tested is the committed tree (HEAD), as `make dist` archives it: a
# temporary clone runs `make dist`, the zip is unpacked into a temporary
# folder and built there (`make`, then `make install DESTDIR=...`), and the
# shared library, the control file and every sql/lsm_am--*.sql of the zip
# must land where PG_CONFIG says.  Nothing is installed into PostgreSQL
# itself and the checkout is not written to.  The compiles go through ccache
# when tests/run_all.sh set it up (CCACHE_DIR; LSM_CCACHE=0 turns it off).
# Needs git, perl (JSON::PP), unzip (or python3), make and the build's
# compilers; no root.  Exits 1 on the first failure, saying what it saw.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

fail() { printf 'dist: FAILED: %s\n' "$*" >&2; exit 1; }
say() { printf 'dist: %s\n' "$*"; }

command -v git >/dev/null || fail "git is not installed"
perl -MJSON::PP -e 1 2>/dev/null || fail "perl's JSON::PP is not installed"
[ -x "$PG_CONFIG" ] || fail "no pg_config at $PG_CONFIG (set PG_CONFIG)"
cd "$LSM_REPO"
head=$(git rev-parse --short HEAD) || fail "$LSM_REPO is not a git checkout"
[ -z "$(git status --porcelain)" ] ||
	say "note: the checkout has uncommitted changes; this tests HEAD ($head), as make dist does"

work=$(mktemp -d "${TMPDIR:-/tmp}/lsm_am_dist.XXXXXX")
trap 'rm -rf "$work"' EXIT

# ------------------------------------------------------------ META.json
# The committed META.json against the committed lsm_am.control and tree.
git show HEAD:META.json >"$work/META.json" 2>/dev/null || fail "META.json is not committed"
git show HEAD:lsm_am.control >"$work/lsm_am.control" 2>/dev/null || fail "lsm_am.control is not committed"
git ls-tree -r --name-only HEAD >"$work/files"
perl -MJSON::PP -e '
use strict;
use warnings;
my ($meta_file, $control, $files) = @ARGV;
my @err;
local $/;
open my $m, "<", $meta_file or die "$meta_file: $!";
my $meta = eval { JSON::PP->new->utf8->decode(<$m>) };
if (!$meta) { print "META.json is not valid JSON: $@"; exit 1; }
open my $c, "<", $control or die;
my ($ext) = <$c> =~ /^default_version\s*=\s*\x27([^\x27]+)\x27/m;
open my $f, "<", $files or die;
my %file = map { $_ => 1 } split /\n/, <$f>;
my $semver = qr/^(?:0|[1-9]\d*)\.(?:0|[1-9]\d*)\.(?:0|[1-9]\d*)(?:-[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?(?:\+[0-9A-Za-z-.]+)?$/;
my $term = qr/^[^\/\\\s[:cntrl:]]{2,}$/;
my %licenses = map { $_ => 1 } qw(agpl_3 apache_1_1 apache_2_0 artistic_1 artistic_2 bsd freebsd
  gfdl_1_2 gfdl_1_3 gpl_1 gpl_2 gpl_3 lgpl_2_1 lgpl_3_0 mit mozilla_1_0 mozilla_1_1 openssl
  perl_5 postgresql qpl_1_0 ssleay sun zlib open_source restricted unrestricted unknown);
my %known = map { $_ => 1 } qw(name version abstract maintainer license provides meta-spec
  description generated_by tags no_index prereqs release_status resources);
ref $meta eq "HASH" or do { print "META.json is not an object\n"; exit 1 };
for my $k (qw(name version abstract maintainer license provides meta-spec))
{
	push @err, "the required key \"$k\" is missing" unless exists $meta->{$k};
}
for my $k (sort keys %$meta)
{
	push @err, "unknown key \"$k\" (the spec allows custom keys as x_$k)"
	  unless $known{$k} || $k =~ /^[xX]_./;
}
push @err, "name is \"" . ($meta->{name} // "") . "\", not lsm_am" unless ($meta->{name} // "") eq "lsm_am";
my $v = $meta->{version} // "";
push @err, "version \"$v\" is not semver" unless $v =~ $semver;
push @err, "lsm_am.control has no default_version" unless defined $ext;
$ext //= "";
(my $want = $ext) =~ s/^(\d+\.\d+)$/$1.0/;
push @err, "version \"$v\" is not lsm_am.control\x27s default_version \x27$ext\x27 as semver ($want)"
  unless $v eq $want;
push @err, "abstract is empty" unless defined $meta->{abstract} && !ref $meta->{abstract} && length $meta->{abstract};
my $mt = $meta->{maintainer};
push @err, "maintainer is neither a string nor a list of strings"
  unless (defined $mt && !ref $mt && length $mt)
  || (ref $mt eq "ARRAY" && @$mt && !grep { ref $_ || !length $_ } @$mt);
my $l = $meta->{license};
push @err, "license is not one of the spec\x27s names (nor a list of them, nor an object of URLs)"
  unless (defined $l && !ref $l && $licenses{$l})
  || (ref $l eq "ARRAY" && @$l && !grep { !$licenses{$_} } @$l)
  || (ref $l eq "HASH" && %$l);
push @err, "license is given, but the tree has no LICENSE file" unless $file{LICENSE};
my $p = $meta->{provides};
if (ref $p ne "HASH" || !$p->{lsm_am})
{
	push @err, "provides has no lsm_am";
}
else
{
	for my $name (sort keys %$p)
	{
		my $e = $p->{$name};
		push @err, "provides: \"$name\" is not a term" unless $name =~ $term;
		for my $k (sort keys %$e)
		{
			push @err, "provides.$name has an unknown key \"$k\""
			  unless $k =~ /^(?:file|version|abstract|docfile)$/ || $k =~ /^[xX]_./;
		}
		push @err, "provides.$name.version \"" . ($e->{version} // "") . "\" is not semver"
		  unless ($e->{version} // "") =~ $semver;
		for my $k (qw(file docfile))
		{
			next unless exists $e->{$k} || $k eq "file";
			my $path = $e->{$k} // "";
			push @err, "provides.$name.$k \"$path\" is not a file of the tree" unless $file{$path};
		}
	}
	my $e = $p->{lsm_am};
	push @err, "provides.lsm_am.version \"" . ($e->{version} // "") . "\" is not the version \"$v\""
	  unless ($e->{version} // "") eq $v;
	push @err, "provides.lsm_am.file \"" . ($e->{file} // "") . "\" is not sql/lsm_am--$ext.sql, the install script of default_version"
	  unless ($e->{file} // "") eq "sql/lsm_am--$ext.sql";
}
my $ms = $meta->{"meta-spec"};
push @err, "meta-spec.version is not 1.0.0"
  unless ref $ms eq "HASH" && ($ms->{version} // "") eq "1.0.0";
if (exists $meta->{release_status})
{
	push @err, "release_status \"$meta->{release_status}\" is not stable, testing or unstable"
	  unless ($meta->{release_status} // "") =~ /^(?:stable|testing|unstable)$/;
}
if (exists $meta->{tags})
{
	my $t = $meta->{tags};
	push @err, "tags is not a non-empty list of strings of 2 to 255 characters without / or \\"
	  unless ref $t eq "ARRAY" && @$t
	  && !grep { ref $_ || length $_ < 2 || length $_ > 255 || /[\/\\[:cntrl:]]/ } @$t;
}
my $pg = eval { $meta->{prereqs}{runtime}{requires}{PostgreSQL} };
push @err, "prereqs.runtime.requires.PostgreSQL is not set" unless defined $pg;
if (@err) { print "META.json: $_\n" for @err; exit 1; }
print "META.json: valid; $meta->{name} $v (lsm_am.control: $ext), provides lsm_am $p->{lsm_am}{version} in $p->{lsm_am}{file}, $meta->{license}, PostgreSQL $pg\n";
' "$work/META.json" "$work/lsm_am.control" "$work/files" >"$work/meta.out" || { cat "$work/meta.out" >&2; fail "META.json"; }
say "$(cat "$work/meta.out")"
version=$(perl -MJSON::PP -0777 -ne 'print decode_json($_)->{version}' "$work/META.json")
top=lsm_am-$version

# ------------------------------------------------------------ make dist
git clone -q --shared "$LSM_REPO" "$work/clone" || fail "git clone of $LSM_REPO"
git -C "$work/clone" checkout -q --detach "$(git rev-parse HEAD)"
make -s -C "$work/clone" dist PG_CONFIG="$PG_CONFIG" >"$work/dist.log" 2>&1 ||
	{ cat "$work/dist.log" >&2; fail "make dist"; }
zip=$work/clone/$top.zip
[ -f "$zip" ] || { cat "$work/dist.log" >&2; fail "make dist did not write $top.zip"; }
say "make dist wrote $top.zip ($(wc -c <"$zip") bytes) from $head"

mkdir -p "$work/unpacked"
if command -v unzip >/dev/null; then
	unzip -q "$zip" -d "$work/unpacked" || fail "unzip $top.zip"
elif command -v python3 >/dev/null; then
	python3 -m zipfile -e "$zip" "$work/unpacked" || fail "python3 -m zipfile -e $top.zip"
else
	fail "neither unzip nor python3 is installed"
fi
tops=$(ls -A "$work/unpacked")
[ "$tops" = "$top" ] || fail "the zip holds '$(echo $tops)' at its top, not the one folder $top"
src=$work/unpacked/$top
# every committed file is in it, and nothing else
(cd "$src" && find . -type f | sed 's|^\./||' | LC_ALL=C sort) >"$work/zipped"
LC_ALL=C sort "$work/files" >"$work/files.sorted"
if ! cmp -s "$work/zipped" "$work/files.sorted"; then
	diff "$work/files.sorted" "$work/zipped" | head -n 20 >&2
	fail "the zip's files differ from the committed tree's (< committed only, > zip only)"
fi
for f in META.json LICENSE Makefile lsm_am.control README.md; do
	[ -f "$src/$f" ] || fail "the zip has no $f"
done
say "unpacked: $(wc -l <"$work/zipped") files under $top/, the committed tree"

# ------------------------------------------------------------ build, install
MAKE_ARGS=(PG_CONFIG="$PG_CONFIG")
if [ "${LSM_CCACHE:-1}" = 1 ] && [ -n "${CCACHE_DIR:-}" ] && command -v ccache >/dev/null &&
	mkdir -p "$CCACHE_DIR" 2>/dev/null && [ -w "$CCACHE_DIR" ]; then
	# relative paths inside the unpacked folder hash alike from run to run
	export CCACHE_BASEDIR=$src CCACHE_NOHASHDIR=true
	MAKE_ARGS+=(CC="ccache $("$PG_CONFIG" --cc)" CXX="ccache ${CXX:-g++}")
fi
start=$SECONDS
make -C "$src" -j2 "${MAKE_ARGS[@]}" >"$work/build.log" 2>&1 ||
	{ tail -n 60 "$work/build.log" >&2; fail "make in the unpacked zip (PGXS, $PG_CONFIG)"; }
dest=$work/dest
make -C "$src" install DESTDIR="$dest" "${MAKE_ARGS[@]}" >"$work/install.log" 2>&1 ||
	{ tail -n 40 "$work/install.log" >&2; fail "make install DESTDIR=... in the unpacked zip"; }
say "built and installed with PGXS against $("$PG_CONFIG" --version) in $((SECONDS - start))s"

libdir=$dest$("$PG_CONFIG" --pkglibdir)
extdir=$dest$("$PG_CONFIG" --sharedir)/extension
[ -f "$libdir/lsm_am.so" ] || fail "no lsm_am.so in $libdir"
if command -v nm >/dev/null; then
	nm -D --defined-only "$libdir/lsm_am.so" | grep -w Pg_magic_func >/dev/null ||
		fail "lsm_am.so does not export Pg_magic_func"
fi
cmp -s "$src/lsm_am.control" "$extdir/lsm_am.control" || fail "lsm_am.control is not installed in $extdir"
n=0
for f in "$src"/sql/lsm_am--*.sql; do
	cmp -s "$f" "$extdir/$(basename "$f")" || fail "$(basename "$f") is not installed in $extdir"
	n=$((n + 1))
done
[ -f "$extdir/lsm_am--$(sed -n "s/^default_version *= *'\([^']*\)'.*/\1/p" "$src/lsm_am.control").sql" ] ||
	fail "the install script of lsm_am.control's default_version is not installed"
extra=$(cd "$extdir" && ls | grep -v -e '^lsm_am\.control$' -e '^lsm_am--.*\.sql$' || true)
say "installed: lib/lsm_am.so, extension/lsm_am.control and $n sql/lsm_am--*.sql$([ -n "$extra" ] && echo " (and $(echo $extra))")"
say "ok: $top.zip of $head builds and installs with PGXS alone"
