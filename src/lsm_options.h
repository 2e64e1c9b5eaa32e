/*
 * lsm_options.h — every setting of lsm_am in one place: the GUCs (lsm_am.*)
 * and the index options (reloptions), each with its default and range.
 *
 * This module sits under every layer (beside lsm_compat.h): the access
 * method, maintenance, storage and shared memory all read settings, and none
 * of them may include a higher layer.  It only defines and reads values; it
 * calls nothing of lsm_am.  To add a setting: its variable or LsmOptions
 * field and its DEFAULT/MIN/MAX here, its registration in lsm_options.c,
 * an accessor if it is per index, README.md's settings table, and a test
 * (tests/pgtap/03_settings.sql checks every GUC's default and range).
 */
#ifndef LSM_OPTIONS_H
#define LSM_OPTIONS_H

#include "postgres.h"

#include "utils/relcache.h"

/* ------------------------------------------------------------------------
 * Index options (WITH (...)); parsed into rd_options by lsmoptions()
 * ------------------------------------------------------------------------ */
typedef struct LsmOptions
{
	int32		vl_len_;		/* varlena header (do not touch directly!) */
	int			memtable_size;	/* kB; -1 = lsm_am.memtable_size */
	int			compaction;		/* LsmCompactionPolicy */
	int			size_ratio;
	int			bloom_bits_per_key;	/* 0: no filters */
	int			bloom_columns;	/* leading columns hashed; 0: all */
	int			l0_compaction_trigger;	/* -1 = lsm_am.l0_compaction_trigger */
} LsmOptions;

#define LSM_MEMTABLE_SIZE_MIN	64		/* kB */
#define LSM_MEMTABLE_SIZE_MAX	1048576 /* kB */
#define LSM_MEMTABLE_SIZE_DEFAULT 4096	/* kB */
#define LSM_SIZE_RATIO_DEFAULT	10
#define LSM_BLOOM_BITS_DEFAULT	10
#define LSM_BLOOM_COLUMNS_DEFAULT 1
#define LSM_L0_TRIGGER_MIN		1
#define LSM_L0_TRIGGER_MAX		64
#define LSM_L0_TRIGGER_DEFAULT	4

/* ------------------------------------------------------------------------
 * GUCs (lsm_am.*)
 * ------------------------------------------------------------------------ */
extern int	lsm_memory_mb;			/* shmem: arena size (postmaster) */
extern int	lsm_max_indexes;		/* shmem: slots (postmaster) */
extern int	lsm_metadata_cache_mb;	/* shmem: metadata cache (postmaster) */
extern int	lsm_memtable_size_kb;	/* default of memtable_size */
extern int	lsm_flush_delay_ms;		/* storage, vacuum: crash-test hook */
extern int	lsm_replay_delay_ms;	/* storage: replay test hook (018) */
extern int	lsm_free_list_limit;	/* storage: full free list test hook (008) */
extern int	lsm_max_pieces;		/* storage: pieces per merge test hook (037) */
extern int	lsm_l0_compaction_trigger;	/* maint: L0 runs that start a merge */
extern int	lsm_l0_slowdown_trigger;	/* insert: backpressure, delay */
extern int	lsm_l0_stop_trigger;		/* insert: backpressure, wait */
extern int	lsm_max_workers;		/* maint: background workers */
extern int	lsm_worker_naptime_ms;
extern int	lsm_worker_idle_timeout_ms;
extern bool lsm_log_maintenance;	/* maint: a LOG line per flush, compaction */

#define LSM_WORKER_SLOTS		64		/* maximum of lsm_am.max_workers */

/*
 * _PG_init: define the GUCs and the reloptions.  preload: also the settings
 * that can only be defined while preloading (PGC_POSTMASTER, the workers').
 */
extern void LsmOptionsInit(bool preload);

/* amoptions */
extern bytea *lsmoptions(Datum reloptions, bool validate);

/* Effective per-index settings (index option, else the GUC or default). */
extern int	LsmMemtableSizeKb(Relation index);
extern int	LsmCompactionPolicyOf(Relation index);
extern int	LsmSizeRatioOf(Relation index);
extern int	LsmBloomBitsOf(Relation index);
extern int	LsmBloomColumnsOf(Relation index, int ncols);
extern int	LsmL0TriggerOf(Relation index);

#endif							/* LSM_OPTIONS_H */
