-- lsm_cursors: scrollable cursors over an lsm index turn around without a
-- Materialize node (amcanbackward) and return exactly what a cursor over a
-- btree index on an identical table returns, for every kind of FETCH, in
-- index and index-only scans, forward and backward ORDER BY, over a run, a
-- memtable and both.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS lsm_am;
RESET client_min_messages;

-- distinct keys (the order of equal keys is not defined by ORDER BY, and
-- PostgreSQL 15's btree does not keep it when a scan over a posting list
-- turns around); half the rows in a run (CREATE INDEX), half in the memtable
CREATE TABLE cur_lsm (id int, k int4) WITH (autovacuum_enabled = off);
INSERT INTO cur_lsm SELECT g, (g * 7919) % 3001 FROM generate_series(1, 1500) g;
CREATE INDEX cur_lsm_k ON cur_lsm USING lsm (k);
INSERT INTO cur_lsm SELECT g, (g * 7919) % 3001 FROM generate_series(1501, 3000) g;
CREATE TABLE cur_bt (LIKE cur_lsm) WITH (autovacuum_enabled = off);
INSERT INTO cur_bt SELECT * FROM cur_lsm;
CREATE INDEX cur_bt_k ON cur_bt (k);
VACUUM ANALYZE cur_lsm, cur_bt;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SET enable_sort = off;

-- no Materialize node: the index scan itself scrolls
EXPLAIN (COSTS OFF) DECLARE c SCROLL CURSOR FOR SELECT id, k FROM cur_lsm WHERE k BETWEEN 10 AND 200 ORDER BY k;
EXPLAIN (COSTS OFF) DECLARE c SCROLL CURSOR FOR SELECT k FROM cur_lsm ORDER BY k DESC;

-- The same FETCH sequence on both: the outputs below must be pairwise equal
-- (tests/t/011_streaming_scans.pl compares random sequences automatically).
BEGIN;
DECLARE cl SCROLL CURSOR FOR SELECT id, k FROM cur_lsm WHERE k BETWEEN 10 AND 30 ORDER BY k;
DECLARE cb SCROLL CURSOR FOR SELECT id, k FROM cur_bt WHERE k BETWEEN 10 AND 30 ORDER BY k;
FETCH 3 FROM cl;
FETCH 3 FROM cb;
FETCH BACKWARD 2 FROM cl;
FETCH BACKWARD 2 FROM cb;
FETCH PRIOR FROM cl;
FETCH PRIOR FROM cb;
FETCH PRIOR FROM cl;
FETCH PRIOR FROM cb;
FETCH NEXT FROM cl;
FETCH NEXT FROM cb;
FETCH LAST FROM cl;
FETCH LAST FROM cb;
FETCH BACKWARD 3 FROM cl;
FETCH BACKWARD 3 FROM cb;
FETCH ABSOLUTE 4 FROM cl;
FETCH ABSOLUTE 4 FROM cb;
FETCH FORWARD ALL FROM cl;
FETCH FORWARD ALL FROM cb;
FETCH PRIOR FROM cl;
FETCH PRIOR FROM cb;
FETCH RELATIVE -3 FROM cl;
FETCH RELATIVE -3 FROM cb;
FETCH BACKWARD ALL FROM cl;
FETCH BACKWARD ALL FROM cb;
FETCH NEXT FROM cl;
FETCH NEXT FROM cb;
COMMIT;

-- backward ORDER BY, index-only, turned twice
SET enable_indexscan = off;
EXPLAIN (COSTS OFF) DECLARE c SCROLL CURSOR FOR SELECT k FROM cur_lsm WHERE k < 12 ORDER BY k DESC;
BEGIN;
DECLARE cl SCROLL CURSOR FOR SELECT k FROM cur_lsm WHERE k < 12 ORDER BY k DESC;
DECLARE cb SCROLL CURSOR FOR SELECT k FROM cur_bt WHERE k < 12 ORDER BY k DESC;
FETCH 4 FROM cl;
FETCH 4 FROM cb;
FETCH BACKWARD 2 FROM cl;
FETCH BACKWARD 2 FROM cb;
FETCH FORWARD 5 FROM cl;
FETCH FORWARD 5 FROM cb;
COMMIT;
RESET enable_indexscan;

DROP TABLE cur_lsm, cur_bt;
