# C++ memory has an owner (issue 13, item 5): the core objects behind a run
# writer (run builder and the bloom filter it owns) and a merge belong to a
# PostgreSQL memory context (src/lsmowner.c), so an ERROR in the middle of
# writing a run frees them with that context.  Checked by the backend's
# anonymous resident memory (RssAnon in /proc/PID/status, where the core's
# heap is) staying flat while one session repeats:
#   1. CREATE INDEX on 1M rows with 32-bit-per-key filters (a 4 MB filter
#      per build) cancelled (pg_cancel_backend) in its "writing run" phase;
#   2. lsm_am.compact() of four runs cancelled by statement_timeout while it
#      writes (lsm_am.flush_delay_ms slows each page).
# A leak would grow the backend by about 4 MB per attempt, 32 MB over the
# measured eight; the test allows 8 MB.  Afterwards the index builds,
# compacts and answers like a seqscan, and check_index finds no leaked page.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use LsmCluster;

my $ROUNDS = 8;
my $WARMUP = 3;
my $SLACK_KB = 8 * 1024;

# A fixed mmap threshold: glibc then maps every allocation over 128 kB (a
# filter's bit array, tuplesort's blocks) on its own and unmaps it when
# freed, instead of raising the threshold and keeping freed blocks in the
# heap, so RssAnon follows what is live rather than the heap's high water.
$ENV{MALLOC_MMAP_THRESHOLD_} = 131072;

my $node = PostgreSQL::Test::Cluster->new('core_memory');
$node->init(extra => [ initdb_args() ]);
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'lsm_am'
lsm_am.max_workers = 0
autovacuum = off
max_wal_size = 4GB
});
$node->start;

sub sql { return $node->safe_psql('postgres', $_[0]); }

sql(q{
CREATE EXTENSION lsm_am;
CREATE TABLE t (k int8);
INSERT INTO t SELECT (random() * 1e15)::int8 FROM generate_series(1, 1000000);
CREATE TABLE c (k int8);
CREATE INDEX c_k ON c USING lsm (k) WITH (bloom_bits_per_key = 32);
});
# a million keys in several runs for the compactions (the backend merges
# level 0 inline without workers, into level-1 pieces: the count varies)
for my $i (0 .. 3)
{
	sql("INSERT INTO c SELECT (random() * 1e15)::int8 FROM generate_series(1, 250000)");
	sql("SELECT lsm_am.flush('c_k')");
}
my $c_runs = sql("SELECT count(*) FROM lsm_am.index_info('c_k')");
cmp_ok($c_runs, '>=', 4, "$c_runs runs to compact");

my $s = $node->background_psql('postgres', on_error_stop => 0);
$s->set_query_timer_restart();
my $pid = $s->query_safe('SELECT pg_backend_pid()');
$pid =~ s/\s+//g;

sub rss_kb
{
	open my $f, '<', "/proc/$pid/status" or die "cannot read /proc/$pid/status: $!";
	while (<$f>)
	{
		return $1 if /^RssAnon:\s+(\d+)\s+kB/;
	}
	die "no RssAnon in /proc/$pid/status";
}

# One CREATE INDEX, cancelled while it writes its run; true if it was.
sub cancelled_build
{
	$s->{stderr} = '';
	$s->query_until(qr/building/,
		"\\echo building\nCREATE INDEX t_k ON t USING lsm (k) WITH (bloom_bits_per_key = 32);\n");
	my $hit = sql(qq{
DO \$\$
BEGIN
  FOR i IN 1 .. 20000 LOOP
    PERFORM pg_stat_clear_snapshot();	-- else the first look is kept
    PERFORM pg_cancel_backend(pid) FROM pg_stat_progress_create_index
     WHERE pid = $pid AND phase = 'building index: writing run' AND tuples_done > 0;
    IF FOUND THEN
      RAISE NOTICE 'cancelled';
      RETURN;
    END IF;
    PERFORM pg_sleep(0.001);
  END LOOP;
END \$\$;
SELECT 'polled';
});
	# wait for the statement to end, then look at how
	$s->query('SELECT 1');
	my $err = $s->{stderr};
	$s->query('DROP INDEX IF EXISTS t_k');
	return $err =~ /canceling statement due to user request/;
}

# One compaction, cancelled by statement_timeout while it writes.
sub cancelled_compaction
{
	$s->{stderr} = '';
	$s->query("SET lsm_am.flush_delay_ms = 5; SET statement_timeout = '400ms'; SELECT lsm_am.compact('c_k')");
	my $err = $s->{stderr};
	$s->query('RESET statement_timeout; RESET lsm_am.flush_delay_ms');
	return $err =~ /canceling statement due to statement timeout/;
}

for my $case (['CREATE INDEX', \&cancelled_build], ['compaction', \&cancelled_compaction])
{
	my ($name, $attempt) = @$case;
	my ($ok, $tries) = (0, 0);
	my $before;
	while ($ok < $WARMUP + $ROUNDS && $tries < 3 * ($WARMUP + $ROUNDS))
	{
		$tries++;
		next unless $attempt->();
		$ok++;
		note "$name: RssAnon " . rss_kb() . " kB after $ok cancelled attempts";
		$before = rss_kb() if $ok == $WARMUP;
	}
	is($ok, $WARMUP + $ROUNDS, "$name: $ok attempts cancelled mid-write ($tries tries)");
	my $after = rss_kb();
	my $growth = $after - $before;
	note "$name: RssAnon $before kB after $WARMUP, $after kB after $ok cancelled attempts";
	cmp_ok($growth, '<', $SLACK_KB,
		"$name: $ROUNDS cancelled attempts grow the backend by $growth kB (< $SLACK_KB kB)");
}
$s->quit;

# the index is whole after all that
is(sql("SELECT count(*) FROM lsm_am.index_info('c_k')"), $c_runs, 'cancelled compactions left the runs');
sql("SELECT lsm_am.compact('c_k')");
is(sql("SELECT count(*) FROM lsm_am.index_info('c_k')"), '1', 'a compaction completes afterwards');
is(sql("SELECT leaked_pages FROM lsm_am.check_index('c_k')"), '0', 'no leaked pages after cancelled compactions');
sql("CREATE INDEX t_k ON t USING lsm (k) WITH (bloom_bits_per_key = 32)");
is(sql("SELECT leaked_pages FROM lsm_am.check_index('t_k')"), '0', 'no leaked pages after cancelled builds');
for my $tbl ('t', 'c')
{
	my $want = sql("SELECT count(*) || ':' || sum(k % 1000) FROM $tbl WHERE k % 7 = 3");
	my $got = sql(qq{
SET enable_seqscan = off; SET enable_bitmapscan = off;
SELECT count(*) || ':' || sum(k % 1000) FROM (SELECT k FROM $tbl ORDER BY k) s WHERE k % 7 = 3;
});
	is($got, $want, "$tbl: an index scan returns what a seqscan does");
	my $probe = sql("SELECT k FROM $tbl ORDER BY random() LIMIT 1");
	is(sql(qq{SET enable_seqscan = off; SET enable_bitmapscan = off;
		SELECT count(*) FROM $tbl WHERE k = $probe}), sql("SELECT count(*) FROM $tbl WHERE k = $probe"),
		"$tbl: a point lookup through the filter finds its row");
}

$node->stop;
done_testing();
