/*
 * lsmbuild.c — ambuild, ambuildempty.
 *
 * CREATE INDEX encodes every heap tuple's key, sorts the encoded entries with
 * tuplesort (as bytea: bytea's order is memcmp with shorter-first, exactly
 * the order of encoded keys), and streams them into one sorted run at level
 * 1.  Run pages are WAL-logged as full page images in batches, the metapage
 * last; no per-row WAL.  Progress: pg_stat_progress_create_index shows the
 * phases "scanning table", "sorting" and "writing run" with tuple counts.
 * CREATE UNIQUE INDEX finds two live rows with one key while writing the
 * run, where the sorted entries put them side by side (lsmunique.c reports).
 */
#include "postgres.h"

#include "access/tableam.h"
#include "access/xloginsert.h"
#include "catalog/index.h"
#include "catalog/pg_type.h"
#include "commands/progress.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/bufmgr.h"
#include "storage/smgr.h"
#include "utils/builtins.h"
#include "utils/memutils.h"
#include "utils/tuplesort.h"
#include "utils/typcache.h"

#include "am/lsm_am.h"

/* build sub-phases (1 is PROGRESS_CREATEIDX_SUBPHASE_INITIALIZE) */
#define LSM_PHASE_SCAN		2
#define LSM_PHASE_SORT		3
#define LSM_PHASE_WRITE		4

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

static void
LsmBuildCallback(Relation index, ItemPointer tid, Datum *values,
				 bool *isnull, bool tupleIsAlive, void *state)
{
	LsmBuildState *bs = (LsmBuildState *) state;
	MemoryContext old = MemoryContextSwitchTo(bs->tmpctx);
	bytea	   *b;

	resetStringInfo(&bs->buf);
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
	b = (bytea *) palloc(VARHDRSZ + bs->buf.len);
	SET_VARSIZE(b, VARHDRSZ + bs->buf.len);
	memcpy(VARDATA(b), bs->buf.data, bs->buf.len);
	tuplesort_putdatum(bs->sort, PointerGetDatum(b), false);
	MemoryContextSwitchTo(old);
	MemoryContextReset(bs->tmpctx);
	bs->indtuples++;
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
	LsmMetaPageData *m;
	Buffer		metabuf;
	Page		metapage;
	LsmRunRef	ref;
	bool		have_run = false;
	double		reltuples;
	BlockNumber nblocks;
	XLogRecPtr	lsn;
	TypeCacheEntry *tc;

	LsmBuildChecks(heap, index);
	LsmForgetPending(index);	/* the build reads the heap */
	memset(&bs, 0, sizeof(bs));
	LsmKeyDescInit(index, &bs.desc);
	bs.unique = indexInfo->ii_Unique;
	bs.nulls_distinct = !indexInfo->ii_NullsNotDistinct;

	/* metapage first, so block 0 is the metapage */
	metabuf = LsmExtendBuffer(index);
	Assert(BufferGetBlockNumber(metabuf) == LSM_METAPAGE_BLKNO);
	metapage = BufferGetPage(metabuf);
	START_CRIT_SECTION();
	LsmInitMetaPage(metapage, bs.desc.fingerprint);
	MarkBufferDirty(metabuf);
	/* logged whole now: the reservation records below are deltas on it */
	if (RelationNeedsWAL(index))
		log_newpage_buffer(metabuf, true);
	END_CRIT_SECTION();
	LockBuffer(metabuf, BUFFER_LOCK_UNLOCK);

	/* scan and sort */
	tc = lookup_type_cache(BYTEAOID, TYPECACHE_LT_OPR);
	bs.sort = tuplesort_begin_datum(BYTEAOID, tc->lt_opr, InvalidOid, false,
									maintenance_work_mem, NULL, TUPLESORT_NONE);
	bs.tmpctx = AllocSetContextCreate(CurrentMemoryContext, "lsm build",
									  ALLOCSET_DEFAULT_SIZES);
	initStringInfo(&bs.buf);
	pgstat_progress_update_param(PROGRESS_CREATEIDX_SUBPHASE, LSM_PHASE_SCAN);
	reltuples = table_index_build_scan(heap, index, indexInfo, true, true,
									   LsmBuildCallback, &bs, NULL);

	pgstat_progress_update_param(PROGRESS_CREATEIDX_SUBPHASE, LSM_PHASE_SORT);
	tuplesort_performsort(bs.sort);

	pgstat_progress_update_param(PROGRESS_CREATEIDX_SUBPHASE, LSM_PHASE_WRITE);
	pgstat_progress_update_param(PROGRESS_CREATEIDX_TUPLES_TOTAL, (int64) bs.indtuples);
	if (bs.indtuples > 0)
	{
		LsmRunWriter w;
		Datum		d;
		bool		isnull;
		int64		done = 0;
		uint8	   *lastkey = bs.unique ? palloc(LSM_MAX_KEY_SIZE) : NULL;
		int			lastlen = -1;	/* key of the last checked entry */

		/*
		 * The reservation is at the end of a new index: it grows in place.
		 * The writer's core objects belong to a memory context of this
		 * statement: an ERROR (a cancel, say) frees them with it.
		 */
		LsmRunWriterBegin(&w, index, LSM_RESV_COMPACT, 64, (uint64) bs.indtuples, true);
		while (LsmTuplesortGetDatum(bs.sort, &d, &isnull))
		{
			bytea	   *b = DatumGetByteaPP(d);
			uint8	   *ent = (uint8 *) VARDATA_ANY(b);
			int			len = VARSIZE_ANY_EXHDR(b);

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
			pfree(DatumGetPointer(d));
			if (++done % 10000 == 0)
			{
				pgstat_progress_update_param(PROGRESS_CREATEIDX_TUPLES_DONE, done);
				CHECK_FOR_INTERRUPTS();
			}
		}
		LsmRunWriterFinish(&w, &ref, 1);
		ref.level = LsmBuildLevel(index, ref.npages);
		pgstat_progress_update_param(PROGRESS_CREATEIDX_TUPLES_DONE, done);
		have_run = true;
	}
	tuplesort_end(bs.sort);

	/* publish the run */
	LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
	{
		GenericXLogState *state = GenericXLogStart(index);

		m = LsmPageGetMeta(GenericXLogRegisterBuffer(state, metabuf, 0));
		if (have_run)
		{
			m->runs[0] = ref;
			m->nruns = 1;
			m->pages_compacted += ref.npages;
			LsmReserveFinish(m, LSM_RESV_COMPACT, ref.npages);
		}
		GenericXLogFinish(state);
		nblocks = LsmPageGetMeta(BufferGetPage(metabuf))->nblocks;
		lsn = BufferGetLSNAtomic(metabuf);
	}
	UnlockReleaseBuffer(metabuf);
	/* the reservation grew by halves: cut what the run did not use */
	(void) LsmTruncateTo(index, nblocks, lsn, false);

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
	metapage = (Page) palloc(BLCKSZ);
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
