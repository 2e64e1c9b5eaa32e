/*
 * lsmbloom.c — bloom filters of runs.
 *
 * Writing: the run writer hashes (xxHash64) the leading bloom_columns
 * columns of every entry — the encoded bytes, so equal values hash equally —
 * into a blocked filter (src/core/bloom.cc) sized for the run's expected
 * entries, and appends the filter's pages after the run's header and fence
 * pages.  The manifest entry records where they start and how many blocks
 * the filter has; a run with bloom_nblocks = 0 has no filter.
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

/* Hash of the first ncols segments of an encoded entry. */
uint64
LsmBloomHashPrefix(const LsmKeyDesc *desc, const uint8 *key, int len, int ncols,
				   bool *ok)
{
	const uint8 *seg[INDEX_MAX_KEYS];
	int			seglen[INDEX_MAX_KEYS];

	*ok = LsmSplitEntry(desc, key, len, seg, seglen, NULL);
	if (!*ok)
		return 0;
	return lsm_hash64(key, (seg[ncols - 1] + seglen[ncols - 1]) - key, LSM_BLOOM_SEED);
}

void
LsmBloomBegin(LsmRunWriter *w, Relation index, uint64 expected_keys)
{
	LsmStatus	st;

	w->bloom = NULL;
	w->bloom_bits = LsmBloomBitsOf(index);
	if (w->bloom_bits <= 0)
		return;
	w->desc = &LsmGetRelCache(index)->desc;
	w->bloom_cols = LsmBloomColumnsOf(index, w->desc->ncols);
	w->have_last = false;
	st = lsm_bloom_builder_create(Max(expected_keys, 1), w->bloom_bits, &w->bloom);
	if (st != LSM_OK)
		LsmReportStatus(index, st, InvalidBlockNumber, "starting a bloom filter");
}

void
LsmBloomAddKey(LsmRunWriter *w, const uint8 *key, int len)
{
	bool		ok;
	uint64		h = LsmBloomHashPrefix(w->desc, key, len, w->bloom_cols, &ok);

	if (!ok)
		LsmReportCorruption(w->index, InvalidBlockNumber,
							"A malformed entry %s reached the writer of a new run.",
							LsmKeyToHex(key, Min(len, 64)));
	/* sorted input: equal prefixes are adjacent, add each once */
	if (w->have_last && h == w->last_hash)
		return;
	w->have_last = true;
	w->last_hash = h;
	(void) lsm_bloom_builder_add(w->bloom, h);
}

/* Write the filter's pages from relative page first_rel on. */
void
LsmBloomFinish(LsmRunWriter *w, LsmRunRef *ref, uint32 first_rel)
{
	uint8	   *content;
	uint32		npages;

	ref->bloom_cols = 0;
	ref->bloom_start = 0;
	ref->bloom_nblocks = 0;
	if (w->bloom == NULL)
		return;
	npages = lsm_bloom_builder_npages(w->bloom, LSM_CONTENT_CAP);
	content = palloc(BLCKSZ);
	for (uint32 i = 0; i < npages; i++)
	{
		size_t		len;
		LsmStatus	st = lsm_bloom_builder_page(w->bloom, i, content, LSM_CONTENT_CAP, &len);

		if (st != LSM_OK)
			LsmReportStatus(w->index, st, InvalidBlockNumber, "writing a bloom filter");
		LsmRunWriterPutPage(w, first_rel + i, LSM_PK_RUN_BLOOM, content, len);
	}
	pfree(content);
	ref->bloom_cols = w->bloom_cols;
	ref->bloom_start = first_rel;
	ref->bloom_nblocks = lsm_bloom_builder_nblocks(w->bloom);
	lsm_bloom_builder_destroy(w->bloom);
	w->bloom = NULL;
}

void
LsmBloomAbandon(LsmRunWriter *w)
{
	lsm_bloom_builder_destroy(w->bloom);
	w->bloom = NULL;
}
