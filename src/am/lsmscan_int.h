/*
 * lsmscan_int.h — what the files of a scan share (private to src/am/):
 *
 *   lsmscan.c       the AM callbacks: begin/rescan/end, amgettuple (index
 *                   tuples for index-only scans), amgetbitmap, amcanreturn;
 *   lsmscankeys.c   scan keys -> the key range [lo, hi] and the per-entry
 *                   filter (LsmScanPrepare, LsmEntryMatches);
 *   lsmscanmerge.c  the snapshot (manifest, memtables, pins) and the merging
 *                   iterator fed from memtables and runs (LsmScanStart,
 *                   LsmScanNext, LsmScanTurn);
 *   lsmscanpar.c    parallel scans: split keys, chunks claimed by the
 *                   participants (LsmParallelScanNextChunk);
 *   lsmtuple.c      per-entry fast paths for fixed-width columns: an
 *                   entry's shape, and one reused index tuple
 *                   (LsmTupleFormer).
 *
 * The scan's state, LsmScanOpaqueData, is owned by lsmscan.c (allocated at
 * beginscan, reset at rescan, freed at endscan); its snapshot part (snapctx
 * and what lives in it) by lsmscanmerge.c.
 */
#ifndef LSMSCAN_INT_H
#define LSMSCAN_INT_H

#include "access/itup.h"
#include "access/relscan.h"

#include "am/lsm_am.h"

typedef enum LsmKeyKind
{
	LSM_SK_COMPARE,
	LSM_SK_ISNULL,
	LSM_SK_NOTNULL,
	LSM_SK_ARRAY				/* = ANY(array) checked per entry: the
								 * segment is one of elems[] */
} LsmKeyKind;

typedef struct LsmScanKeyInfo
{
	int			col;
	LsmKeyKind	kind;
	StrategyNumber strategy;
	uint8	   *seg;			/* encoded argument (flag + value) */
	int			seglen;
	bool		implied;		/* the range's bounds decide it exactly */
	/* = ANY(array): the non-null elements' segments, sorted in index order
	 * and distinct (LSM_SK_ARRAY, or the scan's iterated key) */
	int			nelems;
	uint8	  **elems;
	int		   *elemlens;
} LsmScanKeyInfo;

/*
 * Per-scan layout of entries and of the index tuple rebuilt from them
 * (lsmtuple.c).  An entry without NULLs of an index whose columns all have
 * fixed-width encodings has one length; one preallocated tuple is
 * overwritten in place for each such entry (the executor copies or uses
 * xs_itup before the next call).
 */
typedef struct LsmTupleFormer
{
	bool		fixed;			/* every column's encoding has a fixed width */
	bool		fast;			/* ... and decodes into a fixed-length attribute */
	int			ncols;
	int			vlen[INDEX_MAX_KEYS];	/* value bytes of each column */
	uint8		nullflag[INDEX_MAX_KEYS];	/* the column's NULL flag byte */
	int			entrylen;		/* length of an entry without NULLs */
	int			off[INDEX_MAX_KEYS];	/* attribute offsets in tup's data */
	IndexTuple	tup;			/* the reused tuple (fast only) */
	bool		ifast;			/* INCLUDE columns after fixed-width keys */
	int			keysend;		/* ... where the keys' attributes end */
	TupleDesc	tupdesc;		/* ... the index's */
	IndexTuple	itup;			/* ... the reused tuple, of isize bytes */
	Size		isize;
	/*
	 * ... and when every INCLUDE column is of fixed length too, an entry of
	 * ientrylen bytes (no NULL) has one layout: each value at ioff[i] of the
	 * tuple's data, the tuple iinfo's size.
	 */
	bool		ifixed;
	int			ientrylen;
	int			ioff[INDEX_MAX_KEYS];
	unsigned short iinfo;
	IndexTuple	gtup;			/* the general path's reused tuple */
	Size		gsize;			/* its allocated size */
	MemoryContext cxt;			/* where gtup lives (the scan's) */
} LsmTupleFormer;

/* Chunks of a streaming memtable scan: small first (LIMIT), then growing. */
#define LSM_SCAN_FIRST_CHUNK	32
#define LSM_SCAN_MAX_CHUNK		4096

/* One memtable source of a scan. */
typedef struct LsmScanMemtable
{
	uint64		id;				/* the memtable's identity in the slot */
	LsmBatch   *first;			/* its first chunk, taken with the snapshot */
	bool		fed;			/* first chunk handed to the merge */
	bool		more;			/* entries in range may follow the last chunk */
	bool		pinned;			/* LsmScanPin'ned: unpin at the end */
	uint32		chunk;			/* size of the next chunk */
	uint8	   *resume;			/* last key handed out (first one, backward) */
	int			resumelen;
} LsmScanMemtable;

/* most keys one call of the merge hands a scan (LsmScanNext) */
#define LSM_SCAN_AHEAD		64

typedef struct LsmScanOpaqueData
{
	LsmKeyDesc	desc;
	MemoryContext scanctx;		/* keys, bounds, snapshot; reset on rescan */
	MemoryContext tupctx;		/* per returned tuple (index-only scans off
								 * the fast path); made when first needed */
	int			nkeys;
	LsmScanKeyInfo *keys;
	int			ncheck;			/* keys not implied by the range */
	int			nullflag_off;	/* implied keys need this flag byte to be
								 * LSM_FLAG_NOT_NULL (-1: none) */
	/*
	 * A strict bound (< or >) that set the range's lo or hi: the entries
	 * whose first exlolen / exhilen bytes equal exlo / exhi are its equal
	 * values, which it excludes (LsmEntryAtStrictBound); NULL: none.  They
	 * point at the bounds LsmScanSetRange made (rangectx), which stay when
	 * a turn or a parallel chunk narrows the range.
	 */
	const uint8 *exlo;
	int			exlolen;
	const uint8 *exhi;
	int			exhilen;
	/*
	 * An index-only scan of INCLUDE columns after fixed-width keys
	 * (former.ifast): LsmFormTupleInclude checks each returned entry's
	 * shape, so the per-entry check leaves it to lsmgettuple.
	 */
	bool		shape_by_former;
	LsmTupleFormer former;		/* entry layout, reused index tuple */
	bool		empty;			/* keys can never match */
	/* = ANY(array) on the columns after the equality prefix (each column up
	 * to the first without an equality or an = ANY): the scan is one point
	 * scan per combination of their elements, in index order, the last
	 * column's element changing fastest (keys[iterkeys[j]].seg is
	 * elems[curelems[j]]); niter 0: none. */
	int			niter;
	int			iterkeys[INDEX_MAX_KEYS];
	int			curelems[INDEX_MAX_KEYS];
	MemoryContext rangectx;		/* range and prefix (LsmScanSetRange), reset
								 * per element; child of scanctx */
	LsmRange	range;			/* of this snapshot (narrowed after a turn) */
	LsmRange	orange;			/* of the scan keys */
	bool		started;
	bool		backward;
	bool		ended;			/* the last fetch ran off the end */
	MemoryContext snapctx;		/* the snapshot: merge, cursors, memtables */
	const uint8 *lastptr;		/* the entry returned last, in the merge */
	uint8	   *lastkey;		/* its copy when the scan turns (resumes there) */
	int			lastlen;
	bool		havelast;
	bool		skiplast;		/* after a turn: do not return lastkey again */
	bool		counted;		/* counted in lsm_manifest_readers (LsmScanStart) */
	Buffer		metapin;
	LsmMerge   *merge;
	/* keys the merge handed out ahead (lsm_merge_next_many), valid until
	 * its next call: [ahead_pos, ahead_n) not yet looked at */
	int			ahead_n;
	int			ahead_pos;
	const uint8 *ahead_key[LSM_SCAN_AHEAD];
	size_t		ahead_len[LSM_SCAN_AHEAD];
	int			nmt;			/* memtable sources (active + immutable) */
	LsmScanMemtable mts[1 + LSM_MAX_IMM];
	int			slotno;			/* slot and generation the pins are in */
	uint32		generation;
	int			nruns;
	LsmRunCursor *cursors;
	int64		nreturned;
	/* a participant of a parallel scan (lsmscanpar.c): the chunk it scans */
	bool		parallel;		/* scan->parallel_scan is set */
	bool		pexcl;			/* the chunk ends before range.hi: skip an
								 * entry equal to it */
	uint8	   *pbound;			/* copies of the chunk's bounds, in scanctx */
	int64		pchunks;		/* chunks of key ranges it scanned */
	/* equality on leading columns: bloom filters apply */
	Relation	index;
	int			eq_cols;
	uint8	   *eq_prefix;
	int			eq_len[INDEX_MAX_KEYS];	/* prefix bytes of the first i+1 */
	/*
	 * The snapshot's oldest memtable (the active one when none is immutable):
	 * its id changes exactly when a flush moves entries into a run
	 * (lsmunique.c, "The check after the executor's").  A unique check sets
	 * skip_oldest (and the slot and generation it belongs to) to leave the
	 * runs out of its snapshot if that memtable is still the oldest.
	 */
	uint64		oldest_mt;
	uint64		skip_oldest;	/* 0: read the runs */
	int			skip_slot;
	uint32		skip_generation;
	bool		runs_skipped;	/* the runs were left out */
} LsmScanOpaqueData;

typedef LsmScanOpaqueData *LsmScanOpaque;

/* lsmscankeys.c */
extern void LsmScanPrepare(IndexScanDesc scan);
extern void LsmScanSetRange(IndexScanDesc scan);
extern bool LsmScanNextElement(IndexScanDesc scan, bool backward);
extern bool LsmEntryMatches(IndexScanDesc scan, const uint8 *key, int len,
							ItemPointer tid);

/*
 * Is every flag byte of an entry of f's no-NULL length LSM_FLAG_NOT_NULL?
 * (Its shape is then right.)  REQUIRES: f->fixed, len == f->entrylen.
 */
static inline bool
LsmEntryAllNotNull(const LsmTupleFormer *f, const uint8 *entry)
{
	const uint8 *p = entry;

	for (int i = 0; i < f->ncols; i++)
	{
		if (p[0] != LSM_FLAG_NOT_NULL)
			return false;
		p += 1 + f->vlen[i];
	}
	return true;
}

/*
 * Is the entry (inside the scan's range) equal, in the column of a strict
 * bound, to that bound?  Segments being prefix-free, it is exactly when its
 * first bytes are the bound's (prefix and segment).
 */
static inline bool
LsmEntryAtStrictBound(const LsmScanOpaqueData *so, const uint8 *key, int len)
{
	return (so->exlo != NULL && len >= so->exlolen &&
			memcmp(key, so->exlo, so->exlolen) == 0) ||
		(so->exhi != NULL && len >= so->exhilen &&
		 memcmp(key, so->exhi, so->exhilen) == 0);
}

/*
 * LsmEntryMatches' common case, inline (it runs for every entry a scan
 * reads): the range decides every scan key (ncheck == 0) and either the
 * entry is of fixed-width columns without NULLs, so its shape is right
 * exactly when every flag byte is LSM_FLAG_NOT_NULL (the range column's
 * included), or its shape is checked later (shape_by_former; the range
 * column's flag byte is then looked at here).  Then it returns true with the
 * TID unless a strict bound excludes the entry; false means LsmEntryMatches
 * decides (and reports a malformed entry).
 */
static inline bool
LsmEntryMatchesPlain(const LsmScanOpaqueData *so, const uint8 *key, int len,
					 ItemPointer tid)
{
	const LsmTupleFormer *f = &so->former;

	if (so->ncheck != 0)
		return false;
	if (so->shape_by_former)
	{
		/* long enough for the keys without NULLs, so for the flag byte */
		if (len < f->entrylen ||
			(so->nullflag_off >= 0 && key[so->nullflag_off] != LSM_FLAG_NOT_NULL))
			return false;
	}
	else if (!f->fixed || len != f->entrylen || !LsmEntryAllNotNull(f, key))
		return false;
	if (LsmEntryAtStrictBound(so, key, len))
		return false;
	LsmEntryGetTid(key, len, tid);
	return true;
}

/* lsmscanmerge.c */
extern void LsmScanStart(IndexScanDesc scan, bool backward);
extern bool LsmScanNext(IndexScanDesc scan, ItemPointer tid,
						const uint8 **keyp, size_t *lenp);
extern void LsmScanTurn(IndexScanDesc scan, bool backward);
extern void LsmScanTally(LsmScanOpaque so);
extern void LsmScanEndSnapshot(LsmScanOpaque so);
LSM_NORETURN extern void LsmScanReportMalformed(IndexScanDesc scan, const uint8 *key,
								   int len);

/* lsmunique.c: a scan that ended having returned nothing */
extern void LsmUniqueNoteAbsent(IndexScanDesc scan);

/* lsmscanpar.c */
extern bool LsmParallelScanNextChunk(IndexScanDesc scan, bool backward);

/* lsmtuple.c */
/* Set f up for index with key descriptor desc; allocates in the current context. */
extern void LsmTupleFormerInit(LsmTupleFormer *f, Relation index, const LsmKeyDesc *desc);
/*
 * Is the entry well formed (every segment, then a TID)?  A cheap walk over
 * flag bytes when every column is fixed-width, LsmSplitEntry otherwise.
 */
extern bool LsmEntryWellFormed(const LsmTupleFormer *f, const LsmKeyDesc *desc,
							   const uint8 *entry, int len);
/*
 * The entry as the reused index tuple, or NULL when the fast path does not
 * apply (a NULL column, a column that is not fixed-width, a malformed
 * entry): the caller then forms the tuple the general way.
 */
extern IndexTuple LsmFormTupleFast(LsmTupleFormer *f, const LsmKeyDesc *desc,
								   const uint8 *entry, int len);
/*
 * The same for an index with INCLUDE columns whose key columns are all
 * fixed-width (f->ifast): the keys decoded, the INCLUDE values copied as
 * they are stored (their heap form); NULL for an entry with a NULL or a
 * cstring, or a malformed one.
 */
extern IndexTuple LsmFormTupleInclude(LsmTupleFormer *f, const LsmKeyDesc *desc,
									  const uint8 *entry, int len);
/*
 * The index tuple of decoded values (LsmDecodeEntry's), formed as
 * index_form_tuple forms it but into a tuple reused from entry to entry
 * (values are never compressed or external here).
 */
extern IndexTuple LsmFormTupleGeneral(LsmTupleFormer *f, TupleDesc tupdesc,
									  const Datum *values, const bool *isnull);

#endif							/* LSMSCAN_INT_H */
