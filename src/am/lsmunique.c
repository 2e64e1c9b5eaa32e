/*
 * lsmunique.c — unique lsm indexes: aminsert's uniqueness check, and the
 * report of CREATE UNIQUE INDEX over duplicates (lsmbuild.c finds them).
 *
 * The check runs as nbtree's _bt_check_unique does, with a heavyweight lock
 * on the key where nbtree holds the leaf page's buffer lock:
 *
 *   1. lock the key: a lock tag of (database, index, 48-bit hash of the
 *      key's bytes; equal keys have equal bytes, lsmkey.h), ExclusiveLock;
 *   2. a point lookup of the key (lsmscanmerge.c: active and immutable
 *      memtables, every run, runs skipped by key range and bloom filter)
 *      with the metapage pinned, so VACUUM cannot remove an entry and let
 *      its TID be reused while we look at the heap;
 *   3. every TID found is fetched with a dirty snapshot
 *      (table_index_fetch_tuple_check): a row whose inserting or deleting
 *      transaction is in progress makes us unlock, wait for that transaction
 *      (or speculative insertion) and start again at 1; a live row is a
 *      conflict; dead and aborted rows are ignored;
 *   4. the entry goes straight into the memtable (LsmInsertEntryNow: a
 *      unique index's entries are never buffered in a backend), then the
 *      key is unlocked.
 *
 * Why it is race-free: every insert of a key into a unique index holds the
 * key's lock from its check until its entry is in the memtable, so of two
 * inserters of one key the second one's lookup finds the first one's entry
 * (a flush moves entries from a memtable to a run atomically for scans) and
 * its heap row: in progress, it waits; committed, it errors.  The lock is
 * released right after the insert, not at transaction end: the heap row's
 * transaction is what later inserters wait for, as with btree.  Keys with a
 * NULL (unless NULLS NOT DISTINCT) conflict with nothing: no check, no lock.
 *
 * UNIQUE_CHECK_PARTIAL (speculative insertion into an ON CONFLICT arbiter)
 * inserts anyway and returns false on a possible conflict, without waiting;
 * the executor then kills its tuple and retries.  UNIQUE_CHECK_EXISTING
 * (deferred constraints) cannot reach an lsm index: PostgreSQL builds
 * constraints on btree only.
 *
 * The check after the executor's.  INSERT ... ON CONFLICT looks each row's
 * key up before it inserts the row (its pre-check, an index scan with a
 * dirty snapshot), and finds nothing for a new key; then step 2 looks again.
 * The second lookup needs no run when no flush happened in between: runs
 * gain entries only from flushes (merges move entries, VACUUM removes them),
 * and a flush takes the oldest memtable away.  So a scan with a dirty
 * snapshot and equality on every key column of a unique index that returns
 * nothing leaves a note (LsmUniqueNoteAbsent: the key, the slot and
 * generation, and the id of its snapshot's oldest memtable), and the check
 * of the same key in the same backend, if that memtable is still the oldest
 * when its snapshot is taken (checked under the slot lock, in
 * LsmScanStart), reads only the memtables.  Any other change (a flush, a
 * slot evicted or reset, another index) makes it read the runs as before.
 */
#include "postgres.h"

#include "access/genam.h"
#include "catalog/pg_am_d.h"
#include "catalog/pg_inherits.h"
#include "nodes/plannodes.h"
#include "access/table.h"
#include "access/tableam.h"
#include "catalog/index.h"
#include "executor/executor.h"
#include "storage/lmgr.h"
#include "storage/lock.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "am/lsmscan_int.h"

/* Seed of the key lock's hash (not the bloom filters'). */
#define LSM_UNIQUE_LOCK_SEED	UINT64CONST(0x6c736d756e697175)

/*
 * The last lookup of this backend that found no entry for a whole key of a
 * unique index (see "The check after the executor's" above).  One note; a
 * check uses it at most once.
 */
static struct
{
	bool		valid;
	Oid			indexoid;
	int			slot;
	uint32		generation;
	uint64		oldest_mt;
	int			keylen;
	uint8		key[LSM_MAX_KEY_SIZE];
}			lsm_absent;

void
LsmUniqueNoteAbsent(IndexScanDesc scan)
{
	LsmScanOpaque so = (LsmScanOpaque) scan->opaque;
	Relation	index = scan->indexRelation;
	int			len;

	if (!index->rd_index->indisunique || so->runs_skipped ||
		scan->xs_snapshot == NULL ||
		scan->xs_snapshot->snapshot_type != SNAPSHOT_DIRTY ||
		so->eq_cols == 0 || so->eq_cols != so->desc.ncols || so->eq_prefix == NULL ||
		so->ncheck != 0 || so->nullflag_off >= 0 || so->niter != 0 || so->empty)
		return;
	len = so->eq_len[so->eq_cols - 1];
	if (len <= 0 || len > LSM_MAX_KEY_SIZE)
		return;
	lsm_absent.valid = true;
	lsm_absent.indexoid = RelationGetRelid(index);
	lsm_absent.slot = so->slotno;
	lsm_absent.generation = so->generation;
	lsm_absent.oldest_mt = so->oldest_mt;
	lsm_absent.keylen = len;
	memcpy(lsm_absent.key, so->eq_prefix, len);
}

/* The lock of one key of one index. */
static void
LsmKeyLockTag(LOCKTAG *tag, Relation index, const uint8 *key, int keylen)
{
	uint64		h = lsm_hash64(key, (size_t) keylen, LSM_UNIQUE_LOCK_SEED);

	tag->locktag_field1 = MyDatabaseId;
	tag->locktag_field2 = RelationGetRelid(index);
	tag->locktag_field3 = (uint32) h;
	tag->locktag_field4 = (uint16) (h >> 32);
	tag->locktag_type = LOCKTAG_USERLOCK;
	tag->locktag_lockmethodid = DEFAULT_LOCKMETHOD;
}

/*
 * A point lookup of the key prefix of entry (every column: the range is the
 * prefix, the bloom filters apply).  The scan's snapshot is not MVCC, so it
 * pins the metapage until lsmendscan (the TID recycling interlock).
 */
static IndexScanDesc
LsmUniqueLookup(Relation index, const uint8 *entry, int len, Snapshot snapshot)
{
	IndexScanDesc scan = lsmbeginscan(index, 0, 0);
	LsmScanOpaque so = (LsmScanOpaque) scan->opaque;
	const uint8 *seg[INDEX_MAX_KEYS];
	int			seglen[INDEX_MAX_KEYS];
	int			acc = 0;
	uint8	   *prefix;
	int			plen = LsmEntryKeyLength(&so->desc, entry, len);

	scan->xs_snapshot = snapshot;
	if (!LsmSplitEntry(&so->desc, entry, len, seg, seglen, NULL))
		elog(ERROR, "lsm_am: malformed entry of index \"%s\"",
			 RelationGetRelationName(index));
	prefix = MemoryContextAlloc(so->scanctx, Max(plen, 1));
	memcpy(prefix, entry, plen);
	for (int i = 0; i < so->desc.ncols; i++)
	{
		acc += seglen[i];
		so->eq_len[i] = acc;
	}
	Assert(acc == plen);
	so->eq_cols = so->desc.ncols;
	so->eq_prefix = prefix;
	so->nkeys = 0;
	so->ncheck = 0;
	so->nullflag_off = -1;
	so->range.lo = so->range.hi = prefix;
	so->range.lolen = so->range.hilen = plen;
	so->orange = so->range;
	/* the executor's pre-check of this key found nothing: runs only if a
	 * flush happened since */
	if (lsm_absent.valid && lsm_absent.indexoid == RelationGetRelid(index) &&
		lsm_absent.keylen == plen && memcmp(lsm_absent.key, prefix, plen) == 0)
	{
		so->skip_oldest = lsm_absent.oldest_mt;
		so->skip_slot = lsm_absent.slot;
		so->skip_generation = lsm_absent.generation;
	}
	lsm_absent.valid = false;
	LsmScanStart(scan, false);
	return scan;
}

static void
LsmUniqueEndScan(IndexScanDesc scan)
{
	lsmendscan(scan);
	if (scan->keyData)
		pfree(scan->keyData);
	pfree(scan);
}

typedef enum LsmUniqueVerdict
{
	LSM_UNIQUE_OK,				/* no live duplicate */
	LSM_UNIQUE_WAIT,			/* a duplicate's transaction is in progress */
	LSM_UNIQUE_CONFLICT			/* a live duplicate */
} LsmUniqueVerdict;

/* Steps 2 and 3 of the header, under the key lock. */
static LsmUniqueVerdict
LsmUniqueCheck(Relation index, Relation heapRel, const uint8 *entry, int len,
			   ItemPointer ht_ctid, IndexUniqueCheck checkUnique,
			   TransactionId *xwait, uint32 *token, ItemPointer waittid)
{
	SnapshotData dirty;
	IndexScanDesc scan;
	ItemPointerData tid;
	LsmUniqueVerdict verdict = LSM_UNIQUE_OK;

	InitDirtySnapshot(dirty);
	scan = LsmUniqueLookup(index, entry, len, &dirty);
	while (LsmScanNext(scan, &tid, NULL, NULL))
	{
		ItemPointerData htid = tid;
		bool		all_dead = false;

		if (ItemPointerEquals(&tid, ht_ctid))
			continue;			/* our own row */
		if (!table_index_fetch_tuple_check(heapRel, &htid, &dirty, &all_dead))
			continue;			/* dead, or aborted */
		if (checkUnique == UNIQUE_CHECK_PARTIAL)
		{
			/* the executor decides, after its own checks */
			verdict = LSM_UNIQUE_CONFLICT;
			break;
		}
		*xwait = TransactionIdIsValid(dirty.xmin) ? dirty.xmin : dirty.xmax;
		if (TransactionIdIsValid(*xwait))
		{
			*token = dirty.speculativeToken;
			*waittid = htid;
			verdict = LSM_UNIQUE_WAIT;
			break;
		}

		/*
		 * A live duplicate.  Unless our own row is dead by now (CREATE INDEX
		 * CONCURRENTLY validates rows that may have been deleted since; a
		 * HOT chain's root TID stands for the chain, as in nbtree).
		 */
		htid = *ht_ctid;
		if (!table_index_fetch_tuple_check(heapRel, &htid, SnapshotSelf, NULL))
		{
			verdict = LSM_UNIQUE_OK;
			break;
		}
		verdict = LSM_UNIQUE_CONFLICT;
		break;
	}
	LsmUniqueEndScan(scan);
	return verdict;
}

/* aminsert of a unique index (lsminsert encoded the entry). */
bool
LsmUniqueInsert(Relation index, Datum *values, bool *isnull,
				ItemPointer ht_ctid, Relation heapRel,
				IndexUniqueCheck checkUnique, const uint8 *entry, int len)
{
	LOCKTAG		tag;
	LsmUniqueVerdict verdict;
	bool		check = checkUnique != UNIQUE_CHECK_NO;

	if (checkUnique == UNIQUE_CHECK_EXISTING)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("lsm index \"%s\" cannot be checked as a deferred unique constraint",
						RelationGetRelationName(index)),
				 errhint("Unique constraints use btree indexes.")));

	/* a NULL conflicts with nothing, unless NULLS NOT DISTINCT */
	if (check && !index->rd_index->indnullsnotdistinct)
		for (int i = 0; i < IndexRelationGetNumberOfKeyAttributes(index); i++)
			if (isnull[i])
				check = false;

	/* this backend's buffered entries of the index (none, normally) first */
	LsmPushPending(index);
	if (!check)
	{
		LsmInsertEntryNow(index, entry, len);
		return true;
	}

	/* the key alone: INCLUDE values take no part in uniqueness */
	LsmKeyLockTag(&tag, index, entry,
				  LsmEntryKeyLength(&LsmGetRelCache(index)->desc, entry, len));
	for (;;)
	{
		TransactionId xwait = InvalidTransactionId;
		uint32		token = 0;
		ItemPointerData waittid;

		(void) LockAcquire(&tag, ExclusiveLock, false, false);
		verdict = LsmUniqueCheck(index, heapRel, entry, len, ht_ctid, checkUnique,
								 &xwait, &token, &waittid);
		if (verdict != LSM_UNIQUE_WAIT)
			break;
		LockRelease(&tag, ExclusiveLock, false);
		if (token)
			SpeculativeInsertionWait(xwait, token);
		else
			XactLockTableWait(xwait, heapRel, &waittid, XLTW_InsertIndex);
		CHECK_FOR_INTERRUPTS();
	}

	if (verdict == LSM_UNIQUE_CONFLICT && checkUnique == UNIQUE_CHECK_YES)
	{
		char	   *key_desc;

		LockRelease(&tag, ExclusiveLock, false);
		key_desc = BuildIndexValueDescription(index, values, isnull);
		ereport(ERROR,
				(errcode(ERRCODE_UNIQUE_VIOLATION),
				 errmsg("duplicate key value violates unique constraint \"%s\"",
						RelationGetRelationName(index)),
				 key_desc ? errdetail("Key %s already exists.", key_desc) : 0,
				 errtableconstraint(heapRel, RelationGetRelationName(index))));
	}

	/* in the memtable before anyone else may look for the key */
	PG_TRY();
	{
		LsmInsertEntryNow(index, entry, len);
	}
	PG_FINALLY();
	{
		LockRelease(&tag, ExclusiveLock, false);
	}
	PG_END_TRY();
	return verdict == LSM_UNIQUE_OK;
}

/*
 * CREATE UNIQUE INDEX found two live rows with one key, tid one of them:
 * the error, with the key computed again from the row (encoded keys are not
 * all decodable).
 */
void
LsmUniqueBuildDuplicate(Relation heap, Relation index, IndexInfo *indexInfo,
						ItemPointer tid)
{
	char	   *key_desc = NULL;
	EState	   *estate = CreateExecutorState();
	ExprContext *econtext = GetPerTupleExprContext(estate);
	TupleTableSlot *slot = table_slot_create(heap, NULL);
	IndexFetchTableData *fetch = table_index_fetch_begin(heap);
	ItemPointerData htid = *tid;
	bool		call_again = false;
	bool		all_dead = false;

	econtext->ecxt_scantuple = slot;
	indexInfo->ii_ExpressionsState = NIL;
	if (table_index_fetch_tuple(fetch, &htid, SnapshotAny, slot, &call_again,
								&all_dead))
	{
		Datum		values[INDEX_MAX_KEYS];
		bool		isnull[INDEX_MAX_KEYS];

		FormIndexDatum(indexInfo, slot, estate, values, isnull);
		key_desc = BuildIndexValueDescription(index, values, isnull);
	}
	ereport(ERROR,
			(errcode(ERRCODE_UNIQUE_VIOLATION),
			 errmsg("could not create unique index \"%s\"",
					RelationGetRelationName(index)),
			 key_desc ? errdetail("Key %s is duplicated.", key_desc) :
			 errdetail("Duplicate keys exist."),
			 errtableconstraint(heap, RelationGetRelationName(index))));
}

/* ------------------------------------------------------------------------
 * INSERT ... ON CONFLICT on PostgreSQL before 18
 *
 * PostgreSQL 15's executor opens every unique index of an INSERT ... ON
 * CONFLICT's table for speculative insertion (ExecOpenIndices ->
 * BuildSpeculativeIndexInfo), which refuses any index whose access method is
 * not btree ("unexpected non-btree speculative unique index") before it
 * looks up each column's equality operator in the index's operator family;
 * PostgreSQL 18 asks the access method (amtranslatecmptype) instead.  lsm's
 * operator families have btree's strategy numbers, so that lookup holds for
 * lsm.  So right after ExecutorStart of such a statement, this backend opens
 * the target table's indexes itself (the executor opens them lazily, at
 * the first row, only when nobody did), and for the length of that one call
 * the backend's relcache entry of each lsm unique index of the table says
 * btree (rd_rel->relam only: its AM routines, rd_indam, stay lsm's; nothing
 * but that check reads relam in ExecOpenIndices).  A partitioned table opens
 * its partitions' indexes while rows are routed, outside any such window:
 * refused with a hint.  (LSM_SPECULATIVE_BTREE_ONLY, lsm_compat.h: not on 18.)
 * ------------------------------------------------------------------------ */

typedef struct LsmSpecIndex
{
	Relation	index;
	Oid			relam;
} LsmSpecIndex;

static bool
LsmIsLsmUnique(Relation index)
{
	return index->rd_index->indisunique && index->rd_indam != NULL &&
		index->rd_indam->ambuild == lsmbuild;
}

/* ERROR if a partition of rel has a unique lsm index. */
static void
LsmSpeculativePartitions(Relation rel)
{
	List	   *parts = find_all_inheritors(RelationGetRelid(rel), NoLock, NULL);
	ListCell   *lc;

	foreach(lc, parts)
	{
		Relation	part = table_open(lfirst_oid(lc), NoLock);
		List	   *pidx = RelationGetIndexList(part);
		ListCell   *lc2;

		foreach(lc2, pidx)
		{
			Relation	index = index_open(lfirst_oid(lc2), AccessShareLock);
			bool		lsm = LsmIsLsmUnique(index);

			index_close(index, AccessShareLock);
			if (lsm)
				ereport(ERROR,
						(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
						 errmsg("INSERT ... ON CONFLICT into partitioned table \"%s\" is not supported with unique lsm index \"%s\" on PostgreSQL %s",
								RelationGetRelationName(rel),
								get_rel_name(lfirst_oid(lc2)), PG_MAJORVERSION),
						 errhint("PostgreSQL 18 supports it; on this version use btree unique indexes on the partitions.")));
		}
		table_close(part, NoLock);
	}
}

/* Open rri's indexes for speculative insertion, lsm ones passing as btree. */
static void
LsmSpeculativeOpenIndices(ResultRelInfo *rri)
{
	Relation	rel = rri->ri_RelationDesc;
	List	   *flipped = NIL;
	List	   *indexes;
	ListCell   *lc;

	if (rel->rd_rel->relkind == RELKIND_PARTITIONED_TABLE)
	{
		LsmSpeculativePartitions(rel);
		return;
	}
	if (!rel->rd_rel->relhasindex || rri->ri_IndexRelationDescs != NULL)
		return;
	indexes = RelationGetIndexList(rel);
	foreach(lc, indexes)
	{
		/* the lock ExecOpenIndices takes; the reference keeps the entry */
		Relation	index = index_open(lfirst_oid(lc), RowExclusiveLock);

		if (LsmIsLsmUnique(index))
		{
			LsmSpecIndex *s = palloc(sizeof(LsmSpecIndex));

			s->index = index;
			s->relam = index->rd_rel->relam;
			flipped = lappend(flipped, s);
		}
		else
			index_close(index, NoLock);
	}
	if (flipped == NIL)
		return;					/* the executor opens them as usual */
	PG_TRY();
	{
		foreach(lc, flipped)
			((LsmSpecIndex *) lfirst(lc))->index->rd_rel->relam = BTREE_AM_OID;
		ExecOpenIndices(rri, true);
	}
	PG_FINALLY();
	{
		foreach(lc, flipped)
		{
			LsmSpecIndex *s = (LsmSpecIndex *) lfirst(lc);

			s->index->rd_rel->relam = s->relam;
			index_close(s->index, NoLock);
		}
	}
	PG_END_TRY();
	list_free_deep(flipped);
}

static void
LsmSpeculativeNode(PlanState *ps)
{
	ModifyTableState *mts = (ModifyTableState *) ps;

	if (ps == NULL || !IsA(ps, ModifyTableState) ||
		((ModifyTable *) ps->plan)->onConflictAction == ONCONFLICT_NONE)
		return;
	for (int i = 0; i < mts->mt_nrels; i++)
		LsmSpeculativeOpenIndices(&mts->resultRelInfo[i]);
}

/* After ExecutorStart of a statement with ON CONFLICT (also in a WITH). */
void
LsmSpeculativeOpen(QueryDesc *queryDesc)
{
	EState	   *estate = queryDesc->estate;
	ListCell   *lc;

	if (!LSM_SPECULATIVE_BTREE_ONLY)
		return;
	if (queryDesc->operation != CMD_INSERT && queryDesc->operation != CMD_SELECT &&
		!queryDesc->plannedstmt->hasModifyingCTE)
		return;
	LsmSpeculativeNode(queryDesc->planstate);
	foreach(lc, estate->es_auxmodifytables)
		LsmSpeculativeNode((PlanState *) lfirst(lc));
}
