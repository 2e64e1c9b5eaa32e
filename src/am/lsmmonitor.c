/*
 * lsmmonitor.c — the monitoring functions of schema lsm_am: the running
 * maintenance jobs (maintenance_progress, behind the view lsm_am.progress),
 * one index's summary (index_summary, behind the view lsm_am.indexes) and
 * the reset of its counters (reset_stats).
 *
 * Both readers show an index only to a role that may SELECT from its table
 * (or has the privileges of pg_read_all_stats): others get no row, not an
 * error, so the views over every index of the database simply leave those
 * indexes out.  Neither loads a memtable or waits for a maintenance lock:
 * they read shared memory and the metapage.
 */
#include "postgres.h"

#include "access/relation.h"
#include "catalog/index.h"
#include "catalog/pg_authid.h"
#include "catalog/pg_class.h"
#include "catalog/pg_type.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/rel.h"
#include "utils/timestamp.h"

#include "am/lsm_am.h"

/* May the current role read the statistics of an index of table relid? */
static bool
LsmMayReadStats(Oid relid)
{
	if (has_privs_of_role(GetUserId(), ROLE_PG_READ_ALL_STATS))
		return true;
	return OidIsValid(relid) &&
		pg_class_aclcheck(relid, GetUserId(), ACL_SELECT) == ACLCHECK_OK;
}

/* int4[] of the levels set in bits */
static Datum
LsmLevelsArray(uint32 bits)
{
	Datum		elems[32];
	int			n = 0;

	for (int l = 0; l < 32; l++)
		if (bits & ((uint32) 1 << l))
			elems[n++] = Int32GetDatum(l);
	return PointerGetDatum(construct_array(elems, n, INT4OID, sizeof(int32), true,
										   TYPALIGN_INT));
}

PG_FUNCTION_INFO_V1(lsm_maintenance_progress);

/*
 * lsm_am.maintenance_progress(): one row per flush, compaction, move,
 * rewrite, relocation or VACUUM pass running on an lsm index of the current
 * database, by a worker or a backend.
 */
Datum
lsm_maintenance_progress(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	int			max;
	LsmProgress *jobs;
	int			n;

	LsmCheckPreloaded();
	InitMaterializedSRF(fcinfo, 0);
	max = LsmProgressMax();
	jobs = palloc(sizeof(LsmProgress) * Max(max, 1));
	n = LsmProgressSnapshot(MyDatabaseId, jobs, max);
	for (int i = 0; i < n; i++)
	{
		Datum		values[10];
		bool		nulls[10] = {0};
		Oid			relid = IndexGetRelation(jobs[i].indexoid, true);

		if (!OidIsValid(relid) || !LsmMayReadStats(relid))
			continue;			/* dropped meanwhile, or not ours to see */
		values[0] = Int32GetDatum(jobs[i].pid);
		values[1] = ObjectIdGetDatum(relid);
		values[2] = ObjectIdGetDatum(jobs[i].indexoid);
		values[3] = CStringGetTextDatum(LsmJobKindName(jobs[i].kind));
		values[4] = Int32GetDatum(jobs[i].input_runs);
		values[5] = LsmLevelsArray(jobs[i].input_levels);
		values[6] = Int32GetDatum(jobs[i].output_level);
		nulls[6] = jobs[i].output_level < 0;
		values[7] = Int64GetDatum(jobs[i].pages_done);
		values[8] = Int64GetDatum(jobs[i].pages_total);
		values[9] = TimestampTzGetDatum(jobs[i].started_at);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}

static const char *
LsmPolicyName(int policy)
{
	switch (policy)
	{
		case LSM_POLICY_LEVELED:
			return "leveled";
		case LSM_POLICY_TIERED:
			return "tiered";
		case LSM_POLICY_LAZY:
			return "lazy";
	}
	return "unknown";
}

/*
 * Open relid if it is an lsm index of this database the caller may read
 * the statistics of; NULL (no row) otherwise — dropped meanwhile, another
 * kind of relation, or not readable.  ERROR only for a relation that is not
 * an lsm index when strict.
 */
static Relation
LsmOpenForStats(Oid relid, bool strict)
{
	Relation	index = try_relation_open(relid, AccessShareLock);

	if (index == NULL)
		return NULL;
	if (strict && index->rd_rel->relkind == RELKIND_PARTITIONED_INDEX)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is a partitioned index", RelationGetRelationName(index)),
				 errhint("Call the function on the index of each partition, or use lsm_am.table_indexes() on the table.")));
	if (index->rd_rel->relkind != RELKIND_INDEX || index->rd_indam == NULL ||
		index->rd_indam->ambuild != lsmbuild)
	{
		if (strict)
			ereport(ERROR,
					(errcode(ERRCODE_WRONG_OBJECT_TYPE),
					 errmsg("\"%s\" is not an lsm index", RelationGetRelationName(index)),
					 errhint("Pass an index created with USING lsm.")));
		relation_close(index, AccessShareLock);
		return NULL;
	}
	if (!LsmMayReadStats(index->rd_index->indrelid) || RELATION_IS_OTHER_TEMP(index))
	{
		relation_close(index, AccessShareLock);
		return NULL;
	}
	/* this backend's own entries of the index are in it first */
	LsmPushPending(index);
	return index;
}

PG_FUNCTION_INFO_V1(lsm_index_summary);

/* the OUT columns of lsm_am.index_summary, in order */
enum
{
	COL_POLICY, COL_MT_ENTRIES, COL_MT_BYTES, COL_MT_FILL, COL_IMM, COL_LEVELS,
	COL_LIVE, COL_TOTAL, COL_PENDING, COL_RUNNING, COL_FLUSHES, COL_COMPACTIONS,
	COL_LAST_FLUSH, COL_LAST_COMPACTION, COL_SLOWDOWNS, COL_STOPS, COL_STALL_MS,
	COL_N
};

/*
 * lsm_am.index_summary(regclass): the row of lsm_am.indexes for one index;
 * no row if the caller may not read its table.  The memtable columns are
 * NULL while the index's memtable is not in shared memory (after a restart
 * until its first use, or evicted): reading them would load it.
 */
Datum
lsm_index_summary(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	Relation	index;
	LsmMetaPageData *meta = palloc(sizeof(LsmMetaPageData));
	Datum		values[COL_N];
	bool		nulls[COL_N] = {0};
	int			levels[LSM_PICK_MAX_LEVEL + 1] = {0};
	int			last = 0;
	Datum	   *elems;
	uint64		unused = 0;
	BlockNumber file_pages;
	uint32		gen;
	int			slotno;
	bool		in_memory = false;
	LsmProgress *jobs;
	int			njobs;
	uint32		running = 0;

	LsmCheckPreloaded();
	InitMaterializedSRF(fcinfo, 0);
	index = LsmOpenForStats(PG_GETARG_OID(0), true);
	if (index == NULL)
		return (Datum) 0;

	LsmReadMeta(index, meta, NULL);
	file_pages = RelationGetNumberOfBlocks(index);
	for (int i = 0; i < (int) meta->nruns; i++)
		levels[Min(meta->runs[i].level, LSM_PICK_MAX_LEVEL)]++;
	for (int i = 0; i <= LSM_PICK_MAX_LEVEL; i++)
		if (levels[i] > 0)
			last = i;
	elems = palloc(sizeof(Datum) * (last + 1));
	for (int i = 0; i <= last; i++)
		elems[i] = Int32GetDatum(levels[i]);
	for (int i = 0; i < (int) meta->nfree; i++)
		unused += meta->free[i].npages;
	for (int v = 0; v < 4; v++)
		unused += meta->resv[v].npages;

	values[COL_POLICY] = CStringGetTextDatum(LsmPolicyName(LsmCompactionPolicyOf(index)));
	/* memtable: peek at the slot, never load it */
	slotno = LsmSlotLookup(index, &gen);
	if (slotno >= 0)
	{
		LsmSlot    *slot = &lsm_shared->slots[slotno];

		LWLockAcquire(LsmSlotLock(slotno), LW_SHARED);
		if (slot->generation == gen && slot->loaded &&
			slot->relnumber == LsmRelFileNumber(index))
		{
			uint64		bytes = lsm_memtable_memory(lsm_shared->arena, &slot->mt);

			in_memory = true;
			values[COL_MT_ENTRIES] = Int64GetDatum(slot->mt.nentries);
			values[COL_MT_BYTES] = Int64GetDatum(bytes);
			values[COL_MT_FILL] = Float8GetDatum((double) bytes /
												 ((double) LsmMemtableSizeKb(index) * 1024.0));
			values[COL_IMM] = Int32GetDatum(slot->nimm);
			values[COL_PENDING] = BoolGetDatum((pg_atomic_read_u32(&slot->pending) &
												(LSM_WORK_FLUSH | LSM_WORK_COMPACT)) != 0 ||
											   slot->nimm > 0);
			values[COL_SLOWDOWNS] = Int64GetDatum(slot->stalls_slowdown);
			values[COL_STOPS] = Int64GetDatum(slot->stalls_stop);
			values[COL_STALL_MS] = Float8GetDatum(slot->stall_us / 1000.0);
			values[COL_LAST_FLUSH] = TimestampTzGetDatum(slot->last_flush_at);
			nulls[COL_LAST_FLUSH] = slot->last_flush_at == 0;
			values[COL_LAST_COMPACTION] = TimestampTzGetDatum(slot->last_compaction_at);
			nulls[COL_LAST_COMPACTION] = slot->last_compaction_at == 0;
		}
		LWLockRelease(LsmSlotLock(slotno));
	}
	if (!in_memory)
	{
		nulls[COL_MT_ENTRIES] = nulls[COL_MT_BYTES] = nulls[COL_MT_FILL] = true;
		/* the metapage knows the immutable memtables waiting */
		values[COL_IMM] = Int32GetDatum(meta->nimm);
		values[COL_PENDING] = BoolGetDatum(meta->nimm > 0);
		values[COL_SLOWDOWNS] = Int64GetDatum(0);
		values[COL_STOPS] = Int64GetDatum(0);
		values[COL_STALL_MS] = Float8GetDatum(0);
		nulls[COL_LAST_FLUSH] = nulls[COL_LAST_COMPACTION] = true;
	}
	values[COL_LEVELS] = PointerGetDatum(construct_array(elems, last + 1, INT4OID,
														 sizeof(int32), true, TYPALIGN_INT));
	values[COL_LIVE] = Int64GetDatum(meta->nblocks > unused ? meta->nblocks - unused : 0);
	values[COL_TOTAL] = Int64GetDatum(file_pages);
	values[COL_FLUSHES] = Int64GetDatum(meta->nflushes);
	values[COL_COMPACTIONS] = Int64GetDatum(meta->nmerges + meta->nmoves);

	/* jobs running on it now */
	jobs = palloc(sizeof(LsmProgress) * Max(LsmProgressMax(), 1));
	njobs = LsmProgressSnapshot(MyDatabaseId, jobs, LsmProgressMax());
	for (int i = 0; i < njobs; i++)
		if (jobs[i].indexoid == RelationGetRelid(index))
			running |= (uint32) 1 << jobs[i].kind;
	if (running == 0)
		nulls[COL_RUNNING] = true;
	else
	{
		StringInfoData buf;

		initStringInfo(&buf);
		for (int k = LSM_JOB_FLUSH; k <= LSM_JOB_VACUUM; k++)
			if (running & ((uint32) 1 << k))
				appendStringInfo(&buf, "%s%s", buf.len > 0 ? ", " : "",
								 LsmJobKindName((LsmJobKind) k));
		values[COL_RUNNING] = CStringGetTextDatum(buf.data);
	}
	relation_close(index, AccessShareLock);
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	return (Datum) 0;
}

PG_FUNCTION_INFO_V1(lsm_reset_stats);

/*
 * lsm_am.reset_stats(regclass): zero the counters an index keeps in shared
 * memory — stalls, backend flushes, WAL bytes and the lookup counters
 * (index owner only).  The metapage's counts of flushes, compactions and
 * pages written are part of the index and stay.
 */
Datum
lsm_reset_stats(PG_FUNCTION_ARGS)
{
	Oid			relid = PG_GETARG_OID(0);
	Relation	index;
	LsmSlot    *slot;

	LsmCheckPreloaded();
	index = LsmOpenForStats(relid, true);
	if (index == NULL)
	{
		/* dropped, or no SELECT: the owner check below decides the error */
		index = try_relation_open(relid, AccessShareLock);
		if (index == NULL)
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_TABLE),
					 errmsg("relation with OID %u does not exist", relid)));
	}
	if (!LsmIsOwner(relid))
		aclcheck_error(ACLCHECK_NOT_OWNER, OBJECT_INDEX, RelationGetRelationName(index));
	if (RELATION_IS_OTHER_TEMP(index))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot access temporary indexes of other sessions")));
	slot = LsmSlotAcquire(index, LW_EXCLUSIVE);
	LsmSlotResetStats(slot);
	LsmSlotRelease(index, slot);
	relation_close(index, AccessShareLock);
	PG_RETURN_VOID();
}
