/*
 * lsmpiece.c — leveled compaction output cut into pieces.
 *
 * DESIGN.md section 4: levels 1..n of a leveled index are each one sorted
 * run cut into non-overlapping pieces.  A merge into level L writes its
 * output as several runs ("pieces") of about LsmPiecePages data pages each,
 * cut between two entries (every entry is unique: key bytes and heap TID),
 * so the pieces' key ranges are disjoint and together cover exactly what
 * the single run would have held.  The picker then pushes one piece of an
 * over-full level at a time into the next level with only the pieces of
 * that level it overlaps, and a scan skips every piece whose key range
 * misses its range, as it skips any run.
 *
 * Space: a merge writes its output next to its inputs, so the file peaks at
 * the live data plus the largest merge.  With one run per level that merge
 * is the whole last level (the file near 2x live while it runs, 3x with the
 * hole it leaves); with pieces it is one piece of level L plus the pieces of
 * L+1 it overlaps, about 2 / LSM_PIECES_PER_LEVEL of level L+1.
 *
 * Each piece gets its own extent, the lowest free one that holds it (so
 * pieces fill the holes earlier merges left, where one large output would
 * need a hole of its whole size).  When a piece is finished (its pages
 * WAL-logged as full images), one metapage record ends its reservation,
 * puts its pages on the free list *held* (reuse_after LSM_REUSE_HELD: never
 * reusable by the horizon rule), reserves the next piece's extent and
 * allocates the next run id.  The record that publishes the merge takes
 * the held pieces off the free list, ends the last piece's reservation and
 * retires the inputs, so every page stays accounted for at every moment
 * (doc/page_format.md, "Page accounting").  A merge that fails or crashes
 * leaves held extents behind: the next compaction (the only writer of its
 * kind, under the compaction lock) releases them first, and a shrink under
 * the index's AccessExclusiveLock settles them like any free extent.
 * Nothing else on disk changes: a piece is an ordinary run, so indexes
 * written before pieces existed read the same, and older code reads these
 * (a held extent is to it a free extent whose horizon has not passed).
 */
#include "postgres.h"

#include "access/generic_xlog.h"
#include "storage/bufmgr.h"
#include "utils/rel.h"

#include "storage/lsm_storage.h"

/* The size of a piece: LsmPiecePages (maint/lsmpolicy.c, a policy matter). */
/* Most pieces one merge writes. */
#define LSM_PIECE_MAX_RUNS		48


/*
 * Most runs a merge of nin runs may write: it must not bring the manifest
 * past three quarters (where the picker starts merging runs to make room),
 * so flushes running meanwhile always find a slot.
 */
int
LsmPieceLimit(const LsmMetaPageData *meta, int nin)
{
	int			room = LSM_MAX_RUNS * 3 / 4 - ((int) meta->nruns - nin);

	return Max(1, Min(room, Min(LSM_PIECE_MAX_RUNS, lsm_max_pieces)));
}

/*
 * Pages to reserve for the next piece of target size `target`: the whole of
 * the lowest reusable hole of at least 3/4 of it (up to 5/4 of it), so that
 * pieces fill the holes that earlier pieces left (a piece is cut when its
 * extent is full, LsmPieceFull); else the target.  The reservation then
 * takes that hole: every lower hole is smaller than what is asked for.
 *
 * Not less than 3/4: a 240 s ingest in memory keeps about a fifth of its
 * file free, half of it in holes under 3/4 of a last-level piece
 * (bench/ingest.sh --space-trace), but pieces fitted to holes down to 1/4
 * of their size (tried 2026-12-07) were more pieces in a manifest already
 * near the 96 runs where the picker merges small neighbours: it got there
 * at 129 s instead of 163 s, and the file peaked at 2.30x its live data
 * instead of 1.38x (one run each).
 *
 * whole: the piece cannot be cut (the last one its merge may write), so
 * only a hole that holds all of target will do.
 */
static uint32
LsmPieceExtentSize(LsmMetaPageData *m, uint32 target, bool whole)
{
	uint32		least = Max(whole ? target : target * 3 / 4, 4);
	BlockNumber start = LsmAllocChoose(m, least);

	for (int i = 0; i < (int) m->nfree; i++)
	{
		LsmExtent  *e = &m->free[i];

		if (e->start == start && e->start + e->npages < m->nblocks)
			return Min(e->npages, target + target / 4);
	}
	return target;
}

/*
 * The filter of a piece in an extent of npages, where a piece of target
 * pages expects keys: sized for the share of keys the extent holds (a
 * piece in a quarter-size hole would otherwise carry a full piece's filter,
 * mostly empty, in a quarter of the space).
 */
uint64
LsmPieceKeys(uint64 keys, uint32 npages, uint32 target)
{
	if (npages >= target || target == 0)
		return keys;
	return (uint64) ((double) keys * npages / target) + 16;
}

uint32
LsmPieceFirstExtent(Relation index, uint32 target)
{
	Buffer		metabuf = ReadBuffer(index, LSM_METAPAGE_BLKNO);
	LsmMetaPageData *copy = palloc(sizeof(LsmMetaPageData));
	uint32		n;

	LockBuffer(metabuf, BUFFER_LOCK_SHARE);
	memcpy(copy, LsmPageGetMeta(BufferGetPage(metabuf)), sizeof(LsmMetaPageData));
	UnlockReleaseBuffer(metabuf);
	n = LsmPieceExtentSize(copy, target, false);
	pfree(copy);
	return n;
}

/*
 * Is the writer's extent full, for a piece: would the next data page, the
 * fence pages (estimated generously: 64-byte keys) and the filter not fit
 * in it any more?
 */
bool
LsmPieceFull(const LsmRunWriter *w)
{
	uint32		fences = w->hiwater / 100 + 1;

	/*
	 * + 2: the core's run builder holds the data page being filled (it is
	 * placed when the next entry does not fit), and the next entry may
	 * start one more
	 */
	return (uint64) w->hiwater + 2 + fences + w->bloom_pages >= w->cap;
}

/*
 * Is there room on the free list for one more held piece?  (A free list
 * near its 160 entries (LsmFreeMax) could not record it exactly: the merge then goes on
 * into its current piece.)
 */
bool
LsmPieceRoom(Relation index)
{
	Buffer		metabuf = ReadBuffer(index, LSM_METAPAGE_BLKNO);
	bool		room;

	LockBuffer(metabuf, BUFFER_LOCK_SHARE);
	room = LsmPageGetMeta(BufferGetPage(metabuf))->nfree + 8 < LsmFreeMax();
	UnlockReleaseBuffer(metabuf);
	return room;
}

/* Retire the current piece's reservation into a held extent (in a record). */
static void
LsmPieceHold(LsmMetaPageData *m, const LsmRunRef *ref)
{
	LsmExtent	r = m->resv[LSM_RESV_COMPACT];
	LsmExtent	old = m->resv[2 + LSM_RESV_COMPACT];

	if (r.npages > ref->npages)
		LsmFreeAdd(m, r.start + ref->npages, r.npages - ref->npages, 0);
	LsmFreeAdd(m, old.start, old.npages, 0);
	memset(&m->resv[LSM_RESV_COMPACT], 0, sizeof(LsmExtent));
	memset(&m->resv[2 + LSM_RESV_COMPACT], 0, sizeof(LsmExtent));
	LsmFreeAdd(m, ref->start, ref->npages, LSM_REUSE_HELD);
}

/*
 * Finish the writer's current run into *ref (its pages are WAL-logged) and
 * start the next piece in an extent of its own (about target pages, fitted
 * to a hole: LsmPieceExtentSize; with last, a hole that holds all of
 * target, for a piece that cannot be cut) with a new run id and a filter
 * sized for expected_keys.  One metapage record holds the finished piece
 * and reserves the next one.
 * REQUIRES: compaction lock; the writer's reservation is LSM_RESV_COMPACT.
 */
void
LsmRunWriterCut(LsmRunWriter *w, LsmRunRef *ref, uint16 level,
				uint32 target, uint64 expected_keys, bool last)
{
	uint32		est_pages;
	Relation	index = w->index;
	Buffer		metabuf;
	LsmMetaPageData *m;
	LsmMetaPageData *copy;
	GenericXLogState *state;
	BlockNumber start;

	Assert(w->which == LSM_RESV_COMPACT);
	LsmRunWriterFinish(w, ref, level);

	metabuf = LsmLockMeta(index);
	m = LsmPageGetMeta(BufferGetPage(metabuf));
	if (m->resv[LSM_RESV_COMPACT].start != ref->start ||
		m->resv[LSM_RESV_COMPACT].npages < ref->npages)
	{
		UnlockReleaseBuffer(metabuf);
		elog(ERROR, "lsm_am: the compaction reservation of index \"%s\" changed during a merge",
			 RelationGetRelationName(index));
	}
	/* decide on a private copy, then apply inside the record */
	copy = palloc(sizeof(LsmMetaPageData));
	memcpy(copy, m, sizeof(LsmMetaPageData));
	LsmPieceHold(copy, ref);
	LsmFreeSettle(copy, false);
	est_pages = LsmPieceExtentSize(copy, target, last);
	start = LsmAllocChoose(copy, est_pages);
	pfree(copy);
	LsmEnsureBlocks(index, start + est_pages);

	state = GenericXLogStart(index);
	m = LsmPageGetMeta(GenericXLogRegisterBuffer(state, metabuf, 0));
	LsmPieceHold(m, ref);
	LsmAllocTake(m, start, est_pages);
	m->resv[LSM_RESV_COMPACT].start = start;
	m->resv[LSM_RESV_COMPACT].npages = est_pages;
	m->resv[LSM_RESV_COMPACT].reuse_after = 0;
	w->run_id = m->next_run_id++;
	GenericXLogFinish(state);
	UnlockReleaseBuffer(metabuf);

	w->start = start;
	w->cap = est_pages;
	w->hiwater = 1;
	/* as LsmRunWriterBegin: a builder in a context of the writer's own */
	LsmRunWriterNewBuilder(w, LsmPieceKeys(expected_keys, est_pages, target));
}

/*
 * Make every held extent reusable at once: the pieces of a merge that was
 * given up, failed or crashed (nobody reads them).  WAL-logged if there are
 * any.  REQUIRES: compaction lock (no merge of another backend holds any).
 */
void
LsmPiecesRelease(Relation index)
{
	Buffer		metabuf = LsmLockMeta(index);
	LsmMetaPageData *m = LsmPageGetMeta(BufferGetPage(metabuf));
	bool		any = false;

	for (int i = 0; i < (int) m->nfree; i++)
		if (m->free[i].reuse_after == LSM_REUSE_HELD)
			any = true;
	if (any)
	{
		GenericXLogState *state = GenericXLogStart(index);
		LsmExtent  *held = palloc(sizeof(LsmExtent) * LSM_MAX_FREE);
		int			nheld = 0;
		int			keep = 0;

		m = LsmPageGetMeta(GenericXLogRegisterBuffer(state, metabuf, 0));
		for (int i = 0; i < (int) m->nfree; i++)
		{
			if (m->free[i].reuse_after == LSM_REUSE_HELD)
				held[nheld++] = m->free[i];
			else
				m->free[keep++] = m->free[i];
		}
		for (int i = keep; i < (int) m->nfree; i++)
			memset(&m->free[i], 0, sizeof(LsmExtent));
		m->nfree = keep;
		for (int i = 0; i < nheld; i++)
			LsmFreeAdd(m, held[i].start, held[i].npages, 0);
		GenericXLogFinish(state);
		pfree(held);
	}
	UnlockReleaseBuffer(metabuf);
}

/*
 * In the record that publishes a merge: take its held pieces runs[0..n)
 * off the free list (they become runs of the manifest).
 */
void
LsmPiecesTake(LsmMetaPageData *m, const LsmRunRef *runs, int n)
{
	for (int i = 0; i < n; i++)
		LsmAllocTake(m, runs[i].start, runs[i].npages);
}
