/*
 * gen_corpus.c — writes the seed corpus of the fuzz targets from real pages:
 * keys encoded by the shim's own encoder (src/key/lsmkey.c, with pg_stubs.c
 * instead of a server) for realistic indexes, turned into pages by the
 * core's own builders.  Deterministic: the same corpus on every run.
 *
 *   gen_corpus OUTDIR      writes OUTDIR/{datapage,fence,runheader,bloom,logpage,key}/
 *
 * Indexes: (int8); (text) under C; (int8, text DESC NULLS FIRST) with NULLs;
 * (text) of long keys (~1000 bytes, to make fence levels); (bool, date,
 * uuid, timestamptz, int2, bytea) with NULLs.
 */
#include "postgres.h"

#include "pg_noport.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "catalog/pg_type.h"
#include "lib/stringinfo.h"
#include "storage/itemptr.h"
#include "utils/date.h"
#include "utils/timestamp.h"
#include "utils/uuid.h"

#include "core/lsm_core.h"
#include "key/lsmkey.h"

#define CAP 8152				/* an 8 kB page's content area */
#define MAXKEYS 6000

/* fuzz_key's column table: the byte that selects each type there */
#define K_INT2 0
#define K_INT8 2
#define K_BOOL 3
#define K_DATE 4
#define K_UUID 8
#define K_TSTZ 7
#define K_TEXT 9
#define K_BYTEA 10
#define K_DESC 0x40
#define K_NULLS_FIRST 0x80

typedef struct
{
	uint8	   *data;
	int			len;
	int			prefix;			/* bytes of the first column's segment */
} Entry;

static const char *outdir;
static int	nfiles;
static uint64 rng = 0x9E3779B97F4A7C15ULL;

static uint64
next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static void
die(const char *what)
{
	fprintf(stderr, "gen_corpus: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void
write_file(const char *sub, const char *name, const uint8 *data, size_t len)
{
	char		path[1024];
	FILE	   *f;

	snprintf(path, sizeof(path), "%s/%s", outdir, sub);
	if (mkdir(path, 0755) != 0 && errno != EEXIST)
		die(path);
	snprintf(path, sizeof(path), "%s/%s/%s", outdir, sub, name);
	f = fopen(path, "wb");
	if (f == NULL || (len > 0 && fwrite(data, 1, len, f) != len) || fclose(f) != 0)
		die(path);
	nfiles++;
}

static void
check(LsmStatus st, const char *what)
{
	if (st < 0)
	{
		fprintf(stderr, "gen_corpus: %s: %s\n", what, lsm_status_message(st));
		exit(1);
	}
}

static Datum
text_datum(const char *s, int len)
{
	struct varlena *v = palloc(VARHDRSZ + len);

	SET_VARSIZE(v, VARHDRSZ + len);
	memcpy(VARDATA(v), s, len);
	return PointerGetDatum(v);
}

static int
cmp_entry(const void *a, const void *b)
{
	const Entry *x = a,
			   *y = b;
	int			n = x->len < y->len ? x->len : y->len;
	int			r = memcmp(x->data, y->data, n);

	return r != 0 ? r : x->len - y->len;
}

/* One index: its column bytes (fuzz_key's table) and the descriptor. */
typedef struct
{
	const char *name;
	int			ncols;
	uint8		colbyte[4];
	LsmKeyDesc	desc;
} GenIndex;

static const struct
{
	LsmEncoding enc;
	Oid			typid;
	bool		invertible;
}			types[] = {
	[K_INT2] = {LSM_ENC_INT, INT2OID, true},
	[K_INT8] = {LSM_ENC_INT, INT8OID, true},
	[K_BOOL] = {LSM_ENC_BOOL, BOOLOID, true},
	[K_DATE] = {LSM_ENC_DATE, DATEOID, true},
	[K_TSTZ] = {LSM_ENC_TIMESTAMP, TIMESTAMPTZOID, true},
	[K_UUID] = {LSM_ENC_UUID, UUIDOID, true},
	[K_TEXT] = {LSM_ENC_TEXT_C, TEXTOID, true},
	[K_BYTEA] = {LSM_ENC_BYTEA, BYTEAOID, true},
};

static void
index_init(GenIndex *ix, const char *name, int ncols, const uint8 *colbyte)
{
	ix->name = name;
	ix->ncols = ncols;
	memset(&ix->desc, 0, sizeof(ix->desc));
	ix->desc.ncols = ncols;
	for (int i = 0; i < ncols; i++)
	{
		int			t = colbyte[i] & 0x3F;

		ix->colbyte[i] = colbyte[i];
		ix->desc.cols[i].enc = types[t].enc;
		ix->desc.cols[i].typid = types[t].typid;
		ix->desc.cols[i].invertible = types[t].invertible;
		ix->desc.cols[i].desc = (colbyte[i] & K_DESC) != 0;
		ix->desc.cols[i].nulls_first = (colbyte[i] & K_NULLS_FIRST) != 0;
	}
}

/* A value of column col for row i (NULL now and then when nulls). */
static Datum
make_value(const GenIndex *ix, int col, int i, bool nulls, bool *isnull, bool long_text)
{
	char		s[1100];
	int			n;

	*isnull = nulls && next_rand() % 7 == 0;
	if (*isnull)
		return (Datum) 0;
	switch (ix->colbyte[col] & 0x3F)
	{
		case K_INT2:
			return Int16GetDatum((int16) (i * 37 - 16000));
		case K_INT8:
			return Int64GetDatum((int64) i * 1000003 - 3000000000LL);
		case K_BOOL:
			return BoolGetDatum(i % 3 == 0);
		case K_DATE:
			return DateADTGetDatum((DateADT) (8000 + i / 5));
		case K_TSTZ:
			return TimestampGetDatum((Timestamp) i * 1000000LL * 3600 + 7);
		case K_UUID:
			{
				pg_uuid_t  *u = palloc(sizeof(pg_uuid_t));

				for (int j = 0; j < UUID_LEN; j++)
					u->data[j] = (uint8) next_rand();
				return PointerGetDatum(u);
			}
		case K_TEXT:
			if (long_text)
			{
				n = snprintf(s, sizeof(s), "%08d-", i);
				for (int j = 0; j < 1000; j++)	/* little to share */
					s[n + j] = (char) ('a' + next_rand() % 26);
				n += 1000;
			}
			else
				n = snprintf(s, sizeof(s), "user_%06d%s", i % 2500,
							 i % 4 == 0 ? "" : "\xc3\xa9t\xc3\xa9");
			return text_datum(s, n);
		case K_BYTEA:
			n = (int) (next_rand() % 12);
			for (int j = 0; j < n; j++)
				s[j] = (char) (next_rand() % 3);	/* zeros: escapes */
			return text_datum(s, n);
	}
	abort();
}

static int
make_entries(GenIndex *ix, int n, bool nulls, bool long_text, Entry *out)
{
	for (int i = 0; i < n; i++)
	{
		Datum		values[4];
		bool		isnull[4];
		ItemPointerData tid;
		StringInfoData buf;
		const uint8 *seg[INDEX_MAX_KEYS];
		int			seglen[INDEX_MAX_KEYS];

		for (int c = 0; c < ix->ncols; c++)
			values[c] = make_value(ix, c, i, nulls, &isnull[c], long_text);
		ItemPointerSet(&tid, (BlockNumber) (i / 40), (OffsetNumber) (1 + i % 40));
		initStringInfo(&buf);
		LsmEncodeEntry(&ix->desc, values, isnull, &tid, &buf);
		if (!LsmSplitEntry(&ix->desc, (uint8 *) buf.data, buf.len, seg, seglen, NULL))
		{
			fprintf(stderr, "gen_corpus: %s: the encoder wrote an entry the decoder refuses\n",
					ix->name);
			exit(1);
		}
		out[i].data = (uint8 *) buf.data;
		out[i].len = buf.len;
		out[i].prefix = seglen[0];
		for (int c = 0; c < ix->ncols; c++)
			if (!isnull[c] && (ix->colbyte[c] & 0x3F) != K_INT2 &&
				(ix->colbyte[c] & 0x3F) != K_INT8 && (ix->colbyte[c] & 0x3F) != K_BOOL &&
				(ix->colbyte[c] & 0x3F) != K_DATE && (ix->colbyte[c] & 0x3F) != K_TSTZ)
				pfree(DatumGetPointer(values[c]));
	}
	return n;
}

/* A log page of entries in insertion order (duplicates included). */
static void
write_log_page(const GenIndex *ix, const Entry *e, int n, int first, int no)
{
	uint8		page[CAP];
	size_t		len = 0;
	char		name[128];

	for (int i = first; i < n; i++)
	{
		uint16		klen = (uint16) e[i].len;

		if (len + 2 + klen > CAP)
			break;
		memcpy(page + len, &klen, 2);
		memcpy(page + len + 2, e[i].data, klen);
		len += 2 + klen;
		if (i % 50 == 49 && len + 2 + klen <= CAP)	/* a replayed duplicate */
		{
			memcpy(page + len, &klen, 2);
			memcpy(page + len + 2, e[i].data, klen);
			len += 2 + klen;
		}
	}
	snprintf(name, sizeof(name), "%s-%d", ix->name, no);
	write_file("logpage", name, page, len);
}

/* Key seeds: the column bytes, then the entry. */
static void
write_key_seeds(const GenIndex *ix, const Entry *e, int n)
{
	for (int s = 0; s < 4; s++)
	{
		const Entry *x = &e[(n - 1) * s / 3];
		uint8		buf[1 + 4 + LSM_MAX_KEY_SIZE];
		char		name[128];

		buf[0] = (uint8) (ix->ncols - 1);
		memcpy(buf + 1, ix->colbyte, ix->ncols);
		memcpy(buf + 1 + ix->ncols, x->data, x->len);
		snprintf(name, sizeof(name), "%s-%d", ix->name, s);
		write_file("key", name, buf, 1 + ix->ncols + x->len);
	}
}

static void
build_run(const GenIndex *ix, Entry *e, int n)
{
	LsmRunBuilder *rb;
	LsmPageOut page;
	int			ndata = 0,
				nfence = 0,
				nbloom = 0,
				m = 0;
	LsmStatus	st;

	qsort(e, n, sizeof(Entry), cmp_entry);
	check(lsm_runbuilder_create(CAP, 10, n, &rb), "runbuilder_create");
	for (int i = 0; i < n; i++)
	{
		if (i > 0 && cmp_entry(&e[i - 1], &e[i]) == 0)
			continue;
		e[m++] = e[i];
	}
	for (int i = 0; i < m; i++)
	{
		st = lsm_runbuilder_add(rb, e[i].data, e[i].len, e[i].prefix);
		check(st, "runbuilder_add");
		while (st == LSM_PAGE_READY && lsm_runbuilder_take_page(rb, &page) == LSM_OK)
		{
			char		name[128];

			/* the first, second and last pages of the run */
			if (ndata++ < 2 || i == m - 1)
			{
				snprintf(name, sizeof(name), "%s-%u", ix->name, page.rel_page);
				write_file("datapage", name, page.content, page.len);
			}
		}
	}
	check(lsm_runbuilder_finish(rb), "runbuilder_finish");
	while ((st = lsm_runbuilder_take_page(rb, &page)) == LSM_OK)
	{
		char		name[128];

		snprintf(name, sizeof(name), "%s-%u", ix->name, page.rel_page);
		switch (page.kind)
		{
			case LSM_PAGE_DATA:
				write_file("datapage", name, page.content, page.len);
				break;
			case LSM_PAGE_FENCE:
				if (nfence++ < 3)
					write_file("fence", name, page.content, page.len);
				break;
			case LSM_PAGE_HEADER:
				write_file("runheader", name, page.content, page.len);
				write_file("fence", name, page.content, page.len);
				break;
			case LSM_PAGE_BLOOM:
				if (nbloom++ < 2)
					write_file("bloom", name, page.content, page.len);
				break;
		}
	}
	check(st, "runbuilder_take_page");
	lsm_runbuilder_destroy(rb);
}

int
main(int argc, char **argv)
{
	static Entry e[MAXKEYS];
	GenIndex		ix;

	if (argc != 2)
	{
		fprintf(stderr, "usage: gen_corpus OUTDIR\n");
		return 2;
	}
	outdir = argv[1];
	if (mkdir(outdir, 0755) != 0 && errno != EEXIST)
		die(outdir);

	{
		static const uint8 c[] = {K_INT8};
		int			n;

		index_init(&ix, "int8", 1, c);
		n = make_entries(&ix, 3000, false, false, e);
		write_key_seeds(&ix, e, n);
		write_log_page(&ix, e, n, 0, 0);
		build_run(&ix, e, n);
	}
	{
		static const uint8 c[] = {K_TEXT};
		int			n;

		index_init(&ix, "text", 1, c);
		n = make_entries(&ix, 2500, false, false, e);
		write_key_seeds(&ix, e, n);
		write_log_page(&ix, e, n, 100, 0);
		build_run(&ix, e, n);
	}
	{
		static const uint8 c[] = {K_INT8, K_TEXT | K_DESC | K_NULLS_FIRST};
		int			n;

		index_init(&ix, "int8_text_desc_nulls", 2, c);
		n = make_entries(&ix, 2000, true, false, e);
		write_key_seeds(&ix, e, n);
		write_log_page(&ix, e, n, 0, 0);
		build_run(&ix, e, n);
	}
	{
		static const uint8 c[] = {K_TEXT};
		int			n;

		index_init(&ix, "longtext", 1, c);
		n = make_entries(&ix, 400, false, true, e);
		write_key_seeds(&ix, e, n);
		write_log_page(&ix, e, n, 0, 0);
		build_run(&ix, e, n);
	}
	{
		static const uint8 c[] = {K_BOOL | K_DESC, K_DATE, K_UUID | K_NULLS_FIRST, K_TSTZ};
		static const uint8 c2[] = {K_INT2, K_BYTEA | K_DESC};
		int			n;

		index_init(&ix, "bool_date_uuid_tstz", 4, c);
		n = make_entries(&ix, 1500, true, false, e);
		write_key_seeds(&ix, e, n);
		write_log_page(&ix, e, n, 0, 0);
		build_run(&ix, e, n);
		index_init(&ix, "int2_bytea_desc", 2, c2);
		n = make_entries(&ix, 1500, true, false, e);
		write_key_seeds(&ix, e, n);
		write_log_page(&ix, e, n, 0, 0);
		build_run(&ix, e, n);
	}
	{
		/* an empty data page, as lsm_datapage_build writes one */
		static const uint8 empty[4] = {0, 0, 0, 0};

		write_file("datapage", "empty", empty, sizeof(empty));
	}
	printf("gen_corpus: %d files in %s\n", nfiles, outdir);
	return 0;
}
