/*
 * lsmscan.c — amgettuple / amgetbitmap: the scan callbacks.  Owns the scan's
 * state (LsmScanOpaqueData, lsmscan_int.h) from beginscan to endscan, the
 * entry returned last (a scan that turns resumes there) and the index tuple
 * of an index-only scan.  Scan keys are prepared in lsmscankeys.c; the
 * snapshot and the merge that yields entries in key order, and the design
 * of streaming scans, are in lsmscanmerge.c.
 */
#include "postgres.h"

#include "access/xlog.h"
#include "nodes/tidbitmap.h"
#include "storage/bufmgr.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "am/lsmscan_int.h"

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
	so->metapin = InvalidBuffer;
	so->index = r;
	LsmTupleFormerInit(&so->former, r, &so->desc);
	scan->opaque = so;
	scan->xs_itupdesc = RelationGetDescr(r);
	return scan;
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
	so->ended = false;
	so->havelast = false;
	so->skiplast = false;
	so->lastkey = NULL;
	so->snapctx = NULL;
	so->nruns = 0;
	so->cursors = NULL;
	so->empty = false;
	so->niter = 0;
	so->rangectx = NULL;		/* deleted with scanctx's reset */
	so->nkeys = 0;
	so->keys = NULL;
	so->range.lo = so->range.hi = NULL;
	so->range.lolen = so->range.hilen = 0;
	so->exlo = so->exhi = NULL;
	so->exlolen = so->exhilen = 0;
	so->pexcl = false;
	so->pbound = NULL;			/* in scanctx */
	so->pchunks = 0;
	so->nreturned = 0;
	so->skip_oldest = 0;
	so->runs_skipped = false;
	MemoryContextReset(so->scanctx);
}

void
lsmrescan(IndexScanDesc scan, ScanKey scankey, int nscankeys,
		  ScanKey orderbys, int norderbys)
{
	LsmScanOpaque so = (LsmScanOpaque) scan->opaque;

	/* this backend's own entries of the index must be in it first */
	LsmPushPending(scan->indexRelation);
	LsmScanReset(so);
	/* set by index_beginscan_parallel after ambeginscan */
	so->parallel = scan->parallel_scan != NULL;
	if (scankey && scan->numberOfKeys > 0)
		memmove(scan->keyData, scankey, scan->numberOfKeys * sizeof(ScanKeyData));
	LsmScanPrepare(scan);
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
	/* (xs_want_itup is set after ambeginscan, before the first fetch) */
	so->shape_by_former = scan->xs_want_itup && so->former.ifast;
	if (!so->started && so->parallel)
	{
		/* a parallel scan: its first chunk (or none left) */
		so->orange = so->range;
		if (!LsmParallelScanNextChunk(scan, backward))
		{
			so->started = so->ended = true;
			so->backward = backward;
			return false;
		}
	}
	else if (!so->started)
	{
		/* = ANY(array) iterated: backward from its last element */
		if (so->niter > 0 && backward)
		{
			for (int j = 0; j < so->niter; j++)
				so->curelems[j] = so->keys[so->iterkeys[j]].nelems - 1;
			LsmScanSetRange(scan);
		}
		so->orange = so->range;
		LsmScanStart(scan, backward);
		LsmCountIndexSearch(scan);
	}
	else if (backward != so->backward || so->ended)
	{
		if (so->ended && backward == so->backward)
			return false;
		if (so->parallel)
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("a parallel scan of lsm index \"%s\" cannot change direction",
							RelationGetRelationName(scan->indexRelation))));
		LsmScanTurn(scan, backward);
	}

	for (;;)
	{
		if (!LsmScanNext(scan, &scan->xs_heaptid, &key, &len))
		{
			/* (a parallel scan's chunk is one combination of elements) */
			if (so->parallel ? LsmParallelScanNextChunk(scan, backward)
				: LsmScanNextElement(scan, backward))
				continue;
			so->ended = true;
			/* ON CONFLICT's pre-check found no entry: aminsert's check may
			 * use that (lsmunique.c) */
			if (so->nreturned == 0 && !so->parallel)
				LsmUniqueNoteAbsent(scan);
			return false;
		}
		/* the next chunk's first entry (a parallel scan's) */
		if (so->pexcl && (int) len == so->range.hilen &&
			memcmp(key, so->range.hi, len) == 0)
			continue;
		if (so->skiplast)
		{
			so->skiplast = false;
			if ((int) len == so->lastlen && memcmp(key, so->lastkey, len) == 0)
				continue;
		}
		break;
	}
	/* valid until the next fetch; LsmScanTurn copies it */
	so->lastptr = key;
	so->lastlen = (int) len;
	so->havelast = true;
	scan->xs_recheck = false;
	if (scan->xs_want_itup)
	{
		/* fixed-width columns, no NULLs: decoded into one reused tuple */
		scan->xs_itup = LsmFormTupleFast(&so->former, &so->desc, key, (int) len);
		/* INCLUDE values after such keys: copied into one reused tuple */
		if (scan->xs_itup == NULL && so->former.ifast)
			scan->xs_itup = LsmFormTupleInclude(&so->former, &so->desc, key, (int) len);
		/* the shape LsmScanNext left to LsmFormTupleInclude */
		if (scan->xs_itup == NULL && so->shape_by_former &&
			!LsmEntryWellFormed(&so->former, &so->desc, key, (int) len))
			LsmScanReportMalformed(scan, key, (int) len);
		if (scan->xs_itup == NULL)
		{

			Datum		values[INDEX_MAX_KEYS];
			bool		isnull[INDEX_MAX_KEYS];
			MemoryContext old;

			if (so->tupctx == NULL)
				so->tupctx = AllocSetContextCreate(GetMemoryChunkContext(so),
												   "lsm scan tuple",
												   ALLOCSET_SMALL_SIZES);
			MemoryContextReset(so->tupctx);
			old = MemoryContextSwitchTo(so->tupctx);
			LsmDecodeEntry(&so->desc, key, (int) len, values, isnull);
			scan->xs_itup = LsmFormTupleGeneral(&so->former,
												RelationGetDescr(scan->indexRelation),
												values, isnull);
			MemoryContextSwitchTo(old);
		}
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
	so->shape_by_former = false;
	if (!so->started)
	{
		LsmScanStart(scan, false);
		LsmCountIndexSearch(scan);
	}
	do
	{
		while (LsmScanNext(scan, &tid, NULL, NULL))
		{
			tbm_add_tuples(tbm, &tid, 1, false);
			ntids++;
		}
	} while (LsmScanNextElement(scan, false));
	return ntids;
}

/*
 * A scan iterating the elements of = ANY(array) whose current combination's
 * range is exhausted: move to the next combination in the scan's direction,
 * with a fresh snapshot over its range (the index only gains entries a snapshot
 * may see, as when a scan turns).  False when there is none.
 */
bool
LsmScanNextElement(IndexScanDesc scan, bool backward)
{
	LsmScanOpaque so = (LsmScanOpaque) scan->opaque;
	int			j;

	if (so->niter == 0)
		return false;
	/* an odometer: the last column's element first, carrying leftwards */
	for (j = so->niter - 1; j >= 0; j--)
	{
		int			n = so->keys[so->iterkeys[j]].nelems;
		int			next = so->curelems[j] + (backward ? -1 : 1);

		if (next >= 0 && next < n)
		{
			so->curelems[j] = next;
			break;
		}
		so->curelems[j] = backward ? n - 1 : 0;
	}
	if (j < 0)
	{
		/* every combination done: leave the last one current */
		for (j = 0; j < so->niter; j++)
			so->curelems[j] = backward ? 0 : so->keys[so->iterkeys[j]].nelems - 1;
		return false;
	}
	LsmScanEndSnapshot(so);
	so->skiplast = false;
	LsmScanSetRange(scan);
	so->orange = so->range;
	LsmScanStart(scan, backward);
	LsmCountIndexSearch(scan);
	return true;
}

void
lsmendscan(IndexScanDesc scan)
{
	LsmScanOpaque so = (LsmScanOpaque) scan->opaque;

	LsmScanReset(so);
	MemoryContextDelete(so->scanctx);
	if (so->tupctx)
		MemoryContextDelete(so->tupctx);
	if (so->former.tup)
		pfree(so->former.tup);
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
	if (attno > desc.ncols)
		return true;			/* an INCLUDE column: its value is stored */
	return desc.cols[attno - 1].invertible;
}
