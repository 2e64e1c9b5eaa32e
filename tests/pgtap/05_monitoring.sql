-- 05_monitoring.sql — the monitoring objects of lsm_am (issue 15): the views
-- lsm_am.progress and lsm_am.indexes, the functions behind them
-- (maintenance_progress, index_summary), table_indexes and reset_stats:
-- signatures, columns, values after synchronous flushes and compactions,
-- errors, privileges (pgTAP).  One transaction, which background workers
-- cannot see into: every run here is made by flush() or compact().  A
-- running job is watched by the TAP test tests/t/020_progress.pl.
BEGIN;
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS pgtap;
CREATE EXTENSION IF NOT EXISTS lsm_am;
RESET client_min_messages;

SELECT plan(43);

-- signatures and columns
SELECT has_function('lsm_am', 'maintenance_progress', ARRAY[]::text[]);
SELECT function_returns('lsm_am', 'maintenance_progress', ARRAY[]::text[], 'setof record');
SELECT is((SELECT proargnames FROM pg_proc WHERE oid = 'lsm_am.maintenance_progress()'::regprocedure),
          ARRAY['pid', 'relid', 'indexrelid', 'kind', 'input_runs', 'input_levels', 'output_level',
                'pages_done', 'pages_total', 'started_at'],
          'maintenance_progress OUT column names');
SELECT has_function('lsm_am', 'index_summary', ARRAY['regclass']);
SELECT function_returns('lsm_am', 'index_summary', ARRAY['regclass'], 'setof record');
SELECT is((SELECT proargnames FROM pg_proc WHERE oid = 'lsm_am.index_summary(regclass)'::regprocedure),
          ARRAY['index', 'policy', 'memtable_entries', 'memtable_bytes', 'memtable_fill',
                'immutable_memtables', 'runs_per_level', 'live_pages', 'total_pages', 'pending',
                'running', 'flushes', 'compactions', 'last_flush', 'last_compaction', 'slowdowns',
                'stops', 'stall_ms'],
          'index_summary argument and OUT column names');
SELECT has_function('lsm_am', 'table_indexes', ARRAY['regclass']);
SELECT has_function('lsm_am', 'reset_stats', ARRAY['regclass']);
SELECT function_returns('lsm_am', 'reset_stats', ARRAY['regclass'], 'void');
SELECT has_view('lsm_am', 'progress', 'view lsm_am.progress exists');
SELECT has_view('lsm_am', 'indexes', 'view lsm_am.indexes exists');
SELECT columns_are('lsm_am', 'progress',
    ARRAY['pid', 'relid', 'indexrelid', 'kind', 'input_runs', 'input_levels', 'output_level',
          'pages_done', 'pages_total', 'started_at'],
    'lsm_am.progress has the columns of maintenance_progress()');
SELECT columns_are('lsm_am', 'indexes',
    ARRAY['schemaname', 'relname', 'indexrelname', 'relid', 'indexrelid', 'policy',
          'memtable_entries', 'memtable_bytes', 'memtable_fill', 'immutable_memtables',
          'runs_per_level', 'live_pages', 'total_pages', 'pending', 'running', 'flushes',
          'compactions', 'last_flush', 'last_compaction', 'slowdowns', 'stops', 'stall_ms'],
    'lsm_am.indexes: names, then the columns of index_summary()');
SELECT ok(has_table_privilege('public', 'lsm_am.progress', 'SELECT')
          AND has_table_privilege('public', 'lsm_am.indexes', 'SELECT'),
          'every role may SELECT from both views (each row checks the table)');

-- an index the views can show
CREATE TABLE pgtap_mon (k int4, v text);
CREATE INDEX pgtap_mon_lsm ON pgtap_mon USING lsm (k);
CREATE INDEX pgtap_mon_tiered ON pgtap_mon USING lsm (v) WITH (compaction = tiered);
CREATE INDEX pgtap_mon_bt ON pgtap_mon USING btree (k);
INSERT INTO pgtap_mon SELECT g, md5(g::text) FROM generate_series(1, 1000) g;
SELECT results_eq(
    $$SELECT policy, memtable_entries, memtable_fill > 0 AND memtable_fill < 1, runs_per_level,
             pending, running, flushes, last_flush
      FROM lsm_am.index_summary('pgtap_mon_lsm')$$,
    $$VALUES ('leveled'::text, 1000::bigint, true, '{0}'::int[], false, NULL::text, 0::bigint,
              NULL::timestamptz)$$,
    'before a flush: 1000 entries in the memtable (this backend''s pending ones pushed first), no run, no flush yet');
SELECT lsm_am.flush('pgtap_mon_lsm');
SELECT results_eq(
    $$SELECT memtable_entries, runs_per_level, flushes, compactions, last_flush IS NOT NULL,
             last_compaction
      FROM lsm_am.index_summary('pgtap_mon_lsm')$$,
    $$VALUES (0::bigint, '{1}'::int[], 1::bigint, 0::bigint, true, NULL::timestamptz)$$,
    'after a flush: one run at level 0, the flush time is kept');
INSERT INTO pgtap_mon SELECT g, md5(g::text) FROM generate_series(1001, 1500) g;
SELECT lsm_am.flush('pgtap_mon_lsm');
SELECT lsm_am.compact('pgtap_mon_lsm');
SELECT results_eq(
    $$SELECT i.runs_per_level = m.runs_per_level, i.flushes = m.flushes,
             i.compactions = m.compactions + m.trivial_moves, i.last_compaction IS NOT NULL,
             i.immutable_memtables = m.immutable_memtables, i.total_pages = m.file_pages,
             i.live_pages = m.accounted_pages - m.free_pages
      FROM lsm_am.index_summary('pgtap_mon_lsm') i, lsm_am.maintenance_stats('pgtap_mon_lsm') m$$,
    $$VALUES (true, true, true, true, true, true, true)$$,
    'after compact(): index_summary agrees with maintenance_stats, the compaction time is kept');
SELECT is((SELECT policy FROM lsm_am.index_summary('pgtap_mon_tiered')), 'tiered',
          'the policy is the index option');
SELECT set_eq($$SELECT indexrelname::text FROM lsm_am.indexes WHERE relname = 'pgtap_mon'$$,
              ARRAY['pgtap_mon_lsm', 'pgtap_mon_tiered'], 'lsm_am.indexes lists the lsm indexes, not the btree');
SELECT results_eq(
    $$SELECT schemaname::text COLLATE "default", relname::text COLLATE "default", relid, indexrelid, policy
      FROM lsm_am.indexes WHERE indexrelname = 'pgtap_mon_lsm'$$,
    $$VALUES ('public'::text, 'pgtap_mon'::text, 'pgtap_mon'::regclass, 'pgtap_mon_lsm'::regclass, 'leveled'::text)$$,
    'lsm_am.indexes names the schema, table and index');
SELECT is_empty($$SELECT * FROM lsm_am.progress WHERE relid = 'pgtap_mon'::regclass$$,
                'nothing runs on the index: no progress row');
SELECT throws_ok($$SELECT * FROM lsm_am.index_summary('pgtap_mon_bt')$$, '42809',
                 '"pgtap_mon_bt" is not an lsm index', 'index_summary of a btree index fails');
SELECT throws_ok($$SELECT lsm_am.reset_stats('pgtap_mon_bt')$$, '42809',
                 '"pgtap_mon_bt" is not an lsm index', 'reset_stats of a btree index fails');

-- reset_stats zeroes the lookup counters (and the stall and WAL counters)
DROP INDEX pgtap_mon_bt;
SET LOCAL enable_seqscan = off;
SET LOCAL enable_bitmapscan = off;
SELECT is((SELECT count(*)::int FROM pgtap_mon WHERE k = 7), 1, 'a lookup through the lsm index');
RESET enable_seqscan;
RESET enable_bitmapscan;
SELECT ok((SELECT lookups > 0 FROM lsm_am.lookup_stats('pgtap_mon_lsm')), 'it was counted');
SELECT lives_ok($$SELECT lsm_am.reset_stats('pgtap_mon_lsm')$$, 'reset_stats by the owner');
SELECT results_eq(
    $$SELECT l.lookups, l.filter_probes, m.slowdowns, m.stops, m.wal_log_bytes, m.wal_flush_bytes,
             m.wal_compact_bytes, m.backend_flushes
      FROM lsm_am.lookup_stats('pgtap_mon_lsm') l, lsm_am.maintenance_stats('pgtap_mon_lsm') m$$,
    $$VALUES (0::bigint, 0::bigint, 0::bigint, 0::bigint, 0::bigint, 0::bigint, 0::bigint, 0::bigint)$$,
    'after reset_stats the shared-memory counters are 0');
SELECT is((SELECT flushes FROM lsm_am.index_summary('pgtap_mon_lsm')), 2::bigint,
          'the metapage''s counts stay (part of the index)');

-- partitions: table_indexes of the partitioned table reports every partition's index
CREATE TABLE pgtap_mon_p (k int4) PARTITION BY RANGE (k);
CREATE TABLE pgtap_mon_p1 PARTITION OF pgtap_mon_p FOR VALUES FROM (0) TO (100);
CREATE TABLE pgtap_mon_p2 PARTITION OF pgtap_mon_p FOR VALUES FROM (100) TO (200);
CREATE INDEX pgtap_mon_p_lsm ON pgtap_mon_p USING lsm (k);
INSERT INTO pgtap_mon_p SELECT g FROM generate_series(0, 199) g;
SELECT results_eq(
    $$SELECT relname::text COLLATE "default", memtable_entries FROM lsm_am.table_indexes('pgtap_mon_p')$$,
    $$VALUES ('pgtap_mon_p1'::text, 100::bigint), ('pgtap_mon_p2'::text, 100::bigint)$$,
    'table_indexes of a partitioned table: the lsm index of each partition');
SELECT results_eq(
    $$SELECT relname::text COLLATE "default" FROM lsm_am.table_indexes('pgtap_mon_p2')$$,
    $$VALUES ('pgtap_mon_p2'::text)$$, 'table_indexes of one partition');
SELECT is((SELECT count(*)::int FROM lsm_am.table_indexes('pgtap_mon')), 2,
          'table_indexes of a plain table: its lsm indexes');
SELECT throws_ok($$SELECT * FROM lsm_am.index_summary('pgtap_mon_p_lsm')$$, '42809',
                 '"pgtap_mon_p_lsm" is a partitioned index',
                 'index_summary of a partitioned index fails (its partitions have the lsm indexes)');

-- privileges: a role without SELECT on the table sees nothing of its indexes
CREATE ROLE pgtap_mon_other NOLOGIN;
CREATE ROLE pgtap_mon_stats NOLOGIN IN ROLE pg_read_all_stats;
SET ROLE pgtap_mon_other;
SELECT is_empty($$SELECT * FROM lsm_am.indexes WHERE relname LIKE 'pgtap\_mon%'$$,
                'without SELECT on the tables lsm_am.indexes shows none of their indexes');
SELECT is_empty($$SELECT * FROM lsm_am.index_summary('pgtap_mon_lsm')$$,
                'nor does index_summary (no row, no error)');
SELECT is_empty($$SELECT * FROM lsm_am.table_indexes('pgtap_mon')$$, 'nor table_indexes');
SELECT is_empty($$SELECT * FROM lsm_am.progress$$, 'nor lsm_am.progress');
SELECT throws_ok($$SELECT lsm_am.reset_stats('pgtap_mon_lsm')$$, '42501',
                 'must be owner of index pgtap_mon_lsm', 'reset_stats without any privilege fails');
RESET ROLE;
GRANT SELECT ON pgtap_mon TO pgtap_mon_other;
SET ROLE pgtap_mon_other;
SELECT set_eq($$SELECT indexrelname::text FROM lsm_am.indexes WHERE relname LIKE 'pgtap\_mon%'$$,
              ARRAY['pgtap_mon_lsm', 'pgtap_mon_tiered'],
              'with SELECT on one table the role sees its indexes, not the partitions''');
SELECT is((SELECT count(*)::int FROM lsm_am.index_summary('pgtap_mon_lsm')), 1,
          'index_summary with SELECT on the table: one row');
SELECT throws_ok($$SELECT lsm_am.reset_stats('pgtap_mon_lsm')$$, '42501',
                 'must be owner of index pgtap_mon_lsm',
                 'reset_stats by a non-owner with SELECT fails: the counters are the owner''s to reset');
RESET ROLE;
SET ROLE pgtap_mon_stats;
SELECT is((SELECT count(*)::int FROM lsm_am.indexes WHERE relname LIKE 'pgtap\_mon%'), 4,
          'a member of pg_read_all_stats sees every lsm index');
RESET ROLE;
CREATE ROLE pgtap_mon_owner NOLOGIN;
GRANT CREATE ON SCHEMA public TO pgtap_mon_owner;
SET ROLE pgtap_mon_owner;
CREATE TABLE pgtap_mon_own (k int4);
CREATE INDEX pgtap_mon_own_lsm ON pgtap_mon_own USING lsm (k);
SELECT lives_ok($$SELECT lsm_am.reset_stats('pgtap_mon_own_lsm')$$, 'a non-superuser owner may reset_stats');
SELECT is((SELECT count(*)::int FROM lsm_am.indexes WHERE relname = 'pgtap_mon_own'), 1,
          'the owner sees its index');
RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
