/*
 * lsmworker_int.h — what the launcher (lsmlauncher.c) and the workers
 * (lsmworker.c) share: the worker table in shared memory and its helpers
 * (lsmworkertab.c).
 * Private to src/maint/; the design is in lsmworker.c's header.
 */
#ifndef LSMWORKER_INT_H
#define LSMWORKER_INT_H

#include "postmaster/bgworker.h"
#include "storage/latch.h"
#include "storage/spin.h"
#include "utils/timestamp.h"

#include "maint/lsm_maint.h"

/* Tunables that are not worth a GUC, with their reason. */
#define LSM_WORKERS_PER_DB		2		/* one flushes while one compacts */
#define LSM_WORKER_POLL_MS		100		/* idle poll; DROP DATABASE probe */
#define LSM_WORKER_RETRY_MS		5000	/* launcher retry after a failed start */
#define LSM_WORKER_FAILURE_MS	(2 * LSM_WORKER_RETRY_MS)	/* backends self-serve
															 * this long after one */
#define LSM_WORKER_BACKOFF_MS	1000	/* first back-off of an index */
#define LSM_WORKER_BACKOFF_MAX_MS 60000 /* longest back-off of an index */
#define LSM_WORKER_ORPHAN_MS	60000	/* forget a start nobody can track */
#define LSM_WORKER_LOG_MS		60000	/* "could not start" at most this often */

/* The lock a worker holds on the index it maintains (see the header). */
#define LSM_WORKER_LOCKMODE		ShareUpdateExclusiveLock

/* Why starting a worker for a database failed. */
typedef enum LsmStartFailure
{
	LSM_SF_REGISTER,			/* RegisterDynamicBackgroundWorker failed */
	LSM_SF_START,				/* the worker exited before it connected */
	LSM_SF_DATABASE,			/* the database is wanted by DROP DATABASE etc. */
	LSM_SF_CAP					/* lsm_am.max_workers taken by other databases */
} LsmStartFailure;

/* One worker, from the launcher's decision to start it until it exits. */
typedef struct LsmWorkerEntry
{
	bool		in_use;
	bool		connected;		/* the worker reached its database */
	Oid			dbid;
	uint32		generation;		/* tells a late-starting worker it is stale */
	pid_t		pid;			/* 0 until the worker runs */
	Latch	   *latch;			/* the worker's, set by the worker */
	int			busy_slot;		/* slot being maintained; -1: none */
	TimestampTz start_requested;
} LsmWorkerEntry;

/* The last failure to start a worker for a database. */
typedef struct LsmStartFailureEntry
{
	Oid			dbid;			/* InvalidOid: unused */
	LsmStartFailure reason;
	TimestampTz at;
} LsmStartFailureEntry;

typedef struct LsmWorkerShared
{
	slock_t		mutex;			/* protects everything below */
	pid_t		launcher_pid;	/* 0: not running */
	Latch	   *launcher_latch;
	uint32		next_generation;
	LsmWorkerEntry workers[LSM_WORKER_SLOTS];
	LsmStartFailureEntry failures[LSM_WORKER_SLOTS];
} LsmWorkerShared;

/* What a worker is started with, in bgw_extra. */
typedef struct LsmWorkerStartInfo
{
	int			entry;
	uint32		generation;
} LsmWorkerStartInfo;

StaticAssertDecl(sizeof(LsmWorkerStartInfo) <= BGW_EXTRALEN,
				 "LsmWorkerStartInfo must fit bgw_extra");

extern LsmWorkerShared *lsm_workers;

/* REQUIRES (the *Locked ones): lsm_workers->mutex */
extern LsmStartFailureEntry *LsmFailureFindLocked(Oid dbid);
extern void LsmFailureRecordLocked(Oid dbid, LsmStartFailure reason, TimestampTz now);
extern void LsmFailureForgetLocked(Oid dbid);
extern int	LsmLiveWorkersLocked(Oid dbid);
extern bool LsmEntryRelease(int i, uint32 gen, bool failed, LsmStartFailure reason);

#endif							/* LSMWORKER_INT_H */
