/*
 * lsmmaint.c — maintenance of an lsm index: compactions chosen by the
 * core's picker (leveled, tiered or lazy leveling), lsm_am.compact(), and
 * LsmMaintain, what a worker does for one index.  Memtable switches and
 * flushes are in lsmflush.c, moving runs down and shrinking the file in
 * lsmshrink.c; what the three share is in lsmmaint_int.h.
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
 */
#include "postgres.h"

#include "access/xact.h"
#include "access/xlog.h"
#include "executor/instrument.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/lmgr.h"
#include "utils/backend_status.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "maint/lsmmaint_int.h"
#include "lsmfault.h"

#define LSM_FLUSH_LOCK_BLK		0
#define LSM_COMPACT_LOCK_BLK	1

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

/*
 * After a compaction: refresh the slot's view, count the pages of its
 * outputs (a merge's; nouts = 0 for a move or a relocation) into their
 * level, and wake stalled inserts.
 */
static void
LsmCompactionDone(Relation index, const LsmMetaPageData *m, bool compaction,
				  const LsmRunRef *outs, int nouts)
{
	LsmSlot    *slot = LsmSlotAcquire(index, LW_EXCLUSIVE);

	slot->l0_runs = LsmCountLevel0(m);
	slot->level_debt = LsmLevelDebt(index, m);
	for (int j = 0; j < nouts; j++)
		slot->level_pages[Min(outs[j].level, LSM_PICK_MAX_LEVEL)] += outs[j].npages;
	if (compaction)
		slot->last_compaction_at = GetCurrentTimestamp();
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
void
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
	LsmCompactionDone(index, copy, !relocated, outs, (outs != NULL && !relocated) ? nouts : 0);
	if (outs != NULL)
	{
		LsmRunCacheForget(index, inputs, nin);
		LsmRunCacheWarm(index, copy, outs, nouts);
	}
	pfree(copy);
}

/*
 * A worker's merge in LsmMaintain (below), during which its stop callback may
 * flush (LsmFlushBesideMerge); and whether that flush is running.
 */
static bool lsm_in_merge = false;
static bool lsm_in_merge_flush = false;
/* WAL those flushes wrote: not the merge's (LsmCompactOnceGuts) */
static int64 lsm_beside_wal = 0;
/* flushes beside the current merge (reset when it starts) */
static int	lsm_beside_count = 0;

/*
 * Most flushes beside one merge.  A merge's outputs are bounded so that the
 * manifest keeps a quarter of its slots (32) for the flushes that run
 * meanwhile (LsmPieceLimit); past this many, flushes wait for the merge's
 * end as before, and the rest of the quarter stays for backends' own.
 */
#define LSM_BESIDE_MAX_FLUSHES	(LSM_MAX_RUNS / 4 - 8)

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
	int64		beside0 = lsm_beside_wal;
	LsmSlot    *slot;
	LsmJob		job;
	uint64		in_pages = 0;

	lsm_beside_count = 0;
	LsmReadMeta(index, meta, NULL);
	if (!LsmPickFor(index, meta, pick))
	{
		pfree(meta);
		pfree(pick);
		return false;
	}
	inputs = palloc(sizeof(LsmRunRef) * pick->ninputs);
	for (uint32 i = 0; i < pick->ninputs; i++)
	{
		inputs[i] = meta->runs[pick->inputs[i]];
		in_pages += inputs[i].npages;
	}

	if (pick->kind == LSM_PICK_MOVE)
	{
		LsmRunRef	moved = inputs[0];

		LsmJobBegin(&job, index, LSM_JOB_MOVE, inputs, 1, 0, pick->output_level, 0);
		job.reason = pick->reason;
		LsmPublishCompaction(index, inputs, 1, NULL, 0, pick->output_level, false);
		moved.level = pick->output_level;
		LsmJobEnd(&job, index, &moved, 1);
	}
	else
	{
		LsmJobBegin(&job, index, LSM_JOB_COMPACTION, inputs, (int) pick->ninputs, 0,
					pick->output_level, (int64) in_pages);
		job.reason = pick->reason;
		/* leveled: the output is cut into pieces (lsmpiece.c) */
		out.piece_pages = LsmPiecePages(index, meta, pick->output_level);
		out.max_pieces = LsmPieceLimit(meta, pick->ninputs);
		if (!LsmMergeRuns(index, inputs, pick->ninputs, pick->output_level, stop,
						  NULL, NULL, NULL, &out))
		{
			LsmJobStop(index);
			pfree(meta);
			pfree(pick);
			return false;
		}
		LSM_FAULT(LSM_FAULT_COMPACTION_BEFORE_PUBLISH);
		LsmPublishCompaction(index, inputs, pick->ninputs, out.runs, out.nruns,
							 0, false);
		job.wal0 += lsm_beside_wal - beside0;	/* flushes beside it */
		LsmJobEnd(&job, index, out.runs, out.nruns);
		LSM_FAULT(LSM_FAULT_COMPACTION_AFTER_PUBLISH);
	}
	slot = LsmSlotAcquire(index, LW_EXCLUSIVE);
	slot->wal_compact += pgWalUsage.wal_bytes - wal0 - (lsm_beside_wal - beside0);
	LsmSlotRelease(index, slot);
	pfree(meta);
	pfree(pick);
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
	LsmJob		job;

	LsmFlushLock(index);
	LsmFlushAll(index, NULL, NULL, NULL);
	LsmFlushUnlock(index);

	LsmCompactLock(index);
	LsmReadMeta(index, meta, NULL);
	for (int i = 0; i < (int) meta->nruns; i++)
		pages += meta->runs[i].npages;
	level = LsmBuildLevel(index, pages);
	if (meta->nruns == 1 && meta->runs[0].level != level)
	{
		LsmRunRef	moved = meta->runs[0];

		LsmJobBegin(&job, index, LSM_JOB_MOVE, meta->runs, 1, 0, (int) level, 0);
		LsmPublishCompaction(index, meta->runs, 1, NULL, 0, level, false);
		moved.level = level;
		LsmJobEnd(&job, index, &moved, 1);
	}
	else if (meta->nruns > 1 || (meta->nruns == 1 && meta->runs[0].level == 0))
	{
		bool		merged;

		LsmJobBegin(&job, index, LSM_JOB_COMPACTION, meta->runs, (int) meta->nruns, 0,
					(int) level, (int64) pages);
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
		{
			LSM_FAULT(LSM_FAULT_COMPACTION_BEFORE_PUBLISH);
			LsmPublishCompaction(index, meta->runs, meta->nruns, out.runs, out.nruns,
								 0, false);
			LsmJobEnd(&job, index, out.runs, out.nruns);
			LSM_FAULT(LSM_FAULT_COMPACTION_AFTER_PUBLISH);
		}
		else
			LsmJobStop(index);
	}
	LsmShrinkRelocating(index);
	LsmCompactUnlock(index);
	pfree(meta);
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
	LsmJob		job;

	LsmJobBegin(&job, index, LSM_JOB_REWRITE, ref, 1, 0, ref->level, ref->npages);
	if (!LsmMergeRuns(index, ref, 1, ref->level, NULL, dead, dead_state, removed, &out))
		elog(ERROR, "lsm_am: rewriting run %u of index \"%s\" was interrupted",
			 ref->run_id, RelationGetRelationName(index));
	LSM_FAULT(LSM_FAULT_VACUUM_REWRITE);
	LsmPublishCompaction(index, ref, 1, out.runs, out.nruns, 0, false);
	LsmJobEnd(&job, index, out.runs, out.nruns);
	return out.nruns > 0 ? out.runs[0].nentries : 0;
}

/* ------------------------------------------------------------------------
 * LsmMaintain: what a worker does for one index
 * ------------------------------------------------------------------------ */

/*
 * Between two pages of a worker's merge: flush the oldest immutable
 * memtable now if every one of them waits (the inserts are about to stop)
 * and nobody else flushes.  One worker serves an index, and a merge runs
 * for seconds (lazy's into its last level rewrites that level whole, a
 * leveled level-0 merge level 1): without this the memtables fill behind
 * it and the inserts stop until it ends.  A flush and a merge hold
 * different locks and reservations, as a backend's flush beside a worker's
 * merge always did; the merge publishes against the manifest as it then
 * is.  The writers' rate (LsmInsertDebt) still answers for level 0, and at
 * lsm_am.l0_stop_trigger level-0 runs, or after LSM_BESIDE_MAX_FLUSHES
 * flushes, the merge goes on alone.  The flush stops for what stops the
 * merge (a waiting VACUUM, a conflicting lock), and the merge then stops at
 * its next page.
 */
static bool LsmMaintainStop(Relation index, void *arg);

static void
LsmFlushBesideMerge(Relation index, void *arg)
{
	LsmRelCache *cache = LsmGetRelCache(index);
	LsmSlot    *slot;
	char	   *activity;
	int64		wal0 = pgWalUsage.wal_bytes;
	/* the flush stops for what stops the merge (not for another flush) */
	LsmStop		stop = {LsmMaintainStop, arg};

	if (!lsm_in_merge || lsm_in_merge_flush || cache->slot < 0 ||
		lsm_beside_count >= LSM_BESIDE_MAX_FLUSHES)
		return;
	slot = &lsm_shared->slots[cache->slot];
	/* unlocked reads: a hint, LsmFlushOldest checks under the slot lock */
	if (slot->nimm < LSM_MAX_IMM || slot->l0_runs >= (uint32) lsm_l0_stop_trigger)
		return;
	if (!LsmFlushLockConditional(index))
		return;
	/* the flush reports itself in pg_stat_activity: the merge's line after */
	activity = MyBEEntry && MyBEEntry->st_activity_raw[0] != '\0' ?
		pstrdup(MyBEEntry->st_activity_raw) : NULL;
	lsm_in_merge_flush = true;
	PG_TRY();
	{
		if (LsmFlushOldest(index, NULL, NULL, NULL, &stop))
			lsm_beside_count++;
	}
	PG_FINALLY();
	{
		lsm_in_merge_flush = false;
		LsmFlushUnlock(index);
	}
	PG_END_TRY();
	lsm_beside_wal += pgWalUsage.wal_bytes - wal0;
	if (activity)
	{
		pgstat_report_activity(STATE_RUNNING, activity);
		pfree(activity);
	}
}

/*
 * Stop for the caller's reason (arg: the caller's LsmStop, or NULL), or
 * because VACUUM waits for our locks.  Inside a worker's merge, first flush
 * if the inserts would otherwise stop (LsmFlushBesideMerge).
 */
static bool
LsmMaintainStop(Relation index, void *arg)
{
	const LsmStop *user = (const LsmStop *) arg;
	LsmRelCache *cache = LsmGetRelCache(index);

	if (cache->slot >= 0 && lsm_shared->slots[cache->slot].vacuum_waiting)
		return true;
	if (user && user->fn(index, user->arg))
		return true;
	LsmFlushBesideMerge(index, arg);
	return false;
}

/*
 * The arena is short and this index's active memtable is among the largest
 * (LsmArenaRelieve): make it immutable, so that the flush below gives its
 * chunks back.  REQUIRES: no slot lock.
 */
static void
LsmSwitchForArena(Relation index)
{
	LsmSlot    *slot = LsmSlotAcquire(index, LW_EXCLUSIVE);

	pg_atomic_fetch_and_u32(&slot->pending, ~LSM_WORK_SWITCH);
	if (slot->mt.nentries > 0 && slot->nimm < LSM_MAX_IMM)
		LsmSwitchMemtable(index, slot);
	LsmSlotRelease(index, slot);
}

/*
 * The index's first use since the server started (LSM_WORK_WARM, set when
 * its slot was loaded from the log): put its runs' metadata pages into the
 * shared cache (LsmRunCacheWarmIndex), so that lookups do not read them
 * from disk one by one.  Under the compaction lock, so that no run is
 * retired, and its pages reused, while they are read.  False if that lock
 * was busy: the caller asks again later.
 */
static bool
LsmWarmIndex(Relation index, LsmSlot *slot, const LsmStop *stop)
{
	LsmMetaPageData *meta;
	LsmWarmResult res;
	BufferUsage bu0 = pgBufferUsage;
	TimestampTz t0 = GetCurrentTimestamp();

	if (!LsmCompactLockConditional(index))
		return false;
	pg_atomic_fetch_and_u32(&slot->pending, ~LSM_WORK_WARM);
	meta = palloc(sizeof(LsmMetaPageData));
	LsmReadMeta(index, meta, NULL);
	LsmRunCacheWarmIndex(index, meta, stop, &res);
	LsmCompactUnlock(index);
	pfree(meta);
	if (lsm_log_maintenance && res.pages > 0)
	{
		long		secs;
		int			usecs;
		char	   *nsp = get_namespace_name(RelationGetNamespace(index));

		TimestampDifference(t0, GetCurrentTimestamp(), &secs, &usecs);
		/* a syscache miss may have taken a catalog snapshot: workers keep none */
		InvalidateCatalogSnapshot();
		ereport(LOG,
				(errmsg("lsm_am warm of index \"%s.%s\": %d pages of %d runs into the shared metadata cache (" INT64_FORMAT " read from disk, %d there already)%s%s; duration: %ld.%03d s",
						nsp ? nsp : "?", RelationGetRelationName(index), res.pages, res.runs,
						(int64) (pgBufferUsage.shared_blks_read - bu0.shared_blks_read),
						res.cached,
						res.full ? "; the rest does not fit in lsm_am.metadata_cache_size" : "",
						res.stopped ? "; stopped" : "",
						secs, usecs / 1000),
				 errhidestmt(true)));
	}
	return true;
}

bool
LsmMaintain(Relation index, const LsmStop *stop)
{
	LsmSlot    *slot = LsmSlotAcquire(index, LW_SHARED);
	bool		stopped = false;
	bool		again = false;
	bool		shrink_later = false;
	bool		warm_later = false;
	uint32		queued;
	LsmStop		mstop = {LsmMaintainStop, unconstify(LsmStop *, stop)};

	LsmSlotRelease(index, slot);
	/* an ERROR in the last call's merge left it set: no merge runs yet */
	lsm_in_merge = false;

	/*
	 * The pending bits stay set until the work is done: a worker killed
	 * half-way leaves them for the next one.  Work queued while we run (a
	 * backend's flush that makes level 0 reach the trigger just after we
	 * looked) must not be lost when we clear them: see the end.
	 */
	queued = pg_atomic_read_u32(&slot->queued);
	pg_memory_barrier();
	if ((pg_atomic_read_u32(&slot->pending) & LSM_WORK_SWITCH) != 0)
		LsmSwitchForArena(index);
	if ((pg_atomic_read_u32(&slot->pending) & LSM_WORK_WARM) != 0 && LsmIsWorker())
		warm_later = !LsmWarmIndex(index, slot, &mstop);

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
			/* a worker's merge may flush beside it (LsmFlushBesideMerge) */
			lsm_in_merge = LsmIsWorker();
			while (!(stopped = LsmMaintainStop(index, mstop.arg)) &&
				   LsmCompactOnce(index, &mstop))
			{
				progress = true;
				if (LsmIsWorker())
					LsmMaybeSettle(index);

				/*
				 * A worker whose transaction now has an xid (the lock of
				 * LsmMaybeSettle is WAL-logged, which assigns one) ends it
				 * before the next merge, and comes back at once in a new
				 * one: while it lasts, that xid is the oldest running, the
				 * horizon stays behind it and every extent retired
				 * meanwhile waits.  In a capped 20-minute ingest
				 * (2026-12-07) a worker kept one for 250 s and more over
				 * many merges: up to 4.8 GB waited, the free list filled,
				 * merges could no longer cut pieces, and the file grew
				 * from 3.8 to 12 GB in 130 s.
				 */
				if (LsmIsWorker() && TransactionIdIsValid(GetTopTransactionIdIfAny()))
				{
					again = true;
					break;
				}
				/* a waiting memtable goes first */
				if (slot->nimm > 0)
					break;
			}
			lsm_in_merge = false;
			LsmCompactUnlock(index);
		}
		if (!progress || again)
			break;
	}
	if (again)
	{
		/* the pending bits stay: the worker looks again at once */
		pg_atomic_fetch_or_u32(&slot->pending, LSM_WORK_COMPACT);
		LsmWorkerReportActivity(NULL, index, NULL);
		return false;
	}
	if (!stopped && LsmIsWorker())
		shrink_later = LsmMaybeShrink(index);
	LsmWorkerReportActivity(NULL, index, NULL);
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
		/* the index was busy: a worker comes back to shrink or warm it */
		if (shrink_later)
			pg_atomic_fetch_or_u32(&slot->pending, LSM_WORK_SHRINK);
		if (warm_later)
			pg_atomic_fetch_or_u32(&slot->pending, LSM_WORK_WARM);
	}
	else if (slot->vacuum_waiting)
		pg_atomic_write_u32(&slot->pending, 0);	/* VACUUM flushes itself */
	return (shrink_later || warm_later) && !stopped;
}
