/*
 * lsmhooks.c — the executor and utility hooks of the insert path: where a
 * backend's buffered entries (lsminsert.c) must be in their index before
 * PostgreSQL goes on without asking the index, and where inserts must not
 * be buffered at all (INSERT ... ON CONFLICT).  doc/impl.md, "Insert path",
 * has why each one is needed.
 */
#include "postgres.h"

#include "access/parallel.h"
#include "access/xact.h"
#include "executor/executor.h"
#include "nodes/plannodes.h"
#include "tcop/utility.h"

#include "am/lsm_am.h"

static ExecutorStart_hook_type prev_ExecutorStart = NULL;
static ExecutorEnd_hook_type prev_ExecutorEnd = NULL;
static ProcessUtility_hook_type prev_ProcessUtility = NULL;

/* Does the plan insert with ON CONFLICT (also in a data-modifying WITH)? */
static bool
LsmPlanHasOnConflict(PlannedStmt *ps)
{
	ListCell   *lc;

	if (ps->commandType == CMD_SELECT && !ps->hasModifyingCTE)
		return false;
	if (ps->planTree && IsA(ps->planTree, ModifyTable) &&
		((ModifyTable *) ps->planTree)->onConflictAction != ONCONFLICT_NONE)
		return true;
	foreach(lc, ps->subplans)
	{
		Plan	   *sp = (Plan *) lfirst(lc);

		if (sp && IsA(sp, ModifyTable) &&
			((ModifyTable *) sp)->onConflictAction != ONCONFLICT_NONE)
			return true;
	}
	return false;
}

/*
 * Before a query runs:
 * - a parallel plan: push everything, since parallel workers read the index
 *   (a plain index scan can run inside a worker, e.g. under a Nested Loop
 *   on a parallel seq scan) and cannot see this backend's buffers;
 * - INSERT ... ON CONFLICT: a speculative heap tuple that loses the race is
 *   killed at once (heap_abort_speculative), VACUUM may remove it and hand
 *   its TID to another row while our entry for it would still be buffered;
 *   so such statements push every entry at once, into the memtable, where
 *   VACUUM finds it.
 */
static void
LsmExecutorStart(QueryDesc *queryDesc, int eflags)
{
	bool		on_conflict = LsmPlanHasOnConflict(queryDesc->plannedstmt);

	if (LsmHasPending() && !IsParallelWorker() &&
		queryDesc->plannedstmt->parallelModeNeeded)
		LsmPushAllPending(false);
	if (on_conflict)
		LsmUnbufferedStatement(true);
	if (prev_ExecutorStart)
		prev_ExecutorStart(queryDesc, eflags);
	else
		standard_ExecutorStart(queryDesc, eflags);
	/* unique lsm indexes pass PostgreSQL 15's btree-only check (lsmunique.c) */
	if (on_conflict)
		LsmSpeculativeOpen(queryDesc);
}

static void
LsmExecutorEnd(QueryDesc *queryDesc)
{
	/* (after an ERROR this is not called: transaction end resets it) */
	if (LsmInUnbufferedStatement() && LsmPlanHasOnConflict(queryDesc->plannedstmt))
		LsmUnbufferedStatement(false);
	if (prev_ExecutorEnd)
		prev_ExecutorEnd(queryDesc);
	else
		standard_ExecutorEnd(queryDesc);
}

/*
 * Before any utility command but transaction control: push everything.  DDL
 * can move an index's contents without rebuilding it (ALTER INDEX ... SET
 * TABLESPACE copies its pages to a new relfilenode; ALTER COLUMN TYPE may
 * keep an index's relfilenode under a new OID), after which the buffers
 * would no longer match the index and be dropped at commit.
 */
static void
LsmProcessUtility(PlannedStmt *pstmt, const char *queryString,
				  bool readOnlyTree, ProcessUtilityContext context,
				  ParamListInfo params, QueryEnvironment *queryEnv,
				  DestReceiver *dest, QueryCompletion *qc)
{
	if (LsmHasPending() && !IsA(pstmt->utilityStmt, TransactionStmt) &&
		IsTransactionState() && !IsAbortedTransactionBlockState())
		LsmPushAllPending(false);
	if (prev_ProcessUtility)
		prev_ProcessUtility(pstmt, queryString, readOnlyTree, context,
							params, queryEnv, dest, qc);
	else
		standard_ProcessUtility(pstmt, queryString, readOnlyTree, context,
								params, queryEnv, dest, qc);
}

/* _PG_init */
void
LsmInsertInit(void)
{
	prev_ExecutorStart = ExecutorStart_hook;
	ExecutorStart_hook = LsmExecutorStart;
	prev_ExecutorEnd = ExecutorEnd_hook;
	ExecutorEnd_hook = LsmExecutorEnd;
	prev_ProcessUtility = ProcessUtility_hook;
	ProcessUtility_hook = LsmProcessUtility;
}
