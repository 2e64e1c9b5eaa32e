-- lsm_include: CREATE INDEX ... USING lsm (...) INCLUDE (...) (issue 34,
-- items 1 and 4), as btree does it.  A randomized differential against a
-- btree twin: inc (two lsm indexes with INCLUDE columns of every type,
-- including types lsm cannot key: jsonb, int[], point; NULLs; long text
-- compressed inline and stored out of line in the heap) and inc_bt (the same
-- rows, the same indexes as btree).  The same queries run on both under
-- forced index-only, index and bitmap plans (the plan of the lsm query must
-- name the lsm index); the answers are compared as text with EXCEPT ALL both
-- ways, so each check's result is a count of differing rows (0).  The checks
-- run after CREATE INDEX (a run), after inserts, updates and deletes (the
-- memtable, dead entries), after lsm_am.flush (level-0 runs), after
-- lsm_am.compact (one merged run), after VACUUM and after REINDEX.  Then the
-- errors (an entry over 1536 bytes: SQLSTATE 54000, the row not inserted,
-- the index still usable), UNIQUE ... INCLUDE (only the key conflicts; ON
-- CONFLICT), \d and pg_get_indexdef.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS lsm_am;
RESET client_min_messages;
CREATE SCHEMA lsm_include;
SET search_path = lsm_include, public;

SELECT setseed(0.71);
-- pad (not indexed, 2100 bytes in some rows) takes a row over the TOAST
-- threshold; toast_tuple_target = 128 then has the long values of the row
-- compressed (c_long, storage extended) or moved out of line uncompressed
-- (c_ext, storage external)
CREATE TABLE inc (
    id int, k int4, t text COLLATE "C",
    c_i2 int2, c_i8 int8, c_f4 float4, c_f8 float8, c_num numeric, c_bool bool,
    c_date date, c_time time, c_ts timestamp, c_tz timestamptz, c_iv interval,
    c_u uuid, c_text text COLLATE "C", c_vc varchar(40), c_b bytea,
    c_j jsonb, c_arr int[], c_pt point, c_long text, c_ext text, pad text)
    WITH (autovacuum_enabled = off, toast_tuple_target = 128);
ALTER TABLE inc ALTER COLUMN c_ext SET STORAGE EXTERNAL;
CREATE TABLE inc_bt (LIKE inc INCLUDING STORAGE)
    WITH (autovacuum_enabled = off, toast_tuple_target = 128);

-- n random rows from id first on: keys with duplicates and NULLs; every
-- included column NULL now and then
CREATE FUNCTION gen_rows(first int, n int) RETURNS SETOF inc LANGUAGE sql AS $f$
    SELECT g,
        CASE WHEN random() < 0.04 THEN NULL ELSE (random() * 400)::int END,
        CASE WHEN random() < 0.04 THEN NULL ELSE substr(md5(random()::text), 1, 1 + (random() * 3)::int) END,
        CASE WHEN random() < 0.1 THEN NULL ELSE (random() * 60000 - 30000)::int2 END,
        CASE WHEN random() < 0.1 THEN NULL ELSE (random() * 1e15)::int8 END,
        CASE WHEN random() < 0.1 THEN NULL
             ELSE (ARRAY['NaN', 'Infinity', '-0', '0', '1.5', (random() * 1e6)::text])[1 + (random() * 5)::int]::float4 END,
        CASE WHEN random() < 0.1 THEN NULL
             ELSE (ARRAY['NaN', '-Infinity', '-0', '1e-300', '2.5', (random() * 1e12)::text])[1 + (random() * 5)::int]::float8 END,
        CASE WHEN random() < 0.1 THEN NULL
             ELSE (ARRAY['NaN', '1.10', '-0.000', '1e40', (random() * 1e6)::numeric(20, 3)::text])[1 + (random() * 4)::int]::numeric END,
        CASE WHEN random() < 0.1 THEN NULL ELSE random() < 0.5 END,
        CASE WHEN random() < 0.1 THEN NULL ELSE date '2000-01-01' + (random() * 10000)::int END,
        CASE WHEN random() < 0.1 THEN NULL ELSE time '00:00' + random() * interval '24 hours' END,
        CASE WHEN random() < 0.1 THEN NULL ELSE timestamp '2000-01-01' + random() * interval '9000 days' END,
        CASE WHEN random() < 0.1 THEN NULL ELSE timestamptz '2000-01-01 00:00+00' + random() * interval '9000 days' END,
        CASE WHEN random() < 0.1 THEN NULL ELSE make_interval(0, (random() * 14)::int, 0, (random() * 40)::int, 0, 0, random() * 100) END,
        CASE WHEN random() < 0.1 THEN NULL ELSE md5(random()::text)::uuid END,
        CASE WHEN random() < 0.1 THEN NULL ELSE repeat(md5(random()::text), (random() * 2)::int) || 'é' END,
        CASE WHEN random() < 0.1 THEN NULL ELSE substr(md5(random()::text), 1, (random() * 32)::int) END,
        CASE WHEN random() < 0.1 THEN NULL ELSE decode(substr(md5(random()::text), 1, 2 * (random() * 16)::int), 'hex') END,
        CASE WHEN random() < 0.1 THEN NULL WHEN random() < 0.05 THEN 'null'::jsonb
             ELSE jsonb_build_object('n', (random() * 100)::int, 's', md5(random()::text),
                                     'a', jsonb_build_array(random() < 0.5, NULL, (random() * 10)::int)) END,
        CASE WHEN random() < 0.1 THEN NULL WHEN random() < 0.05 THEN '{}'::int[]
             ELSE ARRAY[(random() * 100)::int, NULL, (random() * 100)::int] END,
        CASE WHEN random() < 0.1 THEN NULL ELSE point(random() * 100, random() * 100) END,
        -- compressible: a short pattern repeated to 200..700 bytes
        CASE WHEN random() < 0.1 THEN NULL ELSE repeat(substr(md5(random()::text), 1, 4), 50 + (random() * 125)::int) END,
        -- incompressible (hex digits of md5s): 192..448 bytes, out of line
        CASE WHEN random() < 0.1 THEN NULL
             ELSE (SELECT string_agg(md5(random()::text || i || g), '') FROM generate_series(1, 6 + (random() * 8)::int) i) END,
        CASE WHEN random() < 0.5 THEN repeat('p', 2100) END
    FROM generate_series(first, first + n - 1) g
$f$;

-- on_both(stmt): stmt (%1$s stands for the table) on inc, then on inc_bt
CREATE PROCEDURE on_both(stmt text) LANGUAGE plpgsql AS $f$
BEGIN
    EXECUTE format(stmt, 'inc');
    EXECUTE format(stmt, 'inc_bt');
END
$f$;

-- the staging table of new rows: no TOAST there (storage plain), so that
-- inc and inc_bt get the values whole and TOAST them themselves
CREATE PROCEDURE fill_stage(first int, n int) LANGUAGE plpgsql AS $f$
BEGIN
    DROP TABLE IF EXISTS stage;
    CREATE TEMP TABLE stage (LIKE inc);
    ALTER TABLE stage ALTER c_long SET STORAGE PLAIN, ALTER c_ext SET STORAGE PLAIN,
        ALTER pad SET STORAGE PLAIN;
    INSERT INTO stage SELECT * FROM gen_rows(first, n);
END
$f$;

-- mk: a two-column key; created on the empty tables, every entry arrives by
-- insert (a tiny memtable: flushes to runs on the way)
CREATE INDEX inc_mk ON inc USING lsm (t DESC, c_i8) INCLUDE (k, c_j, c_arr, c_num, c_pt)
    WITH (memtable_size = 64);
CREATE INDEX inc_bt_mk ON inc_bt (t DESC, c_i8) INCLUDE (k, c_j, c_arr, c_num, c_pt);
CALL fill_stage(1, 1500);
CALL on_both('INSERT INTO %1$s SELECT * FROM stage');
-- the values are TOASTed in the heap as intended
CREATE FUNCTION toasted_values(rel regclass) RETURNS bigint LANGUAGE plpgsql AS $f$
DECLARE n bigint;
BEGIN
    EXECUTE format('SELECT count(DISTINCT chunk_id) FROM %s',
                   (SELECT reltoastrelid::regclass FROM pg_class WHERE oid = rel)) INTO n;
    RETURN n;
END
$f$;
SELECT count(*) FILTER (WHERE pg_column_compression(c_long) IS NOT NULL) > 500 AS long_compressed,
       count(*) FILTER (WHERE pg_column_compression(c_ext) IS NOT NULL) AS ext_compressed,
       toasted_values('inc') > 500 AS out_of_line, toasted_values('inc_bt') > 500 AS bt_out_of_line
    FROM inc;
-- k: every type included; built on the loaded table (CREATE INDEX's run)
CREATE INDEX inc_k ON inc USING lsm (k) INCLUDE (id, c_i2, c_i8, c_f4, c_f8, c_num,
    c_bool, c_date, c_time, c_ts, c_tz, c_iv, c_u, c_text, c_vc, c_b, c_j, c_arr, c_pt,
    c_long, c_ext);
CREATE INDEX inc_bt_k ON inc_bt (k) INCLUDE (id, c_i2, c_i8, c_f4, c_f8, c_num,
    c_bool, c_date, c_time, c_ts, c_tz, c_iv, c_u, c_text, c_vc, c_b, c_j, c_arr, c_pt,
    c_long, c_ext);
VACUUM ANALYZE inc;
VACUUM ANALYZE inc_bt;

-- the plans
SET enable_seqscan = off;
SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT k, c_j, c_arr, c_pt, c_long, c_ext FROM inc WHERE k = 7;
EXPLAIN (COSTS OFF) SELECT k, id FROM inc WHERE k BETWEEN 1 AND 9 AND c_bool;
EXPLAIN (COSTS OFF) SELECT t, c_i8, k, c_j FROM inc WHERE t = 'a' AND c_i8 > 100;
SET enable_indexonlyscan = off;
EXPLAIN (COSTS OFF) SELECT k, c_j FROM inc WHERE k = 7;
RESET enable_indexonlyscan;
SET enable_indexscan = off;
SET enable_bitmapscan = on;
EXPLAIN (COSTS OFF) SELECT k, c_j FROM inc WHERE k = 7;
RESET enable_indexscan;
RESET enable_bitmapscan;
RESET enable_seqscan;
-- the included columns are returnable, as btree's
SELECT i AS attnum, pg_index_column_has_property('inc_k'::regclass, i, 'returnable') AS lsm,
       pg_index_column_has_property('inc_bt_k'::regclass, i, 'returnable') AS btree
    FROM generate_series(1, 3) i;
SELECT indnatts, indnkeyatts FROM pg_index WHERE indexrelid = 'inc_k'::regclass;

-- inc_check(q, mode, idx): q (%1$s stands for the table) on inc under
-- planner settings forcing mode ('ionly', 'index' or 'bitmap'), whose plan
-- must scan lsm index idx that way, and on inc_bt under the same settings;
-- 'ok N' (N rows), or the plan or the number of rows in one answer and not
-- the other (compared as text, as multisets).
CREATE FUNCTION inc_check(q text, mode text, idx text) RETURNS text
LANGUAGE plpgsql AS $f$
DECLARE
    plan text := '';
    line text;
    want text;
    n bigint;
    r bigint;
BEGIN
    PERFORM set_config('enable_seqscan', 'off', true);
    PERFORM set_config('enable_indexscan', (mode <> 'bitmap')::text, true);
    PERFORM set_config('enable_indexonlyscan', (mode = 'ionly')::text, true);
    PERFORM set_config('enable_bitmapscan', (mode = 'bitmap')::text, true);
    PERFORM set_config('max_parallel_workers_per_gather', '0', true);
    want := CASE mode WHEN 'ionly' THEN 'Index Only Scan using ' || idx || ' on inc'
                      WHEN 'index' THEN 'Index Scan using ' || idx || ' on inc'
                      ELSE 'Bitmap Index Scan on ' || idx END;
    FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || format(q, 'inc') LOOP
        plan := plan || line || E'\n';
    END LOOP;
    IF position(want IN plan) = 0 OR (mode = 'index' AND plan LIKE '%Index Only Scan%') THEN
        RETURN 'plan is not ' || want || ': ' || plan;
    END IF;
    EXECUTE format('WITH a AS MATERIALIZED (SELECT x::text FROM (%1$s) x),
                         b AS MATERIALIZED (SELECT x::text FROM (%2$s) x)
                    SELECT (SELECT count(*) FROM a),
                           count(*) FROM ((TABLE a EXCEPT ALL TABLE b) UNION ALL (TABLE b EXCEPT ALL TABLE a)) d',
                   format(q, 'inc'), format(q, 'inc_bt'))
        INTO r, n;
    IF n <> 0 THEN
        RETURN n || ' rows differ: ' || format(q, 'inc');
    END IF;
    RETURN 'ok ' || r;
END
$f$;

-- random queries of both indexes (constants from random()); all_cols: the
-- columns inc_k holds
CREATE FUNCTION inc_queries(n int) RETURNS TABLE (q text, idx text, modes text[])
LANGUAGE plpgsql AS $f$
DECLARE
    all_cols text := 'k, id, c_i2, c_i8, c_f4, c_f8, c_num, c_bool, c_date, c_time, c_ts, c_tz, '
                     'c_iv, c_u, c_text, c_vc, c_b, c_j, c_arr, c_pt, c_long, c_ext';
    lo int;
    every text[] := ARRAY['ionly', 'index', 'bitmap'];
BEGIN
    FOR i IN 1..n LOOP
        lo := (random() * 400)::int;
        q := format('SELECT %s FROM %%1$s WHERE k = %s', all_cols, lo);
        idx := 'inc_k'; modes := every; RETURN NEXT;
        q := format('SELECT %s FROM %%1$s WHERE k BETWEEN %s AND %s', all_cols, lo, lo + (random() * 30)::int);
        RETURN NEXT;
        q := format('SELECT %s FROM %%1$s WHERE k = ANY (''{%s,%s,%s,NULL}'')', all_cols,
                    lo, (random() * 400)::int, (random() * 400)::int);
        RETURN NEXT;
        -- a filter on included columns, evaluated on the index's values
        q := format('SELECT k, id, c_text, c_arr FROM %%1$s WHERE k < %s AND (c_bool OR c_i2 > 0) AND c_j ? ''n''', lo);
        RETURN NEXT;
        q := format('SELECT c_bool, count(*), sum(c_i8), max(c_ts), min(c_date), sum(length(c_long)), '
                    'count(c_ext), count(DISTINCT c_u) FROM %%1$s WHERE k >= %s GROUP BY c_bool', lo);
        RETURN NEXT;
        q := format('SELECT %s FROM %%1$s WHERE k IS NULL', all_cols);
        modes := ARRAY['index', 'bitmap']; RETURN NEXT;
        q := format('SELECT t, c_i8, k, c_j, c_arr, c_num, c_pt FROM %%1$s WHERE t = %L', substr(md5(random()::text), 1, 1));
        idx := 'inc_mk'; modes := every; RETURN NEXT;
        q := format('SELECT t, c_i8, k, c_j, c_arr, c_num, c_pt FROM %%1$s WHERE t = %L AND c_i8 > %s',
                    substr(md5(random()::text), 1, 2), (random() * 1e15)::int8);
        RETURN NEXT;
        q := format('SELECT t, k, c_j, c_num FROM %%1$s WHERE t >= %L AND t < %L AND c_arr[1] > 50',
                    substr(md5(random()::text), 1, 1), substr(md5(random()::text), 1, 1) || 'z');
        RETURN NEXT;
    END LOOP;
END
$f$;

-- run n rounds of the queries in every mode: the failures (none) and a count
CREATE TABLE results (phase text, q text, mode text, result text);
CREATE PROCEDURE run_checks(phase text, n int) LANGUAGE plpgsql AS $f$
BEGIN
    INSERT INTO results
        SELECT phase, s.q, m, inc_check(s.q, m, s.idx)
        FROM inc_queries(n) s, unnest(s.modes) m;
END
$f$;
CREATE VIEW failures AS SELECT phase, mode, result FROM results WHERE result !~ '^ok';

-- the tables hold the same rows; each index holds one entry per heap tuple
-- it covers; every page accounted for; verify() finds the indexes sound
CREATE FUNCTION same_tables() RETURNS bigint LANGUAGE sql AS $f$
    SELECT count(*) FROM ((SELECT x::text FROM inc x EXCEPT ALL SELECT x::text FROM inc_bt x)
                          UNION ALL (SELECT x::text FROM inc_bt x EXCEPT ALL SELECT x::text FROM inc x)) d
$f$;
CREATE VIEW health AS
    SELECT c.relname AS index, k.leaked_pages, k.dropped_pages, length(lsm_am.verify(c.oid, true)::text) = 0 AS sound
    FROM pg_class c, LATERAL lsm_am.check_index(c.oid) k
    WHERE c.relam = (SELECT oid FROM pg_am WHERE amname = 'lsm') AND c.relkind = 'i'
      AND c.relnamespace = 'lsm_include'::regnamespace AND c.relname LIKE 'inc%';

-- 1. after CREATE INDEX: inc_k is one run, inc_mk runs and a memtable
CALL run_checks('1 create index', 2);
SELECT * FROM failures;
SELECT s.runs >= 1 AS runs, s.memtable_entries AS memtable FROM lsm_am.index_stats('inc_k') s;
SELECT * FROM health ORDER BY index;

-- 2. inserts (memtable), updates of included columns only (a new entry for
-- the same key), updates of keys, deletes, a rolled-back insert
CALL fill_stage(3001, 500);
CALL on_both('INSERT INTO %1$s SELECT * FROM stage');
CALL on_both('UPDATE %1$s SET c_j = jsonb_build_object(''upd'', id), c_long = repeat(''u'', 300 + id %% 200),
              c_arr = ARRAY[id], c_num = id / 7.0 WHERE id %% 9 = 0');
CALL on_both('UPDATE %1$s SET k = k + 1, c_text = ''moved'' WHERE id %% 13 = 0');
CALL on_both('UPDATE %1$s SET c_ext = NULL, c_pt = NULL, c_iv = ''-1 mon''  WHERE id %% 17 = 0');
CALL on_both('DELETE FROM %1$s WHERE id %% 11 = 0');
BEGIN;
CALL on_both('INSERT INTO %1$s SELECT * FROM gen_rows(9001, 200)');
ROLLBACK;
SELECT s.memtable_entries > 0 AS in_memtable FROM lsm_am.index_stats('inc_k') s;
SELECT same_tables();
CALL run_checks('2 memtable, dead rows', 2);
SELECT * FROM failures;

-- 3. flush (level-0 runs), more changes, then compact (one merged run)
SELECT lsm_am.flush('inc_k');
SELECT lsm_am.flush('inc_mk');
CALL on_both('INSERT INTO %1$s SELECT * FROM stage WHERE id %% 3 = 0');
SELECT lsm_am.flush('inc_k');
CALL on_both('UPDATE %1$s SET c_b = ''\x00ff'', c_bool = NOT c_bool WHERE id %% 7 = 1');
CALL on_both('DELETE FROM %1$s WHERE id %% 19 = 2');
SELECT s.runs >= 3 AS runs, s.memtable_entries > 0 AS in_memtable FROM lsm_am.index_stats('inc_k') s;
CALL run_checks('3 flushed runs', 2);
SELECT * FROM failures;
SELECT lsm_am.compact('inc_k');
SELECT lsm_am.compact('inc_mk');
SELECT s.runs, s.memtable_entries FROM lsm_am.index_stats('inc_k') s;
CALL run_checks('3 compacted', 2);
SELECT * FROM failures;

-- 4. VACUUM removes the dead rows' entries (one entry per live row), and the
-- visibility map is set again (index-only scans without heap fetches)
VACUUM inc;
VACUUM inc_bt;
SELECT s.memtable_entries + s.run_entries = (SELECT count(*) FROM inc) AS one_entry_per_row
    FROM lsm_am.index_stats('inc_k') s;
SELECT s.memtable_entries + s.run_entries = (SELECT count(*) FROM inc) AS mk_one_entry_per_row
    FROM lsm_am.index_stats('inc_mk') s;
SELECT relallvisible = relpages AS all_visible FROM pg_class WHERE oid = 'inc'::regclass;
CALL run_checks('4 vacuum', 2);
SELECT * FROM failures;
SELECT * FROM health ORDER BY index;

-- 5. REINDEX (a new build of both lsm indexes), then more rows
REINDEX INDEX inc_k;
REINDEX INDEX inc_mk;
CALL fill_stage(5001, 300);
CALL on_both('INSERT INTO %1$s SELECT * FROM stage');
CALL run_checks('5 reindex', 2);
SELECT * FROM failures;
SELECT * FROM health ORDER BY index;
SELECT same_tables();
SELECT phase, count(*) AS checks, count(*) FILTER (WHERE result !~ '^ok') AS failed,
       count(*) FILTER (WHERE result ~ '^ok [1-9]') > count(*) * 0.7 AS mostly_rows
    FROM results GROUP BY phase ORDER BY phase;

-- 6. the catalog: \d, pg_get_indexdef (round trip), the table's indexes
\d inc_k
\d inc_mk
SELECT pg_get_indexdef('inc_k'::regclass);
SELECT pg_get_indexdef('inc_mk'::regclass);
SELECT pg_get_indexdef('inc_mk'::regclass, 5, true) AS col5,
       pg_get_indexdef('inc_mk'::regclass, 2, true) AS col2;
DO $$
DECLARE d text := pg_get_indexdef('inc_mk'::regclass);
BEGIN
    DROP INDEX inc_mk;
    EXECUTE d;
    IF pg_get_indexdef('inc_mk'::regclass) IS DISTINCT FROM d THEN
        RAISE EXCEPTION 'not the same definition: %', pg_get_indexdef('inc_mk'::regclass);
    END IF;
END $$;
SELECT inc_check('SELECT t, c_i8, k, c_j, c_arr, c_num, c_pt FROM %1$s WHERE t >= ''a''', 'ionly', 'inc_mk') ~ '^ok [1-9]' AS ok;

-- 7. an entry over 1536 bytes (key + included values + TID): SQLSTATE
-- 54000, the row is not inserted, the index stays usable
CREATE FUNCTION try_sql(q text) RETURNS text LANGUAGE plpgsql AS $f$
DECLARE st text; msg text;
BEGIN
    EXECUTE q;
    RETURN 'no error';
EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT;
    RETURN st || ': ' || msg;
END
$f$;
CREATE TABLE big (id int, k int, a text COLLATE "C", b text, j jsonb) WITH (autovacuum_enabled = off);
CREATE INDEX big_k ON big USING lsm (k) INCLUDE (a, b, j);
CREATE INDEX big_a ON big USING lsm (a) INCLUDE (b);
INSERT INTO big VALUES (1, 1, 'a', 'small', '{"x": 1}');
-- one included value too long
\set VERBOSITY default
INSERT INTO big VALUES (2, 2, 'a', repeat('x', 1600), NULL);
\set VERBOSITY terse
-- each value fits, the sum does not (key of big_a 800 bytes + included 800)
SELECT try_sql($$INSERT INTO big VALUES (3, 3, repeat('k', 800), repeat('i', 800), NULL)$$);
-- a long jsonb
SELECT try_sql($$INSERT INTO big VALUES (4, 4, 'a', NULL, (SELECT jsonb_agg(g) FROM generate_series(1, 600) g))$$);
-- a value much longer than the limit that compresses well in the heap
SELECT try_sql($$INSERT INTO big VALUES (5, 5, 'a', repeat('c', 100000), NULL)$$);
-- an update that makes an entry too long leaves the row as it was
SELECT try_sql($$UPDATE big SET b = repeat('y', 2000) WHERE id = 1$$);
-- CREATE INDEX over a row too long for the index fails, no index is left
INSERT INTO big VALUES (6, 6, 'a', repeat('z', 1200), NULL);
SELECT try_sql($$CREATE INDEX big_bb ON big USING lsm (b) INCLUDE (b)$$);
SELECT count(*) FROM pg_class WHERE relname = 'big_bb';
-- the rows: 1 (unchanged) and 6
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT id, k, a, left(b, 10) AS b, length(b), j FROM big ORDER BY id;
EXPLAIN (COSTS OFF) SELECT k, length(b), j FROM big WHERE k >= 0;
SELECT k, length(b), j FROM big WHERE k >= 0;
SELECT k, b, j FROM big WHERE k BETWEEN 2 AND 5;
-- still usable: more rows, a flush, and the lookups
INSERT INTO big SELECT g, g, 'a' || g, repeat('w', g), jsonb_build_object('g', g) FROM generate_series(7, 1000) g;
SELECT lsm_am.flush('big_k');
SELECT count(*), sum(length(b)), count(j) FROM big WHERE k >= 0;
SELECT k, length(b), j FROM big WHERE k IN (1, 6, 500, 1000) ORDER BY k;
SELECT a, length(b) FROM big WHERE a = 'a500';
RESET enable_seqscan;
RESET enable_bitmapscan;
SELECT lsm_am.verify('big_k', true), lsm_am.verify('big_a', true);

-- 8. UNIQUE ... INCLUDE: only the key columns are unique (as btree's)
CREATE TABLE uqi (id int, k int, a text, j jsonb);
CREATE UNIQUE INDEX uqi_k ON uqi USING lsm (k) INCLUDE (a, j);
CREATE TABLE uqi_bt (LIKE uqi);
CREATE UNIQUE INDEX uqi_bt_k ON uqi_bt (k) INCLUDE (a, j);
\set VERBOSITY default
INSERT INTO uqi VALUES (1, 1, 'x', '{"v": 1}');
-- the same key, other included values: a conflict, in the memtable and in a run
INSERT INTO uqi VALUES (2, 1, 'y', '{"v": 2}');
INSERT INTO uqi_bt VALUES (1, 1, 'x', '{"v": 1}'), (2, 1, 'y', '{"v": 2}');
SELECT lsm_am.flush('uqi_k');
INSERT INTO uqi VALUES (3, 1, 'x', '{"v": 1}');
\set VERBOSITY terse
-- the same included values, other keys: no conflict; NULL keys are distinct
INSERT INTO uqi VALUES (4, 2, 'x', '{"v": 1}'), (5, NULL, 'x', NULL), (6, NULL, 'x', NULL);
-- ON CONFLICT on the key
INSERT INTO uqi VALUES (7, 1, 'z', '{"v": 7}') ON CONFLICT (k) DO NOTHING;
INSERT INTO uqi VALUES (8, 2, 'updated', '{"v": 8}')
    ON CONFLICT (k) DO UPDATE SET a = excluded.a, j = excluded.j RETURNING id, k, a, j;
INSERT INTO uqi VALUES (9, 3, 'new', '{"v": 9}')
    ON CONFLICT (k) DO UPDATE SET a = excluded.a RETURNING id, k, a, j;
EXPLAIN (COSTS OFF) INSERT INTO uqi VALUES (10, 3, 'e', NULL) ON CONFLICT (k) DO NOTHING;
-- a deleted duplicate does not conflict
DELETE FROM uqi WHERE k = 3;
INSERT INTO uqi VALUES (11, 3, 'again', '[]');
VACUUM uqi;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT k, a, j FROM uqi WHERE k >= 1;
SELECT k, a, j FROM uqi WHERE k >= 1 ORDER BY k;
RESET enable_seqscan;
RESET enable_bitmapscan;
SELECT id, k, a, j FROM uqi ORDER BY id;
-- CREATE UNIQUE INDEX over rows whose keys are equal and included values differ
CREATE TABLE uqd (k int, a text);
INSERT INTO uqd VALUES (1, 'a'), (1, 'b');
CREATE UNIQUE INDEX uqd_k ON uqd USING lsm (k) INCLUDE (a);
CREATE UNIQUE INDEX uqd_ka ON uqd USING lsm (k, a);
\d uqi
SELECT lsm_am.verify('uqi_k', true);
-- a two-column unique key: only the whole key conflicts; NULLS NOT DISTINCT
CREATE TABLE uq2 (a int, b int, c text);
CREATE UNIQUE INDEX uq2_ab ON uq2 USING lsm (a, b) INCLUDE (c);
INSERT INTO uq2 VALUES (1, 1, 'x'), (1, 2, 'x');
SELECT lsm_am.flush('uq2_ab');
INSERT INTO uq2 VALUES (1, 2, 'y');
INSERT INTO uq2 VALUES (1, 3, 'x');
CREATE UNIQUE INDEX uq2_nn ON uq2 USING lsm (c) INCLUDE (a) NULLS NOT DISTINCT WHERE b > 2;
INSERT INTO uq2 VALUES (2, 3, NULL);
INSERT INTO uq2 VALUES (2, 4, NULL);
INSERT INTO uq2 VALUES (2, 1, NULL);
SELECT a, b, c FROM uq2 ORDER BY a, b;

-- 9. more shapes: a backward index-only scan, a scrollable cursor, a merge
-- join (mark and restore), a partial index, CREATE INDEX and REINDEX
-- CONCURRENTLY, a new type of an included column (the index is rebuilt),
-- included columns of types without an lsm operator class, after a dropped
-- column
CREATE TABLE sh (id int, dropped int, k int, t text COLLATE "C", n name, c char(3), o oid,
    r int4range, l pg_lsn) WITH (autovacuum_enabled = off);
ALTER TABLE sh DROP COLUMN dropped;
INSERT INTO sh SELECT g, g % 50, 't' || g, 'n' || g, 'c' || g % 10, g, int4range(g, g + 3), ('0/' || g)::pg_lsn
    FROM generate_series(1, 300) g;
INSERT INTO sh VALUES (301, NULL, NULL, NULL, NULL, NULL, 'empty', NULL);
CREATE INDEX sh_k ON sh USING lsm (k) INCLUDE (id, t, n, c, o, r, l);
CREATE INDEX CONCURRENTLY sh_id ON sh USING lsm (id DESC) INCLUDE (t, r) WHERE id % 3 = 0;
REINDEX INDEX CONCURRENTLY sh_id;
VACUUM sh;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT k, id, t, n, c, o, r, l FROM sh WHERE k < 2 ORDER BY k DESC;
SELECT k, id, t, n, c, o, r, l FROM sh WHERE k < 2 ORDER BY k DESC, id;
SELECT k, id, t, n, c, o, r, l FROM sh WHERE k IS NULL;
BEGIN;
DECLARE cur SCROLL CURSOR FOR SELECT id, t, r FROM sh WHERE id < 40 AND id % 3 = 0 ORDER BY id DESC;
FETCH 2 FROM cur;
FETCH LAST FROM cur;
FETCH BACKWARD 2 FROM cur;
FETCH ABSOLUTE 1 FROM cur;
COMMIT;
SET enable_hashjoin = off;
SET enable_nestloop = off;
SET enable_sort = off;
CREATE FUNCTION plan_of(q text) RETURNS text LANGUAGE plpgsql AS $f$
DECLARE line text; plan text := '';
BEGIN
    FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
        plan := plan || line || E'\n';
    END LOOP;
    RETURN plan;
END
$f$;
SELECT p ~ 'Merge Join' AS merge_join,
       p ~ 'Index Only Scan using sh_k on sh a' AND p ~ 'Index Only Scan using sh_k on sh b' AS index_only
    FROM plan_of('SELECT a.k, a.t, b.n FROM sh a JOIN sh b ON a.k = b.k WHERE a.k < 3') p;
SELECT count(*), min(a.t || b.n), max(a.t || b.n) FROM sh a JOIN sh b ON a.k = b.k WHERE a.k < 3;
RESET enable_hashjoin;
RESET enable_nestloop;
RESET enable_sort;
EXPLAIN (COSTS OFF) SELECT id, t, r FROM sh WHERE id < 20 AND id % 3 = 0;
SELECT id, t, r FROM sh WHERE id < 20 AND id % 3 = 0;
ALTER TABLE sh ALTER COLUMN t TYPE varchar(10);
SELECT pg_get_indexdef('sh_id'::regclass);
SELECT id, t, r FROM sh WHERE id < 10 AND id % 3 = 0;
RESET enable_seqscan;
RESET enable_bitmapscan;
SELECT lsm_am.verify('sh_k', true), lsm_am.verify('sh_id', true);

SET client_min_messages = warning;
DROP SCHEMA lsm_include CASCADE;
RESET client_min_messages;
RESET search_path;
