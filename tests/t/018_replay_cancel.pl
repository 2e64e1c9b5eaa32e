# Log replay never holds an LWLock and can always be cancelled (issue 13,
# item 4).  After a restart an lsm index's memtable is rebuilt from its log
# pages; the backend that does it replays into private memtables without the
# slot lock (src/storage/lsmload.c), others wait for it on a condition
# variable.  lsm_am.replay_delay_ms (a test hook) slows every replayed page
# so that the load is long enough to be caught in the middle.  Checked:
#  (a) statement_timeout cancels a query whose first use of the index is a
#      load, with the ordinary message, and the server stays up;
#  (b) while a load runs, another session waits on the lsm wait event (not on
#      an LWLock), and both the waiter and the loader can be cancelled;
#  (e) a loader terminated (FATAL) mid-load leaves the slot loadable;
#  (c) then index, bitmap and index-only scans return every row exactly once,
#      as a btree on the same column does, and check_index finds no leak;
#  (d) no cancelled or terminated load leaked arena memory: the arena
#      (lsm_am.memory) is sized to hold the memtable and 1 to 2 MB more, so
#      the full load after five stopped ones (each a second or more into a
#      load of some 5 s: a fifth or more of the memtable, which takes some
#      10 MB) succeeds only if they gave their chunks back (with the frees
#      taken out, it fails with "out of lsm_am shared memory"); the
#      memtable then takes what it took before;
#  and on a standby, a query's load is cancelled by statement_timeout too,
#  then completes and agrees with the primary; a promotion in the middle of
#  a standby's load leaves a slot the promoted server inserts into.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);
use POSIX qw(ceil);
use FindBin;
use lib $FindBin::RealBin;
use LsmPlan;
use LsmCluster;

my $ROWS = 200000;
my $DELAY_MS = 10;				# per replayed log page
# (b) and (e) cancel or end a load from outside after several round trips
# of the test (each a new connection: a second or more on a loaded machine),
# so their loads are slower: at 10 ms a load of some 450 pages took 5 s, and
# in rounds of the whole suite on 15 and on 18 run at once (load average 9
# to 13) it ended before the cancel came (the loader's statement then
# succeeded).  At 100 ms it takes some 45 s; both are stopped long before
# that, so it costs no time.  Both A and B load at that pace: either may be
# the loader.
my $SLOW_MS = 100;

my $node = PostgreSQL::Test::Cluster->new('replay_cancel');
$node->init(allows_streaming => 1, extra => [ initdb_args() ]);
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'lsm_am'
lsm_am.max_workers = 0
autovacuum = off
});
$node->start;

sub sql { return $node->safe_psql('postgres', $_[0]); }

# One memtable big enough for every row: the whole index is one log chain.
sql(qq{
CREATE EXTENSION lsm_am;
CREATE TABLE t (k int8, v int);
CREATE INDEX t_k ON t USING lsm (k) WITH (memtable_size = 65536);
CREATE INDEX t_b ON t USING btree (k);
SELECT setseed(0.18);
INSERT INTO t SELECT (random() * 1e12)::int8, g FROM generate_series(1, $ROWS) g;
INSERT INTO t SELECT k, v + $ROWS FROM t WHERE v % 1000 = 0;	-- duplicate keys
VACUUM t;
});
my $nrows = sql('SELECT count(*) FROM t');
my ($runs, $log_pages) = split /\|/, sql("SELECT runs, log_pages FROM lsm_am.index_stats('t_k')");
is($runs, '0', 'every entry is in the memtable');
cmp_ok($log_pages, '>', 300, "the log holds $log_pages pages");

# The scan every load below starts with (index scan on t_k).
my $idx = 'SET enable_seqscan = off; SET enable_bitmapscan = off;';
my $q = 'SELECT count(*) FROM t WHERE k >= 0';
plan_like($node, 'postgres', $idx, $q, qr/Index (Only )?Scan using t_k/, 'the loading query');

# A load without the hook: what the full memtable takes.
$node->stop('immediate');
$node->start;
is(sql("$idx $q"), $nrows, 'a load after a crash finds every row');
my ($mt_entries, $mt_bytes) = split /\|/,
  sql("SELECT memtable_entries, memtable_bytes FROM lsm_am.index_stats('t_k')");
note "memtable: $mt_entries entries, $mt_bytes bytes of arena, $log_pages log pages";

# A tight arena: the memtable and 1 to 2 MB more.
my $arena_mb = ceil($mt_bytes / (1024 * 1024)) + 1;
$node->append_conf('postgresql.conf', "lsm_am.memory = ${arena_mb}MB\n");
$node->stop('immediate');
$node->start;
my $started = sql('SELECT pg_postmaster_start_time()');

# Wait until a query matches; fails the test after 180 s, with what it saw
# and the sessions.
sub poll_until
{
	my ($query, $name) = @_;
	return 1 if wait_until($node, $query, $name,
		q{SELECT pid, state, wait_event_type, wait_event, left(query, 60) FROM pg_stat_activity
			WHERE backend_type = 'client backend'});
	fail("timed out waiting: $name");
	return 0;
}

my $a = $node->background_psql('postgres', on_error_stop => 0);
$a->set_query_timer_restart();
my $a_pid = $a->query_safe('SELECT pg_backend_pid()');
$a->query_safe("SET lsm_am.replay_delay_ms = $DELAY_MS; $idx");

# (a) statement_timeout, three times: each stops a load about 1 s (some 100
# pages, a quarter of the memtable) in.
for my $i (1 .. 3)
{
	$a->{stderr} = '';
	$a->query("SET statement_timeout = '1s'; $q");
	like($a->{stderr}, qr/canceling statement due to statement timeout/,
		"(a) load $i: cancelled by statement_timeout");
	$a->{stderr} = '';
	$a->query_safe('RESET statement_timeout');
}
is(sql('SELECT pg_postmaster_start_time()'), $started, '(a) the server kept running');

$a->query_safe("SET lsm_am.replay_delay_ms = $SLOW_MS");

# (b) A loads; B, started 300 ms later, waits for it (whichever of the two
# began the load, the other must wait); the waiter, then the loader, are
# cancelled.
$a->{stderr} = '';
$a->query_until(qr/loading/, "\\echo loading\n$q;\n");
poll_until("SELECT count(*) = 1 FROM pg_stat_activity WHERE pid = $a_pid AND state = 'active'",
	'A runs its query');
usleep(300_000);
my $b = $node->background_psql('postgres', on_error_stop => 0);
$b->set_query_timer_restart();
my $b_pid = $b->query_safe('SELECT pg_backend_pid()');
# B loads as slowly as A: under load B may begin the load before A does (A
# is active but not yet at the index), and a fast load by B ended before
# the test could look at it (three rounds of the suite at load average 13).
$b->query_safe("SET lsm_am.replay_delay_ms = $SLOW_MS");
$b->query_until(qr/waiting/, "\\echo waiting\n$idx $q;\n");
my $lsm_wait = "wait_event_type = 'Extension' AND wait_event IN ('Extension', 'LsmSlotLoad')";
poll_until(qq{SELECT count(*) = 1 FROM pg_stat_activity
	WHERE pid IN ($a_pid, $b_pid) AND $lsm_wait}, 'one session waits on the lsm wait event');
my $waiter_pid = sql("SELECT pid FROM pg_stat_activity WHERE pid IN ($a_pid, $b_pid) AND $lsm_wait");
my ($waiter, $loader, $loader_pid) = $waiter_pid == $b_pid ? ($b, $a, $a_pid) : ($a, $b, $b_pid);
note '(b) the loader is ' . ($loader_pid == $a_pid ? 'A' : 'B');
my $waits = sql(qq{SELECT string_agg(pid || ':' || coalesce(wait_event_type, '-') || '/'
	|| coalesce(wait_event, '-'), ' ' ORDER BY pid)
	FROM pg_stat_activity WHERE pid IN ($a_pid, $b_pid)});
note "(b) waits: $waits";
is(sql("SELECT state FROM pg_stat_activity WHERE pid = $loader_pid"), 'active',
	'(b) the other session is loading');
is(sql(qq{SELECT count(*) FROM pg_stat_activity
	WHERE pid IN ($a_pid, $b_pid) AND wait_event_type = 'LWLock'}), '0',
	'(b) neither the loader nor the waiter waits on an LWLock');
$waiter->{stderr} = '';
ok(sql("SELECT pg_cancel_backend($waiter_pid)"), '(b) cancel the waiter');
$waiter->query('SELECT 1');
like($waiter->{stderr}, qr/canceling statement due to user request/, '(b) the waiter was cancelled');
is(sql("SELECT state FROM pg_stat_activity WHERE pid = $loader_pid"), 'active',
	'(b) the loader goes on');
$loader->{stderr} = '';
ok(sql("SELECT pg_cancel_backend($loader_pid)"), '(b) cancel the loader');
$loader->query('SELECT 1');
like($loader->{stderr}, qr/canceling statement due to user request/, '(b) the loader was cancelled');
$b->quit;

# (e) FATAL in the middle of a load: the next session loads the slot.
$a->{stderr} = '';
$a->query_until(qr/loading/, "\\echo loading\n$q;\n");
poll_until("SELECT count(*) = 1 FROM pg_stat_activity WHERE pid = $a_pid AND state = 'active'",
	'A runs its query again');
usleep(1_000_000);
is(sql("SELECT state FROM pg_stat_activity WHERE pid = $a_pid"), 'active', '(e) A is loading');
ok(sql("SELECT pg_terminate_backend($a_pid, 60000)"), '(e) the loader is terminated');
eval { $a->quit; };		# its connection is gone
is(sql('SELECT pg_postmaster_start_time()'), $started, '(e) the server kept running');
is(sql("$idx $q"), sql("SET enable_seqscan = on; SET enable_indexscan = off; SET enable_bitmapscan = off; $q"),
	'(e) the next session loads the slot and finds every row');

# (d) that load fit the tight arena, and took what it took before
my ($entries2, $bytes2) = split /\|/,
  sql("SELECT memtable_entries, memtable_bytes FROM lsm_am.index_stats('t_k')");
is($entries2, $mt_entries, '(d) the memtable holds every entry once');
is($bytes2, $mt_bytes, '(d) and the arena memory it held before the cancelled loads');

# (c) every row exactly once, by each scan, as the btree has them
# (the btree's answer with t_k dropped in a transaction that rolls back)
my $btree = 'BEGIN; DROP INDEX t_k; SET enable_seqscan = off; SET enable_bitmapscan = off; SET enable_sort = off;';
my $agg = "count(*), sum(k), md5(string_agg(k::text, ',' ORDER BY k))";
my $want = query_planned($node, 'postgres', $btree,
	"SELECT $agg FROM (SELECT k FROM t WHERE k >= 0 ORDER BY k) s; ROLLBACK",
	qr/Index Only Scan using t_b|Index Scan using t_b/, '(c) btree');
sql('DROP INDEX t_b');
my %scan = (
	'index scan' => ['SET enable_seqscan = off; SET enable_bitmapscan = off; SET enable_indexonlyscan = off; SET enable_sort = off;',
		"SELECT $agg FROM (SELECT k FROM t WHERE k >= 0 ORDER BY k) s", qr/Index Scan using t_k/],
	'index-only scan' => ['SET enable_seqscan = off; SET enable_bitmapscan = off; SET enable_sort = off;',
		"SELECT $agg FROM (SELECT k FROM t WHERE k >= 0 ORDER BY k) s", qr/Index Only Scan using t_k/],
	'bitmap scan' => ['SET enable_seqscan = off; SET enable_indexscan = off;',
		"SELECT $agg FROM t WHERE k >= 0", qr/Bitmap Index Scan on t_k/]);
for my $name (sort keys %scan)
{
	my ($set, $query, $re) = @{ $scan{$name} };
	is(query_planned($node, 'postgres', $set, $query, $re, "(c) $name"), $want,
		"(c) $name finds every row once, as the btree");
}
is(sql("SELECT leaked_pages FROM lsm_am.check_index('t_k')"), '0', '(c) check_index: no leaked page');
is(sql("SELECT lsm_am.verify('t_k', true)"), '', '(c) verify(t_k, true): sound and complete');

# A standby: its first query loads the slot; statement_timeout stops it there
# too, and the load completes afterwards with the primary's rows.
# the default arena again, so that the inserts below stay in the memtable
# (under the tight one they flush it) and the standby's loads are long
$node->append_conf('postgresql.conf', "lsm_am.memory = 64MB\n");
$node->restart;
$node->backup('b');
my $standby = PostgreSQL::Test::Cluster->new('replay_cancel_standby');
$standby->init_from_backup($node, 'b', has_streaming => 1);
$standby->start;
sql('INSERT INTO t SELECT k + 1, v FROM t WHERE v % 7 = 0');
wait_catchup($node, $standby);
my ($ret, $out, $err) = $standby->psql('postgres',
	"SET lsm_am.replay_delay_ms = $DELAY_MS; SET statement_timeout = '1s'; $idx $q");
like($err, qr/canceling statement due to statement timeout/, 'standby: a load is cancelled by statement_timeout');
my $primary_count = sql("SET enable_indexscan = off; SET enable_bitmapscan = off; $q");
plan_like($standby, 'postgres', $idx, $q, qr/Index (Only )?Scan using t_k/, 'standby: the query');
is($standby->safe_psql('postgres', "$idx $q"), $primary_count, 'standby: the load completes, every row');
sql('INSERT INTO t SELECT k + 2, v FROM t WHERE v % 11 = 0');
wait_catchup($node, $standby);
is($standby->safe_psql('postgres', "$idx $q"), sql("SET enable_indexscan = off; SET enable_bitmapscan = off; $q"),
	'standby: and catches up with new log pages');

# A promotion in the middle of a standby's load: the load completes with
# every row, and the promoted server appends where the log ends.
my $standby_count = $standby->safe_psql('postgres', "SET enable_indexscan = off; SET enable_bitmapscan = off; $q");
$standby->stop('immediate');
$standby->start;
my $s = $standby->background_psql('postgres', on_error_stop => 0);
$s->set_query_timer_restart();
my $s_pid = $s->query_safe('SELECT pg_backend_pid()');
$s->query_safe('SET lsm_am.replay_delay_ms = ' . (2 * $DELAY_MS) . "; $idx");
$s->query_until(qr/loading/, "\\echo loading\n$q;\n");
usleep(500_000);
$standby->promote;
is($standby->safe_psql('postgres', "SELECT state FROM pg_stat_activity WHERE pid = $s_pid"), 'active',
	'promotion: the standby load was still running when the promotion ended');
my @lines = split /\n/, $s->query("SELECT 'after'");
is($lines[0], $standby_count, 'promotion: the load completes with every row');
cmp_ok($standby->safe_psql('postgres', "SELECT log_pages FROM lsm_am.index_stats('t_k')"), '>', 300,
	'promotion: the load replayed a long log chain');
$s->quit;
$standby->safe_psql('postgres', 'INSERT INTO t SELECT k + 3, v FROM t WHERE v % 13 = 0');
is($standby->safe_psql('postgres', "$idx $q"),
	$standby->safe_psql('postgres', "SET enable_indexscan = off; SET enable_bitmapscan = off; $q"),
	'promotion: the promoted server inserts and finds every row');
is($standby->safe_psql('postgres', "SELECT leaked_pages FROM lsm_am.check_index('t_k')"), '0',
	'promotion: check_index: no leaked page');
is($standby->safe_psql('postgres', "SELECT lsm_am.verify('t_k', true)"), '',
	'promotion: verify(t_k, true): sound and complete');
$standby->stop;

$node->stop;
done_testing();
