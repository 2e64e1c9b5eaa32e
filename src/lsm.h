/*
 * lsm.h — constants, page layouts, shared structures and prototypes of the
 * lsm_am C shim.  The only place (with lsmkey.h) that defines on-disk structs.
 * Byte layouts: doc/page_format.md.  Design: doc/impl.md.
 */
#ifndef LSM_H
#define LSM_H

#include "postgres.h"

#include "access/amapi.h"
#include "access/genam.h"
#include "access/generic_xlog.h"
#include "nodes/execnodes.h"
#include "nodes/pathnodes.h"
#include "storage/bufpage.h"
#include "storage/lwlock.h"
#include "utils/relcache.h"

#include "core/lsm_core.h"
#include "lsm_compat.h"
#include "lsmkey.h"

/* ------------------------------------------------------------------------
 * On-disk constants.  Do not change without bumping LSM_FORMAT_VERSION.
 * ------------------------------------------------------------------------ */
#define LSM_MAGIC				0x4C534D31	/* "LSM1" */
#define LSM_FORMAT_VERSION		1
#define LSM_METAPAGE_BLKNO		0
#define LSM_PAGE_ID				0xFF8A	/* last 2 bytes of special space */

/* page kinds (LsmPageOpaque.kind) */
#define LSM_PK_META				1
#define LSM_PK_LOG				2
#define LSM_PK_RUN_HEADER		3
#define LSM_PK_RUN_DATA			4
#define LSM_PK_RUN_FENCE		5

/* Special space of every lsm page. */
typedef struct LsmPageOpaqueData
{
	uint16		kind;			/* LSM_PK_* */
	uint16		version;		/* LSM_FORMAT_VERSION */
	uint32		owner;			/* run pages: run id; log pages: log epoch */
	BlockNumber next;			/* log pages: next page of the chain */
	uint16		unused;
	uint16		page_id;		/* LSM_PAGE_ID, for tools like pg_filedump */
} LsmPageOpaqueData;

typedef LsmPageOpaqueData *LsmPageOpaque;

#define LsmPageGetOpaque(page) ((LsmPageOpaque) PageGetSpecialPointer(page))
#define LSM_CONTENT_OFFSET		MAXALIGN(SizeOfPageHeaderData)
#define LSM_CONTENT_CAP \
	(BLCKSZ - LSM_CONTENT_OFFSET - MAXALIGN(sizeof(LsmPageOpaqueData)))
#define LsmPageContent(page)	((uint8 *) (page) + LSM_CONTENT_OFFSET)
#define LsmPageContentLen(page) \
	((int) ((PageHeader) (page))->pd_lower - (int) LSM_CONTENT_OFFSET)

/* One run in the manifest. */
typedef struct LsmRunRef
{
	uint32		run_id;
	uint16		level;			/* 0: flushed memtables; 1: CREATE INDEX/merges */
	uint16		flags;
	BlockNumber start;			/* block of the run's header page */
	uint32		npages;			/* pages in the extent, header included */
	uint64		nentries;		/* live entries (VACUUM keeps it exact) */
} LsmRunRef;

/* Metapage content (block 0), followed by nruns LsmRunRef. */
typedef struct LsmMetaPageData
{
	uint32		magic;
	uint32		version;
	uint64		key_fingerprint;	/* LsmKeyDesc.fingerprint at build */
	uint64		instance_id;	/* random per build: tells index incarnations
								 * apart in shared memory */
	uint32		next_run_id;
	uint32		log_epoch;		/* bumped by every flush */
	BlockNumber log_head;		/* first log page, InvalidBlockNumber if none */
	uint32		nruns;
	uint64		nflushes;
	uint64		nmerges;
	uint64		reserved[4];
	LsmRunRef	runs[FLEXIBLE_ARRAY_MEMBER];
} LsmMetaPageData;

#define LSM_MAX_RUNS \
	((int) ((LSM_CONTENT_CAP - offsetof(LsmMetaPageData, runs)) / sizeof(LsmRunRef)))
#define LsmPageGetMeta(page)	((LsmMetaPageData *) LsmPageContent(page))

/*
 * Log pages: content is a sequence of entries, each a uint16 length (native
 * byte order) followed by that many key bytes; pd_lower marks the end.
 */
#define LSM_LOG_ENTRY_HDR		sizeof(uint16)

/* ------------------------------------------------------------------------
 * Options
 * ------------------------------------------------------------------------ */
typedef struct LsmOptions
{
	int32		vl_len_;		/* varlena header (do not touch directly!) */
	int			memtable_size;	/* kB; -1 = lsm_am.memtable_size */
} LsmOptions;

#define LSM_MEMTABLE_SIZE_MIN	64		/* kB */
#define LSM_MEMTABLE_SIZE_MAX	1048576 /* kB */
#define LSM_MEMTABLE_SIZE_DEFAULT 4096	/* kB */

/* GUCs */
extern int	lsm_memory_mb;
extern int	lsm_max_indexes;
extern int	lsm_memtable_size_kb;
extern int	lsm_max_runs;
extern int	lsm_flush_delay_ms;

/* ------------------------------------------------------------------------
 * Shared memory (lsmshmem.c)
 * ------------------------------------------------------------------------ */
#define LSM_CHUNK_SIZE			(64 * 1024)

/*
 * One shared-memory slot caches one index's memtable.  The memtable is a
 * cache of the index's log pages and is rebuilt from them whenever the slot is
 * lost (restart, eviction), so a slot can be dropped at any time nobody holds
 * its lock.
 */
typedef struct LsmSlot
{
	/* identity: written under the map lock (and the slot lock) */
	Oid			dbid;			/* InvalidOid: free */
	Oid			spcid;
	Oid			relnumber;
	uint32		generation;		/* bumped whenever the identity changes */
	uint64		last_used;		/* LRU clock */

	/* cache state: under the slot lock */
	bool		loaded;
	bool		in_recovery;	/* loaded during recovery: may lag the log
								 * after promotion, so catch up once more */
	uint64		instance_id;
	uint32		log_epoch;
	BlockNumber log_head;
	BlockNumber log_tail;		/* last log page replayed/appended */
	uint16		log_tail_off;	/* pd_lower of log_tail already consumed */
	uint32		log_pages;		/* pages in the current log chain */
	LsmMemtable mt;
} LsmSlot;

typedef struct LsmShared
{
	int			nslots;
	pg_atomic_uint64 clock;
	LWLock	   *map_lock;		/* slot identities */
	LWLock	   *arena_lock;		/* chunk allocation */
	char	   *arena;			/* base of the chunk arena */
	LsmSlot		slots[FLEXIBLE_ARRAY_MEMBER];
} LsmShared;

/* Per-backend cache in rd_amcache. */
typedef struct LsmRelCache
{
	int			slot;			/* -1: none yet */
	uint32		generation;
	uint64		instance_id;
	LsmKeyDesc	desc;
} LsmRelCache;

extern LsmShared *lsm_shared;
extern void LsmShmemRequest(void);
extern void LsmShmemStartup(void);
extern void LsmCheckPreloaded(void);
extern LWLock *LsmSlotLock(int slotno);
extern LsmRelCache *LsmGetRelCache(Relation index);
extern LsmSlot *LsmSlotAcquire(Relation index, LWLockMode mode);
extern void LsmSlotRelease(Relation index, LsmSlot *slot);
extern void LsmSlotReset(LsmSlot *slot);
extern void LsmMemtableAddOrError(Relation index, LsmSlot *slot,
								  const uint8 *key, int len);
extern bool LsmEnsureChunkRoom(LsmSlot *slot, int keylen, bool may_evict);

/* ------------------------------------------------------------------------
 * Pages, metapage, log and runs (lsmstore.c)
 * ------------------------------------------------------------------------ */
extern void LsmInitPage(Page page, uint16 kind, uint32 owner);
extern void LsmInitMetaPage(Page page, uint64 fingerprint);
extern void LsmCheckPage(Relation index, Buffer buf, uint16 kind, uint32 owner);
extern void LsmReadMeta(Relation index, LsmMetaPageData *meta_out,
						LsmRunRef **runs_out);
extern void LsmLogAppend(Relation index, LsmSlot *slot, const uint8 *key, int len);
extern void LsmReportStatus(Relation index, LsmStatus st, const char *what);

typedef struct LsmRunWriter
{
	Relation	index;
	LsmRunBuilder *builder;
	uint32		run_id;
	BlockNumber start;
	BlockNumber next_block;		/* next block to extend to */
	bool		delay;			/* lsm_am.flush_delay_ms applies */
} LsmRunWriter;

extern void LsmRunWriterBegin(LsmRunWriter *w, Relation index, uint32 run_id, bool delay);
extern void LsmRunWriterAdd(LsmRunWriter *w, const uint8 *key, int len);
extern void LsmRunWriterFinish(LsmRunWriter *w, LsmRunRef *ref, uint16 level);
extern void LsmRunWriterAbandon(LsmRunWriter *w);

/* Callback deciding whether a TID is dead (VACUUM); NULL keeps everything. */
typedef bool (*LsmDeadCallback) (ItemPointer tid, void *state);

extern void LsmFlush(Relation index, LsmDeadCallback dead, void *dead_state,
					 double *removed);
extern void LsmFlushLocked(Relation index, LsmSlot *slot, LsmDeadCallback dead,
						   void *dead_state, double *removed);
extern void LsmMaintenanceLock(Relation index);
extern void LsmInsertKey(Relation index, const uint8 *key, int len);

/* ------------------------------------------------------------------------
 * Reading runs, merging (lsmrun.c)
 * ------------------------------------------------------------------------ */
typedef struct LsmRunCursor
{
	LsmRunRef	ref;
	bool		started;
	bool		done;
	uint32		ndata;			/* data pages: relative pages 1..ndata */
	uint32		cur;			/* current data page */
} LsmRunCursor;

/* Scan range in encoded-key space (see lsm_merge_create). */
typedef struct LsmRange
{
	const uint8 *lo;
	int			lolen;
	const uint8 *hi;
	int			hilen;
} LsmRange;

extern void LsmRunCursorInit(LsmRunCursor *c, const LsmRunRef *ref);
extern bool LsmRunCursorNext(Relation index, LsmRunCursor *c, LsmBatch *batch,
							 bool backward, const LsmRange *range);
extern void LsmFeedRun(Relation index, LsmMerge *m, int src, LsmRunCursor *c,
					   bool backward, const LsmRange *range);
extern void LsmMergeIfNeeded(Relation index, LsmSlot *slot);
extern void LsmMergeAll(Relation index, LsmSlot *slot);
extern void LsmMergeRuns(Relation index, LsmSlot *slot, int first);
extern void LsmCheckStatus(Relation index, LsmStatus st, const char *what);
extern void LsmMaintenanceUnlock(Relation index);

/* ------------------------------------------------------------------------
 * AM callbacks
 * ------------------------------------------------------------------------ */
/* lsm.c */
extern bytea *lsmoptions(Datum reloptions, bool validate);
extern int	LsmMemtableSizeKb(Relation index);

/* lsmbuild.c */
extern IndexBuildResult *lsmbuild(Relation heap, Relation index, IndexInfo *indexInfo);
extern void lsmbuildempty(Relation index);
extern char *lsmbuildphasename(int64 phasenum);

/* lsminsert.c */
extern bool lsminsert(Relation index, Datum *values, bool *isnull,
					  ItemPointer ht_ctid, Relation heapRel,
					  IndexUniqueCheck checkUnique, bool indexUnchanged,
					  struct IndexInfo *indexInfo);

/* lsmscan.c */
extern IndexScanDesc lsmbeginscan(Relation r, int nkeys, int norderbys);
extern void lsmrescan(IndexScanDesc scan, ScanKey scankey, int nscankeys,
					  ScanKey orderbys, int norderbys);
extern bool lsmgettuple(IndexScanDesc scan, ScanDirection dir);
extern int64 lsmgetbitmap(IndexScanDesc scan, TIDBitmap *tbm);
extern void lsmendscan(IndexScanDesc scan);
extern bool lsmcanreturn(Relation index, int attno);

/* lsmvacuum.c */
extern IndexBulkDeleteResult *lsmbulkdelete(IndexVacuumInfo *info,
											IndexBulkDeleteResult *stats,
											IndexBulkDeleteCallback callback,
											void *callback_state);
extern IndexBulkDeleteResult *lsmvacuumcleanup(IndexVacuumInfo *info,
											   IndexBulkDeleteResult *stats);

/* lsmcost.c */
extern void lsmcostestimate(PlannerInfo *root, IndexPath *path,
							double loop_count, Cost *indexStartupCost,
							Cost *indexTotalCost, Selectivity *indexSelectivity,
							double *indexCorrelation, double *indexPages);

#endif							/* LSM_H */
