# 025_resources.pl — resources that run out (issue 16, item 4): more lsm
# indexes held at once than lsm_am.max_indexes, and a full disk under the
# index.  In each case nothing committed is lost, the failure is a clear
# ERROR (never a PANIC), and the index works again once the resource is back.
# (The shared-memory arena as a write buffer: 022_memory_pressure; no room
# for background workers in max_worker_processes: 008_merge.)
#
# Part 1: lsm_am.max_indexes = 2, a transaction keeps cursors open on two lsm
# indexes (their memtable slots are pinned): an insert into a third index
# waits for a slot (wait event Extension) instead of failing, and goes on
# when the cursors close; a statement_timeout ends such a wait cleanly.
#
# Part 2 (needs LSM_SMALL_FS, a small file system tests/run_all.sh mounts as
# a tmpfs when it runs as root): the index lives in a tablespace there, a
# ballast file fills the rest.  Inserts, lsm_am.flush() and lsm_am.compact()
# then fail with "No space left on device" or succeed in the file's free
# pages; an immediate stop while full, the ballast removed, and the server
# recovers; afterwards every committed row is found through index, bitmap
# and index-only scans, check_index and verify find the index sound, and it
# takes inserts, flushes and compactions again.
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use LsmPlan;
use LsmCluster;
use LsmSession;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);

my $node = PostgreSQL::Test::Cluster->new('res');
$node->init(extra => [ initdb_args() ]);
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'lsm_am'
lsm_am.max_indexes = 2
autovacuum = off
});
$node->start;

# one connection for the many small queries (tests/t/LsmSession.pm)
my $sess = LsmSession->new($node);
sub sql { return $sess->safe_psql('postgres', $_[0]); }

# the index answers like the heap: index, bitmap and index-only scans
sub agree
{
	my ($what, $tbl, $idx) = @_;
	my $q = "SELECT count(*), coalesce(sum(k), 0) FROM $tbl WHERE k >= 0";
	my $want = sql("SET enable_indexscan = off; SET enable_bitmapscan = off; SET enable_indexonlyscan = off; $q");
	for my $scan (['SET enable_seqscan = off; SET enable_bitmapscan = off; SET enable_indexonlyscan = off;', qr/Index Scan using $idx/, 'index scan'],
		['SET enable_seqscan = off; SET enable_indexscan = off; SET enable_indexonlyscan = off;', qr/Bitmap Index Scan on $idx/, 'bitmap scan'],
		['SET enable_seqscan = off; SET enable_bitmapscan = off;', qr/Index Only Scan using $idx/, 'index-only scan'])
	{
		my $got = query_planned($sess, 'postgres', $scan->[0], $q, $scan->[1], "$what: $scan->[2] on $idx");
		is($got, $want, "$what: $scan->[2] on $idx finds every row of $tbl");
	}
	is(sql("SELECT leaked_pages || '|' || dropped_pages FROM lsm_am.check_index('$idx')"), '0|0',
		"$what: check_index($idx): no leaked or dropped page");
	my ($ret, $out, $err) = $node->psql('postgres', "SELECT lsm_am.verify('$idx', true)");
	is("$ret$out$err", '0', "$what: verify($idx, true) finds $idx sound and complete");
	return $want;
}

sql(q{
CREATE EXTENSION lsm_am;
CREATE TABLE a (k bigint); CREATE INDEX a_k ON a USING lsm (k);
CREATE TABLE b (k bigint); CREATE INDEX b_k ON b USING lsm (k);
CREATE TABLE c (k bigint); CREATE INDEX c_k ON c USING lsm (k);
INSERT INTO a SELECT g FROM generate_series(1, 1000) g;
INSERT INTO b SELECT g FROM generate_series(1, 1000) g;
INSERT INTO c SELECT g FROM generate_series(1, 1000) g;
});

# ------------------------------------------------ part 1: memtable slots
# Open cursors on a_k and b_k: both of the two slots are held by scans.
sub hold_two_slots
{
	my $h = $node->background_psql('postgres');
	$h->query_safe('SET enable_seqscan = off; SET enable_bitmapscan = off; SET enable_sort = off;');
	for my $t ('a', 'b')
	{
		like($h->query_safe("EXPLAIN (COSTS OFF) SELECT k FROM $t ORDER BY k"),
			qr/Index (Only )?Scan using ${t}_k/, "the cursor on $t scans ${t}_k");
	}
	$h->query_safe('BEGIN');
	$h->query_safe('DECLARE ca CURSOR FOR SELECT k FROM a ORDER BY k');
	is($h->query_safe('FETCH 1 FROM ca'), '1', 'the cursor on a_k is open at its first row');
	$h->query_safe('DECLARE cb CURSOR FOR SELECT k FROM b ORDER BY k');
	is($h->query_safe('FETCH 1 FROM cb'), '1', 'the cursor on b_k is open at its first row');
	return $h;
}

# the pid of a background session
sub pid_of { return $_[0]->query_safe('SELECT pg_backend_pid()'); }

my $holder = hold_two_slots();
my $writer = $node->background_psql('postgres');
my $wpid = pid_of($writer);
$writer->query_until(qr/go/, "\\echo go\nINSERT INTO c SELECT g FROM generate_series(1001, 2000) g;\n\\echo inserted\n");
my $wrow = "SELECT pid, state, wait_event_type, wait_event, left(query, 60) FROM pg_stat_activity WHERE pid = $wpid";
ok(wait_until($node, "SELECT state = 'active' AND wait_event_type = 'Extension' FROM pg_stat_activity WHERE pid = $wpid",
		"the insert ($wpid) waiting for a memtable slot", $wrow),
	'an insert into a third lsm index waits for a memtable slot (wait event Extension)');
is(sql("SELECT count(*) FROM c"), '1000', 'while it waits its rows are not there');
$holder->query_safe('COMMIT');
ok(wait_until($node, "SELECT state = 'idle' FROM pg_stat_activity WHERE pid = $wpid",
		"the insert ($wpid) going on after the cursors closed", $wrow),
	'the cursors closed: the insert went on');
like($writer->query_safe('SELECT 1'), qr/1/, 'the waiting session is fine');
agree('after waiting for a slot', 'c', 'c_k');
is(sql('SELECT count(*) FROM c'), '2000', 'the waiting insert committed its 1000 rows');

# a wait for a slot ends at statement_timeout (and the insert rolls back)
$holder->query_safe('BEGIN');
$holder->query_safe('DECLARE ca CURSOR FOR SELECT k FROM a ORDER BY k');
$holder->query_safe('FETCH 1 FROM ca');
$holder->query_safe('DECLARE cb CURSOR FOR SELECT k FROM b ORDER BY k');
$holder->query_safe('FETCH 1 FROM cb');
my ($ret, $out, $err) = $node->psql('postgres',
	"SET statement_timeout = '2s'; INSERT INTO c SELECT g FROM generate_series(2001, 3000) g");
like($err, qr/canceling statement due to statement timeout/,
	'a wait for a slot ends at statement_timeout');
$holder->query_safe('COMMIT');
$holder->quit;
$writer->quit;
agree('after a cancelled wait for a slot', 'c', 'c_k');
is(sql('SELECT count(*) FROM c'), '2000', 'the cancelled insert left nothing behind');
# all three indexes still work with two slots
sql('INSERT INTO a SELECT g FROM generate_series(1001, 3000) g; INSERT INTO b SELECT g FROM generate_series(1001, 3000) g;');
agree('three indexes, two slots', $_, "${_}_k") for ('a', 'b', 'c');
unlike(slurp_file($node->logfile), qr/PANIC|TRAP|terminated by signal/, 'part 1: no crash');

# ------------------------------------------------ part 2: disk full

# A statement on the full disk ends, with an ERROR or done, within seconds.
# One that has not ended after FULL_DISK_WAIT seconds is a failure: report
# what every backend is waiting for, then stop here (later steps would wait
# behind it) instead of leaving the harness to kill the test at its timeout
# with nothing to show (a CI run of 2026-12-07 on 18 hung in this loop).
use constant FULL_DISK_WAIT => 180;
sub on_full_disk
{
	my ($stmt) = @_;
	my $timed_out = 0;
	my ($r, $o, $e) = $node->psql('postgres',
		'SET statement_timeout = \'' . FULL_DISK_WAIT . "s'; $stmt",
		timeout => FULL_DISK_WAIT + 30, timed_out => \$timed_out);
	return ($r, $o, $e) unless $timed_out || ($e // '') =~ /statement timeout/;
	fail("on a full disk, '$stmt' ended within " . FULL_DISK_WAIT . ' s');
	for my $q (
		"SELECT pid, backend_type, state, wait_event_type, wait_event, now() - query_start, left(query, 70) FROM pg_stat_activity ORDER BY pid",
		"SELECT locktype, relation::regclass, page, mode, granted, pid FROM pg_locks WHERE NOT granted OR locktype IN ('page', 'extend')",
		"SELECT * FROM lsm_am.maintenance_stats('t_k')")
	{
		my ($qr, $qo, $qe) = $node->psql('postgres', $q, timeout => 30,
			extra_params => [ '-x' ]);
		diag("$q:\n$qo$qe");
	}
	$node->stop('immediate');
	BAIL_OUT("a statement on a full disk did not end: $stmt");
}
SKIP:
{
	my $fs = $ENV{LSM_SMALL_FS};
	skip 'no small file system (LSM_SMALL_FS: tests/run_all.sh mounts a tmpfs when run as root)', 1
	  unless $fs && -d $fs && -w $fs;
	my $ts = "$fs/ts";
	mkdir $ts or die "$ts: $!";
	sql(qq{
CREATE TABLESPACE small LOCATION '$ts';
CREATE TABLE t (k bigint);
CREATE INDEX t_k ON t USING lsm (k) WITH (memtable_size = 256) TABLESPACE small;
INSERT INTO t SELECT (random() * 1e12)::int8 FROM generate_series(1, 20000);
SELECT lsm_am.flush('t_k');
});
	# fill the file system with a ballast file, 64 kB at a time
	my $ballast = "$fs/ballast";
	open(my $bf, '>', $ballast) or die "$ballast: $!";
	my $chunk = 'x' x 65536;
	my $written = 0;
	while (1)
	{
		my $n = syswrite($bf, $chunk);
		last if !defined $n || $n < length $chunk;
		$written += $n;
	}
	close $bf;
	note "ballast: $written bytes";
	my $logpos = -s $node->logfile;
	my ($ok, $full) = (0, 0);
	for my $i (1 .. 8)
	{
		my ($r, $o, $e) = on_full_disk(
			'INSERT INTO t SELECT (random() * 1e12)::int8 FROM generate_series(1, 20000)');
		if ($r == 0) { $ok++ }
		elsif ($e =~ /could not extend file .*No space left on device.*HINT:  Check free disk space/s) { $full++ }
		else { fail("an insert on a full disk: unexpected error: $e") }
	}
	note "inserts on a full disk: $ok committed, $full failed";
	cmp_ok($full, '>=', 1, "inserts on a full disk fail with 'No space left on device' ($full of 8)");
	for my $f ("lsm_am.flush('t_k')", "lsm_am.compact('t_k')")
	{
		my ($r, $o, $e) = on_full_disk("SELECT $f");
		ok($r == 0 || $e =~ /No space left on device/, "$f on a full disk: done or 'No space left on device'")
		  or diag($e);
	}
	unlike(slurp_file($node->logfile, $logpos), qr/PANIC|TRAP|terminated by signal/,
		'a full disk: no crash');
	my $committed = agree('disk full', 't', 't_k');

	# an immediate stop while full; space back; the server recovers
	$node->stop('immediate');
	unlink $ballast or die "$ballast: $!";
	$node->start;
	is(agree('disk full, crash, space back', 't', 't_k'), $committed,
		'after the crash every committed row is there');

	# the index works again: inserts, a flush, the workers' merges, compact()
	sql('INSERT INTO t SELECT (random() * 1e12)::int8 FROM generate_series(1, 60000)');
	is(sql("SELECT lsm_am.flush('t_k')"), '', 'space back: flush() works');
	is(merges_done($sess, 't_k', '2 minutes'), 't', 'space back: the workers merge');
	($ret, $out, $err) = $node->psql('postgres', "SELECT lsm_am.compact('t_k')");
	is($ret, 0, 'space back: compact() works') or diag($err);
	agree('space back', 't', 't_k');
	is(sql('SELECT count(*) FROM lsm_am.index_info(\'t_k\')'), '1', 'compact() left one run');
	sql('DROP TABLE t; DROP TABLESPACE small');
}

$node->stop;
done_testing();
