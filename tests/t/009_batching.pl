# Inserts are buffered per backend and pushed into the index in batches (see
# src/lsminsert.c).  What must hold, checked against a btree on the same
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

my $node = PostgreSQL::Test::Cluster->new('batching');
$node->init;
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'lsm_am'
max_prepared_transactions = 4
autovacuum = off
});
$node->start;

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
CREATE FUNCTION probe(tbl text, col text, kind text, lo int8, hi int8) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE r text;
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
  EXECUTE format('SELECT count(*) || '':'' || coalesce(sum(%I), 0) FROM %I WHERE %I BETWEEN %s AND %s',
                 col, tbl, col, lo, hi) INTO r;
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
is(sql("SELECT lsm_am.wait_for_merges('t_k')"), 't', 'merges done');
is(sql("SELECT leaked_pages FROM lsm_am.check_index('t_k')"), '0', 'no page leaked');

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
