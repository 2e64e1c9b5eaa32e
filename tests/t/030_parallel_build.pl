# 030_parallel_build.pl — parallel CREATE INDEX, REINDEX and CREATE INDEX
# CONCURRENTLY (issue 35, item 1).
#
# A table of random rows (duplicate keys, NULLs, deleted and updated rows,
# HOT chains) and lsm indexes of every shape the build treats differently:
# one column, text with a collation and a DESC column, INCLUDE values, an
# expression with a predicate, UNIQUE.  Each index is built serially
# (max_parallel_maintenance_workers = 0) and with workers; the log line of
# the build must say how many workers came, and the two indexes must be the
# same page for page (every block but the metapage, whose instance id is
# random, compared past the page LSN and checksum), answer a set of queries
# as a btree twin does, and pass verify(heapallindexed).  Then: a parallel
# UNIQUE build reports the duplicate a serial build reports; the table's
# parallel_workers is honoured; no worker to be had gives a serial build;
# fewer workers than asked for; VACUUM FULL and CLUSTER rebuild a UNIQUE
# index with workers (without the uniqueness check, as PostgreSQL does);
# REINDEX, REINDEX CONCURRENTLY and CREATE INDEX CONCURRENTLY run with
# workers; a worker's ERROR fails the build and leaves no index; a PANIC in
# a worker (an immediate crash mid-build) leaves, after recovery, no index
# and a table that takes a new build.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use LsmCluster;

my $node = PostgreSQL::Test::Cluster->new('parbuild');
$node->init(extra => [ initdb_args() ]);
$node->append_conf(
	'postgresql.conf', q{
shared_preload_libraries = 'lsm_am'
autovacuum = off
max_worker_processes = 12
max_parallel_workers = 8
max_parallel_maintenance_workers = 2
maintenance_work_mem = '128MB'
min_parallel_table_scan_size = 0
restart_after_crash = on
});
$node->start;
sub sql { return $node->safe_psql('postgres', $_[0]); }

sql('CREATE EXTENSION lsm_am');
sql('CREATE EXTENSION pageinspect');
sql(q{
CREATE TABLE t (id int8 PRIMARY KEY, k int8, s text, u uuid, ts timestamptz, j jsonb);
SELECT setseed(0.35);
INSERT INTO t
SELECT g, (random() * 50000)::int8,
       CASE WHEN random() < 0.1 THEN NULL ELSE substr(md5(random()::text), 1, (random() * 12)::int) END,
       md5(random()::text)::uuid,
       timestamptz '2024-01-01 00:00+00' + random() * interval '400 days',
       CASE WHEN random() < 0.1 THEN NULL ELSE jsonb_build_object('n', g, 'x', md5(g::text)) END
  FROM generate_series(1, 150000) g;
DELETE FROM t WHERE id % 11 = 0;
UPDATE t SET ts = ts + interval '1 day' WHERE id % 13 = 0;	-- HOT chains
UPDATE t SET k = k + 1 WHERE id % 17 = 0;					-- not HOT
});

# Build index NAME with DEF ($uniq: 'UNIQUE ' or undef); $workers: 0
# serial, else the workers expected.
# Returns the build's stderr (DEBUG lines).
sub build
{
	my ($name, $def, $workers, $uniq) = @_;
	my $set = $workers == 0
	  ? 'SET max_parallel_maintenance_workers = 0;'
	  : "SET max_parallel_maintenance_workers = $workers;";
	my ($rc, $out, $err) = $node->psql('postgres',
		"$set SET client_min_messages = debug1; CREATE " . ($uniq // '') . "INDEX $name ON $def");
	is($rc, 0, "$name: built") or diag($err);
	if ($workers == 0)
	{
		unlike($err, qr/parallel workers launched/, "$name: serial");
	}
	else
	{
		like($err, qr/lsm build of "$name": $workers parallel workers launched of $workers requested/,
			"$name: $workers workers");
	}
	return $err;
}

# Every block but the metapage equal past LSN and checksum (10 bytes).
sub same_pages
{
	my ($a, $b, $what) = @_;
	my $r = sql(qq{
SELECT pg_relation_size('$a') = pg_relation_size('$b'),
       (SELECT count(*) FROM generate_series(1, pg_relation_size('$a') / 8192 - 1) b
         WHERE substr(get_raw_page('$a', b::int), 11) <> substr(get_raw_page('$b', b::int), 11)),
       pg_relation_size('$a') / 8192});
	my ($samesize, $ndiff, $nblocks) = split /\|/, $r;
	is("$samesize|$ndiff", 't|0', "$what: the same $nblocks pages as the serial build");
}

# The index's answers against a btree twin, plans forced.
sub same_answers
{
	my ($idx, $bt, @queries) = @_;
	my $force = 'SET enable_seqscan = off; SET enable_bitmapscan = off;';
	for my $q (@queries)
	{
		# the btree twin out of the way, in a transaction rolled back
		my $plan = sql("BEGIN; DROP INDEX $bt; $force EXPLAIN (COSTS OFF) $q; ROLLBACK");
		like($plan, qr/Index (Only )?Scan.* using $idx/, "$idx: lsm plan for: $q");
		my $lsm = sql("BEGIN; DROP INDEX $bt; $force $q; ROLLBACK");
		my $btree = sql("$force $q");
		is($lsm, $btree, "$idx answers as btree: $q");
	}
}

# ------------------------------------------------------------ 1. the shapes
my @shapes = (
	[ k => 't USING lsm (k)', 't USING btree (k)',
	  'SELECT k, count(*) FROM t WHERE k BETWEEN 100 AND 3000 GROUP BY k ORDER BY k',
	  'SELECT id FROM t WHERE k = 4242 ORDER BY id' ],
	[ sk => 't USING lsm (s COLLATE "C", k DESC)', 't USING btree (s COLLATE "C", k DESC)',
	  q{SELECT s, k FROM t WHERE s COLLATE "C" >= 'a' AND s COLLATE "C" < 'b' ORDER BY s COLLATE "C", k DESC},
	  'SELECT count(*) FROM t WHERE s IS NULL' ],
	[ inc => 't USING lsm (u) INCLUDE (j, s)', 't USING btree (u) INCLUDE (j, s)',
	  q{SELECT u, j::text, s FROM t WHERE u < '10000000-0000-0000-0000-000000000000' ORDER BY u} ],
	[ expr => q{t USING lsm (length(s), ts) WHERE k % 2 = 0}, q{t USING btree (length(s), ts) WHERE k % 2 = 0},
	  q{SELECT length(s), ts FROM t WHERE k % 2 = 0 AND length(s) > 8 ORDER BY length(s), ts LIMIT 2000} ],
	[ uid => 't USING lsm (id)', 't USING btree (id)',
	  'SELECT id FROM t WHERE id BETWEEN 70000 AND 71000 ORDER BY id DESC' ],
);
for my $sh (@shapes)
{
	my ($n, $def, $btdef, @queries) = @$sh;
	my $uniq = $n eq 'uid' ? 'UNIQUE ' : '';
	build("s_$n", $def, 0, $uniq);
	sql("DROP INDEX IF EXISTS b_$n; CREATE ${uniq}INDEX b_$n ON $btdef");
	my ($rc, $out, $err) = $node->psql('postgres',
		"SET client_min_messages = debug1; CREATE ${uniq}INDEX p_$n ON $def");
	is($rc, 0, "p_$n: built") or diag($err);
	like($err, qr/lsm build of "p_$n": 2 parallel workers launched of 2 requested/,
		"p_$n: 2 workers");
	same_pages("s_$n", "p_$n", "p_$n");
	sql("DROP INDEX s_$n");
	same_answers("p_$n", "b_$n", @queries);
	is(sql("SELECT count(*) FROM lsm_am.verify('p_$n', true)"), '1', "p_$n: verify");
	sql("DROP INDEX p_$n, b_$n");
}

# ------------------------------------------------- 2. UNIQUE over duplicates
my $serr = build('us', 't USING lsm (k)', 0);
my ($rc, $out, $perr) = $node->psql('postgres',
	'SET client_min_messages = debug1; CREATE UNIQUE INDEX up ON t USING lsm (k)');
isnt($rc, 0, 'parallel UNIQUE over duplicate keys fails');
like($perr, qr/2 parallel workers launched/, 'parallel UNIQUE: 2 workers');
my ($rc2, $out2, $serr2) = $node->psql('postgres',
	'SET max_parallel_maintenance_workers = 0; CREATE UNIQUE INDEX up ON t USING lsm (k)');
my ($pd) = $perr =~ /(DETAIL:.*)/;
my ($sd) = $serr2 =~ /(DETAIL:.*)/;
ok(defined $pd && $pd =~ /is duplicated/, "parallel UNIQUE: $pd");
is($pd, $sd, 'parallel UNIQUE reports the duplicate a serial build reports');
sql('DROP INDEX us');
is(sql(q{SELECT count(*) FROM pg_class WHERE relname = 'up'}), '0', 'no index left');

# NULLS NOT DISTINCT: two NULLs in s are duplicates, in parallel too
sql(q{CREATE TABLE nn (a int, b text); INSERT INTO nn SELECT g, CASE WHEN g IN (5, 90000) THEN NULL ELSE g::text END FROM generate_series(1, 100000) g});
($rc, $out, $perr) = $node->psql('postgres',
	'SET client_min_messages = debug1; CREATE UNIQUE INDEX nn_b ON nn USING lsm (b) NULLS NOT DISTINCT');
isnt($rc, 0, 'parallel UNIQUE NULLS NOT DISTINCT over two NULLs fails');
like($perr, qr/[12] parallel workers launched/, 'NULLS NOT DISTINCT: with workers');
like($perr, qr/Key \(b\)=\(null\) is duplicated/, 'NULLS NOT DISTINCT: the NULLs reported');
($rc, $out, $perr) = $node->psql('postgres',
	'SET client_min_messages = debug1; CREATE UNIQUE INDEX nn_b ON nn USING lsm (b)');
is($rc, 0, 'parallel UNIQUE NULLS DISTINCT over two NULLs succeeds') or diag($perr);

# ------------------------------- 3. parallel_workers, no worker to be had
sql('ALTER TABLE t SET (parallel_workers = 1)');
build('pw1', 't USING lsm (k)', 1);
sql('ALTER TABLE t RESET (parallel_workers)');
# max_parallel_workers caps the launch: none (serial), or one of the two
for my $c ([ 0, 'pw0', 'no worker to be had', 'none launched', 'serial fallback' ],
	[ 1, 'pwf', 'fewer workers than asked for', 'one of two', 'fewer workers than asked for' ])
{
	my ($max, $idx, $what, $launched, $pages) = @$c;
	($rc, $out, $perr) = $node->psql('postgres',
		"SET max_parallel_workers = $max; SET client_min_messages = debug1; CREATE INDEX $idx ON t USING lsm (k)");
	is($rc, 0, "$what: built") or diag($perr);
	like($perr, qr/lsm build of "$idx": $max parallel workers launched of 2 requested/,
		"$what: $launched");
	same_pages('pw1', $idx, $pages);
	sql("DROP INDEX $idx");
}

# VACUUM FULL and CLUSTER rebuild a UNIQUE index without the uniqueness
# check (the caller's IndexInfo says not unique, the catalog unique): the
# participants must write the entries the leader's merge expects.
sql(q{CREATE TABLE tu (id int8, v text);
INSERT INTO tu SELECT g, md5(g::text) FROM generate_series(1, 120000) g ORDER BY random();
DELETE FROM tu WHERE id % 5 = 0;
CREATE UNIQUE INDEX uvf ON tu USING lsm (id); CREATE INDEX bvf ON tu USING btree (id)});
for my $cmd ('VACUUM FULL tu', 'CLUSTER tu USING uvf')
{
	($rc, $out, $perr) = $node->psql('postgres', "SET client_min_messages = debug1; $cmd");
	is($rc, 0, $cmd) or diag($perr);
	like($perr, qr/lsm build of "[^"]+": [12] parallel workers launched/, "$cmd: with workers");
	is(sql("SELECT count(*) FROM lsm_am.verify('uvf', true)"), '1', "$cmd: the UNIQUE index verifies");
	same_answers('uvf', 'bvf', 'SELECT id, v FROM tu WHERE id BETWEEN 5000 AND 9000 ORDER BY id');
	my ($urc, $uout, $uerr) = $node->psql('postgres', q{INSERT INTO tu VALUES (4242, 'again')});
	like($uerr, qr/duplicate key value violates unique constraint "uvf"/, "$cmd: still unique");
}
sql('DROP TABLE tu');

# ------------------------------ 4. REINDEX, REINDEX CONCURRENTLY, CIC
build('ri', 't USING lsm (s COLLATE "C")', 0);
for my $cmd ('REINDEX INDEX ri', 'REINDEX INDEX CONCURRENTLY ri')
{
	($rc, $out, $perr) = $node->psql('postgres', "SET client_min_messages = debug1; $cmd");
	is($rc, 0, "$cmd") or diag($perr);
	like($perr, qr/lsm build of "ri(_ccnew)?": 2 parallel workers launched/, "$cmd: 2 workers");
	is(sql("SELECT count(*) FROM lsm_am.verify('ri', true)"), '1', "$cmd: verify");
}
($rc, $out, $perr) = $node->psql('postgres',
	'SET client_min_messages = debug1; CREATE INDEX CONCURRENTLY cic ON t USING lsm (ts, id)');
is($rc, 0, 'CREATE INDEX CONCURRENTLY') or diag($perr);
like($perr, qr/lsm build of "cic": 2 parallel workers launched/, 'CIC: 2 workers');
is(sql(q{SELECT indisvalid FROM pg_index WHERE indexrelid = 'cic'::regclass}), 't', 'CIC: valid');
sql('CREATE INDEX b_cic ON t USING btree (ts, id)');
same_answers('cic', 'b_cic', 'SELECT ts, id FROM t WHERE ts < timestamptz \'2024-02-01\' ORDER BY ts, id');
is(sql("SELECT count(*) FROM lsm_am.verify('cic', true)"), '1', 'CIC: verify');
sql('DROP INDEX ri, cic, b_cic, pw1');

# ---------------------------------------------- 5. a worker's ERROR, PANIC
($rc, $out, $perr) = $node->psql('postgres',
	q{SET lsm_am.fault = 'build_worker:error'; CREATE INDEX fe ON t USING lsm (k)});
isnt($rc, 0, 'a worker ERROR fails the build');
like($perr, qr/fault point "build_worker" fired.*CONTEXT:\s+parallel worker/s,
	'the worker\'s ERROR reaches the client');
is(sql(q{SELECT count(*) FROM pg_class WHERE relname = 'fe'}), '0', 'ERROR: no index left');
sql('INSERT INTO t VALUES (1000001, 1, \'x\', NULL, now(), NULL)');

my $logpos = -s $node->logfile;
($rc, $out, $perr) = $node->psql('postgres',
	q{SET lsm_am.fault = 'build_worker:panic'; CREATE INDEX fp ON t USING lsm (k)});
isnt($rc, 0, 'a worker PANIC ends the build');
ok(wait_until($node, 'SELECT true', 'the server back after the PANIC'),
	'the server restarted and recovered');
my $log = substr(slurp_file($node->logfile), $logpos);
like($log, qr/PANIC:\s+lsm_am: fault point "build_worker" fired/, 'the worker PANICked');
like($log, qr/all server processes terminated; reinitializing/, 'and the server restarted');
is(sql(q{SELECT count(*) FROM pg_class WHERE relname = 'fp'}), '0', 'PANIC: no index after recovery');
build('fp', 't USING lsm (k)', 2);
is(sql("SELECT count(*) FROM lsm_am.verify('fp', true)"), '1', 'a new parallel build after the crash: verify');
is(sql('SET enable_seqscan = off; SET enable_bitmapscan = off; SELECT count(*) FROM t WHERE k BETWEEN 1 AND 300'),
	sql('SET enable_indexscan = off; SET enable_indexonlyscan = off; SET enable_bitmapscan = off; SELECT count(*) FROM t WHERE k BETWEEN 1 AND 300'),
	'and it answers as a sequential scan');

$node->stop;
done_testing();
