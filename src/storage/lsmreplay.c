/*
 * lsmreplay.c — an index's slot, current: find and lock it, and catch its
 * memtables up with the index's log pages (replay).  The read side of the
 * log module (the append side is lsmlog.c); together they alone write the
 * slot's log state (loaded, in_recovery, log_epoch, log_head, log_tail,
 * log_tail_off, log_pages).
 *
 * A slot is a cache of the log pages: after a restart, an eviction, on a
 * standby (where redo writes pages but never shared memory) or after another
 * incarnation of the index replaced the one cached, LsmSlotAcquire replays
 * whatever the memtables lack, page by page, checking every page's checksum
 * and every entry.
 */
#include "postgres.h"

#include "access/xlog.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "storage/lsm_storage.h"

static void LsmSlotCatchUpGuts(Relation index, LsmSlot *slot);

uint32
LsmCountLevel0(const LsmMetaPageData *meta)
{
	uint32		n = 0;

	for (int i = 0; i < (int) meta->nruns; i++)
		if (meta->runs[i].level == 0)
			n++;
	return n;
}

/* This backend's cached description of an index (key encoding, slot). */
LsmRelCache *
LsmGetRelCache(Relation index)
{
	LsmRelCache *cache = (LsmRelCache *) index->rd_amcache;

	if (cache == NULL)
	{
		LsmMetaPageData meta;

		cache = MemoryContextAllocZero(index->rd_indexcxt, sizeof(LsmRelCache));
		LsmKeyDescInit(index, &cache->desc);
		LsmReadMeta(index, &meta, NULL);
		if (meta.key_fingerprint != cache->desc.fingerprint)
			ereport(ERROR,
					(errcode(ERRCODE_INDEX_CORRUPTED),
					 errmsg("index \"%s\" was built with a different key encoding",
							RelationGetRelationName(index)),
					 errdetail("The index's types, collations, collation versions or lsm_am key encoding version changed since it was built."),
					 errhint("REINDEX the index.")));
		cache->instance_id = meta.instance_id;
		cache->slot = -1;
		index->rd_amcache = cache;
	}
	return cache;
}

/*
 * Bring the slot's memtable up to date with the index's log pages.  Replaying
 * a log page twice is harmless (inserting a present key is a no-op), so an
 * error part-way through a page only needs the slot marked not loaded when
 * the memtable was being rebuilt from scratch.
 * REQUIRES: slot lock exclusive.
 */
static void
LsmSlotCatchUp(Relation index, LsmSlot *slot, LsmRelCache *cache)
{
	PG_TRY();
	{
		LsmSlotCatchUpGuts(index, slot);
	}
	PG_CATCH();
	{
		slot->loaded = false;
		PG_RE_THROW();
	}
	PG_END_TRY();
}

/*
 * Replay log chain epoch into mt from (*blk, *off) to its end, advancing
 * *blk, *off and *pages.  Returns false if a page is not of the chain (a
 * standby replayed a flush that retired it: the caller starts over).  Every
 * page must match its checksum and every entry must be a well-formed key of
 * this index with a valid heap TID: a damaged log is an ERROR naming the
 * block, never a memtable that silently lacks or misplaces an entry.
 */
static bool
LsmReplayChain(Relation index, LsmSlot *slot, LsmMemtable *mt, uint32 epoch,
			   BlockNumber *blk, uint16 *off, uint32 *pages)
{
	const LsmKeyDesc *desc = &LsmGetRelCache(index)->desc;

	while (BlockNumberIsValid(*blk))
	{
		Buffer		buf = ReadBuffer(index, *blk);
		Page		page;
		LsmPageOpaque op;
		uint16		lower;
		BlockNumber next;
		char	   *copy;

		LockBuffer(buf, BUFFER_LOCK_SHARE);
		page = BufferGetPage(buf);
		op = LsmPageGetOpaque(page);
		if (!LsmIsLogPageOf(page, epoch))
		{
			UnlockReleaseBuffer(buf);
			return false;
		}
		lower = ((PageHeader) page)->pd_lower;
		next = op->next;
		if (lower > ((PageHeader) page)->pd_special || *off > lower ||
			*off < LSM_CONTENT_OFFSET)
		{
			UnlockReleaseBuffer(buf);
			LsmReportCorruption(index, *blk,
								"Log page of epoch %u ends at %u, replay resumes at %u.",
								epoch, lower, *off);
		}
		if (op->checksum != 0 && op->checksum != LsmLogPageChecksum(page))
		{
			uint16		stored = op->checksum;
			uint16		computed = LsmLogPageChecksum(page);

			UnlockReleaseBuffer(buf);
			LsmReportCorruption(index, *blk,
								"Log page checksum is %u, its content gives %u.",
								stored, computed);
		}
		copy = palloc(lower - *off + 1);
		memcpy(copy, (char *) page + *off, lower - *off);
		UnlockReleaseBuffer(buf);

		/* every entry must be a key of this index (the shim owns the encoding) */
		for (int pos = 0; pos < lower - *off;)
		{
			uint16		len;
			const uint8 *key = (uint8 *) copy + pos + LSM_LOG_ENTRY_HDR;
			ItemPointerData tid;

			memcpy(&len, copy + pos, sizeof(uint16));
			if (len == 0 || pos + LSM_LOG_ENTRY_HDR + len > lower - *off)
				LsmReportCorruption(index, *blk,
									"Log entry at offset %d has length %u, the page ends at %u.",
									*off + pos, len, lower);
			if (!LsmSplitEntry(desc, key, len, NULL, NULL, &tid) ||
				!ItemPointerIsValid(&tid) ||
				ItemPointerGetOffsetNumberNoCheck(&tid) > MaxOffsetNumber)
				LsmReportCorruption(index, *blk,
									"Log entry at offset %d is not a well-formed entry of this index: %s.",
									*off + pos, LsmKeyToHex(key, Min(len, 64)));
			pos += LSM_LOG_ENTRY_HDR + len;
		}
		/* then the page into the memtable: one core call, more only for chunks */
		for (size_t pos = 0;;)
		{
			LsmStatus	st = lsm_memtable_insert_log(lsm_shared->arena, mt,
													 (const uint8 *) copy,
													 lower - *off, &pos);
			uint16		len;

			if (st == LSM_OK)
				break;
			if (st == LSM_NEED_CHUNK)
			{
				memcpy(&len, copy + pos, sizeof(uint16));
				if (LsmEnsureChunkRoom(slot, mt, len, true))
					continue;
				slot->loaded = false;
				LsmMemtableOutOfMemory(index);
			}
			slot->loaded = false;
			LsmReportStatus(index, st, *blk, "replaying a log page");
		}
		pfree(copy);
		*off = lower;
		if (!BlockNumberIsValid(next))
			break;
		*blk = next;
		*off = LSM_CONTENT_OFFSET;
		(*pages)++;
	}
	return true;
}

/* Position of epoch in meta->imm[], or -1. */
static int
LsmMetaImmIndex(const LsmMetaPageData *meta, uint32 epoch)
{
	for (int k = 0; k < (int) meta->nimm; k++)
		if (meta->imm[k].epoch == epoch)
			return k;
	return -1;
}

/*
 * Load immutable chain k of meta into the slot (all or nothing).  On failure
 * *badblk is the page that was not of the chain.
 */
static bool
LsmLoadImmutable(Relation index, LsmSlot *slot, const LsmMetaPageData *meta, int k,
				 BlockNumber *badblk)
{
	LsmImmutable im;
	BlockNumber blk = meta->imm[k].head;
	uint16		off = LSM_CONTENT_OFFSET;
	bool		ok;
	int			pos;

	memset(&im, 0, sizeof(im));
	lsm_memtable_init(&im.mt);
	im.epoch = meta->imm[k].epoch;
	im.head = meta->imm[k].head;
	im.id = LsmNextMemtableId(slot);
	im.scans = 0;
	im.pages = BlockNumberIsValid(blk) ? 1 : 0;
	PG_TRY();
	{
		ok = LsmReplayChain(index, slot, &im.mt, im.epoch, &blk, &off, &im.pages);
	}
	PG_CATCH();
	{
		LsmMemtableFree(&im.mt);
		PG_RE_THROW();
	}
	PG_END_TRY();
	if (!ok || slot->nimm >= LSM_MAX_IMM)
	{
		LsmMemtableFree(&im.mt);
		*badblk = BlockNumberIsValid(blk) ? blk : meta->imm[k].head;
		return false;
	}
	/* keep the slot's list in epoch order, as the metapage's */
	for (pos = slot->nimm; pos > 0 && slot->imm[pos - 1].epoch > im.epoch; pos--)
		slot->imm[pos] = slot->imm[pos - 1];
	slot->imm[pos] = im;
	slot->nimm++;
	return true;
}

/*
 * Make the slot mirror the metapage: drop immutable memtables that were
 * flushed, turn the active memtable into an immutable one after a switch,
 * load immutable chains it lacks, and replay the active chain to its end.
 */
static void
LsmSlotCatchUpGuts(Relation index, LsmSlot *slot)
{
	LsmMetaPageData *meta = palloc(sizeof(LsmMetaPageData));

	for (;;)
	{
		/* before reading: a promotion after this point is caught below */
		bool		rec = RecoveryInProgress();
		bool		restart = false;
		BlockNumber badblk = InvalidBlockNumber;

		LsmReadMeta(index, meta, NULL);
		slot->l0_runs = LsmCountLevel0(meta);
		if (slot->instance_id != meta->instance_id)
		{
			LsmSlotReset(slot);
			slot->instance_id = meta->instance_id;
		}

		/* 1. immutable memtables that were flushed meanwhile */
		for (int i = 0; i < slot->nimm;)
		{
			if (LsmMetaImmIndex(meta, slot->imm[i].epoch) < 0 &&
				!(i == 0 && slot->pins > 0))
			{
				LsmMemtableRetire(slot, &slot->imm[i].mt, slot->imm[i].id,
								  slot->imm[i].scans);
				memmove(&slot->imm[i], &slot->imm[i + 1],
						sizeof(LsmImmutable) * (slot->nimm - i - 1));
				slot->nimm--;
			}
			else
				i++;
		}

		/* 2. the active memtable became immutable (a switch was replayed) */
		if (slot->loaded && slot->log_epoch != 0 &&
			LsmMetaImmIndex(meta, slot->log_epoch) >= 0 &&
			slot->nimm < LSM_MAX_IMM)
		{
			bool		have = false;

			for (int i = 0; i < slot->nimm; i++)
				have |= slot->imm[i].epoch == slot->log_epoch;
			if (!have)
			{
				int			k = LsmMetaImmIndex(meta, slot->log_epoch);
				BlockNumber blk = slot->log_tail;
				uint16		off = slot->log_tail_off;

				if (!BlockNumberIsValid(blk) && BlockNumberIsValid(meta->imm[k].head))
				{
					blk = meta->imm[k].head;
					off = LSM_CONTENT_OFFSET;
					slot->log_pages = 1;
				}
				if (LsmReplayChain(index, slot, &slot->mt, slot->log_epoch,
								   &blk, &off, &slot->log_pages))
				{
					LsmImmutable *im;
					int			pos;

					for (pos = slot->nimm; pos > 0 && slot->imm[pos - 1].epoch > slot->log_epoch; pos--)
						slot->imm[pos] = slot->imm[pos - 1];
					im = &slot->imm[pos];
					im->mt = slot->mt;
					im->epoch = slot->log_epoch;
					im->head = meta->imm[k].head;
					im->pages = slot->log_pages;
					im->id = slot->mt_id;
					im->scans = slot->mt_scans;
					slot->nimm++;
					lsm_memtable_init(&slot->mt);
					slot->mt_id = LsmNextMemtableId(slot);
					slot->mt_scans = 0;
				}
				LsmSlotResetActive(slot);
			}
		}

		/* 3. immutable chains the slot lacks */
		for (int k = 0; k < (int) meta->nimm && !restart; k++)
		{
			bool		have = false;

			for (int i = 0; i < slot->nimm; i++)
				have |= slot->imm[i].epoch == meta->imm[k].epoch;
			if (!have && !LsmLoadImmutable(index, slot, meta, k, &badblk))
			{
				restart = true;
				if (!rec)
				{
					slot->loaded = false;
					LsmReportCorruption(index, badblk,
										"The page is not of the immutable log chain of epoch %u that reaches it.",
										meta->imm[k].epoch);
				}
			}
		}
		if (restart)
		{
			slot->loaded = false;
			continue;
		}

		/* 4. the active chain */
		if (!slot->loaded || slot->log_epoch != meta->active.epoch)
		{
			LsmSlotResetActive(slot);
			slot->log_epoch = meta->active.epoch;
		}
		if (!BlockNumberIsValid(slot->log_head) && BlockNumberIsValid(meta->active.head))
		{
			slot->log_head = slot->log_tail = meta->active.head;
			slot->log_tail_off = LSM_CONTENT_OFFSET;
			slot->log_pages = 1;
		}
		else if (slot->log_head != meta->active.head)
		{
			LsmSlotResetActive(slot);
			slot->log_epoch = meta->active.epoch;
			continue;
		}
		if (!LsmReplayChain(index, slot, &slot->mt, slot->log_epoch,
							&slot->log_tail, &slot->log_tail_off, &slot->log_pages))
		{
			LsmMetaPageData again;

			badblk = slot->log_tail;
			LsmSlotResetActive(slot);
			LsmReadMeta(index, &again, NULL);
			if (!rec && again.active.epoch == meta->active.epoch &&
				again.active.head == meta->active.head)
				LsmReportCorruption(index, badblk,
									"The page is not of the active log chain of epoch %u that reaches it.",
									meta->active.epoch);
			continue;
		}
		slot->loaded = true;
		slot->in_recovery = rec;

		/* On a standby, a switch or flush may have been replayed meanwhile */
		if (rec)
		{
			LsmMetaPageData again;
			bool		same;

			LsmReadMeta(index, &again, NULL);
			same = again.nimm == (uint32) slot->nimm &&
				again.active.epoch == slot->log_epoch &&
				again.active.head == slot->log_head;
			for (int i = 0; same && i < slot->nimm; i++)
				same = again.imm[i].epoch == slot->imm[i].epoch;
			if (!same)
				continue;
		}
		pfree(meta);
		return;
	}
}

/*
 * Lock and return the index's slot, with its memtable current.  On a standby
 * the memtable is caught up with the replayed log first, so mode is promoted
 * to exclusive there.  REQUIRES: lsm_am preloaded.
 */
LsmSlot *
LsmSlotAcquire(Relation index, LWLockMode mode)
{
	LsmRelCache *cache;
	bool		standby = RecoveryInProgress();

	LsmCheckPreloaded();
	cache = LsmGetRelCache(index);
	if (standby)
		mode = LW_EXCLUSIVE;

	for (;;)
	{
		LsmSlot    *slot;

		if (cache->slot < 0)
			cache->slot = LsmSlotAssign(index, &cache->generation);

		slot = &lsm_shared->slots[cache->slot];
		LWLockAcquire(LsmSlotLock(cache->slot), mode);
		if (slot->generation != cache->generation ||
			slot->dbid != MyDatabaseId ||
			slot->relnumber != LsmRelFileNumber(index))
		{
			LWLockRelease(LsmSlotLock(cache->slot));
			cache->slot = -1;
			continue;
		}
		slot->last_used = pg_atomic_fetch_add_u64(&lsm_shared->clock, 1);

		if (!standby && slot->loaded && !slot->in_recovery &&
			slot->instance_id == cache->instance_id)
			return slot;

		if (mode != LW_EXCLUSIVE)
		{
			LWLockRelease(LsmSlotLock(cache->slot));
			LWLockAcquire(LsmSlotLock(cache->slot), LW_EXCLUSIVE);
			if (slot->generation != cache->generation)
			{
				LWLockRelease(LsmSlotLock(cache->slot));
				cache->slot = -1;
				continue;
			}
			LsmSlotCatchUp(index, slot, cache);
			LWLockRelease(LsmSlotLock(cache->slot));
			/* the slot is current now; take it in the mode asked for */
			continue;
		}
		LsmSlotCatchUp(index, slot, cache);
		return slot;
	}
}

void
LsmSlotRelease(Relation index, LsmSlot *slot)
{
	int			slotno = slot - lsm_shared->slots;

	LWLockRelease(LsmSlotLock(slotno));
}
