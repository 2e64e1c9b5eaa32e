/*
 * lsmmaint.c — maintenance of an lsm index: memtable switches, flushes of
 * immutable memtables into level-0 runs, and compactions chosen by the
 * core's picker (leveled, tiered or lazy leveling).
 *
 * Who does it: background workers (lsmworker.c) call LsmMaintain; a backend
 * does the same work itself only when no worker can be had (backpressure
 * path in LsmInsertBatch) or when asked to (lsm_am.flush, lsm_am.compact,
 * VACUUM).
 *
 * Locks, in this order:
 *  - flush lock (heavyweight page lock on block 0 of the index): one flusher
 *    per index;
 *  - compaction lock (heavyweight page lock on block 1): one compaction per
 *    index; flushes and compactions run concurrently, each in its own
 *    reservation (lsmstore.c);
 *  - the slot LWLock, held only for switches and for the moment of
 *    publication, never while run pages are written;
 *  - the metapage buffer lock.
 * VACUUM takes both heavyweight locks, after asking running maintenance to
 * yield (slot->vacuum_waiting), so no merge in flight can carry a TID VACUUM
 * removes into a new run.
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
#include "storage/lmgr.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "maint/lsm_maint.h"

#define LSM_FLUSH_LOCK_BLK		0
#define LSM_COMPACT_LOCK_BLK	1

/* LsmShrinkRelocating: how long to try for the index's lock (5 s) */
#define LSM_SHRINK_LOCK_TRIES	100
#define LSM_SHRINK_LOCK_WAIT_US 50000

void
LsmFlushLock(Relation index)
{
	LockPage(index, LSM_FLUSH_LOCK_BLK, ExclusiveLock);
}

bool
LsmFlushLockConditional(Relation index)
{
	return ConditionalLockPage(index, LSM_FLUSH_LOCK_BLK, ExclusiveLock);
}

void
LsmFlushUnlock(Relation index)
{
	UnlockPage(index, LSM_FLUSH_LOCK_BLK, ExclusiveLock);
}

void
LsmCompactLock(Relation index)
{
	LockPage(index, LSM_COMPACT_LOCK_BLK, ExclusiveLock);
}

bool
LsmCompactLockConditional(Relation index)
{
	return ConditionalLockPage(index, LSM_COMPACT_LOCK_BLK, ExclusiveLock);
}

void
LsmCompactUnlock(Relation index)
{
	UnlockPage(index, LSM_COMPACT_LOCK_BLK, ExclusiveLock);
}

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
			LsmWorkerReportActivity("flushing", index);
			LsmRunWriterBegin(&w, index, LSM_RESV_FLUSH, LsmFlushEstimate(&im.mt),
							  im.mt.nentries, true);
			w.stop = stop;
			LsmFlushMemtable(&w, &im.mt, dead, dead_state, removed, &kept);
			if (w.stopped)
			{
				LsmRunWriterAbandon(&w);
				LsmReserveCancel(index, LSM_RESV_FLUSH);
			}
			else
			{
				if (kept > 0)
					LsmRunWriterFinish(&w, &ref, 0);
				else
					LsmRunWriterAbandon(&w);
				nchain = LsmCollectChain(index, im.epoch, im.head, &chain);
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
	if (!LsmIsWorker())
		slot->self_flushes++;
	LWLockRelease(LsmSlotLock(slotno));
	if (LsmIsWorker())
		pg_atomic_fetch_or_u32(&slot->pending, LSM_WORK_COMPACT);	/* our own LsmMaintain goes on */
	else
		LsmQueueWork(slot, LSM_WORK_COMPACT);	/* a worker may compact now */
	ConditionVariableBroadcast(&slot->cv);
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

/* ------------------------------------------------------------------------
 * Compaction
 * ------------------------------------------------------------------------ */

/* Is a flush or compaction of this index due or running? */
static bool
LsmWorkPendingGuts(Relation index)
{
	LsmSlot    *slot = LsmSlotAcquire(index, LW_SHARED);
	bool		pending = slot->nimm > 0;
	LsmMetaPageData *meta;
	LsmPick    *pick;

	LsmSlotRelease(index, slot);
	if (pending)
		return true;
	if (!LsmFlushLockConditional(index))
		return true;
	LsmFlushUnlock(index);
	if (!LsmCompactLockConditional(index))
		return true;
	LsmCompactUnlock(index);
	meta = palloc(sizeof(LsmMetaPageData));
	pick = palloc(sizeof(LsmPick));
	LsmReadMeta(index, meta, NULL);
	pending = meta->nimm > 0 || LsmPickFor(index, meta, pick);
	pfree(meta);
	pfree(pick);
	return pending;
}

/* After a compaction: refresh the slot's view and wake stalled inserts. */
static void
LsmCompactionDone(Relation index, const LsmMetaPageData *m)
{
	LsmSlot    *slot = LsmSlotAcquire(index, LW_EXCLUSIVE);

	slot->l0_runs = LsmCountLevel0(m);
	LsmSlotRelease(index, slot);
	ConditionVariableBroadcast(&slot->cv);
}

/*
 * Replace the runs inputs[0..nin) by the runs outs[0..nouts) (none if no
 * entry was left) in one metapage record; their pages are freed once no
 * snapshot can still read them.  The last output is in the compaction
 * reservation, which ends; the others are pieces held on the free list
 * (lsmpiece.c), taken off it.  A MOVE passes outs = NULL, nin = 1 and the
 * new level; a relocation (LsmRelocateRun) passes relocated and one run,
 * and is not counted as a compaction.
 */
static void
LsmPublishCompaction(Relation index, const LsmRunRef *inputs, int nin,
					 const LsmRunRef *outs, int nouts, int move_level,
					 bool relocated)
{
	Buffer		metabuf = LsmLockMeta(index);
	GenericXLogState *state = GenericXLogStart(index);
	LsmMetaPageData *m = LsmPageGetMeta(GenericXLogRegisterBuffer(state, metabuf, 0));
	LsmMetaPageData *copy;
	uint64		stamp = LsmRetireStamp();
	int			found = 0;
	int			keep = 0;

	for (int i = 0; i < (int) m->nruns; i++)
	{
		bool		input = false;

		for (int j = 0; j < nin; j++)
			if (m->runs[i].run_id == inputs[j].run_id)
				input = true;
		if (!input)
		{
			m->runs[keep++] = m->runs[i];
			continue;
		}
		found++;
		if (outs == NULL)
		{
			m->runs[i].level = move_level;
			m->runs[keep++] = m->runs[i];
		}
		else
		{
			LsmFreeAdd(m, m->runs[i].start, m->runs[i].npages, stamp);
			/* a copy keeps the original's place (age) in the manifest */
			if (relocated)
				m->runs[keep++] = outs[0];
		}
	}
	if (found != nin || (outs != NULL && !relocated && keep + nouts > LSM_MAX_RUNS))
	{
		GenericXLogAbort(state);
		UnlockReleaseBuffer(metabuf);
		elog(ERROR, "lsm_am: runs of index \"%s\" changed during a compaction",
			 RelationGetRelationName(index));
	}
	m->nruns = keep;
	if (outs == NULL)
		m->nmoves++;
	else
	{
		if (!relocated)
		{
			for (int j = 0; j < nouts; j++)
			{
				m->runs[m->nruns++] = outs[j];
				m->pages_compacted += outs[j].npages;
			}
			m->nmerges++;
		}
		if (nouts > 1)
			LsmPiecesTake(m, outs, nouts - 1);
		LsmReserveFinish(m, LSM_RESV_COMPACT, nouts > 0 ? outs[nouts - 1].npages : 0);
	}
	copy = palloc(sizeof(LsmMetaPageData));
	memcpy(copy, m, sizeof(LsmMetaPageData));
	GenericXLogFinish(state);
	UnlockReleaseBuffer(metabuf);
	LsmCompactionDone(index, copy);
	pfree(copy);
}

/*
 * Run one compaction the picker chooses.  Returns false if there was
 * nothing to do or stop() made it give up.  REQUIRES: compaction lock.
 */
static bool
LsmCompactOnceGuts(Relation index, const LsmStop *stop)
{
	LsmMetaPageData *meta = palloc(sizeof(LsmMetaPageData));
	LsmPick    *pick = palloc(sizeof(LsmPick));
	LsmRunRef  *inputs;
	LsmMergeOut out;
	int64		wal0 = pgWalUsage.wal_bytes;
	LsmSlot    *slot;
	char		what[64];

	LsmReadMeta(index, meta, NULL);
	if (!LsmPickFor(index, meta, pick))
	{
		pfree(meta);
		pfree(pick);
		return false;
	}
	inputs = palloc(sizeof(LsmRunRef) * pick->ninputs);
	for (uint32 i = 0; i < pick->ninputs; i++)
		inputs[i] = meta->runs[pick->inputs[i]];

	if (pick->kind == LSM_PICK_MOVE)
		LsmPublishCompaction(index, inputs, 1, NULL, 0, pick->output_level, false);
	else
	{
		snprintf(what, sizeof(what), "compacting %u runs into level %u of",
				 pick->ninputs, pick->output_level);
		LsmWorkerReportActivity(what, index);
		/* leveled: the output is cut into pieces (lsmpiece.c) */
		out.piece_pages = LsmPiecePages(index, meta, pick->output_level);
		out.max_pieces = LsmPieceLimit(meta, pick->ninputs);
		if (!LsmMergeRuns(index, inputs, pick->ninputs, pick->output_level, stop,
						  NULL, NULL, NULL, &out))
		{
			pfree(meta);
			pfree(pick);
			return false;
		}
		LsmPublishCompaction(index, inputs, pick->ninputs, out.runs, out.nruns,
							 0, false);
	}
	slot = LsmSlotAcquire(index, LW_EXCLUSIVE);
	slot->wal_compact += pgWalUsage.wal_bytes - wal0;
	LsmSlotRelease(index, slot);
	pfree(meta);
	pfree(pick);
	return true;
}

/*
 * Copy a run to the lowest free extent that holds it, if that lies below
 * it, and publish the copy (a new run id: the run cache is keyed by id) in
 * place of the original, whose pages are retired like a compaction's
 * inputs.  Lets the tail that the original occupied be truncated.  Returns
 * true if the run moved.  REQUIRES: compaction lock.
 */
static bool
LsmRelocateRun(Relation index, const LsmRunRef *ref)
{
	uint32		run_id;
	BlockNumber start = LsmReserveBelow(index, LSM_RESV_COMPACT, ref->npages,
										ref->start, &run_id);
	LsmRunRef	copy = *ref;

	if (!BlockNumberIsValid(start))
		return false;
	LsmWorkerReportActivity("relocating a run of", index);
	for (uint32 rel = 0; rel < ref->npages; rel++)
	{
		Buffer		src = ReadBuffer(index, ref->start + rel);
		Buffer		dst;
		Page		page;

		LockBuffer(src, BUFFER_LOCK_SHARE);
		page = BufferGetPage(src);
		if (PageIsNew(page) || LsmPageGetOpaque(page)->page_id != LSM_PAGE_ID ||
			LsmPageGetOpaque(page)->owner != ref->run_id)
			LsmCheckPage(index, src, LSM_PK_RUN_DATA, ref->run_id);	/* raises */
		dst = ReadBufferExtended(index, MAIN_FORKNUM, start + rel, RBM_ZERO_AND_LOCK, NULL);
		memcpy(BufferGetPage(dst), page, BLCKSZ);
		LsmPageGetOpaque(BufferGetPage(dst))->owner = run_id;
		MarkBufferDirty(dst);
		UnlockReleaseBuffer(dst);
		UnlockReleaseBuffer(src);
		CHECK_FOR_INTERRUPTS();
	}
	if (RelationNeedsWAL(index))
		log_newpage_range(index, MAIN_FORKNUM, start, start + ref->npages, true);
	copy.run_id = run_id;
	copy.start = start;
	LsmPublishCompaction(index, ref, 1, &copy, 1, 0, true);
	return true;
}

/*
 * lsm_am.compact(): everything into one run (RocksDB's CompactRange).
 * Flushes first.  The run is written at the end of the index, above its
 * inputs; then the index shrinks: the inputs are released (LsmShrink), the
 * run is copied down into the space they leave and the tail truncated, so
 * the file ends close to the live data.  Takes the locks itself.
 */
void
LsmCompactFull(Relation index)
{
	LsmMetaPageData *meta = palloc(sizeof(LsmMetaPageData));
	LsmMergeOut out = {0, 1, 0, NULL};	/* one run */
	uint64		pages = 0;
	uint32		level;

	LsmFlushLock(index);
	LsmFlushAll(index, NULL, NULL, NULL);
	LsmFlushUnlock(index);

	LsmCompactLock(index);
	LsmReadMeta(index, meta, NULL);
	for (int i = 0; i < (int) meta->nruns; i++)
		pages += meta->runs[i].npages;
	level = LsmBuildLevel(index, pages);
	if (meta->nruns == 1 && meta->runs[0].level != level)
		LsmPublishCompaction(index, meta->runs, 1, NULL, 0, level, false);
	else if (meta->nruns > 1 || (meta->nruns == 1 && meta->runs[0].level == 0))
	{
		bool		merged;

		LsmWorkerReportActivity("compacting all runs of", index);
		LsmReserveAtEnd(true);
		PG_TRY();
		{
			merged = LsmMergeRuns(index, meta->runs, meta->nruns, level, NULL, NULL,
								  NULL, NULL, &out);
		}
		PG_FINALLY();
		{
			LsmReserveAtEnd(false);
		}
		PG_END_TRY();
		if (merged)
			LsmPublishCompaction(index, meta->runs, meta->nruns, out.runs, out.nruns,
								 0, false);
	}
	LsmShrinkRelocating(index);
	LsmCompactUnlock(index);
	pfree(meta);
}

/*
 * Shrink the index (LsmShrink), then, while the highest run that fits a
 * free extent below it exists, copy it down (LsmRelocateRun) and shrink
 * again:
 * live data moves to the front and the file ends close to it.  Tries for
 * the index's lock `tries` more times, LSM_SHRINK_LOCK_WAIT_US apart.
 * Does nothing more if the first shrink could not lock the index (its
 * retired runs may still be read: copying would gain nothing now); returns
 * whether it could.  REQUIRES: compaction lock.
 */
static bool
LsmShrinkRelocatingGuts(Relation index, int tries)
{
	LsmMetaPageData *meta = palloc(sizeof(LsmMetaPageData));
	bool		locked = LsmShrink(index, NULL);
	bool		first;

	for (int i = 0; i < tries && !locked && !IsInParallelMode() &&
		 !RecoveryInProgress(); i++)
	{
		CHECK_FOR_INTERRUPTS();
		pg_usleep(LSM_SHRINK_LOCK_WAIT_US);
		locked = LsmShrink(index, NULL);
	}
	first = locked;
	for (int round = 0; round < 2 * LSM_MAX_RUNS && locked; round++)
	{
		bool		moved = false;
		bool	   *tried = palloc0(sizeof(bool) * LSM_MAX_RUNS);

		/*
		 * The highest run that fits a free extent below it moves there
		 * (pieces of a leveled index differ in size: the top one may not
		 * fit where the next one does, whose move frees room higher up).  (Cutting pages written since the last
		 * checkpoint is safe for redo; with wal_consistency_checking on,
		 * LsmTruncateTo keeps them: doc/impl.md, "The file shrinks".)
		 */
		LsmReadMeta(index, meta, NULL);
		while (!moved)
		{
			int			top = -1;

			for (int i = 0; i < (int) meta->nruns; i++)
				if (!tried[i] && (top < 0 || meta->runs[i].start > meta->runs[top].start))
					top = i;
			if (top < 0)
				break;
			tried[top] = true;
			moved = LsmRelocateRun(index, &meta->runs[top]);
		}
		pfree(tried);
		if (!moved)
			break;
		locked = LsmShrink(index, NULL);
	}
	pfree(meta);
	return first;
}

/*
 * LsmShrinkRelocating for compact() and VACUUM: a worker may hold the index
 * for a moment after the compaction it was doing when we started, so retry
 * for up to 5 s, as VACUUM does before it truncates a heap
 * (VACUUM_TRUNCATE_LOCK_TIMEOUT).  REQUIRES: compaction lock.
 */
void
LsmShrinkRelocating(Relation index)
{
	(void) LsmShrinkRelocatingGuts(index, LSM_SHRINK_LOCK_TRIES);
}

/*
 * The entry points run in a memory context of their own, deleted when they
 * return: a stalled insert or wait_for_merges may call them thousands of
 * times in one statement.  (On ERROR the context goes with its parent.)
 */
#define LSM_IN_CONTEXT(call) \
	do { \
		MemoryContext cxt_ = AllocSetContextCreate(CurrentMemoryContext, \
												   "lsm maintenance", \
												   ALLOCSET_DEFAULT_SIZES); \
		MemoryContext old_ = MemoryContextSwitchTo(cxt_); \
		result = (call); \
		MemoryContextSwitchTo(old_); \
		MemoryContextDelete(cxt_); \
	} while (0)

bool
LsmFlushOldest(Relation index, LsmDeadCallback dead, void *dead_state,
			   double *removed, const LsmStop *stop)
{
	bool		result;

	LSM_IN_CONTEXT(LsmFlushOldestGuts(index, dead, dead_state, removed, stop));
	return result;
}

bool
LsmCompactOnce(Relation index, const LsmStop *stop)
{
	bool		result;

	LSM_IN_CONTEXT(LsmCompactOnceGuts(index, stop));
	return result;
}

bool
LsmWorkPending(Relation index)
{
	bool		result;

	LSM_IN_CONTEXT(LsmWorkPendingGuts(index));
	return result;
}

/*
 * VACUUM: rewrite one run without the entries dead() reports, when its data
 * pages cannot be rewritten in place (a page rebuilt without some entries
 * can come out larger: its restart points move).  Returns the live entries.
 * REQUIRES: compaction lock.
 */
uint64
LsmRewriteRun(Relation index, const LsmRunRef *ref, LsmDeadCallback dead,
			  void *dead_state, double *removed)
{
	LsmMergeOut out = {0, 1, 0, NULL};	/* one run */

	if (!LsmMergeRuns(index, ref, 1, ref->level, NULL, dead, dead_state, removed, &out))
		elog(ERROR, "lsm_am: rewriting run %u of index \"%s\" was interrupted",
			 ref->run_id, RelationGetRelationName(index));
	LsmPublishCompaction(index, ref, 1, out.runs, out.nruns, 0, false);
	return out.nruns > 0 ? out.runs[0].nentries : 0;
}

/* ------------------------------------------------------------------------
 * LsmMaintain: what a worker does for one index
 * ------------------------------------------------------------------------ */

/*
 * A worker with nothing more to do gives free space back when it is large:
 * an eighth of the file and at least 64 pages, free anywhere (so a standby
 * query is not cancelled, the lock being replayed, for a few pages).  It
 * shrinks the index and moves the runs that lie highest down into the
 * holes below them (LsmShrinkRelocating, without waiting for the lock), so
 * that a bulk load (one large INSERT or COPY, whose merges ran while its
 * transaction held the index and its snapshot kept their inputs from being
 * reused) ends close to its live data without a VACUUM.  Returns true if
 * the index was busy (the caller comes back later).
 */
static bool
LsmMaybeShrink(Relation index)
{
	LsmMetaPageData *meta = palloc(sizeof(LsmMetaPageData));
	BlockNumber file = RelationGetNumberOfBlocks(index);
	uint64		free_pages;
	bool		busy = false;

	LsmReadMeta(index, meta, NULL);
	free_pages = file > meta->nblocks ? file - meta->nblocks : 0;
	for (int i = 0; i < (int) meta->nfree; i++)
		free_pages += meta->free[i].npages;
	if (free_pages >= 64 && free_pages >= file / 8)
	{
		if (!LsmCompactLockConditional(index))
			busy = true;
		else
		{
			LsmWorkerReportActivity("shrinking", index);
			busy = !LsmShrinkRelocatingGuts(index, 0);
			LsmCompactUnlock(index);
		}
	}
	pfree(meta);
	return busy;
}

/*
 * Between two compactions of a worker: when the pages the last ones retired
 * wait for the xid horizon (stamped, not yet reusable) and are many (an
 * eighth of the file, at least 64 pages), settle them now if nobody holds
 * the index (LsmShrink, its lock only if free at once).  Under inserts the
 * horizon passes them within a transaction or two and the lock is rarely
 * free; on a quiet system (a worker catching up after a load) no xid is
 * assigned, the horizon never passes, and without this every merge of the
 * catch-up would write into new pages at the end of the file.
 */
static void
LsmMaybeSettle(Relation index)
{
	LsmMetaPageData *meta = palloc(sizeof(LsmMetaPageData));
	BlockNumber file = RelationGetNumberOfBlocks(index);
	uint64		waiting = 0;

	LsmReadMeta(index, meta, NULL);
	for (int i = 0; i < (int) meta->nfree; i++)
		if (meta->free[i].reuse_after != 0)
			waiting += meta->free[i].npages;
	if (waiting >= 64 && waiting >= file / 8)
		(void) LsmShrink(index, NULL);
	pfree(meta);
}

/*
 * Stop for the caller's reason (arg: the caller's LsmStop, or NULL), or
 * because VACUUM waits for our locks.
 */
static bool
LsmMaintainStop(Relation index, void *arg)
{
	const LsmStop *user = (const LsmStop *) arg;
	LsmRelCache *cache = LsmGetRelCache(index);

	if (cache->slot >= 0 && lsm_shared->slots[cache->slot].vacuum_waiting)
		return true;
	return user && user->fn(index, user->arg);
}

bool
LsmMaintain(Relation index, const LsmStop *stop)
{
	LsmSlot    *slot = LsmSlotAcquire(index, LW_SHARED);
	bool		stopped = false;
	bool		shrink_later = false;
	uint32		queued;
	LsmStop		mstop = {LsmMaintainStop, unconstify(LsmStop *, stop)};

	LsmSlotRelease(index, slot);

	/*
	 * The pending bits stay set until the work is done: a worker killed
	 * half-way leaves them for the next one.  Work queued while we run (a
	 * backend's flush that makes level 0 reach the trigger just after we
	 * looked) must not be lost when we clear them: see the end.
	 */
	queued = pg_atomic_read_u32(&slot->queued);
	pg_memory_barrier();

	for (int round = 0; round < 1000 && !stopped; round++)
	{
		bool		progress = false;

		/* at l0_stop_trigger level-0 runs, compaction goes first */
		if (slot->l0_runs < (uint32) lsm_l0_stop_trigger &&
			LsmFlushLockConditional(index))
		{
			while (!(stopped = LsmMaintainStop(index, mstop.arg)) &&
				   slot->l0_runs < (uint32) lsm_l0_stop_trigger &&
				   LsmFlushOldest(index, NULL, NULL, NULL, &mstop))
				progress = true;
			LsmFlushUnlock(index);
		}
		if (stopped)
			break;
		if (LsmCompactLockConditional(index))
		{
			while (!(stopped = LsmMaintainStop(index, mstop.arg)) &&
				   LsmCompactOnce(index, &mstop))
			{
				progress = true;
				if (LsmIsWorker())
					LsmMaybeSettle(index);
				/* a waiting memtable goes first */
				if (slot->nimm > 0)
					break;
			}
			LsmCompactUnlock(index);
		}
		if (!progress)
			break;
	}
	if (!stopped && LsmIsWorker())
		shrink_later = LsmMaybeShrink(index);
	LsmWorkerReportActivity(NULL, index);
	if (!stopped)
	{
		/*
		 * Done with what we saw.  LsmPendingSet bumps the counter before it
		 * sets the bits, so a request whose bits our clearing wiped out has
		 * changed the counter by the time we read it again: set the bits
		 * back, and a worker comes again.
		 */
		pg_atomic_write_u32(&slot->pending, 0);
		pg_memory_barrier();
		if (pg_atomic_read_u32(&slot->queued) != queued)
			pg_atomic_fetch_or_u32(&slot->pending, LSM_WORK_FLUSH | LSM_WORK_COMPACT);
		else if (slot->nimm > 0)
			pg_atomic_fetch_or_u32(&slot->pending, LSM_WORK_FLUSH);
		/* the index was busy: a worker comes back to shrink it */
		if (shrink_later)
			pg_atomic_fetch_or_u32(&slot->pending, LSM_WORK_SHRINK);
	}
	else if (slot->vacuum_waiting)
		pg_atomic_write_u32(&slot->pending, 0);	/* VACUUM flushes itself */
	return shrink_later && !stopped;
}
