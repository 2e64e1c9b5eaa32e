# 023_soak.pl — everything at once for a while (issue 16, item 3).
#
# Four writers insert, update and delete (each its own keys: k % 4, so no
# two writers wait for each other's rows), two readers compare, in one
# REPEATABLE READ snapshot, what the lsm index of table f answers (point,
# range, ORDER BY ... LIMIT, index-only count; plans asserted each time)
# with what a btree on its twin g answers — every writer's transaction
# changes f and g alike, so at every snapshot they must agree.  Meanwhile
# an operator loop runs VACUUM, lsm_am.compact(), REINDEX INDEX
# CONCURRENTLY, DROP INDEX CONCURRENTLY + CREATE INDEX CONCURRENTLY, ALTER
# INDEX ... SET (compaction = ...), CHECKPOINT, and now and then kills an
# lsm_am worker with SIGKILL (the postmaster then restarts every process and
# recovers: clients see their connection go, wait and reconnect).
#
# Checked: no error but the expected ones (connections lost to the
# restarts, a DDL that a restart interrupted), no wrong answer, no row lost
# (at the end, every scan type against the btree twin), no backend left
# waiting, check_index accounts for every page, and the index file ends
# within a bound of its live pages after a compact().
#
# LSM_SOAK_SECONDS: how long (default 60; the long mode is 600 or more:
# LSM_SOAK_SECONDS=600 bash tests/run_all.sh --only tap 023).
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
use Time::HiRes qw(time usleep);
use POSIX ();

my $SECONDS = $ENV{LSM_SOAK_SECONDS} // 60;
my $WRITERS = 4;
my $READERS = 2;

my $node = PostgreSQL::Test::Cluster->new('soak');
$node->init(extra => [ initdb_args() ]);
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'lsm_am'
restart_after_crash = on
autovacuum = on
autovacuum_naptime = 5s
lsm_am.worker_naptime = 200ms
max_connections = 40
log_min_messages = warning
});
$node->start;

# one connection for the many small queries (tests/t/LsmSession.pm)
my $sess = LsmSession->new($node);
sub sql { return $sess->safe_psql('postgres', $_[0]); }

sql(q{
CREATE EXTENSION lsm_am;
CREATE TABLE f (k bigint, v int);
CREATE TABLE g (k bigint, v int);
INSERT INTO f SELECT g, 0 FROM generate_series(1, 20000) g;
INSERT INTO g SELECT k, v FROM f;
CREATE INDEX f_k ON f USING lsm (k) WITH (memtable_size = 256);
CREATE INDEX g_k ON g (k);
});

my $dir = PostgreSQL::Test::Utils::tempdir;
my $deadline = time + $SECONDS;

# Run one psql script; returns (ok, stdout, stderr).
sub run_sql
{
	my ($script) = @_;
	# (psql may exit before it read its input, when the server restarts:
	# IPC::Run then dies with a broken pipe)
	my ($ret, $out, $err) = eval { $node->psql('postgres', $script, on_error_stop => 1) };
	return (0, '', "psql: $@") unless defined $ret;
	return ($ret == 0, $out // '', $err // '');
}

# Errors any client may meet: the restarts after a killed worker.
my $EXPECTED = qr/terminating connection because of crash of another server process|server closed the connection unexpectedly|connection to server .* failed|the database system is (in recovery mode|starting up|shutting down|not yet accepting connections)|no connection to the server|could not connect|Connection refused|terminating connection due to administrator command|canceling statement due to conflict|could not send data to server|lost synchronization|psql: .*Broken pipe/;

# A child process: runs $body->() until the deadline, writes its counts.
sub child
{
	my ($name, $body) = @_;
	my $pid = fork();
	die "fork: $!" unless defined $pid;
	return $pid if $pid;
	my %c = (ok => 0, expected => 0, unexpected => 0, wrong => 0);
	my @bad;
	# a child never runs the test's END blocks (they would stop the node)
	eval {
		while (time < $deadline)
		{
			my ($kind, $msg) = $body->();
			$c{$kind}++;
			push @bad, $msg if $kind eq 'unexpected' || $kind eq 'wrong';
			usleep(200_000) if $kind eq 'expected';
		}
		1;
	} or do { $c{unexpected}++; push @bad, "died: $@"; };
	if (open(my $fh, '>', "$dir/$name.out"))
	{
		print $fh join(' ', map { "$_=$c{$_}" } sort keys %c), "\n";
		print $fh "$_\n---\n" for @bad[0 .. ($#bad < 4 ? $#bad : 4)];
		close $fh;
	}
	POSIX::_exit(0);
}

sub classify
{
	my ($ok, $err) = @_;
	return ('ok', '') if $ok;
	return ('expected', $err) if $err =~ $EXPECTED;
	return ('unexpected', $err);
}

my @pids;
for my $w (0 .. $WRITERS - 1)
{
	push @pids, child("writer$w", sub {
		my $base = int(rand(5_000_000)) * $WRITERS + $w;
		my $op = int(rand(4));
		my $script;
		if ($op <= 1)
		{
			# inserts of fresh keys of this writer
			$script = "BEGIN;
			  WITH i AS (INSERT INTO f SELECT $base + g * $WRITERS, g FROM generate_series(1, 200) g RETURNING k, v)
			  INSERT INTO g SELECT k, v FROM i;
			  COMMIT;";
		}
		elsif ($op == 2)
		{
			my $lo = int(rand(20_000_000));
			$script = "BEGIN;
			  UPDATE f SET k = k + $WRITERS * 7, v = v + 1 WHERE k % $WRITERS = $w AND k BETWEEN $lo AND $lo + 200000;
			  UPDATE g SET k = k + $WRITERS * 7, v = v + 1 WHERE k % $WRITERS = $w AND k BETWEEN $lo AND $lo + 200000;
			  COMMIT;";
		}
		else
		{
			my $lo = int(rand(20_000_000));
			$script = "BEGIN;
			  DELETE FROM f WHERE k % $WRITERS = $w AND k BETWEEN $lo AND $lo + 100000;
			  DELETE FROM g WHERE k % $WRITERS = $w AND k BETWEEN $lo AND $lo + 100000;
			  COMMIT;";
		}
		my ($ok, $out, $err) = run_sql($script);
		return classify($ok, $err);
	});
}

# the lsm index's plan must be the one named, unless the index is being
# rebuilt (DROP/CREATE INDEX CONCURRENTLY): then no lsm plan at all
my @QUERIES = (
	['point', 'SELECT count(*), coalesce(sum(v), 0) FROM %s WHERE k = %d', qr/Index Scan using f_k|Index Only Scan using f_k/],
	['range', 'SELECT count(*), coalesce(sum(k), 0), coalesce(sum(v), 0) FROM %s WHERE k BETWEEN %d AND %d + 500000', qr/Index Scan using f_k/],
	['order by limit', 'SELECT k, v FROM %s WHERE k >= %d ORDER BY k, v LIMIT 20', qr/Index Scan using f_k/],
	['index-only count', 'SELECT count(*) FROM %s WHERE k >= %d AND k < %d + 2000000', qr/Index Only Scan using f_k/]);
# the OID of a valid f_k that a transaction starting now may use, or
# nothing (the planner skips an index built with broken HOT chains,
# indcheckxmin, until its pg_index row is older than the transaction's xmin,
# which never goes back)
my $VALID_F_K = "SELECT c.oid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
	WHERE c.relname = 'f_k' AND i.indisvalid
	  AND (NOT i.indcheckxmin OR
	       i.xmin::text::bigint < pg_snapshot_xmin(pg_current_snapshot())::text::bigint)";
for my $r (0 .. $READERS - 1)
{
	push @pids, child("reader$r", sub {
		my $q = $QUERIES[int(rand(@QUERIES))];
		my $key = int(rand(20_000_000));
		(my $fq = $q->[1]) =~ s/%s/f/;
		$fq =~ s/%d/$key/g;
		(my $gq = $q->[1]) =~ s/%s/g/;
		$gq =~ s/%d/$key/g;
		my $lsm = 'SET enable_seqscan = off; SET enable_bitmapscan = off;';
		$lsm .= ' SET enable_indexonlyscan = off;' unless $q->[0] =~ /index-only/;
		# the plan, between two looks at the catalog, each in a transaction
		# of its own (the planner reads the latest catalog, not a
		# snapshot's); then the answers, in one snapshot
		my ($ok, $out, $err) = run_sql("$lsm
			$VALID_F_K;
			\\echo ==P==
			EXPLAIN (COSTS OFF) $fq;
			\\echo ==P==
			$VALID_F_K;
			\\echo ==F==
			BEGIN ISOLATION LEVEL REPEATABLE READ;
			$fq;
			\\echo ==G==
			RESET ALL;
			$gq;
			\\echo ==E==
			COMMIT;");
		my @kind = classify($ok, $err);
		return @kind unless $kind[0] eq 'ok';
		return ('unexpected', "reader output not understood:\n$out")
		  unless $out =~ /\A(.*)^==P==\n(.*)^==P==\n(.*)^==F==\n(.*)^==G==\n(.*)^==E==/ms;
		my ($before, $plan, $after, $fa, $ga) = ($1, $2, $3, $4, $5);
		# while f_k is being rebuilt the planner has no lsm index to use
		my $valid = $plan =~ /using f_k|on f_k/;
		# the same valid f_k before and after planning: the plan must use it
		return ('wrong', "$q->[0]: plan without f_k although f_k ($before) was valid:\n$plan")
		  if !$valid && $before =~ /\d/ && $before eq $after;
		return ('wrong', "$q->[0]: plan is not $q->[1]:\n$plan") if $valid && $plan !~ $q->[2];
		return ('wrong', "$q->[0] at $key: lsm answered\n$fa\nbtree answered\n$ga") if ($fa // '') ne ($ga // '');
		return ('ok', '');
	});
}

# the operator
my @ops = (
	'VACUUM f',
	"SELECT lsm_am.compact('f_k')",
	'REINDEX INDEX CONCURRENTLY f_k',
	"DROP INDEX CONCURRENTLY f_k;\nCREATE INDEX CONCURRENTLY f_k ON f USING lsm (k) WITH (memtable_size = 256)",
	"ALTER INDEX f_k SET (compaction = 'tiered')",
	"ALTER INDEX f_k SET (compaction = 'leveled')",
	'CHECKPOINT',
	'KILL');
push @pids, child('operator', sub {
	sleep 2;
	my $op = $ops[int(rand(@ops))];
	if ($op eq 'KILL')
	{
		my ($ok, $pid) = run_sql("SELECT pid FROM pg_stat_activity WHERE backend_type = 'lsm_am worker' LIMIT 1");
		return ('ok', '') unless $ok && $pid =~ /^(\d+)$/;
		kill 'KILL', $1;
		return ('ok', '');
	}
	# a DDL a restart interrupted leaves an invalid index: clean up first
	my ($iok, $invalid) = run_sql("SELECT string_agg(c.relname, ' ') FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
		WHERE i.indrelid = 'f'::regclass AND NOT i.indisvalid");
	if ($iok && $invalid =~ /\S/)
	{
		run_sql("DROP INDEX CONCURRENTLY $_") for split ' ', $invalid;
	}
	my ($mok, $missing) = run_sql("SELECT count(*) FROM pg_class WHERE relname = 'f_k'");
	run_sql("CREATE INDEX CONCURRENTLY f_k ON f USING lsm (k) WITH (memtable_size = 256)")
	  if $mok && $missing eq '0';
	my ($ok, $out, $err) = run_sql($op);
	return classify($ok, $err);
});

waitpid($_, 0) for @pids;
ok(1, "$SECONDS s of soak ran");

# every client's counts
my %total = (ok => 0, expected => 0, unexpected => 0, wrong => 0);
for my $name ((map { "writer$_" } 0 .. $WRITERS - 1), (map { "reader$_" } 0 .. $READERS - 1), 'operator')
{
	my $res = -f "$dir/$name.out" ? slurp_file("$dir/$name.out") : 'missing';
	note "$name: $res";
	my ($line) = split /\n/, $res;
	for my $kv (split ' ', $line // '')
	{
		my ($k, $v) = split /=/, $kv;
		$total{$k} += $v if defined $v;
	}
	unlike($res, qr/\bwrong=[1-9]/, "$name: no wrong answer") or diag $res;
	unlike($res, qr/unexpected=[1-9]/, "$name: no unexpected error") or diag $res;
}
cmp_ok($total{ok}, '>', 20, "the clients did work ($total{ok} transactions; $total{expected} met a restart)");

# the server is up; nothing is left waiting
$node->poll_query_until('postgres', 'SELECT true') or die 'the server did not come back';
ok(wait_until($node, q{SELECT count(*) = 0 FROM pg_stat_activity
	WHERE backend_type = 'client backend' AND pid <> pg_backend_pid() AND state <> 'idle'},
		'the client backends ending',
		[ q{SELECT pid, state, wait_event_type, wait_event, left(query, 60) FROM pg_stat_activity
			WHERE backend_type = 'client backend' AND pid <> pg_backend_pid() AND state <> 'idle'},
		  'SELECT pid, locktype, relation::regclass, mode, granted FROM pg_locks WHERE NOT granted' ]),
	'no client backend left running or waiting');
# an index that a restart interrupted the rebuild of: put it back
my $invalid = sql("SELECT string_agg(c.relname, ' ') FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
	WHERE i.indrelid = 'f'::regclass AND NOT i.indisvalid");
sql("DROP INDEX $_") for split ' ', $invalid;
sql("CREATE INDEX f_k ON f USING lsm (k) WITH (memtable_size = 256)")
  if sql("SELECT count(*) FROM pg_class WHERE relname = 'f_k'") eq '0';

# no row lost: every scan type of f_k against the btree twin
my $want = sql('SELECT count(*), coalesce(sum(k), 0), coalesce(sum(v), 0) FROM g');
for my $scan (['SET enable_seqscan = off; SET enable_bitmapscan = off; SET enable_indexonlyscan = off;', qr/Index Scan using f_k/, 'index scan', 'sum(v)'],
	['SET enable_seqscan = off; SET enable_indexscan = off;', qr/Bitmap Index Scan on f_k/, 'bitmap scan', 'sum(v)'],
	['SET enable_seqscan = off; SET enable_bitmapscan = off;', qr/Index Only Scan using f_k/, 'index-only scan', '0'])
{
	my $got = query_planned($sess, 'postgres', $scan->[0],
		"SELECT count(*), coalesce(sum(k), 0), coalesce($scan->[3], 0) FROM f WHERE k >= 0",
		$scan->[1], "after the soak: $scan->[2]");
	my $w = $want;
	$w =~ s/\|[^|]*$/|0/ if $scan->[3] eq '0';
	is($got, $w, "after the soak: the $scan->[2] of f_k finds every row of the btree twin");
}
is(sql("SELECT leaked_pages + dropped_pages FROM lsm_am.check_index('f_k')"), '0',
	'after the soak: check_index finds no leaked page');
my ($vret, $vout, $verr) = $node->psql('postgres', "SELECT lsm_am.verify('f_k', true)");
is("$vret$vout$verr", '0', 'after the soak: verify(f_k, true) finds f_k sound and complete');
sql("SELECT lsm_am.compact('f_k')");
sql('CHECKPOINT');
sql("SELECT lsm_am.compact('f_k')");
my ($total, $live) = split /\|/, sql("SELECT total_pages, 1 + log_pages + run_pages FROM lsm_am.check_index('f_k')");
ok($total <= 1.5 * $live + 16, "after compact(), the file ($total pages) is near its live pages ($live)");
unlike(slurp_file($node->logfile), qr/TRAP:|PANIC:  (?!lsm_am: fault)/, 'no assertion failure and no PANIC in the server log');

$node->stop;
done_testing();
