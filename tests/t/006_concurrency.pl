# Concurrent inserts, flushes, merges, VACUUM and scans: no scan may miss an
# entry or return one twice while the index changes shape under it.
#
# A fixed set of 20,000 rows (keys 1..20000, never modified) is checked by
# readers over and over (bitmap, plain and index-only scans, forward and
# backward) while writers insert random keys above 1,000,000 into a tiny
# memtable (a memtable switch every ~2,000 rows, flushed by a background
# worker; every second level-0 run starts a compaction) and a deleter +
# VACUUM churn other rows.  A reader that sees anything but exactly the fixed
# set raises an error, which fails its pgbench client.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use LsmPlan;
use LsmCluster;

my $node = PostgreSQL::Test::Cluster->new('concurrency');
$node->init(extra => [ initdb_args() ]);
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'lsm_am'
lsm_am.l0_compaction_trigger = 2
autovacuum = off
});
$node->start;
create_assert_plan($node, 'postgres');	# checks assert the plan they claim to test

$node->safe_psql('postgres', q{
CREATE EXTENSION lsm_am;
CREATE TABLE t (k int8 NOT NULL, tag int NOT NULL DEFAULT 0);
INSERT INTO t SELECT g, 1 FROM generate_series(1, 20000) g;
CREATE INDEX t_k ON t USING lsm (k) WITH (memtable_size = 64);
VACUUM ANALYZE t;

-- raises unless the fixed rows are seen exactly once each
CREATE FUNCTION check_fixed(kind text) RETURNS void LANGUAGE plpgsql AS $$
DECLARE n bigint; s numeric; d bigint;
BEGIN
  SET LOCAL enable_seqscan = off;
  IF kind = 'bitmap' THEN
    SET LOCAL enable_indexscan = off; SET LOCAL enable_indexonlyscan = off;
    PERFORM assert_plan('SELECT count(*), sum(k) FROM t WHERE k BETWEEN 1 AND 20000', 'Bitmap Index Scan on t_k ');
    SELECT count(*), sum(k) INTO n, s FROM t WHERE k BETWEEN 1 AND 20000;
  ELSIF kind = 'index' THEN
    SET LOCAL enable_bitmapscan = off; SET LOCAL enable_indexonlyscan = off;
    PERFORM assert_plan('SELECT count(*), sum(k) FROM (SELECT k, tag FROM t WHERE k BETWEEN 1 AND 20000 ORDER BY k) x', 'Index Scan using t_k ');
    SELECT count(*), sum(k) INTO n, s FROM (SELECT k, tag FROM t WHERE k BETWEEN 1 AND 20000 ORDER BY k) x;
  ELSIF kind = 'ios' THEN
    SET LOCAL enable_bitmapscan = off;
    PERFORM assert_plan('SELECT count(*), sum(k) FROM (SELECT k FROM t WHERE k <= 20000 ORDER BY k DESC) x', 'Index Only Scan Backward using t_k ');
    SELECT count(*), sum(k) INTO n, s FROM (SELECT k FROM t WHERE k <= 20000 ORDER BY k DESC) x;
  ELSE
    SET LOCAL enable_bitmapscan = off;
    PERFORM assert_plan('SELECT k FROM t WHERE k >= 1 AND k <= 20000 ORDER BY k DESC LIMIT 20000', 'Index Only Scan Backward using t_k ');
    SELECT count(*), count(DISTINCT k) INTO n, d FROM (SELECT k FROM t WHERE k >= 1 AND k <= 20000 ORDER BY k DESC LIMIT 20000) x;
    s := 200010000;
    IF d <> n THEN RAISE EXCEPTION 'duplicates: % rows, % distinct', n, d; END IF;
  END IF;
  IF n <> 20000 OR s <> 200010000 THEN
    RAISE EXCEPTION '% scan saw % rows (sum %), expected 20000 (sum 200010000)', kind, n, s;
  END IF;
END $$;
});

my $dir = PostgreSQL::Test::Utils::tempdir;
my %scripts = (
	'insert.sql' => "INSERT INTO t (k) SELECT 1000000 + (random() * 1e9)::int8 FROM generate_series(1, 50);\n",
	'churn.sql' => "DELETE FROM t WHERE k > 1000000 AND k % 97 = (random() * 96)::int;\n",
	'read.sql' => "\\set r random(1, 4)\nSELECT check_fixed((ARRAY['bitmap','index','ios','dup'])[:r]);\n",
);
for my $f (keys %scripts)
{
	open(my $fh, '>', "$dir/$f") or die;
	print $fh $scripts{$f};
	close $fh;
}

my ($stdout, $stderr);
my $ok = IPC::Run::run(
	[
		'pgbench', '-n', '-h', $node->host, '-p', $node->port,
		'-c', '4', '-j', '2', '-T', '40',
		'-f', "$dir/insert.sql\@4", '-f', "$dir/read.sql\@4",
		'-f', "$dir/churn.sql\@1", 'postgres'
	],
	'>', \$stdout, '2>', \$stderr);
note $stdout;
ok($ok, 'pgbench run with concurrent readers finished without errors')
  or diag $stderr;
unlike($stdout . $stderr, qr/saw \d+ rows|duplicates/, 'no reader saw a wrong set');

# second phase: readers while VACUUM and explicit flushes run
my $bg = IPC::Run::start(
	[
		'pgbench', '-n', '-h', $node->host, '-p', $node->port,
		'-c', '2', '-j', '2', '-T', '20',
		'-f', "$dir/insert.sql\@2", '-f', "$dir/read.sql\@4", 'postgres'
	],
	'>', \my $out2, '2>', \my $err2);
for (1 .. 8)
{
	$node->safe_psql('postgres', 'DELETE FROM t WHERE k > 1000000 AND k % 5 = 0');
	$node->safe_psql('postgres', 'VACUUM t');
	$node->safe_psql('postgres', "SELECT lsm_am.flush('t_k')");
}
my $bgok = $bg->finish;
ok($bgok, 'readers during VACUUM and flushes saw exactly the fixed rows')
  or diag $err2;

# the index agrees with the heap at the end
my $idx = $node->safe_psql('postgres', q{
SET enable_seqscan = off; SET enable_bitmapscan = off;
SELECT count(*), sum(k) FROM t WHERE k >= 0});
my $heap = $node->safe_psql('postgres', q{
SET enable_indexscan = off; SET enable_indexonlyscan = off; SET enable_bitmapscan = off;
SELECT count(*), sum(k) FROM t WHERE k >= 0});
is($idx, $heap, 'index scan and seqscan agree after the run');
is(merges_done($node, 't_k'), 't',
	'pending flushes and compactions finish');
is($idx, $node->safe_psql('postgres', q{
SET enable_seqscan = off; SET enable_bitmapscan = off;
SELECT count(*), sum(k) FROM t WHERE k >= 0}), 'index scan agrees after the last compactions');
my ($l0, $maxl, $flushes, $compactions) = split /\|/, $node->safe_psql('postgres', q{
SELECT coalesce(runs_per_level[1], 0), (SELECT coalesce(max(n), 0) FROM unnest(runs_per_level[2:]) n),
       flushes, compactions
FROM lsm_am.maintenance_stats('t_k')});
note("t_k: $flushes flushes, $compactions compactions, "
	  . $node->safe_psql('postgres', "SELECT runs_per_level FROM lsm_am.maintenance_stats('t_k')"));
cmp_ok($flushes, '>', 10, 'the writers caused many flushes');
cmp_ok($compactions, '>', 0, 'and compactions');
cmp_ok($l0, '<', 2, 'compactions leave fewer level-0 runs than lsm_am.l0_compaction_trigger');
# leveled: a level >= 1 is one run cut into pieces (any number of runs),
# whose key ranges are disjoint
note("fullest level >= 1: $maxl runs");
is($node->safe_psql('postgres', q{
SELECT count(*) FROM lsm_am.index_info('t_k') a JOIN lsm_am.index_info('t_k') b
  ON a.level = b.level AND a.level > 0 AND a.run_id < b.run_id
WHERE btrim(a.smallest_key, '()')::int8 <= btrim(b.largest_key, '()')::int8
  AND btrim(b.smallest_key, '()')::int8 <= btrim(a.largest_key, '()')::int8}),
	'0', 'no two runs of a level >= 1 overlap');
my ($ret, $out, $err) = $node->psql('postgres',
	"SELECT leaked_pages, dropped_pages, reserved_pages FROM lsm_am.check_index('t_k')");
is("$out$err", '0|0|0', 'check_index: every page accounted for, none leaked');
($ret, $out, $err) = $node->psql('postgres', "SELECT lsm_am.verify('t_k', true)");
is("$ret$out$err", '0', 'verify(t_k, true): sound and complete after the concurrent run');

$node->stop;
done_testing();
