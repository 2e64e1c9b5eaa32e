/*
 * lsmscanmerge.c — a scan's snapshot and its merging iterator (the scan's
 * other files: lsmscan_int.h).
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

#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "am/lsmscan_int.h"

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
	so->ahead_n = so->ahead_pos = 0;
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
void
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
	/* (a parallel scan's chunks of one range are one lookup) */
	if (so->eq_cols > 0 && so->pchunks <= 1)
		pg_atomic_fetch_add_u64(&slot->lookups, 1);
	pg_atomic_fetch_add_u64(&slot->filter_probes, probes);
	pg_atomic_fetch_add_u64(&slot->filter_negatives, negatives);
	pg_atomic_fetch_add_u64(&slot->filter_false_positives, falsepos);
	pg_atomic_fetch_add_u64(&slot->data_pages_read, pages);
}

/*
 * Take the snapshot and set up the merging iterator over so->range.  Also
 * used again when a scan turns around (LsmScanTurn), with a fresh snapshot:
 * the index only ever gains entries a snapshot may see, so the new one
 * yields every entry the old one would have.
 */
void
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
	bool		full_key;
	int			hashed_cols = 0;	/* bloom columns hash is of (0: none) */
	uint64		hash = 0;
	uint32		large = 0;		/* levels of a quarter of the entries or more */
	double		share[LSM_PICK_MAX_LEVEL + 1] = {0};	/* of the entries, per level */

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
	full_key = so->eq_cols > 0 && so->eq_cols == so->desc.ncols && !so->empty;
	mode = LW_SHARED;
	for (;;)
	{
		bool		need_pins = false;

		slot = LsmSlotAcquire(index, mode);
		st = LSM_OK;
		PG_TRY();
		{
			LsmRelCache *cache = LsmGetRelCache(index);

			so->oldest_mt = slot->nimm > 0 ? slot->imm[0].id : slot->mt_id;
			so->runs_skipped = so->skip_oldest != 0 &&
				so->skip_oldest == so->oldest_mt &&
				so->skip_slot == cache->slot &&
				so->skip_generation == cache->generation;
			if (so->runs_skipped)
			{
				meta.nruns = 0;
				runs = NULL;
			}
			else
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
				/* every column equal: the memtable's key filter may rule it out */
				if (full_key &&
					!lsm_memtable_may_contain(lsm_shared->arena, mt, so->eq_prefix,
											  so->eq_len[so->eq_cols - 1]))
				{
					m->more = false;
					continue;
				}
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
	if (so->runs_skipped)
	{
		/* no cursor, but an array: LsmScanTally counts a lookup whose
		 * snapshot has one (NULL means counted already, or never taken) */
		so->nruns = 0;
		so->cursors = palloc0(sizeof(LsmRunCursor));
	}
	else
		so->nruns = LsmScanCursors(index, runs, meta.nruns, backward, &so->range,
								   &so->cursors);
	/*
	 * A level that holds a quarter of the entries or more (the deepest,
	 * about 90% under leveled; also the one above it while a new deepest
	 * level fills) is where many of the keys looked up are found, and for
	 * them its filter only adds a page to read: its filter page is probed
	 * if it is in memory (LsmRunCacheMayContain), else the run is searched
	 * as if the filter had said "maybe" when that is expected to read fewer
	 * pages (LsmRunPassFilter, lsmrun.c: always when the header and fence
	 * pages the descent needs are in memory).  Where the filters do not fit
	 * in memory (an index several times it) that saves a lookup of an
	 * existing key a page read, and a lookup of a missing key reads the
	 * run's data page instead of its filter page.  Not for unique indexes: their lookups are
	 * mostly the checks before an insert, of keys not there, which the
	 * filter answers best.  Such a level's filter pages stay out of the
	 * shared metadata cache, for the smaller levels' (LsmLargeLevels).
	 */
	if (so->eq_cols > 0 && !so->empty)
		large = LsmLargeLevels(runs, meta.nruns, share);
	for (int i = 0; i < so->nruns; i++)
	{
		LsmRunCursor *c = &so->cursors[i];

		/* a point lookup on the filter's columns probes it first (runs
		 * filtered on the same columns share the hash) */
		if (c->ref.bloom_nblocks > 0 && c->ref.bloom_cols > 0 &&
			c->ref.bloom_cols <= so->eq_cols && !so->empty)
		{
			c->bloom_check = true;
			c->bloom_large = c->ref.level <= LSM_PICK_MAX_LEVEL &&
				(large & (1u << c->ref.level)) != 0;
			c->bloom_pass_cold = c->bloom_large && !index->rd_index->indisunique;
			c->bloom_level_share = c->ref.level <= LSM_PICK_MAX_LEVEL ?
				share[c->ref.level] : 0.0;
			c->bloom_cols_hashed = c->ref.bloom_cols;
			if (c->ref.bloom_cols != hashed_cols)
			{
				hashed_cols = c->ref.bloom_cols;
				hash = lsm_hash64(so->eq_prefix, so->eq_len[hashed_cols - 1],
								  LSM_BLOOM_SEED);
			}
			c->bloom_hash = hash;
		}
	}

	LsmCheckStatus(index,
				   lsm_merge_create(so->nmt + so->nruns, backward ? 1 : 0,
									so->range.lo, so->range.lolen,
									so->range.hi, so->range.hilen, &so->merge),
				   InvalidBlockNumber, "starting a scan");
	/* data pages decoded a piece at a time: LIMIT n reads about n entries */
	lsm_merge_set_lazy(so->merge, 1);
	so->ahead_n = so->ahead_pos = 0;
	MemoryContextSwitchTo(old);
}

/*
 * End the scan's snapshot (iterator, cursors, memtable pins) before another
 * is taken over a new range, its lookup counters added to the slot's.
 */
void
LsmScanEndSnapshot(LsmScanOpaque so)
{
	LsmScanTally(so);
	MemoryContextDelete(so->snapctx);	/* LsmScanFreeCore: iterator, pins */
	so->snapctx = NULL;
	so->cursors = NULL;
	so->nruns = 0;
}

/* ERROR for a malformed entry the merge just returned, naming its page. */
void
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

/*
 * Next matching entry of the merge; false at the end.  The merge hands out
 * a source's keys up to LSM_SCAN_AHEAD at a time while that source stays
 * first (one core call per run of keys, not per key); they stay valid until
 * the next call, which is made only once they are all looked at.
 */
bool
LsmScanNext(IndexScanDesc scan, ItemPointer tid, const uint8 **keyp, size_t *lenp)
{
	LsmScanOpaque so = (LsmScanOpaque) scan->opaque;
	Relation	index = scan->indexRelation;

	for (;;)
	{
		const uint8 *key;
		size_t		len;
		int			need;
		int			n;
		LsmStatus	st;

		if (so->ahead_pos < so->ahead_n)
		{
			key = so->ahead_key[so->ahead_pos];
			len = so->ahead_len[so->ahead_pos];
			so->ahead_pos++;
			if (LsmEntryMatchesPlain(so, key, (int) len, tid) ||
				LsmEntryMatches(scan, key, (int) len, tid))
			{
				if (keyp)
				{
					*keyp = key;
					*lenp = len;
				}
				return true;
			}
			continue;
		}
		CHECK_FOR_INTERRUPTS();
		so->ahead_n = so->ahead_pos = 0;
		st = lsm_merge_next_many(so->merge, so->ahead_key, so->ahead_len,
								 LSM_SCAN_AHEAD, &n, &need);
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
		if (st == LSM_CORRUPT)
		{
			/* a piece of a lazily decoded data page failed validation */
			int			src = lsm_merge_last_source(so->merge);

			if (src >= so->nmt && src < so->nmt + so->nruns)
			{
				LsmRunCursor *c = &so->cursors[src - so->nmt];

				LsmCheckStatus(index, st, c->ref.start + c->cur, "reading a data page");
			}
		}
		LsmCheckStatus(index, st, InvalidBlockNumber, "scanning");
		so->ahead_n = n;		/* looked at from the top of the loop */
	}
}

/*
 * Turn the scan around (a scrollable cursor fetching the other way), or
 * start it again after it ran off the end: a new snapshot over the part of
 * the range on the far side of the entry returned last (all of it after the
 * end, as btree does), which that entry itself is then skipped from.
 */
void
LsmScanTurn(IndexScanDesc scan, bool backward)
{
	LsmScanOpaque so = (LsmScanOpaque) scan->opaque;
	bool		from_last = so->havelast && !so->ended;

	/* the entry returned last is still in the merge's batch: keep a copy */
	if (from_last)
		memcpy(so->lastkey, so->lastptr, so->lastlen);
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
