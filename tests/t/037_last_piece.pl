# 037_last_piece.pl — a merge's last piece is reserved for all that is left
# (storage/lsmrun.c, LsmMergeRuns; doc/impl.md, "Compaction").
#
# A leveled merge cuts its output into pieces, each in an extent fitted to
# a free hole.  How many it may write depends on the manifest's room
# (LsmPieceLimit: a manifest near its 96 runs leaves a merge two or three),
# and the last piece it may write takes everything left.  Until 2026-12-07
# that last piece was reserved like any other, one piece's size fitted to
# a hole: it outgrew the hole and was copied, with everything it had
# written, to the end of the file.  In a capped 20-minute ingest that made
# level-2 outputs of 90-160 MB (pieces of 7 MB) grow the file while a
# 2.9 GB hole stood free.  Now the last piece's extent holds all that is
# left (a hole that large, else the end), and a reservation that must still
# grow moves to a free hole that holds it, not to the end.
#
# lsm_am.max_pieces (a test hook, SIGHUP) caps every merge at 2 pieces, as
# a nearly full manifest does; lsm_am.log_maintenance logs every job, with
# the pages copied when an output outgrew its extent.  Two pgbench clients
# insert random keys for 25 s into an index of 64 kB memtables that merges
# every two flushes.
#  1. Merges wrote their output in at most 2 pieces, some in exactly 2.
#  2. No merge's output outgrew its extent (tried on 18 with the last
#     piece reserved as any piece: merges' outputs outgrew theirs, the
#     first five logged copying 33-152 pages each, and this fails).
#  3. check_index accounts for every page; verify(heapallindexed) finds the
#     index sound; every scan kind returns btree's rows.
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use LsmCluster;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $SECS = 25;

my $node = PostgreSQL::Test::Cluster->new('last_piece');
$node->init(extra => [ initdb_args() ]);
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'lsm_am'
autovacuum = off
lsm_am.max_pieces = 2
lsm_am.log_maintenance = on
});
$node->start;

sub sql { return $node->safe_psql('postgres', $_[0]); }

sql(q{
CREATE EXTENSION lsm_am;
CREATE TABLE lp (k int8, kb int8);
CREATE INDEX lp_k ON lp USING lsm (k) WITH (memtable_size = 64, l0_compaction_trigger = 2);
CREATE INDEX lp_kb ON lp (kb);
});
is(sql('SHOW lsm_am.max_pieces'), '2', 'a merge writes at most 2 pieces');

my $bench = random_inserts($node, 'lp', $SECS);
ok($bench->finish, "$SECS s of inserts by two clients") or diag ${ $bench->{lsm_err} };
is(merges_done($node, 'lp_k', '3 min'), 't', 'the workers finish their merges');

# 1. the compactions' log lines: at most 2 output runs, some with exactly 2
my @merges = grep { /lsm_am compaction of index "public\.lp_k"/ }
  split /\n/, slurp_file($node->logfile);
my @outs = map { /; output: (\d+) runs?/ ? $1 : 0 } @merges;
my $two = grep { $_ == 2 } @outs;
my $more = grep { $_ > 2 } @outs;
note scalar(@merges) . " merges logged, $two of them in 2 pieces";
cmp_ok(scalar(@merges), '>', 10, 'the workers merged (compaction log lines)');
cmp_ok($two, '>', 0, 'some merges wrote 2 pieces');
is($more, 0, 'no merge wrote more than 2 pieces');
# each names the picker's reason (lsm_am.log_maintenance)
my @unsaid = grep { !/; reason: (L0 trigger|(last )?level \d [a-z_ ]+|manifest pressure); / } @merges;
is(scalar(@unsaid), 0, 'every merge line says why the picker chose it')
  or diag join("\n", @unsaid[0 .. ($#unsaid < 4 ? $#unsaid : 4)]);

# 2. no merge's output outgrew its extent
my @grew = grep { /outgrew its extent/ } @merges;
is(scalar(@grew), 0, 'no merge output outgrew its extent and was copied')
  or diag join("\n", @grew[0 .. ($#grew < 4 ? $#grew : 4)]);

# 3. every page accounted for, the index sound, the same rows as btree
my ($leaked, $total, $runs, $free) = split /\|/, sql(
	'SELECT leaked_pages, total_pages, run_pages, free_pages FROM lsm_am.check_index(\'lp_k\')');
my $rows = sql('SELECT count(*) FROM lp');
note "$rows rows; file $total pages: runs $runs, free $free";
cmp_ok($rows, '>', 50000, "the clients inserted rows ($rows)");
is($leaked, 0, 'check_index finds every page accounted for');
is($node->psql('postgres', "SELECT lsm_am.verify('lp_k', true)"), 0,
	'verify(heapallindexed) finds the index sound');
scans_match_btree($node, 'lp', 'lp_k');

$node->stop;
done_testing();
