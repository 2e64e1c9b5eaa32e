# 019_verify.pl — lsm_am.verify() finds damaged pages, and the queries that
# reach them fail the same way; a row missing from the index is found by
# verify(..., heapallindexed => true) only.
#
# t_k is an lsm index with runs on two levels (the CREATE INDEX run on level
# 1, with fence pages, and two flushed runs on level 0), bloom filters and a
# non-empty log; tb is its btree twin (the same rows in another table).  u_k
# is one run and no log.  The blocks to damage are found with the page
# inspection functions (lsm_am.manifest, lsm_am.page_header,
# lsm_am.page_items) while the cluster runs.  Then, one case at a time, the
# cluster is stopped, one page is damaged on disk (a run data page, the
# run's bloom filter pages, a fence page, a log page, the metapage; another
# case truncates u_k's file), the cluster is started, and verify() and the
# queries that read the page must fail with
#   ERROR:  index "t_k" is corrupted at block N
# (SQLSTATE XX002) naming the damaged block — never a crash (the postmaster
# keeps its start time) and never an answer that differs from the btree
# twin.  The pristine file is put back after every case.  Data checksums are
# off: lsm_am's own checks are all that stands between a damaged page and a
# wrong answer.  Nothing here waits on time: no workers, no autovacuum.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use LsmPlan;
use LsmCluster;
use LsmSession;

my $BLCKSZ = 8192;
my $CONTENT = 24;                # MAXALIGN(SizeOfPageHeaderData)
my $SPECIAL = $BLCKSZ - 16;      # LsmPageOpaqueData

my $node = PostgreSQL::Test::Cluster->new('verify');
$node->init(no_data_checksums => 1, extra => [ initdb_args() ]);
$node->append_conf(
	'postgresql.conf', qq{
shared_preload_libraries = 'lsm_am'
lsm_am.max_workers = 0
autovacuum = off
});
$node->start;

# one connection for the many small queries (tests/t/LsmSession.pm)
my $sess = LsmSession->new($node);
sub sql { return $sess->safe_psql('postgres', $_[0]); }

# 400,000 rows under the CREATE INDEX run (level 1, tall enough for fence
# pages), two flushed runs of 20,000 rows (level 0), 2,000 rows in the log.
sql(q{
CREATE EXTENSION lsm_am;
CREATE TABLE t (id int, k int8);
INSERT INTO t SELECT g, (g::int8 * 7919) % 1000003 FROM generate_series(1, 400000) g;
CREATE INDEX t_k ON t USING lsm (k) WITH (bloom_bits_per_key = 10);
INSERT INTO t SELECT g, (g::int8 * 7919) % 1000003 FROM generate_series(400001, 420000) g;
SELECT lsm_am.flush('t_k');
INSERT INTO t SELECT g, (g::int8 * 7919) % 1000003 FROM generate_series(420001, 440000) g;
SELECT lsm_am.flush('t_k');
INSERT INTO t SELECT g, (g::int8 * 7919) % 1000003 FROM generate_series(440001, 442000) g;
CREATE TABLE tb AS SELECT * FROM t;
CREATE INDEX tb_k ON tb (k);
CREATE TABLE u (k int8);
INSERT INTO u SELECT g FROM generate_series(1, 100000) g;
CREATE INDEX u_k ON u USING lsm (k);
ANALYZE t, tb, u;
});

is(sql(q{SELECT string_agg(level || ':' || n, ',' ORDER BY level)
         FROM (SELECT level, count(*) n FROM lsm_am.manifest('t_k') WHERE kind = 'run' GROUP BY level) s}),
	'0:2,1:1', 't_k has two runs on level 0 and one on level 1');

# a sound index passes quietly
is(sql(q{SELECT lsm_am.verify('t_k')}), '', 'verify(t_k) passes a sound index quietly');
is(sql(q{SELECT lsm_am.verify('t_k', true)}), '', 'verify(t_k, true) passes a sound index quietly');
is(sql(q{SELECT lsm_am.verify('u_k', true)}), '', 'verify(u_k, true) passes a sound index quietly');

# the level-1 run and its pages, found by inspection
my ($run, $start, $pages) = split /\|/,
  sql(q{SELECT id, start_block, pages FROM lsm_am.manifest('t_k') WHERE kind = 'run' AND level = 1});
sub blocks_of
{
	my ($rel, $kind, $owner) = @_;
	return split /\n/, sql(qq{SELECT b FROM generate_series(0, pg_relation_size('$rel') / 8192 - 1) b,
	                            lsm_am.page_header('$rel', b) h
	                          WHERE h.kind = '$kind' AND h.owner = $owner ORDER BY b});
}
my @data = blocks_of('t_k', 'run data', $run);
my @fence = blocks_of('t_k', 'run fence', $run);
my @bloom = blocks_of('t_k', 'run bloom', $run);
my $log = sql(q{SELECT start_block FROM lsm_am.manifest('t_k') WHERE kind = 'log'});
my ($u_run, $u_start) = split /\|/, sql(q{SELECT id, start_block FROM lsm_am.manifest('u_k') WHERE kind = 'run'});
ok(@data > 100 && @fence >= 1 && @bloom >= 1 && $log ne '',
	"run $run of t_k (blocks $start..) has " . scalar(@data) . ' data, ' . scalar(@fence)
	  . ' fence and ' . scalar(@bloom) . " bloom pages; the log starts at block $log");
is(sql(qq{SELECT kind FROM lsm_am.page_header('t_k', $log)}), 'log', "block $log is a log page");

# a data page in the middle whose last entry is not a restart point (the
# deletion case removes it), a key on it, and a key under a fence page
my ($mid, $mid_n);
for my $i (int(@data / 2) .. $#data)
{
	my $n = sql(qq{SELECT items FROM lsm_am.page_header('t_k', $data[$i])});
	if ($n % 16 != 1) { ($mid, $mid_n) = ($data[$i], $n); last; }
}
ok(defined $mid, "data page $mid holds $mid_n entries");
sub key_of { my ($text) = @_; $text =~ /^\((-?\d+)\)$/ or die "unexpected key $text"; return $1; }
my $k_data = key_of(sql(qq{SELECT key FROM lsm_am.page_items('t_k', $mid) WHERE itemno = 5}));
my ($k_last, $tid_last) = split /\|/, sql(qq{SELECT key, tid FROM lsm_am.page_items('t_k', $mid) WHERE itemno = $mid_n});
$k_last = key_of($k_last);
my $k_fence = key_of(sql(qq{SELECT key FROM lsm_am.page_items('t_k', $fence[0]) WHERE itemno = 1}));
is(sql(qq{SELECT ctid FROM t WHERE id = (SELECT id FROM tb WHERE k = $k_last)}), $tid_last,
	"page_items gives the heap TID of the last entry of block $mid");

my $LSM = 'SET enable_seqscan = off; SET enable_bitmapscan = off; SET enable_indexonlyscan = off;';
my %Q = (
	all   => "SELECT count(*), sum(k) FROM %s WHERE k >= 0",
	data  => "SELECT count(*), min(id) FROM %s WHERE k = $k_data",
	fence => "SELECT count(*), min(id) FROM %s WHERE k = $k_fence",
	last  => "SELECT count(*), min(id) FROM %s WHERE k = $k_last",
	u     => "SELECT count(*), sum(k) FROM %s WHERE k >= 0",
);
my (%want, %idx);
for my $q (sort keys %Q)
{
	my ($lsm, $twin) = $q eq 'u' ? ('u', 'u') : ('t', 'tb');
	my $lsm_idx = $q eq 'u' ? 'u_k' : 't_k';
	plan_like($sess, 'postgres', $LSM, sprintf($Q{$q}, $lsm), qr/Index Scan using $lsm_idx\b/, "query $q on $lsm");
	if ($q eq 'u')
	{
		$want{$q} = sql("SET enable_indexscan = off; SET enable_bitmapscan = off; " . sprintf($Q{$q}, 'u'));
	}
	else
	{
		plan_like($sess, 'postgres', $LSM, sprintf($Q{$q}, $twin), qr/Index Scan using tb_k\b/, "query $q on the twin");
		$want{$q} = sql("$LSM " . sprintf($Q{$q}, $twin));
	}
	is(sql("$LSM " . sprintf($Q{$q}, $lsm)), $want{$q}, "query $q: $lsm_idx answers like the twin");
	$idx{$q} = sprintf($Q{$q}, $lsm);
}

# the point lookups twice in one backend: the run is at the deepest level,
# whose filter page a lookup reads only when it is in memory or the second
# time the backend needs it (doc/impl.md, "Scans")
for my $q (qw(data fence))
{
	(my $perform = $idx{$q}) =~ s/^SELECT /PERFORM /;
	$idx{"${q}_twice"} = "DO \$\$ BEGIN FOR i IN 1 .. 2 LOOP $perform; END LOOP; END \$\$";
	$want{"${q}_twice"} = '';
}

my $datadir = $node->data_dir;
my %file = map { $_ => "$datadir/" . sql("SELECT pg_relation_filepath('$_')") } qw(t_k u_k);
$node->stop;

sub slurp { my ($f) = @_; open my $fh, '<:raw', $f or die "$f: $!"; local $/; my $d = <$fh>; close $fh; return $d; }
sub spew  { my ($f, $d) = @_; open my $fh, '>:raw', $f or die "$f: $!"; print $fh $d; close $fh; }
sub poke
{
	my ($data, $blk, $off, $bytes) = @_;
	substr($$data, $blk * $BLCKSZ + $off, length($bytes)) = $bytes;
}
my %pristine = map { $_ => slurp($file{$_}) } keys %file;

# Run SQL, expecting an index_corrupted ERROR naming $rel and one of the
# blocks in $blkre; if it answers instead, the answer must be $want (never
# wrong).  Returns whether it failed as expected.
sub fails_naming
{
	my ($name, $q, $rel, $blkre, $want) = @_;
	my ($ret, $out, $err) = $node->psql('postgres', "\\set VERBOSITY verbose\n$LSM $q");
	if ($ret == 0)
	{
		is($out, $want // '', "$name: answered, and right");
		fail("$name: fails naming the damaged block");
		return 0;
	}
	is($out, '', "$name: no rows");
	return like($err, qr/ERROR:  XX002: index "$rel" is corrupted at block (?:$blkre)\b.*HINT:  REINDEX the index\./s,
		"$name: fails naming index $rel and the damaged block");
}

# One case: damage $rel's file, restart, verify() and every query in
# @$queries fail naming one of @$blocks, the server stays up; restore.
sub corrupt_case
{
	my ($name, $rel, $blocks, $damage, $queries) = @_;
	my $blkre = join('|', @$blocks);
	my $data = $pristine{$rel};
	$damage->(\$data);
	spew($file{$rel}, $data);
	$node->start;
	my $started = sql('SELECT pg_postmaster_start_time()');
	fails_naming("$name: verify($rel)", "SELECT lsm_am.verify('$rel')", $rel, $blkre);
	fails_naming("$name: verify($rel, true)", "SELECT lsm_am.verify('$rel', true)", $rel, $blkre);
	fails_naming("$name: query $_", $idx{$_}, $rel, $blkre, $want{$_}) for @$queries;
	is(sql('SELECT pg_postmaster_start_time()'), $started, "$name: the server kept running (no crash restart)");
	$node->stop;
	spew($file{$rel}, $pristine{$rel});
	return;
}

# 1. A run data page: its entry count is garbage.
corrupt_case('data page', 't_k', [$mid], sub {
	my ($d) = @_;
	poke($d, $mid, $CONTENT, pack('v', 0xFFFF));
}, [ 'all', 'data' ]);

# 2. The run's bloom filter pages: their headers are garbage (the second
#    point lookup of a key in a backend probes one of them, verify reads them
#    all).
corrupt_case('bloom filter pages', 't_k', \@bloom, sub {
	my ($d) = @_;
	poke($d, $_, $CONTENT, "\xFF" x 16) for @bloom;
}, [ 'data_twice', 'fence_twice' ]);

# 3. A fence page: its fence block is garbage.
corrupt_case('fence page', 't_k', [$fence[0]], sub {
	my ($d) = @_;
	poke($d, $fence[0], $CONTENT + 8, "\xFF" x 32);
}, [ 'fence' ]);

# 4. A log page: a key byte of its first entry changed (another well-formed
#    key; the page's checksum tells).
corrupt_case('log page', 't_k', [$log], sub {
	my ($d) = @_;
	my $byte = ord(substr($$d, $log * $BLCKSZ + $CONTENT + 2 + 4, 1));
	poke($d, $log, $CONTENT + 2 + 4, chr($byte ^ 0x40));
}, [ 'all', 'data' ]);

# 5. The metapage: its magic number is garbage.
corrupt_case('metapage', 't_k', [0], sub {
	my ($d) = @_;
	poke($d, 0, $CONTENT, "\xFF\xFF\xFF\xFF");
}, [ 'all', 'data', 'fence' ]);

# 6. u_k's file lost its second half, in the middle of its run.
corrupt_case('file truncated', 'u_k', [$u_start], sub {
	my ($d) = @_;
	$$d = substr($$d, 0, (length($$d) / $BLCKSZ / 2) * $BLCKSZ);
}, [ 'u' ]);

# 7. An entry deleted by hand: the last entry of data page $mid is cut (the
#    page stays well-formed: entries, then the same restart array), and the
#    run's live count in the manifest is lowered by one to match.  Every
#    structural check passes; only heapallindexed finds the heap tuple
#    without its entry.
{
	my $data = $pristine{t_k};
	my $base = $mid * $BLCKSZ;
	my $lower = unpack('v', substr($data, $base + 12, 2));
	my $content = substr($data, $base + $CONTENT, $lower - $CONTENT);
	my ($n, $nr) = unpack('v v', $content);
	die "page $mid: $n entries" unless $n == $mid_n && $nr == int(($n + 15) / 16);
	my $pos = 4;
	my $last_at;
	my $varint = sub {
		my ($v, $shift) = (0, 0);
		while (1)
		{
			my $b = ord(substr($content, $pos++, 1));
			$v |= ($b & 0x7F) << $shift;
			return $v unless $b & 0x80;
			$shift += 7;
		}
	};
	for my $i (0 .. $n - 1)
	{
		$last_at = $pos;
		$varint->();
		my $unshared = $varint->();
		$pos += $unshared;
	}
	my $restarts = substr($content, length($content) - 2 * $nr);
	my $new = pack('v v', $n - 1, $nr) . substr($content, 4, $last_at - 4) . $restarts;
	substr($data, $base + $CONTENT, $lower - $CONTENT) = $new . ("\0" x ($lower - $CONTENT - length($new)));
	substr($data, $base + 12, 2) = pack('v', $CONTENT + length($new));
	# the manifest: runs[] at content offset 2776, 32 bytes each; nentries at 16
	my $nruns = unpack('V', substr($data, $CONTENT + 212, 4));
	my $found = 0;
	for my $i (0 .. $nruns - 1)
	{
		my $off = $CONTENT + 2776 + 32 * $i;
		next unless unpack('V', substr($data, $off, 4)) == $run;
		my $live = unpack('Q<', substr($data, $off + 16, 8));
		substr($data, $off + 16, 8) = pack('Q<', $live - 1);
		$found = 1;
	}
	die "run $run not in the manifest" unless $found;
	spew($file{t_k}, $data);
	$node->start;
	my $started = sql('SELECT pg_postmaster_start_time()');
	is(sql(qq{SELECT count(*) FROM lsm_am.page_items('t_k', $mid)}), $mid_n - 1,
		"deleted entry: data page $mid decodes with one entry less");
	is(sql(q{SELECT lsm_am.verify('t_k')}), '', 'deleted entry: verify(t_k) finds the index consistent');
	my ($ret, $out, $err) = $node->psql('postgres', "\\set VERBOSITY verbose\nSELECT lsm_am.verify('t_k', true)");
	isnt($ret, 0, 'deleted entry: verify(t_k, true) fails');
	like($err, qr/ERROR:  XX002: index "t_k" lacks an entry for heap tuple \Q$tid_last\E of table "t"/,
		"deleted entry: verify(t_k, true) names heap tuple $tid_last");
	like($err, qr/HINT:  REINDEX the index\./, 'deleted entry: verify(t_k, true) hints at REINDEX');
	# the index really lost the row: what verify is for
	is(sql("$LSM $idx{last}"), '0|', 'deleted entry: the index no longer finds the row (the damage verify reports)');
	is(sql('SELECT pg_postmaster_start_time()'), $started, 'deleted entry: the server kept running');
	$node->stop;
	spew($file{t_k}, $pristine{t_k});
}

# The pristine files are back: sound again, and answering like the twin.
$node->start;
is(sql(q{SELECT lsm_am.verify('t_k', true)}), '', 'after the cases: verify(t_k, true) passes');
is(sql(q{SELECT lsm_am.verify('u_k', true)}), '', 'after the cases: verify(u_k, true) passes');
is(sql("$LSM $idx{$_}"), $want{$_}, "after the cases: query $_ answers like the twin") for sort keys %Q;
$node->stop;

done_testing();
