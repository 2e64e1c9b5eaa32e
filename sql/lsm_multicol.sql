-- lsm_multicol: multi-column lsm indexes with DESC and NULLS FIRST/LAST
-- columns; prefix equality + range conditions; full-order scans both ways.
-- lsm_check() compares each answer, in order, with seqscan + sort.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS lsm_am;
RESET client_min_messages;
CREATE SCHEMA lsm_multicol;
SET search_path = lsm_multicol, public;

-- lsm_check(query): run the query with only index scans allowed and check
-- that the plan scans at least one lsm index; run it again with index scans
-- disabled (seqscan + sort) and compare the two row lists, in order.
-- Returns 'ok (N rows)' or a description of the difference.
CREATE FUNCTION lsm_check(q text) RETURNS text LANGUAGE plpgsql AS $f$
DECLARE
    plan text := '';
    line text;
    got text;
    want text;
    n bigint;
BEGIN
    PERFORM set_config('enable_seqscan', 'off', true);
    PERFORM set_config('enable_bitmapscan', 'off', true);
    PERFORM set_config('enable_indexscan', 'on', true);
    PERFORM set_config('enable_indexonlyscan', 'on', true);
    FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
        plan := plan || line || E'\n';
    END LOOP;
    IF NOT EXISTS (
        SELECT FROM regexp_matches(plan, 'Index (?:Only )?Scan (?:Backward )?using (\S+)', 'g') m
        JOIN pg_class c ON c.relname = m[1] AND c.relkind = 'i'
        JOIN pg_am a ON a.oid = c.relam AND a.amname = 'lsm') THEN
        RETURN 'lsm index not used: ' || plan;
    END IF;
    EXECUTE format('SELECT count(*), string_agg(x::text, %L) FROM (%s) x', '|', q)
        INTO n, got;
    PERFORM set_config('enable_seqscan', 'on', true);
    PERFORM set_config('enable_indexscan', 'off', true);
    PERFORM set_config('enable_indexonlyscan', 'off', true);
    EXECUTE format('SELECT string_agg(x::text, %L) FROM (%s) x', '|', q) INTO want;
    PERFORM set_config('enable_seqscan', 'on', true);
    PERFORM set_config('enable_bitmapscan', 'on', true);
    PERFORM set_config('enable_indexscan', 'on', true);
    PERFORM set_config('enable_indexonlyscan', 'on', true);
    IF got IS DISTINCT FROM want THEN
        RETURN 'MISMATCH lsm: ' || coalesce(got, '<none>') || ' expected: ' || coalesce(want, '<none>');
    END IF;
    RETURN 'ok (' || n || ' rows)';
END
$f$;

CREATE TABLE mc (id int, a int4, b text COLLATE "C", c timestamp)
    WITH (autovacuum_enabled = off);
INSERT INTO mc
    SELECT g,
           CASE WHEN g % 11 = 0 THEN NULL ELSE g % 7 END,
           CASE WHEN g % 13 = 0 THEN NULL ELSE chr(97 + g % 5) END,
           CASE WHEN g % 19 = 0 THEN NULL
                ELSE '2000-01-01'::timestamp + (g % 17) * interval '1 hour' END
    FROM generate_series(1, 300) g;
-- (a ASC NULLS LAST, b DESC NULLS FIRST, c ASC NULLS FIRST)
CREATE INDEX mc_abc_lsm ON mc USING lsm (a, b DESC, c NULLS FIRST);
-- (b ASC NULLS FIRST, a DESC NULLS LAST)
CREATE INDEX mc_ba_lsm ON mc USING lsm (b NULLS FIRST, a DESC NULLS LAST);
-- more rows after CREATE INDEX: they are in the memtables
INSERT INTO mc
    SELECT g,
           CASE WHEN g % 11 = 0 THEN NULL ELSE g % 7 END,
           CASE WHEN g % 13 = 0 THEN NULL ELSE chr(97 + g % 5) END,
           CASE WHEN g % 19 = 0 THEN NULL
                ELSE '2000-01-01'::timestamp + (g % 17) * interval '1 hour' END
    FROM generate_series(301, 600) g;
VACUUM ANALYZE mc;

SELECT i.indexrelid::regclass AS index, i.indnatts, i.indoption
FROM pg_index i WHERE i.indrelid = 'mc'::regclass ORDER BY i.indexrelid::regclass::text;

SET enable_seqscan = off;
SET enable_bitmapscan = off;

-- plans
EXPLAIN (COSTS OFF) SELECT * FROM mc WHERE a = 3 AND b = 'c' AND c > '2000-01-01 10:00';
-- (a, b DESC, c): a = 3 and b < 'c' both bound the range; (b, a DESC) is bounded
-- by b < 'c' alone and checks a = 3 on every entry: btree's choice is the former
EXPLAIN (COSTS OFF) SELECT * FROM mc WHERE a = 3 AND b < 'c';
EXPLAIN (COSTS OFF) SELECT a, b, c FROM mc ORDER BY a, b DESC, c NULLS FIRST LIMIT 5;
EXPLAIN (COSTS OFF) SELECT a, b, c FROM mc ORDER BY a DESC NULLS FIRST, b NULLS LAST, c DESC NULLS LAST LIMIT 5;
EXPLAIN (COSTS OFF) SELECT b, a FROM mc WHERE b = 'a' ORDER BY b NULLS FIRST, a DESC NULLS LAST;
EXPLAIN (COSTS OFF) SELECT * FROM mc WHERE b IS NULL AND a > 4;

-- results, printed
SELECT id, a, b, c FROM mc WHERE a = 3 AND b = 'c' AND c > '2000-01-01 10:00' ORDER BY id;
SELECT a, b, c FROM mc ORDER BY a, b DESC, c NULLS FIRST LIMIT 12;
SELECT a, b, c FROM mc ORDER BY a DESC NULLS FIRST, b NULLS LAST, c DESC NULLS LAST LIMIT 12;
SELECT b, a, count(*) FROM mc WHERE b IS NULL OR b = 'a' GROUP BY b, a ORDER BY b NULLS FIRST, a DESC NULLS LAST;
SELECT id, a, b FROM mc WHERE a IS NULL AND b IS NULL ORDER BY id;

-- answers checked against seqscan + sort
SELECT q, lsm_check(q) FROM (VALUES
    ('SELECT id, a, b, c FROM mc ORDER BY a, b DESC, c NULLS FIRST, id'),
    ('SELECT id, a, b, c FROM mc ORDER BY a DESC NULLS FIRST, b NULLS LAST, c DESC NULLS LAST, id'),
    ('SELECT id FROM mc WHERE a = 3 ORDER BY id'),
    ('SELECT id FROM mc WHERE a = 3 AND b = ''c'' ORDER BY id'),
    ('SELECT id FROM mc WHERE a = 3 AND b = ''c'' AND c > ''2000-01-01 10:00'' ORDER BY id'),
    ('SELECT id FROM mc WHERE a = 3 AND b = ''c'' AND c IS NULL ORDER BY id'),
    ('SELECT id FROM mc WHERE a = 3 AND b = ''c'' AND c BETWEEN ''2000-01-01 03:00'' AND ''2000-01-01 05:00'' ORDER BY id'),
    ('SELECT id, a, b FROM mc WHERE a = 3 AND b < ''c'' ORDER BY b DESC, id'),
    ('SELECT id, a, b FROM mc WHERE a = 3 AND b >= ''c'' ORDER BY b DESC, id'),
    ('SELECT id, a, b FROM mc WHERE a = 3 AND b IS NULL ORDER BY id'),
    ('SELECT id, a, b FROM mc WHERE a = 3 AND b IS NOT NULL ORDER BY b DESC, id'),
    ('SELECT id, a FROM mc WHERE a > 2 AND a <= 5 ORDER BY a, id'),
    ('SELECT id, a FROM mc WHERE a >= 5 ORDER BY a DESC, id'),
    ('SELECT id, a FROM mc WHERE a IS NULL ORDER BY id'),
    ('SELECT id, a, b FROM mc WHERE a IS NULL AND b = ''e'' ORDER BY id'),
    ('SELECT id, a, b, c FROM mc WHERE a IS NULL ORDER BY b DESC, c NULLS FIRST, id'),
    ('SELECT id, a, b FROM mc WHERE a = 6 AND b > ''a'' AND b < ''e'' ORDER BY b DESC, id'),
    ('SELECT id, b, a FROM mc WHERE b = ''a'' ORDER BY a DESC NULLS LAST, id'),
    ('SELECT id, b, a FROM mc WHERE b IS NULL ORDER BY a DESC NULLS LAST, id'),
    ('SELECT id, b, a FROM mc WHERE b IS NULL AND a > 4 ORDER BY a DESC, id'),
    ('SELECT id, b, a FROM mc WHERE b > ''c'' ORDER BY b NULLS FIRST, a DESC NULLS LAST, id'),
    ('SELECT id, b, a FROM mc ORDER BY b DESC NULLS LAST, a NULLS FIRST, id'),
    ('SELECT id, b, a FROM mc WHERE b = ''d'' AND a < 3 ORDER BY a DESC, id'),
    ('SELECT id, b, a FROM mc WHERE b = ''d'' AND a IS NULL ORDER BY id'),
    -- no row
    ('SELECT id FROM mc WHERE a = 3 AND b = ''zz'' ORDER BY id'),
    ('SELECT id FROM mc WHERE a = 7 ORDER BY id')
) t(q);

-- after a flush, the same answers
SELECT lsm_am.flush('mc_abc_lsm');
SELECT lsm_am.flush('mc_ba_lsm');
SELECT q, lsm_check(q) FROM (VALUES
    ('SELECT id, a, b, c FROM mc ORDER BY a, b DESC, c NULLS FIRST, id'),
    ('SELECT id, a, b, c FROM mc ORDER BY a DESC NULLS FIRST, b NULLS LAST, c DESC NULLS LAST, id'),
    ('SELECT id FROM mc WHERE a = 3 AND b = ''c'' AND c > ''2000-01-01 10:00'' ORDER BY id'),
    ('SELECT id, b, a FROM mc WHERE b IS NULL AND a > 4 ORDER BY a DESC, id'),
    ('SELECT id, b, a FROM mc ORDER BY b DESC NULLS LAST, a NULLS FIRST, id')
) t(q);

-- mixed types in one index, and cross-type conditions on each column
CREATE TABLE mc2 (id int, x int2, y int8, z float4, u uuid, d date);
INSERT INTO mc2
    SELECT g, (g % 5)::int2, (g / 3)::int8 * 1000000000, (g % 4) / 4.0,
           ('00000000-0000-0000-0000-' || lpad(to_hex(g % 6), 12, '0'))::uuid,
           date '2020-02-27' + g % 4
    FROM generate_series(1, 200) g;
CREATE INDEX mc2_lsm ON mc2 USING lsm (x DESC, y, z DESC NULLS LAST, u, d);
VACUUM ANALYZE mc2;
SELECT q, lsm_check(q) FROM (VALUES
    ('SELECT id FROM mc2 WHERE x = 2::int8 AND y > 30000000000::int8 ORDER BY id'),
    ('SELECT id FROM mc2 WHERE x = 2 AND y = 34000000000 AND z >= 0.5::float8 ORDER BY id'),
    ('SELECT id FROM mc2 WHERE x = 2 AND y = 34000000000 AND z = 0.5 AND u = ''00000000-0000-0000-0000-000000000000'' ORDER BY id'),
    ('SELECT x, y, z, u, d FROM mc2 WHERE x < 2 ORDER BY x DESC, y, z DESC NULLS LAST, u, d'),
    ('SELECT x, y, z, u, d FROM mc2 ORDER BY x, y DESC, z NULLS FIRST, u DESC, d DESC'),
    ('SELECT id FROM mc2 WHERE x = 4 AND y BETWEEN 1 AND 5000000000 AND d = ''2020-02-29'' ORDER BY id')
) t(q);
EXPLAIN (COSTS OFF) SELECT x, y, z, u, d FROM mc2 WHERE x < 2 ORDER BY x DESC, y, z DESC NULLS LAST, u, d;
SELECT x, y, z, u, d FROM mc2 WHERE x = 4 AND y < 9000000000 ORDER BY x DESC, y, z DESC NULLS LAST, u, d;

RESET enable_seqscan;
RESET enable_bitmapscan;
SET client_min_messages = warning;
DROP SCHEMA lsm_multicol CASCADE;
RESET client_min_messages;
RESET search_path;
