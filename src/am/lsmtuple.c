/*
 * lsmtuple.c — per-entry fast paths of a scan: checking an entry's shape and
 * rebuilding the index tuple of an index-only scan.
 *
 * The general path (lsmscan.c, lsmscankeys.c) splits an entry with LsmSplitEntry, decodes
 * every column into a Datum and calls index_form_tuple, which pallocs a new
 * tuple per entry.  When every column has a fixed-width encoding (integers,
 * floats, bool, date, time, timestamps, interval, uuid), an entry's segments
 * are found by walking its flag bytes, and an entry without NULLs maps onto
 * one tuple layout: its values are decoded straight into one preallocated
 * tuple.  Entries with NULLs, and other types, take the general path.
 * Owns the reused tuple (allocated with the scan, lsmbeginscan).
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/tupmacs.h"
#include "catalog/pg_type_d.h"
#include "port/pg_bswap.h"
#include "utils/date.h"

#include "am/lsmscan_int.h"

/* Value bytes of a fixed-width encoding, or -1. */
static int
LsmFixedWidth(LsmEncoding enc)
{
	switch (enc)
	{
		case LSM_ENC_BOOL:
			return 1;
		case LSM_ENC_DATE:
			return 4;
		case LSM_ENC_INT:
		case LSM_ENC_FLOAT:
		case LSM_ENC_TIME:
		case LSM_ENC_TIMESTAMP:
			return 8;
		case LSM_ENC_INTERVAL:
		case LSM_ENC_UUID:
			return 16;
		default:
			return -1;
	}
}

/* Length of the attribute the fast path writes for col, or -1 if none. */
static int
LsmFastAttLen(const LsmKeyColumn *col)
{
	if (!col->invertible)
		return -1;
	switch (col->enc)
	{
		case LSM_ENC_INT:
			return col->typid == INT2OID ? 2 : col->typid == INT4OID ? 4 : 8;
		case LSM_ENC_BOOL:
			return 1;
		case LSM_ENC_DATE:
			return 4;
		case LSM_ENC_TIME:
		case LSM_ENC_TIMESTAMP:
			return 8;
		case LSM_ENC_UUID:
			return 16;
		default:
			return -1;
	}
}

void
LsmTupleFormerInit(LsmTupleFormer *f, Relation index, const LsmKeyDesc *desc)
{
	TupleDesc	tupdesc = RelationGetDescr(index);
	Size		hoff = IndexInfoFindDataOffset(0);
	Size		off = 0;
	Size		size;
	bool		keysfast = true;	/* key columns map onto fixed attributes */

	memset(f, 0, sizeof(*f));
	f->cxt = CurrentMemoryContext;
	f->ncols = desc->ncols;
	f->fixed = true;
	f->entrylen = LSM_TID_SIZE;
	for (int i = 0; i < desc->ncols; i++)
	{
		const LsmKeyColumn *col = &desc->cols[i];
		Form_pg_attribute att = TupleDescAttr(tupdesc, Min(i, tupdesc->natts - 1));
		int			attlen = LsmFastAttLen(col);

		f->vlen[i] = LsmFixedWidth(col->enc);
		f->nullflag[i] = col->nulls_first ? LSM_FLAG_NULL_FIRST : LSM_FLAG_NULL_LAST;
		if (f->vlen[i] < 0)
		{
			f->fixed = keysfast = false;
			break;
		}
		f->entrylen += 1 + f->vlen[i];
		/* by value up to 8 bytes, uuid by reference */
		if (attlen < 0 || att->attlen != attlen || att->attbyval != (attlen <= 8))
			keysfast = false;
		if (keysfast)
		{
			off = att_align_nominal(off, att->attalign);
			f->off[i] = (int) off;
			off += attlen;
		}
	}

	if (desc->ninclude > 0)
	{
		/*
		 * INCLUDE values make the entry's length vary: no flag-byte walk and
		 * no fixed layout; with fixed key columns, LsmFormTupleInclude copies
		 * the values after them into a tuple sized for the largest entry.
		 */
		f->fixed = false;
		if (keysfast)
		{
			f->ifast = true;
			f->keysend = (int) off;
			f->tupdesc = tupdesc;
			f->isize = MAXALIGN(hoff + LSM_MAX_KEY_SIZE +
								(Size) tupdesc->natts * MAXIMUM_ALIGNOF);
			f->itup = (IndexTuple) palloc0(f->isize);
			/* fixed-length INCLUDE values: their offsets, computed once */
			f->ifixed = true;
			f->ientrylen = f->entrylen;
			for (int i = 0; i < desc->ninclude && f->ifixed; i++)
			{
				Form_pg_attribute att = TupleDescAttr(tupdesc, desc->ncols + i);

				if (desc->incl[i].attlen <= 0 || att->attlen != desc->incl[i].attlen)
					f->ifixed = false;
				else
				{
					off = att_align_nominal(off, att->attalign);
					f->ioff[i] = (int) off;
					off += att->attlen;
					f->ientrylen += 1 + att->attlen;
				}
			}
			size = MAXALIGN(hoff + off);
			if (f->ifixed && size <= f->isize && (size & INDEX_SIZE_MASK) == size)
				f->iinfo = (unsigned short) size;
			else
				f->ifixed = false;
		}
		return;
	}
	f->fast = f->fixed && keysfast && tupdesc->natts == desc->ncols;
	if (!f->fast)
		return;
	size = MAXALIGN(hoff + off);
	if ((size & INDEX_SIZE_MASK) != size)
	{
		f->fast = false;
		return;
	}
	f->tup = (IndexTuple) palloc0(size);
	f->tup->t_info = (unsigned short) size;
}

/* The fixed-width key columns' segments from p: the position after them, or NULL. */
static const uint8 *
LsmWalkFixedKeys(const LsmTupleFormer *f, const uint8 *p, const uint8 *end)
{
	for (int i = 0; i < f->ncols; i++)
	{
		if (p >= end)
			return NULL;
		if (p[0] == LSM_FLAG_NOT_NULL)
			p += 1 + f->vlen[i];
		else if (p[0] == f->nullflag[i])
			p += 1;
		else
			return NULL;
	}
	return p <= end ? p : NULL;
}

bool
LsmEntryWellFormed(const LsmTupleFormer *f, const LsmKeyDesc *desc,
				   const uint8 *entry, int len)
{
	const uint8 *p;
	const uint8 *end = entry + len - LSM_TID_SIZE;

	if (!f->fixed && !f->ifast)
		return LsmSplitEntry(desc, entry, len, NULL, NULL, NULL);
	if (entry == NULL || len < LSM_TID_SIZE)
		return false;
	if (f->fixed && len == f->entrylen)
		return LsmEntryAllNotNull(f, entry);	/* no NULLs: only the flags */
	p = LsmWalkFixedKeys(f, entry, end);
	if (p == NULL)
		return false;
	/* INCLUDE values after fixed-width keys (f->ifast) */
	for (int i = 0; i < desc->ninclude && f->ifast; i++)
	{
		int			vstart,
					vlen;
		int			n = LsmIncludedLength(&desc->incl[i], p, (int) (end - p),
										  &vstart, &vlen);

		if (n < 0)
			return false;
		p += n;
	}
	return p == end;
}

static inline uint64
LsmLoadBE64(const uint8 *p)
{
	uint64		v;

	memcpy(&v, p, sizeof(v));
	return pg_ntoh64(v);
}

/*
 * Decode the fixed-width key columns of entry into data at f->off[]; the
 * position after them, or NULL (a NULL column, a value out of its type's
 * range: the general path decides).
 */
static const uint8 *
LsmFillFixedKeys(const LsmTupleFormer *f, const LsmKeyDesc *desc,
				 const uint8 *entry, char *data)
{
	const uint8 *p = entry;

	for (int i = 0; i < f->ncols; i++)
	{
		const LsmKeyColumn *col = &desc->cols[i];
		const uint8 *v = p + 1;
		uint8		inv[16];
		char	   *dst = data + f->off[i];

		if (p[0] != LSM_FLAG_NOT_NULL)
			return NULL;
		if (col->desc)
		{
			for (int j = 0; j < f->vlen[i]; j++)
				inv[j] = (uint8) ~v[j];
			v = inv;
		}
		switch (col->enc)
		{
			case LSM_ENC_INT:
				{
					int64		x = (int64) (LsmLoadBE64(v) ^ (UINT64CONST(1) << 63));

					/* out of the type's range: the general path refuses it */
					if (col->typid == INT2OID)
					{
						if (x < PG_INT16_MIN || x > PG_INT16_MAX)
							return NULL;
						store_att_byval(dst, Int16GetDatum((int16) x), 2);
					}
					else if (col->typid == INT4OID)
					{
						if (x < PG_INT32_MIN || x > PG_INT32_MAX)
							return NULL;
						store_att_byval(dst, Int32GetDatum((int32) x), 4);
					}
					else
						store_att_byval(dst, Int64GetDatum(x), 8);
					break;
				}
			case LSM_ENC_BOOL:
				if (v[0] > 1)
					return NULL;	/* not a bool: the general path refuses it */
				store_att_byval(dst, BoolGetDatum(v[0] != 0), 1);
				break;
			case LSM_ENC_DATE:
				{
					uint32		x = ((uint32) v[0] << 24) | ((uint32) v[1] << 16) |
						((uint32) v[2] << 8) | (uint32) v[3];

					store_att_byval(dst, DateADTGetDatum((DateADT) (x ^ 0x80000000)), 4);
					break;
				}
			case LSM_ENC_TIME:
			case LSM_ENC_TIMESTAMP:
				store_att_byval(dst,
								Int64GetDatum((int64) (LsmLoadBE64(v) ^ (UINT64CONST(1) << 63))),
								8);
				break;
			case LSM_ENC_UUID:
				memcpy(dst, v, 16);
				break;
			default:
				return NULL;	/* not reached: f->fast checked the encodings */
		}
		p += 1 + f->vlen[i];
	}
	return p;
}

IndexTuple
LsmFormTupleFast(LsmTupleFormer *f, const LsmKeyDesc *desc,
				 const uint8 *entry, int len)
{
	if (!f->fast || len != f->entrylen)
		return NULL;
	if (LsmFillFixedKeys(f, desc, entry,
						 (char *) f->tup + IndexInfoFindDataOffset(0)) == NULL)
		return NULL;
	return f->tup;
}

IndexTuple
LsmFormTupleInclude(LsmTupleFormer *f, const LsmKeyDesc *desc,
					const uint8 *entry, int len)
{
	Size		hoff = IndexInfoFindDataOffset(0);
	char	   *data;
	const uint8 *p;
	const uint8 *end = entry + len - LSM_TID_SIZE;
	Size		off;
	Size		size;
	unsigned short infomask = 0;

	if (!f->ifast || len < f->entrylen)
		return NULL;
	data = (char *) f->itup + hoff;
	p = LsmFillFixedKeys(f, desc, entry, data);
	if (p == NULL)
		return NULL;
	if (f->ifixed)
	{
		/*
		 * One layout: the values to their offsets, the padding between
		 * them never written (zero since palloc0).  A NULL or a malformed
		 * flag byte: the general path.
		 */
		if (len != f->ientrylen)
			return NULL;
		for (int i = 0; i < desc->ninclude; i++)
		{
			int			n = desc->incl[i].attlen;

			if (p[0] != LSM_INCL_VALUE)
				return NULL;
			memcpy(data + f->ioff[i], p + 1, n);
			p += 1 + n;
		}
		f->itup->t_info = f->iinfo;
		return f->itup;
	}
	off = f->keysend;
	for (int i = 0; i < desc->ninclude; i++)
	{
		const LsmIncludeColumn *inc = &desc->incl[i];
		Form_pg_attribute att = TupleDescAttr(f->tupdesc, desc->ncols + i);
		int			vstart = 0,
					vlen = 0;
		int			n = LsmIncludedLength(inc, p, (int) (end - p), &vstart, &vlen);
		const uint8 *v = p + vstart;
		Size		aligned;

		/* malformed, a NULL (a bitmap) or a cstring: the general path */
		if (n < 0 || p[0] != LSM_INCL_VALUE || inc->attlen == -2)
			return NULL;
		if (inc->attlen == -1)
			infomask |= INDEX_VAR_MASK;
		/* a 1-byte-header varlena is not aligned (heap_fill_tuple's rule) */
		aligned = (inc->attlen == -1 && VARATT_IS_1B(v)) ? off :
			att_align_nominal(off, att->attalign);
		if (aligned > off)
			memset(data + off, 0, aligned - off);
		memcpy(data + aligned, v, vlen);
		off = aligned + vlen;
		p += n;
	}
	if (p != end)
		return NULL;
	size = MAXALIGN(hoff + off);
	Assert(size <= f->isize);
	if (size > hoff + off)
		memset(data + off, 0, size - (hoff + off));
	f->itup->t_info = infomask | (unsigned short) size;
	return f->itup;
}

IndexTuple
LsmFormTupleGeneral(LsmTupleFormer *f, TupleDesc tupdesc,
					const Datum *values, const bool *isnull)
{
	bool		hasnull = false;
	Size		hoff;
	Size		data_size;
	Size		size;
	uint16		tupmask = 0;
	unsigned short infomask = 0;

	for (int i = 0; i < tupdesc->natts; i++)
		if (isnull[i])
			hasnull = true;
	hoff = IndexInfoFindDataOffset(hasnull ? INDEX_NULL_MASK : 0);
	data_size = heap_compute_data_size(tupdesc, (Datum *) values, (bool *) isnull);
	size = MAXALIGN(hoff + data_size);
	if ((size & INDEX_SIZE_MASK) != size)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("index row requires %zu bytes, maximum size is %zu",
						size, (Size) INDEX_SIZE_MASK)));
	if (size > f->gsize)
	{
		if (f->gtup)
			pfree(f->gtup);
		f->gsize = Max(size, 256);
		f->gtup = (IndexTuple) MemoryContextAlloc(f->cxt, f->gsize);
	}
	memset(f->gtup, 0, size);
	heap_fill_tuple(tupdesc, (Datum *) values, (bool *) isnull,
					(char *) f->gtup + hoff, data_size, &tupmask,
					hasnull ? (bits8 *) f->gtup + sizeof(IndexTupleData) : NULL);
	if (hasnull)
		infomask |= INDEX_NULL_MASK;
	if (tupmask & HEAP_HASVARWIDTH)
		infomask |= INDEX_VAR_MASK;
	infomask |= size;
	f->gtup->t_info = infomask;
	return f->gtup;
}
