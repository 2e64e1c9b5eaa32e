/*
 * lsmpolicy.c — the shape settings of an index (compaction policy, size
 * ratio, level-0 trigger, memtable size) and the call into the core's
 * compaction picker: which runs a compaction of the index should merge now.
 *
 * Every shape setting is an index option (lsm_options.c), so a worker
 * compacts an index by that index's settings; where an option is not set,
 * the GUC of the process compacting applies (a worker's: the server's).
 */
#include "postgres.h"

#include "utils/rel.h"

#include "maint/lsm_maint.h"

/* Target size of level 1 in pages: l0_compaction_trigger flushed memtables. */
uint64
LsmLevelBasePages(Relation index)
{
	int			trigger = LsmL0TriggerOf(index);
	int			mt_kb = LsmMemtableSizeKb(index);
	uint64		mt_pages;

	/* a flushed run takes about half its memtable's arena (no skiplist) */
	mt_pages = (uint64) mt_kb * 1024 / BLCKSZ / 2;
	return Max((uint64) 16, mt_pages * trigger);
}

/*
 * Debt units for backpressure (doc/impl.md, "Backpressure") from the levels
 * above the deepest: a leveled index's level L >= 1 holding more than twice
 * its target is that much behind, and a unit is the larger of level 1's
 * target and an eighth of the deepest level.  Writers at full speed into a
 * large index otherwise outrun the merges of the upper levels, which swell,
 * and the file grows to several times its live data (2.74x in two minutes:
 * doc/benchmarks.md, "Levels behind their targets slow the writers");
 * slowed, they leave the workers the time to push those levels down.
 * Tiered and lazy levels are meant to hold several runs: no debt.  At most
 * LSM_LEVEL_DEBT_MAX units.
 */
#define LSM_LEVEL_DEBT_MAX	8

uint32
LsmLevelDebt(Relation index, const LsmMetaPageData *m)
{
	uint64		pages[LSM_PICK_MAX_LEVEL + 1] = {0};
	uint32		deepest = 0;
	uint64		target;
	uint64		over = 0;
	uint64		unit;

	if (LsmCompactionPolicyOf(index) != LSM_POLICY_LEVELED)
		return 0;
	for (int i = 0; i < (int) m->nruns; i++)
	{
		uint32		level = Min(m->runs[i].level, LSM_PICK_MAX_LEVEL);

		pages[level] += m->runs[i].npages;
		deepest = Max(deepest, level);
	}
	if (deepest < 2)
		return 0;
	target = LsmLevelBasePages(index);
	unit = Max(target, pages[deepest] / 8);
	for (uint32 level = 1; level < deepest; level++)
	{
		if (pages[level] > 2 * target)
			over += pages[level] - 2 * target;
		target *= LsmSizeRatioOf(index);
	}
	return (uint32) Min(over / unit, LSM_LEVEL_DEBT_MAX);
}

/* The level a run of this many pages belongs to (CREATE INDEX, compact()). */
uint32
LsmBuildLevel(Relation index, uint64 pages)
{
	uint64		target = LsmLevelBasePages(index);
	uint32		level = 1;
	int			ratio = LsmSizeRatioOf(index);

	while (level < LSM_PICK_MAX_LEVEL && pages > target)
	{
		target *= ratio;
		level++;
	}
	return level;
}

/* Describe the manifest's runs for the picker (bounds read from headers). */
static LsmPickRun *
LsmPickRuns(Relation index, const LsmMetaPageData *meta)
{
	LsmPickRun *pr = palloc0(sizeof(LsmPickRun) * Max(meta->nruns, 1));

	for (int i = 0; i < (int) meta->nruns; i++)
	{
		uint8	   *min,
				   *max;
		int			minlen,
					maxlen;

		LsmReadRunBounds(index, &meta->runs[i], &min, &minlen, &max, &maxlen);
		pr[i].run_id = meta->runs[i].run_id;
		pr[i].level = meta->runs[i].level;
		pr[i].pages = meta->runs[i].npages;
		pr[i].nentries = meta->runs[i].nentries;
		pr[i].min_key = min;
		pr[i].min_len = minlen;
		pr[i].max_key = max;
		pr[i].max_len = maxlen;
		pr[i].busy = 0;
	}
	return pr;
}

static void
LsmPickOptionsOf(Relation index, LsmPickOptions *opt)
{
	memset(opt, 0, sizeof(*opt));
	opt->policy = (LsmCompactionPolicy) LsmCompactionPolicyOf(index);
	opt->size_ratio = LsmSizeRatioOf(index);
	opt->l0_trigger = LsmL0TriggerOf(index);
	opt->level_base_pages = LsmLevelBasePages(index);
	opt->max_runs = LSM_MAX_RUNS;
}

/* Ask the picker; false if nothing to do. */
bool
LsmPickFor(Relation index, const LsmMetaPageData *meta, LsmPick *pick)
{
	LsmPickOptions opt;
	LsmPickRun *pr;
	LsmStatus	st;

	LsmPickOptionsOf(index, &opt);
	pr = LsmPickRuns(index, meta);
	st = lsm_pick_compaction(pr, meta->nruns, &opt, pick);
	if (st != LSM_OK)
		LsmReportStatus(index, st, InvalidBlockNumber, "choosing a compaction");
	return pick->kind != LSM_PICK_NONE;
}

/*
 * Pieces per level: the size of a piece is the level's size (at least the
 * level-1 base, at most LSM_PIECE_MAX_OVER times its target) divided by
 * this, so one piece of level L covers about 1/LSM_PIECES_PER_LEVEL of the
 * key space, and a merge of it into level L+1 rewrites about that share of
 * L+1 (plus a piece at each end): the file peaks at the live data plus
 * about 2/16 of the last level, where one run per level peaked at twice the
 * last level.  Level 1 takes
 * half as many (it swings between its target and twice that with every
 * merge from level 0, which takes all of it anyway).  More pieces: smaller
 * merges, more runs in the manifest (128 slots; the picker merges small
 * neighbours above 96) and more sources for a range scan to merge.
 */
#define LSM_PIECES_PER_LEVEL	16
/* No piece smaller than this (pages): tiny indexes keep a few runs. */
#define LSM_PIECE_MIN_PAGES		32
/*
 * A level over its target is cut by its size, up to this many times its
 * target.  Cut by its target, a level the merges had left behind held more
 * pieces the further behind it was (level 2 of a capped 20-minute ingest at
 * 2-3x its target: 26-48 pieces), the manifest stayed at the 96 runs where
 * the picker merges neighbours of one level (45 of 75 samples), and those
 * same-level merges rewrote 37% of all the pages merged (doc/benchmarks.md,
 * "Pieces cut by the level's size").  Bounded so that one piece's merge stays
 * a small share of the level below.
 */
#define LSM_PIECE_MAX_OVER		4

/*
 * How many pieces CREATE INDEX cuts its run into (1: one run).  A leveled
 * index holds each level in pieces, so the build cuts its run as a merge
 * into that level would, into LSM_PIECES_PER_LEVEL runs of as many entries
 * each: the first merge into the built level then rewrites only the pieces
 * it overlaps, where with one run it rewrote the whole index, and the file
 * held it twice until that merge ended.  An index of fewer than
 * LSM_BUILD_PIECE_MIN_ENTRIES entries a piece (about LSM_PIECE_MIN_PAGES
 * pages of int8 keys) stays one run, and so does one that lands on level 1
 * (lsmbuild.c decides at the first cut).  By entries, so that the cut
 * depends only on the sorted entries: a parallel build cuts where a serial
 * one does.
 */
#define LSM_BUILD_PIECE_MIN_ENTRIES	16384

uint32
LsmBuildPieces(Relation index, double entries)
{
	if (LsmCompactionPolicyOf(index) != LSM_POLICY_LEVELED ||
		entries < (double) LSM_PIECES_PER_LEVEL * LSM_BUILD_PIECE_MIN_ENTRIES)
		return 1;
	return LSM_PIECES_PER_LEVEL;
}

/*
 * Data pages per piece for a compaction into level (0: write one run).
 * Only the leveled policy cuts: tiered levels and lazy leveling merge
 * whole levels anyway.
 */
uint32
LsmPiecePages(Relation index, const LsmMetaPageData *meta, uint32 level)
{
	uint64		base = LsmLevelBasePages(index);
	uint64		target = base;
	uint64		pages = 0;
	uint64		size;

	if (LsmCompactionPolicyOf(index) != LSM_POLICY_LEVELED || level < 1)
		return 0;
	for (uint32 l = 1; l < level && target < PG_UINT32_MAX; l++)
		target *= LsmSizeRatioOf(index);
	for (int i = 0; i < (int) meta->nruns; i++)
		if (meta->runs[i].level == level)
			pages += meta->runs[i].npages;
	size = Min(target * LSM_PIECE_MAX_OVER, Max(pages, base));
	size /= level == 1 ? LSM_PIECES_PER_LEVEL / 2 : LSM_PIECES_PER_LEVEL;
	return (uint32) Min(Max(size, LSM_PIECE_MIN_PAGES), MaxBlockNumber / 4);
}
