/*
 * lsmshrink.c — live data moves to the front of the file and the free tail
 * goes: a run that fits a free extent below it is copied there and
 * published in place of the original (LsmRelocateRun), and the index
 * shrinks (LsmShrink, storage/lsmalloc.c).  compact() and VACUUM do it under
 * the compaction lock, waiting up to 5 s for the index's lock; a worker does
 * it when idle and between merges, without waiting.  The rules for when a
 * page may be cut are in doc/impl.md, "The file shrinks".
 */
#include "postgres.h"

#include "access/xact.h"
#include "access/xlog.h"
#include "miscadmin.h"
#include "replication/walsender.h"
#include "replication/walsender_private.h"
#include "storage/bufmgr.h"
#include "storage/procarray.h"
#include "storage/spin.h"
#include "utils/rel.h"

#include "maint/lsmmaint_int.h"

/*
 * Copy a run to the lowest free extent that holds it, if that lies below
 * it, and publish the copy (a new run id: the run cache is keyed by id) in
 * place of the original, whose pages are retired like a compaction's
 * inputs.  Lets the tail that the original occupied be truncated.  Returns
 * true if the run moved.  REQUIRES: compaction lock.
 */
static bool
LsmRelocateRun(Relation index, const LsmRunRef *ref)
{
	uint32		run_id;
	BlockNumber start = LsmReserveBelow(index, LSM_RESV_COMPACT, ref->npages,
										ref->start, &run_id);
	LsmRunRef	copy = *ref;
	LsmJob		job;
	BufferAccessStrategy rd;
	BufferAccessStrategy wr;
	LsmPageLog	plog = {0};

	if (!BlockNumberIsValid(start))
		return false;
	/*
	 * As a merge (doc/impl.md, "Merges and shared buffers"): the original
	 * read through one ring, the copy's data pages written through another
	 * and logged as they are written, its header, fence and filter pages
	 * through ordinary buffers
	 */
	rd = GetAccessStrategy(BAS_BULKREAD);
	wr = GetAccessStrategy(BAS_BULKWRITE);
	LsmJobBegin(&job, index, LSM_JOB_RELOCATION, ref, 1, 0, ref->level, ref->npages);
	for (uint32 rel = 0; rel < ref->npages; rel++)
	{
		Buffer		src = ReadBufferExtended(index, MAIN_FORKNUM, ref->start + rel,
											 RBM_NORMAL, rd);
		Buffer		dst;
		Page		page;
		bool		data;

		LockBuffer(src, BUFFER_LOCK_SHARE);
		page = BufferGetPage(src);
		if (PageIsNew(page) || LsmPageGetOpaque(page)->page_id != LSM_PAGE_ID ||
			LsmPageGetOpaque(page)->owner != ref->run_id)
			LsmCheckPage(index, src, LSM_PK_RUN_DATA, ref->run_id);	/* raises */
		data = LsmPageGetOpaque(page)->kind == LSM_PK_RUN_DATA;
		dst = ReadBufferExtended(index, MAIN_FORKNUM, start + rel, RBM_ZERO_AND_LOCK,
								 data ? wr : NULL);
		memcpy(BufferGetPage(dst), page, BLCKSZ);
		LsmPageGetOpaque(BufferGetPage(dst))->owner = run_id;
		MarkBufferDirty(dst);
		UnlockReleaseBuffer(src);
		LsmPageLogAdd(&plog, index, dst);
		LsmProgressPages(1);
		CHECK_FOR_INTERRUPTS();
	}
	LsmPageLogFlush(&plog);
	FreeAccessStrategy(rd);
	FreeAccessStrategy(wr);
	copy.run_id = run_id;
	copy.start = start;
	LsmPublishCompaction(index, ref, 1, &copy, 1, 0, true);
	LsmJobEnd(&job, index, &copy, 1);
	return true;
}

/* Is the last page the metapage accounts for a page of a log chain? */
static bool
LsmLastPageIsLog(Relation index)
{
	LsmMetaPageData *meta = palloc(sizeof(LsmMetaPageData));
	BlockNumber last;
	Buffer		buf;
	Page		page;
	bool		log;

	LsmReadMeta(index, meta, NULL);
	last = meta->nblocks - 1;
	pfree(meta);
	if (last < 1 || last >= RelationGetNumberOfBlocks(index))
		return false;
	buf = ReadBuffer(index, last);
	LockBuffer(buf, BUFFER_LOCK_SHARE);
	page = BufferGetPage(buf);
	log = !PageIsNew(page) && LsmPageGetOpaque(page)->page_id == LSM_PAGE_ID &&
		LsmPageGetOpaque(page)->kind == LSM_PK_LOG;
	UnlockReleaseBuffer(buf);
	return log;
}

/*
 * Shrink the index (LsmShrink), then, while the highest run that fits a
 * free extent below it exists, copy it down (LsmRelocateRun) and shrink
 * again:
 * live data moves to the front and the file ends close to it.  Tries for
 * the index's lock `tries` more times, LSM_SHRINK_LOCK_WAIT_US apart.
 * Does nothing more if the first shrink could not lock the index (its
 * retired runs may still be read: copying would gain nothing now); returns
 * whether it could.  REQUIRES: compaction lock.
 */
static bool
LsmShrinkRelocatingGuts(Relation index, int tries)
{
	LsmMetaPageData *meta = palloc(sizeof(LsmMetaPageData));
	bool		locked = LsmShrink(index, NULL);
	bool		first;
	bool		flushed = false;

	for (int i = 0; i < tries && !locked && !IsInParallelMode() &&
		 !RecoveryInProgress(); i++)
	{
		CHECK_FOR_INTERRUPTS();
		pg_usleep(LSM_SHRINK_LOCK_WAIT_US);
		locked = LsmShrink(index, NULL);
	}
	first = locked;
	for (int round = 0; round < 2 * LSM_MAX_RUNS && locked; round++)
	{
		bool		moved = false;
		bool	   *tried = palloc0(sizeof(bool) * LSM_MAX_RUNS);

		/*
		 * The highest run that fits a free extent below it moves there
		 * (pieces of a leveled index differ in size: the top one may not
		 * fit where the next one does, whose move frees room higher up).
		 * (Cutting pages written since the last checkpoint is safe for
		 * redo; with wal_consistency_checking on, LsmTruncateTo keeps them:
		 * doc/impl.md, "The file shrinks".)  When no run moves and the last
		 * page is a log page (a chain that grew while a bulk load kept the
		 * free pages from being reused lies at the end of the file), the
		 * memtables are flushed once, if no flush is running: their chains
		 * are freed at once and the run goes into the lowest free pages.
		 */
		LsmReadMeta(index, meta, NULL);
		while (!moved)
		{
			int			top = -1;

			for (int i = 0; i < (int) meta->nruns; i++)
				if (!tried[i] && (top < 0 || meta->runs[i].start > meta->runs[top].start))
					top = i;
			if (top < 0)
				break;
			tried[top] = true;
			moved = LsmRelocateRun(index, &meta->runs[top]);
		}
		pfree(tried);
		if (!moved && !flushed && LsmLastPageIsLog(index) &&
			LsmFlushLockConditional(index))
		{
			/* out of the usual order, but conditional: it never waits */
			LsmWorkerReportActivity("flush", index, "to shrink the file");
			LsmFlushAll(index, NULL, NULL, NULL);
			LsmFlushUnlock(index);
			flushed = moved = true;
		}
		if (!moved)
			break;
		locked = LsmShrink(index, NULL);
	}
	pfree(meta);
	return first;
}

/*
 * LsmShrinkRelocating for compact() and VACUUM: a worker may hold the index
 * for a moment after the compaction it was doing when we started, so retry
 * for up to 5 s, as VACUUM does before it truncates a heap
 * (VACUUM_TRUNCATE_LOCK_TIMEOUT).  REQUIRES: compaction lock.
 */
void
LsmShrinkRelocating(Relation index)
{
	(void) LsmShrinkRelocatingGuts(index, LSM_SHRINK_LOCK_TRIES);
}

/*
 * Does a hot standby send feedback (hot_standby_feedback: a walsender with
 * an xmin), or hold a physical replication slot's xmin?  Its queries may
 * then read this index's retired runs for as long as the primary keeps the
 * rows they see; an AccessExclusiveLock on the index, replayed there,
 * cancels them after max_standby_streaming_delay.  A worker does not take
 * that lock on its own then: only compact() and VACUUM do (as a heap
 * VACUUM's truncation does).  Read without locks: a hint.
 */
static bool
LsmStandbyFeedback(void)
{
	TransactionId xmin;
	TransactionId catalog_xmin;

	if (WalSndCtl == NULL)
		return false;
	for (int i = 0; i < max_wal_senders; i++)
	{
		WalSnd	   *w = &WalSndCtl->walsnds[i];
		pid_t		pid;
		PGPROC	   *proc;

		SpinLockAcquire(&w->mutex);
		pid = w->pid;
		SpinLockRelease(&w->mutex);
		if (pid == 0)
			continue;
		proc = BackendPidGetProc(pid);
		if (proc != NULL && TransactionIdIsValid(proc->xmin))
			return true;
	}
	ProcArrayGetReplicationSlotXmin(&xmin, &catalog_xmin);
	return TransactionIdIsValid(xmin);
}

/*
 * A worker with nothing more to do gives free space back when it is large:
 * an eighth of the file and at least 64 pages, free anywhere (so a standby
 * query is not cancelled, the lock being replayed, for a few pages).  It
 * shrinks the index and moves the runs that lie highest down into the
 * holes below them (LsmShrinkRelocating, without waiting for the lock), so
 * that a bulk load (one large INSERT or COPY, whose merges ran while its
 * transaction held the index and its snapshot kept their inputs from being
 * reused) ends close to its live data without a VACUUM.  Returns true if
 * the index was busy (the caller comes back later).
 */
bool
LsmMaybeShrink(Relation index)
{
	LsmMetaPageData *meta = palloc(sizeof(LsmMetaPageData));
	BlockNumber file = RelationGetNumberOfBlocks(index);
	uint64		free_pages;
	bool		busy = false;

	if (LsmStandbyFeedback())
	{
		pfree(meta);
		return false;
	}
	LsmReadMeta(index, meta, NULL);
	free_pages = file > meta->nblocks ? file - meta->nblocks : 0;
	for (int i = 0; i < (int) meta->nfree; i++)
		free_pages += meta->free[i].npages;
	if (free_pages >= 64 && free_pages >= file / 8)
	{
		if (!LsmCompactLockConditional(index))
			busy = true;
		else
		{
			LsmWorkerReportActivity("shrink", index, NULL);
			busy = !LsmShrinkRelocatingGuts(index, 0);
			LsmCompactUnlock(index);
		}
	}
	pfree(meta);
	return busy;
}

/*
 * Between two compactions of a worker: when the pages the last ones retired
 * wait for the xid horizon (stamped, not yet reusable) and are many (an
 * eighth of the file, at least 64 pages), settle them now if nobody holds
 * the index (LsmShrink, its lock only if free at once).  Under inserts the
 * horizon passes them within a transaction or two and the lock is rarely
 * free; on a quiet system (a worker catching up after a load) no xid is
 * assigned, the horizon never passes, and without this every merge of the
 * catch-up would write into new pages at the end of the file.
 */
void
LsmMaybeSettle(Relation index)
{
	LsmMetaPageData *meta = palloc(sizeof(LsmMetaPageData));
	BlockNumber file = RelationGetNumberOfBlocks(index);
	uint64		waiting = 0;

	if (LsmStandbyFeedback())
	{
		pfree(meta);
		return;
	}
	LsmReadMeta(index, meta, NULL);
	for (int i = 0; i < (int) meta->nfree; i++)
		if (meta->free[i].reuse_after != 0)
			waiting += meta->free[i].npages;
	if (waiting >= 64 && waiting >= file / 8)
		(void) LsmShrink(index, NULL);
	pfree(meta);
}
