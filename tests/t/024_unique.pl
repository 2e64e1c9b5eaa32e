# Unique lsm indexes (issue 17), differential against btree.
#
# 1. Concurrent pgbench clients run random transactions over overlapping
#    keys on two tables, tl (unique lsm index) and tb (unique btree index):
#    each operation (INSERT, INSERT ... ON CONFLICT DO NOTHING / DO UPDATE,
#    DELETE, in savepoints that are released or rolled back, in transactions
#    that commit or roll back) is applied to tl and then to tb in the same
#    transaction, and raises unless both answer alike (a unique violation on
#    both or neither, the same row counts, the same values returned).  Keys
#    are taken in increasing order within a transaction, so there are no
#    deadlocks; a waiter waits on tl as on tb.  VACUUM, lsm_am.flush() and
#    lsm_am.compact() run in between, on a small memtable.  Then: the same
#    rows, never two live rows with one key, errors counted alike.
# 2. A session inserting a duplicate of an in-progress row waits for that
#    transaction (seen in pg_locks), then errors after its commit or
#    proceeds after its rollback; ON CONFLICT DO NOTHING the same way.
# 3. After an immediate stop, and on a promoted standby, keys inserted
#    before (in the memtable, replayed from the log) still conflict.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use LsmPlan;
use LsmCluster;

my $node = PostgreSQL::Test::Cluster->new('unique');
$node->init(allows_streaming => 1, extra => [ initdb_args() ]);
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'lsm_am'
lsm_am.l0_compaction_trigger = 2
autovacuum = off
max_connections = 30
});
$node->start;
create_assert_plan($node, 'postgres');

$node->safe_psql('postgres', q{
CREATE EXTENSION lsm_am;
CREATE TABLE tl (k int NOT NULL, v int NOT NULL);
CREATE TABLE tb (k int NOT NULL, v int NOT NULL);
CREATE UNIQUE INDEX tl_k ON tl USING lsm (k) WITH (memtable_size = 64);
CREATE UNIQUE INDEX tb_k ON tb USING btree (k);
CREATE TABLE ops (kind text, conflict bool);

-- one operation on tl, then on tb; raises unless both answer alike
CREATE FUNCTION op(kind text, key int) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  el bool := false; eb bool := false; nl bigint := -1; nb bigint := -1;
  vl int; vb int;
BEGIN
  -- A DELETE does not wait for a row another transaction is inserting: under
  -- READ COMMITTED its two statements (tl, then tb) could see that insert's
  -- commit land between them (0 rows on tl, 1 on tb: CI on 18 met it).  So
  -- a delete holds its key exclusively until commit, other operations hold
  -- it shared: inserters of one key still race each other through the
  -- uniqueness checks, but never a delete of that key.
  IF kind = 'delete' THEN
    PERFORM pg_advisory_xact_lock(key);
  ELSE
    PERFORM pg_advisory_xact_lock_shared(key);
  END IF;
  IF kind = 'insert' THEN
    BEGIN INSERT INTO tl VALUES (key, 0); EXCEPTION WHEN unique_violation THEN el := true; END;
    BEGIN INSERT INTO tb VALUES (key, 0); EXCEPTION WHEN unique_violation THEN eb := true; END;
  ELSIF kind = 'nothing' THEN
    INSERT INTO tl VALUES (key, 1) ON CONFLICT (k) DO NOTHING; GET DIAGNOSTICS nl = ROW_COUNT;
    INSERT INTO tb VALUES (key, 1) ON CONFLICT (k) DO NOTHING; GET DIAGNOSTICS nb = ROW_COUNT;
    el := nl = 0; eb := nb = 0;
  ELSIF kind = 'update' THEN
    INSERT INTO tl VALUES (key, 1) ON CONFLICT (k) DO UPDATE SET v = tl.v + 1 RETURNING v INTO vl;
    INSERT INTO tb VALUES (key, 1) ON CONFLICT (k) DO UPDATE SET v = tb.v + 1 RETURNING v INTO vb;
    IF vl IS DISTINCT FROM vb THEN
      RAISE EXCEPTION 'MISMATCH: update of % gave % on lsm, % on btree', key, vl, vb;
    END IF;
    el := vl > 1; eb := vb > 1;
  ELSE
    DELETE FROM tl WHERE k = key; GET DIAGNOSTICS nl = ROW_COUNT;
    DELETE FROM tb WHERE k = key; GET DIAGNOSTICS nb = ROW_COUNT;
  END IF;
  IF el <> eb OR nl <> nb THEN
    RAISE EXCEPTION 'MISMATCH: % of % gave conflict %/% rows %/% (lsm/btree)',
      kind, key, el, eb, nl, nb;
  END IF;
  INSERT INTO ops VALUES (kind, el);
END $$;
});

my $dir = PostgreSQL::Test::Utils::tempdir;
my %scripts = (
	'ops.sql' => q{
\set a random(1, 3000)
\set b :a + random(1, 40)
\set c :b + random(1, 40)
\set k1 random(1, 4)
\set k2 random(1, 4)
\set k3 random(1, 4)
\set sp random(0, 2)
\set end random(0, 3)
BEGIN;
SELECT op((ARRAY['insert','nothing','update','delete'])[:k1], :a);
SAVEPOINT s;
SELECT op((ARRAY['insert','nothing','update','delete'])[:k2], :b);
\if :sp = 0
ROLLBACK TO SAVEPOINT s;
\elif :sp = 1
RELEASE SAVEPOINT s;
\endif
SELECT op((ARRAY['insert','insert','nothing','update'])[:k3], :c);
\if :end = 0
ROLLBACK;
\else
COMMIT;
\endif
},
	'maint.sql' => q{
\set m random(1, 3)
\if :m = 1
VACUUM tl;
VACUUM tb;
\elif :m = 2
SELECT lsm_am.flush('tl_k');
\else
SELECT lsm_am.compact('tl_k');
\endif
},
);
for my $f (keys %scripts)
{
	open(my $fh, '>', "$dir/$f") or die;
	print $fh $scripts{$f};
	close $fh;
}

# ---- 1. the differential run
my ($stdout, $stderr);
my $ok = $node->pgbench('--no-vacuum --client=6 --jobs=2 --transactions=400',
	0, [qr/processed: 2400\/2400/], [qr/^$/],
	'concurrent unique inserts, ON CONFLICT, deletes, savepoints: lsm answers as btree',
	{ 'ops.sql' => $scripts{'ops.sql'} });
$node->pgbench('--no-vacuum --client=4 --jobs=2 --transactions=150 -f ' . "$dir/ops.sql" . '@20 -f ' . "$dir/maint.sql" . '@1',
	0, [qr/processed: 600\/600/], [qr/^$/],
	'the same with VACUUM, flushes and compactions in between');

my $counts = $node->safe_psql('postgres',
	"SELECT count(*) FILTER (WHERE conflict), count(*) FROM ops");
my ($conflicts, $nops) = split /\|/, $counts;
note "operations: $nops, conflicts (the same on lsm and btree): $conflicts";
cmp_ok($conflicts, '>', 100, 'the keys overlapped: many conflicts, counted alike');
is($node->safe_psql('postgres',
		'SELECT (SELECT count(*) FROM (SELECT k, v FROM tl EXCEPT ALL SELECT k, v FROM tb) x) + '
		  . '(SELECT count(*) FROM (SELECT k, v FROM tb EXCEPT ALL SELECT k, v FROM tl) y)'),
	'0', 'the same final rows in tl and tb');
is($node->safe_psql('postgres',
		'SET enable_indexscan = off; SET enable_bitmapscan = off; SET enable_indexonlyscan = off; '
		  . 'SELECT count(*) FROM (SELECT k FROM tl GROUP BY k HAVING count(*) > 1) d'),
	'0', 'never two live rows with one key');
my $nrows = $node->safe_psql('postgres', 'SELECT count(*) FROM tb');
is( query_planned($node, 'postgres',
		'SET enable_seqscan = off; SET enable_bitmapscan = off;',
		'SELECT count(*) FROM tl WHERE k BETWEEN 0 AND 100000',
		qr/Index Only Scan using tl_k /, 'index-only scan of tl_k'),
	$nrows, 'the lsm index returns every row');
$node->safe_psql('postgres', "SELECT lsm_am.verify('tl_k', true)");
pass('verify(tl_k, heapallindexed) after the differential run');

# ---- 2. waiting for an in-progress duplicate
sub wait_case
{
	my ($second, $finish, $expect, $name) = @_;
	my $key = 1_000_000 + int(rand(1_000_000));
	my $a = $node->background_psql('postgres', on_error_stop => 0);
	my $b = $node->background_psql('postgres', on_error_stop => 0);
	$a->query_safe("BEGIN; INSERT INTO tl VALUES ($key, 7)");
	my $bpid = $b->query_safe('SELECT pg_backend_pid()');
	$b->{stderr} = '';
	$b->query_until(qr/sent/, "\\echo sent\n" . sprintf($second, $key) . ";\n");
	ok( wait_until($node,
			"SELECT EXISTS (SELECT 1 FROM pg_locks WHERE pid = $bpid AND locktype = 'transactionid' AND NOT granted)",
			"$name: session $bpid waiting for the first one's transaction",
			[ "SELECT pid, state, wait_event_type, wait_event, left(query, 60) FROM pg_stat_activity WHERE pid = $bpid",
			  "SELECT pid, locktype, relation::regclass, transactionid, mode, granted FROM pg_locks WHERE pid = $bpid OR NOT granted" ]),
		"$name: the second session waits for the first one's transaction");
	$a->query_safe($finish);
	my $out = $b->query('SELECT 1');
	like($out . $b->{stderr}, $expect, $name);
	$a->quit;
	$b->quit;
	return $key;
}

wait_case('INSERT INTO tl VALUES (%d, 8)', 'COMMIT',
	qr/duplicate key value violates unique constraint "tl_k"/,
	'a duplicate of a row committed meanwhile fails');
my $k = wait_case('INSERT INTO tl VALUES (%d, 8)', 'ROLLBACK', qr/INSERT 0 1|^1/m,
	'a duplicate of a row rolled back meanwhile goes in');
is($node->safe_psql('postgres', "SELECT v FROM tl WHERE k = $k"), '8', 'and is there');
$k = wait_case('INSERT INTO tl VALUES (%d, 8) ON CONFLICT (k) DO NOTHING RETURNING v', 'COMMIT',
	qr/^1$/s, 'ON CONFLICT DO NOTHING behind a committed row inserts nothing');
is($node->safe_psql('postgres', "SELECT v FROM tl WHERE k = $k"), '7', 'the first row stays');
$k = wait_case('INSERT INTO tl VALUES (%d, 8) ON CONFLICT (k) DO UPDATE SET v = tl.v * 10 RETURNING v',
	'COMMIT', qr/^70\n1$/s, 'ON CONFLICT DO UPDATE behind a committed row updates it');

# ---- 2b. the check after ON CONFLICT's pre-check (lsmunique.c, "The check
# after the executor's").  The pre-check of a new key found nothing; aminsert's
# check of it then reads the memtables only, unless a flush happened since.
# (a) That is what happens: an ON CONFLICT insert of a new key probes each
# run's filter once, as a plain INSERT does, though it looks the key up twice.
$node->safe_psql('postgres', q{
CREATE TABLE tx (k int NOT NULL, v int NOT NULL);
CREATE UNIQUE INDEX tx_k ON tx USING lsm (k);
INSERT INTO tx SELECT g, 0 FROM generate_series(1, 1000) g;
SELECT lsm_am.flush('tx_k');
});
sub probes_of
{
	my ($sql) = @_;
	my $out = $node->safe_psql('postgres', qq{
SELECT lsm_am.reset_lookup_stats('tx_k');
$sql;
SELECT lookups || ' lookups, ' || filter_probes || ' probes' FROM lsm_am.lookup_stats('tx_k')});
	return (split /\n/, $out)[-1];
}
my $runs = $node->safe_psql('postgres', "SELECT count(*) FROM lsm_am.index_info('tx_k')");
cmp_ok($runs, '>=', 1, 'tx_k has runs');
is(probes_of('INSERT INTO tx VALUES (5001, 1)'), "1 lookups, $runs probes",
	'a plain INSERT: one lookup, a probe per run');
is(probes_of('INSERT INTO tx VALUES (5002, 1) ON CONFLICT (k) DO NOTHING'), "2 lookups, $runs probes",
	'ON CONFLICT of a new key: two lookups, but the runs are probed once');
is(probes_of('INSERT INTO tx VALUES (5003, 1) ON CONFLICT DO NOTHING'), "2 lookups, $runs probes",
	'the same without a conflict target');

# (b) A key another session inserts between the pre-check and the check is
# found there, whether it is still in a memtable or a flush moved it into a
# run meanwhile (the check must then read the runs).  The index is on an
# expression whose function, evaluated once by the pre-check and once
# before aminsert, blocks the second time on an advisory lock the other
# session holds.
$node->safe_psql('postgres', q{
CREATE FUNCTION paused_key(k int) RETURNS int IMMUTABLE LANGUAGE plpgsql AS $$
DECLARE n int := coalesce(nullif(current_setting('lsm_test.calls', true), ''), '0')::int + 1;
BEGIN
  IF current_setting('lsm_test.pause', true) = 'on' THEN
    PERFORM set_config('lsm_test.calls', n::text, false);
    IF n = 2 THEN
      PERFORM pg_advisory_lock(4242);
      PERFORM pg_advisory_unlock(4242);
    END IF;
  END IF;
  RETURN k;
END $$;
CREATE TABLE te (k int NOT NULL, v int NOT NULL);
CREATE UNIQUE INDEX te_k ON te USING lsm ((paused_key(k)));
INSERT INTO te SELECT g, 0 FROM generate_series(1, 1000) g;
SELECT lsm_am.flush('te_k');
});
sub between_case
{
	my ($key, $flush, $name) = @_;
	my $a = $node->background_psql('postgres', on_error_stop => 0);
	my $b = $node->background_psql('postgres', on_error_stop => 0);
	$b->query_safe('SELECT pg_advisory_lock(4242)');
	my $apid = $a->query_safe('SELECT pg_backend_pid()');
	$a->query_safe("SET lsm_test.pause = on; SET lsm_test.calls = 0");
	$a->{stderr} = '';
	$a->query_until(qr/sent/, "\\echo sent\n"
		  . "INSERT INTO te VALUES ($key, 1) ON CONFLICT ((paused_key(k))) DO NOTHING RETURNING v;\n");
	ok( wait_until($node,
			"SELECT EXISTS (SELECT 1 FROM pg_locks WHERE pid = $apid AND locktype = 'advisory' AND NOT granted)",
			"$name: the insert paused after its pre-check",
			[ "SELECT pid, state, wait_event_type, wait_event, left(query, 60) FROM pg_stat_activity WHERE pid = $apid" ]),
		"$name: the insert paused between its pre-check and its check");
	$b->query_safe("INSERT INTO te VALUES ($key, 2)");
	$b->query_safe("SELECT lsm_am.flush('te_k')") if $flush;
	$b->query_safe('SELECT pg_advisory_unlock(4242)');
	my $out = $a->query('SELECT 42');
	is($out . $a->{stderr}, '42', "$name: the paused insert inserted nothing");
	is($node->safe_psql('postgres', "SELECT string_agg(v::text, ',') FROM te WHERE k = $key"), '2',
		"$name: one row, the other session's");
	$a->quit;
	$b->quit;
}
between_case(20001, 0, 'a key inserted meanwhile, in the memtable');
between_case(20002, 1, 'a key inserted and flushed into a run meanwhile');
$node->safe_psql('postgres', "SELECT lsm_am.verify('te_k', true)");
pass('verify(te_k, heapallindexed)');

# ---- ON CONFLICT into a partitioned table: PostgreSQL 15 opens the
# partitions' indexes while routing rows, where lsm cannot pass its
# btree-only check: refused with a hint there, supported on 18
$node->safe_psql('postgres', q{
CREATE TABLE pt (k int, v int) PARTITION BY RANGE (k);
CREATE TABLE pt1 PARTITION OF pt FOR VALUES FROM (0) TO (100);
CREATE UNIQUE INDEX pt1_k ON pt1 USING lsm (k);
INSERT INTO pt VALUES (1, 1);
});
my ($ret, $o, $e) = $node->psql('postgres',
	'INSERT INTO pt VALUES (1, 2), (2, 2) ON CONFLICT DO NOTHING');
if ($node->pg_version >= 18)
{
	is($node->safe_psql('postgres', q{SELECT string_agg(k || ':' || v, ',' ORDER BY k) FROM pt}),
		'1:1,2:2', 'ON CONFLICT into a partitioned table with an lsm unique partition index');
}
else
{
	like($e, qr/ON CONFLICT into partitioned table "pt" is not supported with unique lsm index "pt1_k".*HINT:.*PostgreSQL 18/s,
		'ON CONFLICT into a partitioned table with lsm unique partition indexes is refused on 15');
}
($ret, $o, $e) = $node->psql('postgres', 'INSERT INTO pt VALUES (1, 3)');
like($e, qr/duplicate key value violates unique constraint "pt1_k"/,
	'plain inserts through the partitioned table are checked');

# ---- 3. crash, then a standby
my $backup = 'bk';
$node->backup($backup);
my $standby = PostgreSQL::Test::Cluster->new('unique_standby');
$standby->init_from_backup($node, $backup, has_streaming => 1);
$standby->start;

$node->safe_psql('postgres', q{
CREATE TABLE cr (k uuid, v int);
CREATE UNIQUE INDEX cr_k ON cr USING lsm (k);
INSERT INTO cr SELECT md5(g::text)::uuid, g FROM generate_series(1, 3000) g;
});
$node->stop('immediate');
$node->start;
($ret, $o, $e) = $node->psql('postgres', "INSERT INTO cr VALUES (md5('1234')::uuid, 0)");
like($e, qr/duplicate key value violates unique constraint "cr_k"/,
	'after an immediate stop a replayed key still conflicts');
is($node->safe_psql('postgres',
		"WITH i AS (INSERT INTO cr SELECT md5(g::text)::uuid, 0 FROM generate_series(2990, 3010) g "
		  . "ON CONFLICT (k) DO NOTHING RETURNING 1) SELECT count(*) FROM i"),
	'10', 'ON CONFLICT DO NOTHING after the crash inserts only the new keys');

wait_catchup($node, $standby);
is( query_planned($standby, 'postgres', 'SET enable_seqscan = off; SET enable_bitmapscan = off;',
		"SELECT count(*) FROM cr WHERE k = md5('2999')::uuid", qr/Index Scan using cr_k /,
		'standby: index scan of cr_k'),
	'1', 'the standby finds a replayed key');
$standby->promote;
($ret, $o, $e) = $standby->psql('postgres', "INSERT INTO cr VALUES (md5('17')::uuid, 0)");
like($e, qr/duplicate key value violates unique constraint "cr_k"/,
	'the promoted standby enforces uniqueness over what it replayed');
($ret, $o, $e) = $standby->psql('postgres', "INSERT INTO tl SELECT k, 0 FROM tb LIMIT 1");
like($e, qr/duplicate key value violates unique constraint "tl_k"/,
	'and over the differential run\'s keys');
$standby->safe_psql('postgres', "SELECT lsm_am.verify('cr_k', true)");
pass('verify(cr_k, heapallindexed) on the promoted standby');
$standby->stop;
$node->stop;
done_testing();
