#!/usr/bin/env bash
# tests/check_docs.sh — README's Functions table names every column of every
# lsm_am function exactly as the extension script defines it.
#
# For the version in lsm_am.control (sql/lsm_am--VERSION.sql), every
# function of the lsm_am schema but the AM handler must appear in README's
# Functions table; in its row, the identifiers in backticks of the second
# cell must be exactly its OUT columns (argument names may appear too), so
# a column renamed in SQL, or a documented column that does not exist,
# fails.  Prints what it checked; exits 1 on a mismatch.
#
#   bash tests/check_docs.sh
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
ver=$(sed -n "s/^default_version *= *'\(.*\)'/\1/p" "$repo/lsm_am.control")
script=$repo/sql/lsm_am--$ver.sql
[ -f "$script" ] || { echo "docs: no extension script $script" >&2; exit 1; }
exec perl -e '
use strict;
use warnings;
my ($script, $readme) = @ARGV;
local $/;
open my $s, "<", $script or die "$script: $!";
my $sql = <$s>;
open my $r, "<", $readme or die "$readme: $!";
my $md = <$r>;
my (%out, %args);
while ($sql =~ /CREATE\s+(?:OR\s+REPLACE\s+)?FUNCTION\s+lsm_am\.(\w+)\s*\((.*?)\)\s*RETURNS/gsi)
{
	my ($f, $params) = ($1, $2);
	next if $f eq "lsm_handler";
	$out{$f} = [];
	$args{$f} = {};
	for my $p (split /,/, $params)
	{
		$p =~ s/^\s+//;
		if ($p =~ /^OUT\s+(\w+)/i) { push @{ $out{$f} }, $1; }
		elsif ($p =~ /^(?:IN\s+)?(\w+)\s+\w/i) { $args{$f}{$1} = 1; }
	}
}
my ($section) = $md =~ /\n## Functions\n(.*?)(?=\n## )/s
  or die "README.md has no Functions section\n";
my (%row, %mentioned);
for my $line (split /\n/, $section)
{
	next unless $line =~ /^\|\s*`lsm_am\.(\w+)\(/;
	my $f = $1;
	my (undef, undef, $cell) = split /\|/, $line, 4;
	$row{$f} = $cell;
	$mentioned{$1} = 1 while $line =~ /lsm_am\.(\w+)\(/g;
}
my $bad = 0;
my $cols = 0;
for my $f (sort keys %out)
{
	unless ($mentioned{$f})
	{
		print "docs: lsm_am.$f is not in README'"'"'s Functions table\n";
		$bad++;
		next;
	}
	next unless defined $row{$f};
	my %doc = map { $_ => 1 } ($row{$f} =~ /`([a-z_][a-z0-9_]*)`/g);
	for my $c (@{ $out{$f} })
	{
		$cols++;
		next if delete $doc{$c};
		print "docs: README does not name column $c of lsm_am.$f\n";
		$bad++;
	}
	for my $c (sort keys %doc)
	{
		next if $args{$f}{$c};
		print "docs: README names a column $c that lsm_am.$f does not have\n";
		$bad++;
	}
}
printf "docs: %d functions, %d columns checked against %s\n", scalar(keys %out), $cols, $script;
exit($bad ? 1 : 0);
' "$script" "$repo/README.md"
