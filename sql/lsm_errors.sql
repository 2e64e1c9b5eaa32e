-- lsm_errors: what lsm refuses, with which message and hint; and the libc
-- collations every server has that it accepts (C, POSIX, C.UTF-8).  The
-- checks that need a locale the server may lack are in lsm_collation_libc
-- (en_US.UTF-8) and lsm_collation_icu (ICU).
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS lsm_am;
RESET client_min_messages;
CREATE SCHEMA lsm_errors;
SET search_path = lsm_errors, public;
\set VERBOSITY default

-- temporary tables are not supported
CREATE TEMP TABLE tmp_t (a int);
CREATE INDEX tmp_t_lsm ON tmp_t USING lsm (a);
DROP TABLE tmp_t;

-- accepted collations: C, POSIX and C.UTF-8 (a libc collation other than
-- these is refused: lsm_collation_libc; ICU collations: lsm_collation_icu)
CREATE TABLE coll_t (id int, t text COLLATE "C", v varchar(20) COLLATE "C");
INSERT INTO coll_t VALUES (1, 'b', 'b'), (2, 'a', 'a'), (3, 'B', 'B'), (4, 'A', 'A');
CREATE INDEX coll_t_c ON coll_t USING lsm (t COLLATE "C");
CREATE INDEX coll_t_posix ON coll_t USING lsm (t COLLATE "POSIX");
CREATE INDEX coll_t_cutf8 ON coll_t USING lsm (t COLLATE "C.utf8");
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT t FROM coll_t WHERE t > 'a' ORDER BY t;
RESET enable_seqscan;
RESET enable_bitmapscan;

-- memtable_size (kB) must be between 64 and 1048576
CREATE TABLE ro_t (a int);
\set VERBOSITY terse
CREATE INDEX ro_t_1 ON ro_t USING lsm (a) WITH (memtable_size = 1);
CREATE INDEX ro_t_2 ON ro_t USING lsm (a) WITH (memtable_size = 99999999);
CREATE INDEX ro_t_3 ON ro_t USING lsm (a) WITH (memtable_size = 63);
CREATE INDEX ro_t_4 ON ro_t USING lsm (a) WITH (memtable_size = 0);
CREATE INDEX ro_t_5 ON ro_t USING lsm (a) WITH (memtable_size = 1048577);
\set VERBOSITY default
-- every one of these errors has SQLSTATE 22023 and a DETAIL naming the valid
-- range, 64 .. 1048576, whichever side the value is out of
CREATE FUNCTION err_of(q text) RETURNS text LANGUAGE plpgsql AS $f$
DECLARE st text; detail text;
BEGIN
    EXECUTE q;
    RETURN 'no error';
EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, detail = PG_EXCEPTION_DETAIL;
    RETURN st || ' ' || detail;
END
$f$;
SELECT v AS memtable_size,
       split_part(e, ' ', 1) AS sqlstate,
       e ~ 'between "64" and "1048576"' AS detail_says_64_to_1048576
FROM (VALUES (-2), (0), (1), (63), (1048577), (99999999)) t(v),
     LATERAL err_of(format('CREATE INDEX ro_t_x ON ro_t USING lsm (a) WITH (memtable_size = %s)', v)) e;
CREATE INDEX ro_t_6 ON ro_t USING lsm (a) WITH (memtable_size = 'big');
CREATE INDEX ro_t_7 ON ro_t USING lsm (a) WITH (fillfactor = 50);
CREATE INDEX ro_t_ok1 ON ro_t USING lsm (a) WITH (memtable_size = 64);
CREATE INDEX ro_t_ok2 ON ro_t USING lsm (a) WITH (memtable_size = 1048576);
ALTER INDEX ro_t_ok1 SET (memtable_size = 10);
-- compaction, size_ratio and the bloom filter options
CREATE INDEX ro_t_8 ON ro_t USING lsm (a) WITH (compaction = 'foo');
CREATE INDEX ro_t_9 ON ro_t USING lsm (a) WITH (compaction = '');
CREATE INDEX ro_t_10 ON ro_t USING lsm (a) WITH (compaction = 'Leveled ');
CREATE INDEX ro_t_11 ON ro_t USING lsm (a) WITH (size_ratio = 1);
CREATE INDEX ro_t_12 ON ro_t USING lsm (a) WITH (size_ratio = 101);
CREATE INDEX ro_t_13 ON ro_t USING lsm (a) WITH (bloom_bits_per_key = -1);
CREATE INDEX ro_t_14 ON ro_t USING lsm (a) WITH (bloom_bits_per_key = 33);
CREATE INDEX ro_t_15 ON ro_t USING lsm (a) WITH (bloom_columns = -1);
CREATE INDEX ro_t_16 ON ro_t USING lsm (a) WITH (bloom_columns = 33);
CREATE INDEX ro_t_17 ON ro_t USING lsm (a) WITH (bloom_bits_per_key = 'ten');
CREATE INDEX ro_t_18 ON ro_t USING lsm (a) WITH (l0_compaction_trigger = 0);
CREATE INDEX ro_t_19 ON ro_t USING lsm (a) WITH (l0_compaction_trigger = 65);
CREATE INDEX ro_t_ok3 ON ro_t USING lsm (a) WITH (compaction = tiered, size_ratio = 2,
    bloom_bits_per_key = 0, bloom_columns = 0);
CREATE INDEX ro_t_ok4 ON ro_t USING lsm (a) WITH (compaction = 'lazy', size_ratio = 100,
    bloom_bits_per_key = 32, bloom_columns = 32);
ALTER INDEX ro_t_ok3 SET (compaction = 'foo');
ALTER INDEX ro_t_ok3 SET (compaction = leveled, bloom_bits_per_key = 16);
SELECT relname, reloptions FROM pg_class
WHERE relnamespace = 'lsm_errors'::regnamespace AND relname ~ '^ro_t' ORDER BY 1;

-- settings
SET lsm_am.memtable_size = 1;
SET lsm_am.memtable_size = '2GB';
-- lsm_am.max_runs is gone in 0.2 (lsm_am.l0_compaction_trigger and the
-- compaction picker replace it): the lsm_am prefix is reserved, so it errors
SET lsm_am.max_runs = 1;
SET lsm_am.l0_compaction_trigger = 0;
SET lsm_am.l0_compaction_trigger = 65;
SET lsm_am.l0_slowdown_trigger = 0;
SET lsm_am.l0_slowdown_trigger = 101;
SET lsm_am.l0_stop_trigger = 0;
SET lsm_am.l0_stop_trigger = 101;
SET lsm_am.max_workers = 1;
SET lsm_am.worker_naptime = '1s';
SET lsm_am.worker_idle_timeout = '1s';
SET lsm_am.memory = '128MB';
SET lsm_am.max_indexes = 10;
SET lsm_am.no_such_setting = 1;

-- types without an lsm operator class
CREATE TABLE ty_t (p point, j jsonb, n name, c char(3));
CREATE INDEX ty_t_p ON ty_t USING lsm (p);
CREATE INDEX ty_t_j ON ty_t USING lsm (j);
CREATE INDEX ty_t_n ON ty_t USING lsm (n);
CREATE INDEX ty_t_c ON ty_t USING lsm (c);
-- an operator class for a type lsm cannot encode: refused by CREATE INDEX,
-- and reported by amvalidate()
CREATE OPERATOR CLASS oid_lsm_ops FOR TYPE oid USING lsm AS
    OPERATOR 1 <, OPERATOR 2 <=, OPERATOR 3 =, OPERATOR 4 >=, OPERATOR 5 >,
    FUNCTION 1 btoidcmp(oid, oid);
CREATE TABLE oid_t (o oid);
CREATE INDEX oid_t_lsm ON oid_t USING lsm (o oid_lsm_ops);
SELECT amvalidate(oid) FROM pg_opclass WHERE opcname = 'oid_lsm_ops';
DROP OPERATOR CLASS oid_lsm_ops USING lsm;
-- INCLUDE columns need no operator class (lsm_include tests them)
CREATE INDEX ty_t_i ON coll_t USING lsm (id) INCLUDE (t);
DROP INDEX ty_t_i;
-- features lsm does not have
ALTER TABLE coll_t ADD CONSTRAINT coll_t_uq UNIQUE USING INDEX coll_t_c;

-- oversized entries: at most 1536 bytes; a text under "C" costs its length
-- + 9 bytes (NULL flag, 2-byte terminator, 6-byte TID).  Values much longer
-- than the limit are refused before they are encoded (the size in that
-- message is not the encoded size), so try_sql() shows SQLSTATE and hint.
CREATE FUNCTION try_sql(q text) RETURNS text LANGUAGE plpgsql AS $f$
DECLARE st text; hint text;
BEGIN
    EXECUTE q;
    RETURN 'no error';
EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, hint = PG_EXCEPTION_HINT;
    RETURN st || ' / ' || hint;
END
$f$;
CREATE TABLE big_t (id int, t text COLLATE "C", b bytea);
INSERT INTO big_t VALUES (1, repeat('x', 2000), NULL);
SELECT try_sql('CREATE INDEX big_t_lsm ON big_t USING lsm (t)');
TRUNCATE big_t;  -- not DELETE: another session's snapshot would keep the row for CREATE INDEX
CREATE INDEX big_t_lsm ON big_t USING lsm (t);
CREATE INDEX big_t_lsm_b ON big_t USING lsm (b);
SELECT try_sql($$INSERT INTO big_t VALUES (2, repeat('x', 2000), NULL)$$);
INSERT INTO big_t VALUES (3, repeat('x', 1528), NULL);
INSERT INTO big_t VALUES (4, repeat('x', 1527), NULL);
INSERT INTO big_t VALUES (5, NULL, decode(repeat('00', 1000), 'hex'));
INSERT INTO big_t VALUES (6, NULL, decode(repeat('01', 1527), 'hex'));
SELECT try_sql($$INSERT INTO big_t VALUES (7, NULL, decode(repeat('01', 100000), 'hex'))$$);
-- scan arguments have no size limit
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT id, length(t) FROM big_t WHERE t = repeat('x', 1527);
SELECT id, length(t) FROM big_t WHERE t < repeat('x', 5000) ORDER BY id;
SELECT id, length(b) FROM big_t WHERE b >= decode(repeat('01', 3000), 'hex') ORDER BY id;
SELECT id, length(b) FROM big_t WHERE b IS NOT NULL ORDER BY b;
RESET enable_seqscan;
RESET enable_bitmapscan;
SELECT id FROM big_t ORDER BY id;

-- the functions want an lsm index
CREATE TABLE fn_t (a int);
CREATE INDEX fn_t_bt ON fn_t USING btree (a);
CREATE INDEX fn_t_hash ON fn_t USING hash (a);
SELECT lsm_am.flush('fn_t_bt');
SELECT * FROM lsm_am.index_stats('fn_t_bt');
SELECT lsm_am.flush('fn_t_hash');
SELECT lsm_am.flush('fn_t');
SELECT * FROM lsm_am.index_stats('fn_t');
SELECT lsm_am.flush('no_such_index');
SELECT lsm_am.flush(NULL);

SET client_min_messages = warning;
DROP SCHEMA lsm_errors CASCADE;
RESET client_min_messages;
RESET search_path;
