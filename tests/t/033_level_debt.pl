# 033_level_debt.pl — levels behind their targets slow the writers
# (doc/impl.md, "Backpressure").  A leveled index whose levels above the
# deepest hold more than twice their targets is in debt, as one with many
# level-0 runs is: after every merge the worker sets the index's level debt
# (LsmLevelDebt), and while it is non-zero and a worker can pay it, every
# insert batch takes its turn at the index's shared write rate and counts
# as a slowdown in maintenance_stats.
#  1. An index built at level 3 with levels 1 and 2 under their targets:
#     inserts are not slowed (no debt from levels that keep to them).
#  2. Its level targets shrunk (memtable_size 8MB -> 1MB and
#     l0_compaction_trigger 4 -> 1: level 1's target 2,048 -> 64 pages), so
#     that level 1 holds about 30 times its target; the workers push it down
#     piece by piece, each merge slowed by
#     lsm_am.flush_delay_ms.  Once a merge has ended with level 1 still
#     over, inserts are slowed although level 0 is far below
#     lsm_am.l0_slowdown_trigger (100 here) and no immutable memtable
#     waits: the debt is the levels'.  Without the level debt (tried) none
#     is, and the test fails.
#  3. After the merges the answers equal the heap's.
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use LsmCluster;
use LsmSession;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);

my $node = PostgreSQL::Test::Cluster->new('level_debt');
$node->init(extra => [ initdb_args() ]);
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'lsm_am'
autovacuum = off
lsm_am.max_workers = 2
lsm_am.worker_naptime = 100
lsm_am.l0_slowdown_trigger = 100
lsm_am.l0_stop_trigger = 100
});
$node->start;
my $s = LsmSession->new($node);
sub sql { return $s->safe_psql('postgres', $_[0]); }

# pages per level, "1:1700 2:3100"
sub levels
{
	return sql(q{SELECT string_agg(level || ':' || p, ' ' ORDER BY level)
  FROM (SELECT level, sum(pages) AS p FROM lsm_am.index_info('t_k') GROUP BY level) l});
}

sub mstat
{
	my ($col) = @_;
	return sql("SELECT $col FROM lsm_am.maintenance_stats('t_k')");
}

# Level targets: level 1 holds l0_compaction_trigger flushes of half a
# memtable each (at least 16 pages), each level below size_ratio (10) times
# the one above.  Small targets (memtable_size 1MB, trigger 1: 64, 640,
# 6,400 pages) place the build's run of 2M random keys (about 3,400 pages)
# at level 3; large ones (8MB, 4: 2,048, 20,480) then let levels 1 and 2
# fill under their targets; small ones again put them far over (below).
sql(q{
CREATE EXTENSION lsm_am;
SELECT setseed(0.33);
CREATE TABLE t (k int8);
INSERT INTO t SELECT (random() * 1e15)::int8 FROM generate_series(1, 2000000);
CREATE INDEX t_k ON t USING lsm (k) WITH (memtable_size = 1024, l0_compaction_trigger = 1);
ALTER INDEX t_k SET (memtable_size = 8192, l0_compaction_trigger = 4);
});
my $built = levels();
like($built, qr/^3:\d+$/, "CREATE INDEX wrote its run at level 3 ($built)");

# three rounds of four flushes of 150,000 keys (about 270 pages each), each
# round a level-0 merge into level 1; what goes over level 1's target goes
# down to level 2
for my $round (1 .. 3)
{
	for my $i (1 .. 4)
	{
		sql(q{
INSERT INTO t SELECT (random() * 1e15)::int8 FROM generate_series(1, 150000);
SELECT lsm_am.flush('t_k');
});
	}
	is(merges_done($node, 't_k'), 't', "round $round: the merges ended");
}
my $shape = levels();
my ($l1) = $shape =~ /\b1:(\d+)/;
my ($l2) = $shape =~ /\b2:(\d+)/;
ok(defined $l1 && defined $l2 && $l1 > 600 && $l1 <= 2 * 2048 && $l2 <= 2 * 20480 && $shape =~ /\b3:\d+$/,
	"levels 1 and 2 hold runs within twice their targets, above level 3 ($shape)");

# insert 10 rows a statement, $n times; slowdowns counted meanwhile
sub insert_rounds
{
	my ($n) = @_;
	my $before = mstat('slowdowns');
	for (1 .. $n)
	{
		sql(q{INSERT INTO t SELECT (random() * 1e15)::int8 FROM generate_series(1, 10)});
	}
	return mstat('slowdowns') - $before;
}

# ------------------------------------------------- 1. levels on target: no debt
is(insert_rounds(50), 0, 'levels within their targets: no insert is slowed');

# ----------------------------------- 2. level 1 about 30 times its target
# (a unit of debt is the larger of level 1's target and an eighth of the
# deepest level, about 430 pages: level 1's 1,800-2,000 pages are 4 units
# over twice its 64, and what a merge takes from it goes to level 2, itself
# over twice its 640 then; the memtable of 1 MB holds far more than the
# statements below insert, so that no immutable memtable waits and adds
# debt of its own)
# (the next merges then slowed to 2 ms a page written: a window of seconds
# between the first push's end and the last one's)
$node->safe_psql('postgres', q{
ALTER SYSTEM SET lsm_am.flush_delay_ms = 2;
SELECT pg_reload_conf();
});
sql(q{ALTER INDEX t_k SET (memtable_size = 1024, l0_compaction_trigger = 1)});
my $merges0 = mstat('compactions');
my $waiter = $node->background_psql('postgres');
$waiter->query_until(qr/go/, "\\echo go\nSELECT lsm_am.wait_for_merges('t_k', '5 minutes');\n");

# until a push has ended with level 1 still over: then inserts are slowed
my $slowed = 0;
my $seen = '';
my $deadline = time + 120;
while (time < $deadline)
{
	my $d = insert_rounds(5);
	my $shape_now = levels();
	if ($d > 0)
	{
		my $imm = mstat('immutable_memtables');
		my $runs0 = sql(q{SELECT count(*) FROM lsm_am.index_info('t_k') WHERE level = 0});
		$seen = "$d of 5 statements slowed; levels $shape_now; $runs0 level-0 runs, $imm immutable memtables";
		$slowed = $runs0 < 100 && $imm < 2;
		last;
	}
	# (the merges ended: nothing is pending any more)
	last if mstat('compactions') > $merges0 && mstat('pending') eq 'f';
	usleep(50_000);
}
ok($slowed, 'level 1 over its target: inserts are slowed, with level 0 short of its trigger and no memtable waiting')
  or diag("nothing slowed; levels now " . levels() . "; $seen; "
	  . show($node, "SELECT * FROM lsm_am.maintenance_stats('t_k')"));
note($seen);

$waiter->quit;
$node->safe_psql('postgres', q{
ALTER SYSTEM RESET lsm_am.flush_delay_ms;
SELECT pg_reload_conf();
});
is(merges_done($node, 't_k', '5 minutes'), 't', 'the merges ended');
cmp_ok(mstat('compactions'), '>', $merges0, 'the levels were pushed down');

# ------------------------------------------------------------ 3. the answers
my $q = q{SELECT count(*), sum(k % 1000003) FROM t WHERE k BETWEEN 1e14 AND 4e14};
my $heap = sql("SET enable_indexscan = off; SET enable_bitmapscan = off; SET enable_indexonlyscan = off; $q");
my $idx = sql("SET enable_seqscan = off; SET enable_bitmapscan = off; $q");
is($idx, $heap, 'a range through the index equals the heap');
my ($ret, $out, $err) = $s->psql('postgres', q{SELECT lsm_am.verify('t_k', true)});
is($ret, 0, 'verify(heapallindexed) passes') or diag($err);

$s->close;
$node->stop;
done_testing();
