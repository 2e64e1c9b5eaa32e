/*
 * lsmprogress.c — what every backend and worker is doing to an lsm index
 * right now: one entry per PGPROC in shared memory, written by the process
 * itself while a flush, compaction, trivial move, run rewrite, relocation
 * or VACUUM pass runs, and read by lsm_am.progress (am/lsmmonitor.c).
 *
 * Only the owning process writes its entry; readers copy it under the
 * entry's spinlock (a few words: never held across anything else).  An
 * entry is cleared when its job ends, and by the transaction and
 * subtransaction abort callbacks and at process exit, so a job that raised
 * an ERROR does not stay visible.
 */
#include "postgres.h"

#include "access/xact.h"
#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/proc.h"
#include "storage/shmem.h"
#include "storage/spin.h"
#include "utils/rel.h"
#include "utils/timestamp.h"

#include "shmem/lsm_shmem.h"

typedef struct LsmProgressEntry
{
	slock_t		mutex;
	LsmProgress p;
} LsmProgressEntry;

typedef struct LsmProgressShared
{
	int			nentries;
	LsmProgressEntry entries[FLEXIBLE_ARRAY_MEMBER];
} LsmProgressShared;

static LsmProgressShared *lsm_progress = NULL;
static LsmProgressEntry *my_entry = NULL;
static bool my_callbacks = false;

/*
 * A job started while another one of this process runs (VACUUM's pass over
 * the runs rewrites one of them): the outer one, shown again when the inner
 * one ends.  One level is all the callers need.
 */
static LsmProgress my_outer;
static bool my_outer_valid = false;

static int
LsmProgressEntries(void)
{
	return MaxBackends;
}

static Size
LsmProgressShmemSize(void)
{
	return add_size(offsetof(LsmProgressShared, entries),
					mul_size(LsmProgressEntries(), sizeof(LsmProgressEntry)));
}

/* shmem_request_hook (module list of _PG_init) */
void
LsmProgressShmemRequest(void)
{
	RequestAddinShmemSpace(LsmProgressShmemSize());
}

/* shmem_startup_hook (module list of _PG_init) */
void
LsmProgressShmemInit(void)
{
	bool		found;

	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	lsm_progress = ShmemInitStruct("lsm_am progress", LsmProgressShmemSize(), &found);
	if (!found)
	{
		lsm_progress->nentries = LsmProgressEntries();
		for (int i = 0; i < lsm_progress->nentries; i++)
		{
			SpinLockInit(&lsm_progress->entries[i].mutex);
			memset(&lsm_progress->entries[i].p, 0, sizeof(LsmProgress));
		}
	}
	LWLockRelease(AddinShmemInitLock);
}

const char *
LsmJobKindName(LsmJobKind kind)
{
	switch (kind)
	{
		case LSM_JOB_FLUSH:
			return "flush";
		case LSM_JOB_COMPACTION:
			return "compaction";
		case LSM_JOB_MOVE:
			return "trivial move";
		case LSM_JOB_REWRITE:
			return "run rewrite";
		case LSM_JOB_RELOCATION:
			return "relocation";
		case LSM_JOB_VACUUM:
			return "vacuum";
	}
	return "unknown";
}

static void
LsmProgressClear(void)
{
	my_outer_valid = false;
	if (my_entry == NULL || my_entry->p.pid == 0)
		return;
	SpinLockAcquire(&my_entry->mutex);
	my_entry->p.pid = 0;
	SpinLockRelease(&my_entry->mutex);
}

static void
LsmProgressXactCallback(XactEvent event, void *arg)
{
	if (event == XACT_EVENT_ABORT || event == XACT_EVENT_PARALLEL_ABORT)
		LsmProgressClear();
}

static void
LsmProgressSubXactCallback(SubXactEvent event, SubTransactionId mySubid,
						   SubTransactionId parentSubid, void *arg)
{
	if (event == SUBXACT_EVENT_ABORT_SUB)
		LsmProgressClear();
}

static void
LsmProgressAtExit(int code, Datum arg)
{
	LsmProgressClear();
}

/* See lsm_shmem.h. */
void
LsmProgressBegin(Relation index, LsmJobKind kind, int input_runs,
				 uint32 input_levels, int output_level, int64 pages_total)
{
	int			procno;

	if (lsm_progress == NULL)
		return;
	if (my_entry == NULL)
	{
		procno = LsmMyProcNumber();
		if (procno < 0 || procno >= lsm_progress->nentries)
			return;				/* not a process that can run jobs */
		my_entry = &lsm_progress->entries[procno];
	}
	if (!my_callbacks)
	{
		RegisterXactCallback(LsmProgressXactCallback, NULL);
		RegisterSubXactCallback(LsmProgressSubXactCallback, NULL);
		before_shmem_exit(LsmProgressAtExit, (Datum) 0);
		my_callbacks = true;
	}
	if (my_entry->p.pid != 0 && !my_outer_valid)
	{
		my_outer = my_entry->p;
		my_outer_valid = true;
	}
	SpinLockAcquire(&my_entry->mutex);
	my_entry->p.pid = MyProcPid;
	my_entry->p.dbid = MyDatabaseId;
	my_entry->p.indexoid = RelationGetRelid(index);
	my_entry->p.kind = kind;
	my_entry->p.input_runs = input_runs;
	my_entry->p.input_levels = input_levels;
	my_entry->p.output_level = output_level;
	my_entry->p.pages_done = 0;
	my_entry->p.pages_total = pages_total;
	my_entry->p.started_at = GetCurrentTimestamp();
	SpinLockRelease(&my_entry->mutex);
}

/* See lsm_shmem.h. */
void
LsmProgressPages(int64 pages)
{
	if (my_entry == NULL || my_entry->p.pid == 0)
		return;
	SpinLockAcquire(&my_entry->mutex);
	my_entry->p.pages_done += pages;
	if (my_entry->p.pages_done > my_entry->p.pages_total)
		my_entry->p.pages_total = my_entry->p.pages_done;	/* an estimate fell short */
	SpinLockRelease(&my_entry->mutex);
}

/* See lsm_shmem.h. */
TimestampTz
LsmProgressEnd(void)
{
	TimestampTz started = 0;

	if (my_entry == NULL || my_entry->p.pid == 0)
		return 0;
	SpinLockAcquire(&my_entry->mutex);
	started = my_entry->p.started_at;
	if (my_outer_valid)
		my_entry->p = my_outer;
	else
		my_entry->p.pid = 0;
	SpinLockRelease(&my_entry->mutex);
	my_outer_valid = false;
	return started;
}

/* See lsm_shmem.h. */
int
LsmProgressSnapshot(Oid dbid, LsmProgress *out, int max)
{
	int			n = 0;

	if (lsm_progress == NULL)
		return 0;
	for (int i = 0; i < lsm_progress->nentries && n < max; i++)
	{
		LsmProgressEntry *e = &lsm_progress->entries[i];

		if (e->p.pid == 0)		/* unlocked peek: most entries are idle */
			continue;
		SpinLockAcquire(&e->mutex);
		out[n] = e->p;
		SpinLockRelease(&e->mutex);
		if (out[n].pid != 0 && out[n].dbid == dbid)
			n++;
	}
	return n;
}

/* See lsm_shmem.h. */
int
LsmProgressMax(void)
{
	return lsm_progress != NULL ? lsm_progress->nentries : 0;
}
