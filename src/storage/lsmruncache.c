/*
 * lsmruncache.c — the backend cache of run headers, fence pages and filter
 * pages, through which scans descend a run and probe its bloom filter; and
 * what it puts in and takes from the shared metadata cache
 * (shmem/lsmmetacache.c), which holds copies of those pages for every
 * backend.
 */
#include "postgres.h"

#include "storage/buf_internals.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "storage/lsm_storage.h"

/* ------------------------------------------------------------------------
 * Backend cache of run headers, fence pages and filter pages.
 *
 * Runs never change once published (VACUUM rewrites data pages only, and
 * leaves header and fence keys valid lower bounds), and run ids are never
 * reused within an index incarnation, so a cached copy stays right for the
 * run's life; an entry of a retired run is just never asked for again.  The
 * cache is dropped whole when it grows past LSM_RUN_CACHE_BYTES.
 *
 * What a new connection's first lookup costs is mostly the memory it touches
 * for the first time (each shared buffer and each page of private memory
 * faults into the new process), so the cache reads lazily and copies little:
 *
 *   - an entry is made without reading anything: the filter's place is in
 *     the manifest, so a lookup the filter rules out never reads the run's
 *     header (LsmRunCacheHeader reads it when a scan must descend the run);
 *   - header and fence pages are copied at their content's length, not a
 *     page's;
 *   - a filter page is probed in its shared buffer the first time and copied
 *     the second: a connection that looks one key up copies no filter page,
 *     one that looks many up keeps the pages it uses;
 *   - but filter copies stop at LSM_RUN_CACHE_FILTER_BYTES: past that the
 *     pages are probed in their shared buffers.  Filters are about 1.2 bytes
 *     a key, so an index of 100M keys has 120 MB of them: copied whole, each
 *     connection would hold its own 64 MB and then drop the cache and start
 *     again, memory a server short of it (a memory cap, many connections)
 *     takes from its page cache.  A probe in place costs a buffer lookup
 *     and a pin, a small part of a lookup.
 * ------------------------------------------------------------------------ */

#define LSM_RUN_CACHE_BYTES		(64 * 1024 * 1024)
#define LSM_RUN_CACHE_FILTER_BYTES	(8 * 1024 * 1024)

typedef struct LsmRunCacheKey
{
	Oid			dbid;
	Oid			relnumber;
	uint64		instance_id;
	uint32		run_id;
	uint32		pad;
} LsmRunCacheKey;

static bool LsmBlockInSharedBuffers(Relation rel, BlockNumber blkno);

static HTAB *lsm_run_cache = NULL;
static MemoryContext lsm_run_cache_cxt = NULL;
static Size lsm_run_cache_bytes = 0;
static Size lsm_run_cache_filter_bytes = 0;	/* of it, filter pages */

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
	lsm_run_cache = hash_create("lsm run cache", 64, &ctl,
								HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	lsm_run_cache_bytes = 0;
	lsm_run_cache_filter_bytes = 0;
}

/*
 * The shared metadata cache's key of page rel of run ref (lsmmetacache.c).
 * False for a temporary index, which stays out of it: private to one
 * backend, and its relfilenumber is unique only with the backend's.
 */
static bool
LsmRunCacheMetaKey(Relation index, const LsmRunRef *ref, uint32 rel, LsmMetaKey *key)
{
	if (RelationUsesLocalBuffers(index) || !LsmMetaCacheEnabled())
		return false;
	memset(key, 0, sizeof(*key));
	key->dbid = MyDatabaseId;
	key->relnumber = LsmRelFileNumber(index);
	key->instance_id = LsmGetRelCache(index)->instance_id;
	key->run_id = ref->run_id;
	key->rel = rel;
	return true;
}

/* A copy of page rel of run ref from the shared metadata cache; NULL if it does not hold it. */
static uint8 *
LsmRunCacheCopyShared(Relation index, const LsmRunRef *ref, uint32 rel, int *len)
{
	LsmMetaKey	mkey;
	PGAlignedBlock shared;
	uint8	   *copy;

	if (!LsmRunCacheMetaKey(index, ref, rel, &mkey) ||
		!LsmMetaCacheGet(&mkey, (uint8 *) shared.data, len))
		return NULL;
	copy = MemoryContextAlloc(lsm_run_cache_cxt, Max(*len, 1));
	memcpy(copy, shared.data, *len);
	lsm_run_cache_bytes += Max(*len, 1);
	return copy;
}

/*
 * Copy a run page's content (its length, not a page) into the cache
 * context: from the shared metadata cache if it holds the page, else from
 * its buffer, and then into the shared cache for the next connection.
 */
static uint8 *
LsmRunCacheReadPage(Relation index, const LsmRunRef *ref, uint32 rel, uint16 kind,
					int *len)
{
	LsmMetaKey	mkey;
	uint8	   *copy = LsmRunCacheCopyShared(index, ref, rel, len);
	Buffer		buf;
	Page		page;

	if (copy != NULL)
		return copy;
	buf = LsmReadRunBuffer(index, ref, rel, kind);
	page = BufferGetPage(buf);
	*len = LsmPageContentLen(page);
	copy = MemoryContextAlloc(lsm_run_cache_cxt, Max(*len, 1));
	memcpy(copy, LsmPageContent(page), *len);
	UnlockReleaseBuffer(buf);
	lsm_run_cache_bytes += Max(*len, 1);
	if (LsmRunCacheMetaKey(index, ref, rel, &mkey))
		LsmMetaCachePut(&mkey, copy, *len, false);
	return copy;
}

/*
 * The cached entry of a run, made without reading any of its pages (the
 * header is read by LsmRunCacheHeader, fence and filter pages when first
 * needed).
 */
LsmRunCacheEntry *
LsmRunCacheGet(Relation index, const LsmRunRef *ref)
{
	LsmRunCacheKey key;
	LsmRunCacheEntry *e;
	bool		found;

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
	e->header_ok = false;
	e->header = NULL;
	e->ref = *ref;
	/* once per run and backend: the manifest must not point past the file */
	{
		BlockNumber nblocks = RelationGetNumberOfBlocks(index);

		if (ref->start >= nblocks || ref->npages > nblocks - ref->start)
			LsmReportCorruption(index, ref->start,
								"Run %u occupies blocks %u to %u, the file has %u blocks.",
								ref->run_id, ref->start, ref->start + ref->npages - 1, nblocks);
	}
	e->bloom_bpp = lsm_bloom_blocks_per_page(LSM_CONTENT_CAP);
	e->bloom_pages = 0;
	if (ref->bloom_nblocks > 0 && e->bloom_bpp > 0)
		e->bloom_pages = (ref->bloom_nblocks + e->bloom_bpp - 1) / e->bloom_bpp;
	if (e->bloom_pages > 0)
	{
		Size		n = e->bloom_pages;
		char	   *arrays = MemoryContextAllocZero(lsm_run_cache_cxt,
													n * (sizeof(uint8 *) + sizeof(uint32) + 1));

		e->bloom_blocks = (const uint8 **) arrays;
		e->bloom_k = (uint32 *) (arrays + n * sizeof(uint8 *));
		e->bloom_seen = (uint8 *) (arrays + n * (sizeof(uint8 *) + sizeof(uint32)));
		lsm_run_cache_bytes += n * (sizeof(uint8 *) + sizeof(uint32) + 1);
	}
	else
	{
		e->bloom_blocks = NULL;
		e->bloom_k = NULL;
		e->bloom_seen = NULL;
	}
	e->valid = true;
	return e;
}

/* Parse run ref's header content into *hdr; ERROR if it is damaged. */
static void
LsmRunCacheParseHeader(Relation index, const LsmRunRef *ref, const uint8 *content,
					   int len, LsmRunHeader *hdr)
{
	LsmCheckStatus(index, lsm_runheader_parse(content, len, hdr), ref->start,
				   "reading a run header");
	if (hdr->npages > ref->npages || hdr->ndata_pages + 1 > hdr->npages)
		LsmReportCorruption(index, ref->start,
							"The header of run %u counts %u pages with %u data pages, the manifest %u pages.",
							ref->run_id, hdr->npages, hdr->ndata_pages, ref->npages);
}

/* Read, parse and check the run's header (once per run and backend). */
void
LsmRunCacheHeader(Relation index, LsmRunCacheEntry *e)
{
	const LsmRunRef *ref = &e->ref;
	LsmRunHeader hdr;

	if (e->header_ok)
		return;
	if (e->header == NULL)
		e->header = LsmRunCacheReadPage(index, ref, 0, LSM_PK_RUN_HEADER, &e->header_len);
	LsmRunCacheParseHeader(index, ref, e->header, e->header_len, &hdr);
	e->hdr = hdr;
	e->fence_first = hdr.ndata_pages + 1;
	e->nfence = hdr.npages - e->fence_first;
	e->fence = MemoryContextAllocZero(lsm_run_cache_cxt,
									  sizeof(uint8 *) * Max(e->nfence, 1));
	e->fence_len = MemoryContextAllocZero(lsm_run_cache_cxt,
										  sizeof(int) * Max(e->nfence, 1));
	lsm_run_cache_bytes += (sizeof(uint8 *) + sizeof(int)) * Max(e->nfence, 1);
	e->header_ok = true;
}

/* Fence page rel of the run (cached); the header must have been read. */
const uint8 *
LsmRunCacheFence(Relation index, LsmRunCacheEntry *e, uint32 rel, int *len)
{
	uint32		i;

	Assert(e->header_ok);
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
 * The in-memory halves of LsmRunCacheHeader and LsmRunCacheFence, for a
 * lookup that would rather not read a page from disk (LsmRunDescentPages,
 * lsmrun.c): the page is taken from this backend's cache, the shared
 * metadata cache, or its shared buffer, and false (NULL) returned if none
 * of them holds it.
 */
bool
LsmRunCacheHeaderInMemory(Relation index, LsmRunCacheEntry *e)
{
	if (e->header_ok)
		return true;
	if (e->header == NULL)
	{
		e->header = LsmRunCacheCopyShared(index, &e->ref, 0, &e->header_len);
		if (e->header == NULL && !LsmBlockInSharedBuffers(index, e->ref.start))
			return false;
	}
	LsmRunCacheHeader(index, e);
	return true;
}

const uint8 *
LsmRunCacheFenceInMemory(Relation index, LsmRunCacheEntry *e, uint32 rel, int *len)
{
	uint32		i;

	Assert(e->header_ok);
	if (rel < e->fence_first || rel - e->fence_first >= e->nfence)
		return NULL;			/* the descent that follows reports it */
	i = rel - e->fence_first;
	if (e->fence[i] == NULL)
	{
		e->fence[i] = LsmRunCacheCopyShared(index, &e->ref, rel, &e->fence_len[i]);
		if (e->fence[i] == NULL && !LsmBlockInSharedBuffers(index, e->ref.start + rel))
			return NULL;
	}
	return LsmRunCacheFence(index, e, rel, len);
}

/*
 * ERROR unless a filter page's parsed description fits the run's filter and
 * holds block (the one a probe needs).
 */
static void
LsmRunCacheCheckBloomPage(Relation index, LsmRunCacheEntry *e, uint32 pg, uint32 block,
						  LsmStatus st, const LsmBloomPageInfo *info)
{
	if (st == LSM_OK &&
		(info->nblocks_total != e->ref.bloom_nblocks ||
		 info->first_block != pg * e->bloom_bpp ||
		 info->first_block + info->nblocks > e->ref.bloom_nblocks ||
		 block - info->first_block >= info->nblocks))
		st = LSM_CORRUPT;
	if (st != LSM_OK)
		LsmReportCorruption(index, e->ref.start + e->ref.bloom_start + pg,
							"Bloom filter page %u of run %u failed validation.",
							pg, e->ref.run_id);
}

/* Probe h in filter page pg's blocks (block: h's block in the whole filter). */
static bool
LsmRunCacheProbe(const LsmRunCacheEntry *e, const uint8 *blocks, uint32 k, uint32 pg,
				 uint32 block, uint64 h)
{
	return lsm_bloom_block_may_contain(blocks + (Size) (block - pg * e->bloom_bpp) *
									   LSM_BLOOM_BLOCK_BYTES, k, h) != 0;
}

/*
 * Whether block blkno of rel is in shared buffers now (a hint: it may be
 * evicted or read in the next moment).  The buffer mapping table's lookup,
 * as PrefetchBuffer makes, without its read-ahead request for a block that
 * is not there.  Temporary relations' local buffers count as in memory.
 */
static bool
LsmBlockInSharedBuffers(Relation rel, BlockNumber blkno)
{
	BufferTag	tag;
	uint32		hash;
	LWLock	   *lock;
	int			id;

	if (RelationUsesLocalBuffers(rel))
		return true;
	LsmInitBufferTag(&tag, rel, MAIN_FORKNUM, blkno);
	hash = BufTableHashCode(&tag);
	lock = BufMappingPartitionLock(hash);
	LWLockAcquire(lock, LW_SHARED);
	id = BufTableLookup(&tag, hash);
	LWLockRelease(lock);
	return id >= 0;
}

/*
 * Has this backend copied the filter page h's block is on (or has the run
 * no filter)?  Then LsmRunCacheMayContain answers from memory, whatever
 * pass_cold says, and its caller need not weigh passing it over.
 */
bool
LsmRunCacheFilterCopied(const LsmRunCacheEntry *e, uint64 h)
{
	uint32		pg;

	if (e->bloom_pages == 0)
		return true;
	pg = lsm_bloom_block_of(h, e->ref.bloom_nblocks) / e->bloom_bpp;
	return pg >= e->bloom_pages || e->bloom_blocks[pg] != NULL;
}

/*
 * The run's filter's answer for h.  The filter page that holds h's block is
 * probed in the shared metadata cache or its shared buffer the first time
 * this backend needs it (a page read from its buffer is put in the shared
 * cache), and copied into this backend's cache the second time.
 *
 * share: put a page read from its buffer into the shared cache (not for a
 * large level's run, whose filters would push the smaller levels' out).
 *
 * pass_cold: the caller would rather search the run than read a filter page
 * from outside shared memory (a large level's filter, where most keys
 * looked up are found: lsmscanmerge.c, lsmrun.c).  Then a page this backend
 * has not copied and neither cache nor shared buffers hold is passed over
 * the first time (LSM_FILTER_NOT_ASKED) and read the second, so the pages a
 * backend keeps asking for still come into memory.
 */
LsmFilterAnswer
LsmRunCacheMayContain(Relation index, LsmRunCacheEntry *e, uint64 h, bool pass_cold,
					  bool share)
{
	uint32		block,
				pg;

	if (e->bloom_pages == 0)
		return LSM_FILTER_MAYBE;
	block = lsm_bloom_block_of(h, e->ref.bloom_nblocks);
	pg = block / e->bloom_bpp;
	if (pg >= e->bloom_pages)
		return LSM_FILTER_MAYBE;
	if (e->bloom_blocks[pg] == NULL)
	{
		Buffer		buf = InvalidBuffer;
		const uint8 *content;
		int			len;
		LsmBloomPageInfo info;
		const uint8 *blocks;
		bool		result;
		LsmMetaKey	mkey;
		PGAlignedBlock shared;
		bool		keyed = LsmRunCacheMetaKey(index, &e->ref, e->ref.bloom_start + pg, &mkey);

		if (keyed && LsmMetaCacheGet(&mkey, (uint8 *) shared.data, &len))
			content = (const uint8 *) shared.data;
		else
		{
			Page		page;

			if (pass_cold && e->bloom_seen[pg] == LSM_SEEN_NEVER &&
				!LsmBlockInSharedBuffers(index, e->ref.start + e->ref.bloom_start + pg))
			{
				e->bloom_seen[pg] = LSM_SEEN_PASSED;
				return LSM_FILTER_NOT_ASKED;
			}
			buf = LsmReadRunBuffer(index, &e->ref, e->ref.bloom_start + pg,
								   LSM_PK_RUN_BLOOM);
			page = BufferGetPage(buf);
			content = (const uint8 *) LsmPageContent(page);
			len = LsmPageContentLen(page);
		}
		LsmRunCacheCheckBloomPage(index, e, pg, block,
								  lsm_bloom_page_parse(content, len, &info), &info);
		if (e->bloom_seen[pg] != LSM_SEEN_PROBED ||
			lsm_run_cache_filter_bytes + Max(len, 1) > LSM_RUN_CACHE_FILTER_BYTES)
		{
			/* first time, or no room: answer from the page, keep nothing */
			blocks = info.blocks;
			e->bloom_seen[pg] = LSM_SEEN_PROBED;
		}
		else
		{
			uint8	   *copy = MemoryContextAlloc(lsm_run_cache_cxt, Max(len, 1));

			memcpy(copy, content, len);
			lsm_run_cache_bytes += Max(len, 1);
			lsm_run_cache_filter_bytes += Max(len, 1);
			blocks = copy + (info.blocks - content);
			e->bloom_k[pg] = info.k;
			e->bloom_blocks[pg] = blocks;
		}
		result = LsmRunCacheProbe(e, blocks, info.k, pg, block, h);
		if (BufferIsValid(buf) && keyed && share)
		{
			/* into the shared cache, from a copy (its lock is a leaf) */
			memcpy(shared.data, content, len);
			UnlockReleaseBuffer(buf);
			LsmMetaCachePut(&mkey, (const uint8 *) shared.data, len, true);
		}
		else if (BufferIsValid(buf))
			UnlockReleaseBuffer(buf);
		return result ? LSM_FILTER_MAYBE : LSM_FILTER_ABSENT;
	}
	return LsmRunCacheProbe(e, e->bloom_blocks[pg], e->bloom_k[pg], pg, block, h) ?
		LSM_FILTER_MAYBE : LSM_FILTER_ABSENT;
}

/*
 * Put page rel of run ref into the shared metadata cache, from its buffer
 * (read through strategy, NULL: the default); also copy its content to out
 * (BLCKSZ bytes of room), if given.
 */
static void
LsmRunCacheWarmPage(Relation index, const LsmRunRef *ref, uint32 rel, uint16 kind,
					BufferAccessStrategy strategy, uint8 *out, int *out_len)
{
	LsmMetaKey	mkey;
	PGAlignedBlock copy;
	uint8	   *dst = out != NULL ? out : (uint8 *) copy.data;
	Buffer		buf = LsmReadRunBufferExt(index, ref, rel, kind, strategy);
	Page		page = BufferGetPage(buf);
	int			len = LsmPageContentLen(page);

	memcpy(dst, LsmPageContent(page), len);
	UnlockReleaseBuffer(buf);
	if (out_len != NULL)
		*out_len = len;
	if (LsmRunCacheMetaKey(index, ref, rel, &mkey))
		LsmMetaCachePut(&mkey, dst, len, kind == LSM_PK_RUN_BLOOM);
}

/*
 * Levels >= 1 holding a quarter of the entries of runs[0..nruns) or more,
 * as bits (bit l: level l): the deepest level under leveled (about 90%),
 * and the one above it while a new deepest level fills.  Most keys a lookup
 * finds are there, and their filters are most of the filter bytes.
 */
uint32
LsmLargeLevels(const LsmRunRef *runs, int nruns, double *share)
{
	uint64		per_level[LSM_PICK_MAX_LEVEL + 1] = {0};
	uint64		total = 0;
	uint32		large = 0;

	for (int i = 0; i < nruns; i++)
	{
		total += runs[i].nentries;
		if (runs[i].level <= LSM_PICK_MAX_LEVEL)
			per_level[runs[i].level] += runs[i].nentries;
	}
	for (int level = 1; level <= LSM_PICK_MAX_LEVEL; level++)
		if (per_level[level] > 0 && per_level[level] >= total / 4)
			large |= 1u << level;
	if (share != NULL)
		for (int level = 0; level <= LSM_PICK_MAX_LEVEL; level++)
			share[level] = total > 0 ? (double) per_level[level] / total : 0.0;
	return large;
}

/*
 * Runs[0..nruns) were just retired (a merge's inputs, a relocated run's
 * original): drop their pages from the shared metadata cache, so that the
 * slots go to live runs' pages (LsmMetaCacheForget).  Nothing when the
 * cache is off.
 */
void
LsmRunCacheForget(Relation index, const LsmRunRef *runs, int nruns)
{
	LsmMetaKey	key;
	uint32	   *ids;

	if (nruns <= 0 || !LsmRunCacheMetaKey(index, &runs[0], 0, &key))
		return;
	ids = palloc(sizeof(uint32) * nruns);
	for (int i = 0; i < nruns; i++)
		ids[i] = runs[i].run_id;
	LsmMetaCacheForget(&key, ids, nruns);
	pfree(ids);
}

/*
 * Put the header and fence pages of runs[0..nruns), just published by a
 * flush, merge or build into manifest m, into the shared metadata cache,
 * and the filter pages of those outside m's large levels (level 0 always):
 * every lookup asks those filters, while the large levels' are most of
 * the filter bytes and a lookup passes them over when they are not in
 * memory (lsmscanmerge.c).  The pages were just written through ordinary
 * buffers, so this mostly reads them there, where a new connection would
 * find them gone after minutes of ingest.  Nothing when the cache is off.
 */
void
LsmRunCacheWarm(Relation index, const LsmMetaPageData *m, const LsmRunRef *runs,
				int nruns)
{
	uint32		bpp = lsm_bloom_blocks_per_page(LSM_CONTENT_CAP);
	uint32		large;

	if (!LsmMetaCacheEnabled() || RelationUsesLocalBuffers(index))
		return;
	large = LsmLargeLevels(m->runs, m->nruns, NULL);
	for (int i = 0; i < nruns; i++)
	{
		const LsmRunRef *ref = &runs[i];
		bool		filters = ref->level > LSM_PICK_MAX_LEVEL ||
			(large & (1u << ref->level)) == 0;
		LsmRunHeader hdr;
		PGAlignedBlock header;
		int			header_len;
		uint32		bloom_pages = 0;

		LsmRunCacheWarmPage(index, ref, 0, LSM_PK_RUN_HEADER, NULL,
							(uint8 *) header.data, &header_len);
		LsmRunCacheParseHeader(index, ref, (const uint8 *) header.data, header_len, &hdr);
		for (uint32 rel = hdr.ndata_pages + 1; rel < hdr.npages; rel++)
			LsmRunCacheWarmPage(index, ref, rel, LSM_PK_RUN_FENCE, NULL, NULL, NULL);
		if (filters && ref->bloom_nblocks > 0 && bpp > 0)
			bloom_pages = (ref->bloom_nblocks + bpp - 1) / bpp;
		for (uint32 pg = 0; pg < bloom_pages; pg++)
			LsmRunCacheWarmPage(index, ref, ref->bloom_start + pg, LSM_PK_RUN_BLOOM, NULL,
								NULL, NULL);
		CHECK_FOR_INTERRUPTS();
	}
}

/* ------------------------------------------------------------------------
 * Warming a whole index: its first use since the server started.
 *
 * A restart empties the shared cache, and the pages it held (a header per
 * run, the fence pages, the filters outside the large levels: about 25 MB
 * for 100M int8 keys) are then read one by one by the lookups that need
 * them, from disk: a lookup after a restart read 3.3 pages from outside
 * shared buffers where btree read 1.7 (doc/benchmarks.md, "Beyond memory").
 * A worker instead reads them all once, when the index is first used
 * (LSM_WORK_WARM, maint/lsmmaint.c), as RocksDB loads a table's index and
 * filter blocks when it opens the table: in batches, each prefetched first
 * so that the kernel reads a batch's pages in parallel, and through a ring
 * (BAS_BULKREAD), since the copies are what it keeps.
 * ------------------------------------------------------------------------ */

#define LSM_WARM_BATCH		64

typedef struct LsmWarmPage
{
	const LsmRunRef *ref;
	uint32		rel;			/* page of the run */
	uint16		kind;
} LsmWarmPage;

/*
 * Read pages[0..n) (prefetched first) and put them into the shared cache;
 * each one's content is also copied to out[i] (BLCKSZ bytes of room each),
 * with its length in out_len[i], when out is given.
 */
static void
LsmRunCacheWarmBatch(Relation index, const LsmWarmPage *pages, int n,
					 BufferAccessStrategy strategy, PGAlignedBlock *out, int *out_len)
{
	for (int i = 0; i < n; i++)
		(void) PrefetchBuffer(index, MAIN_FORKNUM, pages[i].ref->start + pages[i].rel);
	for (int i = 0; i < n; i++)
		LsmRunCacheWarmPage(index, pages[i].ref, pages[i].rel, pages[i].kind, strategy,
							out != NULL ? (uint8 *) out[i].data : NULL,
							out_len != NULL ? &out_len[i] : NULL);
}

/* Is page rel of run ref in the shared cache? */
static bool
LsmRunCacheShared(Relation index, const LsmRunRef *ref, uint32 rel)
{
	LsmMetaKey	mkey;

	return LsmRunCacheMetaKey(index, ref, rel, &mkey) && LsmMetaCacheHas(&mkey);
}

/*
 * Put the metadata pages of the runs of manifest m into the shared cache,
 * those it does not hold yet: every run's header and fence pages first,
 * then the filter pages outside m's large levels, level 0 first (what
 * LsmRunCacheWarm puts when a run is published), no more pages than the
 * cache holds and no more filter pages than three quarters of it.  stop
 * (may be NULL) is asked between batches.  REQUIRES: no run of m is
 * retired meanwhile (the compaction lock), so no page read is reused.
 */
void
LsmRunCacheWarmIndex(Relation index, const LsmMetaPageData *m, const LsmStop *stop,
					 LsmWarmResult *res)
{
	int			capacity = LsmMetaCacheCapacity();
	uint32		bpp = lsm_bloom_blocks_per_page(LSM_CONTENT_CAP);
	uint32		large;
	BufferAccessStrategy strategy;
	LsmWarmPage *todo;
	int			ntodo = 0,
				nfilter = 0;
	uint32	   *fence_first;
	uint32	   *npages;
	PGAlignedBlock *headers;
	int		   *header_len;

	memset(res, 0, sizeof(*res));
	if (capacity == 0 || RelationUsesLocalBuffers(index) || m->nruns == 0)
		return;
	strategy = GetAccessStrategy(BAS_BULKREAD);
	large = LsmLargeLevels(m->runs, m->nruns, NULL);
	todo = palloc(sizeof(LsmWarmPage) * Max(capacity, LSM_WARM_BATCH));
	fence_first = palloc0(sizeof(uint32) * m->nruns);
	npages = palloc0(sizeof(uint32) * m->nruns);
	headers = palloc(sizeof(PGAlignedBlock) * LSM_WARM_BATCH);
	header_len = palloc(sizeof(int) * LSM_WARM_BATCH);

	/* 1. the headers: each one's fence pages are where it says */
	for (int first = 0; first < m->nruns && !res->stopped; first += LSM_WARM_BATCH)
	{
		int			n = Min(LSM_WARM_BATCH, m->nruns - first);
		int			nread = 0;
		int			runof[LSM_WARM_BATCH];

		for (int i = first; i < first + n; i++)
		{
			const LsmRunRef *ref = &m->runs[i];
			LsmMetaKey	mkey;
			LsmRunHeader hdr;

			if (LsmRunCacheMetaKey(index, ref, 0, &mkey) &&
				LsmMetaCacheGet(&mkey, (uint8 *) headers[0].data, &header_len[0]))
			{
				LsmRunCacheParseHeader(index, ref, (const uint8 *) headers[0].data,
									   header_len[0], &hdr);
				fence_first[i] = hdr.ndata_pages + 1;
				npages[i] = hdr.npages;
				res->cached++;
				continue;
			}
			runof[nread] = i;
			todo[nread].ref = ref;
			todo[nread].rel = 0;
			todo[nread].kind = LSM_PK_RUN_HEADER;
			nread++;
		}
		LsmRunCacheWarmBatch(index, todo, nread, strategy, headers, header_len);
		for (int j = 0; j < nread; j++)
		{
			LsmRunHeader hdr;
			int			i = runof[j];

			LsmRunCacheParseHeader(index, &m->runs[i], (const uint8 *) headers[j].data,
								   header_len[j], &hdr);
			fence_first[i] = hdr.ndata_pages + 1;
			npages[i] = hdr.npages;
		}
		res->pages += nread;
		res->stopped = stop != NULL && stop->fn(index, stop->arg);
	}
	res->runs = m->nruns;

	/* 2. the fence pages of every run, then the filters, level 0 first */
	for (int i = 0; i < m->nruns && ntodo < capacity; i++)
		for (uint32 rel = fence_first[i]; rel < npages[i] && ntodo < capacity; rel++)
		{
			if (LsmRunCacheShared(index, &m->runs[i], rel))
			{
				res->cached++;
				continue;
			}
			todo[ntodo].ref = &m->runs[i];
			todo[ntodo].rel = rel;
			todo[ntodo].kind = LSM_PK_RUN_FENCE;
			ntodo++;
		}
	for (int level = 0; level <= LSM_PICK_MAX_LEVEL + 1; level++)
		for (int i = 0; i < m->nruns; i++)
		{
			const LsmRunRef *ref = &m->runs[i];
			uint32		bloom_pages;

			if (level <= LSM_PICK_MAX_LEVEL ?
				(ref->level != level || (large & (1u << level)) != 0) :
				ref->level <= LSM_PICK_MAX_LEVEL)
				continue;
			if (ref->bloom_nblocks == 0 || bpp == 0)
				continue;
			bloom_pages = (ref->bloom_nblocks + bpp - 1) / bpp;
			for (uint32 pg = 0; pg < bloom_pages; pg++)
			{
				if (ntodo >= capacity || nfilter >= capacity - capacity / 4)
				{
					res->full = true;
					break;
				}
				if (LsmRunCacheShared(index, ref, ref->bloom_start + pg))
				{
					res->cached++;
					continue;
				}
				todo[ntodo].ref = ref;
				todo[ntodo].rel = ref->bloom_start + pg;
				todo[ntodo].kind = LSM_PK_RUN_BLOOM;
				ntodo++;
				nfilter++;
			}
		}
	if (ntodo >= capacity)
		res->full = true;
	for (int first = 0; first < ntodo && !res->stopped; first += LSM_WARM_BATCH)
	{
		int			n = Min(LSM_WARM_BATCH, ntodo - first);

		LsmRunCacheWarmBatch(index, todo + first, n, strategy, NULL, NULL);
		res->pages += n;
		res->stopped = stop != NULL && stop->fn(index, stop->arg);
	}
	FreeAccessStrategy(strategy);
	pfree(todo);
	pfree(fence_first);
	pfree(npages);
	pfree(headers);
	pfree(header_len);
}
