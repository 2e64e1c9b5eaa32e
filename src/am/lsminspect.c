/*
 * lsminspect.c — page inspection, pageinspect's counterpart for lsm indexes
 * (superuser only): lsm_am.metapage, lsm_am.manifest, lsm_am.page_header and
 * lsm_am.page_items.
 *
 * Every function works on a copy of the page taken under a share lock and
 * decodes nothing it has not validated first: the special space is read at
 * its fixed place whatever pd_special says, metapage counts are clamped to
 * their arrays, run pages are decoded by the core (which bounds-checks every
 * entry), log entries are checked against pd_lower.  A page that cannot be
 * decoded is an index_corrupted ERROR naming its block, never a crash.
 */
#include "postgres.h"

#include "access/relation.h"
#include "catalog/pg_class.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "utils/builtins.h"
#include "utils/pg_lsn.h"
#include "utils/rel.h"

#include "am/lsm_am.h"

#define LSM_SPECIAL_OFFSET	(BLCKSZ - MAXALIGN(sizeof(LsmPageOpaqueData)))

/* A palloc'd copy of block blkno, taken under a share lock. */
static Page
LsmInspectRead(Relation index, int64 blkno)
{
	BlockNumber nblocks = RelationGetNumberOfBlocks(index);
	Page		copy = palloc(BLCKSZ);
	Buffer		buf;

	if (blkno < 0 || blkno >= (int64) nblocks)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("block number " INT64_FORMAT " is out of range for index \"%s\" of %u blocks",
						blkno, RelationGetRelationName(index), nblocks)));
	buf = ReadBufferExtended(index, MAIN_FORKNUM, (BlockNumber) blkno, RBM_NORMAL, NULL);
	LockBuffer(buf, BUFFER_LOCK_SHARE);
	memcpy(copy, BufferGetPage(buf), BLCKSZ);
	UnlockReleaseBuffer(buf);
	return copy;
}

/* The special space at its fixed place (pd_special may be garbage). */
static LsmPageOpaque
LsmInspectOpaque(Page page)
{
	return (LsmPageOpaque) ((char *) page + LSM_SPECIAL_OFFSET);
}

/* Is the page an lsm page whose header can be trusted for decoding? */
static bool
LsmInspectSane(Page page)
{
	PageHeader	ph = (PageHeader) page;
	LsmPageOpaque op = LsmInspectOpaque(page);

	return !PageIsNew(page) && ph->pd_special == LSM_SPECIAL_OFFSET &&
		op->page_id == LSM_PAGE_ID && op->version == LSM_FORMAT_VERSION &&
		ph->pd_lower >= LSM_CONTENT_OFFSET && ph->pd_lower <= ph->pd_special;
}

static const char *
LsmInspectKindName(Page page)
{
	if (PageIsNew(page))
		return "new";
	if (LsmInspectOpaque(page)->page_id != LSM_PAGE_ID)
		return "unknown";
	switch (LsmInspectOpaque(page)->kind)
	{
		case LSM_PK_META:
			return "meta";
		case LSM_PK_LOG:
			return "log";
		case LSM_PK_RUN_HEADER:
			return "run header";
		case LSM_PK_RUN_DATA:
			return "run data";
		case LSM_PK_RUN_FENCE:
			return "run fence";
		case LSM_PK_RUN_BLOOM:
			return "run bloom";
	}
	return "unknown";
}

/* A key as text: the columns' output (LsmKeyToText), or hex if malformed. */
static Datum
LsmInspectKey(Relation index, BlockNumber blkno, const uint8 *key, size_t len, bool *tidok,
			  ItemPointer tid)
{
	*tidok = LsmSplitEntry(&LsmGetRelCache(index)->desc, key, (int) len, NULL, NULL, tid);
	if (!*tidok)
		return CStringGetTextDatum(psprintf("\\x%s", LsmKeyToHex(key, (int) len)));
	return PointerGetDatum(LsmKeyToText(index, blkno, key, (int) len));
}

static char *
LsmHex64(uint64 v)
{
	return psprintf("%016llx", (unsigned long long) v);
}

PG_FUNCTION_INFO_V1(lsm_inspect_metapage);

/* lsm_am.metapage(index): the metapage's fields, as stored. */
Datum
lsm_inspect_metapage(PG_FUNCTION_ARGS)
{
	Relation	index = LsmOpenIndex(PG_GETARG_OID(0), AccessShareLock, LSM_OPEN_INSPECT);
	Page		page = LsmInspectRead(index, LSM_METAPAGE_BLKNO);
	LsmMetaPageData *m = LsmPageGetMeta(page);
	TupleDesc	tupdesc;
	Datum		values[16];
	bool		nulls[16] = {0};
	int			i = 0;

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	values[i++] = CStringGetTextDatum(psprintf("%08x", m->magic));
	values[i++] = Int64GetDatum(m->version);
	values[i++] = CStringGetTextDatum(LsmHex64(m->key_fingerprint));
	values[i++] = CStringGetTextDatum(LsmHex64(m->instance_id));
	values[i++] = Int64GetDatum(m->next_run_id);
	values[i++] = Int64GetDatum(m->next_epoch);
	values[i++] = Int64GetDatum(m->nblocks);
	values[i++] = Int64GetDatum(m->nruns);
	values[i++] = Int64GetDatum(m->nfree);
	values[i++] = Int64GetDatum(m->nimm);
	values[i++] = Int64GetDatum((int64) m->nflushes);
	values[i++] = Int64GetDatum((int64) m->nmerges);
	values[i++] = Int64GetDatum((int64) m->nmoves);
	values[i++] = Int64GetDatum((int64) m->pages_flushed);
	values[i++] = Int64GetDatum((int64) m->pages_compacted);
	values[i++] = Int64GetDatum((int64) m->leaked_pages);
	relation_close(index, AccessShareLock);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}

/* The smallest and largest key of a run, from its header; false if unreadable. */
static bool
LsmInspectRunBounds(Relation index, const LsmRunRef *r, Datum *min, Datum *max)
{
	Page		page;
	LsmRunHeader hdr;
	bool		ok1,
				ok2;
	ItemPointerData tid;

	if (r->start >= RelationGetNumberOfBlocks(index))
		return false;
	page = LsmInspectRead(index, r->start);
	if (!LsmInspectSane(page) || LsmInspectOpaque(page)->kind != LSM_PK_RUN_HEADER ||
		LsmInspectOpaque(page)->owner != r->run_id ||
		lsm_runheader_parse(LsmPageContent(page), LsmPageContentLen(page), &hdr) != LSM_OK)
		return false;
	*min = LsmInspectKey(index, r->start, hdr.min_key, hdr.min_key_len, &ok1, &tid);
	*max = LsmInspectKey(index, r->start, hdr.max_key, hdr.max_key_len, &ok2, &tid);
	return true;
}

PG_FUNCTION_INFO_V1(lsm_inspect_manifest);

/*
 * lsm_am.manifest(index): what owns the pages, one row each: the runs, the
 * log chains (head and pages), the free and the reserved extents.
 */
Datum
lsm_inspect_manifest(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	Relation	index = LsmOpenIndex(PG_GETARG_OID(0), AccessShareLock, LSM_OPEN_INSPECT);
	Page		page = LsmInspectRead(index, LSM_METAPAGE_BLKNO);
	LsmMetaPageData *m = LsmPageGetMeta(page);
	uint32		nruns = Min(m->nruns, LSM_MAX_RUNS);
	uint32		nfree = Min(m->nfree, LSM_MAX_FREE);
	uint32		nimm = Min(m->nimm, LSM_MAX_IMM);

	InitMaterializedSRF(fcinfo, 0);

	/*
	 * kind, id, level, start_block, pages, entries, bloom_columns,
	 * bloom_start, bloom_blocks, reuse_after, smallest_key, largest_key
	 */
#define LSM_ROW(kind) \
	Datum		values[12]; \
	bool		nulls[12]; \
	memset(nulls, true, sizeof(nulls)); \
	values[0] = CStringGetTextDatum(kind); \
	nulls[0] = false
#define LSM_SET(i, v)	(values[(i)] = (v), nulls[(i)] = false)

	for (uint32 i = 0; i < nruns; i++)
	{
		const LsmRunRef *r = &m->runs[i];

		LSM_ROW("run");
		LSM_SET(1, Int64GetDatum(r->run_id));
		LSM_SET(2, Int32GetDatum(r->level));
		LSM_SET(3, Int64GetDatum(r->start));
		LSM_SET(4, Int64GetDatum(r->npages));
		LSM_SET(5, Int64GetDatum((int64) r->nentries));
		LSM_SET(6, Int32GetDatum(r->bloom_cols));
		LSM_SET(7, Int64GetDatum(r->bloom_start));
		LSM_SET(8, Int64GetDatum(r->bloom_nblocks));
		if (LsmInspectRunBounds(index, r, &values[10], &values[11]))
			nulls[10] = nulls[11] = false;
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	for (int c = 0; c <= (int) nimm; c++)
	{
		LsmLogChain ch = c < (int) nimm ? m->imm[c] : m->active;
		BlockNumber nblocks = RelationGetNumberOfBlocks(index);

		LSM_ROW(c < (int) nimm ? "immutable log" : "log");
		LSM_SET(1, Int64GetDatum(ch.epoch));
		if (BlockNumberIsValid(ch.head))
			LSM_SET(3, Int64GetDatum(ch.head));
		if (!BlockNumberIsValid(ch.head))
			LSM_SET(4, Int64GetDatum(0));
		else
		{
			/* follow the chain while its pages are its own, at most nblocks */
			BlockNumber blk = ch.head;
			int64		n = 0;

			while (blk < nblocks && n < (int64) nblocks)
			{
				Page		p = LsmInspectRead(index, blk);

				if (!LsmInspectSane(p) || !LsmIsLogPageOf(p, ch.epoch))
					break;
				n++;
				blk = LsmInspectOpaque(p)->next;
				pfree(p);
			}
			LSM_SET(4, Int64GetDatum(n));
		}
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	for (uint32 i = 0; i < nfree; i++)
	{
		LSM_ROW("free");
		LSM_SET(3, Int64GetDatum(m->free[i].start));
		LSM_SET(4, Int64GetDatum(m->free[i].npages));
		LSM_SET(9, CStringGetTextDatum(m->free[i].reuse_after == LSM_REUSE_HELD ? "held" :
									   psprintf(UINT64_FORMAT, m->free[i].reuse_after)));
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	for (int i = 0; i < (int) lengthof(m->resv); i++)
	{
		if (m->resv[i].npages == 0)
			continue;
		{
			LSM_ROW("reserved");
			LSM_SET(1, Int64GetDatum(i));
			LSM_SET(3, Int64GetDatum(m->resv[i].start));
			LSM_SET(4, Int64GetDatum(m->resv[i].npages));
			tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
		}
	}
#undef LSM_ROW
#undef LSM_SET
	relation_close(index, AccessShareLock);
	return (Datum) 0;
}

/*
 * Entries (data, log), separators (header, fence) or filter blocks (bloom)
 * of a sane page; -1 if its content does not decode.
 */
static int
LsmInspectCount(Page page)
{
	const uint8 *content = LsmPageContent(page);
	int			len = LsmPageContentLen(page);
	size_t		n = 0;
	uint32		level;
	const uint8 *key;
	size_t		klen;
	uint32		child;
	LsmBloomPageInfo info;
	int			pos = 0;

	switch (LsmInspectOpaque(page)->kind)
	{
		case LSM_PK_RUN_DATA:
			if (lsm_datapage_check(content, len) != LSM_OK)
				return -1;
			return content[0] | (content[1] << 8);
		case LSM_PK_RUN_HEADER:
		case LSM_PK_RUN_FENCE:
			if (lsm_fence_entry(content, len, LsmInspectOpaque(page)->kind == LSM_PK_RUN_HEADER,
								0, &n, &level, &key, &klen, &child) != LSM_OK)
				return -1;
			return (int) n;
		case LSM_PK_RUN_BLOOM:
			if (lsm_bloom_page_parse(content, len, &info) != LSM_OK)
				return -1;
			return (int) info.nblocks;
		case LSM_PK_LOG:
			while (pos < len)
			{
				uint16		elen;

				if (len - pos < (int) LSM_LOG_ENTRY_HDR)
					return -1;
				memcpy(&elen, content + pos, LSM_LOG_ENTRY_HDR);
				pos += LSM_LOG_ENTRY_HDR;
				if (elen == 0 || elen > len - pos)
					return -1;
				pos += elen;
				n++;
			}
			return (int) n;
		case LSM_PK_META:
			return (int) Min(LsmPageGetMeta(page)->nruns, LSM_MAX_RUNS);
	}
	return -1;
}

PG_FUNCTION_INFO_V1(lsm_inspect_page_header);

/* lsm_am.page_header(index, blkno): one page's header and special space. */
Datum
lsm_inspect_page_header(PG_FUNCTION_ARGS)
{
	Relation	index = LsmOpenIndex(PG_GETARG_OID(0), AccessShareLock, LSM_OPEN_INSPECT);
	int64		blkno = PG_GETARG_INT64(1);
	Page		page = LsmInspectRead(index, blkno);
	PageHeader	ph = (PageHeader) page;
	LsmPageOpaque op = LsmInspectOpaque(page);
	bool		sane = LsmInspectSane(page);
	TupleDesc	tupdesc;
	Datum		values[14];
	bool		nulls[14] = {0};
	int			count = sane ? LsmInspectCount(page) : -1;

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	values[0] = Int64GetDatum(blkno);
	values[1] = CStringGetTextDatum(LsmInspectKindName(page));
	values[2] = Int32GetDatum(op->version);
	values[3] = Int64GetDatum(op->owner);
	values[4] = Int64GetDatum(op->next);
	nulls[4] = op->kind != LSM_PK_LOG || !BlockNumberIsValid(op->next);
	values[5] = Int32GetDatum(op->checksum);
	values[6] = BoolGetDatum(sane && op->checksum == LsmLogPageChecksum(page));
	nulls[6] = !sane || op->kind != LSM_PK_LOG || op->checksum == 0;
	values[7] = LSNGetDatum(PageGetLSN(page));
	values[8] = Int32GetDatum(ph->pd_flags);
	values[9] = Int32GetDatum(ph->pd_lower);
	values[10] = Int32GetDatum(ph->pd_upper);
	values[11] = Int32GetDatum(ph->pd_special);
	values[12] = Int32GetDatum(count);
	nulls[12] = count < 0;
	values[13] = BoolGetDatum(sane && count >= 0);
	relation_close(index, AccessShareLock);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}

PG_FUNCTION_INFO_V1(lsm_inspect_page_items);

/*
 * lsm_am.page_items(index, blkno): the entries of a data or log page, the
 * separators of a run header or fence page (with their child, a page of the
 * run relative to its header).  Other kinds have no items.
 */
Datum
lsm_inspect_page_items(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	Relation	index = LsmOpenIndex(PG_GETARG_OID(0), AccessShareLock, LSM_OPEN_INSPECT);
	int64		blkno = PG_GETARG_INT64(1);
	Page		page = LsmInspectRead(index, blkno);
	uint16		kind = LsmInspectOpaque(page)->kind;
	const uint8 *content = LsmPageContent(page);
	int			len;
	Datum		values[4];
	bool		nulls[4];
	bool		tidok;
	ItemPointerData tid;

	InitMaterializedSRF(fcinfo, 0);
	if (!LsmInspectSane(page))
		LsmReportCorruption(index, (BlockNumber) blkno,
							"The page is not an lsm page of format version %u (special space at %u, page id %04x, version %u, pd_lower %u).",
							LSM_FORMAT_VERSION, ((PageHeader) page)->pd_special,
							LsmInspectOpaque(page)->page_id, LsmInspectOpaque(page)->version,
							((PageHeader) page)->pd_lower);
	len = LsmPageContentLen(page);
	if (kind == LSM_PK_RUN_DATA)
	{
		LsmBatch   *b;
		LsmStatus	st;

		LsmCheckStatus(index, lsm_batch_create(&b), InvalidBlockNumber, "creating a batch");
		st = lsm_batch_add_datapage(b, content, len);
		PG_TRY();
		{
			LsmCheckStatus(index, st, (BlockNumber) blkno, "decoding a data page");
			for (size_t i = 0; i < lsm_batch_count(b); i++)
			{
				const uint8 *key;
				size_t		klen;

				lsm_batch_get(b, i, &key, &klen);
				memset(nulls, false, sizeof(nulls));
				values[0] = Int32GetDatum((int32) i + 1);
				values[1] = LsmInspectKey(index, blkno, key, klen, &tidok, &tid);
				values[2] = PointerGetDatum(&tid);
				nulls[2] = !tidok;
				nulls[3] = true;
				tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
			}
		}
		PG_FINALLY();
		{
			lsm_batch_destroy(b);
		}
		PG_END_TRY();
	}
	else if (kind == LSM_PK_RUN_HEADER || kind == LSM_PK_RUN_FENCE)
	{
		size_t		n = 1;

		for (size_t i = 0; i < n; i++)
		{
			uint32		level;
			const uint8 *key;
			size_t		klen;
			uint32		child;

			LsmCheckStatus(index, lsm_fence_entry(content, len, kind == LSM_PK_RUN_HEADER, i,
												  &n, &level, &key, &klen, &child),
						   (BlockNumber) blkno, "decoding a fence block");
			memset(nulls, false, sizeof(nulls));
			values[0] = Int32GetDatum((int32) i + 1);
			values[1] = LsmInspectKey(index, blkno, key, klen, &tidok, &tid);
			values[2] = PointerGetDatum(&tid);
			nulls[2] = !tidok;
			values[3] = Int64GetDatum(child);
			tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
		}
	}
	else if (kind == LSM_PK_LOG)
	{
		int			pos = 0;
		int			i = 0;

		while (pos < len)
		{
			uint16		elen;

			if (len - pos < (int) LSM_LOG_ENTRY_HDR)
				LsmReportCorruption(index, (BlockNumber) blkno,
									"A log entry header is cut at offset %d.", pos);
			memcpy(&elen, content + pos, LSM_LOG_ENTRY_HDR);
			pos += LSM_LOG_ENTRY_HDR;
			if (elen == 0 || elen > len - pos)
				LsmReportCorruption(index, (BlockNumber) blkno,
									"A log entry of %u bytes at offset %d runs past the page's %d bytes.",
									elen, pos, len);
			memset(nulls, false, sizeof(nulls));
			values[0] = Int32GetDatum(++i);
			values[1] = LsmInspectKey(index, blkno, content + pos, elen, &tidok, &tid);
			values[2] = PointerGetDatum(&tid);
			nulls[2] = !tidok;
			nulls[3] = true;
			tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
			pos += elen;
		}
	}
	relation_close(index, AccessShareLock);
	return (Datum) 0;
}
