-- lsm_planner: the planner makes the same choices for an lsm index as for a
-- btree index on an identical table: nested-loop joins over the index (a
-- parameterized scan is costed per scan, not per scan times the loop count),
-- = ANY and IN lists, point and range lookups, ORDER BY ... LIMIT.  Each
-- query's plan is printed for lsm and compared with btree's, table and index
-- names masked; "same" must be true everywhere.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS lsm_am;
RESET client_min_messages;

-- 200,000 distinct keys in a scattered order, one sorted run (built by
-- CREATE INDEX), and the same rows under a btree.
CREATE TABLE plan_lsm (k bigint, v int) WITH (autovacuum_enabled = off);
INSERT INTO plan_lsm
    SELECT (g::bigint * 7919) % 200003, g FROM generate_series(1, 200000) g;
CREATE TABLE plan_bt (LIKE plan_lsm) WITH (autovacuum_enabled = off);
INSERT INTO plan_bt SELECT * FROM plan_lsm;
CREATE INDEX plan_lsm_k ON plan_lsm USING lsm (k);
CREATE INDEX plan_bt_k ON plan_bt USING btree (k);
-- probe tables: 1,000 and 50,000 keys of the table
CREATE TABLE probe1k AS SELECT (g::bigint * 7919) % 200003 AS k FROM generate_series(1, 200000, 200) g;
CREATE TABLE probe50k AS SELECT (g::bigint * 7919) % 200003 AS k FROM generate_series(1, 200000, 4) g;
VACUUM ANALYZE plan_lsm, plan_bt, probe1k, probe50k;

-- The plan of query q (%1$s: the table, %2$s: its index) without costs, with
-- both names masked.
CREATE FUNCTION plan_of(q text, tbl text) RETURNS SETOF text
LANGUAGE plpgsql AS $$
DECLARE
    line text;
BEGIN
    FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || format(q, tbl, tbl || '_k') LOOP
        RETURN NEXT replace(replace(line, tbl || '_k', 'IDX'), tbl, 'TBL');
    END LOOP;
END $$;

-- Same plan shape for lsm and btree?
CREATE FUNCTION same_plan(q text) RETURNS boolean
LANGUAGE sql AS $$
    SELECT array_agg(p ORDER BY n) IS NOT DISTINCT FROM
           (SELECT array_agg(p2 ORDER BY n2)
              FROM plan_of(q, 'plan_bt') WITH ORDINALITY AS b(p2, n2))
      FROM plan_of(q, 'plan_lsm') WITH ORDINALITY AS l(p, n)
$$;

CREATE TABLE queries (id int, q text);
INSERT INTO queries VALUES
 (1, 'SELECT count(*) FROM probe1k p JOIN %1$s b ON b.k = p.k'),
 (2, 'SELECT count(*) FROM probe1k p JOIN %1$s b ON b.k = p.k + 1'),
 (3, 'SELECT count(*) FROM probe50k p JOIN %1$s b ON b.k = p.k'),
 (4, 'SELECT b.v FROM probe1k p JOIN %1$s b ON b.k = p.k WHERE p.k < 2000'),
 (5, 'SELECT v FROM %1$s WHERE k = ANY (ARRAY[5, 77, 1234, 99999]::bigint[])'),
 (6, 'SELECT v FROM %1$s WHERE k IN (3, 141, 59265, 35897)'),
 (7, 'SELECT v FROM %1$s WHERE k = 4242'),
 (8, 'SELECT count(*) FROM %1$s WHERE k BETWEEN 1000 AND 1100'),
 (9, 'SELECT k FROM %1$s ORDER BY k LIMIT 10'),
 (10, 'SELECT k FROM %1$s ORDER BY k DESC LIMIT 10'),
 (11, 'SELECT v FROM %1$s WHERE k > 150000 ORDER BY k LIMIT 5'),
 (12, 'SELECT max(k) FROM %1$s'),
 (13, 'SELECT count(*) FROM %1$s WHERE k > 1000');

SELECT id, same_plan(q) AS same FROM queries ORDER BY id;

-- the lsm plans themselves
SELECT plan_of(q, 'plan_lsm') FROM queries WHERE id IN (1, 3, 5, 6, 9, 13) ORDER BY id;

-- and the answers agree
SELECT id,
       (SELECT count(*) FROM probe1k p JOIN plan_lsm b ON b.k = p.k) AS lsm_join,
       (SELECT count(*) FROM probe1k p JOIN plan_bt b ON b.k = p.k) AS bt_join
  FROM (VALUES (1)) v(id);
SELECT (SELECT array_agg(v ORDER BY v) FROM plan_lsm WHERE k = ANY (ARRAY[5, 77, 1234, 99999]::bigint[])) =
       (SELECT array_agg(v ORDER BY v) FROM plan_bt WHERE k = ANY (ARRAY[5, 77, 1234, 99999]::bigint[]))
       AS any_same;

-- Parallel scans (lsmscanpar.c): with parallel plans made cheap, the planner
-- picks a Parallel Index (Only) Scan of lsm where it picks one of btree, and
-- a serial scan where it picks one (a point lookup, ORDER BY ... LIMIT,
-- = ANY); first with every scan type allowed, then with index scans only.
-- (Not here: ORDER BY k DESC over most of the table, where btree's plan is
-- a parallel sequential scan and a sort and lsm's a backward index scan: lsm's
-- index is half btree's size, so scanning all of it costs less.)
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_index_scan_size = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
CREATE TABLE pqueries (id int, q text);
INSERT INTO pqueries VALUES
 (1, 'SELECT count(*) FROM %1$s WHERE k BETWEEN 10000 AND 30000'),
 (2, 'SELECT count(*), sum(v) FROM %1$s WHERE k BETWEEN 10000 AND 150000'),
 (3, 'SELECT sum(k) FROM %1$s WHERE k > 50000'),
 (4, 'SELECT k, v FROM %1$s WHERE k > 100 ORDER BY k'),
 (5, 'SELECT v FROM %1$s WHERE k = 4242'),
 (6, 'SELECT count(*) FROM probe50k p JOIN %1$s b ON b.k = p.k'),
 (7, 'SELECT count(*) FROM %1$s WHERE k BETWEEN 1000 AND 1100'),
 (8, 'SELECT k FROM %1$s WHERE k > 1000 ORDER BY k LIMIT 10'),
 (9, 'SELECT v FROM %1$s WHERE k = ANY (ARRAY[5, 77, 1234, 99999]::bigint[])'),
 (10, 'SELECT count(*) FROM %1$s WHERE k > 1000'),
 (11, 'SELECT k, v FROM %1$s WHERE k > 1000 AND v %% 7 = 0 ORDER BY k');
SELECT id, same_plan(q) AS same FROM pqueries ORDER BY id;
SELECT plan_of(q, 'plan_lsm') FROM pqueries WHERE id IN (1, 7) ORDER BY id;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT id, same_plan(q) AS same FROM pqueries ORDER BY id;
SELECT plan_of(q, 'plan_lsm') FROM pqueries WHERE id IN (2, 3, 11) ORDER BY id;
RESET enable_seqscan;
RESET enable_bitmapscan;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_index_scan_size;
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;

DROP TABLE queries, pqueries, probe1k, probe50k, plan_lsm, plan_bt;
DROP FUNCTION same_plan(text), plan_of(text, text);
