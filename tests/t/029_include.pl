# 029_include.pl — randomized differential test of INCLUDE columns (issue
# 34, items 1 and 4): lsm against btree, under concurrent writes.
#
# A pair of identical tables, lsm_w with lsm indexes and bt_w with the same
# indexes as btree.  The columns are one of every type the lsm operator
# classes support, and jsonb, int[] and point (types lsm cannot key), with
# random NULLs, and a long text column that the heap stores compressed
# (repetitive values) or out of line (incompressible ones; toast_tuple_target
# is 128).  Six indexes, each with INCLUDE columns: one keyed on int4 that
# includes every other column, and five with other keys (text and a
# two-column key, uuid, timestamp DESC NULLS LAST, numeric, bytea), so every
# type is an included column of some index and a key of another.  The lsm
# indexes have the smallest memtable (flushes throughout) and
# lsm_am.l0_compaction_trigger is 2 (background merges).
#
# While pgbench clients insert (one statement into both tables), update
# included and key columns, delete, flush and VACUUM, the test runs rounds of
# queries on each index under forced index-only, index and bitmap plans
# (EXPLAIN must show the lsm index scanned that way) and the same queries on
# bt_w, in one REPEATABLE READ transaction per round (both tables seen at
# the same moment); the answers (every row as text: included values must
# come back exactly, -0 and 1.10 included) must be equal as multisets
# (EXCEPT ALL both ways).  After the writers stop: VACUUM, a last round, one
# entry per live row in each index, check_index and verify(heapallindexed).
#
# The seed is printed; LSM_DIFF_SEED=N reproduces the data (the interleaving
# of the writers is not reproducible).
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use LsmCluster;
use LsmSession;

my $seed = $ENV{LSM_DIFF_SEED} // 20261205;
$seed =~ /^\d+$/ or die "LSM_DIFF_SEED must be a non-negative integer";
diag("LSM_DIFF_SEED=$seed (set LSM_DIFF_SEED to reproduce or vary)");
srand($seed);
my $WRITE_SECONDS = 40;

my $node = PostgreSQL::Test::Cluster->new('include');
$node->init(extra => [ initdb_args() ]);
$node->append_conf(
	'postgresql.conf', qq{
shared_preload_libraries = 'lsm_am'
lsm_am.l0_compaction_trigger = 2
autovacuum = off
max_locks_per_transaction = 256
log_statement = 'none'
log_min_duration_statement = -1
});
$node->start;
my $sess = LsmSession->new($node);
sub sql { return $sess->safe_psql('postgres', $_[0]); }

# every type of the lsm operator classes, then the key-less ones
my @cols = (
	[ i2 => 'int2', q{(random() * 60000 - 30000)::int2} ],
	[ i4 => 'int4', q{(random() * 3000)::int4} ],
	[ i8 => 'int8', q{CASE WHEN random() < 0.2 THEN (random() * 50)::int8 ELSE (random() * 1e15)::int8 END} ],
	[ f4 => 'float4', q{(ARRAY['NaN', 'Infinity', '-0', '0', '1.5', (random() * 1e6)::text])[1 + (random() * 5)::int]::float4} ],
	[ f8 => 'float8', q{(ARRAY['NaN', '-Infinity', '-0', '5e-324', '2.5', (random() * 1e12)::text])[1 + (random() * 5)::int]::float8} ],
	[ num => 'numeric', q{(ARRAY['NaN', '1.10', '1.1', '-0.000', '1e40', (random() * 1e4)::numeric(20, 2)::text])[1 + (random() * 5)::int]::numeric} ],
	[ bo => 'bool', q{random() < 0.5} ],
	[ da => 'date', q{(ARRAY['infinity', '-infinity', (date '2000-01-01' + (random() * 10000)::int)::text])[1 + (random() * 2.3)::int]::date} ],
	[ ti => 'time', q{time '00:00' + random() * interval '24 hours'} ],
	[ ts => 'timestamp', q{timestamp '2000-01-01' + (random() * 4000)::int * interval '1 hour'} ],
	[ tz => 'timestamptz', q{timestamptz '2000-01-01 00:00+00' + random() * interval '9000 days'} ],
	[ iv => 'interval', q{(ARRAY['1 mon', '30 days', '720 hours', make_interval(0, (random() * 14)::int, 0, (random() * 40)::int, 0, 0, random() * 100)::text])[1 + (random() * 3)::int]::interval} ],
	[ uu => 'uuid', q{md5((random() * 2000)::int::text)::uuid} ],
	[ tx => 'text COLLATE "C"', q{substr(md5(random()::text), 1, (random() * 3)::int) || (ARRAY['', 'é', ' ', 'Z', '日本'])[1 + (random() * 4)::int]} ],
	[ vc => 'varchar(40)', q{substr(md5(random()::text), 1, (random() * 40)::int)} ],
	[ by => 'bytea', q{decode(substr(md5((random() * 500)::int::text), 1, 2 * (random() * 8)::int), 'hex')} ],
	[ j => 'jsonb', q{CASE WHEN random() < 0.05 THEN 'null'::jsonb ELSE jsonb_build_object('n', (random() * 100)::int, 's', md5(random()::text), 'a', jsonb_build_array(random() < 0.5, NULL, 1.50)) END} ],
	[ arr => 'int[]', q{CASE WHEN random() < 0.05 THEN '{}'::int[] ELSE ARRAY[(random() * 100)::int, NULL, (random() * 100)::int] END} ],
	[ pt => 'point', q{point(random() * 100, random() * 100)} ],
	# 200..900 bytes: compressed in the heap when repetitive, out of line
	# (uncompressed) when not
	[ lt => 'text', q{CASE WHEN random() < 0.5 THEN repeat(substr(md5(random()::text), 1, 5), 40 + (random() * 140)::int)
		ELSE (SELECT string_agg(md5(random()::text || i || g), '') FROM generate_series(1, 7 + (random() * 21)::int) i) END} ],
);
my @names = map { $_->[0] } @cols;
# an index: [name, key columns (as in CREATE INDEX), the key columns' names, included columns]
my @indexes = (
	[ 'w_all', 'i4', ['i4'], [ 'id', grep { $_ ne 'i4' } @names ] ],
	[ 'w_tx', 'tx, i8 DESC', [qw(tx i8)], [qw(f8 num iv j arr)] ],
	[ 'w_uu', 'uu', ['uu'], [qw(tz by arr bo pt)] ],
	[ 'w_ts', 'ts DESC NULLS LAST', ['ts'], [qw(i2 f4 da ti vc)] ],
	[ 'w_num', 'num', ['num'], [qw(lt j i4)] ],
	[ 'w_by', 'by', ['by'], [qw(iv uu tx f4)] ],
);
my %coltype = map { $_->[0] => $_->[1] } @cols;
$coltype{id} = 'int';

# pad (in no index; 2100 bytes in half the rows) takes a row over the TOAST
# threshold, and toast_tuple_target = 128 then compresses or moves out of line
# the row's long values
my $ddl = '(id int NOT NULL, ' . join(', ', map { "$_->[0] $_->[1]" } @cols) . ', pad text)';
my $gen_cols = join(",\n\t\t", map { "CASE WHEN random() < 0.08 THEN NULL ELSE $_->[2] END" } @cols)
  . ",\n\t\tCASE WHEN random() < 0.5 THEN repeat('p', 2100) END";
my $setup = qq{
CREATE EXTENSION lsm_am;
CREATE SEQUENCE w_ids;
CREATE TABLE lsm_w $ddl WITH (toast_tuple_target = 128);
CREATE TABLE bt_w $ddl WITH (toast_tuple_target = 128);
-- n new rows (ids from w_ids), random values, every column NULL now and then
CREATE FUNCTION gen_w(n int) RETURNS SETOF lsm_w LANGUAGE sql AS \$\$
	SELECT nextval('w_ids')::int,
		$gen_cols
	FROM generate_series(1, n) g
\$\$;
SELECT setseed(@{[ ($seed % 1000000) / 1000000 ]});
};
# half of the indexes before the rows arrive (inserts), half after (builds)
for my $i (0 .. $#indexes)
{
	my ($name, $keys, undef, $inc) = @{ $indexes[$i] };
	my $idx = "CREATE INDEX lsm_$name ON lsm_w USING lsm ($keys) INCLUDE (" . join(', ', @$inc) . ") WITH (memtable_size = 64);\n"
	  . "CREATE INDEX bt_$name ON bt_w USING btree ($keys) INCLUDE (" . join(', ', @$inc) . ");\n";
	$indexes[$i][4] = $idx;
	$setup .= $idx if $i % 2 == 0;
}
$setup .= "WITH r AS (INSERT INTO lsm_w SELECT * FROM gen_w(4000) RETURNING *) INSERT INTO bt_w SELECT * FROM r;\n";
$setup .= $indexes[$_][4] for grep { $_ % 2 == 1 } 0 .. $#indexes;
# a unique index with INCLUDE columns: upserts by the writers (below)
$setup .= "CREATE TABLE uq_w (k int, v text, j jsonb);\n"
  . "CREATE UNIQUE INDEX uq_w_k ON uq_w USING lsm (k) INCLUDE (v, j) WITH (memtable_size = 64);\n";
$setup .= "VACUUM ANALYZE lsm_w, bt_w;\n";
my $t0 = time;
sql($setup);
note("loaded in " . (time - $t0) . "s");

my $toast = sql(q{SELECT reltoastrelid::regclass FROM pg_class WHERE relname = 'lsm_w'});
is(sql(q{SELECT count(*) FILTER (WHERE pg_column_compression(lt) IS NOT NULL) > 500 FROM lsm_w})
	  . '|' . sql("SELECT count(DISTINCT chunk_id) > 500 FROM $toast"), 't|t',
	'the long text is stored compressed and out of line in the heap');
is(sql(q{SELECT string_agg(pg_index_column_has_property('lsm_w_all'::regclass, i, 'returnable')::text, ',')
	FROM generate_series(1, 21) i}), join(',', ('true') x 21), 'every column of lsm_w_all is returnable');

# The comparison, in one REPEATABLE READ transaction per round.
sql(<<'EOS');
-- q (%1$s: the table) under planner settings forcing mode on lsm_w (its
-- plan must show want) and on bt_w: 'ok N' or the failure
CREATE FUNCTION w_check(q text, mode text, want text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
	plan text := '';
	line text;
	n bigint;
	d bigint;
BEGIN
	PERFORM set_config('enable_seqscan', 'off', true);
	PERFORM set_config('enable_indexscan', (mode <> 'bitmap')::text, true);
	PERFORM set_config('enable_indexonlyscan', (mode = 'ionly')::text, true);
	PERFORM set_config('enable_bitmapscan', (mode = 'bitmap')::text, true);
	PERFORM set_config('max_parallel_workers_per_gather', '0', true);
	FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || format(q, 'lsm_w') LOOP
		plan := plan || line || E'\n';
	END LOOP;
	IF plan !~ want OR (mode = 'index' AND plan ~ 'Index Only Scan') THEN
		RETURN 'PLAN is not ' || want || E':\n' || plan || 'query: ' || format(q, 'lsm_w');
	END IF;
	EXECUTE format('WITH a AS MATERIALIZED (SELECT x::text FROM (%1$s) x),
	                     b AS MATERIALIZED (SELECT x::text FROM (%2$s) x)
	                SELECT (SELECT count(*) FROM a),
	                       count(*) FROM ((TABLE a EXCEPT ALL TABLE b) UNION ALL (TABLE b EXCEPT ALL TABLE a)) d',
	               format(q, 'lsm_w'), format(q, 'bt_w')) INTO n, d;
	IF d <> 0 THEN
		RETURN d || ' rows differ (lsm ' || n || E' rows)\nquery: ' || format(q, 'lsm_w');
	END IF;
	RETURN 'ok ' || n;
END $$;
EOS

# up to 4 rows in one answer and not the other, for the diagnostics
sql(q{CREATE FUNCTION w_example(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE r text;
BEGIN
	EXECUTE format('SELECT string_agg(s || x, E''\n'') FROM (SELECT * FROM (SELECT ''lsm only: '' AS s, x::text AS x FROM (%1$s) x EXCEPT ALL SELECT ''lsm only: '', x::text FROM (%2$s) x) a
		UNION ALL SELECT * FROM (SELECT ''btree only: '', x::text FROM (%2$s) x EXCEPT ALL SELECT ''btree only: '', x::text FROM (%1$s) x) b LIMIT 4) c',
		format(q, 'lsm_w'), format(q, 'bt_w')) INTO r;
	RETURN r;
END $$});

# Index-only scans need every column returnable: the included columns always
# are; a key may not be (numeric: its encoding keeps no display scale), and
# then the index's queries run as index and bitmap scans only (as in 004).
my %iskey;
for my $ix (@indexes)
{
	my $idx = "lsm_$ix->[0]";
	my ($nk, $ret) = split /\|/, sql("SELECT indnkeyatts, string_agg(pg_index_column_has_property(indexrelid, i, 'returnable')::text, ',' ORDER BY i)
		FROM pg_index, generate_series(1, indnatts) i WHERE indexrelid = '$idx'::regclass GROUP BY indexrelid, indnkeyatts");
	my @r = split /,/, $ret;
	is(join(',', @r[ $nk .. $#r ]), join(',', ('true') x (@r - $nk)), "$idx: the included columns are returnable");
	$ix->[5] = !grep { $_ ne 'true' } @r;
	diag("$idx cannot return its keys: its queries run as index and bitmap scans") unless $ix->[5];
	$iskey{$_} = 1 for @{ $ix->[2] };
}

# values of a column for the constants: $n random non-NULL literals of bt_w
sub lits
{
	my ($col, $n) = @_;
	my $out = sql("SELECT quote_literal(${col}::text) || '::' || '$coltype{$col}' FROM (SELECT DISTINCT $col FROM bt_w WHERE $col IS NOT NULL) s ORDER BY random() LIMIT $n");
	my @l = split /\n/, $out;
	s/ COLLATE "C"//, s/varchar\(40\)/varchar/ for @l;
	return @l;
}

my %seen;
my $round = 0;

sub run_round
{
	my ($what) = @_;
	$round++;
	sql("SELECT setseed(" . sprintf('%.6f', rand()) . ")");
	my @q;    # [name, sql, mode, want]
	for my $ix (@indexes)
	{
		my ($name, undef, $keys, $inc, undef, $returnable) = @$ix;
		my $k = $keys->[0];
		# a filter on two included columns that key no index (so that no other
		# index serves it)
		my ($f1, $f2) = grep { !$iskey{$_} } @$inc;
		my $sel = join(', ', @$keys, @$inc);
		my @v = lits($k, 8);
		next unless @v >= 4;
		my @shapes = (
			[ "$k = const", "SELECT $sel FROM %1\$s WHERE $k = $v[0]", [qw(ionly index bitmap)] ],
			[ "$k = const 2", "SELECT $sel FROM %1\$s WHERE $k = $v[3]", [qw(ionly index bitmap)] ],
			[ "$k >= const", "SELECT $sel FROM %1\$s WHERE $k >= $v[1]", [qw(ionly index bitmap)] ],
			[ "$k < const", "SELECT $sel FROM %1\$s WHERE $k < $v[2]", [qw(ionly index bitmap)] ],
			[ "$k = ANY", "SELECT $sel FROM %1\$s WHERE $k = ANY (ARRAY[$v[0], $v[1], $v[2], NULL])", [qw(ionly index bitmap)] ],
			[ "$k IS NULL", "SELECT $sel FROM %1\$s WHERE $k IS NULL", [qw(index bitmap)] ],
			# a filter on an included column (evaluated on the index's values
			# in an index-only scan)
			[ "$k >= const AND $f1 IS NOT NULL AND $f2 IS NULL", "SELECT $sel FROM %1\$s WHERE $k >= $v[2] AND $f1 IS NOT NULL AND $f2 IS NULL", [qw(ionly index)] ],
			[ "aggregates of included columns", "SELECT count(*), " . join(', ', map { "count($_), count(DISTINCT ${_}::text)" } @$inc) . " FROM %1\$s WHERE $k IS NOT NULL", [qw(ionly bitmap)] ],
		);
		if (@$keys > 1)
		{
			my @v2 = lits($keys->[1], 2);
			push @shapes, [ "$k = const AND $keys->[1] > const", "SELECT $sel FROM %1\$s WHERE $k = $v[0] AND $keys->[1] > $v2[0]", [qw(ionly index bitmap)] ];
		}
		for my $s (@shapes)
		{
			my ($desc, $q, $modes) = @$s;
			for my $m (@$modes)
			{
				next if $m eq 'ionly' && !$returnable;
				my $want = $m eq 'ionly' ? "Index Only Scan using lsm_$name on lsm_w"
				  : $m eq 'index' ? "Index Scan using lsm_$name on lsm_w"
				  : "Bitmap Index Scan on lsm_$name\\M";
				push @q, [ "lsm_$name $desc [$m]", $q, $m, $want ];
			}
		}
	}
	my $rows = join(",\n", map { my $i = $_; "($i, " . join(', ', map { sqlq($_) } @{ $q[$i] }[ 1 .. 3 ]) . ")" } 0 .. $#q);
	my $res = sql("BEGIN ISOLATION LEVEL REPEATABLE READ;\n"
		  . "SELECT string_agg(i || chr(31) || r, chr(30) ORDER BY i) FROM (SELECT i, w_check(q, m, w) AS r FROM (VALUES\n$rows) v(i, q, m, w)) s;\n"
		  . "COMMIT;");
	my %r = map { split /\x1f/, $_, 2 } split /\x1e/, $res;
	my ($ok, $rows_seen, @bad) = (0, 0);
	for my $i (0 .. $#q)
	{
		my $txt = $r{$i} // 'no result';
		if ($txt =~ /^ok (\d+)$/) { $ok++; $rows_seen += $1; $seen{ $q[$i][2] }++ if $1 > 0; }
		else
		{
			push @bad, "$q[$i][0]: $txt";
			push @bad, sql("SELECT w_example(" . sqlq($q[$i][1]) . ")") if $txt =~ /rows differ/;
		}
	}
	is(scalar(@bad), 0, "round $round ($what): " . scalar(@q) . " queries, lsm = btree ($rows_seen rows)")
	  or diag(join("\n", @bad[ 0 .. ($#bad < 9 ? $#bad : 9) ]));
}

sub sqlq { my ($s) = @_; $s =~ s/'/''/g; return "'$s'"; }

run_round('after the load');

# ---- concurrent writers: pgbench scripts (weights) while the rounds run
# (a transaction that changes both tables runs at REPEATABLE READ, so that
# both statements see the same rows; pgbench retries its serialization
# failures and deadlocks)
my $dir = $node->basedir;
my %scripts = (
	# one statement inserts the same rows into both tables
	ins => q{WITH r AS (INSERT INTO lsm_w SELECT * FROM gen_w(25) RETURNING *) INSERT INTO bt_w SELECT * FROM r;},
	# included columns and keys change (deterministic from the row: both tables alike)
	upd => q{\set m random(0, 96)
\set r random(1, 500)
BEGIN ISOLATION LEVEL REPEATABLE READ;
UPDATE lsm_w SET j = jsonb_build_object('u', id, 'r', :r), arr = coalesce(arr, '{}') || :r, lt = repeat('u' || :r, 60 + :r / 4), f8 = f8 + 1, pt = point(:r, id), tx = tx || 'u' WHERE id % 97 = :m;
UPDATE bt_w SET j = jsonb_build_object('u', id, 'r', :r), arr = coalesce(arr, '{}') || :r, lt = repeat('u' || :r, 60 + :r / 4), f8 = f8 + 1, pt = point(:r, id), tx = tx || 'u' WHERE id % 97 = :m;
UPDATE lsm_w SET i4 = i4 + 1, num = num * 2, uu = NULL, ts = ts + interval '1 day' WHERE id % 89 = :m;
UPDATE bt_w SET i4 = i4 + 1, num = num * 2, uu = NULL, ts = ts + interval '1 day' WHERE id % 89 = :m;
COMMIT;},
	del => q{\set m random(0, 210)
BEGIN ISOLATION LEVEL REPEATABLE READ;
DELETE FROM lsm_w WHERE id % 211 = :m;
DELETE FROM bt_w WHERE id % 211 = :m;
COMMIT;},
	abort => q{BEGIN;
WITH r AS (INSERT INTO lsm_w SELECT * FROM gen_w(30) RETURNING *) INSERT INTO bt_w SELECT * FROM r;
ROLLBACK;},
	flush => q{\set f random(1, 6)
SELECT lsm_am.flush((ARRAY['lsm_w_all', 'lsm_w_tx', 'lsm_w_uu', 'lsm_w_ts', 'lsm_w_num', 'lsm_w_by'])[:f]);},
	vac => q{VACUUM lsm_w, bt_w, uq_w;},
	# upserts and deletes on the unique index: the key conflicts, never the
	# included values
	ups => q{\set k random(1, 3000)
\set r random(1, 1000000)
INSERT INTO uq_w VALUES (:k, md5(:r::text) || repeat('v', :r % 700), jsonb_build_object('r', :r)) ON CONFLICT (k) DO UPDATE SET v = excluded.v, j = excluded.j;},
	upsdel => q{\set k random(1, 3000)
DELETE FROM uq_w WHERE k = :k;},
);
my %weight = (ins => 10, upd => 4, del => 2, abort => 1, flush => 2, vac => 1, ups => 10, upsdel => 2);
my @args;
for my $s (sort keys %scripts)
{
	open(my $fh, '>', "$dir/$s.sql") or die "cannot write $dir/$s.sql: $!";
	print $fh "$scripts{$s}\n";
	close $fh;
	push @args, '-f', "$dir/$s.sql\@$weight{$s}";
}
my ($pgb_out, $pgb_err) = ('', '');
my $pgbench = IPC::Run::start(
	[ 'pgbench', '-n', '-c', '2', '-j', '2', '-T', $WRITE_SECONDS, '--max-tries=20', @args,
	  '-h', $node->host, '-p', $node->port, 'postgres' ],
	'>', \$pgb_out, '2>', \$pgb_err);
my $start = time;
my $concurrent = 0;
while (time - $start < $WRITE_SECONDS - 5 || $concurrent < 2)
{
	last if $concurrent >= 2 && !$pgbench->pumpable;
	run_round('during concurrent writes');
	$concurrent++;
}
my $pgb_ok = $pgbench->finish;
ok($pgb_ok, 'the writers ran without error') or diag("pgbench: $pgb_out\n$pgb_err");
like($pgb_out, qr/number of transactions actually processed: [1-9]/, 'the writers wrote') or diag($pgb_out);
note("$concurrent rounds ran during the writes");
cmp_ok($concurrent, '>=', 2, 'rounds ran while the writers wrote');

# ---- at rest: every flush and merge done, VACUUM, a last round
for my $ix (@indexes)
{
	is(merges_done($sess, "lsm_$ix->[0]"), 't', "lsm_$ix->[0]: flushes and compactions finish");
}
sql('VACUUM ANALYZE lsm_w, bt_w');
run_round('after VACUUM');
is(sql(q{SELECT count(*) FROM ((SELECT x::text FROM lsm_w x EXCEPT ALL SELECT x::text FROM bt_w x)
	UNION ALL (SELECT x::text FROM bt_w x EXCEPT ALL SELECT x::text FROM lsm_w x)) d}), '0',
	'the two tables hold the same rows');
my $nrows = sql('SELECT count(*) FROM lsm_w');
for my $ix (@indexes)
{
	my $idx = "lsm_$ix->[0]";
	is(sql("SELECT memtable_entries + run_entries FROM lsm_am.index_stats('$idx')"), $nrows,
		"$idx: one entry per live row after VACUUM");
	my ($ret, $out, $err) = $node->psql('postgres', "SELECT leaked_pages, dropped_pages FROM lsm_am.check_index('$idx')");
	is("$out$err", '0|0', "$idx: check_index finds no leaked page");
	($ret, $out, $err) = $node->psql('postgres', "SELECT lsm_am.verify('$idx', true)");
	is("$ret$out$err", '0', "$idx: verify(heapallindexed) finds it sound and complete");
}
cmp_ok(sql(q{SELECT sum(compactions) FROM pg_class c, LATERAL lsm_am.maintenance_stats(c.oid) WHERE c.relname LIKE 'lsm_w_%'}),
	'>', 0, 'background compactions merged runs');
for my $m (qw(ionly index bitmap))
{
	cmp_ok($seen{$m} // 0, '>', 20, "many non-empty answers in mode $m");
}

# the unique index: one row a key, its index-only answers the heap's
is(sql('SELECT count(*) - count(DISTINCT k) FROM uq_w'), '0', 'uq_w: no duplicate key after the upserts');
like(sql("SET enable_seqscan = off; SET enable_bitmapscan = off; EXPLAIN (COSTS OFF) SELECT k, v, j FROM uq_w WHERE k > 0"),
	qr/Index Only Scan using uq_w_k on uq_w/, 'uq_w: an index-only scan of uq_w_k');
is(sql(q{SET enable_seqscan = off; SET enable_bitmapscan = off;
	CREATE TEMP TABLE ionly AS SELECT k, v, j::text FROM uq_w WHERE k > 0;
	RESET enable_seqscan; SET enable_indexscan = off; SET enable_indexonlyscan = off;
	CREATE TEMP TABLE heap AS SELECT k, v, j::text FROM uq_w;
	SELECT (SELECT count(*) FROM heap) > 100,
		(SELECT count(*) FROM (TABLE ionly EXCEPT ALL TABLE heap) a) + (SELECT count(*) FROM (TABLE heap EXCEPT ALL TABLE ionly) b)}),
	't|0', "uq_w: uq_w_k's index-only scan returns the heap's rows and included values");
my ($uret, $uout, $uerr) = $node->psql('postgres', "SELECT lsm_am.verify('uq_w_k', true)");
is("$uret$uout$uerr", '0', 'uq_w_k: verify(heapallindexed) finds it sound and complete');

# REINDEX, then one more round
sql('REINDEX TABLE lsm_w');
run_round('after REINDEX');

ok(!$node->log_contains(qr/PANIC|TRAP:|server process .* was terminated/), 'the server log shows no crash');
$node->stop;
done_testing();
