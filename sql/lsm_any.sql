-- lsm_any: native = ANY(array) (amsearcharray).  A randomized differential
-- against a btree twin: random arrays (duplicates, NULLs, values absent from
-- the table, empty and large arrays) on ascending, descending and
-- multi-column indexes, combined with ranges and keys on other columns, with
-- ORDER BY ... LIMIT, as index scans, index-only scans, bitmap scans and
-- scrollable cursors.  Each query's lsm plan is checked (the lsm index with
-- = ANY as an Index Cond; no Sort where = ANY is on the leading column) and
-- its answer compared with btree's; the counts of failures must be 0.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS lsm_am;
RESET client_min_messages;

SELECT setseed(0.34);
CREATE TABLE any_lsm (a int, b int, c int) WITH (autovacuum_enabled = off);
INSERT INTO any_lsm
    SELECT CASE WHEN random() < 0.03 THEN NULL ELSE (random() * 100)::int END,
           CASE WHEN random() < 0.03 THEN NULL ELSE (random() * 20)::int END,
           g
      FROM generate_series(1, 4000) g;
CREATE TABLE any_bt (LIKE any_lsm) WITH (autovacuum_enabled = off);
INSERT INTO any_bt SELECT * FROM any_lsm;

-- A random int[] literal: mostly values of the table's range, some outside
-- it, duplicates, NULLs; sometimes empty, sometimes large.
CREATE FUNCTION rand_arr(lo int, hi int) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    n int;
    r float8 := random();
    parts text[] := '{}';
BEGIN
    IF r < 0.05 THEN
        RETURN '''{}''::int[]';
    ELSIF r < 0.12 THEN
        n := 300 + (random() * 300)::int;
    ELSE
        n := 1 + (random() * 8)::int;
    END IF;
    FOR i IN 1..n LOOP
        IF random() < 0.08 THEN
            parts := parts || 'NULL'::text;
        ELSE
            parts := parts || ((lo - 5 + random() * (hi - lo + 10))::int)::text;
        END IF;
    END LOOP;
    RETURN '''{' || array_to_string(parts, ',') || '}''::int[]';
END $$;

-- The answer of query q (%1$s: the table) as text, rows in the query's order.
CREATE FUNCTION answer(q text, tbl text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    res text;
BEGIN
    EXECUTE format('SELECT string_agg(x::text, '';'') FROM (' || q || ') x', tbl) INTO res;
    RETURN coalesce(res, '');
END $$;

-- The plan of q on the lsm table, as one text.
CREATE FUNCTION plan_text(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    line text;
    res text := '';
BEGIN
    FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || format(q, 'any_lsm') LOOP
        res := res || line || E'\n';
    END LOOP;
    RETURN res;
END $$;

-- Run n random queries of each shape for the indexes present; mode is
-- 'index' (index and index-only scans) or 'bitmap'.  Returns the failures.
CREATE FUNCTION any_diff(n int, mode text, idx text, lead_col text, sec_col text)
RETURNS TABLE (what text, failures int) LANGUAGE plpgsql AS $$
DECLARE
    q text;
    p text;
    bad_answer int := 0;
    bad_plan int := 0;
    shapes text[];
    ordered bool;
    lead_any bool;
BEGIN
    IF mode = 'index' THEN
        SET LOCAL enable_bitmapscan = off;
        SET LOCAL enable_indexscan = on;
        SET LOCAL enable_indexonlyscan = on;
    ELSE
        SET LOCAL enable_bitmapscan = on;
        SET LOCAL enable_indexscan = off;
        SET LOCAL enable_indexonlyscan = off;
    END IF;
    SET LOCAL enable_seqscan = off;
    IF mode = 'index' THEN
        SET LOCAL enable_sort = off;
    END IF;
    FOR i IN 1..n LOOP
        shapes := ARRAY[
            -- leading column, index order (index-only scans)
            format('SELECT %1$s FROM %%1$s WHERE %1$s = ANY (%2$s) ORDER BY %1$s LIMIT %3$s',
                   lead_col, rand_arr(0, 100), 1 + (random() * 50)::int),
            format('SELECT %1$s FROM %%1$s WHERE %1$s = ANY (%2$s) ORDER BY %1$s DESC LIMIT %3$s',
                   lead_col, rand_arr(0, 100), 1 + (random() * 50)::int),
            format('SELECT %1$s, c FROM %%1$s WHERE %1$s = ANY (%2$s) ORDER BY %1$s, c',
                   lead_col, rand_arr(0, 100)),
            -- with a range on the same column
            format('SELECT count(*), sum(c) FROM %%1$s WHERE %1$s = ANY (%2$s) AND %1$s %3$s %4$s',
                   lead_col, rand_arr(0, 100),
                   (ARRAY['<', '<=', '>', '>='])[1 + (random() * 3)::int], (random() * 100)::int),
            format('SELECT %1$s FROM %%1$s WHERE %1$s = ANY (%2$s) AND %1$s BETWEEN %3$s AND %4$s ORDER BY %1$s DESC',
                   lead_col, rand_arr(0, 100), (random() * 50)::int, 50 + (random() * 50)::int),
            -- two arrays on one column; other operators
            format('SELECT count(*), sum(c) FROM %%1$s WHERE %1$s = ANY (%2$s) AND %1$s = ANY (%3$s)',
                   lead_col, rand_arr(0, 100), rand_arr(0, 100)),
            format('SELECT count(*), sum(c) FROM %%1$s WHERE %1$s %3$s ANY (%2$s)',
                   lead_col, rand_arr(0, 100), (ARRAY['<', '<=', '>', '>='])[1 + (random() * 3)::int])];
        IF sec_col IS NOT NULL THEN
            shapes := shapes || ARRAY[
                -- = ANY on both columns, on the second, with an equality or a range first
                format('SELECT %1$s, %2$s, c FROM %%1$s WHERE %1$s = ANY (%3$s) AND %2$s = ANY (%4$s) ORDER BY %1$s, %2$s, c',
                       lead_col, sec_col, rand_arr(0, 100), rand_arr(0, 20)),
                format('SELECT %1$s, %2$s FROM %%1$s WHERE %1$s = %3$s AND %2$s = ANY (%4$s) ORDER BY %1$s DESC, %2$s DESC LIMIT %5$s',
                       lead_col, sec_col, (random() * 100)::int, rand_arr(0, 20), 1 + (random() * 20)::int),
                format('SELECT %1$s, %2$s FROM %%1$s WHERE %1$s BETWEEN %3$s AND %4$s AND %2$s = ANY (%5$s) ORDER BY %1$s, %2$s',
                       lead_col, sec_col, (random() * 50)::int, 50 + (random() * 50)::int, rand_arr(0, 20)),
                format('SELECT %1$s, %2$s FROM %%1$s WHERE %2$s = ANY (%3$s) ORDER BY %1$s, %2$s',
                       lead_col, sec_col, rand_arr(0, 20)),
                format('SELECT %1$s, %2$s FROM %%1$s WHERE %1$s = ANY (%3$s) AND %2$s > %4$s ORDER BY %1$s DESC, %2$s DESC',
                       lead_col, sec_col, rand_arr(0, 100), (random() * 20)::int)];
        END IF;
        FOR s IN 1..array_length(shapes, 1) LOOP
            q := shapes[s];
            IF answer(q, 'any_lsm') IS DISTINCT FROM answer(q, 'any_bt') THEN
                RAISE NOTICE 'different answers: %', q;
                bad_answer := bad_answer + 1;
            END IF;
            p := plan_text(q);
            -- = ANY on the leading column: an Index Cond on every version, in
            -- index order (15 and 16 treat = ANY on a later column as unordered
            -- and may then leave it to a filter to keep the index's order)
            lead_any := q ~ ('WHERE ' || lead_col || ' [<>=]+ ANY');
            ordered := q LIKE '%LIMIT%' AND q ~ ('WHERE ' || lead_col || ' = ANY');
            IF mode = 'index' THEN
                IF p !~ ('Index (Only )?Scan (Backward )?using ' || idx || ' on any_lsm')
                   OR (lead_any AND p !~ 'Index Cond: .*ANY')
                   OR (ordered AND p ~ 'Sort') THEN
                    RAISE NOTICE 'unexpected plan of %: %', q, p;
                    bad_plan := bad_plan + 1;
                END IF;
            ELSIF p !~ ('Bitmap Index Scan on ' || idx)
                  OR (lead_any AND p !~ 'Index Cond: .*ANY') THEN
                RAISE NOTICE 'unexpected plan of %: %', q, p;
                bad_plan := bad_plan + 1;
            END IF;
        END LOOP;
    END LOOP;
    RETURN QUERY VALUES ('answers', bad_answer), ('plans', bad_plan);
END $$;

-- Random fetches in both directions on scrollable cursors over = ANY; with
-- col2, = ANY on both columns (the scan iterates their combinations), in the
-- order ord.
CREATE FUNCTION any_cursor(n int, idx text, col text, col2 text DEFAULT NULL,
                           ord text DEFAULT NULL) RETURNS int LANGUAGE plpgsql AS $$
DECLARE
    q text;
    c1 refcursor;
    c2 refcursor;
    v1 text;
    v2 text;
    f1 bool;
    f2 bool;
    bad int := 0;
    dir int;
BEGIN
    SET LOCAL enable_bitmapscan = off;
    SET LOCAL enable_seqscan = off;
    SET LOCAL enable_sort = off;
    FOR i IN 1..n LOOP
        IF col2 IS NULL THEN
            q := format('SELECT %1$s::text FROM %%1$s WHERE %1$s = ANY (%2$s) ORDER BY %1$s', col, rand_arr(0, 100));
        ELSE
            q := format('SELECT (%1$s, %2$s)::text FROM %%1$s WHERE %1$s = ANY (%3$s) AND %2$s = ANY (%4$s) ORDER BY %5$s',
                        col, col2, rand_arr(0, 100), rand_arr(0, 20), ord);
        END IF;
        IF plan_text(q) !~ ('using ' || idx) THEN
            RAISE NOTICE 'unexpected plan of %: %', q, plan_text(q);
            bad := bad + 1;
        END IF;
        OPEN c1 SCROLL FOR EXECUTE format(q, 'any_lsm');
        OPEN c2 SCROLL FOR EXECUTE format(q, 'any_bt');
        FOR j IN 1..40 LOOP
            dir := (random() * 5)::int;
            IF dir <= 2 THEN
                FETCH NEXT FROM c1 INTO v1; f1 := FOUND;
                FETCH NEXT FROM c2 INTO v2; f2 := FOUND;
            ELSIF dir <= 4 THEN
                FETCH PRIOR FROM c1 INTO v1; f1 := FOUND;
                FETCH PRIOR FROM c2 INTO v2; f2 := FOUND;
            ELSE
                FETCH LAST FROM c1 INTO v1; f1 := FOUND;
                FETCH LAST FROM c2 INTO v2; f2 := FOUND;
            END IF;
            IF f1 IS DISTINCT FROM f2 OR (f1 AND v1 IS DISTINCT FROM v2) THEN
                RAISE NOTICE 'cursor differs at fetch % of %', j, q;
                bad := bad + 1;
                EXIT;
            END IF;
        END LOOP;
        CLOSE c1;
        CLOSE c2;
    END LOOP;
    RETURN bad;
END $$;

-- NULL elements never match; an empty array (or NULL) matches nothing
CREATE INDEX any_lsm_a ON any_lsm USING lsm (a);
CREATE INDEX any_bt_a ON any_bt (a);
VACUUM ANALYZE any_lsm, any_bt;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT a FROM any_lsm WHERE a = ANY ('{5,NULL,3,5}') ORDER BY a;
SELECT a, count(*) FROM any_lsm WHERE a = ANY ('{5,NULL,3,5}') GROUP BY a ORDER BY a;
SELECT count(*) FROM any_lsm WHERE a = ANY ('{NULL}');
SELECT count(*) FROM any_lsm WHERE a = ANY ('{}');
SELECT count(*) FROM any_lsm WHERE a = ANY (NULL::int[]);
EXPLAIN (COSTS OFF) SELECT a FROM any_lsm WHERE a = ANY ('{7,2,9}') ORDER BY a DESC LIMIT 3;
SELECT a FROM any_lsm WHERE a = ANY ('{7,2,9}') ORDER BY a DESC LIMIT 3;
RESET enable_seqscan;
RESET enable_bitmapscan;

-- one column, ascending
SELECT * FROM any_diff(25, 'index', 'any_lsm_a', 'a', NULL);
SELECT * FROM any_diff(10, 'bitmap', 'any_lsm_a', 'a', NULL);
SELECT any_cursor(15, 'any_lsm_a', 'a') AS cursor_failures;
DROP INDEX any_lsm_a, any_bt_a;

-- one column, descending
CREATE INDEX any_lsm_ad ON any_lsm USING lsm (a DESC);
CREATE INDEX any_bt_ad ON any_bt (a DESC);
SELECT * FROM any_diff(25, 'index', 'any_lsm_ad', 'a', NULL);
SELECT * FROM any_diff(10, 'bitmap', 'any_lsm_ad', 'a', NULL);
SELECT any_cursor(15, 'any_lsm_ad', 'a') AS cursor_failures;
DROP INDEX any_lsm_ad, any_bt_ad;

-- two columns, the sec_col descending
CREATE INDEX any_lsm_ab ON any_lsm USING lsm (a, b DESC);
CREATE INDEX any_bt_ab ON any_bt (a, b DESC);
SELECT * FROM any_diff(25, 'index', 'any_lsm_ab', 'a', 'b');
SELECT * FROM any_diff(10, 'bitmap', 'any_lsm_ab', 'a', 'b');
SELECT any_cursor(15, 'any_lsm_ab', 'a', 'b', 'a, b DESC') AS cursor_failures;
DROP INDEX any_lsm_ab, any_bt_ab;

-- entries in the memtable as well as in runs
CREATE INDEX any_lsm_ab ON any_lsm USING lsm (a DESC, b);
CREATE INDEX any_bt_ab ON any_bt (a DESC, b);
INSERT INTO any_lsm SELECT (random() * 110)::int - 5, (random() * 20)::int, g FROM generate_series(5001, 5600) g;
INSERT INTO any_bt SELECT * FROM any_lsm WHERE c > 5000;
DELETE FROM any_lsm WHERE c % 7 = 0;
DELETE FROM any_bt WHERE c % 7 = 0;
SELECT * FROM any_diff(25, 'index', 'any_lsm_ab', 'a', 'b');
SELECT * FROM any_diff(10, 'bitmap', 'any_lsm_ab', 'a', 'b');
SELECT any_cursor(15, 'any_lsm_ab', 'a', 'b', 'a DESC, b') AS cursor_failures;

DROP TABLE any_lsm, any_bt;
DROP FUNCTION any_diff(int, text, text, text, text), any_cursor(int, text, text, text, text),
    rand_arr(int, int), answer(text, text), plan_text(text);
