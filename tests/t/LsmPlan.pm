# LsmPlan — plan assertions for the TAP tests.
#
# A check that claims to test a scan type must show that the query ran that
# scan: with enable_seqscan = off the planner still falls back to a
# sequential scan when the index cannot serve the query (an index-only scan
# of a column the index lacks, a broken operator class), and the check would
# then compare the heap with itself.  These helpers run EXPLAIN (COSTS OFF)
# first, assert the plan, then run the query.
#
#   use FindBin; use lib $FindBin::RealBin; use LsmPlan;
#   my $n = query_planned($node, 'postgres', 'SET enable_seqscan = off;',
#       'SELECT count(*) FROM t WHERE k > 0', qr/Index Only Scan using t_k/,
#       'count through t_k');
package LsmPlan;

use strict;
use warnings;
use Exporter 'import';
use Test::More;

our @EXPORT = qw(plan_of plan_like query_planned);

# plan_of(NODE, DB, SETTINGS, QUERY): the plan's text (EXPLAIN (COSTS OFF)).
sub plan_of
{
	my ($node, $db, $settings, $query) = @_;
	return $node->safe_psql($db, "$settings EXPLAIN (COSTS OFF) $query");
}

# plan_like(NODE, DB, SETTINGS, QUERY, REGEX, NAME): one test, the plan
# matches REGEX.  Returns the test's result.
sub plan_like
{
	my ($node, $db, $settings, $query, $re, $name) = @_;
	my $plan = plan_of($node, $db, $settings, $query);
	return like($plan, $re, "$name: the plan is $re") || diag($plan);
}

# query_planned(NODE, DB, SETTINGS, QUERY, REGEX, NAME): plan_like, then the
# query's result (run under the same settings).
sub query_planned
{
	my ($node, $db, $settings, $query, $re, $name) = @_;
	plan_like($node, $db, $settings, $query, $re, $name);
	return $node->safe_psql($db, "$settings $query");
}

1;
