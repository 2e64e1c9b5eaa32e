# LsmSession — a psql that stays connected, for TAP files that run many
# small queries.
#
# On these machines a new connection costs about 100 ms (a psql process, a
# backend fork, IPC::Run), so a file that runs a thousand checks through
# $node->safe_psql spends most of its time starting processes.  A session
# keeps one psql per database and answers safe_psql and psql calls through
# it, with the semantics of a new connection for each call:
#
#   - before each call it runs DISCARD ALL (settings, prepared statements,
#     temporary tables, advisory locks of the last call are gone);
#   - psql runs with ON_ERROR_STOP: an error ends the call's script there,
#     psql exits, and the next call connects again (so a transaction the
#     script left open or aborted is rolled back, as when psql exits);
#   - a server that restarted or crashed since the last call (the
#     connection is gone) is met by the DISCARD ALL: the session connects
#     again before it runs the call.
#
# What differs from a new connection: the backend is the same one (its
# caches stay warm, its pid does not change), and an idle session stays
# connected (a DROP DATABASE of its database has to close it first:
# $session->close($db)).  Files that measure a new connection's work, or
# that count backends, use $node->safe_psql for those queries.
#
#   use FindBin; use lib $FindBin::RealBin; use LsmSession;
#   my $s = LsmSession->new($node);
#   my $n = $s->safe_psql('postgres', 'SELECT count(*) FROM t');   # dies on error
#   my ($ret, $out, $err) = $s->psql('postgres', 'SELECT 1/0');      # $ret 3
#
# The object has the node's safe_psql and psql signatures, so it can stand
# in for the node in helpers that only run queries (LsmPlan's).
package LsmSession;

use strict;
use warnings;
use Carp;
use IPC::Run;
use PostgreSQL::Test::Utils;

sub new
{
	my ($class, $node) = @_;
	return bless { node => $node, psql => {}, n => 0 }, $class;
}

sub node { return $_[0]->{node}; }

# The psql of database $db, started when there is none or it has exited.
sub _conn
{
	my ($self, $db) = @_;
	my $c = $self->{psql}{$db};
	return $c if $c && $c->{h}->pumpable;
	$self->close($db);
	my $node = $self->{node};
	$c = { in => '', out => '', err => '' };
	$c->{timer} = IPC::Run::timeout($PostgreSQL::Test::Utils::timeout_default);
	{
		local %ENV = $node->_get_env();
		$c->{h} = IPC::Run::start(
			[
				$node->installed_command('psql'), '-XAtq',
				'-d', $node->connstr($db), '-f', '-', '-v', 'ON_ERROR_STOP=1'
			],
			'<', \$c->{in}, '>', \$c->{out}, '2>', \$c->{err}, $c->{timer});
	}
	$self->{psql}{$db} = $c;
	return $c;
}

# Close the psql of $db (all when $db is undefined).
sub close
{
	my ($self, $db) = @_;
	for my $d (defined $db ? ($db) : keys %{ $self->{psql} })
	{
		my $c = delete $self->{psql}{$d} or next;
		$c->{in} .= "\\q\n" if $c->{h}->pumpable;
		eval { $c->{h}->finish; };
		eval { $c->{h}->kill_kill; } if $@;
	}
	return;
}

# Send $script to the psql of $db, followed by a marker; wait until the
# marker comes back or psql exits.  Returns (exit code or undef while
# psql runs on, stdout before the marker, stderr).
sub _run
{
	my ($self, $c, $script) = @_;
	my $marker = '__lsm_session_' . ++$self->{n} . '__';
	$c->{out} = '';
	$c->{err} = '';
	# the newline ends a trailing comment, the ';' a last statement
	# without one (psql -f runs it at end of input; here input goes on)
	$c->{in} .= "$script\n;\n\\echo $marker\n";
	$c->{timer}->start($PostgreSQL::Test::Utils::timeout_default);
	eval {
		$c->{h}->pump while $c->{h}->pumpable && $c->{out} !~ /(?:^|\n)\Q$marker\E\n\z/;
	};
	if ($@)
	{
		my $e = $@;
		eval { $c->{h}->kill_kill; };
		croak "psql session: $e (stderr: '$c->{err}') while running: $script";
	}
	my $out = $c->{out};
	my $err = $c->{err};
	if ($out =~ s/(?:^|\n)\Q$marker\E\n\z//)
	{
		chomp $out;
		chomp $err;
		return (undef, $out, $err);
	}
	# psql ended: ON_ERROR_STOP (3), a lost connection (2)
	eval { $c->{h}->finish; };
	my $ret = $c->{h}->full_result(0);
	$ret = defined $ret ? $ret >> 8 : 2;
	chomp $out;
	chomp $err;
	return ($ret, $out, $err);
}

# psql($db, $sql): ($ret, $stdout, $stderr) as the node's psql with
# on_error_stop (0, or 3 after an SQL error, 2 when the connection failed).
sub psql
{
	my ($self, $db, $sql) = @_;
	for my $try (1, 2)
	{
		my $c = $self->_conn($db);
		my ($ret, $out, $err) = $self->_run($c, 'DISCARD ALL;');
		if (defined $ret)
		{
			# the connection was gone (a restart, a crash, a terminated
			# backend), or could not be made: connect once more
			$self->close($db);
			next if $try == 1;
			return ($ret, $out, $err);
		}
		($ret, $out, $err) = $self->_run($c, $sql);
		$self->close($db) if defined $ret;
		return ($ret // 0, $out, $err);
	}
}

# safe_psql($db, $sql): stdout; dies on an error, as the node's safe_psql.
sub safe_psql
{
	my ($self, $db, $sql) = @_;
	my ($ret, $out, $err) = $self->psql($db, $sql);
	if ($ret)
	{
		croak "psql session error (exit $ret): stderr: '$err'\nwhile running: $sql";
	}
	if ($err ne '')
	{
		print "#### Begin standard error\n$err\n#### End standard error\n";
	}
	return $out;
}

sub DESTROY
{
	my ($self) = @_;
	local ($@, $?);
	$self->close;
}

1;
