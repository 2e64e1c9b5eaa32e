/*
 * lsmlauncher.c — the lsm_am launcher: one background worker, registered in
 * _PG_init, not connected to a database, that starts and reaps the
 * per-database workers (lsmworker.c, where the design is described).
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

/* ------------------------------------------------------------------------
 * Launcher
 * ------------------------------------------------------------------------ */

/* A database with pending work, as the launcher sees it in one round. */
typedef struct LsmDbDemand
{
	Oid			dbid;
	Oid			spcid;			/* of one of its slots: where to look for it */
	int			indexes;		/* slots with pending work */
	int			live;			/* workers starting or running */
} LsmDbDemand;

/* launcher-local state */
static BackgroundWorkerHandle *launcher_handles[LSM_WORKER_SLOTS];
static uint32 launcher_handle_gen[LSM_WORKER_SLOTS];
static LsmDbDemand *launcher_demand;
static int	launcher_rr;		/* rotates which database goes first */
static TimestampTz launcher_last_log;
static uint32 wait_event_main = 0;

static void
LsmLauncherOnExit(int code, Datum arg)
{
	SpinLockAcquire(&lsm_workers->mutex);
	if (lsm_workers->launcher_pid == MyProcPid)
	{
		lsm_workers->launcher_pid = 0;
		lsm_workers->launcher_latch = NULL;
	}
	SpinLockRelease(&lsm_workers->mutex);
}

/*
 * Free the entries of workers that are gone without having freed their entry
 * themselves (they could not be forked, or never ran), and the handles of
 * workers that freed theirs.
 */
static void
LsmLauncherReap(TimestampTz now)
{
	for (int i = 0; i < LSM_WORKER_SLOTS; i++)
	{
		LsmWorkerEntry *e = &lsm_workers->workers[i];
		bool		in_use;
		uint32		gen;
		pid_t		pid;
		TimestampTz requested;

		SpinLockAcquire(&lsm_workers->mutex);
		in_use = e->in_use;
		gen = e->generation;
		pid = e->pid;
		requested = e->start_requested;
		SpinLockRelease(&lsm_workers->mutex);

		if (launcher_handles[i] != NULL &&
			(!in_use || gen != launcher_handle_gen[i]))
		{
			pfree(launcher_handles[i]);
			launcher_handles[i] = NULL;
		}
		if (!in_use)
			continue;

		if (launcher_handles[i] != NULL)
		{
			pid_t		hpid;

			if (GetBackgroundWorkerPid(launcher_handles[i], &hpid) != BGWH_STOPPED)
				continue;
			pfree(launcher_handles[i]);
			launcher_handles[i] = NULL;
			/* a worker that ran freed its entry on exit: this one never did */
			LsmEntryRelease(i, gen, true, LSM_SF_START);
		}
		else if (pid == 0 &&
				 TimestampDifferenceExceeds(requested, now, LSM_WORKER_ORPHAN_MS))
		{
			/*
			 * Started by an earlier launcher, whose handle died with it, and
			 * still not running: forget it.  Should it start after all, it
			 * finds its generation gone and exits.
			 */
			LsmEntryRelease(i, gen, false, LSM_SF_START);
		}
	}
}

/*
 * Does the database of d still exist?  DROP DATABASE removes its directories
 * before it commits; a slot of a dropped database (its pending bits set when
 * the drop interrupted a flush) would otherwise make us start workers that
 * cannot connect, forever.
 */
static bool
LsmDatabaseDirExists(Oid dbid, Oid spcid)
{
	char	   *path = GetDatabasePath(dbid, spcid);
	struct stat st;
	bool		exists;

	exists = stat(path, &st) == 0 || errno != ENOENT;
	pfree(path);
	return exists;
}

/* Clear the pending bits of dbid's slots whose database directory is gone. */
static void
LsmLauncherForgetDroppedDatabase(Oid dbid)
{
	LWLockAcquire(lsm_shared->map_lock, LW_EXCLUSIVE);
	for (int i = 0; i < lsm_shared->nslots; i++)
	{
		LsmSlot    *s = &lsm_shared->slots[i];

		if (s->dbid == dbid && pg_atomic_read_u32(&s->pending) != 0 &&
			!LsmDatabaseDirExists(s->dbid, s->spcid))
			pg_atomic_write_u32(&s->pending, 0);
	}
	LWLockRelease(lsm_shared->map_lock);
}

/* Register a worker for dbid.  false: max_worker_processes is exhausted. */
static bool
LsmLauncherStartWorker(Oid dbid, TimestampTz now)
{
	BackgroundWorker bgw;
	BackgroundWorkerHandle *handle;
	LsmWorkerStartInfo info;
	int			entry = -1;
	uint32		gen = 0;

	SpinLockAcquire(&lsm_workers->mutex);
	for (int i = 0; i < LSM_WORKER_SLOTS; i++)
	{
		LsmWorkerEntry *e = &lsm_workers->workers[i];

		if (!e->in_use)
		{
			gen = ++lsm_workers->next_generation;
			e->in_use = true;
			e->connected = false;
			e->dbid = dbid;
			e->generation = gen;
			e->pid = 0;
			e->latch = NULL;
			e->busy_slot = -1;
			e->start_requested = now;
			entry = i;
			break;
		}
	}
	SpinLockRelease(&lsm_workers->mutex);
	if (entry < 0)
		return true;			/* cannot happen: the cap is below the table */

	memset(&bgw, 0, sizeof(bgw));
	bgw.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
	bgw.bgw_start_time = BgWorkerStart_RecoveryFinished;
	bgw.bgw_restart_time = BGW_NEVER_RESTART;
	snprintf(bgw.bgw_library_name, BGW_MAXLEN, "lsm_am");
	snprintf(bgw.bgw_function_name, BGW_MAXLEN, "lsm_worker_main");
	snprintf(bgw.bgw_name, BGW_MAXLEN, "lsm_am worker for database %u", dbid);
	snprintf(bgw.bgw_type, BGW_MAXLEN, "lsm_am worker");
	bgw.bgw_main_arg = ObjectIdGetDatum(dbid);
	info.entry = entry;
	info.generation = gen;
	memcpy(bgw.bgw_extra, &info, sizeof(info));
	bgw.bgw_notify_pid = MyProcPid;

	if (!RegisterDynamicBackgroundWorker(&bgw, &handle))
	{
		LsmEntryRelease(entry, gen, true, LSM_SF_REGISTER);
		if (launcher_last_log == 0 ||
			TimestampDifferenceExceeds(launcher_last_log, now, LSM_WORKER_LOG_MS))
		{
			launcher_last_log = now;
			ereport(LOG,
					(errmsg("lsm_am could not start a background worker for database %u",
							dbid),
					 errdetail("All max_worker_processes slots (%d) are in use; until a worker can start, backends flush and compact lsm indexes themselves.",
							   max_worker_processes),
					 errhint("Raise max_worker_processes (requires a restart) or lower lsm_am.max_workers.")));
		}
		return false;
	}
	launcher_handles[entry] = handle;
	launcher_handle_gen[entry] = gen;
	return true;
}

/* May the launcher (re)try starting a worker for dbid now? */
static bool
LsmLauncherMayStart(Oid dbid, TimestampTz now)
{
	LsmStartFailureEntry *f;
	bool		ok = true;

	SpinLockAcquire(&lsm_workers->mutex);
	f = LsmFailureFindLocked(dbid);
	if (f != NULL && f->reason != LSM_SF_CAP &&
		!TimestampDifferenceExceeds(f->at, now, LSM_WORKER_RETRY_MS))
		ok = false;
	SpinLockRelease(&lsm_workers->mutex);
	return ok;
}

/* One look at the slots: start the workers that are missing. */
static void
LsmLauncherRound(void)
{
	TimestampTz now = GetCurrentTimestamp();
	int			ndbs = 0;
	int			total = 0;

	LsmLauncherReap(now);
	if (lsm_max_workers <= 0)
		return;

	/* unlocked: the pending bits are a hint, an Oid is read atomically */
	for (int i = 0; i < lsm_shared->nslots; i++)
	{
		LsmSlot    *s = &lsm_shared->slots[i];
		Oid			dbid = s->dbid;
		int			j;

		if (!OidIsValid(dbid) || pg_atomic_read_u32(&s->pending) == 0)
			continue;
		for (j = 0; j < ndbs; j++)
			if (launcher_demand[j].dbid == dbid)
				break;
		if (j == ndbs)
		{
			launcher_demand[ndbs].dbid = dbid;
			launcher_demand[ndbs].spcid = s->spcid;
			launcher_demand[ndbs].indexes = 0;
			launcher_demand[ndbs].live = 0;
			ndbs++;
		}
		launcher_demand[j].indexes++;
	}
	if (ndbs == 0)
		return;

	SpinLockAcquire(&lsm_workers->mutex);
	for (int i = 0; i < LSM_WORKER_SLOTS; i++)
		if (lsm_workers->workers[i].in_use)
			total++;
	for (int j = 0; j < ndbs; j++)
		launcher_demand[j].live = LsmLiveWorkersLocked(launcher_demand[j].dbid);
	SpinLockRelease(&lsm_workers->mutex);

	/* first a worker for every database, then a second where useful */
	launcher_rr = (launcher_rr + 1) % ndbs;
	for (int pass = 1; pass <= 2; pass++)
	{
		for (int k = 0; k < ndbs; k++)
		{
			LsmDbDemand *d = &launcher_demand[(launcher_rr + k) % ndbs];
			int			want = pass == 1 ? 1 : Min(d->indexes, LSM_WORKERS_PER_DB);

			while (d->live < want)
			{
				if (!LsmLauncherMayStart(d->dbid, now))
					break;
				if (d->live == 0 && !LsmDatabaseDirExists(d->dbid, d->spcid))
				{
					LsmLauncherForgetDroppedDatabase(d->dbid);
					d->live = want; /* nothing more for it this round */
					break;
				}
				if (total >= lsm_max_workers)
				{
					/* backends of a starved database serve themselves */
					if (d->live == 0)
					{
						SpinLockAcquire(&lsm_workers->mutex);
						LsmFailureRecordLocked(d->dbid, LSM_SF_CAP, now);
						SpinLockRelease(&lsm_workers->mutex);
					}
					break;
				}
				if (!LsmLauncherStartWorker(d->dbid, now))
					return;		/* no slot for anyone: retry next round */
				d->live++;
				total++;
			}
		}
	}
}

/* Entry point of the launcher (registered in LsmWorkerInit). */
void
lsm_launcher_main(Datum arg)
{
	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	pqsignal(SIGTERM, SignalHandlerForShutdownRequest);
	BackgroundWorkerUnblockSignals();

	if (lsm_workers == NULL || lsm_shared == NULL)
		proc_exit(0);			/* not preloaded: never registered, but be safe */

	on_shmem_exit(LsmLauncherOnExit, (Datum) 0);
	/* no database: only to be seen in pg_stat_activity (backend_type
	 * "lsm_am launcher"); the launcher reads shared memory only */
	BackgroundWorkerInitializeConnection(NULL, NULL, 0);
	pgstat_report_activity(STATE_IDLE, NULL);
	SpinLockAcquire(&lsm_workers->mutex);
	lsm_workers->launcher_pid = MyProcPid;
	lsm_workers->launcher_latch = MyLatch;
	SpinLockRelease(&lsm_workers->mutex);

	launcher_demand = MemoryContextAlloc(TopMemoryContext,
										 sizeof(LsmDbDemand) * lsm_shared->nslots);

	for (;;)
	{
		MemoryContext old;

		CHECK_FOR_INTERRUPTS();
		if (ShutdownRequestPending)
		{
			/*
			 * Exit code 1: at server shutdown nothing is restarted anyway;
			 * after a pg_terminate_backend() the postmaster restarts us in
			 * bgw_restart_time (exit code 0 would unregister the launcher).
			 */
			proc_exit(1);
		}
		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
		}

		/* handles outlive a round; everything else is freed at once */
		old = MemoryContextSwitchTo(TopMemoryContext);
		LsmLauncherRound();
		MemoryContextSwitchTo(old);

		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 lsm_worker_naptime_ms,
						 LsmWaitEventNamed("LsmLauncherMain", &wait_event_main));
		ResetLatch(MyLatch);
	}
}

