/*
 * lsmscan.c — amgettuple / amgetbitmap.
 *
 * A scan turns its scan keys into one range of encoded keys (lo, hi) plus an
 * exact per-entry filter, then takes one consistent snapshot of the index at
 * its first fetch: under the slot lock it reads the manifest and copies the
 * memtable's entries in range (a flush needs that lock exclusively, so the
 * run list and the memtable copy always agree).  A merging iterator then
 * yields the union of the memtable copy and every run in key order, forward
 * or backward.  Runs are immutable until VACUUM removes dead entries from
 * their pages, and their pages are not reused while scans may read them.
 *
 * TID recycling interlock (nbtree/README): an index-only scan, or a scan with
 * a non-MVCC snapshot, keeps a pin on the metapage from its first fetch to its
 * end; VACUUM's ambulkdelete finishes by taking a cleanup lock on the
 * metapage, so no such scan that may still return a TID VACUUM removed
 * outlives the index pass.  Plain MVCC scans are safe without it: a reused
 * TID points at a tuple their snapshot cannot see.
 */
#include "postgres.h"

#include "access/nbtree.h"
#include "access/relscan.h"
#include "access/xlog.h"
#include "miscadmin.h"
#include "nodes/tidbitmap.h"
#include "pgstat.h"
#include "storage/bufmgr.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "lsm.h"

typedef enum LsmKeyKind
{
	LSM_SK_COMPARE,
	LSM_SK_ISNULL,
	LSM_SK_NOTNULL
} LsmKeyKind;

typedef struct LsmScanKeyInfo
{
	int			col;
	LsmKeyKind	kind;
	StrategyNumber strategy;
	uint8	   *seg;			/* encoded argument (flag + value) */
	int			seglen;
} LsmScanKeyInfo;

typedef struct LsmScanOpaqueData
{
	LsmKeyDesc	desc;
	MemoryContext scanctx;		/* keys, bounds, snapshot; reset on rescan */
	MemoryContext tupctx;		/* per returned tuple (index-only scans) */
	int			nkeys;
	LsmScanKeyInfo *keys;
	bool		empty;			/* keys can never match */
	LsmRange	range;
	bool		started;
	bool		backward;
	Buffer		metapin;
	LsmMerge   *merge;
	int			nmt;			/* memtables copied (active + immutable) */
	LsmBatch   *mtcopy[1 + LSM_MAX_IMM];	/* their entries in range */
	bool		mtfed[1 + LSM_MAX_IMM];
	int			nruns;
	LsmRunCursor *cursors;
	int64		nreturned;
	/* equality on leading columns: bloom filters apply */
	Relation	index;
	int			eq_cols;
	uint8	   *eq_prefix;
	int			eq_len[INDEX_MAX_KEYS];	/* prefix bytes of the first i+1 */
} LsmScanOpaqueData;

typedef LsmScanOpaqueData *LsmScanOpaque;

IndexScanDesc
lsmbeginscan(Relation r, int nkeys, int norderbys)
{
	IndexScanDesc scan;
	LsmScanOpaque so;

	LsmCheckPreloaded();
	scan = RelationGetIndexScan(r, nkeys, norderbys);
	so = palloc0(sizeof(LsmScanOpaqueData));
	memcpy(&so->desc, &LsmGetRelCache(r)->desc, sizeof(LsmKeyDesc));
	so->scanctx = AllocSetContextCreate(CurrentMemoryContext, "lsm scan",
										ALLOCSET_DEFAULT_SIZES);
	so->tupctx = AllocSetContextCreate(CurrentMemoryContext, "lsm scan tuple",
									   ALLOCSET_SMALL_SIZES);
	so->metapin = InvalidBuffer;
	so->index = r;
	scan->opaque = so;
	scan->xs_itupdesc = RelationGetDescr(r);
	return scan;
}

/*
 * Reset callback of scanctx: frees the core's objects, also when the scan is
 * abandoned by an error (the executor's memory goes, endscan is not called).
 */
static void
LsmScanFreeCore(void *arg)
{
	LsmScanOpaque so = (LsmScanOpaque) arg;

	lsm_merge_destroy(so->merge);
	so->merge = NULL;
	for (int i = 0; i < 1 + LSM_MAX_IMM; i++)
	{
		lsm_batch_destroy(so->mtcopy[i]);
		so->mtcopy[i] = NULL;
	}
	so->nmt = 0;
}

/* Add the lookup counters of the finished scan to the index's slot. */
static void
LsmScanTally(LsmScanOpaque so)
{
	LsmRelCache *cache;
	LsmSlot    *slot;
	uint64		probes = 0,
				negatives = 0,
				falsepos = 0,
				pages = 0;

	if (!so->started || so->cursors == NULL || lsm_shared == NULL)
		return;
	cache = (LsmRelCache *) so->index->rd_amcache;
	if (cache == NULL || cache->slot < 0)
		return;
	slot = &lsm_shared->slots[cache->slot];
	if (slot->generation != cache->generation)
		return;
	for (int i = 0; i < so->nruns; i++)
	{
		LsmRunCursor *c = &so->cursors[i];

		pages += c->data_pages;
		if (c->probed)
		{
			probes++;
			if (c->filtered)
				negatives++;
			else if (!c->matched)
				falsepos++;
		}
	}
	if (so->eq_cols > 0)
		pg_atomic_fetch_add_u64(&slot->lookups, 1);
	pg_atomic_fetch_add_u64(&slot->filter_probes, probes);
	pg_atomic_fetch_add_u64(&slot->filter_negatives, negatives);
	pg_atomic_fetch_add_u64(&slot->filter_false_positives, falsepos);
	pg_atomic_fetch_add_u64(&slot->data_pages_read, pages);
}

/* Drop the snapshot and iterator of the previous scan. */
static void
LsmScanReset(LsmScanOpaque so)
{
	LsmScanTally(so);
	so->eq_cols = 0;
	so->eq_prefix = NULL;
	if (BufferIsValid(so->metapin))
		ReleaseBuffer(so->metapin);
	so->metapin = InvalidBuffer;
	so->started = false;
	memset(so->mtfed, 0, sizeof(so->mtfed));
	so->nruns = 0;
	so->cursors = NULL;
	so->empty = false;
	so->nkeys = 0;
	so->keys = NULL;
	so->range.lo = so->range.hi = NULL;
	so->range.lolen = so->range.hilen = 0;
	MemoryContextReset(so->scanctx);
}

static bool
LsmIsLowerStrategy(StrategyNumber s)
{
	return s == BTGreaterStrategyNumber || s == BTGreaterEqualStrategyNumber;
}

/* Translate scan keys into encoded segments and the scan's key range. */
static void
LsmScanPrepare(IndexScanDesc scan)
{
	LsmScanOpaque so = (LsmScanOpaque) scan->opaque;
	MemoryContext old = MemoryContextSwitchTo(so->scanctx);
	StringInfoData prefix;
	bool		have_lo = false,
				have_hi = false;
	const uint8 *loseg = NULL,
			   *hiseg = NULL;
	int			lolen = 0,
				hilen = 0;

	so->keys = palloc0(sizeof(LsmScanKeyInfo) * Max(scan->numberOfKeys, 1));
	so->nkeys = 0;
	for (int i = 0; i < scan->numberOfKeys; i++)
	{
		ScanKey		sk = &scan->keyData[i];
		LsmScanKeyInfo *k = &so->keys[so->nkeys];
		StringInfoData seg;

		k->col = sk->sk_attno - 1;
		if (sk->sk_flags & SK_ISNULL)
		{
			if (sk->sk_flags & SK_SEARCHNULL)
				k->kind = LSM_SK_ISNULL;
			else if (sk->sk_flags & SK_SEARCHNOTNULL)
				k->kind = LSM_SK_NOTNULL;
			else
			{
				so->empty = true;	/* "col op NULL" is never true */
				continue;
			}
			initStringInfo(&seg);
			if (k->kind == LSM_SK_ISNULL)
				LsmEncodeColumnValue(&so->desc, k->col, (Datum) 0, InvalidOid, true, &seg);
			else
				appendStringInfoChar(&seg, LSM_FLAG_NOT_NULL);
		}
		else
		{
			Oid			argtype = OidIsValid(sk->sk_subtype) ? sk->sk_subtype :
				so->desc.cols[k->col].typid;

			k->kind = LSM_SK_COMPARE;
			k->strategy = sk->sk_strategy;
			if (k->strategy < 1 || k->strategy > BTMaxStrategyNumber)
				elog(ERROR, "lsm_am: unexpected strategy number %d", k->strategy);
			initStringInfo(&seg);
			LsmEncodeColumnValue(&so->desc, k->col, sk->sk_argument, argtype, false, &seg);
		}
		k->seg = (uint8 *) seg.data;
		k->seglen = seg.len;
		so->nkeys++;
	}

	/* range: equality prefix, then the bounds of the first other column */
	initStringInfo(&prefix);
	for (int col = 0; col < so->desc.ncols; col++)
	{
		LsmScanKeyInfo *eq = NULL;

		for (int i = 0; i < so->nkeys && !eq; i++)
			if (so->keys[i].col == col &&
				(so->keys[i].kind == LSM_SK_ISNULL ||
				 (so->keys[i].kind == LSM_SK_COMPARE &&
				  so->keys[i].strategy == BTEqualStrategyNumber)))
				eq = &so->keys[i];
		if (eq)
		{
			appendBinaryStringInfo(&prefix, (char *) eq->seg, eq->seglen);
			so->eq_len[col] = prefix.len;
			so->eq_cols = col + 1;
			continue;
		}
		for (int i = 0; i < so->nkeys; i++)
		{
			LsmScanKeyInfo *k = &so->keys[i];
			bool		lower_in_index;

			if (k->col != col)
				continue;
			if (k->kind == LSM_SK_NOTNULL)
			{
				/* [0x01 ...] : every non-null value of the column */
				if (!loseg || LsmCompareSegments(k->seg, k->seglen, loseg, lolen) > 0)
					loseg = k->seg, lolen = k->seglen;
				if (!hiseg || LsmCompareSegments(k->seg, k->seglen, hiseg, hilen) < 0)
					hiseg = k->seg, hilen = k->seglen;
				continue;
			}
			lower_in_index = LsmIsLowerStrategy(k->strategy) != so->desc.cols[col].desc;
			if (lower_in_index)
			{
				if (!loseg || LsmCompareSegments(k->seg, k->seglen, loseg, lolen) > 0)
					loseg = k->seg, lolen = k->seglen;
			}
			else
			{
				if (!hiseg || LsmCompareSegments(k->seg, k->seglen, hiseg, hilen) < 0)
					hiseg = k->seg, hilen = k->seglen;
			}
		}
		break;
	}
	so->eq_prefix = (uint8 *) prefix.data;
	have_lo = prefix.len > 0 || loseg != NULL;
	have_hi = prefix.len > 0 || hiseg != NULL;
	if (have_lo)
	{
		StringInfoData lo;

		initStringInfo(&lo);
		appendBinaryStringInfo(&lo, prefix.data, prefix.len);
		if (loseg)
			appendBinaryStringInfo(&lo, (char *) loseg, lolen);
		so->range.lo = (uint8 *) lo.data;
		so->range.lolen = lo.len;
	}
	if (have_hi)
	{
		StringInfoData hi;

		initStringInfo(&hi);
		appendBinaryStringInfo(&hi, prefix.data, prefix.len);
		if (hiseg)
			appendBinaryStringInfo(&hi, (char *) hiseg, hilen);
		so->range.hi = (uint8 *) hi.data;
		so->range.hilen = hi.len;
	}
	MemoryContextSwitchTo(old);
}

void
lsmrescan(IndexScanDesc scan, ScanKey scankey, int nscankeys,
		  ScanKey orderbys, int norderbys)
{
	LsmScanOpaque so = (LsmScanOpaque) scan->opaque;

	/* this backend's own entries of the index must be in it first */
	LsmPushPending(scan->indexRelation);
	LsmScanReset(so);
	if (scankey && scan->numberOfKeys > 0)
		memmove(scan->keyData, scankey, scan->numberOfKeys * sizeof(ScanKeyData));
	LsmScanPrepare(scan);
}

/* Take the snapshot and set up the merging iterator. */
static void
LsmScanStart(IndexScanDesc scan, bool backward)
{
	LsmScanOpaque so = (LsmScanOpaque) scan->opaque;
	Relation	index = scan->indexRelation;
	MemoryContext old = MemoryContextSwitchTo(so->scanctx);
	LsmSlot    *slot;
	LsmMetaPageData meta;
	LsmRunRef  *runs;
	LsmStatus	st;

	MemoryContextCallback *cb;

	so->started = true;
	so->backward = backward;
	/* the TID recycling interlock is needed only where btree needs its pin */
	if (scan->xs_want_itup || !IsMVCCSnapshot(scan->xs_snapshot))
		so->metapin = ReadBuffer(index, LSM_METAPAGE_BLKNO);
	cb = palloc(sizeof(MemoryContextCallback));
	cb->func = LsmScanFreeCore;
	cb->arg = so;
	MemoryContextRegisterResetCallback(so->scanctx, cb);

	for (int i = 0; i < 1 + LSM_MAX_IMM; i++)
		LsmCheckStatus(index, lsm_batch_create(&so->mtcopy[i]), "starting a scan");
	slot = LsmSlotAcquire(index, LW_SHARED);
	st = LSM_OK;
	PG_TRY();
	{
		LsmReadMeta(index, &meta, &runs);
		so->nmt = 1 + slot->nimm;
		for (int i = 0; i < so->nmt && st == LSM_OK; i++)
			st = lsm_memtable_copy_range(lsm_shared->arena,
										 i == 0 ? &slot->mt : &slot->imm[i - 1].mt,
										 so->range.lo, so->range.lolen,
										 so->range.hi, so->range.hilen, so->mtcopy[i]);
	}
	PG_CATCH();
	{
		LsmSlotRelease(index, slot);
		PG_RE_THROW();
	}
	PG_END_TRY();
	LsmSlotRelease(index, slot);
	LsmCheckStatus(index, st, "copying the memtable");

	so->nruns = meta.nruns;
	so->cursors = palloc(sizeof(LsmRunCursor) * Max(meta.nruns, 1));
	/* newest runs first: ties are impossible (keys are unique) */
	for (int i = 0; i < (int) meta.nruns; i++)
	{
		LsmRunCursor *c = &so->cursors[i];

		LsmRunCursorInit(c, &runs[meta.nruns - 1 - i]);
		/* a point lookup on the filter's columns probes it first */
		if (c->ref.bloom_nblocks > 0 && c->ref.bloom_cols > 0 &&
			c->ref.bloom_cols <= so->eq_cols && !so->empty)
		{
			c->bloom_check = true;
			c->bloom_hash = lsm_hash64(so->eq_prefix, so->eq_len[c->ref.bloom_cols - 1],
									   LSM_BLOOM_SEED);
		}
	}

	LsmCheckStatus(index,
				   lsm_merge_create(so->nmt + so->nruns, backward ? 1 : 0,
									so->range.lo, so->range.lolen,
									so->range.hi, so->range.hilen, &so->merge),
				   "starting a scan");
	MemoryContextSwitchTo(old);
}

/* Does the entry satisfy every scan key?  Also returns its TID. */
static bool
LsmEntryMatches(IndexScanDesc scan, const uint8 *key, int len, ItemPointer tid)
{
	LsmScanOpaque so = (LsmScanOpaque) scan->opaque;
	const uint8 *seg[INDEX_MAX_KEYS];
	int			seglen[INDEX_MAX_KEYS];

	if (!LsmSplitEntry(&so->desc, key, len, seg, seglen, tid))
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("index \"%s\" contains a malformed entry",
						RelationGetRelationName(scan->indexRelation)),
				 errhint("REINDEX the index.")));

	for (int i = 0; i < so->nkeys; i++)
	{
		LsmScanKeyInfo *k = &so->keys[i];
		const uint8 *s = seg[k->col];
		int			c;

		switch (k->kind)
		{
			case LSM_SK_ISNULL:
				if (s[0] == LSM_FLAG_NOT_NULL)
					return false;
				continue;
			case LSM_SK_NOTNULL:
				if (s[0] != LSM_FLAG_NOT_NULL)
					return false;
				continue;
			case LSM_SK_COMPARE:
				break;
		}
		if (s[0] != LSM_FLAG_NOT_NULL)
			return false;
		c = LsmCompareSegments(s, seglen[k->col], k->seg, k->seglen);
		if (so->desc.cols[k->col].desc)
			c = -c;
		switch (k->strategy)
		{
			case BTLessStrategyNumber:
				if (!(c < 0))
					return false;
				break;
			case BTLessEqualStrategyNumber:
				if (!(c <= 0))
					return false;
				break;
			case BTEqualStrategyNumber:
				if (c != 0)
					return false;
				break;
			case BTGreaterEqualStrategyNumber:
				if (!(c >= 0))
					return false;
				break;
			case BTGreaterStrategyNumber:
				if (!(c > 0))
					return false;
				break;
		}
	}
	return true;
}

/* Next matching entry of the merge; false at the end. */
static bool
LsmScanNext(IndexScanDesc scan, ItemPointer tid, const uint8 **keyp, size_t *lenp)
{
	LsmScanOpaque so = (LsmScanOpaque) scan->opaque;
	Relation	index = scan->indexRelation;

	for (;;)
	{
		const uint8 *key;
		size_t		len;
		int			need;
		LsmStatus	st;

		CHECK_FOR_INTERRUPTS();
		st = lsm_merge_next(so->merge, &key, &len, &need);
		if (st == LSM_END)
			return false;
		if (st == LSM_NEED_PAGE)
		{
			if (need < so->nmt)
			{
				LsmBatch   *b = lsm_merge_source_batch(so->merge, need);

				if (so->mtfed[need])
				{
					lsm_merge_source_done(so->merge, need);
					continue;
				}
				lsm_batch_clear(b);
				for (size_t i = 0; i < lsm_batch_count(so->mtcopy[need]); i++)
				{
					const uint8 *k;
					size_t		l;

					lsm_batch_get(so->mtcopy[need], i, &k, &l);
					LsmCheckStatus(index, lsm_batch_add_key(b, k, l), "scanning the memtable");
				}
				so->mtfed[need] = true;
				lsm_merge_source_ready(so->merge, need);
			}
			else
				LsmFeedRun(index, so->merge, need, &so->cursors[need - so->nmt],
						   so->backward, &so->range);
			continue;
		}
		LsmCheckStatus(index, st, "scanning");
		if (LsmEntryMatches(scan, key, (int) len, tid))
		{
			if (keyp)
			{
				*keyp = key;
				*lenp = len;
			}
			return true;
		}
	}
}

bool
lsmgettuple(IndexScanDesc scan, ScanDirection dir)
{
	LsmScanOpaque so = (LsmScanOpaque) scan->opaque;
	bool		backward = ScanDirectionIsBackward(dir);
	const uint8 *key;
	size_t		len;

	if (so->empty)
		return false;
	if (!so->started)
	{
		LsmScanStart(scan, backward);
		LsmCountIndexSearch(scan);
	}
	else if (backward != so->backward)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("lsm indexes cannot change scan direction in the middle of a scan")));

	if (!LsmScanNext(scan, &scan->xs_heaptid, &key, &len))
		return false;
	scan->xs_recheck = false;
	if (scan->xs_want_itup)
	{
		Datum		values[INDEX_MAX_KEYS];
		bool		isnull[INDEX_MAX_KEYS];
		MemoryContext old;

		MemoryContextReset(so->tupctx);
		old = MemoryContextSwitchTo(so->tupctx);
		LsmDecodeEntry(&so->desc, key, (int) len, values, isnull);
		scan->xs_itup = index_form_tuple(RelationGetDescr(scan->indexRelation),
										 values, isnull);
		MemoryContextSwitchTo(old);
	}
	so->nreturned++;
	return true;
}

int64
lsmgetbitmap(IndexScanDesc scan, TIDBitmap *tbm)
{
	LsmScanOpaque so = (LsmScanOpaque) scan->opaque;
	ItemPointerData tid;
	int64		ntids = 0;

	if (so->empty)
		return 0;
	if (!so->started)
	{
		LsmScanStart(scan, false);
		LsmCountIndexSearch(scan);
	}
	while (LsmScanNext(scan, &tid, NULL, NULL))
	{
		tbm_add_tuples(tbm, &tid, 1, false);
		ntids++;
	}
	return ntids;
}

void
lsmendscan(IndexScanDesc scan)
{
	LsmScanOpaque so = (LsmScanOpaque) scan->opaque;

	LsmScanReset(so);
	MemoryContextDelete(so->scanctx);
	MemoryContextDelete(so->tupctx);
	pfree(so);
	scan->opaque = NULL;
}

/* Index-only scans: columns whose encoding can be decoded. */
bool
lsmcanreturn(Relation index, int attno)
{
	LsmKeyDesc	desc;

	/*
	 * Not on a hot standby: redo of VACUUM's page rewrites takes no cleanup
	 * lock, so the metapage-pin interlock that protects index-only scans
	 * against TID recycling does not hold there (btree's redo takes one).
	 */
	if (RecoveryInProgress())
		return false;

	LsmKeyDescInit(index, &desc);
	return desc.cols[attno - 1].invertible;
}
