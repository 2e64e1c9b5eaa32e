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

/* memcmp order, shorter first on a common prefix (the core's key order). */
static int
LsmChainKeyCmp(const uint8 *a, size_t alen, const uint8 *b, size_t blen)
{
	int			c = memcmp(a, b, Min(alen, blen));

	if (c != 0)
		return c;
	return (alen > blen) - (alen < blen);
}

static int
LsmChainRunCmp(const void *a, const void *b)
{
	const LsmChainRun *x = (const LsmChainRun *) a;
	const LsmChainRun *y = (const LsmChainRun *) b;

	return LsmChainKeyCmp(x->min, x->minlen, y->min, y->minlen);
}

/*
 * The cursors of a scan over runs[0..nruns) (the manifest's order, oldest
 * first): level 0 and levels whose runs overlap get a cursor per run, a
 * level >= 1 of two or more disjoint runs one chained cursor.  Returns the
 * number of cursors in *out (palloc'd in the current memory context).
 */
int
LsmScanCursors(Relation index, const LsmRunRef *runs, int nruns, bool backward,
			   LsmRunCursor **out)
{
	LsmRunCursor *cursors = palloc0(sizeof(LsmRunCursor) * Max(nruns, 1));
	bool	   *placed = palloc0(sizeof(bool) * Max(nruns, 1));
	LsmChainRun *lv = palloc(sizeof(LsmChainRun) * Max(nruns, 1));
	int			n = 0;

	for (int level = 1; level <= LSM_PICK_MAX_LEVEL; level++)
	{
		int			k = 0;
		bool		disjoint = true;
		LsmRunRef  *chain;

		for (int i = 0; i < nruns; i++)
		{
			LsmRunCacheEntry *e;

			if (runs[i].level != level)
				continue;
			e = LsmRunCacheGet(index, &runs[i]);
			lv[k].idx = i;
			lv[k].minlen = e->hdr.min_key_len;
			lv[k].min = palloc(lv[k].minlen + 1);
			memcpy(lv[k].min, e->hdr.min_key, lv[k].minlen);
			lv[k].maxlen = e->hdr.max_key_len;
			lv[k].max = palloc(lv[k].maxlen + 1);
			memcpy(lv[k].max, e->hdr.max_key, lv[k].maxlen);
			k++;
		}
		if (k < 2)
			continue;
		qsort(lv, k, sizeof(LsmChainRun), LsmChainRunCmp);
		for (int j = 0; j + 1 < k && disjoint; j++)
			if (LsmChainKeyCmp(lv[j].max, lv[j].maxlen, lv[j + 1].min, lv[j + 1].minlen) >= 0)
				disjoint = false;
		if (!disjoint)
			continue;
		/* in the order the scan meets them */
		chain = palloc(sizeof(LsmRunRef) * k);
		for (int j = 0; j < k; j++)
		{
			chain[j] = runs[lv[backward ? k - 1 - j : j].idx];
			placed[lv[j].idx] = true;
		}
		LsmRunCursorInit(&cursors[n], &chain[0]);
		cursors[n].chain = chain;
		cursors[n].nchain = k;
		cursors[n].chain_pos = 1;
		n++;
	}
	/* the others one by one, newest first (as before chains) */
	for (int i = nruns - 1; i >= 0; i--)
		if (!placed[i])
			LsmRunCursorInit(&cursors[n++], &runs[i]);
	pfree(placed);
	pfree(lv);
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
	c->bloom_cols_hashed = save.bloom_cols_hashed;
	c->bloom_hash = save.bloom_hash;
	c->bloom_check = save.bloom_cols_hashed > 0 && c->ref.bloom_nblocks > 0 &&
		c->ref.bloom_cols == save.bloom_cols_hashed;
	return true;
}
