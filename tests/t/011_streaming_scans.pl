# 011_streaming_scans.pl — scans that stream the memtable stay exact while the
# index changes under them.
#
# A scan reads the memtable a chunk at a time (pinning it when its range is
# longer than the first chunk), so an open cursor keeps reading while other
# sessions insert (the memtable switches), flush (the memtable it reads
# becomes a run and is kept for it), compact (runs are merged and retired)
# and VACUUM (run pages are rewritten).  Session A opens a cursor at
# REPEATABLE READ, fetches part of it, session B changes the index, A fetches
# the rest: every row A's snapshot sees in the range must come back exactly
# once, in order, forward and backward, for plain and index-only scans — the
# same rows a btree on a copy of the table returns.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use LsmCluster;
use LsmSession;

my $node = PostgreSQL::Test::Cluster->new('streaming');
$node->init(extra => [ initdb_args() ]);
$node->append_conf(
	'postgresql.conf', qq{
shared_preload_libraries = 'lsm_am'
autovacuum = off
lsm_am.max_workers = 2
lsm_am.worker_naptime = 100
});
$node->start;

# one connection for the many small queries (tests/t/LsmSession.pm)
my $sess = LsmSession->new($node);
sub sql { return $sess->safe_psql('postgres', $_[0]); }

# 64 kB memtables switch every ~2,000 rows; keys scattered over 0..99,999
sql(q{
CREATE EXTENSION lsm_am;
CREATE TABLE t (id int, k int8);
INSERT INTO t SELECT g, hashint4(g) & 65535 FROM generate_series(1, 20000) g;
CREATE INDEX t_k ON t USING lsm (k) WITH (memtable_size = 64);
CREATE TABLE tb (id int, k int8);
CREATE INDEX tb_k ON tb (k);
CREATE SEQUENCE ids START 100000;
});

my $force = 'SET enable_seqscan = off; SET enable_bitmapscan = off;';
my $n_case = 0;

# Insert n rows with ids from the sequence into t (and their copies into tb).
sub insert_rows
{
	my ($s, $n) = @_;
	$s->query_safe(qq{
INSERT INTO t SELECT i, hashint4(i::int) & 65535
  FROM (SELECT nextval('ids') AS i FROM generate_series(1, $n)) s});
}

# One case: a cursor over [lo, hi] in direction $dir, $first rows fetched,
# then $change run by session B, then the rest fetched.
sub cursor_case
{
	my ($what, $dir, $only, $lo, $hi, $first, $change) = @_;
	$n_case++;
	my $a = $node->background_psql('postgres');
	my $b = $node->background_psql('postgres');
	# a memtable with plenty of the range in it when the cursor starts
	insert_rows($b, 1500);
	my $cols = $only ? 'k' : 'k, id';
	my $q = "SELECT $cols FROM t WHERE k BETWEEN $lo AND $hi ORDER BY k $dir";
	$a->query_safe("BEGIN ISOLATION LEVEL REPEATABLE READ; $force");
	my $plan = $a->query_safe("EXPLAIN (COSTS OFF) $q");
	like($plan, $only ? qr/Index Only Scan (Backward )?using t_k/ : qr/Index Scan (Backward )?using t_k/,
		"$what: the cursor's plan scans t_k");
	$a->query_safe("DECLARE c$n_case NO SCROLL CURSOR FOR $q");
	my $got = $a->query_safe("FETCH $first FROM c$n_case");

	$change->($b);

	my $rest = $a->query_safe("FETCH ALL FROM c$n_case");
	$got .= "\n$rest" if $rest ne '';
	# what the snapshot holds in the range, by a sequential scan
	my $want = $a->query_safe(
		"SET enable_seqscan = on; SET enable_indexscan = off; SET enable_indexonlyscan = off; "
		  . "SELECT $cols FROM t WHERE k BETWEEN $lo AND $hi ORDER BY k $dir"
		  . ($only ? '' : ", id $dir"));
	$a->query_safe('COMMIT');
	$a->quit;
	$b->quit;

	my @got = split /\n/, $got;
	my @want = split /\n/, $want;
	ok(scalar(@want) > 2 * $first, "$what: the range holds more rows than the first fetch (" . scalar(@want) . ')');
	# keys in order; rows equal as multisets (ties of k come in TID order)
	my @gk = map { (split /\|/)[0] } @got;
	my $ordered = 1;
	for my $i (1 .. $#gk)
	{
		$ordered = 0 if ($dir eq 'DESC' ? $gk[$i] > $gk[$i - 1] : $gk[$i] < $gk[$i - 1]);
	}
	ok($ordered, "$what: rows come in key order");
	is_deeply([ sort @got ], [ sort @want ], "$what: every row of the snapshot exactly once");
	return;
}

my @changes = (
	[ 'inserts that switch and flush the memtable', sub { insert_rows($_[0], 8000); } ],
	[ 'an explicit flush, more inserts, a full compaction',
		sub {
			my ($s) = @_;
			$s->query_safe("SELECT lsm_am.flush('t_k')");
			insert_rows($s, 3000);
			$s->query_safe("SELECT lsm_am.compact('t_k')");
		} ],
	# (plain scans only: an open index-only scan holds the metapage pin that
	# makes VACUUM wait for it, the TID recycling interlock btree has too)
	[ 'deletes and VACUUM with flushes',
		sub {
			my ($s) = @_;
			insert_rows($s, 3000);
			$s->query_safe("DELETE FROM t WHERE id % 7 = 0");
			$s->query_safe("SELECT lsm_am.flush('t_k')");
			$s->query_safe("VACUUM t");
			insert_rows($s, 3000);
		} ],
	[ 'background workers merging',
		sub {
			my ($s) = @_;
			insert_rows($s, 6000);
			$s->query_safe("SELECT lsm_am.wait_for_merges('t_k', '60 s')");
		} ],
);

for my $c (@changes)
{
	my ($name, $change) = @$c;
	for my $dir ('ASC', 'DESC')
	{
		for my $only (0, 1)
		{
			next if $only && $name =~ /VACUUM/;
			cursor_case("$name, $dir" . ($only ? ', index-only' : ''),
				$dir, $only, 10000, 40000, 50, $change);
		}
	}
}

# LIMIT over a large memtable, and max(), agree with a btree copy
sql("INSERT INTO t SELECT i, hashint4(i::int) & 65535 FROM (SELECT nextval('ids') AS i FROM generate_series(1, 1500)) s");
sql('TRUNCATE tb; INSERT INTO tb SELECT * FROM t; ANALYZE t, tb');
for my $q ('SELECT k FROM %s ORDER BY k LIMIT 10', 'SELECT k FROM %s ORDER BY k DESC LIMIT 10',
	'SELECT max(k), min(k) FROM %s', 'SELECT k, id FROM %s WHERE k > 30000 ORDER BY k, id LIMIT 25')
{
	(my $ql = $q) =~ s/%s/t/;
	(my $qb = $q) =~ s/%s/tb/;
	like(sql("$force EXPLAIN (COSTS OFF) $ql"), qr/using t_k/, "'$ql' uses t_k");
	is(sql("$force $ql"), sql("$force $qb"), "'$ql' equals the btree's answer");
}

# Scrollable cursors turn around without a Materialize node and answer
# random FETCH sequences exactly as a btree does.  Keys only: the order of
# equal keys is not defined, and PostgreSQL 15's btree does not even keep its
# own when a scan over a posting list turns around (FETCH ALL then PRIOR
# returns the first duplicate, not the last).
sql("INSERT INTO t SELECT i, hashint4(i::int) & 65535 FROM (SELECT nextval('ids') AS i FROM generate_series(1, 1000)) s");
sql('TRUNCATE tb; INSERT INTO tb SELECT * FROM t ORDER BY ctid; ANALYZE tb');
unlike(sql("$force EXPLAIN (COSTS OFF) DECLARE c SCROLL CURSOR FOR SELECT k, id FROM t WHERE k > 100 ORDER BY k"),
	qr/Materialize/, 'a scrollable cursor over t_k needs no Materialize node');
my $seed = $ENV{LSM_DIFF_SEED} // 20261201;
srand($seed);
note("scroll cursor seed $seed");
my @dirs = ('NEXT', 'PRIOR', 'FIRST', 'LAST', 'FORWARD %d', 'BACKWARD %d', 'ABSOLUTE %d',
	'RELATIVE %d', 'RELATIVE -%d', 'ABSOLUTE -%d', 'FORWARD ALL', 'BACKWARD ALL', '%d');
my ($same, $cases) = (0, 0);
for my $case (1 .. 40)
{
	my $lo = int(rand(60000));
	my $hi = $lo + int(rand(3000));
	my $dir = rand() < 0.5 ? 'ASC' : 'DESC';
	my $cols = 'k';
	my $only = rand() < 0.5 ? 'SET enable_indexscan = off;' : 'SET enable_indexonlyscan = off;';
	my @fetch = map { my $f = $dirs[ int(rand(@dirs)) ]; sprintf($f, 1 + int(rand(40))) } 1 .. 12;
	my $script = sub {
		my ($tab) = @_;
		return "$force $only BEGIN; DECLARE c SCROLL CURSOR FOR SELECT $cols FROM $tab "
		  . "WHERE k BETWEEN $lo AND $hi ORDER BY k $dir;\n"
		  . join('', map { "\\echo -- FETCH $_\nFETCH $_ FROM c;\n" } @fetch) . "COMMIT;";
	};
	my $l = sql($script->('t'));
	my $b = sql($script->('tb'));
	$cases++;
	if ($l eq $b) { $same++; }
	else { diag("case $case differs ($cols, $dir, [$lo, $hi], $only):\nlsm:\n$l\nbtree:\n$b"); }
}
is($same, $cases, "random FETCH sequences on scrollable cursors: lsm equals btree in every case");

is(sql("SELECT leaked_pages FROM lsm_am.check_index('t_k')"), '0', 'check_index finds nothing leaked');
is(sql("SELECT lsm_am.verify('t_k', true)"), '', 'verify(t_k, true): sound and complete');
$node->stop;
done_testing();
