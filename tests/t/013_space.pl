# 013_space.pl — the index file is bounded by its live data (issue 12).
#
# Every figure is a ratio of pages, never a timing:
#  1. rounds of inserts + lsm_am.compact() (the issue's repro): after each,
#     the file is at most 1.3x its live pages (runs, log, metapage), and
#     after the last no larger than a fresh build of the same rows plus the
#     log;
#  2. a REPEATABLE READ transaction that read the index stays open during
#     compactions: its scans go on seeing every row, the file grows (its
#     retired runs may still be read), and once it ends the space is reused
#     and the file shrinks back; a snapshot that never read the index does
#     not hold the space;
#  3. VACUUM moves the runs down into free space and truncates the tail;
#  4. a crash in the middle of a truncation (after the metapage record,
#     before the file is cut) loses nothing and leaks nothing, and the next
#     VACUUM cuts the pages left beyond the accounted end.
#  5. with wal_consistency_checking on (steps 1-4 run without it, as users
#     do), a shrink keeps the pages written since the last checkpoint
#     (doc/impl.md, "The file shrinks") and cuts them after one; the file
#     grows back over cut pages and a crash then recovers under the checker.
# After each step lsm_am.check_index() must account for every page.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use LsmCluster;
use LsmSession;
use Time::HiRes qw(usleep);

my $node = PostgreSQL::Test::Cluster->new('space');
$node->init(extra => [ initdb_args() ]);
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'lsm_am'
autovacuum = off
});
$node->start;

# one connection for the many small queries (tests/t/LsmSession.pm)
my $sess = LsmSession->new($node);
sub sql { return $sess->safe_psql('postgres', $_[0]); }

my $F_INDEX = 'SET enable_seqscan = off; SET enable_bitmapscan = off; SET enable_indexonlyscan = off;';

# check_index: every page accounted for; returns (total, live) pages
sub pages
{
	my ($what, $idx, %opt) = @_;
	my ($total, $log, $run, $free, $resv, $unused, $leaked, $dropped) = split /\|/,
	  sql("SELECT total_pages, log_pages, run_pages, free_pages, reserved_pages,
	              unused_pages, leaked_pages, dropped_pages FROM lsm_am.check_index('$idx')");
	is("$leaked|$dropped", '0|0', "$what: check_index($idx) finds no leaked page");
	is($total, 1 + $log + $run + $free + $resv + $unused,
		"$what: every page of $idx is the metapage, log, run, free, reserved or unused");
	is($unused, 0, "$what: no page of $idx beyond its accounted end") unless $opt{unused_ok};
	my ($ret, $out, $err) = $node->psql('postgres', "SELECT lsm_am.verify('$idx', true)");
	is("$ret$out$err", '0', "$what: verify($idx, true) finds $idx sound and complete");
	return ($total, 1 + $log + $run, $unused);
}

# the index answers like the heap
sub agree
{
	my ($what, $table, $s) = @_;
	my $q = "SELECT count(*), coalesce(sum(k), 0) FROM $table WHERE k >= 0";
	my $heap = sql("SET enable_indexscan = off; SET enable_bitmapscan = off; $q");
	my $idx = $s ? $s->query_safe("$F_INDEX $q") : sql("$F_INDEX $q");
	chomp $idx;
	is($idx, $heap, "$what: the lsm index answers like the heap");
	return $heap;
}

sql('CREATE EXTENSION lsm_am');

# ------------------------------------------------------------ 1. the repro
sql(q{
CREATE TABLE gm (k bigint);
CREATE INDEX gm_k ON gm USING lsm (k) WITH (memtable_size = 64);
INSERT INTO gm SELECT g FROM generate_series(1, 100000) g;
});
sql("SELECT lsm_am.compact('gm_k')");
my ($total, $live);
for my $round (1 .. 10)
{
	sql('INSERT INTO gm SELECT g FROM generate_series(1, 20000) g');
	sql("SELECT lsm_am.compact('gm_k')");
	($total, $live) = pages("repro round $round", 'gm_k');
	ok($total <= 1.3 * $live, "repro round $round: $total file pages <= 1.3 x $live live pages");
}
agree('repro after ten rounds', 'gm');
sql('CREATE INDEX gm_fresh ON gm USING lsm (k) WITH (memtable_size = 64)');
my $fresh = sql("SELECT pg_relation_size('gm_fresh') / current_setting('block_size')::int");
my $log = sql("SELECT log_pages FROM lsm_am.check_index('gm_k')");
ok($total <= $fresh + $log,
	"repro: after the last compact() $total pages <= a fresh build ($fresh) + the log ($log)");
my ($amp) = sql("SELECT round(space_amplification::numeric, 2) FROM lsm_am.maintenance_stats('gm_k')");
ok($amp >= 1 && $amp <= 1.3, "maintenance_stats reports the space amplification ($amp)");
sql('DROP INDEX gm_fresh');

# ------------------------------------------------------------ 2. a long snapshot
my $reader = $node->background_psql('postgres');
$reader->query_safe('BEGIN ISOLATION LEVEL REPEATABLE READ');
my $before = agree('a REPEATABLE READ snapshot reads the index', 'gm', $reader);
my ($start_total) = pages('snapshot taken', 'gm_k');
for my $round (1 .. 4)
{
	sql('INSERT INTO gm SELECT g FROM generate_series(1, 20000) g');
	sql("SELECT lsm_am.compact('gm_k')");
	pages("compaction $round under the snapshot", 'gm_k', unused_ok => 1);
	my $seen = $reader->query_safe("$F_INDEX SELECT count(*), coalesce(sum(k), 0) FROM gm WHERE k >= 0");
	chomp $seen;
	is($seen, $before, "compaction $round under the snapshot: its scans still see exactly its rows");
}
($total, $live) = pages('four compactions under the snapshot', 'gm_k', unused_ok => 1);
ok($total > 1.5 * $live,
	"retired runs are kept while the snapshot may read them: $total file pages > 1.5 x $live live");
$reader->query_safe('COMMIT');
$reader->quit;
sql('INSERT INTO gm SELECT g FROM generate_series(1, 20000) g');
sql("SELECT lsm_am.compact('gm_k')");
($total, $live) = pages('after the snapshot ended', 'gm_k');
ok($total <= 1.3 * $live, "after the snapshot ended the space is reused: $total <= 1.3 x $live");
agree('after the snapshot ended', 'gm');

# a snapshot that never read the index holds nothing: LsmShrink gets its lock
sql('CREATE TABLE other (x int); INSERT INTO other VALUES (1)');
my $idle = $node->background_psql('postgres');
$idle->query_safe('BEGIN ISOLATION LEVEL REPEATABLE READ');
$idle->query_safe('SELECT * FROM other');
for my $round (1 .. 2)
{
	sql('INSERT INTO gm SELECT g FROM generate_series(1, 20000) g');
	sql("SELECT lsm_am.compact('gm_k')");
	($total, $live) = pages("compaction $round beside an unrelated snapshot", 'gm_k');
	ok($total <= 1.3 * $live,
		"compaction $round beside a snapshot that never read the index: $total <= 1.3 x $live");
}
$idle->query_safe('COMMIT');
$idle->quit;

# ------------------------------------------------------------ 3. VACUUM
# compactions under a reading transaction leave the new run above free space
$reader = $node->background_psql('postgres');
$reader->query_safe('BEGIN');
agree('a transaction reads the index', 'gm', $reader);
for my $round (1 .. 2)
{
	sql('INSERT INTO gm SELECT g FROM generate_series(1, 20000) g');
	sql("SELECT lsm_am.compact('gm_k')");
}
my ($grown) = pages('compactions under a reader', 'gm_k', unused_ok => 1);
$reader->query_safe('COMMIT');
$reader->quit;
sql('VACUUM gm');
($total, $live) = pages('VACUUM after the reader ended', 'gm_k');
ok($total < $grown && $total <= 1.3 * $live,
	"VACUUM moved the run down and truncated: $grown -> $total pages, live $live");
agree('after VACUUM', 'gm');

# ------------------------------------------------------------ 4. crash mid-truncation
# a free tail left by compactions under a reader; then a VACUUM that
# sleeps (lsm_am.flush_delay_ms) between the metapage record and the
# truncation is killed there.
$reader = $node->background_psql('postgres');
$reader->query_safe('BEGIN');
agree('a transaction reads the index', 'gm', $reader);
sql('INSERT INTO gm SELECT g FROM generate_series(1, 20000) g');
sql("SELECT lsm_am.compact('gm_k')");
sql('DELETE FROM gm WHERE k > 15000');
# VACUUM removes the entries (it cannot shrink while the reader is there).
# A worker's transaction may keep the deleted rows from being removable for
# a moment: again until they are gone, or the slow VACUUM below would
# remove them itself, at lsm_am.flush_delay_ms per page
my $removed = "SELECT (SELECT sum(entries) FROM lsm_am.index_info('gm_k')) || ' entries, ' || (SELECT count(*) FROM gm) || ' rows'";
my $seen;
for (1 .. 20)
{
	sql("SELECT lsm_am.wait_for_merges('gm_k')");
	sql('VACUUM gm');
	$seen = sql($removed);
	last if $seen =~ /^(\d+) entries, \1 rows$/;
	usleep(500_000);
}
diag("VACUUM did not remove the deleted entries after 20 tries (the slow VACUUM below will); last seen: $seen\n"
	  . show($sess, $WORKERS)) if $seen !~ /^(\d+) entries, \1 rows$/;
# No workers from here: an idle worker shrinks the index too (every second,
# when the lock is free), and on a loaded machine it did so between the
# reader's end and the VACUUM below, which then had nothing to cut and never
# held the lock this part waits for.
sql('ALTER SYSTEM SET lsm_am.max_workers = 0');
$node->reload;
wait_until($sess, "SELECT count(*) = 0 FROM pg_stat_activity WHERE backend_type = 'lsm_am worker'",
	'the workers exiting (max_workers = 0)', $WORKERS)
  or die 'the lsm_am workers did not exit after lsm_am.max_workers = 0';
$reader->query_safe('COMMIT');
$reader->quit;
my $committed = agree('before the crash', 'gm');
pages('before the crash', 'gm_k', unused_ok => 1);
my $vac = $node->background_psql('postgres', on_error_stop => 0);
$vac->query_safe('SET lsm_am.flush_delay_ms = 10000');
$vac->query_until(qr/go/, "\\echo go\nVACUUM gm;\n");
# The AccessExclusiveLock is held only by LsmShrink: a moment in the first
# one (it releases the retired runs), then, after the run is copied down,
# for the whole sleep of the second one (the test hook sleeps when the
# metapage record gave pages back), before the file is cut.
my $ael = qq{SELECT count(*) > 0 FROM pg_locks
 WHERE relation = 'gm_k'::regclass AND mode = 'AccessExclusiveLock' AND granted};
sub vacuum_at_truncation
{
	return 1 if $node->poll_query_until('postgres', $ael);
	diag('VACUUM never held the lock of the truncation; the index: '
		  . sql("SELECT file_pages, space_amplification, pending FROM lsm_am.maintenance_stats('gm_k')")
		  . '; sessions: '
		  . sql(q{SELECT string_agg(backend_type || ' ' || state || ' ' || coalesce(wait_event, '-') || ' ' || left(query, 40), '; ')
			FROM pg_stat_activity WHERE pid <> pg_backend_pid()}));
	die 'VACUUM never reached the truncation';
}
vacuum_at_truncation();
usleep(1_000_000);
vacuum_at_truncation();
$node->stop('immediate');
eval { $vac->quit };
$node->start;
is(agree('after a crash mid-truncation', 'gm'), $committed, 'a crash mid-truncation lost nothing');
my (undef, undef, $unused) = pages('after a crash mid-truncation', 'gm_k', unused_ok => 1);
cmp_ok($unused, '>', 0, "the crash came between the metapage record and the truncation ($unused pages beyond the accounted end)");
sql('VACUUM gm');
($total, $live) = pages('VACUUM after the crash', 'gm_k');
ok($total <= 1.3 * $live, "VACUUM after the crash truncated the rest: $total <= 1.3 x $live");
agree('VACUUM after the crash', 'gm');

sql('ALTER SYSTEM RESET lsm_am.max_workers');
$node->reload;

# ------------------------------------------------------------ 5. the checker
sql("ALTER SYSTEM SET wal_consistency_checking = 'generic'");
$node->reload;
sql('CHECKPOINT');
sql('INSERT INTO gm SELECT g FROM generate_series(1, 40000) g');
sql("SELECT lsm_am.compact('gm_k')");
(undef, undef, $unused) = pages('checker on: compact() after new writes', 'gm_k', unused_ok => 1);
note("checker on: $unused pages written since the checkpoint kept beyond the accounted end");
sql('CHECKPOINT');
sql('VACUUM gm');
($total, $live) = pages('checker on: VACUUM after a checkpoint', 'gm_k');
ok($total <= 1.3 * $live, "checker on: VACUUM after a checkpoint cut the tail: $total <= 1.3 x $live");
# the file grows back over the pages just cut, and the server crashes before
# they are written out: redo replays records of their former life
sql('INSERT INTO gm SELECT g FROM generate_series(1, 60000) g');
sql("SELECT lsm_am.compact('gm_k')");
$committed = agree('checker on: before the crash', 'gm');
$node->stop('immediate');
$node->start;
is(agree('checker on: after the crash', 'gm'), $committed,
	'checker on: a crash after the file grew over cut pages lost nothing');
pages('checker on: after the crash', 'gm_k', unused_ok => 1);
ok(!$node->log_contains(qr/inconsistent page|invalid page pd_lower/),
	'checker on: recovery met no page it could not check');

ok(!$node->log_contains(qr/PANIC|TRAP:|server process .* was terminated by signal/),
	'no crash in the server log (other than the deliberate immediate stop)');
$node->stop;
done_testing();
