/*
 * lsmfuncs.c — SQL-callable functions of schema lsm_am.
 */
#include "postgres.h"

#include "access/relation.h"
#include "catalog/pg_class.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "catalog/pg_type.h"
#include "utils/acl.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"
#include "pgstat.h"
#include "storage/latch.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"

#include "am/lsm_am.h"

/* See am/lsm_am.h. */
Relation
LsmOpenIndex(Oid relid, LOCKMODE lockmode, LsmOpenRight right)
{
	Relation	index;

	if (right == LSM_OPEN_INSPECT && !superuser())
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("must be superuser to use lsm_am page inspection functions")));
	index = try_relation_open(relid, lockmode);
	if (index == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation with OID %u does not exist", relid)));
	if (index->rd_rel->relkind == RELKIND_PARTITIONED_INDEX)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is a partitioned index", RelationGetRelationName(index)),
				 errhint("Call the function on the index of each partition.")));
	if (index->rd_rel->relkind != RELKIND_INDEX ||
		index->rd_indam == NULL || index->rd_indam->ambuild != lsmbuild)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not an lsm index", RelationGetRelationName(index)),
				 errhint("Pass an index created with USING lsm.")));
	if (right == LSM_OPEN_MAINTAIN && !LsmIsOwner(relid))
		aclcheck_error(ACLCHECK_NOT_OWNER, OBJECT_INDEX, RelationGetRelationName(index));
	if (right == LSM_OPEN_READ &&
		pg_class_aclcheck(index->rd_index->indrelid, GetUserId(), ACL_SELECT) != ACLCHECK_OK)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied for index \"%s\"", RelationGetRelationName(index)),
				 errhint("Reading lsm index statistics requires SELECT on its table.")));
	if (RELATION_IS_OTHER_TEMP(index))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot access temporary indexes of other sessions")));
	/* this backend's own entries of the index are in it first */
	LsmPushPending(index);
	return index;
}

PG_FUNCTION_INFO_V1(lsm_flush);

/* lsm_am.flush(regclass): write the memtable out as a sorted run. */
Datum
lsm_flush(PG_FUNCTION_ARGS)
{
	Oid			relid = PG_GETARG_OID(0);
	Relation	index;

	LsmCheckPreloaded();
	if (RecoveryInProgress())
		ereport(ERROR,
				(errcode(ERRCODE_READ_ONLY_SQL_TRANSACTION),
				 errmsg("lsm_am.flush() cannot run during recovery"),
				 errhint("Flush on the primary; the standby replays it.")));
	index = LsmOpenIndex(relid, RowExclusiveLock, LSM_OPEN_MAINTAIN);
	LsmFlushLock(index);
	LsmFlushAll(index, NULL, NULL, NULL);
	LsmFlushUnlock(index);
	relation_close(index, RowExclusiveLock);
	PG_RETURN_VOID();
}

PG_FUNCTION_INFO_V1(lsm_index_stats);

/* lsm_am.index_stats(regclass): the shape of the index right now. */
Datum
lsm_index_stats(PG_FUNCTION_ARGS)
{
	Oid			relid = PG_GETARG_OID(0);
	Relation	index;
	TupleDesc	tupdesc;
	LsmSlot    *slot;
	LsmMetaPageData meta;
	LsmRunRef  *runs;
	Datum		values[6];
	bool		nulls[6] = {0};
	int64		mt_entries,
				mt_bytes,
				log_pages;
	int64		run_entries = 0;

	LsmCheckPreloaded();
	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	index = LsmOpenIndex(relid, AccessShareLock, LSM_OPEN_READ);

	slot = LsmSlotAcquire(index, LW_SHARED);
	LsmReadMeta(index, &meta, &runs);
	mt_entries = slot->mt.nentries;
	mt_bytes = lsm_memtable_memory(lsm_shared->arena, &slot->mt);
	log_pages = slot->log_pages;
	for (int i = 0; i < slot->nimm; i++)
	{
		mt_entries += slot->imm[i].mt.nentries;
		mt_bytes += lsm_memtable_memory(lsm_shared->arena, &slot->imm[i].mt);
		log_pages += slot->imm[i].pages;
	}
	LsmSlotRelease(index, slot);

	for (int i = 0; i < (int) meta.nruns; i++)
		run_entries += runs[i].nentries;

	values[0] = Int64GetDatum(mt_entries);
	values[1] = Int64GetDatum(mt_bytes);
	values[2] = Int32GetDatum(meta.nruns);
	values[3] = Int64GetDatum(run_entries);
	values[4] = Int64GetDatum(log_pages);
	values[5] = Int64GetDatum(RelationGetNumberOfBlocks(index));
	relation_close(index, AccessShareLock);

	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}

PG_FUNCTION_INFO_V1(lsm_compact);

/* lsm_am.compact(regclass): flush, then merge every run into one. */
Datum
lsm_compact(PG_FUNCTION_ARGS)
{
	Oid			relid = PG_GETARG_OID(0);
	Relation	index;

	LsmCheckPreloaded();
	if (RecoveryInProgress())
		ereport(ERROR,
				(errcode(ERRCODE_READ_ONLY_SQL_TRANSACTION),
				 errmsg("lsm_am.compact() cannot run during recovery"),
				 errhint("Compact on the primary; the standby replays it.")));
	index = LsmOpenIndex(relid, RowExclusiveLock, LSM_OPEN_MAINTAIN);
	LsmCompactFull(index);
	relation_close(index, RowExclusiveLock);
	PG_RETURN_VOID();
}

/* A key as text: "(v1, v2)" from the output functions of decodable columns,
 * the hex of the whole entry otherwise.  blkno: the page it was read from. */
text *
LsmKeyToText(Relation index, BlockNumber blkno, const uint8 *key, int len)
{
	const LsmKeyDesc *desc = &LsmGetRelCache(index)->desc;
	Datum		values[INDEX_MAX_KEYS];
	bool		isnull[INDEX_MAX_KEYS];
	StringInfoData buf;

	if (!LsmSplitEntry(desc, key, len, NULL, NULL, NULL))
		LsmReportCorruption(index, blkno, "The key %s is not a well-formed entry of this index.",
							LsmKeyToHex(key, Min(len, 64)));
	for (int i = 0; i < desc->ncols; i++)
		if (!desc->cols[i].invertible)
			return cstring_to_text(psprintf("\\x%s", LsmKeyToHex(key, len)));
	LsmDecodeEntry(desc, key, len, values, isnull);
	initStringInfo(&buf);
	appendStringInfoChar(&buf, '(');
	for (int i = 0; i < desc->ncols; i++)
	{
		if (i > 0)
			appendStringInfoString(&buf, ", ");
		if (isnull[i])
			appendStringInfoString(&buf, "NULL");
		else
		{
			Oid			out;
			bool		varlena;

			getTypeOutputInfo(desc->cols[i].typid, &out, &varlena);
			appendStringInfoString(&buf, OidOutputFunctionCall(out, values[i]));
		}
	}
	appendStringInfoChar(&buf, ')');
	return cstring_to_text(buf.data);
}

PG_FUNCTION_INFO_V1(lsm_index_info);

/* lsm_am.index_info(regclass): one row per sorted run. */
Datum
lsm_index_info(PG_FUNCTION_ARGS)
{
	Oid			relid = PG_GETARG_OID(0);
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	Relation	index;
	LsmMetaPageData meta;
	LsmRunRef  *runs;
	uint8	   *content = palloc(BLCKSZ);

	LsmCheckPreloaded();
	InitMaterializedSRF(fcinfo, 0);
	index = LsmOpenIndex(relid, AccessShareLock, LSM_OPEN_READ);
	/* retired runs' pages are not reused while our snapshot exists */
	LsmReadMeta(index, &meta, &runs);
	for (int i = 0; i < (int) meta.nruns; i++)
	{
		Datum		values[6];
		bool		nulls[6] = {0};
		Buffer		buf;
		LsmRunHeader hdr;
		int			len;

		buf = ReadBuffer(index, runs[i].start);
		LockBuffer(buf, BUFFER_LOCK_SHARE);
		LsmCheckPage(index, buf, LSM_PK_RUN_HEADER, runs[i].run_id);
		len = LsmPageContentLen(BufferGetPage(buf));
		memcpy(content, LsmPageContent(BufferGetPage(buf)), len);
		UnlockReleaseBuffer(buf);
		LsmCheckStatus(index, lsm_runheader_parse(content, len, &hdr), runs[i].start,
					   "reading a run header");

		values[0] = Int32GetDatum(runs[i].level);
		values[1] = Int64GetDatum(runs[i].run_id);
		values[2] = Int64GetDatum(runs[i].nentries);
		values[3] = Int64GetDatum(runs[i].npages);
		values[4] = PointerGetDatum(LsmKeyToText(index, runs[i].start,
												 hdr.min_key, (int) hdr.min_key_len));
		values[5] = PointerGetDatum(LsmKeyToText(index, runs[i].start,
												 hdr.max_key, (int) hdr.max_key_len));
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	relation_close(index, AccessShareLock);
	return (Datum) 0;
}

PG_FUNCTION_INFO_V1(lsm_wait_for_merges);

static uint32 wait_event_merges = 0;

/*
 * lsm_am.wait_for_merges(regclass, interval): wait until no flush or
 * compaction of the index is pending or running; true, or false when the
 * timeout passed.  Does the work itself if no worker can be had.
 *
 * The index is locked only while it is looked at, not while we sleep: a
 * worker that has done the last merge gives free space back (LsmMaybeShrink)
 * only if it gets the index's AccessExclusiveLock at once, and a waiter that
 * held its lock throughout made that fail every time, so the file was
 * always measured before its shrink (a capped 20-minute ingest,
 * bench/ingest.sh: 1.79 times its live data "once idle").  An index dropped
 * while we sleep is an ERROR at the next look, as for a first call.
 */
Datum
lsm_wait_for_merges(PG_FUNCTION_ARGS)
{
	Oid			relid = PG_GETARG_OID(0);
	Interval   *timeout = PG_GETARG_INTERVAL_P(1);
	TimestampTz deadline;
	bool		done = false;
	int64		usecs;

	LsmCheckPreloaded();
	if (RecoveryInProgress())
		ereport(ERROR,
				(errcode(ERRCODE_READ_ONLY_SQL_TRANSACTION),
				 errmsg("lsm_am.wait_for_merges() cannot run during recovery"),
				 errhint("Call it on the primary.")));
	usecs = timeout->time + (int64) (timeout->day + timeout->month * 30) * USECS_PER_DAY;
	if (usecs < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("timeout must not be negative")));
	deadline = GetCurrentTimestamp() + usecs;
	for (;;)
	{
		Relation	index = LsmOpenIndex(relid, RowExclusiveLock, LSM_OPEN_READ);
		LsmSlot    *slot;
		bool		self;

		if (!LsmWorkPending(index))
		{
			relation_close(index, RowExclusiveLock);
			done = true;
			break;
		}
		if (GetCurrentTimestamp() >= deadline)
		{
			relation_close(index, RowExclusiveLock);
			break;
		}
		self = !LsmWorkersAvailable(MyDatabaseId) || LsmIndexNewInXact(index);
		slot = LsmSlotAcquire(index, LW_EXCLUSIVE);
		if (!self)
			LsmPendingSet(slot, LSM_WORK_COMPACT);	/* while the slot is ours */
		LsmSlotRelease(index, slot);
		if (self)
			LsmMaintain(index, NULL);
		relation_close(index, RowExclusiveLock);
		if (!self)
		{
			LsmWakeWorkers(MyDatabaseId);
			(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
							 20, LsmWaitEventNamed("LsmWaitForMerges", &wait_event_merges));
			ResetLatch(MyLatch);
		}
		CHECK_FOR_INTERRUPTS();
	}
	PG_RETURN_BOOL(done);
}

PG_FUNCTION_INFO_V1(lsm_maintenance_stats);

/*
 * The columns of maintenance_stats: 20 in the catalog of lsm_am 0.2 to 0.4,
 * 22 from 0.5 on (pages_written_per_level, write_amplification).  This
 * library fills as many as the installed catalog declares, so it serves an
 * extension not yet updated (ALTER EXTENSION lsm_am UPDATE).
 */
#define LSM_MSTATS_COLS_V2		20
#define LSM_MSTATS_COLS			22

/* lsm_am.maintenance_stats(regclass): flushes, compactions, stalls, WAL. */
Datum
lsm_maintenance_stats(PG_FUNCTION_ARGS)
{
	Oid			relid = PG_GETARG_OID(0);
	Relation	index;
	TupleDesc	tupdesc;
	LsmSlot    *slot;
	LsmMetaPageData *meta = palloc(sizeof(LsmMetaPageData));
	Datum		values[LSM_MSTATS_COLS];
	bool		nulls[LSM_MSTATS_COLS] = {0};
	uint64		live_pages = 1;	/* the metapage */
	BlockNumber file_pages;
	int			n = 0;
	int			levels[LSM_PICK_MAX_LEVEL + 1] = {0};
	uint64		free_pages = 0;
	ArrayType  *lv;

	LsmCheckPreloaded();
	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	if (tupdesc->natts != LSM_MSTATS_COLS && tupdesc->natts != LSM_MSTATS_COLS_V2)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("lsm_am.maintenance_stats() is declared with %d columns, this lsm_am library fills %d or %d",
						tupdesc->natts, LSM_MSTATS_COLS_V2, LSM_MSTATS_COLS),
				 errhint("Update the extension with ALTER EXTENSION lsm_am UPDATE.")));
	index = LsmOpenIndex(relid, AccessShareLock, LSM_OPEN_READ);
	slot = LsmSlotAcquire(index, LW_SHARED);
	LsmReadMeta(index, meta, NULL);
	for (int i = 0; i < (int) meta->nruns; i++)
	{
		levels[Min(meta->runs[i].level, LSM_PICK_MAX_LEVEL)]++;
		live_pages += meta->runs[i].npages;
	}
	live_pages += slot->log_pages;
	for (int i = 0; i < slot->nimm; i++)
		live_pages += slot->imm[i].pages;
	file_pages = RelationGetNumberOfBlocks(index);
	for (int i = 0; i < (int) meta->nfree; i++)
		free_pages += meta->free[i].npages;
	{
		int			last = 0;
		Datum	   *elems;

		for (int i = 0; i <= LSM_PICK_MAX_LEVEL; i++)
			if (levels[i] > 0)
				last = i;
		elems = palloc(sizeof(Datum) * (last + 1));
		for (int i = 0; i <= last; i++)
			elems[i] = Int32GetDatum(levels[i]);
		lv = construct_array(elems, last + 1, INT4OID, sizeof(int32), true, TYPALIGN_INT);
	}
	values[n++] = Int32GetDatum(slot->nimm);
	values[n++] = PointerGetDatum(lv);
	values[n++] = Int64GetDatum(meta->nflushes);
	values[n++] = Int64GetDatum(meta->nmerges);
	values[n++] = Int64GetDatum(meta->nmoves);
	values[n++] = Int64GetDatum(meta->pages_flushed);
	values[n++] = Int64GetDatum(meta->pages_compacted);
	values[n++] = Int64GetDatum(slot->stalls_slowdown);
	values[n++] = Int64GetDatum(slot->stalls_stop);
	values[n++] = Float8GetDatum(slot->stall_us / 1000.0);
	values[n++] = Int64GetDatum(slot->self_flushes);
	values[n++] = Int64GetDatum(slot->wal_log);
	values[n++] = Int64GetDatum(slot->wal_flush);
	values[n++] = Int64GetDatum(slot->wal_compact);
	values[n++] = Int64GetDatum(free_pages);
	values[n++] = Int64GetDatum(meta->nblocks);
	values[n++] = BoolGetDatum((pg_atomic_read_u32(&slot->pending) &
								   (LSM_WORK_FLUSH | LSM_WORK_COMPACT)) != 0 ||
								  slot->nimm > 0);
	values[n++] = Int64GetDatum(meta->leaked_pages);
	values[n++] = Int64GetDatum(file_pages);
	/* file pages per live page (runs, log, metapage) */
	values[n++] = Float8GetDatum((double) file_pages / live_pages);
	{
		/*
		 * Run pages written into each level since the slot was loaded, up to
		 * the deepest level written; write amplification: all of them per
		 * page flushed (NULL before the first flush)
		 */
		int			last = 0;
		uint64		all = 0;
		Datum	   *elems;

		for (int i = 0; i <= LSM_PICK_MAX_LEVEL; i++)
		{
			all += slot->level_pages[i];
			if (slot->level_pages[i] > 0)
				last = i;
		}
		elems = palloc(sizeof(Datum) * (last + 1));
		for (int i = 0; i <= last; i++)
			elems[i] = Int64GetDatum((int64) slot->level_pages[i]);
		values[n++] = PointerGetDatum(construct_array(elems, last + 1, INT8OID, sizeof(int64),
													  FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
		if (slot->level_pages[0] > 0)
			values[n] = Float8GetDatum((double) all / slot->level_pages[0]);
		else
			nulls[n] = true;
		n++;
	}
	LsmSlotRelease(index, slot);
	relation_close(index, AccessShareLock);
	Assert(n == lengthof(values));
	/* a catalog of 0.2-0.4 declares the first 20 columns only */
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}

/* lsm_am.check_index: walks of the log chains without the slot lock */
#define LSM_CHECK_TRIES			4

PG_FUNCTION_INFO_V1(lsm_check_index);

/*
 * lsm_am.check_index(regclass): account for every page of the index.  Each
 * page below the metapage's nblocks must belong to exactly one of: the
 * metapage, a live log chain, a run, the free list, a reservation.
 * Returns the counts; leaked (owned by nothing) and doubly owned pages are
 * reported, and doubly owned ones raise an ERROR (corruption).
 */
Datum
lsm_check_index(PG_FUNCTION_ARGS)
{
	Oid			relid = PG_GETARG_OID(0);
	Relation	index;
	TupleDesc	tupdesc;
	LsmSlot    *slot;
	LsmMetaPageData *meta = palloc(sizeof(LsmMetaPageData));
	uint8	   *owner;
	int64		cnt[6] = {0};	/* meta, log, run, free, reserved, leaked */
	int64		twice = 0;
	BlockNumber first_twice = InvalidBlockNumber;
	BlockNumber file_blocks;
	Datum		values[8];
	bool		nulls[8] = {0};
	BlockNumber *chain_blocks[1 + LSM_MAX_IMM];
	int			chain_len[1 + LSM_MAX_IMM];
	int			nchain = 0;

	LsmCheckPreloaded();
	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	index = LsmOpenIndex(relid, RowExclusiveLock, LSM_OPEN_READ);
	LsmFlushLock(index);
	LsmCompactLock(index);

	/*
	 * The maintenance locks keep flushes, compactions and VACUUM out; inserts
	 * may still add log pages and switch memtables, which changes the
	 * metapage.  Walk the log chains without the slot lock and take the
	 * result if the metapage is unchanged afterwards; after a few tries under
	 * a steady stream of new log pages, hold the slot lock (shared: no
	 * appends, no switches) for the walk.
	 */
	for (int attempt = 0;; attempt++)
	{
		bool		hold = attempt >= LSM_CHECK_TRIES;
		LsmMetaPageData *after;
		int			nb;
		BlockNumber *blocks;

		slot = LsmSlotAcquire(index, LW_SHARED);
		LsmReadMeta(index, meta, NULL);
		file_blocks = RelationGetNumberOfBlocks(index);
		if (!hold)
			LsmSlotRelease(index, slot);
		nchain = 0;
		for (int c = 0; c <= (int) meta->nimm; c++)
		{
			LsmLogChain ch = c < (int) meta->nimm ? meta->imm[c] : meta->active;

			nb = LsmCollectChain(index, ch.epoch, ch.head, &blocks);
			chain_blocks[nchain] = blocks;
			chain_len[nchain++] = nb;
		}
		if (hold)
		{
			LsmSlotRelease(index, slot);
			break;
		}
		after = palloc(sizeof(LsmMetaPageData));
		slot = LsmSlotAcquire(index, LW_SHARED);
		LsmReadMeta(index, after, NULL);
		LsmSlotRelease(index, slot);
		if (memcmp(after, meta, sizeof(LsmMetaPageData)) == 0)
		{
			pfree(after);
			break;
		}
		pfree(after);
		for (int c = 0; c < nchain; c++)
			pfree(chain_blocks[c]);
		CHECK_FOR_INTERRUPTS();
	}
	owner = palloc0(Max(meta->nblocks, 1));

#define LSM_MARK(blk, kind) \
	do { \
		BlockNumber b_ = (blk); \
		if (b_ >= meta->nblocks) { twice++; if (!BlockNumberIsValid(first_twice)) first_twice = b_; } \
		else if (owner[b_] != 0) { twice++; if (!BlockNumberIsValid(first_twice)) first_twice = b_; } \
		else { owner[b_] = (kind) + 1; cnt[(kind)]++; } \
	} while (0)

	LSM_MARK(0, 0);
	for (int c = 0; c < nchain; c++)
		for (int i = 0; i < chain_len[c]; i++)
			LSM_MARK(chain_blocks[c][i], 1);
	for (int r = 0; r < (int) meta->nruns; r++)
		for (uint32 i = 0; i < meta->runs[r].npages; i++)
			LSM_MARK(meta->runs[r].start + i, 2);
	for (int f = 0; f < (int) meta->nfree; f++)
		for (uint32 i = 0; i < meta->free[f].npages; i++)
			LSM_MARK(meta->free[f].start + i, 3);
	for (int v = 0; v < 4; v++)
		for (uint32 i = 0; i < meta->resv[v].npages; i++)
			LSM_MARK(meta->resv[v].start + i, 4);
	for (BlockNumber b = 0; b < meta->nblocks; b++)
		if (owner[b] == 0)
		{
			BlockNumber e = b;

			while (e + 1 < meta->nblocks && owner[e + 1] == 0)
				e++;
			cnt[5] += e - b + 1;
			ereport(NOTICE,
					(errmsg("index \"%s\": blocks %u to %u belong to nothing",
							get_rel_name(relid), b, e)));
			b = e;
		}
	LsmCompactUnlock(index);
	LsmFlushUnlock(index);
	relation_close(index, RowExclusiveLock);

	if (twice > 0)
	{
		index = relation_open(relid, AccessShareLock);
		LsmReportCorruption(index, first_twice,
							"%lld pages are owned twice or lie beyond the end of the file, the first at this block.",
							(long long) twice);
	}
	values[0] = Int64GetDatum(file_blocks);
	values[1] = Int64GetDatum(cnt[1]);
	values[2] = Int64GetDatum(cnt[2]);
	values[3] = Int64GetDatum(cnt[3]);
	values[4] = Int64GetDatum(cnt[4]);
	values[5] = Int64GetDatum((int64) file_blocks - meta->nblocks);
	values[6] = Int64GetDatum(cnt[5]);
	values[7] = Int64GetDatum(meta->leaked_pages);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}

PG_FUNCTION_INFO_V1(lsm_lookup_stats);

/*
 * lsm_am.lookup_stats(regclass): point-lookup counters since the server
 * started (or the index's memtable slot was reassigned).
 */
Datum
lsm_lookup_stats(PG_FUNCTION_ARGS)
{
	Oid			relid = PG_GETARG_OID(0);
	Relation	index;
	TupleDesc	tupdesc;
	LsmSlot    *slot;
	Datum		values[5];
	bool		nulls[5] = {0};

	LsmCheckPreloaded();
	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	index = LsmOpenIndex(relid, AccessShareLock, LSM_OPEN_READ);
	slot = LsmSlotAcquire(index, LW_SHARED);
	values[0] = Int64GetDatum(pg_atomic_read_u64(&slot->lookups));
	values[1] = Int64GetDatum(pg_atomic_read_u64(&slot->filter_probes));
	values[2] = Int64GetDatum(pg_atomic_read_u64(&slot->filter_negatives));
	values[3] = Int64GetDatum(pg_atomic_read_u64(&slot->filter_false_positives));
	values[4] = Int64GetDatum(pg_atomic_read_u64(&slot->data_pages_read));
	LsmSlotRelease(index, slot);
	relation_close(index, AccessShareLock);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}

PG_FUNCTION_INFO_V1(lsm_reset_lookup_stats);

/* lsm_am.reset_lookup_stats(regclass): zero the lookup counters (index owner). */
Datum
lsm_reset_lookup_stats(PG_FUNCTION_ARGS)
{
	Oid			relid = PG_GETARG_OID(0);
	Relation	index;
	LsmSlot    *slot;

	LsmCheckPreloaded();
	/* the counters are shared by every reader: only the owner resets them */
	index = LsmOpenIndex(relid, AccessShareLock, LSM_OPEN_MAINTAIN);
	slot = LsmSlotAcquire(index, LW_SHARED);
	LsmSlotResetLookupCounters(slot);
	LsmSlotRelease(index, slot);
	relation_close(index, AccessShareLock);
	PG_RETURN_VOID();
}
