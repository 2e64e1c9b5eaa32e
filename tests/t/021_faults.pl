# 021_faults.pl — the crash matrix: every lsm_am fault point (src/lsmfault.h),
# as an immediate PANIC (the server restarts and recovers) and as an ERROR
# (the operation fails, the session goes on), at several passes through the
# point (issue 16, items 1 and 2).
#
# Each case arms one point in a writer session (SET lsm_am.fault), runs a
# workload that passes every point several times (inserts that switch and
# flush memtables, lsm_am.flush(), deletes, VACUUM's in-place rewrites,
# lsm_am.compact() with its relocation, recycling and truncation), checks
# that the fault fired, waits for the server when it crashed, and then
# checks the index against a btree on a twin table that every transaction
# writes alike: index, bitmap and index-only scans (plans asserted) of the
# whole key range and of a narrow one give the btree's answers, and
# check_index finds no leaked or dropped page.  The next case's workload
# shows the index accepts writes, flushes and compactions after the last
# one.  Workers are off (lsm_am.max_workers = 0) so the session itself
# flushes and compacts and passes the points; then REINDEX, REINDEX
# CONCURRENTLY and CREATE INDEX CONCURRENTLY meet a fault in their build;
# a last part arms points in workers (ALTER SYSTEM) with them on.  From
# half-way a streaming standby follows and must answer like the primary
# after each case.
#
# LSM_FAULT_PANIC_PASSES (default 3; 8 under tests/run_all.sh --long) and
# LSM_FAULT_ERROR_PASSES (default 2): the passes at which each point fires,
# 1..N; the default makes 39 crashes, the long mode 104.
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

my $PANIC_PASSES = $ENV{LSM_FAULT_PANIC_PASSES} // 3;
my $ERROR_PASSES = $ENV{LSM_FAULT_ERROR_PASSES} // 2;

# the session's points, and the worker's (last part)
my @POINTS = qw(log_append_before_wal log_append_after_wal memtable_switch
  flush_page flush_filter flush_before_publish flush_after_publish
  compaction_page compaction_before_publish compaction_after_publish
  recycle truncate vacuum_rewrite);

my $node = PostgreSQL::Test::Cluster->new('primary');
$node->init(allows_streaming => 1, extra => [ initdb_args() ]);
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'lsm_am'
lsm_am.max_workers = 0
restart_after_crash = on
autovacuum = off
log_min_messages = warning
wal_keep_size = 256MB
});
$node->start;

# one connection for the many small queries (tests/t/LsmSession.pm)
my $sess = LsmSession->new($node);
sub sql { return $sess->safe_psql('postgres', $_[0]); }

sql(q{
CREATE EXTENSION lsm_am;
CREATE TABLE f (k bigint);
CREATE TABLE g (k bigint);
CREATE INDEX f_k ON f USING lsm (k) WITH (memtable_size = 64, compaction = 'leveled', l0_compaction_trigger = 2);
CREATE INDEX g_k ON g (k);
});

my $standby;
my $round = 0;

# One round of the workload: every point is passed several times.
sub workload
{
	my ($fault) = @_;
	my $ins = "WITH i AS (INSERT INTO f SELECT (random() * 1e7)::int8 FROM generate_series(1, 3000) RETURNING k) INSERT INTO g SELECT k FROM i;";
	my $m = $round % 5;
	$round++;
	return join("\n",
		"SET lsm_am.fault = '$fault';",
		$ins, $ins, "SELECT lsm_am.flush('f_k');",
		$ins, "SELECT lsm_am.flush('f_k');",
		"BEGIN; DELETE FROM f WHERE k % 5 = $m; DELETE FROM g WHERE k % 5 = $m; COMMIT;",
		'VACUUM f;',
		"SELECT lsm_am.compact('f_k');",
		$ins, $ins, "SELECT lsm_am.flush('f_k');",
		"BEGIN; DELETE FROM f WHERE k % 7 = $m; DELETE FROM g WHERE k % 7 = $m; COMMIT;",
		'VACUUM f;',
		"SELECT lsm_am.compact('f_k');",
		$ins, "SELECT lsm_am.flush('f_k');",
		"SELECT lsm_am.compact('f_k');",
		# level-0 compactions (l0_compaction_trigger = 2)
		($ins, "SELECT lsm_am.flush('f_k');") x 4, '');
}

# The index answers like the btree twin, on the primary and the standby.
sub agree
{
	my ($what) = @_;
	my $q = 'SELECT count(*), coalesce(sum(k), 0), min(k), max(k) FROM %s WHERE k >= %d AND k < %d';
	my @ranges = ([0, 20_000_000], [2_000_000, 2_100_000]);
	my $ok = 1;
	for my $r (@ranges)
	{
		my $want = sql(sprintf($q, 'g', @$r));
		for my $scan (['SET enable_seqscan = off; SET enable_bitmapscan = off; SET enable_indexonlyscan = off;', qr/Index Scan using f_k/, 'index scan'],
			['SET enable_seqscan = off; SET enable_indexscan = off;', qr/Bitmap Index Scan on f_k/, 'bitmap scan'],
			['SET enable_seqscan = off; SET enable_bitmapscan = off;', qr/Index Only Scan using f_k/, 'index-only scan'])
		{
			my $got = query_planned($sess, 'postgres', $scan->[0], sprintf($q, 'f', @$r),
				$scan->[1], "$what: $scan->[2] of [$r->[0], $r->[1])");
			$ok &&= is($got, $want, "$what: $scan->[2] of [$r->[0], $r->[1]) answers like the btree");
		}
	}
	my ($leaked, $dropped) = split /\|/,
	  sql("SELECT leaked_pages, dropped_pages FROM lsm_am.check_index('f_k')");
	is("$leaked|$dropped", '0|0', "$what: check_index: no leaked or dropped page");
	my ($vret, $vout, $verr) = $node->psql('postgres', "SELECT lsm_am.verify('f_k', true)");
	is("$vret$vout$verr", '0', "$what: verify(f_k, true) finds f_k sound and complete");
	if ($standby)
	{
		catch_up($what);
		my $r = $ranges[0];
		my $want = sql(sprintf($q, 'g', @$r));
		my $s = 'SET enable_seqscan = off; SET enable_bitmapscan = off; SET enable_indexonlyscan = off;';
		like($standby->safe_psql('postgres', "$s EXPLAIN (COSTS OFF) " . sprintf($q, 'f', @$r)),
			qr/Index Scan using f_k/, "$what: the standby's plan is an index scan");
		is($standby->safe_psql('postgres', "$s " . sprintf($q, 'f', @$r)), $want,
			"$what: the standby answers like the primary's btree");
	}
	return $ok;
}

# Wait for the standby to replay everything the primary wrote; when it does
# not (in 3 minutes), say why from both sides before giving up.
sub catch_up
{
	my ($what) = @_;
	my $lsn = $node->lsn('insert');
	return if $node->poll_query_until('postgres',
		"SELECT coalesce(bool_or(replay_lsn >= '$lsn'::pg_lsn), false) FROM pg_stat_replication");
	diag("$what: the standby did not replay up to $lsn");
	diag('primary: ' . sql('SELECT application_name, state, sent_lsn, replay_lsn FROM pg_stat_replication')
		  . ' slots: ' . sql('SELECT slot_name, active, restart_lsn FROM pg_replication_slots'));
	my $log = slurp_file($standby->logfile);
	diag("standby log (tail):\n" . substr($log, -4000));
	BAIL_OUT("$what: the standby did not catch up");
}

# Wait for a restarted server (up to 3 minutes).  With $logpos, first for
# the postmaster to have reinitialized after the crash the log shows from
# there: until then a new connection may still be let in, and killed.
sub wait_up
{
	my ($what, $logpos) = @_;
	if (defined $logpos)
	{
		my $reinit = 0;
		for (1 .. 360)
		{
			$reinit = 1, last if slurp_file($node->logfile, $logpos) =~
			  /all server processes terminated; reinitializing.*database system is ready to accept connections/s;
			select(undef, undef, undef, 0.5);
		}
		diag("$what: no reinitialization in the log within 3 minutes; the log since the crash (tail):\n"
			  . substr(slurp_file($node->logfile, $logpos), -4000)) unless $reinit;
	}
	my ($ret, $err);
	for (1 .. 360)
	{
		# (psql may exit before it reads its input: IPC::Run then dies)
		($ret, undef, $err) = eval { $node->psql('postgres', 'SELECT 1') };
		$ret //= 1;
		$err = $@ if $@;
		return 1 if $ret == 0;
		select(undef, undef, undef, 0.5);
	}
	diag("$what: last connection attempt: $err; the log (tail):\n" . substr(slurp_file($node->logfile), -4000));
	BAIL_OUT("$what: the server did not come back");
}

my $crashes = 0;

sub run_case
{
	my ($point, $kind, $n) = @_;
	my $what = "$point:$kind:$n";
	my $logpos = -s $node->logfile;
	# (a crash may end psql before it read the whole script: IPC::Run dies)
	my ($ret, $out, $err) = eval { $node->psql('postgres', workload($what), on_error_stop => 0) };
	$err //= $@;
	my $log = slurp_file($node->logfile, $logpos);
	if ($kind eq 'panic')
	{
		like($log, qr/PANIC:  lsm_am: fault point "$point" fired/, "$what: fired (PANIC)");
		wait_up($what, $logpos);
		$crashes++ if $log =~ /PANIC:  lsm_am: fault point/;
	}
	else
	{
		like($err, qr/ERROR:  lsm_am: fault point "$point" fired/, "$what: fired (ERROR)");
		unlike($log, qr/PANIC|TRAP|terminated by signal/, "$what: no crash");
	}
	agree($what);
}

my @cases;
for my $point (@POINTS)
{
	push @cases, [$point, 'error', $_] for 1 .. $ERROR_PASSES;
	push @cases, [$point, 'panic', $_] for 1 .. $PANIC_PASSES;
}
my $half = int(@cases / 2);
for my $i (0 .. $#cases)
{
	if ($i == $half)
	{
		# a standby follows from here on, across the primary's crashes
		# (a slot keeps the WAL the standby has not received when the
		# primary crashes: the end-of-recovery checkpoint would remove it.
		# The slot alone did not keep it: CI on 18 saw "requested WAL segment
		# ... has already been removed" after a PANIC with the slot's
		# restart_lsn in that very segment (a slot's restart_lsn is saved
		# only at checkpoints, and a crash loses what moved since), so
		# wal_keep_size (above) keeps the last 256MB as well; a case writes
		# about 12MB)
		sql("SELECT pg_create_physical_replication_slot('standby_slot')");
		$node->backup('half');
		$standby = PostgreSQL::Test::Cluster->new('standby');
		$standby->init_from_backup($node, 'half', has_streaming => 1);
		$standby->append_conf('postgresql.conf', "primary_slot_name = 'standby_slot'");
		$standby->start;
		agree('standby attached');
	}
	run_case(@{ $cases[$i] });
}
note "$crashes crashes";
cmp_ok($crashes, '>=', $PANIC_PASSES * @POINTS, "every PANIC case crashed the server ($crashes)");

# ------------------------------------------------------------ index builds
# A crash or an error in the middle of REINDEX, REINDEX CONCURRENTLY and
# CREATE INDEX CONCURRENTLY (their runs are written page by page through
# compaction_page): afterwards the index answers as before, and what an
# interrupted concurrent build leaves (an invalid index) can be dropped.
for my $ddl (['REINDEX', 'REINDEX INDEX f_k'],
	['REINDEX CONCURRENTLY', 'REINDEX INDEX CONCURRENTLY f_k'],
	['CREATE INDEX CONCURRENTLY', 'CREATE INDEX CONCURRENTLY f_k2 ON f USING lsm (k)'])
{
	for my $kind ('error', 'panic')
	{
		my $what = "$ddl->[0] with compaction_page:$kind:3";
		my $logpos = -s $node->logfile;
		my ($ret, $out, $err) = eval {
			$node->psql('postgres', "SET lsm_am.fault = 'compaction_page:$kind:3';\n$ddl->[1];",
				on_error_stop => 0) };
		$err //= $@;
		my $log = slurp_file($node->logfile, $logpos);
		if ($kind eq 'panic')
		{
			like($log, qr/PANIC:  lsm_am: fault point "compaction_page" fired/, "$what: fired (PANIC)");
			wait_up($what, $logpos);
			$crashes++;
		}
		else
		{
			like($err, qr/ERROR:  lsm_am: fault point "compaction_page" fired/, "$what: fired (ERROR)");
		}
		# an interrupted concurrent build leaves an invalid index behind
		my $invalid = sql("SELECT string_agg(c.relname, ' ') FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
			WHERE i.indrelid = 'f'::regclass AND NOT i.indisvalid");
		sql("DROP INDEX $_") for split ' ', $invalid;
		is(sql("SELECT count(*) FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
			WHERE i.indrelid = 'f'::regclass AND c.relname = 'f_k' AND i.indisvalid"), '1',
			"$what: f_k is there and valid" . ($invalid ? " (dropped the invalid $invalid)" : ''));
		agree($what);
		sql('DROP INDEX IF EXISTS f_k2');
	}
}

# ------------------------------------------------------------ worker faults
# Workers on; a point armed for everyone (ALTER SYSTEM): a worker's ERROR
# leaves the job for the next worker, a worker's PANIC restarts the server
# (restart_after_crash off for it: the setting would arm the restarted
# workers again, so the test disarms it while the server is down).
$node->append_conf('postgresql.conf', "lsm_am.max_workers = 2\n");
$node->restart;
wait_up('workers on');

sub worker_case
{
	my ($point, $kind) = @_;
	my $what = "worker $point:$kind";
	my $logpos = -s $node->logfile;
	sql("ALTER SYSTEM SET lsm_am.fault = '$point:$kind:1'");
	sql('ALTER SYSTEM SET restart_after_crash = off') if $kind eq 'panic';
	sql('SELECT pg_reload_conf()');
	# inserts that fill memtables: the workers flush and compact them
	my $ins = "WITH i AS (INSERT INTO f SELECT (random() * 1e7)::int8 FROM generate_series(1, 3000) RETURNING k) INSERT INTO g SELECT k FROM i";
	my $fired = 0;
	my $deadline = time + $PostgreSQL::Test::Utils::timeout_default;
	while (time < $deadline)
	{
		eval { $node->psql('postgres', $ins) };
		my $log = slurp_file($node->logfile, $logpos);
		if ($log =~ /(ERROR|PANIC):  lsm_am: fault point "$point" fired/)
		{
			$fired = 1;
			last;
		}
		select(undef, undef, undef, 0.25);
	}
	ok($fired, "$what: fired in a worker")
	  or diag("$what: not in the log within $PostgreSQL::Test::Utils::timeout_default s of inserts; workers and f_k:\n"
		  . show($node, $WORKERS, "SELECT * FROM lsm_am.maintenance_stats('f_k')")
		  . "the log since (tail):\n" . substr(slurp_file($node->logfile, $logpos), -4000));
	if ($kind eq 'panic')
	{
		# the postmaster exits (restart_after_crash = off): disarm, start
		for (1 .. 360)
		{
			last if !-f $node->data_dir . '/postmaster.pid';
			select(undef, undef, undef, 0.5);
		}
		ok(!-f $node->data_dir . '/postmaster.pid', "$what: the server stopped")
		  or diag("$what: postmaster.pid still there after 3 minutes; the log since the fault (tail):\n"
			  . substr(slurp_file($node->logfile, $logpos), -4000));
		my $auto = $node->data_dir . '/postgresql.auto.conf';
		my $conf = slurp_file($auto);
		$conf =~ s/^lsm_am\.fault = .*\n//m;
		$conf =~ s/^restart_after_crash = .*\n//m;
		open(my $fh, '>', $auto) or die "$auto: $!";
		print $fh $conf;
		close $fh;
		$node->_update_pid(0);
		$node->start;
		$crashes++;
	}
	else
	{
		sql('ALTER SYSTEM RESET lsm_am.fault');
		sql('SELECT pg_reload_conf()');
	}
	wait_up($what);
	is(merges_done($sess, 'f_k', '2 minutes'), 't',
		"$what: the workers finish the work after the fault");
	agree($what);
}

worker_case('worker_job', 'error');
worker_case('flush_page', 'error');
worker_case('compaction_before_publish', 'error');
worker_case('worker_job', 'panic');
worker_case('flush_before_publish', 'panic');
worker_case('compaction_page', 'panic');

# afterwards: writes, a flush and a compaction, no fault armed
sql("WITH i AS (INSERT INTO f SELECT (random() * 1e7)::int8 FROM generate_series(1, 3000) RETURNING k) INSERT INTO g SELECT k FROM i");
my ($fret, $fout, $ferr) = $node->psql('postgres', "SELECT lsm_am.flush('f_k'); SELECT lsm_am.compact('f_k')");
is($fret, 0, 'after every fault the index flushes and compacts') or diag $ferr;
agree('the end');
is(sql("SELECT count(*) FROM lsm_am.index_info('f_k')"), '1', 'compact() left one run');
note "$crashes crashes in all";

# a bad setting is refused with the names in the hint
my ($ret, $out, $err) = $node->psql('postgres', "SET lsm_am.fault = 'nosuch:panic'");
like($err, qr/invalid value for lsm_am\.fault.*no fault point of that name.*HINT:.*log_append_before_wal/s,
	'an unknown fault point is refused, the hint names them');
($ret, $out, $err) = $node->psql('postgres', "SET lsm_am.fault = 'truncate:explode'");
like($err, qr/neither panic nor error/, 'an unknown kind is refused');
($ret, $out, $err) = $node->psql('postgres', "SET lsm_am.fault = 'truncate:error:p1.5'");
like($err, qr/probability/, 'a probability above 1 is refused');
sql("CREATE ROLE plain LOGIN");
($ret, $out, $err) = $node->psql('postgres', "SET ROLE plain; SET lsm_am.fault = 'truncate:error'");
like($err, qr/permission denied to set parameter "lsm_am\.fault"/, 'only a superuser arms a fault');

$standby->stop if $standby;
$node->stop;
done_testing();
