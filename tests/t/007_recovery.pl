# 007_recovery.pl — crash recovery when index pages never reached disk.
#
# With full_page_writes = off, no checkpoint and the background writer idle,
# the pages an lsm index adds after the last checkpoint (log pages, run pages,
# the pages CREATE INDEX and VACUUM write) exist on disk only as the zero
# pages the relation was extended with.  Redo must rebuild them from WAL alone
# — which works only if every new page is logged as a full image — and
# wal_consistency_checking = 'generic' verifies each generic-WAL record as it
# is replayed.  After each crash every committed row must be found through
# the index.  Also: a crash in the middle of CREATE INDEX leaves no index;
# in the middle of REINDEX the old index; of REINDEX CONCURRENTLY the
# original index valid and an invalid copy; of CREATE INDEX CONCURRENTLY an
# invalid index that queries ignore (all as for btree); in a transaction that
# truncated the table every row.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use LsmCluster;
use LsmSession;

my $node = PostgreSQL::Test::Cluster->new('recovery');
$node->init(extra => [ initdb_args() ]);
$node->append_conf(
	'postgresql.conf', qq{
shared_preload_libraries = 'lsm_am'
full_page_writes = off
wal_consistency_checking = 'generic'
checkpoint_timeout = '1h'
max_wal_size = '4GB'
bgwriter_lru_maxpages = 0
shared_buffers = '256MB'
autovacuum = off
});
$node->start;

# one connection for the many small queries (tests/t/LsmSession.pm)
my $sess = LsmSession->new($node);
sub sql { return $sess->safe_psql('postgres', $_[0]); }

my $F_SEQ = 'SET enable_indexscan = off; SET enable_bitmapscan = off; SET enable_indexonlyscan = off;';

# every committed row of $tab is found through lsm index $idx on column k
sub check_table
{
	my ($what, $tab, $idx) = @_;
	my $want = sql("$F_SEQ SELECT count(*), coalesce(sum(k), 0), coalesce(sum(id), 0) FROM $tab WHERE k IS NOT NULL");
	my $q = "SELECT count(*), coalesce(sum(k), 0), coalesce(sum(id), 0) FROM $tab WHERE k IS NOT NULL";
	for my $m (
		[ 'index',  'SET enable_seqscan = off; SET enable_bitmapscan = off; SET enable_indexonlyscan = off;',
		  qr/Index Scan using $idx on $tab/ ],
		[ 'bitmap', 'SET enable_seqscan = off; SET enable_indexscan = off; SET enable_indexonlyscan = off;',
		  qr/Bitmap Index Scan on $idx\b/ ])
	{
		my ($mode, $force, $node_re) = @$m;
		# the plan of the very query compared
		like(sql("$force EXPLAIN (COSTS OFF) $q"), $node_re, "$what: [$mode] plan uses $idx");
		is(sql("$force $q"), $want, "$what: [$mode] every committed row is found");
	}
	# point lookups of a sample through the index (nested loop, index inner side)
	my $force_nl = 'SET enable_seqscan = off; SET enable_hashjoin = off; SET enable_mergejoin = off; SET enable_bitmapscan = off;';
	my $probe = "WITH s AS MATERIALIZED (SELECT id, k FROM $tab WHERE k IS NOT NULL AND id % 37 = 0)
	        SELECT count(*) FROM s WHERE NOT EXISTS (SELECT 1 FROM $tab t WHERE t.k = s.k AND t.id = s.id)";
	like(sql("$force_nl EXPLAIN (COSTS OFF) $probe"), qr/Nested Loop Anti Join(.|\n)*Index Scan using $idx on $tab\b/,
		"$what: point lookups run through $idx");
	is(sql("$force_nl $probe"), '0', "$what: sampled point lookups all succeed");
	return $want;
}

sub crash
{
	$node->stop('immediate');
	$node->start;
}

# every page of lsm index $idx is accounted for, none leaked
sub check_pages
{
	my ($what, $idx) = @_;
	my ($ret, $out, $err) = $node->psql('postgres',
		"SELECT leaked_pages, dropped_pages FROM lsm_am.check_index('$idx')");
	is("$out$err", '0|0', "$what: check_index($idx) finds no leaked page");
	($ret, $out, $err) = $node->psql('postgres', "SELECT lsm_am.verify('$idx', true)");
	is("$ret$out$err", '0', "$what: verify($idx, true) finds $idx sound and complete");
}

sql(q{
CREATE EXTENSION lsm_am;
CREATE TABLE t (id int, k int8);
CREATE INDEX t_k ON t USING lsm (k) WITH (memtable_size = 64);
CHECKPOINT;
});

# ---- 1. log pages, flushed runs and compacted runs written after the
# checkpoint (the background workers' too: wait for them), then a crash
sql('INSERT INTO t SELECT g, hashint4(g) FROM generate_series(1, 20000) g');
sql("SELECT lsm_am.flush('t_k')");
is(merges_done($sess, 't_k'), 't', 'crash 1: flushes and compactions finished');
cmp_ok(sql("SELECT compactions FROM lsm_am.maintenance_stats('t_k')"), '>', 0,
	'crash 1: compactions wrote runs after the checkpoint');
sql('INSERT INTO t SELECT g, hashint4(g) FROM generate_series(20001, 21000) g');
my $before = check_table('before crash 1', 't', 't_k');
crash();
is(check_table('after crash 1 (new log and run pages)', 't', 't_k'), $before, 'crash 1: nothing lost');
check_pages('after crash 1', 't_k');

# ---- 2. the index is writable after recovery; crash again without checkpoint
sql('INSERT INTO t SELECT g, hashint4(g) FROM generate_series(21001, 30000) g');
$before = check_table('before crash 2', 't', 't_k');
crash();
is(check_table('after crash 2 (pages written after recovery)', 't', 't_k'), $before, 'crash 2: nothing lost');
check_pages('after crash 2', 't_k');

# ---- 3. CREATE INDEX and VACUUM after the checkpoint, then a crash
sql('CHECKPOINT');
sql(q{
CREATE TABLE u (id int, k int8);
INSERT INTO u SELECT g, CASE WHEN g % 50 = 0 THEN NULL ELSE hashint4(g * 7) END FROM generate_series(1, 30000) g;
CREATE INDEX u_k ON u USING lsm (k) WITH (memtable_size = 64);
INSERT INTO u SELECT g, hashint4(g * 7) FROM generate_series(30001, 33000) g;
DELETE FROM u WHERE id % 4 = 0;
DELETE FROM t WHERE id % 5 = 0;
VACUUM u, t;
INSERT INTO u SELECT g, hashint4(g * 7) FROM generate_series(33001, 34000) g;
});
my $bu = check_table('before crash 3', 'u', 'u_k');
my $bt = check_table('before crash 3', 't', 't_k');
crash();
is(check_table('after crash 3 (CREATE INDEX + VACUUM)', 'u', 'u_k'), $bu, 'crash 3: built index intact');
is(check_table('after crash 3 (VACUUM)', 't', 't_k'), $bt, 'crash 3: vacuumed index intact');
check_pages('after crash 3', 't_k');
check_pages('after crash 3', 'u_k');

# ---- 4. a crash in the middle of CREATE INDEX
# lsm_am.flush_delay_ms (a test hook) sleeps after each page the build
# writes: 300,000 keys take about 360 pages, so the build writes for about
# 7 s and the crash, which waits to see it writing, certainly hits it.
sql('CREATE TABLE w (id int, k int8); INSERT INTO w SELECT g, hashint4(g) FROM generate_series(1, 300000) g; CHECKPOINT');
crash_during_build('CREATE INDEX', 'CREATE INDEX w_k ON w USING lsm (k)', 'w');	# below
is(sql("SELECT count(*) FROM pg_class WHERE relname = 'w_k'"), '0',
	'a CREATE INDEX interrupted by a crash leaves no index');
sql('DROP INDEX IF EXISTS w_k; CREATE INDEX w_k ON w USING lsm (k)');
check_table('CREATE INDEX after the crash', 'w', 'w_k');
check_pages('CREATE INDEX after the crash', 'w_k');

# ---- 5. crashes in the middle of REINDEX, REINDEX CONCURRENTLY, CREATE INDEX
# CONCURRENTLY, and in a transaction that truncated the table.  Each build
# is slowed by lsm_am.flush_delay_ms and the crash waits for it to write its
# run (pg_stat_progress_create_index), so it certainly hits the build.
sub crash_during_build
{
	my ($what, $stmt, $relid) = @_;
	my $s = $node->background_psql('postgres', on_error_stop => 0);
	$s->query_until(qr/building/,
		"SET lsm_am.flush_delay_ms = 20;\n\\echo building\n$stmt;\n");
	ok(wait_until($sess, qq{SELECT count(*) = 1 FROM pg_stat_progress_create_index
			WHERE relid = '$relid'::regclass AND phase = 'building index: writing run'},
			"$what writing its run",
			[ 'SELECT pid, relid::regclass, command, phase, blocks_done, blocks_total FROM pg_stat_progress_create_index',
			  q{SELECT pid, state, wait_event, left(query, 60) FROM pg_stat_activity WHERE state = 'active'} ]),
		"$what is writing its run at the crash");
	crash();
	eval { $s->quit };
}
my $bw = check_table('before the REINDEX crash', 'w', 'w_k');
my $w_node = sql("SELECT relfilenode FROM pg_class WHERE relname = 'w_k'");
crash_during_build('REINDEX', 'REINDEX INDEX w_k', 'w');
is(sql("SELECT relfilenode FROM pg_class WHERE relname = 'w_k'"), $w_node,
	'a crash during REINDEX leaves the old index in place');
is(check_table('after a crash during REINDEX', 'w', 'w_k'), $bw, 'the old index answers after the REINDEX crash');
check_pages('after a crash during REINDEX', 'w_k');

crash_during_build('REINDEX CONCURRENTLY', 'REINDEX INDEX CONCURRENTLY w_k', 'w');
is(sql("SELECT indisvalid FROM pg_index WHERE indexrelid = 'w_k'::regclass"), 't',
	'a crash during REINDEX CONCURRENTLY leaves the original index valid');
is(check_table('after a crash during REINDEX CONCURRENTLY', 'w', 'w_k'), $bw,
	'the original index answers after the REINDEX CONCURRENTLY crash');
my $leftover = sql("SELECT string_agg(c.relname || ':' || i.indisvalid, ',') FROM pg_index i
	JOIN pg_class c ON c.oid = i.indexrelid WHERE i.indrelid = 'w'::regclass AND c.relname <> 'w_k'");
like($leftover, qr/^w_k_ccnew\d*:false$/, 'REINDEX CONCURRENTLY left its invalid copy, as for btree');
sql("DROP INDEX w_k_ccnew");
sql('REINDEX INDEX CONCURRENTLY w_k');
is(check_table('REINDEX CONCURRENTLY after the crash', 'w', 'w_k'), $bw, 'REINDEX CONCURRENTLY completes after the crash');
check_pages('REINDEX CONCURRENTLY after the crash', 'w_k');

crash_during_build('CREATE INDEX CONCURRENTLY', 'CREATE INDEX CONCURRENTLY w_k2 ON w USING lsm (k)', 'w');
is(sql("SELECT indisvalid FROM pg_index WHERE indexrelid = 'w_k2'::regclass"), 'f',
	'a crash during CREATE INDEX CONCURRENTLY leaves an invalid index, as for btree');
like(sql("SET enable_seqscan = off; SET enable_bitmapscan = off; EXPLAIN (COSTS OFF) SELECT count(*) FROM w WHERE k > 0"),
	qr/using w_k on w/, 'queries do not use the invalid index');
sql('INSERT INTO w SELECT g, hashint4(g) FROM generate_series(300001, 310000) g');
$bw = check_table('inserts next to the invalid index', 'w', 'w_k');
sql('DROP INDEX w_k2; CREATE INDEX CONCURRENTLY w_k2 ON w USING lsm (k)');
is(check_table('CREATE INDEX CONCURRENTLY after the crash', 'w', 'w_k2'), $bw,
	'CREATE INDEX CONCURRENTLY completes after the crash');
check_pages('CREATE INDEX CONCURRENTLY after the crash', 'w_k2');
sql('DROP INDEX w_k2');

# TRUNCATE in a transaction that is still open at the crash (the new empty
# index files are not committed), and one that committed
my $tr = $node->background_psql('postgres', on_error_stop => 0);
$tr->query_safe('BEGIN');
$tr->query_safe('TRUNCATE w');
$tr->query_safe("INSERT INTO w SELECT g, hashint4(g) FROM generate_series(1, 100) g");
crash();
eval { $tr->quit };
is(check_table('after a crash in a transaction that truncated', 'w', 'w_k'), $bw,
	'a crash before TRUNCATE commits leaves every row and the index');
check_pages('after a crash in a transaction that truncated', 'w_k');
sql("TRUNCATE w; INSERT INTO w SELECT g, hashint4(g) FROM generate_series(1, 5000) g");
crash();
is(check_table('after TRUNCATE, inserts and a crash', 'w', 'w_k'), '5000|' .
	sql("$F_SEQ SELECT coalesce(sum(k), 0) FROM w") . '|12502500',
	'after a committed TRUNCATE the index holds exactly the new rows');
check_pages('after TRUNCATE, inserts and a crash', 'w_k');

ok(!$node->log_contains(qr/inconsistent page found/), 'no inconsistent page found during redo');
ok(!$node->log_contains(qr/PANIC|TRAP:/), 'no PANIC in the server log');
$node->stop;
done_testing();
