/*
 * lsmchain.c — a scan reads a level held in pieces as one source.
 *
 * The pieces of a leveled level (lsmpiece.c) have disjoint key ranges, so a
 * scan needs at most one of them at a time: the runs of such a level become
 * one cursor that walks them in key order (reverse key order for a backward
 * scan), opening the next when the current one runs out.  The merging
 * iterator then has one source per level instead of one per piece, and
 * `ORDER BY k LIMIT n` or a range scan opens only the pieces its range
 * reaches, as with one run per level.  Whether a level's runs are disjoint
 * is checked here, from their headers (the run cache), not assumed from the
 * policy: a tiered level, or a leveled one an older policy left
 * overlapping, keeps one cursor per run.
 */
#include "postgres.h"

#include "miscadmin.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "storage/lsm_storage.h"

typedef struct LsmChainRun
{
	int			idx;			/* into the scan's runs */
	uint8	   *min;
	size_t		minlen;
	uint8	   *max;
	size_t		maxlen;
} LsmChainRun;

static int
LsmChainRunCmp(const void *a, const void *b)
{
	const LsmChainRun *x = (const LsmChainRun *) a;
	const LsmChainRun *y = (const LsmChainRun *) b;

	return LsmKeyCmp(x->min, x->minlen, y->min, y->minlen);
}

/*
 * What the cursors of a scan over one manifest need from the run headers:
 * which levels are chains (their runs in key order), and the smallest and
 * largest key of every run of a level that could be one.  Worked out once
 * per manifest and kept per backend for the last few indexes scanned: a
 * point lookup used to fetch every
 * run's header from the run cache, copy its bounds and sort them, on every
 * scan.  A memo holds for exactly the manifest it was made from (the runs
 * array compares equal: same runs, same extents, same counts).
 */
#define LSM_CHAIN_MEMOS		4

typedef struct LsmChainMemo
{
	MemoryContext cxt;			/* NULL: unused */
	Oid			dbid;
	Oid			relnumber;
	uint64		instance_id;
	uint64		used;			/* for replacement: least recently used goes */
	int			nruns;
	LsmRunRef  *runs;			/* the manifest's runs it was made from */
	LsmChainRun *bounds;		/* per run (idx = its position in runs) */
	bool	   *chained;		/* per run: read through its level's chain */
	int			nchains;
	int			chain_k[LSM_PICK_MAX_LEVEL];	/* runs of each chain */
	int		   *chain_idx[LSM_PICK_MAX_LEVEL];	/* ... in key order */
} LsmChainMemo;

static LsmChainMemo lsm_chain_memos[LSM_CHAIN_MEMOS];
static uint64 lsm_chain_memo_clock = 0;

static LsmChainMemo *
LsmChainMemoGet(Relation index, const LsmRunRef *runs, int nruns)
{
	Oid			relnumber = LsmRelFileNumber(index);
	uint64		instance_id = LsmGetRelCache(index)->instance_id;
	LsmChainMemo *memo = NULL;
	MemoryContext old;
	LsmChainRun *lv;
	int			level_runs[LSM_PICK_MAX_LEVEL + 1];	/* runs per level */

	for (int i = 0; i < LSM_CHAIN_MEMOS; i++)
	{
		LsmChainMemo *m = &lsm_chain_memos[i];

		if (m->cxt != NULL && m->dbid == MyDatabaseId && m->relnumber == relnumber &&
			m->instance_id == instance_id && m->nruns == nruns &&
			memcmp(m->runs, runs, sizeof(LsmRunRef) * nruns) == 0)
		{
			m->used = ++lsm_chain_memo_clock;
			return m;
		}
		/* else replace an unused one, or the least recently used */
		if (memo == NULL ||
			(memo->cxt != NULL && (m->cxt == NULL || m->used < memo->used)))
			memo = m;
	}

	/* make it anew (the run headers may ERROR: the memo is unused until done) */
	if (memo->cxt == NULL)
		memo->cxt = AllocSetContextCreate(TopMemoryContext, "lsm chain memo",
										  ALLOCSET_SMALL_SIZES);
	else
		MemoryContextReset(memo->cxt);
	memo->nruns = -1;
	old = MemoryContextSwitchTo(memo->cxt);
	memo->runs = palloc(sizeof(LsmRunRef) * Max(nruns, 1));
	memcpy(memo->runs, runs, sizeof(LsmRunRef) * nruns);
	memo->bounds = palloc(sizeof(LsmChainRun) * Max(nruns, 1));
	memo->chained = palloc0(sizeof(bool) * Max(nruns, 1));
	memset(level_runs, 0, sizeof(level_runs));
	for (int i = 0; i < nruns; i++)
		if (runs[i].level <= LSM_PICK_MAX_LEVEL)
			level_runs[runs[i].level]++;
	for (int i = 0; i < nruns; i++)
	{
		LsmChainRun *b = &memo->bounds[i];
		LsmRunCacheEntry *e;

		b->idx = i;
		b->min = b->max = NULL;
		b->minlen = b->maxlen = 0;

		/*
		 * Only the runs of a level >= 1 with two or more runs can be chained,
		 * and only theirs need bounds here: any other run gets a cursor whose
		 * start skips it by key range (from its header) or by filter, so that
		 * a new connection's point lookup does not read the header of a run
		 * the filter rules out.
		 */
		if (runs[i].level == 0 || runs[i].level > LSM_PICK_MAX_LEVEL ||
			level_runs[runs[i].level] < 2)
			continue;
		e = LsmRunCacheGet(index, &runs[i]);
		LsmRunCacheHeader(index, e);
		b->minlen = e->hdr.min_key_len;
		b->min = palloc(b->minlen + 1);
		memcpy(b->min, e->hdr.min_key, b->minlen);
		b->maxlen = e->hdr.max_key_len;
		b->max = palloc(b->maxlen + 1);
		memcpy(b->max, e->hdr.max_key, b->maxlen);
	}
	lv = palloc(sizeof(LsmChainRun) * Max(nruns, 1));
	memo->nchains = 0;
	for (int level = 1; level <= LSM_PICK_MAX_LEVEL; level++)
	{
		int			k = 0;
		bool		disjoint = true;
		int		   *idx;

		for (int i = 0; i < nruns; i++)
			if (runs[i].level == level)
				lv[k++] = memo->bounds[i];
		if (k < 2)
			continue;
		qsort(lv, k, sizeof(LsmChainRun), LsmChainRunCmp);
		for (int j = 0; j + 1 < k && disjoint; j++)
			if (LsmKeyCmp(lv[j].max, lv[j].maxlen, lv[j + 1].min, lv[j + 1].minlen) >= 0)
				disjoint = false;
		if (!disjoint)
			continue;
		idx = palloc(sizeof(int) * k);
		for (int j = 0; j < k; j++)
		{
			idx[j] = lv[j].idx;
			memo->chained[lv[j].idx] = true;
		}
		memo->chain_k[memo->nchains] = k;
		memo->chain_idx[memo->nchains] = idx;
		memo->nchains++;
	}
	pfree(lv);
	MemoryContextSwitchTo(old);
	memo->dbid = MyDatabaseId;
	memo->relnumber = relnumber;
	memo->instance_id = instance_id;
	memo->nruns = nruns;
	memo->used = ++lsm_chain_memo_clock;
	return memo;
}

/*
 * Does run b hold no key of range (entirely below it, or above it)?  False
 * for a run whose bounds the memo does not hold.
 */
static bool
LsmChainBelow(const LsmChainRun *b, const LsmRange *range)
{
	/* as LsmRunCursorStart skips a run by key range */
	return range != NULL && range->lo != NULL && b->max != NULL &&
		LsmKeyCmp(b->max, b->maxlen, range->lo, range->lolen) < 0;
}

static bool
LsmChainAbove(const LsmChainRun *b, const LsmRange *range)
{
	return range != NULL && b->min != NULL && LsmKeyBeyondHi(range, b->min, b->minlen);
}

/*
 * The cursors of a scan over runs[0..nruns) (the manifest's order, oldest
 * first) for keys in range (NULL: all): level 0 and levels whose runs
 * overlap get a cursor per run, a level >= 1 of two or more disjoint runs
 * one chained cursor over the runs the range reaches (found by binary
 * search: a point lookup opens one run of such a level).  Runs the range
 * does not reach get no cursor.  Returns the number of cursors in *out
 * (palloc'd in the current memory context).
 */
int
LsmScanCursors(Relation index, const LsmRunRef *runs, int nruns, bool backward,
			   const LsmRange *range, LsmRunCursor **out)
{
	LsmChainMemo *memo = LsmChainMemoGet(index, runs, nruns);
	LsmRunCursor *cursors = palloc0(sizeof(LsmRunCursor) * Max(nruns, 1));
	int			n = 0;

	for (int ch = 0; ch < memo->nchains; ch++)
	{
		int			k = memo->chain_k[ch];
		const int  *idx = memo->chain_idx[ch];
		int			lo = 0,
					hi = k;
		int			first,
					last;
		LsmRunRef  *chain;

		/* first run not below the range (runs in key order: maxima ascend) */
		while (lo < hi)
		{
			int			mid = (lo + hi) / 2;

			if (LsmChainBelow(&memo->bounds[idx[mid]], range))
				lo = mid + 1;
			else
				hi = mid;
		}
		first = lo;
		/* first run above it (minima ascend too) */
		hi = k;
		while (lo < hi)
		{
			int			mid = (lo + hi) / 2;

			if (LsmChainAbove(&memo->bounds[idx[mid]], range))
				hi = mid;
			else
				lo = mid + 1;
		}
		last = lo - 1;
		if (last < first)
			continue;			/* the range falls between two runs */
		/* in the order the scan meets them */
		chain = palloc(sizeof(LsmRunRef) * (last - first + 1));
		for (int j = 0; j <= last - first; j++)
			chain[j] = runs[idx[backward ? last - j : first + j]];
		LsmRunCursorInit(&cursors[n], &chain[0]);
		cursors[n].chain = chain;
		cursors[n].nchain = last - first + 1;
		cursors[n].chain_pos = 1;
		n++;
	}
	/* the others one by one, newest first (as before chains) */
	for (int i = nruns - 1; i >= 0; i--)
		if (!memo->chained[i] &&
			!LsmChainBelow(&memo->bounds[i], range) &&
			!LsmChainAbove(&memo->bounds[i], range))
			LsmRunCursorInit(&cursors[n++], &runs[i]);
	*out = cursors;
	return n;
}

/*
 * The cursor's run is done: go on with the next run of its chain, if any
 * (false: none).  The filter probe carries over to runs whose filter hashes
 * the same columns; the counts of the finished run are kept for the scan's
 * statistics.
 */
bool
LsmRunCursorNextRun(LsmRunCursor *c)
{
	LsmRunCursor save = *c;

	if (c->chain == NULL || c->chain_pos >= c->nchain)
		return false;
	if (save.probed)
	{
		save.acc_probes++;
		if (save.filtered)
			save.acc_negatives++;
		else if (!save.matched)
			save.acc_falsepos++;
	}
	LsmRunCursorInit(c, &save.chain[save.chain_pos]);
	c->chain = save.chain;
	c->nchain = save.nchain;
	c->chain_pos = save.chain_pos + 1;
	c->acc_probes = save.acc_probes;
	c->acc_negatives = save.acc_negatives;
	c->acc_falsepos = save.acc_falsepos;
	c->data_pages = save.data_pages;
	c->strategy = save.strategy;
	c->bloom_cols_hashed = save.bloom_cols_hashed;
	c->bloom_hash = save.bloom_hash;
	c->bloom_pass_cold = save.bloom_pass_cold;
	c->bloom_large = save.bloom_large;
	c->bloom_level_share = save.bloom_level_share;
	c->bloom_check = save.bloom_cols_hashed > 0 && c->ref.bloom_nblocks > 0 &&
		c->ref.bloom_cols == save.bloom_cols_hashed;
	return true;
}
