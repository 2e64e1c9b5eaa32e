/*
 * lsm_am.h — the access-method floor, the top of the C shim: the handler and
 * module start-up (lsm.c), the index AM callbacks — build, insert, scan,
 * vacuum, cost, validate — and the SQL functions of schema lsm_am
 * (lsmfuncs.c; the monitoring ones, behind lsm_am.progress and
 * lsm_am.indexes, in lsmmonitor.c), unique indexes (lsmunique.c).  Settings are lsm_options.h, under every floor.
 *
 * Nothing includes this header but the files of src/am/.  It may use every
 * floor below: maint/ (switches, flushes, compactions, workers), storage/,
 * shmem/, key/ and the core.
 *
 * Lock order, from the top: the heavyweight locks PostgreSQL takes on the
 * table and index -> a unique index's key lock (lsmunique.c: held from the
 * check until the entry is in the memtable, never two at once, never while
 * waiting for a transaction) -> the maintenance locks (flush, then
 * compaction; lsm_maint.h) -> the slot LWLock -> buffer content locks
 * (lsm_storage.h).
 *
 * Invariants.
 *  - An insert reaches the log page (WAL) before the memtable; a backend's
 *    pending batch of an index is pushed before this backend scans the index
 *    or commits (lsminsert.c); a unique index's entry is pushed before its
 *    key lock is released, never buffered (lsmunique.c).
 *  - A scan takes one consistent snapshot of memtables and runs; nothing is
 *    returned twice or missed while flushes and compactions run.
 *  - No PostgreSQL call runs with C++ frames above it.
 */
#ifndef LSM_AM_H
#define LSM_AM_H

#include "access/amapi.h"
#include "executor/execdesc.h"
#include "nodes/execnodes.h"
#include "nodes/pathnodes.h"

#include "maint/lsm_maint.h"

/* ------------------------------------------------------------------------
 * AM callbacks
 * ------------------------------------------------------------------------ */

/* lsmbuild.c */
extern IndexBuildResult *lsmbuild(Relation heap, Relation index, IndexInfo *indexInfo);
extern void lsmbuildempty(Relation index);
extern char *lsmbuildphasename(int64 phasenum);

/* lsminsert.c: the backend's pending batches */
extern void LsmPushPending(Relation index);
extern void LsmPushAllPending(bool drop);
extern void LsmForgetPending(Relation index);
extern bool LsmHasPending(void);
extern void LsmUnbufferedStatement(bool begin);
extern bool LsmInUnbufferedStatement(void);
extern bool lsminsert(Relation index, Datum *values, bool *isnull,
					  ItemPointer ht_ctid, Relation heapRel,
					  IndexUniqueCheck checkUnique, bool indexUnchanged,
					  struct IndexInfo *indexInfo);

/* lsminsert.c: one entry into the index at once, not buffered */
extern void LsmInsertEntryNow(Relation index, const uint8 *entry, int len);

/* lsmhooks.c: the executor and utility hooks (start-up, _PG_init list) */
extern void LsmInsertInit(void);

/* lsmunique.c: aminsert of a unique index; CREATE UNIQUE INDEX's duplicates */
extern bool LsmUniqueInsert(Relation index, Datum *values, bool *isnull,
							ItemPointer ht_ctid, Relation heapRel,
							IndexUniqueCheck checkUnique,
							const uint8 *entry, int len);
LSM_NORETURN extern void LsmUniqueBuildDuplicate(Relation heap, Relation index,
												 IndexInfo *indexInfo,
												 ItemPointer tid);
/* after ExecutorStart of INSERT ... ON CONFLICT (PostgreSQL < 18) */
extern void LsmSpeculativeOpen(QueryDesc *queryDesc);

/* lsmscan.c */
extern IndexScanDesc lsmbeginscan(Relation r, int nkeys, int norderbys);
extern void lsmrescan(IndexScanDesc scan, ScanKey scankey, int nscankeys,
					  ScanKey orderbys, int norderbys);
extern bool lsmgettuple(IndexScanDesc scan, ScanDirection dir);
extern int64 lsmgetbitmap(IndexScanDesc scan, TIDBitmap *tbm);
extern void lsmendscan(IndexScanDesc scan);
extern bool lsmcanreturn(Relation index, int attno);
/* lsmscanpar.c */
extern Size lsmestimateparallelscan(LSM_ESTIMATE_PSCAN_ARGS);
extern void lsminitparallelscan(void *target);
extern void lsmparallelrescan(IndexScanDesc scan);

/* lsmvacuum.c */
extern IndexBulkDeleteResult *lsmbulkdelete(IndexVacuumInfo *info,
											IndexBulkDeleteResult *stats,
											IndexBulkDeleteCallback callback,
											void *callback_state);
extern IndexBulkDeleteResult *lsmvacuumcleanup(IndexVacuumInfo *info,
											   IndexBulkDeleteResult *stats);

/* lsmcost.c; start-up (_PG_init list) */
extern void LsmCostInit(void);
extern void lsmcostestimate(PlannerInfo *root, IndexPath *path,
							double loop_count, Cost *indexStartupCost,
							Cost *indexTotalCost, Selectivity *indexSelectivity,
							double *indexCorrelation, double *indexPages);

/* lsmvalidate.c */
extern bool lsmvalidate(Oid opclassoid);

/*
 * lsmfuncs.c: open an lsm index for one of lsm_am's SQL functions, checking
 * that it is one and the caller's right to it: LSM_OPEN_READ (SELECT on its
 * table), LSM_OPEN_MAINTAIN (its owner), LSM_OPEN_INSPECT (a superuser).
 * This backend's pending entries are pushed into it first.
 */
typedef enum LsmOpenRight
{
	LSM_OPEN_READ,
	LSM_OPEN_MAINTAIN,
	LSM_OPEN_INSPECT
} LsmOpenRight;
extern Relation LsmOpenIndex(Oid relid, LOCKMODE lockmode, LsmOpenRight right);

/* lsmfuncs.c: an entry as text, "(v1, v2)" or hex (index_info, page_items) */
extern text *LsmKeyToText(Relation index, BlockNumber blkno, const uint8 *key, int len);

#endif							/* LSM_AM_H */
