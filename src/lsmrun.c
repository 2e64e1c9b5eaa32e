/*
 * lsmrun.c — reading sorted runs page by page, and merging runs.
 *
 * A run cursor walks one run's data pages in either direction, starting at
 * the page that can hold the scan's first key (found by descending the fence
 * tree from the run's header page).  Every page read is checked to belong to
 * the run it was reached from.  Data pages are copied (decoded into a core
 * batch) under a share lock, so a cursor never holds a buffer lock between
 * calls.
 */
#include "postgres.h"

#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "utils/memutils.h"

#include "lsm.h"

/* ERROR for a failed core status; LSM_OK and positive statuses pass. */
void
LsmCheckStatus(Relation index, LsmStatus st, const char *what)
{
	if ((int) st < 0)
		LsmReportStatus(index, st, what);
}

/* Copy the content area of a run page into dst; returns its length. */
static int
LsmReadRunPage(Relation index, const LsmRunRef *ref, uint32 rel, uint16 kind,
			   uint8 *dst)
{
	Buffer		buf;
	Page		page;
	int			len;

	if (rel >= ref->npages)
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("index \"%s\": run %u has no page %u",
						RelationGetRelationName(index), ref->run_id, rel),
				 errhint("REINDEX the index.")));
	buf = ReadBuffer(index, ref->start + rel);
	LockBuffer(buf, BUFFER_LOCK_SHARE);
	LsmCheckPage(index, buf, kind, ref->run_id);
	page = BufferGetPage(buf);
	len = LsmPageContentLen(page);
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

/* memcmp order, shorter first on a common prefix. */
static int
LsmKeyCmp(const uint8 *a, size_t alen, const uint8 *b, size_t blen)
{
	int			c = memcmp(a, b, Min(alen, blen));

	if (c != 0)
		return c;
	return (alen > blen) - (alen < blen);
}

void
LsmRunCursorInit(LsmRunCursor *c, const LsmRunRef *ref)
{
	memset(c, 0, sizeof(*c));
	c->ref = *ref;
}

/* Find the first data page to visit; false if the run can be skipped. */
static bool
LsmRunCursorStart(Relation index, LsmRunCursor *c, bool backward,
				  const LsmRange *range)
{
	uint8	   *content = palloc(BLCKSZ);
	uint8		succ[LSM_MAX_KEY_SIZE + 1];
	int			succlen = 0;
	LsmRunHeader hdr;
	LsmFindMode mode;
	const uint8 *target = NULL;
	size_t		tlen = 0;
	int			len;
	uint32		child;
	int			is_data;
	bool		is_header = true;
	int			depth = 0;

	len = LsmReadRunPage(index, &c->ref, 0, LSM_PK_RUN_HEADER, content);
	LsmCheckStatus(index, lsm_runheader_parse(content, len, &hdr), "reading a run header");
	c->ndata = hdr.ndata_pages;
	if (hdr.ndata_pages == 0 || hdr.npages != c->ref.npages)
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("index \"%s\": run %u header does not match the manifest",
						RelationGetRelationName(index), c->ref.run_id),
				 errhint("REINDEX the index.")));

	/* skip by key range */
	if (range->lo && LsmKeyCmp(hdr.max_key, hdr.max_key_len, range->lo, range->lolen) < 0)
	{
		pfree(content);
		return false;
	}
	if (range->hi &&
		memcmp(hdr.min_key, range->hi, Min(hdr.min_key_len, (size_t) range->hilen)) > 0)
	{
		pfree(content);
		return false;
	}

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
					   "searching a fence page");
		if (is_data)
			break;
		if (++depth > 32)
			ereport(ERROR,
					(errcode(ERRCODE_INDEX_CORRUPTED),
					 errmsg("index \"%s\": run %u has a cyclic fence tree",
							RelationGetRelationName(index), c->ref.run_id),
					 errhint("REINDEX the index.")));
		len = LsmReadRunPage(index, &c->ref, child, LSM_PK_RUN_FENCE, content);
		is_header = false;
	}
	pfree(content);
	if (child < 1 || child > c->ndata)
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("index \"%s\": run %u points at data page %u of %u",
						RelationGetRelationName(index), c->ref.run_id, child, c->ndata),
				 errhint("REINDEX the index.")));
	c->cur = child;
	return true;
}

/*
 * Replace batch's content with the run's next data page in the scan
 * direction.  Returns false when the run has no more pages.
 */
bool
LsmRunCursorNext(Relation index, LsmRunCursor *c, LsmBatch *batch,
				 bool backward, const LsmRange *range)
{
	uint8		content[BLCKSZ];
	int			len;

	lsm_batch_clear(batch);
	if (c->done)
		return false;
	if (!c->started)
	{
		c->started = true;
		if (!LsmRunCursorStart(index, c, backward, range))
		{
			c->done = true;
			return false;
		}
	}
	else if (backward)
	{
		if (c->cur <= 1)
		{
			c->done = true;
			return false;
		}
		c->cur--;
	}
	else
	{
		if (c->cur >= c->ndata)
		{
			c->done = true;
			return false;
		}
		c->cur++;
	}

	len = LsmReadRunPage(index, &c->ref, c->cur, LSM_PK_RUN_DATA, content);
	LsmCheckStatus(index, lsm_batch_add_datapage(batch, content, len),
				   "reading a data page");
	return true;
}

/* Give merge source src (a run cursor) its next batch, or mark it done. */
void
LsmFeedRun(Relation index, LsmMerge *m, int src, LsmRunCursor *c,
		   bool backward, const LsmRange *range)
{
	LsmBatch   *batch = lsm_merge_source_batch(m, src);

	if (LsmRunCursorNext(index, c, batch, backward, range))
		lsm_merge_source_ready(m, src);
	else
		lsm_merge_source_done(m, src);
}

/*
 * Size-tiered merge after a flush, when there are more than lsm_am.max_runs
 * runs: merge the newest runs, pulling in the next older run while it is not
 * much larger than what is being merged (<= 2x) or while too many runs would
 * remain.  Runs thus form tiers of geometrically growing size and each entry
 * is rewritten O(log n) times, instead of every run being rewritten at every
 * merge.  (The Merge issue replaces this with leveled/tiered policies run by
 * background workers.)  REQUIRES: maintenance lock, slot lock exclusive.
 */
void
LsmMergeIfNeeded(Relation index, LsmSlot *slot)
{
	LsmMetaPageData meta;
	LsmRunRef  *runs;
	int			first;
	uint64		merged;

	LsmReadMeta(index, &meta, &runs);
	if ((int) meta.nruns <= lsm_max_runs)
		return;
	/* the manifest lists runs oldest first: merge runs[first .. nruns-1] */
	first = meta.nruns - 1;
	merged = runs[first].nentries;
	while (first > 0 &&
		   (runs[first - 1].nentries <= 2 * merged ||
			first > lsm_max_runs / 2))
	{
		first--;
		merged += runs[first].nentries;
	}
	if (first < (int) meta.nruns - 1)
		LsmMergeRuns(index, slot, first);
}

/* Merge every run into one (lsm_am.compact). */
void
LsmMergeAll(Relation index, LsmSlot *slot)
{
	LsmMergeRuns(index, slot, 0);
}

/*
 * Merge the runs from manifest position first to the newest: stream them
 * through the merging iterator into one new level-1 run, then publish it and
 * retire the inputs with one metapage record.  Memory is bounded by one page
 * per input run.  The retired runs' pages are not reused yet (see
 * doc/impl.md, "Merging").
 * REQUIRES: maintenance lock, slot lock exclusive (it extends the relation).
 */
void
LsmMergeRuns(Relation index, LsmSlot *slot, int first)
{
	LsmMetaPageData meta;
	LsmRunRef  *runs;
	LsmRunCursor *cursors;
	LsmMerge   *m = NULL;
	LsmRunWriter w;
	LsmRunRef	ref;
	LsmRange	range = {0};
	uint64		written = 0;
	Buffer		metabuf;
	GenericXLogState *state;
	Page		metapage;
	LsmMetaPageData *mp;
	int			nin;

	LsmReadMeta(index, &meta, &runs);
	if (first < 0 || first >= (int) meta.nruns)
		return;
	runs += first;
	nin = meta.nruns - first;
	if (nin < 2 && first == 0 && (nin == 0 || runs[0].level == 1))
		return;					/* already one run */
	cursors = palloc(sizeof(LsmRunCursor) * nin);
	for (int i = 0; i < nin; i++)
		LsmRunCursorInit(&cursors[i], &runs[i]);

	LsmCheckStatus(index, lsm_merge_create(nin, 0, NULL, 0, NULL, 0, &m),
				   "starting a merge");
	w.builder = NULL;
	PG_TRY();
	{
		LsmRunWriterBegin(&w, index, meta.next_run_id, true);
		for (;;)
		{
			const uint8 *key;
			size_t		len;
			int			need;
			LsmStatus	st = lsm_merge_next(m, &key, &len, &need);

			if (st == LSM_END)
				break;
			if (st == LSM_NEED_PAGE)
			{
				LsmFeedRun(index, m, need, &cursors[need], false, &range);
				continue;
			}
			LsmCheckStatus(index, st, "merging runs");
			LsmRunWriterAdd(&w, key, (int) len);
			written++;
		}
		if (written > 0)
			LsmRunWriterFinish(&w, &ref, 1);
		else
			LsmRunWriterAbandon(&w);
	}
	PG_CATCH();
	{
		LsmRunWriterAbandon(&w);
		lsm_merge_destroy(m);
		PG_RE_THROW();
	}
	PG_END_TRY();
	lsm_merge_destroy(m);

	/* publish: the inputs go, the output comes, in one record */
	metabuf = ReadBuffer(index, LSM_METAPAGE_BLKNO);
	LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
	state = GenericXLogStart(index);
	metapage = GenericXLogRegisterBuffer(state, metabuf, 0);
	mp = LsmPageGetMeta(metapage);
	{
		int			keep = 0;

		/* runs added since we read the manifest (none: we hold the locks) */
		for (int i = 0; i < (int) mp->nruns; i++)
		{
			bool		merged = false;

			for (int j = 0; j < nin; j++)
				if (mp->runs[i].run_id == runs[j].run_id)
					merged = true;
			if (!merged)
				mp->runs[keep++] = mp->runs[i];
		}
		mp->nruns = keep;
		if (written > 0)
		{
			mp->runs[mp->nruns++] = ref;
			mp->next_run_id++;
		}
		mp->nmerges++;
		((PageHeader) metapage)->pd_lower = LSM_CONTENT_OFFSET +
			offsetof(LsmMetaPageData, runs) + mp->nruns * sizeof(LsmRunRef);
	}
	GenericXLogFinish(state);
	UnlockReleaseBuffer(metabuf);
	pfree(cursors);
}
