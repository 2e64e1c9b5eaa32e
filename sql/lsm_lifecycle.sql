-- lsm_lifecycle: REINDEX, TRUNCATE, DROP INDEX, partitioned and unlogged
-- tables, CREATE INDEX CONCURRENTLY, ALTER TABLE rewrites, transactions;
-- finally DROP EXTENSION lsm_am CASCADE and CREATE EXTENSION again.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS lsm_am;
RESET client_min_messages;
CREATE SCHEMA lsm_lifecycle;
SET search_path = lsm_lifecycle, public;

-- lsm_check(query): sql/lsm_setup.sql (the first test) defines it.

CREATE VIEW st AS
    SELECT c.relname AS index, s.memtable_entries, s.runs, s.run_entries
    FROM pg_class c, LATERAL lsm_am.index_stats(c.oid) s
    WHERE c.relam = (SELECT oid FROM pg_am WHERE amname = 'lsm') AND c.relkind = 'i'
      AND c.relnamespace = 'lsm_lifecycle'::regnamespace;
-- lsm_am.check_index(): every page of the index is accounted for (log, run,
-- free, reserved); leaked_pages must be 0
CREATE VIEW pg AS
    SELECT c.relname AS index, k.leaked_pages, k.dropped_pages,
           k.total_pages = 1 + k.log_pages + k.run_pages + k.free_pages + k.reserved_pages
                           + k.unused_pages AS all_pages_accounted
    FROM pg_class c, LATERAL lsm_am.check_index(c.oid) k
    WHERE c.relam = (SELECT oid FROM pg_am WHERE amname = 'lsm') AND c.relkind = 'i'
      AND c.relnamespace = 'lsm_lifecycle'::regnamespace;

CREATE TABLE lc (id int, k int4, t text COLLATE "C") WITH (autovacuum_enabled = off);
INSERT INTO lc SELECT g, g % 100, 't' || g FROM generate_series(1, 1000) g;
CREATE INDEX lc_lsm ON lc USING lsm (k);
INSERT INTO lc SELECT g, g % 100, 't' || g FROM generate_series(1001, 1500) g;
SELECT * FROM st;

-- REINDEX: one run with every entry, empty memtable
REINDEX INDEX lc_lsm;
SELECT * FROM st;
-- the build's run goes to the level its size calls for: 1 for a small index
SELECT level, entries FROM lsm_am.index_info('lc_lsm');
SELECT * FROM pg WHERE index = 'lc_lsm';
SELECT q, lsm_check(q) FROM (VALUES
    ('SELECT id, k FROM lc WHERE k = 42 ORDER BY id'),
    ('SELECT id, k FROM lc WHERE k < 3 ORDER BY k DESC, id')
) t(q);
INSERT INTO lc VALUES (2001, 42, 'new');
REINDEX TABLE lc;
SELECT * FROM st;
REINDEX INDEX CONCURRENTLY lc_lsm;
SELECT * FROM st;
SELECT * FROM pg WHERE index = 'lc_lsm';
SELECT q, lsm_check(q) FROM (VALUES
    ('SELECT id, k FROM lc WHERE k = 42 ORDER BY id')
) t(q);

-- TRUNCATE: an empty index; rolled back, the old contents are back
TRUNCATE lc;
SELECT * FROM st;
INSERT INTO lc SELECT g, g % 10, 'u' || g FROM generate_series(1, 100) g;
SELECT * FROM st;
SELECT q, lsm_check(q) FROM (VALUES
    ('SELECT id, k FROM lc WHERE k = 7 ORDER BY id')
) t(q);
BEGIN;
TRUNCATE lc;
INSERT INTO lc VALUES (1, 7, 'in truncating xact');
SELECT * FROM st;
ROLLBACK;
SELECT * FROM st;
SELECT * FROM pg WHERE index = 'lc_lsm';
SELECT q, lsm_check(q) FROM (VALUES
    ('SELECT id, k FROM lc WHERE k = 7 ORDER BY id'),
    ('SELECT id, k FROM lc ORDER BY k, id')
) t(q);
BEGIN;
TRUNCATE lc;
INSERT INTO lc VALUES (1, 7, 'in truncating xact');
COMMIT;
SELECT * FROM st;
SET enable_seqscan = off;
SELECT id, k, t FROM lc WHERE k = 7;
RESET enable_seqscan;

-- inserts rolled back (whole transaction and to a savepoint)
BEGIN;
INSERT INTO lc VALUES (2, 7, 'kept');
SAVEPOINT s;
INSERT INTO lc VALUES (3, 7, 'rolled back');
ROLLBACK TO SAVEPOINT s;
INSERT INTO lc VALUES (4, 7, 'kept too');
COMMIT;
BEGIN;
INSERT INTO lc VALUES (5, 7, 'aborted');
ROLLBACK;
SET enable_seqscan = off;
SELECT id, k, t FROM lc WHERE k = 7 ORDER BY id;
RESET enable_seqscan;

-- CREATE INDEX in a rolled-back transaction, then for real
BEGIN;
CREATE INDEX lc_t_lsm ON lc USING lsm (t);
INSERT INTO lc VALUES (6, 8, 'x');
ROLLBACK;
SELECT count(*) FROM pg_class WHERE relname = 'lc_t_lsm';

-- DROP INDEX and create it again
DROP INDEX lc_lsm;
SELECT * FROM st;
CREATE INDEX lc_lsm ON lc USING lsm (k);
SELECT * FROM st;
DROP INDEX CONCURRENTLY lc_lsm;
SELECT * FROM st;

-- CREATE INDEX CONCURRENTLY over existing rows, then more inserts
INSERT INTO lc SELECT g, g % 50, 'c' || g FROM generate_series(100, 2099) g;
CREATE INDEX CONCURRENTLY lc_lsm_cc ON lc USING lsm (k, t);
SELECT indisvalid, indisready FROM pg_index WHERE indexrelid = 'lc_lsm_cc'::regclass;
INSERT INTO lc SELECT g, g % 50, 'd' || g FROM generate_series(3000, 3499) g;
SELECT memtable_entries + run_entries = (SELECT count(*) FROM lc) AS all_entries FROM st;
SELECT q, lsm_check(q) FROM (VALUES
    ('SELECT id, k, t FROM lc WHERE k = 7 ORDER BY t, id'),
    ('SELECT k, t FROM lc WHERE k BETWEEN 10 AND 12 ORDER BY k DESC, t DESC'),
    ('SELECT id FROM lc WHERE k = 49 AND t > ''d'' ORDER BY id')
) t(q);

-- ALTER TABLE that rewrites the table rebuilds the index
ALTER TABLE lc ALTER COLUMN k TYPE int8;
SELECT * FROM st;
SELECT q, lsm_check(q) FROM (VALUES
    ('SELECT id, k, t FROM lc WHERE k = 7::int2 ORDER BY t, id'),
    ('SELECT k, t FROM lc WHERE k > 47 ORDER BY k, t')
) t(q);
-- CLUSTER on the index built concurrently (sql/lsm_cluster.sql compares
-- CLUSTER with btree's): the heap in (k, t) order, the index rebuilt
SELECT count(*) AS lc_rows, count(DISTINCT (id, k, t)) AS lc_distinct FROM lc \gset
CLUSTER lc USING lc_lsm_cc;
SELECT string_agg(coalesce(k::text, 'N') || ':' || coalesce(t, 'N'), ',' ORDER BY ctid)
     = string_agg(coalesce(k::text, 'N') || ':' || coalesce(t, 'N'), ',' ORDER BY k, t)
       AS heap_in_index_order,
       count(*) = :lc_rows AND count(DISTINCT (id, k, t)) = :lc_distinct AS same_rows
    FROM lc;
SELECT index, memtable_entries, runs, run_entries = (SELECT count(*) FROM lc) AS all_entries
    FROM st ORDER BY index;
SELECT q, lsm_check(q) FROM (VALUES
    ('SELECT k, t FROM lc WHERE k = 7 ORDER BY k, t'),
    ('SELECT k, t FROM lc WHERE k > 47 ORDER BY k, t'),
    ('SELECT id, k FROM lc WHERE k = 42 ORDER BY id')
) t(q);
-- expression and partial indexes
CREATE INDEX lc_expr_lsm ON lc USING lsm ((k * 2), lower(t)) WHERE k < 10;
SELECT q, lsm_check(q) FROM (VALUES
    ('SELECT id FROM lc WHERE k * 2 = 8 AND lower(t) > ''d'' AND k < 10 ORDER BY id')
) t(q);

-- a partitioned table with an lsm index on the parent
CREATE TABLE pt (id int, k int4, d date) PARTITION BY RANGE (d);
CREATE TABLE pt_2023 PARTITION OF pt FOR VALUES FROM ('2023-01-01') TO ('2024-01-01')
    WITH (autovacuum_enabled = off);
CREATE TABLE pt_2024 PARTITION OF pt FOR VALUES FROM ('2024-01-01') TO ('2025-01-01')
    WITH (autovacuum_enabled = off);
CREATE INDEX pt_k_lsm ON pt USING lsm (k, d);
INSERT INTO pt SELECT g, g % 37, date '2023-01-01' + (g % 700) FROM generate_series(1, 3000) g;
CREATE TABLE pt_2025 (id int, k int4, d date) WITH (autovacuum_enabled = off);
INSERT INTO pt_2025 SELECT g, g % 37, date '2025-01-01' + g % 300 FROM generate_series(5001, 5500) g;
ALTER TABLE pt ATTACH PARTITION pt_2025 FOR VALUES FROM ('2025-01-01') TO ('2026-01-01');
SELECT c.relname, a.amname, i.inhparent::regclass AS parent
FROM pg_class c JOIN pg_am a ON a.oid = c.relam
LEFT JOIN pg_inherits i ON i.inhrelid = c.oid
WHERE c.relname LIKE 'pt\_%' AND c.relkind IN ('i', 'I') ORDER BY 1;
SELECT index, memtable_entries + run_entries AS entries FROM st WHERE index LIKE 'pt\_%' ORDER BY 1;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT id FROM pt WHERE k = 5 AND d >= '2024-06-01';
EXPLAIN (COSTS OFF) SELECT k, d FROM pt ORDER BY k, d LIMIT 3;
RESET enable_seqscan;
RESET enable_bitmapscan;
SELECT q, lsm_check(q) FROM (VALUES
    ('SELECT id, k, d FROM pt WHERE k = 5 AND d >= ''2024-06-01'' ORDER BY d, id'),
    ('SELECT id FROM pt_2025 WHERE k = 36 ORDER BY id'),
    ('SELECT k, d FROM pt_2023 WHERE k < 2 ORDER BY k DESC, d DESC')
) t(q);
ALTER TABLE pt DETACH PARTITION pt_2024;
SELECT c.relname, i.inhparent::regclass AS parent
FROM pg_class c LEFT JOIN pg_inherits i ON i.inhrelid = c.oid
WHERE c.relname LIKE 'pt\_2024%' AND c.relkind = 'i' ORDER BY 1;
SELECT count(*) FROM pt;
TRUNCATE pt;
SELECT index, memtable_entries + run_entries AS entries FROM st WHERE index LIKE 'pt\_%' ORDER BY 1;

-- an unlogged table
CREATE UNLOGGED TABLE ul (id int, k int8) WITH (autovacuum_enabled = off);
CREATE INDEX ul_lsm ON ul USING lsm (k);
SELECT relpersistence FROM pg_class WHERE relname = 'ul_lsm';
INSERT INTO ul SELECT g, g * 3 FROM generate_series(1, 2000) g;
SELECT lsm_am.flush('ul_lsm');
INSERT INTO ul SELECT g, g * 3 + 1 FROM generate_series(1, 500) g;
SELECT * FROM st WHERE index = 'ul_lsm';
SELECT q, lsm_check(q) FROM (VALUES
    ('SELECT id, k FROM ul WHERE k BETWEEN 30 AND 40 ORDER BY k'),
    ('SELECT k FROM ul ORDER BY k DESC LIMIT 5')
) t(q);
SELECT * FROM pg WHERE index = 'ul_lsm';
ALTER TABLE ul SET LOGGED;
SELECT relpersistence FROM pg_class WHERE relname = 'ul_lsm';
SELECT * FROM st WHERE index = 'ul_lsm';
SELECT * FROM pg WHERE index = 'ul_lsm';
SELECT q, lsm_check(q) FROM (VALUES
    ('SELECT id, k FROM ul WHERE k BETWEEN 30 AND 40 ORDER BY k')
) t(q);

-- an exclusion constraint backed by an lsm index (amgettuple with a dirty
-- snapshot): "k WITH =" behaves like UNIQUE, NULLs do not conflict, and
-- conflicts are found in the memtable and in runs
CREATE TABLE ex (id int, k int4, CONSTRAINT ex_k EXCLUDE USING lsm (k WITH =));
INSERT INTO ex VALUES (1, 1), (2, 2), (3, NULL), (4, NULL);
INSERT INTO ex VALUES (5, 1);
SELECT lsm_am.flush('ex_k');
INSERT INTO ex VALUES (6, 2);
INSERT INTO ex VALUES (7, 3);
INSERT INTO ex VALUES (8, 3);
BEGIN;
DELETE FROM ex WHERE id = 7;
INSERT INTO ex VALUES (9, 3);
ROLLBACK;
UPDATE ex SET k = 10 WHERE id = 7;
INSERT INTO ex VALUES (10, 3);
SELECT id, k FROM ex ORDER BY id;
SELECT * FROM pg ORDER BY index;

-- DROP EXTENSION ... CASCADE drops every lsm index, keeps the tables
SET client_min_messages = warning;
DROP EXTENSION lsm_am CASCADE;
RESET client_min_messages;
SELECT count(*) FROM pg_am WHERE amname = 'lsm';
SELECT count(*) FROM pg_namespace WHERE nspname = 'lsm_am';
SELECT relname FROM pg_class WHERE relnamespace = 'lsm_lifecycle'::regnamespace
    AND relkind IN ('r', 'p', 'v', 'i', 'I') ORDER BY 1;
SELECT count(*) FROM lc;
-- and again
CREATE EXTENSION lsm_am;
CREATE INDEX lc_lsm ON lc USING lsm (k);
SELECT index, memtable_entries, runs, run_entries = (SELECT count(*) FROM lc) AS all_rows
FROM (SELECT c.relname AS index, s.*
      FROM pg_class c, LATERAL lsm_am.index_stats(c.oid) s WHERE c.relname = 'lc_lsm') s;
SELECT q, lsm_check(q) FROM (VALUES
    ('SELECT id, k FROM lc WHERE k = 7 ORDER BY id')
) t(q);

SET client_min_messages = warning;
DROP SCHEMA lsm_lifecycle CASCADE;
RESET client_min_messages;
RESET search_path;
