/*
 * lsmkey.c — order-preserving key encoding (datum -> bytes) for lsm indexes.
 *
 * Every index entry is a byte string whose memcmp order (shorter first on a
 * common prefix) is the order of the index's operator classes, so the C++
 * core never calls a PostgreSQL comparator.  Each column contributes a flag
 * byte and, when not NULL, a prefix-free value encoding; the heap TID ends
 * the entry.  Values that compare equal under the opclass encode to identical
 * bytes (1.0 and 1.00, -0.0 and 0.0, every NaN), so hashes of the bytes are
 * correct bloom-filter hashes.  Byte layouts: doc/page_format.md, "Key encoding".
 *
 * Text is the delicate case.  The encoding must reproduce varstr_cmp()
 * exactly, which only a few collations allow:
 *  - "C"/"POSIX" and libc C.UTF-8 (code-point order == UTF-8 byte order):
 *    the raw bytes;
 *  - deterministic ICU: the ICU sort key (compares like ucol_strcoll), then
 *    the raw bytes, reproducing varstr_cmp's strcmp() tie-break;
 *  - nondeterministic ICU: the sort key alone (equal strings are equal).
 * libc strxfrm() is not trusted by PostgreSQL itself (glibc bugs), so other
 * libc collations are refused with a hint.
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

static void LsmEncodeValue(const LsmKeyColumn *col, Datum value, Oid argtype,
						   StringInfo buf);


/* ------------------------------------------------------------------------
 * Fixed-width helpers
 * ------------------------------------------------------------------------ */

/* Append v big-endian. */
static inline void
LsmAppendBE64(StringInfo buf, uint64 v)
{
	uint8		b[8];
	int			i;

	for (i = 7; i >= 0; i--)
	{
		b[i] = (uint8) v;
		v >>= 8;
	}
	appendBinaryStringInfo(buf, (const char *) b, 8);
}

static inline void
LsmAppendBE32(StringInfo buf, uint32 v)
{
	uint8		b[4];

	b[0] = (uint8) (v >> 24);
	b[1] = (uint8) (v >> 16);
	b[2] = (uint8) (v >> 8);
	b[3] = (uint8) v;
	appendBinaryStringInfo(buf, (const char *) b, 4);
}

/* Signed integers: flip the sign bit so two's complement sorts as unsigned. */
static inline void
LsmAppendInt64(StringInfo buf, int64 v)
{
	LsmAppendBE64(buf, ((uint64) v) ^ (UINT64CONST(1) << 63));
}

/* Floats as float8: -0 -> +0, one NaN above +Infinity, sign-magnitude trick. */
static void
LsmAppendFloat8(StringInfo buf, float8 v)
{
	uint64		bits;

	if (isnan(v))
		bits = UINT64CONST(0x7FF8000000000000);
	else
	{
		if (v == 0.0)
			v = 0.0;			/* -0 == +0 */
		memcpy(&bits, &v, sizeof(bits));
	}
	if (bits & (UINT64CONST(1) << 63))
		bits = ~bits;			/* negative: larger magnitude sorts lower */
	else
		bits |= (UINT64CONST(1) << 63);
	LsmAppendBE64(buf, bits);
}

/* ------------------------------------------------------------------------
 * Variable-length byte strings
 * ------------------------------------------------------------------------ */

/* Append data escaped (0x00 -> 0x00 0xFF) and terminated (0x00 0x01). */
static void
LsmAppendEscaped(StringInfo buf, const char *data, int len)
{
	const char *p = data;
	const char *end = data + len;

	while (p < end)
	{
		const char *z = memchr(p, 0, end - p);

		if (z == NULL)
		{
			appendBinaryStringInfo(buf, p, end - p);
			break;
		}
		appendBinaryStringInfo(buf, p, z - p + 1);
		appendStringInfoCharMacro(buf, (char) LSM_ESC_BYTE);
		p = z + 1;
	}
	appendStringInfoCharMacro(buf, '\0');
	appendStringInfoCharMacro(buf, (char) LSM_TERM_BYTE);
}

/* ------------------------------------------------------------------------
 * numeric
 *
 * The digits are read straight from the on-disk NumericData layout (the
 * format every stored numeric has had since PostgreSQL 9.1 and 14's
 * infinities, fixed by pg_upgrade compatibility): a uint16 header; short
 * form (flag bits 10): sign 0x2000, weight in the low 7 bits (sign 0x0040);
 * special form (flag bits 11): 0xC000 NaN, 0xD000 +Inf, 0xF000 -Inf; long
 * form: flag bits 00 positive / 01 negative, then an int16 weight.  The
 * digits are int16 base-10000 groups; value = sum d[i] * 10000^(weight - i).
 * ------------------------------------------------------------------------ */
#define LSM_NUMERIC_SIGN_MASK	0xC000
#define LSM_NUMERIC_NEG			0x4000
#define LSM_NUMERIC_SHORT		0x8000
#define LSM_NUMERIC_SPECIAL		0xC000
#define LSM_NUMERIC_NAN			0xC000
#define LSM_NUMERIC_PINF		0xD000
#define LSM_NUMERIC_NINF		0xF000
#define LSM_NUMERIC_SHORT_SIGN	0x2000
#define LSM_NUMERIC_SHORT_WSIGN 0x0040
#define LSM_NUMERIC_SHORT_WMASK 0x003F
#define LSM_NBASE				10000

/*
 * Append the canonical encoding of a numeric: class byte, then for finite
 * nonzero values the decimal exponent E (value = 0.d1d2... * 10^E, d1 != 0)
 * as a sign-flipped big-endian int32, then the significant decimal digits
 * two per byte as (10*a + b + 1), trailing zeros stripped (an odd last digit
 * is paired with 0), then 0x00.  For negative values every byte after the
 * class byte is inverted.
 */
static void
LsmAppendNumeric(StringInfo buf, Datum value)
{
	Numeric		num = DatumGetNumeric(value);
	const char *raw = VARDATA(num);
	int			rawlen = VARSIZE(num) - VARHDRSZ;
	uint16		header;
	const int16 *digits;
	int			ndigits;
	int			weight;
	bool		neg;
	int			first,
				last;
	int			start;
	int			k;
	int			exponent;
	int			pending = -1;	/* unpaired decimal digit, -1 if none */
	int			nzero = 0;		/* decimal zeros not yet emitted */
	int			i;

	memcpy(&header, raw, sizeof(uint16));
	if ((header & LSM_NUMERIC_SIGN_MASK) == LSM_NUMERIC_SPECIAL)
	{
		if (header == LSM_NUMERIC_PINF)
			appendStringInfoCharMacro(buf, LSM_NUM_POS_INF);
		else if (header == LSM_NUMERIC_NINF)
			appendStringInfoCharMacro(buf, LSM_NUM_NEG_INF);
		else
		{
			Assert(header == LSM_NUMERIC_NAN);
			appendStringInfoCharMacro(buf, LSM_NUM_NAN);
		}
		return;
	}

	if ((header & LSM_NUMERIC_SIGN_MASK) == LSM_NUMERIC_SHORT)
	{
		neg = (header & LSM_NUMERIC_SHORT_SIGN) != 0;
		weight = (header & LSM_NUMERIC_SHORT_WMASK);
		if (header & LSM_NUMERIC_SHORT_WSIGN)
			weight |= ~LSM_NUMERIC_SHORT_WMASK;
		digits = (const int16 *) (raw + sizeof(uint16));
		ndigits = (rawlen - (int) sizeof(uint16)) / (int) sizeof(int16);
	}
	else
	{
		int16		w;

		neg = (header & LSM_NUMERIC_SIGN_MASK) == LSM_NUMERIC_NEG;
		memcpy(&w, raw + sizeof(uint16), sizeof(int16));
		weight = w;
		digits = (const int16 *) (raw + 2 * sizeof(uint16));
		ndigits = (rawlen - 2 * (int) sizeof(uint16)) / (int) sizeof(int16);
	}

	/* Skip leading and trailing zero groups (stored values have none). */
	first = 0;
	while (first < ndigits && digits[first] == 0)
		first++;
	last = ndigits - 1;
	while (last >= first && digits[last] == 0)
		last--;
	if (first > last)
	{
		appendStringInfoCharMacro(buf, LSM_NUM_ZERO);
		return;
	}
	weight -= first;

	appendStringInfoCharMacro(buf, neg ? LSM_NUM_NEG : LSM_NUM_POS);
	start = buf->len;

	/* Decimal digits in the first group. */
	k = (digits[first] >= 1000) ? 4 : (digits[first] >= 100) ? 3 :
		(digits[first] >= 10) ? 2 : 1;
	exponent = weight * 4 + k;
	LsmAppendBE32(buf, ((uint32) exponent) ^ 0x80000000);

	/*
	 * Emit the decimal digits, holding back runs of zeros so that trailing
	 * zeros are dropped: a zero run is only written once a nonzero digit
	 * follows it.
	 */
	for (i = first; i <= last; i++)
	{
		int			g = digits[i];
		int			nd = (i == first) ? k : 4;
		int			pow = (nd == 4) ? 1000 : (nd == 3) ? 100 : (nd == 2) ? 10 : 1;

		for (; pow > 0; pow /= 10)
		{
			int			d = (g / pow) % 10;

			if (d == 0)
			{
				nzero++;
				continue;
			}
			while (nzero > 0 || d >= 0)
			{
				int			cur;

				if (nzero > 0)
				{
					cur = 0;
					nzero--;
				}
				else
				{
					cur = d;
					d = -1;
				}
				if (pending < 0)
					pending = cur;
				else
				{
					appendStringInfoCharMacro(buf, (char) (pending * 10 + cur + 1));
					pending = -1;
				}
			}
		}
	}
	if (pending >= 0)
		appendStringInfoCharMacro(buf, (char) (pending * 10 + 1));
	appendStringInfoCharMacro(buf, '\0');

	if (neg)
	{
		for (i = start; i < buf->len; i++)
			buf->data[i] = (char) ~buf->data[i];
	}

	if ((Pointer) num != DatumGetPointer(value))
		pfree(num);
}

/* ------------------------------------------------------------------------
 * interval: the 128-bit span of interval_cmp_value() in timestamp.c
 * ------------------------------------------------------------------------ */
static void
LsmAppendInterval(StringInfo buf, const Interval *iv)
{
	INT128		span;
	int64		days;
	int64		hi;
	uint64		lo;

	days = iv->month * INT64CONST(30);
	days += iv->day;
	span = int64_to_int128(iv->time);
	int128_add_int64_mul_int64(&span, days, USECS_PER_DAY);

#if USE_NATIVE_INT128
	hi = (int64) (span >> 64);
	lo = (uint64) span;
#else
	hi = span.hi;
	lo = span.lo;
#endif
	LsmAppendInt64(buf, hi);
	LsmAppendBE64(buf, lo);
}

/* ------------------------------------------------------------------------
 * text
 * ------------------------------------------------------------------------ */

#ifdef USE_ICU
/* Append the ICU sort key of the string, its terminating 0x00 included. */
static void
LsmAppendIcuSortKey(StringInfo buf, pg_locale_t locale, const char *s, int len)
{
	int32		need;
	int			avail;

	/*
	 * Guess generously (sort keys are rarely longer than 4 bytes per input
	 * byte), capped so huge scan arguments do not over-allocate; retry with
	 * the exact length if the guess was short.
	 */
	enlargeStringInfo(buf, (int) Min((int64) len * 4 + 64, 1024 * 1024));
	avail = buf->maxlen - buf->len - 1;
	need = LsmIcuSortKey(locale, s, len, buf->data + buf->len, avail);
	if (need > avail)
	{
		enlargeStringInfo(buf, need);
		avail = buf->maxlen - buf->len - 1;
		need = LsmIcuSortKey(locale, s, len, buf->data + buf->len, avail);
		if (need > avail)
			elog(ERROR, "ICU sort key length changed between calls");
	}
	if (need <= 0)
		elog(ERROR, "ucol_getSortKey failed");
	/* need counts the terminating 0x00 */
	Assert(buf->data[buf->len + need - 1] == '\0');
	buf->len += need;
	buf->data[buf->len] = '\0';
}
#endif

static void
LsmAppendText(const LsmKeyColumn *col, Datum value, StringInfo buf)
{
	text	   *t = DatumGetTextPP(value);
	const char *s = VARDATA_ANY(t);
	int			len = VARSIZE_ANY_EXHDR(t);

	switch (col->enc)
	{
		case LSM_ENC_TEXT_C:
			LsmAppendEscaped(buf, s, len);
			break;
#ifdef USE_ICU
		case LSM_ENC_TEXT_ICU:
			LsmAppendIcuSortKey(buf, col->locale, s, len);
			LsmAppendEscaped(buf, s, len);
			break;
		case LSM_ENC_TEXT_ICU_ND:
			LsmAppendIcuSortKey(buf, col->locale, s, len);
			break;
#endif
		default:
			elog(ERROR, "unexpected lsm text encoding %d", (int) col->enc);
	}

	if ((Pointer) t != DatumGetPointer(value))
		pfree(t);
}

/* ------------------------------------------------------------------------
 * Column values
 * ------------------------------------------------------------------------ */

/*
 * Append the (not DESC-inverted) value bytes of value, whose type is argtype
 * (InvalidOid: the column's type).
 */
static void
LsmEncodeValue(const LsmKeyColumn *col, Datum value, Oid argtype,
			   StringInfo buf)
{
	if (!OidIsValid(argtype))
		argtype = col->typid;
	else if (!LsmTypesCompatible(col->typid, argtype))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("lsm cannot compare type %s with an index column of type %s",
						format_type_be(argtype), format_type_be(col->typid))));

	switch (col->enc)
	{
		case LSM_ENC_INT:
			if (argtype == INT2OID)
				LsmAppendInt64(buf, DatumGetInt16(value));
			else if (argtype == INT4OID)
				LsmAppendInt64(buf, DatumGetInt32(value));
			else
				LsmAppendInt64(buf, DatumGetInt64(value));
			break;
		case LSM_ENC_FLOAT:
			if (argtype == FLOAT4OID)
				LsmAppendFloat8(buf, (float8) DatumGetFloat4(value));
			else
				LsmAppendFloat8(buf, DatumGetFloat8(value));
			break;
		case LSM_ENC_NUMERIC:
			LsmAppendNumeric(buf, value);
			break;
		case LSM_ENC_BOOL:
			appendStringInfoCharMacro(buf, DatumGetBool(value) ? 1 : 0);
			break;
		case LSM_ENC_DATE:
			LsmAppendBE32(buf, ((uint32) DatumGetDateADT(value)) ^ 0x80000000);
			break;
		case LSM_ENC_TIME:
			LsmAppendInt64(buf, DatumGetTimeADT(value));
			break;
		case LSM_ENC_TIMESTAMP:
			LsmAppendInt64(buf, DatumGetTimestamp(value));
			break;
		case LSM_ENC_INTERVAL:
			LsmAppendInterval(buf, DatumGetIntervalP(value));
			break;
		case LSM_ENC_UUID:
			appendBinaryStringInfo(buf, (const char *) DatumGetUUIDP(value)->data,
								   UUID_LEN);
			break;
		case LSM_ENC_TEXT_C:
		case LSM_ENC_TEXT_ICU:
		case LSM_ENC_TEXT_ICU_ND:
			LsmAppendText(col, value, buf);
			break;
		case LSM_ENC_BYTEA:
			{
				bytea	   *b = DatumGetByteaPP(value);

				LsmAppendEscaped(buf, VARDATA_ANY(b), VARSIZE_ANY_EXHDR(b));
				if ((Pointer) b != DatumGetPointer(value))
					pfree(b);
				break;
			}
	}
}

/* Append a column segment (flag byte + value bytes, inverted if DESC). */
static void
LsmEncodeSegment(const LsmKeyColumn *col, Datum value, Oid argtype,
				 bool isnull, StringInfo buf)
{
	int			start;
	int			i;

	if (isnull)
	{
		appendStringInfoCharMacro(buf, col->nulls_first ?
								  LSM_FLAG_NULL_FIRST : LSM_FLAG_NULL_LAST);
		return;
	}
	appendStringInfoCharMacro(buf, LSM_FLAG_NOT_NULL);
	start = buf->len;
	LsmEncodeValue(col, value, argtype, buf);
	if (col->desc)
	{
		for (i = start; i < buf->len; i++)
			buf->data[i] = (char) ~buf->data[i];
	}
}

/* ------------------------------------------------------------------------
 * Descriptor
 * ------------------------------------------------------------------------ */

/* ------------------------------------------------------------------------
 * Entries
 * ------------------------------------------------------------------------ */

static void
LsmTooLarge(const LsmKeyDesc *desc, Size size)
{
	if (desc->ninclude > 0)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("lsm index entry size %zu exceeds the maximum %d",
						size, LSM_MAX_KEY_SIZE),
				 errdetail("The encoded key columns, the values of the INCLUDE columns and the %d-byte heap TID must fit in %d bytes.",
						   LSM_TID_SIZE, LSM_MAX_KEY_SIZE),
				 errhint("Include fewer or shorter columns (the table still has them), index a hash or a shorter expression of a long key, or use a btree index.")));
	ereport(ERROR,
			(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
			 errmsg("lsm index entry size %zu exceeds the maximum %d",
					size, LSM_MAX_KEY_SIZE),
			 errdetail("The encoded key columns plus the %d-byte heap TID must fit in %d bytes.",
					   LSM_TID_SIZE, LSM_MAX_KEY_SIZE),
			 errhint("Index a hash or a shorter expression of the value (for example md5(col) or left(col, 200)), or use a btree index.")));
}

/* LevelDB varint32: 7 bits a byte, low group first. */
static void
LsmAppendVarint(StringInfo buf, uint32 v)
{
	uint8		b[5];
	int			n = 0;

	while (v >= 0x80)
	{
		b[n++] = (uint8) (v | 0x80);
		v >>= 7;
	}
	b[n++] = (uint8) v;
	appendBinaryStringInfo(buf, (const char *) b, n);
}

/*
 * An INCLUDE column's value: 0x00 for NULL; else 0x01 and the value's bytes:
 * attlen bytes of a fixed-length type (by-value types in the server's byte
 * order, as in a heap tuple), or a varint length and the bytes of a varlena
 * (detoasted and decompressed, as btree detoasts included values) or of a
 * cstring.  start: where the entry began in buf, for the size limit.
 */
static void
LsmAppendIncluded(const LsmKeyDesc *desc, const LsmIncludeColumn *inc,
				  Datum value, bool isnull, StringInfo buf, int start)
{
	if (isnull)
	{
		appendStringInfoChar(buf, (char) LSM_INCL_NULL);
		return;
	}
	appendStringInfoChar(buf, (char) LSM_INCL_VALUE);
	if (inc->attlen > 0 && inc->attbyval)
	{
		char		b[sizeof(Datum)];

		store_att_byval(b, value, inc->attlen);
		appendBinaryStringInfo(buf, b, inc->attlen);
	}
	else if (inc->attlen > 0)
		appendBinaryStringInfo(buf, DatumGetPointer(value), inc->attlen);
	else if (inc->attlen == -1)
	{
		Size		rawsize = toast_raw_datum_size(value) - VARHDRSZ;
		struct varlena *v;

		/* refused before detoasting a value that cannot fit anyway */
		if (rawsize > LSM_MAX_KEY_SIZE)
			LsmTooLarge(desc, buf->len - start + rawsize + LSM_TID_SIZE);
		v = pg_detoast_datum_packed((struct varlena *) DatumGetPointer(value));
		LsmAppendVarint(buf, (uint32) VARSIZE_ANY_EXHDR(v));
		appendBinaryStringInfo(buf, VARDATA_ANY(v), VARSIZE_ANY_EXHDR(v));
		if ((Pointer) v != DatumGetPointer(value))
			pfree(v);
	}
	else
	{
		const char *c = DatumGetCString(value);
		size_t		n = strlen(c);

		if (n > LSM_MAX_KEY_SIZE)
			LsmTooLarge(desc, buf->len - start + n + LSM_TID_SIZE);
		LsmAppendVarint(buf, (uint32) n);
		appendBinaryStringInfo(buf, c, (int) n);
	}
}

void
LsmEncodeEntry(const LsmKeyDesc *desc, const Datum *values,
			   const bool *isnull, ItemPointer tid, StringInfo buf)
{
	int			start = buf->len;
	int			i;
	uint8		t[LSM_TID_SIZE];
	BlockNumber blk = ItemPointerGetBlockNumberNoCheck(tid);
	OffsetNumber off = ItemPointerGetOffsetNumberNoCheck(tid);

	for (i = 0; i < desc->ncols; i++)
	{
		const LsmKeyColumn *col = &desc->cols[i];

		/* Refuse huge varlena values before encoding (escaping copies them). */
		if (!isnull[i] &&
			(col->enc == LSM_ENC_TEXT_C || col->enc == LSM_ENC_TEXT_ICU ||
			 col->enc == LSM_ENC_BYTEA))
		{
			Size		rawsize = toast_raw_datum_size(values[i]) - VARHDRSZ;

			if (rawsize > LSM_MAX_KEY_SIZE)
				LsmTooLarge(desc, rawsize + LSM_TID_SIZE);
		}

		LsmEncodeSegment(col, values[i], InvalidOid, isnull[i], buf);
		if (buf->len - start + LSM_TID_SIZE > LSM_MAX_KEY_SIZE)
			LsmTooLarge(desc, buf->len - start + LSM_TID_SIZE);
	}
	for (i = 0; i < desc->ninclude; i++)
	{
		LsmAppendIncluded(desc, &desc->incl[i], values[desc->ncols + i],
						  isnull[desc->ncols + i], buf, start);
		if (buf->len - start + LSM_TID_SIZE > LSM_MAX_KEY_SIZE)
			LsmTooLarge(desc, buf->len - start + LSM_TID_SIZE);
	}

	t[0] = (uint8) (blk >> 24);
	t[1] = (uint8) (blk >> 16);
	t[2] = (uint8) (blk >> 8);
	t[3] = (uint8) blk;
	t[4] = (uint8) (off >> 8);
	t[5] = (uint8) off;
	appendBinaryStringInfo(buf, (const char *) t, LSM_TID_SIZE);
}

void
LsmEncodeColumnValue(const LsmKeyDesc *desc, int col, Datum value,
					 Oid argtype, bool isnull, StringInfo buf)
{
	Assert(col >= 0 && col < desc->ncols);
	LsmEncodeSegment(&desc->cols[col], value, argtype, isnull, buf);
}

