/*
 * lsmcheck.c — page checks: what every page read and the metapage must
 * satisfy, and the one shape of a corruption ERROR.
 *
 * lsm_am does not rely on data checksums (off by default): every page it
 * reads is checked to be an lsm page of the expected kind, owner and format
 * version, and the metapage's manifest, free list, reservations and log heads
 * to lie inside the pages it accounts for.  The core's decoders validate the
 * content of run pages, the log replay (lsmshmem.c) every log page's checksum
 * and entry.  Whatever fails is reported by LsmReportCorruption.
 */
#include "postgres.h"
#include "access/xlog.h"

#include "storage/bufmgr.h"
#include "utils/rel.h"

#include "lsm.h"

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

	/*
	 * On a hot standby the primary does not see this query's snapshot
	 * (without hot_standby_feedback) and may have retired a run this scan
	 * listed and reused its pages: a well-formed lsm page that now belongs to
	 * something else is that, not corruption.  Cancel the query the way a
	 * recovery conflict does, so that it can be retried (btree's standby
	 * queries get the same error when the primary recycles pages they need).
	 */
	if (owner != 0 && RecoveryInProgress() && !PageIsNew(page) &&
		((PageHeader) page)->pd_special == BLCKSZ - MAXALIGN(sizeof(LsmPageOpaqueData)) &&
		op->page_id == LSM_PAGE_ID && op->version == LSM_FORMAT_VERSION &&
		(op->kind != kind || op->owner != owner))
		ereport(ERROR,
				(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
				 errmsg("canceling statement due to conflict with recovery"),
				 errdetail("Block %u of index \"%s\" was part of run %u when this query started; the primary has since retired that run and reused the page.",
						   BufferGetBlockNumber(buf), RelationGetRelationName(index), owner),
				 errhint("Retry the query. With hot_standby_feedback = on the primary keeps the pages that standby queries still read.")));
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
void
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
