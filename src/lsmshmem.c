/*
 * lsmshmem.c — shared memory: memtable slots, the chunk arena, and the
 * mapping from an index (database, tablespace, relfilenode) to its slot.
 *
 * A slot is a cache: every entry of its memtable is also on the index's log
 * pages, written before the memtable is touched.  So a slot may be dropped
 * whenever nobody holds its lock (eviction), and is rebuilt from the log
 * pages on the next access (after a restart, on a standby, after eviction).
 *
 * Lock order: map lock -> slot lock (only conditionally) ; slot lock -> arena
 * lock ; slot lock -> buffer content locks.  Never wait for a heavyweight lock
 * while holding a slot lock.
 */
#include "postgres.h"

#include "access/xlog.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "storage/ipc.h"
#include "storage/shmem.h"
#include "utils/memutils.h"

#include "lsm.h"

LsmShared  *lsm_shared = NULL;

static void LsmSlotCatchUpGuts(Relation index, LsmSlot *slot);

#define LSM_TRANCHE "lsm_am"

static uint32
LsmArenaChunks(void)
{
	return (uint32) ((Size) lsm_memory_mb * 1024 * 1024 / LSM_CHUNK_SIZE);
}

static Size
LsmSharedSize(void)
{
	Size		sz = offsetof(LsmShared, slots);

	sz = add_size(sz, mul_size(lsm_max_indexes, sizeof(LsmSlot)));
	sz = MAXALIGN(sz);
	sz = add_size(sz, lsm_arena_size(LsmArenaChunks(), LSM_CHUNK_SIZE));
	return sz;
}

/* shmem_request_hook */
void
LsmShmemRequest(void)
{
	RequestAddinShmemSpace(LsmSharedSize());
	RequestAddinShmemSpace(LsmWorkerShmemSize());
	RequestNamedLWLockTranche(LSM_TRANCHE, 2 + lsm_max_indexes);
}

/* shmem_startup_hook */
void
LsmShmemStartup(void)
{
	bool		found;
	LWLockPadded *locks;

	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	lsm_shared = ShmemInitStruct("lsm_am", LsmSharedSize(), &found);
	locks = GetNamedLWLockTranche(LSM_TRANCHE);
	if (!found)
	{
		Size		off = MAXALIGN(offsetof(LsmShared, slots) +
								   lsm_max_indexes * sizeof(LsmSlot));
		LsmStatus	st;

		memset(lsm_shared, 0, off);
		lsm_shared->nslots = lsm_max_indexes;
		pg_atomic_init_u64(&lsm_shared->clock, 0);
		lsm_shared->arena = (char *) lsm_shared + off;
		st = lsm_arena_init(lsm_shared->arena, LsmArenaChunks(), LSM_CHUNK_SIZE);
		if (st != LSM_OK)
			elog(FATAL, "lsm_am: could not initialise the memtable arena: %s",
				 lsm_status_message(st));
		for (int i = 0; i < lsm_max_indexes; i++)
		{
			lsm_memtable_init(&lsm_shared->slots[i].mt);
			pg_atomic_init_u32(&lsm_shared->slots[i].pending, 0);
			pg_atomic_init_u32(&lsm_shared->slots[i].queued, 0);
			pg_atomic_init_u64(&lsm_shared->slots[i].lookups, 0);
			pg_atomic_init_u64(&lsm_shared->slots[i].filter_probes, 0);
			pg_atomic_init_u64(&lsm_shared->slots[i].filter_negatives, 0);
			pg_atomic_init_u64(&lsm_shared->slots[i].filter_false_positives, 0);
			pg_atomic_init_u64(&lsm_shared->slots[i].data_pages_read, 0);
			ConditionVariableInit(&lsm_shared->slots[i].cv);
		}
	}
	lsm_shared->map_lock = &locks[0].lock;
	lsm_shared->arena_lock = &locks[1].lock;
	LWLockRelease(AddinShmemInitLock);
	LsmWorkerShmemInit();
}

/* ERROR unless the library was loaded through shared_preload_libraries. */
void
LsmCheckPreloaded(void)
{
	if (lsm_shared == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("lsm_am must be loaded via shared_preload_libraries"),
				 errhint("Add lsm_am to shared_preload_libraries in postgresql.conf (shared_preload_libraries = 'lsm_am') and restart the server.")));
}

LWLock *
LsmSlotLock(int slotno)
{
	return &GetNamedLWLockTranche(LSM_TRANCHE)[2 + slotno].lock;
}

/* Give a memtable's chunks back to the arena.  REQUIRES: its slot's lock. */
void
LsmMemtableFree(LsmMemtable *mt)
{
	if (mt->nchunks > 0)
	{
		LWLockAcquire(lsm_shared->arena_lock, LW_EXCLUSIVE);
		lsm_memtable_release(lsm_shared->arena, mt);
		LWLockRelease(lsm_shared->arena_lock);
	}
	lsm_memtable_init(mt);
}

/* Forget the active memtable. */
static void
LsmSlotResetActive(LsmSlot *slot)
{
	LsmMemtableRetire(slot, &slot->mt, slot->mt_id, slot->mt_scans);
	slot->mt_id = LsmNextMemtableId(slot);
	slot->mt_scans = 0;
	slot->loaded = false;
	slot->log_epoch = 0;
	slot->log_head = InvalidBlockNumber;
	slot->log_tail = InvalidBlockNumber;
	slot->log_tail_off = 0;
	slot->log_pages = 0;
}

/*
 * Forget every memtable of the slot.  REQUIRES: slot lock exclusive, no pins
 * (a pinned slot keeps its immutable memtables).
 */
void
LsmSlotReset(LsmSlot *slot)
{
	LsmSlotResetActive(slot);
	if (slot->pins == 0)
	{
		for (int i = 0; i < slot->nimm; i++)
			LsmMemtableRetire(slot, &slot->imm[i].mt, slot->imm[i].id,
							  slot->imm[i].scans);
		slot->nimm = 0;
	}
	slot->in_recovery = false;
}

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
 * Find or assign a slot for the index.  Returns the slot number; the caller
 * then locks it and checks the generation.
 */
static int
LsmSlotAssign(Relation index, uint32 *generation)
{
	Oid			dbid = MyDatabaseId;
	Oid			spc = LsmRelSpcOid(index);
	Oid			rn = LsmRelFileNumber(index);
	int			found = -1;
	int			victim = -1;
	uint64		oldest = PG_UINT64_MAX;

	LWLockAcquire(lsm_shared->map_lock, LW_EXCLUSIVE);
	for (int i = 0; i < lsm_shared->nslots; i++)
	{
		LsmSlot    *s = &lsm_shared->slots[i];

		if (s->dbid == dbid && s->spcid == spc && s->relnumber == rn)
		{
			found = i;
			break;
		}
		if (s->dbid == InvalidOid)
		{
			if (oldest != 0)
			{
				victim = i;
				oldest = 0;
			}
		}
		else if (s->last_used < oldest)
		{
			victim = i;
			oldest = s->last_used;
		}
	}

	if (found < 0)
	{
		/* try victims from least recently used; skip slots in use */
		for (int attempt = 0; attempt < lsm_shared->nslots && found < 0; attempt++)
		{
			LsmSlot    *s;

			if (victim < 0)
				break;
			s = &lsm_shared->slots[victim];
			if (LWLockConditionalAcquire(LsmSlotLock(victim), LW_EXCLUSIVE) &&
				(s->pins > 0 || LsmSlotScanPinned(s)))
				LWLockRelease(LsmSlotLock(victim));
			else if (s->pins == 0 && LWLockHeldByMe(LsmSlotLock(victim)))
			{
				LsmSlotReset(s);
				s->instance_id = 0;
				s->l0_runs = 0;
				s->l0_trigger = 0;
				s->memtable_kb = 0;
				s->vacuum_waiting = false;
				s->stalls_slowdown = s->stalls_stop = s->stall_us = 0;
				s->self_flushes = 0;
				s->wal_log = s->wal_flush = s->wal_compact = 0;
				pg_atomic_write_u64(&s->lookups, 0);
				pg_atomic_write_u64(&s->filter_probes, 0);
				pg_atomic_write_u64(&s->filter_negatives, 0);
				pg_atomic_write_u64(&s->filter_false_positives, 0);
				pg_atomic_write_u64(&s->data_pages_read, 0);
				s->dbid = dbid;
				s->spcid = spc;
				s->relnumber = rn;
				s->indexoid = RelationGetRelid(index);
				pg_atomic_write_u32(&s->pending, 0);
				s->generation++;
				s->last_used = pg_atomic_fetch_add_u64(&lsm_shared->clock, 1);
				LWLockRelease(LsmSlotLock(victim));
				found = victim;
				break;
			}
			/* pick the next oldest that is not the one we just failed on */
			{
				uint64		floor = s->last_used;
				int			next = -1;
				uint64		best = PG_UINT64_MAX;

				for (int i = 0; i < lsm_shared->nslots; i++)
				{
					LsmSlot    *t = &lsm_shared->slots[i];

					if (t->last_used > floor && t->last_used < best)
					{
						best = t->last_used;
						next = i;
					}
				}
				victim = next;
			}
		}
	}
	if (found >= 0)
		*generation = lsm_shared->slots[found].generation;
	LWLockRelease(lsm_shared->map_lock);

	if (found < 0)
		ereport(ERROR,
				(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
				 errmsg("too many lsm indexes in use at once"),
				 errdetail("All %d memtable slots are busy.", lsm_shared->nslots),
				 errhint("Raise lsm_am.max_indexes (requires a restart).")));
	return found;
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
		if (PageIsNew(page) || op->kind != LSM_PK_LOG || op->owner != epoch ||
			op->page_id != LSM_PAGE_ID)
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

/*
 * Drop the memtable of some other idle slot to free arena chunks.
 * REQUIRES: our own slot lock held (we never wait on another slot lock).
 */
static bool
LsmEvictOne(LsmSlot *self)
{
	int			best = -1;
	uint64		oldest = PG_UINT64_MAX;

	for (int i = 0; i < lsm_shared->nslots; i++)
	{
		LsmSlot    *s = &lsm_shared->slots[i];

		if (s == self || s->pins > 0 || LsmSlotScanPinned(s) ||
			(s->mt.nchunks == 0 && s->nimm == 0))
			continue;
		if (s->last_used < oldest)
		{
			oldest = s->last_used;
			best = i;
		}
	}
	if (best < 0)
		return false;
	if (!LWLockConditionalAcquire(LsmSlotLock(best), LW_EXCLUSIVE))
		return false;
	if (lsm_shared->slots[best].pins > 0 || LsmSlotScanPinned(&lsm_shared->slots[best]))
	{
		LWLockRelease(LsmSlotLock(best));
		return false;
	}
	LsmSlotReset(&lsm_shared->slots[best]);
	LWLockRelease(LsmSlotLock(best));
	return true;
}

/*
 * Make sure the memtable can take a key of keylen bytes without asking for a
 * chunk: add a chunk now if the current one is too full.  Returns false if
 * the arena has no chunk left (after evicting others when may_evict).
 * REQUIRES: slot lock exclusive.
 */
bool
LsmEnsureChunkRoom(LsmSlot *slot, LsmMemtable *mt, int keylen, bool may_evict)
{
	uint32		need = (uint32) keylen + 64;	/* node header + tower + align */

	if (mt->cur_chunk != 0 && mt->chunk_used + need <= LSM_CHUNK_SIZE)
		return true;

	for (int tries = 0; tries < 4; tries++)
	{
		uint32		chunk;
		LsmStatus	st;

		LWLockAcquire(lsm_shared->arena_lock, LW_EXCLUSIVE);
		st = lsm_arena_alloc_chunk(lsm_shared->arena, &chunk);
		LWLockRelease(lsm_shared->arena_lock);
		if (st == LSM_OK)
		{
			lsm_memtable_add_chunk(lsm_shared->arena, mt, chunk);
			return true;
		}
		if (!may_evict || !LsmEvictOne(slot))
			return false;
	}
	return false;
}

/* The arena has no chunk left for index's memtable. */
void
LsmMemtableOutOfMemory(Relation index)
{
	ereport(ERROR,
			(errcode(ERRCODE_OUT_OF_MEMORY),
			 errmsg("out of lsm_am shared memory for the memtable of index \"%s\"",
					RelationGetRelationName(index)),
			 errdetail("lsm_am.memory is %d MB.", lsm_memory_mb),
			 errhint("Raise lsm_am.memory (requires a restart) or lower the memtable_size of lsm indexes.")));
}
