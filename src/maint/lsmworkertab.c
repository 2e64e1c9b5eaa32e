/*
 * lsmworkertab.c — the worker table in shared memory, which backends, the
 * launcher (lsmlauncher.c) and the workers (lsmworker.c) share: registering
 * the launcher at start-up, the table's shared memory, the records of failed
 * worker starts, and the calls backends make (LsmWakeWorkers,
 * LsmWorkersAvailable).  The design is in lsmworker.c's header.
 */
#include "postgres.h"

#include "miscadmin.h"
#include "postmaster/bgworker.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "storage/spin.h"
#include "utils/timestamp.h"

#include "maint/lsmworker_int.h"

LsmWorkerShared *lsm_workers = NULL;

/* ------------------------------------------------------------------------
 * Module initialisation and shared memory
 * ------------------------------------------------------------------------ */

/* _PG_init, preloading only: register the launcher; lower floors' wake-ups. */
void
LsmWorkerInit(void)
{
	BackgroundWorker bgw;

	lsm_wake_workers = LsmWakeWorkers;

	memset(&bgw, 0, sizeof(bgw));
	/* connected to no database (as the logical replication launcher), so
	 * that it shows in pg_stat_activity with its backend_type */
	bgw.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
	bgw.bgw_start_time = BgWorkerStart_RecoveryFinished;
	bgw.bgw_restart_time = 5;
	snprintf(bgw.bgw_library_name, BGW_MAXLEN, "lsm_am");
	snprintf(bgw.bgw_function_name, BGW_MAXLEN, "lsm_launcher_main");
	snprintf(bgw.bgw_name, BGW_MAXLEN, "lsm_am launcher");
	snprintf(bgw.bgw_type, BGW_MAXLEN, "lsm_am launcher");
	bgw.bgw_main_arg = (Datum) 0;
	bgw.bgw_notify_pid = 0;
	RegisterBackgroundWorker(&bgw);
}

static Size
LsmWorkerShmemSize(void)
{
	return MAXALIGN(sizeof(LsmWorkerShared));
}

/* shmem_request_hook (module list of _PG_init) */
void
LsmWorkerShmemRequest(void)
{
	RequestAddinShmemSpace(LsmWorkerShmemSize());
}

/* shmem_startup_hook (module list of _PG_init) */
void
LsmWorkerShmemInit(void)
{
	bool		found;

	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	lsm_workers = ShmemInitStruct("lsm_am workers", LsmWorkerShmemSize(), &found);
	if (!found)
	{
		memset(lsm_workers, 0, sizeof(LsmWorkerShared));
		SpinLockInit(&lsm_workers->mutex);
		for (int i = 0; i < LSM_WORKER_SLOTS; i++)
			lsm_workers->workers[i].busy_slot = -1;
	}
	LWLockRelease(AddinShmemInitLock);
}

/* ------------------------------------------------------------------------
 * The worker table.  Helpers named *Locked REQUIRE lsm_workers->mutex.
 * ------------------------------------------------------------------------ */

LsmStartFailureEntry *
LsmFailureFindLocked(Oid dbid)
{
	for (int i = 0; i < LSM_WORKER_SLOTS; i++)
		if (lsm_workers->failures[i].dbid == dbid)
			return &lsm_workers->failures[i];
	return NULL;
}

/* Remember that a worker for dbid could not be started (or kept). */
void
LsmFailureRecordLocked(Oid dbid, LsmStartFailure reason, TimestampTz now)
{
	LsmStartFailureEntry *f = LsmFailureFindLocked(dbid);

	if (f == NULL)
	{
		/* a free entry, else the oldest */
		f = &lsm_workers->failures[0];
		for (int i = 0; i < LSM_WORKER_SLOTS; i++)
		{
			LsmStartFailureEntry *g = &lsm_workers->failures[i];

			if (g->dbid == InvalidOid)
			{
				f = g;
				break;
			}
			if (g->at < f->at)
				f = g;
		}
	}
	f->dbid = dbid;
	f->reason = reason;
	f->at = now;
}

void
LsmFailureForgetLocked(Oid dbid)
{
	LsmStartFailureEntry *f = LsmFailureFindLocked(dbid);

	if (f != NULL)
		f->dbid = InvalidOid;
}

/* Workers of dbid starting or running. */
int
LsmLiveWorkersLocked(Oid dbid)
{
	int			n = 0;

	for (int i = 0; i < LSM_WORKER_SLOTS; i++)
		if (lsm_workers->workers[i].in_use && lsm_workers->workers[i].dbid == dbid)
			n++;
	return n;
}

/*
 * Free entry i if it still is the incarnation gen; optionally remember a
 * failure for its database.  Returns whether it freed the entry.
 */
bool
LsmEntryRelease(int i, uint32 gen, bool failed, LsmStartFailure reason)
{
	LsmWorkerEntry *e = &lsm_workers->workers[i];
	TimestampTz now = failed ? GetCurrentTimestamp() : 0;
	bool		released = false;

	SpinLockAcquire(&lsm_workers->mutex);
	if (e->in_use && e->generation == gen)
	{
		if (failed)
			LsmFailureRecordLocked(e->dbid, reason, now);
		e->in_use = false;
		e->connected = false;
		e->pid = 0;
		e->latch = NULL;
		e->busy_slot = -1;
		released = true;
	}
	SpinLockRelease(&lsm_workers->mutex);
	return released;
}

/* ------------------------------------------------------------------------
 * Calls from backends
 * ------------------------------------------------------------------------ */

/*
 * Wake dbid's workers, and the launcher if dbid has none.  Stalled inserts
 * call this every few milliseconds: the launcher is woken only when it can
 * do something at once (start a first worker; after a failed start it
 * retries on its own schedule).  A second worker for a database is started
 * by the launcher's periodic round.
 */
void
LsmWakeWorkers(Oid dbid)
{
	Latch	   *latches[LSM_WORKER_SLOTS + 1];
	int			n = 0;
	bool		wake_launcher;
	LsmStartFailureEntry *f;
	TimestampTz failed_at = 0;

	if (lsm_workers == NULL)
		return;

	SpinLockAcquire(&lsm_workers->mutex);
	for (int i = 0; i < LSM_WORKER_SLOTS; i++)
	{
		LsmWorkerEntry *e = &lsm_workers->workers[i];

		if (e->in_use && e->dbid == dbid && e->latch != NULL)
			latches[n++] = e->latch;
	}
	wake_launcher = LsmLiveWorkersLocked(dbid) == 0 &&
		lsm_workers->launcher_latch != NULL;
	if (wake_launcher && (f = LsmFailureFindLocked(dbid)) != NULL &&
		f->reason != LSM_SF_CAP)
		failed_at = f->at;
	if (wake_launcher)
		latches[n++] = lsm_workers->launcher_latch;
	SpinLockRelease(&lsm_workers->mutex);

	if (failed_at != 0 && wake_launcher &&
		!TimestampDifferenceExceeds(failed_at, GetCurrentTimestamp(),
									LSM_WORKER_RETRY_MS))
		n--;					/* the launcher latch is the last one */

	/*
	 * Outside the spinlock (SetLatch may signal).  A latch whose process
	 * exited meanwhile belongs to nobody or to another process: at worst a
	 * spurious wake-up, which every latch user tolerates.
	 */
	for (int i = 0; i < n; i++)
		SetLatch(latches[i]);
}

/*
 * See lsm_maint.h.  Called for every insert while a memtable waits for its flush,
 * so it reads the table without the spinlock: the answer is a hint that may
 * be a moment old either way, which backpressure tolerates (it asks again).
 */
bool
LsmWorkersAvailable(Oid dbid)
{
	volatile LsmWorkerShared *ws = lsm_workers;
	TimestampTz failed_at = 0;

	if (ws == NULL || lsm_max_workers <= 0 || ws->launcher_pid == 0)
		return false;
	for (int i = 0; i < LSM_WORKER_SLOTS; i++)
		if (ws->workers[i].in_use && ws->workers[i].dbid == dbid)
			return true;
	for (int i = 0; i < LSM_WORKER_SLOTS; i++)
		if (ws->failures[i].dbid == dbid)
			failed_at = ws->failures[i].at;
	if (failed_at == 0)
		return true;
	/* every failed retry of the launcher renews the failure */
	return TimestampDifferenceExceeds(failed_at, GetCurrentTimestamp(),
									  LSM_WORKER_FAILURE_MS);
}

