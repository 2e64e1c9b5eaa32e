# 003_standby.pl — lsm indexes on a streaming standby (in the manner of
# contrib/bloom's t/001_wal.pl).
#
# A primary and a hot standby, both with lsm_am preloaded and
# wal_consistency_checking = 'generic' (redo compares every generic-WAL page
# with the primary's image).  After each step — inserts, automatic and
# explicit flushes, deletes + VACUUM, CREATE INDEX on existing data, REINDEX,
# TRUNCATE — the standby catches up and a set of queries forced through the
# lsm indexes must give the same answers on both nodes, and the same as a
# sequential scan.  At the end the standby log must show no inconsistent page.
#
# INCLUDE columns: table ti has an lsm index (k) INCLUDE (int, text, jsonb,
# int[], numeric and a long text, compressed or out of line in the heap) and
# a twin ti_bt with the same rows under the same btree index.  It gets rows
# with t's; after each step an index-only scan of ti_k on the primary must
# return exactly ti_bt's rows, the standby's scan of ti_k (an index scan:
# index-only scans are refused there) the primary's answer; the standby's
# pages of ti_k are compared with the primary's by wal_consistency_checking,
# and after the promotion the former standby answers index-only scans of
# the ti_k it replayed.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use LsmCluster;
use LsmSession;

my $primary = PostgreSQL::Test::Cluster->new('primary');
$primary->init(allows_streaming => 1, extra => [ initdb_args() ]);
$primary->append_conf(
	'postgresql.conf', qq{
shared_preload_libraries = 'lsm_am'
wal_consistency_checking = 'generic'
autovacuum = off
hot_standby_feedback = on
});
$primary->start;
$primary->backup('backup');

my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'backup', has_streaming => 1);
$standby->start;
# one connection to each node for the many small queries (tests/t/LsmSession.pm)
my $psess = LsmSession->new($primary);
my $ssess = LsmSession->new($standby);

$primary->safe_psql(
	'postgres', q{
CREATE EXTENSION lsm_am;
CREATE TABLE t (id int, k int8, v text COLLATE "C");
-- created on the empty table: every entry arrives by insert; tiny memtable
-- so flushes to sorted runs happen on their own
CREATE INDEX t_k ON t USING lsm (k) WITH (memtable_size = 64);
-- pad (in no index) takes some rows over the TOAST threshold: their long
-- values are compressed or stored out of line (toast_tuple_target = 128)
CREATE TABLE ti (id int, k int8, a text, j jsonb, arr int[], n numeric, lt text, pad text)
	WITH (toast_tuple_target = 128);
CREATE TABLE ti_bt (LIKE ti) WITH (toast_tuple_target = 128);
CREATE INDEX ti_k ON ti USING lsm (k) INCLUDE (id, a, j, arr, n, lt) WITH (memtable_size = 64);
CREATE INDEX ti_bt_k ON ti_bt (k) INCLUDE (id, a, j, arr, n, lt);
});

my $force_index  = 'SET enable_seqscan = off; SET enable_bitmapscan = off; SET enable_indexonlyscan = off;';
my $force_bitmap = 'SET enable_seqscan = off; SET enable_indexscan = off; SET enable_indexonlyscan = off;';
my $force_ionly  = 'SET enable_seqscan = off; SET enable_bitmapscan = off;';
my $force_seq    = 'SET enable_indexscan = off; SET enable_bitmapscan = off; SET enable_indexonlyscan = off;';

my $step = 0;
my $next_id = 1;

sub insert_rows
{
	my ($n) = @_;
	my $first = $next_id;
	my $last = $next_id + $n - 1;
	$next_id += $n;
	# keys: a hash of the id (random order), some duplicates, some NULLs
	$psess->safe_psql('postgres', qq{
INSERT INTO t
SELECT g,
       CASE WHEN g % 97 = 0 THEN NULL ELSE (hashint4(g) % 50000)::int8 END,
       CASE WHEN g % 89 = 0 THEN NULL ELSE md5(g::text) END
  FROM generate_series($first, $last) g});
	ti_insert($first, $last);
}

# rows of ti and ti_bt for every second id of $first..$last (the same
# expressions for both: the same rows)
sub ti_insert
{
	my ($first, $last, $sess) = @_;
	$sess //= $psess;
	my $rows = qq{SELECT g,
       CASE WHEN g % 53 = 0 THEN NULL ELSE (hashint4(g) % 20000)::int8 END,
       CASE WHEN g % 7 = 0 THEN NULL ELSE md5(g::text) END,
       CASE WHEN g % 11 = 0 THEN NULL ELSE jsonb_build_object('g', g, 'h', hashint4(g)) END,
       CASE WHEN g % 13 = 0 THEN NULL ELSE ARRAY[g, NULL, g % 10] END,
       CASE WHEN g % 17 = 0 THEN NULL ELSE g / 7.0 END,
       CASE WHEN g % 3 = 0 THEN repeat(md5(g::text), 1 + g % 28)
            WHEN g % 3 = 1 THEN (SELECT string_agg(md5(g::text || i), '') FROM generate_series(1, g % 27) i) END,
       CASE WHEN g % 4 = 0 THEN repeat('p', 2100) END
  FROM generate_series($first, $last) g WHERE g % 2 = 0};
	$sess->safe_psql('postgres', "INSERT INTO ti $rows; INSERT INTO ti_bt $rows");
}

# ti through ti_k: on $sess's node an index-only scan (plan asserted; on a
# standby an index scan) must return ti_bt's rows exactly (as text, as
# multisets); returns the rows' md5 and count
my $ti_cols = 'k, id, a, j, arr, n, lt';
sub ti_check
{
	my ($sess, $where, $ionly) = @_;
	my $scan = "SELECT $ti_cols FROM ti WHERE k >= -9223372036854775808 UNION ALL SELECT $ti_cols FROM ti WHERE k IS NULL";
	my $plan = $sess->safe_psql('postgres', "$force_ionly EXPLAIN (COSTS OFF) $scan");
	my $re = $ionly ? qr/Index Only Scan using ti_k on ti(?s:.*)Index Only Scan using ti_k on ti/
	  : qr/Index (Only )?Scan using ti_k on ti(?s:.*)Index (Only )?Scan using ti_k on ti/;
	like($plan, $re, "$where: ti scanned through ti_k" . ($ionly ? ' (index-only)' : ''));
	my $diff = $sess->safe_psql('postgres', qq{$force_ionly SELECT count(*) FROM (
		(SELECT x::text FROM ($scan) x EXCEPT ALL SELECT x::text FROM (SELECT $ti_cols FROM ti_bt) x)
		UNION ALL (SELECT x::text FROM (SELECT $ti_cols FROM ti_bt) x EXCEPT ALL SELECT x::text FROM ($scan) x)) d});
	is($diff, '0', "$where: ti_k returns ti_bt's rows and included values");
	return $sess->safe_psql('postgres', qq{$force_ionly SELECT count(*), md5(string_agg(x::text, ',' ORDER BY x::text)) FROM ($scan) x});
}

# queries of index $idx over column $col, each run under $force; returns a
# list of [description, sql]
sub queries
{
	my ($col, $lit) = @_;
	my @q = (
		[ "count/sum over $col",
			"SELECT count(*), sum(id) FROM t WHERE $col IS NOT NULL" ],
		[ "range on $col", "SELECT id, $col FROM t WHERE $col BETWEEN $lit->[1] AND $lit->[2] ORDER BY $col, id" ],
		[ "equality on $col", "SELECT id FROM t WHERE $col = $lit->[3] ORDER BY id" ],
		[ "IS NULL on $col", "SELECT id FROM t WHERE $col IS NULL ORDER BY id" ],
	);
	return @q;
}

# ordered queries (run with index scans only; the index provides the order)
sub ordered_queries
{
	my ($col) = @_;
	return (
		[ "ORDER BY $col LIMIT",      "SELECT $col FROM t ORDER BY $col LIMIT 30" ],
		[ "ORDER BY $col DESC LIMIT", "SELECT $col FROM t ORDER BY $col DESC LIMIT 30" ],
	);
}

# Compare primary and standby (and a seqscan) after the standby caught up.
sub check_step
{
	my ($what, @indexes) = @_;
	$step++;
	wait_catchup($primary, $standby, 'replay', $primary->lsn('insert'));

	my %lits = (
		k => [ '0', '1000', '9000', '(SELECT k FROM t WHERE k IS NOT NULL ORDER BY id LIMIT 1)' ],
		v => [ q{''}, q{'1'}, q{'4'}, q{(SELECT v FROM t WHERE v IS NOT NULL ORDER BY id LIMIT 1)} ],
	);
	for my $ix (@indexes)
	{
		my ($idx, $col) = @$ix;
		my @modes = ([ 'index', $force_index, 'Index Scan' ], [ 'bitmap', $force_bitmap, 'Bitmap Index Scan' ]);
		for my $qq (queries($col, $lits{$col}), ordered_queries($col))
		{
			my ($desc, $sql) = @$qq;
			my $ordered = $desc =~ /LIMIT/;
			my $seq = $psess->safe_psql('postgres', "$force_seq $sql");
			for my $m (@modes)
			{
				my ($mname, $force, $node_re) = @$m;
				next if $ordered && $mname eq 'bitmap';
				my $plan = $psess->safe_psql('postgres', "$force EXPLAIN (COSTS OFF) $sql");
				like($plan, qr/\Q$node_re\E.* $idx\b/,
					"step $step ($what): $desc [$mname] uses $idx");
				my $p = $psess->safe_psql('postgres', "$force $sql");
				my $s = $ssess->safe_psql('postgres', "$force $sql");
				is($p, $seq, "step $step ($what): $desc [$mname] on the primary matches a seqscan");
				is($s, $p, "step $step ($what): $desc [$mname] on the standby matches the primary");
			}
		}
		# Index-only scans: on the primary, and refused on the standby (redo
		# of VACUUM's run rewrites takes no cleanup lock, so the TID
		# interlock does not hold there: lsmcanreturn says no), where the
		# same query runs as a plain index scan and must agree.
		my $sql = "SELECT count(*) FROM t WHERE $col >= $lits{$col}[1]";
		my $want = $psess->safe_psql('postgres', "$force_seq $sql");
		like($psess->safe_psql('postgres', "$force_ionly EXPLAIN (COSTS OFF) $sql"),
			qr/Index Only Scan using $idx\b/, "step $step ($what): index-only scan on $col on the primary");
		is($psess->safe_psql('postgres', "$force_ionly $sql"), $want,
			"step $step ($what): index-only count on $col on the primary");
		my $splan = $ssess->safe_psql('postgres', "$force_ionly EXPLAIN (COSTS OFF) $sql");
		like($splan, qr/Index Scan using $idx\b/, "step $step ($what): the standby scans $idx");
		unlike($splan, qr/Index Only Scan/, "step $step ($what): no index-only scan on the standby");
		is($ssess->safe_psql('postgres', "$force_ionly $sql"), $want,
			"step $step ($what): count on $col on the standby");
	}
	# ti: the included values, through ti_k, on both nodes
	my $pti = ti_check($psess, "step $step ($what): primary", 1);
	my $sti = ti_check($ssess, "step $step ($what): standby", 0);
	is($sti, $pti, "step $step ($what): ti through ti_k on the standby matches the primary");
	cmp_ok((split /\|/, $pti)[0], '>', 0, "step $step ($what): ti has rows");
	# the standby answers index_stats too
	my $st = $ssess->safe_psql('postgres',
		"SELECT count(*) FROM lsm_am.index_stats('t_k')");
	is($st, '1', "step $step ($what): index_stats works on the standby");
	# every page of each index is accounted for, on both nodes
	for my $ix (@indexes, [ 'ti_k', 'k' ])
	{
		my $idx = $ix->[0];
		for my $node ($primary, $standby)
		{
			my $name = $node == $primary ? 'primary' : 'standby';
			my ($ret, $out, $err) = $node->psql('postgres',
				"SELECT leaked_pages, dropped_pages FROM lsm_am.check_index('$idx')");
			is("$out$err", '0|0', "step $step ($what): check_index($idx) on the $name finds no leaked page");
			($ret, $out, $err) = $node->psql('postgres', "SELECT lsm_am.verify('$idx', true)");
			is("$ret$out$err", '0', "step $step ($what): verify($idx, true) on the $name finds it sound and complete");
		}
	}
}

# ---- 1. inserts into the memtable and log pages (several automatic flushes)
insert_rows(6000);
check_step('inserts', [ 't_k', 'k' ]);
is(merges_done($psess, 't_k'), 't',
	'background flushes and compactions finish');
cmp_ok($psess->safe_psql('postgres', "SELECT runs FROM lsm_am.index_stats('t_k')"),
	'>', 0, 'automatic flushes wrote sorted runs');
cmp_ok($psess->safe_psql('postgres', "SELECT flushes FROM lsm_am.maintenance_stats('t_k')"),
	'>', 1, 'several automatic flushes');
check_step('inserts, flushes and compactions done', [ 't_k', 'k' ]);

# ---- 2. explicit flush
insert_rows(500);
$psess->safe_psql('postgres', "SELECT lsm_am.flush('t_k'); SELECT lsm_am.flush('ti_k')");
is($psess->safe_psql('postgres', "SELECT memtable_entries FROM lsm_am.index_stats('t_k')"),
	'0', 'lsm_am.flush empties the memtable');
check_step('flush', [ 't_k', 'k' ]);

# ---- 3. deletes + VACUUM
$psess->safe_psql('postgres', 'DELETE FROM t WHERE id % 7 = 3; VACUUM t');
# (no count of ti_k's entries after VACUUM: with hot_standby_feedback the
# standby's snapshots may keep dead rows, and their entries, for a while)
$psess->safe_psql('postgres', 'DELETE FROM ti WHERE id % 7 = 2; DELETE FROM ti_bt WHERE id % 7 = 2; VACUUM ti; VACUUM ti_bt');
check_step('delete + vacuum', [ 't_k', 'k' ]);

# ---- 4. more inserts (reuse of freed heap slots)
insert_rows(3000);
check_step('more inserts', [ 't_k', 'k' ]);

# ---- 5. CREATE INDEX on existing data (a text key)
$psess->safe_psql('postgres', 'CREATE INDEX t_v ON t USING lsm (v)');
insert_rows(800);
check_step('create index on existing data', [ 't_k', 'k' ], [ 't_v', 'v' ]);

# ---- 6. REINDEX
$psess->safe_psql('postgres', 'REINDEX INDEX t_k; REINDEX INDEX t_v; REINDEX INDEX ti_k');
insert_rows(300);
check_step('reindex', [ 't_k', 'k' ], [ 't_v', 'v' ]);

# ---- 7. TRUNCATE, then new rows
$psess->safe_psql('postgres', 'TRUNCATE t');
wait_catchup($primary, $standby, 'replay', $primary->lsn('insert'));
is($ssess->safe_psql('postgres', "$force_index SELECT count(*) FROM t WHERE k IS NOT NULL"),
	'0', 'after TRUNCATE the standby finds nothing through the index');
insert_rows(2500);
check_step('truncate + inserts', [ 't_k', 'k' ], [ 't_v', 'v' ]);

# ---- 8. a restart of the standby rebuilds its memtables from log pages
insert_rows(400);
wait_catchup($primary, $standby, 'replay', $primary->lsn('insert'));
$standby->restart;
check_step('standby restart', [ 't_k', 'k' ], [ 't_v', 'v' ]);

# ---- 9. a standby scan paused mid-way while the primary flushes and merges
# The primary retires runs under a standby cursor and may reuse their pages.
# With hot_standby_feedback (this cluster's setting) the primary sees the
# cursor's snapshot and keeps the pages: the cursor must return exactly the
# rows of its snapshot.  Without it (9b) the primary reuses them: the cursor
# either still returns exactly its rows or is cancelled like a recovery
# conflict (SQLSTATE 40001, "conflict with recovery") — never other data,
# never a "corrupted" error.
# From here on every second level-0 run starts a compaction (the background
# workers read the setting from the server configuration).
$psess->safe_psql('postgres', 'ALTER SYSTEM SET lsm_am.l0_compaction_trigger = 2');
$primary->reload;

sub standby_cursor_case
{
	my ($tbl, $feedback) = @_;
	my $what = "standby cursor on $tbl ($feedback)";
	$psess->safe_psql('postgres', qq{
CREATE TABLE $tbl (k int8);
CREATE INDEX ${tbl}_k ON $tbl USING lsm (k) WITH (memtable_size = 64);
INSERT INTO $tbl SELECT hashint4(g) FROM generate_series(1, 20000) g;
SELECT lsm_am.flush('${tbl}_k');
});
	wait_catchup($primary, $standby, 'replay', $primary->lsn('insert'));
	my $expected = $ssess->safe_psql('postgres', "$force_seq SELECT k FROM $tbl ORDER BY k");
	my $cur = $standby->background_psql('postgres', on_error_stop => 0);
	$cur->query_safe('SET enable_seqscan = off; SET enable_bitmapscan = off; SET enable_sort = off;');
	like($cur->query_safe("EXPLAIN (COSTS OFF) SELECT k FROM $tbl ORDER BY k"),
		qr/Index (Only )?Scan using ${tbl}_k/, "$what: the scan uses the lsm index");
	$cur->query_safe('BEGIN ISOLATION LEVEL REPEATABLE READ');
	$cur->query_safe("DECLARE c CURSOR FOR SELECT k FROM $tbl ORDER BY k");
	my $first = $cur->query_safe('FETCH 1000 FROM c');
	if ($feedback eq 'feedback')
	{
		# the primary must know the cursor's snapshot before it retires runs
		my $xmin = $cur->query_safe('SELECT pg_snapshot_xmin(pg_current_snapshot())');
		ok(wait_until($primary,
				"SELECT bool_and(age(backend_xmin) >= age('$xmin'::xid)) FROM pg_stat_replication",
				"$what: the primary holding the standby's snapshot xmin $xmin",
				'SELECT application_name, state, backend_xmin, replay_lsn FROM pg_stat_replication'),
			"$what: the primary holds the standby's snapshot");
	}
	# (a conflict may end the session while the primary works, before the
	# FETCH ALL below: its log lines are looked for from here)
	my $log_offset = -s $standby->logfile;
	# on the primary: new rows, flushes and merges (runs retired, pages reused
	# unless the standby's snapshot holds them)
	for my $i (1 .. 6)
	{
		$psess->safe_psql('postgres', qq{
INSERT INTO $tbl SELECT hashint4(g) FROM generate_series($i * 100000, $i * 100000 + 4999) g;
SELECT lsm_am.flush('${tbl}_k');
SELECT lsm_am.wait_for_merges('${tbl}_k');
});
	}
	is($psess->safe_psql('postgres',
			"SELECT compactions > 0, coalesce(runs_per_level[1], 0) < 2 FROM lsm_am.maintenance_stats('${tbl}_k')"),
		't|t', "$what: the primary compacted the flushes under the cursor");
	is($psess->safe_psql('postgres', "SELECT leaked_pages FROM lsm_am.check_index('${tbl}_k')"), '0',
		"$what: check_index on the primary finds no leaked page");
	# (no heap VACUUM here: removing heap tuples would cancel the standby query
	# through an ordinary recovery conflict, which is not what is tested)
	wait_catchup($primary, $standby, 'replay', $primary->lsn('insert'));
	# (a conflict that meets the session idle in its transaction ends the
	# session: the background psql dies)
	my ($rest, $failed) = eval { $cur->query('FETCH ALL FROM c') };
	my $err = $@ ? "session ended: $@" : ($cur->{stderr} // '');
	$failed = 1 if $@;
	$err .= "\n" . substr(slurp_file($standby->logfile), $log_offset) if $failed;
	if ($feedback eq 'feedback' || !$failed)
	{
		ok(!$failed, "$what: the cursor reads to its end") or diag($err);
		is("$first\n$rest", $expected,
			"$what: rows of its snapshot, in order, across primary flushes and merges");
	}
	else
	{
		like($err, qr/(canceling statement|terminating connection) due to conflict with recovery/,
			"$what: cancelled as a recovery conflict");
		unlike($err, qr/corrupted|PANIC|TRAP|terminated by signal/, "$what: no corruption error, no crash")
		  or diag($err);
		note("$what ended with: $err");
	}
	eval { $cur->quit };
	return $failed;
}
standby_cursor_case('s', 'feedback');

# 9b. without hot_standby_feedback
$standby->append_conf('postgresql.conf', 'hot_standby_feedback = off');
$standby->reload;
wait_until($primary, 'SELECT bool_and(backend_xmin IS NULL) FROM pg_stat_replication',
	'the standby stopping its feedback', 'SELECT application_name, state, backend_xmin FROM pg_stat_replication')
  or die 'the standby still sends feedback';
my $cancelled = standby_cursor_case('s2', 'no feedback');
note('without feedback the standby cursor was ' . ($cancelled ? 'cancelled' : 'not disturbed'));
$standby->append_conf('postgresql.conf', 'hot_standby_feedback = on');
$standby->reload;

# ---- 10. standby readers while the primary inserts, flushes, merges, vacuums
# A fixed set of rows (keys 1..20000, never changed) must be found exactly by
# every standby query while redo changes the index under it.
$psess->safe_psql('postgres', q{
CREATE TABLE fixed (k int8 NOT NULL);
CREATE INDEX fixed_k ON fixed USING lsm (k) WITH (memtable_size = 64);
INSERT INTO fixed SELECT g FROM generate_series(1, 20000) g;
-- planned on every call (EXECUTE), so each call gets the scan type of `mode`
CREATE FUNCTION fixed_check(lo int8, mode int) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
	n int8;
	s numeric;
	line text;
	plan text := '';
	q text := format('SELECT count(*), sum(k) FROM fixed WHERE k BETWEEN %s AND %s', lo, lo + 999);
BEGIN
	PERFORM set_config('enable_seqscan', 'off', true);
	PERFORM set_config('enable_indexscan', (mode <> 1)::text, true);
	PERFORM set_config('enable_bitmapscan', (mode = 1)::text, true);
	PERFORM set_config('enable_indexonlyscan', (mode = 2)::text, true);
	-- the scan this call claims to test (index-only scans are refused on a
	-- standby: mode 2 runs an index scan there)
	FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
		plan := plan || line || ' ';
	END LOOP;
	IF position(CASE WHEN mode = 1 THEN 'Bitmap Index Scan on fixed_k' ELSE 'Index Scan using fixed_k' END IN plan) = 0 THEN
		RAISE EXCEPTION 'standby scan mode %: unexpected plan %', mode, plan;
	END IF;
	EXECUTE q INTO n, s;
	IF n <> 1000 OR s <> lo * 1000 + 499500 THEN
		RAISE EXCEPTION 'standby scan mode %: % rows, sum %, for keys % .. %', mode, n, s, lo, lo + 999;
	END IF;
END $$;
});
wait_catchup($primary, $standby, 'replay', $primary->lsn('insert'));
my $script = $standby->basedir . '/reader.sql';
open(my $fh, '>', $script) or die "cannot write $script: $!";
print $fh "\\set lo random(1, 19001)\n\\set mode random(0, 2)\nSELECT fixed_check(:lo, :mode);\n";
close $fh;
my ($pgb_out, $pgb_err) = ('', '');
my $pgbench = IPC::Run::start(
	[ 'pgbench', '-n', '-c', '2', '-j', '2', '-T', '20', '-f', $script,
	  '-h', $standby->host, '-p', $standby->port, 'postgres' ],
	'>', \$pgb_out, '2>', \$pgb_err);
for my $i (1 .. 12)
{
	$psess->safe_psql('postgres', qq{
INSERT INTO fixed SELECT 1000000 + $i * 10000 + g FROM generate_series(1, 3000) g;
SELECT lsm_am.flush('fixed_k');
DELETE FROM fixed WHERE k > 1000000 AND k % 3 = $i % 3;
VACUUM fixed;
});
}
is(merges_done($psess, 'fixed_k'), 't',
	'primary: compactions of fixed_k finish');
is($psess->safe_psql('postgres',
		"SELECT compactions > 0, coalesce(runs_per_level[1], 0) < 2 FROM lsm_am.maintenance_stats('fixed_k')"),
	't|t', 'primary: fixed_k was compacted while the standby read it');
wait_catchup($primary, $standby, 'replay', $primary->lsn('insert'));
for my $node ($primary, $standby)
{
	my ($ret, $out, $err) = $node->psql('postgres',
		"SELECT leaked_pages, dropped_pages FROM lsm_am.check_index('fixed_k')");
	is("$out$err", '0|0', 'check_index(fixed_k) finds no leaked page on the ' .
		($node == $primary ? 'primary' : 'standby'));
}
my $pgb_ok = $pgbench->finish;
ok($pgb_ok && $pgb_err !~ /abort|ERROR/, 'standby readers found exactly the fixed rows throughout')
  or diag("pgbench: $pgb_out\n$pgb_err");
like($pgb_out, qr/number of transactions actually processed: [1-9]/, 'standby readers ran')
  or diag($pgb_out);

# ---- 10b. an immediate stop of the standby in the middle of replay: the
# primary inserts, flushes and compacts while the standby is stopped with
# -m immediate and started again; it resumes replay from its last restart
# point and must agree with the primary.
{
	my $w = $primary->background_psql('postgres');
	$w->query_until(qr/writing/, "\\echo writing\n" . join('', map {
		"INSERT INTO t SELECT g, (hashint4(g) % 50000)::int8, md5(g::text) FROM generate_series($_ * 1000000, $_ * 1000000 + 2999) g;\n"
		  . "SELECT lsm_am.flush('t_k');\n" } 1 .. 8) . "\\echo written\n");
	# stop the standby once it has replayed part of that work
	my $lsn = $primary->lsn('insert');
	wait_until($standby, "SELECT pg_last_wal_replay_lsn() >= '$lsn'", "the standby replaying up to $lsn",
		'SELECT pg_last_wal_receive_lsn(), pg_last_wal_replay_lsn(), pg_is_wal_replay_paused()')
	  or die 'the standby does not replay';
	$standby->stop('immediate');
	$w->query_until(qr/written/, '');
	$w->quit;
	$standby->start;
	$next_id = 10_000_000;    # the rows above used ids of their own
	check_step('standby stopped immediately mid-replay', [ 't_k', 'k' ], [ 't_v', 'v' ]);
}

# ---- 11. promotion: the former standby writes to the indexes it replayed
insert_rows(700);
wait_catchup($primary, $standby, 'replay', $primary->lsn('insert'));
my $want = $psess->safe_psql('postgres', "$force_seq SELECT count(*), sum(id) FROM t WHERE k IS NOT NULL");
$primary->stop;
$standby->promote;
wait_until($standby, 'SELECT NOT pg_is_in_recovery()', 'the promotion',
	q{SELECT pid, backend_type, state, wait_event FROM pg_stat_activity WHERE backend_type IN ('startup', 'checkpointer')})
  or die 'standby did not leave recovery';
is($ssess->safe_psql('postgres', "$force_index SELECT count(*), sum(id) FROM t WHERE k IS NOT NULL"),
	$want, 'promoted: the index holds every row the old primary had');
$ssess->safe_psql('postgres', qq{
INSERT INTO t SELECT g, (hashint4(g) % 50000)::int8, md5(g::text) FROM generate_series($next_id, $next_id + 4999) g;
SELECT lsm_am.flush('t_k');
INSERT INTO t SELECT g, (hashint4(g) % 50000)::int8, md5(g::text) FROM generate_series($next_id + 5000, $next_id + 5999) g;
});
for my $ix ([ 't_k', 'k' ], [ 't_v', 'v' ])
{
	my ($idx, $col) = @$ix;
	my $sql = "SELECT count(*), sum(id) FROM t WHERE $col IS NOT NULL";
	my $seq = $ssess->safe_psql('postgres', "$force_seq $sql");
	is($ssess->safe_psql('postgres', "$force_index $sql"), $seq, "promoted: $idx index scan after new inserts");
	is($ssess->safe_psql('postgres', "$force_bitmap $sql"), $seq, "promoted: $idx bitmap scan after new inserts");
}
# the replayed INCLUDE index answers index-only scans, before and after new rows
$ssess->safe_psql('postgres', 'VACUUM ti; VACUUM ti_bt');
ti_check($ssess, 'promoted', 1);
ti_insert($next_id, $next_id + 3999, $ssess);
$ssess->safe_psql('postgres', "SELECT lsm_am.flush('ti_k')");
ti_insert($next_id + 4000, $next_id + 4999, $ssess);
ti_check($ssess, 'promoted, after new rows', 1);
my $osql = "SELECT k FROM t WHERE k IS NOT NULL ORDER BY k DESC LIMIT 100";
is($ssess->safe_psql('postgres', "$force_index $osql"), $ssess->safe_psql('postgres', "$force_seq $osql"),
	'promoted: ordered scan after new inserts');

# ---- the logs
ok(!$standby->log_contains(qr/inconsistent page found/), 'no inconsistent page found during redo');
ok(!$standby->log_contains(qr/PANIC|TRAP:|server process .* was terminated/),
	'standby log shows no crash');
ok(!$primary->log_contains(qr/PANIC|TRAP:|server process .* was terminated/),
	'primary log shows no crash');

$standby->stop;
done_testing();
