#!/usr/bin/env bash
# tests/check_docs.sh — README's Functions table names every column of every
# lsm_am function exactly as the extension script defines it.
#
# For the version in lsm_am.control (sql/lsm_am--VERSION.sql), every
# function of the lsm_am schema but the AM handler must appear in README's
# Functions table; in its row, the identifiers in backticks of the second
# cell must be exactly its OUT columns (argument names may appear too), so
# a column renamed in SQL, or a documented column that does not exist,
# fails.  Views of the lsm_am schema likewise: each has a row starting
# `lsm_am.VIEW` (view) whose backticked identifiers are its columns; the
# columns a view takes from a function by `*` may instead be left to that
# function's row, which the view's row must name as `lsm_am.function(...)`.
# Prints what it checked; exits 1 on a mismatch.
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
# views: CREATE VIEW lsm_am.v AS SELECT <list> FROM ...
my %vrow;
for my $line (split /\n/, $section)
{
	next unless $line =~ /^\|\s*`lsm_am\.(\w+)`\s*\(view\)/;
	my $v = $1;
	my (undef, undef, $cell) = split /\|/, $line, 4;
	$vrow{$v} = $cell;
}
my $nviews = 0;
while ($sql =~ /CREATE\s+(?:OR\s+REPLACE\s+)?VIEW\s+lsm_am\.(\w+)\s+AS\s+SELECT\s+(.*?)\s+FROM\s+(.*?);/gsi)
{
	my ($v, $list, $from) = ($1, $2, $3);
	$nviews++;
	unless (defined $vrow{$v})
	{
		print "docs: view lsm_am.$v has no row in README'"'"'s Functions table\n";
		$bad++;
		next;
	}
	my %doc = map { $_ => 1 } ($vrow{$v} =~ /`([a-z_][a-z0-9_]*)`/g);
	my @own;
	my @expanded;
	for my $item (split /,/, $list)
	{
		$item =~ s/^\s+|\s+$//g;
		if ($item =~ /^(?:\w+\.)?\*$/) { push @expanded, ($from =~ /lsm_am\.(\w+)\(/g); }
		elsif ($item =~ /(?:AS\s+)?"?(\w+)"?$/i) { push @own, $1; }
	}
	for my $c (@own)
	{
		$cols++;
		next if delete $doc{$c};
		print "docs: README does not name column $c of view lsm_am.$v\n";
		$bad++;
	}
	for my $f (@expanded)
	{
		if ($vrow{$v} !~ /`lsm_am\.$f\(/)
		{
			print "docs: the row of view lsm_am.$v does not name lsm_am.$f(), whose columns it has\n";
			$bad++;
		}
		delete $doc{$_} for @{ $out{$f} || [] };
	}
	for my $c (sort keys %doc)
	{
		print "docs: README names a column $c that view lsm_am.$v does not have\n";
		$bad++;
	}
}
printf "docs: %d functions, %d views, %d columns checked against %s\n", scalar(keys %out), $nviews, $cols, $script;
exit($bad ? 1 : 0);
' "$script" "$repo/README.md"
