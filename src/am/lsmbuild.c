/*
 * lsmbuild.c — ambuild, ambuildempty, and the parallel CREATE INDEX.
 *
 * CREATE INDEX encodes every heap tuple's key, sorts the encoded entries with
 * tuplesort (as bytea: bytea's order is memcmp with shorter-first, exactly
 * the order of encoded keys), and streams them into one sorted run at the
 * level its size calls for, cut into pieces for a leveled index of 256K
 * entries or more that lands below level 1 (LsmBuildPieces).  Run pages are
 * WAL-logged as full page images in batches, the metapage last; no per-row
 * WAL.  Progress: pg_stat_progress_create_index shows the phases "scanning
 * table", "sorting" and "writing run" with tuple counts.
 * CREATE UNIQUE INDEX finds two live rows with one key while writing the
 * run, where the sorted entries put them side by side (lsmunique.c reports).
 *
 * Parallel build (as nbtsort.c does it): the leader starts workers in a
 * parallel context of its own; the leader and each worker scan a share of
 * the heap (one parallel table scan) into a partial sort of a shared
 * tuplesort, and the leader merges the sorted partials into the one run.
 * The entries and their order are those of a serial build (every entry ends
 * in its unique TID, so the order is total), so the run is the same.  The
 * number of workers: PostgreSQL 17 and later ask the planner for lsm as for
 * btree (amcanbuildparallel); on 15 and 16 lsmbuild asks it the same way
 * (plan_create_index_workers: max_parallel_maintenance_workers, the table's
 * parallel_workers, the heap's size, 32 MB of maintenance_work_mem for each
 * participant).  No worker started: the build is serial.
 */
#include "postgres.h"

#include "access/parallel.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "access/xloginsert.h"
#include "catalog/index.h"
#include "catalog/pg_type.h"
#include "commands/progress.h"
#include "executor/instrument.h"
#include "portability/instr_time.h"
#include "miscadmin.h"
#include "optimizer/optimizer.h"
#include "optimizer/planner.h"
#include "pgstat.h"
#include "storage/bufmgr.h"
#include "storage/condition_variable.h"
#include "storage/smgr.h"
#include "storage/spin.h"
#include "tcop/tcopprot.h"
#include "utils/builtins.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"
#include "utils/tuplesort.h"
#include "utils/typcache.h"
#include "utils/wait_event.h"

#include "am/lsm_am.h"
#include "lsmfault.h"

/* kB of sort memory for the leader's merge of a parallel build's shares */
#define LSM_BUILD_MERGE_MEM	8192

/* build sub-phases (1 is PROGRESS_CREATEIDX_SUBPHASE_INITIALIZE) */
#define LSM_PHASE_SCAN		2
#define LSM_PHASE_SORT		3
#define LSM_PHASE_WRITE		4

/* keys of the parallel build's shared memory table of contents */
#define LSM_PKEY_SHARED			UINT64CONST(0xB150000000000001)
#define LSM_PKEY_SORT			UINT64CONST(0xB150000000000002)
#define LSM_PKEY_QUERY_TEXT		UINT64CONST(0xB150000000000003)
#define LSM_PKEY_WAL_USAGE		UINT64CONST(0xB150000000000004)
#define LSM_PKEY_BUFFER_USAGE	UINT64CONST(0xB150000000000005)

/*
 * What the participants of a parallel build share.  The parallel table scan
 * follows it, at BUFFERALIGN(sizeof(LsmBuildShared)).
 */
typedef struct LsmBuildShared
{
	/* set by the leader before the workers start */
	Oid			heaprelid;
	Oid			indexrelid;
	bool		isconcurrent;
	bool		unique;			/* the leader's IndexInfo's, not the catalog's: */
	bool		nulls_distinct;	/* VACUUM FULL and CLUSTER build without checks */
	int			nparticipants;	/* workers requested + the leader */
	uint64		queryid;
	ConditionVariable donecv;	/* a participant finished its partial sort */

	/* under mutex */
	slock_t		mutex;
	int			ndone;
	double		reltuples;
	double		indtuples;
	bool		brokenhotchain;
} LsmBuildShared;

#define LsmBuildSharedScan(shared) \
	((ParallelTableScanDesc) ((char *) (shared) + BUFFERALIGN(sizeof(LsmBuildShared))))

/* The leader's handle on a parallel build under way. */
typedef struct LsmBuildLeader
{
	ParallelContext *pcxt;
	int			nparticipants;	/* workers launched + the leader */
	LsmBuildShared *shared;
	Sharedsort *sharedsort;
	Snapshot	snapshot;
	WalUsage   *walusage;
	BufferUsage *bufferusage;
} LsmBuildLeader;

typedef struct LsmBuildState
{
	LsmKeyDesc	desc;
	Tuplesortstate *sort;
	double		indtuples;
	MemoryContext tmpctx;
	StringInfoData buf;
	bool		unique;			/* each entry carries one more byte: checked? */
	bool		nulls_distinct;
} LsmBuildState;

PGDLLEXPORT void LsmParallelBuildMain(dsm_segment *seg, shm_toc *toc);
static void LsmEndParallel(LsmBuildLeader *leader);

static void
LsmBuildCallback(Relation index, ItemPointer tid, Datum *values,
				 bool *isnull, bool tupleIsAlive, void *state)
{
	LsmBuildState *bs = (LsmBuildState *) state;
	MemoryContext old = MemoryContextSwitchTo(bs->tmpctx);

	/*
	 * The entry as a bytea, encoded after room for a one-byte varlena header
	 * (a short varlena, as a bytea of up to 126 bytes is on disk): an int8
	 * entry and its header take 16 bytes, one sort memory chunk of 16
	 * instead of 32, so the sort holds and touches a third less memory.  A
	 * longer entry moves up by 3 bytes for a four-byte header.  The sort's
	 * comparator and its readers take either (VARDATA_ANY).
	 */
	resetStringInfo(&bs->buf);
	bs->buf.len = VARHDRSZ_SHORT;
	LsmEncodeEntry(&bs->desc, values, isnull, tid, &bs->buf);
	if (bs->unique)
	{
		/*
		 * A trailing byte: 1 if the entry takes part in the duplicate check,
		 * i.e. its row is live and its key has no NULL that makes it
		 * distinct.  It changes no order: no entry is a prefix of another.
		 */
		bool		checked = tupleIsAlive;

		for (int i = 0; i < bs->desc.ncols && bs->nulls_distinct; i++)
			if (isnull[i])
				checked = false;
		appendStringInfoChar(&bs->buf, checked ? 1 : 0);
	}
	if (bs->buf.len <= VARATT_SHORT_MAX)
		SET_VARSIZE_SHORT(bs->buf.data, bs->buf.len);
	else
	{
		enlargeStringInfo(&bs->buf, VARHDRSZ - VARHDRSZ_SHORT);
		memmove(bs->buf.data + VARHDRSZ, bs->buf.data + VARHDRSZ_SHORT,
				bs->buf.len - VARHDRSZ_SHORT);
		bs->buf.len += VARHDRSZ - VARHDRSZ_SHORT;
		SET_VARSIZE(bs->buf.data, bs->buf.len);
	}
	tuplesort_putdatum(bs->sort, PointerGetDatum(bs->buf.data), false);	/* copies */
	MemoryContextSwitchTo(old);
	MemoryContextReset(bs->tmpctx);
	bs->indtuples++;
}

/*
 * Set up bs to encode entries of index into a sort of sortmem kB: a serial
 * sort (coordinate NULL), a participant's partial sort, or the leader's merge
 * of the partials.
 */
static void
LsmBuildStateInit(LsmBuildState *bs, Relation index, bool unique,
				  bool nulls_distinct, int sortmem, SortCoordinate coordinate)
{
	TypeCacheEntry *tc = lookup_type_cache(BYTEAOID, TYPECACHE_LT_OPR);

	memset(bs, 0, sizeof(*bs));
	LsmKeyDescInit(index, &bs->desc);
	bs->unique = unique;
	bs->nulls_distinct = nulls_distinct;
	bs->sort = tuplesort_begin_datum(BYTEAOID, tc->lt_opr, InvalidOid, false,
									 sortmem, coordinate, TUPLESORT_NONE);
	bs->tmpctx = AllocSetContextCreate(CurrentMemoryContext, "lsm build",
									   ALLOCSET_DEFAULT_SIZES);
	initStringInfo(&bs->buf);
}

/*
 * How many workers to ask for: on 17 and later index_build asked the planner
 * (amcanbuildparallel); on 15 and 16 it asks only for btree, so ask here.
 */
static int
LsmBuildWorkersWanted(Relation heap, Relation index, IndexInfo *indexInfo)
{
#if PG_VERSION_NUM >= 170000
	return indexInfo->ii_ParallelWorkers;
#else
	if (!IsNormalProcessingMode() || indexInfo->ii_ParallelWorkers > 0)
		return indexInfo->ii_ParallelWorkers;
	return plan_create_index_workers(RelationGetRelid(heap), RelationGetRelid(index));
#endif
}

/*
 * A participant's share of a parallel build: scan its part of the heap into
 * a partial sort, sort it, and say so in the shared state.
 */
static void
LsmParallelScanAndSort(Relation heap, Relation index, LsmBuildShared *shared,
					   Sharedsort *sharedsort, int sortmem, bool progress)
{
	SortCoordinate coordinate = palloc0(sizeof(SortCoordinateData));
	LsmBuildState bs;
	IndexInfo  *indexInfo = BuildIndexInfo(index);
	TableScanDesc scan;
	double		reltuples;
	instr_time	t0,
				t1,
				t2;

	coordinate->isWorker = true;
	coordinate->nParticipants = -1;
	coordinate->sharedsort = sharedsort;
	indexInfo->ii_Concurrent = shared->isconcurrent;
	LsmBuildStateInit(&bs, index, shared->unique, shared->nulls_distinct,
					  sortmem, coordinate);

	INSTR_TIME_SET_CURRENT(t0);
	scan = table_beginscan_parallel(heap, LsmBuildSharedScan(shared));
	reltuples = table_index_build_scan(heap, index, indexInfo, true, progress,
									   LsmBuildCallback, &bs, scan);
	if (IsParallelWorker())
		LSM_FAULT(LSM_FAULT_BUILD_WORKER);
	INSTR_TIME_SET_CURRENT(t1);
	tuplesort_performsort(bs.sort);
	INSTR_TIME_SET_CURRENT(t2);
	INSTR_TIME_SUBTRACT(t2, t1);
	INSTR_TIME_SUBTRACT(t1, t0);
	ereport(DEBUG2,
			(errmsg_internal("lsm build of \"%s\", %s: %.0f entries scanned in %.0f ms, sorted in %.0f ms",
							 RelationGetRelationName(index),
							 IsParallelWorker() ? "a worker" : "the leader",
							 bs.indtuples, INSTR_TIME_GET_MILLISEC(t1),
							 INSTR_TIME_GET_MILLISEC(t2))));

	SpinLockAcquire(&shared->mutex);
	shared->ndone++;
	shared->reltuples += reltuples;
	shared->indtuples += bs.indtuples;
	if (indexInfo->ii_BrokenHotChain)
		shared->brokenhotchain = true;
	SpinLockRelease(&shared->mutex);
	ConditionVariableSignal(&shared->donecv);

	/* the sorted partial stays in the shared file set for the leader */
	tuplesort_end(bs.sort);
	MemoryContextDelete(bs.tmpctx);
}

/*
 * Start a parallel build of up to request workers.  NULL if none could be
 * had (no dynamic shared memory, no worker slot): the build is serial.
 * Else the workers and the leader have scanned and sorted their shares
 * when this returns, or are at it.
 */
static LsmBuildLeader *
LsmBeginParallel(Relation heap, Relation index, IndexInfo *indexInfo, int request)
{
	ParallelContext *pcxt;
	LsmBuildLeader *leader;
	LsmBuildShared *shared;
	Sharedsort *sharedsort;
	Snapshot	snapshot;
	Size		estshared;
	Size		estsort;
	int			nparticipants = request + 1;	/* the leader takes part */
	int			querylen = 0;
	char	   *sharedquery;

	EnterParallelMode();
	pcxt = CreateParallelContext("lsm_am", "LsmParallelBuildMain", request);

	/*
	 * A plain build sees every tuple (SnapshotAny) and judges each itself, to
	 * index the recently dead; a concurrent one indexes what its MVCC
	 * snapshot sees.
	 */
	snapshot = indexInfo->ii_Concurrent ?
		RegisterSnapshot(GetTransactionSnapshot()) : SnapshotAny;

	estshared = add_size(BUFFERALIGN(sizeof(LsmBuildShared)),
						 table_parallelscan_estimate(heap, snapshot));
	shm_toc_estimate_chunk(&pcxt->estimator, estshared);
	estsort = tuplesort_estimate_shared(nparticipants);
	shm_toc_estimate_chunk(&pcxt->estimator, estsort);
	shm_toc_estimate_chunk(&pcxt->estimator, mul_size(sizeof(WalUsage), pcxt->nworkers));
	shm_toc_estimate_chunk(&pcxt->estimator, mul_size(sizeof(BufferUsage), pcxt->nworkers));
	shm_toc_estimate_keys(&pcxt->estimator, 4);
	if (debug_query_string)
	{
		querylen = strlen(debug_query_string);
		shm_toc_estimate_chunk(&pcxt->estimator, querylen + 1);
		shm_toc_estimate_keys(&pcxt->estimator, 1);
	}

	InitializeParallelDSM(pcxt);
	if (pcxt->seg == NULL)
	{
		/* no dynamic shared memory to be had: serial */
		if (IsMVCCSnapshot(snapshot))
			UnregisterSnapshot(snapshot);
		DestroyParallelContext(pcxt);
		ExitParallelMode();
		return NULL;
	}

	shared = shm_toc_allocate(pcxt->toc, estshared);
	memset(shared, 0, sizeof(LsmBuildShared));
	shared->heaprelid = RelationGetRelid(heap);
	shared->indexrelid = RelationGetRelid(index);
	shared->isconcurrent = indexInfo->ii_Concurrent;
	shared->unique = indexInfo->ii_Unique;
	shared->nulls_distinct = !indexInfo->ii_NullsNotDistinct;
	shared->nparticipants = nparticipants;
	shared->queryid = (uint64) pgstat_get_my_query_id();
	ConditionVariableInit(&shared->donecv);
	SpinLockInit(&shared->mutex);
	table_parallelscan_initialize(heap, LsmBuildSharedScan(shared), snapshot);
	shm_toc_insert(pcxt->toc, LSM_PKEY_SHARED, shared);

	sharedsort = shm_toc_allocate(pcxt->toc, estsort);
	tuplesort_initialize_shared(sharedsort, nparticipants, pcxt->seg);
	shm_toc_insert(pcxt->toc, LSM_PKEY_SORT, sharedsort);

	if (debug_query_string)
	{
		sharedquery = shm_toc_allocate(pcxt->toc, querylen + 1);
		memcpy(sharedquery, debug_query_string, querylen + 1);
		shm_toc_insert(pcxt->toc, LSM_PKEY_QUERY_TEXT, sharedquery);
	}

	leader = palloc0(sizeof(LsmBuildLeader));
	leader->pcxt = pcxt;
	leader->shared = shared;
	leader->sharedsort = sharedsort;
	leader->snapshot = snapshot;
	leader->walusage = shm_toc_allocate(pcxt->toc,
										mul_size(sizeof(WalUsage), pcxt->nworkers));
	shm_toc_insert(pcxt->toc, LSM_PKEY_WAL_USAGE, leader->walusage);
	leader->bufferusage = shm_toc_allocate(pcxt->toc,
										   mul_size(sizeof(BufferUsage), pcxt->nworkers));
	shm_toc_insert(pcxt->toc, LSM_PKEY_BUFFER_USAGE, leader->bufferusage);

	LaunchParallelWorkers(pcxt);
	ereport(DEBUG1,
			(errmsg_internal("lsm build of \"%s\": %d parallel workers launched of %d requested",
							 RelationGetRelationName(index),
							 pcxt->nworkers_launched, request)));
	if (pcxt->nworkers_launched == 0)
	{
		LsmEndParallel(leader);
		return NULL;
	}
	leader->nparticipants = pcxt->nworkers_launched + 1;
	/*
	 * The leader's share; its sort memory is that of a worker, a bigger share
	 * of maintenance_work_mem when fewer workers came than were asked for.
	 */
	LsmParallelScanAndSort(heap, index, shared, sharedsort,
						   maintenance_work_mem / leader->nparticipants, true);

	/* a worker that could not start must not keep the leader waiting */
	WaitForParallelWorkersToAttach(pcxt);
	return leader;
}

/* Wait for the workers to finish, count their WAL and buffers, end. */
static void
LsmEndParallel(LsmBuildLeader *leader)
{
	WaitForParallelWorkersToFinish(leader->pcxt);
	for (int i = 0; i < leader->pcxt->nworkers_launched; i++)
		InstrAccumParallelQuery(&leader->bufferusage[i], &leader->walusage[i]);
	if (IsMVCCSnapshot(leader->snapshot))
		UnregisterSnapshot(leader->snapshot);
	DestroyParallelContext(leader->pcxt);
	ExitParallelMode();
}

/*
 * The leader waits until every participant has sorted its share, and takes
 * the totals.  Returns the heap tuples scanned.
 */
static double
LsmParallelWaitScans(LsmBuildLeader *leader, double *indtuples, bool *brokenhotchain)
{
	LsmBuildShared *shared = leader->shared;
	double		reltuples;

	for (;;)
	{
		SpinLockAcquire(&shared->mutex);
		if (shared->ndone == leader->nparticipants)
		{
			reltuples = shared->reltuples;
			*indtuples = shared->indtuples;
			if (shared->brokenhotchain)
				*brokenhotchain = true;
			SpinLockRelease(&shared->mutex);
			break;
		}
		SpinLockRelease(&shared->mutex);
		/* checks for interrupts: a worker's ERROR is raised here */
		ConditionVariableSleep(&shared->donecv, WAIT_EVENT_PARALLEL_CREATE_INDEX_SCAN);
	}
	ConditionVariableCancelSleep();
	return reltuples;
}

/* A parallel worker of CREATE INDEX (CreateParallelContext finds it by name). */
void
LsmParallelBuildMain(dsm_segment *seg, shm_toc *toc)
{
	LsmBuildShared *shared = shm_toc_lookup(toc, LSM_PKEY_SHARED, false);
	Sharedsort *sharedsort = shm_toc_lookup(toc, LSM_PKEY_SORT, false);
	LOCKMODE	heaplock;
	LOCKMODE	indexlock;
	Relation	heap;
	Relation	index;
	WalUsage   *walusage;
	BufferUsage *bufferusage;

	debug_query_string = shm_toc_lookup(toc, LSM_PKEY_QUERY_TEXT, true);
	pgstat_report_activity(STATE_RUNNING, debug_query_string);
	pgstat_report_query_id(shared->queryid, false);

	/* the locks index.c's caller holds already: these are granted at once */
	heaplock = shared->isconcurrent ? ShareUpdateExclusiveLock : ShareLock;
	indexlock = shared->isconcurrent ? RowExclusiveLock : AccessExclusiveLock;
	heap = table_open(shared->heaprelid, heaplock);
	index = index_open(shared->indexrelid, indexlock);
	tuplesort_attach_shared(sharedsort, seg);

	InstrStartParallelQuery();
	LsmParallelScanAndSort(heap, index, shared, sharedsort,
						   maintenance_work_mem / shared->nparticipants, false);
	bufferusage = shm_toc_lookup(toc, LSM_PKEY_BUFFER_USAGE, false);
	walusage = shm_toc_lookup(toc, LSM_PKEY_WAL_USAGE, false);
	InstrEndParallelQuery(&bufferusage[ParallelWorkerNumber],
						  &walusage[ParallelWorkerNumber]);

	index_close(index, indexlock);
	table_close(heap, heaplock);
}

/* Reject what lsm cannot index before any work is done. */
static void
LsmBuildChecks(Relation heap, Relation index)
{
	LsmCheckPreloaded();
	if (index->rd_rel->relpersistence == RELPERSISTENCE_TEMP)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("lsm indexes are not supported on temporary tables"),
				 errhint("Use a btree index on temporary tables.")));
	if (RelationGetNumberOfBlocks(index) != 0)
		elog(ERROR, "index \"%s\" already contains data",
			 RelationGetRelationName(index));
}

IndexBuildResult *
lsmbuild(Relation heap, Relation index, IndexInfo *indexInfo)
{
	IndexBuildResult *result;
	LsmBuildState bs;
	LsmBuildLeader *leader = NULL;
	SortCoordinate coordinate = NULL;
	LsmMetaPageData *m;
	Buffer		metabuf;
	Page		metapage;
	LsmRunRef  *pieces = NULL;
	uint32		npieces = 0;
	uint32		total_pages = 0;
	double		reltuples;
	BlockNumber nblocks;
	XLogRecPtr	lsn;
	int			nworkers;
	instr_time	t0,
				t1,
				t2;

	LsmBuildChecks(heap, index);
	LsmForgetPending(index);	/* the build reads the heap */

	/* metapage first, so block 0 is the metapage */
	{
		LsmKeyDesc	desc;

		LsmKeyDescInit(index, &desc);
		metabuf = LsmExtendBuffer(index);
		Assert(BufferGetBlockNumber(metabuf) == LSM_METAPAGE_BLKNO);
		metapage = BufferGetPage(metabuf);
		START_CRIT_SECTION();
		LsmInitMetaPage(metapage, desc.fingerprint);
		MarkBufferDirty(metabuf);
		/* logged whole now: the reservation records below are deltas on it */
		if (RelationNeedsWAL(index))
			log_newpage_buffer(metabuf, true);
		END_CRIT_SECTION();
		LockBuffer(metabuf, BUFFER_LOCK_UNLOCK);
	}

	/*
	 * Scan and sort: the workers and the leader each sort a share into the
	 * shared sort (the leader's share done when LsmBeginParallel returns), or
	 * the leader alone sorts it all.
	 */
	pgstat_progress_update_param(PROGRESS_CREATEIDX_SUBPHASE, LSM_PHASE_SCAN);
	INSTR_TIME_SET_CURRENT(t0);
	nworkers = LsmBuildWorkersWanted(heap, index, indexInfo);
	if (nworkers > 0)
		leader = LsmBeginParallel(heap, index, indexInfo, nworkers);
	if (leader != NULL)
	{
		coordinate = palloc0(sizeof(SortCoordinateData));
		coordinate->isWorker = false;
		coordinate->nParticipants = leader->nparticipants;
		coordinate->sharedsort = leader->sharedsort;
	}
	/*
	 * The leader's merge of the sorted shares needs little memory: given
	 * maintenance_work_mem, tuplesort splits it into one read buffer per
	 * share and fills each whole before the first entry comes out (at 10M
	 * entries and 1GB, 0.9 s of copying the shares into memory, then
	 * reading them back); 8 MB streams them.
	 */
	LsmBuildStateInit(&bs, index, indexInfo->ii_Unique, !indexInfo->ii_NullsNotDistinct,
					  leader ? Min(maintenance_work_mem, LSM_BUILD_MERGE_MEM) :
					  maintenance_work_mem, coordinate);
	if (leader == NULL)
		reltuples = table_index_build_scan(heap, index, indexInfo, true, true,
										   LsmBuildCallback, &bs, NULL);
	else
		reltuples = LsmParallelWaitScans(leader, &bs.indtuples,
										 &indexInfo->ii_BrokenHotChain);

	pgstat_progress_update_param(PROGRESS_CREATEIDX_SUBPHASE, LSM_PHASE_SORT);
	tuplesort_performsort(bs.sort);

	INSTR_TIME_SET_CURRENT(t1);
	pgstat_progress_update_param(PROGRESS_CREATEIDX_SUBPHASE, LSM_PHASE_WRITE);
	pgstat_progress_update_param(PROGRESS_CREATEIDX_TUPLES_TOTAL, (int64) bs.indtuples);
	if (bs.indtuples > 0)
	{
		LsmRunWriter w;
		Datum		d;
		bool		isnull;
		int64		done = 0;
		uint32		want = LsmBuildPieces(index, bs.indtuples);
		/* entries a piece: the last takes what is left */
		int64		per = ((int64) bs.indtuples + want - 1) / want;
		int64		next_cut = want > 1 ? per : -1;	/* -1: no more cuts */
		uint8	   *lastkey = bs.unique ? palloc(LSM_MAX_KEY_SIZE) : NULL;
		int			lastlen = -1;	/* key of the last checked entry */

		/*
		 * The run goes after the metapage of the new index, past shared
		 * buffers (LsmRunWriterBeginDirect), and is reserved when it is
		 * written.  The writer's core objects belong to a memory context of this
		 * statement: an ERROR (a cancel, say) frees them with it.
		 */
		pieces = palloc0(sizeof(LsmRunRef) * want);
		LsmRunWriterBeginDirect(&w, index, (uint64) per, true);
		while (LsmTuplesortGetDatum(bs.sort, &d, &isnull))
		{
			bytea	   *b = DatumGetByteaPP(d);
			uint8	   *ent = (uint8 *) VARDATA_ANY(b);
			int			len = VARSIZE_ANY_EXHDR(b);

			/*
			 * Every entry is unique (its TID), so pieces never share one.  At
			 * the first cut the pages written so far tell the run's size: one
			 * that lands on level 1 stays whole, since a level-0 merge takes
			 * every level-1 piece its keys overlap (with random keys, all).
			 * The pages depend only on the sorted entries, so a parallel
			 * build decides as a serial one does.
			 */
			if (done == next_cut)
			{
				if (npieces == 0 && (uint64) w.hiwater * want <= LsmLevelBasePages(index))
					want = 1;
				else
					LsmRunWriterCutDirect(&w, &pieces[npieces++], (uint64) per);
				next_cut = npieces + 1 < want ? next_cut + per : -1;
			}

			if (bs.unique)
			{
				/* sorted: equal keys are adjacent, differing in the TID */
				bool		checked = ent[--len] != 0;
				int			keylen = LsmEntryKeyLength(&bs.desc, ent, len);

				if (checked)
				{
					if (keylen == lastlen && memcmp(ent, lastkey, keylen) == 0)
					{
						ItemPointerData tid;

						LsmEntryGetTid(ent, len, &tid);
						LsmUniqueBuildDuplicate(heap, index, indexInfo, &tid);
					}
					memcpy(lastkey, ent, keylen);
					lastlen = keylen;
				}
			}
			LsmRunWriterAdd(&w, ent, len);
			if (LSM_TUPLESORT_DATUM_COPIED)
				pfree(DatumGetPointer(d));
			if (++done % 10000 == 0)
			{
				pgstat_progress_update_param(PROGRESS_CREATEIDX_TUPLES_DONE, done);
				CHECK_FOR_INTERRUPTS();
			}
		}
		LsmRunWriterFinish(&w, &pieces[npieces++], 1);
		for (uint32 i = 0; i < npieces; i++)
			total_pages += pieces[i].npages;
		for (uint32 i = 0; i < npieces; i++)
			pieces[i].level = LsmBuildLevel(index, total_pages);
		pgstat_progress_update_param(PROGRESS_CREATEIDX_TUPLES_DONE, done);
	}
	tuplesort_end(bs.sort);
	/* the workers' sorted partials live until the parallel context ends */
	if (leader != NULL)
		LsmEndParallel(leader);

	INSTR_TIME_SET_CURRENT(t2);
	INSTR_TIME_SUBTRACT(t2, t1);
	INSTR_TIME_SUBTRACT(t1, t0);
	/* where a build's time goes: the parallel part, then the leader's alone */
	ereport(DEBUG1,
			(errmsg_internal("lsm build of \"%s\": %.0f entries scanned and sorted in %.0f ms (%d participants), merged and written in %.0f ms",
							 RelationGetRelationName(index), bs.indtuples,
							 INSTR_TIME_GET_MILLISEC(t1),
							 leader ? leader->nparticipants : 1,
							 INSTR_TIME_GET_MILLISEC(t2))));

	/* publish the run (its pieces, laid one after the other) */
	LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
	{
		GenericXLogState *state = GenericXLogStart(index);

		m = LsmPageGetMeta(GenericXLogRegisterBuffer(state, metabuf, 0));
		if (npieces > 0)
		{
			memcpy(m->runs, pieces, sizeof(LsmRunRef) * npieces);
			m->nruns = npieces;
			m->pages_compacted += total_pages;
			/* the reservation's run id was the first piece's */
			m->next_run_id = Max(m->next_run_id, pieces[npieces - 1].run_id + 1);
			LsmReserveFinish(m, LSM_RESV_COMPACT, total_pages);
		}
		GenericXLogFinish(state);
		nblocks = LsmPageGetMeta(BufferGetPage(metabuf))->nblocks;
		lsn = BufferGetLSNAtomic(metabuf);
	}
	UnlockReleaseBuffer(metabuf);
	/* the reservation grew by halves: cut what the run did not use */
	(void) LsmTruncateTo(index, nblocks, lsn, false);
	/* the pieces' headers and fences into the shared metadata cache */
	if (npieces > 0 && LsmMetaCacheEnabled())
	{
		LsmMetaPageData *built = palloc0(sizeof(LsmMetaPageData));

		memcpy(built->runs, pieces, sizeof(LsmRunRef) * npieces);
		built->nruns = npieces;
		LsmRunCacheWarm(index, built, pieces, npieces);
		pfree(built);
	}

	result = palloc(sizeof(IndexBuildResult));
	result->heap_tuples = reltuples;
	result->index_tuples = bs.indtuples;
	return result;
}

/* Unlogged indexes: write the metapage of the init fork and WAL-log it. */
void
lsmbuildempty(Relation index)
{
	Page		metapage;
	LsmKeyDesc	desc;

	LsmKeyDescInit(index, &desc);
	metapage = (Page) LsmPallocIOPages(1);
	LsmInitMetaPage(metapage, desc.fingerprint);
	LsmWriteInitForkPage(index, LSM_METAPAGE_BLKNO, metapage);
}

char *
lsmbuildphasename(int64 phasenum)
{
	switch (phasenum)
	{
		case PROGRESS_CREATEIDX_SUBPHASE_INITIALIZE:
			return "initializing";
		case LSM_PHASE_SCAN:
			return "scanning table";
		case LSM_PHASE_SORT:
			return "sorting";
		case LSM_PHASE_WRITE:
			return "writing run";
		default:
			return NULL;
	}
}
