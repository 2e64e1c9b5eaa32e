/*
 * lsmverifylog.c — lsm_am.verify's check of the log chains against the
 * memtables they are the durable copy of (lsmverify.c has the rest).
 *
 * Under the slot lock, shared: no insert appends to a chain, no memtable
 * switches and no flush publishes meanwhile (each takes it exclusively), and
 * LsmSlotAcquire caught the memtables up with the log.  So the metapage read
 * here names exactly the chains of the slot's memtables, and every chain
 * must hold exactly the entries of its memtable: every log page is checked
 * (kind, epoch, checksum, every entry well-formed), its entries sorted, and
 * the two compared.  On a hot standby the startup process replays without
 * the slot lock (a flush may retire a chain under the walk), so there only
 * the memtables are read.
 */
#include "postgres.h"

#include "access/xlog.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "am/lsm_am.h"
#include "am/lsmverify_int.h"

/* One log entry: where its bytes are in the chain's copy, and its page. */
typedef struct LsmLogItem
{
	Size		off;
	uint16		len;
	BlockNumber blk;
} LsmLogItem;

static int
LsmLogItemCmp(const void *a, const void *b, void *arg)
{
	const LsmLogItem *x = a;
	const LsmLogItem *y = b;
	const uint8 *base = arg;

	return LsmVerifyCmp(base + x->off, x->len, base + y->off, y->len);
}

/*
 * Walk the chain (epoch, head): check every page and entry, copy the
 * entries into *bytes / *items.  *blocks gets the chain's blocks.
 */
static int
LsmVerifyChain(LsmVerifyState *vs, const LsmMetaPageData *meta, uint32 epoch,
			   BlockNumber head, BlockNumber **blocks, StringInfo bytes,
			   LsmLogItem **items, int *nitems)
{
	Relation	index = vs->index;
	BlockNumber blk = head;
	BlockNumber from = LSM_METAPAGE_BLKNO;
	int			n = 0,
				cap = 16,
				icap = 256;

	*blocks = palloc(sizeof(BlockNumber) * cap);
	*items = palloc(sizeof(LsmLogItem) * icap);
	*nitems = 0;
	while (BlockNumberIsValid(blk))
	{
		Buffer		buf;
		Page		page;
		LsmPageOpaque op;
		const uint8 *content;
		int			len;
		int			pos = 0;

		if (blk < 1 || blk >= meta->nblocks || blk >= vs->file_blocks || n >= (int) meta->nblocks)
			LsmReportCorruption(index, from,
								"Log chain %u continues at block %u (the index accounts for %u pages, its file has %u), or loops.",
								epoch, blk, meta->nblocks, vs->file_blocks);
		buf = ReadBuffer(index, blk);
		LockBuffer(buf, BUFFER_LOCK_SHARE);
		LsmCheckPage(index, buf, LSM_PK_LOG, epoch);
		page = BufferGetPage(buf);
		op = LsmPageGetOpaque(page);
		if (op->checksum != 0 && op->checksum != LsmLogPageChecksum(page))
			LsmReportCorruption(index, blk,
								"Log page checksum %04x, the content's is %04x.",
								op->checksum, LsmLogPageChecksum(page));
		content = LsmPageContent(page);
		len = LsmPageContentLen(page);
		while (pos < len)
		{
			uint16		elen;

			if (len - pos < (int) LSM_LOG_ENTRY_HDR)
				LsmReportCorruption(index, blk, "A log entry header is cut at offset %d.", pos);
			memcpy(&elen, content + pos, LSM_LOG_ENTRY_HDR);
			pos += LSM_LOG_ENTRY_HDR;
			if (elen == 0 || elen > LSM_MAX_KEY_SIZE || elen > len - pos)
				LsmReportCorruption(index, blk,
									"A log entry of %u bytes at offset %d runs past the page's %d bytes.",
									elen, pos, len);
			LsmVerifyEntry(vs, blk, content + pos, elen, false);
			if (*nitems == icap)
			{
				icap *= 2;
				*items = repalloc_huge(*items, sizeof(LsmLogItem) * icap);
			}
			(*items)[*nitems].off = bytes->len;
			(*items)[*nitems].len = elen;
			(*items)[*nitems].blk = blk;
			(*nitems)++;
			appendBinaryStringInfo(bytes, (const char *) content + pos, elen);
			pos += elen;
		}
		if (n == cap)
		{
			cap *= 2;
			*blocks = repalloc(*blocks, sizeof(BlockNumber) * cap);
		}
		(*blocks)[n++] = blk;
		from = blk;
		blk = op->next;
		UnlockReleaseBuffer(buf);
		CHECK_FOR_INTERRUPTS();
	}
	return n;
}

/*
 * The memtable's entries: fingerprinted, and (items not NULL) the same set
 * as the chain's items (sorted here; duplicates allowed).
 */
static void
LsmVerifyMemtable(LsmVerifyState *vs, const LsmMemtable *mt, uint32 epoch,
				  const uint8 *base, LsmLogItem *items, int nitems)
{
	LsmMemtableIter it;
	int			j = 0;

	if (items != NULL && nitems > 1)
		qsort_arg(items, nitems, sizeof(LsmLogItem), LsmLogItemCmp, (void *) base);
	lsm_memtable_seek(lsm_shared->arena, mt, NULL, 0, &it);
	for (; lsm_memtable_iter_valid(&it); lsm_memtable_iter_next(&it))
	{
		const uint8 *key;
		size_t		len;

		lsm_memtable_iter_key(&it, &key, &len);
		LsmVerifyEntry(vs, InvalidBlockNumber, key, len, true);
		if (items == NULL)
			continue;
		if (j < nitems &&
			LsmVerifyCmp(base + items[j].off, items[j].len, key, len) < 0)
			LsmReportCorruption(vs->index, items[j].blk,
								"The log page holds the entry %s, which the memtable of log chain %u lacks.",
								LsmKeyToHex(base + items[j].off, Min(items[j].len, 64)), epoch);
		if (j >= nitems ||
			LsmVerifyCmp(base + items[j].off, items[j].len, key, len) != 0)
			LsmReportCorruption(vs->index, InvalidBlockNumber,
								"The memtable of log chain %u holds the entry %s, which no page of the chain has.",
								epoch, LsmKeyToHex(key, Min((int) len, 64)));
		/* past this key and its duplicates in the log */
		while (j < nitems &&
			   LsmVerifyCmp(base + items[j].off, items[j].len, key, len) == 0)
			j++;
	}
	if (items != NULL && j < nitems)
		LsmReportCorruption(vs->index, items[j].blk,
							"The log page holds the entry %s, which the memtable of log chain %u lacks.",
							LsmKeyToHex(base + items[j].off, Min(items[j].len, 64)), epoch);
}

void
LsmVerifyLogs(LsmVerifyState *vs, LsmMetaPageData *meta, BlockNumber **chains,
			  int *nchain)
{
	Relation	index = vs->index;
	bool		standby = RecoveryInProgress();
	LsmSlot    *slot = LsmSlotAcquire(index, LW_SHARED);
	MemoryContext cxt = AllocSetContextCreate(CurrentMemoryContext, "lsm verify log",
											  ALLOCSET_DEFAULT_SIZES);
	MemoryContext old;

	LsmReadMeta(index, meta, NULL);
	vs->file_blocks = RelationGetNumberOfBlocks(index);
	if (vs->heapallindexed)
	{
		int64		total = (int64) slot->mt.nentries;

		for (int i = 0; i < slot->nimm; i++)
			total += slot->imm[i].mt.nentries;
		for (uint32 r = 0; r < meta->nruns; r++)
			total += meta->runs[r].nentries;
		total = Max(total, (int64) vs->heap->rd_rel->reltuples);
		/* a fixed seed: the same index gives the same verdict */
		vs->filter = bloom_create(Max(total, 1), maintenance_work_mem, 0);
	}
	if (!standby &&
		(slot->nimm != (int) meta->nimm || slot->log_epoch != meta->active.epoch))
		LsmReportCorruption(index, LSM_METAPAGE_BLKNO,
							"The metapage names %u immutable memtables and log chain %u, the memtables %d and %u.",
							meta->nimm, meta->active.epoch, slot->nimm, slot->log_epoch);
	for (int c = 0; c <= (int) meta->nimm; c++)
	{
		bool		active = c == (int) meta->nimm;
		LsmLogChain ch = active ? meta->active : meta->imm[c];
		const LsmMemtable *mt;
		StringInfoData bytes;
		LsmLogItem *items = NULL;
		int			nitems = 0;

		chains[c] = NULL;
		nchain[c] = 0;
		if (standby)
		{
			if (c < slot->nimm || active)
				LsmVerifyMemtable(vs, active ? &slot->mt : &slot->imm[c].mt,
								  ch.epoch, NULL, NULL, 0);
			continue;
		}
		if (!active && slot->imm[c].epoch != ch.epoch)
			LsmReportCorruption(index, LSM_METAPAGE_BLKNO,
								"Immutable memtable %d has log chain %u, the metapage names chain %u.",
								c, slot->imm[c].epoch, ch.epoch);
		mt = active ? &slot->mt : &slot->imm[c].mt;
		old = MemoryContextSwitchTo(cxt);
		initStringInfo(&bytes);
		MemoryContextSwitchTo(old);
		nchain[c] = LsmVerifyChain(vs, meta, ch.epoch, ch.head, &chains[c], &bytes,
								   &items, &nitems);
		LsmVerifyMemtable(vs, mt, ch.epoch, (const uint8 *) bytes.data, items, nitems);
		pfree(items);
		MemoryContextReset(cxt);
	}
	LsmSlotRelease(index, slot);
	MemoryContextDelete(cxt);
}
