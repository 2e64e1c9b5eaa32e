/*
 * lsmcost.c — amcostestimate.
 *
 * Starts from genericcostestimate (selectivity, index pages, per-tuple CPU)
 * and adds what an LSM lookup pays on top of a single tree descent: a header
 * and a fence descent for each sorted run, and the search of the memtable.
 * The number of runs is read from the metapage (cheap: usually cached).
 * With equality on the leading column, runs with a bloom filter are searched
 * only at the filter's false-positive rate (0.8% at 10 bits per key), so a
 * point lookup costs about one descent however many runs there are.
 */
#include "postgres.h"

#include <math.h>

#include "access/nbtree.h"
#include "access/relation.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/selfuncs.h"

#include "am/lsm_am.h"

/*
 * Module start-up (postmaster, while preloading): the bloom filter model's
 * false positive rate for every bits_per_key an index can have.  The core
 * memoizes each value per process (lsm_bloom_expected_fpr: a sum of a few
 * hundred terms, about 20 us, and in a new backend the first touch of the
 * code it runs: 107 us measured); computed here, every backend
 * inherits them at fork, and a new connection's first plan of a query on an
 * lsm index does not compute one.  About 0.3 ms at server start.
 */
void
LsmCostInit(void)
{
	for (uint32 b = 1; b <= LSM_BLOOM_MAX_BITS_PER_KEY; b++)
		(void) lsm_bloom_expected_fpr(b);
}

/*
 * Sorted runs of an index: all of them, and those with a bloom filter on the
 * leading column, read in place from the metapage.  As brincostestimate
 * does: the planner holds the index's lock already (plancat.c), its page
 * count says whether there is a metapage (no system call of our own), and a
 * hypothetical index (hypopg) has nothing to read: one run, filtered.
 */
static void
LsmEstimateRuns(IndexOptInfo *info, int *nruns, int *nfiltered, double *fpr)
{
	Relation	index;
	LsmOptions *opts;

	*nruns = 1;
	*nfiltered = 0;
	*fpr = lsm_bloom_expected_fpr(10);
	if (info->hypothetical)
	{
		*nfiltered = 1;
		return;
	}
	index = index_open(info->indexoid, NoLock);
	if (info->pages > 0)
	{
		LsmReadRunCounts(index, nruns, nfiltered);
		*nruns = Max(*nruns, 1);
	}
	opts = (LsmOptions *) index->rd_options;
	if (opts)
		*fpr = lsm_bloom_expected_fpr(opts->bloom_bits_per_key);
	index_close(index, NoLock);
}

/* Does the path have an equality (or = ANY) clause on the first column? */
static bool
LsmLeadingEquality(IndexPath *path)
{
	ListCell   *lc;

	foreach(lc, path->indexclauses)
	{
		IndexClause *ic = lfirst_node(IndexClause, lc);
		ListCell   *lc2;

		if (ic->indexcol != 0)
			continue;
		foreach(lc2, ic->indexquals)
		{
			RestrictInfo *ri = lfirst_node(RestrictInfo, lc2);
			Oid			opno = InvalidOid;

			if (IsA(ri->clause, OpExpr))
				opno = ((OpExpr *) ri->clause)->opno;
			else if (IsA(ri->clause, ScalarArrayOpExpr))
				opno = ((ScalarArrayOpExpr *) ri->clause)->opno;
			if (OidIsValid(opno) &&
				get_op_opfamily_strategy(opno, path->indexinfo->opfamily[0]) ==
				BTEqualStrategyNumber)
				return true;
		}
	}
	return false;
}

/*
 * The fraction of the index a scan reads, as btcostestimate finds it: only
 * the clauses that bound the scanned key range count — those on the leading
 * columns, up to and including the first column without an equality.  A
 * clause on a later column (or on a column after a gap) narrows nothing: the
 * scan reads the whole range of the bounding clauses and checks it on every
 * entry.  genericcostestimate would take the selectivity of every clause and
 * make a scan of (v, k) with a condition on k look as cheap as one of an
 * index on k.  Returns -1 (let genericcostestimate decide) when an = ANY
 * clause is present: it repeats the scan per element.
 */
static double
LsmBoundedTuples(PlannerInfo *root, IndexPath *path)
{
	IndexOptInfo *index = path->indexinfo;
	List	   *bound = NIL;
	int			indexcol = 0;
	bool		eqhere = false;
	ListCell   *lc;
	double		tuples;

	foreach(lc, path->indexclauses)
	{
		IndexClause *ic = lfirst_node(IndexClause, lc);
		ListCell   *lc2;

		if (ic->indexcol != indexcol)
		{
			/* the next column bounds the range only after an equality */
			if (!eqhere || ic->indexcol != indexcol + 1)
				break;
			indexcol = ic->indexcol;
			eqhere = false;
		}
		foreach(lc2, ic->indexquals)
		{
			RestrictInfo *ri = lfirst_node(RestrictInfo, lc2);
			Expr	   *clause = ri->clause;

			if (IsA(clause, ScalarArrayOpExpr))
				return -1;
			if (IsA(clause, OpExpr) &&
				get_op_opfamily_strategy(((OpExpr *) clause)->opno,
										 index->opfamily[indexcol]) == BTEqualStrategyNumber)
				eqhere = true;
			else if (IsA(clause, NullTest) &&
					 ((NullTest *) clause)->nulltesttype == IS_NULL)
				eqhere = true;
			bound = lappend(bound, ri);
		}
	}
	tuples = clauselist_selectivity(root, bound, index->rel->relid, JOIN_INNER, NULL) *
		index->rel->tuples;
	list_free(bound);
	return Max(rint(tuples), 1.0);
}

void
lsmcostestimate(PlannerInfo *root, IndexPath *path, double loop_count,
				Cost *indexStartupCost, Cost *indexTotalCost,
				Selectivity *indexSelectivity, double *indexCorrelation,
				double *indexPages)
{
	GenericCosts costs;
	int			nruns,
				nfiltered;
	double		fpr;
	double		searched;
	double		descent;

	MemSet(&costs, 0, sizeof(costs));
	costs.numIndexTuples = LsmBoundedTuples(root, path);
	if (costs.numIndexTuples < 0)
		costs.numIndexTuples = 0;	/* genericcostestimate computes it */
	genericcostestimate(root, path, loop_count, &costs);
	LsmEstimateRuns(path->indexinfo, &nruns, &nfiltered, &fpr);

	/* runs a lookup searches: filters keep most of them out */
	searched = nruns;
	if (nfiltered > 0 && LsmLeadingEquality(path))
		searched = (nruns - nfiltered) + Max(1.0, nfiltered * fpr);

	/*
	 * Each run costs a descent (header, fence levels: a few comparisons per
	 * level, like btree's) and the memtable one more; charged as CPU, since
	 * the upper pages of runs stay cached like btree's upper levels.  Like
	 * btree's descent cost it is per scan: the planner multiplies the result
	 * by the loop count of a parameterized path itself (genericcostestimate
	 * used loop_count only to amortize page fetches across loops), and a
	 * scan with = ANY makes one descent per array element.
	 */
	descent = (searched + 1) * (ceil(log2(Max(path->indexinfo->tuples, 2.0))) + 50.0) *
		cpu_operator_cost;
	costs.indexStartupCost += descent;
	costs.indexTotalCost += descent * Max(costs.num_sa_scans, 1.0);

	*indexStartupCost = costs.indexStartupCost;
	*indexTotalCost = costs.indexTotalCost;
	*indexSelectivity = costs.indexSelectivity;
	*indexCorrelation = costs.indexCorrelation;
	*indexPages = costs.numIndexPages;
}
