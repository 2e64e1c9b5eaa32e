/*
 * lsmreplay_int.h — what the catch-up under the slot lock (lsmreplay.c) and
 * the load from scratch without it (lsmload.c) share.  Private to
 * src/storage/; the design is in lsmload.c's header and doc/impl.md, "Log
 * replay".
 */
#ifndef LSMREPLAY_INT_H
#define LSMREPLAY_INT_H

#include "storage/lsm_storage.h"

/*
 * Log pages a catch-up replays under the slot lock before it lets the lock
 * go (other backends get their turn, interrupts are served) and takes it
 * again: 16 pages are 128 kB of log, a few milliseconds.
 */
#define LSM_REPLAY_STEP_PAGES	16

/* How far LsmReplayChain got. */
typedef enum LsmReplayResult
{
	LSM_REPLAY_END,				/* at the chain's last entry */
	LSM_REPLAY_NOT_CHAIN,		/* a page is not of the chain (a standby
								 * replayed a flush that retired it) */
	LSM_REPLAY_MORE				/* the page budget ran out first */
} LsmReplayResult;

/*
 * Replay log chain epoch into mt from (*blk, *off), advancing *blk, *off and
 * *pages past every page replayed; *budget (NULL: no limit) is the number of
 * pages it may still read.  Checks for interrupts between pages.  slot is
 * the memtable's slot, spared when arena chunks must be freed by eviction.
 * REQUIRES: mt is the caller's alone (slot lock exclusive, or private).
 */
extern LsmReplayResult LsmReplayChain(Relation index, LsmSlot *slot, LsmMemtable *mt,
									  uint32 epoch, BlockNumber *blk, uint16 *off,
									  uint32 *pages, int *budget);
/* Position of epoch in meta->imm[], or -1. */
extern int	LsmMetaImmIndex(const LsmMetaPageData *meta, uint32 epoch);

/*
 * Another backend is loading the slot: release the slot lock and sleep
 * (interruptibly, wait event LsmSlotLoad / Extension) until it is done, and
 * return true (the caller starts over).  false: nobody loads it; the lock is
 * still held.  REQUIRES: slot lock exclusive.
 */
extern bool LsmSlotLoadWait(int slotno);
/*
 * Load the slot from scratch: the active chain and every immutable chain
 * the slot lacks, replayed into private memtables without the slot lock,
 * then swapped in (the slot is left loaded and in_recovery: the caller's
 * catch-up adds what was appended meanwhile).  REQUIRES: slot lock
 * exclusive; released on return (on an ERROR, by the abort if still held).
 */
extern void LsmSlotLoad(Relation index, int slotno);

#endif							/* LSMREPLAY_INT_H */
