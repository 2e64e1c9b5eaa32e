/*
 * lsmkey.c — order-preserving key encoding (datum -> bytes) for lsm indexes.
 *
 * Every index entry is a byte string whose memcmp order (shorter first on a
 * common prefix) is the order of the index's operator classes, so the C++
 * core never calls a PostgreSQL comparator.  Each column contributes a flag
 * byte and, when not NULL, a prefix-free value encoding; the heap TID ends
 * the entry.  Values that compare equal under the opclass encode to identical
 * bytes (1.0 and 1.00, -0.0 and 0.0, every NaN), so hashes of the bytes are
 * correct bloom-filter hashes.  Byte layouts: doc/key_encoding.md.
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

/* Class byte of a numeric value, in PostgreSQL's order (NaN greatest). */
#define LSM_NUM_NEG_INF		0x01
#define LSM_NUM_NEG			0x02
#define LSM_NUM_ZERO		0x03
#define LSM_NUM_POS			0x04
#define LSM_NUM_POS_INF		0x05
#define LSM_NUM_NAN			0x06

/* Escaping of variable-length byte strings: 0x00 -> 0x00 0xFF, end 0x00 0x01 */
#define LSM_ESC_BYTE		0xFF
#define LSM_TERM_BYTE		0x01

/* Seed of the fingerprint hash (any constant; changing it forces REINDEX). */
#define LSM_FINGERPRINT_SEED UINT64CONST(0x6c736d5f6b657973)	/* "lsm_keys" */

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

/* Signed integers: flip the sign bit so two's complement sorts as unsigned. */
static inline void
LsmAppendInt64(StringInfo buf, int64 v)
{
	LsmAppendBE64(buf, ((uint64) v) ^ (UINT64CONST(1) << 63));
}

static inline int64
LsmReadInt64(const uint8 *p)
{
	return (int64) (LsmReadBE64(p) ^ (UINT64CONST(1) << 63));
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

/*
 * Encoding of a column of type typid (for text: LSM_ENC_TEXT_C, refined by
 * the collation), or -1 if lsm cannot encode the type.
 */
int
LsmTypeEncoding(Oid typid)
{
	switch (typid)
	{
		case INT2OID:
		case INT4OID:
		case INT8OID:
			return LSM_ENC_INT;
		case FLOAT4OID:
		case FLOAT8OID:
			return LSM_ENC_FLOAT;
		case NUMERICOID:
			return LSM_ENC_NUMERIC;
		case BOOLOID:
			return LSM_ENC_BOOL;
		case DATEOID:
			return LSM_ENC_DATE;
		case TIMEOID:
			return LSM_ENC_TIME;
		case TIMESTAMPOID:
		case TIMESTAMPTZOID:
			return LSM_ENC_TIMESTAMP;
		case INTERVALOID:
			return LSM_ENC_INTERVAL;
		case UUIDOID:
			return LSM_ENC_UUID;
		case TEXTOID:
		case VARCHAROID:
			return LSM_ENC_TEXT_C;
		case BYTEAOID:
			return LSM_ENC_BYTEA;
		default:
			return -1;
	}
}

/*
 * Can a scan argument of type argtype be encoded for a column of type
 * coltype?  Only int2/int4/int8 and float4/float8 mix (they share a domain);
 * text and varchar are binary-compatible.
 */
bool
LsmTypesCompatible(Oid coltype, Oid argtype)
{
	int			enc = LsmTypeEncoding(coltype);

	if (enc < 0 || LsmTypeEncoding(argtype) != enc)
		return false;
	if (enc == LSM_ENC_TIMESTAMP)
		return coltype == argtype;
	return true;
}

/* Is the libc locale name one whose strcoll is code-point (== byte) order? */
static bool
LsmLibcLocaleIsByteOrder(const char *name)
{
	if (name == NULL)
		return false;
	if (strcmp(name, "C") == 0 || strcmp(name, "POSIX") == 0)
		return true;
	/* C.UTF-8 sorts by code point, which is UTF-8 byte order */
	return GetDatabaseEncoding() == PG_UTF8 &&
		(strcmp(name, "C.UTF-8") == 0 || strcmp(name, "C.utf8") == 0);
}

/* The collcollate of a libc collation, NULL if none. */
static char *
LsmLibcCollate(Oid collid)
{
	HeapTuple	tup;
	Datum		d;
	bool		isnull;
	char	   *result = NULL;

	if (collid == DEFAULT_COLLATION_OID)
		return pstrdup(setlocale(LC_COLLATE, NULL));

	tup = SearchSysCache1(COLLOID, ObjectIdGetDatum(collid));
	if (!HeapTupleIsValid(tup))
		elog(ERROR, "cache lookup failed for collation %u", collid);
	if (((Form_pg_collation) GETSTRUCT(tup))->collprovider == COLLPROVIDER_LIBC)
	{
		d = SysCacheGetAttr(COLLOID, tup, Anum_pg_collation_collcollate, &isnull);
		if (!isnull)
			result = TextDatumGetCString(d);
	}
	ReleaseSysCache(tup);
	return result;
}

/* Choose the text encoding of column i, or ERROR. */
static void
LsmTextColumnInit(Relation index, int i, LsmKeyColumn *col)
{
	Oid			collid = col->collid;
	const char *attname = NameStr(TupleDescAttr(RelationGetDescr(index), i)->attname);
	pg_locale_t locale;

	if (!OidIsValid(collid))
		ereport(ERROR,
				(errcode(ERRCODE_INDETERMINATE_COLLATION),
				 errmsg("could not determine which collation to use for column \"%s\" of lsm index \"%s\"",
						attname, RelationGetRelationName(index)),
				 errhint("Use the COLLATE clause to set the collation explicitly.")));

	if (LsmCollateIsC(collid))
	{
		col->enc = LSM_ENC_TEXT_C;
		return;
	}

	locale = pg_newlocale_from_collation(collid);
#ifdef USE_ICU
	if (locale && locale->provider == COLLPROVIDER_ICU)
	{
		col->enc = locale->deterministic ? LSM_ENC_TEXT_ICU : LSM_ENC_TEXT_ICU_ND;
		col->locale = locale;
		return;
	}
#endif
	if (locale == NULL || locale->provider == COLLPROVIDER_LIBC)
	{
		char	   *collate = LsmLibcCollate(collid);

		if (LsmLibcLocaleIsByteOrder(collate))
		{
			col->enc = LSM_ENC_TEXT_C;
			return;
		}
	}

	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("lsm index \"%s\" cannot index column \"%s\" under collation \"%s\"",
					RelationGetRelationName(index), attname,
					get_collation_name(collid)),
			 errdetail("lsm compares keys as bytes; only the \"C\", \"POSIX\" and C.UTF-8 libc collations and ICU collations have an exact byte-order form."),
			 errhint("Use COLLATE \"C\" or an ICU collation such as \"und-x-icu\" for the index column, or use a btree index.")));
}

/* Append the collator version of an ICU column to the fingerprint input. */
static void
LsmFingerprintCollation(const LsmKeyColumn *col, StringInfo fp)
{
#ifdef USE_ICU
	if (col->locale && col->locale->provider == COLLPROVIDER_ICU)
	{
		UVersionInfo version;
		char		vstr[U_MAX_VERSION_STRING_LENGTH];

		ucol_getVersion(col->locale->info.icu.ucol, version);
		u_versionToString(version, vstr);
		appendStringInfo(fp, "icu:%s:%s;", col->locale->info.icu.locale, vstr);
	}
#endif
}

void
LsmKeyDescInit(Relation index, LsmKeyDesc *desc)
{
	int			ncols = IndexRelationGetNumberOfKeyAttributes(index);
	StringInfoData fp;
	int			i;

	memset(desc, 0, sizeof(LsmKeyDesc));
	desc->ncols = ncols;

	initStringInfo(&fp);
	appendStringInfo(&fp, "lsmkey:%d:%d;", LSM_KEY_ENCODING_VERSION, ncols);

	for (i = 0; i < ncols; i++)
	{
		LsmKeyColumn *col = &desc->cols[i];
		int16		opt = index->rd_indoption[i];

		col->typid = index->rd_opcintype[i];
		col->collid = index->rd_indcollation[i];
		col->desc = (opt & INDOPTION_DESC) != 0;
		col->nulls_first = (opt & INDOPTION_NULLS_FIRST) != 0;
		col->invertible = true;
		col->locale = NULL;

		col->enc = (LsmEncoding) LsmTypeEncoding(col->typid);
		switch ((int) col->enc)
		{
			case -1:
				ereport(ERROR,
						(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
						 errmsg("lsm index \"%s\" cannot index column \"%s\" of type %s",
								RelationGetRelationName(index),
								NameStr(TupleDescAttr(RelationGetDescr(index), i)->attname),
								format_type_be(col->typid)),
						 errhint("lsm supports smallint, integer, bigint, real, double precision, numeric, boolean, date, time, timestamp, timestamptz, interval, uuid, text, varchar and bytea; use a btree index for other types.")));
				break;
			case LSM_ENC_FLOAT:		/* -0 and NaN sign/payload are lost */
			case LSM_ENC_NUMERIC:	/* display scale is lost */
			case LSM_ENC_INTERVAL:	/* month/day/time split is lost */
				col->invertible = false;
				break;
			case LSM_ENC_TEXT_C:
				LsmTextColumnInit(index, i, col);
				col->invertible = (col->enc != LSM_ENC_TEXT_ICU_ND);
				break;
			default:
				break;
		}

		/*
		 * Only what determines the bytes goes in: type, encoding, order flags
		 * and for ICU the locale and collator version.  Not collation OIDs:
		 * those of non-pinned collations (und-x-icu included) change across
		 * pg_upgrade, while C, POSIX and C.UTF-8 all encode alike.
		 */
		appendStringInfo(&fp, "%d:%u:%d:%d;", (int) col->enc, col->typid,
						 (int) col->desc, (int) col->nulls_first);
		LsmFingerprintCollation(col, &fp);
	}

	desc->fingerprint = lsm_hash64(fp.data, fp.len, LSM_FINGERPRINT_SEED);
	pfree(fp.data);
}

/* ------------------------------------------------------------------------
 * Entries
 * ------------------------------------------------------------------------ */

static void
LsmTooLarge(Size size)
{
	ereport(ERROR,
			(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
			 errmsg("lsm index entry size %zu exceeds the maximum %d",
					size, LSM_MAX_KEY_SIZE),
			 errdetail("The encoded key columns plus the %d-byte heap TID must fit in %d bytes.",
					   LSM_TID_SIZE, LSM_MAX_KEY_SIZE),
			 errhint("Index a hash or a shorter expression of the value (for example md5(col) or left(col, 200)), or use a btree index.")));
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
				LsmTooLarge(rawsize + LSM_TID_SIZE);
		}

		LsmEncodeSegment(col, values[i], InvalidOid, isnull[i], buf);
		if (buf->len - start + LSM_TID_SIZE > LSM_MAX_KEY_SIZE)
			LsmTooLarge(buf->len - start + LSM_TID_SIZE);
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
	return (vlen < fixed) ? -1 : fixed + 1;
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
	if (pos != len - LSM_TID_SIZE)
		return false;
	if (tid)
		LsmEntryGetTid(entry, len, tid);
	return true;
}

void
LsmEntryGetTid(const uint8 *entry, int len, ItemPointer tid)
{
	const uint8 *t = entry + len - LSM_TID_SIZE;

	Assert(len >= LSM_TID_SIZE);
	ItemPointerSet(tid, LsmReadBE32(t), (OffsetNumber) ((t[4] << 8) | t[5]));
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
