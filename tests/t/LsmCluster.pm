# LsmCluster — the encoding and locale of every TAP test cluster.
#
# initdb takes both from the environment unless told: without LANG it makes
# a SQL_ASCII cluster with locale C (no ICU collations, no C.UTF-8, no
# non-ASCII text), and under LANG=en_US.UTF-8 one whose default collation lsm
# refuses for an index column.  So every test initializes its clusters with
# initdb_args(), and they are the same under `make installcheck` as under
# tests/run_all.sh: UTF8, locale C.UTF-8 (C where the OS lacks C.UTF-8; both
# order text by bytes, which lsm accepts).
#
#   use FindBin; use lib $FindBin::RealBin; use LsmCluster;
#   $node->init(extra => [ initdb_args() ]);
#   my $icu = have_icu($node);    # false on a server built without ICU
package LsmCluster;

use strict;
use warnings;
use Exporter 'import';

our @EXPORT = qw(initdb_args have_icu);

my $locale;

# initdb_args(): --encoding=UTF8 and --locale=C.UTF-8 (or C).
sub initdb_args
{
	if (!defined $locale)
	{
		my @have = `locale -a 2>/dev/null`;
		$locale = (grep { /^C\.utf-?8$/i } @have) ? 'C.UTF-8' : 'C';
	}
	return ('--encoding=UTF8', "--locale=$locale");
}

# have_icu(NODE[, DB]): whether the running server has ICU collations (a
# server built without ICU has none); tests skip their ICU parts otherwise.
sub have_icu
{
	my ($node, $db) = @_;
	return $node->safe_psql($db // 'postgres',
		q{SELECT to_regcollation('pg_catalog."und-x-icu"') IS NOT NULL}) eq 't';
}

1;
