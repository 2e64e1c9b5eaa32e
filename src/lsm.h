/*
 * lsm.h — constants, page layouts, shared structures and prototypes of the
 * lsm_am C shim.  The only place (with lsmkey.h) that defines on-disk structs.
 * Byte layouts: doc/page_format.md.  Design: doc/impl.md.
 */
#ifndef LSM_H
#define LSM_H

#include "postgres.h"

#include "access/amapi.h"
#include "access/genam.h"
#include "access/generic_xlog.h"
#include "nodes/execnodes.h"
#include "nodes/pathnodes.h"
#include "storage/bufpage.h"
#include "storage/condition_variable.h"
#include "storage/lwlock.h"
#include "utils/relcache.h"

#include "core/lsm_core.h"
#include "lsm_compat.h"
#include "lsmkey.h"

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

#define LSM_MAX_IMM				2	/* immutable memtables per index */
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

/* ------------------------------------------------------------------------
 * Options
 * ------------------------------------------------------------------------ */
typedef struct LsmOptions
{
	int32		vl_len_;		/* varlena header (do not touch directly!) */
	int			memtable_size;	/* kB; -1 = lsm_am.memtable_size */
	int			compaction;		/* LsmCompactionPolicy */
	int			size_ratio;
	int			bloom_bits_per_key;	/* 0: no filters */
	int			bloom_columns;	/* leading columns hashed; 0: all */
} LsmOptions;

#define LSM_MEMTABLE_SIZE_MIN	64		/* kB */
#define LSM_MEMTABLE_SIZE_MAX	1048576 /* kB */
#define LSM_MEMTABLE_SIZE_DEFAULT 4096	/* kB */

/* GUCs */
extern int	lsm_memory_mb;
extern int	lsm_max_indexes;
extern int	lsm_memtable_size_kb;
extern int	lsm_flush_delay_ms;
extern int	lsm_l0_compaction_trigger;
extern int	lsm_l0_slowdown_trigger;
extern int	lsm_l0_stop_trigger;

/* ------------------------------------------------------------------------
 * Shared memory (lsmshmem.c)
 * ------------------------------------------------------------------------ */
#define LSM_CHUNK_SIZE			(64 * 1024)

typedef struct LsmImmutable
{
	LsmMemtable mt;
	uint32		epoch;			/* its log chain */
	BlockNumber head;
	uint32		pages;
	uint64		id;				/* memtable identity (see LsmSlot.mt_id) */
	int			scans;			/* streaming scans reading it */
} LsmImmutable;

/*
 * A memtable the slot let go (flushed, or dropped by a reset) while streaming
 * scans still read it: kept, chunks and all, until the last of them ends.
 */
typedef struct LsmHeldMemtable
{
	LsmMemtable mt;
	uint64		id;
	int			scans;
} LsmHeldMemtable;

/* Memtables scans may pin at once per slot (live or held): beyond it, a
 * scan copies its whole range at its start instead. */
#define LSM_MAX_HELD			8

/*
 * One shared-memory slot caches one index's memtable.  The memtable is a
 * cache of the index's log pages and is rebuilt from them whenever the slot is
 * lost (restart, eviction), so a slot can be dropped at any time nobody holds
 * its lock.
 */
typedef struct LsmSlot
{
	/* identity: written under the map lock (and the slot lock) */
	Oid			dbid;			/* InvalidOid: free */
	Oid			spcid;
	Oid			relnumber;
	uint32		generation;		/* bumped whenever the identity changes */
	uint64		last_used;		/* LRU clock */

	/* cache state: under the slot lock */
	bool		loaded;
	bool		in_recovery;	/* loaded during recovery: may lag the log
								 * after promotion, so catch up once more */
	uint64		instance_id;
	uint32		log_epoch;
	BlockNumber log_head;
	BlockNumber log_tail;		/* last log page replayed/appended */
	uint16		log_tail_off;	/* pd_lower of log_tail already consumed */
	uint32		log_pages;		/* pages in the current log chain */
	LsmMemtable mt;				/* the active memtable */

	/*
	 * Streaming scans (lsmscan.c) name a memtable by an id that is never
	 * reused in the slot, and pin it: a pinned memtable is not freed when it
	 * is flushed or dropped but kept in held[] until its last scan ends, and
	 * a slot with pins is never evicted.  Under the slot lock (exclusive to
	 * change a count).
	 */
	uint64		mt_id;			/* id of the active memtable */
	int			mt_scans;		/* scans reading the active memtable */
	uint64		next_mt_id;
	int			nheld;
	LsmHeldMemtable held[LSM_MAX_HELD];

	/* immutable memtables waiting for a flush, oldest first (as imm[] of
	 * the metapage, which the slot mirrors) */
	int			nimm;
	LsmImmutable imm[LSM_MAX_IMM];

	/* settings of the session that last inserted (0: none yet): a worker
	 * compacts by these, not by its own GUC values */
	int			l0_trigger;		/* lsm_am.l0_compaction_trigger */
	int			memtable_kb;	/* effective memtable_size */
	int			pins;			/* flushers reading imm[0] without the lock:
								 * no eviction, imm[0] stays */

	/* under the slot lock: facts for backpressure and statistics (not
	 * durable; reset with the slot) */
	uint32		l0_runs;		/* L0 runs in the manifest, last seen */
	bool		vacuum_waiting; /* VACUUM wants maintenance to yield */
	uint64		stalls_slowdown;	/* inserts delayed (l0_slowdown_trigger) */
	uint64		stalls_stop;	/* inserts that waited */
	uint64		stall_us;		/* time inserts spent stalled */
	uint64		self_flushes;	/* flushes done by backends (no worker) */
	uint64		wal_log;		/* WAL bytes of log appends */
	uint64		wal_flush;		/* WAL bytes of flushes */
	uint64		wal_compact;	/* WAL bytes of compactions */
	ConditionVariable cv;		/* broadcast when a flush or compaction ends */

	/* lookup counters (lsm_am.lookup_stats) */
	pg_atomic_uint64 lookups;	/* scans with equality on leading columns */
	pg_atomic_uint64 filter_probes;
	pg_atomic_uint64 filter_negatives;	/* the filter said absent */
	pg_atomic_uint64 filter_false_positives;	/* said maybe, run had none */
	pg_atomic_uint64 data_pages_read;	/* run data pages read by scans */

	/* background work (lsmworker.c, lsmmaint.c) */
	Oid			indexoid;		/* pg_class OID of the index, for workers */
	pg_atomic_uint32 pending;	/* LSM_WORK_* bits a worker should act on */
	pg_atomic_uint32 queued;	/* bumped before every setting of pending */
} LsmSlot;

/* LsmSlot.pending bits */
#define LSM_WORK_FLUSH			0x01	/* an immutable memtable waits */
#define LSM_WORK_COMPACT		0x02	/* the compaction picker may find work */
#define LSM_WORK_SHRINK			0x04	/* free space to give back, the index was busy */

/*
 * Queue work on a slot (without waking anybody).  The counter goes first: a
 * worker that clears the bits when it is done and then finds the counter
 * unchanged knows that no request came in between (LsmMaintain).
 */
static inline void
LsmPendingSet(LsmSlot *slot, uint32 bits)
{
	pg_atomic_fetch_add_u32(&slot->queued, 1);
	pg_atomic_fetch_or_u32(&slot->pending, bits);
}

typedef struct LsmShared
{
	int			nslots;
	pg_atomic_uint64 clock;
	LWLock	   *map_lock;		/* slot identities */
	LWLock	   *arena_lock;		/* chunk allocation */
	char	   *arena;			/* base of the chunk arena */
	LsmSlot		slots[FLEXIBLE_ARRAY_MEMBER];
} LsmShared;

/* Per-backend cache in rd_amcache. */
typedef struct LsmRelCache
{
	int			slot;			/* -1: none yet */
	uint32		generation;
	uint64		instance_id;
	LsmKeyDesc	desc;
} LsmRelCache;

extern LsmShared *lsm_shared;
extern void LsmShmemRequest(void);
extern void LsmShmemStartup(void);
extern void LsmCheckPreloaded(void);
extern LWLock *LsmSlotLock(int slotno);
extern LsmRelCache *LsmGetRelCache(Relation index);
extern LsmSlot *LsmSlotAcquire(Relation index, LWLockMode mode);
extern void LsmSlotRelease(Relation index, LsmSlot *slot);
extern void LsmSlotReset(LsmSlot *slot);
extern bool LsmEnsureChunkRoom(LsmSlot *slot, LsmMemtable *mt, int keylen,
							   bool may_evict);
extern void LsmMemtableFree(LsmMemtable *mt);
/* memtables of streaming scans: ids, pins, held[] (lsmpin.c) */
extern void LsmMemtableRetire(LsmSlot *slot, LsmMemtable *mt, uint64 id, int scans);
extern uint64 LsmNextMemtableId(LsmSlot *slot);
extern const LsmMemtable *LsmSlotFindMemtable(const LsmSlot *slot, uint64 id);
extern bool LsmScanPin(LsmSlot *slot, uint64 id);
extern void LsmScanUnpin(int slotno, uint32 generation, uint64 id);
extern bool LsmSlotScanPinned(const LsmSlot *slot);
extern uint32 LsmCountLevel0(const LsmMetaPageData *meta);

/* ------------------------------------------------------------------------
 * Pages, metapage, log and runs (lsmstore.c)
 * ------------------------------------------------------------------------ */
/* Asked between pages of a flush or compaction: true abandons it (the
 * reserved pages are reclaimed by the next one).  NULL: never stop. */
typedef bool (*LsmStopCallback) (Relation index);

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
extern Buffer LsmLockMeta(Relation index);
/* One entry for LsmLogAppend. */
typedef struct LsmLogEntry
{
	const uint8 *key;
	int			len;
} LsmLogEntry;
extern void LsmLogAppend(Relation index, LsmSlot *slot, const LsmLogEntry *ents, int n,
						 int *logged);
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
	LsmStopCallback stop;		/* asked after every page; NULL: never */
	bool		stopped;		/* stop() said so: the caller abandons */
	/* bloom filter: leading columns it hashes (0: none), lsmbloom.c */
	int			bloom_cols;
	uint32		bloom_pages;	/* pages the filter will take (LsmPieceFull) */
	const LsmKeyDesc *desc;
} LsmRunWriter;

extern void LsmRunWriterBegin(LsmRunWriter *w, Relation index, int which,
							  uint32 est_pages, uint64 expected_keys, bool delay);
extern void LsmRunWriterAdd(LsmRunWriter *w, const uint8 *key, int len);
extern void LsmRunWriterFinish(LsmRunWriter *w, LsmRunRef *ref, uint16 level);
extern void LsmRunWriterAbandon(LsmRunWriter *w);
extern void LsmRunWriterNewBuilder(LsmRunWriter *w, uint64 expected_keys);

/* lsmbloom.c: what the run writer's filter hashes (the core builds it) */
extern int	LsmBloomBegin(LsmRunWriter *w, Relation index);
extern size_t LsmBloomPrefixLen(LsmRunWriter *w, const uint8 *key, int len);

/*
 * Backend cache of a run's header, fence pages and filter pages (lsmbloom.c),
 * each page loaded the first time a lookup needs it.
 */
typedef struct LsmRunCacheEntry
{
	char		key[24];		/* LsmRunCacheKey */
	bool		valid;
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
} LsmRunCacheEntry;

extern LsmRunCacheEntry *LsmRunCacheGet(Relation index, const LsmRunRef *ref);
extern bool LsmRunCacheMayContain(Relation index, LsmRunCacheEntry *e, uint64 h);
extern const uint8 *LsmRunCacheFence(Relation index, LsmRunCacheEntry *e, uint32 rel,
									 int *len);

/* Callback deciding whether a TID is dead (VACUUM); NULL keeps everything. */
typedef bool (*LsmDeadCallback) (ItemPointer tid, void *state);

/* lsmmaint.c */
extern void LsmFlushLock(Relation index);
extern bool LsmFlushLockConditional(Relation index);
extern void LsmFlushUnlock(Relation index);
extern void LsmCompactLock(Relation index);
extern bool LsmCompactLockConditional(Relation index);
extern void LsmCompactUnlock(Relation index);
extern void LsmSwitchMemtable(Relation index, LsmSlot *slot);
extern bool LsmFlushOldest(Relation index, LsmDeadCallback dead, void *dead_state,
						   double *removed, LsmStopCallback stop);
extern void LsmFlushAll(Relation index, LsmDeadCallback dead, void *dead_state,
						double *removed);
extern bool LsmCompactOnce(Relation index, LsmStopCallback stop);
extern void LsmCompactFull(Relation index);
extern void LsmShrinkRelocating(Relation index);
extern uint64 LsmRewriteRun(Relation index, const LsmRunRef *ref, LsmDeadCallback dead,
							void *dead_state, double *removed);
extern bool LsmWorkPending(Relation index);
extern void LsmPushPending(Relation index);
extern void LsmForgetPending(Relation index);
LSM_NORETURN extern void LsmMemtableOutOfMemory(Relation index);
extern void LsmInsertInit(void);
/* shape settings and the compaction picker (lsmpolicy.c) */
extern int	LsmCompactionPolicyOf(Relation index);
extern int	LsmSizeRatioOf(Relation index);
extern uint64 LsmLevelBasePages(Relation index);
extern bool LsmPickFor(Relation index, const LsmMetaPageData *meta, LsmPick *pick);
extern uint32 LsmBuildLevel(Relation index, uint64 pages);
extern void LsmPublishSettings(Relation index, LsmSlot *slot);

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
	/* point lookups (lsmscan.c sets bloom_check and bloom_hash) */
	bool		bloom_check;	/* probe the run's filter before searching */
	uint64		bloom_hash;
	bool		probed;			/* the filter was probed */
	bool		filtered;		/* ... and said absent */
	uint32		data_pages;		/* data pages read */
	bool		matched;		/* a page read held a key in the range */
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

extern void LsmRunCursorInit(LsmRunCursor *c, const LsmRunRef *ref);
extern void LsmFeedRun(Relation index, LsmMerge *m, int src, LsmRunCursor *c,
					   bool backward, const LsmRange *range);

/* lsmchain.c */
extern int	LsmScanCursors(Relation index, const LsmRunRef *runs, int nruns,
						   bool backward, LsmRunCursor **out);
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
						 uint16 level, LsmStopCallback stop, LsmDeadCallback dead,
						 void *dead_state, double *removed, LsmMergeOut *out);

/* lsmpiece.c: leveled output cut into pieces */
extern uint32 LsmPiecePages(Relation index, const LsmMetaPageData *meta,
							uint32 level);
extern int	LsmPieceLimit(const LsmMetaPageData *meta, int nin);
extern bool LsmPieceRoom(Relation index);
extern uint32 LsmPieceFirstExtent(Relation index, uint32 target);
extern bool LsmPieceFull(const LsmRunWriter *w);
extern void LsmRunWriterCut(LsmRunWriter *w, LsmRunRef *ref, uint16 level,
							uint32 target, uint64 expected_keys);
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
extern int	LsmReadRunPage(Relation index, const LsmRunRef *ref, uint32 rel, uint16 kind,
						   uint8 *dst);
extern void LsmReadRunBounds(Relation index, const LsmRunRef *ref,
							 uint8 **min, int *minlen, uint8 **max, int *maxlen);

/* ------------------------------------------------------------------------
 * Background workers (lsmworker.c)
 * ------------------------------------------------------------------------ */
extern int	lsm_max_workers;
/* _PG_init, preloading only: GUC lsm_am.max_workers, register the launcher */
extern void LsmWorkerInit(void);
extern Size LsmWorkerShmemSize(void);
extern void LsmWorkerShmemInit(void);
/* A backend queued work for an index of database dbid: wake the launcher and
 * that database's workers.  Cheap; callable with an LWLock held. */
extern void LsmWakeWorkers(Oid dbid);
/* Can a worker be expected to do dbid's work soon?  false when
 * lsm_am.max_workers = 0, the launcher is not running, or starting a worker
 * failed recently (max_worker_processes exhausted) and none runs for dbid:
 * the backend must then do the work itself. */
extern bool LsmWorkersAvailable(Oid dbid);
/* In an lsm worker: show "what" and the index in pg_stat_activity; no-op
 * in other processes. */
extern void LsmWorkerReportActivity(const char *what, Relation index);
extern bool LsmIsWorker(void);
PGDLLEXPORT void lsm_launcher_main(Datum arg);
PGDLLEXPORT void lsm_worker_main(Datum arg);

/* ------------------------------------------------------------------------
 * Maintenance: flushes and compactions (lsmmaint.c)
 * ------------------------------------------------------------------------ */
/*
 * Do the pending work of one index: flush every immutable memtable, then run
 * compactions until the picker finds nothing (or stop() says so).  Clears the
 * slot's pending bits for the work it did.  REQUIRES: a transaction, a
 * RowExclusiveLock on the index.  Raises ERROR on failure.
 */
extern bool LsmMaintain(Relation index, LsmStopCallback stop);

/* ------------------------------------------------------------------------
 * AM callbacks
 * ------------------------------------------------------------------------ */
/* lsm.c */
extern bytea *lsmoptions(Datum reloptions, bool validate);
extern int	LsmMemtableSizeKb(Relation index);

/* lsmbuild.c */
extern IndexBuildResult *lsmbuild(Relation heap, Relation index, IndexInfo *indexInfo);
extern void lsmbuildempty(Relation index);
extern char *lsmbuildphasename(int64 phasenum);

/* lsminsert.c */
extern bool lsminsert(Relation index, Datum *values, bool *isnull,
					  ItemPointer ht_ctid, Relation heapRel,
					  IndexUniqueCheck checkUnique, bool indexUnchanged,
					  struct IndexInfo *indexInfo);

/* lsmscan.c */
extern IndexScanDesc lsmbeginscan(Relation r, int nkeys, int norderbys);
extern void lsmrescan(IndexScanDesc scan, ScanKey scankey, int nscankeys,
					  ScanKey orderbys, int norderbys);
extern bool lsmgettuple(IndexScanDesc scan, ScanDirection dir);
extern int64 lsmgetbitmap(IndexScanDesc scan, TIDBitmap *tbm);
extern void lsmendscan(IndexScanDesc scan);
extern bool lsmcanreturn(Relation index, int attno);
extern int	LsmOpenScans(void);

/* lsmvacuum.c */
extern IndexBulkDeleteResult *lsmbulkdelete(IndexVacuumInfo *info,
											IndexBulkDeleteResult *stats,
											IndexBulkDeleteCallback callback,
											void *callback_state);
extern IndexBulkDeleteResult *lsmvacuumcleanup(IndexVacuumInfo *info,
											   IndexBulkDeleteResult *stats);

/* lsmcost.c */
extern void lsmcostestimate(PlannerInfo *root, IndexPath *path,
							double loop_count, Cost *indexStartupCost,
							Cost *indexTotalCost, Selectivity *indexSelectivity,
							double *indexCorrelation, double *indexPages);

#endif							/* LSM_H */
