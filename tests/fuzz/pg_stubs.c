/*
 * pg_stubs.c — just enough of the PostgreSQL backend for the key encoder
 * and decoder (src/key/lsmkey.c, src/key/lsmkeydecode.c) to run in a
 * process without a server: fuzz_key and gen_corpus link it.
 *
 * Memory is malloc'd; an ereport(ERROR) (or worse) prints its message and
 * aborts, which in a fuzz target is a contract failure (the callers only
 * reach an ERROR path on input they were told is well formed).  Nothing
 * here is used for ICU collations: those calls abort.
 */
#include "postgres.h"

#include "pg_noport.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "access/detoast.h"
#include "fmgr.h"
#include "lib/stringinfo.h"
#include "utils/builtins.h"
#include "utils/pg_locale.h"

static int	stub_elevel;

void *
palloc(Size size)
{
	void	   *p = malloc(size ? size : 1);

	if (p == NULL)
		abort();
	return p;
}

void
pfree(void *pointer)
{
	free(pointer);
}

void *
repalloc(void *pointer, Size size)
{
	void	   *p = realloc(pointer, size ? size : 1);

	if (p == NULL)
		abort();
	return p;
}

bool
errstart_cold(int elevel, const char *domain)
{
	stub_elevel = elevel;
	return elevel >= ERROR;
}

bool
errstart(int elevel, const char *domain)
{
	return errstart_cold(elevel, domain);
}

void
errfinish(const char *filename, int lineno, const char *funcname)
{
	fprintf(stderr, "ereport(%d) at %s:%d (%s)\n", stub_elevel, filename, lineno,
			funcname ? funcname : "?");
	abort();
}

int
errcode(int sqlerrcode)
{
	return 0;
}

static int
stub_print(const char *what, const char *fmt, va_list ap)
{
	fprintf(stderr, "%s: ", what);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	return 0;
}

#define STUB_MESSAGE(name) \
int \
name(const char *fmt,...) \
{ \
	va_list		ap; \
	va_start(ap, fmt); \
	stub_print(#name, fmt, ap); \
	va_end(ap); \
	return 0; \
}
STUB_MESSAGE(errmsg)
STUB_MESSAGE(errmsg_internal)
STUB_MESSAGE(errdetail)
STUB_MESSAGE(errhint)

void
enlargeStringInfo(StringInfo str, int needed)
{
	int			want = str->len + needed + 1;

	if (want <= str->maxlen)
		return;
	while (str->maxlen < want)
		str->maxlen = str->maxlen ? 2 * str->maxlen : 64;
	str->data = repalloc(str->data, str->maxlen);
}

#if PG_VERSION_NUM >= 160000
void
appendBinaryStringInfo(StringInfo str, const void *data, int datalen)
#else
void
appendBinaryStringInfo(StringInfo str, const char *data, int datalen)
#endif
{
	enlargeStringInfo(str, datalen);
	memcpy(str->data + str->len, data, datalen);
	str->len += datalen;
	str->data[str->len] = '\0';
}

void
appendStringInfoChar(StringInfo str, char ch)
{
	appendBinaryStringInfo(str, &ch, 1);
}

void
initStringInfo(StringInfo str)
{
	str->maxlen = 64;
	str->data = palloc(str->maxlen);
	str->len = 0;
	str->cursor = 0;
	str->data[0] = '\0';
}

/* Values here are never toasted or compressed: only plain varlenas. */
struct varlena *
pg_detoast_datum(struct varlena *datum)
{
	if (VARATT_IS_EXTENDED(datum) && !VARATT_IS_SHORT(datum))
		abort();
	return datum;
}

struct varlena *
pg_detoast_datum_packed(struct varlena *datum)
{
	return pg_detoast_datum(datum);
}

/* As PostgreSQL's: the size with a 4-byte header, also for a 1-byte one */
Size
toast_raw_datum_size(Datum value)
{
	struct varlena *v = (struct varlena *) DatumGetPointer(value);

	if (VARATT_IS_SHORT(v))
		return VARSIZE_SHORT(v) - VARHDRSZ_SHORT + VARHDRSZ;
	return VARSIZE_ANY(v);
}

char *
format_type_be(Oid type_oid)
{
	char	   *s = palloc(16);

	snprintf(s, 16, "%u", type_oid);
	return s;
}

/* Cross-type scan arguments are not encoded here: a column's own type only. */
bool
LsmTypesCompatible(Oid coltype, Oid argtype)
{
	return coltype == argtype;
}

#if PG_VERSION_NUM >= 180000
size_t
pg_strnxfrm(char *dest, size_t destsize, const char *src, ssize_t srclen,
			pg_locale_t locale)
{
	abort();
}
#elif defined(USE_ICU)
int32_t
icu_to_uchar(UChar **buff_uchar, const char *buff, size_t nbytes)
{
	abort();
}

int32_t
ucol_getSortKey(const UCollator *coll, const UChar *source, int32_t sourceLength,
				uint8_t *result, int32_t resultLength)
{
	abort();
}
#endif
