/*
 * lsmpolicy.c — the shape settings of an index (compaction policy, size
 * ratio, level-0 trigger, memtable size) and the call into the core's
 * compaction picker: which runs a compaction of the index should merge now.
 *
 * A worker compacts by the settings the inserting sessions published in the
 * slot (LsmPublishSettings), never by its own GUC values.
 */
#include "postgres.h"

#include "utils/rel.h"

#include "lsm.h"

int
LsmCompactionPolicyOf(Relation index)
{
	LsmOptions *opts = (LsmOptions *) index->rd_options;

	return opts ? opts->compaction : LSM_POLICY_LEVELED;
}

int
LsmSizeRatioOf(Relation index)
{
	LsmOptions *opts = (LsmOptions *) index->rd_options;

	return opts && opts->size_ratio >= 2 ? opts->size_ratio : 10;
}

/*
 * Record this session's compaction settings in the slot (REQUIRES: slot
 * lock exclusive).  Workers compact by the settings of the sessions that
 * write to the index, so a SET lsm_am.l0_compaction_trigger in a session
 * applies to the merges its inserts cause.
 */
void
LsmPublishSettings(Relation index, LsmSlot *slot)
{
	slot->l0_trigger = lsm_l0_compaction_trigger;
	slot->memtable_kb = LsmMemtableSizeKb(index);
}

/* The compaction settings that apply: a worker's come from the slot. */
static void
LsmEffectiveSettings(Relation index, int *l0_trigger, int *memtable_kb)
{
	*l0_trigger = lsm_l0_compaction_trigger;
	*memtable_kb = LsmMemtableSizeKb(index);
	if (LsmIsWorker())
	{
		LsmSlot    *slot = LsmSlotAcquire(index, LW_SHARED);

		if (slot->l0_trigger > 0)
		{
			*l0_trigger = slot->l0_trigger;
			*memtable_kb = slot->memtable_kb;
		}
		LsmSlotRelease(index, slot);
	}
}

/* Target size of level 1 in pages: l0_compaction_trigger flushed memtables. */
uint64
LsmLevelBasePages(Relation index)
{
	int			trigger,
				mt_kb;
	uint64		mt_pages;

	LsmEffectiveSettings(index, &trigger, &mt_kb);
	/* a flushed run takes about half its memtable's arena (no skiplist) */
	mt_pages = (uint64) mt_kb * 1024 / BLCKSZ / 2;
	return Max((uint64) 16, mt_pages * trigger);
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
	{
		int			trigger,
					mt_kb;

		LsmEffectiveSettings(index, &trigger, &mt_kb);
		opt->l0_trigger = trigger;
	}
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
