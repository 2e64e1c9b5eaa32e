# 001_preload.pl — lsm_am requires shared_preload_libraries.
#
# Without it: CREATE EXTENSION works, but CREATE INDEX USING lsm, inserts into
# a table with an lsm index, scans of it and the lsm_am functions fail with an
# ERROR whose hint names shared_preload_libraries — never a crash, and the data
# stays intact.  With it: everything works, and the index created earlier
# answers correctly after the library comes back.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use LsmCluster;

my $node = PostgreSQL::Test::Cluster->new('preload');
$node->init(extra => [ initdb_args() ]);
$node->start;

# psql that must fail: the error must carry the preload hint
sub fails_with_hint
{
	my ($sql, $what) = @_;
	my ($ret, $out, $err) = $node->psql('postgres', $sql);
	isnt($ret, 0, "$what fails without the preload");
	like($err, qr/ERROR:/, "$what: reports an ERROR");
	like($err, qr/HINT:.*shared_preload_libraries/s, "$what: the hint names shared_preload_libraries")
	  or diag("stderr was: $err");
	unlike($err, qr/PANIC|server closed the connection|terminated/i, "$what: no crash");
}

# ---- 1. not preloaded
is($node->safe_psql('postgres', "SHOW shared_preload_libraries"), '', 'lsm_am is not preloaded');
$node->safe_psql('postgres', 'CREATE EXTENSION lsm_am');
is($node->safe_psql('postgres', "SELECT count(*) FROM pg_am WHERE amname = 'lsm'"),
	'1', 'CREATE EXTENSION works without the preload and creates the lsm access method');
$node->safe_psql('postgres',
	'CREATE TABLE t (id int, k int8); INSERT INTO t SELECT g, g * 10 FROM generate_series(1, 1000) g');

fails_with_hint('CREATE INDEX t_k ON t USING lsm (k)', 'CREATE INDEX USING lsm');
is($node->safe_psql('postgres', "SELECT count(*) FROM pg_class WHERE relname = 't_k'"),
	'0', 'the failed CREATE INDEX left no index behind');

# ---- 2. preloaded: everything works
$node->append_conf('postgresql.conf', "shared_preload_libraries = 'lsm_am'");
$node->restart;
$node->safe_psql('postgres', 'CREATE INDEX t_k ON t USING lsm (k)');
$node->safe_psql('postgres', 'INSERT INTO t SELECT g, g * 10 FROM generate_series(1001, 1500) g');
my $q = 'SET enable_seqscan = off; SET enable_bitmapscan = off;';
like($node->safe_psql('postgres', "$q EXPLAIN (COSTS OFF) SELECT id FROM t WHERE k = 12340"),
	qr/Index Scan using t_k/, 'preloaded: the planner uses the lsm index');
is($node->safe_psql('postgres', "$q SELECT id FROM t WHERE k = 12340"), '1234', 'preloaded: lookup in memtable');
is($node->safe_psql('postgres', "$q SELECT id FROM t WHERE k = 5000"), '500', 'preloaded: lookup in the built run');
$node->safe_psql('postgres', "SELECT lsm_am.flush('t_k')");
is($node->safe_psql('postgres', "$q SELECT count(*), sum(k) FROM t WHERE k >= 0"),
	'1500|11257500', 'preloaded: range scan after flush');
like($node->safe_psql('postgres', "SELECT runs FROM lsm_am.index_stats('t_k')"),
	qr/^[1-9]\d*$/, 'preloaded: index_stats reports runs');
is(merges_done($node, 't_k'), 't',
	'preloaded: wait_for_merges returns true');
is($node->safe_psql('postgres', "SELECT flushes, leaked_pages FROM lsm_am.maintenance_stats('t_k')"),
	'1|0', 'preloaded: maintenance_stats counts the flush');
is($node->safe_psql('postgres', "SELECT leaked_pages, dropped_pages FROM lsm_am.check_index('t_k')"),
	'0|0', 'preloaded: check_index finds no leaked page');

# ---- 3. the library goes away again: uses of the existing index fail cleanly
$node->adjust_conf('postgresql.conf', 'shared_preload_libraries', "''");
$node->restart;
is($node->safe_psql('postgres', "SHOW shared_preload_libraries"), '', 'preload removed again');

fails_with_hint('INSERT INTO t VALUES (2000, 20000)', 'INSERT into a table with an lsm index');
fails_with_hint("$q SELECT id FROM t WHERE k = 12340", 'index scan');
fails_with_hint('SET enable_seqscan = off; SET enable_indexscan = off; SELECT count(*) FROM t WHERE k < 100',
	'bitmap scan');
fails_with_hint("SELECT lsm_am.flush('t_k')", 'lsm_am.flush()');
fails_with_hint("SELECT * FROM lsm_am.index_stats('t_k')", 'lsm_am.index_stats()');
fails_with_hint("SELECT lsm_am.compact('t_k')", 'lsm_am.compact()');
fails_with_hint("SELECT * FROM lsm_am.index_info('t_k')", 'lsm_am.index_info()');
fails_with_hint("SELECT lsm_am.wait_for_merges('t_k')", 'lsm_am.wait_for_merges()');
fails_with_hint("SELECT * FROM lsm_am.maintenance_stats('t_k')", 'lsm_am.maintenance_stats()');
fails_with_hint("SELECT * FROM lsm_am.check_index('t_k')", 'lsm_am.check_index()');
fails_with_hint("SELECT * FROM lsm_am.lookup_stats('t_k')", 'lsm_am.lookup_stats()');
fails_with_hint("SELECT lsm_am.reset_lookup_stats('t_k')", 'lsm_am.reset_lookup_stats()');
fails_with_hint('CREATE INDEX t_k2 ON t USING lsm (id)', 'a second CREATE INDEX USING lsm');

# the table itself is still readable with a sequential scan, and nothing was lost
is($node->safe_psql('postgres',
		'SET enable_indexscan = off; SET enable_bitmapscan = off; SELECT count(*), sum(k) FROM t'),
	'1500|11257500', 'the heap is readable by seqscan and the failed INSERT left no row');

# ---- 4. preloaded again: the index is intact and writable
$node->adjust_conf('postgresql.conf', 'shared_preload_libraries', "'lsm_am'");
$node->restart;
$node->safe_psql('postgres', 'INSERT INTO t SELECT g, g * 10 FROM generate_series(1501, 1600) g');
is($node->safe_psql('postgres', "$q SELECT count(*), sum(k) FROM t WHERE k >= 0"),
	'1600|12808000', 'preloaded again: every row is found through the index');
is($node->safe_psql('postgres', "$q SELECT id FROM t WHERE k = 15550"), '1555',
	'preloaded again: lookup of a new row');
is($node->safe_psql('postgres', "$q SELECT id FROM t WHERE k = 12340"), '1234',
	'preloaded again: lookup of a row inserted before the restarts');
is($node->safe_psql('postgres', "SELECT leaked_pages FROM lsm_am.check_index('t_k')"), '0',
	'preloaded again: check_index finds no leaked page');

# DROP works in any case
$node->safe_psql('postgres', 'DROP INDEX t_k');
$node->safe_psql('postgres', 'DROP EXTENSION lsm_am');
is($node->safe_psql('postgres', "SELECT count(*) FROM pg_am WHERE amname = 'lsm'"), '0',
	'DROP EXTENSION removes the access method');

ok(!$node->log_contains(qr/PANIC|server process .* was terminated|TRAP:/),
	'no crash in the server log');
$node->stop;
done_testing();
