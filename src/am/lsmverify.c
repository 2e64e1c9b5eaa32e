/*
 * lsmverify.c — lsm_am.verify(index, heapallindexed): amcheck's
 * bt_index_check for lsm indexes.
 *
 * Locks: AccessShareLock on the table and the index, as bt_index_check;
 * flushes, compactions, inserts and VACUUM go on.  The metapage is read once,
 * while the slot lock is held (shared: no insert, memtable switch or flush
 * publication in between), so its manifest, free list, reservations and log
 * chains are one consistent picture; the log chains and memtables are
 * compared under that same lock.  The runs of that manifest are then read
 * without it: a compaction may retire them meanwhile, but their pages are
 * not reused while this transaction's snapshot may need them (the rule
 * scans rely on; doc/page_format.md, "Page accounting").
 *
 * What is checked, the first problem being an index_corrupted ERROR that
 * names the block (LsmReportCorruption):
 *  - the metapage (LsmCheckMeta) and manifest: distinct run ids below
 *    next_run_id, levels in range, filters with columns, chains of distinct
 *    epochs;
 *  - ownership: every page accounted for belongs to one of the metapage, a
 *    log chain, a run, a free or a reserved extent, never two (what
 *    lsm_am.check_index counts, here on one metapage image);
 *  - every page read: kind, owner, format version, header (LsmCheckPage);
 *    log pages: checksum and every entry well-formed (lsmverifylog.c);
 *  - per run (this file): the header parses and agrees with the manifest;
 *    the fence tree is walked from the header: separators ascend within
 *    every fence block, each child lies within its parent's separators,
 *    fence levels descend by one, and the data pages are reached in order,
 *    each once; every data page decodes (the core checks order within it),
 *    its keys lie between its separators, above the previous page's keys
 *    and within the header's min and max; every key is a well-formed entry;
 *    no more entries than the header says were written; every key
 *    hashes to "maybe" in the run's bloom filter (no false negative);
 *  - levels whose runs must be disjoint (leveled policy): a NOTICE, not an
 *    ERROR, when they overlap, since a policy switched to leveled leaves
 *    them so until its next compaction (scans check, lsmchain.c);
 *  - memtables and log chains hold the same entries (lsmverifylog.c);
 *  - heapallindexed: every heap tuple visible to a fresh MVCC snapshot has
 *    its entry in the index (a bloom filter of every entry read, probed by
 *    a table_index_build_scan), and no entry points past the table's end.
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/relation.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/transam.h"
#include "access/xact.h"
#include "catalog/index.h"
#include "catalog/pg_class.h"
#include "commands/tablecmds.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "storage/lmgr.h"
#include "utils/acl.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "am/lsm_am.h"
#include "am/lsmverify_int.h"

/* Is a < b in the index's key order? (memcmp, the shorter prefix first) */
int
LsmVerifyCmp(const uint8 *a, size_t alen, const uint8 *b, size_t blen)
{
	int			c = memcmp(a, b, Min(alen, blen));

	if (c != 0)
		return c;
	return alen < blen ? -1 : alen > blen ? 1 : 0;
}

/*
 * One entry read from the index (run, memtable): well-formed, TID in
 * range, fingerprinted for heapallindexed.
 */
void
LsmVerifyEntry(LsmVerifyState *vs, BlockNumber blkno, const uint8 *key, size_t len,
			   bool fingerprint)
{
	ItemPointerData tid;

	if (!LsmSplitEntry(vs->desc, key, (int) len, NULL, NULL, &tid))
		LsmReportCorruption(vs->index, blkno, "The entry %s is not a well-formed key of this index.",
							LsmKeyToHex(key, Min((int) len, 64)));
	if (ItemPointerGetOffsetNumberNoCheck(&tid) < FirstOffsetNumber ||
		ItemPointerGetOffsetNumberNoCheck(&tid) > MaxHeapTuplesPerPage)
		LsmReportCorruption(vs->index, blkno, "The entry %s points at heap tuple (%u,%u), an impossible offset.",
							LsmKeyToHex(key, Min((int) len, 64)),
							ItemPointerGetBlockNumberNoCheck(&tid),
							ItemPointerGetOffsetNumberNoCheck(&tid));
	if (!BlockNumberIsValid(vs->max_heap_block) ||
		ItemPointerGetBlockNumberNoCheck(&tid) > vs->max_heap_block)
	{
		vs->max_heap_block = ItemPointerGetBlockNumberNoCheck(&tid);
		vs->max_heap_block_at = blkno;
	}
	if (fingerprint && vs->filter)
		bloom_add_element(vs->filter, (unsigned char *) key, len);
	if (fingerprint)
		vs->nentries++;
}

/* ------------------------------------------------------------------------
 * Runs
 * ------------------------------------------------------------------------ */

/* What the walk of one run carries along. */
typedef struct LsmVerifyRun
{
	LsmVerifyState *vs;
	const LsmRunRef *ref;
	LsmRunHeader hdr;
	uint32		next_data;		/* the data page the walk must reach next */
	uint8	   *prev;			/* the run's last key so far */
	size_t		prevlen;
	int64		count;			/* entries on its data pages */
	LsmBatch   *batch;
	uint8	   *data;			/* content of the data page being checked */
	/* filter: every block, contiguous; NULL: none */
	uint8	   *bloom;
	uint32		bloom_k;
	uint32		bloom_bpp;
} LsmVerifyRun;

#define RunBlock(rs, rel)	((rs)->ref->start + (rel))

/* Read the run's filter pages into one array of blocks, checking each. */
static void
LsmVerifyLoadBloom(LsmVerifyRun *rs)
{
	const LsmRunRef *ref = rs->ref;
	Relation	index = rs->vs->index;
	uint32		bpp = lsm_bloom_blocks_per_page(LSM_CONTENT_CAP);
	uint32		npages;
	uint8	   *content = palloc(BLCKSZ);

	if (ref->bloom_nblocks == 0)
		return;
	npages = (ref->bloom_nblocks + bpp - 1) / bpp;
	if (ref->bloom_start != rs->hdr.npages || ref->bloom_start + npages > ref->npages)
		LsmReportCorruption(index, LSM_METAPAGE_BLKNO,
							"Run %u has %u filter blocks from its page %u, its header %u pages, the manifest %u pages.",
							ref->run_id, ref->bloom_nblocks, ref->bloom_start,
							rs->hdr.npages, ref->npages);
	rs->bloom = MemoryContextAllocHuge(CurrentMemoryContext,
									   (Size) ref->bloom_nblocks * LSM_BLOOM_BLOCK_BYTES);
	rs->bloom_bpp = bpp;
	for (uint32 i = 0; i < npages; i++)
	{
		BlockNumber blk = RunBlock(rs, ref->bloom_start + i);
		int			len = LsmReadRunPage(index, ref, ref->bloom_start + i,
										 LSM_PK_RUN_BLOOM, content);
		LsmBloomPageInfo info;
		uint32		want = Min(bpp, ref->bloom_nblocks - i * bpp);

		LsmCheckStatus(index, lsm_bloom_page_parse(content, len, &info), blk,
					   "reading a bloom filter page");
		if (info.first_block != i * bpp || info.nblocks != want ||
			info.nblocks_total != ref->bloom_nblocks ||
			(i > 0 && info.k != rs->bloom_k))
			LsmReportCorruption(index, blk,
								"Filter page %u of run %u holds blocks %u to %u of %u (k %u); expected %u to %u of %u.",
								i, ref->run_id, info.first_block,
								info.first_block + info.nblocks - 1, info.nblocks_total,
								info.k, i * bpp, i * bpp + want - 1, ref->bloom_nblocks);
		rs->bloom_k = info.k;
		memcpy(rs->bloom + (Size) i * bpp * LSM_BLOOM_BLOCK_BYTES, info.blocks,
			   (Size) info.nblocks * LSM_BLOOM_BLOCK_BYTES);
	}
	pfree(content);
}

/* The run's filter must say "maybe" for key (read from block blkno). */
static void
LsmVerifyBloomKey(LsmVerifyRun *rs, const uint8 *key, size_t len)
{
	const uint8 *seg[INDEX_MAX_KEYS];
	int			seglen[INDEX_MAX_KEYS];
	int			bc = rs->ref->bloom_cols;
	uint64		h;
	uint32		block;

	if (rs->bloom == NULL)
		return;
	/* LsmVerifyEntry found it well-formed */
	(void) LsmSplitEntry(rs->vs->desc, key, (int) len, seg, seglen, NULL);
	h = lsm_hash64(key, (seg[bc - 1] + seglen[bc - 1]) - key, LSM_BLOOM_HASH_SEED);
	if (lsm_bloom_may_contain(rs->bloom, rs->ref->bloom_nblocks, rs->bloom_k, h))
		return;
	block = lsm_bloom_block_of(h, rs->ref->bloom_nblocks);
	LsmReportCorruption(rs->vs->index,
						RunBlock(rs, rs->ref->bloom_start + block / rs->bloom_bpp),
						"The bloom filter of run %u says its key %s is absent (filter block %u).",
						rs->ref->run_id, LsmKeyToHex(key, Min((int) len, 64)), block);
}

/*
 * Check data page rel, whose keys must lie in [lo, hi) (hi NULL: up to the
 * run's end).
 */
static void
LsmVerifyDataPage(LsmVerifyRun *rs, uint32 rel, const uint8 *lo, size_t lolen,
				  const uint8 *hi, size_t hilen)
{
	Relation	index = rs->vs->index;
	BlockNumber blk = RunBlock(rs, rel);
	int			len;
	size_t		n;

	if (rel != rs->next_data || rel > rs->hdr.ndata_pages)
		LsmReportCorruption(index, blk,
							"The fence tree of run %u reaches data page %u where page %u was due.",
							rs->ref->run_id, rel, rs->next_data);
	rs->next_data++;
	len = LsmReadRunPage(index, rs->ref, rel, LSM_PK_RUN_DATA, rs->data);
	lsm_batch_clear(rs->batch);
	LsmCheckStatus(index, lsm_batch_add_datapage(rs->batch, rs->data, len), blk,
				   "verifying a data page");
	n = lsm_batch_count(rs->batch);
	for (size_t i = 0; i < n; i++)
	{
		const uint8 *key;
		size_t		klen;

		lsm_batch_get(rs->batch, i, &key, &klen);
		LsmVerifyEntry(rs->vs, blk, key, klen, true);
		if (LsmVerifyCmp(key, klen, lo, lolen) < 0 ||
			(hi != NULL && LsmVerifyCmp(key, klen, hi, hilen) >= 0))
			LsmReportCorruption(index, blk,
								"The key %s of data page %u of run %u lies outside the range its fences give the page.",
								LsmKeyToHex(key, Min((int) klen, 64)), rel, rs->ref->run_id);
		if (rs->prev != NULL && LsmVerifyCmp(rs->prev, rs->prevlen, key, klen) >= 0)
			LsmReportCorruption(index, blk,
								"The first key of data page %u of run %u does not follow the keys of the page before.",
								rel, rs->ref->run_id);
		if (LsmVerifyCmp(key, klen, rs->hdr.min_key, rs->hdr.min_key_len) < 0 ||
			LsmVerifyCmp(key, klen, rs->hdr.max_key, rs->hdr.max_key_len) > 0)
			LsmReportCorruption(index, blk,
								"The key %s of data page %u lies outside the key range of run %u's header.",
								LsmKeyToHex(key, Min((int) klen, 64)), rel, rs->ref->run_id);
		LsmVerifyBloomKey(rs, key, klen);
		if (i + 1 == n)
		{
			rs->prev = repalloc(rs->prev ? rs->prev : palloc(1), Max(klen, 1));
			memcpy(rs->prev, key, klen);
			rs->prevlen = klen;
		}
	}
	rs->count += n;
	CHECK_FOR_INTERRUPTS();
}

/*
 * Walk the fence block of the header (rel 0) or of fence page rel, whose
 * separators must lie in [lo, hi) (NULL: unbounded), at fence level level
 * (0: the header's, whatever it says).
 */
static void
LsmVerifyFence(LsmVerifyRun *rs, uint32 rel, const uint8 *content, int len,
			   uint32 want_level, const uint8 *lo, size_t lolen,
			   const uint8 *hi, size_t hilen)
{
	Relation	index = rs->vs->index;
	BlockNumber blk = RunBlock(rs, rel);
	bool		is_header = rel == 0;
	size_t		n;
	uint32		level;
	const uint8 *key;
	size_t		klen;
	uint32		child;
	uint8	   *childbuf = NULL;

	LsmCheckStatus(index, lsm_fence_entry(content, len, is_header, 0, &n, &level,
										  &key, &klen, &child),
				   blk, "verifying a fence block");
	if (want_level != 0 && level != want_level)
		LsmReportCorruption(index, blk,
							"Fence page %u of run %u is at level %u, its parent expects level %u.",
							rel, rs->ref->run_id, level, want_level);
	for (size_t i = 0; i < n; i++)
	{
		const uint8 *next = NULL;
		size_t		nextlen = 0;
		uint32		nextchild;
		size_t		n2;
		uint32		l2;

		LsmCheckStatus(index, lsm_fence_entry(content, len, is_header, i, &n2, &l2,
											  &key, &klen, &child),
					   blk, "verifying a fence block");
		if (i + 1 < n)
			LsmCheckStatus(index, lsm_fence_entry(content, len, is_header, i + 1, &n2, &l2,
												  &next, &nextlen, &nextchild),
						   blk, "verifying a fence block");
		else if (hi != NULL)
		{
			next = hi;
			nextlen = hilen;
		}
		if ((lo != NULL && LsmVerifyCmp(key, klen, lo, lolen) < 0) ||
			(next != NULL && LsmVerifyCmp(key, klen, next, nextlen) >= 0))
			LsmReportCorruption(index, blk,
								"Separator %zu of fence page %u of run %u is out of order or outside its parent's range.",
								i, rel, rs->ref->run_id);
		if (level == 1)
			LsmVerifyDataPage(rs, child, key, klen, next, nextlen);
		else
		{
			int			clen;

			if (child <= rs->hdr.ndata_pages || child >= rs->hdr.npages)
				LsmReportCorruption(index, blk,
									"A fence of run %u points at page %u, not one of its fence pages %u to %u.",
									rs->ref->run_id, child, rs->hdr.ndata_pages + 1,
									rs->hdr.npages - 1);
			if (childbuf == NULL)
				childbuf = palloc(BLCKSZ);
			clen = LsmReadRunPage(index, rs->ref, child, LSM_PK_RUN_FENCE, childbuf);
			LsmVerifyFence(rs, child, childbuf, clen, level - 1, key, klen, next, nextlen);
		}
	}
	if (childbuf)
		pfree(childbuf);
}

/* Check one run of the manifest. */
static void
LsmVerifyRunPages(LsmVerifyState *vs, const LsmRunRef *ref)
{
	Relation	index = vs->index;
	LsmVerifyRun rs;
	uint8	   *header = palloc(BLCKSZ);
	int			hlen;

	memset(&rs, 0, sizeof(rs));
	rs.vs = vs;
	rs.ref = ref;
	rs.next_data = 1;
	rs.data = palloc(BLCKSZ);
	if (ref->start + ref->npages > vs->file_blocks)
		LsmReportCorruption(index, ref->start,
							"Run %u occupies blocks %u to %u, the file has %u blocks.",
							ref->run_id, ref->start, ref->start + ref->npages - 1,
							vs->file_blocks);
	hlen = LsmReadRunPage(index, ref, 0, LSM_PK_RUN_HEADER, header);
	LsmCheckStatus(index, lsm_runheader_parse(header, hlen, &rs.hdr), ref->start,
				   "verifying a run header");
	if (rs.hdr.npages > ref->npages)
		LsmReportCorruption(index, ref->start,
							"The header of run %u counts %u pages, the manifest %u.",
							ref->run_id, rs.hdr.npages, ref->npages);
	LsmVerifyLoadBloom(&rs);
	LsmCheckStatus(index, lsm_batch_create(&rs.batch), InvalidBlockNumber,
				   "creating a batch");
	PG_TRY();
	{
		LsmVerifyFence(&rs, 0, header, hlen, 0, NULL, 0, NULL, 0);
	}
	PG_FINALLY();
	{
		lsm_batch_destroy(rs.batch);
	}
	PG_END_TRY();
	if (rs.next_data != rs.hdr.ndata_pages + 1)
		LsmReportCorruption(index, ref->start,
							"The fence tree of run %u reaches %u of its %u data pages.",
							ref->run_id, rs.next_data - 1, rs.hdr.ndata_pages);
	/*
	 * Only VACUUM removes entries from a run, so it never holds more than its
	 * header says were written.  (Fewer than the manifest's live count is no
	 * proof: a VACUUM running beside us removes dead entries from the pages
	 * before it lowers the count in the metapage we read before.)
	 */
	if ((uint64) rs.count > rs.hdr.nentries)
		LsmReportCorruption(index, ref->start,
							"Run %u holds %lld entries; its header says %llu were written.",
							ref->run_id, (long long) rs.count,
							(unsigned long long) rs.hdr.nentries);
	pfree(header);
	pfree(rs.data);
	if (rs.bloom)
		pfree(rs.bloom);
	if (rs.prev)
		pfree(rs.prev);
}

/*
 * Runs of one level that must be disjoint but overlap: a NOTICE (a policy
 * switched to leveled leaves them so; its next compaction repairs it).
 */
static void
LsmVerifyLevels(LsmVerifyState *vs, const LsmMetaPageData *meta)
{
	if (LsmCompactionPolicyOf(vs->index) != LSM_POLICY_LEVELED)
		return;
	for (uint32 i = 0; i < meta->nruns; i++)
	{
		const LsmRunRef *a = &meta->runs[i];
		uint8	   *amin,
				   *amax;
		int			aminlen,
					amaxlen;

		if (a->level == 0)
			continue;
		LsmReadRunBounds(vs->index, a, &amin, &aminlen, &amax, &amaxlen);
		for (uint32 j = i + 1; j < meta->nruns; j++)
		{
			const LsmRunRef *b = &meta->runs[j];
			uint8	   *bmin,
					   *bmax;
			int			bminlen,
						bmaxlen;

			if (b->level != a->level)
				continue;
			LsmReadRunBounds(vs->index, b, &bmin, &bminlen, &bmax, &bmaxlen);
			if (LsmVerifyCmp(amin, aminlen, bmax, bmaxlen) <= 0 &&
				LsmVerifyCmp(bmin, bminlen, amax, amaxlen) <= 0)
				ereport(NOTICE,
						(errmsg("index \"%s\": runs %u and %u of level %u overlap",
								RelationGetRelationName(vs->index), a->run_id,
								b->run_id, a->level),
						 errdetail("The leveled policy keeps the runs of a level disjoint; a policy switched to leveled leaves them overlapping until its next compaction."),
						 errhint("lsm_am.compact() merges them.")));
			pfree(bmin);
			pfree(bmax);
		}
		pfree(amin);
		pfree(amax);
	}
}

/* The manifest's own consistency, beyond LsmCheckMeta's bounds. */
static void
LsmVerifyManifest(LsmVerifyState *vs, const LsmMetaPageData *meta)
{
	Relation	index = vs->index;

	for (uint32 i = 0; i < meta->nruns; i++)
	{
		const LsmRunRef *r = &meta->runs[i];

		if (r->run_id >= meta->next_run_id || r->level > LSM_PICK_MAX_LEVEL ||
			r->bloom_cols > vs->desc->ncols ||
			(r->bloom_nblocks > 0) != (r->bloom_cols > 0))
			LsmReportCorruption(index, LSM_METAPAGE_BLKNO,
								"Run %u of the manifest (level %u, filter of %u columns in %u blocks) is implausible; the next run id is %u.",
								r->run_id, r->level, r->bloom_cols, r->bloom_nblocks,
								meta->next_run_id);
		for (uint32 j = 0; j < i; j++)
			if (meta->runs[j].run_id == r->run_id)
				LsmReportCorruption(index, LSM_METAPAGE_BLKNO,
									"Run id %u appears twice in the manifest.", r->run_id);
	}
	for (int i = -1; i < (int) meta->nimm; i++)
	{
		uint32		epoch = i < 0 ? meta->active.epoch : meta->imm[i].epoch;

		if (epoch >= meta->next_epoch)
			LsmReportCorruption(index, LSM_METAPAGE_BLKNO,
								"A log chain has epoch %u, the next epoch is %u.",
								epoch, meta->next_epoch);
		for (int j = -1; j < i; j++)
			if ((j < 0 ? meta->active.epoch : meta->imm[j].epoch) == epoch)
				LsmReportCorruption(index, LSM_METAPAGE_BLKNO,
									"Two log chains have epoch %u.", epoch);
	}
}

/*
 * Every page below nblocks belongs to at most one owner: the metapage, a log
 * chain (chains[]), a run, a free or a reserved extent.
 */
static void
LsmVerifyOwnership(LsmVerifyState *vs, const LsmMetaPageData *meta,
				   BlockNumber **chains, const int *nchain)
{
	uint8	   *owner = palloc0(meta->nblocks);
	static const char *const what[] = {"", "the metapage", "a log chain", "a run",
	"a free extent", "a reserved extent"};

#define LSM_OWN(blk, k) \
	do { \
		BlockNumber b_ = (blk); \
		if (b_ >= meta->nblocks) \
			LsmReportCorruption(vs->index, b_, "%s claims a page beyond the %u accounted for.", \
								what[(k)], meta->nblocks); \
		if (owner[b_] != 0) \
			LsmReportCorruption(vs->index, b_, "The page belongs to %s and to %s.", \
								what[owner[b_]], what[(k)]); \
		owner[b_] = (k); \
	} while (0)

	LSM_OWN(LSM_METAPAGE_BLKNO, 1);
	for (int c = 0; c <= (int) meta->nimm; c++)
		for (int i = 0; i < nchain[c]; i++)
			LSM_OWN(chains[c][i], 2);
	for (uint32 r = 0; r < meta->nruns; r++)
		for (uint32 i = 0; i < meta->runs[r].npages; i++)
			LSM_OWN(meta->runs[r].start + i, 3);
	for (uint32 f = 0; f < meta->nfree; f++)
		for (uint32 i = 0; i < meta->free[f].npages; i++)
			LSM_OWN(meta->free[f].start + i, 4);
	for (int v = 0; v < (int) lengthof(meta->resv); v++)
		for (uint32 i = 0; i < meta->resv[v].npages; i++)
			LSM_OWN(meta->resv[v].start + i, 5);
#undef LSM_OWN
	pfree(owner);
}

/* ------------------------------------------------------------------------
 * heapallindexed
 * ------------------------------------------------------------------------ */

/* table_index_build_scan callback: the heap tuple's entry must be indexed. */
static void
LsmVerifyHeapCallback(Relation index, ItemPointer tid, Datum *values,
					  bool *isnull, bool tupleIsAlive, void *state)
{
	LsmVerifyState *vs = (LsmVerifyState *) state;

	resetStringInfo(&vs->buf);
	LsmEncodeEntry(vs->desc, values, isnull, tid, &vs->buf);
	vs->heap_tuples++;
	if (bloom_lacks_element(vs->filter, (unsigned char *) vs->buf.data, vs->buf.len))
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("index \"%s\" lacks an entry for heap tuple (%u,%u) of table \"%s\"",
						RelationGetRelationName(index),
						ItemPointerGetBlockNumber(tid), ItemPointerGetOffsetNumber(tid),
						RelationGetRelationName(vs->heap)),
				 errdetail_internal("No memtable or run holds the entry %s.",
									LsmKeyToHex((uint8 *) vs->buf.data, Min(vs->buf.len, 64))),
				 errhint("REINDEX the index.")));
}

static void
LsmVerifyHeap(LsmVerifyState *vs, Snapshot snapshot)
{
	IndexInfo  *ii = BuildIndexInfo(vs->index);
	TableScanDesc scan;

	/* as amcheck: an MVCC scan; only tuples visible to it must be indexed */
	ii->ii_Concurrent = true;
	ii->ii_Unique = false;
	ii->ii_ExclusionOps = NULL;
	ii->ii_ExclusionProcs = NULL;
	ii->ii_ExclusionStrats = NULL;
	initStringInfo(&vs->buf);
	scan = table_beginscan_strat(vs->heap, snapshot, 0, NULL, true, true);
	table_index_build_scan(vs->heap, vs->index, ii, true, false,
						   LsmVerifyHeapCallback, vs, scan);
}

/* ------------------------------------------------------------------------
 * lsm_am.verify
 * ------------------------------------------------------------------------ */

PG_FUNCTION_INFO_V1(lsm_verify);

Datum
lsm_verify(PG_FUNCTION_ARGS)
{
	Oid			indexoid = PG_GETARG_OID(0);
	bool		heapallindexed = PG_GETARG_BOOL(1);
	Oid			heapoid;
	Relation	heap;
	Relation	index;
	LsmVerifyState vs;
	LsmMetaPageData *meta = palloc(sizeof(LsmMetaPageData));
	BlockNumber *chains[1 + LSM_MAX_IMM];
	int			nchain[1 + LSM_MAX_IMM];
	Snapshot	snapshot = InvalidSnapshot;
	BlockNumber heap_blocks;

	LsmCheckPreloaded();

	/* as amcheck: the table first, then the index, AccessShareLock on both */
	heapoid = IndexGetRelation(indexoid, true);
	heap = OidIsValid(heapoid) ? table_open(heapoid, AccessShareLock) : NULL;
	index = try_relation_open(indexoid, AccessShareLock);
	if (index == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation with OID %u does not exist", indexoid)));
	if (index->rd_rel->relkind != RELKIND_INDEX ||
		index->rd_indam == NULL || index->rd_indam->ambuild != lsmbuild)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not an lsm index", RelationGetRelationName(index)),
				 errhint("Pass an index created with USING lsm (the index of each partition for a partitioned one).")));
	if (heap == NULL || heapoid != IndexGetRelation(indexoid, false))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("could not open the table of index \"%s\"",
						RelationGetRelationName(index))));
	/* EXECUTE is granted like amcheck's; errors show keys: SELECT too */
	if (pg_class_aclcheck(heapoid, GetUserId(), ACL_SELECT) != ACLCHECK_OK)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied for index \"%s\"", RelationGetRelationName(index)),
				 errhint("Verifying an lsm index requires SELECT on its table.")));
	if (RELATION_IS_OTHER_TEMP(index))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot verify temporary indexes of other sessions")));
	if (!index->rd_index->indisvalid)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot verify index \"%s\"", RelationGetRelationName(index)),
				 errdetail("Index is not valid.")));

	memset(&vs, 0, sizeof(vs));
	vs.index = index;
	vs.heap = heap;
	vs.heapallindexed = heapallindexed;
	vs.desc = &LsmGetRelCache(index)->desc;
	vs.max_heap_block = InvalidBlockNumber;
	vs.max_heap_block_at = InvalidBlockNumber;

	if (heapallindexed)
	{
		/*
		 * The snapshot first: every tuple visible to it was committed (or is
		 * ours, pushed below) before its entry reached the index we read.
		 */
		snapshot = RegisterSnapshot(GetTransactionSnapshot());
		if (IsolationUsesXactSnapshot() && index->rd_index->indcheckxmin &&
			!TransactionIdPrecedes(HeapTupleHeaderGetXmin(index->rd_indextuple->t_data),
								   snapshot->xmin))
			ereport(ERROR,
					(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
					 errmsg("index \"%s\" cannot be verified using transaction snapshot",
							RelationGetRelationName(index))));
	}
	/* this backend's own entries of the index are in it first */
	LsmPushPending(index);
	lsm_manifest_readers++;
	PG_TRY();
	{
		/* metapage, log chains and memtables: one picture under the slot lock */
		LsmVerifyLogs(&vs, meta, chains, nchain);
		vs.file_blocks = RelationGetNumberOfBlocks(index);
		LsmVerifyManifest(&vs, meta);
		LsmVerifyOwnership(&vs, meta, chains, nchain);
		for (uint32 r = 0; r < meta->nruns; r++)
			LsmVerifyRunPages(&vs, &meta->runs[r]);
		LsmVerifyLevels(&vs, meta);
	}
	PG_FINALLY();
	{
		lsm_manifest_readers--;
	}
	PG_END_TRY();

	/* the table only grows under our lock: an entry past its end is wrong */
	heap_blocks = RelationGetNumberOfBlocks(heap);
	if (BlockNumberIsValid(vs.max_heap_block) && vs.max_heap_block >= heap_blocks)
		LsmReportCorruption(index, vs.max_heap_block_at,
							"An entry points at block %u of table \"%s\", which has %u blocks.",
							vs.max_heap_block, RelationGetRelationName(heap), heap_blocks);
	if (heapallindexed)
	{
		LsmVerifyHeap(&vs, snapshot);
		UnregisterSnapshot(snapshot);
		bloom_free(vs.filter);
	}
	relation_close(index, AccessShareLock);
	table_close(heap, AccessShareLock);
	PG_RETURN_VOID();
}
