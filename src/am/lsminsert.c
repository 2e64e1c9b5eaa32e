/*
 * lsminsert.c — aminsert: entries are collected per index in the inserting
 * backend and appended in batches to the log pages and the memtable; a full
 * memtable becomes immutable and a fresh one takes the next entries (workers
 * flush and compact), with backpressure when they fall behind.
 *
 * Batches.  aminsert only encodes the entry into a backend-local buffer of
 * its index.  The buffer goes to the index (LsmPushPending) when it holds
 * about a log page of entries, before this backend scans the index or calls
 * one of the lsm_am functions on it, and at the latest when the transaction
 * commits or prepares (a pre-commit callback).  So the slot lock is taken
 * once per batch instead of once per row, and the WAL is one generic record
 * per log page instead of one per row.  This is safe because nobody needs
 * an uncommitted entry before that: other transactions cannot see the rows
 * yet, this backend's own scans push first, and a crash before commit makes
 * the rows dead anyway.  A transaction that aborts drops its buffers, and so
 * does a subtransaction: VACUUM may remove its dead rows before we commit,
 * and an entry pushed later could point at a reused TID.  So a buffer only
 * ever holds entries of one nesting level (a subtransaction's first insert
 * pushes its parent's entries first).  An index dropped,
 * truncated or rebuilt later in the transaction has a new relfilenode: its
 * old buffer is dropped, as the rows it indexed are gone or re-indexed.
 *
 * Hooks (lsmhooks.c) push everything before utility commands (DDL may move
 * an index without rebuilding it) and parallel plans (workers cannot see our
 * buffers), and make INSERT ... ON CONFLICT unbuffered (a killed speculative
 * tuple's TID may be reused at once); doc/impl.md "Insert path" has why.
 *
 * Inside a batch, under the slot lock, entries go into the memtable first
 * and then to the log, a log page at a time; the slot is marked not loaded
 * meanwhile, so an ERROR half-way makes the next user rebuild the memtable
 * from the log, and the batch remembers exactly which entries were logged:
 * the others stay in the buffer and are pushed again (say after a
 * subtransaction caught the ERROR).  Arena room is reserved before each
 * memtable insert, so that insert cannot fail for lack of memory.
 */
#include "postgres.h"

#include "access/relation.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/pg_class.h"
#include "executor/instrument.h"
#include "pgstat.h"
#include "utils/timestamp.h"
#include "miscadmin.h"
#include "storage/latch.h"
#include "storage/lmgr.h"
#include "utils/memutils.h"

#include "am/lsm_am.h"

static uint32 wait_event_stall = 0;	/* "LsmInsertStall" (lsm_compat.h) */
static uint32 wait_event_delay = 0;	/* "LsmInsertDelay" */

/*
 * Would adding a key of len bytes need a chunk beyond the memtable's size?
 * The arena is a write buffer shared by every index (RocksDB's write buffer
 * manager): a memtable is full at its memtable_size, and also, when the
 * arena runs short (LsmArenaShort), at its second chunk: it turns
 * immutable and is flushed, giving its chunks back to the other indexes.
 */
static bool
LsmMemtableFull(Relation index, LsmSlot *slot, int len)
{
	uint64		limit = (uint64) LsmMemtableSizeKb(index) * 1024;
	bool		need_chunk = !(slot->mt.cur_chunk != 0 &&
							   slot->mt.chunk_used + (uint32) len + 64 <= LSM_CHUNK_SIZE);

	if (!need_chunk || slot->mt.nentries == 0)
		return false;
	if (slot->mt.nchunks >= 2 && LsmArenaShort())
		return true;
	return lsm_memtable_memory(lsm_shared->arena, &slot->mt) + LSM_CHUNK_SIZE > limit;
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

/* Units of debt a full active memtable adds while LSM_MAX_IMM wait. */
#define LSM_DELAY_IMM_UNITS		16

/* Can a worker serve the index?  None can lock one this transaction created. */
static bool
LsmWorkersServe(Relation index)
{
	return !LsmIndexNewInXact(index) && LsmWorkersAvailable(MyDatabaseId);
}

/*
 * The index's debt for backpressure by rate (core/lsm_core_rate.h has the
 * model; slot lock held): a unit per level-0 run from
 * lsm_am.l0_slowdown_trigger on, and while all LSM_MAX_IMM immutables wait
 * for a flush, 1 + up to LSM_DELAY_IMM_UNITS as the active memtable fills
 * towards the stop (the rate is down to 0.8^17, 2%, when it is full):
 * flushes fall behind first (a 4 MB memtable fills in a third of a second
 * at 450,000 rows/s); and the units of the levels over their targets that
 * the last merge saw (LsmLevelDebt).
 */
static uint32
LsmInsertDebt(Relation index, LsmSlot *slot)
{
	uint32		debt = 0;

	if (slot->l0_runs >= (uint32) lsm_l0_slowdown_trigger)
		debt += slot->l0_runs - (uint32) lsm_l0_slowdown_trigger + 1;
	debt += slot->level_debt;
	if (slot->nimm >= LSM_MAX_IMM)
	{
		double		fill = (double) lsm_memtable_memory(lsm_shared->arena, &slot->mt) /
			((double) LsmMemtableSizeKb(index) * 1024);

		debt += 1 + (uint32) (Min(Max(fill, 0.0), 1.0) * LSM_DELAY_IMM_UNITS);
	}
	return debt;
}

/*
 * Insert ents[*done .. n) in order.  *done counts the entries appended to
 * both the log and the memtable; on ERROR it tells the caller where to
 * resume.
 *
 * A full memtable becomes immutable and a fresh one takes the entries (a
 * metapage record, no I/O wait); a worker flushes it.  Backpressure: a
 * shared rate (LsmInsertDebt), then the stop at lsm_am.l0_stop_trigger
 * level-0 runs or a full memtable with LSM_MAX_IMM waiting, where inserts
 * wait for the workers or, with none (or none for a second), do the work.
 */
static void
LsmInsertBatch(Relation index, const LsmLogEntry *ents, int n, volatile int *done)
{
	TimestampTz stall_start = 0;
	bool		counted = false;
	bool		arena_short = false;
	bool		self_serve = false;
	long		delay_us = 0;
	uint32		l0 = 0;
	uint64		bytes = 0;		/* entry bytes inserted by this call */

	while (*done < n)
	{
		LsmSlot    *slot = LsmSlotAcquire(index, LW_EXCLUSIVE);
		bool		stall = false;
		bool		arena_wait = false;
		uint32		debt;
		bool		served;
		int			delayed;
		int			first = *done;	/* first entry not yet logged */
		int			i;
		int64		wal0 = pgWalUsage.wal_bytes;

		for (i = first; i < n;)
		{
			int			len = ents[i].len;
			size_t		inserted;
			LsmStatus	st;

			if (slot->l0_runs >= (uint32) lsm_l0_stop_trigger)
			{
				stall = true;
				break;
			}
			if (LsmMemtableFull(index, slot, len) ||
				!LsmEnsureChunkRoom(slot, &slot->mt, len, true))
			{
				if (slot->mt.nentries == 0 && slot->nimm == 0)
				{
					/* other indexes' memtables hold the arena: wait for room */
					stall = arena_wait = true;
					break;
				}
				if (slot->mt.nentries == 0 || slot->nimm >= LSM_MAX_IMM)
				{
					stall = true;	/* memory comes back when a flush ends */
					break;
				}
				/* the memtable's entries must all be logged before it turns */
				if (i > first)
				{
					LsmLogAppendGroup(index, slot, ents, first, i, done);
					first = i;
				}
				LsmSwitchMemtable(index, slot);
				continue;		/* again, into the fresh memtable */
			}

			/* a fresh memtable's key filter (point lookups skip it) */
			if (slot->mt.nentries == 0 && LsmMemtableFiltered(index))
				LsmMemtableAddFilter(&slot->mt, LsmMemtableSizeKb(index), LSM_TID_SIZE);
			/*
			 * Into the memtable now, into the log below: not loaded until
			 * then.  ents[i] has room in the current chunk; the call takes it
			 * and those after it that fit there too (up to 64), searching the
			 * skiplist for them together.
			 */
			LsmLogMarkAhead(slot);
			st = lsm_memtable_insert_many(lsm_shared->arena, &slot->mt,
										  ents + i, n - i, &inserted);
			if (st != LSM_OK)
			{
				/* cannot happen after the reservation; rebuild from the log */
				LsmSlotRelease(index, slot);
				LsmReportStatus(index, st, InvalidBlockNumber, "inserting into the memtable");
			}
			for (size_t j = 0; j < inserted; j++)
				bytes += ents[i + j].len;
			i += (int) inserted;
		}
		if (i > first)
			LsmLogAppendGroup(index, slot, ents, first, i, done);
		slot->wal_log += pgWalUsage.wal_bytes - wal0;

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
			if (arena_wait)
			{
				Oid			dbid;

				if (TimestampDifferenceExceeds(stall_start, GetCurrentTimestamp(),
											   LSM_ARENA_WAIT_MS))
				{
					LsmSlotRelease(index, slot);
					LsmMemtableOutOfMemory(index);
				}
				/* ask the largest memtable elsewhere to be flushed; wait */
				dbid = LsmArenaRelieve(slot);
				LsmSlotRelease(index, slot);
				if (OidIsValid(dbid))
					LsmWakeWorkers(dbid);
				(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
								 10, PG_WAIT_EXTENSION);
				ResetLatch(MyLatch);
				CHECK_FOR_INTERRUPTS();
				continue;
			}
			LsmPendingSet(slot, slot->nimm > 0 ? LSM_WORK_FLUSH : LSM_WORK_COMPACT);
			l0_runs = slot->l0_runs;
			LsmSlotRelease(index, slot);
			LsmWakeWorkers(MyDatabaseId);
			serve = !LsmWorkersServe(index) ||
				TimestampDifferenceExceeds(stall_start, GetCurrentTimestamp(),
										   LSM_STALL_SELF_SERVE_MS);
			/* work ourselves if no worker does; else (or if the locks are
			 * busy) wait for a flush or compaction to end */
			if (!serve || !LsmSelfServe(index, l0_runs))
				(void) ConditionVariableTimedSleep(&slot->cv, 10,
												   LsmWaitEventNamed("LsmInsertStall",
																	 &wait_event_stall));
			CHECK_FOR_INTERRUPTS();
			continue;
		}
		ConditionVariableCancelSleep();

		/* the workers' state, asked once and only where it matters */
		debt = LsmInsertDebt(index, slot);
		served = (slot->nimm == 0 && debt == 0) || LsmWorkersServe(index);
		/* the index's write rate: how long this batch waits its turn */
		delay_us = (long) lsm_write_rate_batch(&slot->delay, bytes, debt, served,
											   GetCurrentTimestamp(), &delayed);
		if (delayed)
			slot->stalls_slowdown++;
		if (counted)
		{
			long		secs;
			int			usecs;

			TimestampDifference(stall_start, GetCurrentTimestamp(), &secs, &usecs);
			slot->stall_us += (uint64) secs * 1000000 + usecs;
			counted = false;
		}
		self_serve = slot->nimm > 0 && !served;
		l0 = slot->l0_runs;
		arena_short = LsmArenaShort();
		LsmSlotRelease(index, slot);
	}

	/* the arena nears full: the largest memtable anywhere goes (a hint) */
	if (arena_short)
	{
		Oid			dbid = LsmArenaRelieve(NULL);

		if (OidIsValid(dbid))
			LsmWakeWorkers(dbid);
	}

	if (delay_us > 0)
	{
		/* the index's workers are behind: go at the shared rate */
		pgstat_report_wait_start(LsmWaitEventNamed("LsmInsertDelay", &wait_event_delay));
		while (delay_us > 0)
		{
			long		us = Min(delay_us, 100000L);

			pg_usleep(us);
			delay_us -= us;
			CHECK_FOR_INTERRUPTS();
		}
		pgstat_report_wait_end();
	}
	if (self_serve)
		(void) LsmSelfServe(index, l0);
}

/* ------------------------------------------------------------------------
 * Per-backend buffers of entries not yet in their index (see the header)
 * ------------------------------------------------------------------------ */

/* Push a buffer when it holds this many bytes: about one log page. */
#define LSM_PENDING_BYTES	(BLCKSZ - 256)

typedef struct LsmPending
{
	struct LsmPending *next;
	Oid			indexoid;
	Oid			spcid;			/* the relfilenode the entries belong to */
	Oid			relnumber;
	StringInfoData data;		/* entries: uint16 length, then the bytes */
	int			nentries;
	int			level;			/* transaction nest level the entries are of */
} LsmPending;

static LsmPending *lsm_pending = NULL;
static MemoryContext lsm_pending_cxt = NULL;
static bool lsm_xact_callback_registered = false;

/* Push each entry at once: after our pre-commit push ... */
static bool lsm_unbuffered_xact = false;
/* ... and while an INSERT ... ON CONFLICT runs (LsmUnbufferedStatement) */
static int	lsm_unbuffered_stmts = 0;


/* Drop every buffer (transaction end). */
static void
LsmPendingDiscardAll(void)
{
	lsm_pending = NULL;
	if (lsm_pending_cxt != NULL)
		MemoryContextReset(lsm_pending_cxt);
}

static void
LsmPendingUnlink(LsmPending *p)
{
	for (LsmPending **pp = &lsm_pending; *pp != NULL; pp = &(*pp)->next)
		if (*pp == p)
		{
			*pp = p->next;
			break;
		}
	pfree(p->data.data);
	pfree(p);
}

/* Append p's entries to index; on ERROR p keeps those not appended. */
static void
LsmPendingPush(Relation index, LsmPending *p)
{
	LsmLogEntry *ents;
	volatile int done = 0;
	int			n = 0;
	int			off = 0;

	if (p->nentries == 0)
		return;
	ents = palloc(sizeof(LsmLogEntry) * p->nentries);
	while (off < p->data.len)
	{
		uint16		len;

		memcpy(&len, p->data.data + off, sizeof(uint16));
		ents[n].key = (const uint8 *) p->data.data + off + sizeof(uint16);
		ents[n].len = len;
		off += sizeof(uint16) + len;
		n++;
	}
	Assert(n == p->nentries);

	PG_TRY();
	{
		LsmInsertBatch(index, ents, n, &done);
	}
	PG_CATCH();
	{
		/* keep the entries not appended (a subtransaction may go on) */
		if (done > 0)
		{
			int			cut = (int) ((const char *) ents[done - 1].key - p->data.data) +
				ents[done - 1].len;

			memmove(p->data.data, p->data.data + cut, p->data.len - cut);
			p->data.len -= cut;
			p->nentries -= done;
		}
		PG_RE_THROW();
	}
	PG_END_TRY();
	p->data.len = 0;
	p->nentries = 0;
	pfree(ents);
}

/*
 * Do p's entries go into index as it is now?  Those of its relfilenode, and
 * those of an earlier relfilenode that another session replaced with a copy:
 * ALTER INDEX ... SET TABLESPACE locks the index alone, and the executor let
 * our lock on it go when the inserting statement ended (ExecCloseIndices),
 * so the copy can happen between our statements; it lacks what we still
 * buffer.  A relfilenode this transaction gave the index (TRUNCATE, REINDEX,
 * a rewrite) was built from the heap, which has our rows: entries of the one
 * before are stale (this backend pushes before every utility command, so
 * there are none in practice; LsmForgetPending drops them at a build).
 */
static bool
LsmPendingBelongs(Relation index, const LsmPending *p)
{
	if (p->indexoid != RelationGetRelid(index))
		return false;
	if (p->spcid == LsmRelSpcOid(index) && p->relnumber == LsmRelFileNumber(index))
		return true;
	return !LsmIndexNewInXact(index);
}

/*
 * Push this backend's entries for index.  Called before anything in this
 * backend reads the index (the reader holds its lock).
 */
void
LsmPushPending(Relation index)
{
	LsmPending *p = lsm_pending;

	while (p != NULL)
	{
		LsmPending *next = p->next;

		if (LsmPendingBelongs(index, p))
			LsmPendingPush(index, p);
		p = next;
	}
}

/*
 * Push every buffer whose index still takes it (LsmPendingBelongs).  The
 * index is locked again first (RowExclusiveLock, kept to transaction end):
 * the executor released the lock of the inserts when their statement ended,
 * and without one a worker's shrink (AccessExclusiveLock) could cut the
 * file's tail while this push takes a page there.  With drop, then forget
 * them all (commit: an index dropped, or rebuilt by this transaction, has
 * lost those rows or re-read them from the heap).
 */
void
LsmPushAllPending(bool drop)
{
	LsmPending *p = lsm_pending;

	while (p != NULL)
	{
		LsmPending *next = p->next;
		Relation	index = NULL;

		if (p->nentries > 0)
			index = try_relation_open(p->indexoid, RowExclusiveLock);
		if (index != NULL)
		{
			if (index->rd_rel->relkind == RELKIND_INDEX &&
				index->rd_indam != NULL && index->rd_indam->ambuild == lsmbuild &&
				LsmPendingBelongs(index, p))
				LsmPendingPush(index, p);
			relation_close(index, NoLock);
		}
		if (drop)
			LsmPendingUnlink(p);
		p = next;
	}
}

/*
 * An index is being built (CREATE INDEX, REINDEX, TRUNCATE): the build reads
 * the heap, so buffered entries of its relfilenode are stale.  A TRUNCATE of
 * a table created (or truncated) in the same transaction empties the index
 * in place, keeping the relfilenode: without this, their entries would point
 * at TIDs the new rows reuse.
 */
void
LsmForgetPending(Relation index)
{
	LsmPending *p = lsm_pending;

	while (p != NULL)
	{
		LsmPending *next = p->next;

		if (p->indexoid == RelationGetRelid(index) &&
			p->spcid == LsmRelSpcOid(index) &&
			p->relnumber == LsmRelFileNumber(index))
			LsmPendingUnlink(p);
		p = next;
	}
}

/*
 * A subtransaction aborts: drop the entries it added.  Its rows are dead, and
 * VACUUM may remove them before we commit and their TIDs may be reused: an
 * entry pushed later would then point at another row.  (Entries pushed while
 * the subtransaction ran are in the index like any dead row's, and VACUUM
 * removes them with the rows.)  lsminsert keeps every buffer's entries of
 * one level: of the buffer's level or of committed subtransactions below it.
 */
static void
LsmSubXactCallback(SubXactEvent event, SubTransactionId mySubid,
				   SubTransactionId parentSubid, void *arg)
{
	/* the nest level is still the ending subtransaction's */
	int			level = GetCurrentTransactionNestLevel();
	LsmPending *p = lsm_pending;

	while (p != NULL)
	{
		LsmPending *next = p->next;

		if (p->level >= level)
		{
			if (event == SUBXACT_EVENT_ABORT_SUB)
				LsmPendingUnlink(p);
			else if (event == SUBXACT_EVENT_COMMIT_SUB)
				p->level = level - 1;	/* its entries are the parent's now */
		}
		p = next;
	}
}

static void
LsmXactCallback(XactEvent event, void *arg)
{
	switch (event)
	{
		case XACT_EVENT_PRE_COMMIT:
		case XACT_EVENT_PARALLEL_PRE_COMMIT:
		case XACT_EVENT_PRE_PREPARE:
			LsmPushAllPending(true);
			/* callbacks after ours may still insert: unbuffered from now */
			lsm_unbuffered_xact = true;
			break;
		case XACT_EVENT_COMMIT:
		case XACT_EVENT_PARALLEL_COMMIT:
		case XACT_EVENT_PREPARE:
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PARALLEL_ABORT:
			LsmPendingDiscardAll();
			lsm_unbuffered_xact = false;
			lsm_unbuffered_stmts = 0;
			break;
	}
}

/* The buffer of index (current relfilenode), made if needed. */
static LsmPending *
LsmPendingFor(Relation index)
{
	Oid			relid = RelationGetRelid(index);
	LsmPending *p;

	for (p = lsm_pending; p != NULL; p = p->next)
		if (p->indexoid == relid && p->spcid == LsmRelSpcOid(index) &&
			p->relnumber == LsmRelFileNumber(index))
			return p;

	if (!lsm_xact_callback_registered)
	{
		RegisterXactCallback(LsmXactCallback, NULL);
		RegisterSubXactCallback(LsmSubXactCallback, NULL);
		lsm_xact_callback_registered = true;
	}
	if (lsm_pending_cxt == NULL)
		lsm_pending_cxt = AllocSetContextCreate(TopMemoryContext,
												"lsm_am pending inserts",
												ALLOCSET_DEFAULT_SIZES);
	p = MemoryContextAllocZero(lsm_pending_cxt, sizeof(LsmPending));
	p->indexoid = relid;
	p->spcid = LsmRelSpcOid(index);
	p->relnumber = LsmRelFileNumber(index);
	{
		MemoryContext old = MemoryContextSwitchTo(lsm_pending_cxt);

		initStringInfo(&p->data);
		MemoryContextSwitchTo(old);
	}
	p->next = lsm_pending;
	lsm_pending = p;
	return p;
}

/*
 * Append one encoded entry to the backend's buffer of the index; returns the
 * buffer.  A parent transaction's entries still buffered go in first.
 */
static LsmPending *
LsmPendingAppend(Relation index, const uint8 *entry, int len)
{
	LsmPending *p = LsmPendingFor(index);
	uint16		len16 = (uint16) len;
	int			level = GetCurrentTransactionNestLevel();

	if (p->level < level && p->nentries > 0)
		LsmPendingPush(index, p);	/* a parent's entries: in with them now */
	p->level = level;			/* (a higher one: that subtransaction committed) */
	appendBinaryStringInfo(&p->data, (const char *) &len16, sizeof(uint16));
	appendBinaryStringInfo(&p->data, (const char *) entry, len);
	p->nentries++;
	return p;
}

/*
 * Put one encoded entry into index now: through the backend's buffer of the
 * index (so the nest-level bookkeeping holds), pushed at once.  The entries
 * of a unique index are never left in the buffer: other backends' checks
 * must find them (lsmunique.c).
 */
void
LsmInsertEntryNow(Relation index, const uint8 *entry, int len)
{
	LsmPendingPush(index, LsmPendingAppend(index, entry, len));
}

/* Does this backend hold entries not yet in their index (or a buffer)? */
bool
LsmHasPending(void)
{
	return lsm_pending != NULL;
}

/*
 * An INSERT ... ON CONFLICT starts (begin) or ends: while one runs, every
 * entry is pushed at once (lsmhooks.c, LsmExecutorStart, has why).  A
 * statement ended by an ERROR does not come back: transaction end resets
 * the count.
 */
void
LsmUnbufferedStatement(bool begin)
{
	if (begin)
		lsm_unbuffered_stmts++;
	else if (lsm_unbuffered_stmts > 0)
		lsm_unbuffered_stmts--;
}

/* Does an INSERT ... ON CONFLICT run (LsmUnbufferedStatement)? */
bool
LsmInUnbufferedStatement(void)
{
	return lsm_unbuffered_stmts > 0;
}

/* aminsert */
bool
lsminsert(Relation index, Datum *values, bool *isnull,
		  ItemPointer ht_ctid, Relation heapRel,
		  IndexUniqueCheck checkUnique, bool indexUnchanged,
		  IndexInfo *indexInfo)
{
	static StringInfo buf = NULL;
	LsmRelCache *cache;
	LsmPending *p;

	LsmCheckPreloaded();
	cache = LsmGetRelCache(index);
	if (buf == NULL)
	{
		MemoryContext old = MemoryContextSwitchTo(TopMemoryContext);

		buf = makeStringInfo();
		MemoryContextSwitchTo(old);
	}
	/* encode aside: a key that is too large must leave the buffer intact */
	resetStringInfo(buf);
	LsmEncodeEntry(&cache->desc, values, isnull, ht_ctid, buf);

	/* a unique index: checked, and never buffered (lsmunique.c) */
	if (index->rd_index->indisunique)
		return LsmUniqueInsert(index, values, isnull, ht_ctid, heapRel,
							   checkUnique, (const uint8 *) buf->data, buf->len);

	p = LsmPendingAppend(index, (const uint8 *) buf->data, buf->len);
	if (p->data.len >= LSM_PENDING_BYTES || lsm_unbuffered_xact ||
		lsm_unbuffered_stmts > 0)
		LsmPendingPush(index, p);
	return false;
}
