# 032_merge_buffers.pl — a merge does not sweep shared buffers (doc/impl.md,
# "Merges and shared buffers").  A merge reads its inputs through a ring of
# a few buffers and writes its output's data pages through another ring,
# logging them 32 at a time as it writes them; only the output's header,
# fence and filter pages, which every lookup in the run reads, take
# ordinary buffers.  So a full compaction of an index several times
# shared_buffers leaves the pages other sessions were using in shared
# buffers:
#  1. a small table read just before lsm_am.compact() of an index of about
#     4x shared_buffers is read from shared buffers after it (EXPLAIN
#     BUFFERS: at most a tenth of its pages read from outside), as it is
#     when nothing runs in between; with every output page in ordinary
#     buffers (before 0.5) the compaction evicted all of it;
#  2. every page of the merged run carries the LSN of a WAL record written
#     during the compaction (each page is logged, none was left for the
#     end), and an immediate stop right after the compaction loses nothing:
#     after recovery verify(heapallindexed) passes and every answer equals
#     the heap's.
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use LsmCluster;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('merge_buffers');
$node->init(extra => [ initdb_args() ]);
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'lsm_am'
shared_buffers = '16MB'
autovacuum = off
lsm_am.max_workers = 0
lsm_am.l0_compaction_trigger = 64
lsm_am.l0_slowdown_trigger = 100
lsm_am.l0_stop_trigger = 100
});
$node->start;

sub sql { return $node->safe_psql('postgres', $_[0]); }

# hot's pages read from outside shared buffers by a sequential scan of it
sub hot_reads
{
	my $plan = sql('EXPLAIN (ANALYZE, BUFFERS, COSTS OFF, TIMING OFF) SELECT count(*) FROM hot');
	my ($buffers) = $plan =~ /Seq Scan on hot.*?\n\s+Buffers: ([^\n]*)/s;
	die "no Buffers line for the scan of hot in:\n$plan" unless defined $buffers;
	my ($read) = $buffers =~ /read=(\d+)/;
	return $read // 0;
}

# six level-0 runs of 100,000 96-byte keys each (about 70 MB in all against
# 16 MB of shared buffers), and a table of about 290 pages (under a quarter
# of shared buffers, so that its sequential scans use ordinary buffers)
sql(q{
CREATE EXTENSION lsm_am;
CREATE TABLE big (k text);
CREATE INDEX big_k ON big USING lsm (k);
});
for my $r (0 .. 5)
{
	sql(qq{
INSERT INTO big
SELECT md5(g::text) || md5((g + 1)::text) || md5((g + 2)::text)
  FROM generate_series($r * 100000 + 1, ($r + 1) * 100000) g;
SELECT lsm_am.flush('big_k');
});
}
sql(q{
CREATE TABLE hot AS SELECT g AS a, repeat('x', 200) AS b FROM generate_series(1, 10000) g;
CHECKPOINT;
});
my $hot_pages = sql(q{SELECT pg_relation_size('hot') / current_setting('block_size')::int});
my $index_pages = sql(q{SELECT pg_relation_size('big_k') / current_setting('block_size')::int});
cmp_ok($index_pages, '>=', 4 * 2048, "the index ($index_pages pages) is at least 4x shared_buffers (2,048 pages)");
like(sql(q{SELECT level || ':' || count(*) FROM lsm_am.index_info('big_k') GROUP BY level}),
	qr/^0:([6-9]|[1-9][0-9])$/, 'six or more level-0 runs to merge');

# ---------------------------------------------- 1. the pages others use stay
hot_reads();
my $idle = hot_reads();
is($idle, 0, "hot ($hot_pages pages) is in shared buffers after a scan of it");

hot_reads();
my $lsn0 = sql('SELECT pg_current_wal_insert_lsn()');
sql(q{SELECT lsm_am.compact('big_k')});
my $lsn1 = sql('SELECT pg_current_wal_insert_lsn()');
is(sql(q{SELECT level || ':' || count(*) FROM lsm_am.index_info('big_k') GROUP BY level}),
	'1:1', 'compact() merged the six runs into one');
my $after = hot_reads();
cmp_ok($after, '<=', int($hot_pages / 10),
	"after compact() wrote an index of $index_pages pages, a scan of hot reads $after of its $hot_pages pages from outside shared buffers");

# ---------------------------------------------- 2. every page logged, crash
my ($start, $npages) = split /\|/,
  sql(q{SELECT start_block, pages FROM lsm_am.manifest('big_k') WHERE kind = 'run'});
# the extent: header, data and fence pages, then the filter's (126 blocks a
# page, doc/page_format.md)
my ($bstart, $bblocks) = split /\|/,
  sql(q{SELECT bloom_start, bloom_blocks FROM lsm_am.manifest('big_k') WHERE kind = 'run'});
ok($bblocks > 0, 'the merged run has a filter');
is($bstart + int(($bblocks + 125) / 126), $npages, 'its filter pages end its extent');
my $last = $start + $npages - 1;
is(sql(qq{SELECT count(*) FILTER (WHERE h.lsn > '$lsn0' AND h.lsn <= '$lsn1') || '/' || count(*)
            FROM generate_series($start, $last) b, lsm_am.page_header('big_k', b) h}),
	($last - $start + 1) . '/' . ($last - $start + 1),
	'every page of the merged run (header, data, fence, filter) carries the LSN of a record the compaction wrote');

my $want = sql(q{SET enable_indexscan = off; SET enable_bitmapscan = off;
SELECT count(*), count(DISTINCT k), min(k), max(k) FROM big});
$node->stop('immediate');
$node->start;
my ($ret, $out, $err) = $node->psql('postgres', q{SELECT lsm_am.verify('big_k', true)});
is("$ret|$err", '0|', 'after an immediate stop right after compact(), verify(heapallindexed) passes');
my $F = 'SET enable_seqscan = off; SET enable_bitmapscan = off; SET enable_indexonlyscan = off;';
is(sql(qq{$F SELECT count(*), count(DISTINCT k), min(k), max(k) FROM big WHERE k > ''}), $want,
	'and the index answers as the heap does');
for my $g (1, 123457, 599999)
{
	is(sql(qq{$F SELECT count(*) FROM big WHERE k = md5('$g') || md5('@{[ $g + 1 ]}') || md5('@{[ $g + 2 ]}')}),
		'1', "point lookup of key $g after recovery");
}
is(sql(qq{$F SELECT count(*) FROM big WHERE k = 'no such key'}), '0', 'a missing key after recovery');

$node->stop;
done_testing();
