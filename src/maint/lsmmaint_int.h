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

/* lsmmaint.c */
extern void LsmPublishCompaction(Relation index, const LsmRunRef *inputs, int nin,
								 const LsmRunRef *outs, int nouts, int move_level,
								 bool relocated);

/* lsmshrink.c: a worker between compactions and when it has nothing to do */
extern void LsmMaybeSettle(Relation index);
extern bool LsmMaybeShrink(Relation index);

#endif							/* LSMMAINT_INT_H */
