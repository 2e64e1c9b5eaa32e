# 012_upgrade.pl — pg_upgrade from an older PostgreSQL (15 on Debian 12, 17
# in the Debian 13 chroot) to the version under test keeps lsm indexes
# working.
#
# The on-disk format is lsm_am's own (metapage, log pages, runs) and does not
# depend on the server version, and pg_upgrade keeps relfilenodes and
# database OIDs, so the index files are carried over as they are.  The old
# cluster holds a run written by CREATE INDEX, an L0 run from a flush, a
# non-empty memtable (entries only in log pages), an ICU-collated text index
# and an unlogged lsm index; after the upgrade every query must give the
# answers it gave before, the memtable must be rebuilt from the log pages, and
# inserts, flushes, compactions and VACUUM must work.
#
# Runs only on 18 with LSM_UPGRADE_FROM naming an older PostgreSQL
# installation (the directory holding bin/) that has lsm_am installed;
# tests/run_all.sh --pg 18 sets it (the system's 15, or inside the Debian 13
# chroot its 17).
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use LsmCluster;

my $old_install = $ENV{LSM_UPGRADE_FROM} // '';
my $new_version = PostgreSQL::Test::Cluster->new('probe')->pg_version;
# LSM_UPGRADE_REQUIRED=1 (tests/run_all.sh --pg 17 sets it for the upgrade
# to 18 in the chroot): a missing old installation fails, it does not skip
sub skip_or_fail
{
	my $why = shift;
	BAIL_OUT("LSM_UPGRADE_REQUIRED is set, yet $why") if $ENV{LSM_UPGRADE_REQUIRED};
	plan skip_all => $why;
}
skip_or_fail("pg_upgrade is tested on PostgreSQL 18 only (this is $new_version)") if $new_version < 18;
skip_or_fail('LSM_UPGRADE_FROM (an older PostgreSQL installation) is not set') if $old_install eq '';
skip_or_fail("$old_install/bin/pg_config does not exist") unless -x "$old_install/bin/pg_config";
my $old_libdir = `$old_install/bin/pg_config --pkglibdir`;
chomp $old_libdir;
skip_or_fail("lsm_am is not installed in $old_install ($old_libdir)")
  unless -f "$old_libdir/lsm_am.so";

my $conf = qq{
shared_preload_libraries = 'lsm_am'
autovacuum = off
lsm_am.max_workers = 0
};

my $old = PostgreSQL::Test::Cluster->new('old', install_path => $old_install);
$old->init(extra => [ initdb_args() ]);
$old->append_conf('postgresql.conf', $conf);
$old->start;
my $old_major = $old->pg_version->major;
ok($old->pg_version < $new_version, "old cluster runs " . $old->pg_version . ", older than $new_version");

sub osql { return $old->safe_psql('postgres', $_[0]); }

# s under ICU; under "C" on a server built without ICU
my $s_coll = have_icu($old) ? 'und-x-icu' : 'C';
note("no ICU collations on the old server: t.s is COLLATE \"C\"") if $s_coll eq 'C';
osql(qq{
CREATE EXTENSION lsm_am;
CREATE TABLE t (id int GENERATED ALWAYS AS IDENTITY, k bigint, s text COLLATE "$s_coll");
INSERT INTO t (k, s) SELECT (hashint4(g)::bigint * 7919) % 1000003, md5(g::text)
    FROM generate_series(1, 20000) g;
CREATE INDEX t_k ON t USING lsm (k);
CREATE INDEX t_s ON t USING lsm (s);
INSERT INTO t (k, s) SELECT (hashint4(g)::bigint * 7919) % 1000003, md5(g::text)
    FROM generate_series(20001, 25000) g;
SELECT lsm_am.flush('t_k');
SELECT lsm_am.flush('t_s');
INSERT INTO t (k, s) SELECT (hashint4(g)::bigint * 7919) % 1000003, md5(g::text)
    FROM generate_series(25001, 28000) g;
DELETE FROM t WHERE id % 10 = 0;
CREATE UNLOGGED TABLE u (k int);
INSERT INTO u SELECT g * 3 FROM generate_series(1, 6000) g;
CREATE INDEX u_k ON u USING lsm (k);
INSERT INTO u SELECT g * 3 + 1 FROM generate_series(1, 2000) g;
});

my %before_stats;
for my $idx (qw(t_k t_s u_k))
{
	$before_stats{$idx} = osql("SELECT memtable_entries, runs FROM lsm_am.index_stats('$idx')");
	my ($mem, $runs) = split /\|/, $before_stats{$idx};
	cmp_ok($mem, '>', 0, "before: $idx has $mem entries only in its memtable (log pages)");
	cmp_ok($runs, '>=', 1, "before: $idx has $runs runs");
}
like($before_stats{t_k}, qr/\|2$/, 'before: t_k has the CREATE INDEX run and a flushed run');

my $IDX = 'SET enable_seqscan = off; SET enable_bitmapscan = off;';
my $SEQ = 'SET enable_indexscan = off; SET enable_bitmapscan = off; SET enable_indexonlyscan = off;';
my @queries = (
	"SELECT count(*), sum(k) FROM t WHERE k BETWEEN 1000 AND 600000",
	"SELECT string_agg(k::text, ',' ORDER BY k) FROM (SELECT k FROM t ORDER BY k LIMIT 20) x",
	"SELECT string_agg(k::text, ',') FROM (SELECT k FROM t ORDER BY k DESC LIMIT 20) x",
	"SELECT count(*), min(id), max(id) FROM t WHERE s >= 'a' AND s < 'c'",
	"SELECT string_agg(s, ',') FROM (SELECT s FROM t WHERE s > 'f0' ORDER BY s LIMIT 10) x",
	"SELECT count(*), sum(k) FROM u WHERE k > 3000",
	"SELECT count(*) FROM t WHERE k IN (SELECT k FROM t WHERE id % 97 = 1)",
);
my @want = map { osql("$SEQ $_") } @queries;
for my $i (0 .. $#queries)
{
	is(osql("$IDX $queries[$i]"), $want[$i], "before: index answers query $i like a seq scan");
}

# PostgreSQL 15.20 (Debian 12's current 15) stores a column option pg_attver
# on every column of every table, and 18.6 rejects it ("unrecognized
# parameter"), so pg_upgrade from it fails for any table, lsm or not.  Take
# the option out of the old catalog so the upgrade can run (README: Upgrading).
my $attver = osql("SELECT count(*) FROM pg_attribute WHERE attoptions::text LIKE '%pg_attver=%'");
if ($attver > 0)
{
	note "removing the pg_attver option of $attver columns (15.20 sets it, 18.6 rejects it)";
	osql(q{UPDATE pg_attribute
	       SET attoptions = (SELECT CASE WHEN count(*) = 0 THEN NULL ELSE array_agg(o) END
	                         FROM unnest(attoptions) o WHERE o NOT LIKE 'pg_attver=%')
	       WHERE attoptions::text LIKE '%pg_attver=%'});
}
$old->stop;

# ---------------------------------------------------------------- upgrade
my $new = PostgreSQL::Test::Cluster->new('new');
# 18's initdb turns data checksums on by default; the old cluster has none.
$new->init(extra => [ '--no-data-checksums', initdb_args() ]);
$new->append_conf('postgresql.conf', $conf);

my $sockdir = PostgreSQL::Test::Utils::tempdir_short();
my $outdir = PostgreSQL::Test::Utils::tempdir();
my $upgraded = run_log(
	[
		'pg_upgrade', '--no-sync',
		'-d', $old->data_dir, '-D', $new->data_dir,
		'-b', $old->config_data('--bindir'), '-B', $new->config_data('--bindir'),
		'-s', $sockdir, '-p', $old->port, '-P', $new->port,
	]);
ok($upgraded, "pg_upgrade from $old_major with lsm indexes succeeds") or do
{
	# show why: pg_upgrade keeps its logs in the new data directory
	for my $f (glob($new->data_dir . '/pg_upgrade_output.d/*/log/*.log'))
	{
		my @lines = split /\n/, slurp_file($f);
		diag("---- $f (last lines)\n" . join("\n", @lines[ ($#lines > 20 ? $#lines - 20 : 0) .. $#lines ]));
	}
	BAIL_OUT('pg_upgrade failed');
};
$new->start;

sub nsql { return $new->safe_psql('postgres', $_[0]); }

ok($new->pg_version >= 18, "new cluster runs " . $new->pg_version);
for my $idx (qw(t_k t_s u_k))
{
	is(nsql("SELECT memtable_entries, runs FROM lsm_am.index_stats('$idx')"), $before_stats{$idx},
		"after: $idx has the same runs, and its memtable is rebuilt from the log pages");
	is(nsql("SELECT leaked_pages FROM lsm_am.check_index('$idx')"), '0',
		"after: check_index accounts for every page of $idx");
}
for my $i (0 .. $#queries)
{
	is(nsql("$IDX $queries[$i]"), $want[$i], "after: index answers query $i as before the upgrade");
}
my $plan = nsql("$IDX EXPLAIN (COSTS OFF) SELECT k FROM t ORDER BY k LIMIT 10");
like($plan, qr/Index (Only )?Scan using t_k/, 'after: ORDER BY k LIMIT 10 scans t_k');
unlike($plan, qr/Sort/, 'after: ... in index order, without a Sort');

# writes, flush, compaction, VACUUM on the upgraded indexes
nsql(q{
INSERT INTO t (k, s) SELECT (hashint4(g)::bigint * 7919) % 1000003, md5(g::text)
    FROM generate_series(28001, 33000) g;
INSERT INTO u SELECT g * 3 + 2 FROM generate_series(1, 2000) g;
DELETE FROM t WHERE id % 7 = 0;
VACUUM t;
SELECT lsm_am.flush('t_k');
SELECT lsm_am.compact('t_s');
SELECT lsm_am.compact('u_k');
});
for my $i (0 .. $#queries)
{
	is(nsql("$IDX $queries[$i]"), nsql("$SEQ $queries[$i]"),
		"after writes, VACUUM, flush and compaction: index answers query $i like a seq scan");
}
for my $idx (qw(t_k t_s u_k))
{
	is(nsql("SELECT leaked_pages FROM lsm_am.check_index('$idx')"), '0',
		"after writes: check_index accounts for every page of $idx");
}
is(nsql("SELECT extversion FROM pg_extension WHERE extname = 'lsm_am'"), '0.5',
	'the extension keeps its version through pg_upgrade');

$new->stop;
done_testing();
