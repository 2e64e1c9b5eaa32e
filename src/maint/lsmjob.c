/*
 * lsmjob.c — one flush, compaction, trivial move, run rewrite or relocation
 * as others see it: its progress entry (shmem/lsmprogress.c, read by
 * lsm_am.progress), a worker's line in pg_stat_activity
 * (LsmWorkerReportActivity), and, with lsm_am.log_maintenance, one LOG line
 * when it ends: the index, inputs and output (runs, levels, entries, pages),
 * the WAL written and the duration.
 *
 * A job that stops (a worker yielding) or fails ends without a LOG line; an
 * ERROR's abort clears its progress entry (lsmprogress.c).
 */
#include "postgres.h"

#include "access/xlog.h"
#include "executor/instrument.h"
#include "lib/stringinfo.h"
#include "port/pg_bitutils.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "maint/lsmmaint_int.h"

/* levels as "0", "0, 1" or "1-3" for bits of input_levels */
static void
LsmAppendLevels(StringInfo buf, uint32 levels)
{
	bool		first = true;

	for (int l = 0; l < 32; l++)
		if (levels & ((uint32) 1 << l))
		{
			appendStringInfo(buf, "%s%d", first ? "" : ", ", l);
			first = false;
		}
}

/* See lsmmaint_int.h. */
void
LsmJobBegin(LsmJob *job, Relation index, LsmJobKind kind, const LsmRunRef *inputs,
			int nin, uint64 memtable_entries, int output_level, int64 pages_total)
{
	StringInfoData what;

	memset(job, 0, sizeof(*job));
	job->kind = kind;
	job->wal0 = pgWalUsage.wal_bytes;
	job->moved0 = lsm_moved_pages;
	job->output_level = output_level;
	job->in_runs = nin;
	job->in_entries = memtable_entries;
	for (int i = 0; i < nin; i++)
	{
		job->in_levels |= (uint32) 1 << Min(inputs[i].level, 31);
		job->in_entries += inputs[i].nentries;
		job->in_pages += inputs[i].npages;
	}
	LsmProgressBegin(index, kind, nin, job->in_levels, output_level, pages_total);
	job->started_at = GetCurrentTimestamp();

	if (!LsmIsWorker())
		return;
	initStringInfo(&what);
	if (kind == LSM_JOB_FLUSH)
		appendStringInfo(&what, "memtable of " UINT64_FORMAT " entries into level 0",
						 memtable_entries);
	else
	{
		appendStringInfo(&what, "%d run%s of level%s ", nin, nin == 1 ? "" : "s",
						 pg_popcount32(job->in_levels) > 1 ? "s" : "");
		LsmAppendLevels(&what, job->in_levels);
		if (output_level >= 0)
			appendStringInfo(&what, " into level %d", output_level);
	}
	LsmWorkerReportActivity(LsmJobKindName(kind), index, what.data);
	pfree(what.data);
}

/* See lsmmaint_int.h: a job that stopped (or ended) leaves no trace. */
void
LsmJobStop(Relation index)
{
	(void) LsmProgressEnd();
	LsmWorkerReportActivity(NULL, index, NULL);
}

/* See lsmmaint_int.h. */
void
LsmJobEnd(LsmJob *job, Relation index, const LsmRunRef *outs, int nouts)
{
	TimestampTz now = GetCurrentTimestamp();
	long		secs;
	int			usecs;
	uint64		out_entries = 0;
	uint64		out_pages = 0;
	uint32		out_levels = 0;
	StringInfoData msg;
	char	   *nsp;

	LsmJobStop(index);
	if (!lsm_log_maintenance)
		return;
	for (int i = 0; i < nouts; i++)
	{
		out_entries += outs[i].nentries;
		out_pages += outs[i].npages;
		out_levels |= (uint32) 1 << Min(outs[i].level, 31);
	}
	TimestampDifference(job->started_at, now, &secs, &usecs);
	initStringInfo(&msg);
	if (job->kind == LSM_JOB_FLUSH)
		appendStringInfo(&msg, "input: memtable of " UINT64_FORMAT " entries",
						 job->in_entries);
	else
	{
		appendStringInfo(&msg, "input: %d run%s at level%s ", job->in_runs,
						 job->in_runs == 1 ? "" : "s",
						 pg_popcount32(job->in_levels) > 1 ? "s" : "");
		LsmAppendLevels(&msg, job->in_levels);
		appendStringInfo(&msg, " (" UINT64_FORMAT " entries, " UINT64_FORMAT " pages)",
						 job->in_entries, job->in_pages);
	}
	appendStringInfo(&msg, "; output: %d run%s", nouts, nouts == 1 ? "" : "s");
	if (nouts > 0)
	{
		appendStringInfo(&msg, " at level%s ", pg_popcount32(out_levels) > 1 ? "s" : "");
		LsmAppendLevels(&msg, out_levels);
		appendStringInfo(&msg, " (" UINT64_FORMAT " entries, " UINT64_FORMAT " pages)",
						 out_entries, out_pages);
	}
	if (job->reason != NULL)
		appendStringInfo(&msg, "; reason: %s", job->reason);
	if (lsm_moved_pages > job->moved0)
		appendStringInfo(&msg, "; outgrew its extent: " UINT64_FORMAT " pages copied to a new one",
						 lsm_moved_pages - job->moved0);
	appendStringInfo(&msg, "; WAL: " INT64_FORMAT " bytes; duration: %ld.%03d s",
					 (int64) (pgWalUsage.wal_bytes - job->wal0), secs, usecs / 1000);

	nsp = get_namespace_name(RelationGetNamespace(index));
	/* a syscache miss may have taken a catalog snapshot: workers keep none */
	InvalidateCatalogSnapshot();
	ereport(LOG,
			(errmsg("lsm_am %s of index \"%s.%s\": %s",
					LsmJobKindName(job->kind), nsp ? nsp : "?",
					RelationGetRelationName(index), msg.data),
			 errhidestmt(true)));
	pfree(msg.data);
}
