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
			lsm_memtable_init(&lsm_shared->slots[i].mt);
	}
	lsm_shared->map_lock = &locks[0].lock;
	lsm_shared->arena_lock = &locks[1].lock;
	LWLockRelease(AddinShmemInitLock);
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

/* Forget a slot's memtable.  REQUIRES: slot lock exclusive. */
void
LsmSlotReset(LsmSlot *slot)
{
	if (slot->mt.nchunks > 0)
	{
		LWLockAcquire(lsm_shared->arena_lock, LW_EXCLUSIVE);
		lsm_memtable_release(lsm_shared->arena, &slot->mt);
		LWLockRelease(lsm_shared->arena_lock);
	}
	lsm_memtable_init(&slot->mt);
	slot->loaded = false;
	slot->in_recovery = false;
	slot->log_epoch = 0;
	slot->log_head = InvalidBlockNumber;
	slot->log_tail = InvalidBlockNumber;
	slot->log_tail_off = 0;
	slot->log_pages = 0;
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
			if (LWLockConditionalAcquire(LsmSlotLock(victim), LW_EXCLUSIVE))
			{
				LsmSlotReset(s);
				s->dbid = dbid;
				s->spcid = spc;
				s->relnumber = rn;
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

static void
LsmSlotCatchUpGuts(Relation index, LsmSlot *slot)
{
	for (;;)
	{
		LsmMetaPageData meta;
		BlockNumber blk;
		uint16		off;

		/* before reading: a promotion after this point is caught below */
		bool		rec = RecoveryInProgress();

		LsmReadMeta(index, &meta, NULL);
		if (!slot->loaded || slot->instance_id != meta.instance_id ||
			slot->log_epoch != meta.log_epoch || slot->log_head != meta.log_head)
		{
			LsmSlotReset(slot);
			slot->instance_id = meta.instance_id;
			slot->log_epoch = meta.log_epoch;
			slot->log_head = meta.log_head;
			slot->log_tail = meta.log_head;
			slot->log_tail_off = LSM_CONTENT_OFFSET;
			slot->log_pages = BlockNumberIsValid(meta.log_head) ? 1 : 0;
			slot->loaded = true;
		}

		blk = slot->log_tail;
		off = slot->log_tail_off;
		while (BlockNumberIsValid(blk))
		{
			Buffer		buf = ReadBuffer(index, blk);
			Page		page;
			LsmPageOpaque op;
			uint16		lower;
			BlockNumber next;
			char	   *copy;

			LockBuffer(buf, BUFFER_LOCK_SHARE);
			page = BufferGetPage(buf);
			op = LsmPageGetOpaque(page);
			if (PageIsNew(page) || op->kind != LSM_PK_LOG || op->owner != slot->log_epoch)
			{
				LsmMetaPageData again;

				UnlockReleaseBuffer(buf);
				slot->loaded = false;

				/*
				 * On a standby a replayed flush resets the chain under us:
				 * start over.  If the metapage still names this epoch and
				 * head, the page is simply wrong (the metapage update and
				 * the head page's re-initialisation are one WAL record).
				 */
				LsmReadMeta(index, &again, NULL);
				if (again.log_epoch == slot->log_epoch && again.log_head == slot->log_head)
					ereport(ERROR,
							(errcode(ERRCODE_INDEX_CORRUPTED),
							 errmsg("index \"%s\" has a corrupted log page %u",
									RelationGetRelationName(index), blk),
							 errdetail("Expected a log page of epoch %u.", slot->log_epoch),
							 errhint("REINDEX the index.")));
				break;
			}
			lower = ((PageHeader) page)->pd_lower;
			next = op->next;
			if (lower > BLCKSZ || off > lower)
			{
				UnlockReleaseBuffer(buf);
				ereport(ERROR,
						(errcode(ERRCODE_INDEX_CORRUPTED),
						 errmsg("index \"%s\" has a corrupted log page %u",
								RelationGetRelationName(index), blk),
						 errhint("REINDEX the index.")));
			}
			copy = palloc(lower - off);
			memcpy(copy, (char *) page + off, lower - off);
			UnlockReleaseBuffer(buf);

			for (int pos = 0; pos < lower - off;)
			{
				uint16		len;

				memcpy(&len, copy + pos, sizeof(uint16));
				if (len == 0 || pos + LSM_LOG_ENTRY_HDR + len > lower - off)
					ereport(ERROR,
							(errcode(ERRCODE_INDEX_CORRUPTED),
							 errmsg("index \"%s\" has a corrupted log entry on page %u",
									RelationGetRelationName(index), blk),
							 errhint("REINDEX the index.")));
				LsmMemtableAddOrError(index, slot,
									  (uint8 *) copy + pos + LSM_LOG_ENTRY_HDR, len);
				pos += LSM_LOG_ENTRY_HDR + len;
			}
			pfree(copy);
			slot->log_tail = blk;
			slot->log_tail_off = lower;

			if (!BlockNumberIsValid(next))
				break;
			/* is the next page part of this epoch's chain? */
			buf = ReadBuffer(index, next);
			LockBuffer(buf, BUFFER_LOCK_SHARE);
			page = BufferGetPage(buf);
			op = LsmPageGetOpaque(page);
			if (!PageIsNew(page) && op->kind == LSM_PK_LOG && op->owner == slot->log_epoch)
			{
				UnlockReleaseBuffer(buf);
				blk = next;
				off = LSM_CONTENT_OFFSET;
				slot->log_pages++;
				continue;
			}
			UnlockReleaseBuffer(buf);
			break;
		}
		if (!slot->loaded)
			continue;
		slot->in_recovery = rec;

		/* On a standby, a flush may have been replayed meanwhile: recheck. */
		if (rec)
		{
			LsmMetaPageData again;

			LsmReadMeta(index, &again, NULL);
			if (again.log_epoch != slot->log_epoch || again.log_head != slot->log_head)
			{
				slot->loaded = false;
				continue;
			}
		}
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

		if (s == self || s->mt.nchunks == 0)
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
LsmEnsureChunkRoom(LsmSlot *slot, int keylen, bool may_evict)
{
	uint32		need = (uint32) keylen + 64;	/* node header + tower + align */

	if (slot->mt.cur_chunk != 0 && slot->mt.chunk_used + need <= LSM_CHUNK_SIZE)
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
			lsm_memtable_add_chunk(lsm_shared->arena, &slot->mt, chunk);
			return true;
		}
		if (!may_evict || !LsmEvictOne(slot))
			return false;
	}
	return false;
}

/*
 * Insert a key into the slot's memtable, getting chunks as needed.  ERRORs
 * if shared memory is exhausted; the slot is then marked unloaded so that it
 * is rebuilt from the log pages later.  REQUIRES: slot lock exclusive.
 */
void
LsmMemtableAddOrError(Relation index, LsmSlot *slot, const uint8 *key, int len)
{
	for (;;)
	{
		LsmStatus	st = lsm_memtable_insert(lsm_shared->arena, &slot->mt, key, len);

		if (st == LSM_OK)
			return;
		if (st == LSM_NEED_CHUNK)
		{
			if (LsmEnsureChunkRoom(slot, len, true))
				continue;
			slot->loaded = false;
			ereport(ERROR,
					(errcode(ERRCODE_OUT_OF_MEMORY),
					 errmsg("out of lsm_am shared memory for the memtable of index \"%s\"",
							RelationGetRelationName(index)),
					 errdetail("lsm_am.memory is %d MB.", lsm_memory_mb),
					 errhint("Raise lsm_am.memory (requires a restart) or lower the memtable_size of lsm indexes.")));
		}
		slot->loaded = false;
		LsmReportStatus(index, st, "inserting into the memtable");
	}
}
