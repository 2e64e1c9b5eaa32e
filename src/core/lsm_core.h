/*
 * lsm_core.h — the only header of the C++ core that C code sees.
 *
 * Rules of this boundary (see doc/impl.md, "The C/C++ boundary"):
 *  - every function here is extern "C" and noexcept: C++ exceptions are caught
 *    inside and turned into an LsmStatus;
 *  - the core never calls back into PostgreSQL: it works on memory the caller
 *    hands it (page images, shared-memory arenas) and tells the caller what it
 *    needs next (LSM_NEED_PAGE, LSM_NEED_CHUNK, LSM_PAGE_READY);
 *  - keys are opaque byte strings compared with memcmp, shorter-is-smaller on a
 *    common prefix.  Every key already ends with the heap TID, so keys are unique.
 *
 * Thread-safety: none of these objects is internally synchronised.  The shim
 * holds the locks stated in each "REQUIRES:" line.
 */
#ifndef LSM_CORE_H
#define LSM_CORE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
#define LSM_NOEXCEPT noexcept
extern "C" {
#else
#define LSM_NOEXCEPT
#endif

typedef enum LsmStatus
{
	LSM_OK = 0,
	LSM_END = 1,			/* iterator or builder has nothing more */
	LSM_NEED_PAGE = 2,		/* merge: a source needs its next batch */
	LSM_PAGE_READY = 3,		/* run builder: finished pages are waiting */
	LSM_NEED_CHUNK = 4,		/* memtable: give it another arena chunk */
	LSM_NO_MEMORY = -1,		/* arena or process memory exhausted */
	LSM_CORRUPT = -2,		/* a page image failed validation */
	LSM_INVALID = -3,		/* bad argument or misuse of the API */
	LSM_TOO_LARGE = -4,		/* key longer than LSM_MAX_KEY_SIZE */
	LSM_INTERNAL = -5		/* unexpected C++ exception (a bug) */
} LsmStatus;

/* Longest key (encoded columns + TID) the core accepts.  On-disk limit: do not
 * raise without checking that a header page still holds two root entries. */
#define LSM_MAX_KEY_SIZE 1536

/* Static English text for a status; never NULL. */
const char *lsm_status_message(LsmStatus s) LSM_NOEXCEPT;

/* ------------------------------------------------------------------------
 * Batches: an owned, ordered list of keys (decoded data page, memtable range).
 * ------------------------------------------------------------------------ */
typedef struct LsmBatch LsmBatch;

LsmStatus	lsm_batch_create(LsmBatch **out) LSM_NOEXCEPT;
void		lsm_batch_destroy(LsmBatch *b) LSM_NOEXCEPT;	/* NULL ok */
void		lsm_batch_clear(LsmBatch *b) LSM_NOEXCEPT;
/* Append every entry of a data page's content area (ascending). */
LsmStatus	lsm_batch_add_datapage(LsmBatch *b, const uint8_t *content, size_t len) LSM_NOEXCEPT;
/*
 * Append what a forward scan of [lo, hi] needs of a data page: from the
 * first key >= lo (restart points binary-searched) through the first key
 * beyond the prefix upper bound hi.  lo/hi NULL: unbounded on that side.
 */
LsmStatus	lsm_batch_add_datapage_range(LsmBatch *b, const uint8_t *content, size_t len,
										 const uint8_t *lo, size_t lolen,
										 const uint8_t *hi, size_t hilen) LSM_NOEXCEPT;
LsmStatus	lsm_batch_add_key(LsmBatch *b, const uint8_t *key, size_t len) LSM_NOEXCEPT;
size_t		lsm_batch_count(const LsmBatch *b) LSM_NOEXCEPT;
/* REQUIRES: i < count.  *key stays valid until the batch is cleared/destroyed. */
void		lsm_batch_get(const LsmBatch *b, size_t i, const uint8_t **key, size_t *len) LSM_NOEXCEPT;

/* ------------------------------------------------------------------------
 * Page content formats.  A "content area" is the part of an 8 kB page between
 * PostgreSQL's page header and the special space; the shim owns the rest.
 * Content starts at offset 0 of the area; *len_out is the number of bytes
 * used, so the shim sets pd_lower = area start + used.
 * ------------------------------------------------------------------------ */

/* Check a data page's content; LSM_OK or LSM_CORRUPT. */
LsmStatus	lsm_datapage_check(const uint8_t *content, size_t len) LSM_NOEXCEPT;
/* Encode the entries b[i] with keep[i] != 0 (keep may be NULL: all) into a data
 * page content area of cap bytes.  LSM_TOO_LARGE if they do not fit. */
LsmStatus	lsm_datapage_build(const LsmBatch *b, const uint8_t *keep,
							   uint8_t *content, size_t cap, size_t *len_out) LSM_NOEXCEPT;

/* Parsed run header (relative page 0 of a run).  Pointers point into the
 * content area that was parsed. */
typedef struct LsmRunHeader
{
	uint64_t	nentries;		/* entries written when the run was built */
	uint32_t	ndata_pages;	/* data pages are relative pages 1..ndata_pages */
	uint32_t	npages;			/* pages in the run's extent, header included */
	uint32_t	height;			/* 0: header's root entries point at data pages */
	const uint8_t *min_key;
	size_t		min_key_len;
	const uint8_t *max_key;
	size_t		max_key_len;
} LsmRunHeader;

LsmStatus	lsm_runheader_parse(const uint8_t *content, size_t len, LsmRunHeader *out) LSM_NOEXCEPT;

typedef enum LsmFindMode
{
	LSM_FIND_FIRST = 0,			/* the first child (target ignored) */
	LSM_FIND_LAST = 1,			/* the last child (target ignored) */
	LSM_FIND_LE = 2,			/* child of the last separator <= target */
	LSM_FIND_LT = 3				/* child of the last separator <  target */
} LsmFindMode;

/*
 * Descend one level: given the content of a run header (is_header != 0) or of
 * a fence page, return the relative page number of the child to visit, and
 * whether that child is a data page.  Separators are the first key of each
 * child; if no separator qualifies for LE/LT, the first child is returned.
 */
LsmStatus	lsm_fence_find(const uint8_t *content, size_t len, int is_header,
						   LsmFindMode mode, const uint8_t *target, size_t tlen,
						   uint32_t *child, int *child_is_data) LSM_NOEXCEPT;

/*
 * Entry i of the fence block of a run header (is_header != 0) or of a fence
 * page, for verification and inspection: *n the block's entries, *level 1
 * when its children are data pages (a header: height + 1), *key (pointing
 * into content) and *child (a relative page number, not range-checked).
 * LSM_OK, LSM_END for i >= *n (*n and *level still set), LSM_CORRUPT.
 */
LsmStatus	lsm_fence_entry(const uint8_t *content, size_t len, int is_header,
							size_t i, size_t *n, uint32_t *level,
							const uint8_t **key, size_t *klen,
							uint32_t *child) LSM_NOEXCEPT;

/* ------------------------------------------------------------------------
 * Run builder: streams sorted keys into the pages of one run, and owns the
 * run's bloom filter (lsm_core_bloom.h), like LevelDB's TableBuilder owns its
 * FilterBlockBuilder.  The shim hands it (entry, filter-prefix length) and
 * gets back finished pages of every kind, which it only places (allocates
 * blocks for) and WAL-logs: no per-key call goes back up.
 *
 * Pages are emitted with relative page numbers: data pages 1, 2, 3, ... in
 * order as they fill; at finish the fence pages (ndata+1 ...), the header
 * (page 0), then the filter pages (the header's npages ...).  A shim that
 * reserves block B for page 0 and writes each emitted page at B + rel_page
 * gets one contiguous extent.
 * ------------------------------------------------------------------------ */
typedef struct LsmRunBuilder LsmRunBuilder;

typedef enum LsmPageKind
{
	LSM_PAGE_HEADER = 1,
	LSM_PAGE_DATA = 2,
	LSM_PAGE_FENCE = 3,
	LSM_PAGE_BLOOM = 4
} LsmPageKind;

typedef struct LsmPageOut
{
	uint32_t	rel_page;
	LsmPageKind kind;
	const uint8_t *content;		/* valid until the next builder call */
	size_t		len;
} LsmPageOut;

/* What a finished run is made of (the shim records it in the manifest). */
typedef struct LsmRunInfo
{
	uint64_t	nentries;		/* keys added */
	uint32_t	npages;			/* pages of the run: header, data, fence, filter */
	uint32_t	bloom_start;	/* relative page of the first filter page; 0: none */
	uint32_t	bloom_nblocks;	/* 64-byte filter blocks; 0: no filter */
} LsmRunInfo;

/*
 * content_cap: bytes available in a page's content area (same for all
 * kinds).  bloom_bits_per_key 0: no filter; 1..LSM_BLOOM_MAX_BITS_PER_KEY: a
 * filter sized for bloom_expected_keys keys (0 counts as 1) at that many
 * bits each.  LSM_INVALID for a bad capacity or bits_per_key, LSM_TOO_LARGE
 * for a filter over 2^32 - 1 blocks, LSM_NO_MEMORY.  *out is NULL unless
 * LSM_OK.
 */
LsmStatus	lsm_runbuilder_create(size_t content_cap, uint32_t bloom_bits_per_key,
								  uint64_t bloom_expected_keys,
								  LsmRunBuilder **out) LSM_NOEXCEPT;
void		lsm_runbuilder_destroy(LsmRunBuilder *b) LSM_NOEXCEPT;	/* NULL ok */
/*
 * Keys strictly ascending.  With a filter, the first filter_prefix_len bytes
 * of the key (the encoded bytes of its leading bloom_cols columns) are hashed
 * with lsm_hash64(..., LSM_BLOOM_HASH_SEED) into it, each distinct hash of a
 * run of equal adjacent hashes once; without a filter filter_prefix_len is
 * ignored.  LSM_OK, or LSM_PAGE_READY when pages wait to be taken (the key
 * was accepted either way), LSM_INVALID out of order or filter_prefix_len >
 * len, LSM_TOO_LARGE.
 */
LsmStatus	lsm_runbuilder_add(LsmRunBuilder *b, const uint8_t *key, size_t len,
							   size_t filter_prefix_len) LSM_NOEXCEPT;
/* No more keys: finish data, fence, header and filter pages (then take
 * them).  A run with zero keys is LSM_INVALID: the shim never writes empty
 * runs. */
LsmStatus	lsm_runbuilder_finish(LsmRunBuilder *b) LSM_NOEXCEPT;
/* LSM_OK with *out filled, or LSM_END when no page waits.  Filter pages are
 * encoded one at a time as they are taken. */
LsmStatus	lsm_runbuilder_take_page(LsmRunBuilder *b, LsmPageOut *out) LSM_NOEXCEPT;
uint64_t	lsm_runbuilder_count(const LsmRunBuilder *b) LSM_NOEXCEPT;
/* The finished run's shape; LSM_INVALID before lsm_runbuilder_finish. */
LsmStatus	lsm_runbuilder_info(const LsmRunBuilder *b, LsmRunInfo *out) LSM_NOEXCEPT;

/* ------------------------------------------------------------------------
 * Arena: fixed-size chunks carved from one shared-memory region; offsets are
 * 32-bit, relative to the region's base (offset 0 means "none").
 * REQUIRES: caller holds the arena lock for init/alloc/free.
 * ------------------------------------------------------------------------ */
size_t		lsm_arena_size(uint32_t nchunks, uint32_t chunk_size) LSM_NOEXCEPT;
LsmStatus	lsm_arena_init(void *base, uint32_t nchunks, uint32_t chunk_size) LSM_NOEXCEPT;
LsmStatus	lsm_arena_alloc_chunk(void *base, uint32_t *chunk) LSM_NOEXCEPT;
/* Returns a chunk taken by lsm_arena_alloc_chunk that nothing holds;
 * LSM_INVALID if chunk is not one the arena has handed out.  Freeing a chunk
 * twice is not detected (unless every chunk is free) and corrupts the free
 * list. */
LsmStatus	lsm_arena_free_chunk(void *base, uint32_t chunk) LSM_NOEXCEPT;
uint32_t	lsm_arena_free_chunks(const void *base) LSM_NOEXCEPT;
uint32_t	lsm_arena_chunk_size(const void *base) LSM_NOEXCEPT;

/* ------------------------------------------------------------------------
 * Memtable: a skiplist whose nodes live in arena chunks.  The struct itself is
 * plain data and lives wherever the shim puts it (a shared-memory slot).
 * ------------------------------------------------------------------------ */
typedef struct LsmMemtable
{
	uint32_t	head;			/* head node offset; 0 = empty/uninitialised */
	uint32_t	cur_chunk;		/* chunk being filled; 0 = none */
	uint32_t	chunk_used;		/* bytes used in cur_chunk */
	uint32_t	first_chunk;	/* chain of owned chunks (for release) */
	uint32_t	nchunks;
	uint32_t	max_height;
	uint64_t	nentries;
	uint64_t	key_bytes;		/* sum of key lengths */
	uint64_t	rng;			/* node-height random state */
	uint32_t	filter;			/* key filter: arena offset of its directory
								 * (in chunks of its own); 0 = none */
	uint32_t	filter_suffix;	/* trailing bytes of a key it leaves out */
} LsmMemtable;

/* Empty memtable (owns no chunks). */
void		lsm_memtable_init(LsmMemtable *mt) LSM_NOEXCEPT;
/* REQUIRES: memtable lock exclusive.  LSM_OK (also when the key is already
 * present: keys are unique), LSM_NEED_CHUNK (add a chunk and call again),
 * LSM_TOO_LARGE. */
LsmStatus	lsm_memtable_insert(void *base, LsmMemtable *mt, const uint8_t *key, size_t len) LSM_NOEXCEPT;
/* A key to insert: len bytes at key. */
typedef struct LsmKeyRef
{
	const uint8_t *key;
	int			len;
} LsmKeyRef;

/*
 * Insert keys[0 .. *consumed), given in any order: as many from the front as
 * fit in the current chunk, at most 64 a call.  One call searches them
 * together, in key order, so that the cache misses of their searches
 * overlap, and links them in key order.  LSM_OK: *consumed >= 1 (keys
 * already present count as inserted).  LSM_NEED_CHUNK: the first does not
 * fit (add a chunk and call again); LSM_TOO_LARGE or LSM_INVALID: the first
 * is over LSM_MAX_KEY_SIZE or not a key; *consumed is 0 and nothing changed
 * in these three cases.  A key that fails after the first ends the call
 * before it.  REQUIRES: memtable lock exclusive.
 */
LsmStatus	lsm_memtable_insert_many(void *base, LsmMemtable *mt, const LsmKeyRef *keys,
									 size_t n, size_t *consumed) LSM_NOEXCEPT;
/*
 * Insert the entries of a log page (content from *pos to len: each entry a
 * native-endian u16 length, then that many key bytes; doc/page_format.md)
 * into the memtable, one call per page.  LSM_OK: all inserted, *pos = len.
 * LSM_NEED_CHUNK: *pos is the entry that needs room (add a chunk and call
 * again).  LSM_CORRUPT: the entry at *pos has length 0 or runs past len.
 * LSM_TOO_LARGE: the entry at *pos is over LSM_MAX_KEY_SIZE.  Entries before
 * *pos are in the memtable in every case.  The caller validates entries as
 * keys of its index before (the core sees opaque bytes).
 * REQUIRES: memtable lock exclusive.
 */
LsmStatus	lsm_memtable_insert_log(void *base, LsmMemtable *mt, const uint8_t *content,
									size_t len, size_t *pos) LSM_NOEXCEPT;
/* REQUIRES: memtable lock exclusive. */
void		lsm_memtable_add_chunk(void *base, LsmMemtable *mt, uint32_t chunk) LSM_NOEXCEPT;
/* REQUIRES: memtable lock and arena lock exclusive.  Returns every chunk to
 * the arena and leaves mt empty. */
void		lsm_memtable_release(void *base, LsmMemtable *mt) LSM_NOEXCEPT;
/* The most chunks a memtable's key filter has (its directory's size). */
#define LSM_MEMTABLE_MAX_FILTER_CHUNKS 63
/*
 * Give an empty memtable a key filter in the n arena chunks chunks[0..n)
 * (1 to LSM_MEMTABLE_MAX_FILTER_CHUNKS), which the caller took with
 * lsm_arena_alloc_chunk; from then on the memtable holds them, and
 * lsm_memtable_release returns them.  Every key inserted from then on is
 * added to the filter without its last suffix bytes (the shim's heap TID), so
 * that lsm_memtable_may_contain answers "no key with this prefix" for most
 * prefixes a memtable does not hold, without a skiplist search.  A blocked
 * bloom filter: one 64-byte block per key, 4 bits in it; a chunk of 64 kB
 * holds 1,023 blocks (the first 1,019, after the directory of the filter's
 * chunks), about 10 bits a key for 50,000 keys a chunk.  Not counted in
 * lsm_memtable_memory.  The arena itself is not changed here, so the arena
 * lock is not needed, and callers should not hold it: the chunks are zeroed
 * here (up to 4 MB).  LSM_INVALID: the memtable has entries or a filter
 * already, n is out of range, a chunk is not one the arena has handed out,
 * appears twice or is one of the memtable's data chunks, or chunks are too
 * small; nothing changed then, and the caller still holds the chunks.  (A
 * chunk that is free in the arena is not detected: the caller must have
 * taken each one.)
 * REQUIRES: memtable lock exclusive.
 */
LsmStatus	lsm_memtable_add_filter(void *base, LsmMemtable *mt, uint32_t suffix,
									const uint32_t *chunks, uint32_t n) LSM_NOEXCEPT;
/* The chunks of the memtable's key filter; 0 without one. */
uint32_t	lsm_memtable_filter_chunks(const void *base, const LsmMemtable *mt) LSM_NOEXCEPT;
/*
 * 0 if no key of the memtable is prefix (len bytes) followed by exactly the
 * filter's suffix length of bytes; 1 if some may be (always 1 without a
 * filter).  REQUIRES: memtable lock (shared is enough).
 */
int			lsm_memtable_may_contain(const void *base, const LsmMemtable *mt,
									 const uint8_t *prefix, size_t len) LSM_NOEXCEPT;
/* Bytes of arena the memtable holds (chunks * chunk size). */
uint64_t	lsm_memtable_memory(const void *base, const LsmMemtable *mt) LSM_NOEXCEPT;

/*
 * Copy the memtable's keys in [lo, hi] into b (ascending): keys >= lo (lo NULL:
 * from the first) whose first hilen bytes are <= hi (hi NULL: to the last).
 * REQUIRES: memtable lock (shared is enough).
 */
LsmStatus	lsm_memtable_copy_range(const void *base, const LsmMemtable *mt,
									const uint8_t *lo, size_t lolen,
									const uint8_t *hi, size_t hilen,
									LsmBatch *b) LSM_NOEXCEPT;

/*
 * One chunk of a streaming scan of the keys in [lo, hi] (bounds as in
 * lsm_memtable_copy_range): appends at most max keys to b, ascending.
 * Forward: the first keys > resume (resume NULL: the first keys >= lo).
 * Backward: the last keys < resume (resume NULL: the last keys within hi).
 * *more is 1 when the chunk stopped at max with keys of the range left in
 * that direction, 0 when the range is exhausted.  A scan calls again with
 * resume = the last (forward) or first (backward) key it got; since keys are
 * never removed from a memtable, resuming by key misses none that existed.
 * REQUIRES: memtable lock (shared is enough), max > 0.
 */
LsmStatus	lsm_memtable_copy_chunk(const void *base, const LsmMemtable *mt, int backward,
									const uint8_t *lo, size_t lolen,
									const uint8_t *hi, size_t hilen,
									const uint8_t *resume, size_t resumelen,
									size_t max, LsmBatch *b, int *more) LSM_NOEXCEPT;

/* In-order iteration without copying.  REQUIRES: memtable lock held for the
 * iterator's whole life. */
typedef struct LsmMemtableIter
{
	const void *base;
	uint32_t	node;
} LsmMemtableIter;

void		lsm_memtable_seek(const void *base, const LsmMemtable *mt,
							  const uint8_t *target, size_t tlen,	/* target NULL: first */
							  LsmMemtableIter *it) LSM_NOEXCEPT;
int			lsm_memtable_iter_valid(const LsmMemtableIter *it) LSM_NOEXCEPT;
void		lsm_memtable_iter_next(LsmMemtableIter *it) LSM_NOEXCEPT;
void		lsm_memtable_iter_key(const LsmMemtableIter *it, const uint8_t **key, size_t *len) LSM_NOEXCEPT;

/* ------------------------------------------------------------------------
 * Merging iterator over n sources (memtable copy, runs), each delivered as a
 * sequence of ascending batches.  Yields the union in ascending order (or
 * descending when backward), each distinct key once, restricted to:
 *   lo: keys >= lo                                   (NULL: unbounded)
 *   hi: keys whose first hilen bytes are <= hi      (NULL: unbounded)
 * ------------------------------------------------------------------------ */
typedef struct LsmMerge LsmMerge;

LsmStatus	lsm_merge_create(int nsources, int backward,
							 const uint8_t *lo, size_t lolen,
							 const uint8_t *hi, size_t hilen,
							 LsmMerge **out) LSM_NOEXCEPT;
void		lsm_merge_destroy(LsmMerge *m) LSM_NOEXCEPT;	/* NULL ok */
/*
 * The batch of source src, to be cleared and refilled by the caller when
 * lsm_merge_next asked for it; then call lsm_merge_source_ready (or
 * lsm_merge_source_done if the source has no more entries).  Forward scans
 * feed a source's batches in ascending order, backward scans in descending
 * order of batches (each batch itself is always ascending).
 */
LsmBatch   *lsm_merge_source_batch(LsmMerge *m, int src) LSM_NOEXCEPT;
void		lsm_merge_source_ready(LsmMerge *m, int src) LSM_NOEXCEPT;
void		lsm_merge_source_done(LsmMerge *m, int src) LSM_NOEXCEPT;
/*
 * LSM_OK: *key and *len hold the next key (valid until the next call).
 * LSM_NEED_PAGE: *need_src has no entries left in its batch; refill it (or
 *   mark it done) and call again.  Initially every source needs a batch.
 *   A source whose batch passed the scan's far bound is finished by the
 *   iterator itself and never asked again.
 * LSM_END: every source is done.
 */
LsmStatus	lsm_merge_next(LsmMerge *m, const uint8_t **key, size_t *len, int *need_src) LSM_NOEXCEPT;
/*
 * lsm_merge_next for up to max keys at once (a scan's per-entry cost): on
 * LSM_OK, keys[0..*n) and lens[0..*n) hold 1 <= *n <= max keys in scan order,
 * all of one source's batch, the run of keys that lsm_merge_next would have
 * returned next, one by one, without asking for a page (it stops before a
 * key that another source's batch ties or precedes, before the batch's end
 * and before the far bound).  They stay valid until the next call.  Other
 * statuses as lsm_merge_next (*n = 0).  REQUIRES: max >= 1.
 */
LsmStatus	lsm_merge_next_many(LsmMerge *m, const uint8_t **keys, size_t *lens,
								int max, int *n, int *need_src) LSM_NOEXCEPT;
/*
 * Feed source src (which lsm_merge_next asked for) the next data page of a
 * run, one call per page: the page's content is decoded into the source's
 * batch (for a forward scan with a bound, only what the scan needs of it, see
 * lsm_batch_add_datapage_range) and the source is marked ready.  If in_range
 * is not NULL, *in_range is 1 when a decoded key lies within [lo, hi] (a
 * filter probe that let this page be read was not a false positive), else 0.
 * LSM_CORRUPT if the page fails validation (the source is left unfed).
 */
LsmStatus	lsm_merge_feed_datapage(LsmMerge *m, int src, const uint8_t *content,
									size_t len, int *in_range) LSM_NOEXCEPT;
/* The source of the key lsm_merge_next last returned with LSM_OK (or of the
 * page that failed validation when it returned LSM_CORRUPT); -1 if none. */
int			lsm_merge_last_source(const LsmMerge *m) LSM_NOEXCEPT;
/*
 * Decode data pages lazily (scans): a page that lsm_merge_feed_datapage
 * decodes whole (backward, or forward without bounds; with in_range NULL) is
 * decoded a piece at a time instead (restart groups, from the scan's near
 * end, pieces doubling), each piece only when the merge reaches it;
 * lsm_merge_next then returns LSM_CORRUPT for a piece that fails validation,
 * and lsm_merge_last_source names the source.  The page's content is copied
 * (the caller's buffer may go after the call).  Call before the first
 * lsm_merge_next.
 */
void		lsm_merge_set_lazy(LsmMerge *m, int on) LSM_NOEXCEPT;

/* ------------------------------------------------------------------------
 * Hashing (xxHash64), for key-encoding fingerprints and bloom filters.
 * ------------------------------------------------------------------------ */
uint64_t	lsm_hash64(const void *data, size_t len, uint64_t seed) LSM_NOEXCEPT;

/* ------------------------------------------------------------------------
 * Process start-up.
 *
 * Bind the C++ runtime's calls now: call once in the postmaster (while
 * preloading), so that the backends it forks inherit the bindings.  The
 * server loads libstdc++ at start (ICU needs it) with lazy binding, so each
 * operator the core uses (new[], delete[], their aligned forms) is bound on
 * its first call in each process: a symbol search over every library the
 * server has loaded, about 0.9 ms of a new connection's first lsm scan.
 * Allocates and frees a few small objects of the kinds a scan, a merge and
 * a filter use; does nothing else.
 * ------------------------------------------------------------------------ */
void		lsm_core_bind_runtime(void) LSM_NOEXCEPT;

#ifdef __cplusplus
}
#endif

/* Further parts of the C API, one header each (same rules as above). */
#include "lsm_core_bloom.h"		/* bloom filters of runs */
#include "lsm_core_picker.h"	/* compaction picker */
#include "lsm_core_rate.h"		/* the delayed write rate */

#endif							/* LSM_CORE_H */
