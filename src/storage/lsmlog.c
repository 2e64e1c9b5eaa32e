/*
 * lsmlog.c — the log: the durable copy of a memtable, an append-only chain
 * of log pages per memtable.  The append side (the replay side is
 * lsmreplay.c): entries are written to the tail page of the active chain in
 * one generic WAL record per page, a new page is linked in the record that
 * allocates it, and the slot's log tail follows.  Byte layout:
 * doc/page_format.md, "Log pages".
 */
#include "postgres.h"

#include "access/xlog.h"
#include "access/xloginsert.h"
#include "access/rmgr.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "utils/rel.h"

#include "storage/lsm_storage.h"
#include "lsmfault.h"

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

/* One fragment of a generic WAL record's page delta (generic_xlog.c). */
static char *
LsmDeltaFragment(char *out, Page page, int off, int len)
{
	OffsetNumber o = (OffsetNumber) off;
	OffsetNumber l = (OffsetNumber) len;

	memcpy(out, &o, sizeof(o));
	memcpy(out + sizeof(o), &l, sizeof(l));
	memcpy(out + 2 * sizeof(o), (char *) page + off, len);
	return out + 2 * sizeof(o) + len;
}

/*
 * Put entries [i, n) on the tail page buf (locked exclusively) while they
 * fit, in place, and WAL-log that as a generic record (RM_GENERIC_ID, which
 * generic_redo replays and wal_consistency_checking masks as for any generic
 * record).  GenericXLogFinish would copy the page twice and find the changed
 * bytes by comparing the whole used page a byte at a time, which was most of
 * the CPU of a one-entry append (the unique path appends each entry alone);
 * an append changes exactly three ranges, written here as the delta that
 * comparison would produce: pd_lower, the new entries, the checksum.  The
 * new page path (LsmLogAppend) still uses GenericXLog: it logs full images.
 * Returns the next entry not appended.
 */
static int
LsmLogAppendTail(Relation index, Buffer buf, const LsmLogEntry *ents, int i, int n)
{
	Page		page = BufferGetPage(buf);
	PageHeader	ph = (PageHeader) page;
	int			lower0 = ph->pd_lower;
	int			sumoff = (int) ((char *) &LsmPageGetOpaque(page)->checksum - (char *) page);
	bool		logged = RelationNeedsWAL(index);
	/* three fragment headers and at most a page of changed bytes */
	char		delta[3 * 2 * sizeof(OffsetNumber) + BLCKSZ];
	char	   *d = delta;

	if (logged)
		XLogBeginInsert();
	START_CRIT_SECTION();
	i = LsmLogPagePutMany(page, ents, i, n);
	MarkBufferDirty(buf);
	if (logged)
	{
		XLogRecPtr	lsn;

		d = LsmDeltaFragment(d, page, offsetof(PageHeaderData, pd_lower),
							 sizeof(ph->pd_lower));
		d = LsmDeltaFragment(d, page, lower0, ph->pd_lower - lower0);
		d = LsmDeltaFragment(d, page, sumoff, sizeof(uint16));
		XLogRegisterBuffer(0, buf, REGBUF_STANDARD);
		XLogRegisterBufData(0, delta, (uint32) (d - delta));
		lsn = XLogInsert(RM_GENERIC_ID, 0);
		PageSetLSN(page, lsn);
	}
	END_CRIT_SECTION();
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
				LSM_FAULT(LSM_FAULT_LOG_APPEND_BEFORE_WAL);
				i = LsmLogAppendTail(index, tailbuf, ents, i, n);
				*logged = i;
				slot->log_tail_off = ((PageHeader) tailpage)->pd_lower;
				UnlockReleaseBuffer(tailbuf);
				LSM_FAULT(LSM_FAULT_LOG_APPEND_AFTER_WAL);
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

		LSM_FAULT(LSM_FAULT_LOG_APPEND_BEFORE_WAL);
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
		LSM_FAULT(LSM_FAULT_LOG_APPEND_AFTER_WAL);
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
		if (!LsmIsLogPageOf(page, epoch))
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

/*
 * Make the active memtable immutable and start a new, empty log chain for
 * the next inserts: one metapage record; the slot's imm[] gains the old
 * memtable with its chain.  REQUIRES: slot lock exclusive and loaded, an
 * active memtable with entries, slot->nimm < LSM_MAX_IMM.
 */
void
LsmLogStartChain(Relation index, LsmSlot *slot)
{
	Buffer		metabuf = LsmLockMeta(index);
	LsmMetaPageData *m = LsmPageGetMeta(BufferGetPage(metabuf));
	GenericXLogState *state;
	uint32		epoch;

	Assert(slot->nimm < LSM_MAX_IMM && slot->mt.nentries > 0);
	if (m->active.epoch != slot->log_epoch || m->nimm != (uint32) slot->nimm ||
		m->active.head != slot->log_head || m->nimm >= LSM_MAX_IMM)
	{
		UnlockReleaseBuffer(metabuf);
		slot->loaded = false;
		elog(ERROR, "lsm_am: memtables of index \"%s\" changed unexpectedly",
			 RelationGetRelationName(index));
	}
	state = GenericXLogStart(index);
	m = LsmPageGetMeta(GenericXLogRegisterBuffer(state, metabuf, 0));
	m->imm[m->nimm] = m->active;
	m->nimm++;
	epoch = m->next_epoch++;
	m->active.epoch = epoch;
	m->active.head = InvalidBlockNumber;
	GenericXLogFinish(state);
	UnlockReleaseBuffer(metabuf);

	slot->imm[slot->nimm].mt = slot->mt;
	slot->imm[slot->nimm].epoch = slot->log_epoch;
	slot->imm[slot->nimm].head = slot->log_head;
	slot->imm[slot->nimm].pages = slot->log_pages;
	slot->imm[slot->nimm].id = slot->mt_id;
	slot->imm[slot->nimm].scans = slot->mt_scans;
	slot->nimm++;
	lsm_memtable_init(&slot->mt);
	slot->mt_id = LsmNextMemtableId(slot);
	slot->mt_scans = 0;
	slot->log_epoch = epoch;
	slot->log_head = InvalidBlockNumber;
	slot->log_tail = InvalidBlockNumber;
	slot->log_tail_off = 0;
	slot->log_pages = 0;
}

/*
 * Log ents[first, i), which are in the memtable already (LsmLogMarkAhead);
 * then the slot is loaded again.  *done moves past what was logged, also on ERROR.
 */
void
LsmLogAppendGroup(Relation index, LsmSlot *slot, const LsmLogEntry *ents,
			int first, int i, volatile int *done)
{
	int			logged = 0;

	PG_TRY();
	{
		LsmLogAppend(index, slot, ents + first, i - first, &logged);
	}
	PG_CATCH();
	{
		*done = first + logged;
		PG_RE_THROW();
	}
	PG_END_TRY();
	*done = i;
	slot->loaded = true;
}

/*
 * The memtable is about to take entries the log does not have yet: the slot
 * is not loaded until LsmLogAppendGroup has logged them (an ERROR in between
 * makes the next LsmSlotAcquire rebuild the memtable from the log).
 */
void
LsmLogMarkAhead(LsmSlot *slot)
{
	slot->loaded = false;
}
