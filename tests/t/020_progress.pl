# Watching lsm_am work (issue 15, items 3-5): a flush, a compaction and a
# VACUUM pass are visible while they run.  lsm_am.flush_delay_ms (a test
# hook) makes every page written take that long, so each job lasts seconds
# whatever the machine's load; every wait below polls with a timeout.
# Checked:
#  (a) the launcher and an idle worker in pg_stat_activity: backend_type,
#      the worker's wait event while idle;
#  (b) a worker's flush: lsm_am.progress shows kind, index, table, level,
#      pages done growing towards the total, the worker's pid; the worker's
#      pg_stat_activity row names the job and the schema-qualified index;
#      when it ends, the progress row goes and the worker is idle again;
#      lsm_am.wait_for_merges() meanwhile holds no lock on the index while
#      it sleeps (it would keep a worker's idle shrink from the index);
#  (c) lsm_am.compact() in a backend: a compaction row with its input runs
#      and levels; a role without SELECT on the table sees no row of it,
#      with SELECT (or pg_read_all_stats) it does;
#  (d) VACUUM: the pass over the runs shows in lsm_am.progress with the pid
#      of pg_stat_progress_vacuum's row ("vacuuming indexes");
#  (e) lsm_am.log_maintenance: one LOG line per flush and compaction with
#      inputs, output, WAL and duration, none while it is off;
#  (f) lsm_am.indexes: last flush and compaction times set, the counts
#      agree with maintenance_stats; the index still answers as a sequential scan
#      does and check_index accounts for every page.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep time);
use FindBin;
use lib $FindBin::RealBin;
use LsmPlan;
use LsmCluster;

my $node = PostgreSQL::Test::Cluster->new('progress');
$node->init(extra => [ initdb_args() ]);
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'lsm_am'
lsm_am.max_workers = 1
lsm_am.worker_naptime = 100ms
lsm_am.worker_idle_timeout = 1h
lsm_am.l0_compaction_trigger = 64
lsm_am.log_maintenance = on
autovacuum = off
});
$node->start;

sub sql { return $node->safe_psql('postgres', $_[0]); }

# Poll $q until it returns $want (or matches it, a Regexp); 180 s at most
# (timeout_default), then fails with what it saw, the workers and the jobs.
sub poll_until
{
	my ($q, $want, $what) = @_;
	my $got = '';
	my $deadline = time + $PostgreSQL::Test::Utils::timeout_default;
	while (time < $deadline)
	{
		$got = sql($q);
		if (ref $want ? $got =~ $want : $got eq $want)
		{
			pass($what);
			return $got;
		}
		usleep(100_000);
	}
	fail("$what (last: '$got')");
	diag(show($node, $WORKERS, 'SELECT * FROM lsm_am.progress'));
	return $got;
}

sub server_set
{
	my ($name, $value) = @_;
	sql(defined $value ? "ALTER SYSTEM SET $name = '$value'" : "ALTER SYSTEM RESET $name");
	sql('SELECT pg_reload_conf()');
	my $want = defined $value ? $value : '0';
	$node->poll_query_until('postgres',
		"SELECT setting = '$want' FROM pg_settings WHERE name = '$name'")
	  or die "$name did not become $want";
}

sql(q{
CREATE EXTENSION lsm_am;
CREATE TABLE t (k int8, v int);
CREATE INDEX t_k ON t USING lsm (k) WITH (memtable_size = 256);
CREATE ROLE watcher LOGIN;
CREATE ROLE stats_reader LOGIN IN ROLE pg_read_all_stats;
SELECT setseed(0.2);
});

# ------------------------------------------------------------ (a) the launcher
poll_until(q{SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'lsm_am launcher'},
	'1', 'the launcher shows as backend_type "lsm_am launcher"');

# ------------------------------------------------------------ (b) a worker's flush
# 1 s a page: the flush (10 pages or more) must still run when the checks
# below look at it, each a round trip of a second or more on a loaded machine
# (at 300 ms it had ended before lsm_am.indexes was read, in two rounds of
# the suite on 15 and 18 at once, load average 14)
server_set('lsm_am.flush_delay_ms', 1000);
my $logpos = -s $node->logfile;
# some 10,000 entries fill the 256 kB memtable: one switch, one flush
sql(q{INSERT INTO t SELECT (random() * 1e12)::int8, g FROM generate_series(1, 14000) g});
my $row = poll_until(q{SELECT p.pid || '|' || p.relid || '|' || p.output_level || '|' || p.input_runs
	|| '|' || p.pages_total FROM lsm_am.progress p WHERE p.indexrelid = 't_k'::regclass AND p.kind = 'flush'},
	qr/^\d+\|t\|0\|0\|\d+$/, 'a flush of t_k shows in lsm_am.progress (table, level 0, no input run)');
my ($wpid, undef, undef, undef, $total) = split /\|/, $row;
cmp_ok($total, '>=', 10, "the flush expects $total pages");
is(sql("SELECT backend_type FROM pg_stat_activity WHERE pid = $wpid"), 'lsm_am worker',
	'the flush runs in an lsm_am worker');
like(sql("SELECT state || ' ' || query FROM pg_stat_activity WHERE pid = $wpid"),
	qr/^active lsm_am flush of index public\.t_k: memtable of \d+ entries into level 0$/,
	"the worker's query names the job and the index");
poll_until(qq{SELECT pages_done >= 3 AND pages_done <= pages_total FROM lsm_am.progress
	WHERE pid = $wpid AND kind = 'flush'}, 't', 'pages done grow towards the total');
is(sql("SELECT running FROM lsm_am.indexes WHERE indexrelname = 't_k'"), 'flush',
	'lsm_am.indexes shows the flush running');
# wait_for_merges() while the flush runs: it locks the index only while it
# looks, not while it sleeps (a worker's idle shrink needs the lock at once)
my $waiter = $node->background_psql('postgres');
my $wtpid = $waiter->query_safe('SELECT pg_backend_pid()');
$wtpid =~ s/\s+//g;
$waiter->query_until(qr/waiting/, q{\echo waiting
SELECT lsm_am.wait_for_merges('t_k', '5 minutes');
});
poll_until(qq{SELECT wait_event_type FROM pg_stat_activity WHERE pid = $wtpid}, 'Extension',
	'wait_for_merges() waits for the flush');
my $held = 0;
for (1 .. 10)
{
	$held++ if sql(qq{SELECT count(*) FROM pg_locks WHERE pid = $wtpid AND relation = 't_k'::regclass}) ne '0';
	usleep(100_000);
}
is(sql(qq{SELECT count(*) FROM lsm_am.progress WHERE pid = $wpid AND kind = 'flush'}), '1',
	'the flush still ran after those looks');
cmp_ok($held, '<', 10, "wait_for_merges() holds no lock on the index while it sleeps (held in $held of 10 looks)");
server_set('lsm_am.flush_delay_ms', undef);
like($waiter->query_safe('SELECT 1'), qr/^t$/m, 'wait_for_merges() returns true when the flush is done');
$waiter->quit;
poll_until(q{SELECT count(*) FROM lsm_am.progress}, '0', 'the progress row goes when the flush ends');
poll_until(qq{SELECT state FROM pg_stat_activity WHERE pid = $wpid}, 'idle', 'the worker is idle again');
like(sql("SELECT wait_event_type || ' ' || wait_event FROM pg_stat_activity WHERE pid = $wpid"),
	qr/^Extension (Extension|LsmWorkerIdle)$/, 'an idle worker waits on its wait event');
is(sql(q{SELECT flushes >= 1 AND last_flush IS NOT NULL AND last_flush <= now() AND running IS NULL
	FROM lsm_am.indexes WHERE indexrelname = 't_k'}), 't', 'lsm_am.indexes has the last flush');

# ------------------------------------------------------------ (c) compact() in a backend
sql(q{SELECT lsm_am.flush('t_k')});
sql(q{INSERT INTO t SELECT (random() * 1e12)::int8, g FROM generate_series(1, 3000) g});
sql(q{SELECT lsm_am.flush('t_k')});
my $runs = sql(q{SELECT count(*) FROM lsm_am.index_info('t_k')});
cmp_ok($runs, '>=', 2, "$runs runs to compact");
my $compactor = $node->background_psql('postgres');
$compactor->query_safe('SET lsm_am.flush_delay_ms = 500');
my $cpid = $compactor->query_safe('SELECT pg_backend_pid()');
$cpid =~ s/\s+//g;
$compactor->query_until(qr/start/, q{\echo start
SELECT lsm_am.compact('t_k');
});
poll_until(qq{SELECT kind || ' ' || input_runs || ' ' || array_to_string(input_levels, ',') || ' '
	|| (pages_total > 0) FROM lsm_am.progress WHERE pid = $cpid},
	"compaction $runs 0 true", 'compact() shows as a compaction of every run in lsm_am.progress');
is($node->safe_psql('postgres', 'SELECT count(*) FROM lsm_am.progress', extra_params => [ '-U', 'watcher' ]),
	'0', 'a role without SELECT on the table sees no progress row');
is($node->safe_psql('postgres', 'SELECT count(*) FROM lsm_am.indexes', extra_params => [ '-U', 'watcher' ]),
	'0', 'nor a row of lsm_am.indexes');
is($node->safe_psql('postgres', "SELECT count(*) FROM lsm_am.progress WHERE pid = $cpid",
		extra_params => [ '-U', 'stats_reader' ]),
	'1', 'a member of pg_read_all_stats sees it');
sql('GRANT SELECT ON t TO watcher');
is($node->safe_psql('postgres', "SELECT count(*) FROM lsm_am.progress WHERE pid = $cpid",
		extra_params => [ '-U', 'watcher' ]),
	'1', 'with SELECT on the table the role sees it');
sql('REVOKE SELECT ON t FROM watcher');
$compactor->query_safe('SET lsm_am.flush_delay_ms = 0');	# queued after compact()
$compactor->quit;
poll_until(qq{SELECT count(*) FROM lsm_am.progress WHERE pid = $cpid}, '0', 'compact() ended');
is(sql(q{SELECT count(*) FROM lsm_am.index_info('t_k')}), '1', 'compact() left one run');

# ------------------------------------------------------------ (d) VACUUM
sql(q{DELETE FROM t WHERE v % 3 = 0});
my $vacuum = $node->background_psql('postgres');
$vacuum->query_safe('SET lsm_am.flush_delay_ms = 200');
my $vpid = $vacuum->query_safe('SELECT pg_backend_pid()');
$vpid =~ s/\s+//g;
$vacuum->query_until(qr/start/, q{\echo start
VACUUM (INDEX_CLEANUP on, PARALLEL 0) t;
});
poll_until(qq{SELECT p.kind || ' ' || v.phase FROM lsm_am.progress p
	JOIN pg_stat_progress_vacuum v USING (pid) WHERE p.pid = $vpid AND p.kind = 'vacuum'},
	'vacuum vacuuming indexes', "VACUUM's pass over the runs joins pg_stat_progress_vacuum by pid");
$vacuum->quit;
poll_until(qq{SELECT count(*) FROM pg_stat_activity WHERE pid = $vpid}, '0', 'VACUUM ended');

# ------------------------------------------------------------ (e) the log
my $log = slurp_file($node->logfile, $logpos);
like($log,
	qr/LOG:  lsm_am flush of index "public\.t_k": input: memtable of \d+ entries; output: 1 run at level 0 \(\d+ entries, \d+ pages\); WAL: \d+ bytes; duration: \d+\.\d{3} s/,
	'log_maintenance logs a flush');
like($log,
	qr/LOG:  lsm_am compaction of index "public\.t_k": input: $runs runs at level 0 \(\d+ entries, \d+ pages\); output: 1 run at level \d+ \(\d+ entries, \d+ pages\); WAL: \d+ bytes; duration: \d+\.\d{3} s/,
	'log_maintenance logs a compaction');
# entries out of a flush of a memtable with no dead entry: as many as in
my @flushes = $log =~ /flush of index "public\.t_k": input: memtable of (\d+) entries; output: 1 run at level 0 \((\d+) entries/g;
ok(@flushes >= 2 && $flushes[0] == $flushes[1], "a flush writes the memtable's entries ($flushes[0])");
$logpos = -s $node->logfile;
sql(q{SET lsm_am.log_maintenance = off;
INSERT INTO t SELECT (random() * 1e12)::int8, g FROM generate_series(1, 500) g;
SELECT lsm_am.compact('t_k')});
unlike(slurp_file($node->logfile, $logpos), qr/lsm_am (flush|compaction) of index/,
	'no line while lsm_am.log_maintenance is off');
my ($ret, $out, $err) = $node->psql('postgres', 'SET lsm_am.log_maintenance = off',
	extra_params => [ '-U', 'watcher' ]);
like($err, qr/permission denied to set parameter "lsm_am\.log_maintenance"/,
	'only a superuser sets lsm_am.log_maintenance');

# ------------------------------------------------------------ (f) the index
is(sql(q{SELECT i.flushes = m.flushes AND i.compactions = m.compactions + m.trivial_moves
	AND i.runs_per_level = m.runs_per_level AND i.last_compaction IS NOT NULL
	FROM lsm_am.indexes i, lsm_am.maintenance_stats('t_k') m WHERE i.indexrelname = 't_k'}),
	't', 'lsm_am.indexes agrees with maintenance_stats');
my $q = 'SELECT count(*), sum(k) FROM t WHERE k >= 0';
my $lsm = query_planned($node, 'postgres', 'SET enable_seqscan = off; SET enable_bitmapscan = off; SET enable_indexonlyscan = off;',
	"/* t_k */ $q", qr/Index Scan using t_k/, 'the lsm index after the watched jobs');
my $heap = sql("SET enable_indexscan = off; SET enable_bitmapscan = off; SET enable_indexonlyscan = off; $q");
is($lsm, $heap, 'the lsm index answers as the heap does');
is(sql(q{SELECT leaked_pages FROM lsm_am.check_index('t_k')}), '0', 'check_index accounts for every page');
is(sql(q{SELECT lsm_am.verify('t_k', true)}), '', 'verify(t_k, true): sound and complete after the watched jobs');
unlike(slurp_file($node->logfile), qr/PANIC|TRAP|terminated by signal/, 'no crash in the whole run');
$node->stop;
done_testing();
