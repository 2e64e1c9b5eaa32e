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

our @EXPORT = qw(plan_of plan_like query_planned create_assert_plan);

# create_assert_plan(NODE, DB): the SQL function assert_plan(q, want), for
# checks that run inside PL/pgSQL: it raises unless the plan of q (EXPLAIN
# (COSTS OFF) under the caller's settings) contains the text want.
sub create_assert_plan
{
	my ($node, $db) = @_;
	$node->safe_psql($db, q{
CREATE FUNCTION assert_plan(q text, want text) RETURNS void LANGUAGE plpgsql AS $$
DECLARE line text; plan text := '';
BEGIN
  FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
    plan := plan || line || ' ';
  END LOOP;
  IF position(want IN plan) = 0 THEN
    RAISE EXCEPTION 'expected "%" in the plan of %: %', want, q, plan;
  END IF;
END $$;
});
}

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
