/*
 * lsmfault.h — named fault points: where a crash or an error is most likely
 * to find a bug, made to happen on demand (issue 16).
 *
 * Every point is compiled in always and costs one test of a bool when
 * nothing is armed.  A superuser arms one point at a time with the setting
 *
 *     lsm_am.fault = 'NAME:KIND[:N]'          KIND: panic | error
 *     lsm_am.fault = 'NAME:KIND:pP'           P: a probability, 0 < P <= 1
 *
 * It fires at the N-th pass of this process through the point (default 1;
 * the count starts again whenever the setting is assigned) or at each pass
 * with probability P.  panic: an immediate PANIC, the server restarts and
 * recovers; error: an ERROR, the operation fails and the transaction or
 * worker goes on.  A fault fires only outside critical sections and never
 * while this module's caller holds a spinlock (points are placed so).
 * SET in a session arms the points that session passes; ALTER SYSTEM and a
 * reload arm the workers' too.  The names and where they are: LSM_FAULT_NAMES
 * in lsmfault.c; README, "Fault points".
 */
#ifndef LSMFAULT_H
#define LSMFAULT_H

typedef enum LsmFaultPoint
{
	LSM_FAULT_LOG_APPEND_BEFORE_WAL,	/* storage/lsmlog.c: page locked, no record yet */
	LSM_FAULT_LOG_APPEND_AFTER_WAL, /* storage/lsmlog.c: record written, page locked */
	LSM_FAULT_MEMTABLE_SWITCH,	/* maint/lsmflush.c: new log chain started */
	LSM_FAULT_FLUSH_PAGE,		/* storage/lsmstore.c: a flush wrote a run page */
	LSM_FAULT_FLUSH_FILTER,		/* storage/lsmstore.c: a flush's run is whole, unlogged */
	LSM_FAULT_FLUSH_BEFORE_PUBLISH, /* maint/lsmflush.c: run logged, manifest old */
	LSM_FAULT_FLUSH_AFTER_PUBLISH,	/* maint/lsmflush.c: manifest has the run */
	LSM_FAULT_COMPACTION_PAGE,	/* storage/lsmstore.c: a merge wrote a run page */
	LSM_FAULT_COMPACTION_BEFORE_PUBLISH,	/* maint/lsmmaint.c: output logged */
	LSM_FAULT_COMPACTION_AFTER_PUBLISH, /* maint/lsmmaint.c: inputs retired */
	LSM_FAULT_RECYCLE,			/* storage/lsmalloc.c: before retired pages are settled */
	LSM_FAULT_TRUNCATE,			/* storage/lsmalloc.c: metapage logged, file not cut */
	LSM_FAULT_VACUUM_REWRITE,	/* storage/lsmstore.c: VACUUM's rewrite wrote a page */
	LSM_FAULT_WORKER_JOB,		/* maint/lsmworker.c: a worker took an index */
	LSM_FAULT_BUILD_WORKER,		/* am/lsmbuild.c: a parallel build's worker scanned its share */
	LSM_FAULT_COUNT
} LsmFaultPoint;

/* Is any point armed in this process? (the only cost of an unarmed point) */
extern bool lsm_fault_armed;

extern void LsmFaultHit(LsmFaultPoint point);
/* _PG_init: define lsm_am.fault */
extern void LsmFaultDefineGuc(void);

#define LSM_FAULT(point) \
	do { \
		if (unlikely(lsm_fault_armed)) \
			LsmFaultHit(point); \
	} while (0)

#endif							/* LSMFAULT_H */
