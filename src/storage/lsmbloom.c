/*
 * lsmbloom.c — bloom filters of runs.
 *
 * Writing: the core's run builder owns the run's filter.  For every entry
 * the shim tells it how many bytes the leading bloom_columns columns take
 * (the encoded bytes, so equal values hash equally); the builder hashes them
 * (xxHash64) into a blocked filter (src/core/bloom.cc) sized for the run's
 * expected entries, and emits the filter's pages after the run's header and
 * fence pages, which the run writer places like any other.  The manifest
 * entry records where they start and how many blocks the filter has; a run
 * with bloom_nblocks = 0 has no filter.
 *
 * Probing (lsmrun.c, through the backend cache of lsmruncache.c): a scan with equality
 * on at least the filter's columns hashes the same prefix and probes the one
 * block the hash maps to; "absent" skips the run without touching its fence
 * or data pages.
 */
#include "postgres.h"

#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "utils/rel.h"

#include "storage/lsm_storage.h"

/*
 * Set up the writer's filter settings; returns its bits per key (0: the run
 * gets no filter).  The core's run builder owns the filter itself.
 */
int
LsmBloomBegin(LsmRunWriter *w, Relation index)
{
	int			bits = LsmBloomBitsOf(index);

	w->bloom_cols = 0;
	if (bits <= 0)
		return 0;
	w->desc = &LsmGetRelCache(index)->desc;
	w->bloom_cols = LsmBloomColumnsOf(index, w->desc->ncols);
	return bits;
}

/*
 * Bytes of an encoded entry the filter hashes: its first bloom_cols column
 * segments.  The key split is the shim's (it owns the encoding); the hash
 * and the filter are the core's.
 */
size_t
LsmBloomPrefixLen(LsmRunWriter *w, const uint8 *key, int len)
{
	const uint8 *seg[INDEX_MAX_KEYS];
	int			seglen[INDEX_MAX_KEYS];

	/* the entry came from a memtable, runs or CREATE INDEX: no one page */
	if (!LsmSplitEntry(w->desc, key, len, seg, seglen, NULL))
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("index \"%s\" is corrupted: a malformed entry reached the writer of a new run",
						RelationGetRelationName(w->index)),
				 errdetail_internal("The entry begins %s.", LsmKeyToHex(key, Min(len, 64))),
				 errhint("REINDEX the index.")));
	return (seg[w->bloom_cols - 1] + seglen[w->bloom_cols - 1]) - key;
}
