/*
 * lsm_compat.h — every PostgreSQL version difference lsm_am cares about, and
 * nowhere else.  Supported: PostgreSQL 15 (Debian 12) and 18.
 */
#ifndef LSM_COMPAT_H
#define LSM_COMPAT_H

#include "postgres.h"

#include "storage/bufmgr.h"
#include "storage/lmgr.h"
#include "storage/smgr.h"
#include "access/xloginsert.h"
#include "utils/tuplesort.h"
#include "utils/rel.h"
#include "utils/pg_locale.h"
#include "access/amapi.h"
#include "access/relscan.h"
#include "commands/vacuum.h"
#include "pgstat.h"
#if PG_VERSION_NUM >= 180000
#include "access/nbtree.h"
#endif

#if PG_VERSION_NUM < 150000
#error "lsm_am requires PostgreSQL 15 or later"
#endif

/* Physical identity of a relation's storage (changes on TRUNCATE/REINDEX). */
#if PG_VERSION_NUM >= 160000
#define LsmRelSpcOid(rel)		((rel)->rd_locator.spcOid)
#define LsmRelFileNumber(rel)	((rel)->rd_locator.relNumber)
#define LsmRelStorage(rel)		((rel)->rd_locator)	/* for log_newpages */
#else
#define LsmRelSpcOid(rel)		((rel)->rd_node.spcNode)
#define LsmRelFileNumber(rel)	((rel)->rd_node.relNode)
#define LsmRelStorage(rel)		((rel)->rd_node)
#endif

/* A buffer tag for a block of rel (storage/buf_internals.h must be included). */
#if PG_VERSION_NUM >= 160000
#define LsmInitBufferTag(tag, rel, fork, blkno) \
	InitBufferTag((tag), &(rel)->rd_locator, (fork), (blkno))
#else
#define LsmInitBufferTag(tag, rel, fork, blkno) \
	INIT_BUFFERTAG(*(tag), (rel)->rd_node, (fork), (blkno))
#endif

/*
 * Extend the relation by one block and return it pinned and exclusively
 * locked.  REQUIRES: the caller serialises extension of this index: every
 * extension of an lsm index happens under its slot lock (or during CREATE
 * INDEX), so the relation extension lock taken here is never contended and
 * never waited for while a slot LWLock is held.
 */
static inline Buffer
LsmExtendBuffer(Relation rel)
{
#if PG_VERSION_NUM >= 160000
	return ExtendBufferedRel(BMR_REL(rel), MAIN_FORKNUM, NULL, EB_LOCK_FIRST);
#else
	Buffer		buf;

	LockRelationForExtension(rel, ExclusiveLock);
	buf = ReadBufferExtended(rel, MAIN_FORKNUM, P_NEW, RBM_NORMAL, NULL);
	LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
	UnlockRelationForExtension(rel, ExclusiveLock);
	return buf;
#endif
}

/*
 * Make the relation at least upto blocks long (new blocks are zero pages,
 * not WAL-logged: their content is logged when they are first used).  More
 * than a few pages (a run's extent) go through a ring of buffers, as COPY
 * extends a table, so that the zero pages do not evict what is in use
 * (doc/impl.md, "Merges and shared buffers").
 */
static inline void
LsmEnsureBlocks(Relation rel, BlockNumber upto)
{
	BlockNumber have = RelationGetNumberOfBlocks(rel);
	BufferAccessStrategy ring = NULL;

	if (have >= upto)
		return;
	if (upto - have > 16)
		ring = GetAccessStrategy(BAS_BULKWRITE);
#if PG_VERSION_NUM >= 160000
	ReleaseBuffer(ExtendBufferedRelTo(BMR_REL(rel), MAIN_FORKNUM, ring,
									  EB_CLEAR_SIZE_CACHE, upto, RBM_ZERO_ON_ERROR));
#else
	LockRelationForExtension(rel, ExclusiveLock);
	while (RelationGetNumberOfBlocks(rel) < upto)
		ReleaseBuffer(ReadBufferExtended(rel, MAIN_FORKNUM, P_NEW, RBM_NORMAL, ring));
	UnlockRelationForExtension(rel, ExclusiveLock);
#endif
	if (ring)
		FreeAccessStrategy(ring);
}

/*
 * Was the index created or given a new relfilenode in this transaction?
 * Then no background worker can lock it before we commit.
 */
#if PG_VERSION_NUM >= 160000
#define LsmIndexNewInXact(rel) \
	((rel)->rd_createSubid != InvalidSubTransactionId || \
	 (rel)->rd_firstRelfilelocatorSubid != InvalidSubTransactionId)
#else
#define LsmIndexNewInXact(rel) \
	((rel)->rd_createSubid != InvalidSubTransactionId || \
	 (rel)->rd_firstRelfilenodeSubid != InvalidSubTransactionId)
#endif

/*
 * Memory for pages handed to smgrextend/smgrwrite directly: from 16 on, md.c
 * asserts (and direct I/O needs) PG_IO_ALIGN_SIZE alignment.  Zeroed.
 */
#if PG_VERSION_NUM >= 160000
#define LsmPallocIOPages(n) \
	palloc_aligned((Size) (n) * BLCKSZ, PG_IO_ALIGN_SIZE, MCXT_ALLOC_ZERO)
#else
#define LsmPallocIOPages(n) palloc0((Size) (n) * BLCKSZ)
#endif

/* Write and WAL-log one page of the init fork (unlogged indexes). */
#if PG_VERSION_NUM >= 160000
#define LsmWriteInitForkPage(rel, blkno, page) \
	do { \
		PageSetChecksumInplace((page), (blkno)); \
		smgrextend(RelationGetSmgr(rel), INIT_FORKNUM, (blkno), (page), true); \
		log_newpage(&(RelationGetSmgr(rel))->smgr_rlocator.locator, INIT_FORKNUM, \
					(blkno), (page), true); \
		smgrimmedsync(RelationGetSmgr(rel), INIT_FORKNUM); \
	} while (0)
#else
#define LsmWriteInitForkPage(rel, blkno, page) \
	do { \
		PageSetChecksumInplace((page), (blkno)); \
		smgrwrite(RelationGetSmgr(rel), INIT_FORKNUM, (blkno), (char *) (page), true); \
		log_newpage(&(RelationGetSmgr(rel))->smgr_rnode.node, INIT_FORKNUM, \
					(blkno), (page), true); \
		smgrimmedsync(RelationGetSmgr(rel), INIT_FORKNUM); \
	} while (0)
#endif

/*
 * Next datum of a forward tuplesort: valid until the next call, and a
 * palloc'd copy where LSM_TUPLESORT_DATUM_COPIED (15 always copies).
 */
#if PG_VERSION_NUM >= 160000
#define LSM_TUPLESORT_DATUM_COPIED false
#define LsmTuplesortGetDatum(st, d, isnull) \
	tuplesort_getdatum((st), true, false, (d), (isnull), NULL)
#else
#define LSM_TUPLESORT_DATUM_COPIED true
#define LsmTuplesortGetDatum(st, d, isnull) \
	tuplesort_getdatum((st), true, (d), (isnull), NULL)
#endif

/* Does the current user own the relation? */
#if PG_VERSION_NUM >= 160000
#define LsmIsOwner(relid) object_ownercheck(RelationRelationId, (relid), GetUserId())
#else
#define LsmIsOwner(relid) pg_class_ownercheck((relid), GetUserId())
#endif

/*
 * Declares a function that never returns: put LSM_NORETURN before the
 * declaration (PostgreSQL 18 replaced the suffix pg_attribute_noreturn() by
 * the prefix pg_noreturn).
 */
#if PG_VERSION_NUM >= 180000
#define LSM_NORETURN pg_noreturn
#else
#define LSM_NORETURN pg_attribute_noreturn()
#endif

/* vacuum_delay_point() takes is_analyze since PostgreSQL 18. */
#if PG_VERSION_NUM >= 180000
#define LsmVacuumDelayPoint() vacuum_delay_point(false)
#else
#define LsmVacuumDelayPoint() vacuum_delay_point()
#endif

/* Does the collation compare as plain bytes (C, POSIX)? */
#if PG_VERSION_NUM >= 180000
#define LsmCollateIsC(collid) (pg_newlocale_from_collation(collid)->collate_is_c)
#else
#define LsmCollateIsC(collid) lc_collate_is_c(collid)
#endif

#ifdef USE_ICU
/*
 * Write the ICU sort key of s[0..len) (database encoding) into dest, of
 * destsize bytes, and return its length counting the terminating 0x00.  A
 * result above destsize means dest was too small (its content is then
 * undefined).  Both versions call ucol_getSortKey on the same UTF-16 string,
 * so the keys, and the indexes built from them, are the same on 15 and 18.
 */
static inline int32
LsmIcuSortKey(pg_locale_t locale, const char *s, int len, char *dest, int32 destsize)
{
#if PG_VERSION_NUM >= 180000
	return (int32) pg_strnxfrm(dest, destsize, s, len, locale) + 1;
#else
	UChar	   *uchar;
	int32_t		ulen;
	int32_t		need;

	ulen = icu_to_uchar(&uchar, s, len);
	need = ucol_getSortKey(locale->info.icu.ucol, uchar, ulen,
						   (uint8_t *) dest, destsize);
	pfree(uchar);
	return need;
#endif
}
#endif

/*
 * Before 18, the executor's BuildSpeculativeIndexInfo (every unique index of
 * an INSERT ... ON CONFLICT's table) refuses an index whose relam is not
 * btree's; 18 asks the AM's amtranslatecmptype.  lsmunique.c
 * (LsmSpeculativeOpen) bridges it on older versions.
 */
#if PG_VERSION_NUM >= 180000
#define LSM_SPECULATIVE_BTREE_ONLY false
#else
#define LSM_SPECULATIVE_BTREE_ONLY true
#endif

/*
 * IndexAmRoutine fields that PostgreSQL 15 does not have.  lsm operator
 * classes use btree's strategy numbers and semantics, so btree's translation
 * functions fit; without them PostgreSQL 18 treats the index as unordered.
 */
static inline void
LsmAmRoutineSetNewerFields(IndexAmRoutine *amroutine)
{
#if PG_VERSION_NUM >= 170000
	amroutine->amcanbuildparallel = true;	/* lsmbuild.c */
#endif
#if PG_VERSION_NUM >= 180000
	amroutine->amconsistentequality = true;
	amroutine->amconsistentordering = true;
	amroutine->amtranslatestrategy = bttranslatestrategy;
	amroutine->amtranslatecmptype = bttranslatecmptype;
#endif
}

/*
 * Parallel index scans: amestimateparallelscan's arguments (none on 15 and
 * 16; the scan keys' counts on 17; the index too on 18), and where the
 * AM's part of the shared descriptor is.
 */
#if PG_VERSION_NUM >= 180000
#define LSM_ESTIMATE_PSCAN_ARGS Relation indexRelation, int nkeys, int norderbys
#define LsmParallelScanTarget(pscan) OffsetToPointer((pscan), (pscan)->ps_offset_am)
#elif PG_VERSION_NUM >= 170000
#define LSM_ESTIMATE_PSCAN_ARGS int nkeys, int norderbys
#define LsmParallelScanTarget(pscan) OffsetToPointer((pscan), (pscan)->ps_offset)
#else
#define LSM_ESTIMATE_PSCAN_ARGS void
#define LsmParallelScanTarget(pscan) OffsetToPointer((pscan), (pscan)->ps_offset)
#endif

/*
 * Count one index search (a descent from the top, once per rescan): in the
 * statistics, and on PostgreSQL 18 for EXPLAIN ANALYZE's "Index Searches".
 */
static inline void
LsmCountIndexSearch(IndexScanDesc scan)
{
	pgstat_count_index_scan(scan->indexRelation);
#if PG_VERSION_NUM >= 180000
	if (scan->instrument)
		scan->instrument->nsearches++;
#endif
}

/*
 * The wait event of a backend that waits for another to load an index's
 * memtables (storage/lsmload.c): "LsmSlotLoad" where extensions may name
 * their wait events (PostgreSQL 17 and later), the generic "Extension" on 15.
 */
static inline uint32
LsmWaitEventSlotLoad(void)
{
#if PG_VERSION_NUM >= 170000
	static uint32 event = 0;

	if (event == 0)
		event = WaitEventExtensionNew("LsmSlotLoad");
	return event;
#else
	return PG_WAIT_EXTENSION;
#endif
}

/* This backend's PGPROC number (an index below MaxBackends for every
 * backend and background worker). */
#if PG_VERSION_NUM >= 170000
#define LsmMyProcNumber()		((int) MyProcNumber)
#else
#define LsmMyProcNumber()		(MyProc != NULL ? MyProc->pgprocno : -1)
#endif

/*
 * A wait event of lsm_am's own (an idle worker, a stalled insert, a wait for
 * a memtable slot, ...): "name" where extensions may name their wait events
 * (PostgreSQL 17 and later), the generic "Extension" on 15 and 16.  *cache:
 * the caller's static.
 */
static inline uint32
LsmWaitEventNamed(const char *name, uint32 *cache)
{
#if PG_VERSION_NUM >= 170000
	if (*cache == 0)
		*cache = WaitEventExtensionNew(name);
	return *cache;
#else
	(void) name;
	(void) cache;
	return PG_WAIT_EXTENSION;
#endif
}

#endif							/* LSM_COMPAT_H */
