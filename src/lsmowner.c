/*
 * lsmowner.c — C++ core objects owned by PostgreSQL memory contexts (see
 * lsmowner.h).
 */
#include "postgres.h"

#include "core/lsm_core.h"
#include "lsmowner.h"

/* Reset callback: destroy the object (core destroy functions are noexcept
 * and never call PostgreSQL). */
static void
LsmCoreOwnerCallback(void *arg)
{
	LsmCoreOwner *own = (LsmCoreOwner *) arg;
	void	   *obj = own->obj;

	own->obj = NULL;
	if (obj == NULL)
		return;
	switch (own->kind)
	{
		case LSM_CORE_RUNBUILDER:
			lsm_runbuilder_destroy((LsmRunBuilder *) obj);
			break;
		case LSM_CORE_MERGE:
			lsm_merge_destroy((LsmMerge *) obj);
			break;
		case LSM_CORE_BATCH:
			lsm_batch_destroy((LsmBatch *) obj);
			break;
	}
}

LsmCoreOwner *
LsmCoreOwnerCreate(MemoryContext cxt, LsmCoreKind kind)
{
	LsmCoreOwner *own = MemoryContextAllocZero(cxt, sizeof(LsmCoreOwner));

	own->kind = kind;
	own->cb.func = LsmCoreOwnerCallback;
	own->cb.arg = own;
	MemoryContextRegisterResetCallback(cxt, &own->cb);
	return own;
}

void
LsmCoreOwnerRelease(LsmCoreOwner *own)
{
	if (own != NULL)
		LsmCoreOwnerCallback(own);
}
