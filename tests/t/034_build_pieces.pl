# 034_build_pieces.pl — CREATE INDEX cuts a leveled index's run into pieces
# (doc/impl.md, "CREATE INDEX").  A leveled level is held in pieces with
# disjoint key ranges, so that a merge into it rewrites only the pieces it
# overlaps; a build that wrote one run left the whole index to be rewritten
# by the first merge into it, and the file held it twice meanwhile.
#  1. 340,000 entries (about 590 pages: with memtable_size 1MB, past level
#     1's target of 256 pages): 16 runs at one level, each of 21,250 entries, in key
#     order with disjoint ranges (one key of 40,000 entries spans several),
#     laid one after the other from block 1;
#     check_index accounts for every page and verify(heapallindexed) passes;
#  2. the answers equal a btree's (points, misses, ranges, ORDER BY LIMIT),
#     and a flush after the build takes a run id of its own;
#  3. a parallel build (one worker) writes the same pieces as the serial one
#     (same extents, entries and filters);
#  4. four flushes of keys inside one piece's range, merged into level 1
#     and (its target shrunk) pushed into the built level, rewrite at most
#     two of its pieces: the other runs keep their ids (with one run,
#     nothing of the build survived the merge);
#  5. what stays one run: fewer than 16 x 16,384 entries, a run that lands
#     on level 1 (the default memtable_size: level 1's target 1,024 pages),
#     whose pieces a level-0 merge would all take, and a tiered index.
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use LsmCluster;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('build_pieces');
$node->init(extra => [ initdb_args() ]);
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'lsm_am'
autovacuum = off
max_parallel_maintenance_workers = 0
min_parallel_table_scan_size = 0
});
$node->start;

sub sql { return $node->safe_psql('postgres', $_[0]); }

my $F = 'SET enable_seqscan = off; SET enable_bitmapscan = off;';

sql(q{
CREATE EXTENSION lsm_am;
SELECT setseed(0.33);
CREATE TABLE b (k int8, v int);
INSERT INTO b SELECT (random() * 1e12)::int8, g FROM generate_series(1, 300000) g;
INSERT INTO b SELECT k, v + 300000 FROM b WHERE v % 1000 = 0;	-- 300 duplicate keys
DELETE FROM b WHERE v % 1000 = 1;
-- one key in more entries than a piece holds: it spans two or three pieces
INSERT INTO b SELECT 500000000000, 2000000 + g FROM generate_series(1, 40000) g;
VACUUM b;
CREATE INDEX b_bt ON b (k);
});
my $n = sql('SELECT count(*) FROM b');

# ------------------------------------------------------------ 1. the pieces
sql('CREATE INDEX b_lsm ON b USING lsm (k) WITH (memtable_size = 1024)');
my @runs = map { [ split /\|/ ] } split /\n/,
  sql(q{SELECT level, run_id, entries, btrim(smallest_key, '()')::int8, btrim(largest_key, '()')::int8
          FROM lsm_am.index_info('b_lsm') ORDER BY 4});
is(scalar @runs, 16, "a build of $n entries writes 16 runs");
is(scalar(grep { $_->[3] <= 500000000000 && $_->[4] >= 500000000000 } @runs) >= 2, 1,
	'the key of 40,000 entries spans two or more of them');
is(join(',', sort { $a <=> $b } keys %{ { map { $_->[0] => 1 } @runs } }), $runs[0][0],
	"all of them at one level ($runs[0][0])");
my $per = int(($n + 15) / 16);
is(join(',', map { $_->[2] } @runs[0 .. 14]), join(',', ($per) x 15),
	"the first 15 hold $per entries each");
my $sum = 0;
$sum += $_->[2] for @runs;
is($sum, $n, 'and all of them every entry');
my $disjoint = 1;
for my $i (1 .. $#runs)
{
	$disjoint = 0 if $runs[$i][3] < $runs[ $i - 1 ][4];
}
ok($disjoint, 'their key ranges ascend and do not overlap (a key may end one and start the next)');
is(join(',', map { $_->[1] } @runs),
	join(',', map { $runs[0][1] + $_ } 0 .. 15), 'run ids follow key order');
is(sql(q{SELECT bool_and(s = prev_end)
           FROM (SELECT start_block s, coalesce(lag(start_block + pages) OVER (ORDER BY start_block), 1) prev_end
                   FROM lsm_am.manifest('b_lsm') WHERE kind = 'run') r}),
	't', 'the pieces lie one after the other from block 1');
is(sql(q{SELECT leaked_pages || '|' || dropped_pages || '|' || unused_pages FROM lsm_am.check_index('b_lsm')}),
	'0|0|0', 'check_index: every page accounted for');
my ($ret, $out, $err) = $node->psql('postgres', q{SELECT lsm_am.verify('b_lsm', true)});
is("$ret|$err", '0|', 'verify(heapallindexed) passes');

# ------------------------------------------------------- 2. answers, run ids
sub agree
{
	my ($what, $idx) = @_;
	my @q = (
		'SELECT count(*), sum(v) FROM b WHERE k = (SELECT k FROM b WHERE v = 12345)',
		'SELECT count(*), sum(v) FROM b WHERE k = (SELECT k FROM b WHERE v = 1000)',
		'SELECT count(*) FROM b WHERE k = 7',
		'SELECT count(*), sum(v) FROM b WHERE k = 500000000000',
		'SELECT count(*), sum(v) FROM b WHERE k BETWEEN 499999000000 AND 500001000000',
		'SELECT count(*), sum(v) FROM (SELECT v FROM b WHERE k >= 500000000000 ORDER BY k LIMIT 40000) s',
		'SELECT count(*), sum(v) FROM (SELECT v FROM b WHERE k <= 500000000000 ORDER BY k DESC LIMIT 40000) s',
		'SELECT count(*), sum(v) FROM b WHERE k BETWEEN 1e11 AND 2e11',
		"SELECT count(*), sum(v) FROM b WHERE k >= $runs[7][3] AND k <= $runs[8][4]",
		'SELECT string_agg(k::text, \',\' ORDER BY k) FROM (SELECT k FROM b ORDER BY k LIMIT 10) s',
		'SELECT string_agg(k::text, \',\' ORDER BY k DESC) FROM (SELECT k FROM b ORDER BY k DESC LIMIT 10) s');
	my $bad = 0;
	for my $q (@q)
	{
		my $want = sql("SET enable_indexscan = off; SET enable_indexonlyscan = off; $q");
		my $got = sql("$F $q");
		$bad++, diag("$what: $q: $got, want $want") if $got ne $want;
	}
	is($bad, 0, "$what: " . scalar(@q) . ' queries answer as the heap does');
}
agree('after the build', 'b_lsm');
# keys inside the sixth piece's range (section 4 merges there)
my ($lo, $hi) = ($runs[5][3], $runs[5][4]);
sql(qq{INSERT INTO b SELECT $lo + (($hi - $lo) * random())::int8, -g FROM generate_series(1, 100) g;
SELECT lsm_am.flush('b_lsm');});
is(sql(q{SELECT count(*) = count(DISTINCT run_id) FROM lsm_am.index_info('b_lsm')}), 't',
	'a flush after the build takes a run id of its own');
($ret, $out, $err) = $node->psql('postgres', q{SELECT lsm_am.verify('b_lsm', true)});
is("$ret|$err", '0|', 'verify(heapallindexed) passes after the flush');

# --------------------------------------------------------- 3. in parallel
my ($rc, $o, $perr) = $node->psql('postgres',
	'SET max_parallel_maintenance_workers = 1; SET client_min_messages = debug1;
	 CREATE INDEX b_par ON b USING lsm (k) WITH (memtable_size = 1024) WHERE v <= 600000');
like($perr, qr/lsm build of "b_par": 1 parallel workers launched of 1 requested/,
	'a build with one worker');
($rc, $o, $perr) = $node->psql('postgres',
	'SET max_parallel_maintenance_workers = 0; SET client_min_messages = debug1;
	 CREATE INDEX b_ser ON b USING lsm (k) WITH (memtable_size = 1024) WHERE v <= 600000');
unlike($perr, qr/parallel workers launched/, 'the same index built serially');
my $man = q{SELECT string_agg(concat_ws(':', level, start_block, pages, entries, bloom_start, bloom_blocks), ' '
                               ORDER BY start_block)
              FROM lsm_am.manifest('%s') WHERE kind = 'run'};
my $ser = sql(sprintf($man, 'b_ser'));
is(sql(sprintf($man, 'b_par')), $ser, 'the parallel build wrote the same pieces');
is(scalar(split / /, $ser), 16, 'sixteen of them');

# --------------------------------------- 4. a merge rewrites what it overlaps
sql('DROP INDEX b_par; DROP INDEX b_ser');
my @before = split /\n/, sql(q{SELECT run_id FROM lsm_am.index_info('b_lsm') WHERE level > 0});
is($runs[0][0], 2, 'the build wrote level 2');
# with the flush of section 2, four level-0 runs: the trigger; they merge
# into level 1, under its target
for my $r (1 .. 3)
{
	sql(qq{INSERT INTO b SELECT $lo + (($hi - $lo) * random())::int8, 1000000 + $r * 10000 + g
	         FROM generate_series(1, 10000) g;
	       SELECT lsm_am.flush('b_lsm');});
}
is(sql(q{SELECT lsm_am.wait_for_merges('b_lsm', '2 minutes')}), 't', 'the level-0 merge is done');
my $built_ids = join(',', @before);
is(sql("SELECT string_agg(DISTINCT level::text, ',') FROM lsm_am.index_info('b_lsm') WHERE run_id <> ALL ('{$built_ids}')"),
	'1', 'level 0 was merged into level 1');
# level 1's target 1,024 -> 16 pages: its run goes down into the built level
# (and what is then over level 2's target moves on to level 3, keeping ids)
sql(q{ALTER INDEX b_lsm SET (memtable_size = 64)});
is(sql(q{SELECT lsm_am.wait_for_merges('b_lsm', '2 minutes')}), 't', 'the merges are done');
is(sql(q{SELECT count(*) FROM lsm_am.index_info('b_lsm') WHERE level <= 1}), '0',
	'levels 0 and 1 went down into the built level');
my %after = map { $_ => 1 } split /\n/, sql(q{SELECT run_id FROM lsm_am.index_info('b_lsm')});
my $kept = grep { $after{$_} } @before;
cmp_ok($kept, '>=', scalar(@before) - 2,
	"the merge kept $kept of the build's " . scalar(@before) . ' runs (it rewrote only those its keys overlap)');
agree('after the merge', 'b_lsm');
($ret, $out, $err) = $node->psql('postgres', q{SELECT lsm_am.verify('b_lsm', true)});
is("$ret|$err", '0|', 'verify(heapallindexed) passes after the merge');

# ----------------------------------------------------- 5. what stays one run
sql(q{CREATE TABLE s AS SELECT * FROM b WHERE v % 2 = 0 LIMIT 200000;
CREATE INDEX s_lsm ON s USING lsm (k) WITH (memtable_size = 1024);
CREATE INDEX b_l1 ON b USING lsm (k);
CREATE INDEX b_tier ON b USING lsm (k) WITH (compaction = tiered, memtable_size = 1024);});
is(sql(q{SELECT count(*) FROM lsm_am.index_info('s_lsm')}), '1', '200,000 entries: one run');
is(sql(q{SELECT count(*) || ':' || min(level) FROM lsm_am.index_info('b_l1')}), '1:1',
	'a run that lands on level 1: one run');
is(sql(q{SELECT count(*) FROM lsm_am.index_info('b_tier')}), '1', 'a tiered index: one run');

$node->stop;
done_testing();
