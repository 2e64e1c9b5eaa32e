/*
 * lsminsert.c — aminsert: append to the log pages and the memtable; switch
 * to a fresh memtable when it is full (workers flush and compact), with
 * backpressure when they fall behind.
 *
 * Order matters for crash safety: the WAL-logged log append happens before
 * the memtable insert, both under the slot lock, so the memtable is always a
 * cache of the log.  Arena room is reserved before the log append, so the
 * memtable insert after it cannot fail for lack of memory.
 */
#include "postgres.h"

#include "access/xlog.h"
#include "executor/instrument.h"
#include "pgstat.h"
#include "utils/timestamp.h"
#include "miscadmin.h"
#include "storage/lmgr.h"
#include "utils/memutils.h"

#include "lsm.h"

/* Would adding a key of len bytes need a chunk beyond the memtable's size? */
static bool
LsmMemtableFull(Relation index, LsmSlot *slot, int len)
{
	uint64		limit = (uint64) LsmMemtableSizeKb(index) * 1024;
	bool		need_chunk = !(slot->mt.cur_chunk != 0 &&
							   slot->mt.chunk_used + (uint32) len + 64 <= LSM_CHUNK_SIZE);

	return need_chunk && slot->mt.nentries > 0 &&
		lsm_memtable_memory(lsm_shared->arena, &slot->mt) + LSM_CHUNK_SIZE > limit;
}

/*
 * Do maintenance in this backend, because no worker can be had: flush the
 * oldest immutable memtable, then one compaction.  Never waits for the
 * locks (whoever holds them is doing the work).
 */
static bool
LsmSelfServe(Relation index, uint32 l0_runs)
{
	bool		done = false;

	if (l0_runs < (uint32) lsm_l0_stop_trigger && LsmFlushLockConditional(index))
	{
		PG_TRY();
		{
			done |= LsmFlushOldest(index, NULL, NULL, NULL, NULL);
		}
		PG_FINALLY();
		{
			LsmFlushUnlock(index);
		}
		PG_END_TRY();
	}
	if (LsmCompactLockConditional(index))
	{
		PG_TRY();
		{
			done |= LsmCompactOnce(index, NULL);
		}
		PG_FINALLY();
		{
			LsmCompactUnlock(index);
		}
		PG_END_TRY();
	}
	return done;
}

/* How long a stalled insert waits for a worker before doing the work itself. */
#define LSM_STALL_SELF_SERVE_MS	1000

/*
 * Insert one encoded entry.
 *
 * A full memtable becomes immutable and a fresh one takes the entry (a
 * metapage record, no I/O wait); a worker flushes it.  Backpressure, as
 * RocksDB: with lsm_am.l0_slowdown_trigger level-0 runs each insert sleeps a
 * little; with all LSM_MAX_IMM immutable memtables waiting, or
 * lsm_am.l0_stop_trigger level-0 runs, inserts wait for the workers; if no
 * worker can be had (or none came for a second) the backend does the work.
 */
void
LsmInsertKey(Relation index, const uint8 *key, int len)
{
	TimestampTz stall_start = 0;
	bool		counted = false;
	bool		self_serve = false;
	int			slowdown = 0;
	uint32		l0 = 0;

	for (;;)
	{
		LsmSlot    *slot = LsmSlotAcquire(index, LW_EXCLUSIVE);
		bool		stall = false;
		LsmStatus	st;
		int64		wal0;

		if (LsmMemtableFull(index, slot, len))
		{
			if (slot->nimm < LSM_MAX_IMM)
				LsmSwitchMemtable(index, slot);
			else
				stall = true;	/* too many memtables wait */
		}
		if (slot->l0_runs >= (uint32) lsm_l0_stop_trigger)
			stall = true;
		if (!stall && !LsmEnsureChunkRoom(slot, &slot->mt, len, true))
		{
			if (slot->mt.nentries == 0 && slot->nimm == 0)
			{
				LsmSlotRelease(index, slot);
				ereport(ERROR,
						(errcode(ERRCODE_OUT_OF_MEMORY),
						 errmsg("out of lsm_am shared memory for the memtable of index \"%s\"",
								RelationGetRelationName(index)),
						 errdetail("lsm_am.memory is %d MB.", lsm_memory_mb),
						 errhint("Raise lsm_am.memory (requires a restart) or lower the memtable_size of lsm indexes.")));
			}
			if (slot->mt.nentries > 0 && slot->nimm < LSM_MAX_IMM)
			{
				LsmSwitchMemtable(index, slot);
				LsmSlotRelease(index, slot);
				continue;
			}
			stall = true;		/* memory comes back when a flush ends */
		}

		if (stall)
		{
			bool		serve;
			uint32		l0_runs;

			if (!counted)
			{
				slot->stalls_stop++;
				counted = true;
				stall_start = GetCurrentTimestamp();
			}
			LsmPendingSet(slot, slot->nimm > 0 ? LSM_WORK_FLUSH : LSM_WORK_COMPACT);
			l0_runs = slot->l0_runs;
			LsmSlotRelease(index, slot);
			LsmWakeWorkers(MyDatabaseId);
			serve = !LsmWorkersAvailable(MyDatabaseId) || LsmIndexNewInXact(index) ||
				TimestampDifferenceExceeds(stall_start, GetCurrentTimestamp(),
										   LSM_STALL_SELF_SERVE_MS);
			/* work ourselves if no worker does; else (or if the locks are
			 * busy) wait for a flush or compaction to end */
			if (!serve || !LsmSelfServe(index, l0_runs))
				(void) ConditionVariableTimedSleep(&slot->cv, 10, PG_WAIT_EXTENSION);
			CHECK_FOR_INTERRUPTS();
			continue;
		}
		ConditionVariableCancelSleep();

		if (slot->l0_runs >= (uint32) lsm_l0_slowdown_trigger)
		{
			slowdown = slot->l0_runs - lsm_l0_slowdown_trigger + 1;
			slot->stalls_slowdown++;
		}
		if (counted)
		{
			long		secs;
			int			usecs;

			TimestampDifference(stall_start, GetCurrentTimestamp(), &secs, &usecs);
			slot->stall_us += (uint64) secs * 1000000 + usecs;
		}

		LsmPublishSettings(index, slot);
		wal0 = pgWalUsage.wal_bytes;
		LsmLogAppend(index, slot, key, len);
		st = lsm_memtable_insert(lsm_shared->arena, &slot->mt, key, len);
		if (st != LSM_OK)
		{
			/* cannot happen after the reservation; rebuild from the log */
			slot->loaded = false;
			LsmSlotRelease(index, slot);
			LsmReportStatus(index, st, "inserting into the memtable");
		}
		slot->wal_log += pgWalUsage.wal_bytes - wal0;
		/* no worker can lock an index this transaction created */
		self_serve = slot->nimm > 0 &&
			(LsmIndexNewInXact(index) || !LsmWorkersAvailable(MyDatabaseId));
		l0 = slot->l0_runs;
		LsmSlotRelease(index, slot);
		break;
	}

	if (slowdown > 0)
	{
		/* 100 us per level-0 run over the trigger, at most 10 ms */
		pg_usleep(Min(slowdown * 100L, 10000L));
		CHECK_FOR_INTERRUPTS();
	}
	if (self_serve)
		(void) LsmSelfServe(index, l0);
}

/* aminsert */
bool
lsminsert(Relation index, Datum *values, bool *isnull,
		  ItemPointer ht_ctid, Relation heapRel,
		  IndexUniqueCheck checkUnique, bool indexUnchanged,
		  IndexInfo *indexInfo)
{
	LsmRelCache *cache;
	StringInfoData buf;

	LsmCheckPreloaded();
	cache = LsmGetRelCache(index);
	initStringInfo(&buf);
	LsmEncodeEntry(&cache->desc, values, isnull, ht_ctid, &buf);
	LsmInsertKey(index, (uint8 *) buf.data, buf.len);
	pfree(buf.data);
	return false;
}
