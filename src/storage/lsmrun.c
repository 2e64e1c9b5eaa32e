/*
 * lsmrun.c — reading sorted runs page by page, and merging runs.
 *
 * A run cursor walks one run's data pages in either direction, starting at
 * the page that can hold the scan's first key (found by descending the fence
 * tree from the run's header page).  Every page read is checked to belong to
 * the run it was reached from.  A data page is handed to the merging
 * iterator in one core call (LsmFeedRun) that decodes it straight from the
 * shared buffer under its share lock (the core calls nothing back, so no
 * PostgreSQL call runs with C++ frames above it); a cursor never holds a
 * buffer lock between calls.
 */
#include "postgres.h"

#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "utils/memutils.h"

#include "storage/lsm_storage.h"
#include "lsmowner.h"

/*
 * ERROR for a failed core status; LSM_OK and positive statuses pass.  blkno:
 * the page the core was decoding (InvalidBlockNumber if none).
 */
void
LsmCheckStatus(Relation index, LsmStatus st, BlockNumber blkno, const char *what)
{
	if ((int) st < 0)
		LsmReportStatus(index, st, blkno, what);
}

/*
 * Relative page rel of the run, pinned, share-locked and checked to be a page
 * of that kind and run (the caller unlocks and releases it).
 */
Buffer
LsmReadRunBuffer(Relation index, const LsmRunRef *ref, uint32 rel, uint16 kind)
{
	return LsmReadRunBufferExt(index, ref, rel, kind, NULL);
}

/* The same, read through strategy (NULL: the default). */
Buffer
LsmReadRunBufferExt(Relation index, const LsmRunRef *ref, uint32 rel, uint16 kind,
					BufferAccessStrategy strategy)
{
	Buffer		buf;

	if (rel >= ref->npages)
		LsmReportCorruption(index, ref->start,
							"Run %u of %u pages is asked for its page %u.",
							ref->run_id, ref->npages, rel);
	buf = ReadBufferExtended(index, MAIN_FORKNUM, ref->start + rel, RBM_NORMAL, strategy);
	LockBuffer(buf, BUFFER_LOCK_SHARE);
	LsmCheckPage(index, buf, kind, ref->run_id);
	return buf;
}

/* Copy the content area of a run page into dst; returns its length. */
int
LsmReadRunPage(Relation index, const LsmRunRef *ref, uint32 rel, uint16 kind,
			   uint8 *dst)
{
	Buffer		buf = LsmReadRunBuffer(index, ref, rel, kind);
	Page		page = BufferGetPage(buf);
	int			len = LsmPageContentLen(page);

	memcpy(dst, LsmPageContent(page), len);
	UnlockReleaseBuffer(buf);
	return len;
}

/* Smallest byte string greater than every string with prefix p; false if none. */
static bool
LsmPrefixSuccessor(const uint8 *p, int len, uint8 *out, int *outlen)
{
	while (len > 0 && p[len - 1] == 0xFF)
		len--;
	if (len == 0)
		return false;
	memcpy(out, p, len);
	out[len - 1]++;
	*outlen = len;
	return true;
}

void
LsmRunCursorInit(LsmRunCursor *c, const LsmRunRef *ref)
{
	memset(c, 0, sizeof(*c));
	c->ref = *ref;
}

/* Does the run's header rule range out (the run holds no key of it)? */
static bool
LsmRunOutsideRange(const LsmRunHeader *hdr, const LsmRange *range)
{
	if (range->lo && LsmKeyCmp(hdr->max_key, hdr->max_key_len, range->lo, range->lolen) < 0)
		return true;
	if (LsmKeyBeyondHi(range, hdr->min_key, hdr->min_key_len))
		return true;
	return false;
}

/*
 * The pages the descent to the first data page of range (a point lookup:
 * its lower bound, forward) would read from outside memory, the data page
 * included: the header and the fence pages on the way count when neither
 * this backend's cache, the shared metadata cache nor shared buffers hold
 * them (a missing header counts 2: itself and a fence page below it).
 */
static int
LsmRunDescentPages(Relation index, LsmRunCacheEntry *e, bool backward,
				   const LsmRange *range)
{
	const uint8 *content;
	int			len;
	bool		is_header = true;
	uint32		child;
	int			is_data;
	int			pages = 1;

	if (backward || range == NULL || range->lo == NULL ||
		!LsmRunCacheHeaderInMemory(index, e))
		return 3;
	content = e->header;
	len = e->header_len;
	for (int depth = 0; depth <= 32; depth++)
	{
		if (lsm_fence_find(content, len, is_header, LSM_FIND_LE, range->lo, range->lolen,
						   &child, &is_data) != LSM_OK)
			return pages + 1;	/* the descent itself reports it */
		if (is_data)
			return pages;
		content = LsmRunCacheFenceInMemory(index, e, child, &len);
		if (content == NULL)
			return pages + 1;	/* that fence page, and (at least) the data page */
		is_header = false;
	}
	return pages;
}

/*
 * Should a large level's run be searched without asking its filter, whose
 * page is not in memory (LsmRunCacheMayContain decides that part)?  Asking
 * costs the filter page, and the descent too for the keys the run holds;
 * searching costs the descent, d pages (LsmRunDescentPages).  With p the
 * share of the index's entries in the run's level (the chance that a key
 * looked up, if it exists, is there): search iff d < 1 + p * d.  A descent
 * in memory (d = 1) always passes the filter over; one that must read its
 * header and a fence page too (d = 3) only for a level of two thirds of
 * the entries or more.
 */
static bool
LsmRunPassFilter(Relation index, LsmRunCacheEntry *e, const LsmRunCursor *c,
				 bool backward, const LsmRange *range)
{
	double		d;

	/* a filter page this backend copied answers from memory anyway */
	if (!c->bloom_pass_cold || LsmRunCacheFilterCopied(e, c->bloom_hash))
		return false;
	d = LsmRunDescentPages(index, e, backward, range);
	return d < 1.0 + c->bloom_level_share * d;
}

/*
 * Find the first data page to visit; false if the run can be skipped.  The
 * header and fence pages come from the backend's run cache (lsmruncache.c), so
 * a lookup reads only data pages once they are cached.  A run is skipped by
 * key range (its header) or by filter: key range first when this backend has
 * the header, else filter first, so that a new connection's lookup reads no
 * header of a run the filter rules out.
 */
static bool
LsmRunCursorStart(Relation index, LsmRunCursor *c, bool backward,
				  const LsmRange *range)
{
	LsmRunCacheEntry *e = LsmRunCacheGet(index, &c->ref);
	LsmRunHeader hdr;
	uint8		succ[LSM_MAX_KEY_SIZE + 1];
	int			succlen = 0;
	LsmFindMode mode;
	const uint8 *target = NULL;
	size_t		tlen = 0;
	const uint8 *content;
	int			len;
	uint32		child;
	int			is_data;
	bool		is_header = true;
	uint32		fence_rel = 0;	/* the page content came from */
	int			depth = 0;
	bool		range_first = e->header_ok;

	if (range_first && LsmRunOutsideRange(&e->hdr, range))
		return false;

	/* by filter */
	if (c->bloom_check)
	{
		bool		pass_cold = LsmRunPassFilter(index, e, c, backward, range);
		LsmFilterAnswer a = LsmRunCacheMayContain(index, e, c->bloom_hash, pass_cold,
												  !c->bloom_large);

		c->probed = (a != LSM_FILTER_NOT_ASKED);
		if (a == LSM_FILTER_ABSENT)
		{
			c->filtered = true;
			return false;
		}
	}

	LsmRunCacheHeader(index, e);
	hdr = e->hdr;
	content = e->header;
	len = e->header_len;
	c->ndata = hdr.ndata_pages;
	if (hdr.ndata_pages == 0 ||
		hdr.npages != (c->ref.bloom_nblocks > 0 ? c->ref.bloom_start : c->ref.npages))
		LsmReportCorruption(index, c->ref.start,
							"The header of run %u counts %u pages with %u data pages, the manifest %u pages before its filter.",
							c->ref.run_id, hdr.npages, hdr.ndata_pages,
							c->ref.bloom_nblocks > 0 ? c->ref.bloom_start : c->ref.npages);

	/* by key range, if not done above */
	if (!range_first && LsmRunOutsideRange(&hdr, range))
		return false;			/* a probe that said "maybe" was a false positive */

	if (!backward)
	{
		mode = range->lo ? LSM_FIND_LE : LSM_FIND_FIRST;
		target = range->lo;
		tlen = range->lo ? range->lolen : 0;
	}
	else if (range->hi && LsmPrefixSuccessor(range->hi, range->hilen, succ, &succlen))
	{
		mode = LSM_FIND_LT;
		target = succ;
		tlen = succlen;
	}
	else
		mode = LSM_FIND_LAST;

	for (;;)
	{
		LsmCheckStatus(index,
					   lsm_fence_find(content, len, is_header, mode, target, tlen,
									  &child, &is_data),
					   c->ref.start + fence_rel, "searching a fence page");
		if (is_data)
			break;
		if (++depth > 32)
			LsmReportCorruption(index, c->ref.start + child,
								"The fence tree of run %u is deeper than 32 levels (a cycle).",
								c->ref.run_id);
		content = LsmRunCacheFence(index, e, child, &len);
		fence_rel = child;
		is_header = false;
	}
	if (child < 1 || child > c->ndata)
		LsmReportCorruption(index, c->ref.start + fence_rel,
							"A fence of run %u points at data page %u of %u.",
							c->ref.run_id, child, c->ndata);
	c->cur = child;
	return true;
}

/*
 * Step the cursor to the run's next data page in the scan direction and
 * return its buffer, checked and share-locked (the caller unlocks and
 * releases it), or InvalidBuffer when the run has no more pages.
 */
static Buffer
LsmRunCursorAdvance(Relation index, LsmRunCursor *c, bool backward,
					const LsmRange *range)
{
	Buffer		buf;

	if (c->done)
		return InvalidBuffer;
	if (!c->started)
	{
		c->started = true;
		if (!LsmRunCursorStart(index, c, backward, range))
		{
			c->done = true;
			return InvalidBuffer;
		}
	}
	else if (backward)
	{
		if (c->cur <= 1)
		{
			c->done = true;
			return InvalidBuffer;
		}
		c->cur--;
	}
	else
	{
		if (c->cur >= c->ndata)
		{
			c->done = true;
			return InvalidBuffer;
		}
		c->cur++;
	}
	c->data_pages++;
	if (c->cur >= c->ref.npages)
		LsmReportCorruption(index, c->ref.start,
							"Run %u of %u pages is asked for its page %u.",
							c->ref.run_id, c->ref.npages, c->cur);
	buf = ReadBufferExtended(index, MAIN_FORKNUM, c->ref.start + c->cur,
							 RBM_NORMAL, c->strategy);
	LockBuffer(buf, BUFFER_LOCK_SHARE);
	LsmCheckPage(index, buf, LSM_PK_RUN_DATA, c->ref.run_id);
	return buf;
}

/*
 * Give merge source src (a run cursor) its next data page, or mark it done:
 * one core call per page, which decodes the page (as much of it as the scan
 * needs) and says whether it held a key of the range (so a filter probe that
 * let the page be read counts as a false positive or not).  A cursor over a
 * level in pieces (lsmchain.c) goes on with the next piece when one runs
 * out, and is done after the last.  REQUIRES: m was created with range's
 * bounds and direction.
 */
void
LsmFeedRun(Relation index, LsmMerge *m, int src, LsmRunCursor *c,
		   bool backward, const LsmRange *range)
{
	Buffer		buf;
	int			in_range = 0;
	bool		ask;
	Page		page;
	LsmStatus	st;

	for (;;)
	{
		buf = LsmRunCursorAdvance(index, c, backward, range);
		if (BufferIsValid(buf))
			break;
		/* a level in pieces: its next run, in scan order (lsmchain.c) */
		if (!LsmRunCursorNextRun(c))
		{
			lsm_merge_source_done(m, src);
			return;
		}
	}
	ask = c->bloom_check && !c->matched;
	/* decoded (or, lazily, copied) straight from the buffer: no copy first */
	page = BufferGetPage(buf);
	st = lsm_merge_feed_datapage(m, src, (const uint8 *) LsmPageContent(page),
								 LsmPageContentLen(page), ask ? &in_range : NULL);
	UnlockReleaseBuffer(buf);
	LsmCheckStatus(index, st, c->ref.start + c->cur, "reading a data page");
	if (ask && in_range)
		c->matched = true;
}

/*
 * Copy a run's smallest and largest key out of its header page (palloc'd).
 */
void
LsmReadRunBounds(Relation index, const LsmRunRef *ref,
				 uint8 **min, int *minlen, uint8 **max, int *maxlen)
{
	uint8	   *content = palloc(BLCKSZ);
	LsmRunHeader hdr;
	int			len;

	len = LsmReadRunPage(index, ref, 0, LSM_PK_RUN_HEADER, content);
	LsmCheckStatus(index, lsm_runheader_parse(content, len, &hdr), ref->start,
				   "reading a run header");
	*min = palloc(hdr.min_key_len + 1);
	memcpy(*min, hdr.min_key, hdr.min_key_len);
	*minlen = hdr.min_key_len;
	*max = palloc(hdr.max_key_len + 1);
	memcpy(*max, hdr.max_key, hdr.max_key_len);
	*maxlen = hdr.max_key_len;
	pfree(content);
}

/*
 * The keys a filter is sized for, for pages of output from inputs of
 * in_keys entries in in_pages pages (a quarter more, and 16).
 */
static uint64
LsmKeysFor(uint64 in_keys, uint64 in_pages, uint64 pages)
{
	return (uint64) ((double) in_keys * pages * 1.25 / (double) Max(in_pages, 1)) + 16;
}

/*
 * Merge the runs inputs[0..nin) into one new run at level, or, when
 * out->piece_pages > 0, into runs of about that many data pages each
 * (pieces, lsmpiece.c; at most out->max_pieces): stream them through the
 * merging iterator into a run writer (memory: one page per input, plus the
 * output's filter).  Entries dead() reports are left out (VACUUM).  Fills
 * out->runs and out->nruns (unpublished; the caller publishes them: every
 * run but the last is held on the free list, the last is in the compaction
 * reservation).  Returns false if stop() made it give up (the reservation
 * and the held pieces are released).  REQUIRES: compaction lock.
 */
bool
LsmMergeRuns(Relation index, const LsmRunRef *inputs, int nin, uint16 level,
			 const LsmStop *stop, LsmDeadCallback dead, void *dead_state,
			 double *removed, LsmMergeOut *out)
{
	MemoryContext cxt;
	MemoryContext old;
	LsmCoreOwner *own;
	LsmRunCursor *cursors;
	BufferAccessStrategy strategy;
	LsmMerge   *m = NULL;
	LsmRunWriter w;
	LsmRange	range = {0};
	LsmStatus	st;
	uint64		est_pages = 4;
	uint64		est_keys = 0;
	uint64		piece_keys = 0;
	uint32		piece_target = 0;	/* a piece's extent: data, fences, filter */
	uint32		piece_est = 0;	/* the first piece's, fitted to a hole */
	uint64		done_pages = 0;
	bool		cut = out->piece_pages > 0 && out->max_pieces > 1;
	bool		stopped = false;

	/* the caller's: it outlives the merge's context */
	out->nruns = 0;
	out->runs = palloc0(sizeof(LsmRunRef) * Max(out->max_pieces, 1));

	/*
	 * The merge's memory, core objects included (lsmowner.h): deleted at the
	 * end, or with its parent by an ERROR's cleanup.
	 */
	cxt = AllocSetContextCreate(CurrentMemoryContext, "lsm merge",
								ALLOCSET_SMALL_SIZES);
	old = MemoryContextSwitchTo(cxt);
	cursors = palloc(sizeof(LsmRunCursor) * Max(nin, 1));
	/* the inputs through a ring of a few buffers (freed with cxt) */
	strategy = GetAccessStrategy(BAS_BULKREAD);
	for (int i = 0; i < nin; i++)
	{
		LsmRunCursorInit(&cursors[i], &inputs[i]);
		cursors[i].strategy = strategy;
		est_pages += inputs[i].npages;
		est_keys += inputs[i].nentries;
	}
	if (cut)
	{
		/* a filter sized for a piece: the keys of piece_pages input pages */
		piece_keys = LsmKeysFor(est_keys, est_pages, out->piece_pages);
		/* and its extent: data, fences and filter */
		piece_target = out->piece_pages + out->piece_pages / 16 + 4;
		if (piece_keys >= est_keys || est_pages < (uint64) out->piece_pages * 3 / 2)
			cut = false;
	}
	/* pieces a failed or crashed merge left held */
	LsmPiecesRelease(index);
	if (cut)
		piece_est = LsmPieceFirstExtent(index, piece_target);

	own = LsmCoreOwnerCreate(cxt, LSM_CORE_MERGE);
	st = lsm_merge_create(nin, 0, NULL, 0, NULL, 0, &m);
	own->obj = m;
	LsmCheckStatus(index, st, InvalidBlockNumber, "starting a merge");

	LsmRunWriterBegin(&w, index, LSM_RESV_COMPACT,
					  cut ? piece_est : (uint32) Min(est_pages, MaxBlockNumber / 4),
					  cut ? LsmPieceKeys(piece_keys, piece_est, piece_target) : est_keys,
					  true);
	w.stop = stop;
	while (!w.stopped)
	{
		const uint8 *key;
		size_t		len;
		int			need;

		st = lsm_merge_next(m, &key, &len, &need);
		if (st == LSM_END)
			break;
		if (st == LSM_NEED_PAGE)
		{
			LsmFeedRun(index, m, need, &cursors[need], false, &range);
			continue;
		}
		LsmCheckStatus(index, st, InvalidBlockNumber, "merging runs");
		if (LsmEntryIsDead(key, len, dead, dead_state, removed))
			continue;

		/*
		 * A piece ends before this entry when its extent is full (every
		 * entry is unique, so pieces never share a key), unless what is left
		 * of the inputs is less than a quarter piece: that goes into this
		 * one, whose extent grows.
		 */
		if (cut && LsmPieceFull(&w) &&
			out->nruns + 1 < out->max_pieces &&
			done_pages + w.hiwater + out->piece_pages / 4 < est_pages &&
			LsmPieceRoom(index))
		{
			LsmRunRef  *piece = &out->runs[out->nruns];
			bool		last = out->nruns + 2 >= out->max_pieces;
			uint32		target = piece_target;
			uint64		keys = piece_keys;

			/*
			 * The next piece is the last this merge may write (the
			 * manifest's room, LsmPieceLimit): it takes everything left, so
			 * its extent is sized for that.  Fitted to one piece's hole, it
			 * grew past it and was moved, with all it had written, to the
			 * end of the file: in a capped 20-minute ingest, with the
			 * manifest near its 96 runs, level-2 outputs of 90-160 MB
			 * (pieces of 7 MB) went to the end while a 2.9 GB hole stood
			 * free (bench/ingest.sh --space-trace, 2026-12-07).
			 */
			if (last)
			{
				uint64		left = est_pages - Min(est_pages, done_pages + w.hiwater);

				left = Min(left + left / 8 + 4, MaxBlockNumber / 4);
				if (left > target)
				{
					keys = LsmKeysFor(est_keys, est_pages, left);
					target = (uint32) left;
				}
			}
			LsmRunWriterCut(&w, piece, level, target, keys, last);
			out->nruns++;
			done_pages += piece->npages;
		}
		LsmRunWriterAdd(&w, key, (int) len);
	}
	stopped = w.stopped;
	if (!stopped && lsm_runbuilder_count(w.builder) > 0)
		LsmRunWriterFinish(&w, &out->runs[out->nruns++], level);
	else
		LsmRunWriterAbandon(&w);	/* a cut always leaves an entry behind it */
	MemoryContextSwitchTo(old);
	MemoryContextDelete(cxt);	/* the merge and the writer go with it */
	if (stopped)
	{
		LsmReserveCancel(index, LSM_RESV_COMPACT);
		LsmPiecesRelease(index);
		out->nruns = 0;
		return false;
	}
	return true;
}
