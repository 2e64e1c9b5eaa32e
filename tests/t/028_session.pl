# 028_session.pl — the test harness's persistent psql (tests/t/LsmSession.pm)
# behaves as a new connection per call, which the files that use it rely on:
# settings, prepared statements and temporary tables of one call are gone
# in the next; an error fails the call (safe_psql dies, psql returns 3) and
# stops its script there; an open transaction is rolled back; after a fast
# restart, an immediate stop and a terminated backend the next call
# connects again and runs.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use LsmCluster;
use LsmSession;

my $node = PostgreSQL::Test::Cluster->new('session');
$node->init(extra => [ initdb_args() ]);
$node->start;
my $sess = LsmSession->new($node);

is($sess->safe_psql('postgres', 'SELECT 1; SELECT 2'), "1\n2", 'two statements, two lines');
is($sess->safe_psql('postgres', 'SELECT 3'), '3', 'a last statement without a semicolon runs');
is($sess->safe_psql('postgres', "SELECT 4 -- a trailing comment"), '4', 'a trailing comment');
my $pid = $sess->safe_psql('postgres', 'SELECT pg_backend_pid()');
is($sess->safe_psql('postgres', 'SELECT pg_backend_pid()'), $pid, 'one backend for both calls');

# what one call sets is gone in the next
$sess->safe_psql('postgres', q{SET work_mem = '7MB'; PREPARE p AS SELECT 1; CREATE TEMP TABLE tt (a int)});
is($sess->safe_psql('postgres', 'SHOW work_mem'), '4MB', 'a setting of the last call is reset');
is($sess->safe_psql('postgres', 'SELECT count(*) FROM pg_prepared_statements'), '0',
	'a prepared statement of the last call is gone');
is($sess->safe_psql('postgres', q{SELECT count(*) FROM pg_class WHERE relname = 'tt'}), '0',
	'a temporary table of the last call is gone');

# an error: safe_psql dies, psql returns 3 and the script stops there
$sess->safe_psql('postgres', 'CREATE TABLE t (a int)');
ok(!eval { $sess->safe_psql('postgres', 'SELECT 1/0'); 1 }, 'safe_psql dies on an error');
like($@, qr/division by zero/, '... with the error');
my ($ret, $out, $err) = $sess->psql('postgres', 'INSERT INTO t VALUES (1); SELECT 1/0; INSERT INTO t VALUES (2)');
is($ret, 3, 'psql returns 3 after an SQL error');
like($err, qr/division by zero/, '... with the error on stderr');
is($sess->safe_psql('postgres', 'SELECT string_agg(a::text, \',\') FROM t'), '1',
	'the statements after the error did not run');

# an open transaction is not carried into the next call
$sess->safe_psql('postgres', 'BEGIN; INSERT INTO t VALUES (3)');
is($sess->safe_psql('postgres', 'SELECT count(*) FROM t WHERE a = 3'), '0',
	'a transaction left open by a call is rolled back');
($ret, $out, $err) = $sess->psql('postgres', 'BEGIN; SELECT 1/0');
is($sess->safe_psql('postgres', 'SELECT 5'), '5', 'an aborted transaction is not carried over');

# the server goes away: the next call connects again
$node->restart;
is($sess->safe_psql('postgres', 'SELECT 6'), '6', 'a call after a restart runs');
$node->stop('immediate');
$node->start;
is($sess->safe_psql('postgres', 'SELECT 7'), '7', 'a call after an immediate stop runs');
$pid = $sess->safe_psql('postgres', 'SELECT pg_backend_pid()');
$node->safe_psql('postgres', "SELECT pg_terminate_backend($pid)");
isnt($sess->safe_psql('postgres', 'SELECT pg_backend_pid()'), $pid,
	'a call after its backend was terminated runs in a new one');

# a connection that cannot be made fails the call
$node->stop;
ok(!eval { $sess->safe_psql('postgres', 'SELECT 8'); 1 }, 'a call to a stopped server dies');
$node->start;
is($sess->safe_psql('postgres', 'SELECT 9'), '9', 'and the next one runs once the server is back');
is($sess->safe_psql('template1', 'SELECT current_database()'), 'template1', 'a second database');
$sess->close;
$node->stop;
done_testing();
