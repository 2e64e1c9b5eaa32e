# 036_free_list.pl — a full free list makes room instead of dropping pages
# (doc/impl.md, "Page recycling"; storage/lsmalloc.c, LsmFreeMakeRoom).
#
# The metapage's free list holds 160 extents.  Each keeps its own horizon,
# and one retired while a snapshot is held cannot be reused or coalesced
# with its neighbours until the snapshot ends, so merges under inserts
# leave many entries.  Until 2026-12-07 an extent that found the list full and
# had no neighbour was dropped: its pages belonged to nothing until REINDEX
# (check_index's dropped_pages).  Now the list first settles what is
# reusable, then joins two neighbouring extents (the later horizon: reuse
# delayed, never unsafe), and drops the smallest extent only if it is
# smaller than the new one.
#
# lsm_am.free_list_limit (a test hook) makes the list full at 12 entries,
# where ordinary ingest reaches it within seconds.  Two pgbench clients
# insert random keys for 25 s into an index of 64 kB memtables that merges
# every two flushes, while a REPEATABLE READ snapshot is held for the first
# half.
#  1. Pages dropped for a full list: at most 5% of the file (tried with the
#     old rule: 65% of the file was dropped here, 70% and 95% in two longer
#     scratch runs; with this one, none in four runs), and check_index
#     accounts for every other page.
#  2. No merge failed for the free list (server log); verify(heapallindexed)
#     finds the index sound; every scan kind returns btree's rows.
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use LsmCluster;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;

my $SECS = 25;

my $node = PostgreSQL::Test::Cluster->new('free_list');
$node->init(extra => [ initdb_args() ]);
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'lsm_am'
autovacuum = off
lsm_am.free_list_limit = 12
});
$node->start;

sub sql { return $node->safe_psql('postgres', $_[0]); }

sql(q{
CREATE EXTENSION lsm_am;
CREATE TABLE fl (k int8, kb int8);
CREATE INDEX fl_k ON fl USING lsm (k) WITH (memtable_size = 64, l0_compaction_trigger = 2);
CREATE INDEX fl_kb ON fl (kb);
});
is(sql('SHOW lsm_am.free_list_limit'), '12', 'the free list counts as full at 12 extents');


# a snapshot held for the first half: what merges retire then waits for it
my ($h_out, $h_err) = ('', '');
my $holder = IPC::Run::start(
	[
		'psql', '-XAtq', '-h', $node->host, '-p', $node->port, '-d', 'postgres', '-c',
		'BEGIN ISOLATION LEVEL REPEATABLE READ; SELECT count(*) FROM pg_class; '
		  . 'SELECT pg_sleep(' . int($SECS / 2) . '); COMMIT'
	],
	'>', \$h_out, '2>', \$h_err);
my $bench = random_inserts($node, 'fl', $SECS);
ok($bench->finish, "$SECS s of inserts by two clients") or diag ${ $bench->{lsm_err} };
ok($holder->finish, 'the snapshot was held for the first half') or diag $h_err;
is(merges_done($node, 'fl_k', '3 min'), 't', 'the workers finish their merges');

my ($leaked, $dropped, $total, $runs, $free) = split /\|/, sql(
	'SELECT leaked_pages, dropped_pages, total_pages, run_pages, free_pages FROM lsm_am.check_index(\'fl_k\')');
my $rows = sql('SELECT count(*) FROM fl');
note "$rows rows; file $total pages: runs $runs, free $free, dropped $dropped, leaked $leaked";
cmp_ok($rows, '>', 50000, "the clients inserted rows ($rows)");
cmp_ok($dropped, '<=', 0.05 * $total,
	"pages dropped for a full free list: $dropped of $total (at most 5%)");
is($leaked - $dropped, 0, 'check_index finds every other page accounted for');

# a merge whose piece fell off the list would fail at its publication
my $log = slurp_file($node->logfile);
unlike($log, qr/is not free|changed during a compaction|free list is full/,
	'no merge failed for the free list (server log)');
is($node->psql('postgres', "SELECT lsm_am.verify('fl_k', true)"), 0,
	'verify(heapallindexed) finds the index sound');
scans_match_btree($node, 'fl', 'fl_k');

$node->stop;
done_testing();
