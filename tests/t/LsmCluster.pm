# LsmCluster — the encoding and locale of every TAP test cluster.
#
# initdb takes both from the environment unless told: without LANG it makes
# a SQL_ASCII cluster with locale C (no ICU collations, no C.UTF-8, no
# non-ASCII text), and under LANG=en_US.UTF-8 one whose default collation lsm
# refuses for an index column.  So every test initializes its clusters with
# initdb_args(), and they are the same under `make installcheck` as under
# tests/run_all.sh: UTF8, locale C.UTF-8 (C where the OS lacks C.UTF-8; both
# order text by bytes, which lsm accepts).
#
#   use FindBin; use lib $FindBin::RealBin; use LsmCluster;
#   $node->init(extra => [ initdb_args() ]);
#   my $icu = have_icu($node);    # false on a server built without ICU
#
# It also has the waits of the TAP files: every wait on a worker, a standby
# or a lock is a condition polled with a timeout that, when it gives up,
# says what it last saw and the state around it (issue 30, item 4).
#
#   wait_until($node_or_session, 'SELECT ... = 0', 'the workers stop', $WORKERS)
#     or die ...;                      # or ok(wait_until(...), ...)
#   wait_catchup($primary, $standby);  # wait_for_catchup, with the state on failure
#   is(merges_done($sess, 't_k'), 't', ...);  # wait_for_merges, 3 minutes
#
# And two pieces of the ingest tests (036, 037): two pgbench clients
# inserting 1,000 random int8 keys a statement into a table (k, kb), and
# the three scan kinds through the lsm index on k checked against the btree
# on kb.
#
#   my $bench = random_inserts($node, 'fl', 25);   # started; ->finish
#   scans_match_btree($node, 'fl', 'fl_k');       # 3 tests
package LsmCluster;

use strict;
use warnings;
use Exporter 'import';
use Test::More;
use Time::HiRes qw(usleep time);
use PostgreSQL::Test::Utils;
use IPC::Run;

our @EXPORT = qw(initdb_args have_icu wait_until wait_catchup merges_done show
  random_inserts scans_match_btree $WORKERS);

# the lsm_am workers and launcher, for wait_until's state
our $WORKERS = q{SELECT pid, backend_type, datname, state, wait_event, left(query, 60)
	FROM pg_stat_activity WHERE backend_type LIKE 'lsm_am%'};

my $locale;

# initdb_args(): --encoding=UTF8 and --locale=C.UTF-8 (or C).
sub initdb_args
{
	if (!defined $locale)
	{
		my @have = `locale -a 2>/dev/null`;
		$locale = (grep { /^C\.utf-?8$/i } @have) ? 'C.UTF-8' : 'C';
	}
	return ('--encoding=UTF8', "--locale=$locale");
}

# have_icu(NODE[, DB]): whether the running server has ICU collations (a
# server built without ICU has none); tests skip their ICU parts otherwise.
sub have_icu
{
	my ($node, $db) = @_;
	return $node->safe_psql($db // 'postgres',
		q{SELECT to_regcollation('pg_catalog."und-x-icu"') IS NOT NULL}) eq 't';
}

# show(CONN, QUERY...): the rows of each query (through CONN, a node or an
# LsmSession; database postgres) as JSON, or its error, as text for diag.
sub show { my ($conn, @queries) = @_; return show_in($conn, 'postgres', @queries); }

sub show_in
{
	my ($conn, $db, @queries) = @_;
	my $text = '';
	for my $q (@queries)
	{
		my ($ret, $out, $err) = eval { $conn->psql($db, "SELECT row_to_json(q) FROM ($q) q") };
		$out = "(failed: " . ($@ || $err) . ")" if $@ || $ret;
		$text .= "$q:\n" . ($out // '') . "\n";
	}
	return $text;
}

# merges_done(CONN, INDEX[, TIMEOUT[, DB]]): lsm_am.wait_for_merges(INDEX,
# TIMEOUT ('3 minutes')) on CONN's server in DB (postgres): 't', or 'f' when the
# time ran out, and then first a diag of the index's maintenance state, its
# jobs and the workers.
sub merges_done
{
	my ($conn, $idx, $timeout, $db) = @_;
	$timeout //= '3 minutes';
	$db //= 'postgres';
	# (a session's call ends at timeout_default: a longer wait takes a
	# connection of its own)
	my $node = $conn->isa('LsmSession') ? $conn->node : $conn;
	my $r = $node->safe_psql($db, "SELECT lsm_am.wait_for_merges('$idx', '$timeout')");
	diag("the flushes and compactions of $idx did not finish within $timeout:\n"
		  . show_in($conn, $db, "SELECT * FROM lsm_am.maintenance_stats('$idx')",
			  "SELECT * FROM lsm_am.indexes WHERE indexrelid = '$idx'::regclass",
			  'SELECT * FROM lsm_am.progress', $WORKERS))
	  if $r ne 't';
	return $r;
}

# wait_until(CONN, QUERY, WHAT, DIAG[, SECONDS[, EXPECTED]]): poll QUERY
# through CONN (a node or an LsmSession; database postgres) until it returns
# EXPECTED ('t'; or a qr// the output must match), for at most SECONDS
# (timeout_default, 180 s).  Returns true then (with a qr//, the output);
# on time out it diags "WHAT did not happen within N s", the last output of
# QUERY and that of DIAG (a query, or a reference to a list of them: the
# workers, the index's state, the locks), and returns false ('' with a qr//).
sub wait_until
{
	my ($conn, $query, $what, $diag, $secs, $expected) = @_;
	$secs //= $PostgreSQL::Test::Utils::timeout_default;
	$expected //= 't';
	my $deadline = time + $secs;
	my $last;
	while (1)
	{
		my ($ret, $out, $err) = eval { $conn->psql('postgres', $query) };
		if ($@ || $ret)
		{
			$last = 'error: ' . ($@ || $err);
		}
		else
		{
			if (ref $expected)
			{
				return $out if $out =~ $expected;
			}
			elsif ($out eq $expected)
			{
				return 1;
			}
			$last = $out;
		}
		last if time >= $deadline;
		usleep(100_000);
	}
	diag("$what did not happen within $secs s; last seen (expecting '$expected'): $last\n"
		  . show($conn, ref $diag ? @$diag : defined $diag ? ($diag) : ()));
	return ref $expected ? '' : 0;
}

# wait_catchup(PRIMARY, STANDBY[, MODE[, LSN]]): $primary->wait_for_catchup;
# when it times out, first diag the primary's pg_stat_replication and WAL
# position and the standby's receive and replay positions.
sub wait_catchup
{
	my ($primary, $standby, @args) = @_;
	return 1 if eval { $primary->wait_for_catchup($standby, @args); 1 };
	my $e = $@;
	diag("the standby " . (ref $standby ? $standby->name : $standby) . " did not catch up (@args):\n"
		  . show($primary, q{SELECT pg_current_wal_lsn(), pg_current_wal_insert_lsn()},
			  q{SELECT application_name, state, sent_lsn, write_lsn, flush_lsn, replay_lsn, sync_state FROM pg_stat_replication})
		  . (ref $standby ? show($standby,
			  q{SELECT pg_is_in_recovery(), pg_last_wal_receive_lsn(), pg_last_wal_replay_lsn(), pg_is_wal_replay_paused()},
			  q{SELECT pid, backend_type, state, wait_event, left(query, 60) FROM pg_stat_activity
				WHERE backend_type IN ('startup', 'walreceiver') OR state = 'active'}) : ''));
	die $e;
}

# random_inserts(NODE, TABLE, SECS): start two pgbench clients inserting
# 1,000 random int8 keys a statement into TABLE (k, kb) for SECS seconds;
# returns the IPC::Run harness (finish it; its stderr is in ->{lsm_err}).
sub random_inserts
{
	my ($node, $table, $secs) = @_;
	my $ins = PostgreSQL::Test::Utils::tempdir . '/ins.sql';
	open(my $fh, '>', $ins) or die "$ins: $!";
	print $fh "INSERT INTO $table SELECT x, x FROM (SELECT (random() * 9.2e18)::int8 AS x FROM generate_series(1, 1000)) s;\n";
	close $fh;
	my ($out, $err) = ('', '');
	my $h = IPC::Run::start(
		[
			'pgbench', '-n', '-h', $node->host, '-p', $node->port,
			'-c', 2, '-j', 2, '-T', $secs, '-f', $ins, 'postgres'
		],
		'>', \$out, '2>', \$err);
	$h->{lsm_err} = \$err;
	return $h;
}

# scans_match_btree(NODE, TABLE, INDEX): an index scan, an index-only scan
# and a bitmap scan through INDEX (on k) count and sum what the btree on kb
# does (3 tests).
sub scans_match_btree
{
	my ($node, $table, $idx) = @_;
	my $btree = $node->safe_psql('postgres', qq{SET enable_seqscan = off; SET enable_bitmapscan = off;
		SELECT count(*), sum(kb % 1000003) FROM $table WHERE kb > -9223372036854775807});
	for my $m (['index scan', 'SET enable_indexonlyscan = off; SET enable_bitmapscan = off;'],
		['index-only scan', 'SET enable_bitmapscan = off;'],
		['bitmap scan', 'SET enable_indexscan = off; SET enable_indexonlyscan = off;'])
	{
		is($node->safe_psql('postgres', qq{SET enable_seqscan = off; $m->[1]
			SELECT count(*), sum(k % 1000003) FROM $table WHERE k > -9223372036854775807}),
			$btree, "$m->[0] through $idx counts and sums what btree does");
	}
	return;
}

1;
