# 026_memtable_filter.pl — point lookups and unique checks through memtables
# that have a key filter (memtable_size >= 1MB; doc/impl.md, "key filter").
# A lookup with equality on every column skips a memtable whose filter says
# the key is absent, so a filter that forgot a key would lose rows from
# lookups and let duplicates into a unique index.  The differential tests
# run with the smallest memtables, which get no filter; this one uses the
# smallest memtable that does (1MB, a filter of one chunk) and 2MB ones (a
# filter of two chunks, through its directory), with keys in the active
# memtable, in immutable ones and in runs, and compares every lookup with
# btree:
#
#   - single-column and two-column indexes: keys inserted in this round (the
#     active memtable), in earlier rounds (flushed or immutable), and random
#     keys (mostly absent), through index and index-only scans;
#   - a unique index: ON CONFLICT DO NOTHING of existing keys inserts nothing,
#     plain INSERTs of them fail with unique_violation, new keys go in;
#   - after an immediate shutdown, the same through memtables rebuilt from
#     their log pages (lsmreplay.c), which take their filter again once they
#     hold a data chunk.  (No view shows a memtable's filter: this part fails
#     if a replayed filter misses keys, not if a memtable gets none.)  The
#     workers are stopped for this part (lsm_am.max_workers = 0), so that
#     the active memtables the crash leaves are the ones the inserts filled
#     and the lookups after it go through their replay (see there).
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use LsmPlan;
use LsmCluster;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('mtf');
$node->init(extra => [ initdb_args() ]);
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'lsm_am'
autovacuum = off
});
$node->start;

sub sql { return $node->safe_psql('postgres', $_[0]); }
# entries in the index's active memtable
sub memtable_entries
{
	return sql("SELECT memtable_entries FROM lsm_am.indexes WHERE indexrelname = '$_[0]'");
}

# Test NAME: the index's active memtable holds entries, as many as $want if
# given; if not, what lsm_am.indexes and the workers show.  Returns them.
sub check_memtable_entries
{
	my ($idx, $name, $want) = @_;
	my $n = memtable_entries($idx);
	my $ok = defined $want ? is($n, $want, $name) : cmp_ok($n, '>', 0, $name);
	diag("lsm_am.indexes: "
		  . sql("SELECT row_to_json(i) FROM lsm_am.indexes i WHERE indexrelname = '$idx'")
		  . "\nworkers: "
		  . sql("SELECT string_agg(pid || ': ' || coalesce(query, ''), '; ')
		           FROM pg_stat_activity WHERE backend_type = 'lsm_am worker'"))
	  unless $ok;
	return $n;
}

sql(q{
CREATE EXTENSION lsm_am;
CREATE TABLE tl (k bigint, a int, b text);
CREATE TABLE tb (k bigint, a int, b text);
CREATE INDEX tl_k ON tl USING lsm (k) WITH (memtable_size = 1024);
CREATE INDEX tl_ab ON tl USING lsm (a, b) WITH (memtable_size = 2048);
CREATE INDEX tb_k ON tb (k);
CREATE INDEX tb_ab ON tb (a, b);
CREATE TABLE ul (u bigint NOT NULL);
CREATE UNIQUE INDEX ul_u ON ul USING lsm (u) WITH (memtable_size = 2048);
});

my $off = 'SET enable_seqscan = off; SET enable_bitmapscan = off;';
plan_like($node, 'postgres', "$off SET enable_indexonlyscan = off;",
	'SELECT count(*) FROM tl WHERE k = 1', qr/Index Scan using tl_k/, 'plan: point lookup by index scan');
plan_like($node, 'postgres', $off,
	'SELECT count(*) FROM tl WHERE k = 1', qr/Index Only Scan using tl_k/, 'plan: point lookup by index-only scan');
plan_like($node, 'postgres', "$off SET enable_indexonlyscan = off;",
	q{SELECT count(*) FROM tl WHERE a = 1 AND b = 'x'}, qr/Index Scan using tl_ab/, 'plan: two-column point lookup');

# Point lookups of every probe key on k and on (a, b), by index and
# index-only scans of tl, must count what btree's on tb count.
sub compare_lookups
{
	my ($probe, $label) = @_;
	my $plist = join(',', @$probe);
	for my $scan (['index', "$off SET enable_indexonlyscan = off;"], ['index-only', $off])
	{
		my $q = "SELECT string_agg(x || ':' || (SELECT count(*) FROM %s WHERE k = x), ',' ORDER BY x)
		           FROM unnest('{$plist}'::bigint[]) x";
		is(sql("$scan->[1] " . sprintf($q, 'tl')), sql("$off " . sprintf($q, 'tb')),
			"$label: " . scalar(@$probe) . " point lookups on k by $scan->[0] scan agree with btree");
		my $q2 = "SELECT string_agg(x || ':' || (SELECT count(*) FROM %s WHERE a = (x %% 1000)::int AND b = md5(x::text)), ',' ORDER BY x)
		           FROM unnest('{$plist}'::bigint[]) x";
		is(sql("$scan->[1] " . sprintf($q2, 'tl')), sql("$off " . sprintf($q2, 'tb')),
			"$label: two-column point lookups by $scan->[0] scan agree with btree");
	}
}

# Rows of these keys into tl and tb alike (then $more, SQL over src).
sub insert_rows
{
	my ($keys, $more) = @_;
	my $list = join(',', @$keys);
	$more //= '';
	sql(qq{
	CREATE TEMP TABLE src AS SELECT k, (k % 1000)::int AS a, md5(k::text) AS b
	  FROM unnest('{$list}'::bigint[]) k;
	INSERT INTO tl SELECT * FROM src;
	INSERT INTO tb SELECT * FROM src;
	$more
	});
}

srand(26);
my @all;                  # keys of earlier rounds
my @unique_keys;          # keys in ul
my $in_memtable = 0;
my $imm_seen = 0;
for my $round (1 .. 5)
{
	# 20,000 rows: keys from a domain of 2,000,000 (some repeat)
	my @keys = map { int(rand(2_000_000)) } 1 .. 20000;
	insert_rows(\@keys);
	my ($entries, $imm) = split /\|/,
		sql("SELECT memtable_entries, immutable_memtables FROM lsm_am.indexes WHERE indexrelname = 'tl_k'");
	$in_memtable++ if $entries > 0;
	$imm_seen++ if $imm > 0;

	# this round's keys, earlier rounds' keys, random ones
	my @probe = ((map { $keys[int(rand(@keys))] } 1 .. 150),
		(@all ? map { $all[int(rand(@all))] } 1 .. 150 : ()),
		(map { int(rand(2_000_000)) } 1 .. 150));
	compare_lookups(\@probe, "round $round");
	push @all, @keys;

	# the unique index: new keys go in, existing ones are refused
	my %seen;
	my @new = grep { !$seen{$_}++ } map { int(rand(1e12)) } 1 .. 20000;
	sql("INSERT INTO ul SELECT unnest('{" . join(',', @new) . "}'::bigint[])");
	push @unique_keys, @new;
	my $n0 = sql('SELECT count(*) FROM ul');
	my @old = map { $new[int(rand(@new))] } 1 .. 300;
	my %u; @old = grep { !$u{$_}++ } @old;
	is(sql("WITH i AS (INSERT INTO ul SELECT unnest('{" . join(',', @old) . "}'::bigint[])
	          ON CONFLICT (u) DO NOTHING RETURNING 1) SELECT count(*) FROM i"), '0',
		"round $round: ON CONFLICT DO NOTHING of " . scalar(@old) . " existing keys inserts none");
	my @some = @old[0 .. 39];
	is(sql(qq{DO \$\$
	DECLARE n int := 0; x bigint;
	BEGIN
	  FOREACH x IN ARRAY '{@{[join(',', @some)]}}'::bigint[] LOOP
	    BEGIN
	      INSERT INTO ul VALUES (x);
	    EXCEPTION WHEN unique_violation THEN n := n + 1;
	    END;
	  END LOOP;
	  RAISE NOTICE 'refused %', n;
	  IF n <> 40 THEN RAISE EXCEPTION 'only % of 40 duplicates refused', n; END IF;
	END \$\$; SELECT 'ok'}), 'ok', "round $round: 40 plain INSERTs of existing keys fail with unique_violation");
	is(sql('SELECT count(*) FROM ul'), $n0, "round $round: nothing was added by the duplicates");
	my @fresh = grep { !$seen{$_} } map { 1e12 + int(rand(1e9)) } 1 .. 300;
	my %f; @fresh = grep { !$f{$_}++ } @fresh;
	is(sql("WITH i AS (INSERT INTO ul SELECT unnest('{" . join(',', @fresh) . "}'::bigint[])
	          ON CONFLICT (u) DO NOTHING RETURNING 1) SELECT count(*) FROM i"), scalar(@fresh),
		"round $round: ON CONFLICT DO NOTHING of " . scalar(@fresh) . " new keys inserts them all");
}
cmp_ok($in_memtable, '>=', 4, "the lookups met entries in the active memtable ($in_memtable of 5 rounds)");

# An immediate shutdown: the memtables come back from their log pages on
# first use, each with a new key filter (when the arena has room) that must
# hold every replayed key.
#
# Each index's active memtable must hold entries when the server stops, and
# the lookups after the restart must go through its replay.  A worker made
# both a race: when it is done with an index whose free pages are an eighth
# of the file, it shrinks it (LsmMaintain -> LsmMaybeShrink ->
# LsmShrinkRelocatingGuts, maint/lsmshrink.c), and when no run can move and
# the last page is a log page, it flushes the memtables (LsmFlushAll: the
# active one, however small, turns immutable and goes into a run; doc/impl.md,
# "The file shrinks").  After the flush of the memtable that filled in round
# 5, that shrink came up to a second later; under load it came after the rows
# below (ul_u, in the log: a relocation, then a flush of a memtable of 19004
# entries, 0.5 s after the INSERT of the 200) or between the restart and the
# check after it, and left the active memtable empty (memtable_entries 0, no
# immutable one; on 18 tl_ab's too).  Nothing was lost (the lookups agreed
# with btree), but nothing was replayed either.  So the workers stop here,
# and stay stopped through the restart (ALTER SYSTEM) until the checks after
# it are done: a backend flushing a full memtable itself never shrinks, and
# nothing else switches a memtable before it is full (the arena, 64MB, is
# never short with these three indexes' memtables, at most 15MB).  A few
# more rows, into both tables, then give each active memtable entries to
# replay, even if a shrink emptied it before the workers went.  After the
# restart, tl_ab's and ul_u's active memtables must hold as many entries as
# at the stop: nothing goes into them meanwhile (the unique checks let no
# entry in), so they are their log pages replayed, and a replay that lost
# pages fails here even where the probes miss their keys.
sub set_max_workers
{
	my ($n) = @_;
	sql("ALTER SYSTEM SET lsm_am.max_workers = $n");
	sql('SELECT pg_reload_conf()');
	$node->poll_query_until('postgres',
		"SELECT setting = '$n' FROM pg_settings WHERE name = 'lsm_am.max_workers'")
	  or die "lsm_am.max_workers did not become $n";
}
set_max_workers(0);
my %crash_entries;        # in each active memtable when the server stopped
# a worker exits before its next look at the slots once it has seen the
# setting; one that was started meanwhile exits at its first look
$node->poll_query_until('postgres',
	"SELECT count(*) = 0 FROM pg_stat_activity WHERE backend_type = 'lsm_am worker'")
  or die 'the lsm_am workers did not exit';
{
	my @more = map { 2_000_000 + $_ } 1 .. 200;
	insert_rows(\@more, 'INSERT INTO ul SELECT k + 2e12 FROM src;');
	push @all, @more;
	push @unique_keys, map { $_ + 2e12 } @more;
	for my $idx ('tl_ab', 'ul_u')
	{
		$crash_entries{$idx} =
		  check_memtable_entries($idx, "before the crash: ${idx}'s active memtable holds entries");
	}
}
$node->stop('immediate');
$node->start;
is(sql("SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'lsm_am worker'"), '0',
	'after the restart: no lsm_am worker runs (lsm_am.max_workers = 0)');
{
	my @probe = ((map { $all[-1 - int(rand(20000))] } 1 .. 200),
		(map { $all[int(rand(@all))] } 1 .. 100),
		(map { int(rand(2_000_000)) } 1 .. 150));
	compare_lookups(\@probe, 'after the crash');
	# tl took no rows since: tl_ab's memtable is its log pages replayed
	check_memtable_entries('tl_ab',
		"after the crash: the two-column lookups went through a replayed memtable ($crash_entries{tl_ab} entries, as before the crash)",
		$crash_entries{tl_ab});
	my @old = map { $unique_keys[-1 - int(rand(20000))] } 1 .. 300;
	my %u; @old = grep { !$u{$_}++ } @old;
	my $n0 = sql('SELECT count(*) FROM ul');
	is(sql("WITH i AS (INSERT INTO ul SELECT unnest('{" . join(',', @old) . "}'::bigint[])
	          ON CONFLICT (u) DO NOTHING RETURNING 1) SELECT count(*) FROM i"), '0',
		'after the crash: ON CONFLICT DO NOTHING of ' . scalar(@old) . ' recent keys inserts none');
	is(sql('SELECT count(*) FROM ul'), $n0, 'after the crash: nothing was added by the duplicates');
	# and so is ul_u's: the unique checks let no entry in
	check_memtable_entries('ul_u',
		"after the crash: the unique checks went through a replayed memtable ($crash_entries{ul_u} entries, as before the crash)",
		$crash_entries{ul_u});
}
sql('ALTER SYSTEM RESET lsm_am.max_workers');
sql('SELECT pg_reload_conf()');
is(sql(q{SELECT count(*) - count(DISTINCT u) FROM ul}), '0', 'the unique index kept every key once');
my ($ret, $out, $err) = $node->psql('postgres', "SELECT lsm_am.verify('tl_k', true)");
is("$ret$out$err", '0', 'verify(tl_k, true) finds it sound and complete');
note("rounds with an immutable memtable: $imm_seen");
ok(!$node->log_contains('TRAP:|PANIC|terminated by signal'), 'no crash in the log');
$node->stop;
done_testing();
