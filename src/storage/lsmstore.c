/*
 * lsmstore.c — pages and WAL: the metapage and the run writer.  Page
 * allocation is lsmalloc.c, page checks lsmcheck.c, the log lsmlog.c.
 *
 * What is WAL-logged and how:
 *  - a log append is one generic WAL record on the tail log page (a delta of
 *    the entry and pd_lower; a full image only for a page's first change
 *    after a checkpoint); a new log page is allocated, initialised (full
 *    image) and linked in one record with the metapage;
 *  - a run writer first reserves an extent in a metapage record, writes its
 *    pages into shared buffers and logs them as full page images before the
 *    run is published: a flush logs them all at the end (log_newpage_range),
 *    a merge 32 at a time as it writes them (its data pages go through a
 *    ring of buffers, so that merging does not evict what readers use);
 *    until the publish no reader can reach them, and a crash leaves only the
 *    reservation, which the next writer of the same kind reclaims;
 *  - publishing a run (lsmmaint.c, lsmbuild.c) is one generic WAL record on
 *    the metapage: the run appears and whatever it replaces disappears, and
 *    the replaced pages join the free list, atomically.
 *
 * Every page below the metapage's nblocks is the metapage, a log page of a
 * live chain, a page of a run, free, or reserved; lsm_am.check_index()
 * verifies it (doc/page_format.md, "Page accounting").
 */
#include "postgres.h"

#include "access/xlog.h"
#include "access/xloginsert.h"
#include "catalog/pg_control.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "storage/proc.h"
#include "storage/smgr.h"
#include "utils/rel.h"

#include "storage/lsm_storage.h"
#include "lsmowner.h"
#include "lsmfault.h"

/* See lsm_storage.h. */
uint64		lsm_moved_pages = 0;

/* Initialise an lsm page of the given kind. */
void
LsmInitPage(Page page, uint16 kind, uint32 owner)
{
	LsmPageOpaque op;

	PageInit(page, BLCKSZ, sizeof(LsmPageOpaqueData));
	op = LsmPageGetOpaque(page);
	op->kind = kind;
	op->version = LSM_FORMAT_VERSION;
	op->owner = owner;
	op->next = InvalidBlockNumber;
	op->checksum = 0;
	op->page_id = LSM_PAGE_ID;
}

/* Initialise an empty metapage: no runs, no log, nothing else allocated. */
void
LsmInitMetaPage(Page page, uint64 fingerprint)
{
	LsmMetaPageData *meta;
	uint64		instance;

	LsmInitPage(page, LSM_PK_META, 0);
	meta = LsmPageGetMeta(page);
	memset(meta, 0, sizeof(LsmMetaPageData));
	meta->magic = LSM_MAGIC;
	meta->version = LSM_FORMAT_VERSION;
	meta->key_fingerprint = fingerprint;
	if (!pg_strong_random(&instance, sizeof(instance)))
		instance = (uint64) GetCurrentTimestamp() ^ ((uint64) MyProcPid << 32);
	meta->instance_id = instance;
	meta->next_run_id = 1;
	meta->active.epoch = 1;
	meta->active.head = InvalidBlockNumber;
	meta->next_epoch = 2;
	for (int i = 0; i < LSM_MAX_IMM; i++)
		meta->imm[i].head = InvalidBlockNumber;
	meta->nblocks = 1;
	((PageHeader) page)->pd_lower = LSM_CONTENT_OFFSET + sizeof(LsmMetaPageData);
}

/*
 * Copy the metapage content (and, if runs_out, a palloc'd copy of the run
 * list) under a share lock.
 */
void
LsmReadMeta(Relation index, LsmMetaPageData *meta_out, LsmRunRef **runs_out)
{
	Buffer		buf = ReadBuffer(index, LSM_METAPAGE_BLKNO);
	LsmMetaPageData *meta;

	LockBuffer(buf, BUFFER_LOCK_SHARE);
	LsmCheckPage(index, buf, LSM_PK_META, 0);
	meta = LsmPageGetMeta(BufferGetPage(buf));
	memcpy(meta_out, meta, sizeof(LsmMetaPageData));
	UnlockReleaseBuffer(buf);
	LsmCheckMeta(index, meta_out);
	if (runs_out)
	{
		*runs_out = palloc(sizeof(LsmRunRef) * Max(meta_out->nruns, 1));
		memcpy(*runs_out, meta_out->runs, sizeof(LsmRunRef) * meta_out->nruns);
	}
}

/*
 * What the planner needs of the manifest (am/lsmcost.c), read in place
 * under a share lock, without copying the metapage: the number of runs, and
 * how many of them have a bloom filter on the leading column alone.
 */
void
LsmReadRunCounts(Relation index, int *nruns, int *nfiltered)
{
	Buffer		buf = ReadBuffer(index, LSM_METAPAGE_BLKNO);
	const LsmMetaPageData *meta;
	int			n;

	LockBuffer(buf, BUFFER_LOCK_SHARE);
	LsmCheckPage(index, buf, LSM_PK_META, 0);
	meta = LsmPageGetMeta(BufferGetPage(buf));
	n = Min((int) meta->nruns, LSM_MAX_RUNS);	/* scans check the rest */
	*nruns = n;
	*nfiltered = 0;
	for (int i = 0; i < n; i++)
		if (meta->runs[i].bloom_nblocks > 0 && meta->runs[i].bloom_cols == 1)
			(*nfiltered)++;
	UnlockReleaseBuffer(buf);
}

/* Lock the metapage exclusively and check it; returns the buffer. */
Buffer
LsmLockMeta(Relation index)
{
	Buffer		buf = ReadBuffer(index, LSM_METAPAGE_BLKNO);

	LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
	LsmCheckPage(index, buf, LSM_PK_META, 0);
	LsmCheckMeta(index, LsmPageGetMeta(BufferGetPage(buf)));
	return buf;
}

/*
 * Raise an ERROR for a core status (after the C++ frames have returned);
 * blkno is the page being decoded, if any (it names a corruption).
 */
void
LsmReportStatus(Relation index, LsmStatus st, BlockNumber blkno, const char *what)
{
	if (st == LSM_CORRUPT)
		LsmReportCorruption(index, blkno, "Content failed validation while %s.", what);
	if (st == LSM_NO_MEMORY)
		ereport(ERROR,
				(errcode(ERRCODE_OUT_OF_MEMORY),
				 errmsg("out of memory while %s for index \"%s\"",
						what, RelationGetRelationName(index))));
	if (st == LSM_TOO_LARGE)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("index entry too large while %s for index \"%s\"",
						what, RelationGetRelationName(index)),
				 errhint("Index entries of lsm indexes are limited to %d bytes.",
						 LSM_MAX_KEY_SIZE)));
	elog(ERROR, "lsm_am internal error (%s) while %s for index \"%s\"",
		 lsm_status_message(st), what, RelationGetRelationName(index));
}

/* ------------------------------------------------------------------------
 * Run writer: pages go into the writer's reservation, which grows (in
 * place, or by moving to the end of the index) if the estimate was short.
 * ------------------------------------------------------------------------ */

/*
 * Direct writes, for the run of a new index's build (as nbtree builds): no
 * reservation while the run grows and no shared buffers.  The pages go
 * straight to the end of the file, a batch at a time, each batch logged
 * whole first (log_newpages) when the index needs WAL; the run's header,
 * which the builder emits after its data and fence pages, overwrites the
 * zero page that held its place.  At the end the file is synced (or, on 17
 * and later with no checkpoint since the first page, its sync is left to the
 * next checkpoint), and the pages are reserved for the run as they lie: the
 * metapage accounts for nothing else yet.  A build that fails leaves nothing:
 * the new relfilenode goes with its transaction.
 */
#define LSM_DIRECT_BATCH	32		/* XLR_MAX_BLOCK_ID: one log_newpages record */

typedef struct LsmDirectWrites
{
	int			n;				/* pages waiting */
	BlockNumber blkno[LSM_DIRECT_BATCH];
	char	   *pages;			/* LSM_DIRECT_BATCH of them, I/O-aligned */
	char	   *zero;			/* a zero page, I/O-aligned */
	BlockNumber nblocks;		/* the file's length */
	XLogRecPtr	redo;			/* the redo pointer when the build began */
	BlockNumber first_start;	/* the first piece's (LsmRunWriterCutDirect) */
	uint32		first_run_id;
} LsmDirectWrites;

static void
LsmDirectFlush(LsmRunWriter *w)
{
	LsmDirectWrites *d = w->direct;
	SMgrRelation smgr = RelationGetSmgr(w->index);
	Page		pages[LSM_DIRECT_BATCH];

	if (d->n == 0)
		return;
	for (int i = 0; i < d->n; i++)
		pages[i] = (Page) (d->pages + (Size) i * BLCKSZ);
	if (RelationNeedsWAL(w->index))
		log_newpages(&LsmRelStorage(w->index), MAIN_FORKNUM, d->n, d->blkno, pages, true);
	for (int i = 0; i < d->n; i++)
	{
		BlockNumber blkno = d->blkno[i];

		PageSetChecksumInplace(pages[i], blkno);
		/* a page emitted later (the header): its place, zero for now */
		while (d->nblocks < blkno)
			smgrextend(smgr, MAIN_FORKNUM, d->nblocks++, d->zero, true);
		if (blkno == d->nblocks)
			smgrextend(smgr, MAIN_FORKNUM, d->nblocks++, pages[i], true);
		else
			smgrwrite(smgr, MAIN_FORKNUM, blkno, pages[i], true);
	}
	d->n = 0;
}

/*
 * The last batch, then the file made durable (as smgr_bulk_finish does on 17
 * and later, nbtree's build on 15 and 16), and the pages reserved for the run.
 */
static void
LsmDirectFinish(LsmRunWriter *w, uint32 npages)
{
	uint32		run_id;
	BlockNumber start;
	LsmDirectWrites *d = w->direct;

	/* every piece, laid one after the other, reserved as one extent */
	npages += w->start - d->first_start;

	LsmDirectFlush(w);

	/*
	 * An unlogged index too: the shutdown checkpoint does not know these
	 * pages, and after a clean shutdown its file is trusted as it is.  (With
	 * wal_level = minimal, where a new relfilenode needs no WAL, commit syncs
	 * or logs the file; a sync here as well is only redundant.)
	 */
	if (RelationNeedsWAL(w->index) ||
		w->index->rd_rel->relpersistence == RELPERSISTENCE_UNLOGGED)
	{
		SMgrRelation smgr = RelationGetSmgr(w->index);

#if PG_VERSION_NUM >= 170000
		/* no checkpoint may begin between the look and the request */
		Assert((MyProc->delayChkptFlags & DELAY_CHKPT_START) == 0);
		MyProc->delayChkptFlags |= DELAY_CHKPT_START;
		if (w->direct->redo != GetRedoRecPtr())
		{
			MyProc->delayChkptFlags &= ~DELAY_CHKPT_START;
			smgrimmedsync(smgr, MAIN_FORKNUM);
		}
		else
		{
			smgrregistersync(smgr, MAIN_FORKNUM);
			MyProc->delayChkptFlags &= ~DELAY_CHKPT_START;
		}
#else
		/*
		 * A checkpoint during the build cannot have written these pages (it
		 * does not know them), and recovery would begin after their WAL (as
		 * nbtree's build on 15 and 16).
		 */
		smgrimmedsync(smgr, MAIN_FORKNUM);
#endif
	}
	start = LsmReserve(w->index, w->which, npages, &run_id);
	if (start != d->first_start || run_id != d->first_run_id)
		elog(ERROR, "lsm_am: the build's run of index \"%s\" was written at block %u as run %u, but reserved at block %u as run %u",
			 RelationGetRelationName(w->index), d->first_start, d->first_run_id, start, run_id);
}

/* A run page of kind with content, in page (a buffer's or a batch's). */
static void
LsmRunPageFill(LsmRunWriter *w, Page page, uint16 kind, const void *content,
			   size_t len)
{
	LsmInitPage(page, kind, w->run_id);
	memcpy(LsmPageContent(page), content, len);
	((PageHeader) page)->pd_lower = LSM_CONTENT_OFFSET + len;
}

/*
 * Log the pages of pl (pinned, unlocked), as log_newpage_range does: one
 * record of full images, each page's LSN set, then the pins dropped.  Nobody
 * else reaches these pages (their run is not published), so nothing changed
 * them since they were written.
 */
void
LsmPageLogFlush(LsmPageLog *pl)
{
	int			nlog = 0;

	if (pl->n == 0)
		return;
	if (RelationNeedsWAL(pl->index))
		XLogEnsureRecordSpace(LSM_PAGELOG_BATCH - 1, 0);
	for (int i = 0; i < pl->n; i++)
	{
		LockBuffer(pl->bufs[i], BUFFER_LOCK_EXCLUSIVE);
		/* a zero page (a header not yet written, copied by a move) is skipped */
		if (!PageIsNew(BufferGetPage(pl->bufs[i])))
			nlog++;
	}
	if (RelationNeedsWAL(pl->index) && nlog > 0)
	{
		XLogRecPtr	recptr;
		int			id = 0;

		START_CRIT_SECTION();
		XLogBeginInsert();
		for (int i = 0; i < pl->n; i++)
		{
			if (PageIsNew(BufferGetPage(pl->bufs[i])))
				continue;
			MarkBufferDirty(pl->bufs[i]);
			XLogRegisterBuffer(id++, pl->bufs[i], REGBUF_FORCE_IMAGE | REGBUF_STANDARD);
		}
		recptr = XLogInsert(RM_XLOG_ID, XLOG_FPI);
		for (int i = 0; i < pl->n; i++)
			if (!PageIsNew(BufferGetPage(pl->bufs[i])))
				PageSetLSN(BufferGetPage(pl->bufs[i]), recptr);
		END_CRIT_SECTION();
	}
	for (int i = 0; i < pl->n; i++)
		UnlockReleaseBuffer(pl->bufs[i]);
	pl->n = 0;
}

/*
 * A page just written (buf exclusively locked, dirty), to be logged with
 * the pages written just before and after it: unlocked, its pin kept.
 */
void
LsmPageLogAdd(LsmPageLog *pl, Relation index, Buffer buf)
{
	Assert(pl->n == 0 || pl->index == index);
	pl->index = index;
	LockBuffer(buf, BUFFER_LOCK_UNLOCK);
	/*
	 * A page written again before its batch is logged (a run's header,
	 * whose zero page a move copied first) is logged once, as it is then:
	 * locking its buffer twice in LsmPageLogFlush would wait for itself.
	 */
	for (int i = 0; i < pl->n; i++)
	{
		if (pl->bufs[i] == buf)
		{
			ReleaseBuffer(buf);
			return;
		}
	}
	pl->bufs[pl->n++] = buf;
	if (pl->n == LSM_PAGELOG_BATCH)
		LsmPageLogFlush(pl);
}

/* Drop the pins of pages not to be logged after all (their writer gave up). */
void
LsmPageLogDrop(LsmPageLog *pl)
{
	for (int i = 0; i < pl->n; i++)
		ReleaseBuffer(pl->bufs[i]);
	pl->n = 0;
}

/*
 * The buffer of relative page rel, zeroed and exclusively locked (through
 * strategy, NULL for the ordinary way): the reservation grown (in place, or
 * moved to the end of the index with what is written) if rel lies past it.
 */
static Buffer
LsmRunWriterBuffer(LsmRunWriter *w, uint32 rel, BufferAccessStrategy strategy)
{
	if (rel >= w->cap)
	{
		uint32		more = Max(16, w->cap / 2);

		while (rel >= w->cap + more)
			more *= 2;
		if (LsmReserveGrow(w->index, w->which, more))
			w->cap += more;
		else
		{
			BlockNumber oldstart = w->start;
			BlockNumber newstart = LsmReserveMove(w->index, w->which, w->cap + more);

			/*
			 * copy what is written, pages 0 .. hiwater-1: the header (page 0)
			 * is written before the filter pages, which may be what grows the
			 * run; before that, the copy of a zero page does no harm.  A
			 * merge's writer logs what it has pending first (those pages are
			 * left behind), then the copies as it makes them.
			 */
			LsmPageLogFlush(&w->pend);
			for (uint32 r = 0; r < w->hiwater; r++)
			{
				Buffer		src = ReadBufferExtended(w->index, MAIN_FORKNUM, oldstart + r,
													 RBM_NORMAL, w->ring);
				Buffer		dst = ReadBufferExtended(w->index, MAIN_FORKNUM, newstart + r,
													 RBM_ZERO_AND_LOCK, w->ring);

				LockBuffer(src, BUFFER_LOCK_SHARE);
				memcpy(BufferGetPage(dst), BufferGetPage(src), BLCKSZ);
				MarkBufferDirty(dst);
				UnlockReleaseBuffer(src);
				if (w->ring)
					LsmPageLogAdd(&w->pend, w->index, dst);
				else
					UnlockReleaseBuffer(dst);
			}
			w->start = newstart;
			w->cap += more;
			lsm_moved_pages += w->hiwater;
		}
	}
	return ReadBufferExtended(w->index, MAIN_FORKNUM, w->start + rel,
							  RBM_ZERO_AND_LOCK, strategy);
}

/* Write a page image to relative page rel of the run. */
static void
LsmRunWriterWrite(LsmRunWriter *w, uint32 rel, uint16 kind, const void *content,
				  size_t len)
{
	if (len > LSM_CONTENT_CAP)
		elog(ERROR, "lsm_am: run page of %zu bytes exceeds the page capacity", len);
	if (w->direct)
	{
		LsmDirectWrites *d = w->direct;

		LsmRunPageFill(w, (Page) (d->pages + (Size) d->n * BLCKSZ), kind, content, len);
		d->blkno[d->n++] = w->start + rel;
		if (d->n == LSM_DIRECT_BATCH)
			LsmDirectFlush(w);
	}
	else
	{
		/*
		 * A merge's data pages through its ring; its header, fence and filter
		 * pages, which every lookup in the run reads, the ordinary way
		 */
		Buffer		buf = LsmRunWriterBuffer(w, rel,
											 kind == LSM_PK_RUN_DATA ? w->ring : NULL);

		LsmRunPageFill(w, BufferGetPage(buf), kind, content, len);
		MarkBufferDirty(buf);
		if (w->ring)
			LsmPageLogAdd(&w->pend, w->index, buf);
		else
			UnlockReleaseBuffer(buf);
	}
	if (rel + 1 > w->hiwater)
		w->hiwater = rel + 1;
	LsmProgressPages(1);		/* the job of this process, if one runs */

	if (w->delay && lsm_flush_delay_ms > 0)
		pg_usleep(lsm_flush_delay_ms * 1000L);
	/* every page of a flush, merge, rewrite or build: no LWLock is held here */
	LSM_FAULT(w->which == LSM_RESV_FLUSH ? LSM_FAULT_FLUSH_PAGE : LSM_FAULT_COMPACTION_PAGE);
	CHECK_FOR_INTERRUPTS();
	if (w->stop && !w->stopped && w->stop->fn(w->index, w->stop->arg))
		w->stopped = true;
}

/* Place every page the builder has finished (one call per page). */
static void
LsmRunWriterDrain(LsmRunWriter *w)
{
	for (;;)
	{
		LsmPageOut	out;
		LsmStatus	st = lsm_runbuilder_take_page(w->builder, &out);
		uint16		kind;

		if (st == LSM_END)
			return;
		if (st != LSM_OK)
			LsmReportStatus(w->index, st, InvalidBlockNumber, "writing a run");
		switch (out.kind)
		{
			case LSM_PAGE_HEADER:
				kind = LSM_PK_RUN_HEADER;
				break;
			case LSM_PAGE_DATA:
				kind = LSM_PK_RUN_DATA;
				break;
			case LSM_PAGE_FENCE:
				kind = LSM_PK_RUN_FENCE;
				break;
			case LSM_PAGE_BLOOM:
				kind = LSM_PK_RUN_BLOOM;
				break;
			default:
				elog(ERROR, "lsm_am: run builder emitted a page of unknown kind %d",
					 (int) out.kind);
		}
		LsmRunWriterWrite(w, out.rel_page, kind, out.content, out.len);
	}
}

/*
 * Start a run: reserve est_pages (a guess; the reservation grows) with
 * reservation which (LSM_RESV_*).  expected_keys sizes the bloom filter,
 * which the core's run builder owns.  The builder belongs to a memory
 * context of the writer's own, a child of the current one: an ERROR anywhere
 * later frees it with that context (lsmowner.h), so callers need no PG_TRY
 * for it.  REQUIRES: the lock that makes the caller the only writer of its
 * kind.
 */
void
LsmRunWriterBegin(LsmRunWriter *w, Relation index, int which,
				  uint32 est_pages, uint64 expected_keys, bool delay)
{
	memset(w, 0, sizeof(*w));
	w->index = index;
	w->which = which;
	w->delay = delay;
	w->cap = Max(est_pages, 2);
	w->hiwater = 1;
	/* freed with the caller's memory context */
	if (which == LSM_RESV_COMPACT)
		w->ring = GetAccessStrategy(BAS_BULKWRITE);
	w->start = LsmReserve(index, which, w->cap, &w->run_id);
	LsmRunWriterNewBuilder(w, expected_keys);
}

/*
 * Start the run of a new index's build, written directly (LsmDirectWrites,
 * above) after the metapage.  REQUIRES: the index is new (a metapage that
 * accounts for itself alone) and the caller its only writer.
 */
void
LsmRunWriterBeginDirect(LsmRunWriter *w, Relation index, uint64 expected_keys,
						bool delay)
{
	LsmMetaPageData *m = palloc(sizeof(LsmMetaPageData));
	BlockNumber nblocks = RelationGetNumberOfBlocks(index);

	LsmReadMeta(index, m, NULL);
	if (m->nruns != 0 || m->nfree != 0 || m->nblocks != nblocks)
		elog(ERROR, "lsm_am: index \"%s\" is not new (%u runs, %u free extents, %u of %u pages accounted)",
			 RelationGetRelationName(index), m->nruns, m->nfree, m->nblocks, nblocks);
	memset(w, 0, sizeof(*w));
	w->index = index;
	w->which = LSM_RESV_COMPACT;
	w->delay = delay;
	w->start = nblocks;
	w->cap = MaxBlockNumber - nblocks;
	w->hiwater = 1;
	w->run_id = m->next_run_id;
	pfree(m);
	w->direct = palloc0(sizeof(LsmDirectWrites));
	w->direct->pages = LsmPallocIOPages(LSM_DIRECT_BATCH);
	w->direct->zero = LsmPallocIOPages(1);
	w->direct->nblocks = nblocks;
	w->direct->redo = GetRedoRecPtr();
	w->direct->first_start = w->start;
	w->direct->first_run_id = w->run_id;
	LsmRunWriterNewBuilder(w, expected_keys);
}

/*
 * Give the writer a new core run builder, with a filter sized for
 * expected_keys, in a new memory context of the writer's (a child of the
 * current one; its owner destroys the builder, lsmowner.h).  Also sets
 * w->bloom_pages, the pages that filter will take.  Used by
 * LsmRunWriterBegin and, for the next piece of a cut merge output, by
 * LsmRunWriterCut (lsmpiece.c).  REQUIRES: w has no builder (begun, or
 * finished or abandoned).
 */
void
LsmRunWriterNewBuilder(LsmRunWriter *w, uint64 expected_keys)
{
	LsmCoreOwner *own;
	LsmStatus	st;
	int			bits;

	Assert(w->cxt == NULL && w->builder == NULL);
	bits = LsmBloomBegin(w, w->index);
	w->bloom_pages = 0;
	if (bits > 0)
	{
		/* the core's sizing (lsm_core_bloom.h): ceil(keys * bits / 512) blocks */
		uint64		nblocks = (Max(expected_keys, 1) * (uint64) bits +
							   LSM_BLOOM_BLOCK_BYTES * 8 - 1) / (LSM_BLOOM_BLOCK_BYTES * 8);
		uint32		bpp = lsm_bloom_blocks_per_page(LSM_CONTENT_CAP);

		if (bpp > 0)
			w->bloom_pages = (uint32) Min((nblocks + bpp - 1) / bpp, MaxBlockNumber);
	}

	w->cxt = AllocSetContextCreate(CurrentMemoryContext, "lsm run writer",
								   ALLOCSET_SMALL_SIZES);
	own = LsmCoreOwnerCreate(w->cxt, LSM_CORE_RUNBUILDER);
	st = lsm_runbuilder_create(LSM_CONTENT_CAP, (uint32) bits, expected_keys,
							   &w->builder);
	own->obj = w->builder;
	if (st != LSM_OK)
		LsmReportStatus(w->index, st, InvalidBlockNumber, "starting a run");
}

/* One entry, with the length of what the filter hashes; one core call. */
void
LsmRunWriterAdd(LsmRunWriter *w, const uint8 *key, int len)
{
	size_t		prefix = w->bloom_cols > 0 ? LsmBloomPrefixLen(w, key, len) : 0;
	LsmStatus	st = lsm_runbuilder_add(w->builder, key, len, prefix);

	if (st == LSM_PAGE_READY)
		LsmRunWriterDrain(w);
	else if (st != LSM_OK)
		LsmReportStatus(w->index, st, InvalidBlockNumber, "adding to a run");
}

/*
 * The run's header, fence and filter pages written, the builder freed and
 * the run described in *ref; a merge's pages all logged.
 */
static void
LsmRunWriterComplete(LsmRunWriter *w, LsmRunRef *ref, uint16 level)
{
	LsmStatus	st = lsm_runbuilder_finish(w->builder);
	LsmRunInfo	info;

	if (st != LSM_OK && st != LSM_PAGE_READY)
		LsmReportStatus(w->index, st, InvalidBlockNumber, "finishing a run");
	LsmRunWriterDrain(w);
	st = lsm_runbuilder_info(w->builder, &info);
	if (st != LSM_OK)
		LsmReportStatus(w->index, st, InvalidBlockNumber, "finishing a run");
	if (info.npages != w->hiwater)
		elog(ERROR, "lsm_am: run of %u pages ends at relative page %u",
			 info.npages, w->hiwater);

	memset(ref, 0, sizeof(LsmRunRef));
	ref->run_id = w->run_id;
	ref->level = level;
	ref->nentries = info.nentries;
	ref->start = w->start;
	ref->npages = info.npages;
	if (info.bloom_nblocks > 0)
	{
		ref->bloom_cols = w->bloom_cols;
		ref->bloom_start = info.bloom_start;
		ref->bloom_nblocks = info.bloom_nblocks;
	}
	LsmPageLogFlush(&w->pend);	/* a merge's: logged as written */
	LsmRunWriterAbandon(w);		/* the builder is done with */
}

/*
 * Finish the run: header, fence and filter pages; WAL-log every page and
 * describe the run in *ref (unpublished: the caller publishes it and ends
 * the reservation with LsmReserveFinish(..., ref->npages); for a build cut
 * into pieces, with the pages of them all, from the first piece's start).
 */
void
LsmRunWriterFinish(LsmRunWriter *w, LsmRunRef *ref, uint16 level)
{
	LsmRunWriterComplete(w, ref, level);
	if (w->direct)
	{
		LsmDirectFinish(w, ref->npages);	/* logged as written */
		return;
	}
	if (w->ring)
		return;
	if (w->which == LSM_RESV_FLUSH)
		LSM_FAULT(LSM_FAULT_FLUSH_FILTER);	/* every page written, none logged */

	if (RelationNeedsWAL(w->index))
		log_newpage_range(w->index, MAIN_FORKNUM, w->start, w->start + ref->npages, true);
}

/*
 * A new index's run cut into pieces (lsmbuild.c): finish the piece written
 * so far into *ref (the caller sets its level) and start the next one
 * right after it, with the next run id and a filter for expected_keys.
 * Nothing is reserved until LsmRunWriterFinish reserves all the pieces as
 * one extent; the caller's publishing record then sets next_run_id past the
 * last piece's id.  REQUIRES: a writer of LsmRunWriterBeginDirect.
 */
void
LsmRunWriterCutDirect(LsmRunWriter *w, LsmRunRef *ref, uint64 expected_keys)
{
	Assert(w->direct != NULL);
	LsmRunWriterComplete(w, ref, 0);
	w->start += ref->npages;
	w->run_id++;
	w->hiwater = 1;
	LsmRunWriterNewBuilder(w, expected_keys);
}

/*
 * Free the builder now (its context would on ERROR anyway), and drop the pins
 * of pages not yet logged.  Idempotent.
 */
void
LsmRunWriterAbandon(LsmRunWriter *w)
{
	LsmPageLogDrop(&w->pend);	/* a merge given up: no use logging them */
	if (w->cxt != NULL)
		MemoryContextDelete(w->cxt);	/* its owner destroys the builder */
	w->cxt = NULL;
	w->builder = NULL;
}
