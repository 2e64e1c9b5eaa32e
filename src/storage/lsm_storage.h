/*
 * lsm_storage.h — the storage floor: everything on the index's pages.  The
 * page formats (byte layouts: doc/page_format.md), page checks and the
 * corruption error (lsmcheck.c), the metapage and the page allocator
 * (lsmstore.c, lsmalloc.c), the log — append (lsmlog.c), catch-up of the
 * slot's memtables (lsmreplay.c) and their load from scratch (lsmload.c) —
 * the run writer (lsmstore.c) and its bloom filter (lsmbloom.c), run cursors
 * and merges (lsmrun.c), and the backend cache of run headers, fences and
 * filters (lsmruncache.c).
 *
 * It uses shmem/ (slots, arena), key/ and the C++ core below it, and never
 * the access method or maintenance above it: policy reaches it as arguments
 * and callbacks (LsmStop, LsmDeadCallback).
 *
 * Lock order (within one index): slot lock -> metapage buffer lock -> any
 * other buffer lock of the index, and never two non-meta buffer locks at
 * once except a log page and the new page linked after it.  Relation
 * extension (ReadBuffer P_NEW) happens with the metapage lock held only by
 * the writer that accounts the page in the metapage in the same record.
 * Log replay holds the slot lock for at most LSM_REPLAY_STEP_PAGES pages
 * (lsmreplay_int.h) at a time; a load from scratch replays without it, into
 * private memtables (lsmload.c), while others wait on the slot's load_cv,
 * never on a lock.
 *
 * Invariants.
 *  - Every page below the metapage's nblocks is exactly one of: the
 *    metapage, a page of a log chain, a page of a run in the manifest, a page
 *    of a free extent, or a page of a reserved extent (lsm_am.check_index).
 *  - Every change of the metapage is one generic WAL record; run pages are
 *    logged as full images before the record that publishes the run.
 *  - A log entry reaches the log page (WAL) before the memtable; the slot's
 *    log state (loaded, in_recovery, epoch, head, tail, pages, loader) is
 *    written by the log module (lsmlog.c, lsmreplay.c, lsmload.c) only.
 *  - A slot that is loaded but in_recovery holds a prefix of every chain
 *    (between catch-up steps, after a load's swap, on a standby): every
 *    acquirer catches it up before use, and nobody appends to it.
 *  - Pages of retired runs are reused only after their reuse horizon.
 */
#ifndef LSM_STORAGE_H
#define LSM_STORAGE_H

#include "postgres.h"

#include "access/genam.h"
#include "access/generic_xlog.h"
#include "storage/buf.h"
#include "storage/bufpage.h"
#include "utils/relcache.h"

#include "shmem/lsm_shmem.h"

/* ------------------------------------------------------------------------
 * On-disk constants.  Do not change without bumping LSM_FORMAT_VERSION.
 * ------------------------------------------------------------------------ */
#define LSM_MAGIC				0x4C534D31	/* "LSM1" */
#define LSM_FORMAT_VERSION		2
#define LSM_METAPAGE_BLKNO		0
#define LSM_PAGE_ID				0xFF8A	/* last 2 bytes of special space */

/* page kinds (LsmPageOpaque.kind) */
#define LSM_PK_META				1
#define LSM_PK_LOG				2
#define LSM_PK_RUN_HEADER		3
#define LSM_PK_RUN_DATA			4
#define LSM_PK_RUN_FENCE		5
#define LSM_PK_RUN_BLOOM		6

/* Special space of every lsm page. */
typedef struct LsmPageOpaqueData
{
	uint16		kind;			/* LSM_PK_* */
	uint16		version;		/* LSM_FORMAT_VERSION */
	uint32		owner;			/* run pages: run id; log pages: log epoch */
	BlockNumber next;			/* log pages: next page of the chain */
	uint16		checksum;		/* log pages: LsmLogPageChecksum of the
								 * content (0: none, written before 0.3);
								 * other pages: 0 */
	uint16		page_id;		/* LSM_PAGE_ID, for tools like pg_filedump */
} LsmPageOpaqueData;

typedef LsmPageOpaqueData *LsmPageOpaque;

#define LsmPageGetOpaque(page) ((LsmPageOpaque) PageGetSpecialPointer(page))
#define LSM_CONTENT_OFFSET		MAXALIGN(SizeOfPageHeaderData)
#define LSM_CONTENT_CAP \
	(BLCKSZ - LSM_CONTENT_OFFSET - MAXALIGN(sizeof(LsmPageOpaqueData)))
#define LsmPageContent(page)	((uint8 *) (page) + LSM_CONTENT_OFFSET)
#define LsmPageContentLen(page) \
	((int) ((PageHeader) (page))->pd_lower - (int) LSM_CONTENT_OFFSET)

/* One run in the manifest. */
typedef struct LsmRunRef
{
	uint32		run_id;
	uint16		level;			/* 0: flushed memtables; 1..LSM_PICK_MAX_LEVEL */
	uint16		bloom_cols;		/* leading columns the filter hashes; 0: none */
	BlockNumber start;			/* block of the run's header page */
	uint32		npages;			/* pages in the extent, header and filter included */
	uint64		nentries;		/* live entries (VACUUM keeps it exact) */
	uint32		bloom_start;	/* relative page of the first filter page */
	uint32		bloom_nblocks;	/* 64-byte filter blocks; 0: no filter */
} LsmRunRef;

/* A log chain: the durable copy of one memtable. */
typedef struct LsmLogChain
{
	uint32		epoch;			/* every page of the chain carries it */
	BlockNumber head;			/* first page; InvalidBlockNumber: empty */
} LsmLogChain;

/* An extent of pages: free, or reserved by an unfinished writer. */
typedef struct LsmExtent
{
	BlockNumber start;
	uint32		npages;			/* 0: unused entry */
	uint64		reuse_after;	/* FullTransactionId: reusable once no
								 * snapshot can be older; 0: at once */
} LsmExtent;

#define LSM_MAX_RUNS			128
#define LSM_MAX_FREE			160
#define LSM_RESV_FLUSH			0
#define LSM_RESV_COMPACT		1

/*
 * Metapage content (block 0).  Every page below nblocks is exactly one of:
 * the metapage, a page of a log chain (active or immutable), a page of a run
 * in the manifest, a page of a free extent, or a page of a reserved extent.
 * Pages at or beyond nblocks are unused (left by a crash) and are handed
 * out again from the end.  lsm_am.check_index() verifies this.
 */
typedef struct LsmMetaPageData
{
	uint32		magic;
	uint32		version;
	uint64		key_fingerprint;	/* LsmKeyDesc.fingerprint at build */
	uint64		instance_id;	/* random per build: tells index incarnations
								 * apart in shared memory */
	uint32		next_run_id;
	uint32		next_epoch;		/* epoch of the next log chain */
	LsmLogChain active;			/* chain of the memtable taking inserts */
	uint32		nimm;			/* immutable memtables waiting for a flush */
	LsmLogChain imm[LSM_MAX_IMM];	/* oldest first */
	BlockNumber nblocks;		/* pages accounted for (see above) */
	LsmExtent	resv[4];		/* [LSM_RESV_*]: extent of an unfinished
								 * writer; [2 + LSM_RESV_*]: its previous
								 * extent while it moves (freed at the end) */
	uint64		nflushes;
	uint64		nmerges;		/* compactions that rewrote runs */
	uint64		nmoves;			/* trivial moves */
	uint64		pages_flushed;	/* run pages written by flushes */
	uint64		pages_compacted;	/* run pages written by compactions */
	uint64		leaked_pages;	/* pages dropped because the free list was
								 * full (never expected) */
	uint64		reserved[4];
	uint32		nfree;
	uint32		nruns;
	LsmExtent	free[LSM_MAX_FREE];	/* sorted by start, coalesced */
	LsmRunRef	runs[LSM_MAX_RUNS];	/* oldest first */
} LsmMetaPageData;

#define LsmPageGetMeta(page)	((LsmMetaPageData *) LsmPageContent(page))

StaticAssertDecl(sizeof(LsmMetaPageData) <= LSM_CONTENT_CAP,
				 "the metapage content must fit a page");

/*
 * Log pages: content is a sequence of entries, each a uint16 length (native
 * byte order) followed by that many key bytes; pd_lower marks the end.  The
 * special space's checksum covers the content, so a damaged entry is found
 * when the memtable is rebuilt, even without data checksums.
 */
#define LSM_LOG_ENTRY_HDR		sizeof(uint16)

/* Per-backend cache in rd_amcache (lsmreplay.c). */
typedef struct LsmRelCache
{
	int			slot;			/* -1: none yet */
	uint32		generation;
	uint64		instance_id;
	LsmKeyDesc	desc;
} LsmRelCache;

/* the index's relcache entry: key descriptor, slot number (lsmreplay.c) */
extern LsmRelCache *LsmGetRelCache(Relation index);

/*
 * Does a memtable of this index get a key filter?  The filter hashes an
 * entry without its last LSM_TID_SIZE bytes; in an index with INCLUDE
 * columns their values come before the TID, so its entries have no suffix of
 * fixed length to leave out: no filter there (lookups search the memtable).
 */
static inline bool
LsmMemtableFiltered(Relation index)
{
	return LsmGetRelCache(index)->desc.ninclude == 0;
}
/*
 * Lock and return the index's slot, its memtable caught up with the log
 * pages (lsmreplay.c).  May sleep (interruptibly) while another backend
 * loads the slot, and replay a whole log without the lock.  REQUIRES: lsm_am
 * preloaded, no LWLock held.
 */
extern LsmSlot *LsmSlotAcquire(Relation index, LWLockMode mode);
extern void LsmSlotRelease(Relation index, LsmSlot *slot);
extern uint32 LsmCountLevel0(const LsmMetaPageData *meta);

/*
 * Scans of this backend that hold a manifest (lsm_manifest_readers): the
 * allocator may treat retired runs as unread only when there are none.  The
 * scan (am/lsmscanmerge.c) counts itself in and out.
 */
extern int	lsm_manifest_readers;

/*
 * Pages this process's run writers copied when a reservation could not
 * grow in place and moved (LsmReserveMove); a job's log line reports its
 * share (lsm_am.log_maintenance).
 */
extern uint64 lsm_moved_pages;

/* ------------------------------------------------------------------------
 * Pages, metapage, log (lsmlog.c) and the run writer (lsmstore.c)
 * ------------------------------------------------------------------------ */
/*
 * Asked between pages of a flush or compaction: fn(index, arg) returning true
 * abandons it (the reserved pages are reclaimed by the next one).  Passed as
 * a pointer; NULL: never stop.  arg carries the caller's state (no statics).
 */
typedef bool (*LsmStopCallback) (Relation index, void *arg);
typedef struct LsmStop
{
	LsmStopCallback fn;
	void	   *arg;
} LsmStop;

extern void LsmInitPage(Page page, uint16 kind, uint32 owner);
extern void LsmInitMetaPage(Page page, uint64 fingerprint);
/* page checks and the corruption error (lsmcheck.c) */
extern void LsmCheckPage(Relation index, Buffer buf, uint16 kind, uint32 owner);
extern void LsmCheckMeta(Relation index, const LsmMetaPageData *meta);
/*
 * Every corruption ERROR has one shape: ERRCODE_INDEX_CORRUPTED, "index ... is
 * corrupted at block N" (or "in its memtable" for blkno = InvalidBlockNumber,
 * used only where no page is involved), what is wrong as the detail, and a
 * hint to REINDEX.
 */
LSM_NORETURN extern void LsmReportCorruption(Relation index, BlockNumber blkno, const char *fmt,...)
			pg_attribute_printf(3, 4);
extern void LsmReadMeta(Relation index, LsmMetaPageData *meta_out,
						LsmRunRef **runs_out);
extern void LsmReadRunCounts(Relation index, int *nruns, int *nfiltered);
extern Buffer LsmLockMeta(Relation index);
/* One entry for LsmLogAppend (the core's key reference, so a batch goes to
 * lsm_memtable_insert_many as it is). */
typedef LsmKeyRef LsmLogEntry;
extern void LsmLogAppend(Relation index, LsmSlot *slot, const LsmLogEntry *ents, int n,
						 int *logged);
/* switch: the active memtable becomes immutable, a new chain starts */
extern void LsmLogStartChain(Relation index, LsmSlot *slot);
/* inserts that put entries into the memtable before the log */
extern void LsmLogMarkAhead(LsmSlot *slot);
extern void LsmLogAppendGroup(Relation index, LsmSlot *slot, const LsmLogEntry *ents,
							  int first, int i, volatile int *done);
extern int	LsmCollectChain(Relation index, uint32 epoch, BlockNumber head,
							BlockNumber **out);
extern uint16 LsmLogPageChecksum(Page page);
extern void LsmReportStatus(Relation index, LsmStatus st, BlockNumber blkno,
							const char *what);

/* page allocation (lsmalloc.c; all of it inside metapage records) */
extern uint64 LsmRetireStamp(void);
extern BlockNumber LsmAllocChoose(LsmMetaPageData *m, uint32 npages);
extern void LsmAllocTake(LsmMetaPageData *m, BlockNumber start, uint32 npages);
extern bool LsmReserveGrow(Relation index, int which, uint32 more);
extern BlockNumber LsmReserveMove(Relation index, int which, uint32 npages);
/* entries the free list holds: LSM_MAX_FREE (fewer: lsm_am.free_list_limit) */
extern uint32 LsmFreeMax(void);
extern void LsmFreeAdd(LsmMetaPageData *m, BlockNumber start, uint32 npages,
					   uint64 reuse_after);
extern void LsmFreeSettle(LsmMetaPageData *m, bool all);
extern bool LsmShrink(Relation index, BlockNumber *truncated);
extern BlockNumber LsmTruncateTo(Relation index, BlockNumber nblocks, XLogRecPtr lsn,
								 bool test_delay);
extern BlockNumber LsmReserve(Relation index, int which, uint32 npages,
							  uint32 *run_id);
extern void LsmReserveAtEnd(bool on);
extern BlockNumber LsmReserveBelow(Relation index, int which, uint32 npages,
								   BlockNumber below, uint32 *run_id);
extern void LsmReserveFinish(LsmMetaPageData *m, int which, uint32 used);
extern void LsmReserveCancel(Relation index, int which);

/*
 * Pages written (exclusively locked, dirty) that nobody else can reach yet,
 * logged as full images 32 to a record (XLR_MAX_BLOCK_ID) soon after they
 * are written: a merge's and a relocation's output, whose data pages go
 * through a ring of buffers (doc/impl.md, "Merges and shared buffers").  A
 * page keeps its pin until it is logged, so the ring cannot write it out
 * before.  lsmstore.c.
 */
#define LSM_PAGELOG_BATCH	32

typedef struct LsmPageLog
{
	Relation	index;
	int			n;
	Buffer		bufs[LSM_PAGELOG_BATCH];
} LsmPageLog;

extern void LsmPageLogAdd(LsmPageLog *pl, Relation index, Buffer buf);
extern void LsmPageLogFlush(LsmPageLog *pl);
extern void LsmPageLogDrop(LsmPageLog *pl);

typedef struct LsmRunWriter
{
	Relation	index;
	LsmRunBuilder *builder;		/* owns the run's filter; owned by cxt */
	MemoryContext cxt;			/* the writer's; deleting it frees builder */
	uint32		run_id;
	int			which;			/* LSM_RESV_* */
	BlockNumber start;			/* first block of the reservation */
	uint32		cap;			/* pages reserved */
	uint32		hiwater;		/* 1 + highest relative page written */
	bool		delay;			/* lsm_am.flush_delay_ms applies */
	const LsmStop *stop;		/* asked after every page; NULL: never */
	bool		stopped;		/* stop() said so: the caller abandons */
	/* bloom filter: leading columns it hashes (0: none), lsmbloom.c */
	int			bloom_cols;
	uint32		bloom_pages;	/* pages the filter will take (LsmPieceFull) */
	const LsmKeyDesc *desc;
	/* a new index's build (LsmRunWriterBeginDirect): pages bypass shared
	 * buffers; NULL otherwise */
	struct LsmDirectWrites *direct;
	/*
	 * A merge's output (LSM_RESV_COMPACT): data pages through a ring of
	 * buffers (BAS_BULKWRITE), so that a merge does not sweep shared buffers
	 * of the pages readers keep using; each page is logged soon after it is
	 * written (pend), not at the end.  NULL otherwise (a flush: its pages are
	 * logged at the end, log_newpage_range).
	 */
	BufferAccessStrategy ring;
	LsmPageLog	pend;			/* written, pinned, not yet logged */
} LsmRunWriter;

extern void LsmRunWriterBegin(LsmRunWriter *w, Relation index, int which,
							  uint32 est_pages, uint64 expected_keys, bool delay);
extern void LsmRunWriterBeginDirect(LsmRunWriter *w, Relation index,
									uint64 expected_keys, bool delay);
extern void LsmRunWriterAdd(LsmRunWriter *w, const uint8 *key, int len);
extern void LsmRunWriterFinish(LsmRunWriter *w, LsmRunRef *ref, uint16 level);
extern void LsmRunWriterCutDirect(LsmRunWriter *w, LsmRunRef *ref,
								  uint64 expected_keys);
extern void LsmRunWriterAbandon(LsmRunWriter *w);
extern void LsmRunWriterNewBuilder(LsmRunWriter *w, uint64 expected_keys);

/* lsmbloom.c: what the run writer's filter hashes (the core builds it) */
extern int	LsmBloomBegin(LsmRunWriter *w, Relation index);
extern size_t LsmBloomPrefixLen(LsmRunWriter *w, const uint8 *key, int len);

/*
 * Backend cache of a run's header, fence pages and filter pages (lsmruncache.c),
 * each page loaded the first time a lookup needs it.  LsmRunCacheGet makes the
 * entry without reading anything (a lookup the filter rules out never reads
 * the run's header); LsmRunCacheHeader reads the header.
 */
typedef struct LsmRunCacheEntry
{
	char		key[24];		/* LsmRunCacheKey */
	bool		valid;			/* made (extent checked, filter arrays) */
	bool		header_ok;		/* header read, parsed and checked */
	LsmRunRef	ref;			/* the run (start, pages, filter) */
	uint8	   *header;			/* content of relative page 0 */
	int			header_len;
	LsmRunHeader hdr;			/* parsed; points into header */
	uint32		fence_first;	/* relative page of the first fence page */
	uint32		nfence;
	uint8	  **fence;			/* contents of the fence pages, or NULL */
	int		   *fence_len;
	uint32		bloom_pages;	/* filter pages */
	uint32		bloom_bpp;		/* blocks per filter page */
	const uint8 **bloom_blocks; /* per filter page: its blocks, or NULL */
	uint32	   *bloom_k;		/* per filter page: k */
	uint8	   *bloom_seen;		/* per filter page: LSM_SEEN_* */
} LsmRunCacheEntry;

/* LsmRunCacheEntry.bloom_seen[] */
#define LSM_SEEN_NEVER			0
#define LSM_SEEN_PROBED			1	/* probed in its shared buffer once */
#define LSM_SEEN_PASSED			2	/* passed over once: not in memory */

/* A filter's answer for a key (LsmRunCacheMayContain). */
typedef enum LsmFilterAnswer
{
	LSM_FILTER_ABSENT,			/* the run has no entry with the key */
	LSM_FILTER_MAYBE,			/* it may have one */
	LSM_FILTER_NOT_ASKED		/* the filter page was not in memory, and
								 * the caller allowed passing it over */
} LsmFilterAnswer;

extern LsmRunCacheEntry *LsmRunCacheGet(Relation index, const LsmRunRef *ref);
extern void LsmRunCacheHeader(Relation index, LsmRunCacheEntry *e);
extern bool LsmRunCacheHeaderInMemory(Relation index, LsmRunCacheEntry *e);
extern const uint8 *LsmRunCacheFenceInMemory(Relation index, LsmRunCacheEntry *e,
											 uint32 rel, int *len);
extern bool LsmRunCacheFilterCopied(const LsmRunCacheEntry *e, uint64 h);
extern LsmFilterAnswer LsmRunCacheMayContain(Relation index, LsmRunCacheEntry *e,
											 uint64 h, bool pass_cold, bool share);
/* bit l set: level l >= 1 holds a quarter of the runs' entries or more;
 * share (if not NULL, LSM_PICK_MAX_LEVEL + 1 of them): each level's share */
extern uint32 LsmLargeLevels(const LsmRunRef *runs, int nruns, double *share);
/* into the shared metadata cache: the header and fence pages of runs just
 * published in manifest m, and the filter pages of those not in one of its
 * large levels (lsmruncache.c) */
extern void LsmRunCacheWarm(Relation index, const LsmMetaPageData *m,
							const LsmRunRef *runs, int nruns);
/* out of the shared metadata cache: the pages of runs just retired */
extern void LsmRunCacheForget(Relation index, const LsmRunRef *runs, int nruns);
/* what LsmRunCacheWarmIndex did */
typedef struct LsmWarmResult
{
	int			runs;			/* runs of the manifest */
	int			pages;			/* pages read and put into the shared cache */
	int			cached;			/* pages it held already */
	bool		full;			/* pages left out: more than the cache holds */
	bool		stopped;		/* stop() made it give up */
} LsmWarmResult;
/* into the shared metadata cache: every run's header and fence pages, and
 * the filters outside the large levels, those it lacks (a worker, on the
 * index's first use after a start; the caller keeps runs from retiring) */
extern void LsmRunCacheWarmIndex(Relation index, const LsmMetaPageData *m,
								 const LsmStop *stop, LsmWarmResult *res);
extern const uint8 *LsmRunCacheFence(Relation index, LsmRunCacheEntry *e, uint32 rel,
									 int *len);

/* Callback deciding whether a TID is dead (VACUUM); NULL keeps everything. */
typedef bool (*LsmDeadCallback) (ItemPointer tid, void *state);
/* the one filter of flushes, merges and rewrites (lsmcheck.c) */
extern bool LsmEntryIsDead(const uint8 *key, size_t len, LsmDeadCallback dead,
						   void *dead_state, double *removed);
/* the one check that a page belongs to log chain epoch (lsmcheck.c) */
extern bool LsmIsLogPageOf(Page page, uint32 epoch);

/* ------------------------------------------------------------------------
 * Reading runs, merging (lsmrun.c)
 * ------------------------------------------------------------------------ */
typedef struct LsmRunCursor
{
	LsmRunRef	ref;
	bool		started;
	bool		done;
	uint32		ndata;			/* data pages: relative pages 1..ndata */
	uint32		cur;			/* current data page */
	/* point lookups (am/lsmscanmerge.c sets bloom_check and bloom_hash) */
	bool		bloom_check;	/* probe the run's filter before searching */
	uint64		bloom_hash;
	bool		bloom_pass_cold;	/* ... unless its page is not in memory
									 * (a large level, see lsmscanmerge.c) */
	bool		bloom_large;	/* a large level's run: its filter pages stay
								 * out of the shared metadata cache */
	double		bloom_level_share;	/* of the index's entries in its level */
	bool		probed;			/* the filter was probed */
	bool		filtered;		/* ... and said absent */
	uint32		data_pages;		/* data pages read */
	bool		matched;		/* a page read held a key in the range */
	/* how data pages are read: NULL for scans; a merge reads its inputs
	 * through a small ring (BAS_BULKREAD), so that streaming gigabytes of
	 * runs does not evict the pages lookups and inserts keep using */
	BufferAccessStrategy strategy;
	/* a level in pieces read as one source (lsmchain.c) */
	int			bloom_cols_hashed;	/* filter columns bloom_hash covers (0) */
	const LsmRunRef *chain;		/* the level's runs in scan order, or NULL */
	int			nchain;
	int			chain_pos;		/* next run of chain */
	uint32		acc_probes;		/* filter counts of the chain's finished runs */
	uint32		acc_negatives;
	uint32		acc_falsepos;
} LsmRunCursor;

#define LSM_BLOOM_SEED			LSM_BLOOM_HASH_SEED	/* xxHash seed of filter keys */

/* Scan range in encoded-key space (see lsm_merge_create). */
typedef struct LsmRange
{
	const uint8 *lo;
	int			lolen;
	const uint8 *hi;
	int			hilen;
} LsmRange;

/* The core's key order: memcmp, a proper prefix first (slice.h's CompareKeys). */
static inline int
LsmKeyCmp(const uint8 *a, size_t alen, const uint8 *b, size_t blen)
{
	int			c = memcmp(a, b, Min(alen, blen));

	if (c != 0)
		return c;
	return (alen > blen) - (alen < blen);
}

/*
 * Is key beyond the range's prefix upper bound (its first min(klen, hilen)
 * bytes greater than hi's; slice.h's BeyondPrefixUpper)?  False without hi.
 */
static inline bool
LsmKeyBeyondHi(const LsmRange *range, const uint8 *key, size_t klen)
{
	return range->hi != NULL && memcmp(key, range->hi, Min(klen, (size_t) range->hilen)) > 0;
}

extern void LsmRunCursorInit(LsmRunCursor *c, const LsmRunRef *ref);
extern void LsmFeedRun(Relation index, LsmMerge *m, int src, LsmRunCursor *c,
					   bool backward, const LsmRange *range);

/* lsmchain.c */
extern int	LsmScanCursors(Relation index, const LsmRunRef *runs, int nruns,
						   bool backward, const LsmRange *range,
						   LsmRunCursor **out);
extern bool LsmRunCursorNextRun(LsmRunCursor *c);

/*
 * Output of LsmMergeRuns: one run, or (piece_pages > 0) runs cut into
 * pieces of about piece_pages data pages (lsmpiece.c).  Every run but the
 * last is held on the free list until publication; the last one is in the
 * compaction reservation.
 */
typedef struct LsmMergeOut
{
	uint32		piece_pages;	/* in: data pages per piece; 0: one run */
	int			max_pieces;		/* in: most runs to write (>= 1) */
	int			nruns;			/* out: runs written (0: no entry left) */
	LsmRunRef  *runs;			/* out: palloc'd, in key order */
} LsmMergeOut;

extern bool LsmMergeRuns(Relation index, const LsmRunRef *inputs, int nin,
						 uint16 level, const LsmStop *stop, LsmDeadCallback dead,
						 void *dead_state, double *removed, LsmMergeOut *out);

/* lsmpiece.c: leveled output cut into pieces (their size: LsmPiecePages, maint) */
extern int	LsmPieceLimit(const LsmMetaPageData *meta, int nin);
extern bool LsmPieceRoom(Relation index);
extern uint32 LsmPieceFirstExtent(Relation index, uint32 target);
extern uint64 LsmPieceKeys(uint64 keys, uint32 npages, uint32 target);
extern bool LsmPieceFull(const LsmRunWriter *w);
extern void LsmRunWriterCut(LsmRunWriter *w, LsmRunRef *ref, uint16 level,
							uint32 target, uint64 expected_keys, bool last);
extern void LsmPiecesRelease(Relation index);
extern void LsmPiecesTake(LsmMetaPageData *m, const LsmRunRef *runs, int n);

/*
 * reuse_after of a free extent that holds a finished piece of a compaction
 * still running: never reusable by the horizon rule; published (taken off
 * the free list) with the compaction, or released (made reusable) by the
 * next compaction or a shrink if that one failed or crashed.
 */
#define LSM_REUSE_HELD			PG_UINT64_MAX
extern void LsmCheckStatus(Relation index, LsmStatus st, BlockNumber blkno,
						   const char *what);
extern Buffer LsmReadRunBuffer(Relation index, const LsmRunRef *ref, uint32 rel,
							   uint16 kind);
extern Buffer LsmReadRunBufferExt(Relation index, const LsmRunRef *ref, uint32 rel,
								  uint16 kind, BufferAccessStrategy strategy);
extern int	LsmReadRunPage(Relation index, const LsmRunRef *ref, uint32 rel, uint16 kind,
						   uint8 *dst);
extern void LsmReadRunBounds(Relation index, const LsmRunRef *ref,
							 uint8 **min, int *minlen, uint8 **max, int *maxlen);

#endif							/* LSM_STORAGE_H */
