/*
 * lsmreplay.c — an index's slot, current: find and lock it, and catch its
 * memtables up with the index's log pages (replay).  The read side of the
 * log module (the append side is lsmlog.c); together with lsmload.c they
 * alone write the slot's log state (loaded, in_recovery, log_epoch,
 * log_head, log_tail, log_tail_off, log_pages, loader).
 *
 * A slot is a cache of the log pages: after a restart, an eviction, on a
 * standby (where redo writes pages but never shared memory) or after another
 * incarnation of the index replaced the one cached, LsmSlotAcquire replays
 * whatever the memtables lack, page by page, checking every page's checksum
 * and every entry.  No long replay holds the slot lock: a slot that must be
 * loaded from scratch is loaded into private memtables without it
 * (lsmload.c), and a catch-up under the lock (a standby's, every acquire)
 * lets the lock go every LSM_REPLAY_STEP_PAGES pages, so it can be
 * cancelled and other backends get their turn.
 */
#include "postgres.h"

#include "access/xlog.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "storage/lsmreplay_int.h"

/* What a catch-up under the slot lock left to do. */
typedef enum LsmCatchUpResult
{
	LSM_CATCHUP_DONE,			/* the slot mirrors the log */
	LSM_CATCHUP_MORE,			/* the page budget ran out: the slot is loaded
								 * and in_recovery, part of the way there */
	LSM_CATCHUP_LOAD			/* a load from scratch is needed (lsmload.c) */
} LsmCatchUpResult;

static LsmCatchUpResult LsmSlotCatchUpGuts(Relation index, LsmSlot *slot, int *budget);

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
 * Bring the slot's memtables up to date with the index's log pages, reading
 * at most *budget pages.  Replaying a log page twice is harmless (inserting a
 * present key is a no-op), so an error part-way through only needs the slot
 * marked not loaded (the next acquirer loads it from scratch).
 * REQUIRES: slot lock exclusive.
 */
static LsmCatchUpResult
LsmSlotCatchUp(Relation index, LsmSlot *slot, int *budget)
{
	LsmCatchUpResult r;

	PG_TRY();
	{
		r = LsmSlotCatchUpGuts(index, slot, budget);
	}
	PG_CATCH();
	{
		slot->loaded = false;
		PG_RE_THROW();
	}
	PG_END_TRY();
	return r;
}

/*
 * Replay log chain epoch into mt (see lsmreplay_int.h).  Every page must
 * match its checksum and every entry must be a well-formed key of this index
 * with a valid heap TID: a damaged log is an ERROR naming the block, never a
 * memtable that silently lacks or misplaces an entry.
 */
LsmReplayResult
LsmReplayChain(Relation index, LsmSlot *slot, LsmMemtable *mt, uint32 epoch,
			   BlockNumber *blk, uint16 *off, uint32 *pages, int *budget)
{
	const LsmKeyDesc *desc = &LsmGetRelCache(index)->desc;

	while (BlockNumberIsValid(*blk))
	{
		Buffer		buf;
		Page		page;
		LsmPageOpaque op;
		uint16		lower;
		BlockNumber next;
		char	   *copy;

		if (budget != NULL && (*budget)-- <= 0)
			return LSM_REPLAY_MORE;
		if (lsm_replay_delay_ms > 0)
			pg_usleep(lsm_replay_delay_ms * 1000L);	/* tests of cancellation */
		CHECK_FOR_INTERRUPTS();	/* (held off under the slot lock) */
		buf = ReadBuffer(index, *blk);
		LockBuffer(buf, BUFFER_LOCK_SHARE);
		page = BufferGetPage(buf);
		op = LsmPageGetOpaque(page);
		if (!LsmIsLogPageOf(page, epoch))
		{
			UnlockReleaseBuffer(buf);
			return LSM_REPLAY_NOT_CHAIN;
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
			LsmStatus	st;
			uint16		len;

			/* a fresh memtable's key filter, once it holds a data chunk */
			if (mt->nentries == 0 && LsmMemtableFiltered(index))
				LsmMemtableAddFilter(mt, LsmMemtableSizeKb(index), LSM_TID_SIZE);
			st = lsm_memtable_insert_log(lsm_shared->arena, mt,
										 (const uint8 *) copy, lower - *off, &pos);

			if (st == LSM_OK)
				break;
			if (st == LSM_NEED_CHUNK)
			{
				memcpy(&len, copy + pos, sizeof(uint16));
				if (LsmEnsureChunkRoom(slot, mt, len, true))
					continue;
				LsmMemtableOutOfMemory(index);
			}
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
	return LSM_REPLAY_END;
}

/* Position of epoch in meta->imm[], or -1. */
int
LsmMetaImmIndex(const LsmMetaPageData *meta, uint32 epoch)
{
	for (int k = 0; k < (int) meta->nimm; k++)
		if (meta->imm[k].epoch == epoch)
			return k;
	return -1;
}

/* The budget ran out part-way: the slot is usable once caught up further. */
static LsmCatchUpResult
LsmCatchUpMore(LsmSlot *slot)
{
	slot->loaded = true;
	slot->in_recovery = true;
	return LSM_CATCHUP_MORE;
}

/*
 * Make the slot mirror the metapage: drop immutable memtables that were
 * flushed, turn the active memtable into an immutable one after a switch,
 * and replay the active chain to its end, reading at most *budget pages.
 * A slot that is not loaded, belongs to another incarnation of the index or
 * lacks an immutable chain needs a load from scratch (LSM_CATCHUP_LOAD):
 * that is a whole chain, too long for the slot lock.  Between steps
 * (LSM_CATCHUP_MORE) the slot is loaded and in_recovery: a prefix of every
 * chain, which every acquirer catches up before use.
 */
static LsmCatchUpResult
LsmSlotCatchUpGuts(Relation index, LsmSlot *slot, int *budget)
{
	LsmMetaPageData *meta;

	if (!slot->loaded)
		return LSM_CATCHUP_LOAD;
	meta = palloc(sizeof(LsmMetaPageData));
	for (;;)
	{
		/* before reading: a promotion after this point is caught below */
		bool		rec = RecoveryInProgress();
		LsmReplayResult r;

		LsmReadMeta(index, meta, NULL);
		slot->l0_runs = LsmCountLevel0(meta);
		if (slot->instance_id != meta->instance_id)
		{
			LsmSlotReset(slot);
			slot->instance_id = meta->instance_id;
			pfree(meta);
			return LSM_CATCHUP_LOAD;
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
					slot->log_head = blk;
					slot->log_pages = 1;
				}
				r = LsmReplayChain(index, slot, &slot->mt, slot->log_epoch,
								   &blk, &off, &slot->log_pages, budget);
				if (r == LSM_REPLAY_MORE)
				{
					slot->log_tail = blk;
					slot->log_tail_off = off;
					pfree(meta);
					return LsmCatchUpMore(slot);
				}
				if (r == LSM_REPLAY_END)
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

		/* 3. immutable chains the slot lacks: a whole chain, load from scratch */
		for (int k = 0; k < (int) meta->nimm; k++)
		{
			bool		have = false;

			for (int i = 0; i < slot->nimm; i++)
				have |= slot->imm[i].epoch == meta->imm[k].epoch;
			if (!have)
			{
				slot->loaded = false;
				pfree(meta);
				return LSM_CATCHUP_LOAD;
			}
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
		r = LsmReplayChain(index, slot, &slot->mt, slot->log_epoch,
						   &slot->log_tail, &slot->log_tail_off, &slot->log_pages,
						   budget);
		if (r == LSM_REPLAY_MORE)
		{
			pfree(meta);
			return LsmCatchUpMore(slot);
		}
		if (r == LSM_REPLAY_NOT_CHAIN)
		{
			LsmMetaPageData again;
			BlockNumber badblk = slot->log_tail;

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
		return LSM_CATCHUP_DONE;
	}
}

/*
 * Lock and return the index's slot, with its memtables current.  On a
 * standby the memtables are caught up with the replayed log first, so mode
 * is promoted to exclusive there.  Neither a load from scratch nor a long
 * catch-up holds the slot lock for long (see the file header): while another
 * backend loads the slot this one sleeps on the slot's load_cv, and every
 * wait and every replayed page can be cancelled.  REQUIRES: lsm_am preloaded.
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
		LsmCatchUpResult r;
		int			budget = LSM_REPLAY_STEP_PAGES;

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
		}
		/* another backend loads the slot: wait for it, then look again */
		if (LsmSlotLoadWait(cache->slot))
			continue;
		r = LsmSlotCatchUp(index, slot, &budget);
		if (r == LSM_CATCHUP_LOAD)
		{
			/* releases the slot lock; the slot is then loaded, but in_recovery */
			LsmSlotLoad(index, cache->slot);
			continue;
		}
		if (r == LSM_CATCHUP_DONE && mode == LW_EXCLUSIVE)
			return slot;
		/* current now (take it in the mode asked for), or a step further */
		LWLockRelease(LsmSlotLock(cache->slot));
		CHECK_FOR_INTERRUPTS();
	}
}

void
LsmSlotRelease(Relation index, LsmSlot *slot)
{
	int			slotno = slot - lsm_shared->slots;

	LWLockRelease(LsmSlotLock(slotno));
}
