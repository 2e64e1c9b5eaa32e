# 014_space_standby.pl — truncation of an lsm index with a streaming standby
# following and reading (issue 12).
#
# The primary compacts (lsm_am.compact) and VACUUMs, which release retired
# runs and truncate the free tail under an AccessExclusiveLock that is
# WAL-logged: the standby replays the lock, the metapage record and
# XLOG_SMGR_TRUNCATE.  After every step the standby's file is no longer
# than the primary's (it lacks only pages never written: the unused end of
# a run's reservation is not logged) and near its live pages as the
# primary's is, its answers are the primary's, and
# lsm_am.check_index() accounts for every page on the primary.  A standby
# transaction that holds the index while the primary truncates is cancelled
# by the replayed lock (max_standby_streaming_delay) before the truncation
# is replayed: it never reads a page that is gone or reused.
# wal_consistency_checking is on, so a shrink cuts only pages a checkpoint
# covers (doc/impl.md, "The file shrinks"): each step that expects the
# file to shrink ends with a CHECKPOINT and a second compact() (or VACUUM).
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use LsmCluster;

my $primary = PostgreSQL::Test::Cluster->new('primary');
$primary->init(allows_streaming => 1, extra => [ initdb_args() ]);
$primary->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'lsm_am'
wal_consistency_checking = 'generic'
autovacuum = off
});
$primary->start;
$primary->backup('backup');

my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'backup', has_streaming => 1);
$standby->append_conf('postgresql.conf', qq{
max_standby_streaming_delay = 500ms
});
$standby->start;

my $F_INDEX = 'SET enable_seqscan = off; SET enable_bitmapscan = off; SET enable_indexonlyscan = off;';
my $Q = 'SELECT count(*), coalesce(sum(k), 0), min(k), max(k) FROM gm WHERE k >= 0';

sub psql_p { return $primary->safe_psql('postgres', $_[0]); }
sub psql_s { return $standby->safe_psql('postgres', $_[0]); }

# the standby follows: a file no longer than the primary's, same answers; every page accounted
sub follows
{
	my ($what) = @_;
	my $size = "SELECT pg_relation_size('gm_k') / current_setting('block_size')::int";
	# The standby's file has every page a WAL record touched, and is cut
	# where the primary's is (XLOG_SMGR_TRUNCATE); pages the primary extended
	# its file by but never wrote (the unused end of a run's reservation)
	# are not logged, so the standby's file may end before the primary's.
	# (the primary's worker may extend or cut it meanwhile: before and after)
	my $p1 = psql_p($size);
	wait_catchup($primary, $standby, 'replay');
	my $s = psql_s($size);
	my $p2 = psql_p($size);
	my $p = $p1 > $p2 ? $p1 : $p2;
	cmp_ok($s, '<=', $p, "$what: the standby's index file ($s pages) is no longer than the primary's ($p)");
	my $want = psql_p("SET enable_indexscan = off; SET enable_bitmapscan = off; $Q");
	is(psql_p("$F_INDEX $Q"), $want, "$what: the primary's index answers like its heap");
	is(psql_s("$F_INDEX $Q"), $want, "$what: the standby's index answers like the primary");
	my ($total, $log, $run, $free, $resv, $unused, $leaked) = split /\|/,
	  psql_p("SELECT total_pages, log_pages, run_pages, free_pages, reserved_pages,
	                 unused_pages, leaked_pages + dropped_pages FROM lsm_am.check_index('gm_k')");
	is($leaked, 0, "$what: no leaked page");
	is($total, 1 + $log + $run + $free + $resv + $unused, "$what: every page accounted for");
	for my $node ($primary, $standby)
	{
		my $name = $node == $primary ? 'primary' : 'standby';
		my ($ret, $out, $err) = $node->psql('postgres', "SELECT lsm_am.verify('gm_k', true)");
		is("$ret$out$err", '0', "$what: verify(gm_k, true) on the $name finds it sound and complete");
	}
	return ($total, 1 + $log + $run, $s);
}

psql_p(q{
CREATE EXTENSION lsm_am;
CREATE TABLE gm (k bigint);
CREATE INDEX gm_k ON gm USING lsm (k) WITH (memtable_size = 64);
INSERT INTO gm SELECT g FROM generate_series(1, 100000) g;
});
psql_p("SELECT lsm_am.compact('gm_k')");
follows('initial compact()');

# rounds of inserts and compact(): the file stays near its live pages, on both
for my $round (1 .. 4)
{
	psql_p('INSERT INTO gm SELECT g FROM generate_series(1, 20000) g');
	psql_p("SELECT lsm_am.compact('gm_k')");
	# the checker is on: the pages compact() freed were written since the
	# last checkpoint, so they are cut by the next compact() after one
	psql_p('CHECKPOINT');
	psql_p("SELECT lsm_am.compact('gm_k')");
	my ($total, $live, $stotal) = follows("round $round");
	ok($total <= 1.3 * $live, "round $round: $total file pages <= 1.3 x $live live pages");
	ok($stotal <= 1.3 * $live, "round $round: the standby's $stotal file pages <= 1.3 x $live live pages");
}

# a standby transaction reading the index while the primary truncates
my $reader = $standby->background_psql('postgres', on_error_stop => 0);
$reader->query_safe('BEGIN ISOLATION LEVEL REPEATABLE READ');
my $seen = $reader->query_safe("$F_INDEX $Q");
chomp $seen;
is($seen, psql_s("$F_INDEX $Q"), 'a standby transaction reads the index');
psql_p('INSERT INTO gm SELECT g FROM generate_series(1, 20000) g');
psql_p("SELECT lsm_am.compact('gm_k')");
psql_p('CHECKPOINT');
psql_p("SELECT lsm_am.compact('gm_k')");
my ($total, $live, $stotal) = follows('compact() while a standby transaction held the index');
ok($total <= 1.3 * $live, "the primary truncated regardless: $total <= 1.3 x $live");
ok($stotal <= 1.3 * $live, "and so did the standby: $stotal <= 1.3 x $live");
# psql itself may exit under the query (its connection was terminated)
my $again = eval { $reader->query("$F_INDEX $Q") } // '';
my $err = ($@ // '') . ($reader->{stderr} // '');
chomp $again;
like($err, qr/conflict with recovery|terminating connection|server closed the connection|psql/,
	'the standby transaction was cancelled by the replayed lock, not answered from truncated pages');
unlike($again, qr/\d+\|/, 'and it returned no rows');
eval { $reader->quit };

# VACUUM after deletes on the primary: runs move down, the tail goes
psql_p('DELETE FROM gm WHERE k > 50000');
psql_p('VACUUM gm');
psql_p('INSERT INTO gm SELECT g FROM generate_series(1, 5000) g');
psql_p('CHECKPOINT');
psql_p('VACUUM gm');
($total, $live, $stotal) = follows('VACUUM');
ok($total <= 1.3 * $live, "after VACUUM: $total <= 1.3 x $live");
ok($stotal <= 1.3 * $live, "after VACUUM, on the standby: $stotal <= 1.3 x $live");

# the standby, promoted, writes to the index it followed
$standby->promote;
$standby->safe_psql('postgres', 'INSERT INTO gm SELECT g FROM generate_series(1, 20000) g');
$standby->safe_psql('postgres', "SELECT lsm_am.compact('gm_k')");
$standby->safe_psql('postgres', 'CHECKPOINT');
$standby->safe_psql('postgres', "SELECT lsm_am.compact('gm_k')");
is($standby->safe_psql('postgres', "$F_INDEX $Q"),
	$standby->safe_psql('postgres', "SET enable_indexscan = off; SET enable_bitmapscan = off; $Q"),
	'promoted standby: the index answers like the heap after compact()');
is($standby->safe_psql('postgres',
		"SELECT leaked_pages + dropped_pages + unused_pages FROM lsm_am.check_index('gm_k')"),
	0, 'promoted standby: every page accounted for');
is($standby->safe_psql('postgres', "SELECT lsm_am.verify('gm_k', true)"), '',
	'promoted standby: verify(gm_k, true) finds it sound and complete');

ok(!$standby->log_contains(qr/inconsistent page|PANIC|TRAP:/),
	'no inconsistent page (wal_consistency_checking) and no crash on the standby');
$standby->stop;
$primary->stop;
done_testing();
