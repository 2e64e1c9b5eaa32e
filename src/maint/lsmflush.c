/*
 * lsmflush.c — memtable switches and flushes: the active memtable becomes
 * immutable (a new log chain starts), and the oldest immutable memtable is
 * written into a level-0 run and published in one metapage record, its log
 * chain freed.  Locks and their order: lsmmaint.c's header.
 *
 * An immutable memtable is read by its flusher without the slot lock: it
 * never changes, and slot->pins keeps it (and the slot) from being freed or
 * evicted until the flush is published.
 */
#include "postgres.h"

#include "access/xact.h"
#include "access/xlog.h"
#include "executor/instrument.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "maint/lsmmaint_int.h"
#include "lsmfault.h"

static int
LsmSlotNo(LsmSlot *slot)
{
	return slot - lsm_shared->slots;
}

/* Queue work for the index's workers. */
static void
LsmQueueWork(LsmSlot *slot, uint32 bits)
{
	LsmPendingSet(slot, bits);
	LsmWakeWorkers(slot->dbid);
}

/*
 * Make the active memtable immutable and start a new log chain for inserts
 * (LsmLogStartChain: one metapage record), and queue its flush.  REQUIRES:
 * slot lock exclusive and loaded, an active memtable with entries,
 * slot->nimm < LSM_MAX_IMM.
 */
void
LsmSwitchMemtable(Relation index, LsmSlot *slot)
{
	LsmLogStartChain(index, slot);
	LSM_FAULT(LSM_FAULT_MEMTABLE_SWITCH);
	LsmQueueWork(slot, LSM_WORK_FLUSH);
}

/* Pages a flush of mt will take, roughly (the reservation grows if short). */
static uint32
LsmFlushEstimate(const LsmMemtable *mt)
{
	double		bytes = (double) mt->key_bytes + 4.0 * mt->nentries;
	double		data = bytes / (LSM_CONTENT_CAP * 0.8) + 1;

	return (uint32) Min(data * 1.05 + 4, (double) MaxBlockNumber / 4);
}

/* Stream a memtable into a run writer, leaving out dead entries. */
static void
LsmFlushMemtable(LsmRunWriter *w, const LsmMemtable *mt, LsmDeadCallback dead,
				 void *dead_state, double *removed, uint64 *kept)
{
	LsmMemtableIter it;

	for (lsm_memtable_seek(lsm_shared->arena, mt, NULL, 0, &it);
		 lsm_memtable_iter_valid(&it) && !w->stopped;
		 lsm_memtable_iter_next(&it))
	{
		const uint8 *key;
		size_t		len;

		lsm_memtable_iter_key(&it, &key, &len);
		if (LsmEntryIsDead(key, len, dead, dead_state, removed))
			continue;
		LsmRunWriterAdd(w, key, (int) len);
		(*kept)++;
	}
}

/* Undo a flusher's pin (error paths and abandonment). */
static void
LsmUnpin(int slotno, uint32 generation)
{
	LsmSlot    *slot = &lsm_shared->slots[slotno];

	LWLockAcquire(LsmSlotLock(slotno), LW_EXCLUSIVE);
	if (slot->generation == generation && slot->pins > 0)
		slot->pins--;
	LWLockRelease(LsmSlotLock(slotno));
}

/*
 * Flush the oldest immutable memtable into a level-0 run, leaving out
 * entries dead() reports (VACUUM), and publish it: the run appears, the
 * immutable memtable and its log chain disappear, in one metapage record.
 * Returns false if there was nothing to flush, the manifest is full, or
 * stop() asked to give up.  REQUIRES: flush lock.
 */
static bool
LsmFlushOldestGuts(Relation index, LsmDeadCallback dead, void *dead_state,
				   double *removed, const LsmStop *stop)
{
	LsmSlot    *slot = LsmSlotAcquire(index, LW_EXCLUSIVE);
	int			slotno = LsmSlotNo(slot);
	uint32		generation = slot->generation;
	LsmImmutable im = slot->imm[0];
	LsmMetaPageData *meta;
	LsmRunWriter w;
	LsmRunRef	ref;
	uint64		kept = 0;
	BlockNumber *chain = NULL;
	int			nchain = 0;
	int64		wal0 = pgWalUsage.wal_bytes;
	Buffer		metabuf;
	GenericXLogState *state;
	LsmMetaPageData *m;
	bool		go = false;
	LsmJob		job;

	if (slot->nimm == 0)
	{
		LsmSlotRelease(index, slot);
		return false;
	}
	slot->pins++;
	LsmSlotRelease(index, slot);

	meta = palloc(sizeof(LsmMetaPageData));
	memset(&w, 0, sizeof(w));
	PG_TRY();
	{
		LsmReadMeta(index, meta, NULL);
		if (meta->nimm == 0 || meta->imm[0].epoch != im.epoch)
			elog(ERROR, "lsm_am: immutable memtable of index \"%s\" is not the oldest",
				 RelationGetRelationName(index));
		/* a full manifest: compaction must make room first */
		if (meta->nruns < LSM_MAX_RUNS)
		{
			LsmJobBegin(&job, index, LSM_JOB_FLUSH, NULL, 0, im.mt.nentries, 0,
						LsmFlushEstimate(&im.mt));
			LsmRunWriterBegin(&w, index, LSM_RESV_FLUSH, LsmFlushEstimate(&im.mt),
							  im.mt.nentries, true);
			w.stop = stop;
			LsmFlushMemtable(&w, &im.mt, dead, dead_state, removed, &kept);
			if (w.stopped)
			{
				LsmRunWriterAbandon(&w);
				LsmReserveCancel(index, LSM_RESV_FLUSH);
				LsmJobStop(index);
			}
			else
			{
				if (kept > 0)
					LsmRunWriterFinish(&w, &ref, 0);
				else
					LsmRunWriterAbandon(&w);
				nchain = LsmCollectChain(index, im.epoch, im.head, &chain);
				LSM_FAULT(LSM_FAULT_FLUSH_BEFORE_PUBLISH);
				go = true;
			}
		}
	}
	PG_CATCH();
	{
		LsmRunWriterAbandon(&w);
		LsmUnpin(slotno, generation);
		PG_RE_THROW();
	}
	PG_END_TRY();
	if (!go)
	{
		LsmUnpin(slotno, generation);
		pfree(meta);
		return false;
	}

	/* publish */
	LWLockAcquire(LsmSlotLock(slotno), LW_EXCLUSIVE);
	Assert(slot->generation == generation && slot->pins > 0);
	metabuf = LsmLockMeta(index);
	state = GenericXLogStart(index);
	m = LsmPageGetMeta(GenericXLogRegisterBuffer(state, metabuf, 0));
	if (m->nimm == 0 || m->imm[0].epoch != im.epoch || m->nruns >= LSM_MAX_RUNS)
	{
		GenericXLogAbort(state);
		UnlockReleaseBuffer(metabuf);
		slot->pins--;
		LWLockRelease(LsmSlotLock(slotno));
		elog(ERROR, "lsm_am: manifest of index \"%s\" changed during a flush",
			 RelationGetRelationName(index));
	}
	if (kept > 0)
	{
		m->runs[m->nruns++] = ref;
		m->pages_flushed += ref.npages;
	}
	LsmReserveFinish(m, LSM_RESV_FLUSH, kept > 0 ? ref.npages : 0);
	memmove(&m->imm[0], &m->imm[1], sizeof(LsmLogChain) * (LSM_MAX_IMM - 1));
	m->imm[LSM_MAX_IMM - 1].epoch = 0;
	m->imm[LSM_MAX_IMM - 1].head = InvalidBlockNumber;
	m->nimm--;
	/* nobody reads a retired log chain: its pages are free at once */
	for (int i = 0; i < nchain; i++)
		LsmFreeAdd(m, chain[i], 1, 0);
	m->nflushes++;
	slot->l0_runs = LsmCountLevel0(m);
	GenericXLogFinish(state);
	UnlockReleaseBuffer(metabuf);

	if (slot->nimm > 0 && slot->imm[0].epoch == im.epoch)
	{
		LsmMemtableRetire(slot, &slot->imm[0].mt, slot->imm[0].id, slot->imm[0].scans);
		memmove(&slot->imm[0], &slot->imm[1], sizeof(LsmImmutable) * (slot->nimm - 1));
		slot->nimm--;
	}
	slot->pins--;
	slot->wal_flush += pgWalUsage.wal_bytes - wal0;
	if (kept > 0)
		slot->level_pages[0] += ref.npages;
	slot->last_flush_at = GetCurrentTimestamp();
	if (!LsmIsWorker())
		slot->self_flushes++;
	LWLockRelease(LsmSlotLock(slotno));
	LSM_FAULT(LSM_FAULT_FLUSH_AFTER_PUBLISH);
	if (LsmIsWorker())
		pg_atomic_fetch_or_u32(&slot->pending, LSM_WORK_COMPACT);	/* our own LsmMaintain goes on */
	else
		LsmQueueWork(slot, LSM_WORK_COMPACT);	/* a worker may compact now */
	ConditionVariableBroadcast(&slot->cv);
	if (kept > 0)
		LsmRunCacheWarm(index, meta, &ref, 1);	/* level 0: filters too */
	LsmJobEnd(&job, index, &ref, kept > 0 ? 1 : 0);
	if (chain)
		pfree(chain);
	pfree(meta);
	return true;
}

/*
 * Flush everything: switch the active memtable and flush every immutable
 * one.  REQUIRES: flush lock.
 */
void
LsmFlushAll(Relation index, LsmDeadCallback dead, void *dead_state, double *removed)
{
	for (;;)
	{
		LsmSlot    *slot = LsmSlotAcquire(index, LW_EXCLUSIVE);
		bool		active = slot->mt.nentries > 0;
		int			nimm = slot->nimm;

		if (active && nimm < LSM_MAX_IMM)
		{
			LsmSwitchMemtable(index, slot);
			nimm++;
			active = false;
		}
		LsmSlotRelease(index, slot);
		if (nimm == 0 && !active)
			return;
		if (!LsmFlushOldest(index, dead, dead_state, removed, NULL))
		{
			/* the manifest is full: compact, then go on */
			LsmCompactLock(index);
			if (!LsmCompactOnce(index, NULL))
			{
				LsmCompactUnlock(index);
				ereport(ERROR,
						(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
						 errmsg("index \"%s\" has too many sorted runs to flush",
								RelationGetRelationName(index)),
						 errhint("Run lsm_am.compact() on the index, or REINDEX it.")));
			}
			LsmCompactUnlock(index);
		}
	}
}

bool
LsmFlushOldest(Relation index, LsmDeadCallback dead, void *dead_state,
			   double *removed, const LsmStop *stop)
{
	bool		result;

	LSM_IN_CONTEXT(LsmFlushOldestGuts(index, dead, dead_state, removed, stop));
	return result;
}
