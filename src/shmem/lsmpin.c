/*
 * lsmpin.c — memtables that streaming scans read: identities, pins, and the
 * slot's held[] list.
 *
 * A scan names a memtable by an id that is never reused in its slot and pins
 * it (LsmScanPin) when it will read it in chunks (am/lsmscanmerge.c).  A pinned
 * memtable that leaves the slot (flushed, or dropped by a reset) is not
 * freed but kept in held[] until its last scan unpins it; a slot with pins is
 * never evicted.  At most LSM_MAX_HELD distinct memtables of a slot are pinned
 * at once, live or held, so held[] never overflows.  Every count is changed
 * under the slot lock held exclusively.  A backend releases its pins when
 * the scan ends or its memory is freed by an ERROR, and at process exit.
 */
#include "postgres.h"

#include "storage/ipc.h"

#include "shmem/lsm_shmem.h"

/* A new memtable identity of the slot (never reused in it). */
uint64
LsmNextMemtableId(LsmSlot *slot)
{
	return ++slot->next_mt_id;
}

/*
 * A memtable leaves the slot (flushed, or dropped by a reset): free it, or,
 * if streaming scans still read it, keep it in held[] for them.  mt is left
 * empty either way.  REQUIRES: slot lock exclusive.
 */
void
LsmMemtableRetire(LsmSlot *slot, LsmMemtable *mt, uint64 id, int scans)
{
	if (scans > 0)
	{
		LsmHeldMemtable *h;

		/* LsmScanPin admits no more pinned memtables than held[] holds */
		if (slot->nheld >= LSM_MAX_HELD)
			elog(ERROR, "lsm_am: more memtables pinned by scans than can be held");
		h = &slot->held[slot->nheld++];
		h->mt = *mt;
		h->id = id;
		h->scans = scans;
		lsm_memtable_init(mt);
		return;
	}
	LsmMemtableFree(mt);
}

/* The memtable of the slot with this id (active, immutable or held), or NULL. */
const LsmMemtable *
LsmSlotFindMemtable(const LsmSlot *slot, uint64 id)
{
	if (slot->mt_id == id)
		return &slot->mt;
	for (int i = 0; i < slot->nimm; i++)
		if (slot->imm[i].id == id)
			return &slot->imm[i].mt;
	for (int i = 0; i < slot->nheld; i++)
		if (slot->held[i].id == id)
			return &slot->held[i].mt;
	return NULL;
}

/* The scan count of memtable id in the slot, or NULL. */
static int *
LsmSlotScanCount(LsmSlot *slot, uint64 id)
{
	if (slot->mt_id == id)
		return &slot->mt_scans;
	for (int i = 0; i < slot->nimm; i++)
		if (slot->imm[i].id == id)
			return &slot->imm[i].scans;
	for (int i = 0; i < slot->nheld; i++)
		if (slot->held[i].id == id)
			return &slot->held[i].scans;
	return NULL;
}

/* Does any scan pin a memtable of the slot (so it must not be evicted)? */
bool
LsmSlotScanPinned(const LsmSlot *slot)
{
	if (slot->mt_scans > 0 || slot->nheld > 0)
		return true;
	for (int i = 0; i < slot->nimm; i++)
		if (slot->imm[i].scans > 0)
			return true;
	return false;
}

/*
 * This backend's pins, released at process exit if a scan did not get to
 * (an error path frees the scan's memory, which unpins; this is the net).
 */
typedef struct LsmLocalPin
{
	int			slotno;
	uint32		generation;
	uint64		id;
} LsmLocalPin;

#define LSM_MAX_LOCAL_PINS 64
static LsmLocalPin lsm_local_pins[LSM_MAX_LOCAL_PINS];
static int	lsm_nlocal_pins = 0;
static bool lsm_pin_exit_registered = false;

static void
LsmUnpinAllAtExit(int code, Datum arg)
{
	while (lsm_nlocal_pins > 0)
	{
		LsmLocalPin p = lsm_local_pins[lsm_nlocal_pins - 1];

		LsmScanUnpin(p.slotno, p.generation, p.id);
	}
}

/*
 * Pin memtable id of the slot for a streaming scan.  Returns false (pinning
 * nothing) if the slot already has as many pinned memtables as held[] can
 * keep, or this backend as many pins as it tracks: the scan then copies its
 * range at once.  REQUIRES: slot lock exclusive, the memtable in the slot.
 */
bool
LsmScanPin(LsmSlot *slot, uint64 id)
{
	int		   *count = LsmSlotScanCount(slot, id);
	int			pinned = slot->nheld + (slot->mt_scans > 0);

	Assert(count != NULL);
	if (count == NULL || lsm_nlocal_pins >= LSM_MAX_LOCAL_PINS)
		return false;
	for (int i = 0; i < slot->nimm; i++)
		pinned += slot->imm[i].scans > 0;
	if (*count == 0 && pinned >= LSM_MAX_HELD)
		return false;
	if (!lsm_pin_exit_registered)
	{
		before_shmem_exit(LsmUnpinAllAtExit, (Datum) 0);
		lsm_pin_exit_registered = true;
	}
	(*count)++;
	lsm_local_pins[lsm_nlocal_pins].slotno = slot - lsm_shared->slots;
	lsm_local_pins[lsm_nlocal_pins].generation = slot->generation;
	lsm_local_pins[lsm_nlocal_pins].id = id;
	lsm_nlocal_pins++;
	return true;
}

/* Release a pin of LsmScanPin; the last scan of a held memtable frees it. */
void
LsmScanUnpin(int slotno, uint32 generation, uint64 id)
{
	LsmSlot    *slot = &lsm_shared->slots[slotno];

	for (int i = lsm_nlocal_pins - 1; i >= 0; i--)
	{
		if (lsm_local_pins[i].slotno == slotno && lsm_local_pins[i].id == id &&
			lsm_local_pins[i].generation == generation)
		{
			lsm_local_pins[i] = lsm_local_pins[--lsm_nlocal_pins];
			break;
		}
	}
	LWLockAcquire(LsmSlotLock(slotno), LW_EXCLUSIVE);
	/* a pinned slot keeps its identity (it is never evicted) */
	if (slot->generation == generation)
	{
		int		   *count = LsmSlotScanCount(slot, id);

		if (count != NULL && *count > 0)
			(*count)--;
		for (int i = 0; i < slot->nheld; i++)
		{
			if (slot->held[i].id == id && slot->held[i].scans == 0)
			{
				LsmMemtableFree(&slot->held[i].mt);
				slot->held[i] = slot->held[--slot->nheld];
				break;
			}
		}
	}
	LWLockRelease(LsmSlotLock(slotno));
}
