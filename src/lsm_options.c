/*
 * lsm_options.c — the GUCs and index options of lsm_am: definitions,
 * defaults, ranges, and the accessors that resolve an index's effective
 * settings.  Declarations and the rules: lsm_options.h.
 */
#include "postgres.h"

#include "access/reloptions.h"
#include "utils/guc.h"
#include "utils/rel.h"

#include "core/lsm_core.h"
#include "lsm_options.h"

int			lsm_memory_mb = 64;
int			lsm_max_indexes = 64;
int			lsm_metadata_cache_mb = 32;
int			lsm_memtable_size_kb = LSM_MEMTABLE_SIZE_DEFAULT;
int			lsm_flush_delay_ms = 0;
int			lsm_free_list_limit = 160;
int			lsm_max_pieces = 48;	/* LSM_PIECE_MAX_RUNS, lsmpiece.c */
int			lsm_replay_delay_ms = 0;
int			lsm_l0_compaction_trigger = LSM_L0_TRIGGER_DEFAULT;
int			lsm_l0_slowdown_trigger = 20;
int			lsm_l0_stop_trigger = 36;
int			lsm_max_workers = 2;
int			lsm_worker_naptime_ms = 1000;
int			lsm_worker_idle_timeout_ms = 10000;
bool		lsm_log_maintenance = false;

static relopt_enum_elt_def lsm_compaction_values[] = {
	{"leveled", LSM_POLICY_LEVELED},
	{"tiered", LSM_POLICY_TIERED},
	{"lazy", LSM_POLICY_LAZY},
	{(const char *) NULL}
};

static relopt_kind lsm_relopt_kind;

/* _PG_init: GUCs and reloptions always; server-start settings when preloading. */
void
LsmOptionsInit(bool preload)
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
							&lsm_l0_compaction_trigger, LSM_L0_TRIGGER_DEFAULT, LSM_L0_TRIGGER_MIN, LSM_L0_TRIGGER_MAX,
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
	DefineCustomBoolVariable("lsm_am.log_maintenance",
							 "Logs every flush, compaction, trivial move, run rewrite, relocation and metadata cache warm of an lsm index.",
							 "One LOG line each, with the index, its input and output runs (levels, entries, pages), the WAL written and the duration, in the spirit of log_autovacuum_min_duration; a warm (the index's first use after a start) says the pages it put into the shared metadata cache.",
							 &lsm_log_maintenance, false,
							 PGC_SUSET, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("lsm_am.replay_delay_ms",
							"Test hook: sleep this long before replaying each log page into a memtable (after a restart, an eviction, on a standby).",
							"For tests of cancelling a long replay only.",
							&lsm_replay_delay_ms, 0, 0, 1000,
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
	add_int_reloption(lsm_relopt_kind, "l0_compaction_trigger",
					  "Number of level-0 runs that starts a compaction into level 1; default: lsm_am.l0_compaction_trigger",
					  -1, LSM_L0_TRIGGER_MIN, LSM_L0_TRIGGER_MAX,
					  ShareUpdateExclusiveLock);

	/*
	 * Server-start settings can only be defined while preloading (otherwise
	 * PostgreSQL raises FATAL); without preloading, every index operation
	 * reports the missing preload instead (LsmCheckPreloaded).
	 */
	if (!preload)
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
	DefineCustomIntVariable("lsm_am.metadata_cache_size",
							"Shared memory for copies of lsm run headers, fence pages and filter pages, in megabytes.",
							"Lookups read these pages from here instead of shared buffers, where an ingest does not keep them. 0 turns the cache off.",
							&lsm_metadata_cache_mb, 32, 0, 4095,
							PGC_POSTMASTER, GUC_UNIT_MB, NULL, NULL, NULL);
	DefineCustomIntVariable("lsm_am.free_list_limit",
							"Test hook: the metapage's free list counts as full at this many extents.",
							"For tests of a full free list only; 160, the most it holds, otherwise.",
							&lsm_free_list_limit, 160, 2, 160,
							PGC_POSTMASTER, GUC_NOT_IN_SAMPLE, NULL, NULL, NULL);
	DefineCustomIntVariable("lsm_am.max_pieces",
							"Test hook: a merge writes at most this many pieces.",
							"For tests of a merge whose last piece takes all that is left (as when the manifest is nearly full); 48 otherwise.",
							&lsm_max_pieces, 48, 2, 48,
							PGC_SIGHUP, GUC_NOT_IN_SAMPLE, NULL, NULL, NULL);
	DefineCustomIntVariable("lsm_am.max_workers",
							"Maximum number of lsm_am background workers flushing and compacting indexes.",
							"At most two work for one database. 0 disables them: inserting backends then flush and compact themselves. Each worker takes a slot of max_worker_processes.",
							&lsm_max_workers, 2, 0, LSM_WORKER_SLOTS,
							PGC_SIGHUP, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("lsm_am.worker_naptime",
							"Time the lsm_am launcher sleeps between looks for indexes with pending work.",
							"Backends also wake it when they queue work, so this only bounds the delay after a missed wake-up or a failed start.",
							&lsm_worker_naptime_ms, 1000, 10, 3600 * 1000,
							PGC_SIGHUP, GUC_UNIT_MS, NULL, NULL, NULL);
	DefineCustomIntVariable("lsm_am.worker_idle_timeout",
							"Time an lsm_am worker without work waits before it exits.",
							NULL,
							&lsm_worker_idle_timeout_ms, 10000, 0, 24 * 3600 * 1000,
							PGC_SIGHUP, GUC_UNIT_MS, NULL, NULL, NULL);
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
		{"l0_compaction_trigger", RELOPT_TYPE_INT, offsetof(LsmOptions, l0_compaction_trigger)},
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

int
LsmCompactionPolicyOf(Relation index)
{
	LsmOptions *opts = (LsmOptions *) index->rd_options;

	return opts ? opts->compaction : LSM_POLICY_LEVELED;
}

int
LsmSizeRatioOf(Relation index)
{
	LsmOptions *opts = (LsmOptions *) index->rd_options;

	return opts && opts->size_ratio >= 2 ? opts->size_ratio : LSM_SIZE_RATIO_DEFAULT;
}

/* Bits per key of the filters of new runs; 0: none. */
int
LsmBloomBitsOf(Relation index)
{
	LsmOptions *opts = (LsmOptions *) index->rd_options;

	return opts ? opts->bloom_bits_per_key : LSM_BLOOM_BITS_DEFAULT;
}

/* Leading columns the filters of new runs hash (of an index of ncols). */
int
LsmBloomColumnsOf(Relation index, int ncols)
{
	LsmOptions *opts = (LsmOptions *) index->rd_options;
	int			c = opts ? opts->bloom_columns : LSM_BLOOM_COLUMNS_DEFAULT;

	if (c <= 0 || c > ncols)
		c = ncols;
	return c;
}

/*
 * Level-0 runs that start a compaction: the index option, else the
 * lsm_am.l0_compaction_trigger of the process compacting (for a worker, the
 * server's configuration; never another session's SET).
 */
int
LsmL0TriggerOf(Relation index)
{
	LsmOptions *opts = (LsmOptions *) index->rd_options;

	if (opts && opts->l0_compaction_trigger >= LSM_L0_TRIGGER_MIN)
		return opts->l0_compaction_trigger;
	return lsm_l0_compaction_trigger;
}
