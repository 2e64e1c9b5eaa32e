# Crash safety: immediate shutdowns after commits, during an open
# transaction, in the middle of a memtable flush (by a background worker and
# by lsm_am.flush() in a backend), of a compaction (by a worker and by
# lsm_am.compact()) and of VACUUM.  After every restart each committed row
# must be found through the lsm index (and nothing uncommitted), by index,
# index-only and bitmap scans, and lsm_am.check_index() must account for
# every page (the reservation of an interrupted flush or compaction is
# reclaimed, nothing leaks).
#
# Flushes and compactions run in background workers, which take
# lsm_am.flush_delay_ms and lsm_am.l0_compaction_trigger from the server
# configuration: the worker cases set them with ALTER SYSTEM and reset them
# (effective at the restart) before the crash.
#
# INCLUDE columns: table ti has an lsm index (k) INCLUDE (text, jsonb,
# numeric, int[], float8 and a long text TOASTed in the heap) and a twin
# ti_bt with the same rows and the same index as btree.  It gets rows with
# t's, and cases of its own crash a worker's flush of ti_k (under an
# uncommitted insert) and lsm_am.compact() of ti_k; after every restart an
# index-only scan of ti_k (plan asserted) must return exactly ti_bt's rows,
# included values and all.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use LsmPlan;
use LsmCluster;
use LsmSession;

my $node = PostgreSQL::Test::Cluster->new('crash');
$node->init(extra => [ initdb_args() ]);
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'lsm_am'
autovacuum = off
wal_consistency_checking = 'all'
});
$node->start;
# one connection for the polls and checks (tests/t/LsmSession.pm)
my $sess = LsmSession->new($node);

$sess->safe_psql('postgres', q{
CREATE EXTENSION lsm_am;
CREATE TABLE t (k int8, v text COLLATE "C");
CREATE INDEX t_k ON t USING lsm (k) WITH (memtable_size = 64);
CREATE INDEX t_kv ON t USING lsm (v, k DESC);
-- pad (in no index) takes some rows over the TOAST threshold: their long
-- values are compressed or stored out of line (toast_tuple_target = 128)
CREATE TABLE ti (k int8, a text, j jsonb, n numeric, arr int[], f float8, lt text, pad text)
	WITH (toast_tuple_target = 128);
CREATE TABLE ti_bt (LIKE ti) WITH (toast_tuple_target = 128);
CREATE INDEX ti_k ON ti USING lsm (k) INCLUDE (a, j, n, arr, f, lt) WITH (memtable_size = 64);
CREATE INDEX ti_bt_k ON ti_bt (k) INCLUDE (a, j, n, arr, f, lt);
-- n random rows for ti and ti_bt (one statement inserts into both)
CREATE FUNCTION ti_rows(n int) RETURNS SETOF ti LANGUAGE sql AS $$
	SELECT CASE WHEN random() < 0.02 THEN NULL ELSE (random() * 1e12)::int8 END,
		CASE WHEN random() < 0.1 THEN NULL ELSE md5(random()::text) END,
		CASE WHEN random() < 0.1 THEN NULL ELSE jsonb_build_object('g', g, 'r', random() < 0.5) END,
		CASE WHEN random() < 0.1 THEN NULL ELSE round((random() * 1e6)::numeric, (random() * 4)::int) END,
		CASE WHEN random() < 0.1 THEN NULL ELSE ARRAY[g, NULL, (random() * 9)::int] END,
		CASE WHEN random() < 0.1 THEN NULL WHEN random() < 0.05 THEN '-0'::float8 ELSE random() END,
		CASE WHEN random() < 0.1 THEN NULL WHEN random() < 0.5 THEN repeat(md5(random()::text), 1 + (random() * 30)::int)
			ELSE (SELECT string_agg(md5(random()::text || i || g), '') FROM generate_series(1, (random() * 30)::int) i) END,
		CASE WHEN random() < 0.5 THEN repeat('p', 2100) END
	FROM generate_series(1, n) g
$$;
SELECT setseed(0.5);
});
my $ti_cols = 'k, a, j, n, arr, f, lt';
sub ti_insert_sql
{
	my ($n) = @_;
	return "WITH r AS (INSERT INTO ti SELECT * FROM ti_rows($n) RETURNING *) INSERT INTO ti_bt SELECT * FROM r";
}

# Every committed row must be reachable through both lsm indexes, and each
# check asserts the plan it claims to test (a broken index would otherwise
# fall back to a sequential scan and pass).
my %scan_node = (
	indexscan     => qr/Index Scan using t_k on t/,
	bitmapscan    => qr/Bitmap Index Scan on t_k/,
	indexonlyscan => qr/Index Only Scan using t_k on t/);
sub check_all
{
	my ($what) = @_;
	my $noidx = 'SET enable_indexscan = off; SET enable_bitmapscan = off; SET enable_indexonlyscan = off;';
	my $heap = $sess->safe_psql('postgres', qq{$noidx
		SELECT count(*), coalesce(sum(k), 0), count(DISTINCT v) FROM t WHERE k IS NOT NULL});
	# the index-only scan can only return k: compare count and sum of k
	my $heap_k = $sess->safe_psql('postgres', qq{$noidx
		SELECT count(*), coalesce(sum(k), 0) FROM t WHERE k IS NOT NULL});
	for my $mode ('indexscan', 'bitmapscan', 'indexonlyscan')
	{
		# (enable_indexscan = off disables index-only scans too)
		my $set = join(' ', map {
				"SET enable_$_ = "
				  . ($_ eq $mode || ($mode eq 'indexonlyscan' && $_ eq 'indexscan') ? 'on' : 'off') . ';'
			} ('indexscan', 'bitmapscan', 'indexonlyscan'));
		my $cols = $mode eq 'indexonlyscan'
		  ? 'count(*), coalesce(sum(k), 0)'
		  : 'count(*), coalesce(sum(k), 0), count(DISTINCT v)';
		# Every row with a key: a whole-index scan, which t_kv (v, k) could
		# serve as well when its entries sit in its memtable (few pages); an
		# order by k that only t_k gives (no sort allowed) makes the scan
		# t_k's.  A bitmap scan has no order: t_k's bounding clause decides.
		my $q = $mode eq 'bitmapscan'
		  ? "SELECT $cols FROM t WHERE k >= -9223372036854775808"
		  : "SELECT $cols FROM (SELECT k, v FROM t WHERE k >= -9223372036854775808 ORDER BY k) s";
		my $idx = query_planned($sess, 'postgres', "SET enable_seqscan = off; SET enable_sort = off; $set",
			$q, $scan_node{$mode}, "$what: $mode on t_k");
		is($idx, $mode eq 'indexonlyscan' ? $heap_k : $heap, "$what: $mode on t_k matches the heap");
	}
	my $kv = query_planned($sess, 'postgres', 'SET enable_seqscan = off; SET enable_bitmapscan = off;',
		"SELECT count(*), coalesce(sum(k), 0), count(DISTINCT v) FROM t WHERE v >= ''",
		qr/Index (Only )?Scan using t_kv on t/, "$what: t_kv");
	is($kv, $heap, "$what: t_kv matches the heap");
	# point lookups of a sample of rows, through t_k
	my $probe = q{SELECT count(*) FROM (SELECT k FROM t TABLESAMPLE BERNOULLI (5) REPEATABLE (1)) s
		WHERE NOT EXISTS (SELECT 1 FROM t t2 WHERE t2.k = s.k)};
	my $miss = query_planned($sess, 'postgres',
		'SET enable_seqscan = off; SET enable_bitmapscan = off; SET enable_hashjoin = off; SET enable_mergejoin = off;',
		$probe, qr/Index (Only )?Scan using t_k on t t2/, "$what: sampled point lookups");
	is($miss, '0', "$what: sampled point lookups all found");
	# ti: an index-only scan of ti_k returns exactly ti_bt's rows (the btree
	# twin), included values and all (compared as text, as multisets)
	my $ti_scan = "SELECT $ti_cols FROM ti WHERE k >= -9223372036854775808 UNION ALL SELECT $ti_cols FROM ti WHERE k IS NULL";
	my $ti = query_planned($sess, 'postgres', 'SET enable_seqscan = off; SET enable_bitmapscan = off;',
		qq{SELECT (SELECT count(*) FROM ti_bt), count(*) FROM (
		(SELECT x::text FROM ($ti_scan) x EXCEPT ALL SELECT x::text FROM (SELECT $ti_cols FROM ti_bt) x)
		UNION ALL (SELECT x::text FROM (SELECT $ti_cols FROM ti_bt) x EXCEPT ALL SELECT x::text FROM ($ti_scan) x)) d},
		qr/Index Only Scan using ti_k on ti(?s:.*)Index Only Scan using ti_k on ti/, "$what: index-only scans of ti_k");
	like($ti, qr/^[1-9]\d*\|0$/, "$what: ti_k's index-only scan returns ti_bt's rows and included values ($ti)");
	return $heap;
}

sub crash_restart
{
	$node->stop('immediate');
	$node->start;
}

# Every page of both indexes is accounted for: nothing leaked.
sub check_pages
{
	my ($what) = @_;
	for my $idx ('t_k', 't_kv', 'ti_k')
	{
		my ($ret, $out, $err) = $node->psql('postgres',
			"SELECT leaked_pages, dropped_pages FROM lsm_am.check_index('$idx')");
		is($out, '0|0', "$what: check_index($idx) finds no leaked page")
		  or diag($err);
		unlike($err, qr/belong to nothing/, "$what: check_index($idx) reports no unowned block");
		($ret, $out, $err) = $node->psql('postgres', "SELECT lsm_am.verify('$idx', true)");
		is("$ret$out$err", '0', "$what: verify($idx, true) finds $idx sound and complete");
	}
}

# Set (or reset, with undef) server settings for the workers; reload.
sub server_set
{
	my (%set) = @_;
	for my $name (sort keys %set)
	{
		my $sql = defined $set{$name}
		  ? "ALTER SYSTEM SET $name = '$set{$name}'"
		  : "ALTER SYSTEM RESET $name";
		$sess->safe_psql('postgres', $sql);
	}
}

# Wait until a statement matching $pat is running and its job on $rel (an
# index, or a table for VACUUM's passes) has written pages (lsm_am.progress:
# past its start, by its own count rather than by a clock), so the crash hits
# it in the middle.
sub wait_running
{
	my ($pat, $what, $rel) = @_;
	# count(*) > 0: a parallel VACUUM shows its workers with the same query
	my $q = "SELECT count(*) > 0 FROM pg_stat_activity WHERE state = 'active' AND query LIKE '$pat'";
	my $active = q{SELECT pid, backend_type, state, wait_event, left(query, 60) FROM pg_stat_activity WHERE state = 'active'};
	ok(wait_until($sess, $q, "$what starting", $active), "$what started");
	ok(wait_until($sess, qq{SELECT count(*) > 0 FROM lsm_am.progress
			WHERE (indexrelid = '$rel'::regclass OR relid = '$rel'::regclass) AND pages_done >= 2},
			"$what: pages done on $rel", [ $active, 'SELECT * FROM lsm_am.progress' ]),
		"$what: lsm_am.progress shows pages done on $rel");
	is($sess->safe_psql('postgres', $q), 't', "$what is still running at the crash");
}

sub insert_rows
{
	my ($n) = @_;
	$sess->safe_psql('postgres',
		"INSERT INTO t SELECT (random() * 1e12)::int8, md5(random()::text) FROM generate_series(1, $n);"
		  . ti_insert_sql(int($n / 3) + 1));
}

# 1. committed inserts spread over log pages, flushes and merges
insert_rows(3000) for 1 .. 4;
my $before = check_all('before any crash');
crash_restart();
is(check_all('after crash with committed rows'), $before, 'nothing committed was lost');
check_pages('after crash with committed rows');

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
is($sess->safe_psql('postgres', "SELECT count(*) FROM t WHERE v = 'uncommitted'"), '0',
	'no uncommitted row visible');
check_pages('after crash with an open transaction');

# 3a. crash in the middle of a worker's flush (lsm_am.flush_delay_ms slows
# it down): an insert fills memtables, a worker flushes them
insert_rows(1500);
$committed = check_all('before the flush crash');
server_set('lsm_am.flush_delay_ms' => 500);
$node->reload;
my $flusher = $node->background_psql('postgres');
$flusher->query_until(qr/go/, "\\echo go\nINSERT INTO t SELECT (random() * 1e12)::int8, 'mid-flush' FROM generate_series(1, 30000);\n");
wait_running('lsm_am flush of index public.t_k:%', "a worker's flush of t_k", 't_k');
server_set('lsm_am.flush_delay_ms' => undef);
crash_restart();
eval { $flusher->quit };
is(check_all('after a crash mid-flush'), $committed, 'crash mid-flush lost nothing committed');
check_pages('after a crash mid-flush');

# 3b. crash in the middle of lsm_am.flush() in a backend (a big memtable of
# t_kv, whose memtable_size is the default 4MB)
my $bflusher = $node->background_psql('postgres');
$bflusher->query_safe("INSERT INTO t SELECT (random() * 1e12)::int8, md5(random()::text) FROM generate_series(1, 20000)");
$committed = check_all('before the lsm_am.flush() crash');
$bflusher->query_safe('SET lsm_am.flush_delay_ms = 100');
$bflusher->query_until(qr/go/, "\\echo go\nSELECT lsm_am.flush('t_kv');\n");
wait_running('SELECT lsm_am.flush%', 'lsm_am.flush() of t_kv', 't_kv');
crash_restart();
eval { $bflusher->quit };
is(check_all('after a crash mid-lsm_am.flush()'), $committed, 'crash mid-lsm_am.flush() lost nothing committed');
check_pages('after a crash mid-lsm_am.flush()');

# 3c. the same for the INCLUDE index: a crash in the middle of a worker's
# flush of ti_k, while an uncommitted insert fills its memtables
$committed = check_all('before the ti_k flush crash');
server_set('lsm_am.flush_delay_ms' => 500);
$node->reload;
my $iflusher = $node->background_psql('postgres');
$iflusher->query_until(qr/go/, "\\echo go\n" . ti_insert_sql(20000) . ";\n");
wait_running('lsm_am flush of index public.ti_k:%', "a worker's flush of ti_k", 'ti_k');
server_set('lsm_am.flush_delay_ms' => undef);
crash_restart();
eval { $iflusher->quit };
is(check_all('after a crash mid-flush of ti_k'), $committed, 'crash mid-flush of ti_k lost nothing committed');
check_pages('after a crash mid-flush of ti_k');

# 4a. crash in the middle of a worker's compaction: t_kv is compacted into
# one big run (level 1: with a 32MB memtable_size the target of level 1 is
# thousands of pages), then with lsm_am.l0_compaction_trigger = 2 two flushes
# make a worker merge the two level-0 runs with that run
$sess->safe_psql('postgres', "ALTER INDEX t_kv SET (memtable_size = 32768)");
$sess->safe_psql('postgres', "SELECT lsm_am.compact('t_kv')");
is($sess->safe_psql('postgres', "SELECT string_agg(level::text, ',') FROM lsm_am.index_info('t_kv')"),
	'1', 'before the compaction crash: t_kv is one level-1 run');
server_set('lsm_am.l0_compaction_trigger' => 2, 'lsm_am.flush_delay_ms' => 50);
$node->reload;
my $merger = $node->background_psql('postgres');
for (1 .. 2)
{
	$merger->query_safe("INSERT INTO t SELECT (random() * 1e12)::int8, md5(random()::text) FROM generate_series(1, 200)");
	$merger->query_safe("SELECT lsm_am.flush('t_kv')");
}
$committed = check_all('runs ready to merge');
wait_running('lsm_am compaction of index public.t_kv:%', "a worker's compaction of t_kv", 't_kv');
server_set('lsm_am.l0_compaction_trigger' => undef, 'lsm_am.flush_delay_ms' => undef);
crash_restart();
eval { $merger->quit };
is(check_all('after a crash mid-compaction'), $committed, 'crash mid-compaction lost nothing committed');
check_pages('after a crash mid-compaction');
is(merges_done($sess, 't_kv'), 't',
	'after the compaction crash: the pending compaction completes');
check_pages('after the compaction crash, compaction completed');

# 4b. crash in the middle of lsm_am.compact() in a backend
my $compactor = $node->background_psql('postgres');
$compactor->query_safe("INSERT INTO t SELECT (random() * 1e12)::int8, md5(random()::text) FROM generate_series(1, 500)");
$committed = check_all('before the lsm_am.compact() crash');
$compactor->query_safe('SET lsm_am.flush_delay_ms = 50');
$compactor->query_until(qr/go/, "\\echo go\nSELECT lsm_am.compact('t_kv');\n");
wait_running('SELECT lsm_am.compact%', 'lsm_am.compact() of t_kv', 't_kv');
crash_restart();
eval { $compactor->quit };
is(check_all('after a crash mid-lsm_am.compact()'), $committed, 'crash mid-lsm_am.compact() lost nothing committed');
check_pages('after a crash mid-lsm_am.compact()');

# 4c. crash in the middle of lsm_am.compact() of the INCLUDE index ti_k
# (its runs of the inserts so far, and a memtable)
$sess->safe_psql('postgres', ti_insert_sql(3000) . "; SELECT lsm_am.flush('ti_k'); " . ti_insert_sql(3000));
cmp_ok($sess->safe_psql('postgres', "SELECT runs FROM lsm_am.index_stats('ti_k')"), '>', 1,
	'before the ti_k compaction crash: ti_k has several runs');
$committed = check_all('before the lsm_am.compact(ti_k) crash');
my $icompactor = $node->background_psql('postgres');
$icompactor->query_safe('SET lsm_am.flush_delay_ms = 50');
$icompactor->query_until(qr/go/, "\\echo go\nSELECT lsm_am.compact('ti_k');\n");
wait_running('SELECT lsm_am.compact%', 'lsm_am.compact() of ti_k', 'ti_k');
crash_restart();
eval { $icompactor->quit };
is(check_all('after a crash mid-lsm_am.compact(ti_k)'), $committed, 'crash mid-lsm_am.compact(ti_k) lost nothing committed');
check_pages('after a crash mid-lsm_am.compact(ti_k)');
$sess->safe_psql('postgres', "SELECT lsm_am.compact('ti_k')");
check_all('after lsm_am.compact(ti_k) completed');

# 5. crash in the middle of VACUUM
$sess->safe_psql('postgres', 'DELETE FROM t WHERE k % 3 = 0; DELETE FROM ti WHERE k % 3 = 0; DELETE FROM ti_bt WHERE k % 3 = 0');
insert_rows(1500);
$committed = check_all('before the vacuum crash');
my $vac = IPC::Run::start(
	[
		'psql', '-X', '-h', $node->host, '-p', $node->port, '-d', 'postgres',
		'-c', 'SET lsm_am.flush_delay_ms = 200', '-c', 'VACUUM t', '-c', 'VACUUM ti'
	],
	'>', \my $vac_out, '2>', \my $vac_err);
wait_running('VACUUM t%', 'VACUUM', 't');
crash_restart();
$vac->finish;
note "VACUUM session: $vac_out $vac_err";
is(check_all('after a crash mid-vacuum'), $committed, 'crash mid-vacuum lost nothing');
check_pages('after a crash mid-vacuum');
$sess->safe_psql('postgres', 'VACUUM t; VACUUM ti; VACUUM ti_bt');
is(check_all('after a complete vacuum'), $committed, 'vacuum after the crash completes');
is($sess->safe_psql('postgres', "SELECT memtable_entries + run_entries = (SELECT count(*) FROM ti) FROM lsm_am.index_stats('ti_k')"),
	't', 'after VACUUM ti_k holds one entry per live row of ti');
is(merges_done($sess, 't_k') . merges_done($sess, 't_kv') . merges_done($sess, 'ti_k'), 'ttt',
	'flushes and compactions complete');
check_pages('at the end');

# replay with wal_consistency_checking found no inconsistent page
my $log = slurp_file($node->logfile);
unlike($log, qr/inconsistent page found/, 'WAL consistency checks passed during recovery');
unlike($log, qr/PANIC|TRAP/, 'no PANIC or assertion failure');

$node->stop;
done_testing();
