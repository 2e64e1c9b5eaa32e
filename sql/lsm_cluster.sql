-- lsm_cluster: CLUSTER ... USING an lsm index, ALTER TABLE ... CLUSTER ON and
-- a plain CLUSTER of the marked index.  CLUSTER reads the heap through the
-- index in key order with SnapshotAny (every TID the index holds, dead rows
-- included; PostgreSQL decides visibility itself), so the table is compared
-- with a twin holding the same rows under a btree index, clustered the same
-- way: the keys in the heap's physical (ctid) order, the rows (ties in key
-- are compared as multisets: which tied row comes first is not fixed), no row
-- copied twice, and every query answered by the rebuilt lsm index.  The rows
-- have random keys, duplicates and NULLs, deleted rows, updates that move
-- keys and HOT updates, entries in the memtable and in runs; the first
-- CLUSTER runs in a transaction that also inserted, deleted and updated rows.
-- Then ALTER TABLE ... CLUSTER ON and a plain CLUSTER, a partial index
-- (refused, as for btree), two columns with DESC NULLS FIRST, a unique index
-- and a partitioned table.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS lsm_am;
RESET client_min_messages;
CREATE SCHEMA lsm_cluster;
SET search_path = lsm_cluster, public;

-- twin(q, tab, twin, idx): query q (%1$s stands for the table) on table tab,
-- whose plan must use lsm index idx (index, index-only or bitmap scan), and
-- on its twin, whose btree (or any plan) decides the answer; 'ok (N rows)'
-- or both answers.
CREATE FUNCTION twin(q text, tab text, twin text, idx text) RETURNS text
LANGUAGE plpgsql AS $f$
DECLARE
    plan text := '';
    line text;
    got text;
    want text;
    n bigint;
BEGIN
    PERFORM set_config('enable_seqscan', 'off', true);
    FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || format(q, tab) LOOP
        plan := plan || line || E'\n';
    END LOOP;
    IF plan !~ ('(Scan (Backward )?using|Bitmap Index Scan on) ' || idx || '\M') THEN
        RETURN 'lsm index ' || idx || ' not used: ' || plan;
    END IF;
    EXECUTE format('SELECT count(*), string_agg(x::text, %L) FROM (%s) x', '|', format(q, tab))
        INTO n, got;
    PERFORM set_config('enable_seqscan', 'on', true);
    EXECUTE format('SELECT string_agg(x::text, %L) FROM (%s) x', '|', format(q, twin))
        INTO want;
    IF got IS DISTINCT FROM want THEN
        RETURN 'MISMATCH ' || tab || ': ' || coalesce(got, '<none>') || ' '
            || twin || ': ' || coalesce(want, '<none>');
    END IF;
    RETURN 'ok (' || n || ' rows)';
END
$f$;

-- heap_order(tab, twin, keys, ord): the key expression keys of each table's
-- visible rows in physical (ctid) order; true when both tables give the same
-- sequence, and when it is the index order ord
CREATE FUNCTION heap_order(tab text, twin text, keys text, ord text,
    OUT same_as_twin boolean, OUT in_index_order boolean)
LANGUAGE plpgsql AS $f$
DECLARE
    a text;
    b text;
    s text;
BEGIN
    EXECUTE format('SELECT string_agg(%s, %L ORDER BY ctid) FROM %I', keys, ',', tab) INTO a;
    EXECUTE format('SELECT string_agg(%s, %L ORDER BY ctid) FROM %I', keys, ',', twin) INTO b;
    EXECUTE format('SELECT string_agg(%s, %L ORDER BY %s) FROM %I', keys, ',', ord, tab) INTO s;
    same_as_twin := a = b;
    in_index_order := a = s;
END
$f$;

-- row_diff(tab, twin): row counts, distinct ids (no row copied twice), and the
-- rows that are in one table and not in the other (as multisets)
CREATE FUNCTION row_diff(tab text, twin text,
    OUT n bigint, OUT n_twin bigint, OUT distinct_ids bigint, OUT differing bigint)
LANGUAGE plpgsql AS $f$
BEGIN
    EXECUTE format('SELECT count(*), count(DISTINCT id) FROM %I', tab) INTO n, distinct_ids;
    EXECUTE format('SELECT count(*) FROM %I', twin) INTO n_twin;
    EXECUTE format('SELECT count(*) FROM ((SELECT * FROM %1$I EXCEPT ALL SELECT * FROM %2$I)
                    UNION ALL (SELECT * FROM %2$I EXCEPT ALL SELECT * FROM %1$I)) d', tab, twin)
        INTO differing;
END
$f$;

CREATE VIEW pg AS
    SELECT c.relname AS index, k.leaked_pages, k.dropped_pages,
           k.total_pages = 1 + k.log_pages + k.run_pages + k.free_pages + k.reserved_pages
                           + k.unused_pages AS all_pages_accounted
    FROM pg_class c, LATERAL lsm_am.check_index(c.oid) k
    WHERE c.relam = (SELECT oid FROM pg_am WHERE amname = 'lsm') AND c.relkind = 'i'
      AND c.relnamespace = 'lsm_cluster'::regnamespace;

-- the queries compared with the twin after each CLUSTER
CREATE TABLE queries (n int, q text);
INSERT INTO queries VALUES
    (1, 'SELECT k, id, v FROM %1$s WHERE k = 42 ORDER BY k, id'),
    (2, 'SELECT count(*), sum(id) FROM %1$s WHERE k BETWEEN 100 AND 300'),
    (3, 'SELECT k, id FROM %1$s WHERE k > 650 ORDER BY k, id'),
    (4, 'SELECT k, id FROM %1$s WHERE k < 20 ORDER BY k DESC, id DESC'),
    (5, 'SELECT k FROM %1$s ORDER BY k LIMIT 100'),
    (6, 'SELECT k FROM %1$s ORDER BY k DESC LIMIT 100'),
    (7, 'SELECT count(*), sum(id) FROM %1$s WHERE k IS NULL'),
    (8, 'SELECT count(*), sum(id) FROM %1$s WHERE k IS NOT NULL'),
    (9, 'SELECT id, k FROM %1$s WHERE k = ANY (''{1,7,300,699,1000}'') ORDER BY id'),
    (10, 'SELECT min(k), max(k) FROM %1$s'),
    (11, 'SELECT k, id, v FROM %1$s ORDER BY k, id'),
    (12, 'SELECT k, id, v FROM %1$s ORDER BY k DESC, id DESC');

-- cl (lsm) and its twin cl_bt (btree): the same rows, the same statements
CREATE TABLE cl (id int, k int4, v text) WITH (autovacuum_enabled = off, fillfactor = 60);
CREATE TABLE cl_bt (id int, k int4, v text) WITH (autovacuum_enabled = off, fillfactor = 60);
-- on_both(stmt): stmt (%1$s stands for the table) on cl, then on cl_bt
CREATE PROCEDURE on_both(stmt text) LANGUAGE plpgsql AS $f$
BEGIN
    EXECUTE format(stmt, 'cl');
    EXECUTE format(stmt, 'cl_bt');
END
$f$;
-- random keys in 0..699 (about 6 rows a key), every 29th key NULL
CALL on_both('INSERT INTO %1$s SELECT g, CASE WHEN g %% 29 = 0 THEN NULL
             ELSE abs(hashint4(g)) %% 700 END, ''v'' || g FROM generate_series(1, 2000) g');
-- the build's run
CREATE INDEX cl_k ON cl USING lsm (k);
CREATE INDEX cl_bt_k ON cl_bt (k);
-- a level-0 run
CALL on_both('INSERT INTO %1$s SELECT g, CASE WHEN g %% 29 = 0 THEN NULL
             ELSE abs(hashint4(g)) %% 700 END, ''v'' || g FROM generate_series(2001, 4000) g');
SELECT lsm_am.flush('cl_k');
-- dead rows that VACUUM removes (and their entries)
CALL on_both('DELETE FROM %1$s WHERE id %% 7 = 0');
VACUUM cl;
VACUUM cl_bt;
-- the memtable: new rows, updates that move keys (new entries, the old rows
-- dead), keys that become NULL
CALL on_both('INSERT INTO %1$s SELECT g, CASE WHEN g %% 29 = 0 THEN NULL
             ELSE abs(hashint4(g)) %% 700 END, ''v'' || g FROM generate_series(4001, 5000) g');
CALL on_both('UPDATE %1$s SET k = k + 1 WHERE id %% 11 = 0');
CALL on_both('UPDATE %1$s SET k = NULL WHERE id %% 31 = 1');
-- HOT updates (no indexed column changes: no new entry)
BEGIN;
CALL on_both('UPDATE %1$s SET v = v || ''+'' WHERE id %% 13 = 3');
SELECT pg_stat_get_xact_tuples_hot_updated('cl'::regclass) > 0 AS cl_hot,
       pg_stat_get_xact_tuples_hot_updated('cl_bt'::regclass) > 0 AS cl_bt_hot;
COMMIT;
-- dead rows VACUUM has not removed; rows of a rolled-back insert
CALL on_both('DELETE FROM %1$s WHERE id %% 5 = 0');
BEGIN;
CALL on_both('INSERT INTO %1$s SELECT g, g %% 700, ''aborted'' FROM generate_series(9001, 9300) g');
ROLLBACK;
SELECT s.memtable_entries > 0 AS in_memtable, s.runs >= 2 AS in_runs
    FROM lsm_am.index_stats('cl_k') s;
SELECT * FROM row_diff('cl', 'cl_bt');
SELECT pg_relation_size('cl') AS cl_size_before \gset
SELECT pg_relation_size('cl_bt') AS cl_bt_size_before \gset

-- CLUSTER in a transaction that has inserted (entries still in this
-- backend's insert buffer), deleted and updated rows of the table
BEGIN;
CALL on_both('INSERT INTO %1$s SELECT g, CASE WHEN g %% 29 = 0 THEN NULL
             ELSE abs(hashint4(g)) %% 700 END, ''t'' || g FROM generate_series(5001, 5500) g');
CALL on_both('DELETE FROM %1$s WHERE id %% 9 = 0 AND id > 4500');
CALL on_both('UPDATE %1$s SET k = k - 1 WHERE id %% 17 = 0');
CLUSTER cl USING cl_k;
CLUSTER cl_bt USING cl_bt_k;
SELECT * FROM row_diff('cl', 'cl_bt');
COMMIT;
SELECT pg_relation_size('cl') < :cl_size_before AS cl_shrank,
       pg_relation_size('cl_bt') < :cl_bt_size_before AS cl_bt_shrank;
SELECT * FROM heap_order('cl', 'cl_bt', 'coalesce(k::text, ''NULL'')', 'k');
SELECT * FROM row_diff('cl', 'cl_bt');
SELECT n, twin(q, 'cl', 'cl_bt', 'cl_k') FROM queries ORDER BY n;
SELECT indexrelid::regclass AS index, indisclustered FROM pg_index
    WHERE indrelid IN ('cl'::regclass, 'cl_bt'::regclass) ORDER BY indexrelid::regclass::text;
-- the rebuilt index: one run, sound, every heap row in it (the rows the
-- transaction deleted were copied too, as it might have rolled back: the
-- index has their entries, so more entries than visible rows)
SELECT s.memtable_entries, s.runs, s.run_entries >= (SELECT count(*) FROM cl) AS every_row
    FROM lsm_am.index_stats('cl_k') s;
SELECT * FROM pg;
SELECT lsm_am.verify('cl_k', true);

-- ALTER TABLE ... CLUSTER ON, SET WITHOUT CLUSTER, and a plain CLUSTER
CALL on_both('INSERT INTO %1$s SELECT g, CASE WHEN g %% 23 = 0 THEN NULL
             ELSE abs(hashint4(g)) %% 700 END, ''w'' || g FROM generate_series(6001, 7000) g');
CALL on_both('UPDATE %1$s SET k = 699 - k WHERE id %% 19 = 0');
CALL on_both('DELETE FROM %1$s WHERE id %% 8 = 0');
ALTER TABLE cl SET WITHOUT CLUSTER;
SELECT indisclustered FROM pg_index WHERE indexrelid = 'cl_k'::regclass;
ALTER TABLE cl CLUSTER ON cl_k;
ALTER TABLE cl_bt CLUSTER ON cl_bt_k;
SELECT indisclustered FROM pg_index WHERE indexrelid = 'cl_k'::regclass;
\d cl
CLUSTER cl;
CLUSTER cl_bt;
SELECT * FROM heap_order('cl', 'cl_bt', 'coalesce(k::text, ''NULL'')', 'k');
SELECT * FROM row_diff('cl', 'cl_bt');
SELECT n, twin(q, 'cl', 'cl_bt', 'cl_k') FROM queries ORDER BY n;
SELECT * FROM pg;
SELECT lsm_am.verify('cl_k', true);

-- a partial index: PostgreSQL's own refusal, as for btree
CREATE INDEX cl_k_part ON cl USING lsm (k) WHERE k > 100;
CREATE INDEX cl_bt_k_part ON cl_bt (k) WHERE k > 100;
CLUSTER cl USING cl_k_part;
CLUSTER cl_bt USING cl_bt_k_part;
ALTER TABLE cl CLUSTER ON cl_k_part;
-- still clustered on cl_k
SELECT indexrelid::regclass AS index, indisclustered FROM pg_index
    WHERE indrelid = 'cl'::regclass ORDER BY indexrelid::regclass::text;

-- two columns, DESC NULLS FIRST on the first, text under "C"
CREATE TABLE mc (id int, a text COLLATE "C", b int8) WITH (autovacuum_enabled = off);
CREATE TABLE mc_bt (id int, a text COLLATE "C", b int8) WITH (autovacuum_enabled = off);
INSERT INTO mc SELECT g, CASE WHEN g % 17 = 0 THEN NULL ELSE 'a' || abs(hashint4(g)) % 50 END,
    CASE WHEN g % 13 = 0 THEN NULL ELSE abs(hashint4(g + 1)) % 5 END
    FROM generate_series(1, 3000) g;
INSERT INTO mc_bt SELECT * FROM mc;
CREATE INDEX mc_ab ON mc USING lsm (a DESC NULLS FIRST, b);
CREATE INDEX mc_bt_ab ON mc_bt (a DESC NULLS FIRST, b);
DELETE FROM mc WHERE id % 6 = 0;
DELETE FROM mc_bt WHERE id % 6 = 0;
UPDATE mc SET b = b + 10 WHERE id % 10 = 1;
UPDATE mc_bt SET b = b + 10 WHERE id % 10 = 1;
CLUSTER mc USING mc_ab;
CLUSTER mc_bt USING mc_bt_ab;
SELECT * FROM heap_order('mc', 'mc_bt', 'coalesce(a, ''NULL'') || '':'' || coalesce(b::text, ''NULL'')',
                         'a DESC NULLS FIRST, b');
SELECT * FROM row_diff('mc', 'mc_bt');
SELECT twin('SELECT a, b, id FROM %1$s WHERE a = ''a7'' ORDER BY a DESC, b, id', 'mc', 'mc_bt', 'mc_ab');
SELECT twin('SELECT a, b FROM %1$s ORDER BY a DESC NULLS FIRST, b LIMIT 200', 'mc', 'mc_bt', 'mc_ab');
SELECT twin('SELECT count(*), sum(id) FROM %1$s WHERE a IS NULL AND b IS NULL', 'mc', 'mc_bt', 'mc_ab');
SELECT lsm_am.verify('mc_ab', true);

-- a unique index: rebuilt by CLUSTER, still unique
CREATE TABLE uq (id int, u int8) WITH (autovacuum_enabled = off);
CREATE TABLE uq_bt (id int, u int8) WITH (autovacuum_enabled = off);
INSERT INTO uq SELECT g, hashint8(g) FROM generate_series(1, 2000) g;
INSERT INTO uq_bt SELECT * FROM uq;
CREATE UNIQUE INDEX uq_u ON uq USING lsm (u);
CREATE UNIQUE INDEX uq_bt_u ON uq_bt (u);
DELETE FROM uq WHERE id % 4 = 0;
DELETE FROM uq_bt WHERE id % 4 = 0;
CLUSTER uq USING uq_u;
CLUSTER uq_bt USING uq_bt_u;
SELECT * FROM heap_order('uq', 'uq_bt', 'u::text', 'u');
SELECT * FROM row_diff('uq', 'uq_bt');
INSERT INTO uq SELECT 0, u FROM uq WHERE id = 1;
INSERT INTO uq SELECT 0, hashint8(4);
SELECT lsm_am.verify('uq_u', true);

-- a partitioned table: each partition clustered on its lsm index
CREATE TABLE p (id int, k int4, part int) PARTITION BY LIST (part);
CREATE TABLE p0 PARTITION OF p FOR VALUES IN (0);
CREATE TABLE p1 PARTITION OF p FOR VALUES IN (1);
CREATE TABLE p_bt (id int, k int4, part int) PARTITION BY LIST (part);
CREATE TABLE p_bt0 PARTITION OF p_bt FOR VALUES IN (0);
CREATE TABLE p_bt1 PARTITION OF p_bt FOR VALUES IN (1);
CREATE INDEX p_k ON p USING lsm (k);
CREATE INDEX p_bt_k ON p_bt (k);
INSERT INTO p SELECT g, CASE WHEN g % 37 = 0 THEN NULL ELSE abs(hashint4(g)) % 300 END, g % 2
    FROM generate_series(1, 3000) g;
INSERT INTO p_bt SELECT * FROM p;
DELETE FROM p WHERE id % 5 = 0;
DELETE FROM p_bt WHERE id % 5 = 0;
CLUSTER p USING p_k;
CLUSTER p_bt USING p_bt_k;
SELECT * FROM heap_order('p0', 'p_bt0', 'coalesce(k::text, ''NULL'')', 'k');
SELECT * FROM heap_order('p1', 'p_bt1', 'coalesce(k::text, ''NULL'')', 'k');
SELECT * FROM row_diff('p0', 'p_bt0');
SELECT * FROM row_diff('p1', 'p_bt1');
SELECT twin('SELECT k, id FROM %1$s WHERE k BETWEEN 10 AND 40 ORDER BY k, id', 'p', 'p_bt', 'p0_k_idx');

SELECT * FROM pg ORDER BY index;

DROP SCHEMA lsm_cluster CASCADE;
