/*
 * lsmscanpar.c — parallel index scans (plain and index-only; the scan's
 * other files: lsmscan_int.h).
 *
 * The participants of a parallel scan (the leader and its workers, each
 * with a scan of its own) split the scan's key range into chunks at split
 * keys and claim the chunks in key order from a shared counter; a
 * participant scans its chunk with a snapshot of its own (lsmscanmerge.c),
 * then claims the next.  Every entry of the range lies in exactly one chunk,
 * so the participants together return what one serial scan returns; each
 * one's chunks ascend (descend, backward), so each one's output is in index
 * order, as Gather Merge needs.
 *
 * Split keys: the first participant to fetch computes them, the others wait
 * on a condition variable.  They are separators of the fence trees of the
 * runs of the level that holds most entries (the bottom level, in the steady
 * state): the first key of a data page, or of a fence page's subtree, so
 * chunks hold about equal numbers of entries.  Each run contributes about
 * its share of LSM_PSCAN_TARGET_CHUNKS, read from its header's root block
 * and, while that has too few separators inside the range, from the levels
 * below (cached fence pages, only those whose subtree meets the range).
 * Several snapshots give one consistent answer for the same reason a scan
 * that turns around may take a new one: the index only gains entries a
 * snapshot may see, and no entry leaves a chunk.
 *
 * A chunk runs from one split key (included) to the next (excluded): its
 * lower bound is the merge's inclusive lo; its upper bound is the merge's
 * hi (a whole entry as hi admits the entries <= it), and the entry equal to
 * it is skipped (it is the first of the next chunk).  Split keys are
 * strictly inside the scan's range, so chunk bounds only narrow it.
 *
 * A scan that iterates the elements of = ANY (lsmscankeys.c) needs no split
 * keys: its chunks are the combinations of elements, in index order (the
 * last column's element changing fastest), each a range of its own, as the
 * serial scan takes them one after the other.
 */
#include "postgres.h"

#include "access/relscan.h"
#include "miscadmin.h"
#include "storage/condition_variable.h"
#include "storage/spin.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "am/lsmscan_int.h"
#include "lsm_compat.h"

/* chunks a scan aims at (they are claimed one by one: the tail is short) */
#define LSM_PSCAN_TARGET_CHUNKS		64
/* at most this many split keys, of at most this many bytes in all */
#define LSM_PSCAN_MAX_SPLITS		127
#define LSM_PSCAN_SPLIT_BYTES		(32 * 1024)

typedef enum LsmPscanState
{
	LSM_PSCAN_INIT,				/* no participant has fetched yet */
	LSM_PSCAN_SPLITTING,		/* one computes the split keys */
	LSM_PSCAN_READY				/* split keys in place: claim chunks */
} LsmPscanState;

/* The shared state of one parallel lsm scan, in the parallel query's DSM. */
typedef struct LsmParallelScanData
{
	slock_t		mutex;			/* protects state and next */
	LsmPscanState state;
	ConditionVariable cv;		/* signalled when state becomes READY */
	uint64		next;			/* chunks claimed so far (a plain counter
								 * under the spinlock: a 64-bit atomic need
								 * not be aligned in the DSM everywhere) */
	int			nsplits;		/* chunks: nsplits + 1 */
	uint32		off[LSM_PSCAN_MAX_SPLITS + 1];	/* split i is data[off[i],
												 * off[i+1]) */
	uint8		data[LSM_PSCAN_SPLIT_BYTES];
} LsmParallelScanData;

typedef LsmParallelScanData *LsmParallelScan;

static uint32 lsm_wait_pscan = 0;

Size
lsmestimateparallelscan(LSM_ESTIMATE_PSCAN_ARGS)
{
	return sizeof(LsmParallelScanData);
}

void
lsminitparallelscan(void *target)
{
	LsmParallelScan ps = (LsmParallelScan) target;

	SpinLockInit(&ps->mutex);
	ps->state = LSM_PSCAN_INIT;
	ConditionVariableInit(&ps->cv);
	ps->next = 0;
	ps->nsplits = 0;
	ps->off[0] = 0;
}

/* Called by the leader alone, before the participants rescan. */
void
lsmparallelrescan(IndexScanDesc scan)
{
	LsmParallelScan ps = (LsmParallelScan) LsmParallelScanTarget(scan->parallel_scan);

	SpinLockAcquire(&ps->mutex);
	ps->state = LSM_PSCAN_INIT;
	ps->next = 0;
	SpinLockRelease(&ps->mutex);
	ps->nsplits = 0;
	ps->off[0] = 0;
}

/* Is key strictly inside the range: above lo, not beyond the prefix hi? */
static bool
LsmPscanInside(const LsmRange *r, const uint8 *key, size_t klen)
{
	if (r->lo != NULL && LsmKeyCmp(key, klen, r->lo, r->lolen) <= 0)
		return false;
	if (LsmKeyBeyondHi(r, key, klen))
		return false;
	return true;
}

typedef struct LsmPscanKey
{
	const uint8 *key;
	size_t		len;
} LsmPscanKey;

static int
LsmPscanKeySort(const void *a, const void *b)
{
	const LsmPscanKey *x = a;
	const LsmPscanKey *y = b;

	return LsmKeyCmp(x->key, x->len, y->key, y->len);
}

typedef struct LsmPscanNode
{
	const uint8 *content;		/* run header or fence page */
	int			len;
	bool		is_header;
} LsmPscanNode;

/*
 * Entry j of a fence block (node): false past its last (*n and *level are
 * set then too); a malformed block is reported as corruption.
 */
static bool
LsmPscanFenceEntry(Relation index, const LsmRunRef *ref, const LsmPscanNode *node,
				   size_t j, size_t *n, uint32 *level, const uint8 **key, size_t *klen,
				   uint32 *child)
{
	LsmStatus	st = lsm_fence_entry(node->content, node->len, node->is_header, j, n,
									 level, key, klen, child);

	if (st == LSM_END)
		return false;
	LsmCheckStatus(index, st, ref->start, "reading a fence block");
	return true;
}

/*
 * Add about want separators of run ref inside range r to keys (copied into
 * the current memory context): those of the shallowest level of its fence
 * tree that has want of them inside the range, or of the deepest (whose
 * children are data pages).  Only nodes whose subtree meets the range are
 * read.
 */
static void
LsmPscanRunSeparators(Relation index, const LsmRunRef *ref, const LsmRange *r,
					  int want, LsmPscanKey **keys, int *nkeys, int *maxkeys)
{
	LsmRunCacheEntry *e = LsmRunCacheGet(index, ref);
	LsmPscanNode *nodes;
	int			nnodes = 1;
	uint32		want_level = 0; /* the level the nodes must have (0: any) */

	LsmRunCacheHeader(index, e);
	nodes = palloc(sizeof(LsmPscanNode));
	nodes[0].content = e->header;
	nodes[0].len = e->header_len;
	nodes[0].is_header = true;
	for (;;)
	{
		int			first = *nkeys; /* this level's keys are added after it */
		uint32		level = 0;
		LsmPscanNode *children = NULL;
		int			nchildren = 0;
		int			maxchildren = 0;
		const uint8 *key;
		size_t		klen;
		uint32		child;
		size_t		n;

		CHECK_FOR_INTERRUPTS();
		/* this level's separators inside the range */
		for (int i = 0; i < nnodes; i++)
		{
			for (size_t j = 0;
				 LsmPscanFenceEntry(index, ref, &nodes[i], j, &n, &level, &key, &klen, &child);
				 j++)
			{
				if (!LsmPscanInside(r, key, klen))
					continue;
				if (*nkeys == *maxkeys)
				{
					*maxkeys *= 2;
					*keys = repalloc(*keys, sizeof(LsmPscanKey) * *maxkeys);
				}
				(*keys)[*nkeys].key = memcpy(palloc(klen), key, klen);
				(*keys)[*nkeys].len = klen;
				(*nkeys)++;
			}
			/* each level one below the last: a cycle never ends otherwise */
			if (want_level != 0 && level != want_level)
				LsmReportCorruption(index, ref->start,
									"A fence page of run %u at level %u has a child at level %u.",
									ref->run_id, want_level + 1, level);
		}
		if (*nkeys - first >= want || level <= 1)
			return;
		*nkeys = first;			/* too few: go one level down */

		/*
		 * The children whose subtree meets the range.  Child j covers [sep
		 * j, sep j+1); the last child of a node is kept (its end is in the
		 * next node).
		 */
		for (int i = 0; i < nnodes; i++)
		{
			for (size_t j = 0;
				 LsmPscanFenceEntry(index, ref, &nodes[i], j, &n, &level, &key, &klen, &child);
				 j++)
			{
				const uint8 *next;
				size_t		nextlen;
				uint32		lvl;
				uint32		nextchild;

				/* entirely below the range, or beyond it */
				if (r->lo != NULL && j + 1 < n &&
					LsmPscanFenceEntry(index, ref, &nodes[i], j + 1, &n, &lvl, &next,
									   &nextlen, &nextchild) &&
					LsmKeyCmp(next, nextlen, r->lo, r->lolen) <= 0)
					continue;
				if (LsmKeyBeyondHi(r, key, klen))
					break;
				if (nchildren == maxchildren)
				{
					maxchildren = Max(16, maxchildren * 2);
					children = children == NULL
						? palloc(sizeof(LsmPscanNode) * maxchildren)
						: repalloc(children, sizeof(LsmPscanNode) * maxchildren);
				}
				children[nchildren].content = LsmRunCacheFence(index, e, child,
															   &children[nchildren].len);
				children[nchildren].is_header = false;
				nchildren++;
			}
		}
		if (nchildren == 0)
			return;
		nodes = children;
		nnodes = nchildren;
		want_level = level - 1;
	}
}

/* The j-th of take keys picked evenly from n sorted ones (all when take == n). */
static inline int
LsmPscanPick(int j, int take, int n)
{
	return take == n ? j : (int) (((int64) (j + 1) * n) / (take + 1));
}

/*
 * Work out the split keys of the scan's range (so->orange) into ps: from the
 * runs of the level holding most entries among the runs the range reaches.
 */
static void
LsmPscanComputeSplits(IndexScanDesc scan, LsmParallelScan ps)
{
	LsmScanOpaque so = (LsmScanOpaque) scan->opaque;
	Relation	index = scan->indexRelation;
	MemoryContext cxt = AllocSetContextCreate(CurrentMemoryContext, "lsm parallel scan split",
											  ALLOCSET_DEFAULT_SIZES);
	MemoryContext old = MemoryContextSwitchTo(cxt);
	LsmMetaPageData meta;
	LsmRunRef  *runs;
	LsmRunCursor *cursors;
	int			ncursors;
	LsmRunRef  *reach;
	int			nreach = 0;
	uint64		level_entries[LSM_PICK_MAX_LEVEL + 1] = {0};
	int			best = -1;
	LsmPscanKey *keys;
	int			nkeys = 0;
	int			maxkeys = 64;
	int			take;
	Size		used = 0;
	int			nused = 0;

	ps->nsplits = 0;
	ps->off[0] = 0;

	/*
	 * The runs the range reaches (the manifest read without the slot lock:
	 * the split keys are a partition of the key space whatever the runs
	 * are; the query's snapshot keeps retired runs' pages from reuse).
	 */
	LsmReadMeta(index, &meta, &runs);
	ncursors = LsmScanCursors(index, runs, meta.nruns, false, &so->orange, &cursors);
	reach = palloc(sizeof(LsmRunRef) * Max(meta.nruns, 1));
	for (int i = 0; i < ncursors; i++)
	{
		if (cursors[i].chain != NULL)
			for (int j = 0; j < cursors[i].nchain; j++)
				reach[nreach++] = cursors[i].chain[j];
		else
			reach[nreach++] = cursors[i].ref;
	}
	for (int i = 0; i < nreach; i++)
	{
		int			lv = Min(reach[i].level, LSM_PICK_MAX_LEVEL);

		level_entries[lv] += reach[i].nentries;
		if (best < 0 || level_entries[lv] > level_entries[best] ||
			(level_entries[lv] == level_entries[best] && lv > best))
			best = lv;
	}

	keys = palloc(sizeof(LsmPscanKey) * maxkeys);
	for (int i = 0; i < nreach && best >= 0; i++)
	{
		int			want;

		if (Min(reach[i].level, LSM_PICK_MAX_LEVEL) != best || level_entries[best] == 0)
			continue;
		nused++;
		want = (int) ((LSM_PSCAN_TARGET_CHUNKS * reach[i].nentries + level_entries[best] - 1) /
					  level_entries[best]);
		LsmPscanRunSeparators(index, &reach[i], &so->orange, Max(want, 1),
							  &keys, &nkeys, &maxkeys);
	}
	if (nkeys > 1)
		qsort(keys, nkeys, sizeof(LsmPscanKey), LsmPscanKeySort);

	/* distinct, then every k-th so that they fit */
	{
		int			m = 0;

		for (int i = 0; i < nkeys; i++)
			if (m == 0 || LsmKeyCmp(keys[m - 1].key, keys[m - 1].len,
										 keys[i].key, keys[i].len) != 0)
				keys[m++] = keys[i];
		nkeys = m;
	}
	take = Min(nkeys, LSM_PSCAN_MAX_SPLITS);
	for (;; take /= 2)
	{
		used = 0;
		for (int j = 0; j < take; j++)
			used += keys[LsmPscanPick(j, take, nkeys)].len;
		if (used <= LSM_PSCAN_SPLIT_BYTES)
			break;
	}
	for (int j = 0; j < take; j++)
	{
		const LsmPscanKey *k = &keys[LsmPscanPick(j, take, nkeys)];

		memcpy(ps->data + ps->off[j], k->key, k->len);
		ps->off[j + 1] = ps->off[j] + (uint32) k->len;
	}
	ps->nsplits = take;
	elog(DEBUG1, "lsm parallel scan of \"%s\": %d chunks, split keys from %d run%s of level %d",
		 RelationGetRelationName(index), take + 1, nused, nused == 1 ? "" : "s", Max(best, 0));
	MemoryContextSwitchTo(old);
	MemoryContextDelete(cxt);
}

/* The split keys are in place (computed here, or waited for). */
static LsmParallelScan
LsmPscanReady(IndexScanDesc scan)
{
	LsmParallelScan ps = (LsmParallelScan) LsmParallelScanTarget(scan->parallel_scan);
	bool		compute = false;
	bool		ready;

	SpinLockAcquire(&ps->mutex);
	ready = ps->state == LSM_PSCAN_READY;
	if (ps->state == LSM_PSCAN_INIT)
	{
		ps->state = LSM_PSCAN_SPLITTING;
		compute = true;
	}
	SpinLockRelease(&ps->mutex);
	if (ready)
		return ps;
	if (compute)
	{
		LsmScanOpaque so = (LsmScanOpaque) scan->opaque;

		/* (= ANY elements iterated: the chunks are their combinations) */
		ps->nsplits = 0;
		ps->off[0] = 0;
		if (so->niter == 0)
			LsmPscanComputeSplits(scan, ps);	/* an ERROR ends the query */
		SpinLockAcquire(&ps->mutex);
		ps->state = LSM_PSCAN_READY;
		SpinLockRelease(&ps->mutex);
		ConditionVariableBroadcast(&ps->cv);
		return ps;
	}
	ConditionVariablePrepareToSleep(&ps->cv);
	for (;;)
	{
		SpinLockAcquire(&ps->mutex);
		ready = ps->state == LSM_PSCAN_READY;
		SpinLockRelease(&ps->mutex);
		if (ready)
			break;
		ConditionVariableSleep(&ps->cv,
							   LsmWaitEventNamed("LsmParallelScanSplit", &lsm_wait_pscan));
	}
	ConditionVariableCancelSleep();
	return ps;
}

/* Chunks of a scan that iterates = ANY elements: their combinations. */
static uint64
LsmPscanCombinations(LsmScanOpaque so)
{
	uint64		n = 1;

	for (int j = 0; j < so->niter; j++)
	{
		uint64		e = (uint64) so->keys[so->iterkeys[j]].nelems;

		if (e != 0 && n > PG_INT64_MAX / e)
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("too many combinations of = ANY elements for a parallel scan of lsm index \"%s\"",
							RelationGetRelationName(so->index))));
		n *= e;
	}
	return n;
}

/*
 * Claim the next chunk of a parallel scan and start a snapshot over it;
 * false when every chunk is claimed.  The first call waits for the split
 * keys (or computes them).
 */
bool
LsmParallelScanNextChunk(IndexScanDesc scan, bool backward)
{
	LsmScanOpaque so = (LsmScanOpaque) scan->opaque;
	LsmParallelScan ps = LsmPscanReady(scan);
	uint64		nchunks = so->niter > 0 ? LsmPscanCombinations(so) : (uint64) ps->nsplits + 1;
	uint64		claim;
	uint64		c;

	SpinLockAcquire(&ps->mutex);
	claim = ps->next++;
	SpinLockRelease(&ps->mutex);

	if (claim >= nchunks)
		return false;
	c = backward ? nchunks - 1 - claim : claim;
	if (so->snapctx != NULL)
		LsmScanEndSnapshot(so);
	so->skiplast = false;
	so->pexcl = false;
	if (so->niter > 0)
	{
		/* combination c: the last column's element changing fastest */
		for (int j = so->niter - 1; j >= 0; j--)
		{
			int			n = so->keys[so->iterkeys[j]].nelems;

			so->curelems[j] = (int) (c % (uint64) n);
			c /= (uint64) n;
		}
		LsmScanSetRange(scan);
		so->orange = so->range;
		LsmScanStart(scan, backward);
		LsmCountIndexSearch(scan);
		return true;
	}
	if (so->pbound == NULL)
		so->pbound = MemoryContextAlloc(so->scanctx, 2 * LSM_MAX_KEY_SIZE);
	so->range = so->orange;
	if (c > 0)
	{
		uint32		len = ps->off[c] - ps->off[c - 1];

		memcpy(so->pbound, ps->data + ps->off[c - 1], len);
		so->range.lo = so->pbound;
		so->range.lolen = (int) len;
	}
	so->pexcl = c < nchunks - 1;
	if (so->pexcl)
	{
		uint32		len = ps->off[c + 1] - ps->off[c];
		uint8	   *hi = so->pbound + LSM_MAX_KEY_SIZE;

		memcpy(hi, ps->data + ps->off[c], len);
		so->range.hi = hi;
		so->range.hilen = (int) len;
	}
	LsmScanStart(scan, backward);
	/* one search per participant in the statistics, not one per chunk */
	if (so->pchunks++ == 0)
		LsmCountIndexSearch(scan);
	return true;
}
