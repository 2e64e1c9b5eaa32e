-- lsm_basic: an lsm index answers the basic queries exactly like a btree
-- index on an identical table.  Every "lsm EXCEPT btree" / "btree EXCEPT lsm"
-- query below must return zero rows.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS lsm_am;
RESET client_min_messages;

-- Two identical tables: one with an lsm index, one with a btree index.
-- k has duplicates and NULLs; half of the rows exist before CREATE INDEX (they
-- go into a sorted run), half are inserted afterwards (memtable).
CREATE TABLE basic_lsm (id int PRIMARY KEY, k int4, v text COLLATE "C")
    WITH (autovacuum_enabled = off);
CREATE TABLE basic_bt (LIKE basic_lsm INCLUDING ALL)
    WITH (autovacuum_enabled = off);
INSERT INTO basic_lsm
    SELECT g, CASE WHEN g % 50 = 0 THEN NULL ELSE (g * 7919) % 500 - 100 END, 'v' || g
    FROM generate_series(1, 1000) g;
CREATE INDEX basic_lsm_k ON basic_lsm USING lsm (k);
INSERT INTO basic_lsm
    SELECT g, CASE WHEN g % 50 = 0 THEN NULL ELSE (g * 7919) % 500 - 100 END, 'v' || g
    FROM generate_series(1001, 2000) g;
INSERT INTO basic_bt SELECT * FROM basic_lsm;
CREATE INDEX basic_bt_k ON basic_bt USING btree (k);
VACUUM ANALYZE basic_lsm;
VACUUM ANALYZE basic_bt;

SELECT count(*), count(k), count(DISTINCT k), min(k), max(k) FROM basic_lsm;

-- index-type checks
SELECT c.relname, a.amname FROM pg_class c JOIN pg_am a ON a.oid = c.relam
WHERE c.relname IN ('basic_lsm_k', 'basic_bt_k') ORDER BY 1;

SET enable_seqscan = off;
SET enable_bitmapscan = off;

-- Plans: the lsm index is used for every kind of condition.
EXPLAIN (COSTS OFF) SELECT id FROM basic_lsm WHERE k = 42;
EXPLAIN (COSTS OFF) SELECT id FROM basic_lsm WHERE k < -90;
EXPLAIN (COSTS OFF) SELECT id FROM basic_lsm WHERE k BETWEEN 10 AND 20;
EXPLAIN (COSTS OFF) SELECT id FROM basic_lsm WHERE k IS NULL;
EXPLAIN (COSTS OFF) SELECT id FROM basic_lsm WHERE k IS NOT NULL AND k > 390;
EXPLAIN (COSTS OFF) SELECT k FROM basic_lsm ORDER BY k LIMIT 5;
EXPLAIN (COSTS OFF) SELECT k FROM basic_lsm ORDER BY k DESC LIMIT 5;
EXPLAIN (COSTS OFF) SELECT min(k), max(k) FROM basic_lsm;
EXPLAIN (COSTS OFF) SELECT k FROM basic_lsm WHERE k >= 395;

-- Results
SELECT id, k FROM basic_lsm WHERE k = 42 ORDER BY id;
SELECT k, count(*) FROM basic_lsm WHERE k < -95 GROUP BY k ORDER BY k;
SELECT k FROM basic_lsm ORDER BY k LIMIT 5;
SELECT k FROM basic_lsm ORDER BY k DESC LIMIT 5;
SELECT k FROM basic_lsm ORDER BY k DESC NULLS LAST LIMIT 5;
SELECT min(k), max(k) FROM basic_lsm;
SELECT count(*) FROM basic_lsm WHERE k IS NULL;
SELECT count(*) FROM basic_lsm WHERE k IS NOT NULL;
SELECT count(*) FROM basic_lsm WHERE k BETWEEN 10 AND 20;
SELECT k FROM basic_lsm WHERE k >= 397 ORDER BY k;
SELECT count(*) FROM basic_lsm WHERE k = 100000;
SELECT count(*) FROM basic_lsm WHERE k > 399;
SELECT count(*) FROM basic_lsm WHERE k < -100;

-- Same answers as btree (each query must return no rows)
SELECT id FROM basic_lsm WHERE k = 42 EXCEPT ALL SELECT id FROM basic_bt WHERE k = 42;
SELECT id FROM basic_bt WHERE k = 42 EXCEPT ALL SELECT id FROM basic_lsm WHERE k = 42;
SELECT id FROM basic_lsm WHERE k < -90 EXCEPT ALL SELECT id FROM basic_bt WHERE k < -90;
SELECT id FROM basic_bt WHERE k < -90 EXCEPT ALL SELECT id FROM basic_lsm WHERE k < -90;
SELECT id FROM basic_lsm WHERE k <= 0 EXCEPT ALL SELECT id FROM basic_bt WHERE k <= 0;
SELECT id FROM basic_bt WHERE k <= 0 EXCEPT ALL SELECT id FROM basic_lsm WHERE k <= 0;
SELECT id FROM basic_lsm WHERE k > 250 EXCEPT ALL SELECT id FROM basic_bt WHERE k > 250;
SELECT id FROM basic_bt WHERE k > 250 EXCEPT ALL SELECT id FROM basic_lsm WHERE k > 250;
SELECT id FROM basic_lsm WHERE k >= 250 EXCEPT ALL SELECT id FROM basic_bt WHERE k >= 250;
SELECT id FROM basic_bt WHERE k >= 250 EXCEPT ALL SELECT id FROM basic_lsm WHERE k >= 250;
SELECT id FROM basic_lsm WHERE k BETWEEN 10 AND 20 EXCEPT ALL SELECT id FROM basic_bt WHERE k BETWEEN 10 AND 20;
SELECT id FROM basic_bt WHERE k BETWEEN 10 AND 20 EXCEPT ALL SELECT id FROM basic_lsm WHERE k BETWEEN 10 AND 20;
SELECT id FROM basic_lsm WHERE k > 10 AND k < 12 EXCEPT ALL SELECT id FROM basic_bt WHERE k > 10 AND k < 12;
SELECT id FROM basic_bt WHERE k > 10 AND k < 12 EXCEPT ALL SELECT id FROM basic_lsm WHERE k > 10 AND k < 12;
SELECT id FROM basic_lsm WHERE k IS NULL EXCEPT ALL SELECT id FROM basic_bt WHERE k IS NULL;
SELECT id FROM basic_bt WHERE k IS NULL EXCEPT ALL SELECT id FROM basic_lsm WHERE k IS NULL;
SELECT id FROM basic_lsm WHERE k IS NOT NULL EXCEPT ALL SELECT id FROM basic_bt WHERE k IS NOT NULL;
SELECT id FROM basic_bt WHERE k IS NOT NULL EXCEPT ALL SELECT id FROM basic_lsm WHERE k IS NOT NULL;
-- contradictory / empty ranges
SELECT id FROM basic_lsm WHERE k > 20 AND k < 10;
SELECT id FROM basic_lsm WHERE k = 5 AND k = 6;
-- ordered scans: position and value must match btree's
SELECT row_number() OVER () AS n, k FROM (SELECT k FROM basic_lsm ORDER BY k LIMIT 100) s
EXCEPT ALL
SELECT row_number() OVER () AS n, k FROM (SELECT k FROM basic_bt ORDER BY k LIMIT 100) s;
SELECT row_number() OVER () AS n, k FROM (SELECT k FROM basic_lsm ORDER BY k DESC LIMIT 100) s
EXCEPT ALL
SELECT row_number() OVER () AS n, k FROM (SELECT k FROM basic_bt ORDER BY k DESC LIMIT 100) s;
SELECT (SELECT array_agg(k) FROM (SELECT k FROM basic_lsm ORDER BY k) s)
     = (SELECT array_agg(k) FROM (SELECT k FROM basic_bt ORDER BY k) s) AS asc_equal;
SELECT (SELECT array_agg(k) FROM (SELECT k FROM basic_lsm WHERE k > 0 ORDER BY k DESC) s)
     = (SELECT array_agg(k) FROM (SELECT k FROM basic_bt WHERE k > 0 ORDER BY k DESC) s) AS desc_equal;
SELECT (SELECT ROW(min(k), max(k)) FROM basic_lsm) = (SELECT ROW(min(k), max(k)) FROM basic_bt) AS minmax_equal;

-- index-only scan
EXPLAIN (COSTS OFF) SELECT k FROM basic_lsm WHERE k BETWEEN -5 AND 5 ORDER BY k;
SELECT k FROM basic_lsm WHERE k BETWEEN -5 AND 5 ORDER BY k;
SELECT k FROM basic_lsm WHERE k BETWEEN -5 AND 5 EXCEPT ALL SELECT k FROM basic_bt WHERE k BETWEEN -5 AND 5;
SELECT k FROM basic_bt WHERE k BETWEEN -5 AND 5 EXCEPT ALL SELECT k FROM basic_lsm WHERE k BETWEEN -5 AND 5;

-- bitmap scans, including = ANY(array)
SET enable_indexscan = off;
SET enable_indexonlyscan = off;
SET enable_bitmapscan = on;
EXPLAIN (COSTS OFF) SELECT id FROM basic_lsm WHERE k = ANY ('{1,2,3}');
SELECT id FROM basic_lsm WHERE k = ANY ('{1,2,3}') EXCEPT ALL SELECT id FROM basic_bt WHERE k = ANY ('{1,2,3}');
SELECT id FROM basic_bt WHERE k = ANY ('{1,2,3}') EXCEPT ALL SELECT id FROM basic_lsm WHERE k = ANY ('{1,2,3}');
SELECT count(*) FROM basic_lsm WHERE k = ANY ('{1,2,3}');
EXPLAIN (COSTS OFF) SELECT id FROM basic_lsm WHERE k < 0;
SELECT id FROM basic_lsm WHERE k < 0 EXCEPT ALL SELECT id FROM basic_bt WHERE k < 0;
SELECT id FROM basic_bt WHERE k < 0 EXCEPT ALL SELECT id FROM basic_lsm WHERE k < 0;
RESET enable_indexscan;
RESET enable_indexonlyscan;
RESET enable_bitmapscan;

-- updates and deletes are seen by the next scan
UPDATE basic_lsm SET k = 100000 WHERE id IN (1, 2, 3);
UPDATE basic_bt SET k = 100000 WHERE id IN (1, 2, 3);
DELETE FROM basic_lsm WHERE k BETWEEN 10 AND 20;
DELETE FROM basic_bt WHERE k BETWEEN 10 AND 20;
SET enable_bitmapscan = off;
SELECT id, k FROM basic_lsm WHERE k = 100000 ORDER BY id;
SELECT count(*) FROM basic_lsm WHERE k BETWEEN 10 AND 20;
SELECT id FROM basic_lsm WHERE k >= 0 EXCEPT ALL SELECT id FROM basic_bt WHERE k >= 0;
SELECT id FROM basic_bt WHERE k >= 0 EXCEPT ALL SELECT id FROM basic_lsm WHERE k >= 0;

-- a scrollable cursor: the index scan itself turns around (amcanbackward),
-- no Materialize node (sql/lsm_cursors.sql compares with btree)
EXPLAIN (COSTS OFF) DECLARE c SCROLL CURSOR FOR SELECT k FROM basic_lsm WHERE k BETWEEN 0 AND 3 ORDER BY k;
BEGIN;
DECLARE c SCROLL CURSOR FOR SELECT k FROM basic_lsm WHERE k BETWEEN 0 AND 3 ORDER BY k;
FETCH 3 FROM c;
FETCH BACKWARD 2 FROM c;
FETCH LAST FROM c;
COMMIT;

RESET enable_seqscan;
RESET enable_bitmapscan;
DROP TABLE basic_lsm, basic_bt;
