/*
 * lsmfuncs.c — SQL-callable functions of schema lsm_am.
 */
#include "postgres.h"

#include "access/relation.h"
#include "catalog/pg_class.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"

#include "lsm.h"

/* Open an index, checking that it is an lsm index the user may maintain. */
static Relation
LsmOpenIndex(Oid relid, LOCKMODE lockmode, bool maintain)
{
	Relation	index = try_relation_open(relid, lockmode);

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
	if (maintain && !LsmIsOwner(relid))
		aclcheck_error(ACLCHECK_NOT_OWNER, OBJECT_INDEX, RelationGetRelationName(index));
	if (!maintain &&
		pg_class_aclcheck(index->rd_index->indrelid, GetUserId(), ACL_SELECT) != ACLCHECK_OK)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied for index \"%s\"", RelationGetRelationName(index)),
				 errhint("Reading lsm index statistics requires SELECT on its table.")));
	if (RELATION_IS_OTHER_TEMP(index))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot access temporary indexes of other sessions")));
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
	index = LsmOpenIndex(relid, RowExclusiveLock, true);
	LsmFlush(index, NULL, NULL, NULL);
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
	index = LsmOpenIndex(relid, AccessShareLock, false);

	slot = LsmSlotAcquire(index, LW_SHARED);
	LsmReadMeta(index, &meta, &runs);
	mt_entries = slot->mt.nentries;
	mt_bytes = lsm_memtable_memory(lsm_shared->arena, &slot->mt);
	log_pages = slot->log_pages;
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
	LsmSlot    *slot;

	LsmCheckPreloaded();
	if (RecoveryInProgress())
		ereport(ERROR,
				(errcode(ERRCODE_READ_ONLY_SQL_TRANSACTION),
				 errmsg("lsm_am.compact() cannot run during recovery"),
				 errhint("Compact on the primary; the standby replays it.")));
	index = LsmOpenIndex(relid, RowExclusiveLock, true);
	LsmMaintenanceLock(index);
	slot = LsmSlotAcquire(index, LW_EXCLUSIVE);
	LsmFlushLocked(index, slot, NULL, NULL, NULL);
	LsmMergeAll(index, slot);
	LsmSlotRelease(index, slot);
	LsmMaintenanceUnlock(index);
	relation_close(index, RowExclusiveLock);
	PG_RETURN_VOID();
}

/* A key as text: "(v1, v2)" from the output functions of decodable columns,
 * the hex of the whole entry otherwise. */
static text *
LsmKeyToText(const LsmKeyDesc *desc, const uint8 *key, int len)
{
	Datum		values[INDEX_MAX_KEYS];
	bool		isnull[INDEX_MAX_KEYS];
	StringInfoData buf;

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
	LsmRelCache *cache;
	uint8	   *content = palloc(BLCKSZ);

	LsmCheckPreloaded();
	InitMaterializedSRF(fcinfo, 0);
	index = LsmOpenIndex(relid, AccessShareLock, false);
	cache = LsmGetRelCache(index);
	LsmMaintenanceLock(index);	/* the manifest and run headers hold still */
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
		LsmCheckStatus(index, lsm_runheader_parse(content, len, &hdr), "reading a run header");

		values[0] = Int32GetDatum(runs[i].level);
		values[1] = Int64GetDatum(runs[i].run_id);
		values[2] = Int64GetDatum(runs[i].nentries);
		values[3] = Int64GetDatum(runs[i].npages);
		values[4] = PointerGetDatum(LsmKeyToText(&cache->desc, hdr.min_key, (int) hdr.min_key_len));
		values[5] = PointerGetDatum(LsmKeyToText(&cache->desc, hdr.max_key, (int) hdr.max_key_len));
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	LsmMaintenanceUnlock(index);
	relation_close(index, AccessShareLock);
	return (Datum) 0;
}
