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
#include "pgstat.h"
#include "storage/latch.h"
#include "storage/shmem.h"
#include "utils/timestamp.h"
#include "utils/memutils.h"

#include "shmem/lsm_shmem.h"

LsmShared  *lsm_shared = NULL;

#define LSM_TRANCHE "lsm_am"

/* set by the workers' module at start-up (maint/lsmworkertab.c) */
LsmWakeWorkersFn lsm_wake_workers = NULL;

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
			pg_atomic_init_u32(&lsm_shared->slots[i].loader, 0);
			ConditionVariableInit(&lsm_shared->slots[i].load_cv);
		}
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

/*
 * Give a memtable's chunks back to the arena.  REQUIRES: its slot's lock, or
 * the memtable private to this backend (storage/lsmload.c).
 */
void
LsmMemtableFree(LsmMemtable *mt)
{
	if (mt->nchunks > 0 || mt->filter != 0)	/* a filter alone is freed too */
	{
		LWLockAcquire(lsm_shared->arena_lock, LW_EXCLUSIVE);
		lsm_memtable_release(lsm_shared->arena, mt);
		LWLockRelease(lsm_shared->arena_lock);
	}
	lsm_memtable_init(mt);
}

/* Forget the active memtable (and with it the slot's log position). */
void
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

/* See lsm_shmem.h. */
void
LsmSlotResetLookupCounters(LsmSlot *slot)
{
	pg_atomic_write_u64(&slot->lookups, 0);
	pg_atomic_write_u64(&slot->filter_probes, 0);
	pg_atomic_write_u64(&slot->filter_negatives, 0);
	pg_atomic_write_u64(&slot->filter_false_positives, 0);
	pg_atomic_write_u64(&slot->data_pages_read, 0);
}

/* See lsm_shmem.h. */
void
LsmSlotResetStats(LsmSlot *slot)
{
	slot->stalls_slowdown = slot->stalls_stop = slot->stall_us = 0;
	slot->self_flushes = 0;
	slot->wal_log = slot->wal_flush = slot->wal_compact = 0;
	memset(slot->level_pages, 0, sizeof(slot->level_pages));
	LsmSlotResetLookupCounters(slot);
}

/*
 * Find or assign a slot for the index without waiting: the slot number, or
 * -1 when every slot is held (pinned by a scan, a flush or a load).
 */
static int
LsmSlotTryAssign(Relation index, uint32 *generation)
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
				(s->pins > 0 || LsmSlotScanPinned(s) ||
				 pg_atomic_read_u32(&s->loader) != 0))
				LWLockRelease(LsmSlotLock(victim));
			else if (s->pins == 0 && LWLockHeldByMe(LsmSlotLock(victim)))
			{
				LsmSlotReset(s);
				s->instance_id = 0;
				s->l0_runs = 0;
				s->level_debt = 0;
				s->vacuum_waiting = false;
				LsmSlotResetStats(s);
				s->last_flush_at = s->last_compaction_at = 0;
				memset(&s->delay, 0, sizeof(s->delay));
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
	return found;
}

/*
 * Find or assign a slot for the index.  Returns the slot number; the caller
 * then locks it and checks the generation.  When every slot is held (more
 * lsm indexes scanned, flushed or loaded at this moment than
 * lsm_am.max_indexes) wait for one, interruptibly and holding no lock, like
 * a btree insert waits for a buffer: up to LSM_SLOT_WAIT_MS, then ERROR.
 * REQUIRES: no LWLock held.
 */
int
LsmSlotAssign(Relation index, uint32 *generation)
{
	static uint32 wait_event_slot = 0;
	TimestampTz start = 0;

	for (;;)
	{
		int			slot = LsmSlotTryAssign(index, generation);

		if (slot >= 0)
			return slot;
		if (start == 0)
			start = GetCurrentTimestamp();
		else if (TimestampDifferenceExceeds(start, GetCurrentTimestamp(),
											LSM_SLOT_WAIT_MS))
			ereport(ERROR,
					(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
					 errmsg("too many lsm indexes in use at once"),
					 errdetail("All %d memtable slots stayed held by scans, flushes or loads of other lsm indexes for %d seconds.",
							   lsm_shared->nslots, LSM_SLOT_WAIT_MS / 1000),
					 errhint("Raise lsm_am.max_indexes (requires a restart), or close the cursors and transactions that keep lsm index scans open.")));
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 10, LsmWaitEventNamed("LsmSlotWait", &wait_event_slot));
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
	}
}

/* See lsm_shmem.h. */
int
LsmSlotLookup(Relation index, uint32 *generation)
{
	Oid			spc = LsmRelSpcOid(index);
	Oid			rn = LsmRelFileNumber(index);
	int			found = -1;

	LWLockAcquire(lsm_shared->map_lock, LW_SHARED);
	for (int i = 0; i < lsm_shared->nslots; i++)
	{
		LsmSlot    *s = &lsm_shared->slots[i];

		if (s->dbid == MyDatabaseId && s->spcid == spc && s->relnumber == rn)
		{
			found = i;
			*generation = s->generation;
			break;
		}
	}
	LWLockRelease(lsm_shared->map_lock);
	return found;
}

/*
 * Drop the memtable of some other idle slot to free arena chunks (never
 * waiting for another slot's lock): the least recently used first, and if
 * its lock is busy the next, up to LSM_EVICT_TRIES of them.  Its entries are
 * in its log pages; its next user rebuilds it from there.
 */
#define LSM_EVICT_TRIES 8

static bool
LsmEvictOne(LsmSlot *self)
{
	uint64		after = 0;		/* candidates tried so far were used up to this */

	for (int attempt = 0; attempt < LSM_EVICT_TRIES; attempt++)
	{
		int			best = -1;
		uint64		oldest = PG_UINT64_MAX;
		LsmSlot    *b;

		for (int i = 0; i < lsm_shared->nslots; i++)
		{
			LsmSlot    *s = &lsm_shared->slots[i];

			if (s == self || s->pins > 0 || LsmSlotScanPinned(s) ||
				pg_atomic_read_u32(&s->loader) != 0 ||
				(s->mt.nchunks == 0 && s->nimm == 0) ||
				(attempt > 0 && s->last_used <= after))
				continue;
			if (s->last_used < oldest)
			{
				oldest = s->last_used;
				best = i;
			}
		}
		if (best < 0)
			return false;
		after = oldest;
		if (!LWLockConditionalAcquire(LsmSlotLock(best), LW_EXCLUSIVE))
			continue;
		b = &lsm_shared->slots[best];
		if (b->pins > 0 || LsmSlotScanPinned(b) || pg_atomic_read_u32(&b->loader) != 0)
		{
			LWLockRelease(LsmSlotLock(best));
			continue;
		}
		LsmSlotReset(b);
		LWLockRelease(LsmSlotLock(best));
		return true;
	}
	return false;
}

/* Bytes of the arena (lsm_am.memory, in whole chunks). */
uint64
LsmArenaBytes(void)
{
	return (uint64) LsmArenaChunks() * LSM_CHUNK_SIZE;
}

/*
 * Is the arena short of chunks?  Fewer than an eighth of them (at least 2)
 * free.  Read without the arena lock: a hint.
 */
bool
LsmArenaShort(void)
{
	uint32		total = LsmArenaChunks();

	return lsm_arena_free_chunks(lsm_shared->arena) < Max(2, total / 8);
}

/*
 * The arena is short: ask for the largest active memtable of some other
 * slot to be switched and flushed (LSM_WORK_SWITCH), as RocksDB's write
 * buffer manager does.  Its workers find the request (the launcher looks at
 * least every lsm_am.worker_naptime; the caller may wake them).  Returns the
 * database of the slot asked, InvalidOid if none had a memtable to give or
 * the largest was asked already.  Reads the other slots without their
 * locks: a hint, which LsmMaintain checks under the lock.
 */
Oid
LsmArenaRelieve(LsmSlot *self)
{
	int			best = -1;
	uint32		most = 0;

	for (int i = 0; i < lsm_shared->nslots; i++)
	{
		LsmSlot    *s = &lsm_shared->slots[i];

		if (s == self || !OidIsValid(s->dbid) || s->nimm >= LSM_MAX_IMM)
			continue;
		if (s->mt.nchunks > most)
		{
			most = s->mt.nchunks;
			best = i;
		}
	}
	if (best < 0 ||
		(pg_atomic_read_u32(&lsm_shared->slots[best].pending) & LSM_WORK_SWITCH) != 0)
		return InvalidOid;
	LsmPendingSet(&lsm_shared->slots[best], LSM_WORK_SWITCH | LSM_WORK_FLUSH);
	return lsm_shared->slots[best].dbid;
}

/*
 * Make sure the memtable can take a key of keylen bytes without asking for a
 * chunk: add a chunk now if the current one is too full.  Returns false if
 * the arena has no chunk left (after evicting others when may_evict; slot,
 * the memtable's, is never evicted).  REQUIRES: slot lock exclusive, or mt
 * private to this backend (storage/lsmload.c).
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

/* an arena smaller than this (16 MB) spends no chunk on key filters */
#define LSM_FILTER_MIN_ARENA_CHUNKS	256

/*
 * Give an empty memtable a key filter (lsm_memtable_add_filter; full-key
 * point lookups then skip the memtable when it does not hold the key) if its
 * index's memtables are at least 16 chunks and the arena is at least 16 MB
 * and not short (a small arena is a write buffer first).  The filter is
 * 1/16 of the memtable's size in chunks (about 12 bits an int8 key at the
 * default 4 MB; a filter of one fixed chunk would fill up, and answer
 * "maybe" for everything, in a memtable of a few hundred thousand keys), at
 * most LSM_MEMTABLE_MAX_FILTER_CHUNKS and at most 1/64 of the arena, and as
 * many of those as the arena has free.  The chunks are taken under the
 * arena lock and zeroed after it is released (up to 4 MB at a 64 MB
 * memtable; every backend that needs a chunk takes that lock).  Not before
 * the memtable's first data chunk: a memtable holding only a filter is one
 * eviction skips (it has no data to drop), so its chunks would stay taken if
 * the arena then ran out.  With no chunk free the memtable goes without, and
 * lookups search it.
 * suffix: the bytes at the end of an entry that are not key (the heap TID).
 * REQUIRES: slot lock exclusive (or a private memtable).
 */
void
LsmMemtableAddFilter(LsmMemtable *mt, int memtable_kb, uint32 suffix)
{
	uint64		want = (uint64) memtable_kb * 1024 / LSM_CHUNK_SIZE / 16;
	uint32		chunks[LSM_MEMTABLE_MAX_FILTER_CHUNKS];
	uint32		n = 0;

	if (mt->nentries != 0 || mt->nchunks == 0 || mt->filter != 0 || want < 1 ||
		LsmArenaChunks() < LSM_FILTER_MIN_ARENA_CHUNKS || LsmArenaShort())
		return;
	want = Min(want, Min(Max(LsmArenaChunks() / 64, 1), LSM_MEMTABLE_MAX_FILTER_CHUNKS));
	LWLockAcquire(lsm_shared->arena_lock, LW_EXCLUSIVE);
	while (n < want && lsm_arena_alloc_chunk(lsm_shared->arena, &chunks[n]) == LSM_OK)
		n++;
	LWLockRelease(lsm_shared->arena_lock);
	if (n == 0 ||
		lsm_memtable_add_filter(lsm_shared->arena, mt, suffix, chunks, n) == LSM_OK)
		return;
	/* cannot happen (checked above, chunks fresh from the arena): give them back */
	LWLockAcquire(lsm_shared->arena_lock, LW_EXCLUSIVE);
	for (uint32 i = 0; i < n; i++)
		(void) lsm_arena_free_chunk(lsm_shared->arena, chunks[i]);
	LWLockRelease(lsm_shared->arena_lock);
}

/* The arena has no chunk left for index's memtable. */
void
LsmMemtableOutOfMemory(Relation index)
{
	ereport(ERROR,
			(errcode(ERRCODE_OUT_OF_MEMORY),
			 errmsg("out of lsm_am shared memory for the memtable of index \"%s\"",
					RelationGetRelationName(index)),
			 errdetail("lsm_am.memory is %d MB, and no memtable could be flushed or evicted to make room (a memtable an open scan reads stays).", lsm_memory_mb),
			 errhint("Raise lsm_am.memory (requires a restart) or lower the memtable_size of lsm indexes.")));
}

