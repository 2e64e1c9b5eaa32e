-- 04_planner.sql — what the planner and EXPLAIN see of an lsm index, on every
-- supported version: ORDER BY ... LIMIT is an ordered index scan (PostgreSQL
-- 18 needs amtranslatestrategy/amtranslatecmptype for that), and EXPLAIN
-- ANALYZE counts index searches (18's "Index Searches", which the AM keeps).
BEGIN;
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS pgtap;
CREATE EXTENSION IF NOT EXISTS lsm_am;
RESET client_min_messages;

SELECT plan(9);

CREATE FUNCTION pgtap_plan(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    r record;
    res text := '';
BEGIN
    FOR r IN EXECUTE q LOOP
        res := res || r."QUERY PLAN" || E'\n';
    END LOOP;
    RETURN res;
END $$;

CREATE TABLE pl (id int, k bigint, t text COLLATE "C");
INSERT INTO pl SELECT g, (g * 7919) % 10007, md5(g::text) FROM generate_series(1, 5000) g;
CREATE INDEX pl_k ON pl USING lsm (k);
CREATE INDEX pl_t ON pl USING lsm (t);
INSERT INTO pl SELECT g, (g * 7919) % 10007, md5(g::text) FROM generate_series(5001, 6000) g;
ANALYZE pl;
SET LOCAL enable_seqscan = off;

SELECT matches(pgtap_plan('EXPLAIN (COSTS OFF) SELECT k FROM pl ORDER BY k LIMIT 10'),
               'Index (Only )?Scan using pl_k', 'ORDER BY k LIMIT 10 scans pl_k');
SELECT doesnt_match(pgtap_plan('EXPLAIN (COSTS OFF) SELECT k FROM pl ORDER BY k LIMIT 10'),
                    'Sort', '... in index order, without a Sort');
SELECT matches(pgtap_plan('EXPLAIN (COSTS OFF) SELECT k FROM pl ORDER BY k DESC LIMIT 10'),
               'Index (Only )?Scan Backward using pl_k', 'ORDER BY k DESC LIMIT 10 scans pl_k backward');
SELECT doesnt_match(pgtap_plan('EXPLAIN (COSTS OFF) SELECT t FROM pl WHERE t > ''a'' ORDER BY t LIMIT 5'),
                    'Sort', 'ORDER BY on a text column in C collation needs no Sort');
SELECT results_eq('SELECT k FROM pl ORDER BY k LIMIT 10',
                  'SELECT k FROM (SELECT k FROM pl ORDER BY k + 0 LIMIT 10) x ORDER BY k + 0',
                  'the ordered scan returns the 10 smallest keys');
SELECT matches(pgtap_plan('EXPLAIN (COSTS OFF) SELECT min(k), max(k) FROM pl'),
               'Index (Only )?Scan( Backward)? using pl_k', 'min()/max() use pl_k');
SELECT is((SELECT min(k)::text || '-' || max(k)::text FROM pl),
          (SELECT min(k + 0)::text || '-' || max(k + 0)::text FROM pl), 'min()/max() through pl_k are right');

-- Index Searches: one per scan start (18 prints it; 15 has no such line)
SELECT CASE WHEN current_setting('server_version_num')::int >= 180000
    THEN matches(pgtap_plan('EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) SELECT * FROM pl WHERE k = 42'),
                 'Index Searches: 1\M', 'EXPLAIN ANALYZE: an lsm index scan is one index search')
    ELSE pass('EXPLAIN ANALYZE: no Index Searches line before PostgreSQL 18') END;
SELECT CASE WHEN current_setting('server_version_num')::int >= 180000
    THEN matches(pgtap_plan('EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)
                             SELECT * FROM generate_series(1, 3) g, LATERAL (SELECT * FROM pl WHERE k = g) x'),
                 'Index Searches: 3\M', 'EXPLAIN ANALYZE: three rescans are three index searches')
    ELSE pass('EXPLAIN ANALYZE: no Index Searches line before PostgreSQL 18') END;

SELECT * FROM finish();
ROLLBACK;
