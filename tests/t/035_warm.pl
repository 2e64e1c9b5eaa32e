# 035_warm.pl — the shared metadata cache is warmed when an index is first
# used after a restart (doc/impl.md, "Scans"; storage/lsmruncache.c,
# "Warming").  A restart empties the cache; the first use of an index loads
# its slot from its log pages and queues LSM_WORK_WARM, and a worker puts
# every run's header and fence pages, and the filter pages outside the large
# levels, into the cache (one LOG line with lsm_am.log_maintenance).
#  1. Six level-0 runs: after the first connection's lookup the worker warms
#     what it did not read (pages warmed + pages already there = the six
#     headers, their fence pages and all their filter pages), and another
#     connection's first lookup in a run the first one did not descend reads
#     the data page alone.  Without the warm it reads that run's header
#     (and filter pages the first lookup did not touch): tried, it fails.
#  2. A large level (one compacted run of 40,000 entries) and a level-0 run
#     of 1,000: the warm leaves the large level's filter out and takes its
#     header and fences; a new connection's first lookup of a key there
#     passes the filter over and reads the data page alone.
#  3. Once per load: other connections do not warm again.
#  4. Every answer equals btree's.
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use LsmCluster;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);

my $node = PostgreSQL::Test::Cluster->new('warm');
$node->init(extra => [ initdb_args() ]);
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'lsm_am'
autovacuum = off
lsm_am.worker_naptime = 100
lsm_am.l0_compaction_trigger = 64
lsm_am.l0_slowdown_trigger = 100
lsm_am.l0_stop_trigger = 100
lsm_am.metadata_cache_size = '8MB'
lsm_am.log_maintenance = on
});
$node->start;

sub sql { return $node->safe_psql('postgres', $_[0]); }
my $off = 'SET enable_seqscan = off; SET enable_bitmapscan = off;';

sql(q{
CREATE EXTENSION lsm_am;
CREATE TABLE wl (k int8);
CREATE INDEX wl_k ON wl USING lsm (k);
CREATE TABLE wb (k int8);
CREATE INDEX wb_k ON wb (k);
CREATE TABLE wz (k int8);
CREATE INDEX wz_k ON wz USING lsm (k);
INSERT INTO wz VALUES (5);
CREATE TABLE dl (k int8);
CREATE INDEX dl_k ON dl USING lsm (k);
CREATE TABLE db (k int8);
CREATE INDEX db_k ON db (k);
});
for my $r (0 .. 5)
{
	sql(qq{
INSERT INTO wl SELECT 7 * g + $r FROM generate_series(1, 20000) g;
SELECT lsm_am.flush('wl_k');
});
}
sql(q{
INSERT INTO wb SELECT * FROM wl;
INSERT INTO dl SELECT 7 * g FROM generate_series(1, 40000) g;
SELECT lsm_am.flush('dl_k');
SELECT lsm_am.compact('dl_k');
INSERT INTO dl SELECT 7 * g + 3 FROM generate_series(1, 1000) g;
SELECT lsm_am.flush('dl_k');
INSERT INTO db SELECT * FROM dl;
});
is(sql(q{SELECT string_agg(level::text, ',' ORDER BY level) FROM lsm_am.manifest('wl_k') WHERE kind = 'run'}),
	'0,0,0,0,0,0', 'wl_k: six runs at level 0');
is(sql(q{SELECT string_agg(level || ':' || entries, ',' ORDER BY level) FROM lsm_am.manifest('dl_k') WHERE kind = 'run'}),
	'0:1000,1:40000', 'dl_k: a run of 40,000 entries at level 1 (a large level) and one of 1,000 at level 0');

# What a warm of the index puts: each run's header and fence pages, and the
# filter pages of the runs outside the large levels (here: level 0).
sub expected_pages
{
	my ($idx) = @_;
	return sql(qq{
SELECT sum(CASE WHEN h.kind IN ('run header', 'run fence') THEN 1
                WHEN h.kind = 'run bloom' AND m.level = 0 THEN 1 ELSE 0 END)
  FROM lsm_am.manifest('$idx') m,
       LATERAL generate_series(m.start_block, m.start_block + m.pages - 1) b,
       LATERAL lsm_am.page_header('$idx', b) h
 WHERE m.kind = 'run'});
}
my %expected = (wl_k => expected_pages('wl_k'), dl_k => expected_pages('dl_k'));
note("pages a warm puts: wl_k $expected{wl_k}, dl_k $expected{dl_k}");
ok($expected{wl_k} > 6, "wl_k: headers and filter pages to warm ($expected{wl_k})");
ok($expected{dl_k} >= 2, "dl_k: headers, fences and level 0's filter to warm ($expected{dl_k})");
is(sql(q{SELECT count(*) FROM lsm_am.manifest('dl_k') m,
       LATERAL generate_series(m.start_block, m.start_block + m.pages - 1) b,
       LATERAL lsm_am.page_header('dl_k', b) h
 WHERE m.kind = 'run' AND m.level = 1 AND h.kind = 'run bloom' HAVING count(*) > 0}),
	sql(q{SELECT count(*) FROM lsm_am.manifest('dl_k') m,
       LATERAL generate_series(m.start_block, m.start_block + m.pages - 1) b,
       LATERAL lsm_am.page_header('dl_k', b) h
 WHERE m.kind = 'run' AND m.level = 1 AND h.kind = 'run bloom'}),
	'dl_k: the large level has filter pages (which the warm leaves out)');

# The index's buffer accesses of one lookup in a new connection (stats
# flushed after it: the backend goes idle between psql's statements).
sub first_lookup
{
	my ($tab, $idx, $key) = @_;
	my $count = "SELECT idx_blks_hit + idx_blks_read FROM pg_statio_user_indexes WHERE indexrelid = '$idx'::regclass";
	return $node->safe_psql('postgres', qq{
SELECT ($count) AS s0 \\gset
$off
SELECT count(*) FROM $tab WHERE k = $key \\gset
SELECT pg_stat_force_next_flush() AS flushed \\gset
SELECT 1 AS one \\gset
SELECT ($count) - :s0;
});
}
# the baseline: an index with no runs (metapage accesses only), its slot loaded
first_lookup('wz', 'wz_k', 5);
my $z = first_lookup('wz', 'wz_k', 5);
ok($z >= 1, "an index with no runs: $z metapage accesses");

# The warm's LOG lines of idx since log offset $from, as [pages, runs, cached].
sub warms
{
	my ($idx, $from) = @_;
	my $log = slurp_file($node->logfile, $from);
	my @w;
	while ($log =~ /lsm_am warm of index "public\.$idx": (\d+) pages of (\d+) runs into the shared metadata cache \((\d+) read from disk, (\d+) there already\)/g)
	{
		push @w, [ $1, $2, $4 ];
	}
	return @w;
}

sub wait_warm
{
	my ($idx, $from) = @_;
	my $deadline = time + $PostgreSQL::Test::Utils::timeout_default;
	while (time < $deadline)
	{
		my @w = warms($idx, $from);
		return @w if @w;
		usleep(100_000);
	}
	diag("no warm of $idx was logged:\n" . slurp_file($node->logfile, $from));
	return ();
}

$node->restart;
my $from = -s $node->logfile;

# 1. six level-0 runs: the first connection's lookup of a key of run 3
# loads the slot; the worker warms the rest
is(sql("$off SELECT count(*) FROM wl WHERE k = 7 * 100 + 3"), '1', 'after the restart, a key of run 3: its row');
my @w = wait_warm('wl_k', $from);
is(scalar(@w), 1, 'wl_k: one warm after its first use');
my ($pages, $runs, $cached) = @{ $w[0] // [ 0, 0, 0 ] };
is($runs, 6, 'the warm looked at the six runs');
ok($pages > 0, "the warm put $pages pages into the cache");
is($pages + $cached, $expected{wl_k},
	"the warm's pages ($pages) and those already cached ($cached) are every header, fence and filter page of the runs");
for my $key (7 * 12345 + 1, 7 * 17 + 5, 7 * 19000 + 0)
{
	my $e = first_lookup('wl', 'wl_k', $key) - $z;
	is($e, 1, "key $key (a run the first lookup did not descend), a new connection's first lookup: the data page alone");
}

# 2. a large level: its filter is left out, its header and fences go in
is(sql("$off SELECT count(*) FROM dl WHERE k = 7 * 30000"), '1', 'dl_k after the restart, a key of level 1: its row');
@w = wait_warm('dl_k', $from);
is(scalar(@w), 1, 'dl_k: one warm after its first use');
($pages, $runs, $cached) = @{ $w[0] // [ 0, 0, 0 ] };
is($runs, 2, 'the warm looked at both runs');
is($pages + $cached, $expected{dl_k},
	"dl_k: the warm's pages ($pages) and those already cached ($cached): headers, fences and level 0's filter, not level 1's");
for my $key (7 * 123, 7 * 39999)
{
	my $e = first_lookup('dl', 'dl_k', $key) - $z;
	is($e, 1, "dl_k key $key (level 1), a new connection's first lookup: the data page alone (the large level's filter passed over)");
}

# 3. once per load
for my $i (1 .. 3)
{
	sql("$off SELECT count(*) FROM wl WHERE k = 7 * $i; SELECT count(*) FROM dl WHERE k = 7 * $i");
}
sleep(1);
is(scalar(warms('wl_k', $from)) . ',' . scalar(warms('dl_k', $from)), '1,1',
	'other connections do not warm the indexes again');

# 4. answers
for my $key (7, 8, 13, 7 * 9999 + 2, 7 * 9999 + 6, 7 * 20000 + 5, 7 * 20001, -1, 0)
{
	is(sql("$off SELECT count(*) FROM wl WHERE k = $key"),
		sql("$off SELECT count(*) FROM wb WHERE k = $key"),
		"wl_k key $key after the warm: lsm and btree agree");
	is(sql("$off SELECT count(*) FROM dl WHERE k = $key"),
		sql("$off SELECT count(*) FROM db WHERE k = $key"),
		"dl_k key $key after the warm: lsm and btree agree");
}
is(sql("$off SELECT count(*) FROM wl WHERE k BETWEEN 700 AND 1400"),
	sql("$off SELECT count(*) FROM wb WHERE k BETWEEN 700 AND 1400"),
	'a range after the warm: lsm and btree agree');
is(sql(q{SELECT count(*) FROM lsm_am.verify('wl_k', true)}), '1', 'verify is clean');

$node->stop;
done_testing();
