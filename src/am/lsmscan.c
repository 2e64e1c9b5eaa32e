/*
 * lsmscan.c — amgettuple / amgetbitmap.
 *
 * A scan turns its scan keys into one range of encoded keys (lo, hi) plus an
 * exact per-entry filter, then takes one consistent snapshot of the index at
 * its first fetch: under the slot lock it reads the manifest, names each
 * memtable (active and immutable) by its id and copies the first chunk of
 * each one's entries in range (a flush needs that lock exclusively, so the
 * run list and the memtables always agree).  A merging iterator then yields
 * the union of the memtables and every run in key order, forward or
 * backward, pulling a chunk or a data page from a source only when it needs
 * its next key: ORDER BY ... LIMIT n costs about n entries and a seek per
 * source, however large the memtable.
 *
 * Streaming a memtable: when the first chunk did not exhaust a memtable's
 * range, the scan pins the memtable (LsmScanPin, under the slot lock held
 * exclusively) and later fetches the next chunk under a shared lock, resuming
 * just past the last key it got (before it, backward).  Entries are never
 * removed from a memtable, so resuming by key misses nothing that existed
 * when the scan started; a switch turns the memtable immutable and a flush
 * that finds it pinned keeps it in the slot's held[] list (the run the flush
 * wrote is not in this scan's run list, so nothing is seen twice).  If the
 * slot cannot pin more memtables, the scan copies the memtable's whole range
 * at its start instead, as it always did.
 *
 * Runs are immutable until VACUUM removes dead entries from their pages, and
 * their pages are not reused while scans may read them.
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

#include "am/lsm_am.h"

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

/* Chunks of a streaming memtable scan: small first (LIMIT), then growing. */
#define LSM_SCAN_FIRST_CHUNK	32
#define LSM_SCAN_MAX_CHUNK		4096

/* One memtable source of a scan. */
typedef struct LsmScanMemtable
{
	uint64		id;				/* the memtable's identity in the slot */
	LsmBatch   *first;			/* its first chunk, taken with the snapshot */
	bool		fed;			/* first chunk handed to the merge */
	bool		more;			/* entries in range may follow the last chunk */
	bool		pinned;			/* LsmScanPin'ned: unpin at the end */
	uint32		chunk;			/* size of the next chunk */
	uint8	   *resume;			/* last key handed out (first one, backward) */
	int			resumelen;
} LsmScanMemtable;

typedef struct LsmScanOpaqueData
{
	LsmKeyDesc	desc;
	MemoryContext scanctx;		/* keys, bounds, snapshot; reset on rescan */
	MemoryContext tupctx;		/* per returned tuple (index-only scans) */
	int			nkeys;
	LsmScanKeyInfo *keys;
	bool		empty;			/* keys can never match */
	LsmRange	range;			/* of this snapshot (narrowed after a turn) */
	LsmRange	orange;			/* of the scan keys */
	bool		started;
	bool		backward;
	bool		ended;			/* the last fetch ran off the end */
	MemoryContext snapctx;		/* the snapshot: merge, cursors, memtables */
	uint8	   *lastkey;		/* the entry returned last (a turn resumes there) */
	int			lastlen;
	bool		havelast;
	bool		skiplast;		/* after a turn: do not return lastkey again */
	bool		counted;		/* counted in lsm_manifest_readers (LsmScanStart) */
	Buffer		metapin;
	LsmMerge   *merge;
	int			nmt;			/* memtable sources (active + immutable) */
	LsmScanMemtable mts[1 + LSM_MAX_IMM];
	int			slotno;			/* slot and generation the pins are in */
	uint32		generation;
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

	if (so->counted)
	{
		lsm_manifest_readers--;
		so->counted = false;
	}
	lsm_merge_destroy(so->merge);
	so->merge = NULL;
	for (int i = 0; i < 1 + LSM_MAX_IMM; i++)
	{
		LsmScanMemtable *m = &so->mts[i];

		if (m->pinned)
			LsmScanUnpin(so->slotno, so->generation, m->id);
		lsm_batch_destroy(m->first);
		memset(m, 0, sizeof(*m));
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
		probes += c->acc_probes;	/* earlier runs of a chain */
		negatives += c->acc_negatives;
		falsepos += c->acc_falsepos;
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
	so->ended = false;
	so->havelast = false;
	so->skiplast = false;
	so->lastkey = NULL;
	so->snapctx = NULL;
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

/*
 * Take the snapshot and set up the merging iterator over so->range.  Also
 * used again when a scan turns around (LsmScanTurn), with a fresh snapshot:
 * the index only ever gains entries a snapshot may see, so the new one
 * yields every entry the old one would have.
 */
static void
LsmScanStart(IndexScanDesc scan, bool backward)
{
	LsmScanOpaque so = (LsmScanOpaque) scan->opaque;
	Relation	index = scan->indexRelation;
	MemoryContext old;
	LsmSlot    *slot;
	LsmMetaPageData meta;
	LsmRunRef  *runs;
	LsmStatus	st;
	LWLockMode	mode;

	MemoryContextCallback *cb;

	so->started = true;
	so->backward = backward;
	so->ended = false;
	if (so->lastkey == NULL)
		so->lastkey = MemoryContextAlloc(so->scanctx, LSM_MAX_KEY_SIZE);
	so->snapctx = AllocSetContextCreate(so->scanctx, "lsm scan snapshot",
										ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(so->snapctx);
	/* the TID recycling interlock is needed only where btree needs its pin */
	if (!BufferIsValid(so->metapin) &&
		(scan->xs_want_itup || !IsMVCCSnapshot(scan->xs_snapshot)))
		so->metapin = ReadBuffer(index, LSM_METAPAGE_BLKNO);
	cb = palloc(sizeof(MemoryContextCallback));
	cb->func = LsmScanFreeCore;
	cb->arg = so;
	MemoryContextRegisterResetCallback(so->snapctx, cb);
	so->counted = true;
	lsm_manifest_readers++;

	for (int i = 0; i < 1 + LSM_MAX_IMM; i++)
	{
		LsmCheckStatus(index, lsm_batch_create(&so->mts[i].first), InvalidBlockNumber,
					   "starting a scan");
		so->mts[i].resume = palloc(LSM_MAX_KEY_SIZE);
	}

	/*
	 * The snapshot: the manifest and the first chunk of every memtable, under
	 * a shared slot lock.  If a memtable has more entries in range than its
	 * first chunk, take it again under an exclusive lock, which pinning
	 * needs (a point lookup or a short range never pins).
	 */
	mode = LW_SHARED;
	for (;;)
	{
		bool		need_pins = false;

		slot = LsmSlotAcquire(index, mode);
		st = LSM_OK;
		PG_TRY();
		{
			LsmReadMeta(index, &meta, &runs);
			so->nmt = 1 + slot->nimm;
			for (int i = 0; i < so->nmt && st == LSM_OK; i++)
			{
				LsmScanMemtable *m = &so->mts[i];
				const LsmMemtable *mt = i == 0 ? &slot->mt : &slot->imm[i - 1].mt;
				int			more = 0;

				m->id = i == 0 ? slot->mt_id : slot->imm[i - 1].id;
				m->chunk = LSM_SCAN_FIRST_CHUNK;
				lsm_batch_clear(m->first);
				st = lsm_memtable_copy_chunk(lsm_shared->arena, mt, backward,
											 so->range.lo, so->range.lolen,
											 so->range.hi, so->range.hilen,
											 NULL, 0, m->chunk, m->first, &more);
				m->more = more != 0;
				need_pins |= m->more;
				/* pin it, or (no room to pin) take its whole range now */
				if (st == LSM_OK && m->more && mode == LW_EXCLUSIVE)
				{
					m->pinned = LsmScanPin(slot, m->id);
					if (!m->pinned)
					{
						lsm_batch_clear(m->first);
						st = lsm_memtable_copy_range(lsm_shared->arena, mt,
													 so->range.lo, so->range.lolen,
													 so->range.hi, so->range.hilen,
													 m->first);
						m->more = false;
					}
				}
			}
		}
		PG_CATCH();
		{
			LsmSlotRelease(index, slot);
			PG_RE_THROW();
		}
		PG_END_TRY();
		so->slotno = LsmGetRelCache(index)->slot;
		so->generation = LsmGetRelCache(index)->generation;
		LsmSlotRelease(index, slot);
		LsmCheckStatus(index, st, InvalidBlockNumber, "copying the memtable");
		if (!need_pins || mode == LW_EXCLUSIVE)
			break;
		mode = LW_EXCLUSIVE;
	}

	/*
	 * One cursor per run, newest first (ties are impossible: keys are
	 * unique), but one per level held in disjoint pieces (lsmchain.c)
	 */
	so->nruns = LsmScanCursors(index, runs, meta.nruns, backward, &so->cursors);
	for (int i = 0; i < so->nruns; i++)
	{
		LsmRunCursor *c = &so->cursors[i];

		/* a point lookup on the filter's columns probes it first */
		if (c->ref.bloom_nblocks > 0 && c->ref.bloom_cols > 0 &&
			c->ref.bloom_cols <= so->eq_cols && !so->empty)
		{
			c->bloom_check = true;
			c->bloom_cols_hashed = c->ref.bloom_cols;
			c->bloom_hash = lsm_hash64(so->eq_prefix, so->eq_len[c->ref.bloom_cols - 1],
									   LSM_BLOOM_SEED);
		}
	}

	LsmCheckStatus(index,
				   lsm_merge_create(so->nmt + so->nruns, backward ? 1 : 0,
									so->range.lo, so->range.lolen,
									so->range.hi, so->range.hilen, &so->merge),
				   InvalidBlockNumber, "starting a scan");
	MemoryContextSwitchTo(old);
}

/* ERROR for a malformed entry the merge just returned, naming its page. */
static void
LsmScanReportMalformed(IndexScanDesc scan, const uint8 *key, int len)
{
	LsmScanOpaque so = (LsmScanOpaque) scan->opaque;
	int			src = lsm_merge_last_source(so->merge);
	BlockNumber blkno = InvalidBlockNumber;
	char	   *hex = LsmKeyToHex(key, Min(len, 64));

	if (src >= so->nmt && src < so->nmt + so->nruns)
	{
		LsmRunCursor *c = &so->cursors[src - so->nmt];

		blkno = c->ref.start + c->cur;
		LsmReportCorruption(scan->indexRelation, blkno,
							"Data page %u of run %u holds a malformed entry %s.",
							c->cur, c->ref.run_id, hex);
	}
	LsmReportCorruption(scan->indexRelation, blkno,
						"The memtable holds a malformed entry %s.", hex);
}

/* Does the entry satisfy every scan key?  Also returns its TID. */
static bool
LsmEntryMatches(IndexScanDesc scan, const uint8 *key, int len, ItemPointer tid)
{
	LsmScanOpaque so = (LsmScanOpaque) scan->opaque;
	const uint8 *seg[INDEX_MAX_KEYS];
	int			seglen[INDEX_MAX_KEYS];

	if (!LsmSplitEntry(&so->desc, key, len, seg, seglen, tid))
		LsmScanReportMalformed(scan, key, len);

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

/*
 * Give memtable source src its next chunk: the first one, taken with the
 * snapshot, then (if it did not exhaust the range) chunks of the pinned
 * memtable, each resumed just past the last key handed out.
 */
static void
LsmFeedMemtable(IndexScanDesc scan, int src)
{
	LsmScanOpaque so = (LsmScanOpaque) scan->opaque;
	Relation	index = scan->indexRelation;
	LsmScanMemtable *m = &so->mts[src];
	LsmBatch   *b = lsm_merge_source_batch(so->merge, src);
	size_t		n;

	lsm_batch_clear(b);
	if (!m->fed)
	{
		for (size_t i = 0; i < lsm_batch_count(m->first); i++)
		{
			const uint8 *k;
			size_t		l;

			lsm_batch_get(m->first, i, &k, &l);
			LsmCheckStatus(index, lsm_batch_add_key(b, k, l), InvalidBlockNumber,
						   "scanning the memtable");
		}
		m->fed = true;
	}
	else if (m->more)
	{
		LsmSlot    *slot = LsmSlotAcquire(index, LW_SHARED);
		const LsmMemtable *mt = LsmSlotFindMemtable(slot, m->id);
		LsmStatus	st = LSM_OK;
		int			more = 0;

		if (mt != NULL)
			st = lsm_memtable_copy_chunk(lsm_shared->arena, mt, so->backward,
										 so->range.lo, so->range.lolen,
										 so->range.hi, so->range.hilen,
										 m->resume, m->resumelen, m->chunk, b, &more);
		LsmSlotRelease(index, slot);
		if (mt == NULL)
			elog(ERROR, "lsm_am: memtable %llu pinned by a scan of index \"%s\" is gone",
				 (unsigned long long) m->id, RelationGetRelationName(index));
		LsmCheckStatus(index, st, InvalidBlockNumber, "scanning the memtable");
		m->more = more != 0;
		m->chunk = Min(m->chunk * 2, LSM_SCAN_MAX_CHUNK);
	}
	n = lsm_batch_count(b);
	if (n == 0)
	{
		m->more = false;
		lsm_merge_source_done(so->merge, src);
		return;
	}
	/* where the next chunk resumes */
	{
		const uint8 *k;
		size_t		l;

		lsm_batch_get(b, so->backward ? 0 : n - 1, &k, &l);
		memcpy(m->resume, k, l);
		m->resumelen = (int) l;
	}
	lsm_merge_source_ready(so->merge, src);
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
				LsmFeedMemtable(scan, need);
			else
				LsmFeedRun(index, so->merge, need, &so->cursors[need - so->nmt],
						   so->backward, &so->range);
			continue;
		}
		LsmCheckStatus(index, st, InvalidBlockNumber, "scanning");
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

/*
 * Turn the scan around (a scrollable cursor fetching the other way), or
 * start it again after it ran off the end: a new snapshot over the part of
 * the range on the far side of the entry returned last (all of it after the
 * end, as btree does), which that entry itself is then skipped from.
 */
static void
LsmScanTurn(IndexScanDesc scan, bool backward)
{
	LsmScanOpaque so = (LsmScanOpaque) scan->opaque;
	bool		from_last = so->havelast && !so->ended;

	MemoryContextDelete(so->snapctx);	/* LsmScanFreeCore: iterator, pins */
	so->snapctx = NULL;
	so->cursors = NULL;
	so->nruns = 0;
	so->range = so->orange;
	so->skiplast = false;
	if (from_last)
	{
		uint8	   *bound = MemoryContextAlloc(so->scanctx, so->lastlen);

		memcpy(bound, so->lastkey, so->lastlen);
		/* a whole entry as hi admits exactly the entries <= it */
		if (backward)
		{
			so->range.hi = bound;
			so->range.hilen = so->lastlen;
		}
		else
		{
			so->range.lo = bound;
			so->range.lolen = so->lastlen;
		}
		so->skiplast = true;
	}
	LsmScanStart(scan, backward);
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
		so->orange = so->range;
		LsmScanStart(scan, backward);
		LsmCountIndexSearch(scan);
	}
	else if (backward != so->backward || so->ended)
	{
		if (so->ended && backward == so->backward)
			return false;
		LsmScanTurn(scan, backward);
	}

	for (;;)
	{
		if (!LsmScanNext(scan, &scan->xs_heaptid, &key, &len))
		{
			so->ended = true;
			return false;
		}
		if (so->skiplast)
		{
			so->skiplast = false;
			if ((int) len == so->lastlen && memcmp(key, so->lastkey, len) == 0)
				continue;
		}
		break;
	}
	memcpy(so->lastkey, key, len);
	so->lastlen = (int) len;
	so->havelast = true;
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
