/*
 * lsminsert.c — aminsert: append to the log pages and the memtable; flush
 * the memtable into a sorted run when it is full, and merge runs when there
 * are too many.
 *
 * Order matters for crash safety: the WAL-logged log append happens before
 * the memtable insert, both under the slot lock, so the memtable is always a
 * cache of the log.  Arena room is reserved before the log append, so the
 * memtable insert after it cannot fail for lack of memory.
 */
#include "postgres.h"

#include "access/xlog.h"
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
 * Flush if the memtable is still full once we hold the locks (the flush also
 * merges runs when needed).  Unless forced (arena exhausted), do not wait for
 * the maintenance lock: a VACUUM may hold it for long, and PostgreSQL would
 * cancel an autovacuum that an insert waits for.  Returns false if the flush
 * was skipped; the memtable then grows past memtable_size for a while (a soft
 * limit, like GIN's pending list).
 */
static bool
LsmFlushForInsert(Relation index, int len, bool force)
{
	LsmSlot    *slot;

	if (force)
		LsmMaintenanceLock(index);
	else if (!ConditionalLockPage(index, LSM_METAPAGE_BLKNO, ExclusiveLock))
		return false;
	slot = LsmSlotAcquire(index, LW_EXCLUSIVE);
	if (force ? slot->mt.nentries > 0 : LsmMemtableFull(index, slot, len))
	{
		LsmFlushLocked(index, slot, NULL, NULL, NULL);
	}
	LsmSlotRelease(index, slot);
	LsmMaintenanceUnlock(index);
	return true;
}

/* Insert one encoded entry. */
void
LsmInsertKey(Relation index, const uint8 *key, int len)
{
	bool		soft_full = false;

	for (;;)
	{
		LsmSlot    *slot = LsmSlotAcquire(index, LW_EXCLUSIVE);
		LsmStatus	st;

		if (!soft_full && LsmMemtableFull(index, slot, len))
		{
			LsmSlotRelease(index, slot);
			if (!LsmFlushForInsert(index, len, false))
				soft_full = true;	/* maintenance busy: go over the limit */
			continue;
		}
		if (!LsmEnsureChunkRoom(slot, len, true))
		{
			bool		have = slot->mt.nentries > 0;

			LsmSlotRelease(index, slot);
			if (have)
			{
				LsmFlushForInsert(index, len, true);
				continue;
			}
			ereport(ERROR,
					(errcode(ERRCODE_OUT_OF_MEMORY),
					 errmsg("out of lsm_am shared memory for the memtable of index \"%s\"",
							RelationGetRelationName(index)),
					 errdetail("lsm_am.memory is %d MB.", lsm_memory_mb),
					 errhint("Raise lsm_am.memory (requires a restart) or lower the memtable_size of lsm indexes.")));
		}

		LsmLogAppend(index, slot, key, len);
		st = lsm_memtable_insert(lsm_shared->arena, &slot->mt, key, len);
		if (st != LSM_OK)
		{
			/* cannot happen after the reservation; rebuild from the log */
			slot->loaded = false;
			LsmSlotRelease(index, slot);
			LsmReportStatus(index, st, "inserting into the memtable");
		}
		LsmSlotRelease(index, slot);
		return;
	}
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
