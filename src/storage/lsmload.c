/*
 * lsmload.c — loading an index's slot from scratch without holding its lock.
 *
 * After a restart, an eviction, an ERROR that left the slot not loaded, or
 * when a standby's slot lacks a whole immutable chain, the slot's memtables
 * must be rebuilt from the log: up to a memtable's worth of log pages
 * (memtable_size, up to 1 GB) per chain.  Doing that under the slot's LWLock
 * would hold off interrupts for the whole replay (no statement_timeout, no
 * pg_cancel_backend) and make every other backend that wants the index wait
 * on the LWLock, uncancellably too.  So:
 *
 *  1. Under the slot lock (exclusive) the loader drops the slot's stale
 *     active memtable, notes which immutable chains the slot still has, sets
 *     the slot's loader marker to its pid, and lets the lock go.
 *  2. Without the lock it replays the active chain and every immutable chain
 *     the slot lacks into private memtables: their chunks come from the
 *     shared arena, but only this backend knows them (lsm_load below).  Every
 *     page checks for interrupts.
 *  3. Under the slot lock again it checks that the slot is still the one it
 *     prepared (generation, marker), installs the memtables with the tail
 *     position reached, leaves the slot loaded and in_recovery, clears the
 *     marker and wakes the waiters.  The caller's ordinary catch-up
 *     (lsmreplay.c) then adds what was appended meanwhile — on a standby the
 *     pages redo wrote; on a primary nothing, since every writer waits for
 *     the load — and clears in_recovery, or, after a promotion, sees the
 *     slot's log through the eyes of a primary.
 *
 * Others who need the slot meanwhile see the marker and sleep on the slot's
 * load_cv (LsmSlotLoadWait: wait event LsmSlotLoad, or Extension on
 * PostgreSQL 15), interruptibly, instead of building a second copy.  A
 * loader that fails (ERROR: PG_CATCH; FATAL or exit: a before_shmem_exit
 * callback) gives its chunks back to the arena, clears the marker and wakes
 * the waiters; neither path needs the slot lock (the marker is atomic, the
 * arena lock is a leaf), so it is safe wherever the error struck.  A waiter
 * that finds the marker's backend gone clears it itself.
 */
#include "postgres.h"

#include "access/xlog.h"
#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/procarray.h"

#include "storage/lsmreplay_int.h"

/* A waiter looks whether the loader still exists this often. */
#define LSM_LOAD_WAIT_CHECK_MS	1000

/* The load in progress in this backend (at most one). */
typedef struct LsmLoad
{
	bool		active;			/* memtables below are ours to free */
	int			slotno;
	uint32		generation;
	uint64		slot_instance;	/* the slot's instance when prepared */
	int			nhave;			/* immutable chains the slot had */
	uint32		have[LSM_MAX_IMM];
	/* private memtables */
	int			nimm;
	LsmImmutable imm[LSM_MAX_IMM];
	LsmMemtable mt;				/* the active chain's */
	/* what was replayed */
	uint64		instance_id;
	uint32		epoch;
	BlockNumber head;
	BlockNumber tail;
	uint16		tail_off;
	uint32		pages;
} LsmLoad;

static LsmLoad lsm_load;
static bool lsm_load_exit_registered = false;

/* Free the private memtables (the arena lock only). */
static void
LsmLoadFreeMemtables(LsmLoad *ld)
{
	for (int i = 0; i < ld->nimm; i++)
		LsmMemtableFree(&ld->imm[i].mt);
	ld->nimm = 0;
	LsmMemtableFree(&ld->mt);
}

/*
 * Give up the load in progress, if any: chunks back to the arena, marker
 * cleared, waiters woken.  Takes no slot lock (error and exit paths).
 */
static void
LsmLoadAbandon(void)
{
	LsmLoad    *ld = &lsm_load;
	LsmSlot    *slot;
	uint32		me = (uint32) MyProcPid;

	if (!ld->active)
		return;
	ld->active = false;
	LsmLoadFreeMemtables(ld);
	slot = &lsm_shared->slots[ld->slotno];
	(void) pg_atomic_compare_exchange_u32(&slot->loader, &me, 0);
	ConditionVariableBroadcast(&slot->load_cv);
}

/* before_shmem_exit: a FATAL or an exit in the middle of a load. */
static void
LsmLoadAtExit(int code, Datum arg)
{
	LsmLoadAbandon();
}

/* See lsmreplay_int.h. */
bool
LsmSlotLoadWait(int slotno)
{
	LsmSlot    *slot = &lsm_shared->slots[slotno];
	uint32		pid = pg_atomic_read_u32(&slot->loader);

	if (pid == 0 || pid == (uint32) MyProcPid)
		return false;
	/* prepared before the lock goes: the loader's broadcast cannot be missed */
	ConditionVariablePrepareToSleep(&slot->load_cv);
	LWLockRelease(LsmSlotLock(slotno));
	while (pg_atomic_read_u32(&slot->loader) == pid)
	{
		if (ConditionVariableTimedSleep(&slot->load_cv, LSM_LOAD_WAIT_CHECK_MS,
										LsmWaitEventSlotLoad()) &&
			BackendPidGetProc((int) pid) == NULL)
		{
			/* gone without clearing it (its exit callbacks did not run) */
			uint32		expected = pid;

			(void) pg_atomic_compare_exchange_u32(&slot->loader, &expected, 0);
		}
	}
	ConditionVariableCancelSleep();
	return true;
}

/*
 * Replay chain (epoch, head) from its start into mt.  Returns the result of
 * LsmReplayChain; *blk is then the last page reached.
 */
static LsmReplayResult
LsmLoadChain(Relation index, LsmSlot *slot, LsmMemtable *mt, uint32 epoch,
			 BlockNumber head, BlockNumber *blk, uint16 *off, uint32 *pages)
{
	*blk = head;
	*off = LSM_CONTENT_OFFSET;
	*pages = BlockNumberIsValid(head) ? 1 : 0;
	return LsmReplayChain(index, slot, mt, epoch, blk, off, pages, NULL);
}

/*
 * Step 2: replay, without the slot lock, every chain of the metapage the slot
 * needs into ld's private memtables.  Starts over when a chain moved under
 * it (a standby replayed a switch or a flush); on a primary nothing moves
 * while the slot is being loaded, so a page that is not of its chain there
 * is corruption.
 */
static void
LsmLoadBuild(Relation index, LsmSlot *slot, LsmLoad *ld)
{
	LsmMetaPageData *meta = palloc(sizeof(LsmMetaPageData));

	for (;;)
	{
		/* before reading: a promotion after this point is caught by the catch-up */
		bool		rec = RecoveryInProgress();
		bool		restart = false;
		BlockNumber blk;
		uint16		off;

		LsmLoadFreeMemtables(ld);
		LsmReadMeta(index, meta, NULL);
		ld->instance_id = meta->instance_id;

		for (int k = 0; k < (int) meta->nimm && !restart; k++)
		{
			LsmImmutable *im = &ld->imm[ld->nimm];
			bool		have = false;

			/* chains of another incarnation are no help */
			for (int i = 0; i < ld->nhave && ld->slot_instance == meta->instance_id; i++)
				have |= ld->have[i] == meta->imm[k].epoch;
			if (have)
				continue;
			memset(im, 0, sizeof(LsmImmutable));
			lsm_memtable_init(&im->mt);
			im->epoch = meta->imm[k].epoch;
			im->head = meta->imm[k].head;
			ld->nimm++;
			if (LsmLoadChain(index, slot, &im->mt, im->epoch, im->head,
							 &blk, &off, &im->pages) != LSM_REPLAY_END)
			{
				if (!rec)
					LsmReportCorruption(index, blk,
										"The page is not of the immutable log chain of epoch %u that reaches it.",
										im->epoch);
				restart = true;
			}
		}
		if (restart)
			continue;

		ld->epoch = meta->active.epoch;
		ld->head = meta->active.head;
		if (LsmLoadChain(index, slot, &ld->mt, ld->epoch, ld->head, &ld->tail,
						 &ld->tail_off, &ld->pages) != LSM_REPLAY_END)
		{
			LsmMetaPageData again;

			LsmReadMeta(index, &again, NULL);
			if (!rec && again.active.epoch == meta->active.epoch &&
				again.active.head == meta->active.head)
				LsmReportCorruption(index, ld->tail,
									"The page is not of the active log chain of epoch %u that reaches it.",
									meta->active.epoch);
			continue;
		}
		if (!BlockNumberIsValid(ld->head))
			ld->tail_off = 0;	/* an empty chain: as LsmSlotResetActive leaves it */
		pfree(meta);
		return;
	}
}

/*
 * Step 3: install ld's memtables in the slot.  Returns false (nothing
 * installed, the caller frees them) if the slot is no longer the one
 * prepared.  What may fail (an ERROR: a memtable to retire and no room in
 * held[]) comes before the first memtable changes hands, so an ERROR leaves
 * every private memtable to LsmLoadAbandon and none in two places.
 * REQUIRES: slot lock exclusive.
 */
static bool
LsmLoadInstall(LsmSlot *slot, LsmLoad *ld)
{
	if (slot->generation != ld->generation ||
		pg_atomic_read_u32(&slot->loader) != (uint32) MyProcPid)
		return false;
	if (slot->instance_id != ld->instance_id)
	{
		LsmSlotReset(slot);
		slot->instance_id = ld->instance_id;
	}
	LsmSlotResetActive(slot);

	/* immutable memtables, in epoch order; one the slot has meanwhile is freed */
	for (int k = 0; k < ld->nimm; k++)
	{
		LsmImmutable *im = &ld->imm[k];
		bool		have = false;
		int			pos;

		for (int i = 0; i < slot->nimm; i++)
			have |= slot->imm[i].epoch == im->epoch;
		if (have || slot->nimm >= LSM_MAX_IMM)
		{
			LsmMemtableFree(&im->mt);
			continue;
		}
		im->id = LsmNextMemtableId(slot);
		im->scans = 0;
		for (pos = slot->nimm; pos > 0 && slot->imm[pos - 1].epoch > im->epoch; pos--)
			slot->imm[pos] = slot->imm[pos - 1];
		slot->imm[pos] = *im;
		slot->nimm++;
		lsm_memtable_init(&im->mt);
	}
	ld->nimm = 0;
	/* the active memtable, with the position its chain was replayed to */
	slot->mt = ld->mt;
	lsm_memtable_init(&ld->mt);
	slot->log_epoch = ld->epoch;
	slot->log_head = ld->head;
	slot->log_tail = ld->tail;
	slot->log_tail_off = ld->tail_off;
	slot->log_pages = ld->pages;
	slot->loaded = true;
	slot->in_recovery = true;	/* the caller catches up what came meanwhile */
	return true;
}

/* See lsmreplay_int.h. */
void
LsmSlotLoad(Relation index, int slotno)
{
	LsmSlot    *slot = &lsm_shared->slots[slotno];
	LsmLoad    *ld = &lsm_load;

	Assert(!ld->active && LWLockHeldByMeInMode(LsmSlotLock(slotno), LW_EXCLUSIVE));
	if (!lsm_load_exit_registered)
	{
		before_shmem_exit(LsmLoadAtExit, (Datum) 0);
		lsm_load_exit_registered = true;
	}

	/* 1. prepare, under the slot lock */
	memset(ld, 0, sizeof(LsmLoad));
	lsm_memtable_init(&ld->mt);
	ld->slotno = slotno;
	ld->generation = slot->generation;
	ld->slot_instance = slot->instance_id;
	for (int i = 0; i < slot->nimm; i++)
		ld->have[ld->nhave++] = slot->imm[i].epoch;
	LsmSlotResetActive(slot);	/* stale: its arena is better used by ours */
	pg_atomic_write_u32(&slot->loader, (uint32) MyProcPid);
	ld->active = true;
	LWLockRelease(LsmSlotLock(slotno));

	PG_TRY();
	{
		bool		warm = false;

		/* 2. replay, without it */
		LsmLoadBuild(index, slot, ld);

		/* 3. swap in, under it */
		LWLockAcquire(LsmSlotLock(slotno), LW_EXCLUSIVE);
		if (LsmLoadInstall(slot, ld))
		{
			ld->active = false;
			pg_atomic_write_u32(&slot->loader, 0);

			/*
			 * The index's first use since the start (or since its slot went
			 * to another index): a worker puts its runs' metadata pages into
			 * the shared cache, which lookups would otherwise read one by
			 * one (storage/lsmruncache.c, "Warming").  Not on a standby,
			 * which runs no workers.
			 */
			warm = LsmMetaCacheEnabled() && !RecoveryInProgress() &&
				!RelationUsesLocalBuffers(index);
			if (warm)
				LsmPendingSet(slot, LSM_WORK_WARM);
		}
		LWLockRelease(LsmSlotLock(slotno));
		/* not installed: the caller starts over */
		LsmLoadAbandon();
		ConditionVariableBroadcast(&slot->load_cv);
		if (warm && lsm_wake_workers != NULL)
			lsm_wake_workers(MyDatabaseId);
	}
	PG_CATCH();
	{
		LsmLoadAbandon();
		PG_RE_THROW();
	}
	PG_END_TRY();
}
