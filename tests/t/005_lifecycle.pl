# 005_lifecycle.pl — an lsm index through DDL and storage events.
#
# CREATE INDEX CONCURRENTLY while another session inserts, REINDEX and REINDEX
# CONCURRENTLY, TRUNCATE, DROP INDEX / DROP EXTENSION (and shared-memory slots
# reclaimed after many create/drop cycles), an unlogged table across a crash,
# a partitioned table with an lsm index on the parent, the row counts
# VACUUM VERBOSE reports, and CLUSTER keeping rows an older snapshot still
# sees.  After each step the lsm index must give the same
# answers as a sequential scan (and a btree copy for ordered output).
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use LsmCluster;
use LsmSession;

my $node = PostgreSQL::Test::Cluster->new('lifecycle');
$node->init(extra => [ initdb_args() ]);
$node->append_conf(
	'postgresql.conf', qq{
shared_preload_libraries = 'lsm_am'
lsm_am.max_indexes = 8
autovacuum = off
});
$node->start;

# one connection for the many small queries (tests/t/LsmSession.pm)
my $sess = LsmSession->new($node);
sub sql { return $sess->safe_psql('postgres', $_[0]); }

my $F_INDEX  = 'SET enable_seqscan = off; SET enable_bitmapscan = off; SET enable_indexonlyscan = off;';
my $F_BITMAP = 'SET enable_seqscan = off; SET enable_indexscan = off; SET enable_indexonlyscan = off;';
my $F_IONLY  = 'SET enable_seqscan = off; SET enable_bitmapscan = off;';
my $F_SEQ    = 'SET enable_indexscan = off; SET enable_bitmapscan = off; SET enable_indexonlyscan = off;';

# Every query through lsm index $idx on $tab (column $col) equals a seqscan.
sub check_index
{
	my ($what, $tab, $col, $idx) = @_;
	my @q = (
		"SELECT count(*), coalesce(sum(id), 0) FROM $tab WHERE $col IS NOT NULL",
		"SELECT count(*), coalesce(sum(id), 0) FROM $tab WHERE $col IS NULL",
		"SELECT id FROM $tab WHERE $col BETWEEN 1000 AND 3000 ORDER BY id",
		"SELECT id FROM $tab WHERE $col = (SELECT max($col) FROM $tab) ORDER BY id",
		"SELECT $col FROM $tab WHERE $col > 5000 ORDER BY $col LIMIT 50",
		"SELECT $col FROM $tab ORDER BY $col DESC LIMIT 50",
	);
	my $ok = 1;
	for my $sql (@q)
	{
		my $want = sql("$F_SEQ $sql");
		for my $m ([ 'index', $F_INDEX, "Index Scan (Backward )?using $idx " ],
			[ 'bitmap', $F_BITMAP, "Bitmap Index Scan on $idx" ],
			[ 'index-only', $F_IONLY, "Index (Only )?Scan (Backward )?using $idx " ])
		{
			my ($mode, $force, $re) = @$m;
			next if $mode eq 'bitmap' && $sql =~ /LIMIT/;
			my $plan = sql("$force EXPLAIN (COSTS OFF) $sql");
			if ($plan !~ /$re/)
			{
				$ok = 0;
				diag("$what: [$mode] plan does not use $idx for: $sql\n$plan");
				next;
			}
			my $got = sql("$force $sql");
			if ($got ne $want)
			{
				$ok = 0;
				diag("$what: [$mode] wrong result for: $sql\n  lsm:     "
					  . substr($got =~ s/\n/ /gr, 0, 300) . "\n  seqscan: "
					  . substr($want =~ s/\n/ /gr, 0, 300));
			}
		}
	}
	ok($ok, "$what: $idx answers like a seqscan");
	# and every page of the index is accounted for (lsm_am.check_index)
	my ($ret, $out, $err) = $node->psql('postgres',
		"SELECT leaked_pages, dropped_pages FROM lsm_am.check_index('$idx')");
	is("$out$err", '0|0', "$what: check_index($idx) finds no leaked page");
	($ret, $out, $err) = $node->psql('postgres', "SELECT lsm_am.verify('$idx', true)");
	is("$ret$out$err", '0', "$what: verify($idx, true) finds $idx sound and complete");
}

sql(q{
CREATE EXTENSION lsm_am;
CREATE TABLE t (id int, k int8);
INSERT INTO t SELECT g, CASE WHEN g % 101 = 0 THEN NULL ELSE hashint4(g) % 10000 END
  FROM generate_series(1, 20000) g;
-- inserts in small committed transactions, for the concurrent session
CREATE PROCEDURE ins_loop(first int, batches int, per int) LANGUAGE plpgsql AS $$
BEGIN
	FOR b IN 0 .. batches - 1 LOOP
		INSERT INTO t SELECT g, hashint4(g) % 10000
		  FROM generate_series(first + b * per, first + (b + 1) * per - 1) g;
		COMMIT;
		PERFORM pg_sleep(0.005);
	END LOOP;
END $$;
});

# ---- CREATE INDEX CONCURRENTLY while another session inserts
my $bg = $node->background_psql('postgres');
$bg->query_until(qr/inserting/, "\\echo inserting\nCALL ins_loop(100001, 400, 50);\n");
sql('CREATE INDEX CONCURRENTLY t_k ON t USING lsm (k) WITH (memtable_size = 128)');
$bg->quit;
is(sql("SELECT count(*) FROM t"), 40000, 'the concurrent session inserted all its rows');
is(sql("SELECT indisvalid AND indisready FROM pg_index WHERE indexrelid = 't_k'::regclass"),
	't', 'CREATE INDEX CONCURRENTLY produced a valid index');
check_index('CREATE INDEX CONCURRENTLY with concurrent inserts', 't', 'k', 't_k');

# compare ordered output with a btree copy
sql('CREATE TABLE t_bt AS SELECT * FROM t; CREATE INDEX t_bt_k ON t_bt (k); ANALYZE t, t_bt');
for my $o ('k', 'k DESC')
{
	is(sql("$F_INDEX SELECT k FROM t WHERE k IS NOT NULL ORDER BY $o LIMIT 500"),
		sql("$F_INDEX SELECT k FROM t_bt WHERE k IS NOT NULL ORDER BY $o LIMIT 500"),
		"ORDER BY $o through lsm equals btree");
}

# ---- REINDEX and REINDEX CONCURRENTLY
sql('INSERT INTO t SELECT g, hashint4(g) % 10000 FROM generate_series(200001, 203000) g');
sql('REINDEX INDEX t_k');
my ($mt, $runs) = split /\|/, sql("SELECT memtable_entries, runs FROM lsm_am.index_stats('t_k')");
is($mt, 0, 'after REINDEX the memtable is empty');
is($runs, 1, 'after REINDEX the index is one sorted run');
check_index('REINDEX', 't', 'k', 't_k');

sql('INSERT INTO t SELECT g, hashint4(g) % 10000 FROM generate_series(300001, 302000) g');
$bg = $node->background_psql('postgres');
$bg->query_until(qr/inserting/, "\\echo inserting\nCALL ins_loop(400001, 200, 50);\n");
sql('REINDEX INDEX CONCURRENTLY t_k');
$bg->quit;
is(sql("SELECT count(*) FROM pg_index WHERE indrelid = 't'::regclass AND indisvalid"), 1,
	'REINDEX CONCURRENTLY leaves one valid index');
check_index('REINDEX CONCURRENTLY with concurrent inserts', 't', 'k', 't_k');

# ---- VACUUM VERBOSE reports the index's row count
sql('DELETE FROM t WHERE id % 3 = 0');
my ($ret, $out, $err) = $node->psql('postgres', 'VACUUM (VERBOSE) t');
is($ret, 0, 'VACUUM VERBOSE succeeds');
my $live = sql('SELECT count(*) FROM t');
# PostgreSQL 15 reports 'index "t_k": pages: N in total, ...' and stores the
# index's row count (amvacuumcleanup's num_index_tuples) in pg_class.reltuples
like($err, qr/index "t_k": pages: [1-9]\d* in total/, 'VACUUM VERBOSE reports the lsm index')
  or diag($err);
is(sql("SELECT reltuples::bigint FROM pg_class WHERE relname = 't_k'"), $live,
	'VACUUM: the lsm index reports one row version per live row (pg_class.reltuples)');
my ($mte, $rune) = split /\|/, sql("SELECT memtable_entries, run_entries FROM lsm_am.index_stats('t_k')");
is($mte + $rune, $live, 'index_stats: entries equal live rows after VACUUM');
check_index('DELETE + VACUUM', 't', 'k', 't_k');

# ---- TRUNCATE
sql('TRUNCATE t');
is(sql("$F_INDEX SELECT count(*) FROM t WHERE k IS NOT NULL"), 0, 'after TRUNCATE the index finds nothing');
my @st = split /\|/, sql("SELECT memtable_entries, run_entries FROM lsm_am.index_stats('t_k')");
is("@st", '0 0', 'after TRUNCATE index_stats shows no entries');
sql('INSERT INTO t SELECT g, hashint4(g) % 10000 FROM generate_series(1, 5000) g');
check_index('TRUNCATE + inserts', 't', 'k', 't_k');
sql('BEGIN; TRUNCATE t; INSERT INTO t SELECT g, g FROM generate_series(1, 100) g; ROLLBACK');
check_index('TRUNCATE rolled back', 't', 'k', 't_k');
is(sql('SELECT count(*) FROM t'), 5000, 'rolled-back TRUNCATE kept the rows');

# ---- DROP INDEX, DROP EXTENSION, slots reclaimed
sql('DROP INDEX t_k');
is(sql("SELECT count(*) FROM pg_class WHERE relname = 't_k'"), 0, 'DROP INDEX');
# more create/drop cycles than lsm_am.max_indexes (8): slots must be reclaimed
for my $i (1 .. 20)
{
	sql("CREATE INDEX t_k$i ON t USING lsm (k); INSERT INTO t VALUES (-$i, $i * 1000000); DROP INDEX t_k$i");
}
sql('CREATE INDEX t_k ON t USING lsm (k)');
sql('INSERT INTO t SELECT g, hashint4(g) % 10000 FROM generate_series(5001, 6000) g');
check_index('after 20 create/drop cycles', 't', 'k', 't_k');
# more live lsm indexes than max_indexes: memtables evicted and rebuilt from log pages
sql(join("\n", map { "CREATE TABLE m$_ (id int, k int8); CREATE INDEX m${_}_k ON m$_ USING lsm (k);" } 1 .. 12));
for my $round (1 .. 3)
{
	sql(join("\n", map { "INSERT INTO m$_ SELECT g, g % 977 FROM generate_series($round * 1000, $round * 1000 + 999) g;" } 1 .. 12));
}
my $bad = 0;
for my $i (1 .. 12)
{
	my $got = sql("$F_INDEX SELECT count(*), sum(id) FROM m$i WHERE k IS NOT NULL");
	next if $got eq '3000|7498500';
	$bad++;
	diag("m$i: lsm index finds count|sum = $got, expected 3000|7498500");
}
is($bad, 0, '12 live lsm indexes with lsm_am.max_indexes = 8: every row found');

($ret, $out, $err) = $node->psql('postgres', 'DROP EXTENSION lsm_am');
isnt($ret, 0, 'DROP EXTENSION refuses while lsm indexes exist');
like($err, qr/depend/, 'DROP EXTENSION: the error names the dependent objects');
sql('DROP EXTENSION lsm_am CASCADE');
is(sql("SELECT count(*) FROM pg_class c JOIN pg_am a ON a.oid = c.relam WHERE a.amname = 'lsm'"), 0,
	'DROP EXTENSION CASCADE dropped the lsm indexes');
is(sql("SELECT count(*) FROM pg_am WHERE amname = 'lsm'"), 0, 'and the access method');
sql('CREATE EXTENSION lsm_am; CREATE INDEX t_k ON t USING lsm (k)');
check_index('extension re-created', 't', 'k', 't_k');

# ---- unlogged table across a crash
sql(q{
CREATE UNLOGGED TABLE u (id int, k int8);
CREATE INDEX u_k ON u USING lsm (k) WITH (memtable_size = 64);
INSERT INTO u SELECT g, hashint4(g) % 10000 FROM generate_series(1, 8000) g;
SELECT lsm_am.flush('u_k');
INSERT INTO u SELECT g, hashint4(g) % 10000 FROM generate_series(8001, 9000) g;
});
check_index('unlogged table before the crash', 'u', 'k', 'u_k');
$node->stop('immediate');
$node->start;
is(sql('SELECT count(*) FROM u'), 0, 'after a crash the unlogged table is empty');
is(sql("$F_INDEX SELECT count(*) FROM u WHERE k IS NOT NULL"), 0, 'and its lsm index finds nothing');
@st = split /\|/, sql("SELECT memtable_entries, runs, run_entries FROM lsm_am.index_stats('u_k')");
is("@st", '0 0 0', 'and index_stats shows an empty index');
sql('INSERT INTO u SELECT g, hashint4(g) % 10000 FROM generate_series(1, 3000) g');
check_index('unlogged table after the crash', 'u', 'k', 'u_k');
check_index('logged table after the crash', 't', 'k', 't_k');
# clean restart keeps unlogged data
$node->restart;
is(sql('SELECT count(*) FROM u'), 3000, 'a clean restart keeps the unlogged rows');
check_index('unlogged table after a clean restart', 'u', 'k', 'u_k');

# ---- partitioned table
sql(q{
CREATE TABLE p (id int, k int8, part int) PARTITION BY LIST (part);
CREATE TABLE p0 PARTITION OF p FOR VALUES IN (0);
CREATE TABLE p1 PARTITION OF p FOR VALUES IN (1);
CREATE INDEX p_k ON p USING lsm (k);
INSERT INTO p SELECT g, hashint4(g) % 10000, g % 2 FROM generate_series(1, 6000) g;
CREATE TABLE p2 PARTITION OF p FOR VALUES IN (2);
CREATE TABLE p3 (id int, k int8, part int);
INSERT INTO p3 SELECT g, hashint4(g) % 10000, 3 FROM generate_series(6001, 7000) g;
CREATE INDEX p3_k ON p3 USING lsm (k);
ALTER TABLE p ATTACH PARTITION p3 FOR VALUES IN (3);
INSERT INTO p SELECT g, hashint4(g) % 10000, 2 + g % 2 FROM generate_series(7001, 9000) g;
ANALYZE p;
});
is(sql(q{SELECT string_agg(c.relname || ':' || a.amname, ',' ORDER BY c.relname)
         FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_am a ON a.oid = c.relam
        WHERE i.inhparent = 'p_k'::regclass}),
	'p0_k_idx:lsm,p1_k_idx:lsm,p2_k_idx:lsm,p3_k:lsm',
	'every partition has an lsm index attached to the parent index');
my $pq = 'SELECT count(*), sum(id) FROM p WHERE k BETWEEN 100 AND 4000';
like(sql("$F_INDEX EXPLAIN (COSTS OFF) $pq"), qr/Index Scan using p3_k/, 'partitioned: plan uses partition lsm indexes');
is(sql("$F_INDEX $pq"), sql("$F_SEQ $pq"), 'partitioned: index scans over all partitions equal a seqscan');
is(sql("$F_BITMAP $pq"), sql("$F_SEQ $pq"), 'partitioned: bitmap scans equal a seqscan');
$pq = 'SELECT k FROM p WHERE k IS NOT NULL ORDER BY k LIMIT 100';
is(sql("$F_INDEX $pq"), sql("$F_SEQ $pq"), 'partitioned: ordered merge append over lsm indexes');
$pq = 'SELECT id FROM p WHERE part = 1 AND k = (SELECT k FROM p WHERE part = 1 ORDER BY id LIMIT 1) ORDER BY id';
is(sql("$F_INDEX $pq"), sql("$F_SEQ $pq"), 'partitioned: pruned lookup');
sql('ALTER TABLE p DETACH PARTITION p1');
check_index('detached partition', 'p1', 'k', 'p1_k_idx');

# ---- CLUSTER keeps the rows an older snapshot still sees
# CLUSTER reads the heap through the lsm index with SnapshotAny and keeps
# what HeapTupleSatisfiesVacuum calls recently dead: rows deleted or updated
# after a REPEATABLE READ transaction took its snapshot.  That transaction
# must see the same rows after CLUSTER as before, through the rebuilt lsm
# index as through a btree twin clustered the same way, none twice; and
# CLUSTER must visit as many row versions through the lsm index as through
# the btree (sql/lsm_cluster.sql has the rest: heap order, NULLs, CLUSTER ON).
sql(q{
CREATE TABLE c (id int, k int8, v text) WITH (fillfactor = 70);
CREATE TABLE cb (id int, k int8, v text) WITH (fillfactor = 70);
INSERT INTO c SELECT g, CASE WHEN g % 41 = 0 THEN NULL ELSE hashint4(g) % 3000 END, 'v' || g
  FROM generate_series(1, 6000) g;
CREATE INDEX c_k ON c USING lsm (k);
INSERT INTO c SELECT g, CASE WHEN g % 41 = 0 THEN NULL ELSE hashint4(g) % 3000 END, 'v' || g
  FROM generate_series(6001, 9000) g;
INSERT INTO cb SELECT * FROM c;
CREATE INDEX cb_k ON cb (k);
CREATE TABLE snap (x int);
});
my $Q = 'SELECT count(*), count(DISTINCT id), sum(id), count(k), sum(k), md5(string_agg(v, \',\' ORDER BY id)) FROM';
my $before = sql("$Q c");
is(sql("$Q cb"), $before, 'CLUSTER: the twin holds the same rows');
my $old = $node->background_psql('postgres');
$old->query_safe('BEGIN ISOLATION LEVEL REPEATABLE READ');
$old->query_safe('SELECT count(*) FROM snap');	# its snapshot; no lock on c or cb
for my $t ('c', 'cb')
{
	sql(qq{
DELETE FROM $t WHERE id % 4 = 0;
UPDATE $t SET k = k + 1 WHERE id % 7 = 0;
UPDATE $t SET v = v || '+' WHERE id % 9 = 1;
});
}
my $after = sql("$Q c");
is(sql("$Q cb"), $after, 'CLUSTER: the twin had the same deletes and updates');
my (%visited, %verbose);
for my $m ([ 'c', 'c_k' ], [ 'cb', 'cb_k' ])
{
	my ($t, $i) = @$m;
	($ret, $out, $err) = $node->psql('postgres', "CLUSTER VERBOSE $t USING $i");
	is($ret, 0, "CLUSTER $t USING $i succeeds") or diag($err);
	my ($rem, $keep) = $err =~ /found (\d+) removable, (\d+) nonremovable row versions/;
	my ($rd) = $err =~ /(\d+) dead row versions cannot be removed yet/;
	$visited{$t} = join('/', $rem // '?', $keep // '?', $rd // '?');
	$verbose{$t} = $err;
}
like($verbose{c}, qr/clustering "(public\.)?c" using index scan on "c_k"/,
	'CLUSTER reads the heap through the lsm index (an index scan, never a sort)');
like($visited{c}, qr{^\d+/\d+/[1-9]\d*$},
	"CLUSTER through lsm kept recently dead rows (removable/nonremovable/recently dead: $visited{c})")
  or diag($verbose{c});
is($visited{c}, $visited{cb}, 'CLUSTER visited as many row versions through lsm as through btree')
  or diag("$verbose{c}\n$verbose{cb}");
$old->query_safe('SET enable_seqscan = off');
$old->query_safe('SET enable_bitmapscan = off');
like($old->query_safe("EXPLAIN (COSTS OFF) $Q c WHERE k IS NOT NULL"), qr/Index (Only )?Scan using c_k/,
	'the older snapshot reads c through the rebuilt lsm index');
is($old->query_safe("$Q c WHERE k IS NOT NULL") . ' ' . $old->query_safe("$Q c WHERE k IS NULL"),
	$old->query_safe("$Q cb WHERE k IS NOT NULL") . ' ' . $old->query_safe("$Q cb WHERE k IS NULL"),
	'after CLUSTER the older snapshot sees through lsm what it sees through btree');
$old->query_safe('SET enable_seqscan = on');
$old->query_safe('SET enable_indexscan = off');
$old->query_safe('SET enable_indexonlyscan = off');
is($old->query_safe("$Q c"), $before, 'after CLUSTER the older snapshot sees every row it saw before');
$old->query_safe('COMMIT');
$old->quit;
is(sql("$Q c"), $after, 'a new snapshot sees the rows after the deletes and updates');
is(sql(q{SELECT string_agg(coalesce(k::text, 'N'), ',' ORDER BY ctid)
              = string_agg(coalesce(k::text, 'N'), ',' ORDER BY k NULLS LAST) FROM c}),
	't', 'the visible rows of c lie in key order, NULLs last');
check_index('CLUSTER', 'c', 'k', 'c_k');
is(sql("SELECT indisclustered FROM pg_index WHERE indexrelid = 'c_k'::regclass"), 't',
	'CLUSTER ... USING marks the lsm index clustered');

ok(!$node->log_contains(qr/PANIC|TRAP:|server process .* was terminated by signal/),
	'no crash in the server log (other than the deliberate immediate stop)');
$node->stop;
done_testing();
