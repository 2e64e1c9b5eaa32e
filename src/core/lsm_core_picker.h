/*
 * lsm_core_picker.h — part of the core's C API (included by lsm_core.h): the
 * compaction picker.
 *
 * Only ever included through lsm_core.h, after its extern "C" block: this
 * header assumes LsmStatus and LSM_NOEXCEPT are already defined.  Same rules
 * as lsm_core.h: extern "C", noexcept, every function catches all exceptions
 * and returns a status.
 *
 * The picker is pure logic: the shim describes the runs of the manifest (no
 * pages are read) and gets back which runs to compact into which level.  It
 * keeps no state between calls.
 *
 * Model.  Keys are unique across runs (no tombstones, no duplicates), so the
 * order in which runs are merged never matters for correctness.  Runs live at
 * levels 0..LSM_PICK_MAX_LEVEL; level 0 holds flushed memtables, whose key
 * ranges overlap freely.  Policies:
 *
 *  LSM_POLICY_LEVELED (default): every level >= 1 holds runs with pairwise
 *    disjoint key ranges; target size of level i >= 1 is
 *    level_base_pages * size_ratio^(i-1) pages.
 *    1. L0 trigger: >= l0_trigger L0 runs: merge all L0 runs and the L1 runs
 *       overlapping their union range [min over L0, max over L0] into one L1
 *       run (a single L0 run that overlaps no L1 run is moved instead).
 *       It waits (comes after rules 2 and 3) while some level's score of
 *       rule 3 is higher than L0 runs / l0_trigger, as in RocksDB: an L0
 *       merge takes every L1 run it overlaps, so a level 1 left to grow
 *       would be rewritten whole by every one.
 *    2. Repair: a level >= 1 whose runs overlap (an index compacted under
 *       another policy before) merges a group of transitively overlapping
 *       runs into one run at the same level, lowest level first.
 *    3. The level i in 1..MAX-1 with the highest score pages(Li) / target(i)
 *       > 1.0 (ties: the lower level) gives one run r: the one minimising
 *       (pages of the L(i+1) runs it overlaps) / pages(r + the other Li
 *       runs inside the hull of r and those runs), ties: smallest run_id.
 *       Overlapping nothing: r is moved to i+1 (alone, or merged with the
 *       Li runs inside its range); else r, those Li runs and the L(i+1) runs
 *       are merged into one run at i+1 (the shim cuts it into pieces).  The
 *       max level is never picked for being over target.
 *  LSM_POLICY_TIERED: runs of a level may overlap.
 *    1. L0 trigger: merge all L0 runs (only) into one L1 run (a single run is
 *       moved).
 *    2. The lowest level i >= 1 holding >= size_ratio runs: merge them all
 *       into one run at i+1 (at the max level: into the same level).
 *  LSM_POLICY_LAZY (lazy leveling, Dostoevsky): last = the deepest level >= 1
 *    holding runs (1 if none).  Levels 1..last-1 are tiered, level last is
 *    leveled and holds at most one run after any merge into it.
 *    1. L0 trigger: merge all L0 runs (if last == 1: and all L1 runs) into one
 *       L1 run (a single input run is moved).
 *    2. The lowest level i < last holding >= size_ratio runs: merge them (if
 *       i + 1 == last: and all runs of last) into one run at i+1.
 *    3. Level last holding several runs (repair): merge them into one.
 *    4. Level last holding one run of more than
 *       level_base_pages * size_ratio^(last-1) pages, last < max level: move
 *       it to last + 1.
 *
 *  Manifest pressure, all policies, checked first: if nruns > max_runs * 3/4,
 *  merge runs within one level to reduce the run count.  Levels >= 1 are
 *  tried by decreasing number of runs (ties: lower level), level 0 last.  In a
 *  level whose runs must not overlap (leveled levels, lazy's last level) the
 *  inputs are runs adjacent in key order; elsewhere any runs.  Of the
 *  candidate sets of the largest possible size (2..8 runs) the one with the
 *  fewest total pages wins (ties: leftmost / oldest).  Output: same level.
 *  Whenever no run is busy and some level holds >= 2 runs, pressure picks.
 *
 *  Busy runs (inputs of a compaction running elsewhere) are never inputs; a
 *  rule that would need one is skipped and the next applicable rule answers.
 *  A pick whose output would land in a non-overlapping level never overlaps
 *  the key range a running compaction may write there (the hull of adjacent
 *  busy runs of that level, busy runs of the level above, all busy L0 runs
 *  for level 1), so concurrent compactions keep levels disjoint.
 *
 *  Some rules take at most LSM_PICK_MAX_INPUTS runs: then the oldest L0 runs
 *  (by run_id) go first and the rule fires again later for the rest.
 */
#ifndef LSM_CORE_PICKER_H
#define LSM_CORE_PICKER_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Deepest level.  Levels are 0 (flushed memtables) .. LSM_PICK_MAX_LEVEL. */
#define LSM_PICK_MAX_LEVEL 8
/* Most inputs of one pick (LsmPick.inputs). */
#define LSM_PICK_MAX_INPUTS 512
/* Most inputs of a manifest-pressure merge. */
#define LSM_PICK_PRESSURE_MAX_INPUTS 8

typedef enum LsmCompactionPolicy
{
	LSM_POLICY_LEVELED = 0,
	LSM_POLICY_TIERED = 1,
	LSM_POLICY_LAZY = 2
} LsmCompactionPolicy;

/* One run of the manifest, as the picker sees it. */
typedef struct LsmPickRun
{
	uint32_t	run_id;			/* unique; larger = newer (tie-breaks: oldest first) */
	uint32_t	level;			/* 0 .. LSM_PICK_MAX_LEVEL */
	uint64_t	pages;			/* size of the run in pages (0 is taken as 1
								 * where a run's size divides) */
	uint64_t	nentries;		/* entries (informational; not used to pick) */
	const uint8_t *min_key;		/* smallest key; NULL only if min_len == 0 */
	size_t		min_len;
	const uint8_t *max_key;		/* largest key, >= min_key; NULL only if
								 * max_len == 0 */
	size_t		max_len;
	int			busy;			/* nonzero: input of a compaction running
								 * elsewhere; never picked */
} LsmPickRun;

typedef struct LsmPickOptions
{
	LsmCompactionPolicy policy;
	uint32_t	size_ratio;		/* >= 2: level size growth (leveled, lazy's
								 * last level) and runs per tier (tiered) */
	uint32_t	l0_trigger;		/* >= 1: L0 runs that start an L0 compaction */
	uint64_t	level_base_pages;	/* >= 1: target size of level 1, in pages */
	uint32_t	max_runs;		/* >= 1: manifest capacity; more than
								 * max_runs * 3 / 4 runs is manifest pressure */
} LsmPickOptions;

typedef enum LsmPickKind
{
	LSM_PICK_NONE = 0,			/* nothing to do */
	LSM_PICK_MERGE = 1,			/* merge the inputs into one new run at
								 * output_level, then retire the inputs */
	LSM_PICK_MOVE = 2			/* trivial move: exactly one input, whose level
								 * becomes output_level; no page is written */
} LsmPickKind;

typedef struct LsmPick
{
	LsmPickKind kind;
	uint32_t	output_level;	/* level of the output run (MOVE: the new level
								 * of the input); 0 for NONE */
	uint32_t	ninputs;		/* 0 for NONE, 1 for MOVE, >= 2 for MERGE */
	uint32_t	inputs[LSM_PICK_MAX_INPUTS];	/* indexes into the runs array
												 * given, ordered by level, then
												 * min key (then run_id) */
	double		score;			/* urgency of the rule that fired: L0 runs /
								 * l0_trigger, level pages / target, tier runs
								 * / size_ratio, runs / max_runs (pressure); 0
								 * for repairs and NONE */
	const char *reason;			/* static English text, never NULL, e.g. "L0
								 * trigger", "level 2 over target", "manifest
								 * pressure", "nothing to do" */
} LsmPick;

/*
 * Choose the next compaction.  LSM_OK with out->kind == LSM_PICK_NONE when
 * nothing needs doing ("is any compaction pending?" is kind != NONE).
 * LSM_INVALID (out->kind NONE, if out is not NULL) for NULL arguments (runs may
 * be NULL when nruns == 0), options out of range, a run at a level >
 * LSM_PICK_MAX_LEVEL, a NULL key with a nonzero length or min_key > max_key.
 * LSM_NO_MEMORY if scratch memory is exhausted.
 */
LsmStatus	lsm_pick_compaction(const LsmPickRun *runs, size_t nruns,
								const LsmPickOptions *opt,
								LsmPick *out) LSM_NOEXCEPT;

/* The state of one level under the options' policy. */
typedef struct LsmPickLevelStats
{
	uint32_t	nruns;			/* runs at the level, busy ones included */
	uint32_t	nbusy;			/* of which busy */
	uint64_t	pages;			/* their pages */
	uint64_t	target_pages;	/* size target (leveled levels >= 1, lazy's last
								 * level; saturates at UINT64_MAX); 0: the
								 * level has a run-count trigger instead */
	double		score;			/* pages / target_pages, or runs / trigger
								 * (l0_trigger, size_ratio); a rule fires at
								 * > 1.0 for sizes, >= 1.0 for run counts */
	int			overlapping;	/* 1 if two of its runs overlap although the
								 * policy keeps this level disjoint */
	int			needs_work;		/* 1 if a rule of the policy (manifest pressure
								 * aside) takes input runs from this level,
								 * busy flags ignored */
} LsmPickLevelStats;

/* LSM_INVALID as lsm_pick_compaction, or for level > LSM_PICK_MAX_LEVEL. */
LsmStatus	lsm_pick_level_stats(const LsmPickRun *runs, size_t nruns,
								 const LsmPickOptions *opt, uint32_t level,
								 LsmPickLevelStats *out) LSM_NOEXCEPT;

/*
 * 1 if the key ranges [amin, amax] and [bmin, bmax] share a key (bounds
 * inclusive, keys in the core's order), else 0.  A NULL key with length 0 is
 * the empty key; a NULL key with a nonzero length gives 0.
 */
int			lsm_key_ranges_overlap(const uint8_t *amin, size_t aminlen,
								   const uint8_t *amax, size_t amaxlen,
								   const uint8_t *bmin, size_t bminlen,
								   const uint8_t *bmax, size_t bmaxlen) LSM_NOEXCEPT;

#ifdef __cplusplus
}
#endif

#endif							/* LSM_CORE_PICKER_H */
