/*
 * lsmmetacache.c — the shared cache of run metadata pages.
 *
 * Every lookup in a run reads the run's header (for its key range and fence
 * root), one fence page per fence level, and, outside the levels that hold
 * most entries, one filter page.  Those pages are a small part of an index
 * (headers and fences well under 1% of its pages, the other levels' filters
 * about 1.2 bytes a key of a tenth of its keys), but nothing keeps them in
 * shared buffers: a btree's inner pages stay there because every insert
 * descends through them, while an lsm index's inserts go to the memtable
 * and its merges write through rings, so after minutes of ingest a new
 * connection reads each fence and filter page it needs from disk
 * (doc/benchmarks.md, "Beyond memory").  This cache holds copies of them in
 * shared memory, apart from shared buffers: lsm_am.metadata_cache_size
 * megabytes of page-sized slots.
 *
 * What it owns.  The slots, the map from a key (database, relfilenumber,
 * index incarnation, run id, page of the run) to a slot, and one LWLock.
 * It stores bytes and reads no page: the storage layer's run cache
 * (storage/lsmruncache.c) puts what it reads from a run's buffers, and what
 * a flush, merge or build just published, and asks here before it reads a
 * buffer.
 *
 * Invariants.
 *  - A run's pages never change once the run is published (VACUUM rewrites
 *    data pages only), and run ids are never reused within an incarnation:
 *    a key's bytes stay right for the run's life, and an entry of a retired
 *    run is never asked for again: the merge that retires it drops it
 *    (LsmMetaCacheForget), or, put back by a scan that still read the run,
 *    the clock evicts it.  Only pages of published runs are put (the
 *    callers' rule).  The cache lives
 *    in shared memory, which a crash restart initialises anew.
 *  - Replacement is a clock over the slots (usage counts as shared buffers
 *    have).  Filter pages take at most three quarters of the slots, so the
 *    fence pages and headers, a page each per lookup and run but far fewer
 *    pages, are not pushed out by a large level's filter.
 *  - The lock is a leaf: nothing is taken while it is held.
 */
#include "postgres.h"

#include "miscadmin.h"
#include "port/atomics.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "utils/hsearch.h"

#include "lsm_options.h"
#include "shmem/lsm_shmem.h"

#define LSM_META_TRANCHE		"lsm_am metadata cache"
#define LSM_META_MAX_USAGE		5

typedef struct LsmMetaEntry
{
	LsmMetaKey	key;
	int			slot;
} LsmMetaEntry;

typedef struct LsmMetaSlot
{
	LsmMetaKey	key;
	uint16		len;
	bool		used;
	bool		filter;
	pg_atomic_uint32 usage;
} LsmMetaSlot;

typedef struct LsmMetaCacheShared
{
	int			nslots;
	int			nfilter;		/* used slots holding filter pages */
	int			hand;			/* the clock's */
	LsmMetaSlot slots[FLEXIBLE_ARRAY_MEMBER];
} LsmMetaCacheShared;

static LsmMetaCacheShared *lsm_meta = NULL;
static HTAB *lsm_meta_map = NULL;
static char *lsm_meta_data = NULL;
static LWLock *lsm_meta_lock = NULL;

static int
LsmMetaSlots(void)
{
	return (int) (((Size) lsm_metadata_cache_mb * 1024 * 1024) / BLCKSZ);
}

static Size
LsmMetaHeaderSize(int nslots)
{
	return BUFFERALIGN(add_size(offsetof(LsmMetaCacheShared, slots),
								mul_size(nslots, sizeof(LsmMetaSlot))));
}

/* shmem_request_hook (module list of _PG_init) */
void
LsmMetaCacheShmemRequest(void)
{
	int			n = LsmMetaSlots();

	if (n == 0)
		return;
	RequestAddinShmemSpace(add_size(LsmMetaHeaderSize(n), mul_size(n, BLCKSZ)));
	RequestAddinShmemSpace(hash_estimate_size(n, sizeof(LsmMetaEntry)));
	RequestNamedLWLockTranche(LSM_META_TRANCHE, 1);
}

/* shmem_startup_hook (module list of _PG_init) */
void
LsmMetaCacheShmemInit(void)
{
	int			n = LsmMetaSlots();
	bool		found;
	HASHCTL		ctl;
	char	   *base;

	if (n == 0)
		return;
	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	base = ShmemInitStruct("lsm_am metadata cache",
						   add_size(LsmMetaHeaderSize(n), mul_size(n, BLCKSZ)),
						   &found);
	lsm_meta = (LsmMetaCacheShared *) base;
	lsm_meta_data = base + LsmMetaHeaderSize(n);
	if (!found)
	{
		lsm_meta->nslots = n;
		lsm_meta->nfilter = 0;
		lsm_meta->hand = 0;
		for (int i = 0; i < n; i++)
		{
			lsm_meta->slots[i].used = false;
			lsm_meta->slots[i].filter = false;
			lsm_meta->slots[i].len = 0;
			pg_atomic_init_u32(&lsm_meta->slots[i].usage, 0);
		}
	}
	memset(&ctl, 0, sizeof(ctl));
	ctl.keysize = sizeof(LsmMetaKey);
	ctl.entrysize = sizeof(LsmMetaEntry);
	lsm_meta_map = ShmemInitHash("lsm_am metadata cache map", n, n, &ctl,
								 HASH_ELEM | HASH_BLOBS);
	lsm_meta_lock = &GetNamedLWLockTranche(LSM_META_TRANCHE)->lock;
	LWLockRelease(AddinShmemInitLock);
}

/*
 * Copy the cached bytes of key into dst (room for BLCKSZ bytes); their
 * length in *len.  False if the key is not cached (or the cache is off).
 */
bool
LsmMetaCacheGet(const LsmMetaKey *key, uint8 *dst, int *len)
{
	LsmMetaEntry *e;

	if (lsm_meta == NULL)
		return false;
	LWLockAcquire(lsm_meta_lock, LW_SHARED);
	e = hash_search(lsm_meta_map, key, HASH_FIND, NULL);
	if (e != NULL)
	{
		LsmMetaSlot *s = &lsm_meta->slots[e->slot];
		uint32		u = pg_atomic_read_u32(&s->usage);

		*len = s->len;
		memcpy(dst, lsm_meta_data + (Size) e->slot * BLCKSZ, s->len);
		/* a race between two readers loses a count at most */
		if (u < LSM_META_MAX_USAGE)
			pg_atomic_write_u32(&s->usage, u + 1);
	}
	LWLockRelease(lsm_meta_lock);
	return e != NULL;
}

/*
 * The slot to put a page in: an unused one, or the first the clock finds
 * with no usage left (its entry removed).  A filter page, once filters take
 * three quarters of the slots, replaces only another filter page.  -1 if
 * none was found in a bounded sweep.  REQUIRES: the lock, exclusive.
 */
static int
LsmMetaVictim(bool filter)
{
	int			n = lsm_meta->nslots;
	bool		filters_only = filter && lsm_meta->nfilter >= n - n / 4;

	for (int steps = 0; steps < n * (LSM_META_MAX_USAGE + 1); steps++)
	{
		int			i = lsm_meta->hand;
		LsmMetaSlot *s = &lsm_meta->slots[i];
		uint32		u;

		lsm_meta->hand = (i + 1) % n;
		if (filters_only && !(s->used && s->filter))
			continue;
		if (!s->used)
			return i;
		u = pg_atomic_read_u32(&s->usage);
		if (u > 0)
		{
			pg_atomic_write_u32(&s->usage, u - 1);
			continue;
		}
		hash_search(lsm_meta_map, &s->key, HASH_REMOVE, NULL);
		if (s->filter)
			lsm_meta->nfilter--;
		s->used = false;
		return i;
	}
	return -1;
}

/*
 * Cache len bytes (at most BLCKSZ) under key, unless it is cached already.
 * filter: a filter page (see LsmMetaVictim).
 */
void
LsmMetaCachePut(const LsmMetaKey *key, const uint8 *src, int len, bool filter)
{
	LsmMetaEntry *e;
	bool		found;
	int			i;
	LsmMetaSlot *s;

	if (lsm_meta == NULL || len < 0 || len > BLCKSZ)
		return;
	LWLockAcquire(lsm_meta_lock, LW_EXCLUSIVE);
	if (hash_search(lsm_meta_map, key, HASH_FIND, NULL) != NULL ||
		(i = LsmMetaVictim(filter)) < 0)
	{
		LWLockRelease(lsm_meta_lock);
		return;
	}
	e = hash_search(lsm_meta_map, key, HASH_ENTER_NULL, &found);
	if (e == NULL)
	{
		/* cannot happen (the map has an element per slot); leave it out */
		LWLockRelease(lsm_meta_lock);
		return;
	}
	e->slot = i;
	s = &lsm_meta->slots[i];
	s->key = *key;
	s->len = (uint16) len;
	s->filter = filter;
	s->used = true;
	pg_atomic_write_u32(&s->usage, 1);
	if (filter)
		lsm_meta->nfilter++;
	memcpy(lsm_meta_data + (Size) i * BLCKSZ, src, len);
	LWLockRelease(lsm_meta_lock);
}

/*
 * Drop the entries of runs run_ids[0..n) of the index incarnation that
 * index_key names (its dbid, relnumber and instance_id; run_id and rel are
 * ignored): runs a merge or relocation just retired.  Their pages would
 * otherwise keep slots until the clock came round to them with no use
 * left, and after an ingest of minutes most of a small cache held pages of
 * runs long merged away.  A scan that still reads a retired run finds its
 * pages in buffers, and may put them back; the clock then ages them out as
 * before.  A pass over the slots under the lock, exclusive: a merge's
 * inputs number at most a few dozen.
 */
void
LsmMetaCacheForget(const LsmMetaKey *index_key, const uint32 *run_ids, int n)
{
	if (lsm_meta == NULL || n <= 0)
		return;
	LWLockAcquire(lsm_meta_lock, LW_EXCLUSIVE);
	for (int i = 0; i < lsm_meta->nslots; i++)
	{
		LsmMetaSlot *s = &lsm_meta->slots[i];
		bool		retired = false;

		if (!s->used || s->key.relnumber != index_key->relnumber ||
			s->key.dbid != index_key->dbid ||
			s->key.instance_id != index_key->instance_id)
			continue;
		for (int j = 0; j < n && !retired; j++)
			retired = s->key.run_id == run_ids[j];
		if (!retired)
			continue;
		hash_search(lsm_meta_map, &s->key, HASH_REMOVE, NULL);
		if (s->filter)
			lsm_meta->nfilter--;
		s->used = false;
		s->filter = false;
		pg_atomic_write_u32(&s->usage, 0);
	}
	LWLockRelease(lsm_meta_lock);
}

/*
 * Does the cache hold key?  (No use counted: for a warm that skips what
 * is already there, LsmRunCacheWarmIndex.)
 */
bool
LsmMetaCacheHas(const LsmMetaKey *key)
{
	bool		found;

	if (lsm_meta == NULL)
		return false;
	LWLockAcquire(lsm_meta_lock, LW_SHARED);
	found = hash_search(lsm_meta_map, key, HASH_FIND, NULL) != NULL;
	LWLockRelease(lsm_meta_lock);
	return found;
}

/* How many pages the cache holds at most (0: off). */
int
LsmMetaCacheCapacity(void)
{
	return lsm_meta != NULL ? lsm_meta->nslots : 0;
}

/* Is the cache on (lsm_am.metadata_cache_size > 0, preloaded)? */
bool
LsmMetaCacheEnabled(void)
{
	return lsm_meta != NULL;
}
