/*
 * lsmscankeys.c — a scan's keys: turned into one range of encoded keys
 * [lo, hi] (an equality prefix on the leading columns, then the bounds of
 * the first other column), which the merge seeks and stops by, plus the
 * exact per-entry filter of the keys the range does not decide
 * (LsmEntryMatches).  The equality prefix also names the bloom filter hash
 * of a point lookup (lsmscanmerge.c).  = ANY(array): its elements sorted
 * and distinct; those on the columns after the equality prefix are iterated,
 * a range per combination of elements (LsmScanSetRange, LsmScanNextElement
 * in lsmscan.c), any other is part of the filter.
 */
#include "postgres.h"

#include "access/nbtree.h"
#include "lib/stringinfo.h"
#include "utils/array.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"

#include "am/lsmscan_int.h"

static bool
LsmIsLowerStrategy(StrategyNumber s)
{
	return s == BTGreaterStrategyNumber || s == BTGreaterEqualStrategyNumber;
}

typedef struct LsmSortSeg
{
	uint8	   *seg;
	int			len;
} LsmSortSeg;

static int
LsmSortSegCmp(const void *a, const void *b)
{
	const LsmSortSeg *x = a;
	const LsmSortSeg *y = b;

	return LsmCompareSegments(x->seg, x->len, y->seg, y->len);
}

/*
 * k's elements from the array of = ANY(array) (or op ANY(array)): its
 * non-null elements encoded, sorted in index order (segments compare as the
 * index orders, DESC and collation included) and distinct.  NULL elements
 * never match.
 */
static void
LsmPrepareArrayKey(LsmScanOpaque so, ScanKey sk, LsmScanKeyInfo *k)
{
	ArrayType  *arr = DatumGetArrayTypeP(sk->sk_argument);
	Oid			elemtype = ARR_ELEMTYPE(arr);
	int16		elmlen;
	bool		elmbyval;
	char		elmalign;
	Datum	   *values;
	bool	   *nulls;
	int			n;
	int			m = 0;
	LsmSortSeg *segs;

	get_typlenbyvalalign(elemtype, &elmlen, &elmbyval, &elmalign);
	deconstruct_array(arr, elemtype, elmlen, elmbyval, elmalign, &values, &nulls, &n);
	segs = palloc(sizeof(LsmSortSeg) * Max(n, 1));
	for (int i = 0; i < n; i++)
	{
		StringInfoData seg;

		if (nulls[i])
			continue;
		initStringInfo(&seg);
		LsmEncodeColumnValue(&so->desc, k->col, values[i], elemtype, false, &seg);
		segs[m].seg = (uint8 *) seg.data;
		segs[m].len = seg.len;
		m++;
	}
	if (m > 1)
		qsort(segs, m, sizeof(LsmSortSeg), LsmSortSegCmp);
	k->elems = palloc(sizeof(uint8 *) * Max(m, 1));
	k->elemlens = palloc(sizeof(int) * Max(m, 1));
	k->nelems = 0;
	for (int i = 0; i < m; i++)
	{
		if (k->nelems > 0 &&
			LsmCompareSegments(segs[i].seg, segs[i].len,
							   k->elems[k->nelems - 1], k->elemlens[k->nelems - 1]) == 0)
			continue;
		k->elems[k->nelems] = segs[i].seg;
		k->elemlens[k->nelems] = segs[i].len;
		k->nelems++;
	}
}

/* Translate scan keys into encoded segments and the scan's key range. */
void
LsmScanPrepare(IndexScanDesc scan)
{
	LsmScanOpaque so = (LsmScanOpaque) scan->opaque;
	MemoryContext old = MemoryContextSwitchTo(so->scanctx);

	so->keys = palloc0(sizeof(LsmScanKeyInfo) * Max(scan->numberOfKeys, 1));
	so->nkeys = 0;
	so->niter = 0;
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
		else if (sk->sk_flags & SK_SEARCHARRAY)
		{
			k->strategy = sk->sk_strategy;
			if (k->strategy < 1 || k->strategy > BTMaxStrategyNumber)
				elog(ERROR, "lsm_am: unexpected strategy number %d", k->strategy);
			LsmPrepareArrayKey(so, sk, k);
			if (k->nelems == 0)
			{
				so->empty = true;	/* no element (or only NULLs) */
				continue;
			}
			if (k->strategy == BTEqualStrategyNumber)
			{
				k->kind = LSM_SK_ARRAY;
				so->nkeys++;
				continue;
			}

			/*
			 * col < ANY(array) is col < its greatest element, col > ANY(array)
			 * col > its least (as btree reduces them); in index order the
			 * greatest value is the last segment, or the first under DESC.
			 */
			k->kind = LSM_SK_COMPARE;
			{
				bool		want_max = (k->strategy == BTLessStrategyNumber ||
										k->strategy == BTLessEqualStrategyNumber);
				int			e = (want_max != so->desc.cols[k->col].desc) ? k->nelems - 1 : 0;

				k->seg = k->elems[e];
				k->seglen = k->elemlens[e];
			}
			k->nelems = 0;
			so->nkeys++;
			continue;
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

	/*
	 * = ANY(array) on the columns after the equality prefix, up to the first
	 * column with neither an equality nor an = ANY: the scan iterates the
	 * combinations of their elements, each an equality that extends the
	 * prefix (a point scan per combination; elements in index order, the
	 * last column's fastest, so the output is in index order too), as btree
	 * iterates its array keys.  Any other = ANY is a per-entry filter.
	 */
	for (int col = 0; col < so->desc.ncols; col++)
	{
		bool		haseq = false;
		int			arr = -1;

		for (int i = 0; i < so->nkeys; i++)
		{
			LsmScanKeyInfo *k = &so->keys[i];

			if (k->col != col)
				continue;
			if (k->kind == LSM_SK_ISNULL ||
				(k->kind == LSM_SK_COMPARE && k->strategy == BTEqualStrategyNumber))
				haseq = true;
			else if (k->kind == LSM_SK_ARRAY && arr < 0)
				arr = i;
		}
		if (haseq)
			continue;
		if (arr < 0)
			break;
		{
			LsmScanKeyInfo *k = &so->keys[arr];

			so->iterkeys[so->niter] = arr;
			so->curelems[so->niter] = 0;
			so->niter++;
			k->kind = LSM_SK_COMPARE;
			k->strategy = BTEqualStrategyNumber;
			k->seg = k->elems[0];
			k->seglen = k->elemlens[0];
		}
	}
	MemoryContextSwitchTo(old);
	if (!so->empty)
		LsmScanSetRange(scan);
}

/*
 * The scan's range of encoded keys and which keys it decides, from the keys
 * (the iterated = ANY key standing for its current element).
 */
void
LsmScanSetRange(IndexScanDesc scan)
{
	LsmScanOpaque so = (LsmScanOpaque) scan->opaque;
	MemoryContext old;
	StringInfoData prefix;
	bool		have_lo = false,
				have_hi = false;
	const uint8 *loseg = NULL,
			   *hiseg = NULL;
	int			lolen = 0,
				hilen = 0;
	LsmScanKeyInfo *lokey = NULL,
			   *hikey = NULL;
	bool		notnull = false;
	bool		lostrict = false,
				histrict = false;

	/* the previous element's range goes (a large array makes many) */
	if (so->rangectx == NULL)
		so->rangectx = AllocSetContextCreate(so->scanctx, "lsm scan range",
											 ALLOCSET_SMALL_SIZES);
	else
		MemoryContextReset(so->rangectx);
	old = MemoryContextSwitchTo(so->rangectx);
	so->eq_cols = 0;
	so->range.lo = so->range.hi = NULL;
	so->range.lolen = so->range.hilen = 0;
	so->exlo = so->exhi = NULL;
	so->exlolen = so->exhilen = 0;
	for (int i = 0; i < so->nkeys; i++)
		so->keys[i].implied = false;
	for (int j = 0; j < so->niter; j++)
	{
		LsmScanKeyInfo *k = &so->keys[so->iterkeys[j]];

		k->seg = k->elems[so->curelems[j]];
		k->seglen = k->elemlens[so->curelems[j]];
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
			/* the prefix in both bounds admits exactly this segment */
			eq->implied = true;
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
				/*
				 * Every non-null value of the column: implied keys below
				 * check the column's flag byte, which excludes NULLs sorting
				 * first and last.  (Not a bound: as a prefix upper bound
				 * [0x01] is looser than any value, though it compares
				 * smaller.)
				 */
				notnull = true;
				k->implied = true;
				continue;
			}
			if (k->kind == LSM_SK_ARRAY)
			{
				/* between its first and last element (checked per entry) */
				const uint8 *f = k->elems[0];
				const uint8 *l = k->elems[k->nelems - 1];
				int			fl = k->elemlens[0];
				int			ll = k->elemlens[k->nelems - 1];

				if (!loseg || LsmCompareSegments(f, fl, loseg, lolen) > 0)
					loseg = f, lolen = fl, lokey = k;
				if (!hiseg || LsmCompareSegments(l, ll, hiseg, hilen) < 0)
					hiseg = l, hilen = ll, hikey = k;
				continue;
			}
			lower_in_index = LsmIsLowerStrategy(k->strategy) != so->desc.cols[col].desc;
			if (lower_in_index)
			{
				if (!loseg || LsmCompareSegments(k->seg, k->seglen, loseg, lolen) > 0)
					loseg = k->seg, lolen = k->seglen, lokey = k;
			}
			else
			{
				if (!hiseg || LsmCompareSegments(k->seg, k->seglen, hiseg, hilen) < 0)
					hiseg = k->seg, hilen = k->seglen, hikey = k;
			}
		}
		break;
	}

	/*
	 * A bound set by a non-strict comparison decides it exactly for non-null
	 * values, segments being prefix-free (doc/impl.md, "Per-entry work"): an
	 * entry is >= prefix + seg iff its column's segment is >= seg, and its
	 * first bytes are <= prefix + seg iff that segment is <= seg.  A strict
	 * one admits the equal segment (excluded below).  A comparison (and IS NOT NULL)
	 * is false for NULL, which a one-sided range admits: such keys leave the
	 * check of the column's flag byte, right after the prefix
	 * (nullflag_off).  The range is not narrowed to [0x01] instead: a scan
	 * would then stop silently at a damaged flag byte rather than report it.
	 */
	if (lokey && lokey->kind == LSM_SK_COMPARE &&
		(lokey->strategy == BTGreaterEqualStrategyNumber ||
		 lokey->strategy == BTLessEqualStrategyNumber))
		lokey->implied = true;
	if (hikey && hikey->kind == LSM_SK_COMPARE &&
		(hikey->strategy == BTGreaterEqualStrategyNumber ||
		 hikey->strategy == BTLessEqualStrategyNumber))
		hikey->implied = true;

	/*
	 * A strict one is decided by the range too, less the entries equal to
	 * its bound: those begin with the bound's bytes (LsmEntryAtStrictBound),
	 * one memcmp per entry instead of splitting it and comparing the column.
	 */
	if (lokey && lokey->kind == LSM_SK_COMPARE &&
		(lokey->strategy == BTGreaterStrategyNumber ||
		 lokey->strategy == BTLessStrategyNumber))
		lokey->implied = lostrict = true;
	if (hikey && hikey->kind == LSM_SK_COMPARE &&
		(hikey->strategy == BTGreaterStrategyNumber ||
		 hikey->strategy == BTLessStrategyNumber))
		hikey->implied = histrict = true;
	so->nullflag_off = -1;
	if (notnull || (lokey && lokey->implied) || (hikey && hikey->implied))
		so->nullflag_off = prefix.len;
	so->ncheck = 0;
	for (int i = 0; i < so->nkeys; i++)
		so->ncheck += so->keys[i].implied ? 0 : 1;
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
	if (lostrict)
	{
		so->exlo = so->range.lo;
		so->exlolen = so->range.lolen;
	}
	if (histrict)
	{
		so->exhi = so->range.hi;
		so->exhilen = so->range.hilen;
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

	if (so->ncheck == 0)
	{
		/* the range decides every key: only the entry's shape is checked */
		if (!LsmEntryWellFormed(&so->former, &so->desc, key, len))
			LsmScanReportMalformed(scan, key, len);
		if (so->nullflag_off >= 0 && key[so->nullflag_off] != LSM_FLAG_NOT_NULL)
			return false;
		if (LsmEntryAtStrictBound(so, key, len))
			return false;
		LsmEntryGetTid(key, len, tid);
		return true;
	}
	if (!LsmSplitEntry(&so->desc, key, len, seg, seglen, tid))
		LsmScanReportMalformed(scan, key, len);
	if (so->nullflag_off >= 0 && key[so->nullflag_off] != LSM_FLAG_NOT_NULL)
		return false;
	if (LsmEntryAtStrictBound(so, key, len))
		return false;

	for (int i = 0; i < so->nkeys; i++)
	{
		LsmScanKeyInfo *k = &so->keys[i];
		const uint8 *s = seg[k->col];
		int			c;

		if (k->implied)
			continue;

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
			case LSM_SK_ARRAY:
				{
					int			lo = 0,
								hi = k->nelems - 1;
					bool		found = false;

					if (s[0] != LSM_FLAG_NOT_NULL)
						return false;
					while (lo <= hi)
					{
						int			mid = lo + (hi - lo) / 2;

						c = LsmCompareSegments(s, seglen[k->col], k->elems[mid],
											   k->elemlens[mid]);
						if (c == 0)
						{
							found = true;
							break;
						}
						if (c < 0)
							hi = mid - 1;
						else
							lo = mid + 1;
					}
					if (!found)
						return false;
					continue;
				}
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
