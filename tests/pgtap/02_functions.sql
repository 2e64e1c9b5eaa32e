-- 02_functions.sql — the functions of schema lsm_am: flush(), compact(),
-- index_stats(), index_info(), wait_for_merges(), maintenance_stats(),
-- check_index(), lookup_stats(), reset_lookup_stats(): signatures,
-- behaviour, errors, privileges (pgTAP).  Everything runs in one transaction,
-- which background workers cannot see into, so only the synchronous paths
-- (flush, compact, CREATE INDEX) make runs here.
BEGIN;
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS pgtap;
CREATE EXTENSION IF NOT EXISTS lsm_am;
RESET client_min_messages;

SELECT plan(111);

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
SELECT is((SELECT count(*)::int FROM pg_proc WHERE pronamespace = 'lsm_am'::regnamespace), 19,
          'schema lsm_am has 19 functions');
SELECT set_eq($$SELECT proname::text FROM pg_proc WHERE pronamespace = 'lsm_am'::regnamespace$$,
              ARRAY['lsm_handler', 'flush', 'index_stats', 'compact', 'index_info', 'wait_for_merges',
                    'maintenance_stats', 'check_index', 'lookup_stats', 'reset_lookup_stats',
                    'maintenance_progress', 'index_summary', 'table_indexes', 'reset_stats',
                    'verify', 'metapage', 'manifest', 'page_header', 'page_items'],
              'the functions of schema lsm_am');
SELECT is_empty($$SELECT oid::regprocedure FROM pg_proc WHERE pronamespace = 'lsm_am'::regnamespace
                    AND proname <> 'lsm_handler' AND (NOT proisstrict OR provolatile <> 'v'
                                                      OR prosecdef OR proparallel <> 'u')$$,
                'every SQL function of lsm_am is strict, volatile, parallel unsafe and not SECURITY DEFINER');

-- signatures of the 0.2 functions
SELECT has_function('lsm_am', 'wait_for_merges', ARRAY['regclass', 'interval']);
SELECT function_returns('lsm_am', 'wait_for_merges', ARRAY['regclass', 'interval'], 'boolean');
SELECT is(pg_get_function_arguments('lsm_am.wait_for_merges(regclass, interval)'::regprocedure),
          'index regclass, timeout interval DEFAULT '::text || quote_literal('00:01:00') || '::interval',
          'wait_for_merges: the timeout defaults to 1 minute');
SELECT has_function('lsm_am', 'maintenance_stats', ARRAY['regclass']);
SELECT function_returns('lsm_am', 'maintenance_stats', ARRAY['regclass'], 'record');
SELECT is((SELECT array_agg(n || ' ' || t ORDER BY i)
           FROM pg_proc p, unnest(p.proargnames, p.proallargtypes::regtype[]::text[], p.proargmodes::text[])
                WITH ORDINALITY u(n, t, m, i)
           WHERE p.oid = 'lsm_am.maintenance_stats(regclass)'::regprocedure AND m = 'o'),
          ARRAY['immutable_memtables integer', 'runs_per_level integer[]', 'flushes bigint',
                'compactions bigint', 'trivial_moves bigint', 'pages_flushed bigint',
                'pages_compacted bigint', 'slowdowns bigint', 'stops bigint',
                'stall_ms double precision', 'backend_flushes bigint', 'wal_log_bytes bigint',
                'wal_flush_bytes bigint', 'wal_compact_bytes bigint', 'free_pages bigint',
                'accounted_pages bigint', 'pending boolean', 'leaked_pages bigint',
                'file_pages bigint', 'space_amplification double precision',
                'pages_written_per_level bigint[]', 'write_amplification double precision'],
          'maintenance_stats OUT columns, names and types');
SELECT has_function('lsm_am', 'check_index', ARRAY['regclass']);
SELECT function_returns('lsm_am', 'check_index', ARRAY['regclass'], 'record');
SELECT is((SELECT array_agg(n || ' ' || t ORDER BY i)
           FROM pg_proc p, unnest(p.proargnames, p.proallargtypes::regtype[]::text[], p.proargmodes::text[])
                WITH ORDINALITY u(n, t, m, i)
           WHERE p.oid = 'lsm_am.check_index(regclass)'::regprocedure AND m = 'o'),
          ARRAY['total_pages bigint', 'log_pages bigint', 'run_pages bigint', 'free_pages bigint',
                'reserved_pages bigint', 'unused_pages bigint', 'leaked_pages bigint', 'dropped_pages bigint'],
          'check_index OUT columns, names and types');
SELECT has_function('lsm_am', 'lookup_stats', ARRAY['regclass']);
SELECT function_returns('lsm_am', 'lookup_stats', ARRAY['regclass'], 'record');
SELECT is((SELECT array_agg(n || ' ' || t ORDER BY i)
           FROM pg_proc p, unnest(p.proargnames, p.proallargtypes::regtype[]::text[], p.proargmodes::text[])
                WITH ORDINALITY u(n, t, m, i)
           WHERE p.oid = 'lsm_am.lookup_stats(regclass)'::regprocedure AND m = 'o'),
          ARRAY['lookups bigint', 'filter_probes bigint', 'filter_negatives bigint',
                'false_positives bigint', 'data_pages_read bigint'],
          'lookup_stats OUT columns, names and types');
SELECT has_function('lsm_am', 'reset_lookup_stats', ARRAY['regclass']);
SELECT function_returns('lsm_am', 'reset_lookup_stats', ARRAY['regclass'], 'void');
SELECT is((SELECT array_agg(p.oid::regprocedure::text ORDER BY 1) FROM pg_proc p
           WHERE p.pronamespace = 'lsm_am'::regnamespace AND p.proname <> 'lsm_handler'
             AND obj_description(p.oid, 'pg_proc') IS NULL),
          NULL, 'every SQL function of lsm_am has a comment');

-- behaviour on an lsm index
CREATE TABLE pgtap_fn (id int, k int8);
CREATE INDEX pgtap_fn_lsm ON pgtap_fn USING lsm (k);
SELECT results_eq(
    $$SELECT memtable_entries, memtable_bytes, runs, run_entries, log_pages FROM lsm_am.index_stats('pgtap_fn_lsm')$$,
    $$VALUES (0::bigint, 0::bigint, 0, 0::bigint, 0::bigint)$$,
    'index_stats of an empty index');
SELECT cmp_ok((SELECT total_pages FROM lsm_am.index_stats('pgtap_fn_lsm')), '>=', 1::bigint,
              'an empty index has its metapage');
SELECT results_eq(
    $$SELECT immutable_memtables, runs_per_level, flushes, compactions, trivial_moves, pages_flushed,
             pages_compacted, free_pages, leaked_pages FROM lsm_am.maintenance_stats('pgtap_fn_lsm')$$,
    $$VALUES (0, '{0}'::int[], 0::bigint, 0::bigint, 0::bigint, 0::bigint, 0::bigint, 0::bigint, 0::bigint)$$,
    'maintenance_stats of an empty index');
SELECT results_eq(
    $$SELECT pages_written_per_level, write_amplification FROM lsm_am.maintenance_stats('pgtap_fn_lsm')$$,
    $$VALUES ('{0}'::bigint[], NULL::float8)$$,
    'maintenance_stats of an empty index: no page written, no write amplification');
SELECT results_eq(
    $$SELECT log_pages, run_pages, free_pages, reserved_pages, leaked_pages, dropped_pages
      FROM lsm_am.check_index('pgtap_fn_lsm')$$,
    $$VALUES (0::bigint, 0::bigint, 0::bigint, 0::bigint, 0::bigint, 0::bigint)$$,
    'check_index of an empty index: only the metapage');
SELECT is((SELECT lsm_am.wait_for_merges('pgtap_fn_lsm')), true, 'wait_for_merges on an idle index is true');
SELECT is((SELECT lsm_am.wait_for_merges('pgtap_fn_lsm', '0')), true,
          'wait_for_merges with a zero timeout on an idle index is true');
SELECT throws_ok($$SELECT lsm_am.wait_for_merges('pgtap_fn_lsm', '-1 second')$$, '22023',
                 'timeout must not be negative', 'wait_for_merges refuses a negative timeout');
INSERT INTO pgtap_fn SELECT g, g FROM generate_series(1, 100) g;
SELECT results_eq(
    $$SELECT memtable_entries, runs, run_entries, memtable_bytes > 0, log_pages > 0 FROM lsm_am.index_stats('pgtap_fn_lsm')$$,
    $$VALUES (100::bigint, 0, 0::bigint, true, true)$$,
    'after 100 inserts: 100 memtable entries, no run');
SELECT lives_ok($$SELECT lsm_am.flush('pgtap_fn_lsm')$$, 'flush an lsm index');
SELECT results_eq(
    $$SELECT memtable_entries, memtable_bytes, runs, run_entries, log_pages FROM lsm_am.index_stats('pgtap_fn_lsm')$$,
    $$VALUES (0::bigint, 0::bigint, 1, 100::bigint, 0::bigint)$$,
    'after flush: empty memtable, no log page in a live chain, one run of 100 entries');
SELECT results_eq(
    $$SELECT immutable_memtables, runs_per_level, flushes, compactions, pages_flushed > 0
      FROM lsm_am.maintenance_stats('pgtap_fn_lsm')$$,
    $$VALUES (0, '{1}'::int[], 1::bigint, 0::bigint, true)$$,
    'after flush: one level-0 run, one flush counted');
SELECT results_eq(
    $$SELECT pages_written_per_level = ARRAY[pages_flushed], write_amplification
      FROM lsm_am.maintenance_stats('pgtap_fn_lsm')$$,
    $$VALUES (true, 1::float8)$$,
    'after flush: the flushed pages are written into level 0, each once');
SELECT results_eq(
    $$SELECT log_pages, run_pages > 0, free_pages > 0, reserved_pages, leaked_pages, dropped_pages,
             total_pages = 1 + log_pages + run_pages + free_pages + reserved_pages + unused_pages
      FROM lsm_am.check_index('pgtap_fn_lsm')$$,
    $$VALUES (0::bigint, true, true, 0::bigint, 0::bigint, 0::bigint, true)$$,
    'after flush: the flushed log pages are free, every page is accounted for, none leaked');
SELECT is((SELECT free_pages FROM lsm_am.maintenance_stats('pgtap_fn_lsm')),
          (SELECT free_pages FROM lsm_am.check_index('pgtap_fn_lsm')),
          'maintenance_stats and check_index agree on the free pages');
SELECT is((SELECT level FROM lsm_am.index_info('pgtap_fn_lsm')), 0, 'a flushed memtable is a level-0 run');
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
SELECT throws_ok($$SELECT lsm_am.wait_for_merges('pgtap_fn_bt')$$, '42809', '"pgtap_fn_bt" is not an lsm index',
                 'wait_for_merges on a btree index fails with wrong_object_type');
SELECT throws_ok($$SELECT * FROM lsm_am.maintenance_stats('pgtap_fn_bt')$$, '42809', '"pgtap_fn_bt" is not an lsm index',
                 'maintenance_stats on a btree index fails with wrong_object_type');
SELECT throws_ok($$SELECT * FROM lsm_am.check_index('pgtap_fn_bt')$$, '42809', '"pgtap_fn_bt" is not an lsm index',
                 'check_index on a btree index fails with wrong_object_type');
SELECT throws_ok($$SELECT * FROM lsm_am.lookup_stats('pgtap_fn')$$, '42809', '"pgtap_fn" is not an lsm index',
                 'lookup_stats on a table fails with wrong_object_type');
SELECT throws_ok($$SELECT lsm_am.reset_lookup_stats('pgtap_fn_bt')$$, '42809', '"pgtap_fn_bt" is not an lsm index',
                 'reset_lookup_stats on a btree index fails with wrong_object_type');
SELECT is((SELECT lsm_am.wait_for_merges(NULL) IS NULL AND lsm_am.check_index(NULL) IS NULL
              AND lsm_am.maintenance_stats(NULL) IS NULL AND lsm_am.lookup_stats(NULL) IS NULL),
          true, 'the 0.2 functions return NULL for a NULL index (strict)');

-- privileges: flush is for the index owner; index_stats for anyone who may
-- read the table.  The role gets nothing on schema lsm_am but what the
-- extension grants to PUBLIC.
CREATE ROLE pgtap_lsm_other NOLOGIN;
GRANT CREATE ON SCHEMA public TO pgtap_lsm_other;
SELECT ok(has_schema_privilege('pgtap_lsm_other', 'lsm_am', 'USAGE'),
          'every role may use schema lsm_am (granted to PUBLIC by the extension)');
SELECT ok(NOT has_schema_privilege('pgtap_lsm_other', 'lsm_am', 'CREATE'),
          'no role but its owner may create objects in schema lsm_am');
SET ROLE pgtap_lsm_other;
SELECT throws_ok($$SELECT lsm_am.flush('pgtap_fn_lsm')$$, '42501', 'must be owner of index pgtap_fn_lsm',
                 'flush by a non-owner fails with insufficient_privilege');
SELECT throws_ok($$SELECT * FROM lsm_am.index_stats('pgtap_fn_lsm')$$, '42501',
                 'permission denied for index "pgtap_fn_lsm"',
                 'index_stats without SELECT on the table fails with insufficient_privilege');
SELECT throws_ok($$SELECT * FROM lsm_am.index_info('pgtap_fn_lsm')$$, '42501',
                 'permission denied for index "pgtap_fn_lsm"',
                 'index_info without SELECT on the table fails with insufficient_privilege');
SELECT throws_ok($$SELECT lsm_am.wait_for_merges('pgtap_fn_lsm')$$, '42501',
                 'permission denied for index "pgtap_fn_lsm"',
                 'wait_for_merges without SELECT on the table fails with insufficient_privilege');
SELECT throws_ok($$SELECT * FROM lsm_am.maintenance_stats('pgtap_fn_lsm')$$, '42501',
                 'permission denied for index "pgtap_fn_lsm"',
                 'maintenance_stats without SELECT on the table fails with insufficient_privilege');
SELECT throws_ok($$SELECT * FROM lsm_am.check_index('pgtap_fn_lsm')$$, '42501',
                 'permission denied for index "pgtap_fn_lsm"',
                 'check_index without SELECT on the table fails with insufficient_privilege');
SELECT throws_ok($$SELECT * FROM lsm_am.lookup_stats('pgtap_fn_lsm')$$, '42501',
                 'permission denied for index "pgtap_fn_lsm"',
                 'lookup_stats without SELECT on the table fails with insufficient_privilege');
SELECT throws_ok($$SELECT lsm_am.reset_lookup_stats('pgtap_fn_lsm')$$, '42501', NULL,
                 'reset_lookup_stats without any privilege on the table fails with insufficient_privilege');
RESET ROLE;
GRANT SELECT ON pgtap_fn TO pgtap_lsm_other;
SET ROLE pgtap_lsm_other;
SELECT lives_ok($$SELECT * FROM lsm_am.index_stats('pgtap_fn_lsm')$$,
                'index_stats by a non-owner with SELECT on the table works');
SELECT lives_ok($$SELECT * FROM lsm_am.index_info('pgtap_fn_lsm')$$,
                'index_info by a non-owner with SELECT on the table works');
SELECT lives_ok($$SELECT * FROM lsm_am.maintenance_stats('pgtap_fn_lsm')$$,
                'maintenance_stats by a non-owner with SELECT on the table works');
SELECT lives_ok($$SELECT * FROM lsm_am.check_index('pgtap_fn_lsm')$$,
                'check_index by a non-owner with SELECT on the table works');
SELECT lives_ok($$SELECT * FROM lsm_am.lookup_stats('pgtap_fn_lsm')$$,
                'lookup_stats by a non-owner with SELECT on the table works');
SELECT is((SELECT lsm_am.wait_for_merges('pgtap_fn_lsm')), true,
          'wait_for_merges by a non-owner with SELECT on the table works');
SELECT throws_ok($$SELECT lsm_am.reset_lookup_stats('pgtap_fn_lsm')$$, '42501',
                 'must be owner of index pgtap_fn_lsm',
                 'reset_lookup_stats by a non-owner with SELECT on the table fails: the counters are the owner''s to reset');
CREATE TABLE pgtap_fn_own (k int4);
SELECT lives_ok($$CREATE INDEX pgtap_fn_own_lsm ON pgtap_fn_own USING lsm (k lsm_am.int4_ops)$$,
                'a non-superuser can create an lsm index naming its operator class');
SELECT lives_ok($$SELECT * FROM lsm_am.index_stats('pgtap_fn_own_lsm')$$, 'the index owner can read index_stats');
SELECT lives_ok($$SELECT * FROM lsm_am.lookup_stats('pgtap_fn_own_lsm')$$, 'the index owner can read lookup_stats');
SELECT lives_ok($$SELECT lsm_am.reset_lookup_stats('pgtap_fn_own_lsm')$$, 'the index owner can reset_lookup_stats');
SELECT is((SELECT lsm_am.wait_for_merges('pgtap_fn_own_lsm')), true, 'the index owner can wait_for_merges');
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
SELECT results_eq(
    $$SELECT runs_per_level, flushes, compactions + trivial_moves > 0, leaked_pages
      FROM lsm_am.maintenance_stats('pgtap_fn_own_lsm')$$,
    $$VALUES ('{0,1}'::int[], 2::bigint, true, 0::bigint)$$,
    'compact: two flushes, then one compaction into level 1');
SELECT results_eq(
    $$SELECT leaked_pages, dropped_pages, reserved_pages FROM lsm_am.check_index('pgtap_fn_own_lsm')$$,
    $$VALUES (0::bigint, 0::bigint, 0::bigint)$$,
    'compact: the replaced runs'' pages are accounted for, none leaked');
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

-- lookup_stats and reset_lookup_stats: two overlapping runs (odd keys, then
-- even keys); a point lookup probes the bloom filter of both, and the run
-- without the key either rules it out or is a false positive
CREATE TABLE pgtap_lk (k int8, v int4);
CREATE INDEX pgtap_lk_lsm ON pgtap_lk USING lsm (k, v);
INSERT INTO pgtap_lk SELECT 2 * g + 1, g % 7 FROM generate_series(0, 999) g;
SELECT lsm_am.flush('pgtap_lk_lsm');
INSERT INTO pgtap_lk SELECT 2 * g, g % 7 FROM generate_series(0, 999) g;
SELECT lsm_am.flush('pgtap_lk_lsm');
SELECT lives_ok($$SELECT lsm_am.reset_lookup_stats('pgtap_lk_lsm')$$, 'reset_lookup_stats');
SELECT results_eq($$SELECT * FROM lsm_am.lookup_stats('pgtap_lk_lsm')$$,
                  $$VALUES (0::bigint, 0::bigint, 0::bigint, 0::bigint, 0::bigint)$$,
                  'after reset_lookup_stats every counter is 0');
SELECT results_eq($$SELECT v FROM pgtap_lk WHERE k = 500$$, $$VALUES (250 % 7)$$, 'a point lookup');
SELECT results_eq(
    $$SELECT lookups, filter_probes, filter_negatives + false_positives, data_pages_read >= 1
      FROM lsm_am.lookup_stats('pgtap_lk_lsm')$$,
    $$VALUES (1::bigint, 2::bigint, 1::bigint, true)$$,
    'one lookup: both runs'' filters probed, one of them has no such key');
SELECT results_eq($$SELECT count(*)::int FROM pgtap_lk WHERE k BETWEEN 10 AND 20$$, $$VALUES (11)$$,
                  'a range scan');
SELECT results_eq(
    $$SELECT lookups, filter_probes FROM lsm_am.lookup_stats('pgtap_lk_lsm')$$,
    $$VALUES (1::bigint, 2::bigint)$$,
    'a range scan is no lookup and probes no filter');
SELECT lsm_am.reset_lookup_stats('pgtap_lk_lsm');
SELECT results_eq(
    $$SELECT lookups, filter_probes FROM lsm_am.lookup_stats('pgtap_lk_lsm')$$,
    $$VALUES (0::bigint, 0::bigint)$$,
    'reset_lookup_stats zeroes the counters again');
SELECT lsm_am.compact('pgtap_lk_lsm');
SELECT results_eq($$SELECT level, entries FROM lsm_am.index_info('pgtap_lk_lsm')$$,
                  $$VALUES (1, 2000::bigint)$$, 'compact merges the two level-0 runs into one level-1 run');
SELECT results_eq(
    $$SELECT runs_per_level, compactions FROM lsm_am.maintenance_stats('pgtap_lk_lsm')$$,
    $$VALUES ('{0,1}'::int[], 1::bigint)$$,
    'maintenance_stats counts the compaction');
SELECT results_eq(
    $$SELECT pages_written_per_level = ARRAY[pages_flushed, pages_compacted], pages_compacted > 0,
             write_amplification = (pages_flushed + pages_compacted)::float8 / pages_flushed
      FROM lsm_am.maintenance_stats('pgtap_lk_lsm')$$,
    $$VALUES (true, true, true)$$,
    'the flushes'' pages are counted into level 0 and the compaction''s into level 1');
SELECT lsm_am.reset_stats('pgtap_lk_lsm');
SELECT results_eq(
    $$SELECT pages_written_per_level, write_amplification, pages_compacted > 0
      FROM lsm_am.maintenance_stats('pgtap_lk_lsm')$$,
    $$VALUES ('{0}'::bigint[], NULL::float8, true)$$,
    'reset_stats zeroes the pages written per level (the metapage''s pages_compacted stays)');
-- (the order matters: a run whose header this backend has not read yet is
-- tried by its filter first, so that a new connection's lookup reads no
-- header of a run the filter rules out; once the header is read, the key
-- range comes first)
SELECT results_eq($$SELECT count(*)::int FROM pgtap_lk WHERE k = 777$$, $$VALUES (1)$$,
                  'a lookup in the compacted run');
SELECT results_eq($$SELECT count(*)::int FROM pgtap_lk WHERE k = 1000001$$, $$VALUES (0)$$,
                  'a lookup of a key beyond every run');
SELECT results_eq(
    $$SELECT lookups, filter_probes, filter_negatives, false_positives
      FROM lsm_am.lookup_stats('pgtap_lk_lsm')$$,
    $$VALUES (2::bigint, 1::bigint, 0::bigint, 0::bigint)$$,
    'two lookups: the first probes and finds, the key beyond the run''s range skips it unprobed');
SELECT results_eq(
    $$SELECT leaked_pages, dropped_pages, reserved_pages FROM lsm_am.check_index('pgtap_lk_lsm')$$,
    $$VALUES (0::bigint, 0::bigint, 0::bigint)$$,
    'after flushes and a compaction no page leaked');

SELECT * FROM finish();
ROLLBACK;
