/*
 * lsmkeydesc.c — the key descriptor of an index: which encoding each column
 * gets (by type and collation), whether a collation can be encoded at all,
 * and the fingerprint of it all that the metapage keeps (a change forces
 * REINDEX).  The encodings themselves: lsmkey.c.
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

/* Seed of the fingerprint hash (any constant; changing it forces REINDEX). */
#define LSM_FINGERPRINT_SEED UINT64CONST(0x6c736d5f6b657973)	/* "lsm_keys" */

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

	/*
	 * INCLUDE columns: how their values are stored.  Only an index that has
	 * them adds this part, so the fingerprints of other indexes are those
	 * lsm_am 0.4 and older wrote, and those versions refuse an index with
	 * INCLUDE columns (different fingerprint, REINDEX hint) instead of
	 * misreading its entries.
	 */
	desc->ninclude = IndexRelationGetNumberOfAttributes(index) - ncols;
	if (desc->ninclude > 0)
		appendStringInfo(&fp, "include:%d;", desc->ninclude);
	for (i = 0; i < desc->ninclude; i++)
	{
		Form_pg_attribute att = TupleDescAttr(RelationGetDescr(index), ncols + i);
		LsmIncludeColumn *inc = &desc->incl[i];

		inc->typid = att->atttypid;
		inc->attlen = att->attlen;
		inc->attbyval = att->attbyval;
		appendStringInfo(&fp, "%u:%d:%d;", inc->typid, (int) inc->attlen,
						 (int) inc->attbyval);
	}

	desc->fingerprint = lsm_hash64(fp.data, fp.len, LSM_FINGERPRINT_SEED);
	pfree(fp.data);
}

