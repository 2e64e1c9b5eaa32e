# Inserts are buffered per backend and pushed into the index in batches (see
# src/am/lsminsert.c).  What must hold, checked against a btree on the same
# column (kb, a generated copy of k):
#   - a transaction sees its own uncommitted rows through the lsm index, in
#     every scan kind, and the lsm_am functions count them;
#   - a committed transaction's entries are all in the index (also after
#     PREPARE TRANSACTION / COMMIT PREPARED, and after a crash right after
#     the commit);
#   - a subtransaction that rolls back leaves no entry behind: VACUUM may
#     remove its dead rows and hand their TIDs to other rows before the
#     parent commits, and a late entry would then find the wrong row;
#   - an ERROR inside a subtransaction (a key that is too large) keeps the
#     parent's buffered entries;
#   - DROP INDEX, TRUNCATE and REINDEX after inserts in the same transaction
#     commit cleanly;
#   - batches make far fewer WAL records than rows.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use LsmPlan;
use LsmCluster;

my $node = PostgreSQL::Test::Cluster->new('batching');
$node->init(extra => [ initdb_args() ]);
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'lsm_am'
max_prepared_transactions = 4
autovacuum = off
});
$node->start;
create_assert_plan($node, 'postgres');	# checks assert the plan they claim to test

sub sql { return $node->safe_psql('postgres', $_[0]); }

sql(q{
CREATE EXTENSION lsm_am;
CREATE FUNCTION make_t(tbl text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE format('CREATE TABLE %I (k int8, kb int8 GENERATED ALWAYS AS (k) STORED, pad text)', tbl);
  EXECUTE format('CREATE INDEX %I ON %I USING lsm (k) WITH (memtable_size = 64)', tbl || '_k', tbl);
  EXECUTE format('CREATE INDEX %I ON %I (kb)', tbl || '_kb', tbl);
END $$;
-- count and sum of the rows in [lo, hi] by one scan kind over one column
-- (through the index on that column, asserted)
CREATE FUNCTION probe(tbl text, col text, kind text, lo int8, hi int8) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE r text; q text;
BEGIN
  -- SET LOCAL outlasts the call inside a transaction block: set all of them
  SET LOCAL enable_seqscan = off;
  IF kind = 'bitmap' THEN
    SET LOCAL enable_indexscan = off; SET LOCAL enable_indexonlyscan = off;
    SET LOCAL enable_bitmapscan = on;
  ELSE
    SET LOCAL enable_indexscan = on; SET LOCAL enable_indexonlyscan = on;
    SET LOCAL enable_bitmapscan = off;
  END IF;
  q := format('SELECT count(*) || '':'' || coalesce(sum(%I), 0) FROM %I WHERE %I BETWEEN %s AND %s',
              col, tbl, col, lo, hi);
  PERFORM assert_plan(q, CASE WHEN kind = 'bitmap' THEN 'Bitmap Index Scan on ' ELSE 'Scan using ' END
                         -- the lsm index exactly; any btree index on kb
                         || tbl || '_' || col || CASE WHEN col = 'k' THEN ' ' ELSE '' END);
  EXECUTE q INTO r;
  RETURN r;
END $$;
});
sql("SELECT make_t('t')");

# Every scan kind of lsm (k) against btree (kb) over [lo, hi], in $session or
# a fresh one.
sub agree
{
	my ($what, $lo, $hi, $session) = @_;
	for my $kind ('index', 'bitmap')
	{
		my $q = "SELECT probe('t', 'k', '$kind', $lo, $hi) || ' ' || probe('t', 'kb', '$kind', $lo, $hi)";
		my $r = $session ? $session->query_safe($q) : sql($q);
		chomp $r;
		my ($l, $b) = split / /, $r;
		is($l, $b, "$what: $kind scans of lsm and btree agree ($b)");
	}
}

# ------------------------------------------------------------ own rows
my $s = $node->background_psql('postgres', on_error_stop => 0);
$s->query_safe('BEGIN');
$s->query_safe("INSERT INTO t (k) SELECT g FROM generate_series(1, 100) g");
agree('own uncommitted rows (a part of a batch)', 1, 1000, $s);
$s->query_safe("INSERT INTO t (k) SELECT g FROM generate_series(101, 5000) g");
agree('own uncommitted rows (several batches)', 1, 10000, $s);
my $mt = $s->query_safe(
	"SELECT memtable_entries + run_entries FROM lsm_am.index_stats('t_k')");
chomp $mt;
is($mt, '5000', 'index_stats counts the transaction\'s own entries');
is(sql("SELECT count(*) FROM t"), '0', 'another session sees nothing yet');
$s->query_safe('COMMIT');
agree('after COMMIT, another session', 1, 10000);

# ------------------------------------------------------------ two-phase commit
$s->query_safe('BEGIN');
$s->query_safe("INSERT INTO t (k) SELECT g FROM generate_series(10001, 10050) g");
$s->query_safe("PREPARE TRANSACTION 'lsm_batch'");
sql("COMMIT PREPARED 'lsm_batch'");
agree('after COMMIT PREPARED', 10001, 10050);

# ------------------------------------------------------------ subtransactions
# The rolled-back rows are VACUUMed away and their TIDs reused by another
# session's rows before the parent commits.
sql('TRUNCATE t');
sql("INSERT INTO t (k, pad) SELECT g, repeat('x', 500) FROM generate_series(1, 1000) g");
sql('DELETE FROM t WHERE k > 900');
sql('VACUUM t');
$s->query_safe('BEGIN');
$s->query_safe("INSERT INTO t (k) VALUES (20001)");    # the parent's entry, buffered
$s->query_safe('SAVEPOINT a');
$s->query_safe("INSERT INTO t (k, pad) SELECT 30000 + g, repeat('y', 500) FROM generate_series(1, 100) g");
my $tids = $s->query_safe("SELECT string_agg('\"' || ctid::text || '\"', ',' ORDER BY ctid) FROM t WHERE k > 30000");
chomp $tids;
$s->query_safe('ROLLBACK TO SAVEPOINT a');
sql('VACUUM (INDEX_CLEANUP ON) t');
sql("INSERT INTO t (k, pad) SELECT 40000 + g, repeat('z', 500) FROM generate_series(1, 100) g");
my $reused = sql("SELECT count(*) FROM t WHERE ctid = ANY ('{$tids}'::tid[])");
cmp_ok($reused, '>', 0, "other rows took over TIDs of the rolled-back rows ($reused of 100)");
$s->query_safe('COMMIT');
agree('rolled-back subtransaction, TIDs reused', 30000, 30200);
agree('rolled-back subtransaction: the parent\'s row', 20001, 20001);
agree('rolled-back subtransaction: the reusing rows', 40000, 40200);
is(merges_done($node, 't_k'), 't', 'merges done');
is(sql("SELECT leaked_pages FROM lsm_am.check_index('t_k')"), '0', 'no page leaked');
is(sql("SELECT lsm_am.verify('t_k', true)"), '', 'verify(t_k, true): sound and complete');

# A subtransaction that commits (RELEASE) keeps its rows; an ERROR inside a
# plpgsql exception block (a key too large) keeps what came before it.
$s->query_safe('BEGIN');
$s->query_safe("INSERT INTO t (k) VALUES (50001)");
$s->query_safe('SAVEPOINT b');
$s->query_safe("INSERT INTO t (k) VALUES (50002)");
$s->query_safe('RELEASE SAVEPOINT b');
$s->query_safe(q{
DO $$
BEGIN
  INSERT INTO t (k) VALUES (50003);
  BEGIN
    INSERT INTO t (k) VALUES (50004);
    RAISE EXCEPTION 'rolled back';
  EXCEPTION WHEN others THEN NULL;
  END;
  INSERT INTO t (k) VALUES (50005);
END $$;
});
$s->query_safe('COMMIT');
agree('RELEASE and exception blocks', 50000, 50010);
is(sql("SELECT string_agg(k::text, ',' ORDER BY k) FROM t WHERE k BETWEEN 50000 AND 50010"),
	'50001,50002,50003,50005', 'the rows that should be there are');

# RELEASE passes a subtransaction's entries to its parent: a later sibling's
# rollback must not drop them (psql ON_ERROR_ROLLBACK, JDBC autosave and
# plpgsql exception blocks make such sequences all the time).
$s->query_safe('BEGIN');
$s->query_safe('SAVEPOINT a1');
$s->query_safe("INSERT INTO t (k) VALUES (55001)");
$s->query_safe('RELEASE SAVEPOINT a1');
$s->query_safe('SAVEPOINT b1');
$s->query_safe('ROLLBACK TO SAVEPOINT b1');
$s->query_safe(q{
DO $$
BEGIN
  FOR i IN 1 .. 20 LOOP
    BEGIN
      INSERT INTO t (k) VALUES (55100 + i);
      IF i % 5 = 0 THEN RAISE EXCEPTION 'every fifth fails'; END IF;
    EXCEPTION WHEN others THEN NULL;
    END;
  END LOOP;
END $$;
});
$s->query_safe('COMMIT');
is(sql("SELECT string_agg(k::text, ',' ORDER BY k) FROM t WHERE k BETWEEN 55000 AND 55200"),
	'55001,55101,55102,55103,55104,55106,55107,55108,55109,55111,55112,55113,55114,55116,55117,55118,55119',
	'released and caught subtransactions: the heap has the expected rows');
agree('RELEASE, then a sibling savepoint rolled back; exception-block loop', 55000, 55200);

# A scan between a TRUNCATE in a savepoint and its rollback must not lose the
# entries buffered before the savepoint.
$s->query_safe('BEGIN');
$s->query_safe("INSERT INTO t (k) VALUES (56001)");
$s->query_safe('SAVEPOINT c1');
$s->query_safe('TRUNCATE t');
$s->query_safe("SELECT probe('t', 'k', 'index', 56000, 56010)");
$s->query_safe('ROLLBACK TO SAVEPOINT c1');
$s->query_safe('COMMIT');
agree('TRUNCATE and a scan in a rolled-back savepoint', 56000, 56010);

# TRUNCATE of a table created in the same transaction empties the index in
# place (same relfilenode); the new rows reuse the TIDs.
$node->psql('postgres', q{
BEGIN;
CREATE TABLE tt (k int8, kb int8 GENERATED ALWAYS AS (k) STORED);
CREATE INDEX tt_k ON tt USING lsm (k);
CREATE INDEX tt_kb ON tt (kb);
INSERT INTO tt (k) SELECT g FROM generate_series(1, 100) g;
TRUNCATE tt;
INSERT INTO tt (k) SELECT 1000 + g FROM generate_series(1, 100) g;
COMMIT;}, on_error_stop => 1);
for my $kind ('index', 'bitmap')
{
	is(sql("SELECT probe('tt', 'k', '$kind', 1, 100) || ' ' || probe('tt', 'k', '$kind', 1001, 1100)"),
		'0:0 100:105050', "in-place TRUNCATE in the creating transaction: $kind scan finds only the new rows");
}

# DDL that moves an index's pages without rebuilding it, after inserts in the
# same transaction: ALTER INDEX ... SET TABLESPACE, ALTER COLUMN TYPE that
# keeps the index.
my $tsdir = PostgreSQL::Test::Utils::tempdir;
sql("CREATE TABLESPACE lsm_ts LOCATION '$tsdir'");
$node->psql('postgres', q{
BEGIN;
INSERT INTO t (k) SELECT 57000 + g FROM generate_series(1, 50) g;
ALTER INDEX t_k SET TABLESPACE lsm_ts;
INSERT INTO t (k) SELECT 57100 + g FROM generate_series(1, 50) g;
COMMIT;}, on_error_stop => 1);
agree('inserts around ALTER INDEX SET TABLESPACE in one transaction', 57000, 57200);
sql("CREATE TABLE v (k varchar(10))");
sql("CREATE INDEX v_k ON v USING lsm (k)");
$node->psql('postgres', q{
BEGIN;
INSERT INTO v (k) SELECT 'v' || g FROM generate_series(1, 50) g;
ALTER TABLE v ALTER COLUMN k TYPE varchar(20);
INSERT INTO v (k) SELECT 'w' || g FROM generate_series(1, 50) g;
COMMIT;}, on_error_stop => 1);
is(sql("SET enable_seqscan = off; SET enable_bitmapscan = off; SELECT count(*) FROM v WHERE k >= 'v' AND k < 'x'"),
	'100', 'inserts around ALTER COLUMN TYPE (index kept): all 100 in the lsm index');

# Another session between our statements.  The executor lets an index's
# lock go when the inserting statement ends (ExecCloseIndices), so the
# entries still buffered are pushed at commit under a lock taken again
# (RowExclusiveLock).  Without it, a worker shrinking the index (under an
# AccessExclusiveLock on the index alone) could cut the file's tail while
# the push took a page there, leaving a log chain that names a page the file
# lacks.  ALTER INDEX ... SET TABLESPACE in another session also locks the
# index alone: it copies the index between our statements, and the entries
# we still buffer must go into the copy at commit.
my $spid = $s->query_safe('SELECT pg_backend_pid()');
chomp $spid;
my $ts2dir = PostgreSQL::Test::Utils::tempdir;
sql("CREATE TABLESPACE lsm_ts2 LOCATION '$ts2dir'");
my $locker = $node->background_psql('postgres', on_error_stop => 0);
for my $ts ('lsm_ts2', 'pg_default')
{
	my $lo = $ts eq 'pg_default' ? 61100 : 61000;
	$s->query_safe('BEGIN');
	$s->query_safe("INSERT INTO t (k) SELECT $lo + g FROM generate_series(1, 50) g");
	$locker->query_safe('BEGIN');
	$locker->query_safe("ALTER INDEX t_k SET TABLESPACE $ts");
	$s->query_until(qr/committing/, "\\echo committing\nCOMMIT;\n\\echo committed\n");
	wait_until($node, "SELECT state = 'idle' OR wait_event_type = 'Lock' FROM pg_stat_activity WHERE pid = $spid",
		"session $spid waiting for a lock or idle",
		[ "SELECT pid, state, wait_event_type, wait_event, left(query, 60) FROM pg_stat_activity WHERE pid = $spid",
		  "SELECT pid, locktype, relation::regclass, mode, granted FROM pg_locks WHERE relation = 't_k'::regclass" ])
	  or die "session $spid neither waits nor is idle";
	is(sql("SELECT wait_event_type || ':' || wait_event FROM pg_stat_activity WHERE pid = $spid"),
		'Lock:relation',
		"SET TABLESPACE $ts in another session: the COMMIT that pushes buffered entries waits for the index's lock");
	$locker->query_safe('COMMIT');
	$s->query_until(qr/committed/, '');
	is(sql("SELECT spcname FROM pg_class c LEFT JOIN pg_tablespace s ON s.oid = c.reltablespace WHERE relname = 't_k'"),
		$ts eq 'pg_default' ? '' : $ts, "the index moved to $ts");
	agree("entries buffered before another session's SET TABLESPACE $ts", $lo, $lo + 50);
	is(sql("SELECT lsm_am.verify('t_k', true)"), '', "after SET TABLESPACE $ts: verify(t_k, true): sound and complete");
}
$locker->quit;

# A parallel worker runs the index scan (force_parallel_mode, renamed
# debug_parallel_query in 16): the leader's buffered entries must be in the
# index by then.
my $parallel_guc = $node->pg_version >= 16 ? 'debug_parallel_query' : 'force_parallel_mode';
$s->query_safe('BEGIN');
$s->query_safe("INSERT INTO t (k) SELECT 58000 + g FROM generate_series(1, 30) g");
$s->query_safe("SET LOCAL $parallel_guc = on; SET LOCAL enable_seqscan = off; SET LOCAL enable_bitmapscan = off");
my $plan = $s->query_safe("EXPLAIN (COSTS OFF) SELECT count(*) FROM t WHERE k BETWEEN 58000 AND 58100");
like($plan, qr/Gather.*Index (Only )?Scan using t_k/s, 'the scan of t_k runs in a parallel worker');
my $par = $s->query_safe("SELECT count(*) FROM t WHERE k BETWEEN 58000 AND 58100");
chomp $par;
is($par, '30', 'a parallel worker sees the transaction\'s own 30 rows through the lsm index');
$s->query_safe('COMMIT');

# INSERT ... ON CONFLICT pushes each entry at once (speculative insertion).
sql("CREATE UNIQUE INDEX t_kb_u ON t (kb) WHERE kb >= 59000");
sql("INSERT INTO t (k) SELECT 59000 + g FROM generate_series(1, 100) g ON CONFLICT DO NOTHING");
sql("INSERT INTO t (k) SELECT 59000 + g FROM generate_series(50, 150) g ON CONFLICT DO NOTHING");
agree('INSERT ... ON CONFLICT DO NOTHING', 59000, 59200);
sql('DROP INDEX t_kb_u');

# A key too large fails its statement; the transaction's earlier entries stay.
sql("SELECT make_t('tx')");
sql("ALTER TABLE tx ALTER COLUMN pad SET STORAGE PLAIN");
sql("CREATE INDEX tx_pad ON tx USING lsm (pad)");
$s->query_safe('BEGIN');
$s->query_safe("INSERT INTO tx (k, pad) SELECT g, 'p' || g FROM generate_series(1, 300) g");
$s->query_safe('SAVEPOINT c');
$s->query("INSERT INTO tx (k, pad) VALUES (301, repeat('q', 3000))");
like($s->{stderr}, qr/too large|exceeds/i, 'a key too large fails its statement');
$s->{stderr} = '';    # BackgroundPsql keeps stderr until its caller clears it
$s->query_safe('ROLLBACK TO SAVEPOINT c');
$s->query_safe("INSERT INTO tx (k, pad) VALUES (302, 'p302')");
$s->query_safe('COMMIT');
is(sql("SET enable_seqscan = off; SET enable_bitmapscan = off; SELECT count(*) FROM tx WHERE pad >= 'p'"),
	'301', 'after a failed too-large key: the other 301 entries of the transaction are in the pad index');
is(sql("SET enable_seqscan = off; SET enable_bitmapscan = off; SELECT count(*) FROM tx WHERE k BETWEEN 1 AND 1000"),
	'301', 'and in the k index');

# ------------------------------------------------------------ DDL after inserts
for my $ddl ('DROP INDEX t_k', 'TRUNCATE t', 'REINDEX INDEX t_k')
{
	my ($r, $o, $e) = $node->psql('postgres', qq{
BEGIN;
INSERT INTO t (k) SELECT 60000 + g FROM generate_series(1, 3000) g;
$ddl;
INSERT INTO t (k) SELECT 70000 + g FROM generate_series(1, 10) g;
COMMIT;});
	is($r, 0, "$ddl after inserts in the same transaction commits") or diag $e;
	if ($ddl eq 'DROP INDEX t_k')
	{
		sql("CREATE INDEX t_k ON t USING lsm (k) WITH (memtable_size = 64)");
	}
	agree("after $ddl in the inserting transaction", 60000, 80000);
	is(sql("SELECT leaked_pages FROM lsm_am.check_index('t_k')"), '0', "$ddl: no page leaked");
	is(sql("SELECT lsm_am.verify('t_k', true)"), '', "$ddl: verify(t_k, true): sound and complete");
}

# ------------------------------------------------------------ crash after commit
sql('TRUNCATE t');
sql("INSERT INTO t (k) SELECT g FROM generate_series(1, 777) g");
$s->quit;
$node->stop('immediate');
$node->start;
agree('after a crash right after the commit', 1, 1000);

# ------------------------------------------------------------ WAL records
# 20,000 rows in one statement: one generic record per log page, not per row
# (each log page holds a few hundred int8 entries).
sql('CHECKPOINT');
sql('CREATE TABLE w (k int8); CREATE INDEX w_k ON w USING lsm (k); CREATE TABLE w0 (k int8)');
my $with = sql("EXPLAIN (ANALYZE, WAL, FORMAT JSON) INSERT INTO w SELECT (random() * 1e12)::int8 FROM generate_series(1, 20000)");
my $without = sql("EXPLAIN (ANALYZE, WAL, FORMAT JSON) INSERT INTO w0 SELECT (random() * 1e12)::int8 FROM generate_series(1, 20000)");
my ($rw) = $with =~ /"WAL Records": (\d+)/;
my ($r0) = $without =~ /"WAL Records": (\d+)/;
my $idx = $rw - $r0;
cmp_ok($idx, '<', 500, "20,000 inserts: $idx index WAL records in the statement (batches, not one per row)");
cmp_ok($idx, '>', 0, 'the statement itself wrote index WAL (full batches are pushed as they fill)');

$node->stop;
done_testing();
