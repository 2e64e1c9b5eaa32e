/*
 * lsm.c — the access method handler and module start-up (_PG_init).
 * Settings: lsm_options.c.
 */
#include "postgres.h"

#include "access/reloptions.h"
#include "commands/vacuum.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "storage/ipc.h"
#include "utils/guc.h"

#include "am/lsm_am.h"
#include "lsmfault.h"


PG_MODULE_MAGIC;

static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

void		_PG_init(void);

/*
 * Module start-up: every module that needs something at load time, in one
 * list, in layer order (lowest first).  init runs in _PG_init while
 * preloading (hooks, background workers); shmem_request and shmem_startup
 * from PostgreSQL's hooks.  The settings of every module are defined before
 * any of this, by LsmOptionsInit (lsm_options.c).  No module calls another's
 * start-up.
 */
typedef struct LsmModule
{
	const char *name;
	void		(*init) (void);
	void		(*shmem_request) (void);
	void		(*shmem_startup) (void);
} LsmModule;

static const LsmModule lsm_modules[] = {
	{"C++ runtime bindings (core/)", lsm_core_bind_runtime, NULL, NULL},
	{"memtable slots and arena (shmem/)", NULL, LsmShmemRequest, LsmShmemStartup},
	{"run metadata cache (shmem/)", NULL, LsmMetaCacheShmemRequest, LsmMetaCacheShmemInit},
	{"progress of maintenance jobs (shmem/)", NULL, LsmProgressShmemRequest, LsmProgressShmemInit},
	{"background workers (maint/)", LsmWorkerInit, LsmWorkerShmemRequest, LsmWorkerShmemInit},
	{"insert batching (am/)", LsmInsertInit, NULL, NULL},
	{"planner's bloom filter model (am/)", LsmCostInit, NULL, NULL},
};

static void
lsm_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	for (int i = 0; i < lengthof(lsm_modules); i++)
		if (lsm_modules[i].shmem_request)
			lsm_modules[i].shmem_request();
}

static void
lsm_shmem_startup(void)
{
	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();
	for (int i = 0; i < lengthof(lsm_modules); i++)
		if (lsm_modules[i].shmem_startup)
			lsm_modules[i].shmem_startup();
}

/* Module load: settings always; the modules' start-up only when preloaded. */
void
_PG_init(void)
{
	LsmOptionsInit(process_shared_preload_libraries_in_progress);
	LsmFaultDefineGuc();
	if (!process_shared_preload_libraries_in_progress)
		return;

	for (int i = 0; i < lengthof(lsm_modules); i++)
		if (lsm_modules[i].init)
			lsm_modules[i].init();
	MarkGUCPrefixReserved("lsm_am");

	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = lsm_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = lsm_shmem_startup;
}

PG_FUNCTION_INFO_V1(lsm_handler);

/* The access method handler. */
Datum
lsm_handler(PG_FUNCTION_ARGS)
{
	IndexAmRoutine *amroutine = makeNode(IndexAmRoutine);

	amroutine->amstrategies = 5;
	amroutine->amsupport = 1;
	amroutine->amoptsprocnum = 0;
	amroutine->amcanorder = true;
	amroutine->amcanorderbyop = false;
	amroutine->amcanbackward = true;	/* turns by a new snapshot (lsmscanmerge.c) */
	amroutine->amcanunique = true;	/* lsmunique.c */
	amroutine->amcanmulticol = true;
	amroutine->amoptionalkey = true;
	amroutine->amsearcharray = true;
	amroutine->amsearchnulls = true;
	amroutine->amstorage = false;
	amroutine->amclusterable = true;	/* CLUSTER scans with SnapshotAny (doc/impl.md) */
	amroutine->ampredlocks = false;
	amroutine->amcanparallel = true;	/* lsmscanpar.c */
	amroutine->amcaninclude = true;	/* values stored after the key (lsmkey.h) */
	amroutine->amusemaintenanceworkmem = true;
	amroutine->amparallelvacuumoptions = VACUUM_OPTION_PARALLEL_BULKDEL;
	amroutine->amkeytype = InvalidOid;

	amroutine->ambuild = lsmbuild;
	amroutine->ambuildempty = lsmbuildempty;
	amroutine->aminsert = lsminsert;
	amroutine->ambulkdelete = lsmbulkdelete;
	amroutine->amvacuumcleanup = lsmvacuumcleanup;
	amroutine->amcanreturn = lsmcanreturn;
	amroutine->amcostestimate = lsmcostestimate;
	amroutine->amoptions = lsmoptions;
	amroutine->amproperty = NULL;
	amroutine->ambuildphasename = lsmbuildphasename;
	amroutine->amvalidate = lsmvalidate;
	amroutine->amadjustmembers = NULL;
	amroutine->ambeginscan = lsmbeginscan;
	amroutine->amrescan = lsmrescan;
	amroutine->amgettuple = lsmgettuple;
	amroutine->amgetbitmap = lsmgetbitmap;
	amroutine->amendscan = lsmendscan;
	amroutine->ammarkpos = NULL;
	amroutine->amrestrpos = NULL;
	amroutine->amestimateparallelscan = lsmestimateparallelscan;
	amroutine->aminitparallelscan = lsminitparallelscan;
	amroutine->amparallelrescan = lsmparallelrescan;
	LsmAmRoutineSetNewerFields(amroutine);

	PG_RETURN_POINTER(amroutine);
}
