/*
 * lsmstore.c — pages and WAL: the metapage, page allocation, the log chains
 * and the run writer.
 *
 * What is WAL-logged and how:
 *  - a log append is one generic WAL record on the tail log page (a delta of
 *    the entry and pd_lower; a full image only for a page's first change
 *    after a checkpoint); a new log page is allocated, initialised (full
 *    image) and linked in one record with the metapage;
 *  - a run writer first reserves an extent in a metapage record, writes its
 *    pages into shared buffers unlogged, then logs them as full page images
 *    (log_newpage_range) before the run is published; until then no reader
 *    can reach them, and a crash leaves only the reservation, which the next
 *    writer of the same kind reclaims;
 *  - publishing a run (lsmmaint.c, lsmbuild.c) is one generic WAL record on
 *    the metapage: the run appears and whatever it replaces disappears, and
 *    the replaced pages join the free list, atomically.
 *
 * Every page below the metapage's nblocks is the metapage, a log page of a
 * live chain, a page of a run, free, or reserved; lsm_am.check_index()
 * verifies it (doc/page_format.md, "Page accounting").
 */
#include "postgres.h"

#include "access/transam.h"
#include "access/xlog.h"
#include "access/xloginsert.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "storage/lmgr.h"
#include "storage/procarray.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

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

/* See lsm.h: the one shape of a corruption ERROR. */
void
LsmReportCorruption(Relation index, BlockNumber blkno, const char *fmt,...)
{
	StringInfoData detail;

	initStringInfo(&detail);
	for (;;)
	{
		va_list		args;
		int			needed;

		va_start(args, fmt);
		needed = appendStringInfoVA(&detail, fmt, args);
		va_end(args);
		if (needed == 0)
			break;
		enlargeStringInfo(&detail, needed);
	}
	if (BlockNumberIsValid(blkno))
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("index \"%s\" is corrupted at block %u",
						RelationGetRelationName(index), blkno),
				 errdetail_internal("%s", detail.data),
				 errhint("REINDEX the index.")));
	ereport(ERROR,
			(errcode(ERRCODE_INDEX_CORRUPTED),
			 errmsg("index \"%s\" is corrupted in its memtable",
					RelationGetRelationName(index)),
			 errdetail_internal("%s", detail.data),
			 errhint("REINDEX the index.")));
	pg_unreachable();
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
		LsmReportCorruption(index, BufferGetBlockNumber(buf),
							"Expected page kind %u owned by %u, found kind %u owned by %u.",
							kind, owner, op->kind, op->owner);
	if (op->version != LSM_FORMAT_VERSION)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("index \"%s\" has on-disk format version %u, this lsm_am reads version %u",
						RelationGetRelationName(index), op->version, LSM_FORMAT_VERSION),
				 errhint("REINDEX the index.")));
}

/* Does extent [start, start + npages) lie inside the accounted pages? */
static bool
LsmExtentInside(const LsmMetaPageData *meta, BlockNumber start, uint32 npages)
{
	return start >= 1 && start < meta->nblocks &&
		npages <= meta->nblocks - start;
}

/*
 * ERROR unless a metapage's content is plausible: counts in range, every run,
 * free and reserved extent and log chain head inside the accounted pages, so
 * no later read can reach past the end of the file through the manifest.
 */
static void
LsmCheckMeta(Relation index, const LsmMetaPageData *meta)
{
	if (meta->magic != LSM_MAGIC || meta->version != LSM_FORMAT_VERSION)
		LsmReportCorruption(index, LSM_METAPAGE_BLKNO,
							"Bad magic number %08x or format version %u in the metapage.",
							meta->magic, meta->version);
	if (meta->nruns > LSM_MAX_RUNS || meta->nfree > LSM_MAX_FREE ||
		meta->nimm > LSM_MAX_IMM || meta->nblocks < 1)
		LsmReportCorruption(index, LSM_METAPAGE_BLKNO,
							"The metapage counts %u runs, %u free extents, %u immutable memtables and %u pages.",
							meta->nruns, meta->nfree, meta->nimm, meta->nblocks);
	for (uint32 i = 0; i < meta->nruns; i++)
	{
		const LsmRunRef *r = &meta->runs[i];

		if (!LsmExtentInside(meta, r->start, r->npages) || r->npages < 2)
			LsmReportCorruption(index, LSM_METAPAGE_BLKNO,
								"Run %u of the manifest claims blocks %u to %u of %u accounted pages.",
								r->run_id, r->start, r->start + r->npages - 1, meta->nblocks);
	}
	for (uint32 i = 0; i < meta->nfree; i++)
		if (!LsmExtentInside(meta, meta->free[i].start, meta->free[i].npages))
			LsmReportCorruption(index, LSM_METAPAGE_BLKNO,
								"Free extent %u claims blocks %u to %u of %u accounted pages.",
								i, meta->free[i].start,
								meta->free[i].start + meta->free[i].npages - 1, meta->nblocks);
	for (int i = 0; i < (int) lengthof(meta->resv); i++)
		if (meta->resv[i].npages > 0 &&
			!LsmExtentInside(meta, meta->resv[i].start, meta->resv[i].npages))
			LsmReportCorruption(index, LSM_METAPAGE_BLKNO,
								"Reserved extent %d claims blocks %u to %u of %u accounted pages.",
								i, meta->resv[i].start,
								meta->resv[i].start + meta->resv[i].npages - 1, meta->nblocks);
	for (int i = -1; i < (int) meta->nimm; i++)
	{
		BlockNumber head = i < 0 ? meta->active.head : meta->imm[i].head;

		if (BlockNumberIsValid(head) && (head < 1 || head >= meta->nblocks))
			LsmReportCorruption(index, LSM_METAPAGE_BLKNO,
								"A log chain starts at block %u of %u accounted pages.",
								head, meta->nblocks);
	}
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

/* ------------------------------------------------------------------------
 * Page allocation: the free list, reservations and the end of the index.
 *
 * All of it lives in the metapage and changes only inside a generic WAL
 * record on the metapage, so it is crash-safe and replicated.  Pages of a
 * retired run are reusable once no snapshot older than the retirement can
 * exist (btree's safexid rule), since a scan that started before may still
 * read them; pages of retired log chains and of abandoned reservations are
 * read by nobody and are reusable at once.
 * ------------------------------------------------------------------------ */

/* Stamp for pages retired now that scans may still read. */
uint64
LsmRetireStamp(void)
{
	return U64FromFullTransactionId(ReadNextFullTransactionId());
}

/*
 * The oldest FullTransactionId some snapshot may still need.  Computed from
 * the proc array directly (GetOldestNonRemovableTransactionId), because
 * workers take no snapshot and GlobalVis state needs one.
 */
static uint64
LsmOldestNeeded(void)
{
	FullTransactionId next = ReadNextFullTransactionId();
	TransactionId oldest = GetOldestNonRemovableTransactionId(NULL);
	uint32		behind = XidFromFullTransactionId(next) - oldest;

	if (!TransactionIdIsNormal(oldest))
		return 0;
	return U64FromFullTransactionId(next) - behind;
}

static uint64 lsm_oldest_needed = 0;	/* cache for one allocation */

static bool
LsmExtentReusable(LsmExtent *e)
{
	if (e->reuse_after == 0)
		return true;
	if (RecoveryInProgress())
		return false;
	if (lsm_oldest_needed == 0)
		lsm_oldest_needed = LsmOldestNeeded();
	return e->reuse_after < lsm_oldest_needed;
}

/*
 * Return [start, start+npages) to the free list: kept sorted and coalesced;
 * a reusable extent at the end shrinks nblocks instead.
 */
void
LsmFreeAdd(LsmMetaPageData *m, BlockNumber start, uint32 npages, uint64 reuse_after)
{
	int			pos;

	if (npages == 0)
		return;
	for (pos = 0; pos < (int) m->nfree && m->free[pos].start < start; pos++)
		;
	/* coalesce with the previous and/or next extent */
	if (pos > 0 && m->free[pos - 1].start + m->free[pos - 1].npages == start)
	{
		LsmExtent  *p = &m->free[pos - 1];

		p->npages += npages;
		p->reuse_after = Max(p->reuse_after, reuse_after);
		if (pos < (int) m->nfree && p->start + p->npages == m->free[pos].start)
		{
			p->npages += m->free[pos].npages;
			p->reuse_after = Max(p->reuse_after, m->free[pos].reuse_after);
			memmove(&m->free[pos], &m->free[pos + 1],
					sizeof(LsmExtent) * (m->nfree - pos - 1));
			m->nfree--;
		}
		pos--;
	}
	else if (pos < (int) m->nfree && start + npages == m->free[pos].start)
	{
		m->free[pos].start = start;
		m->free[pos].npages += npages;
		m->free[pos].reuse_after = Max(m->free[pos].reuse_after, reuse_after);
	}
	else
	{
		if (m->nfree >= LSM_MAX_FREE)
		{
			/* never expected (extents coalesce); count what is lost */
			m->leaked_pages += npages;
			return;
		}
		memmove(&m->free[pos + 1], &m->free[pos], sizeof(LsmExtent) * (m->nfree - pos));
		m->free[pos].start = start;
		m->free[pos].npages = npages;
		m->free[pos].reuse_after = reuse_after;
		m->nfree++;
	}
	/* a free extent at the end that is reusable now: give it back to the end */
	if (m->nfree > 0)
	{
		LsmExtent  *last = &m->free[m->nfree - 1];

		if (last->start + last->npages == m->nblocks && last->reuse_after == 0)
		{
			m->nblocks = last->start;
			m->nfree--;
		}
	}
}

/*
 * Choose where npages pages would come from: the smallest reusable free
 * extent that holds them, else the end.  Does not change the metapage.
 */
static BlockNumber
LsmAllocChoose(LsmMetaPageData *m, uint32 npages)
{
	int			best = -1;

	lsm_oldest_needed = 0;

	for (int i = 0; i < (int) m->nfree; i++)
	{
		if (m->free[i].npages < npages)
			continue;
		if (best >= 0 && m->free[i].npages >= m->free[best].npages)
			continue;
		if (LsmExtentReusable(&m->free[i]))
			best = i;
	}
	return best >= 0 ? m->free[best].start : m->nblocks;
}

/* Take [start, start+npages) chosen by LsmAllocChoose. */
static void
LsmAllocTake(LsmMetaPageData *m, BlockNumber start, uint32 npages)
{
	if (start >= m->nblocks)
	{
		Assert(start == m->nblocks);
		m->nblocks = start + npages;
		return;
	}
	for (int i = 0; i < (int) m->nfree; i++)
	{
		LsmExtent  *e = &m->free[i];

		if (start >= e->start && start + npages <= e->start + e->npages)
		{
			uint32		before = start - e->start;
			uint32		after = e->start + e->npages - (start + npages);

			if (before == 0)
			{
				e->start += npages;
				e->npages -= npages;
				if (e->npages == 0)
				{
					memmove(e, e + 1, sizeof(LsmExtent) * (m->nfree - i - 1));
					m->nfree--;
				}
			}
			else
			{
				e->npages = before;
				if (after > 0)
					LsmFreeAdd(m, start + npages, after, e->reuse_after);
			}
			return;
		}
	}
	elog(ERROR, "lsm_am: block %u is not free", start);
}

/*
 * Reserve an extent of npages for a run writer of kind which
 * (LSM_RESV_*).  A reservation left by a writer of the same kind that
 * failed or crashed is reclaimed first: the caller holds the lock that
 * makes it the only writer of its kind.  Also allocates the run's id.
 * WAL-logged.
 */
BlockNumber
LsmReserve(Relation index, int which, uint32 npages, uint32 *run_id)
{
	Buffer		metabuf = LsmLockMeta(index);
	LsmMetaPageData *m = LsmPageGetMeta(BufferGetPage(metabuf));
	GenericXLogState *state;
	BlockNumber start;
	LsmExtent	stale = m->resv[which];
	LsmExtent	stale_old = m->resv[2 + which];

	/* decide on a private copy, then apply inside the record */
	{
		LsmMetaPageData *copy = palloc(sizeof(LsmMetaPageData));

		memcpy(copy, m, sizeof(LsmMetaPageData));
		LsmFreeAdd(copy, stale.start, stale.npages, 0);
		LsmFreeAdd(copy, stale_old.start, stale_old.npages, 0);
		start = LsmAllocChoose(copy, npages);
		pfree(copy);
	}
	LsmEnsureBlocks(index, start + npages);

	state = GenericXLogStart(index);
	m = LsmPageGetMeta(GenericXLogRegisterBuffer(state, metabuf, 0));
	LsmFreeAdd(m, stale.start, stale.npages, 0);
	LsmFreeAdd(m, stale_old.start, stale_old.npages, 0);
	memset(&m->resv[2 + which], 0, sizeof(LsmExtent));
	LsmAllocTake(m, start, npages);
	m->resv[which].start = start;
	m->resv[which].npages = npages;
	m->resv[which].reuse_after = 0;
	*run_id = m->next_run_id++;
	GenericXLogFinish(state);
	UnlockReleaseBuffer(metabuf);
	return start;
}

/*
 * Grow reservation which by more pages in place (it ends at the end of the
 * index, or a free extent follows it).  false: it cannot grow in place.
 */
static bool
LsmReserveGrow(Relation index, int which, uint32 more)
{
	Buffer		metabuf = LsmLockMeta(index);
	LsmMetaPageData *m = LsmPageGetMeta(BufferGetPage(metabuf));
	LsmExtent	r = m->resv[which];
	BlockNumber end = r.start + r.npages;
	bool		ok = false;
	GenericXLogState *state;

	lsm_oldest_needed = 0;
	if (end == m->nblocks)
		ok = true;
	else
	{
		for (int i = 0; i < (int) m->nfree; i++)
			if (m->free[i].start == end && m->free[i].npages >= more &&
				LsmExtentReusable(&m->free[i]))
				ok = true;
	}
	if (ok)
	{
		LsmEnsureBlocks(index, end + more);
		state = GenericXLogStart(index);
		m = LsmPageGetMeta(GenericXLogRegisterBuffer(state, metabuf, 0));
		LsmAllocTake(m, end, more);
		m->resv[which].npages += more;
		GenericXLogFinish(state);
	}
	UnlockReleaseBuffer(metabuf);
	return ok;
}

/*
 * Replace reservation which by a new extent of npages at the end of the
 * index; the old one is freed.  Returns the new start.  The caller copies
 * what it had written.
 */
static BlockNumber
LsmReserveMove(Relation index, int which, uint32 npages)
{
	Buffer		metabuf = LsmLockMeta(index);
	LsmMetaPageData *m = LsmPageGetMeta(BufferGetPage(metabuf));
	GenericXLogState *state;
	BlockNumber start = m->nblocks;

	LsmEnsureBlocks(index, start + npages);
	state = GenericXLogStart(index);
	m = LsmPageGetMeta(GenericXLogRegisterBuffer(state, metabuf, 0));
	LsmAllocTake(m, start, npages);
	/* an older previous extent (second move) is not read any more */
	LsmFreeAdd(m, m->resv[2 + which].start, m->resv[2 + which].npages, 0);
	/* the current one stays reserved until the run is published */
	m->resv[2 + which] = m->resv[which];
	m->resv[which].start = start;
	m->resv[which].npages = npages;
	GenericXLogFinish(state);
	UnlockReleaseBuffer(metabuf);
	return start;
}

/*
 * In a record that publishes a run written under reservation which: the
 * run used its first used pages; free the rest and end the reservation.
 */
void
LsmReserveFinish(LsmMetaPageData *m, int which, uint32 used)
{
	LsmExtent	r = m->resv[which];
	LsmExtent	old = m->resv[2 + which];

	if (r.npages > used)
		LsmFreeAdd(m, r.start + used, r.npages - used, 0);
	LsmFreeAdd(m, old.start, old.npages, 0);
	memset(&m->resv[which], 0, sizeof(LsmExtent));
	memset(&m->resv[2 + which], 0, sizeof(LsmExtent));
}

/* End reservation which without publishing anything (WAL-logged). */
void
LsmReserveCancel(Relation index, int which)
{
	Buffer		metabuf = LsmLockMeta(index);
	GenericXLogState *state;
	LsmMetaPageData *m;

	if (LsmPageGetMeta(BufferGetPage(metabuf))->resv[which].npages == 0 &&
		LsmPageGetMeta(BufferGetPage(metabuf))->resv[2 + which].npages == 0)
	{
		UnlockReleaseBuffer(metabuf);
		return;
	}
	state = GenericXLogStart(index);
	m = LsmPageGetMeta(GenericXLogRegisterBuffer(state, metabuf, 0));
	LsmReserveFinish(m, which, 0);
	GenericXLogFinish(state);
	UnlockReleaseBuffer(metabuf);
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
 * Checksum of a log page's content (xxHash64 seeded with the chain's epoch,
 * folded to 16 bits; never 0, which means "no checksum").  Kept in the same
 * record as every append, so it costs a few bytes of WAL per record.
 */
uint16
LsmLogPageChecksum(Page page)
{
	uint64		h = lsm_hash64(LsmPageContent(page), LsmPageContentLen(page),
							   LsmPageGetOpaque(page)->owner);
	uint16		c = (uint16) (h ^ (h >> 16) ^ (h >> 32) ^ (h >> 48));

	return c != 0 ? c : 1;
}

/* Put entries [i, n) on page while they fit; returns the next one. */
static int
LsmLogPagePutMany(Page page, const LsmLogEntry *ents, int i, int n)
{
	while (i < n && LsmLogPageFits(page, ents[i].len))
	{
		LsmLogPagePut(page, ents[i].key, ents[i].len);
		i++;
	}
	LsmPageGetOpaque(page)->checksum = LsmLogPageChecksum(page);
	return i;
}

/*
 * Append n entries to the active log chain (WAL-logged): one generic record
 * per log page they go to, so a batch of small entries costs one record
 * header and one page delta per page, not per entry.  A new page comes from
 * the free list or the end of the index, in the same record that links it.
 * REQUIRES: slot lock exclusive, slot loaded (so log_tail is current), n > 0,
 * every entry small enough for an empty log page.
 */
void
LsmLogAppend(Relation index, LsmSlot *slot, const LsmLogEntry *ents, int n,
			 int *logged)
{
	int			i = 0;
	bool		was_loaded = slot->loaded;

	while (i < n)
	{
		Buffer		tailbuf = InvalidBuffer;
		Buffer		metabuf;
		Buffer		newbuf;
		Page		tailpage;
		GenericXLogState *state;
		LsmMetaPageData *m;
		BlockNumber blk;
		Page		np;

		if (BlockNumberIsValid(slot->log_tail))
		{
			tailbuf = ReadBuffer(index, slot->log_tail);
			LockBuffer(tailbuf, BUFFER_LOCK_EXCLUSIVE);
			slot->loaded = false;	/* until the tail checks out: a stale slot
									 * rebuilds itself after the ERROR */
			LsmCheckPage(index, tailbuf, LSM_PK_LOG, slot->log_epoch);
			tailpage = BufferGetPage(tailbuf);
			if (((PageHeader) tailpage)->pd_lower != slot->log_tail_off)
			{
				UnlockReleaseBuffer(tailbuf);
				elog(ERROR, "lsm_am: log tail of index \"%s\" moved unexpectedly",
					 RelationGetRelationName(index));
			}
			/* the caller's memtable may be ahead of the log: it says when not */
			slot->loaded = was_loaded;

			if (LsmLogPageFits(tailpage, ents[i].len))
			{
				Page		p;

				state = GenericXLogStart(index);
				p = GenericXLogRegisterBuffer(state, tailbuf, 0);
				i = LsmLogPagePutMany(p, ents, i, n);
				GenericXLogFinish(state);
				*logged = i;
				slot->log_tail_off = ((PageHeader) tailpage)->pd_lower;
				UnlockReleaseBuffer(tailbuf);
				continue;
			}
		}

		/* a new page: the chain's first, or the tail is full */
		metabuf = LsmLockMeta(index);
		m = LsmPageGetMeta(BufferGetPage(metabuf));
		if (m->active.epoch != slot->log_epoch ||
			BlockNumberIsValid(m->active.head) != BlockNumberIsValid(slot->log_tail))
		{
			UnlockReleaseBuffer(metabuf);
			if (BufferIsValid(tailbuf))
				UnlockReleaseBuffer(tailbuf);
			slot->loaded = false;
			elog(ERROR, "lsm_am: log chain of index \"%s\" changed unexpectedly",
				 RelationGetRelationName(index));
		}
		blk = LsmAllocChoose(m, 1);
		LsmEnsureBlocks(index, blk + 1);
		newbuf = ReadBufferExtended(index, MAIN_FORKNUM, blk, RBM_ZERO_AND_LOCK, NULL);

		state = GenericXLogStart(index);
		m = LsmPageGetMeta(GenericXLogRegisterBuffer(state, metabuf, 0));
		np = GenericXLogRegisterBuffer(state, newbuf, GENERIC_XLOG_FULL_IMAGE);
		LsmAllocTake(m, blk, 1);
		LsmInitPage(np, LSM_PK_LOG, slot->log_epoch);
		i = LsmLogPagePutMany(np, ents, i, n);
		if (BufferIsValid(tailbuf))
		{
			Page		tp = GenericXLogRegisterBuffer(state, tailbuf, 0);

			LsmPageGetOpaque(tp)->next = blk;
		}
		else
			m->active.head = blk;
		GenericXLogFinish(state);
		*logged = i;

		if (!BufferIsValid(tailbuf))
		{
			slot->log_head = blk;
			slot->log_pages = 0;
		}
		slot->log_tail = blk;
		slot->log_tail_off = ((PageHeader) BufferGetPage(newbuf))->pd_lower;
		slot->log_pages++;
		UnlockReleaseBuffer(newbuf);
		UnlockReleaseBuffer(metabuf);
		if (BufferIsValid(tailbuf))
			UnlockReleaseBuffer(tailbuf);
	}
}

/*
 * The blocks of log chain (epoch, head), in chain order (palloc'd).  Stops
 * at the first page that is not of the chain.
 */
int
LsmCollectChain(Relation index, uint32 epoch, BlockNumber head, BlockNumber **out)
{
	int			n = 0;
	int			cap = 64;
	BlockNumber blk = head;

	*out = palloc(sizeof(BlockNumber) * cap);
	while (BlockNumberIsValid(blk))
	{
		Buffer		buf = ReadBuffer(index, blk);
		Page		page;
		LsmPageOpaque op;

		LockBuffer(buf, BUFFER_LOCK_SHARE);
		page = BufferGetPage(buf);
		op = LsmPageGetOpaque(page);
		if (PageIsNew(page) || op->kind != LSM_PK_LOG || op->owner != epoch ||
			op->page_id != LSM_PAGE_ID)
		{
			UnlockReleaseBuffer(buf);
			break;
		}
		if (n == cap)
		{
			cap *= 2;
			*out = repalloc(*out, sizeof(BlockNumber) * cap);
		}
		(*out)[n++] = blk;
		blk = op->next;
		UnlockReleaseBuffer(buf);
		if (n > 100000000)
			break;				/* a cycle: corruption, stop */
	}
	return n;
}

/* ------------------------------------------------------------------------
 * Run writer: pages go into the writer's reservation, which grows (in
 * place, or by moving to the end of the index) if the estimate was short.
 * ------------------------------------------------------------------------ */

/* Write a page image to relative page rel of the run. */
static void
LsmRunWriterWrite(LsmRunWriter *w, uint32 rel, uint16 kind, const void *content,
				  size_t len)
{
	Buffer		buf;
	Page		page;

	if (len > LSM_CONTENT_CAP)
		elog(ERROR, "lsm_am: run page of %zu bytes exceeds the page capacity", len);
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

			/* copy what is written (relative pages 1 .. hiwater-1) */
			for (uint32 r = 1; r < w->hiwater; r++)
			{
				Buffer		src = ReadBuffer(w->index, oldstart + r);
				Buffer		dst = ReadBufferExtended(w->index, MAIN_FORKNUM, newstart + r,
													 RBM_ZERO_AND_LOCK, NULL);

				LockBuffer(src, BUFFER_LOCK_SHARE);
				memcpy(BufferGetPage(dst), BufferGetPage(src), BLCKSZ);
				MarkBufferDirty(dst);
				UnlockReleaseBuffer(dst);
				UnlockReleaseBuffer(src);
			}
			w->start = newstart;
			w->cap += more;
		}
	}

	buf = ReadBufferExtended(w->index, MAIN_FORKNUM, w->start + rel,
							 RBM_ZERO_AND_LOCK, NULL);
	page = BufferGetPage(buf);
	LsmInitPage(page, kind, w->run_id);
	memcpy(LsmPageContent(page), content, len);
	((PageHeader) page)->pd_lower = LSM_CONTENT_OFFSET + len;
	MarkBufferDirty(buf);
	UnlockReleaseBuffer(buf);
	if (rel + 1 > w->hiwater)
		w->hiwater = rel + 1;

	if (w->delay && lsm_flush_delay_ms > 0)
	{
		pg_usleep(lsm_flush_delay_ms * 1000L);
		CHECK_FOR_INTERRUPTS();
	}
	if (w->stop && !w->stopped && w->stop(w->index))
		w->stopped = true;
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
			LsmReportStatus(w->index, st, InvalidBlockNumber, "writing a run");
		LsmRunWriterWrite(w, out.rel_page,
						  out.kind == LSM_PAGE_HEADER ? LSM_PK_RUN_HEADER :
						  out.kind == LSM_PAGE_DATA ? LSM_PK_RUN_DATA : LSM_PK_RUN_FENCE,
						  out.content, out.len);
	}
}

/*
 * Start a run: reserve est_pages (a guess; the reservation grows) with
 * reservation which (LSM_RESV_*).  expected_keys sizes the bloom filter.
 * REQUIRES: the lock that makes the caller the only writer of its kind.
 */
void
LsmRunWriterBegin(LsmRunWriter *w, Relation index, int which,
				  uint32 est_pages, uint64 expected_keys, bool delay)
{
	LsmStatus	st;

	memset(w, 0, sizeof(*w));
	w->index = index;
	w->which = which;
	w->delay = delay;
	w->cap = Max(est_pages, 2);
	w->hiwater = 1;
	w->start = LsmReserve(index, which, w->cap, &w->run_id);
	LsmBloomBegin(w, index, expected_keys);

	/* last: nothing below can ERROR and leak the builder */
	st = lsm_runbuilder_create(LSM_CONTENT_CAP, &w->builder);
	if (st != LSM_OK)
		LsmReportStatus(index, st, InvalidBlockNumber, "starting a run");
}

void
LsmRunWriterAdd(LsmRunWriter *w, const uint8 *key, int len)
{
	LsmStatus	st = lsm_runbuilder_add(w->builder, key, len);

	if (w->bloom)
		LsmBloomAddKey(w, key, len);
	if (st == LSM_PAGE_READY)
		LsmRunWriterDrain(w);
	else if (st != LSM_OK)
		LsmReportStatus(w->index, st, InvalidBlockNumber, "adding to a run");
}

/*
 * Finish the run: header, fence and filter pages; WAL-log every page and
 * describe the run in *ref (unpublished: the caller publishes it and ends
 * the reservation with LsmReserveFinish(..., ref->npages)).
 */
void
LsmRunWriterFinish(LsmRunWriter *w, LsmRunRef *ref, uint16 level)
{
	LsmStatus	st = lsm_runbuilder_finish(w->builder);
	uint32		npages;

	if (st != LSM_OK && st != LSM_PAGE_READY)
		LsmReportStatus(w->index, st, InvalidBlockNumber, "finishing a run");
	LsmRunWriterDrain(w);

	memset(ref, 0, sizeof(LsmRunRef));
	ref->run_id = w->run_id;
	ref->level = level;
	ref->nentries = lsm_runbuilder_count(w->builder);
	npages = w->hiwater;
	LsmBloomFinish(w, ref, npages);	/* filter pages follow */
	npages = Max(npages, w->hiwater);
	ref->start = w->start;
	ref->npages = npages;
	lsm_runbuilder_destroy(w->builder);
	w->builder = NULL;

	if (RelationNeedsWAL(w->index))
		log_newpage_range(w->index, MAIN_FORKNUM, w->start, w->start + npages, true);
}

void
LsmRunWriterAbandon(LsmRunWriter *w)
{
	lsm_runbuilder_destroy(w->builder);
	w->builder = NULL;
	LsmBloomAbandon(w);
}

/* Used by the bloom code to write filter pages. */
void
LsmRunWriterPutPage(LsmRunWriter *w, uint32 rel, uint16 kind, const void *content,
					size_t len)
{
	LsmRunWriterWrite(w, rel, kind, content, len);
}
