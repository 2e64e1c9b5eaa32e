/*
 * lsmmaint_int.h — what the maintenance files share: lsmmaint.c
 * (compaction, compact(), LsmMaintain), lsmflush.c (memtable switches and
 * flushes) and lsmshrink.c (moving runs down, shrinking the file).  Private
 * to src/maint/; the locks and their order are in lsmmaint.c's header.
 */
#ifndef LSMMAINT_INT_H
#define LSMMAINT_INT_H

#include "utils/memutils.h"

#include "maint/lsm_maint.h"

/* LsmShrinkRelocating: how long to try for the index's lock (5 s) */
#define LSM_SHRINK_LOCK_TRIES	100
#define LSM_SHRINK_LOCK_WAIT_US 50000

/*
 * The entry points run in a memory context of their own, deleted when they
 * return: a stalled insert or wait_for_merges may call them thousands of
 * times in one statement.  (On ERROR the context goes with its parent.)
 */
#define LSM_IN_CONTEXT(call) \
	do { \
		MemoryContext cxt_ = AllocSetContextCreate(CurrentMemoryContext, \
												   "lsm maintenance", \
												   ALLOCSET_DEFAULT_SIZES); \
		MemoryContext old_ = MemoryContextSwitchTo(cxt_); \
		result = (call); \
		MemoryContextSwitchTo(old_); \
		MemoryContextDelete(cxt_); \
	} while (0)

/*
 * One flush, compaction, move, rewrite or relocation as others see it
 * (lsmjob.c): LsmJobBegin starts its progress entry and a worker's
 * pg_stat_activity line; LsmJobEnd, after its publication, ends them and
 * writes the lsm_am.log_maintenance line.  A job that stops or fails does
 * not call LsmJobEnd: LsmProgressEnd (stopped) or the abort (ERROR) clears
 * its entry.
 */
typedef struct LsmJob
{
	LsmJobKind	kind;
	int64		wal0;			/* pgWalUsage.wal_bytes at the start */
	uint64		moved0;			/* lsm_moved_pages at the start */
	TimestampTz started_at;
	int			in_runs;
	uint32		in_levels;
	uint64		in_entries;		/* of the runs, or of the memtable */
	uint64		in_pages;
	int			output_level;
	const char *reason;			/* why the picker chose it (static text), or
								 * NULL: not the picker's (flush, compact()) */
} LsmJob;

extern void LsmJobBegin(LsmJob *job, Relation index, LsmJobKind kind,
						const LsmRunRef *inputs, int nin, uint64 memtable_entries,
						int output_level, int64 pages_total);
extern void LsmJobEnd(LsmJob *job, Relation index, const LsmRunRef *outs, int nouts);
extern void LsmJobStop(Relation index);

/* lsmmaint.c */
extern void LsmPublishCompaction(Relation index, const LsmRunRef *inputs, int nin,
								 const LsmRunRef *outs, int nouts, int move_level,
								 bool relocated);

/* lsmshrink.c: a worker between compactions and when it has nothing to do */
extern void LsmMaybeSettle(Relation index);
extern bool LsmMaybeShrink(Relation index);

#endif							/* LSMMAINT_INT_H */
