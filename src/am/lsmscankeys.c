/*
 * lsmscankeys.c — a scan's keys: turned into one range of encoded keys
 * [lo, hi] (an equality prefix on the leading columns, then the bounds of
 * the first other column), which the merge seeks and stops by, plus the
 * exact per-entry filter of the keys the range does not decide
 * (LsmEntryMatches).  The equality prefix also names the bloom filter hash
 * of a point lookup (lsmscanmerge.c).
 */
#include "postgres.h"

#include "access/nbtree.h"
#include "lib/stringinfo.h"
#include "utils/memutils.h"

#include "am/lsmscan_int.h"

static bool
LsmIsLowerStrategy(StrategyNumber s)
{
	return s == BTGreaterStrategyNumber || s == BTGreaterEqualStrategyNumber;
}

/* Translate scan keys into encoded segments and the scan's key range. */
void
LsmScanPrepare(IndexScanDesc scan)
{
	LsmScanOpaque so = (LsmScanOpaque) scan->opaque;
	MemoryContext old = MemoryContextSwitchTo(so->scanctx);
	StringInfoData prefix;
	bool		have_lo = false,
				have_hi = false;
	const uint8 *loseg = NULL,
			   *hiseg = NULL;
	int			lolen = 0,
				hilen = 0;

	so->keys = palloc0(sizeof(LsmScanKeyInfo) * Max(scan->numberOfKeys, 1));
	so->nkeys = 0;
	for (int i = 0; i < scan->numberOfKeys; i++)
	{
		ScanKey		sk = &scan->keyData[i];
		LsmScanKeyInfo *k = &so->keys[so->nkeys];
		StringInfoData seg;

		k->col = sk->sk_attno - 1;
		if (sk->sk_flags & SK_ISNULL)
		{
			if (sk->sk_flags & SK_SEARCHNULL)
				k->kind = LSM_SK_ISNULL;
			else if (sk->sk_flags & SK_SEARCHNOTNULL)
				k->kind = LSM_SK_NOTNULL;
			else
			{
				so->empty = true;	/* "col op NULL" is never true */
				continue;
			}
			initStringInfo(&seg);
			if (k->kind == LSM_SK_ISNULL)
				LsmEncodeColumnValue(&so->desc, k->col, (Datum) 0, InvalidOid, true, &seg);
			else
				appendStringInfoChar(&seg, LSM_FLAG_NOT_NULL);
		}
		else
		{
			Oid			argtype = OidIsValid(sk->sk_subtype) ? sk->sk_subtype :
				so->desc.cols[k->col].typid;

			k->kind = LSM_SK_COMPARE;
			k->strategy = sk->sk_strategy;
			if (k->strategy < 1 || k->strategy > BTMaxStrategyNumber)
				elog(ERROR, "lsm_am: unexpected strategy number %d", k->strategy);
			initStringInfo(&seg);
			LsmEncodeColumnValue(&so->desc, k->col, sk->sk_argument, argtype, false, &seg);
		}
		k->seg = (uint8 *) seg.data;
		k->seglen = seg.len;
		so->nkeys++;
	}

	/* range: equality prefix, then the bounds of the first other column */
	initStringInfo(&prefix);
	for (int col = 0; col < so->desc.ncols; col++)
	{
		LsmScanKeyInfo *eq = NULL;

		for (int i = 0; i < so->nkeys && !eq; i++)
			if (so->keys[i].col == col &&
				(so->keys[i].kind == LSM_SK_ISNULL ||
				 (so->keys[i].kind == LSM_SK_COMPARE &&
				  so->keys[i].strategy == BTEqualStrategyNumber)))
				eq = &so->keys[i];
		if (eq)
		{
			appendBinaryStringInfo(&prefix, (char *) eq->seg, eq->seglen);
			so->eq_len[col] = prefix.len;
			so->eq_cols = col + 1;
			continue;
		}
		for (int i = 0; i < so->nkeys; i++)
		{
			LsmScanKeyInfo *k = &so->keys[i];
			bool		lower_in_index;

			if (k->col != col)
				continue;
			if (k->kind == LSM_SK_NOTNULL)
			{
				/* [0x01 ...] : every non-null value of the column */
				if (!loseg || LsmCompareSegments(k->seg, k->seglen, loseg, lolen) > 0)
					loseg = k->seg, lolen = k->seglen;
				if (!hiseg || LsmCompareSegments(k->seg, k->seglen, hiseg, hilen) < 0)
					hiseg = k->seg, hilen = k->seglen;
				continue;
			}
			lower_in_index = LsmIsLowerStrategy(k->strategy) != so->desc.cols[col].desc;
			if (lower_in_index)
			{
				if (!loseg || LsmCompareSegments(k->seg, k->seglen, loseg, lolen) > 0)
					loseg = k->seg, lolen = k->seglen;
			}
			else
			{
				if (!hiseg || LsmCompareSegments(k->seg, k->seglen, hiseg, hilen) < 0)
					hiseg = k->seg, hilen = k->seglen;
			}
		}
		break;
	}
	so->eq_prefix = (uint8 *) prefix.data;
	have_lo = prefix.len > 0 || loseg != NULL;
	have_hi = prefix.len > 0 || hiseg != NULL;
	if (have_lo)
	{
		StringInfoData lo;

		initStringInfo(&lo);
		appendBinaryStringInfo(&lo, prefix.data, prefix.len);
		if (loseg)
			appendBinaryStringInfo(&lo, (char *) loseg, lolen);
		so->range.lo = (uint8 *) lo.data;
		so->range.lolen = lo.len;
	}
	if (have_hi)
	{
		StringInfoData hi;

		initStringInfo(&hi);
		appendBinaryStringInfo(&hi, prefix.data, prefix.len);
		if (hiseg)
			appendBinaryStringInfo(&hi, (char *) hiseg, hilen);
		so->range.hi = (uint8 *) hi.data;
		so->range.hilen = hi.len;
	}
	MemoryContextSwitchTo(old);
}

/* Does the entry satisfy every scan key?  Also returns its TID. */
bool
LsmEntryMatches(IndexScanDesc scan, const uint8 *key, int len, ItemPointer tid)
{
	LsmScanOpaque so = (LsmScanOpaque) scan->opaque;
	const uint8 *seg[INDEX_MAX_KEYS];
	int			seglen[INDEX_MAX_KEYS];

	if (!LsmSplitEntry(&so->desc, key, len, seg, seglen, tid))
		LsmScanReportMalformed(scan, key, len);

	for (int i = 0; i < so->nkeys; i++)
	{
		LsmScanKeyInfo *k = &so->keys[i];
		const uint8 *s = seg[k->col];
		int			c;

		switch (k->kind)
		{
			case LSM_SK_ISNULL:
				if (s[0] == LSM_FLAG_NOT_NULL)
					return false;
				continue;
			case LSM_SK_NOTNULL:
				if (s[0] != LSM_FLAG_NOT_NULL)
					return false;
				continue;
			case LSM_SK_COMPARE:
				break;
		}
		if (s[0] != LSM_FLAG_NOT_NULL)
			return false;
		c = LsmCompareSegments(s, seglen[k->col], k->seg, k->seglen);
		if (so->desc.cols[k->col].desc)
			c = -c;
		switch (k->strategy)
		{
			case BTLessStrategyNumber:
				if (!(c < 0))
					return false;
				break;
			case BTLessEqualStrategyNumber:
				if (!(c <= 0))
					return false;
				break;
			case BTEqualStrategyNumber:
				if (c != 0)
					return false;
				break;
			case BTGreaterEqualStrategyNumber:
				if (!(c >= 0))
					return false;
				break;
			case BTGreaterStrategyNumber:
				if (!(c > 0))
					return false;
				break;
		}
	}
	return true;
}
