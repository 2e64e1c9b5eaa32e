/*
 * lsm_shmem.h — the shared-memory floor: memtable slots, the chunk arena the
 * memtables live in, the map from an index to its slot, and the pins that
 * keep a memtable alive for streaming scans.
 *
 * What it owns.  One LsmShared in shared memory: nslots slots and the arena;
 * and the progress entries of running maintenance jobs, one per PGPROC
 * (lsmprogress.c: each written only by its process, under its spinlock, a
 * leaf lock taken under any other).
 * A slot caches one index's memtables (the active one and up to LSM_MAX_IMM
 * immutable ones waiting for a flush), its maintenance requests (pending
 * bits) and its statistics.  A slot is only a cache of the index's log pages:
 * it may be dropped (LsmSlotReset) whenever nobody holds its lock, and the
 * storage layer rebuilds it from the log (storage/lsmreplay.c).  This floor
 * reads no page and calls no other layer of lsm_am; it uses key/ (the key
 * descriptor) and the core's memtable and arena.
 *
 * Lock order: map lock -> slot lock (the map lock takes a slot lock only
 * conditionally); slot lock -> arena lock; slot lock -> buffer content locks
 * (taken by the storage layer).  The arena lock is a leaf: nothing is taken
 * while it is held, so it may be taken under any other lock (a private
 * memtable's chunks, freed on an error path).  Never wait for a heavyweight
 * lock, for another slot's lock, or on a condition variable while holding a
 * slot lock; long work (replaying a log into a memtable) holds none.
 *
 * Invariants.
 *  - A slot's identity (dbid, spcid, relnumber, generation) changes only
 *    under the map lock and the slot lock; every change bumps generation, so
 *    a backend that cached a slot number revalidates it under the slot lock.
 *  - A slot with pins (flushers), pinned memtables (scans) or a loader is
 *    never evicted or reset; a pinned memtable that leaves the slot is kept
 *    in held[] until its last scan unpins it (lsmpin.c).
 *  - The log state of a slot (loaded, in_recovery, log_*, loader) is written
 *    by the storage layer's log module (storage/lsmlog.c, lsmreplay.c,
 *    lsmload.c); this floor only clears it when it drops the memtable
 *    (LsmSlotReset).
 *  - A memtable is either in a slot (under its lock) or private to the one
 *    backend building it (storage/lsmload.c), which gives its chunks back on
 *    every path out: swapped into the slot, ERROR, or process exit.
 */
#ifndef LSM_SHMEM_H
#define LSM_SHMEM_H

#include "postgres.h"

#include "port/atomics.h"
#include "storage/block.h"
#include "storage/condition_variable.h"
#include "storage/lwlock.h"
#include "utils/relcache.h"
#include "utils/timestamp.h"

#include "core/lsm_core.h"
#include "key/lsmkey.h"
#include "lsm_compat.h"
#include "lsm_options.h"

/*
 * Immutable memtables per index.  Also the length of the metapage's imm[]
 * (storage/lsm_storage.h): do not change without bumping LSM_FORMAT_VERSION.
 */
#define LSM_MAX_IMM				2

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
	bool		in_recovery;	/* may lag the log: loaded during recovery,
								 * swapped in by a private load, or part-way
								 * through a catch-up; the next acquirer
								 * catches up before it uses the slot */
	uint64		instance_id;
	uint32		log_epoch;
	BlockNumber log_head;
	BlockNumber log_tail;		/* last log page replayed/appended */
	uint16		log_tail_off;	/* pd_lower of log_tail already consumed */
	uint32		log_pages;		/* pages in the current log chain */
	LsmMemtable mt;				/* the active memtable */

	/*
	 * Streaming scans (am/lsmscanmerge.c) name a memtable by an id that is never
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

	int			pins;			/* flushers reading imm[0] without the lock:
								 * no eviction, imm[0] stays */

	/* under the slot lock: facts for backpressure and statistics (not
	 * durable; reset with the slot) */
	uint32		l0_runs;		/* L0 runs in the manifest, last seen */
	uint32		level_debt;		/* debt units of levels over their targets
								 * (LsmLevelDebt), last seen */
	bool		vacuum_waiting; /* VACUUM wants maintenance to yield */
	uint64		stalls_slowdown;	/* insert batches delayed (LsmInsertDelay) */
	uint64		stalls_stop;	/* inserts that waited */
	uint64		stall_us;		/* time inserts spent stalled */
	uint64		self_flushes;	/* flushes done by backends (no worker) */
	uint64		wal_log;		/* WAL bytes of log appends */
	uint64		wal_flush;		/* WAL bytes of flushes */
	uint64		wal_compact;	/* WAL bytes of compactions */
	uint64		level_pages[LSM_PICK_MAX_LEVEL + 1];	/* run pages written
														 * into each level:
														 * [0] by flushes, the
														 * others by merges
														 * (maintenance_stats'
														 * write amplification) */
	TimestampTz last_flush_at;	/* end of the last flush; 0: none seen */
	TimestampTz last_compaction_at; /* end of the last compaction or move */
	LsmWriteRate delay;			/* inserts' backpressure (am/lsminsert.c) */
	ConditionVariable cv;		/* broadcast when a flush or compaction ends */

	/*
	 * A load from scratch in progress (storage/lsmload.c): the pid of the
	 * backend replaying the log into private memtables without the slot
	 * lock, 0: none.  Set under the slot lock held exclusively; cleared
	 * (also without the lock, by the loader's error and exit paths) before
	 * load_cv is broadcast.  Others wait on load_cv instead of loading a
	 * second copy; a slot being loaded is never evicted.
	 */
	pg_atomic_uint32 loader;
	ConditionVariable load_cv;

	/* lookup counters (lsm_am.lookup_stats) */
	pg_atomic_uint64 lookups;	/* scans with equality on leading columns */
	pg_atomic_uint64 filter_probes;
	pg_atomic_uint64 filter_negatives;	/* the filter said absent */
	pg_atomic_uint64 filter_false_positives;	/* said maybe, run had none */
	pg_atomic_uint64 data_pages_read;	/* run data pages read by scans */

	/* background work (maint/: lsmworker.c, lsmmaint.c) */
	Oid			indexoid;		/* pg_class OID of the index, for workers */
	pg_atomic_uint32 pending;	/* LSM_WORK_* bits a worker should act on */
	pg_atomic_uint32 queued;	/* bumped before every setting of pending */
} LsmSlot;

/* LsmSlot.pending bits */
#define LSM_WORK_FLUSH			0x01	/* an immutable memtable waits */
#define LSM_WORK_COMPACT		0x02	/* the compaction picker may find work */
#define LSM_WORK_SHRINK			0x04	/* free space to give back, the index was busy */
#define LSM_WORK_SWITCH			0x08	/* the arena is short: switch the active
										 * memtable and flush it (LsmArenaRelieve) */
#define LSM_WORK_WARM			0x10	/* the index's first use since the
										 * server started (its slot loaded
										 * from the log): put its runs'
										 * metadata pages into the shared
										 * cache (LsmWarmIndex) */

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

/*
 * Wakes the workers of a database: LsmWakeWorkers, which the workers'
 * module (maint/) sets at start-up, for floors below it that queue work
 * (a slot's load, LSM_WORK_WARM).  NULL until then.
 */
typedef void (*LsmWakeWorkersFn) (Oid dbid);
extern LsmWakeWorkersFn lsm_wake_workers;

typedef struct LsmShared
{
	int			nslots;
	pg_atomic_uint64 clock;
	LWLock	   *map_lock;		/* slot identities */
	LWLock	   *arena_lock;		/* chunk allocation */
	char	   *arena;			/* base of the chunk arena */
	LsmSlot		slots[FLEXIBLE_ARRAY_MEMBER];
} LsmShared;

extern LsmShared *lsm_shared;

/* start-up (module list of _PG_init) */
extern void LsmShmemRequest(void);
extern void LsmShmemStartup(void);
/* ERROR unless lsm_am was preloaded (shared memory exists) */
extern void LsmCheckPreloaded(void);
extern LWLock *LsmSlotLock(int slotno);
/* the slot of an index (found or assigned, LRU victim); while every slot is
 * held, waits (interruptibly, up to LSM_SLOT_WAIT_MS), then ERROR */
extern int	LsmSlotAssign(Relation index, uint32 *generation);
extern void LsmSlotReset(LsmSlot *slot);
/* zero the lookup counters (lookups, filter probes, data pages read) */
extern void LsmSlotResetLookupCounters(LsmSlot *slot);
/*
 * Zero the counters lsm_am.reset_stats() resets (slot lock held
 * exclusively): stalls, backend flushes, WAL bytes, pages written per
 * level, lookups.  A slot given to another index starts with them zeroed.
 */
extern void LsmSlotResetStats(LsmSlot *slot);
extern void LsmSlotResetActive(LsmSlot *slot);
extern bool LsmEnsureChunkRoom(LsmSlot *slot, LsmMemtable *mt, int keylen,
							   bool may_evict);
extern void LsmMemtableFree(LsmMemtable *mt);
/* the arena nearly full (a hint); ask the largest other memtable to go */
extern bool LsmArenaShort(void);
extern void LsmMemtableAddFilter(LsmMemtable *mt, int memtable_kb, uint32 suffix);
extern uint64 LsmArenaBytes(void);
extern Oid	LsmArenaRelieve(LsmSlot *self);

/*
 * How long an insert waits for arena room that other indexes' memtables
 * hold before it gives up (ERROR): memtables pinned by open scans cannot
 * be flushed or evicted.
 */
#define LSM_ARENA_WAIT_MS			60000
/* how long LsmSlotAssign waits for a slot when all are held */
#define LSM_SLOT_WAIT_MS			60000
LSM_NORETURN extern void LsmMemtableOutOfMemory(Relation index);
/* memtables of streaming scans: ids, pins, held[] (lsmpin.c) */
extern void LsmMemtableRetire(LsmSlot *slot, LsmMemtable *mt, uint64 id, int scans);
extern uint64 LsmNextMemtableId(LsmSlot *slot);
extern const LsmMemtable *LsmSlotFindMemtable(const LsmSlot *slot, uint64 id);
extern bool LsmScanPin(LsmSlot *slot, uint64 id);
extern void LsmScanUnpin(int slotno, uint32 generation, uint64 id);
extern bool LsmSlotScanPinned(const LsmSlot *slot);
/* the slot caching index, if any, without assigning or loading one (map
 * lock, shared); -1: none.  The caller revalidates under the slot lock. */
extern int	LsmSlotLookup(Relation index, uint32 *generation);

/*
 * What a process is doing to an index (lsmprogress.c): one entry per PGPROC,
 * written only by its process between LsmProgressBegin and LsmProgressEnd,
 * cleared by an abort or exit; read by lsm_am.progress.
 */
typedef enum LsmJobKind
{
	LSM_JOB_FLUSH = 1,			/* an immutable memtable into a level-0 run */
	LSM_JOB_COMPACTION,			/* runs merged into a new run (or pieces) */
	LSM_JOB_MOVE,				/* a run moved to another level, unchanged */
	LSM_JOB_REWRITE,			/* VACUUM rewrites one run without its dead entries */
	LSM_JOB_RELOCATION,			/* a run copied lower in the file, to shrink it */
	LSM_JOB_VACUUM				/* VACUUM cleans run data pages in place */
} LsmJobKind;

typedef struct LsmProgress
{
	int			pid;			/* 0: idle */
	Oid			dbid;
	Oid			indexoid;
	LsmJobKind	kind;
	int			input_runs;
	uint32		input_levels;	/* bit l: an input run is at level l */
	int			output_level;	/* -1: none (VACUUM's pass) */
	int64		pages_done;		/* pages written (read, for VACUUM's pass) */
	int64		pages_total;	/* estimate; raised to pages_done if short */
	TimestampTz started_at;
} LsmProgress;

extern void LsmProgressShmemRequest(void);
extern void LsmProgressShmemInit(void);
extern const char *LsmJobKindName(LsmJobKind kind);
/* start this process's job (replacing any), stop it, count pages done;
 * LsmProgressEnd returns when the job started (0: none was running) */
extern void LsmProgressBegin(Relation index, LsmJobKind kind, int input_runs,
							 uint32 input_levels, int output_level, int64 pages_total);
extern void LsmProgressPages(int64 pages);
extern TimestampTz LsmProgressEnd(void);
/* copy the running jobs of database dbid into out[0..max); returns how many */
extern int	LsmProgressSnapshot(Oid dbid, LsmProgress *out, int max);
extern int	LsmProgressMax(void);

/*
 * The shared cache of run metadata pages (lsmmetacache.c): headers, fence
 * pages and filter pages of published runs, by index incarnation, run and
 * page.  Off when lsm_am.metadata_cache_size is 0.
 */
typedef struct LsmMetaKey
{
	Oid			dbid;
	Oid			relnumber;
	uint64		instance_id;
	uint32		run_id;
	uint32		rel;			/* page of the run */
} LsmMetaKey;

extern void LsmMetaCacheShmemRequest(void);
extern void LsmMetaCacheShmemInit(void);
extern bool LsmMetaCacheEnabled(void);
extern bool LsmMetaCacheGet(const LsmMetaKey *key, uint8 *dst, int *len);
extern void LsmMetaCachePut(const LsmMetaKey *key, const uint8 *src, int len,
							bool filter);
extern bool LsmMetaCacheHas(const LsmMetaKey *key);
extern void LsmMetaCacheForget(const LsmMetaKey *index_key, const uint32 *run_ids,
							   int n);
extern int	LsmMetaCacheCapacity(void);

#endif							/* LSM_SHMEM_H */
