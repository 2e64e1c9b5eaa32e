-- 02_functions.sql — lsm_am.flush() and lsm_am.index_stats(): signatures,
-- behaviour, errors (pgTAP).
BEGIN;
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS pgtap;
CREATE EXTENSION IF NOT EXISTS lsm_am;
RESET client_min_messages;

SELECT plan(42);

-- signatures
SELECT has_function('lsm_am', 'flush', ARRAY['regclass']);
SELECT function_returns('lsm_am', 'flush', ARRAY['regclass'], 'void');
SELECT is_strict('lsm_am', 'flush', ARRAY['regclass']);
SELECT volatility_is('lsm_am', 'flush', ARRAY['regclass'], 'volatile');
SELECT has_function('lsm_am', 'index_stats', ARRAY['regclass']);
SELECT has_function('lsm_am', 'compact', ARRAY['regclass']);
SELECT function_returns('lsm_am', 'compact', ARRAY['regclass'], 'void');
SELECT has_function('lsm_am', 'index_info', ARRAY['regclass']);
SELECT function_returns('lsm_am', 'index_info', ARRAY['regclass'], 'setof record');
SELECT function_returns('lsm_am', 'index_stats', ARRAY['regclass'], 'record');
SELECT is_strict('lsm_am', 'index_stats', ARRAY['regclass']);
SELECT is((SELECT proargnames FROM pg_proc WHERE oid = 'lsm_am.index_stats(regclass)'::regprocedure),
          ARRAY['index', 'memtable_entries', 'memtable_bytes', 'runs', 'run_entries', 'log_pages', 'total_pages'],
          'index_stats argument and OUT column names');
SELECT is((SELECT proallargtypes::regtype[]::text[] FROM pg_proc WHERE oid = 'lsm_am.index_stats(regclass)'::regprocedure),
          ARRAY['regclass', 'bigint', 'bigint', 'integer', 'bigint', 'bigint', 'bigint'],
          'index_stats argument and OUT column types');
SELECT is((SELECT proargmodes::text[] FROM pg_proc WHERE oid = 'lsm_am.index_stats(regclass)'::regprocedure),
          ARRAY['i', 'o', 'o', 'o', 'o', 'o', 'o'],
          'index_stats has one IN argument and six OUT columns');
SELECT is((SELECT proargnames FROM pg_proc WHERE oid = 'lsm_am.flush(regclass)'::regprocedure),
          ARRAY['index'], 'flush argument name');
SELECT is((SELECT count(*)::int FROM pg_proc WHERE pronamespace = 'lsm_am'::regnamespace), 5,
          'schema lsm_am has 5 functions (lsm_handler, flush, index_stats, compact, index_info)');

-- behaviour on an lsm index
CREATE TABLE pgtap_fn (id int, k int8);
CREATE INDEX pgtap_fn_lsm ON pgtap_fn USING lsm (k);
SELECT results_eq(
    $$SELECT memtable_entries, memtable_bytes, runs, run_entries, log_pages FROM lsm_am.index_stats('pgtap_fn_lsm')$$,
    $$VALUES (0::bigint, 0::bigint, 0, 0::bigint, 0::bigint)$$,
    'index_stats of an empty index');
SELECT cmp_ok((SELECT total_pages FROM lsm_am.index_stats('pgtap_fn_lsm')), '>=', 1::bigint,
              'an empty index has its metapage');
INSERT INTO pgtap_fn SELECT g, g FROM generate_series(1, 100) g;
SELECT results_eq(
    $$SELECT memtable_entries, runs, run_entries, memtable_bytes > 0, log_pages > 0 FROM lsm_am.index_stats('pgtap_fn_lsm')$$,
    $$VALUES (100::bigint, 0, 0::bigint, true, true)$$,
    'after 100 inserts: 100 memtable entries, no run');
SELECT lives_ok($$SELECT lsm_am.flush('pgtap_fn_lsm')$$, 'flush an lsm index');
SELECT results_eq(
    $$SELECT memtable_entries, memtable_bytes, runs, run_entries FROM lsm_am.index_stats('pgtap_fn_lsm')$$,
    $$VALUES (0::bigint, 0::bigint, 1, 100::bigint)$$,
    'after flush: empty memtable, one run of 100 entries');
SELECT lives_ok($$SELECT lsm_am.flush('pgtap_fn_lsm'::regclass::oid)$$, 'flush an empty memtable');
SELECT results_eq(
    $$SELECT runs, run_entries FROM lsm_am.index_stats('pgtap_fn_lsm')$$,
    $$VALUES (1, 100::bigint)$$,
    'flushing an empty memtable adds no run');
SELECT is((SELECT lsm_am.index_stats(NULL) IS NULL), true, 'index_stats(NULL) is NULL (strict)');

-- errors: not an lsm index, no such relation
CREATE INDEX pgtap_fn_bt ON pgtap_fn USING btree (k);
SELECT throws_ok($$SELECT lsm_am.flush('pgtap_fn_bt')$$, '42809', '"pgtap_fn_bt" is not an lsm index',
                 'flush on a btree index fails with wrong_object_type');
SELECT throws_ok($$SELECT * FROM lsm_am.index_stats('pgtap_fn_bt')$$, '42809', '"pgtap_fn_bt" is not an lsm index',
                 'index_stats on a btree index fails with wrong_object_type');
SELECT throws_ok($$SELECT lsm_am.flush('pgtap_fn')$$, '42809', '"pgtap_fn" is not an lsm index',
                 'flush on a table fails with wrong_object_type');
SELECT throws_ok($$SELECT * FROM lsm_am.index_stats('pgtap_fn')$$, '42809', '"pgtap_fn" is not an lsm index',
                 'index_stats on a table fails with wrong_object_type');
SELECT throws_ok($$SELECT lsm_am.flush('pgtap_no_such_index')$$, '42P01', NULL,
                 'flush on a missing relation fails with undefined_table');

-- privileges: flush is for the index owner; index_stats for anyone who may
-- read the table
CREATE ROLE pgtap_lsm_other NOLOGIN;
GRANT USAGE ON SCHEMA lsm_am TO pgtap_lsm_other;
GRANT CREATE ON SCHEMA public TO pgtap_lsm_other;
SET ROLE pgtap_lsm_other;
SELECT throws_ok($$SELECT lsm_am.flush('pgtap_fn_lsm')$$, '42501', 'must be owner of index pgtap_fn_lsm',
                 'flush by a non-owner fails with insufficient_privilege');
SELECT throws_ok($$SELECT * FROM lsm_am.index_stats('pgtap_fn_lsm')$$, '42501',
                 'permission denied for index "pgtap_fn_lsm"',
                 'index_stats without SELECT on the table fails with insufficient_privilege');
RESET ROLE;
GRANT SELECT ON pgtap_fn TO pgtap_lsm_other;
SET ROLE pgtap_lsm_other;
SELECT lives_ok($$SELECT * FROM lsm_am.index_stats('pgtap_fn_lsm')$$,
                'index_stats by a non-owner with SELECT on the table works');
CREATE TABLE pgtap_fn_own (k int4);
SELECT lives_ok($$CREATE INDEX pgtap_fn_own_lsm ON pgtap_fn_own USING lsm (k)$$,
                'a non-superuser can create an lsm index');
INSERT INTO pgtap_fn_own SELECT g FROM generate_series(1, 10) g;
SELECT lives_ok($$SELECT lsm_am.flush('pgtap_fn_own_lsm')$$, 'the index owner can flush');
SELECT results_eq(
    $$SELECT memtable_entries, runs, run_entries FROM lsm_am.index_stats('pgtap_fn_own_lsm')$$,
    $$VALUES (0::bigint, 1, 10::bigint)$$,
    'the owner''s flush wrote one run');
INSERT INTO pgtap_fn_own SELECT g FROM generate_series(11, 20) g;
SELECT lives_ok($$SELECT lsm_am.flush('pgtap_fn_own_lsm')$$, 'a second flush');
SELECT lives_ok($$SELECT lsm_am.compact('pgtap_fn_own_lsm')$$, 'the index owner can compact');
SELECT results_eq(
    $$SELECT level, entries, smallest_key, largest_key FROM lsm_am.index_info('pgtap_fn_own_lsm')$$,
    $$VALUES (1, 20::bigint, '(1)'::text, '(20)'::text)$$,
    'compact leaves one level-1 run holding every entry, keys shown as text');
SELECT throws_ok($$SELECT lsm_am.compact('pgtap_fn_lsm')$$, '42501', 'must be owner of index pgtap_fn_lsm',
                 'compact by a non-owner fails with insufficient_privilege');
RESET ROLE;

-- scans see the same rows before and after flush
DROP INDEX pgtap_fn_bt;
SET LOCAL enable_seqscan = off;
SET LOCAL enable_bitmapscan = off;
SELECT results_eq(
    $$SELECT id FROM pgtap_fn WHERE k BETWEEN 10 AND 20 ORDER BY k$$,
    $$SELECT g FROM generate_series(10, 20) g$$,
    'range scan over a run');
INSERT INTO pgtap_fn VALUES (1000, 15);
SELECT results_eq(
    $$SELECT id FROM pgtap_fn WHERE k = 15 ORDER BY id$$,
    $$VALUES (15), (1000)$$,
    'equality scan over the run and the memtable');
CREATE FUNCTION pg_temp.plan_of(q text) RETURNS text LANGUAGE plpgsql AS $f$
DECLARE l text; p text := '';
BEGIN
    FOR l IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP p := p || l || E'\n'; END LOOP;
    RETURN p;
END $f$;
SELECT matches(pg_temp.plan_of('SELECT id FROM pgtap_fn WHERE k = 15'), 'Index Scan using pgtap_fn_lsm on pgtap_fn',
               'the equality scan uses the lsm index');

SELECT * FROM finish();
ROLLBACK;
