/*
 * lsmalloc.c — page allocation: the free list with its reuse horizons,
 * reservations of unfinished writers, the end of the index, and shrinking
 * the file (truncation of the free tail).
 *
 * Everything here changes the metapage, and only inside a generic WAL
 * record on it (or, for truncation, right after one that is flushed first),
 * so allocation is crash-safe and replicated.
 */
#include "postgres.h"

#include "access/generic_xlog.h"
#include "access/rmgr.h"
#include "access/transam.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "access/xloginsert.h"
#include "access/xlog_internal.h"
#include "catalog/storage.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "storage/lmgr.h"
#include "storage/procarray.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "storage/lsm_storage.h"
#include "lsmfault.h"

/* ------------------------------------------------------------------------
 * Page allocation: the free list, reservations and the end of the index.
 *
 * All of it lives in the metapage and changes only inside a generic WAL
 * record on the metapage, so it is crash-safe and replicated.  Pages of a
 * retired run are reusable once no scan that read the manifest before the
 * retirement can still be open (doc/impl.md, "Page recycling"); pages of
 * retired log chains and of abandoned reservations are read by nobody and
 * are reusable at once.
 *
 * Every free extent keeps its own horizon (reuse_after): two extents are
 * coalesced only when their horizons are equal, so free space that is
 * already reusable is never re-stamped by pages retired next to it.  An
 * extent whose horizon has passed is settled (horizon 0) by the next
 * allocation, and settled neighbours coalesce then.  Allocation takes the
 * lowest reusable extent that fits, so live data drifts to the front and
 * the free tail can be truncated (LsmShrink).
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

/*
 * Scans of this backend that have read a manifest and not yet let it go
 * (am/lsmscanmerge.c counts them in and out, also on ERROR): LsmShrink may treat
 * every retired run as unread only when there is none.
 */
int			lsm_manifest_readers = 0;

static uint64 lsm_oldest_needed = 0;	/* cache for one allocation */

static bool
LsmExtentReusable(const LsmExtent *e)
{
	if (e->reuse_after == 0)
		return true;
	if (RecoveryInProgress())
		return false;
	if (lsm_oldest_needed == 0)
		lsm_oldest_needed = LsmOldestNeeded();
	return e->reuse_after < lsm_oldest_needed;
}

/* See lsm_storage.h. */
uint32
LsmFreeMax(void)
{
	return (uint32) Min(lsm_free_list_limit, LSM_MAX_FREE);
}

/* Remove free-list entry i. */
static void
LsmFreeRemove(LsmMetaPageData *m, int i)
{
	memmove(&m->free[i], &m->free[i + 1], sizeof(LsmExtent) * (m->nfree - i - 1));
	m->nfree--;
	memset(&m->free[m->nfree], 0, sizeof(LsmExtent));
}

/*
 * Coalesce adjacent extents of equal horizon, and give a settled extent at
 * the end of the accounted pages back to the end (nblocks shrinks; the file
 * itself shrinks in LsmShrink).
 */
static void
LsmFreeCoalesce(LsmMetaPageData *m)
{
	for (int i = 0; i + 1 < (int) m->nfree;)
	{
		LsmExtent  *a = &m->free[i];
		LsmExtent  *b = &m->free[i + 1];

		if (a->start + a->npages == b->start && a->reuse_after == b->reuse_after)
		{
			a->npages += b->npages;
			LsmFreeRemove(m, i + 1);
		}
		else
			i++;
	}
	while (m->nfree > 0)
	{
		LsmExtent  *last = &m->free[m->nfree - 1];

		if (last->start + last->npages != m->nblocks || last->reuse_after != 0)
			break;
		m->nblocks = last->start;
		LsmFreeRemove(m, m->nfree - 1);
	}
}

/*
 * Settle the free list: every extent whose horizon has passed (all of them
 * if all) becomes reusable at once (horizon 0), then coalesce.  REQUIRES:
 * inside a metapage record (or on a private copy).
 */
void
LsmFreeSettle(LsmMetaPageData *m, bool all)
{
	for (int i = 0; i < (int) m->nfree; i++)
		if (m->free[i].reuse_after != 0 && (all || LsmExtentReusable(&m->free[i])))
			m->free[i].reuse_after = 0;
	LsmFreeCoalesce(m);
}

/*
 * The free list is full and an extent of npages pages has no neighbour it
 * may join: make room for it.  First settle what is reusable (settled
 * neighbours coalesce); else join two neighbouring extents of different
 * horizons, taking the later one (their reuse is delayed, never made
 * unsafe), two that both still wait first (joining a settled extent would
 * keep reusable space from being used); else, as a last resort, drop the smallest extent if it is smaller
 * than the new one (its pages are counted as leaked, as the new one's would
 * be; for a new held extent, whatever its size: a merge's piece that is not
 * on the list could not be taken off it when the merge publishes).  Held
 * extents (a running merge's pieces, which its publication takes off the
 * list) are never joined or dropped.  The horizon is taken anew: a record
 * may thus settle more than the copy a choice was made on, which takes
 * nothing from that choice.  True if there is room now.
 */
static bool
LsmFreeMakeRoom(LsmMetaPageData *m, uint32 npages, bool held)
{
	lsm_oldest_needed = 0;		/* the horizon now: settle all that passed */
	LsmFreeSettle(m, false);
	while (m->nfree >= LsmFreeMax())
	{
		int			join = -1;
		int			smallest = -1;

		for (int i = 0; i + 1 < (int) m->nfree; i++)
		{
			LsmExtent  *a = &m->free[i];
			LsmExtent  *b = &m->free[i + 1];

			if (a->start + a->npages != b->start ||
				a->reuse_after == LSM_REUSE_HELD || b->reuse_after == LSM_REUSE_HELD)
				continue;
			if (join < 0 || (a->reuse_after != 0 && b->reuse_after != 0))
				join = i;
			if (a->reuse_after != 0 && b->reuse_after != 0)
				break;
		}
		if (join >= 0)
		{
			LsmExtent  *a = &m->free[join];

			a->npages += m->free[join + 1].npages;
			a->reuse_after = Max(a->reuse_after, m->free[join + 1].reuse_after);
			LsmFreeRemove(m, join + 1);
			continue;
		}
		for (int i = 0; i < (int) m->nfree; i++)
			if (m->free[i].reuse_after != LSM_REUSE_HELD &&
				(smallest < 0 || m->free[i].npages < m->free[smallest].npages))
				smallest = i;
		/* a held piece must stay on the list: its merge takes it off */
		if (smallest < 0 || (!held && m->free[smallest].npages >= npages))
			return false;
		m->leaked_pages += m->free[smallest].npages;
		LsmFreeRemove(m, smallest);
	}
	return true;
}

/*
 * Return [start, start+npages) to the free list with its own horizon
 * reuse_after: kept sorted; it coalesces only with neighbours of the same
 * horizon.  Only when the list is full does it join a neighbour of another
 * horizon (the later of the two: reuse of the older pages is delayed, never
 * made unsafe; never a held extent); with no such neighbour, room is made
 * (LsmFreeMakeRoom), and only if none can be made are its pages counted as
 * leaked.
 */
void
LsmFreeAdd(LsmMetaPageData *m, BlockNumber start, uint32 npages, uint64 reuse_after)
{
	int			pos;
	bool		prev_adj,
				next_adj;

	if (npages == 0)
		return;
	for (pos = 0; pos < (int) m->nfree && m->free[pos].start < start; pos++)
		;
	prev_adj = pos > 0 && m->free[pos - 1].start + m->free[pos - 1].npages == start;
	next_adj = pos < (int) m->nfree && start + npages == m->free[pos].start;
	if (prev_adj && m->free[pos - 1].reuse_after == reuse_after)
		m->free[pos - 1].npages += npages;
	else if (next_adj && m->free[pos].reuse_after == reuse_after)
	{
		m->free[pos].start = start;
		m->free[pos].npages += npages;
	}
	else if (m->nfree < LsmFreeMax())
	{
		memmove(&m->free[pos + 1], &m->free[pos], sizeof(LsmExtent) * (m->nfree - pos));
		m->free[pos].start = start;
		m->free[pos].npages = npages;
		m->free[pos].reuse_after = reuse_after;
		m->nfree++;
	}
	else if (reuse_after != LSM_REUSE_HELD &&
			 ((prev_adj && m->free[pos - 1].reuse_after != LSM_REUSE_HELD) ||
			  (next_adj && m->free[pos].reuse_after != LSM_REUSE_HELD)))
	{
		/*
		 * Full list: join a neighbour, taking the later horizon.  Never a
		 * held one, nor a held extent (a piece is taken off the list at its
		 * merge's publication, and what remains of a held extent is then
		 * released as a failed merge's: pages joined to it would be reused
		 * before their horizon).
		 */
		bool		before = prev_adj && m->free[pos - 1].reuse_after != LSM_REUSE_HELD;
		LsmExtent  *e = before ? &m->free[pos - 1] : &m->free[pos];

		if (!before)
			e->start = start;
		e->npages += npages;
		e->reuse_after = Max(e->reuse_after, reuse_after);
	}
	else if (LsmFreeMakeRoom(m, npages, reuse_after == LSM_REUSE_HELD))
	{
		/* room made (the entries may have moved): insert it now */
		LsmFreeAdd(m, start, npages, reuse_after);
		return;
	}
	else if (reuse_after == LSM_REUSE_HELD)
	{
		/*
		 * Every entry is a held piece (never seen: LsmPieceRoom stops a
		 * merge cutting pieces well before).  Fail the merge in its record,
		 * before anything is logged; its pieces are released by the next.
		 */
		elog(ERROR, "lsm_am: the free list is full of a merge's pieces (%u entries)",
			 m->nfree);
	}
	else
	{
		/* no room to be made: count what is lost */
		m->leaked_pages += npages;
		return;
	}
	LsmFreeCoalesce(m);
}

/*
 * Choose where npages pages would come from: the lowest reusable free
 * extent that holds them; else a reusable free extent at the end of the
 * accounted pages, grown past it; else the end.  Does not change the
 * metapage.
 *
 * Tried 2026-12-07: the smallest that holds them, to keep large holes whole
 * for large outputs.  A 240 s ingest in memory ended within noise of the
 * lowest (file against live data after the first 20 s: median 1.27 against
 * 1.31, largest 1.37 against 1.38, one run each), and a capped 20-minute
 * ingest peaked at 4.65x (2.81x with the lowest the day before): not kept.
 */
BlockNumber
LsmAllocChoose(LsmMetaPageData *m, uint32 npages)
{
	lsm_oldest_needed = 0;

	for (int i = 0; i < (int) m->nfree; i++)
		if (m->free[i].npages >= npages && LsmExtentReusable(&m->free[i]))
			return m->free[i].start;
	if (m->nfree > 0)
	{
		LsmExtent  *last = &m->free[m->nfree - 1];

		if (last->start + last->npages == m->nblocks && LsmExtentReusable(last))
			return last->start;
	}
	return m->nblocks;
}

/*
 * Take [start, start+npages) chosen by LsmAllocChoose (with the same
 * horizon: the free list is settled first).
 */
void
LsmAllocTake(LsmMetaPageData *m, BlockNumber start, uint32 npages)
{
	LsmFreeSettle(m, false);
	if (start >= m->nblocks)
	{
		BlockNumber gap = m->nblocks;

		/*
		 * Settling may just have given a free tail back below start (start
		 * was the end before, or LsmReserveAtEnd chose it): it stays free.
		 */
		m->nblocks = start + npages;
		if (start > gap)
			LsmFreeAdd(m, gap, start - gap, 0);
		return;
	}
	for (int i = 0; i < (int) m->nfree; i++)
	{
		LsmExtent  *e = &m->free[i];
		BlockNumber end = e->start + e->npages;

		if (start < e->start || start >= end)
			continue;
		if (start + npages > end)
		{
			/* the extent at the end, grown past it */
			if (end != m->nblocks)
				break;
			m->nblocks = start + npages;
			e->npages = start - e->start;
			if (e->npages == 0)
				LsmFreeRemove(m, i);
			return;
		}
		if (start == e->start)
		{
			e->start += npages;
			e->npages -= npages;
			if (e->npages == 0)
				LsmFreeRemove(m, i);
		}
		else
		{
			uint32		after = end - (start + npages);
			uint64		horizon = e->reuse_after;

			e->npages = start - e->start;
			if (after > 0)
				LsmFreeAdd(m, start + npages, after, horizon);
		}
		return;
	}
	elog(ERROR, "lsm_am: block %u is not free", start);
}

/*
 * Reserve an extent of npages for a run writer of kind which
 * (LSM_RESV_*), below block below (InvalidBlockNumber: anywhere; else
 * nothing happens and InvalidBlockNumber is returned if the extent would
 * not start below it).  A reservation left by a writer of the same kind
 * that failed or crashed is reclaimed first: the caller holds the lock that
 * makes it the only writer of its kind.  Also allocates the run's id.
 * WAL-logged.
 */
static bool lsm_reserve_at_end = false;	/* LsmReserveAtEnd */

/*
 * While on, reservations go to the end of the index: lsm_am.compact() puts
 * its run above all its inputs, so that once they are released the run
 * can always be copied to the front and the file cut behind it (a run
 * placed in a hole could leave free space below it that is too small to
 * move it into, and the file could not shrink to the live data).
 */
void
LsmReserveAtEnd(bool on)
{
	lsm_reserve_at_end = on;
}

/*
 * Where reservation which of npages goes, decided on a private copy of the
 * metapage m (its stale extents freed first).
 */
static BlockNumber
LsmReserveChoose(const LsmMetaPageData *m, int which, uint32 npages, BlockNumber below)
{
	LsmMetaPageData *copy = palloc(sizeof(LsmMetaPageData));
	BlockNumber start;

	memcpy(copy, m, sizeof(LsmMetaPageData));
	LsmFreeAdd(copy, m->resv[which].start, m->resv[which].npages, 0);
	LsmFreeAdd(copy, m->resv[2 + which].start, m->resv[2 + which].npages, 0);
	start = LsmAllocChoose(copy, npages);
	if (lsm_reserve_at_end && !BlockNumberIsValid(below))
		start = copy->nblocks;
	pfree(copy);
	return start;
}

/*
 * Extend the relation to upto blocks before taking the metapage lock:
 * extension can wait (the disk, other extenders), and inserters that need
 * the metapage lock for a new log page must not wait for it.  Pages at or
 * beyond the metapage's nblocks are unused, so extending early is harmless;
 * if someone took the pages meanwhile, LsmEnsureBlocks under the lock still
 * extends (rarely).
 */
static void
LsmPreExtend(Relation index, BlockNumber upto)
{
	LsmEnsureBlocks(index, upto);
}

static BlockNumber
LsmReserveGuts(Relation index, int which, uint32 npages, BlockNumber below,
			   uint32 *run_id)
{
	Buffer		metabuf;
	LsmMetaPageData *m;
	GenericXLogState *state;
	BlockNumber start;
	LsmExtent	stale;
	LsmExtent	stale_old;

	/* a look without the lock: extend first if the extent will need it */
	m = palloc(sizeof(LsmMetaPageData));
	LsmReadMeta(index, m, NULL);
	start = LsmReserveChoose(m, which, npages, below);
	pfree(m);
	if (!BlockNumberIsValid(below) || start < below)
		LsmPreExtend(index, start + npages);

	/* decide on a private copy, then apply inside the record */
	metabuf = LsmLockMeta(index);
	m = LsmPageGetMeta(BufferGetPage(metabuf));
	stale = m->resv[which];
	stale_old = m->resv[2 + which];
	start = LsmReserveChoose(m, which, npages, below);
	if (BlockNumberIsValid(below) && start >= below)
	{
		UnlockReleaseBuffer(metabuf);
		return InvalidBlockNumber;
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

BlockNumber
LsmReserve(Relation index, int which, uint32 npages, uint32 *run_id)
{
	return LsmReserveGuts(index, which, npages, InvalidBlockNumber, run_id);
}

/* LsmReserve, but only below block below; else InvalidBlockNumber. */
BlockNumber
LsmReserveBelow(Relation index, int which, uint32 npages, BlockNumber below,
				uint32 *run_id)
{
	return LsmReserveGuts(index, which, npages, below, run_id);
}

/*
 * Grow reservation which by more pages in place (it ends at the end of the
 * index, or a free extent follows it).  false: it cannot grow in place.
 */
bool
LsmReserveGrow(Relation index, int which, uint32 more)
{
	Buffer		metabuf;
	LsmMetaPageData *m;
	LsmExtent	r;
	BlockNumber end;
	bool		ok = false;
	GenericXLogState *state;

	/* a look without the lock: at the end of the index, extend first */
	m = palloc(sizeof(LsmMetaPageData));
	LsmReadMeta(index, m, NULL);
	end = m->resv[which].start + m->resv[which].npages;
	if (end == m->nblocks)
		LsmPreExtend(index, end + more);
	pfree(m);

	metabuf = LsmLockMeta(index);
	m = LsmPageGetMeta(BufferGetPage(metabuf));
	r = m->resv[which];
	end = r.start + r.npages;

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
 * Where a moved reservation of npages goes, decided on a private copy of
 * the metapage m: where any new extent would (LsmAllocChoose).
 */
static BlockNumber
LsmMoveChoose(const LsmMetaPageData *m, uint32 npages)
{
	LsmMetaPageData *copy = palloc(sizeof(LsmMetaPageData));
	BlockNumber start;

	memcpy(copy, m, sizeof(LsmMetaPageData));
	LsmFreeSettle(copy, false);
	start = LsmAllocChoose(copy, npages);
	pfree(copy);
	return start;
}

/*
 * Replace reservation which by a new extent of npages, in the lowest free
 * extent that holds it, else at the end of the index; the old one is
 * freed.  Returns the new start.  The caller copies what it had written.
 * (Until 2026-12-07 always at the end: an output that outgrew its hole
 * grew the file while larger holes stood free.)
 */
BlockNumber
LsmReserveMove(Relation index, int which, uint32 npages)
{
	Buffer		metabuf;
	LsmMetaPageData *m;
	GenericXLogState *state;
	BlockNumber start;

	/* a look without the lock: extend first if it will go to the end */
	m = palloc(sizeof(LsmMetaPageData));
	LsmReadMeta(index, m, NULL);
	start = LsmMoveChoose(m, npages);
	pfree(m);
	LsmPreExtend(index, start + npages);

	metabuf = LsmLockMeta(index);
	m = LsmPageGetMeta(BufferGetPage(metabuf));
	start = LsmMoveChoose(m, npages);

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
 * The lowest block at or above nblocks from which the file may be cut when
 * wal_consistency_checking covers generic records.  Crash recovery replays
 * the records written since the last checkpoint's redo pointer; if a page
 * such a record touched is cut and the file then grows over it again, the
 * page can be all zeros on disk when the server crashes.  Redo itself is
 * right there: it finds the page new, skips the record and forgets the page
 * when it replays the truncation (XLogReadBufferExtended), and the first
 * record of the page's next life is a full image.  But the checker compares
 * the record's image with that zero page and stops recovery ("invalid page
 * pd_lower 0 ..."), as it would for a heap truncated the same way.  So with
 * the checker on, the tail is cut only down to the highest page whose LSN
 * is past the redo pointer; the pages kept stay beyond the metapage's
 * nblocks, unused, and the next shrink after a checkpoint cuts them (as
 * VACUUM's heap truncation reads the tail backwards, this reads at most the
 * pages it keeps plus one).
 */
static BlockNumber
LsmCutFloor(Relation index, BlockNumber nblocks, BlockNumber file)
{
	XLogRecPtr	redo;
	TimeLineID	tli;
	BufferAccessStrategy bstrategy;
	BlockNumber blk;

	if (!RelationNeedsWAL(index) || !wal_consistency_checking[RM_GENERIC_ID])
		return nblocks;
	GetOldestRestartPoint(&redo, &tli);
	bstrategy = GetAccessStrategy(BAS_BULKREAD);
	for (blk = file; blk > nblocks; blk--)
	{
		Buffer		buf = ReadBufferExtended(index, MAIN_FORKNUM, blk - 1,
											 RBM_NORMAL, bstrategy);
		XLogRecPtr	lsn;

		LockBuffer(buf, BUFFER_LOCK_SHARE);
		lsn = PageGetLSN(BufferGetPage(buf));
		UnlockReleaseBuffer(buf);
		if (lsn > redo)
			break;
	}
	FreeAccessStrategy(bstrategy);
	return blk;
}

/*
 * Cut the file to nblocks pages, WAL-logged (XLOG_SMGR_TRUNCATE); less if
 * the pages at its end may meet the consistency checker (LsmCutFloor).  lsn
 * is the metapage's LSN after the record that gave the pages up: it is
 * flushed first, so no crash can leave a metapage that still counts pages
 * the file no longer has.  Returns the pages cut.  REQUIRES: no other
 * backend can read or write the pages cut (an AccessExclusiveLock, or an
 * index built in this transaction); nothing of this backend pins them.
 */
BlockNumber
LsmTruncateTo(Relation index, BlockNumber nblocks, XLogRecPtr lsn, bool test_delay)
{
	BlockNumber file = RelationGetNumberOfBlocks(index);

	if (file <= nblocks)
		return 0;
	nblocks = LsmCutFloor(index, nblocks, file);
	if (file <= nblocks)
		return 0;
	if (RelationNeedsWAL(index))
		XLogFlush(lsn);
	LSM_FAULT(LSM_FAULT_TRUNCATE);
	if (test_delay && lsm_flush_delay_ms > 0)
		pg_usleep(lsm_flush_delay_ms * 1000L);	/* crash tests */
	RelationTruncate(index, nblocks);
	return file - nblocks;
}

/*
 * Shrink the index: settle the free list and give the free pages at its end
 * back to the file system.  Under an AccessExclusiveLock on the index, taken
 * only if it is free at once (as VACUUM truncates a heap):
 *  - no other backend has a scan open on the index (every scan holds a lock
 *    on it), and none is writing to it; so if this backend has no lsm scan
 *    open either, every retired extent is reusable now, whatever its horizon;
 *  - the lock is WAL-logged, and a hot standby replaying it cancels (after
 *    max_standby_streaming_delay) the queries that hold the index, which may
 *    still read retired runs, before it replays what follows;
 *  - reservations can only be left by failed or crashed writers.
 * The metapage record (nblocks, the free list) is flushed before the file is
 * truncated (XLOG_SMGR_TRUNCATE, RelationTruncate), so after a crash the
 * metapage never refers to a page the truncation removed; a crash between
 * the two leaves pages beyond nblocks, unused, which the next shrink cuts.
 * Returns false if the lock was not free, or in parallel mode (a parallel
 * VACUUM: logging the lock for standbys needs an xid, which cannot be
 * assigned there); *truncated (if not NULL) gets the pages truncated.
 * REQUIRES: not inside a run writer of this backend.
 */
bool
LsmShrink(Relation index, BlockNumber *truncated)
{
	Buffer		metabuf;
	LsmMetaPageData *m;
	LsmMetaPageData *copy;
	BlockNumber nblocks;
	BlockNumber old_nblocks;
	BlockNumber cut;
	XLogRecPtr	lsn;

	if (truncated)
		*truncated = 0;
	if (RecoveryInProgress() || IsInParallelMode() ||
		!ConditionalLockRelation(index, AccessExclusiveLock))
		return false;
	metabuf = LsmLockMeta(index);
	m = LsmPageGetMeta(BufferGetPage(metabuf));
	copy = palloc(sizeof(LsmMetaPageData));
	memcpy(copy, m, sizeof(LsmMetaPageData));
	old_nblocks = m->nblocks;
	for (int v = 0; v < 4; v++)
	{
		LsmFreeAdd(copy, copy->resv[v].start, copy->resv[v].npages, 0);
		memset(&copy->resv[v], 0, sizeof(LsmExtent));
	}
	lsm_oldest_needed = 0;
	LsmFreeSettle(copy, lsm_manifest_readers == 0);
	if (memcmp(copy, m, sizeof(LsmMetaPageData)) != 0)
	{
		GenericXLogState *state;

		LSM_FAULT(LSM_FAULT_RECYCLE);
		state = GenericXLogStart(index);

		m = LsmPageGetMeta(GenericXLogRegisterBuffer(state, metabuf, 0));
		memcpy(m, copy, sizeof(LsmMetaPageData));
		GenericXLogFinish(state);
	}
	nblocks = copy->nblocks;
	lsn = BufferGetLSNAtomic(metabuf);
	UnlockReleaseBuffer(metabuf);
	pfree(copy);

	cut = LsmTruncateTo(index, nblocks, lsn, nblocks < old_nblocks);
	UnlockRelation(index, AccessExclusiveLock);
	if (truncated)
		*truncated = cut;
	return true;
}
