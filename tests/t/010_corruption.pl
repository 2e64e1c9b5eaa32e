# 010_corruption.pl — damaged index pages give one clear ERROR, never a wrong
# answer or a crash.
#
# The cluster is stopped, one page of an lsm index is damaged on disk (a log
# entry, a run header, a data page, a fence page, a bloom filter page, the
# manifest on the metapage, the end of the file), the cluster is started
# again, and the queries that reach the page must fail with
#   ERROR:  index "t_k" is corrupted at block N
# (SQLSTATE XX002, index_corrupted) naming the damaged block, with the hint to
# REINDEX — and the server must keep running (no PANIC, no crash restart).
# After every case the pristine file is put back and the index must answer
# exactly like a sequential scan again.  An index of an older on-disk format
# (0.1's) gets its own error, with the same hint, and REINDEX mends it.  Data checksums are off (initdb's
# default on 15; 18 turns them on, so the node asks for them off): lsm_am's
# own checks are all that stands between a damaged page and a wrong answer.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use LsmCluster;
use LsmSession;

my $BLCKSZ = 8192;
my $CONTENT = 24;                # MAXALIGN(SizeOfPageHeaderData)
my $SPECIAL = $BLCKSZ - 16;      # LsmPageOpaqueData (16 bytes, MAXALIGNed)
my %KIND = (meta => 1, log => 2, header => 3, data => 4, fence => 5, bloom => 6);

my $node = PostgreSQL::Test::Cluster->new('corruption');
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

# 200,000 rows under one sorted run (CREATE INDEX), then 2,000 more in the
# memtable (the active log chain); u has a run and an empty memtable.
sql(q{
CREATE EXTENSION lsm_am;
CREATE TABLE t (id int, k int8);
INSERT INTO t SELECT g, (g::int8 * 7919) % 1000003 FROM generate_series(1, 400000) g;
CREATE INDEX t_k ON t USING lsm (k) WITH (bloom_bits_per_key = 10);
INSERT INTO t SELECT g, (g::int8 * 7919) % 1000003 FROM generate_series(400001, 402000) g;
CREATE TABLE u (k int8);
INSERT INTO u SELECT g FROM generate_series(1, 100000) g;
CREATE INDEX u_k ON u USING lsm (k);
CREATE TABLE w (k int8, a int4);
INSERT INTO w SELECT g, g % 1000 FROM generate_series(1, 100000) g;
CREATE INDEX w_k ON w USING lsm (k) INCLUDE (a);
VACUUM w;
CHECKPOINT;
});

my $SEQ = 'SET enable_indexscan = off; SET enable_bitmapscan = off; SET enable_indexonlyscan = off;';
my $IDX = 'SET enable_seqscan = off; SET enable_bitmapscan = off; SET enable_indexonlyscan = off;';
my $want_all = sql("$SEQ SELECT count(*), sum(k) FROM t");
my $pk = sql("SELECT k FROM t WHERE id = 4242");    # a key in the run
my $want_pk = sql("$SEQ SELECT count(*) FROM t WHERE k = $pk");
my $want_u = sql("$SEQ SELECT count(*), sum(k) FROM u");
my $want_w = sql("$SEQ SELECT count(*), sum(k), sum(a) FROM w WHERE k > 0");

# the queries that reach each kind of page
my %Q = (
	all   => "SELECT count(*), sum(k) FROM t WHERE k >= 0",
	point => "SELECT count(*) FROM t WHERE k = $pk",
	# the same lookup twice in one backend: the run is at the deepest level,
	# whose filter page a lookup reads only when it is in memory or the
	# second time the backend needs it (doc/impl.md, "Scans")
	point_twice => "DO \$\$ DECLARE c bigint; BEGIN FOR i IN 1 .. 2 LOOP SELECT count(*) INTO c FROM t WHERE k = $pk; END LOOP; END \$\$",
	u     => "SELECT count(*), sum(k) FROM u WHERE k >= 0",
	# the INCLUDE index, index-only (its entries' shape checked as their
	# tuples are formed) and as a plain index scan
	w_idx => "SELECT count(*), sum(k), sum(a) FROM w WHERE k > 0",
	w_ios => "SET enable_indexonlyscan = on; SELECT count(*), sum(k), sum(a) FROM w WHERE k > 0",
);
like(sql("$IDX EXPLAIN (COSTS OFF) $Q{all}"),   qr/Index Scan using t_k/, 'the range query scans t_k');
like(sql("$IDX EXPLAIN (COSTS OFF) $Q{point}"), qr/Index Scan using t_k/, 'the point query scans t_k');
like(sql("$IDX EXPLAIN (COSTS OFF) $Q{u}"),     qr/Index Scan using u_k/, 'the range query on u scans u_k');
like(sql("$IDX SET enable_indexonlyscan = on; EXPLAIN (COSTS OFF) $Q{w_idx}"),
	qr/Index Only Scan using w_k/, 'the index-only query on w scans w_k');
like(sql("$IDX EXPLAIN (COSTS OFF) $Q{w_idx}"), qr/Index Scan using w_k/, 'the plain query on w scans w_k');

my $datadir = $node->data_dir;
my %file = map { $_ => "$datadir/" . sql("SELECT pg_relation_filepath('$_')") } qw(t_k u_k w_k);
$node->stop;

sub slurp { my ($f) = @_; open my $fh, '<:raw', $f or die "$f: $!"; local $/; my $d = <$fh>; close $fh; return $d; }
sub spew  { my ($f, $d) = @_; open my $fh, '>:raw', $f or die "$f: $!"; print $fh $d; close $fh; }

my %pristine = map { $_ => slurp($file{$_}) } keys %file;

# blocks of each page kind, in file order
sub blocks_of
{
	my ($data, $kind) = @_;
	my @b;
	for my $blk (0 .. length($data) / $BLCKSZ - 1)
	{
		my ($k, $ver, $owner, $next, $sum, $id) =
		  unpack('v v V V v v', substr($data, $blk * $BLCKSZ + $SPECIAL, 16));
		push @b, $blk if $id == 0xFF8A && $k == $KIND{$kind};
	}
	return @b;
}

sub pd_lower { my ($data, $blk) = @_; return unpack('v', substr($data, $blk * $BLCKSZ + 12, 2)); }

# overwrite bytes at offset $off of block $blk
sub poke
{
	my ($data, $blk, $off, $bytes) = @_;
	substr($$data, $blk * $BLCKSZ + $off, length($bytes)) = $bytes;
}

# One case: damage $rel's file with $damage, restart, and check that every
# query in @$queries fails naming block $blk (or one of the blocks @$blk),
# and the server survives.
sub corrupt_case
{
	my ($name, $rel, $blk, $damage, $queries) = @_;
	my $blkre = ref $blk ? join('|', @$blk) : $blk;
	my $data = $pristine{$rel};
	$damage->(\$data);
	spew($file{$rel}, $data);
	$node->start;
	my $started = sql('SELECT pg_postmaster_start_time()');
	for my $q (@$queries)
	{
		my ($ret, $out, $err) = $node->psql('postgres', "\\set VERBOSITY verbose\n$IDX $Q{$q}");
		isnt($ret, 0, "$name: query '$q' fails");
		is($out, '', "$name: query '$q' returns no rows");
		like($err, qr/ERROR:  XX002: index "$rel" is corrupted at block (?:$blkre)\b/,
			"$name: query '$q' names the index and the damaged block");
		like($err, qr/HINT:  REINDEX the index\./, "$name: query '$q' hints at REINDEX");
	}
	is(sql('SELECT pg_postmaster_start_time()'), $started,
		"$name: the server kept running (no crash restart)");
	$node->stop;
	spew($file{$rel}, $pristine{$rel});
	return;
}

my @log = blocks_of($pristine{t_k}, 'log');
my ($header) = blocks_of($pristine{t_k}, 'header');
my @data = blocks_of($pristine{t_k}, 'data');
my @fence = blocks_of($pristine{t_k}, 'fence');
my @bloom = blocks_of($pristine{t_k}, 'bloom');
my ($u_header) = blocks_of($pristine{u_k}, 'header');
ok(@log >= 1 && defined $header && @data > 10 && @fence >= 1 && @bloom >= 1,
	"t_k has log pages (from $log[0]), a run header ($header), "
	  . scalar(@data) . ' data, ' . scalar(@fence) . ' fence and ' . scalar(@bloom) . ' bloom pages');

# 1. A log entry whose key bytes changed to another well-formed key: only the
#    log page's checksum can tell (before it, a range count lost a row).
corrupt_case('log entry changed to another valid key', 't_k', $log[0], sub {
	my ($d) = @_;
	# entry: u16 length, then the key: null flag, 8 value bytes, 6 TID bytes
	my $byte = ord(substr($$d, $log[0] * $BLCKSZ + $CONTENT + 2 + 4, 1));
	poke($d, $log[0], $CONTENT + 2 + 4, chr($byte ^ 0x40));
}, [ 'all', 'point' ]);

# 2. A malformed log entry on a page without a checksum (as 0.2 wrote them):
#    the entry itself is validated.
corrupt_case('malformed log entry', 't_k', $log[0], sub {
	my ($d) = @_;
	poke($d, $log[0], $SPECIAL + 12, pack('v', 0));        # no checksum
	poke($d, $log[0], $CONTENT + 2, chr(0x7F));             # bad null flag
}, [ 'all', 'point' ]);

# 3. A log entry length running past the page.
corrupt_case('log entry length', 't_k', $log[0], sub {
	my ($d) = @_;
	poke($d, $log[0], $SPECIAL + 12, pack('v', 0));
	poke($d, $log[0], $CONTENT, pack('v', 8000));
}, [ 'all' ]);

# 4. The run header's content is garbage.
corrupt_case('run header', 't_k', $header, sub {
	my ($d) = @_;
	poke($d, $header, $CONTENT, "\xFF" x 64);
}, [ 'all', 'point' ]);

# 5. A data page's entry count is garbage.
my $mid = $data[int(@data / 2)];
corrupt_case('data page', 't_k', $mid, sub {
	my ($d) = @_;
	poke($d, $mid, $CONTENT, pack('v', 0xFFFF));
}, [ 'all' ]);

# 6. A data page that decodes, with malformed keys: the null flag of the last
#    restart entry of the run's last data page (its group stays ascending).
my $last = $data[-1];
corrupt_case('malformed entry in a data page', 't_k', $last, sub {
	my ($d) = @_;
	my $len = pd_lower($$d, $last) - $CONTENT;
	my $content = substr($$d, $last * $BLCKSZ + $CONTENT, $len);
	my ($n, $nr) = unpack('v v', $content);
	my $restart = unpack('v', substr($content, $len - 2 * $nr + 2 * ($nr - 1), 2));
	my ($shared, $unshared) = unpack('C C', substr($content, $restart, 2));
	die "unexpected restart entry ($shared, $unshared)" unless $shared == 0 && $unshared == 15;
	poke($d, $last, $CONTENT + $restart + 2, chr(0x7F));
}, [ 'all' ]);

# 6b. The same in an index with INCLUDE columns, in an INCLUDE value's flag
#     byte (neither NULL nor a value): an index-only scan forms its tuples
#     from the entries, a plain index scan checks them; both report it.
my @w_data = blocks_of($pristine{w_k}, 'data');
corrupt_case('malformed INCLUDE value in a data page', 'w_k', $w_data[-1], sub {
	my ($d) = @_;
	my $blk = $w_data[-1];
	my $len = pd_lower($$d, $blk) - $CONTENT;
	my $content = substr($$d, $blk * $BLCKSZ + $CONTENT, $len);
	my ($n, $nr) = unpack('v v', $content);
	my $restart = unpack('v', substr($content, $len - 2 * $nr + 2 * ($nr - 1), 2));
	my ($shared, $unshared) = unpack('C C', substr($content, $restart, 2));
	# null flag, 8 key bytes, INCLUDE flag, 4 value bytes, 6 TID bytes
	die "unexpected restart entry ($shared, $unshared)" unless $shared == 0 && $unshared == 20;
	poke($d, $blk, $CONTENT + $restart + 2 + 9, chr(0x7F));
}, [ 'w_ios', 'w_idx' ]);

# 7. Every fence page is garbage: a point lookup descends one of them.
corrupt_case('fence page', 't_k', \@fence, sub {
	my ($d) = @_;
	poke($d, $_, $CONTENT + 8, "\xFF" x 32) for @fence;
}, [ 'point', 'all' ]);

# 8. Every bloom filter page is garbage: a point lookup probes one of them
#    (after the restart, the second lookup of the key in a backend does).
corrupt_case('bloom filter page', 't_k', \@bloom, sub {
	my ($d) = @_;
	poke($d, $_, $CONTENT, "\xFF" x 16) for @bloom;
}, [ 'point_twice' ]);

# 9. The manifest points a run past the end of the file (before: the storage
#    layer's "could not open file ... target block 16777215").
corrupt_case('run past the end of the file', 't_k', 0, sub {
	my ($d) = @_;
	# runs[0].start: content offset 2776 + 8 in the metapage
	poke($d, 0, $CONTENT + 2776 + 8, pack('V', 16777215));
}, [ 'all', 'point' ]);

# 10. The file lost its end (u_k: one run, no log): the run's header is named.
corrupt_case('file truncated in the middle of a run', 'u_k', $u_header, sub {
	my ($d) = @_;
	$$d = substr($$d, 0, (length($$d) / $BLCKSZ / 2) * $BLCKSZ);
}, [ 'u' ]);

# 11. An index in an older on-disk format (0.1 wrote format version 1, in
#     the same special space; 0.2 and later write 2): every page says
#     version 1.  It is refused as not readable, not as corrupt (SQLSTATE
#     0A000, feature_not_supported), with the hint to REINDEX, by reads and
#     writes alike; the server keeps running, and REINDEX makes it whole.
{
	my $data = $pristine{u_k};
	poke(\$data, $_, $SPECIAL + 2, pack('v', 1)) for 0 .. length($data) / $BLCKSZ - 1;
	spew($file{u_k}, $data);
	$node->start;
	my $started = sql('SELECT pg_postmaster_start_time()');
	for my $c ([ 'the range query on u', "$IDX $Q{u}" ], [ 'an INSERT into u', 'INSERT INTO u VALUES (100001)' ])
	{
		my ($what, $q) = @$c;
		my ($ret, $out, $err) = $node->psql('postgres', "\\set VERBOSITY verbose\n$q");
		isnt($ret, 0, "format version 1: $what fails");
		like($err,
			qr/ERROR:  0A000: index "u_k" has on-disk format version 1, this lsm_am reads version 2/,
			"format version 1: $what says which format the index has and which this lsm_am reads");
		like($err, qr/HINT:  REINDEX the index\./, "format version 1: $what hints at REINDEX");
	}
	is(sql('SELECT pg_postmaster_start_time()'), $started,
		'format version 1: the server kept running (no crash restart)');
	sql('REINDEX INDEX u_k');
	is(sql("$IDX $Q{u}"), $want_u, 'format version 1: after REINDEX the index answers like a sequential scan');
	$node->stop;
}

# The pristine files are back: the index answers like a sequential scan.
$node->start;
is(sql("$IDX $Q{all}"), $want_all, 'after the cases: the range query over t_k is right');
is(sql("$IDX $Q{point}"), $want_pk, 'after the cases: the point query over t_k is right');
is(sql("$IDX $Q{u}"), $want_u, 'after the cases: the range query over u_k is right');
is(sql("$IDX $Q{w_ios}"), $want_w, 'after the cases: the index-only query over w_k is right');
is(sql("$IDX $Q{w_idx}"), $want_w, 'after the cases: the plain query over w_k is right');
is(sql("SELECT leaked_pages FROM lsm_am.check_index('t_k')"), '0', 'check_index finds nothing leaked');
$node->stop;

done_testing();
