/*
 * lsm_maint.h — the maintenance floor: memtable switches and flushes of
 * immutable memtables into level-0 runs (lsmflush.c), compactions chosen by
 * the core's picker (lsmmaint.c, lsmpolicy.c), moving runs down and
 * shrinking the file (lsmshrink.c), and the background launcher and
 * per-database workers that run them (lsmlauncher.c, lsmworker.c, their
 * shared table lsmworkertab.c); how each job shows — progress entry, worker
 * activity, lsm_am.log_maintenance line (lsmjob.c).
 *
 * It uses storage/ (run writer, merges, allocator, log), shmem/ and the core,
 * never the access method above it.  Backends reach it from the access
 * method (insert backpressure, VACUUM, the SQL functions); workers call
 * LsmMaintain.
 *
 * Lock order (per index), taken in this order, each released before the
 * previous one:
 *  - flush lock (heavyweight page lock on block 0): one flusher per index;
 *  - compaction lock (heavyweight page lock on block 1): one compaction per
 *    index; a flush and a compaction run concurrently, each in its own
 *    reservation of pages;
 *  - the slot LWLock, held only for a switch and for the moment a flush or
 *    compaction is published, never while run pages are written;
 *  - the metapage buffer lock.
 * VACUUM takes both heavyweight locks after asking running maintenance to
 * yield (slot->vacuum_waiting).
 *
 * Invariants.
 *  - An immutable memtable never changes; its flusher reads it without the
 *    slot lock, under slot->pins, and publishes the run and retires the
 *    memtable in one step under the slot lock.
 *  - A flush or compaction that stops (stop callback) or fails leaves only a
 *    reservation, which the next one of the same kind reclaims.
 *  - Long work (writing a run) checks for interrupts and asks stop() after
 *    every page; it never holds an LWLock while doing so.
 */
#ifndef LSM_MAINT_H
#define LSM_MAINT_H

#include "storage/lsm_storage.h"

/* locks (lsmmaint.c) */
extern void LsmFlushLock(Relation index);
extern bool LsmFlushLockConditional(Relation index);
extern void LsmFlushUnlock(Relation index);
extern void LsmCompactLock(Relation index);
extern bool LsmCompactLockConditional(Relation index);
extern void LsmCompactUnlock(Relation index);
/* memtable switches and flushes (lsmflush.c) */
extern void LsmSwitchMemtable(Relation index, LsmSlot *slot);
extern bool LsmFlushOldest(Relation index, LsmDeadCallback dead, void *dead_state,
						   double *removed, const LsmStop *stop);
extern void LsmFlushAll(Relation index, LsmDeadCallback dead, void *dead_state,
						double *removed);
/* compactions (lsmmaint.c) */
extern bool LsmCompactOnce(Relation index, const LsmStop *stop);
extern void LsmCompactFull(Relation index);
extern uint64 LsmRewriteRun(Relation index, const LsmRunRef *ref, LsmDeadCallback dead,
							void *dead_state, double *removed);
extern bool LsmWorkPending(Relation index);
/* runs moved down, the file shrunk, waiting up to 5 s for the lock (lsmshrink.c) */
extern void LsmShrinkRelocating(Relation index);
/* shape of the levels and the compaction picker (lsmpolicy.c) */
extern bool LsmPickFor(Relation index, const LsmMetaPageData *meta, LsmPick *pick);
extern uint32 LsmBuildLevel(Relation index, uint64 pages);
extern uint32 LsmLevelDebt(Relation index, const LsmMetaPageData *m);
extern uint32 LsmBuildPieces(Relation index, double entries);
extern uint64 LsmLevelBasePages(Relation index);
/* data pages per piece of a leveled merge's output into level */
extern uint32 LsmPiecePages(Relation index, const LsmMetaPageData *meta, uint32 level);

/* ------------------------------------------------------------------------
 * Background workers (lsmworkertab.c, lsmlauncher.c, lsmworker.c)
 * ------------------------------------------------------------------------ */
/* start-up (module list of _PG_init): register the launcher, shared memory */
extern void LsmWorkerInit(void);
extern void LsmWorkerShmemRequest(void);
extern void LsmWorkerShmemInit(void);
/* A backend queued work for an index of database dbid: wake the launcher and
 * that database's workers.  Cheap; callable with an LWLock held. */
extern void LsmWakeWorkers(Oid dbid);
/* Can a worker be expected to do dbid's work soon?  false when
 * lsm_am.max_workers = 0, the launcher is not running, or starting a worker
 * failed recently (max_worker_processes exhausted) and none runs for dbid:
 * the backend must then do the work itself. */
extern bool LsmWorkersAvailable(Oid dbid);
/* In an lsm worker: show "lsm_am <what> of index <schema.name>: <detail>"
 * (detail may be NULL) as the query of pg_stat_activity, or idle when what
 * is NULL; no-op in other processes. */
extern void LsmWorkerReportActivity(const char *what, Relation index,
									const char *detail);
extern bool LsmIsWorker(void);
PGDLLEXPORT void lsm_launcher_main(Datum arg);
PGDLLEXPORT void lsm_worker_main(Datum arg);

/* ------------------------------------------------------------------------
 * Maintenance: flushes and compactions (lsmmaint.c)
 * ------------------------------------------------------------------------ */
/*
 * Do the pending work of one index: in a worker, first warm the shared
 * metadata cache on the index's first use since the start (LSM_WORK_WARM);
 * flush every immutable memtable, then run compactions until the picker
 * finds nothing (or stop() says so).  Clears the slot's pending bits for
 * the work it did.  True: something waits for the index to be free (a
 * shrink, a warm): the caller comes back after a back-off.  REQUIRES: a
 * transaction, a RowExclusiveLock on the index.  Raises ERROR on failure.
 */
extern bool LsmMaintain(Relation index, const LsmStop *stop);


#endif							/* LSM_MAINT_H */
