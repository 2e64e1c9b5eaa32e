/*
 * fuzz_key.c — libFuzzer target: the key decoder of the shim
 * (src/key/lsmkeydecode.c: LsmSplitEntry, LsmDecodeEntry), which meets every
 * entry read from a data or log page (recovery checks each log entry with
 * it; index-only scans decode values with it).  Built against PostgreSQL's
 * headers with pg_stubs.c instead of a server.
 *
 * Input: byte 0 picks the number of key columns (1..4, bits 0-1) and of
 * INCLUDE columns (0..3, bits 2-3), the next byte per key column its
 * type/encoding, DESC and NULLS FIRST, the next byte per INCLUDE column its
 * storage (by value 1/2/4/8 bytes, 16 bytes by reference, varlena with or
 * without 1-byte headers, cstring); the rest is the entry.  Contract:
 *  - LsmSplitEntry refuses an entry shorter than a TID; when it accepts one,
 *    the segments are contiguous, lie inside the entry, start with a valid
 *    flag byte (NOT NULL, or the column's NULL flag), have the documented
 *    length for fixed-size types, INCLUDE values follow them exactly up to
 *    the TID, and the TID is the last 6 bytes;
 *  - LsmDecodeEntry of an accepted entry never raises an ERROR and returns
 *    NULL exactly for NULL or non-invertible key columns and NULL INCLUDE
 *    values;
 *  - re-encoding round-trips: LsmEncodeEntry of the decoded values (when
 *    every non-NULL column is invertible and not ICU) gives back the entry's
 *    bytes — a decoder that accepts bytes no value encodes to (an int2 out
 *    of range, a bool other than 0/1) would return a wrong value to an
 *    index-only scan, and fails here.
 */
#include "postgres.h"

#include "pg_noport.h"

#include <stdio.h>
#include <stdlib.h>

#include "catalog/pg_type.h"
#include "lib/stringinfo.h"
#include "storage/itemptr.h"

#include "core/lsm_core.h"
#include "key/lsmkey.h"

#define FUZZ_CHECK(cond) \
	do { \
		if (!(cond)) \
		{ \
			fprintf(stderr, "%s:%d: contract violated: %s\n", __FILE__, __LINE__, #cond); \
			abort(); \
		} \
	} while (0)

typedef struct
{
	LsmEncoding enc;
	Oid			typid;
	bool		invertible;
	int			fixed;			/* value bytes of a fixed-size encoding, else 0 */
} ColType;

static const ColType col_types[] = {
	{LSM_ENC_INT, INT2OID, true, 8},
	{LSM_ENC_INT, INT4OID, true, 8},
	{LSM_ENC_INT, INT8OID, true, 8},
	{LSM_ENC_BOOL, BOOLOID, true, 1},
	{LSM_ENC_DATE, DATEOID, true, 4},
	{LSM_ENC_TIME, TIMEOID, true, 8},
	{LSM_ENC_TIMESTAMP, TIMESTAMPOID, true, 8},
	{LSM_ENC_TIMESTAMP, TIMESTAMPTZOID, true, 8},
	{LSM_ENC_UUID, UUIDOID, true, 16},
	{LSM_ENC_TEXT_C, TEXTOID, true, 0},
	{LSM_ENC_BYTEA, BYTEAOID, true, 0},
	{LSM_ENC_FLOAT, FLOAT8OID, false, 8},
	{LSM_ENC_NUMERIC, NUMERICOID, false, 0},
	{LSM_ENC_INTERVAL, INTERVALOID, false, 16},
	{LSM_ENC_TEXT_ICU, TEXTOID, true, 0},
	{LSM_ENC_TEXT_ICU_ND, TEXTOID, false, 0},
};
#define NTYPES (sizeof(col_types) / sizeof(col_types[0]))

/* INCLUDE columns: any type, described by its storage alone */
static const LsmIncludeColumn incl_types[] = {
	{CHAROID, 1, true, false},
	{INT2OID, 2, true, false},
	{INT4OID, 4, true, false},
	{INT8OID, 8, true, false},
	{UUIDOID, 16, false, false},
	{TEXTOID, -1, false, true},	/* packable: 1-byte headers */
	{INT2VECTOROID, -1, false, false},	/* storage plain: 4-byte headers */
	{CSTRINGOID, -2, false, false},
};
#define NINCL (sizeof(incl_types) / sizeof(incl_types[0]))

static bool
is_pointer_type(Oid typid)
{
	return typid == UUIDOID || typid == TEXTOID || typid == BYTEAOID;
}

int			LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	LsmKeyDesc	desc;
	const uint8 *entry;
	int			len;
	const uint8 *seg[INDEX_MAX_KEYS];
	int			seglen[INDEX_MAX_KEYS];
	ItemPointerData tid;
	Datum		values[INDEX_MAX_KEYS];
	bool		isnull[INDEX_MAX_KEYS];
	bool		round_trip = true;
	int			pos;
	int			i;

	if (size < 1)
		return 0;
	memset(&desc, 0, sizeof(desc));
	desc.ncols = 1 + data[0] % 4;
	desc.ninclude = (data[0] >> 2) % 4;
	if (size < 1 + (size_t) desc.ncols + (size_t) desc.ninclude)
		return 0;
	for (i = 0; i < desc.ncols; i++)
	{
		uint8		b = data[1 + i];
		const ColType *t = &col_types[(b & 0x3F) % NTYPES];

		desc.cols[i].enc = t->enc;
		desc.cols[i].typid = t->typid;
		desc.cols[i].invertible = t->invertible;
		desc.cols[i].desc = (b & 0x40) != 0;
		desc.cols[i].nulls_first = (b & 0x80) != 0;
	}
	for (i = 0; i < desc.ninclude; i++)
		desc.incl[i] = incl_types[data[1 + desc.ncols + i] % NINCL];
	entry = data + 1 + desc.ncols + desc.ninclude;
	len = (int) (size - 1 - desc.ncols - desc.ninclude);
	if (len > LSM_MAX_KEY_SIZE)
		return 0;

	if (!LsmSplitEntry(&desc, entry, len, seg, seglen, &tid))
	{
		if (len < LSM_TID_SIZE)
			return 0;
		return 0;
	}
	FUZZ_CHECK(len >= LSM_TID_SIZE);
	pos = 0;
	for (i = 0; i < desc.ncols; i++)
	{
		const LsmKeyColumn *col = &desc.cols[i];
		const ColType *t = NULL;
		int			j;

		for (j = 0; j < (int) NTYPES; j++)
			if (col_types[j].enc == col->enc && col_types[j].typid == col->typid)
				t = &col_types[j];
		FUZZ_CHECK(seg[i] == entry + pos);
		FUZZ_CHECK(seglen[i] >= 1 && pos + seglen[i] <= len - LSM_TID_SIZE);
		if (seg[i][0] == LSM_FLAG_NOT_NULL)
		{
			if (t->fixed > 0)
				FUZZ_CHECK(seglen[i] == 1 + t->fixed);
			else
				FUZZ_CHECK(seglen[i] >= 2);
		}
		else
		{
			FUZZ_CHECK(seg[i][0] == (col->nulls_first ? LSM_FLAG_NULL_FIRST : LSM_FLAG_NULL_LAST));
			FUZZ_CHECK(seglen[i] == 1);
		}
		if (seg[i][0] == LSM_FLAG_NOT_NULL &&
			(!col->invertible || col->enc == LSM_ENC_TEXT_ICU))
			round_trip = false;
		pos += seglen[i];
	}
	FUZZ_CHECK(LsmEntryKeyLength(&desc, entry, len) == pos);
	FUZZ_CHECK(desc.ninclude > 0 || pos == len - LSM_TID_SIZE);
	FUZZ_CHECK(pos <= len - LSM_TID_SIZE);
	{
		const uint8 *t = entry + len - LSM_TID_SIZE;

		FUZZ_CHECK(ItemPointerGetBlockNumberNoCheck(&tid) ==
				   (((uint32) t[0] << 24) | ((uint32) t[1] << 16) | ((uint32) t[2] << 8) | t[3]));
		FUZZ_CHECK(ItemPointerGetOffsetNumberNoCheck(&tid) == ((t[4] << 8) | t[5]));
	}

	LsmDecodeEntry(&desc, entry, len, values, isnull);
	for (i = 0; i < desc.ncols; i++)
		FUZZ_CHECK(isnull[i] == !(seg[i][0] == LSM_FLAG_NOT_NULL && desc.cols[i].invertible));
	for (i = 0; i < desc.ninclude; i++)
	{
		/* NULL exactly for a NULL flag; varlenas have their declared size */
		FUZZ_CHECK(entry[pos] == LSM_INCL_NULL || entry[pos] == LSM_INCL_VALUE);
		FUZZ_CHECK(isnull[desc.ncols + i] == (entry[pos] == LSM_INCL_NULL));
		if (isnull[desc.ncols + i])
			pos += 1;
		else if (desc.incl[i].attlen > 0)
			pos += 1 + desc.incl[i].attlen;
		else if (desc.incl[i].attlen == -1)
		{
			Pointer		v = DatumGetPointer(values[desc.ncols + i]);

			FUZZ_CHECK(VARSIZE_ANY(v) >= VARHDRSZ_SHORT);
			FUZZ_CHECK(memcmp(VARDATA_ANY(v), entry + pos + 1 + VARSIZE_ANY(v) - VARSIZE_ANY_EXHDR(v),
							  VARSIZE_ANY_EXHDR(v)) == 0);
			pos += 1 + VARSIZE_ANY(v);
		}
		else
		{
			const char *c = DatumGetCString(values[desc.ncols + i]);

			pos += 1 + (strlen(c) < 128 ? 1 : 2) + (int) strlen(c);
		}
		FUZZ_CHECK(pos <= len - LSM_TID_SIZE);
	}
	FUZZ_CHECK(pos == len - LSM_TID_SIZE);

	if (round_trip)
	{
		StringInfoData buf;

		initStringInfo(&buf);
		LsmEncodeEntry(&desc, values, isnull, &tid, &buf);
		if (buf.len != len || memcmp(buf.data, entry, len) != 0)
		{
			fprintf(stderr, "entry     %s\nre-encoded %s\n", LsmKeyToHex(entry, len),
					LsmKeyToHex((uint8 *) buf.data, buf.len));
			FUZZ_CHECK(!"decoding then encoding gives the entry back");
		}
		pfree(buf.data);
	}
	for (i = 0; i < desc.ncols; i++)
		if (!isnull[i] && is_pointer_type(desc.cols[i].typid))
			pfree(DatumGetPointer(values[i]));
	/* copies: 4-byte-header varlenas and cstrings (the rest point into entry) */
	for (i = 0; i < desc.ninclude; i++)
		if (!isnull[desc.ncols + i] &&
			(desc.incl[i].attlen == -2 ||
			 (desc.incl[i].attlen == -1 &&
			  !VARATT_IS_1B(DatumGetPointer(values[desc.ncols + i])))))
			pfree(DatumGetPointer(values[desc.ncols + i]));
	return 0;
}
