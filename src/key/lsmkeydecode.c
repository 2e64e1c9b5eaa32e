/*
 * lsmkeydecode.c — reading encoded entries back: segment boundaries, the
 * heap TID, the original values (index-only scans), and text for error
 * messages.  The encodings: lsmkey.c, lsmkey.h.
 */
#include "postgres.h"

#include <math.h>

#include "access/detoast.h"
#include "access/htup_details.h"
#include "access/tupmacs.h"
#include "catalog/pg_collation.h"
#include "catalog/pg_type.h"
#include "common/int128.h"
#include "mb/pg_wchar.h"
#include "utils/builtins.h"
#include "utils/date.h"
#include "utils/lsyscache.h"
#include "utils/numeric.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"
#include "utils/uuid.h"

#include "core/lsm_core.h"
#include "lsm_compat.h"
#include "key/lsmkey.h"

static inline uint64
LsmReadBE64(const uint8 *p)
{
	uint64		v = 0;
	int			i;

	for (i = 0; i < 8; i++)
		v = (v << 8) | p[i];
	return v;
}

static inline uint32
LsmReadBE32(const uint8 *p)
{
	return ((uint32) p[0] << 24) | ((uint32) p[1] << 16) |
		((uint32) p[2] << 8) | (uint32) p[3];
}

static inline int64
LsmReadInt64(const uint8 *p)
{
	return (int64) (LsmReadBE64(p) ^ (UINT64CONST(1) << 63));
}

/*
 * Length of an escaped string (terminator included) at p, of at most len
 * bytes, whose bytes are XORed with x (0xFF for DESC columns).  -1 if it is
 * malformed or runs past len.  *rawlen gets the unescaped length.
 */
static int
LsmScanEscaped(const uint8 *p, int len, uint8 x, int *rawlen)
{
	int			i = 0;
	int			n = 0;

	while (i < len)
	{
		if ((uint8) (p[i] ^ x) != 0)
		{
			i++;
			n++;
			continue;
		}
		if (i + 1 >= len)
			return -1;
		switch ((uint8) (p[i + 1] ^ x))
		{
			case LSM_TERM_BYTE:
				if (rawlen)
					*rawlen = n;
				return i + 2;
			case LSM_ESC_BYTE:
				i += 2;
				n++;
				break;
			default:
				return -1;
		}
	}
	return -1;
}

/* Unescape a string validated by LsmScanEscaped (XOR already undone). */
static void
LsmUnescape(const uint8 *p, int enclen, char *out)
{
	int			i = 0;

	while (i < enclen - 2)
	{
		*out++ = (char) p[i];
		i += (p[i] == 0) ? 2 : 1;
	}
}

/*
 * Length of a numeric encoding at p (bytes XORed with x), -1 if malformed.
 */
static int
LsmScanNumeric(const uint8 *p, int len, uint8 x)
{
	uint8		cls;
	uint8		nx;
	int			i;

	if (len < 1)
		return -1;
	cls = p[0] ^ x;
	if (cls == LSM_NUM_NEG_INF || cls == LSM_NUM_ZERO ||
		cls == LSM_NUM_POS_INF || cls == LSM_NUM_NAN)
		return 1;
	if (cls != LSM_NUM_NEG && cls != LSM_NUM_POS)
		return -1;
	nx = x ^ ((cls == LSM_NUM_NEG) ? 0xFF : 0x00);
	for (i = 5; i < len; i++)
	{
		uint8		b = p[i] ^ nx;

		if (b == 0)
			return i + 1;
		if (b > 100)
			return -1;
	}
	return -1;
}

/* Length of an ICU sort key at p including its 0x00 (XORed with x), or -1. */
static int
LsmScanSortKey(const uint8 *p, int len, uint8 x)
{
	int			i;

	for (i = 0; i < len; i++)
	{
		if (p[i] == x)
			return i + 1;
	}
	return -1;
}

/*
 * Is the value v (fixed-size encoding, bytes XORed with x) one the column's
 * type can hold?  An int2 or int4 column stores an int64 encoding and a bool
 * one byte: bytes no value of the type encodes to would decode to a wrong
 * value (truncated), so they make the entry malformed.
 */
static bool
LsmFixedValueValid(const LsmKeyColumn *col, const uint8 *v, uint8 x)
{
	if (col->enc == LSM_ENC_BOOL)
		return (uint8) (v[0] ^ x) <= 1;
	if (col->enc == LSM_ENC_INT && (col->typid == INT2OID || col->typid == INT4OID))
	{
		uint8		b[8];
		int64		i;

		for (int j = 0; j < 8; j++)
			b[j] = v[j] ^ x;
		i = LsmReadInt64(b);
		return col->typid == INT2OID ? (i >= PG_INT16_MIN && i <= PG_INT16_MAX) :
			(i >= PG_INT32_MIN && i <= PG_INT32_MAX);
	}
	return true;
}

/*
 * Length of column col's segment at p (at most len bytes), or -1 if it is
 * malformed.
 */
static int
LsmSegmentLength(const LsmKeyColumn *col, const uint8 *p, int len)
{
	uint8		x = col->desc ? 0xFF : 0x00;
	const uint8 *v = p + 1;
	int			vlen = len - 1;
	int			n;
	int			fixed;

	if (len < 1)
		return -1;
	if (p[0] == (col->nulls_first ? LSM_FLAG_NULL_FIRST : LSM_FLAG_NULL_LAST))
		return 1;
	if (p[0] != LSM_FLAG_NOT_NULL)
		return -1;

	switch (col->enc)
	{
		case LSM_ENC_INT:
		case LSM_ENC_FLOAT:
		case LSM_ENC_TIME:
		case LSM_ENC_TIMESTAMP:
			fixed = 8;
			break;
		case LSM_ENC_BOOL:
			fixed = 1;
			break;
		case LSM_ENC_DATE:
			fixed = 4;
			break;
		case LSM_ENC_INTERVAL:
		case LSM_ENC_UUID:
			fixed = 16;
			break;
		case LSM_ENC_NUMERIC:
			n = LsmScanNumeric(v, vlen, x);
			return (n < 0) ? -1 : n + 1;
		case LSM_ENC_TEXT_C:
		case LSM_ENC_BYTEA:
			n = LsmScanEscaped(v, vlen, x, NULL);
			return (n < 0) ? -1 : n + 1;
		case LSM_ENC_TEXT_ICU:
			{
				int			k = LsmScanSortKey(v, vlen, x);

				if (k < 0)
					return -1;
				n = LsmScanEscaped(v + k, vlen - k, x, NULL);
				return (n < 0) ? -1 : k + n + 1;
			}
		case LSM_ENC_TEXT_ICU_ND:
			n = LsmScanSortKey(v, vlen, x);
			return (n < 0) ? -1 : n + 1;
		default:
			return -1;
	}
	if (vlen < fixed || !LsmFixedValueValid(col, v, x))
		return -1;
	return fixed + 1;
}

/* A LevelDB varint32 of at most avail bytes; returns its length or -1. */
static int
LsmReadVarint(const uint8 *p, int avail, uint32 *v)
{
	uint32		r = 0;

	for (int i = 0; i < 5 && i < avail; i++)
	{
		r |= (uint32) (p[i] & 0x7F) << (7 * i);
		if ((p[i] & 0x80) == 0)
		{
			*v = r;
			return i + 1;
		}
	}
	return -1;
}

/* Layout and checks: lsmkey.h, LsmAppendIncluded (lsmkey.c). */
int
LsmIncludedLength(const LsmIncludeColumn *inc, const uint8 *p, int avail,
				  int *vstart, int *vlen)
{
	uint32		n;
	int			h;

	if (avail < 1)
		return -1;
	if (p[0] == LSM_INCL_NULL)
		return 1;
	if (p[0] != LSM_INCL_VALUE)
		return -1;
	if (inc->attlen > 0)
	{
		if (avail - 1 < inc->attlen)
			return -1;
		*vstart = 1;
		*vlen = inc->attlen;
		return 1 + inc->attlen;
	}
	if (inc->attlen == -1)
	{
		union
		{
			uint64		word;	/* as large as varattrib_4b */
			char		b[8];
		}			hdr;

		if (avail < 2)
			return -1;
		hdr.b[0] = (char) p[1];
		if (VARATT_IS_1B(hdr.b))
		{
			/* a 1-byte header (never the external pointer's 0x01 / 0x80) */
			if (!inc->packable || VARATT_IS_1B_E(hdr.b))
				return -1;
			n = VARSIZE_1B(hdr.b);
			if (n < VARHDRSZ_SHORT)
				return -1;
		}
		else
		{
			if (avail < 5)
				return -1;
			memcpy(hdr.b, p + 1, 4);
			if (!VARATT_IS_4B_U(hdr.b))
				return -1;
			n = VARSIZE_4B(hdr.b);
			if (n < VARHDRSZ)
				return -1;
			/* the encoder gives a 1-byte header to what fits one */
			if (inc->packable && n - VARHDRSZ + VARHDRSZ_SHORT <= VARATT_SHORT_MAX)
				return -1;
		}
		if (n > (uint32) (avail - 1))
			return -1;
		*vstart = 1;
		*vlen = (int) n;
		return 1 + (int) n;
	}
	h = LsmReadVarint(p + 1, avail - 1, &n);
	if (h < 0 || n > (uint32) (avail - 1 - h))
		return -1;
	/* the shortest varint; no zero byte inside a cstring */
	if (h > 1 && (p[h] & 0x7F) == 0)
		return -1;
	if (memchr(p + 1 + h, 0, n) != NULL)
		return -1;
	*vstart = 1 + h;
	*vlen = (int) n;
	return 1 + h + (int) n;
}

bool
LsmSplitEntry(const LsmKeyDesc *desc, const uint8 *entry, int len,
			  const uint8 **seg, int *seglen, ItemPointer tid)
{
	int			pos = 0;
	int			i;

	if (entry == NULL || len < LSM_TID_SIZE)
		return false;
	for (i = 0; i < desc->ncols; i++)
	{
		int			n = LsmSegmentLength(&desc->cols[i], entry + pos,
										 len - LSM_TID_SIZE - pos);

		if (n < 0)
			return false;
		if (seg)
			seg[i] = entry + pos;
		if (seglen)
			seglen[i] = n;
		pos += n;
	}
	for (i = 0; i < desc->ninclude; i++)
	{
		int			vstart,
					vlen;
		int			n = LsmIncludedLength(&desc->incl[i], entry + pos,
										  len - LSM_TID_SIZE - pos, &vstart, &vlen);

		if (n < 0)
			return false;
		pos += n;
	}
	if (pos != len - LSM_TID_SIZE)
		return false;
	if (tid)
		LsmEntryGetTid(entry, len, tid);
	return true;
}

int
LsmEntryKeyLength(const LsmKeyDesc *desc, const uint8 *entry, int len)
{
	const uint8 *seg[INDEX_MAX_KEYS];
	int			seglen[INDEX_MAX_KEYS];

	if (desc->ninclude == 0)
		return len >= LSM_TID_SIZE ? len - LSM_TID_SIZE : -1;
	if (!LsmSplitEntry(desc, entry, len, seg, seglen, NULL))
		return -1;
	return (int) (seg[desc->ncols - 1] + seglen[desc->ncols - 1] - entry);
}

/*
 * Datum of an INCLUDE value's bytes v (validated by LsmIncludedLength):
 * fixed-length by-reference values and 1-byte-header varlenas point at v
 * (no alignment needed), 4-byte-header varlenas are copied (aligned).
 */
static Datum
LsmDecodeIncluded(const LsmIncludeColumn *inc, const uint8 *v, int vlen)
{
	if (inc->attlen > 0 && inc->attbyval)
	{
		/* through typed copies: the bytes may sit anywhere */
		switch (inc->attlen)
		{
			case sizeof(char):
				return CharGetDatum((char) v[0]);
			case sizeof(int16):
				{
					int16		x;

					memcpy(&x, v, sizeof(x));
					return Int16GetDatum(x);
				}
			case sizeof(int32):
				{
					int32		x;

					memcpy(&x, v, sizeof(x));
					return Int32GetDatum(x);
				}
			case sizeof(Datum):
				{
					Datum		x;

					memcpy(&x, v, sizeof(x));
					return x;
				}
			default:
				elog(ERROR, "lsm_am: unsupported by-value length %d", inc->attlen);
		}
	}
	if (inc->attlen > 0 || (inc->attlen == -1 && VARATT_IS_1B(v)))
		return PointerGetDatum(v);
	if (inc->attlen == -1)
	{
		struct varlena *r = (struct varlena *) palloc(vlen);

		memcpy(r, v, vlen);
		return PointerGetDatum(r);
	}
	else
	{
		char	   *c = palloc(vlen + 1);

		memcpy(c, v, vlen);
		c[vlen] = '\0';
		return CStringGetDatum(c);
	}
}

/* Datum of a (validated, un-inverted) value encoding v of length vlen. */
static Datum
LsmDecodeValue(const LsmKeyColumn *col, const uint8 *v, int vlen)
{
	switch (col->enc)
	{
		case LSM_ENC_INT:
			{
				int64		i = LsmReadInt64(v);

				if (col->typid == INT2OID)
					return Int16GetDatum((int16) i);
				if (col->typid == INT4OID)
					return Int32GetDatum((int32) i);
				return Int64GetDatum(i);
			}
		case LSM_ENC_BOOL:
			return BoolGetDatum(v[0] != 0);
		case LSM_ENC_DATE:
			return DateADTGetDatum((DateADT) (LsmReadBE32(v) ^ 0x80000000));
		case LSM_ENC_TIME:
			return TimeADTGetDatum(LsmReadInt64(v));
		case LSM_ENC_TIMESTAMP:
			return TimestampGetDatum(LsmReadInt64(v));
		case LSM_ENC_UUID:
			{
				pg_uuid_t  *u = palloc(sizeof(pg_uuid_t));

				memcpy(u->data, v, UUID_LEN);
				return UUIDPGetDatum(u);
			}
		case LSM_ENC_TEXT_C:
		case LSM_ENC_TEXT_ICU:
		case LSM_ENC_BYTEA:
			{
				int			k = 0;
				int			rawlen;
				int			enclen;
				struct varlena *r;

				if (col->enc == LSM_ENC_TEXT_ICU)
					k = LsmScanSortKey(v, vlen, 0);
				enclen = LsmScanEscaped(v + k, vlen - k, 0, &rawlen);
				Assert(k >= 0 && enclen == vlen - k);
				r = (struct varlena *) palloc(VARHDRSZ + rawlen);
				SET_VARSIZE(r, VARHDRSZ + rawlen);
				LsmUnescape(v + k, enclen, VARDATA(r));
				return PointerGetDatum(r);
			}
		default:
			elog(ERROR, "lsm encoding %d cannot be decoded", (int) col->enc);
	}
	return (Datum) 0;			/* keep compiler quiet */
}

void
LsmDecodeEntry(const LsmKeyDesc *desc, const uint8 *entry, int len,
			   Datum *values, bool *isnull)
{
	const uint8 *seg[INDEX_MAX_KEYS];
	int			seglen[INDEX_MAX_KEYS];
	int			i;

	if (!LsmSplitEntry(desc, entry, len, seg, seglen, NULL))
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("malformed lsm index entry %s", LsmKeyToHex(entry, len))));

	for (i = 0; i < desc->ncols; i++)
	{
		const LsmKeyColumn *col = &desc->cols[i];

		values[i] = (Datum) 0;
		isnull[i] = true;
		if (seg[i][0] != LSM_FLAG_NOT_NULL || !col->invertible)
			continue;
		if (col->desc)
		{
			int			n = seglen[i] - 1;
			uint8	   *tmp = palloc(n);
			int			j;

			for (j = 0; j < n; j++)
				tmp[j] = (uint8) ~seg[i][1 + j];
			values[i] = LsmDecodeValue(col, tmp, n);
			pfree(tmp);
		}
		else
			values[i] = LsmDecodeValue(col, seg[i] + 1, seglen[i] - 1);
		isnull[i] = false;
	}
	if (desc->ninclude > 0)
	{
		const uint8 *p = seg[desc->ncols - 1] + seglen[desc->ncols - 1];

		for (i = 0; i < desc->ninclude; i++)
		{
			int			vstart = 0,
						vlen = 0;
			int			n = LsmIncludedLength(&desc->incl[i], p, INT_MAX,
											  &vstart, &vlen);

			/* validated by LsmSplitEntry above */
			isnull[desc->ncols + i] = (p[0] == LSM_INCL_NULL);
			values[desc->ncols + i] = isnull[desc->ncols + i] ? (Datum) 0 :
				LsmDecodeIncluded(&desc->incl[i], p + vstart, vlen);
			p += n;
		}
	}
}

int
LsmCompareSegments(const uint8 *a, int alen, const uint8 *b, int blen)
{
	int			r = memcmp(a, b, Min(alen, blen));

	if (r != 0)
		return (r < 0) ? -1 : 1;
	return (alen < blen) ? -1 : (alen > blen) ? 1 : 0;
}

char *
LsmKeyToHex(const uint8 *key, int len)
{
	static const char hex[] = "0123456789abcdef";
	char	   *s = palloc(2 * (Size) len + 1);
	int			i;

	for (i = 0; i < len; i++)
	{
		s[2 * i] = hex[key[i] >> 4];
		s[2 * i + 1] = hex[key[i] & 0x0F];
	}
	s[2 * len] = '\0';
	return s;
}
