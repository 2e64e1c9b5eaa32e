/*
 * lsmworker.c — background workers: a launcher and per-database workers that
 * flush immutable memtables and run compactions, so that inserting backends
 * only append to the log and signal.  This file is the worker process; the
 * launcher is lsmlauncher.c, the shared worker table lsmworkertab.c.
 *
 * Processes.  Opening an index needs a connection to its database, and a
 * process connects to one database for life, so the work is split:
 *
 *   launcher (one, registered in _PG_init, not connected): every
 *     lsm_am.worker_naptime, or when a backend sets its latch
 *     (LsmWakeWorkers), it scans the memtable slots.  A slot whose pending
 *     bits (LSM_WORK_*) are set belongs to an index with work queued; for
 *     every database with such slots it keeps min(indexes with work, 2)
 *     workers alive, at most lsm_am.max_workers in all, first one per
 *     database, then a second where useful.
 *   worker (dynamic, one database): loops over its database's slots with
 *     pending bits and calls LsmMaintain() on each index in its own
 *     transaction; exits after lsm_am.worker_idle_timeout without work.
 *
 * The pending bits are only a hint, read without locks: LsmMaintain() finds
 * the real work under the index's own locks and clears the bits it handled.
 * The worker table here (slock_t, a few entries) also records which slot
 * each worker is busy with, so two workers of one database never pile onto
 * the same index, and when starting a worker failed: LsmWorkersAvailable()
 * then tells backends to flush and compact themselves (backpressure must
 * never wait for a worker that cannot come).
 *
 * No snapshot.  A merge can run for minutes; a snapshot would hold back the
 * xmin horizon (and with it VACUUM everywhere) all that time.  Flushes and
 * compactions read and write index pages only, so the worker's transactions
 * take none, and the catalog snapshot that opening the index may have taken
 * is dropped before the work starts and again between pages.
 *
 * Never in anyone's way.  The worker locks the index with a conditional
 * ShareUpdateExclusiveLock (never waiting) and not its table.  Between pages
 * LsmMaintain() asks LsmWorkerStop(), which gives up as soon as anybody waits
 * for a lock conflicting with ours — DROP INDEX, TRUNCATE, REINDEX, ALTER
 * INDEX, VACUUM FULL, DROP TABLE — so they proceed at once; the abandoned
 * pages are reclaimed by the next flush or compaction.  The same callback
 * probes the database's lock: DROP DATABASE (and CREATE DATABASE ... TEMPLATE,
 * ALTER DATABASE RENAME / SET TABLESPACE) hold it while waiting ~5 s for
 * other sessions to leave, so the worker then stops and exits.  Idle workers
 * probe it every LSM_WORKER_POLL_MS.
 *
 * Why ShareUpdateExclusiveLock and not RowExclusiveLock: LockHasWaiters()
 * dereferences the shared lock entry, which a fast-path lock (RowExclusiveLock
 * on a relation usually is one) does not have.  ShareUpdateExclusiveLock never
 * takes the fast path, conflicts with everything RowExclusiveLock conflicts
 * with, and additionally only with itself — that is, with another lsm worker
 * (which we avoid anyway) or REINDEX CONCURRENTLY (which we yield to).
 *
 * Errors in one index are reported and cost that index an exponential
 * back-off (1 s, doubling, at most 60 s); the worker goes on with the others.
 */
#include "postgres.h"

#include <sys/stat.h>

#include "access/relation.h"
#include "access/xact.h"
#include "catalog/pg_class.h"
#include "catalog/pg_database.h"
#include "common/relpath.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/lmgr.h"
#include "storage/lock.h"
#include "storage/proc.h"
#include "storage/shmem.h"
#include "storage/spin.h"
#include "tcop/tcopprot.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"

#include "maint/lsmworker_int.h"
#include "lsmfault.h"

/* ------------------------------------------------------------------------
 * Worker
 * ------------------------------------------------------------------------ */

/* An index with pending work, copied from its slot under the map lock. */
typedef struct LsmCandidate
{
	int			slotno;
	uint32		generation;
	Oid			indexoid;
	Oid			spcid;
	Oid			relnumber;
} LsmCandidate;

/* How maintaining one index ended. */
typedef enum LsmWorkResult
{
	LSM_WR_DONE,				/* LsmMaintain returned */
	LSM_WR_LOCKED,				/* the index lock was not granted */
	LSM_WR_STALE,				/* the slot's index is gone or was rewritten */
	LSM_WR_YIELDED,				/* stopped: somebody waits for the index */
	LSM_WR_DATABASE,			/* stopped: somebody wants the database */
	LSM_WR_ERROR				/* raised an error (reported) */
} LsmWorkResult;

/* worker-local state */
static bool am_lsm_worker = false;
static uint32 wait_event_idle = 0;
static int	worker_entry = -1;
static uint32 worker_generation;
static TimestampTz worker_last_db_probe;
static Oid	worker_name_relid = InvalidOid;
static char worker_name[2 * NAMEDATALEN + 8];	/* "schema"."name" */

/* per slot: back-off of an index after an error or a conflict */
static TimestampTz *worker_retry_at;
static uint32 *worker_retry_gen;
static int *worker_retry_count;

bool
LsmIsWorker(void)
{
	return am_lsm_worker;
}

/* Remember the qualified name of index for reports and error context. */
static void
LsmWorkerRememberName(Relation index)
{
	char	   *nsp = get_namespace_name(RelationGetNamespace(index));
	const char *q = quote_qualified_identifier(nsp, RelationGetRelationName(index));

	strlcpy(worker_name, q, sizeof(worker_name));
	worker_name_relid = RelationGetRelid(index);
	/* a syscache miss may have taken a catalog snapshot: do not keep it */
	InvalidateCatalogSnapshot();
}

/* See lsm_maint.h. */
void
LsmWorkerReportActivity(const char *what, Relation index, const char *detail)
{
	char	   *msg;

	if (!am_lsm_worker)
		return;
	if (what == NULL || index == NULL)
	{
		pgstat_report_activity(STATE_IDLE, NULL);
		return;
	}
	if (RelationGetRelid(index) != worker_name_relid)
		LsmWorkerRememberName(index);
	msg = psprintf("lsm_am %s of index %s%s%s", what, worker_name,
				   detail ? ": " : "", detail ? detail : "");
	pgstat_report_activity(STATE_RUNNING, msg);
	pfree(msg);
}

/* errcontext of errors while maintaining an index */
static void
LsmWorkerErrorContext(void *arg)
{
	const LsmCandidate *c = (const LsmCandidate *) arg;

	if (worker_name_relid == c->indexoid)
		errcontext("lsm_am background maintenance of index %s", worker_name);
	else
		errcontext("lsm_am background maintenance of index with OID %u",
				   c->indexoid);
}

/*
 * Is a command waiting to have our database to itself (DROP DATABASE, CREATE
 * DATABASE ... TEMPLATE, ALTER DATABASE RENAME or SET TABLESPACE)?  They hold
 * or wait for a lock on the database conflicting with the RowExclusiveLock
 * sessions take to connect; a conditional request for that is refused then.
 */
static bool
LsmDatabaseWanted(void)
{
	LOCKTAG		tag;

	SET_LOCKTAG_OBJECT(tag, InvalidOid, DatabaseRelationId, MyDatabaseId, 0);
	if (LockAcquire(&tag, RowExclusiveLock, true, true) == LOCKACQUIRE_NOT_AVAIL)
		return true;
	LockRelease(&tag, RowExclusiveLock, true);
	return false;
}

/*
 * LsmStopCallback of the worker (see the header comment); arg: the
 * LsmWorkResult to set when it stops.
 */
static bool
LsmWorkerStop(Relation index, void *arg)
{
	LsmWorkResult *reason = (LsmWorkResult *) arg;
	TimestampTz now;

	CHECK_FOR_INTERRUPTS();
	/* with an LWLock held, interrupts wait: let LsmMaintain unwind first */
	if (ProcDiePending || QueryCancelPending)
	{
		*reason = LSM_WR_YIELDED;
		return true;
	}
	InvalidateCatalogSnapshot();
	if (LockHasWaitersRelation(index, LSM_WORKER_LOCKMODE))
	{
		*reason = LSM_WR_YIELDED;
		return true;
	}
	now = GetCurrentTimestamp();
	if (TimestampDifferenceExceeds(worker_last_db_probe, now, LSM_WORKER_POLL_MS))
	{
		worker_last_db_probe = now;
		if (LsmDatabaseWanted())
		{
			*reason = LSM_WR_DATABASE;
			return true;
		}
	}
	return false;
}

/*
 * The slot of c no longer belongs to a live lsm index (dropped, truncated,
 * reindexed): clear its pending bits so that nobody comes back for it.  The
 * generation check under the map lock makes sure the slot was not handed to
 * another index meanwhile.
 */
static void
LsmWorkerForgetSlot(const LsmCandidate *c)
{
	LsmSlot    *s = &lsm_shared->slots[c->slotno];

	LWLockAcquire(lsm_shared->map_lock, LW_EXCLUSIVE);
	if (s->generation == c->generation)
		pg_atomic_write_u32(&s->pending, 0);
	LWLockRelease(lsm_shared->map_lock);
}

/*
 * LsmMaintain failed after clearing the slot's pending bits: set them again,
 * so that the index is retried after its back-off.
 */
static void
LsmWorkerRequeueSlot(const LsmCandidate *c)
{
	LsmSlot    *s = &lsm_shared->slots[c->slotno];

	LWLockAcquire(lsm_shared->map_lock, LW_SHARED);
	if (s->generation == c->generation)
		LsmPendingSet(s, LSM_WORK_FLUSH | LSM_WORK_COMPACT);
	LWLockRelease(lsm_shared->map_lock);
}

/* Maintain one index in a transaction of its own; errors are reported. */
static LsmWorkResult
LsmWorkerMaintainIndex(LsmCandidate *c)
{
	volatile LsmWorkResult result = LSM_WR_DONE;
	MemoryContext cxt = CurrentMemoryContext;
	ErrorContextCallback errcb;

	errcb.callback = LsmWorkerErrorContext;
	errcb.arg = c;
	errcb.previous = error_context_stack;

	PG_TRY();
	{
		Relation	index;

		error_context_stack = &errcb;
		SetCurrentStatementStartTimestamp();
		StartTransactionCommand();
		if (!ConditionalLockRelationOid(c->indexoid, LSM_WORKER_LOCKMODE))
			result = LSM_WR_LOCKED;
		else
		{
			index = try_relation_open(c->indexoid, NoLock);
			if (index == NULL ||
				index->rd_rel->relkind != RELKIND_INDEX ||
				index->rd_indam == NULL ||
				index->rd_indam->amoptions != lsmoptions ||
				LsmRelSpcOid(index) != c->spcid ||
				LsmRelFileNumber(index) != c->relnumber)
				result = LSM_WR_STALE;
			else
			{
				LsmWorkResult reason = LSM_WR_DONE;
				LsmStop		stop = {LsmWorkerStop, &reason};

				LsmWorkerRememberName(index);
				LSM_FAULT(LSM_FAULT_WORKER_JOB);
				/* true: shrinking waits for the index to be free: back off */
				if (LsmMaintain(index, &stop) && reason == LSM_WR_DONE)
					reason = LSM_WR_LOCKED;
				result = reason;
				/* a cancel LsmMaintain only stopped for: raise it here */
				CHECK_FOR_INTERRUPTS();
			}
			if (index != NULL)
				relation_close(index, NoLock);
			UnlockRelationOid(c->indexoid, LSM_WORKER_LOCKMODE);
		}
		CommitTransactionCommand();
		error_context_stack = errcb.previous;
	}
	PG_CATCH();
	{
		HOLD_INTERRUPTS();
		EmitErrorReport();
		AbortOutOfAnyTransaction();
		FlushErrorState();
		RESUME_INTERRUPTS();
		result = LSM_WR_ERROR;
	}
	PG_END_TRY();

	MemoryContextSwitchTo(cxt);
	pgstat_report_activity(STATE_IDLE, NULL);
	if (result == LSM_WR_STALE)
		LsmWorkerForgetSlot(c);
	else if (result == LSM_WR_ERROR)
		LsmWorkerRequeueSlot(c);
	return result;
}

/* Claim slotno unless another worker of our database works on it. */
static bool
LsmWorkerClaim(int slotno)
{
	bool		ok = true;

	SpinLockAcquire(&lsm_workers->mutex);
	for (int i = 0; i < LSM_WORKER_SLOTS; i++)
	{
		LsmWorkerEntry *e = &lsm_workers->workers[i];

		if (i != worker_entry && e->in_use && e->dbid == MyDatabaseId &&
			e->busy_slot == slotno)
			ok = false;
	}
	if (ok)
		lsm_workers->workers[worker_entry].busy_slot = slotno;
	SpinLockRelease(&lsm_workers->mutex);
	return ok;
}

static void
LsmWorkerUnclaim(void)
{
	SpinLockAcquire(&lsm_workers->mutex);
	lsm_workers->workers[worker_entry].busy_slot = -1;
	SpinLockRelease(&lsm_workers->mutex);
}

/* Copy the slots of our database with pending work; returns how many. */
static int
LsmWorkerCollect(LsmCandidate *cands)
{
	bool		any = false;
	int			n = 0;

	/* cheap unlocked look first: idle workers poll */
	for (int i = 0; i < lsm_shared->nslots && !any; i++)
		any = lsm_shared->slots[i].dbid == MyDatabaseId &&
			pg_atomic_read_u32(&lsm_shared->slots[i].pending) != 0;
	if (!any)
		return 0;

	LWLockAcquire(lsm_shared->map_lock, LW_SHARED);
	for (int i = 0; i < lsm_shared->nslots; i++)
	{
		LsmSlot    *s = &lsm_shared->slots[i];

		if (s->dbid != MyDatabaseId || pg_atomic_read_u32(&s->pending) == 0)
			continue;
		cands[n].slotno = i;
		cands[n].generation = s->generation;
		cands[n].indexoid = s->indexoid;
		cands[n].spcid = s->spcid;
		cands[n].relnumber = s->relnumber;
		n++;
	}
	LWLockRelease(lsm_shared->map_lock);
	return n;
}

/* Back off the index of c after result. */
static void
LsmWorkerBackOff(const LsmCandidate *c, LsmWorkResult result, TimestampTz now)
{
	int			i = c->slotno;
	int			ms = LSM_WORKER_BACKOFF_MS;

	if (worker_retry_gen[i] != c->generation)
		worker_retry_count[i] = 0;
	worker_retry_gen[i] = c->generation;
	if (result == LSM_WR_ERROR)
	{
		/* 1 s, 2 s, 4 s, ... 60 s: a broken index must not flood the log */
		for (int k = 0; k < worker_retry_count[i] && ms < LSM_WORKER_BACKOFF_MAX_MS; k++)
			ms *= 2;
		ms = Min(ms, LSM_WORKER_BACKOFF_MAX_MS);
		worker_retry_count[i]++;
	}
	worker_retry_at[i] = TimestampTzPlusMilliseconds(now, ms);
}

/* Register our PGPROC's latch in our entry; false: the entry is not ours. */
static bool
LsmWorkerAttach(Oid dbid)
{
	LsmWorkerEntry *e = &lsm_workers->workers[worker_entry];
	bool		ok;

	SpinLockAcquire(&lsm_workers->mutex);
	ok = e->in_use && e->generation == worker_generation &&
		e->dbid == dbid && e->pid == 0;
	if (ok)
	{
		e->pid = MyProcPid;
		e->latch = MyLatch;
	}
	SpinLockRelease(&lsm_workers->mutex);
	return ok;
}

/*
 * Free our entry.  A worker that never reached its database records that, so
 * that the launcher waits before it tries again and backends serve
 * themselves meanwhile.
 */
static void
LsmWorkerOnExit(int code, Datum arg)
{
	LsmWorkerEntry *e = &lsm_workers->workers[worker_entry];
	bool		connected;
	Latch	   *launcher;

	SpinLockAcquire(&lsm_workers->mutex);
	connected = e->in_use && e->generation == worker_generation && e->connected;
	launcher = lsm_workers->launcher_latch;
	SpinLockRelease(&lsm_workers->mutex);

	if (LsmEntryRelease(worker_entry, worker_generation, !connected, LSM_SF_START) &&
		launcher != NULL)
		SetLatch(launcher);		/* maybe a replacement is due */
}

/* Exit because a command wants the database to itself. */
static void
LsmWorkerLeaveDatabase(void)
{
	TimestampTz now = GetCurrentTimestamp();

	SpinLockAcquire(&lsm_workers->mutex);
	LsmFailureRecordLocked(MyDatabaseId, LSM_SF_DATABASE, now);
	SpinLockRelease(&lsm_workers->mutex);
	proc_exit(0);
}

/* Entry point of a worker for database DatumGetObjectId(arg). */
void
lsm_worker_main(Datum arg)
{
	Oid			dbid = DatumGetObjectId(arg);
	LsmWorkerStartInfo info;
	MemoryContext worker_cxt;
	LsmCandidate *cands;
	TimestampTz last_busy;

	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	pqsignal(SIGTERM, die);
	BackgroundWorkerUnblockSignals();
	am_lsm_worker = true;

	memcpy(&info, MyBgworkerEntry->bgw_extra, sizeof(info));
	if (lsm_workers == NULL || lsm_shared == NULL ||
		info.entry < 0 || info.entry >= LSM_WORKER_SLOTS)
		proc_exit(0);
	worker_entry = info.entry;
	worker_generation = info.generation;
	if (!LsmWorkerAttach(dbid))
		proc_exit(0);			/* forgotten by the launcher meanwhile */
	before_shmem_exit(LsmWorkerOnExit, (Datum) 0);

	BackgroundWorkerInitializeConnectionByOid(dbid, InvalidOid, 0);

	SpinLockAcquire(&lsm_workers->mutex);
	lsm_workers->workers[worker_entry].connected = true;
	LsmFailureForgetLocked(dbid);
	SpinLockRelease(&lsm_workers->mutex);

	pgstat_report_appname("lsm_am worker");
	pgstat_report_activity(STATE_IDLE, NULL);

	worker_cxt = AllocSetContextCreate(TopMemoryContext, "lsm_am worker",
									   ALLOCSET_DEFAULT_SIZES);
	MemoryContextSwitchTo(worker_cxt);
	cands = MemoryContextAlloc(TopMemoryContext,
							   sizeof(LsmCandidate) * lsm_shared->nslots);
	worker_retry_at = MemoryContextAllocZero(TopMemoryContext,
											 sizeof(TimestampTz) * lsm_shared->nslots);
	worker_retry_gen = MemoryContextAllocZero(TopMemoryContext,
											  sizeof(uint32) * lsm_shared->nslots);
	worker_retry_count = MemoryContextAllocZero(TopMemoryContext,
												sizeof(int) * lsm_shared->nslots);

	last_busy = GetCurrentTimestamp();
	for (;;)
	{
		bool		did_work = false;
		bool		waiting_work = false;
		TimestampTz now;
		int			n;

		/* a cancel between two indexes has nothing to cancel */
		QueryCancelPending = false;
		CHECK_FOR_INTERRUPTS();
		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
		}
		if (lsm_max_workers <= 0)
			proc_exit(0);
		worker_last_db_probe = GetCurrentTimestamp();
		if (LsmDatabaseWanted())
			LsmWorkerLeaveDatabase();

		n = LsmWorkerCollect(cands);
		for (int k = 0; k < n; k++)
		{
			LsmCandidate *c = &cands[k];
			LsmWorkResult result;

			now = GetCurrentTimestamp();
			if (worker_retry_gen[c->slotno] == c->generation &&
				now < worker_retry_at[c->slotno])
			{
				waiting_work = true;
				continue;
			}
			if (!LsmWorkerClaim(c->slotno))
				continue;		/* the other worker of our database has it */
			result = LsmWorkerMaintainIndex(c);
			LsmWorkerUnclaim();

			switch (result)
			{
				case LSM_WR_DONE:
					did_work = true;
					worker_retry_count[c->slotno] = 0;
					break;
				case LSM_WR_STALE:
					break;
				case LSM_WR_LOCKED:
				case LSM_WR_YIELDED:
				case LSM_WR_ERROR:
					waiting_work = true;
					LsmWorkerBackOff(c, result, GetCurrentTimestamp());
					break;
				case LSM_WR_DATABASE:
					LsmWorkerLeaveDatabase();
					break;
			}
			CHECK_FOR_INTERRUPTS();
			MemoryContextReset(worker_cxt);
		}

		now = GetCurrentTimestamp();
		if (did_work || waiting_work)
			last_busy = now;
		if (did_work)
			continue;			/* look again at once: more may be queued */

		if (TimestampDifferenceExceeds(last_busy, now, lsm_worker_idle_timeout_ms))
			proc_exit(0);
		pgstat_report_stat(false);
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 LSM_WORKER_POLL_MS,
						 LsmWaitEventNamed("LsmWorkerIdle", &wait_event_idle));
		ResetLatch(MyLatch);
	}
}
