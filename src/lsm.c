/*
 * lsm.c — access method handler, module initialisation, GUCs and reloptions.
 */
#include "postgres.h"

#include "access/reloptions.h"
#include "commands/vacuum.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "storage/ipc.h"
#include "utils/guc.h"

#include "lsm.h"
#include "lsmvalidate.h"

PG_MODULE_MAGIC;

int			lsm_memory_mb = 64;
int			lsm_max_indexes = 64;
int			lsm_memtable_size_kb = LSM_MEMTABLE_SIZE_DEFAULT;
int			lsm_flush_delay_ms = 0;
int			lsm_l0_compaction_trigger = 4;
int			lsm_l0_slowdown_trigger = 20;
int			lsm_l0_stop_trigger = 36;

static relopt_enum_elt_def lsm_compaction_values[] = {
	{"leveled", LSM_POLICY_LEVELED},
	{"tiered", LSM_POLICY_TIERED},
	{"lazy", LSM_POLICY_LAZY},
	{(const char *) NULL}
};

static relopt_kind lsm_relopt_kind;

static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

void		_PG_init(void);

static void
lsm_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	LsmShmemRequest();
}

static void
lsm_shmem_startup(void)
{
	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();
	LsmShmemStartup();
}

/* Module load: GUCs and reloptions always; shared memory only when preloaded. */
void
_PG_init(void)
{
	DefineCustomIntVariable("lsm_am.memtable_size",
							"Default size of an lsm index's memtable, in kilobytes.",
							"When the memtable reaches this size it is written out as a sorted run. The index option memtable_size overrides it.",
							&lsm_memtable_size_kb, LSM_MEMTABLE_SIZE_DEFAULT,
							LSM_MEMTABLE_SIZE_MIN, LSM_MEMTABLE_SIZE_MAX,
							PGC_USERSET, GUC_UNIT_KB, NULL, NULL, NULL);
	DefineCustomIntVariable("lsm_am.l0_compaction_trigger",
							"Number of level-0 runs (flushed memtables) that starts a compaction into level 1.",
							NULL,
							&lsm_l0_compaction_trigger, 4, 1, 64,
							PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("lsm_am.l0_slowdown_trigger",
							"Number of level-0 runs at which inserts are slowed down.",
							"Backpressure while compaction catches up, as RocksDB's level0_slowdown_writes_trigger.",
							&lsm_l0_slowdown_trigger, 20, 1, 100,
							PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("lsm_am.l0_stop_trigger",
							"Number of level-0 runs at which inserts wait for compaction.",
							"As RocksDB's level0_stop_writes_trigger.",
							&lsm_l0_stop_trigger, 36, 1, 100,
							PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("lsm_am.flush_delay_ms",
							"Test hook: sleep this long after writing each page of a flush, merge or CREATE INDEX, after each data page VACUUM visits, and before a truncation that gives pages back.",
							"For crash tests only.",
							&lsm_flush_delay_ms, 0, 0, 10000,
							PGC_SUSET, GUC_UNIT_MS | GUC_NOT_IN_SAMPLE, NULL, NULL, NULL);

	lsm_relopt_kind = add_reloption_kind();
	add_int_reloption(lsm_relopt_kind, "memtable_size",
					  "Size of the memtable in kilobytes before it is written out as a sorted run",
					  -1, LSM_MEMTABLE_SIZE_MIN, LSM_MEMTABLE_SIZE_MAX,
					  AccessExclusiveLock);
	add_enum_reloption(lsm_relopt_kind, "compaction",
					   "Compaction policy: leveled, tiered or lazy (tiered above, leveled at the last level)",
					   lsm_compaction_values, LSM_POLICY_LEVELED,
					   "Valid values are \"leveled\", \"tiered\" and \"lazy\".",
					   ShareUpdateExclusiveLock);
	add_int_reloption(lsm_relopt_kind, "size_ratio",
					  "Size ratio between adjacent levels (leveled), or runs per level (tiered)",
					  10, 2, 100, ShareUpdateExclusiveLock);
	add_int_reloption(lsm_relopt_kind, "bloom_bits_per_key",
					  "Bits per key of the bloom filter of each run; 0 disables the filters",
					  10, 0, 32, ShareUpdateExclusiveLock);
	add_int_reloption(lsm_relopt_kind, "bloom_columns",
					  "Leading index columns the bloom filters hash; 0 means all columns",
					  1, 0, INDEX_MAX_KEYS, ShareUpdateExclusiveLock);

	/*
	 * Server-start settings can only be defined while preloading (otherwise
	 * PostgreSQL raises FATAL); without preloading, every index operation
	 * reports the missing preload instead (LsmCheckPreloaded).
	 */
	if (!process_shared_preload_libraries_in_progress)
		return;

	DefineCustomIntVariable("lsm_am.memory",
							"Shared memory for lsm memtables, in megabytes.",
							"Divided into 64 kB chunks shared by all lsm indexes.",
							&lsm_memory_mb, 64, 1, 4095,
							PGC_POSTMASTER, GUC_UNIT_MB, NULL, NULL, NULL);
	DefineCustomIntVariable("lsm_am.max_indexes",
							"Number of lsm indexes whose memtables can be cached at once.",
							"Least recently used memtables are dropped (and rebuilt from the index's log pages on next use) when more indexes are active.",
							&lsm_max_indexes, 64, 1, 10000,
							PGC_POSTMASTER, 0, NULL, NULL, NULL);
	LsmWorkerInit();
	LsmInsertInit();
	MarkGUCPrefixReserved("lsm_am");

	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = lsm_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = lsm_shmem_startup;
}

/* Parse and validate reloptions. */
bytea *
lsmoptions(Datum reloptions, bool validate)
{
	static const relopt_parse_elt tab[] = {
		{"memtable_size", RELOPT_TYPE_INT, offsetof(LsmOptions, memtable_size)},
		{"compaction", RELOPT_TYPE_ENUM, offsetof(LsmOptions, compaction)},
		{"size_ratio", RELOPT_TYPE_INT, offsetof(LsmOptions, size_ratio)},
		{"bloom_bits_per_key", RELOPT_TYPE_INT, offsetof(LsmOptions, bloom_bits_per_key)},
		{"bloom_columns", RELOPT_TYPE_INT, offsetof(LsmOptions, bloom_columns)},
	};
	LsmOptions *opts;

	opts = (LsmOptions *) build_reloptions(reloptions, validate, lsm_relopt_kind,
										   sizeof(LsmOptions), tab, lengthof(tab));
	return (bytea *) opts;
}

/* Effective memtable size of an index, in kB. */
int
LsmMemtableSizeKb(Relation index)
{
	LsmOptions *opts = (LsmOptions *) index->rd_options;

	if (opts && opts->memtable_size >= LSM_MEMTABLE_SIZE_MIN)
		return opts->memtable_size;
	return lsm_memtable_size_kb;
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
	amroutine->amcanbackward = true;	/* turns by a new snapshot (lsmscan.c) */
	amroutine->amcanunique = false;
	amroutine->amcanmulticol = true;
	amroutine->amoptionalkey = true;
	amroutine->amsearcharray = false;
	amroutine->amsearchnulls = true;
	amroutine->amstorage = false;
	amroutine->amclusterable = false;
	amroutine->ampredlocks = false;
	amroutine->amcanparallel = false;
	amroutine->amcaninclude = false;
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
	amroutine->amestimateparallelscan = NULL;
	amroutine->aminitparallelscan = NULL;
	amroutine->amparallelrescan = NULL;
	LsmAmRoutineSetNewerFields(amroutine);

	PG_RETURN_POINTER(amroutine);
}
