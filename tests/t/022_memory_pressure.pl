# 022_memory_pressure.pl — a full memtable arena slows inserts down, it
# never fails them (issue 16, item 4).
#
# lsm_am.memory is one shared arena for the memtables of every lsm index.
# With it small (2 MB: 32 chunks of 64 kB) and 20 indexes written by 4
# clients at once, one table's load must not make another table's inserts
# fail with "out of lsm_am shared memory": the arena works as a write buffer
# (RocksDB's write buffer manager): when it nears full, the largest
# memtables are switched and flushed, and an insert that finds no room
# waits for it (interruptibly, counted as a stall) instead of raising an
# ERROR.  Run with workers (they flush) and without (the waiting backends
# make room themselves, by evicting memtables whose entries are in their
# log pages).  Afterwards every index answers like its heap and accounts
# for every page.
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

my $NTAB = 20;
my $SECONDS = $ENV{LSM_PRESSURE_SECONDS} // 20;

my $node = PostgreSQL::Test::Cluster->new('pressure');
$node->init(extra => [ initdb_args() ]);
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'lsm_am'
lsm_am.memory = 2
lsm_am.max_indexes = 64
autovacuum = off
max_connections = 30
});
$node->start;

# one connection for the many small queries (tests/t/LsmSession.pm)
my $sess = LsmSession->new($node);
sub sql { return $sess->safe_psql('postgres', $_[0]); }

sql('CREATE EXTENSION lsm_am');
for my $i (1 .. $NTAB)
{
	sql("CREATE TABLE p$i (k bigint, v text);
	     CREATE INDEX p${i}_k ON p$i USING lsm (k)");
}

my $dir = PostgreSQL::Test::Utils::tempdir;
my $script = "$dir/insert.sql";
open(my $fh, '>', $script) or die;
print $fh "\\set t random(1, $NTAB)\n";
print $fh "INSERT INTO p:t SELECT (random() * 1e12)::int8, md5(g::text) FROM generate_series(1, 300) g;\n";
close $fh;

sub phase
{
	my ($what) = @_;
	my $pos = -s $node->logfile;
	my @cmd = ('pgbench', '-n', '-c', '4', '-j', '2', '-T', $SECONDS, '-f', $script,
		'-h', $node->host, '-p', $node->port, 'postgres');
	my ($out, $err) = ('', '');
	my $ok = IPC::Run::run(\@cmd, '>', \$out, '2>', \$err);
	ok($ok, "$what: 4 clients inserting into $NTAB indexes for $SECONDS s: no client failed")
	  or diag $err;
	like($out, qr/number of failed transactions: 0|number of transactions actually processed: [1-9]/,
		"$what: the clients did work");
	unlike($err, qr/out of lsm_am shared memory/, "$what: no insert ran out of lsm_am shared memory");
	my $log = slurp_file($node->logfile, $pos);
	unlike($log, qr/ERROR|PANIC|TRAP/, "$what: no ERROR in the server log");
	my $stalls = sql("SELECT sum(s.stops + s.slowdowns) FROM generate_series(1, $NTAB) i,
		lsm_am.maintenance_stats(('p' || i || '_k')::regclass) s");
	note "$what: $stalls stalls";
	for my $i (1 .. $NTAB)
	{
		my $want = sql("SET enable_indexscan = off; SET enable_bitmapscan = off; SELECT count(*), coalesce(sum(k), 0) FROM p$i");
		my $got = query_planned($sess, 'postgres',
			'SET enable_seqscan = off; SET enable_bitmapscan = off; SET enable_indexonlyscan = off;',
			"SELECT count(*), coalesce(sum(k), 0) FROM p$i WHERE k >= 0",
			qr/Index Scan using p${i}_k/, "$what: p$i");
		is($got, $want, "$what: p${i}_k answers like its heap");
		is(sql("SELECT leaked_pages + dropped_pages FROM lsm_am.check_index('p${i}_k')"), '0',
			"$what: p${i}_k: no leaked page");
		is(sql("SELECT lsm_am.verify('p${i}_k', true)"), '', "$what: verify(p${i}_k, true): sound and complete");
	}
	return $stalls;
}

# (whether an insert had to wait depends on timing: the stalls are noted,
# not asserted; without the write buffer both phases failed inserts)
phase('with workers');

$node->append_conf('postgresql.conf', "lsm_am.max_workers = 0\n");
$node->reload;
wait_until($sess, "SELECT count(*) = 0 FROM pg_stat_activity WHERE backend_type = 'lsm_am worker'",
	'the workers exiting (max_workers = 0)', $WORKERS)
  or die 'workers did not exit';
phase('without workers');

$node->stop;
done_testing();
