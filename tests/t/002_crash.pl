# Crash safety: immediate shutdowns after commits, during an open
# transaction, in the middle of a memtable flush, of a merge and of VACUUM.
# After every restart each committed row must be found through the lsm index
# (and nothing uncommitted), by index, index-only and bitmap scans.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);

my $node = PostgreSQL::Test::Cluster->new('crash');
$node->init;
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'lsm_am'
autovacuum = off
wal_consistency_checking = 'all'
});
$node->start;

$node->safe_psql('postgres', q{
CREATE EXTENSION lsm_am;
CREATE TABLE t (k int8, v text COLLATE "C");
CREATE INDEX t_k ON t USING lsm (k) WITH (memtable_size = 64);
CREATE INDEX t_kv ON t USING lsm (v, k DESC);
SELECT setseed(0.5);
});

# Every committed row must be reachable through both lsm indexes.
sub check_all
{
	my ($what) = @_;
	my $heap = $node->safe_psql('postgres', q{
		SET enable_indexscan = off; SET enable_bitmapscan = off; SET enable_indexonlyscan = off;
		SELECT count(*), coalesce(sum(k), 0), count(DISTINCT v) FROM t WHERE k IS NOT NULL});
	for my $mode ('indexscan', 'bitmapscan', 'indexonlyscan')
	{
		my $set = join(' ', map { "SET enable_$_ = " . ($_ eq $mode ? 'on' : 'off') . ';' }
			  ('indexscan', 'bitmapscan', 'indexonlyscan'));
		my $idx = $node->safe_psql('postgres', qq{
			SET enable_seqscan = off; $set
			SELECT count(*), coalesce(sum(k), 0), count(DISTINCT v) FROM t WHERE k >= -9223372036854775808});
		is($idx, $heap, "$what: $mode on t_k matches the heap");
	}
	my $kv = $node->safe_psql('postgres', q{
		SET enable_seqscan = off; SET enable_bitmapscan = off;
		SELECT count(*), coalesce(sum(k), 0), count(DISTINCT v) FROM t WHERE v >= ''});
	is($kv, $heap, "$what: t_kv matches the heap");
	# point lookups of a sample of rows
	my $miss = $node->safe_psql('postgres', q{
		SET enable_seqscan = off; SET enable_bitmapscan = off;
		SELECT count(*) FROM (SELECT k FROM t TABLESAMPLE BERNOULLI (5) REPEATABLE (1)) s
		WHERE NOT EXISTS (SELECT 1 FROM t t2 WHERE t2.k = s.k)});
	is($miss, '0', "$what: sampled point lookups all found");
	return $heap;
}

sub crash_restart
{
	$node->stop('immediate');
	$node->start;
}

# Wait until a statement matching $pat is running (and still running a second
# later), so the crash hits it in the middle.
sub wait_running
{
	my ($pat, $what) = @_;
	# count(*) > 0: a parallel VACUUM shows its workers with the same query
	my $q = "SELECT count(*) > 0 FROM pg_stat_activity WHERE state = 'active' AND query LIKE '$pat'";
	my $started = 0;
	for (1 .. 600)
	{
		$started = 1, last if $node->safe_psql('postgres', $q) eq 't';
		usleep(100_000);
	}
	ok($started, "$what started");
	sleep 1;
	is($node->safe_psql('postgres', $q), 't', "$what is still running at the crash");
}

sub insert_rows
{
	my ($n) = @_;
	$node->safe_psql('postgres',
		"INSERT INTO t SELECT (random() * 1e12)::int8, md5(random()::text) FROM generate_series(1, $n)");
}

# 1. committed inserts spread over log pages, flushes and merges
insert_rows(3000) for 1 .. 4;
my $before = check_all('before any crash');
crash_restart();
is(check_all('after crash with committed rows'), $before, 'nothing committed was lost');

# 2. an open transaction's rows vanish, committed ones stay
my $open = $node->background_psql('postgres');
$open->query_safe('BEGIN');
$open->query_safe("INSERT INTO t SELECT -g, 'uncommitted' FROM generate_series(1, 5000) g");
insert_rows(1000);
my $committed = check_all('with an open transaction');
crash_restart();
eval { $open->quit };
is(check_all('after crash with an open transaction'), $committed,
	'uncommitted rows are gone, committed rows present');
is($node->safe_psql('postgres', "SELECT count(*) FROM t WHERE v = 'uncommitted'"), '0',
	'no uncommitted row visible');

# 3. crash in the middle of a flush (lsm_am.flush_delay_ms slows it down)
insert_rows(1500);
$committed = check_all('before the flush crash');
my $flusher = $node->background_psql('postgres');
$flusher->query_safe('SET lsm_am.flush_delay_ms = 300');
$flusher->query_until(qr/go/, "\\echo go\nINSERT INTO t SELECT (random() * 1e12)::int8, 'mid-flush' FROM generate_series(1, 30000);\n");
wait_running('INSERT%mid-flush%', 'the flushing insert');
crash_restart();
eval { $flusher->quit };
is(check_all('after a crash mid-flush'), $committed, 'crash mid-flush lost nothing committed');

# 4. crash in the middle of a merge (max_runs = 2: the next flush merges)
$committed = check_all('before the merge crash');
my $merger = $node->background_psql('postgres');
$merger->query_safe('SET lsm_am.max_runs = 2');
$merger->query_safe("SELECT lsm_am.flush('t_k')");
$merger->query_safe("INSERT INTO t SELECT (random() * 1e12)::int8, md5(random()::text) FROM generate_series(1, 200)");
$merger->query_safe("SELECT lsm_am.flush('t_k')");
$committed = check_all('runs ready to merge');
$merger->query_safe('SET lsm_am.flush_delay_ms = 100');
$merger->query_until(qr/go/, "\\echo go\nINSERT INTO t SELECT (random() * 1e12)::int8, 'mid-merge' FROM generate_series(1, 30000);\n");
wait_running('INSERT%mid-merge%', 'the merging insert');
crash_restart();
eval { $merger->quit };
is(check_all('after a crash mid-merge'), $committed, 'crash mid-merge lost nothing committed');

# 5. crash in the middle of VACUUM
$node->safe_psql('postgres', 'DELETE FROM t WHERE k % 3 = 0');
insert_rows(1500);
$committed = check_all('before the vacuum crash');
my $vac = IPC::Run::start(
	[
		'psql', '-X', '-h', $node->host, '-p', $node->port, '-d', 'postgres',
		'-c', 'SET lsm_am.flush_delay_ms = 200', '-c', 'VACUUM t'
	],
	'>', \my $vac_out, '2>', \my $vac_err);
wait_running('VACUUM t%', 'VACUUM');
crash_restart();
$vac->finish;
note "VACUUM session: $vac_out $vac_err";
is(check_all('after a crash mid-vacuum'), $committed, 'crash mid-vacuum lost nothing');
$node->safe_psql('postgres', 'VACUUM t');
is(check_all('after a complete vacuum'), $committed, 'vacuum after the crash completes');

# replay with wal_consistency_checking found no inconsistent page
my $log = slurp_file($node->logfile);
unlike($log, qr/inconsistent page found/, 'WAL consistency checks passed during recovery');
unlike($log, qr/PANIC|TRAP/, 'no PANIC or assertion failure');

$node->stop;
done_testing();
