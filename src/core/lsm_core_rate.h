/*
 * lsm_core_rate.h — part of the core's C API (included by lsm_core.h): the
 * delayed write rate, the backpressure inserts get while an index's
 * background merges fall behind (RocksDB's WriteController).
 *
 * Only ever included through lsm_core.h, after its extern "C" block: this
 * header assumes LSM_NOEXCEPT is already defined.  Same rules as
 * lsm_core.h: extern "C", noexcept, no exception leaves.
 *
 * Pure logic: the shim keeps an LsmWriteRate per index in shared memory
 * (under the index's slot lock), tells it of each batch of entries
 * inserted, with the index's debt and the time, and sleeps for the answer.
 *
 * Model.  The debt is a count the shim computes from what the workers have
 * left undone (level-0 runs from the slowdown trigger on, immutable
 * memtables that all wait for a flush).  Out of debt nothing is delayed, and
 * the rate the index is written at is measured over windows of
 * LSM_RATE_WINDOW_US.  In debt, every batch of every writer goes on at
 * `next` and moves `next` on by its bytes / rate: writers together go at
 * `rate` bytes a second, each sleeping until its turn.  The rate starts at
 * LSM_RATE_DEC times the last window's measured rate (LSM_RATE_FIRST with
 * none), falls by LSM_RATE_DEC for each unit the debt grows and rises by
 * LSM_RATE_INC for each unit it shrinks (at most LSM_RATE_MAX_STEPS units a
 * batch), between LSM_RATE_MIN and the rate it started below.  So the
 * writers settle near the pace at which the workers pay the debt, instead of
 * running at full speed into the stop trigger and waiting there together.
 */
#ifndef LSM_CORE_RATE_H
#define LSM_CORE_RATE_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define LSM_RATE_WINDOW_US	1000000 /* the measured rate's window */
#define LSM_RATE_DEC		0.8		/* per unit of debt added */
#define LSM_RATE_INC		1.25	/* per unit of debt paid */
#define LSM_RATE_MAX_STEPS	4		/* units of change one batch applies */
#define LSM_RATE_MIN		(64.0 * 1024)	/* bytes/s, the floor */
#define LSM_RATE_FIRST		(16.0 * 1024 * 1024)	/* bytes/s, nothing measured */
#define LSM_RATE_MAX_SLEEP_US 1000000	/* one batch's sleep at most */

/* Per index; all zero: not delayed, nothing measured. */
typedef struct LsmWriteRate
{
	double		rate;			/* bytes/s while in debt; 0: not delayed */
	double		max_rate;		/* the rate a delay may rise back to */
	uint32_t	debt;			/* the debt the rate was last set for */
	int64_t		next_us;		/* when the next delayed batch may go on */
	uint64_t	bytes;			/* bytes of all batches told of */
	uint64_t	window_bytes;	/* bytes at window_start_us */
	int64_t		window_start_us;	/* the measurement's current window */
	double		measured;		/* bytes/s over the last whole window; 0:
								 * none (or the index sat idle through it) */
} LsmWriteRate;

/*
 * A batch of `bytes` was inserted at now_us (microseconds, any epoch, not
 * going backwards by much), with the index's debt as it now stands.  help:
 * nonzero if something (a worker) can pay the debt; with none, waiting
 * would not, and nothing is delayed.  Returns the microseconds the batch
 * must sleep before its writer goes on (0: none; at most
 * LSM_RATE_MAX_SLEEP_US).  *delayed: 1 when the batch took its turn on the
 * shared clock (in debt, help, bytes > 0), else 0 (callers count slowdowns).
 */
int64_t		lsm_write_rate_batch(LsmWriteRate *w, uint64_t bytes, uint32_t debt,
								 int help, int64_t now_us, int *delayed) LSM_NOEXCEPT;

#ifdef __cplusplus
}
#endif

#endif							/* LSM_CORE_RATE_H */
