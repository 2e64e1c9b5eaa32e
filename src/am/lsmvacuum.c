/*
 * lsmvacuum.c — ambulkdelete and amvacuumcleanup.
 *
 * ambulkdelete removes every dead TID from everywhere an entry can be:
 *  1. the memtable and log pages: the memtable is flushed into a run with the
 *     dead entries left out, and the log restarts empty (one flush);
 *  2. every run: each data page holding dead entries is rewritten in place,
 *     without them (one generic WAL record per changed page).  Fence keys stay
 *     valid: a page's separator is <= every key still on it.
 * Both happen under the maintenance lock, so no flush or merge can copy an
 * entry out of a page VACUUM has not cleaned yet.  Finally the metapage's
 * per-run live counts are updated, and a cleanup lock on the metapage waits
 * out scans that may still hold removed TIDs (see lsmscanmerge.c).
 *
 * CREATE INDEX CONCURRENTLY enumerates the index through ambulkdelete with a
 * callback that records every TID and removes none: it sees every entry of
 * the memtable, the log and the runs the same way.
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/generic_xlog.h"
#include "commands/vacuum.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "storage/indexfsm.h"

#include "am/lsm_am.h"
#include "lsmowner.h"
#include "lsmfault.h"

typedef struct LsmVacState
{
	IndexBulkDeleteCallback callback;
	void	   *callback_state;
} LsmVacState;

static bool
LsmVacDead(ItemPointer tid, void *arg)
{
	LsmVacState *vs = (LsmVacState *) arg;

	return vs->callback(tid, vs->callback_state);
}

/*
 * Remove dead entries from one run's data pages in place; returns its live
 * entry count.  *rewrite is set if a page could not be rewritten in place
 * (without an entry, the entries after it may move onto restart points and
 * take more room): the caller then rewrites the whole run.
 */
static uint64
LsmVacuumRun(Relation index, const LsmRunRef *ref, LsmVacState *vs,
			 BufferAccessStrategy strategy, double *removed, bool *rewrite)
{
	uint8	   *content = palloc(BLCKSZ);
	uint8	   *keep = palloc(BLCKSZ);
	uint8	   *newcontent = palloc(BLCKSZ);
	LsmBatch   *batch = NULL;
	LsmCoreOwner *own;
	LsmStatus	cst;
	LsmRunHeader hdr;
	uint64		live = 0;
	Buffer		buf;
	int			len;

	/* header: how many data pages */
	buf = ReadBufferExtended(index, MAIN_FORKNUM, ref->start, RBM_NORMAL, strategy);
	LockBuffer(buf, BUFFER_LOCK_SHARE);
	LsmCheckPage(index, buf, LSM_PK_RUN_HEADER, ref->run_id);
	len = LsmPageContentLen(BufferGetPage(buf));
	memcpy(content, LsmPageContent(BufferGetPage(buf)), len);
	UnlockReleaseBuffer(buf);
	LsmCheckStatus(index, lsm_runheader_parse(content, len, &hdr), ref->start,
				   "reading a run header");
	/* the batch belongs to the current memory context (lsmowner.h) */
	own = LsmCoreOwnerCreate(CurrentMemoryContext, LSM_CORE_BATCH);
	cst = lsm_batch_create(&batch);
	own->obj = batch;
	LsmCheckStatus(index, cst, InvalidBlockNumber, "vacuuming");

	{
		for (uint32 rel = 1; rel <= hdr.ndata_pages; rel++)
		{
			Page		page;
			size_t		n,
						nkeep = 0,
						newlen = 0;
			LsmStatus	st;

			LsmVacuumDelayPoint();
			buf = ReadBufferExtended(index, MAIN_FORKNUM, ref->start + rel,
									 RBM_NORMAL, strategy);
			LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
			LsmCheckPage(index, buf, LSM_PK_RUN_DATA, ref->run_id);
			page = BufferGetPage(buf);
			lsm_batch_clear(batch);
			LsmCheckStatus(index,
						   lsm_batch_add_datapage(batch, LsmPageContent(page),
												  LsmPageContentLen(page)),
						   ref->start + rel, "reading a data page");
			n = lsm_batch_count(batch);
			for (size_t i = 0; i < n; i++)
			{
				const uint8 *k;
				size_t		l;
				ItemPointerData tid;

				lsm_batch_get(batch, i, &k, &l);
				LsmEntryGetTid(k, (int) l, &tid);
				keep[i] = !LsmVacDead(&tid, vs);
				nkeep += keep[i];
			}
			st = nkeep < n ?
				lsm_datapage_build(batch, keep, newcontent, LSM_CONTENT_CAP, &newlen) :
				LSM_OK;
			if (st == LSM_TOO_LARGE)
			{
				*rewrite = true;	/* leave the page; the run is rewritten */
				nkeep = n;
			}
			else if (nkeep < n)
			{
				GenericXLogState *state;
				Page		p;

				LsmCheckStatus(index, st, ref->start + rel, "rewriting a data page");
				state = GenericXLogStart(index);
				p = GenericXLogRegisterBuffer(state, buf, 0);
				memcpy(LsmPageContent(p), newcontent, newlen);
				((PageHeader) p)->pd_lower = LSM_CONTENT_OFFSET + newlen;
				GenericXLogFinish(state);
				*removed += n - nkeep;
			}
			live += nkeep;
			UnlockReleaseBuffer(buf);
			LsmProgressPages(1);
			if (nkeep < n && !*rewrite)
				LSM_FAULT(LSM_FAULT_VACUUM_REWRITE);
			if (lsm_flush_delay_ms > 0)
				pg_usleep(lsm_flush_delay_ms * 1000L);	/* crash tests */
		}
	}
	/* lsm_am.progress counts the header, fence and filter pages as done */
	if (ref->npages > hdr.ndata_pages)
		LsmProgressPages(ref->npages - hdr.ndata_pages);
	LsmCoreOwnerRelease(own);
	pfree(content);
	pfree(keep);
	pfree(newcontent);
	return live;
}

IndexBulkDeleteResult *
lsmbulkdelete(IndexVacuumInfo *info, IndexBulkDeleteResult *stats,
			  IndexBulkDeleteCallback callback, void *callback_state)
{
	Relation	index = info->index;
	LsmVacState vs = {callback, callback_state};
	LsmMetaPageData meta;
	LsmRunRef  *runs;
	uint64	   *live;
	double		removed = 0;
	double		total = 0;
	Buffer		metabuf;

	LsmCheckPreloaded();
	if (stats == NULL)
		stats = palloc0(sizeof(IndexBulkDeleteResult));

	/*
	 * Ask running flushes and compactions to yield, then hold both
	 * maintenance locks: no merge in flight can carry a TID we remove into a
	 * new run, and the manifest's runs hold still while we rewrite them.
	 */
	{
		LsmSlot    *slot = LsmSlotAcquire(index, LW_EXCLUSIVE);

		slot->vacuum_waiting = true;
		LsmSlotRelease(index, slot);
	}
	PG_TRY();
	{
		LsmFlushLock(index);
		LsmCompactLock(index);
	}
	PG_FINALLY();
	{
		LsmSlot    *slot = LsmSlotAcquire(index, LW_EXCLUSIVE);

		slot->vacuum_waiting = false;
		LsmSlotRelease(index, slot);
	}
	PG_END_TRY();

	/* 1. memtables + log: everything becomes runs, dead entries left out */
	LsmFlushAll(index, LsmVacDead, &vs, &removed);

	/* 2. runs (the manifest cannot change: we hold the maintenance lock) */
	LsmReadMeta(index, &meta, &runs);
	live = palloc(sizeof(uint64) * Max(meta.nruns, 1));
	{
		uint32		levels = 0;
		int64		pages = 0;

		for (int i = 0; i < (int) meta.nruns; i++)
		{
			levels |= (uint32) 1 << Min(runs[i].level, 31);
			pages += runs[i].npages;
		}
		/* lsm_am.progress: pages are the runs' pages (data pages visited) */
		LsmProgressBegin(index, LSM_JOB_VACUUM, (int) meta.nruns, levels, -1, pages);
	}
	for (int i = 0; i < (int) meta.nruns; i++)
	{
		bool		rewrite = false;

		live[i] = LsmVacuumRun(index, &runs[i], &vs, info->strategy, &removed, &rewrite);
		if (rewrite)
		{
			/* the run is replaced (new id): its count is published with it */
			live[i] = LsmRewriteRun(index, &runs[i], LsmVacDead, &vs, &removed);
		}
		total += live[i];
	}
	(void) LsmProgressEnd();

	/* 3. live counts into the manifest */
	metabuf = ReadBuffer(index, LSM_METAPAGE_BLKNO);
	LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
	{
		LsmMetaPageData *m = LsmPageGetMeta(BufferGetPage(metabuf));
		bool		changed = false;

		for (int i = 0; i < (int) m->nruns; i++)
			for (int j = 0; j < (int) meta.nruns; j++)
				if (m->runs[i].run_id == runs[j].run_id && m->runs[i].nentries != live[j])
					changed = true;
		if (changed)
		{
			GenericXLogState *state = GenericXLogStart(index);
			Page		p = GenericXLogRegisterBuffer(state, metabuf, 0);

			m = LsmPageGetMeta(p);
			for (int i = 0; i < (int) m->nruns; i++)
				for (int j = 0; j < (int) meta.nruns; j++)
					if (m->runs[i].run_id == runs[j].run_id)
						m->runs[i].nentries = live[j];
			GenericXLogFinish(state);
		}
	}
	LockBuffer(metabuf, BUFFER_LOCK_UNLOCK);
	LsmCompactUnlock(index);
	LsmFlushUnlock(index);

	/* 4. wait for scans that might still return a removed TID */
	LockBufferForCleanup(metabuf);
	UnlockReleaseBuffer(metabuf);

	stats->tuples_removed += removed;
	stats->num_index_tuples = total;
	stats->estimated_count = false;
	stats->num_pages = RelationGetNumberOfBlocks(index);
	return stats;
}

IndexBulkDeleteResult *
lsmvacuumcleanup(IndexVacuumInfo *info, IndexBulkDeleteResult *stats)
{
	Relation	index = info->index;

	if (info->analyze_only)
		return stats;
	LsmCheckPreloaded();

	if (stats == NULL)
	{
		LsmMetaPageData meta;
		LsmRunRef  *runs;
		LsmSlot    *slot;
		double		total = 0;

		stats = palloc0(sizeof(IndexBulkDeleteResult));
		slot = LsmSlotAcquire(index, LW_SHARED);
		total = slot->mt.nentries;
		for (int i = 0; i < slot->nimm; i++)
			total += slot->imm[i].mt.nentries;
		LsmSlotRelease(index, slot);
		LsmReadMeta(index, &meta, &runs);
		for (int i = 0; i < (int) meta.nruns; i++)
			total += runs[i].nentries;
		stats->num_index_tuples = total;
		stats->estimated_count = false;
	}
	/*
	 * Give the free tail back (if no scan or insert holds the index), moving
	 * runs down first if no flush or compaction is running.
	 */
	if (!RecoveryInProgress() && LsmCompactLockConditional(index))
	{
		LsmShrinkRelocating(index);
		LsmCompactUnlock(index);
	}
	else
		(void) LsmShrink(index, NULL);
	stats->num_pages = RelationGetNumberOfBlocks(index);
	return stats;
}
