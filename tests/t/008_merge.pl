# Merge issue acceptance: flushes and compactions in background workers.
#
#  1. Load: three tables, one per compaction policy (leveled, tiered, lazy),
#     each with an lsm index on k (64 kB memtable: a flush every ~2,500
#     rows) and a btree on kb, a stored copy of k that serves as the oracle.
#     For 60 s pgbench clients insert random keys, update and delete them,
#     and read (point lookups, range counts, ORDER BY ... LIMIT both ways),
#     checking every answer: 20,000 fixed rows (k 1..20000, never modified)
#     against known values, the changing rows against the btree in the same
#     REPEATABLE READ snapshot.  One client VACUUMs the tables every 2 s, one
#     runs lsm_am.compact() every 3 s, lsm_am.flush() runs once in the
#     middle; level 0 and the workers in pg_stat_activity are sampled.
#  2. Afterwards, per table: wait_for_merges, the level shape of the policy,
#     maintenance_stats, check_index, and every scan kind (index, backward,
#     bitmap, index-only, btree) returning exactly the rows of a seqscan,
#     plus sampled lookups, ranges and ORDER BY LIMIT against the btree.
#  3. lsm_am.compact() leaves one run as small as a fresh CREATE INDEX; a
#     compacted run with duplicate keys survives VACUUM.
#  4. Bounded level 0: sustained inserts, slow merges (flush_delay_ms) and
#     low triggers (slowdown 6, stop 10); level 0 sampled every 20 ms.
#  4b. A worker in a long merge flushes the memtables that wait behind it
#     between two of the merge's pages.
#  5. DROP INDEX, TRUNCATE, REINDEX and DROP DATABASE while a worker merges.
#  6. No workers (lsm_am.max_workers = 0, max_worker_processes exhausted):
#     backends flush themselves; a worker killed mid-compaction.
#  7. Immediate shutdown in the middle of a worker's compaction and flush.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use LsmCluster;
use LsmSession;
use Time::HiRes qw(time usleep);

my $LOAD_SECONDS = 60;
my $STALL_SECONDS = 20;
my @POLICIES = ('leveled', 'tiered', 'lazy');

my $node = PostgreSQL::Test::Cluster->new('merge');
$node->init(extra => [ initdb_args() ]);
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'lsm_am'
max_worker_processes = 16
max_parallel_workers_per_gather = 0
autovacuum = off
wal_consistency_checking = ''
});
$node->start;

# Helper functions; also installed in the database of the DROP DATABASE test.
my $helpers = q{
CREATE EXTENSION lsm_am;

-- A table whose rows with k 1..nfixed are fixed (v = 3k, never modified);
-- kb is a copy of k indexed by a btree: the oracle of the lsm index on k.
CREATE FUNCTION make_table(tbl text, policy text, nfixed int DEFAULT 20000)
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE format('CREATE TABLE %I (k int8 NOT NULL, kb int8 GENERATED ALWAYS AS (k) STORED, v int8 NOT NULL DEFAULT 0)', tbl);
  EXECUTE format('INSERT INTO %I (k, v) SELECT g, 3 * g FROM generate_series(1, %s) g', tbl, nfixed);
  EXECUTE format('CREATE INDEX %I ON %I USING lsm (k) WITH (memtable_size = 64, compaction = %s)',
                 tbl || '_k', tbl, policy);
  EXECUTE format('CREATE INDEX %I ON %I (kb)', tbl || '_kb', tbl);
END $$;

-- nruns level-0 runs made at once by this backend (no flush delay here).
CREATE FUNCTION make_l0(tbl text, nruns int, nrows int DEFAULT 2000)
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  PERFORM set_config('lsm_am.flush_delay_ms', '0', true);
  FOR i IN 1 .. nruns LOOP
    EXECUTE format('INSERT INTO %I (k) SELECT 1000000 + (random() * 1e12)::int8 FROM generate_series(1, %s)',
                   tbl, nrows);
    PERFORM lsm_am.flush((tbl || '_k')::regclass);
  END LOOP;
END $$;
};

$node->safe_psql('postgres', $helpers);
$node->safe_psql('postgres', q{
-- One read of a pgbench reader; raises (failing the client) on a wrong
-- answer.  Run it in a REPEATABLE READ transaction: lsm and btree answers
-- then come from one snapshot.
CREATE FUNCTION read_check(tbl text, x int8, kind int) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  mode int := (x % 3)::int;   -- 0: index scans, 1: bitmap scans, 2: index-only allowed
  ordered bool := kind IN (3, 6);
  f int8; a int8; b int8; y int8;
  n bigint; n2 bigint; s numeric; s2 numeric; arr int8[]; arr2 int8[];
BEGIN
  PERFORM set_config('enable_seqscan', 'off', true);
  PERFORM set_config('enable_bitmapscan', (mode = 1 AND NOT ordered)::text, true);
  PERFORM set_config('enable_indexscan', (mode <> 1 OR ordered)::text, true);
  PERFORM set_config('enable_indexonlyscan', (mode = 2)::text, true);
  IF kind = 1 THEN          -- point lookup of a fixed row
    f := 1 + x % 20000;
    EXECUTE format('SELECT count(*), sum(v) FROM %I WHERE k = $1', tbl) INTO n, s USING f;
    IF n <> 1 OR s IS DISTINCT FROM 3 * f THEN
      RAISE EXCEPTION 'MISMATCH %: lookup of fixed key % saw % rows (sum v %)', tbl, f, n, s;
    END IF;
  ELSIF kind = 2 THEN       -- range count over fixed rows
    a := 1 + x % 19901; b := a + 99;
    EXECUTE format('SELECT count(*), sum(k) FROM %I WHERE k BETWEEN $1 AND $2', tbl) INTO n, s USING a, b;
    IF n <> 100 OR s IS DISTINCT FROM (a + b) * 50 THEN
      RAISE EXCEPTION 'MISMATCH %: range % .. % saw % rows (sum %)', tbl, a, b, n, s;
    END IF;
  ELSIF kind = 3 THEN       -- ORDER BY LIMIT over fixed rows, both directions
    a := 1 + x % 19991; b := a + 9;
    EXECUTE format('SELECT array_agg(k) FROM (SELECT k FROM %I WHERE k >= $1 ORDER BY k LIMIT 10) s', tbl)
      INTO arr USING a;
    IF arr IS DISTINCT FROM ARRAY(SELECT generate_series(a, b)) THEN
      RAISE EXCEPTION 'MISMATCH %: ORDER BY k from % gave %', tbl, a, arr;
    END IF;
    EXECUTE format('SELECT array_agg(k) FROM (SELECT k FROM %I WHERE k <= $1 ORDER BY k DESC LIMIT 10) s', tbl)
      INTO arr USING b;
    IF arr IS DISTINCT FROM ARRAY(SELECT generate_series(b, a, -1)) THEN
      RAISE EXCEPTION 'MISMATCH %: ORDER BY k DESC from % gave %', tbl, b, arr;
    END IF;
  ELSIF kind = 4 THEN       -- point lookup of a changing row (found via the btree)
    EXECUTE format('SELECT kb FROM %I WHERE kb >= $1 ORDER BY kb LIMIT 1', tbl) INTO y USING 1000000 + x;
    IF y IS NOT NULL THEN
      EXECUTE format('SELECT count(*) FROM %I WHERE k = $1', tbl) INTO n USING y;
      EXECUTE format('SELECT count(*) FROM %I WHERE kb = $1', tbl) INTO n2 USING y;
      IF n <> n2 OR n = 0 THEN
        RAISE EXCEPTION 'MISMATCH %: lookup of % saw % rows, btree %', tbl, y, n, n2;
      END IF;
    END IF;
  ELSIF kind = 5 THEN       -- range count over changing rows
    a := 1000000 + x; b := a + 20000000000;
    EXECUTE format('SELECT count(*), sum(k) FROM %I WHERE k BETWEEN $1 AND $2', tbl) INTO n, s USING a, b;
    EXECUTE format('SELECT count(*), sum(kb) FROM %I WHERE kb BETWEEN $1 AND $2', tbl) INTO n2, s2 USING a, b;
    IF n <> n2 OR s IS DISTINCT FROM s2 THEN
      RAISE EXCEPTION 'MISMATCH %: range % .. % saw % rows (sum %), btree % (sum %)', tbl, a, b, n, s, n2, s2;
    END IF;
  ELSE                      -- ORDER BY LIMIT over changing rows, both directions
    a := 1000000 + x;
    EXECUTE format('SELECT array_agg(k) FROM (SELECT k FROM %I WHERE k >= $1 ORDER BY k LIMIT 20) s', tbl)
      INTO arr USING a;
    EXECUTE format('SELECT array_agg(kb) FROM (SELECT kb FROM %I WHERE kb >= $1 ORDER BY kb LIMIT 20) s', tbl)
      INTO arr2 USING a;
    IF arr IS DISTINCT FROM arr2 THEN
      RAISE EXCEPTION 'MISMATCH %: ORDER BY k from % gave %, btree %', tbl, a, arr, arr2;
    END IF;
    EXECUTE format('SELECT array_agg(k) FROM (SELECT k FROM %I WHERE k <= $1 ORDER BY k DESC LIMIT 20) s', tbl)
      INTO arr USING a;
    EXECUTE format('SELECT array_agg(kb) FROM (SELECT kb FROM %I WHERE kb <= $1 ORDER BY kb DESC LIMIT 20) s', tbl)
      INTO arr2 USING a;
    IF arr IS DISTINCT FROM arr2 THEN
      RAISE EXCEPTION 'MISMATCH %: ORDER BY k DESC from % gave %, btree %', tbl, a, arr, arr2;
    END IF;
  END IF;
END $$;

-- All rows of tbl (key, ctid) read one way: seq, btree, index, desc, bitmap,
-- ios (ctid NULL).  Raises unless EXPLAIN shows the intended scan.
CREATE FUNCTION scan_rows(tbl text, mode text) RETURNS TABLE (key int8, tid tid)
LANGUAGE plpgsql AS $$
DECLARE
  q text; want text; plan text := ''; line text;
  whole text := ' >= ''-9223372036854775808''::int8';
BEGIN
  PERFORM set_config('enable_seqscan', (mode = 'seq')::text, true);
  PERFORM set_config('enable_indexscan', (mode IN ('btree', 'index', 'desc'))::text, true);
  PERFORM set_config('enable_bitmapscan', (mode = 'bitmap')::text, true);
  PERFORM set_config('enable_indexonlyscan', (mode = 'ios')::text, true);
  PERFORM set_config('enable_sort', 'off', true);
  CASE mode
    WHEN 'seq' THEN
      q := format('SELECT k, ctid FROM %I', tbl);
      want := format('Seq Scan on %s', tbl);
    WHEN 'btree' THEN
      q := format('SELECT kb, ctid FROM %I WHERE kb %s ORDER BY kb', tbl, whole);
      want := format('Index Scan using %s_kb on ', tbl);
    WHEN 'index' THEN
      q := format('SELECT k, ctid FROM %I WHERE k %s ORDER BY k', tbl, whole);
      want := format('Index Scan using %s_k on ', tbl);
    WHEN 'desc' THEN
      q := format('SELECT k, ctid FROM %I WHERE k %s ORDER BY k DESC', tbl, whole);
      want := format('Index Scan Backward using %s_k on ', tbl);
    WHEN 'bitmap' THEN
      q := format('SELECT k, ctid FROM %I WHERE k %s', tbl, whole);
      want := format('Bitmap Index Scan on %s_k ', tbl);
    WHEN 'ios' THEN
      q := format('SELECT k, NULL::tid FROM %I WHERE k %s ORDER BY k', tbl, whole);
      want := format('Index Only Scan using %s_k on ', tbl);
  END CASE;
  FOR line IN EXECUTE 'EXPLAIN ' || q LOOP
    plan := plan || line || E'\n';
  END LOOP;
  IF position(want IN plan) = 0 THEN
    RAISE EXCEPTION 'mode %: expected "%" in the plan:%', mode, want, E'\n' || plan;
  END IF;
  RETURN QUERY EXECUTE q;
END $$;

-- "N rows, M missing, E extra": the multiset of (key, ctid) of a scan
-- against that of a seqscan (keys only for index-only scans).
CREATE FUNCTION scan_diff(tbl text, mode text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE n bigint; missing bigint; extra bigint;
BEGIN
  IF mode = 'ios' THEN
    SELECT count(*) INTO missing FROM
      (SELECT key FROM scan_rows(tbl, 'seq') EXCEPT ALL SELECT key FROM scan_rows(tbl, mode)) d;
    SELECT count(*) INTO extra FROM
      (SELECT key FROM scan_rows(tbl, mode) EXCEPT ALL SELECT key FROM scan_rows(tbl, 'seq')) d;
  ELSE
    SELECT count(*) INTO missing FROM
      (SELECT * FROM scan_rows(tbl, 'seq') EXCEPT ALL SELECT * FROM scan_rows(tbl, mode)) d;
    SELECT count(*) INTO extra FROM
      (SELECT * FROM scan_rows(tbl, mode) EXCEPT ALL SELECT * FROM scan_rows(tbl, 'seq')) d;
  END IF;
  SELECT count(*) INTO n FROM scan_rows(tbl, mode);
  RETURN format('%s rows, %s missing, %s extra', n, missing, extra);
END $$;

-- Sampled lookups, ranges and ORDER BY LIMIT through the lsm index against
-- the btree: "S samples, M mismatches" (each mismatch also a WARNING).
CREATE FUNCTION sample_check(tbl text, nsamples int) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  y int8; r int8; i int := 0; bad int := 0;
  n bigint; n2 bigint; s numeric; s2 numeric; arr int8[]; arr2 int8[];
BEGIN
  PERFORM set_config('enable_seqscan', 'off', true);
  FOR y IN EXECUTE format('SELECT k FROM %I TABLESAMPLE SYSTEM (10) REPEATABLE (%s) LIMIT %s',
                          tbl, nsamples, nsamples) LOOP
    i := i + 1;
    PERFORM set_config('enable_bitmapscan', (i % 2 = 0)::text, true);
    PERFORM set_config('enable_indexscan', (i % 2 = 1)::text, true);
    -- a present key, and a random one (almost always absent)
    r := 1000000 + (random() * 1e12)::int8;
    FOREACH s IN ARRAY ARRAY[y, r]::numeric[] LOOP
      EXECUTE format('SELECT count(*) FROM %I WHERE k = $1', tbl) INTO n USING s::int8;
      EXECUTE format('SELECT count(*) FROM %I WHERE kb = $1', tbl) INTO n2 USING s::int8;
      IF n <> n2 OR (s = y AND n = 0) THEN
        bad := bad + 1;
        RAISE WARNING 'MISMATCH %: lookup of % saw % rows, btree %', tbl, s, n, n2;
      END IF;
    END LOOP;
    EXECUTE format('SELECT count(*), sum(k) FROM %I WHERE k BETWEEN $1 AND $1 + 10000000000', tbl)
      INTO n, s USING y;
    EXECUTE format('SELECT count(*), sum(kb) FROM %I WHERE kb BETWEEN $1 AND $1 + 10000000000', tbl)
      INTO n2, s2 USING y;
    IF n <> n2 OR s IS DISTINCT FROM s2 THEN
      bad := bad + 1;
      RAISE WARNING 'MISMATCH %: range from % saw % rows, btree %', tbl, y, n, n2;
    END IF;
    PERFORM set_config('enable_indexscan', 'on', true);
    PERFORM set_config('enable_bitmapscan', 'off', true);
    EXECUTE format('SELECT array_agg(k) FROM (SELECT k FROM %I WHERE k >= $1 ORDER BY k LIMIT 20) s', tbl)
      INTO arr USING y;
    EXECUTE format('SELECT array_agg(kb) FROM (SELECT kb FROM %I WHERE kb >= $1 ORDER BY kb LIMIT 20) s', tbl)
      INTO arr2 USING y;
    IF arr IS DISTINCT FROM arr2 THEN
      bad := bad + 1;
      RAISE WARNING 'MISMATCH %: ORDER BY k from % gave %, btree %', tbl, y, arr, arr2;
    END IF;
    EXECUTE format('SELECT array_agg(k) FROM (SELECT k FROM %I WHERE k <= $1 ORDER BY k DESC LIMIT 20) s', tbl)
      INTO arr USING y;
    EXECUTE format('SELECT array_agg(kb) FROM (SELECT kb FROM %I WHERE kb <= $1 ORDER BY kb DESC LIMIT 20) s', tbl)
      INTO arr2 USING y;
    IF arr IS DISTINCT FROM arr2 THEN
      bad := bad + 1;
      RAISE WARNING 'MISMATCH %: ORDER BY k DESC from % gave %, btree %', tbl, y, arr, arr2;
    END IF;
  END LOOP;
  RETURN format('%s samples, %s mismatches', i, bad);
END $$;

-- Per level of an lsm index on one int8 column: runs, and pairs of runs of
-- the level whose key ranges overlap.
CREATE FUNCTION level_report(idx regclass)
RETURNS TABLE (level int, runs bigint, overlaps bigint) LANGUAGE sql AS $$
  WITH r AS (SELECT i.level, i.run_id, btrim(i.smallest_key, '()')::int8 AS lo,
                    btrim(i.largest_key, '()')::int8 AS hi
             FROM lsm_am.index_info(idx) i)
  SELECT a.level, count(DISTINCT a.run_id), count(b.run_id)
  FROM r a LEFT JOIN r b ON b.level = a.level AND a.run_id < b.run_id AND a.lo <= b.hi AND b.lo <= a.hi
  GROUP BY a.level ORDER BY a.level
$$;

CREATE FUNCTION l0_runs(idx regclass) RETURNS bigint LANGUAGE sql AS $$
  SELECT count(*) FROM lsm_am.index_info(idx) WHERE level = 0
$$;

CREATE TABLE l0_samples (at timestamptz, l0 bigint, l0_stats int);
});

for my $p (@POLICIES)
{
	$node->safe_psql('postgres', "SELECT make_table('t_$p', '$p')");
}
$node->safe_psql('postgres', 'VACUUM ANALYZE');

# ------------------------------------------------------------------ helpers

# one connection for the many small queries (tests/t/LsmSession.pm)
my $sess = LsmSession->new($node);
sub sql { return $sess->safe_psql('postgres', $_[0]); }

# Set GUCs with ALTER SYSTEM and reload; wait until new sessions see them.
sub set_system
{
	my (%set) = @_;
	for my $k (sort keys %set)
	{
		sql("ALTER SYSTEM SET $k = '$set{$k}'");
	}
	sql('SELECT pg_reload_conf()');
	for my $k (sort keys %set)
	{
		$node->poll_query_until('postgres',
			"SELECT setting = '$set{$k}' FROM pg_settings WHERE name = '$k'")
		  or die "$k did not become $set{$k}";
	}
}

# pid of an lsm_am worker of database $db flushing or compacting index $idx
# ($kind: 'flush', 'compaction' or '' for either; the worker's query is
# "lsm_am <kind> of index <schema>.<index>: <inputs>"); '' after 180 s,
# with what it saw.
sub wait_worker_busy
{
	my ($db, $idx, $kind) = @_;
	my $q = qq{SELECT pid FROM pg_stat_activity
		WHERE backend_type = 'lsm_am worker' AND datname = '$db' AND state = 'active'
		  AND (query LIKE 'lsm_am flush %' OR query LIKE 'lsm_am compaction %')
		  AND query LIKE 'lsm_am $kind%' AND query LIKE '% of index %.$idx:%' LIMIT 1};
	return wait_until($sess, $q, "a worker of $db busy on $idx ($kind)",
		[ $WORKERS, 'SELECT * FROM lsm_am.progress' ],
		undef, qr/^\d+$/);
}

# Run $sql in $db with statement_timeout = 20s; must succeed.
sub timed_ddl
{
	my ($db, $ddl, $what) = @_;
	my $t0 = time;
	my ($ret, $out, $err) = $node->psql($db, "SET statement_timeout = '20s';\n$ddl",
		on_error_stop => 1);
	my $el = time - $t0;
	is($ret, 0, "$what succeeds while a worker merges") or diag $err;
	unlike($err, qr/ERROR|deadlock/, "$what: no error");
	note sprintf('%s took %.2f s', $what, $el);
	return $el;
}

# Poll $query until it returns 't', at most $secs seconds; false, with the
# last output and the workers, after that.
sub poll_for
{
	my ($secs, $query) = @_;
	return wait_until($sess, $query, "'$query'", $WORKERS, $secs);
}

sub log_pos { return -s $node->logfile; }

sub log_since
{
	my ($pos) = @_;
	my $log = slurp_file($node->logfile);
	return substr($log, $pos);
}

sub mstats
{
	my ($idx, $db) = @_;
	$db //= 'postgres';
	my $row = $node->safe_psql($db, qq{
		SELECT flushes, compactions, trivial_moves, pages_flushed, pages_compacted,
		       slowdowns, stops, round(stall_ms), backend_flushes, free_pages,
		       accounted_pages, leaked_pages, immutable_memtables,
		       array_to_string(runs_per_level, ','), pending
		FROM lsm_am.maintenance_stats('$idx')});
	my @v = split /\|/, $row;
	my %s;
	@s{qw(flushes compactions trivial_moves pages_flushed pages_compacted
		  slowdowns stops stall_ms backend_flushes free_pages accounted_pages
		  leaked_pages immutable_memtables levels pending)} = @v;
	return \%s;
}

sub fmt_stats
{
	my ($s) = @_;
	return join(' ', map { "$_=$s->{$_}" } sort keys %$s);
}

# check_index: (leaked_pages, dropped_pages, the whole row), ERROR fails
sub check_index
{
	my ($idx, $what, $db) = @_;
	$db //= 'postgres';
	my ($ret, $out, $err) = $node->psql($db,
		"SELECT leaked_pages, dropped_pages, total_pages, log_pages, run_pages, free_pages, reserved_pages, unused_pages FROM lsm_am.check_index('$idx')");
	is($ret, 0, "$what: check_index raises no error") or diag $err;
	my @v = split /\|/, $out;
	is($v[0] // 'none', '0', "$what: check_index finds no leaked pages") or diag "$out\n$err";
	is($v[1] // 'none', '0', "$what: no pages dropped for a full free list");
	note "$what: check_index total=$v[2] log=$v[3] run=$v[4] free=$v[5] reserved=$v[6] unused=$v[7]"
	  if @v >= 8;
	($ret, $out, $err) = $node->psql($db, "SELECT lsm_am.verify('$idx', true)");
	is("$ret$out$err", '0', "$what: verify($idx, true) finds $idx sound and complete");
}

sub wait_merges
{
	my ($idx, $what, $db) = @_;
	$db //= 'postgres';
	my $t0 = time;
	my $r = merges_done($node, $idx, '3 min', $db);
	is($r, 't', "$what: wait_for_merges returns true");
	note sprintf('%s: wait_for_merges took %.1f s', $what, time - $t0);
}

# Every scan kind through the lsm index returns exactly the seqscan's rows.
sub check_scans
{
	my ($tbl, $what, $db) = @_;
	$db //= 'postgres';
	my $n = $node->safe_psql($db, "SELECT count(*) FROM $tbl");
	for my $mode ('index', 'desc', 'bitmap', 'ios', 'btree')
	{
		my ($ret, $out, $err) = $node->psql($db, "SELECT scan_diff('$tbl', '$mode')");
		is($out, "$n rows, 0 missing, 0 extra", "$what: $mode scan of $tbl returns each row exactly once")
		  or diag $err;
	}
	return $n;
}

sub sample_ok
{
	my ($tbl, $what) = @_;
	my ($ret, $out, $err) = $node->psql('postgres', "SELECT sample_check('$tbl', 300)");
	like($out, qr/^[1-9]\d* samples, 0 mismatches$/,
		"$what: sampled lookups, ranges and ORDER BY LIMIT match the btree")
	  or diag $err;
	note "$what: $out";
}

sub write_file
{
	my ($path, $text) = @_;
	open(my $fh, '>', $path) or die "$path: $!";
	print $fh $text;
	close $fh;
}

sub pgbench_start
{
	my ($clients, $secs, $files, $out, $err) = @_;
	return IPC::Run::start(
		[
			'pgbench', '-n', '-h', $node->host, '-p', $node->port,
			'-c', $clients, '-j', ($clients > 1 ? 2 : 1), '-T', $secs,
			'--max-tries=10', (map { ('-f', $_) } @$files), 'postgres'
		],
		'>', $out, '2>', $err);
}

my $dir = PostgreSQL::Test::Utils::tempdir;

# ------------------------------------------------------------------ 1. load
my @mix;
for my $p (@POLICIES)
{
	my $t = "t_$p";
	write_file("$dir/insert_$p.sql",
		"INSERT INTO $t (k) SELECT 1000000 + (random() * 1e12)::int8 FROM generate_series(1, 50);\n");
	write_file("$dir/update_$p.sql", qq{\\set x random(1000000, 1000000000000)
UPDATE $t SET k = 1000000 + (random() * 1e12)::int8 WHERE kb = (SELECT kb FROM $t WHERE kb >= :x ORDER BY kb LIMIT 1);
UPDATE $t SET v = v + 1 WHERE kb BETWEEN :x AND :x::int8 + 2000000000;
});
	write_file("$dir/delete_$p.sql", qq{\\set x random(1000000, 1000000000000)
DELETE FROM $t WHERE kb BETWEEN :x AND :x::int8 + 3000000000;
});
	write_file("$dir/read_$p.sql", qq{\\set x random(0, 999999999999)
\\set kind random(1, 6)
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT read_check('$t', :x, :kind);
END;
});
	push @mix, "$dir/insert_$p.sql\@4", "$dir/update_$p.sql\@1",
	  "$dir/delete_$p.sql\@1", "$dir/read_$p.sql\@4";
}
write_file("$dir/vacuum.sql",
	join('', map { "VACUUM (INDEX_CLEANUP ON) t_$_;\n" } @POLICIES) . "\\sleep 2 s\n");
write_file("$dir/compact.sql", qq{\\set p random(1, 3)
SELECT lsm_am.compact((ARRAY['t_leveled_k', 't_tiered_k', 't_lazy_k'])[:p]::regclass);
\\sleep 3 s
});

my $logpos = log_pos();
my ($mix_out, $mix_err, $vac_out, $vac_err, $cmp_out, $cmp_err) = ('') x 6;
my $t_start = time;
my $mix = pgbench_start(6, $LOAD_SECONDS, \@mix, \$mix_out, \$mix_err);
my $vac = pgbench_start(1, $LOAD_SECONDS, ["$dir/vacuum.sql"], \$vac_out, \$vac_err);
my $cmp = pgbench_start(1, $LOAD_SECONDS, ["$dir/compact.sql"], \$cmp_out, \$cmp_err);

my %max_l0 = map { $_ => 0 } @POLICIES;
my ($busy_samples, $samples, %worker_pids) = (0, 0);
my $flushed = 0;
while (time - $t_start < $LOAD_SECONDS)
{
	sleep 1;
	$samples++;
	for my $p (@POLICIES)
	{
		my ($l0a, $l0b) = split /\|/, sql(
			"SELECT l0_runs('t_${p}_k'), coalesce((runs_per_level)[1], 0) FROM lsm_am.maintenance_stats('t_${p}_k')");
		$max_l0{$p} = $l0a if $l0a > $max_l0{$p};
		$max_l0{$p} = $l0b if $l0b > $max_l0{$p};
	}
	my $busy = sql(q{SELECT string_agg(pid::text, ' ') FROM pg_stat_activity
		WHERE backend_type = 'lsm_am worker' AND (query LIKE 'lsm_am flush %' OR query LIKE 'lsm_am compaction %')});
	if ($busy ne '')
	{
		$busy_samples++;
		$worker_pids{$_} = 1 for split / /, $busy;
	}
	if (!$flushed && time - $t_start > $LOAD_SECONDS / 3)
	{
		# one concurrent explicit flush of every index
		my ($ret, $out, $err) = $node->psql('postgres',
			join('', map { "SELECT lsm_am.flush('t_${_}_k');\n" } @POLICIES));
		is($ret, 0, 'lsm_am.flush during the load succeeds') or diag $err;
		$flushed = 1;
	}
}
my $mix_ok = $mix->finish;
my $vac_ok = $vac->finish;
my $cmp_ok = $cmp->finish;
note sprintf('load ran %.0f s', time - $t_start);
note "pgbench mix:\n$mix_out";
note "vacuum client: " . join(' ', grep { /processed|failed/ } split /\n/, $vac_out);
note "compact client: " . join(' ', grep { /processed|failed/ } split /\n/, $cmp_out);
ok($mix_ok, 'writers and readers finished without errors') or diag $mix_err;
unlike($mix_err, qr/MISMATCH/, 'no reader saw a wrong answer');
ok($vac_ok, 'the VACUUM client finished without errors') or diag $vac_err;
ok($cmp_ok, 'the lsm_am.compact() client finished without errors') or diag $cmp_err;
like($mix_out, qr/number of transactions actually processed: [1-9]/, 'the mix did work');
like($vac_out, qr/number of transactions actually processed: [1-9]/, 'VACUUM ran');
like($cmp_out, qr/number of transactions actually processed: [1-9]/, 'lsm_am.compact() ran');
cmp_ok($busy_samples, '>', 0,
	"lsm_am workers seen flushing or compacting in pg_stat_activity ($busy_samples of $samples samples, pids "
	  . join(' ', sort keys %worker_pids) . ')');
for my $p (@POLICIES)
{
	cmp_ok($max_l0{$p}, '<=', 36, "$p: level 0 never exceeded l0_stop_trigger (max $max_l0{$p})");
}
my $load_log = log_since($logpos);
unlike($load_log, qr/PANIC|TRAP|terminated by signal|lsm_am background maintenance/,
	'no crash and no worker error during the load');

# ------------------------------------------------------------------ 2. after the load
# The compact() client may have left single runs: a last burst of inserts
# (a dozen flushes per index, no compact()) gives the policies levels to shape.
my @burst = map {
	my $out = '';
	[
		IPC::Run::start(
			[
				'psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-h', $node->host, '-p', $node->port,
				'-d', 'postgres', '-c',
				"INSERT INTO t_$_ (k) SELECT 1000000 + (random() * 1e12)::int8 FROM generate_series(1, 30000)"
			],
			'>', \$out, '2>', \$out),
		$_, \$out
	]
} @POLICIES;
for my $b (@burst)
{
	ok($b->[0]->finish, "$b->[1]: a burst of 30,000 inserts") or diag ${ $b->[2] };
}
for my $p (@POLICIES)
{
	my $idx = "t_${p}_k";
	wait_merges($idx, $p);
	# wait_for_merges asks the picker; "pending" is the slot's request bits,
	# which an insert that stalled may have set for work done since: the
	# worker clears them when it wakes (within lsm_am.worker_naptime).
	wait_until($sess, "SELECT pending FROM lsm_am.maintenance_stats('$idx')", "$p: ${idx}'s pending bits cleared",
		[ $WORKERS, "SELECT * FROM lsm_am.maintenance_stats('$idx')" ], undef, 'f');
	my $s = mstats($idx);
	note "$p: " . fmt_stats($s);
	cmp_ok($s->{flushes}, '>', 0, "$p: flushes happened ($s->{flushes})");
	cmp_ok($s->{compactions}, '>', 0, "$p: compactions happened ($s->{compactions})");
	is($s->{pending}, 'f', "$p: nothing pending after wait_for_merges");
	my %lv;
	for my $line (split /\n/, sql("SELECT * FROM level_report('$idx')"))
	{
		my ($level, $runs, $overlaps) = split /\|/, $line;
		$lv{$level} = [ $runs, $overlaps ];
	}
	note "$p: runs per level " . join(' ', map { "L$_=$lv{$_}[0]" } sort { $a <=> $b } keys %lv);
	my $l0 = $lv{0} ? $lv{0}[0] : 0;
	cmp_ok($l0, '<', 4, "$p: fewer L0 runs than l0_compaction_trigger after wait_for_merges");
	my @deeper = grep { $_ > 0 } sort { $a <=> $b } keys %lv;
	ok(@deeper > 0, "$p: runs below level 0 exist");
	if ($p eq 'leveled')
	{
		is(join(',', map { $lv{$_}[1] } @deeper), join(',', map { 0 } @deeper),
			'leveled: the runs of every level >= 1 have disjoint key ranges');
	}
	elsif ($p eq 'tiered')
	{
		ok(!(grep { $_ < 8 && $lv{$_}[0] >= 10 } @deeper),
			'tiered: no level 1..7 holds size_ratio (10) runs');
	}
	else
	{
		is($lv{ $deeper[-1] }[0], 1, 'lazy: the last level holds one run');
		ok(!(grep { $_ != $deeper[-1] && $lv{$_}[0] >= 10 } @deeper),
			'lazy: no tiered level holds size_ratio runs');
	}
	check_index($idx, $p);
	my $n = check_scans("t_$p", "$p after the load");
	note "$p: $n rows";
	sample_ok("t_$p", $p);
}

# ------------------------------------------------------------------ 3. compact() vs CREATE INDEX
sql('VACUUM t_leveled');
sql("SELECT lsm_am.compact('t_leveled_k')");
my ($runs, $pages, $entries) = split /\|/,
  sql("SELECT count(*), sum(pages), sum(entries) FROM lsm_am.index_info('t_leveled_k')");
is($runs, 1, 'leveled: one run after lsm_am.compact()');
sql("CREATE INDEX t_leveled_fresh ON t_leveled USING lsm (k) WITH (memtable_size = 64, compaction = leveled)");
my ($fruns, $fpages, $fentries) = split /\|/,
  sql("SELECT count(*), sum(pages), sum(entries) FROM lsm_am.index_info('t_leveled_fresh')");
note "compacted index: $runs run, $pages pages, $entries entries; fresh CREATE INDEX: $fruns run, $fpages pages, $fentries entries";
is($entries, $fentries, 'the compacted run holds as many entries as a fresh build');
cmp_ok(abs($pages - $fpages), '<=', 0.1 * $fpages,
	"the compacted run is within 10% of a fresh build ($pages vs $fpages pages)");
sql('DROP INDEX t_leveled_fresh');
check_index('t_leveled_k', 'after compact()');

# VACUUM of a compacted run whose full data pages hold pairs of duplicate
# keys: removing one entry moves the prefix-compression restart points.
sql("SELECT make_table('t_dup', 'leveled', 0)");
sql('INSERT INTO t_dup (k) SELECT g::int8 * 1000003 FROM generate_series(1, 50000) g, generate_series(1, 2)');
sql("SELECT lsm_am.compact('t_dup_k')");
sql('DELETE FROM t_dup WHERE ctid = (SELECT min(ctid) FROM t_dup WHERE k = 5000015)');
my ($vret, $vout, $verr) = $node->psql('postgres', 'VACUUM (INDEX_CLEANUP ON) t_dup');
is($vret, 0, 'VACUUM removes a dead duplicate from a compacted run') or diag $verr;
is(sql("SELECT sum(entries) FROM lsm_am.index_info('t_dup_k')"), '99999',
	'the compacted run holds the 99,999 live entries after VACUUM');
check_index('t_dup_k', 'VACUUM of duplicates');
check_scans('t_dup', 'VACUUM of duplicates');
sql('DROP TABLE t_dup');

# ------------------------------------------------------------------ 4. bounded level 0
set_system('lsm_am.l0_slowdown_trigger' => 6, 'lsm_am.l0_stop_trigger' => 10,
	'lsm_am.flush_delay_ms' => 20);
sql("SELECT make_table('t_stall', 'leveled')");
write_file("$dir/stall_insert.sql",
	"INSERT INTO t_stall (k) SELECT 1000000 + (random() * 1e12)::int8 FROM generate_series(1, 100);\n");
write_file("$dir/stall_sample.sql", qq{INSERT INTO l0_samples
  SELECT clock_timestamp(), NULL, coalesce((runs_per_level)[1], 0)
  FROM lsm_am.maintenance_stats('t_stall_k');
\\sleep 20 ms
});
my ($st_out, $st_err, $sm_out, $sm_err) = ('') x 4;
$t_start = time;
my $stall = pgbench_start(4, $STALL_SECONDS, ["$dir/stall_insert.sql"], \$st_out, \$st_err);
my $sampler = pgbench_start(1, $STALL_SECONDS, ["$dir/stall_sample.sql"], \$sm_out, \$sm_err);
my $max_stall_l0 = 0;
while (time - $t_start < $STALL_SECONDS)
{
	sleep 1;
	my ($l0a, $l0b) = split /\|/, sql(
		"SELECT l0_runs('t_stall_k'), coalesce((runs_per_level)[1], 0) FROM lsm_am.maintenance_stats('t_stall_k')");
	$max_stall_l0 = $l0a if $l0a > $max_stall_l0;
	$max_stall_l0 = $l0b if $l0b > $max_stall_l0;
}
ok($stall->finish, 'inserts with slow merges and low triggers finished') or diag $st_err;
ok($sampler->finish, 'the 20 ms level-0 sampler finished') or diag $sm_err;
my ($nsamples, $smax, $nover) = split /\|/,
  sql('SELECT count(*), max(l0_stats), count(*) FILTER (WHERE l0_stats > 10) FROM l0_samples');
$max_stall_l0 = $smax if $smax > $max_stall_l0;
my $s = mstats('t_stall_k');
note "stall phase: $nsamples samples, max L0 $max_stall_l0, $nover samples above 10; " . fmt_stats($s);
note 'inserted rows: ' . sql('SELECT count(*) - 20000 FROM t_stall');
# every 20 ms on a quiet machine; a loaded one (CI) samples less often
cmp_ok($nsamples, '>', 100, "level 0 was sampled often ($nsamples samples in $STALL_SECONDS s)");
cmp_ok($max_stall_l0, '<=', 10,
	"level 0 never held more than l0_stop_trigger = 10 runs (max $max_stall_l0)");
# level 0 reaches the slowdown trigger: batches are delayed by the index's
# write rate from there on
cmp_ok($s->{slowdowns}, '>', 0,
	"inserts were slowed down ($s->{slowdowns} slowdowns, $s->{stops} stops, $s->{stall_ms} ms, max L0 $max_stall_l0)");
set_system('lsm_am.l0_slowdown_trigger' => 20, 'lsm_am.l0_stop_trigger' => 36,
	'lsm_am.flush_delay_ms' => 0);
wait_merges('t_stall_k', 'stall phase');
check_index('t_stall_k', 'stall phase');
check_scans('t_stall', 'after the stall phase');

# ------------------------------------------------------------------ 4b. flushes beside a long merge
# A worker in a merge used to flush nothing until the merge ended: the
# memtables filled behind it and the inserts stopped (a lazy merge into the
# last level runs for seconds).  Now, between two pages of its merge, the
# worker flushes the oldest memtable when every immutable one waits.  The
# merge is slowed to 1 s a page and this backend's inserts fill the active
# memtable and both immutable ones (64 kB memtables, 2,500 rows each):
# the worker flushes while the same merge (its progress row's started_at)
# goes on.  Before, only the stopped backend flushed (after a second).
set_system('lsm_am.flush_delay_ms' => 1000);
sql("SELECT make_table('t_busy', 'lazy')");
sql("SELECT make_l0('t_busy', 4)");
my $busy_pid = wait_worker_busy('postgres', 't_busy_k', 'compaction');
isnt($busy_pid, '', "a worker is merging t_busy_k (pid $busy_pid), 1 s a page");
my $merge_q = qq{SELECT started_at FROM lsm_am.progress
	WHERE pid = $busy_pid AND indexrelid = 't_busy_k'::regclass AND kind = 'compaction'};
my $merge_started = sql($merge_q);
my $b0 = mstats('t_busy_k');
sql(q{INSERT INTO t_busy (k) SELECT 1000000 + (random() * 1e12)::int8 FROM generate_series(1, 7500)});
ok(poll_for(60, qq{SELECT flushes - backend_flushes > $b0->{flushes} - $b0->{backend_flushes}
	FROM lsm_am.maintenance_stats('t_busy_k')}), 'the worker flushed a waiting memtable');
my $b1 = mstats('t_busy_k');
note 'beside the merge: ' . fmt_stats($b1);
# a flush beside the merge shows as this worker's job while it runs: wait
# for the merge's own row (or for none, if the merge has ended)
for (1 .. 300)
{
	last if sql(qq{SELECT coalesce(max(kind), '') FROM lsm_am.progress
		WHERE pid = $busy_pid AND indexrelid = 't_busy_k'::regclass}) ne 'flush';
	usleep(100_000);
}
is(sql($merge_q), $merge_started,
	'... while the merge it was in when the inserts began still ran');
set_system('lsm_am.flush_delay_ms' => 0);
wait_merges('t_busy_k', 'flushes beside a merge');
check_index('t_busy_k', 'flushes beside a merge');
check_scans('t_busy', 'after flushes beside a merge');
sql('DROP TABLE t_busy');

# ------------------------------------------------------------------ 5. DDL during merges
set_system('lsm_am.flush_delay_ms' => 300);
my @ddl = (
	[ 'DROP INDEX', 'DROP INDEX t_ddl_k' ],
	[ 'TRUNCATE', 'TRUNCATE t_ddl' ],
	[ 'REINDEX', 'REINDEX INDEX t_ddl_k' ]);
for my $d (@ddl)
{
	my ($what, $ddl) = @$d;
	sql("SELECT make_table('t_ddl', 'leveled')");
	sql("SELECT make_l0('t_ddl', 4)");
	my $pos = log_pos();
	my $pid = wait_worker_busy('postgres', 't_ddl_k', '');
	isnt($pid, '', "$what: a worker is merging t_ddl_k (pid $pid)");
	note "$what: worker activity: "
	  . sql("SELECT query FROM pg_stat_activity WHERE pid = " . ($pid || 0));
	timed_ddl('postgres', $ddl, $what);
	# the table and what is left of the index still work
	sql("INSERT INTO t_ddl (k) SELECT 1000000 + (random() * 1e12)::int8 FROM generate_series(1, 3000)");
	if ($what ne 'DROP INDEX')
	{
		set_system('lsm_am.flush_delay_ms' => 0);
		wait_merges('t_ddl_k', $what);
		check_index('t_ddl_k', "after $what");
		check_scans('t_ddl', "after $what");
		set_system('lsm_am.flush_delay_ms' => 300);
	}
	unlike(log_since($pos), qr/lsm_am background maintenance|PANIC|TRAP/,
		"$what: no worker error");
	sql('DROP TABLE t_ddl');
}

# DROP DATABASE while a worker of that database merges
sql('CREATE DATABASE mergedb');
$node->safe_psql('mergedb', $helpers);
$node->safe_psql('mergedb', "SELECT make_table('t_db', 'leveled')");
$node->safe_psql('mergedb', "SELECT make_l0('t_db', 4)");
my $dbpos = log_pos();
my $dbpid = wait_worker_busy('mergedb', 't_db_k', '');
isnt($dbpid, '', "DROP DATABASE: a worker is merging in mergedb (pid $dbpid)");
timed_ddl('postgres', 'DROP DATABASE mergedb', 'DROP DATABASE');
is(sql("SELECT count(*) FROM pg_database WHERE datname = 'mergedb'"), '0', 'mergedb is gone');
# the launcher must not keep trying to serve the dropped database
ok(poll_for(30, "SELECT count(*) = 0 FROM pg_stat_activity WHERE backend_type = 'lsm_am worker' AND (datname IS NULL OR datname = 'mergedb')"),
	'no worker left for the dropped database (within 30 s)');
my $droplog = log_since($dbpos);
unlike($droplog, qr/lsm_am background maintenance|PANIC|TRAP/, 'DROP DATABASE: no worker error');
my $fatal = () = $droplog =~ /FATAL/g;
cmp_ok($fatal, '<=', 1, "DROP DATABASE: no stream of failing worker starts ($fatal FATAL lines)");
set_system('lsm_am.flush_delay_ms' => 0);

# ------------------------------------------------------------------ 6. workers
# 6a. lsm_am.max_workers = 0: backends flush and compact themselves
set_system('lsm_am.max_workers' => 0);
wait_until($sess, "SELECT count(*) = 0 FROM pg_stat_activity WHERE backend_type = 'lsm_am worker'",
	'the workers exiting (max_workers = 0)', $WORKERS)
  or die 'workers did not exit';
sql("SELECT make_table('t_nowork', 'leveled')");
sql("INSERT INTO t_nowork (k) SELECT 1000000 + (random() * 1e12)::int8 FROM generate_series(1, 40000)");
$s = mstats('t_nowork_k');
note 'max_workers = 0: ' . fmt_stats($s);
cmp_ok($s->{backend_flushes}, '>', 0, "max_workers = 0: backends flushed ($s->{backend_flushes})");
cmp_ok($s->{compactions}, '>', 0, "max_workers = 0: backends compacted ($s->{compactions})");
is(sql("SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'lsm_am worker'"), '0',
	'max_workers = 0: no worker started');
wait_merges('t_nowork_k', 'max_workers = 0');
check_index('t_nowork_k', 'max_workers = 0');
check_scans('t_nowork', 'max_workers = 0');
set_system('lsm_am.max_workers' => 2);

# 6b. max_worker_processes exhausted (the launcher and the logical
# replication launcher take both slots)
$node->append_conf('postgresql.conf', 'max_worker_processes = 2');
$node->restart;
my $wpos = log_pos();
sql('TRUNCATE t_nowork');
sql("INSERT INTO t_nowork (k) SELECT 1000000 + (random() * 1e12)::int8 FROM generate_series(1, 40000)");
$s = mstats('t_nowork_k');
note 'max_worker_processes exhausted: ' . fmt_stats($s);
cmp_ok($s->{backend_flushes}, '>', 0,
	"max_worker_processes exhausted: backends flushed ($s->{backend_flushes})");
like(log_since($wpos), qr/lsm_am could not start a background worker/,
	'the launcher reports that it could not start a worker');
wait_merges('t_nowork_k', 'max_worker_processes exhausted');
check_index('t_nowork_k', 'max_worker_processes exhausted');
check_scans('t_nowork', 'max_worker_processes exhausted');
$node->append_conf('postgresql.conf', 'max_worker_processes = 16');
$node->restart;

# 6c. a worker killed in the middle of a compaction
set_system('lsm_am.flush_delay_ms' => 300);
sql("SELECT make_table('t_kill', 'leveled')");
sql("SELECT make_l0('t_kill', 4)");
my $kpid = wait_worker_busy('postgres', 't_kill_k', 'compaction');
isnt($kpid, '', "a worker is compacting t_kill_k (pid $kpid)");
my $before = mstats('t_kill_k');
my $kpos = log_pos();
is(sql("SELECT pg_terminate_backend($kpid)"), 't', 'worker terminated');
wait_until($sess, "SELECT count(*) = 0 FROM pg_stat_activity WHERE pid = $kpid",
	"the terminated worker $kpid exiting", $WORKERS)
  or die 'the worker did not exit';
set_system('lsm_am.flush_delay_ms' => 0);
# the interrupted compaction is done again by a worker, without help
my $redone = poll_for(90, qq{
	SELECT compactions > $before->{compactions} AND coalesce((runs_per_level)[1], 0) < 4
	FROM lsm_am.maintenance_stats('t_kill_k')});
ok($redone, 'a worker redoes the interrupted compaction by itself within 90 s')
  or diag 'maintenance_stats: ' . fmt_stats(mstats('t_kill_k'));
wait_merges('t_kill_k', 'after killing a worker');
my $after = mstats('t_kill_k');
note 'killed worker: before ' . fmt_stats($before) . '; after ' . fmt_stats($after);
cmp_ok($after->{compactions}, '>', $before->{compactions}, 'compactions went on after the kill');
check_index('t_kill_k', 'after killing a worker');
check_scans('t_kill', 'after killing a worker');
unlike(log_since($kpos), qr/terminated by signal|PANIC|TRAP|server process/,
	'killing a worker did not crash the server');

# ------------------------------------------------------------------ 7. crashes
sub crash_during
{
	my ($kind, $delay, $prepare) = @_;
	set_system('lsm_am.flush_delay_ms' => $delay);
	$prepare->();
	# committed rows that are only in the memtable and its log
	sql("INSERT INTO t_leveled (k) SELECT 1000000 + (random() * 1e12)::int8 FROM generate_series(1, 500)");
	my $expected = sql('SELECT count(*), sum(k) FROM t_leveled');
	my $pid = wait_worker_busy('postgres', 't_leveled_k', $kind);
	isnt($pid, '', "a worker is $kind t_leveled_k (pid $pid)");
	# right away: the job has just begun (a page per $delay ms), and a
	# second's wait could see a short job end on a loaded machine
	is(sql("SELECT count(*) FROM pg_stat_activity WHERE pid = $pid AND query LIKE 'lsm_am $kind%'"), '1',
		"still $kind at the crash");
	$node->stop('immediate');
	$node->start;
	set_system('lsm_am.flush_delay_ms' => 0);
	is(sql('SELECT count(*), sum(k) FROM t_leveled'), $expected, "crash while $kind: committed rows in the heap");
	check_scans('t_leveled', "right after a crash while $kind");
	wait_merges('t_leveled_k', "crash while $kind");
	check_index('t_leveled_k', "crash while $kind");
	check_scans('t_leveled', "after a crash while $kind and wait_for_merges");
}

crash_during('compaction', 300, sub { sql("SELECT make_l0('t_leveled', 4)"); });
crash_during('flush', 1000, sub {
	sql("INSERT INTO t_leveled (k) SELECT 1000000 + (random() * 1e12)::int8 FROM generate_series(1, 4000)");
});

unlike(slurp_file($node->logfile), qr/PANIC|TRAP/, 'no PANIC or assertion failure in the whole run');
$node->stop;
done_testing();
