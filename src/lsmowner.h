/*
 * lsmowner.h — C++ core objects owned by PostgreSQL memory contexts.
 *
 * Every object of the core (src/core/lsm_core.h) that the shim creates is
 * tied to a memory context: an owner registered in that context with a
 * reset callback destroys the object when the context is reset or deleted,
 * which an ERROR's cleanup does for every context below the failed
 * transaction's or portal's.  So no ERROR path leaks core memory, without a
 * PG_TRY around every use.  The core itself reports allocation failure as
 * LSM_NO_MEMORY (never an exception reaching C); callbacks only call the
 * core's noexcept destroy functions, never PostgreSQL.
 *
 * Pattern (nothing between create and the assignment can ERROR):
 *
 *     LsmCoreOwner *own = LsmCoreOwnerCreate(cxt, LSM_CORE_MERGE);  (may ERROR)
 *     st = lsm_merge_create(..., &m);
 *     own->obj = m;
 *     ...
 *     LsmCoreOwnerRelease(own);      (destroy now; or leave it to cxt)
 */
#ifndef LSMOWNER_H
#define LSMOWNER_H

#include "utils/memutils.h"

typedef enum LsmCoreKind
{
	LSM_CORE_RUNBUILDER,
	LSM_CORE_MERGE,
	LSM_CORE_BATCH
} LsmCoreKind;

typedef struct LsmCoreOwner
{
	MemoryContextCallback cb;
	LsmCoreKind kind;
	void	   *obj;			/* the core object; NULL: none (yet, or any more) */
} LsmCoreOwner;

/* An owner in cxt for a core object of kind (obj NULL until set). */
extern LsmCoreOwner *LsmCoreOwnerCreate(MemoryContext cxt, LsmCoreKind kind);
/* Destroy the owned object now (a no-op if already done). */
extern void LsmCoreOwnerRelease(LsmCoreOwner *own);

#endif							/* LSMOWNER_H */
