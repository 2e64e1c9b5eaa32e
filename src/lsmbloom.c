/*
 * lsmbloom.c — bloom filters of runs.
 *
 * Writing: the core's run builder owns the run's filter.  For every entry
 * the shim tells it how many bytes the leading bloom_columns columns take
 * (the encoded bytes, so equal values hash equally); the builder hashes them
 * (xxHash64) into a blocked filter (src/core/bloom.cc) sized for the run's
 * expected entries, and emits the filter's pages after the run's header and
 * fence pages, which the run writer places like any other.  The manifest
 * entry records where they start and how many blocks the filter has; a run
 * with bloom_nblocks = 0 has no filter.
 *
 * Probing (lsmrun.c, through the backend cache below): a scan with equality
 * on at least the filter's columns hashes the same prefix and probes the one
 * block the hash maps to; "absent" skips the run without touching its fence
 * or data pages.
 */
#include "postgres.h"

#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "utils/rel.h"

#include "lsm.h"


/* Columns the filters of this index hash (reloption bloom_columns). */
static int
LsmBloomColumnsOf(Relation index, int ncols)
{
	LsmOptions *opts = (LsmOptions *) index->rd_options;
	int			c = opts ? opts->bloom_columns : 1;

	if (c <= 0 || c > ncols)
		c = ncols;
	return c;
}

static int
LsmBloomBitsOf(Relation index)
{
	LsmOptions *opts = (LsmOptions *) index->rd_options;

	return opts ? opts->bloom_bits_per_key : 10;
}

/*
 * Set up the writer's filter settings; returns its bits per key (0: the run
 * gets no filter).  The core's run builder owns the filter itself.
 */
int
LsmBloomBegin(LsmRunWriter *w, Relation index)
{
	int			bits = LsmBloomBitsOf(index);

	w->bloom_cols = 0;
	if (bits <= 0)
		return 0;
	w->desc = &LsmGetRelCache(index)->desc;
	w->bloom_cols = LsmBloomColumnsOf(index, w->desc->ncols);
	return bits;
}

/*
 * Bytes of an encoded entry the filter hashes: its first bloom_cols column
 * segments.  The key split is the shim's (it owns the encoding); the hash
 * and the filter are the core's.
 */
size_t
LsmBloomPrefixLen(LsmRunWriter *w, const uint8 *key, int len)
{
	const uint8 *seg[INDEX_MAX_KEYS];
	int			seglen[INDEX_MAX_KEYS];

	if (!LsmSplitEntry(w->desc, key, len, seg, seglen, NULL))
		LsmReportCorruption(w->index, InvalidBlockNumber,
							"A malformed entry %s reached the writer of a new run.",
							LsmKeyToHex(key, Min(len, 64)));
	return (seg[w->bloom_cols - 1] + seglen[w->bloom_cols - 1]) - key;
}

/* ------------------------------------------------------------------------
 * Backend cache of run headers, fence pages and filter pages.
 *
 * Runs never change once published (VACUUM rewrites data pages only, and
 * leaves header and fence keys valid lower bounds), and run ids are never
 * reused within an index incarnation, so a cached copy stays right for the
 * run's life; an entry of a retired run is just never asked for again.  Pages
 * are loaded one at a time as lookups need them, so a new connection's first
 * lookup reads about what a btree descent reads.  The cache is dropped whole
 * when it grows past LSM_RUN_CACHE_BYTES.
 * ------------------------------------------------------------------------ */
#include "utils/hsearch.h"
#include "utils/memutils.h"

#define LSM_RUN_CACHE_BYTES		(64 * 1024 * 1024)

typedef struct LsmRunCacheKey
{
	Oid			dbid;
	Oid			relnumber;
	uint64		instance_id;
	uint32		run_id;
	uint32		pad;
} LsmRunCacheKey;

static HTAB *lsm_run_cache = NULL;
static MemoryContext lsm_run_cache_cxt = NULL;
static Size lsm_run_cache_bytes = 0;

static void
LsmRunCacheReset(void)
{
	HASHCTL		ctl;

	if (lsm_run_cache_cxt == NULL)
		lsm_run_cache_cxt = AllocSetContextCreate(TopMemoryContext, "lsm run cache",
												  ALLOCSET_DEFAULT_SIZES);
	else
		MemoryContextReset(lsm_run_cache_cxt);
	memset(&ctl, 0, sizeof(ctl));
	ctl.keysize = sizeof(LsmRunCacheKey);
	ctl.entrysize = sizeof(LsmRunCacheEntry);
	ctl.hcxt = lsm_run_cache_cxt;
	lsm_run_cache = hash_create("lsm run cache", 256, &ctl,
								HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	lsm_run_cache_bytes = 0;
}

/* Copy a run page's content into the cache context. */
static uint8 *
LsmRunCacheReadPage(Relation index, const LsmRunRef *ref, uint32 rel, uint16 kind,
					int *len)
{
	uint8	   *copy = MemoryContextAlloc(lsm_run_cache_cxt, BLCKSZ);

	*len = LsmReadRunPage(index, ref, rel, kind, copy);
	lsm_run_cache_bytes += BLCKSZ;
	return copy;
}

/*
 * The cached entry of a run: its header is read now, fence and filter pages
 * when first needed.
 */
LsmRunCacheEntry *
LsmRunCacheGet(Relation index, const LsmRunRef *ref)
{
	LsmRunCacheKey key;
	LsmRunCacheEntry *e;
	bool		found;
	LsmRunHeader hdr;

	if (lsm_run_cache == NULL || lsm_run_cache_bytes > LSM_RUN_CACHE_BYTES)
		LsmRunCacheReset();
	memset(&key, 0, sizeof(key));
	key.dbid = MyDatabaseId;
	key.relnumber = LsmRelFileNumber(index);
	key.instance_id = LsmGetRelCache(index)->instance_id;
	key.run_id = ref->run_id;
	e = hash_search(lsm_run_cache, &key, HASH_ENTER, &found);
	if (found && e->valid)
		return e;

	e->valid = false;
	e->ref = *ref;
	/* once per run and backend: the manifest must not point past the file */
	{
		BlockNumber nblocks = RelationGetNumberOfBlocks(index);

		if (ref->start >= nblocks || ref->npages > nblocks - ref->start)
			LsmReportCorruption(index, ref->start,
								"Run %u occupies blocks %u to %u, the file has %u blocks.",
								ref->run_id, ref->start, ref->start + ref->npages - 1, nblocks);
	}
	e->header = LsmRunCacheReadPage(index, ref, 0, LSM_PK_RUN_HEADER, &e->header_len);
	LsmCheckStatus(index, lsm_runheader_parse(e->header, e->header_len, &hdr), ref->start,
				   "reading a run header");
	e->hdr = hdr;
	if (hdr.npages > ref->npages || hdr.ndata_pages + 1 > hdr.npages)
		LsmReportCorruption(index, ref->start,
							"The header of run %u counts %u pages with %u data pages, the manifest %u pages.",
							ref->run_id, hdr.npages, hdr.ndata_pages, ref->npages);
	e->fence_first = hdr.ndata_pages + 1;
	e->nfence = hdr.npages - e->fence_first;
	e->fence = MemoryContextAllocZero(lsm_run_cache_cxt,
									  sizeof(uint8 *) * Max(e->nfence, 1));
	e->fence_len = MemoryContextAllocZero(lsm_run_cache_cxt,
										  sizeof(int) * Max(e->nfence, 1));
	e->bloom_bpp = lsm_bloom_blocks_per_page(LSM_CONTENT_CAP);
	e->bloom_pages = 0;
	if (ref->bloom_nblocks > 0 && e->bloom_bpp > 0)
		e->bloom_pages = (ref->bloom_nblocks + e->bloom_bpp - 1) / e->bloom_bpp;
	e->bloom_blocks = MemoryContextAllocZero(lsm_run_cache_cxt,
											 sizeof(uint8 *) * Max(e->bloom_pages, 1));
	e->bloom_k = MemoryContextAllocZero(lsm_run_cache_cxt,
										sizeof(uint32) * Max(e->bloom_pages, 1));
	e->valid = true;
	return e;
}

/* Fence page rel of the run (cached). */
const uint8 *
LsmRunCacheFence(Relation index, LsmRunCacheEntry *e, uint32 rel, int *len)
{
	uint32		i;

	if (rel < e->fence_first || rel - e->fence_first >= e->nfence)
		LsmReportCorruption(index, e->ref.start,
							"The fence tree of run %u points at its page %u, fence pages are %u to %u.",
							e->ref.run_id, rel, e->fence_first, e->fence_first + e->nfence - 1);
	i = rel - e->fence_first;
	if (e->fence[i] == NULL)
		e->fence[i] = LsmRunCacheReadPage(index, &e->ref, rel, LSM_PK_RUN_FENCE,
										  &e->fence_len[i]);
	*len = e->fence_len[i];
	return e->fence[i];
}

/*
 * The run's filter's answer for h (true: may contain), reading the one
 * filter page that holds h's block the first time it is needed.
 */
bool
LsmRunCacheMayContain(Relation index, LsmRunCacheEntry *e, uint64 h)
{
	uint32		block,
				pg;

	if (e->bloom_pages == 0)
		return true;
	block = lsm_bloom_block_of(h, e->ref.bloom_nblocks);
	pg = block / e->bloom_bpp;
	if (pg >= e->bloom_pages)
		return true;
	if (e->bloom_blocks[pg] == NULL)
	{
		int			len;
		uint8	   *content = LsmRunCacheReadPage(index, &e->ref, e->ref.bloom_start + pg,
												  LSM_PK_RUN_BLOOM, &len);
		LsmBloomPageInfo info;
		LsmStatus	st = lsm_bloom_page_parse(content, len, &info);

		if (st == LSM_OK &&
			(info.nblocks_total != e->ref.bloom_nblocks ||
			 info.first_block != pg * e->bloom_bpp ||
			 info.first_block + info.nblocks > e->ref.bloom_nblocks))
			st = LSM_CORRUPT;
		if (st != LSM_OK)
			LsmReportCorruption(index, e->ref.start + e->ref.bloom_start + pg,
								"Bloom filter page %u of run %u failed validation.",
								pg, e->ref.run_id);
		e->bloom_k[pg] = info.k;
		e->bloom_blocks[pg] = info.blocks;
	}
	return lsm_bloom_block_may_contain(e->bloom_blocks[pg] +
									   (Size) (block - pg * e->bloom_bpp) * LSM_BLOOM_BLOCK_BYTES,
									   e->bloom_k[pg], h) != 0;
}
