-- key_order_cases.sql — tricky values per type for lsm-vs-btree differential
-- tests.  Not run automatically.  Creates one table koc_<type>(id, v) per type
-- supported by lsm, each with edge values, duplicates (equal under the
-- opclass but possibly different bytes or display) and NULLs.  A differential
-- test builds the same query with an lsm index and with a btree index (or a
-- seqscan) and compares the results, for example:
--   CREATE INDEX ON koc_numeric USING lsm (v);
--   SET enable_seqscan = off;
--   SELECT id FROM koc_numeric WHERE v >= 1.0 ORDER BY v, id;
-- and for ordered scans ORDER BY v [DESC] [NULLS FIRST|LAST].
-- Encodings: doc/page_format.md, "Key encoding".

CREATE TABLE koc_int2 (id serial PRIMARY KEY, v int2);
INSERT INTO koc_int2 (v) VALUES (-32768), (32767), (0), (-1), (1), (255), (256),
    (-255), (-256), (127), (128), (-128), (-129), (0), (NULL), (NULL), (32767);

CREATE TABLE koc_int4 (id serial PRIMARY KEY, v int4);
INSERT INTO koc_int4 (v) VALUES (-2147483648), (2147483647), (0), (-1), (1),
    (32767), (32768), (-32768), (-32769), (65535), (65536), (16777215),
    (16777216), (-16777216), (0), (NULL), (NULL), (-2147483648);

CREATE TABLE koc_int8 (id serial PRIMARY KEY, v int8);
INSERT INTO koc_int8 (v) VALUES (-9223372036854775808), (9223372036854775807),
    (0), (-1), (1), (2147483647), (2147483648), (-2147483648), (-2147483649),
    (4294967295), (4294967296), (72057594037927935), (72057594037927936),
    (-72057594037927936), (0), (NULL), (NULL), (9223372036854775807);
-- cross-type probes for integer_ops: WHERE koc_int4.v < 3000000000::int8,
-- koc_int8.v = 1::int2, koc_int2.v > -40000::int4.

CREATE TABLE koc_float4 (id serial PRIMARY KEY, v float4);
INSERT INTO koc_float4 (v) VALUES ('NaN'), ('-NaN'), ('Infinity'), ('-Infinity'),
    ('0'), ('-0'), ('1'), ('-1'), ('1.1'), ('-1.1'), ('1e-45'), ('-1e-45'),
    ('1.17549435e-38'), ('3.4028235e38'), ('-3.4028235e38'), ('0.1'), (NULL),
    ('NaN');

CREATE TABLE koc_float8 (id serial PRIMARY KEY, v float8);
INSERT INTO koc_float8 (v) VALUES ('NaN'), ('-NaN'), ('Infinity'), ('-Infinity'),
    ('0'), ('-0'), ('1'), ('-1'), ('1.1'), ('-1.1'), ('5e-324'), ('-5e-324'),
    ('2.2250738585072014e-308'), ('1.7976931348623157e308'),
    ('-1.7976931348623157e308'), ('0.1'), ('0.1'::float4::float8),
    ('1e300'), ('-1e-300'), (NULL), ('NaN');
-- cross-type probes for float_ops: WHERE koc_float4.v = 1.1::float8 (no row:
-- 1.1::float4 widened is not 1.1), koc_float4.v = 1.1::float4::float8 (one),
-- koc_float8.v > 'NaN'::float4 (none), koc_float8.v = '-0'::float4 (both
-- zeros).

CREATE TABLE koc_numeric (id serial PRIMARY KEY, v numeric);
INSERT INTO koc_numeric (v) VALUES ('NaN'), ('Infinity'), ('-Infinity'), ('0'),
    ('0.000'), ('-0'), ('1'), ('1.0'), ('1.00'), ('-1'), ('-1.5'), ('-1.50'),
    ('1.5'), ('1e-20'), ('-1e-20'), ('1e20'), ('-1e20'), ('10'), ('100'),
    ('1000'), ('10000'), ('100000'), ('9999'), ('10001'), ('99999999'),
    ('100000000'), ('0.5'), ('0.505'), ('0.51'), ('-0.5'), ('-0.505'),
    ('-0.51'), ('0.0001'), ('0.001'), ('0.01'), ('0.1'), ('0.00010'),
    ('12345678901234567890.123456789'), ('1e1000'), ('-1e1000'), ('1e-1000'),
    ('123.456e-600'), ('3.14159265358979323846264338327950288'), (NULL),
    (NULL), ('NaN'), ('Infinity');

CREATE TABLE koc_bool (id serial PRIMARY KEY, v bool);
INSERT INTO koc_bool (v) VALUES (true), (false), (NULL), (true), (false);

CREATE TABLE koc_date (id serial PRIMARY KEY, v date);
INSERT INTO koc_date (v) VALUES ('infinity'), ('-infinity'), ('2000-01-01'),
    ('1999-12-31'), ('2000-01-02'), ('1970-01-01'), ('4713-01-01 BC'),
    ('5874897-12-31'), ('2024-02-29'), (NULL), ('infinity'), ('2000-01-01');

CREATE TABLE koc_time (id serial PRIMARY KEY, v time);
INSERT INTO koc_time (v) VALUES ('00:00'), ('24:00'), ('23:59:59.999999'),
    ('12:00'), ('00:00:00.000001'), ('12:00:00.5'), (NULL), ('00:00');

CREATE TABLE koc_timestamp (id serial PRIMARY KEY, v timestamp);
INSERT INTO koc_timestamp (v) VALUES ('infinity'), ('-infinity'),
    ('2000-01-01 00:00'), ('1999-12-31 23:59:59.999999'),
    ('2000-01-01 00:00:00.000001'), ('4713-01-01 00:00 BC'),
    ('294276-12-31 23:59:59.999999'), ('1970-01-01'), (NULL), ('infinity');

CREATE TABLE koc_timestamptz (id serial PRIMARY KEY, v timestamptz);
INSERT INTO koc_timestamptz (v) VALUES ('infinity'), ('-infinity'),
    ('2000-01-01 00:00+00'), ('2000-01-01 01:00+01'),	-- equal instants
    ('1999-12-31 23:59:59.999999+00'), ('4713-01-01 00:00+00 BC'),
    ('294276-12-31 23:59:59.999999+00'), ('1970-01-01 00:00+00'), (NULL),
    ('-infinity');

CREATE TABLE koc_interval (id serial PRIMARY KEY, v interval);
INSERT INTO koc_interval (v) VALUES ('1 month'), ('30 days'), ('720 hours'),
    ('1 day'), ('24 hours'), ('1 day -1 microsecond'), ('-1 month'),
    ('-30 days'), ('0'), ('1 month -30 days'), ('1 year'), ('360 days'),
    ('178000000 years'), ('-178000000 years'),
    ('2147483647 months 2147483647 days 9223372036854775807 microseconds'),
    ('-2147483647 months -2147483647 days -9223372036854775807 microseconds'),  -- INT_MIN fields do not survive interval_out -> interval_in
    (NULL), ('00:00:00.000001');
-- '1 month' = '30 days' = '720 hours', '1 year' = '360 days': equality
-- probes must return all of them.

CREATE TABLE koc_uuid (id serial PRIMARY KEY, v uuid);
INSERT INTO koc_uuid (v) VALUES ('00000000-0000-0000-0000-000000000000'),
    ('ffffffff-ffff-ffff-ffff-ffffffffffff'),
    ('00000000-0000-0000-0000-000000000001'),
    ('80000000-0000-0000-0000-000000000000'),
    ('7fffffff-ffff-ffff-ffff-ffffffffffff'),
    ('a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'), (NULL),
    ('a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11');

CREATE TABLE koc_bytea (id serial PRIMARY KEY, v bytea);
INSERT INTO koc_bytea (v) VALUES (''), ('\x00'), ('\x0000'), ('\x0001'),
    ('\x00ff'), ('\x01'), ('\xff'), ('\xff00'), ('\xffff'), ('\x61'),
    ('\x6100'), ('\x610000'), ('\x6101'), ('\x6100ff'), ('\x61ff'), (NULL),
    ('\x00'), ('');

-- text: the same words under each collation lsm supports.  Sort-relevant
-- characters: case, accents (precomposed and combining), ligatures, German
-- sharp s, punctuation and spaces (ignorable or not depending on collation),
-- digits, CJK, emoji (4-byte UTF-8), control characters, U+FFFD and U+FFFF.
CREATE TABLE koc_words (w text);
INSERT INTO koc_words VALUES (''), (' '), ('  '), ('a'), ('A'), ('b'), ('B'),
    ('ab'), ('a b'), ('a-b'), ('ab '), ('abc'), ('Abc'), ('ABC'), ('é'), ('e'),
    ('E'), (E'e\u0301'), ('É'), ('ß'), ('ss'), ('SS'), ('ẞ'), ('ﬁ'), ('fi'),
    ('Æ'), ('ae'), ('ä'), ('aa'), ('z'), ('Z'), ('ö'), ('oe'), ('日本'), ('日'),
    ('한국어'), ('😀'), ('😀a'), (E'\uFFFD'), (E'\uFFFF'), ('~'), ('!'), ('0'),
    ('9'), ('10'), ('1'), ('-1'), ('a1'), ('a10'), ('a2'), (E'tab\there'),
    (E'\u0001'), (E'\u007f'), (E'x\u0001'), ('Ω'), ('ω'), ('Ǆ'), ('ǅ'), ('ǆ'),
    (E'\u00a0'), (E'a\u0300'), ('à'), ('co-op'), ('coop'), ('co op'),
    ('résumé'), ('resume'), ('Resume'), ('RÉSUMÉ'), (repeat('x', 600)),
    (repeat('x', 600) || 'y'), (NULL);  -- ICU keys roughly double the size: stay under LSM_MAX_KEY_SIZE

CREATE TABLE koc_text_c (id serial PRIMARY KEY, v text COLLATE "C");
INSERT INTO koc_text_c (v) SELECT w FROM koc_words;

CREATE TABLE koc_text_icu (id serial PRIMARY KEY, v text COLLATE "und-x-icu");
INSERT INTO koc_text_icu (v) SELECT w FROM koc_words;

CREATE TABLE koc_varchar_icu (id serial PRIMARY KEY, v varchar(2000) COLLATE "und-x-icu");
INSERT INTO koc_varchar_icu (v) SELECT w FROM koc_words;

-- nondeterministic: case- and accent-insensitive; '=' probes must return
-- every variant ('resume' = 'Résumé' = 'RÉSUMÉ').
CREATE COLLATION koc_ci (provider = icu, locale = 'und-u-ks-level1', deterministic = false);
CREATE TABLE koc_text_ci (id serial PRIMARY KEY, v text COLLATE koc_ci);
INSERT INTO koc_text_ci (v) SELECT w FROM koc_words;

-- must be refused by CREATE INDEX ... USING lsm (libc collation other than
-- C/POSIX/C.UTF-8) where such a locale exists, e.g.:
--   CREATE TABLE koc_text_libc (v text COLLATE "en_US");
--   CREATE INDEX ON koc_text_libc USING lsm (v);   -- ERROR 0A000 with hint
