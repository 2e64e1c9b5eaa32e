/*
 * lsmverify_int.h — what lsm_am.verify's two files share (lsmverify.c: the
 * metapage, runs and heap; lsmverifylog.c: log chains and memtables).
 */
#ifndef LSMVERIFY_INT_H
#define LSMVERIFY_INT_H

#include "lib/bloomfilter.h"
#include "lib/stringinfo.h"
#include "utils/relcache.h"

#include "storage/lsm_storage.h"

typedef struct LsmVerifyState
{
	Relation	index;
	Relation	heap;
	const LsmKeyDesc *desc;
	bool		heapallindexed;
	bloom_filter *filter;		/* heapallindexed: every entry read */
	int64		nentries;		/* entries fingerprinted */
	int64		heap_tuples;	/* heap tuples probed */
	BlockNumber file_blocks;	/* of the index, after the metapage was read */
	BlockNumber max_heap_block; /* highest heap block an entry points at */
	BlockNumber max_heap_block_at;	/* ... and the index block it was on */
	StringInfoData buf;
} LsmVerifyState;

/* memcmp order, the shorter prefix first */
extern int	LsmVerifyCmp(const uint8 *a, size_t alen, const uint8 *b, size_t blen);
/* an entry read at blkno (InvalidBlockNumber: a memtable): well-formed, TID
 * in range; fingerprinted when fingerprint */
extern void LsmVerifyEntry(LsmVerifyState *vs, BlockNumber blkno, const uint8 *key,
						   size_t len, bool fingerprint);
/*
 * Under the slot lock: read the metapage into meta, walk and check every
 * log chain (chains[c], nchain[c]: its blocks; the active chain last) and
 * compare each with its memtable; create vs->filter when heapallindexed and
 * fingerprint the memtables.
 */
extern void LsmVerifyLogs(LsmVerifyState *vs, LsmMetaPageData *meta,
						  BlockNumber **chains, int *nchain);

#endif							/* LSMVERIFY_INT_H */
