-- lsm_types: every supported type, with edge values, duplicates that are
-- equal under the operator class but look different, and NULLs.  Ordered
-- output through the lsm index (ASC and DESC) is compared with seqscan+sort
-- by lsm_check(); the ASC listings are printed so the order is visible.
-- Values after tests/sql_helpers/key_order_cases.sql.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS lsm_am;
RESET client_min_messages;
CREATE SCHEMA lsm_types;
SET search_path = lsm_types, public;

-- lsm_check(query): sql/lsm_setup.sql (the first test) defines it.

-- ---------------------------------------------------------------- integers
CREATE TABLE koc_int2 (id int, v int2);
INSERT INTO koc_int2 (id, v) VALUES (1, -32768), (2, 32767), (3, 0), (4, -1), (5, 1),
    (6, 255), (7, 256), (8, -255), (9, -256), (10, 127), (11, 128), (12, -128),
    (13, -129), (14, 0), (15, NULL), (16, NULL), (17, 32767);
CREATE INDEX koc_int2_lsm ON koc_int2 USING lsm (v);
CREATE TABLE koc_int4 (id int, v int4);
INSERT INTO koc_int4 (id, v) VALUES (1, -2147483648), (2, 2147483647), (3, 0),
    (4, -1), (5, 1), (6, 32767), (7, 32768), (8, -32768), (9, -32769), (10, 65535),
    (11, 65536), (12, 16777215), (13, 16777216), (14, -16777216), (15, 0),
    (16, NULL), (17, NULL), (18, -2147483648);
CREATE INDEX koc_int4_lsm ON koc_int4 USING lsm (v);
CREATE TABLE koc_int8 (id int, v int8);
-- half before CREATE INDEX (sorted run), half after (memtable)
INSERT INTO koc_int8 (id, v) VALUES (1, -9223372036854775808), (2, 9223372036854775807),
    (3, 0), (4, -1), (5, 1), (6, 2147483647), (7, 2147483648), (8, -2147483648),
    (9, -2147483649);
CREATE INDEX koc_int8_lsm ON koc_int8 USING lsm (v);
INSERT INTO koc_int8 (id, v) VALUES (10, 4294967295), (11, 4294967296),
    (12, 72057594037927935), (13, 72057594037927936), (14, -72057594037927936),
    (15, 0), (16, NULL), (17, NULL), (18, 9223372036854775807);

SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT id, v FROM koc_int2 ORDER BY v, id;
SELECT id, v FROM koc_int4 ORDER BY v, id;
SELECT id, v FROM koc_int8 ORDER BY v, id;
SELECT id, v FROM koc_int8 ORDER BY v DESC, id;
-- cross-type: constants of the other integer types against each column
EXPLAIN (COSTS OFF) SELECT id FROM koc_int8 WHERE v = 1::int4;
SELECT id, v FROM koc_int8 WHERE v = 1::int4;
SELECT id, v FROM koc_int8 WHERE v = 1::int2;
SELECT id, v FROM koc_int8 WHERE v >= 2147483647::int4 ORDER BY v, id;
SELECT id, v FROM koc_int8 WHERE v < (-2147483648)::int4 ORDER BY v, id;
EXPLAIN (COSTS OFF) SELECT id FROM koc_int4 WHERE v < 3000000000::int8;
SELECT count(*) FROM koc_int4 WHERE v < 3000000000::int8;
SELECT count(*) FROM koc_int4 WHERE v > 3000000000::int8;
SELECT id, v FROM koc_int4 WHERE v <= (-2147483649)::int8;
SELECT id, v FROM koc_int4 WHERE v = 65536::int8;
SELECT id, v FROM koc_int2 WHERE v > (-40000)::int4 AND v < 0::int8 ORDER BY v, id;
SELECT id, v FROM koc_int2 WHERE v = 32767::int8 ORDER BY id;
SELECT id, v FROM koc_int2 WHERE v = 32768::int4;
SELECT q, lsm_check(q) FROM (VALUES
    ('SELECT id, v FROM koc_int2 ORDER BY v, id'),
    ('SELECT id, v FROM koc_int2 ORDER BY v DESC, id'),
    ('SELECT id, v FROM koc_int2 WHERE v IS NULL ORDER BY id'),
    ('SELECT id, v FROM koc_int2 WHERE v > (-40000)::int4 ORDER BY v, id'),
    ('SELECT id, v FROM koc_int2 WHERE v <= 128::int8 ORDER BY v DESC, id'),
    ('SELECT id, v FROM koc_int4 ORDER BY v, id'),
    ('SELECT id, v FROM koc_int4 ORDER BY v DESC, id'),
    ('SELECT id, v FROM koc_int4 WHERE v < 3000000000::int8 ORDER BY v, id'),
    ('SELECT id, v FROM koc_int4 WHERE v > (-32768)::int2 ORDER BY v, id'),
    ('SELECT id, v FROM koc_int4 WHERE v BETWEEN -1::int8 AND 1::int2 ORDER BY v, id'),
    ('SELECT id, v FROM koc_int8 ORDER BY v, id'),
    ('SELECT id, v FROM koc_int8 ORDER BY v DESC, id'),
    ('SELECT id, v FROM koc_int8 WHERE v > 0::int2 ORDER BY v, id'),
    ('SELECT id, v FROM koc_int8 WHERE v IS NOT NULL ORDER BY v DESC, id')
) t(q);

-- ------------------------------------------------------------------ floats
CREATE TABLE koc_float4 (id int, v float4);
INSERT INTO koc_float4 (id, v) VALUES (1, 'NaN'), (2, '-NaN'), (3, 'Infinity'),
    (4, '-Infinity'), (5, '0'), (6, '-0'), (7, '1'), (8, '-1'), (9, '1.1'),
    (10, '-1.1'), (11, '1e-45'), (12, '-1e-45'), (13, '1.17549435e-38'),
    (14, '3.4028235e38'), (15, '-3.4028235e38'), (16, '0.1'), (17, NULL), (18, 'NaN');
CREATE INDEX koc_float4_lsm ON koc_float4 USING lsm (v);
CREATE TABLE koc_float8 (id int, v float8);
INSERT INTO koc_float8 (id, v) VALUES (1, 'NaN'), (2, '-NaN'), (3, 'Infinity'),
    (4, '-Infinity'), (5, '0'), (6, '-0'), (7, '1'), (8, '-1'), (9, '1.1'),
    (10, '-1.1'), (11, '5e-324'), (12, '-5e-324'), (13, '2.2250738585072014e-308'),
    (14, '1.7976931348623157e308'), (15, '-1.7976931348623157e308'), (16, '0.1'),
    (17, '0.1'::float4::float8), (18, '1e300'), (19, '-1e-300'), (20, NULL), (21, 'NaN');
CREATE INDEX koc_float8_lsm ON koc_float8 USING lsm (v);
SELECT id, v FROM koc_float4 ORDER BY v, id;
SELECT id, v FROM koc_float8 ORDER BY v, id;
SELECT id, v FROM koc_float8 WHERE v = 0 ORDER BY id;
SELECT id, v FROM koc_float8 WHERE v = 'NaN' ORDER BY id;
SELECT id, v FROM koc_float8 WHERE v > 'Infinity' ORDER BY id;
-- cross-type
SELECT id, v FROM koc_float4 WHERE v = 1.1::float8;
SELECT id, v FROM koc_float4 WHERE v = 1.1::float4::float8;
SELECT id, v FROM koc_float8 WHERE v > 'NaN'::float4;
SELECT id, v FROM koc_float8 WHERE v = '-0'::float4 ORDER BY id;
SELECT id, v FROM koc_float8 WHERE v = 0.1::float4 ORDER BY id;
SELECT q, lsm_check(q) FROM (VALUES
    ('SELECT id, v FROM koc_float4 ORDER BY v, id'),
    ('SELECT id, v FROM koc_float4 ORDER BY v DESC, id'),
    ('SELECT id, v FROM koc_float4 WHERE v = ''NaN'' ORDER BY id'),
    ('SELECT id, v FROM koc_float4 WHERE v >= 0 ORDER BY v, id'),
    ('SELECT id, v FROM koc_float4 WHERE v < 1.1::float8 ORDER BY v, id'),
    ('SELECT id, v FROM koc_float4 WHERE v <= 1.1::float4::float8 ORDER BY v DESC, id'),
    ('SELECT id, v FROM koc_float8 ORDER BY v, id'),
    ('SELECT id, v FROM koc_float8 ORDER BY v DESC, id'),
    ('SELECT id, v FROM koc_float8 WHERE v = 0.1::float4 ORDER BY id'),
    ('SELECT id, v FROM koc_float8 WHERE v > ''-Infinity''::float4 AND v < ''Infinity'' ORDER BY v, id')
) t(q);

-- ----------------------------------------------------------------- numeric
CREATE TABLE koc_numeric (id serial, v numeric);
INSERT INTO koc_numeric (v) VALUES ('NaN'), ('Infinity'), ('-Infinity'), ('0'),
    ('0.000'), ('-0'), ('1'), ('1.0'), ('1.00'), ('-1'), ('-1.5'), ('-1.50'),
    ('1.5'), ('1e-20'), ('-1e-20'), ('1e20'), ('-1e20'), ('10'), ('100'),
    ('1000'), ('10000'), ('100000'), ('9999'), ('10001'), ('99999999'),
    ('100000000'), ('0.5'), ('0.505'), ('0.51'), ('-0.5'), ('-0.505'),
    ('-0.51'), ('0.0001'), ('0.001'), ('0.01'), ('0.1'), ('0.00010'),
    ('12345678901234567890.123456789'), (NULL), (NULL), ('NaN'), ('Infinity');
CREATE INDEX koc_numeric_lsm ON koc_numeric USING lsm (v);
-- very long values: only their order is printed
INSERT INTO koc_numeric (v) VALUES ('1e1000'), ('-1e1000'), ('1e-1000'),
    ('123.456e-600'), ('3.14159265358979323846264338327950288');
SELECT id, v FROM koc_numeric WHERE id <= 42 ORDER BY v, id;
SELECT string_agg(id::text, ' ' ORDER BY n) AS ids_in_lsm_order
FROM (SELECT id, row_number() OVER () AS n FROM (SELECT id FROM koc_numeric ORDER BY v, id) s) s;
SELECT id, v FROM koc_numeric WHERE v = 1 ORDER BY id;
SELECT id, v FROM koc_numeric WHERE v = 0 ORDER BY id;
SELECT id, v FROM koc_numeric WHERE v = -1.5 ORDER BY id;
SELECT q, lsm_check(q) FROM (VALUES
    ('SELECT id, v FROM koc_numeric ORDER BY v, id'),
    ('SELECT id, v FROM koc_numeric ORDER BY v DESC, id'),
    ('SELECT id, v FROM koc_numeric WHERE v = 1.000 ORDER BY id'),
    ('SELECT id, v FROM koc_numeric WHERE v > 0.5 AND v < 10001 ORDER BY v, id'),
    ('SELECT id, v FROM koc_numeric WHERE v >= ''NaN'' ORDER BY id'),
    ('SELECT id, v FROM koc_numeric WHERE v < -0.5 ORDER BY v DESC, id'),
    ('SELECT id, v FROM koc_numeric WHERE v IS NULL ORDER BY id')
) t(q);

-- -------------------------------------------------------------------- bool
CREATE TABLE koc_bool (id int, v bool);
INSERT INTO koc_bool VALUES (1, true), (2, false), (3, NULL), (4, true), (5, false);
CREATE INDEX koc_bool_lsm ON koc_bool USING lsm (v);
SELECT id, v FROM koc_bool ORDER BY v, id;
SELECT id, v FROM koc_bool ORDER BY v DESC, id;
SELECT id FROM koc_bool WHERE v ORDER BY id;
-- (the planner matches "WHERE v" / "WHERE NOT v" to btree and hash boolean
-- families only, so comparisons are used here)
EXPLAIN (COSTS OFF) SELECT id FROM koc_bool WHERE v < true;
SELECT id FROM koc_bool WHERE v < true ORDER BY id;
SELECT id FROM koc_bool WHERE v >= true ORDER BY id;
SELECT q, lsm_check(q) FROM (VALUES
    ('SELECT id, v FROM koc_bool WHERE v <= false ORDER BY id'),
    ('SELECT id, v FROM koc_bool WHERE v > false ORDER BY id'),
    ('SELECT id, v FROM koc_bool ORDER BY v DESC, id')
) t(q);

-- --------------------------------------------------------- date and time
CREATE TABLE koc_date (id int, v date);
INSERT INTO koc_date VALUES (1, 'infinity'), (2, '-infinity'), (3, '2000-01-01'),
    (4, '1999-12-31'), (5, '2000-01-02'), (6, '1970-01-01'), (7, '4713-01-01 BC'),
    (8, '5874897-12-31'), (9, '2024-02-29'), (10, NULL), (11, 'infinity'), (12, '2000-01-01');
CREATE INDEX koc_date_lsm ON koc_date USING lsm (v);
SELECT id, v FROM koc_date ORDER BY v, id;
CREATE TABLE koc_time (id int, v time);
INSERT INTO koc_time VALUES (1, '00:00'), (2, '24:00'), (3, '23:59:59.999999'),
    (4, '12:00'), (5, '00:00:00.000001'), (6, '12:00:00.5'), (7, NULL), (8, '00:00');
CREATE INDEX koc_time_lsm ON koc_time USING lsm (v);
SELECT id, v FROM koc_time ORDER BY v, id;
CREATE TABLE koc_timestamp (id int, v timestamp);
INSERT INTO koc_timestamp VALUES (1, 'infinity'), (2, '-infinity'),
    (3, '2000-01-01 00:00'), (4, '1999-12-31 23:59:59.999999'),
    (5, '2000-01-01 00:00:00.000001'), (6, '4713-01-01 00:00 BC'),
    (7, '294276-12-31 23:59:59.999999'), (8, '1970-01-01'), (9, NULL), (10, 'infinity');
CREATE INDEX koc_timestamp_lsm ON koc_timestamp USING lsm (v);
SELECT id, v FROM koc_timestamp ORDER BY v, id;
CREATE TABLE koc_timestamptz (id int, v timestamptz);
INSERT INTO koc_timestamptz VALUES (1, 'infinity'), (2, '-infinity'),
    (3, '2000-01-01 00:00+00'), (4, '2000-01-01 01:00+01'),
    (5, '1999-12-31 23:59:59.999999+00'), (6, '4713-01-01 00:00+00 BC'),
    (7, '294276-12-31 23:59:59.999999+00'), (8, '1970-01-01 00:00+00'), (9, NULL),
    (10, '-infinity');
CREATE INDEX koc_timestamptz_lsm ON koc_timestamptz USING lsm (v);
SET TimeZone = 'UTC';
SELECT id, v FROM koc_timestamptz ORDER BY v, id;
SELECT id, v FROM koc_timestamptz WHERE v = '2000-01-01 02:00+02' ORDER BY id;
RESET TimeZone;
SELECT q, lsm_check(q) FROM (VALUES
    ('SELECT id, v FROM koc_date ORDER BY v DESC, id'),
    ('SELECT id, v FROM koc_date WHERE v = ''2000-01-01'' ORDER BY id'),
    ('SELECT id, v FROM koc_date WHERE v > ''2000-01-01'' AND v < ''infinity'' ORDER BY v, id'),
    ('SELECT id, v FROM koc_time ORDER BY v DESC, id'),
    ('SELECT id, v FROM koc_time WHERE v >= ''12:00'' ORDER BY v, id'),
    ('SELECT id, v FROM koc_timestamp ORDER BY v DESC, id'),
    ('SELECT id, v FROM koc_timestamp WHERE v < ''2000-01-01'' ORDER BY v, id'),
    ('SELECT id, v FROM koc_timestamptz ORDER BY v DESC, id'),
    ('SELECT id, v FROM koc_timestamptz WHERE v = ''2000-01-01 00:00+00'' ORDER BY id'),
    ('SELECT id, v FROM koc_timestamptz WHERE v <= ''1970-01-01 00:00+00'' ORDER BY v, id')
) t(q);

-- ---------------------------------------------------------------- interval
CREATE TABLE koc_interval (id int, v interval);
INSERT INTO koc_interval VALUES (1, '1 month'), (2, '30 days'), (3, '720 hours'),
    (4, '1 day'), (5, '24 hours'), (6, '1 day -1 microsecond'), (7, '-1 month'),
    (8, '-30 days'), (9, '0'), (10, '1 month -30 days'), (11, '1 year'), (12, '360 days'),
    (13, '178000000 years'), (14, '-178000000 years'),
    (15, '2147483647 months 2147483647 days 9223372036854775807 microseconds'),
    (16, '-2147483647 months -2147483647 days -9223372036854775807 microseconds'),
    (17, NULL), (18, '00:00:00.000001');
CREATE INDEX koc_interval_lsm ON koc_interval USING lsm (v);
SELECT id, v FROM koc_interval ORDER BY v, id;
SELECT id, v FROM koc_interval WHERE v = '1 month' ORDER BY id;
SELECT id, v FROM koc_interval WHERE v = '1 year' ORDER BY id;
SELECT id, v FROM koc_interval WHERE v = '0' ORDER BY id;
SELECT q, lsm_check(q) FROM (VALUES
    ('SELECT id, v FROM koc_interval ORDER BY v DESC, id'),
    ('SELECT id, v FROM koc_interval WHERE v = ''24 hours'' ORDER BY id'),
    ('SELECT id, v FROM koc_interval WHERE v > ''1 day'' AND v <= ''1 year'' ORDER BY v, id')
) t(q);

-- -------------------------------------------------------------------- uuid
CREATE TABLE koc_uuid (id int, v uuid);
INSERT INTO koc_uuid VALUES (1, '00000000-0000-0000-0000-000000000000'),
    (2, 'ffffffff-ffff-ffff-ffff-ffffffffffff'),
    (3, '00000000-0000-0000-0000-000000000001'),
    (4, '80000000-0000-0000-0000-000000000000'),
    (5, '7fffffff-ffff-ffff-ffff-ffffffffffff'),
    (6, 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'), (7, NULL),
    (8, 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11');
CREATE INDEX koc_uuid_lsm ON koc_uuid USING lsm (v);
SELECT id, v FROM koc_uuid ORDER BY v, id;
SELECT q, lsm_check(q) FROM (VALUES
    ('SELECT id, v FROM koc_uuid ORDER BY v DESC, id'),
    ('SELECT id, v FROM koc_uuid WHERE v = ''a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'' ORDER BY id'),
    ('SELECT id, v FROM koc_uuid WHERE v >= ''7fffffff-ffff-ffff-ffff-ffffffffffff'' ORDER BY v, id')
) t(q);

-- ----------------------------------------------------------- text, varchar
-- (under "C"; the same words under ICU collations: lsm_collation_icu)
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
    (repeat('x', 600) || 'y'), (NULL);
CREATE TABLE koc_text_c (id serial, v text COLLATE "C");
INSERT INTO koc_text_c (v) SELECT w FROM koc_words;
CREATE INDEX koc_text_c_lsm ON koc_text_c USING lsm (v);
CREATE TABLE koc_varchar (id serial, v varchar(700) COLLATE "C");
CREATE INDEX koc_varchar_lsm ON koc_varchar USING lsm (v);
INSERT INTO koc_varchar (v) SELECT w FROM koc_words;
-- byte order under "C": printed (long values shortened)
SELECT id, CASE WHEN length(v) > 20 THEN left(v, 5) || '...(' || length(v) || ')' ELSE v END AS v,
       encode(convert_to(left(v, 3), 'UTF8'), 'hex') AS first_bytes
FROM koc_text_c ORDER BY v, id;
SELECT id, v FROM koc_varchar WHERE v >= 'a' AND v < 'b' ORDER BY v DESC, id;
SELECT q, lsm_check(q) FROM (VALUES
    ('SELECT id, v FROM koc_text_c ORDER BY v, id'),
    ('SELECT id, v FROM koc_text_c ORDER BY v DESC, id'),
    ('SELECT id, v FROM koc_text_c WHERE v > ''a'' AND v <= ''co op'' ORDER BY v, id'),
    ('SELECT id, v FROM koc_text_c WHERE v = ''résumé'' ORDER BY id'),
    ('SELECT id, v FROM koc_text_c WHERE v >= repeat(''x'', 600) ORDER BY v, id'),
    ('SELECT id, v FROM koc_text_c WHERE v IS NULL ORDER BY id'),
    ('SELECT id, v FROM koc_varchar ORDER BY v, id'),
    ('SELECT id, v FROM koc_varchar ORDER BY v DESC, id'),
    ('SELECT id, v FROM koc_varchar WHERE v = ''ab'' ORDER BY id')
) t(q);

-- ------------------------------------------------------------------- bytea
CREATE TABLE koc_bytea (id int, v bytea);
INSERT INTO koc_bytea VALUES (1, ''), (2, '\x00'), (3, '\x0000'), (4, '\x0001'),
    (5, '\x00ff'), (6, '\x01'), (7, '\xff'), (8, '\xff00'), (9, '\xffff'), (10, '\x61'),
    (11, '\x6100'), (12, '\x610000'), (13, '\x6101'), (14, '\x6100ff'), (15, '\x61ff'),
    (16, NULL), (17, '\x00'), (18, '');
CREATE INDEX koc_bytea_lsm ON koc_bytea USING lsm (v);
SELECT id, v FROM koc_bytea ORDER BY v, id;
SELECT id, v FROM koc_bytea WHERE v > '\x61' AND v < '\x6101' ORDER BY v DESC, id;
SELECT q, lsm_check(q) FROM (VALUES
    ('SELECT id, v FROM koc_bytea ORDER BY v, id'),
    ('SELECT id, v FROM koc_bytea ORDER BY v DESC, id'),
    ('SELECT id, v FROM koc_bytea WHERE v = ''\x00'' ORDER BY id'),
    ('SELECT id, v FROM koc_bytea WHERE v = '''' ORDER BY id'),
    ('SELECT id, v FROM koc_bytea WHERE v >= ''\x00'' AND v <= ''\x00ff'' ORDER BY v, id')
) t(q);

-- index-only scans: every type except numeric, interval, float and
-- nondeterministic collations returns the value from the index
VACUUM koc_int8, koc_text_c, koc_bytea, koc_uuid, koc_numeric, koc_float8;
EXPLAIN (COSTS OFF) SELECT v FROM koc_int8 WHERE v > 0;
EXPLAIN (COSTS OFF) SELECT v FROM koc_text_c WHERE v > 'a';
EXPLAIN (COSTS OFF) SELECT v FROM koc_bytea WHERE v > '\x00';
EXPLAIN (COSTS OFF) SELECT v FROM koc_uuid WHERE v > '00000000-0000-0000-0000-000000000000';
EXPLAIN (COSTS OFF) SELECT v FROM koc_numeric WHERE v > 0;
EXPLAIN (COSTS OFF) SELECT v FROM koc_float8 WHERE v > 0;
SELECT q, lsm_check(q) FROM (VALUES
    ('SELECT v FROM koc_int8 WHERE v > 0 ORDER BY v'),
    ('SELECT v FROM koc_text_c WHERE v > ''a'' ORDER BY v'),
    ('SELECT v FROM koc_bytea WHERE v > ''\x00'' ORDER BY v'),
    ('SELECT v FROM koc_uuid WHERE v > ''00000000-0000-0000-0000-000000000000'' ORDER BY v')
) t(q);

RESET enable_seqscan;
RESET enable_bitmapscan;
SET client_min_messages = warning;
DROP SCHEMA lsm_types CASCADE;
RESET client_min_messages;
RESET search_path;
