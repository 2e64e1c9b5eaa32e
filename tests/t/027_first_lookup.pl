# 027_first_lookup.pl — what a new connection's first point lookup reads
# (doc/impl.md, "Run cache").  A backend caches run headers, fence pages and
# filter pages; a new connection has none of them.  Its first lookup must
# read about the pages it needs, as btree's descent does: each run's filter
# page for the key, then the header, fence and data page of the one run the
# filters leave (a filter page is answered in its buffer the first time and
# copied into the cache the second; headers are read only for runs a scan
# descends).  Counted with pg_statio_user_indexes (buffer accesses of the
# index), each lookup against the same lookup on an index with no runs (its
# metapage accesses, which the planner and the scan make alike):
#
#   - first lookup: at most one filter page per run, plus a header, a fence
#     level and a data page (before this, every run's header was read too);
#   - second lookup of the same key: the filter pages again (now copied),
#     no header;
#   - third: the data page alone;
#   - every answer equals btree's, for keys in each run and absent keys.
#
# Those counts are the backend's own cache, so the cluster starts with the
# shared metadata cache off (lsm_am.metadata_cache_size = 0).  The last
# part turns it on: a run's header, fence and filter pages that one
# connection read, or that a flush or merge just published, are copies in
# shared memory, and another connection's first lookup reads the data page
# alone.
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use LsmCluster;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('first');
$node->init(extra => [ initdb_args() ]);
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'lsm_am'
autovacuum = off
lsm_am.max_workers = 0
lsm_am.l0_compaction_trigger = 64
lsm_am.l0_slowdown_trigger = 100
lsm_am.l0_stop_trigger = 100
lsm_am.metadata_cache_size = 0
});
$node->start;

sub sql { return $node->safe_psql('postgres', $_[0]); }

# six level-0 runs whose key ranges all overlap (run r holds 7g + r), and an
# index with no runs at all (one entry in its memtable)
my $runs = 6;
sql(q{
CREATE EXTENSION lsm_am;
CREATE TABLE fl (k int8);
CREATE INDEX fl_k ON fl USING lsm (k);
CREATE TABLE fb (k int8);
CREATE INDEX fb_k ON fb (k);
CREATE TABLE fz (k int8);
CREATE INDEX fz_k ON fz USING lsm (k);
INSERT INTO fz VALUES (5);
});
for my $r (0 .. $runs - 1)
{
	sql(qq{
INSERT INTO fl SELECT 7 * g + $r FROM generate_series(1, 20000) g;
SELECT lsm_am.flush('fl_k');
});
}
sql('INSERT INTO fb SELECT * FROM fl');
is(sql(q{SELECT array_length(runs_per_level, 1) >= 1 AND runs_per_level[1] = 6
		   FROM lsm_am.index_summary('fl_k')}),
	't', 'six runs at level 0');
is(sql(q{SELECT count(*) FROM lsm_am.index_info('fl_k') WHERE pages < 60}),
	$runs, 'each run is small enough for its header to point at its data pages');

# Three lookups of key in a new connection; the index's buffer accesses for
# each, as "d1|d2|d3".  Stats are flushed after each lookup (the backend
# goes idle between psql's statements).
sub lookups
{
	my ($tab, $idx, $key) = @_;
	my $flush = q{SELECT pg_stat_force_next_flush() AS flushed \gset
SELECT 1 AS one \gset};
	my $count = "SELECT idx_blks_hit + idx_blks_read FROM pg_statio_user_indexes WHERE indexrelid = '$idx'::regclass";
	return $node->safe_psql('postgres', qq{
SELECT ($count) AS s0 \\gset
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT count(*) FROM $tab WHERE k = $key \\gset
$flush
SELECT ($count) - :s0 AS d1 \\gset
SELECT count(*) FROM $tab WHERE k = $key \\gset
$flush
SELECT ($count) - :s0 - :d1 AS d2 \\gset
SELECT count(*) FROM $tab WHERE k = $key \\gset
$flush
SELECT :d1 || '|' || :d2 || '|' || (($count) - :s0 - :d1 - :d2);
});
}

my ($z1, $z2, $z3) = split /\|/, lookups('fz', 'fz_k', 5);
ok($z1 >= 1 && $z2 >= 1 && $z3 >= 1, "an index with no runs: metapage accesses $z1, $z2, $z3");

for my $key (7 * 100 + 3, 7 * 5000 + 0, 7 * 17 + 5, 7 * 12345 + 1)
{
	my ($d1, $d2, $d3) = split /\|/, lookups('fl', 'fl_k', $key);
	my ($e1, $e2, $e3) = ($d1 - $z1, $d2 - $z2, $d3 - $z3);
	ok($e1 <= $runs + 3,
		"key $key, first lookup of a new connection: $e1 pages beyond the metapage (at most a filter page per run, header, fence, data page)");
	ok($e2 <= $runs + 2 && $e2 < $e1,
		"key $key, second lookup: $e2 pages (the filter pages again, to be copied, no header)");
	is($e3, 1, "key $key, third lookup: the data page alone");
}

# answers: keys of every run, keys between them (7g + 6 is in no run), and
# keys beyond the ends, new connection each time, against btree
my $off = 'SET enable_seqscan = off; SET enable_bitmapscan = off;';
for my $key (7, 8, 13, 7 * 9999 + 2, 7 * 9999 + 6, 7 * 20000 + 5, 7 * 20001, -1, 0)
{
	is(sql("$off SELECT count(*) FROM fl WHERE k = $key"),
		sql("$off SELECT count(*) FROM fb WHERE k = $key"),
		"key $key: lsm and btree agree in a new connection");
}
is(sql("$off SELECT count(*) FROM fl WHERE k BETWEEN 700 AND 1400"),
	sql("$off SELECT count(*) FROM fb WHERE k BETWEEN 700 AND 1400"),
	'a range after the point lookups: lsm and btree agree');
is(sql(q{SELECT count(*) FROM lsm_am.verify('fl_k', true)}), '1', 'verify is clean');

# The filter of a large level (a quarter of the entries or more) is probed
# only if its page is in memory, or if searching the run is expected to read
# more pages (doc/impl.md, "Scans"): a lookup otherwise searches the run, and
# the filter page is read the second time the backend needs it.  One run at
# level 1 (compacted: all the entries), out of shared buffers after a
# restart; lookup_stats counts filter probes and run data pages read.  A
# unique index probes always.  Then two large levels (below).
sql(q{
CREATE TABLE dl (k int8);
CREATE INDEX dl_k ON dl USING lsm (k);
CREATE TABLE du (k int8);
CREATE UNIQUE INDEX du_k ON du USING lsm (k);
INSERT INTO dl SELECT 7 * g FROM generate_series(1, 50000) g;
INSERT INTO du SELECT * FROM dl;
SELECT lsm_am.compact('dl_k'), lsm_am.compact('du_k');
CREATE TABLE d2 (k int8);
INSERT INTO d2 SELECT 7 * g FROM generate_series(1, 50000) g;
CREATE INDEX d2_k ON d2 USING lsm (k) WITH (memtable_size = 64, l0_compaction_trigger = 1);
ALTER INDEX d2_k SET (memtable_size = 8192);
INSERT INTO d2 SELECT 7 * g + 1 FROM generate_series(1, 40000) g;
SELECT lsm_am.flush('d2_k');
SELECT lsm_am.wait_for_merges('d2_k');
});
is(sql(q{SELECT string_agg(level || ':' || entries, ',' ORDER BY level DESC) FROM lsm_am.index_info('d2_k')}),
	'2:50000,1:40000', 'd2_k: a run of 50,000 entries at level 2 (built), one of 40,000 at level 1 (flushed and merged)');
is(sql(q{SELECT string_agg(level::text || ':' || (bloom_blocks > 0)::text, ',')
		   FROM lsm_am.manifest('dl_k') WHERE kind = 'run'}),
	'1:true', 'one run with a filter, at level 1');
$node->restart;

# one connection: the statements, then the deltas of filter_probes and
# data_pages_read over each, and the answers, as "p,d,c;p,d,c;..."
sub probed
{
	my ($idx, @stmts) = @_;
	my $st = "SELECT filter_probes p, data_pages_read d FROM lsm_am.lookup_stats('$idx')";
	my $q = "SET enable_seqscan = off; SET enable_bitmapscan = off;\n";
	my @out;
	for my $i (0 .. $#stmts)
	{
		$q .= "$st \\gset a$i\n$stmts[$i] \\gset c$i\n$st \\gset b$i\n";
		push @out, "(:b${i}p - :a${i}p) || ',' || (:b${i}d - :a${i}d) || ',' || :c${i}count";
	}
	$q .= 'SELECT ' . join(" || ';' || ", @out) . ';';
	return $node->safe_psql('postgres', $q);
}

is(probed('dl_k', 'SELECT count(*) FROM dl WHERE k = 7 * 4000 + 3'),
	'0,1,0', 'after a restart, a missing key: no filter page read, the run searched, no row');
is(probed('dl_k', 'SELECT count(*) FROM dl WHERE k = 7 * 25000'),
	'0,1,1', 'an existing key: no filter page read, one data page, its row');
is(probed('dl_k', 'SELECT count(*) FROM dl WHERE k = 7 * 31000',
		'SELECT count(*) FROM dl WHERE k = 7 * 31000'),
	'0,1,1;1,1,1', 'the same key twice in one connection: the second reads the filter page');
is(probed('dl_k', 'SELECT count(*) FROM dl WHERE k = 7 * 31000'),
	'1,1,1', 'a new connection: that filter page is in shared buffers now, and probed');
# Two large levels, 5/9 and 4/9 of the entries, and nothing of d2_k in
# memory after the restart: searching a run would read its header and data
# page (3 pages counted, a fence level assumed), asking its filter the
# filter page and, for the 4/9 or 5/9 of keys there, those too: both filters
# are asked.  Once a run's header is in shared buffers (its run is small:
# the header points at its data pages), searching it reads one page, and
# its filter is passed over where its page is not in memory.
is(probed('d2_k', 'SELECT count(*) FROM d2 WHERE k = 7 * 3000 + 1'),
	'2,1,1', 'two large levels after a restart, a key of level 1: both filters asked, one data page, its row');
is(probed('d2_k', 'SELECT count(*) FROM d2 WHERE k = 7 * 3001'),
	'1,2,1', 'a key of level 2 in a new connection: level 1, its header in shared buffers now, searched without its filter (a data page); level 2 asked, then its data page');
is(probed('du_k', 'SELECT count(*) FROM du WHERE k = 7 * 25000'),
	'1,1,1', 'a unique index probes its filter page wherever it is');
for my $key (7 * 3000 + 1, 7 * 3001, 7 * 3001 + 1, 7 * 40000 + 1, 7 * 40001 + 1)
{
	is(sql("$off SELECT count(*) FROM d2 WHERE k = $key"),
		sql("SET enable_indexscan = off; SET enable_bitmapscan = off; SELECT count(*) FROM d2 WHERE k = $key"),
		"key $key of d2: the index and the table agree");
}
for my $key (7 * 4000 + 3, 7 * 25000, 7 * 31000, 7 * 49999 + 1, 7 * 50000)
{
	is(sql("$off SELECT count(*) FROM dl WHERE k = $key"),
		sql("$off SELECT count(*) FROM du WHERE k = $key"),
		"key $key after the restart: the two indexes agree");
}

# The shared metadata cache, on: pages go into it as a connection reads
# them from their buffers, and as a flush or merge publishes a run.
sql("ALTER SYSTEM SET lsm_am.metadata_cache_size = '8MB'");
$node->restart;
is(sql('SHOW lsm_am.metadata_cache_size'), '8MB', 'the shared metadata cache is on');
# (the baseline stays the one above: fz_k's first lookup after a restart
# also rebuilds its memtable from its log pages)
for my $key (7 * 100 + 3, 7 * 12345 + 1)
{
	my ($a1) = split /\|/, lookups('fl', 'fl_k', $key);
	my ($b1, $b2, $b3) = split /\|/, lookups('fl', 'fl_k', $key);
	my ($ea, $eb) = ($a1 - $z1, $b1 - $z1);
	ok($ea >= 3, "key $key after the restart, first connection: $ea pages beyond the metapage (header, fence and data page at least)");
	is($eb, 1, "key $key, another connection's first lookup: the data page alone (filters, header and fence from the shared cache)");
	is(($b2 - $z2) . ',' . ($b3 - $z3), '1,1', "key $key, its later lookups: the data page alone");
}

# a flush publishes a run: its header, fence and filter pages go to the
# shared cache, and a new connection's first lookup in it reads its data
# page alone (with the cache off: its filter page, header, fence and data
# page, as above)
sql(q{
CREATE TABLE fw (k int8);
CREATE INDEX fw_k ON fw USING lsm (k);
CREATE TABLE fwb (k int8);
CREATE INDEX fwb_k ON fwb (k);
INSERT INTO fw SELECT 7 * g + 6 FROM generate_series(1, 20000) g;
INSERT INTO fwb SELECT * FROM fw;
SELECT lsm_am.flush('fw_k');
});
is(sql(q{SELECT string_agg(level::text, ',') FROM lsm_am.manifest('fw_k') WHERE kind = 'run'}),
	'0', 'the flush made one run, at level 0');
for my $key (7 * 4321 + 6, 7 * 17 + 6, 7 * 19999 + 6)
{
	my ($d1) = split /\|/, lookups('fw', 'fw_k', $key);
	is($d1 - $z1, 1, "key $key of the flushed run, a new connection: the data page alone");
	is(sql("$off SELECT count(*) FROM fw WHERE k = $key"),
		sql("$off SELECT count(*) FROM fwb WHERE k = $key"),
		"key $key: lsm and btree agree");
}

# a merge publishes one run at level 1, the deepest: its header and fence
# pages go to the shared cache (not its filter: the deepest level's)
sql(q{SELECT lsm_am.compact('fl_k')});
is(sql(q{SELECT string_agg(level::text, ',') FROM lsm_am.manifest('fl_k') WHERE kind = 'run'}),
	'1', 'compacted: one run, at level 1');
for my $key (7 * 222 + 4, 7 * 16000 + 5)
{
	my ($d1) = split /\|/, lookups('fl', 'fl_k', $key);
	my $e1 = $d1 - $z1;
	ok($e1 >= 1 && $e1 <= 2,
		"key $key after compact(), a new connection: $e1 pages beyond the metapage (the filter page if in shared buffers, and the data page; header and fence from the shared cache)");
}
for my $key (7, 8, 13, 7 * 9999 + 2, 7 * 9999 + 6, 7 * 20000 + 5, 7 * 20001, -1, 0)
{
	is(sql("$off SELECT count(*) FROM fl WHERE k = $key"),
		sql("$off SELECT count(*) FROM fb WHERE k = $key"),
		"key $key with the shared cache: lsm and btree agree in a new connection");
}
is(sql("$off SELECT count(*) FROM fl WHERE k BETWEEN 700 AND 1400"),
	sql("$off SELECT count(*) FROM fb WHERE k BETWEEN 700 AND 1400"),
	'a range with the shared cache: lsm and btree agree');
is(sql(q{SELECT count(*) FROM lsm_am.verify('fl_k', true)}), '1', 'verify is clean');

$node->stop;
done_testing();
