/*
 * lsmkey.h — order-preserving key encoding (datum -> bytes) for lsm indexes.
 *
 * An index entry's key is the concatenation, per index column, of a segment
 *     flag byte  : 0x00 NULL sorting first, 0x01 not NULL, 0x02 NULL sorting last
 *     value bytes: only when not NULL; a self-delimiting (prefix-free) encoding
 *                  whose memcmp order is the operator class order; every byte
 *                  inverted (x ^ 0xFF) for a DESC column
 * then, for an index with INCLUDE columns, their values (not ordered: a
 * flag byte, 0x00 NULL or 0x01, then the value's bytes), and last the 6-byte
 * heap TID (block big-endian 4 bytes, offset big-endian 2 bytes), so that
 * every entry is unique and memcmp orders entries by key exactly as the
 * index orders them.  Equal values (per the opclass) have identical bytes.
 * Layouts per type: doc/page_format.md, "Key encoding".
 */
#ifndef LSMKEY_H
#define LSMKEY_H

#include "postgres.h"

#include "access/skey.h"
#include "lib/stringinfo.h"
#include "storage/itemptr.h"
#include "utils/pg_locale.h"
#include "utils/rel.h"

/* Bump when any encoding below changes (stored in the metapage fingerprint). */
#define LSM_KEY_ENCODING_VERSION 1

#define LSM_TID_SIZE 6

/* Byte constants of the encodings (lsmkey.c writes them, lsmkeydecode.c reads them) */
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


#define LSM_FLAG_NULL_FIRST 0x00
#define LSM_FLAG_NOT_NULL	0x01
#define LSM_FLAG_NULL_LAST	0x02

typedef enum LsmEncoding
{
	LSM_ENC_INT,				/* int2/int4/int8: int64 sign-flipped big-endian */
	LSM_ENC_FLOAT,				/* float4/float8: normalised float8 */
	LSM_ENC_NUMERIC,			/* canonical decimal, not invertible */
	LSM_ENC_BOOL,
	LSM_ENC_DATE,				/* int32 */
	LSM_ENC_TIME,				/* int64 */
	LSM_ENC_TIMESTAMP,			/* int64 (timestamp and timestamptz) */
	LSM_ENC_INTERVAL,			/* 128-bit span, not invertible */
	LSM_ENC_UUID,
	LSM_ENC_TEXT_C,				/* bytes, escaped and terminated */
	LSM_ENC_TEXT_ICU,			/* ICU sort key, then the escaped bytes */
	LSM_ENC_TEXT_ICU_ND,		/* nondeterministic ICU: sort key only */
	LSM_ENC_BYTEA				/* bytes, escaped and terminated */
} LsmEncoding;

typedef struct LsmKeyColumn
{
	Oid			typid;			/* the indexed column's type (opcintype) */
	Oid			collid;
	LsmEncoding enc;
	bool		desc;
	bool		nulls_first;
	bool		invertible;		/* can be decoded back (index-only scans) */
	pg_locale_t locale;			/* ICU collations only */
} LsmKeyColumn;

/* An INCLUDE column: stored with each entry, never compared. */
typedef struct LsmIncludeColumn
{
	Oid			typid;
	int16		attlen;			/* > 0 fixed, -1 varlena, -2 cstring */
	bool		attbyval;
	bool		packable;		/* varlena that may have a 1-byte header */
} LsmIncludeColumn;

/* Flag byte of an INCLUDE value */
#define LSM_INCL_NULL		0x00
#define LSM_INCL_VALUE		0x01

typedef struct LsmKeyDesc
{
	int			ncols;			/* key columns */
	int			ninclude;		/* INCLUDE columns, after the key columns */
	uint64		fingerprint;	/* hash of encodings, types, collations, flags,
								 * collation versions, LSM_KEY_ENCODING_VERSION */
	LsmKeyColumn cols[INDEX_MAX_KEYS];
	LsmIncludeColumn incl[INDEX_MAX_KEYS];
} LsmKeyDesc;

/*
 * Encoding used for a column of type typid (text and varchar report
 * LSM_ENC_TEXT_C; the collation refines it), or -1 if lsm cannot index the
 * type.  Used by lsmvalidate and LsmKeyDescInit.
 */
extern int	LsmTypeEncoding(Oid typid);

/*
 * Can a scan argument of type argtype be encoded for a column of type
 * coltype?  True for equal types and within int2/int4/int8 and float4/float8.
 */
extern bool LsmTypesCompatible(Oid coltype, Oid argtype);

/*
 * Fill desc from an index relation.  ERRORs (with a hint naming the
 * alternatives) for a type or collation that cannot be encoded correctly,
 * e.g. text under a libc collation other than C, POSIX or C.UTF-8.
 */
extern void LsmKeyDescInit(Relation index, LsmKeyDesc *desc);

/*
 * Append the full entry (key columns, INCLUDE values, TID) to buf; values and
 * isnull hold the index's ncols + ninclude columns.  ERRORs with a hint if
 * the entry would exceed LSM_MAX_KEY_SIZE.
 */
extern void LsmEncodeEntry(const LsmKeyDesc *desc, const Datum *values,
						   const bool *isnull, ItemPointer tid, StringInfo buf);

/*
 * Append the segment of column col (flag byte + value bytes, DESC-inverted as
 * the column is) for a scan argument of type argtype (may differ from the
 * column type for cross-type operators in the same family: int2/int4/int8,
 * float4/float8).  isnull encodes the NULL segment of that column.
 */
extern void LsmEncodeColumnValue(const LsmKeyDesc *desc, int col, Datum value,
								 Oid argtype, bool isnull, StringInfo buf);

/*
 * Split an entry into per-column segments: seg[i]/seglen[i] cover key column
 * i's flag byte and value bytes.  Optionally returns the TID.  Returns false
 * if the entry is malformed (caller raises a corruption error); the INCLUDE
 * values are checked too.
 */
extern bool LsmSplitEntry(const LsmKeyDesc *desc, const uint8 *entry, int len,
						  const uint8 **seg, int *seglen, ItemPointer tid);

/*
 * Bytes taken by an INCLUDE value at p (its flag byte included), of at most
 * avail; -1 if malformed, or not in the one form LsmEncodeEntry writes (a
 * 4-byte header where a 1-byte one fits, an overlong varint, a cstring with
 * a zero byte), so that decoding and encoding again give the same bytes.
 * *vstart and *vlen: the value's bytes from p, a varlena's header included
 * (not set for NULL).
 */
extern int	LsmIncludedLength(const LsmIncludeColumn *inc, const uint8 *p,
							  int avail, int *vstart, int *vlen);

/*
 * Length of an entry's key segments (what uniqueness, locks and filters
 * see): len - LSM_TID_SIZE without INCLUDE columns; -1 if malformed.
 */
extern int	LsmEntryKeyLength(const LsmKeyDesc *desc, const uint8 *entry, int len);

/* The TID at the end of an entry (inline: scans read it for every entry). */
static inline void
LsmEntryGetTid(const uint8 *entry, int len, ItemPointer tid)
{
	const uint8 *t = entry + len - LSM_TID_SIZE;

	Assert(len >= LSM_TID_SIZE);
	ItemPointerSet(tid,
				   ((uint32) t[0] << 24) | ((uint32) t[1] << 16) |
				   ((uint32) t[2] << 8) | (uint32) t[3],
				   (OffsetNumber) ((t[4] << 8) | t[5]));
}

/*
 * Decode column values of an entry for index-only scans: the key columns
 * with invertible = true (others get isnull = true), then the INCLUDE
 * columns (values[ncols ..]).  Values are palloc'd in CurrentMemoryContext,
 * except INCLUDE values of fixed-length by-reference types and short
 * varlenas, which point into entry (index_form_tuple copies them).
 */
extern void LsmDecodeEntry(const LsmKeyDesc *desc, const uint8 *entry, int len,
						   Datum *values, bool *isnull);

/* Segment comparison in *index order* (memcmp, shorter prefix first). */
extern int	LsmCompareSegments(const uint8 *a, int alen, const uint8 *b, int blen);

/* Human-readable rendering of an encoded key (hex), for messages and tools. */
extern char *LsmKeyToHex(const uint8 *key, int len);

#endif							/* LSMKEY_H */
