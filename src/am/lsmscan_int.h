/*
 * lsmscan_int.h — what the files of a scan share (private to src/am/):
 *
 *   lsmscan.c       the AM callbacks: begin/rescan/end, amgettuple (index
 *                   tuples for index-only scans), amgetbitmap, amcanreturn;
 *   lsmscankeys.c   scan keys -> the key range [lo, hi] and the per-entry
 *                   filter (LsmScanPrepare, LsmEntryMatches);
 *   lsmscanmerge.c  the snapshot (manifest, memtables, pins) and the merging
 *                   iterator fed from memtables and runs (LsmScanStart,
 *                   LsmScanNext, LsmScanTurn).
 *
 * The scan's state, LsmScanOpaqueData, is owned by lsmscan.c (allocated at
 * beginscan, reset at rescan, freed at endscan); its snapshot part (snapctx
 * and what lives in it) by lsmscanmerge.c.
 */
#ifndef LSMSCAN_INT_H
#define LSMSCAN_INT_H

#include "access/relscan.h"

#include "am/lsm_am.h"

typedef enum LsmKeyKind
{
	LSM_SK_COMPARE,
	LSM_SK_ISNULL,
	LSM_SK_NOTNULL
} LsmKeyKind;

typedef struct LsmScanKeyInfo
{
	int			col;
	LsmKeyKind	kind;
	StrategyNumber strategy;
	uint8	   *seg;			/* encoded argument (flag + value) */
	int			seglen;
} LsmScanKeyInfo;

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

typedef struct LsmScanOpaqueData
{
	LsmKeyDesc	desc;
	MemoryContext scanctx;		/* keys, bounds, snapshot; reset on rescan */
	MemoryContext tupctx;		/* per returned tuple (index-only scans) */
	int			nkeys;
	LsmScanKeyInfo *keys;
	bool		empty;			/* keys can never match */
	LsmRange	range;			/* of this snapshot (narrowed after a turn) */
	LsmRange	orange;			/* of the scan keys */
	bool		started;
	bool		backward;
	bool		ended;			/* the last fetch ran off the end */
	MemoryContext snapctx;		/* the snapshot: merge, cursors, memtables */
	uint8	   *lastkey;		/* the entry returned last (a turn resumes there) */
	int			lastlen;
	bool		havelast;
	bool		skiplast;		/* after a turn: do not return lastkey again */
	bool		counted;		/* counted in lsm_manifest_readers (LsmScanStart) */
	Buffer		metapin;
	LsmMerge   *merge;
	int			nmt;			/* memtable sources (active + immutable) */
	LsmScanMemtable mts[1 + LSM_MAX_IMM];
	int			slotno;			/* slot and generation the pins are in */
	uint32		generation;
	int			nruns;
	LsmRunCursor *cursors;
	int64		nreturned;
	/* equality on leading columns: bloom filters apply */
	Relation	index;
	int			eq_cols;
	uint8	   *eq_prefix;
	int			eq_len[INDEX_MAX_KEYS];	/* prefix bytes of the first i+1 */
} LsmScanOpaqueData;

typedef LsmScanOpaqueData *LsmScanOpaque;

/* lsmscankeys.c */
extern void LsmScanPrepare(IndexScanDesc scan);
extern bool LsmEntryMatches(IndexScanDesc scan, const uint8 *key, int len,
							ItemPointer tid);

/* lsmscanmerge.c */
extern void LsmScanStart(IndexScanDesc scan, bool backward);
extern bool LsmScanNext(IndexScanDesc scan, ItemPointer tid,
						const uint8 **keyp, size_t *lenp);
extern void LsmScanTurn(IndexScanDesc scan, bool backward);
extern void LsmScanTally(LsmScanOpaque so);
LSM_NORETURN extern void LsmScanReportMalformed(IndexScanDesc scan, const uint8 *key,
								   int len);

#endif							/* LSMSCAN_INT_H */
