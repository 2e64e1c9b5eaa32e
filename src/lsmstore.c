/*
 * lsmstore.c — pages and WAL: the metapage, the log chain and sorted runs.
 *
 * What is WAL-logged and how:
 *  - a log append is one generic WAL record on the tail log page (a delta of
 *    the entry and pd_lower; a full image only for a page's first change
 *    after a checkpoint), plus the new page as a full image when the tail
 *    page is full;
 *  - run pages are written into shared buffers unlogged and then logged as
 *    full page images in batches (log_newpage_range) before the run is
 *    published; until then no reader can reach them, so a crash before
 *    publication only leaves unreferenced pages behind;
 *  - a flush publishes its run with one generic WAL record on the metapage
 *    and the log head page (new log epoch, empty head): the run appears and
 *    the log it replaces disappears atomically.
 *
 * Log pages are reused: every page carries the log epoch it was written in,
 * and the chain of the current epoch ends at the first page of an older
 * epoch.  A flush only re-initialises the head page; the writer re-initialises
 * the following pages as it reaches them.
 */
#include "postgres.h"

#include "access/xloginsert.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "storage/lmgr.h"
#include "utils/rel.h"

#include "lsm.h"

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
	op->unused = 0;
	op->page_id = LSM_PAGE_ID;
}

/* Initialise an empty metapage. */
void
LsmInitMetaPage(Page page, uint64 fingerprint)
{
	LsmMetaPageData *meta;
	uint64		instance;

	LsmInitPage(page, LSM_PK_META, 0);
	meta = LsmPageGetMeta(page);
	memset(meta, 0, offsetof(LsmMetaPageData, runs));
	meta->magic = LSM_MAGIC;
	meta->version = LSM_FORMAT_VERSION;
	meta->key_fingerprint = fingerprint;
	if (!pg_strong_random(&instance, sizeof(instance)))
		instance = (uint64) GetCurrentTimestamp() ^ ((uint64) MyProcPid << 32);
	meta->instance_id = instance;
	meta->next_run_id = 1;
	meta->log_epoch = 1;
	meta->log_head = InvalidBlockNumber;
	((PageHeader) page)->pd_lower = LSM_CONTENT_OFFSET + offsetof(LsmMetaPageData, runs);
}

static void
LsmMetaSetLower(Page page)
{
	LsmMetaPageData *meta = LsmPageGetMeta(page);

	((PageHeader) page)->pd_lower = LSM_CONTENT_OFFSET +
		offsetof(LsmMetaPageData, runs) + meta->nruns * sizeof(LsmRunRef);
}

/* ERROR unless the locked buffer holds an lsm page of this kind (and owner). */
void
LsmCheckPage(Relation index, Buffer buf, uint16 kind, uint32 owner)
{
	Page		page = BufferGetPage(buf);
	LsmPageOpaque op = LsmPageGetOpaque(page);

	if (PageIsNew(page) ||
		((PageHeader) page)->pd_special != BLCKSZ - MAXALIGN(sizeof(LsmPageOpaqueData)) ||
		op->page_id != LSM_PAGE_ID || op->kind != kind ||
		(owner != 0 && op->owner != owner) ||
		((PageHeader) page)->pd_lower < LSM_CONTENT_OFFSET ||
		((PageHeader) page)->pd_lower > ((PageHeader) page)->pd_special)
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("index \"%s\" contains an unexpected page at block %u",
						RelationGetRelationName(index), BufferGetBlockNumber(buf)),
				 errdetail("Expected page kind %u owned by %u, found kind %u owned by %u.",
						   kind, owner, op->kind, op->owner),
				 errhint("REINDEX the index.")));
	if (op->version != LSM_FORMAT_VERSION)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("index \"%s\" has on-disk format version %u, this lsm_am reads version %u",
						RelationGetRelationName(index), op->version, LSM_FORMAT_VERSION),
				 errhint("REINDEX the index.")));
}

/*
 * Copy the metapage header (and, if runs_out, a palloc'd copy of the run
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
	if (meta->magic != LSM_MAGIC || meta->nruns > LSM_MAX_RUNS)
	{
		UnlockReleaseBuffer(buf);
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("index \"%s\" has a corrupted metapage",
						RelationGetRelationName(index)),
				 errhint("REINDEX the index.")));
	}
	memcpy(meta_out, meta, offsetof(LsmMetaPageData, runs));
	if (runs_out)
	{
		*runs_out = palloc(sizeof(LsmRunRef) * Max(meta->nruns, 1));
		memcpy(*runs_out, meta->runs, sizeof(LsmRunRef) * meta->nruns);
	}
	UnlockReleaseBuffer(buf);
}

/* Raise an ERROR for a core status (after the C++ frames have returned). */
void
LsmReportStatus(Relation index, LsmStatus st, const char *what)
{
	if (st == LSM_CORRUPT)
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("index \"%s\" is corrupted: %s while %s",
						RelationGetRelationName(index), lsm_status_message(st), what),
				 errhint("REINDEX the index.")));
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

/* Write one entry into a log page's free space.  REQUIRES: it fits. */
static void
LsmLogPagePut(Page page, const uint8 *key, int len)
{
	PageHeader	ph = (PageHeader) page;
	uint16		l = (uint16) len;

	memcpy((char *) page + ph->pd_lower, &l, sizeof(uint16));
	memcpy((char *) page + ph->pd_lower + sizeof(uint16), key, len);
	ph->pd_lower += LSM_LOG_ENTRY_HDR + len;
}

static bool
LsmLogPageFits(Page page, int len)
{
	PageHeader	ph = (PageHeader) page;

	return ph->pd_lower + LSM_LOG_ENTRY_HDR + len <= ph->pd_upper;
}

/*
 * Append an entry to the index's log chain (WAL-logged).
 * REQUIRES: slot lock exclusive, slot loaded (so log_tail is current).
 */
void
LsmLogAppend(Relation index, LsmSlot *slot, const uint8 *key, int len)
{
	Buffer		tailbuf;
	Page		tailpage;
	GenericXLogState *state;
	BlockNumber next;

	if (!BlockNumberIsValid(slot->log_tail))
	{
		/* first log page of this index: link it from the metapage */
		Buffer		metabuf = ReadBuffer(index, LSM_METAPAGE_BLKNO);
		Buffer		newbuf;
		Page		metapage,
					newpage;

		newbuf = LsmExtendBuffer(index);
		LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
		state = GenericXLogStart(index);
		metapage = GenericXLogRegisterBuffer(state, metabuf, 0);
		newpage = GenericXLogRegisterBuffer(state, newbuf, GENERIC_XLOG_FULL_IMAGE);
		LsmInitPage(newpage, LSM_PK_LOG, slot->log_epoch);
		LsmLogPagePut(newpage, key, len);
		LsmPageGetMeta(metapage)->log_head = BufferGetBlockNumber(newbuf);
		GenericXLogFinish(state);

		slot->log_head = slot->log_tail = BufferGetBlockNumber(newbuf);
		slot->log_tail_off = ((PageHeader) BufferGetPage(newbuf))->pd_lower;
		slot->log_pages = 1;
		UnlockReleaseBuffer(newbuf);
		UnlockReleaseBuffer(metabuf);
		return;
	}

	tailbuf = ReadBuffer(index, slot->log_tail);
	LockBuffer(tailbuf, BUFFER_LOCK_EXCLUSIVE);
	slot->loaded = false;		/* until the tail checks out: a stale slot
								 * rebuilds itself after the ERROR */
	LsmCheckPage(index, tailbuf, LSM_PK_LOG, slot->log_epoch);
	tailpage = BufferGetPage(tailbuf);
	if (((PageHeader) tailpage)->pd_lower != slot->log_tail_off)
	{
		UnlockReleaseBuffer(tailbuf);
		elog(ERROR, "lsm_am: log tail of index \"%s\" moved unexpectedly",
			 RelationGetRelationName(index));
	}
	slot->loaded = true;

	if (LsmLogPageFits(tailpage, len))
	{
		Page		p;

		state = GenericXLogStart(index);
		p = GenericXLogRegisterBuffer(state, tailbuf, 0);
		LsmLogPagePut(p, key, len);
		GenericXLogFinish(state);
		slot->log_tail_off = ((PageHeader) tailpage)->pd_lower;
		UnlockReleaseBuffer(tailbuf);
		return;
	}

	/* tail is full: reuse the next page of an older epoch, or extend */
	next = LsmPageGetOpaque(tailpage)->next;
	if (BlockNumberIsValid(next))
	{
		Buffer		nbuf = ReadBuffer(index, next);
		Page		np;
		LsmPageOpaque nop;

		LockBuffer(nbuf, BUFFER_LOCK_EXCLUSIVE);
		np = BufferGetPage(nbuf);
		nop = LsmPageGetOpaque(np);
		if (!PageIsNew(np) && nop->kind == LSM_PK_LOG && nop->owner != slot->log_epoch)
		{
			BlockNumber keep_next = nop->next;
			Page		p;

			UnlockReleaseBuffer(tailbuf);
			state = GenericXLogStart(index);
			p = GenericXLogRegisterBuffer(state, nbuf, GENERIC_XLOG_FULL_IMAGE);
			LsmInitPage(p, LSM_PK_LOG, slot->log_epoch);
			LsmPageGetOpaque(p)->next = keep_next;
			LsmLogPagePut(p, key, len);
			GenericXLogFinish(state);
			slot->log_tail = next;
			slot->log_tail_off = ((PageHeader) np)->pd_lower;
			slot->log_pages++;
			UnlockReleaseBuffer(nbuf);
			return;
		}
		UnlockReleaseBuffer(nbuf);
		UnlockReleaseBuffer(tailbuf);
		slot->loaded = false;
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("index \"%s\" has a broken log chain at block %u",
						RelationGetRelationName(index), next),
				 errhint("REINDEX the index.")));
	}
	else
	{
		Buffer		nbuf = LsmExtendBuffer(index);
		Page		tp,
					np;

		state = GenericXLogStart(index);
		tp = GenericXLogRegisterBuffer(state, tailbuf, 0);
		np = GenericXLogRegisterBuffer(state, nbuf, GENERIC_XLOG_FULL_IMAGE);
		LsmInitPage(np, LSM_PK_LOG, slot->log_epoch);
		LsmLogPagePut(np, key, len);
		LsmPageGetOpaque(tp)->next = BufferGetBlockNumber(nbuf);
		GenericXLogFinish(state);
		slot->log_tail = BufferGetBlockNumber(nbuf);
		slot->log_tail_off = ((PageHeader) BufferGetPage(nbuf))->pd_lower;
		slot->log_pages++;
		UnlockReleaseBuffer(nbuf);
		UnlockReleaseBuffer(tailbuf);
	}
}

/* ------------------------------------------------------------------------
 * Run writer
 * ------------------------------------------------------------------------ */

/* Write a page image the builder produced to its block. */
static void
LsmRunWriterPut(LsmRunWriter *w, const LsmPageOut *out)
{
	BlockNumber blk = w->start + out->rel_page;
	Buffer		buf;
	Page		page;
	uint16		kind;

	if (out->len > LSM_CONTENT_CAP)
		elog(ERROR, "lsm_am: run page of %zu bytes exceeds the page capacity", out->len);

	if (out->rel_page == 0)
	{
		buf = ReadBuffer(w->index, blk);
		LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
	}
	else
	{
		if (blk != w->next_block)
			elog(ERROR, "lsm_am: run pages out of order (%u, expected %u)",
				 blk, w->next_block);
		buf = LsmExtendBuffer(w->index);
		if (BufferGetBlockNumber(buf) != blk)
			elog(ERROR, "lsm_am: index \"%s\" was extended concurrently while writing a run",
				 RelationGetRelationName(w->index));
		w->next_block++;
	}
	kind = out->kind == LSM_PAGE_HEADER ? LSM_PK_RUN_HEADER :
		out->kind == LSM_PAGE_DATA ? LSM_PK_RUN_DATA : LSM_PK_RUN_FENCE;
	page = BufferGetPage(buf);
	LsmInitPage(page, kind, w->run_id);
	memcpy(LsmPageContent(page), out->content, out->len);
	((PageHeader) page)->pd_lower = LSM_CONTENT_OFFSET + out->len;
	MarkBufferDirty(buf);
	UnlockReleaseBuffer(buf);

	if (w->delay && lsm_flush_delay_ms > 0)
	{
		pg_usleep(lsm_flush_delay_ms * 1000L);
		CHECK_FOR_INTERRUPTS();
	}
}

static void
LsmRunWriterDrain(LsmRunWriter *w)
{
	for (;;)
	{
		LsmPageOut	out;
		LsmStatus	st = lsm_runbuilder_take_page(w->builder, &out);

		if (st == LSM_END)
			return;
		if (st != LSM_OK)
			LsmReportStatus(w->index, st, "writing a run");
		LsmRunWriterPut(w, &out);
	}
}

/*
 * Start a run: reserve its header block at the end of the relation.
 * REQUIRES: the caller serialises extension of the index (slot lock or build).
 */
void
LsmRunWriterBegin(LsmRunWriter *w, Relation index, uint32 run_id, bool delay)
{
	Buffer		buf;
	LsmStatus	st;

	w->index = index;
	w->run_id = run_id;
	w->delay = delay;
	w->builder = NULL;

	buf = LsmExtendBuffer(index);
	w->start = BufferGetBlockNumber(buf);
	w->next_block = w->start + 1;
	/* placeholder until the header is written last; never published before */
	LsmInitPage(BufferGetPage(buf), LSM_PK_RUN_HEADER, run_id);
	MarkBufferDirty(buf);
	UnlockReleaseBuffer(buf);

	/* last: nothing below can ERROR and leak the builder */
	st = lsm_runbuilder_create(LSM_CONTENT_CAP, &w->builder);
	if (st != LSM_OK)
		LsmReportStatus(index, st, "starting a run");
}

void
LsmRunWriterAdd(LsmRunWriter *w, const uint8 *key, int len)
{
	LsmStatus	st = lsm_runbuilder_add(w->builder, key, len);

	if (st == LSM_PAGE_READY)
		LsmRunWriterDrain(w);
	else if (st != LSM_OK)
		LsmReportStatus(w->index, st, "adding to a run");
}

/* Finish the run, WAL-log its pages and describe it in *ref (unpublished). */
void
LsmRunWriterFinish(LsmRunWriter *w, LsmRunRef *ref, uint16 level)
{
	LsmStatus	st = lsm_runbuilder_finish(w->builder);

	if (st != LSM_OK && st != LSM_PAGE_READY)
		LsmReportStatus(w->index, st, "finishing a run");
	LsmRunWriterDrain(w);

	memset(ref, 0, sizeof(LsmRunRef));
	ref->run_id = w->run_id;
	ref->level = level;
	ref->start = w->start;
	ref->npages = w->next_block - w->start;
	ref->nentries = lsm_runbuilder_count(w->builder);
	lsm_runbuilder_destroy(w->builder);
	w->builder = NULL;

	if (RelationNeedsWAL(w->index))
		log_newpage_range(w->index, MAIN_FORKNUM, w->start, w->next_block, true);
}

void
LsmRunWriterAbandon(LsmRunWriter *w)
{
	lsm_runbuilder_destroy(w->builder);
	w->builder = NULL;
}

/* ------------------------------------------------------------------------
 * Flush
 * ------------------------------------------------------------------------ */

/*
 * Maintenance lock: serialises flushes, merges and VACUUM's rewriting of run
 * pages for one index (a heavyweight lock on the metapage's block number).
 */
void
LsmMaintenanceLock(Relation index)
{
	LockPage(index, LSM_METAPAGE_BLKNO, ExclusiveLock);
}

void
LsmMaintenanceUnlock(Relation index)
{
	UnlockPage(index, LSM_METAPAGE_BLKNO, ExclusiveLock);
}

/*
 * Write the memtable out as a level-0 run and publish it, resetting the log.
 * Entries whose TID dead() reports are left out (VACUUM).
 * REQUIRES: maintenance lock, slot lock exclusive, slot loaded.
 */
void
LsmFlushLocked(Relation index, LsmSlot *slot, LsmDeadCallback dead,
			   void *dead_state, double *removed)
{
	LsmMetaPageData meta;
	LsmRunWriter w;
	LsmRunRef	ref;
	LsmMemtableIter it;
	uint64		kept = 0;
	Buffer		metabuf,
				headbuf = InvalidBuffer;
	GenericXLogState *state;
	Page		metapage;
	LsmMetaPageData *m;

	if (slot->mt.nentries == 0)
		return;					/* the log is empty too: nothing to do */

	LsmReadMeta(index, &meta, NULL);
	if (meta.nruns >= LSM_MAX_RUNS - 1)
	{
		/* the manifest is full: make room first (cannot normally happen,
		 * since every flush merges past lsm_am.max_runs) */
		LsmMergeAll(index, slot);
		LsmReadMeta(index, &meta, NULL);
	}

	{
		LsmRunWriterBegin(&w, index, meta.next_run_id, true);
		PG_TRY();
		{
			for (lsm_memtable_seek(lsm_shared->arena, &slot->mt, NULL, 0, &it);
				 lsm_memtable_iter_valid(&it);
				 lsm_memtable_iter_next(&it))
			{
				const uint8 *key;
				size_t		len;

				lsm_memtable_iter_key(&it, &key, &len);
				if (dead)
				{
					ItemPointerData tid;

					LsmEntryGetTid(key, (int) len, &tid);
					if (dead(&tid, dead_state))
					{
						if (removed)
							*removed += 1;
						continue;
					}
				}
				LsmRunWriterAdd(&w, key, (int) len);
				kept++;
			}
			if (kept > 0)
				LsmRunWriterFinish(&w, &ref, 0);
		}
		PG_CATCH();
		{
			LsmRunWriterAbandon(&w);
			PG_RE_THROW();
		}
		PG_END_TRY();
		if (kept == 0)
			LsmRunWriterAbandon(&w);	/* its reserved header page stays unused */
	}

	/* publish: add the run, start a new log epoch at the same head page */
	metabuf = ReadBuffer(index, LSM_METAPAGE_BLKNO);
	LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
	if (BlockNumberIsValid(slot->log_head))
	{
		headbuf = ReadBuffer(index, slot->log_head);
		LockBuffer(headbuf, BUFFER_LOCK_EXCLUSIVE);
	}
	state = GenericXLogStart(index);
	metapage = GenericXLogRegisterBuffer(state, metabuf, 0);
	m = LsmPageGetMeta(metapage);
	if (kept > 0)
	{
		m->runs[m->nruns++] = ref;
		m->next_run_id++;
	}
	m->log_epoch++;
	m->nflushes++;
	LsmMetaSetLower(metapage);
	if (BufferIsValid(headbuf))
	{
		Page		hp = GenericXLogRegisterBuffer(state, headbuf, GENERIC_XLOG_FULL_IMAGE);
		BlockNumber keep_next = LsmPageGetOpaque(hp)->next;

		LsmInitPage(hp, LSM_PK_LOG, m->log_epoch);
		LsmPageGetOpaque(hp)->next = keep_next;
	}
	GenericXLogFinish(state);

	/* the memtable is now in the run: start afresh */
	LsmSlotReset(slot);
	slot->instance_id = meta.instance_id;
	slot->log_epoch = meta.log_epoch + 1;
	slot->log_head = meta.log_head;
	slot->log_tail = meta.log_head;
	slot->log_tail_off = LSM_CONTENT_OFFSET;
	slot->log_pages = BlockNumberIsValid(meta.log_head) ? 1 : 0;
	slot->loaded = true;

	if (BufferIsValid(headbuf))
		UnlockReleaseBuffer(headbuf);
	UnlockReleaseBuffer(metabuf);

	/* every flush (insert, VACUUM, lsm_am.flush) keeps the run count bounded */
	LsmMergeIfNeeded(index, slot);
}

/* Flush an index's memtable (takes and releases the locks itself). */
void
LsmFlush(Relation index, LsmDeadCallback dead, void *dead_state, double *removed)
{
	LsmSlot    *slot;

	LsmMaintenanceLock(index);
	slot = LsmSlotAcquire(index, LW_EXCLUSIVE);
	LsmFlushLocked(index, slot, dead, dead_state, removed);
	LsmSlotRelease(index, slot);
	LsmMaintenanceUnlock(index);
}
