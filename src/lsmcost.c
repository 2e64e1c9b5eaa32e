/*
 * lsmcost.c — amcostestimate.
 *
 * Starts from genericcostestimate (selectivity, index pages, per-tuple CPU)
 * and adds what an LSM lookup pays on top of a single tree descent: a header
 * and a fence descent for each sorted run, and the search of the memtable.
 * The number of runs is read from the metapage (cheap: usually cached).
 * The Bloom issue refines this with filter probabilities.
 */
#include "postgres.h"

#include <math.h>

#include "access/relation.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "utils/rel.h"
#include "utils/selfuncs.h"

#include "lsm.h"

/* Number of sorted runs of an index, or 1 if it cannot be read cheaply. */
static int
LsmEstimateRuns(Oid indexoid)
{
	Relation	index;
	LsmMetaPageData meta;
	int			nruns = 1;

	index = index_open(indexoid, AccessShareLock);
	if (RelationGetNumberOfBlocks(index) > 0)
	{
		LsmReadMeta(index, &meta, NULL);
		nruns = Max((int) meta.nruns, 1);
	}
	index_close(index, AccessShareLock);
	return nruns;
}

void
lsmcostestimate(PlannerInfo *root, IndexPath *path, double loop_count,
				Cost *indexStartupCost, Cost *indexTotalCost,
				Selectivity *indexSelectivity, double *indexCorrelation,
				double *indexPages)
{
	GenericCosts costs;
	int			nruns = LsmEstimateRuns(path->indexinfo->indexoid);
	double		descent;

	MemSet(&costs, 0, sizeof(costs));
	genericcostestimate(root, path, loop_count, &costs);

	/*
	 * Each run costs a descent (header, fence levels: a few comparisons per
	 * level, like btree's) and the memtable one more; charged as CPU, since
	 * the upper pages of runs stay cached like btree's upper levels.
	 */
	descent = (nruns + 1) * (ceil(log2(Max(path->indexinfo->tuples, 2.0))) + 50.0) *
		cpu_operator_cost;
	costs.indexStartupCost += descent;
	costs.indexTotalCost += descent * Max(loop_count, 1.0);

	*indexStartupCost = costs.indexStartupCost;
	*indexTotalCost = costs.indexTotalCost;
	*indexSelectivity = costs.indexSelectivity;
	*indexCorrelation = costs.indexCorrelation;
	*indexPages = costs.numIndexPages;
}
