-- 03_settings.sql — lsm_am settings (GUCs) and the memtable_size index
-- option (pgTAP).  Assumes the server runs with the default settings.
BEGIN;
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS pgtap;
CREATE EXTENSION IF NOT EXISTS lsm_am;
RESET client_min_messages;

SELECT plan(36);

-- defaults
SELECT is(current_setting('lsm_am.memory'), '64MB', 'lsm_am.memory defaults to 64MB');
SELECT is(current_setting('lsm_am.max_indexes'), '64', 'lsm_am.max_indexes defaults to 64');
SELECT is(current_setting('lsm_am.memtable_size'), '4MB', 'lsm_am.memtable_size defaults to 4MB');
SELECT is(current_setting('lsm_am.max_runs'), '8', 'lsm_am.max_runs defaults to 8');
SELECT is(current_setting('lsm_am.flush_delay_ms'), '0', 'lsm_am.flush_delay_ms (test hook) defaults to 0');

-- contexts, units and ranges
SELECT results_eq(
    $$SELECT name::text COLLATE "default", context::text COLLATE "default", unit::text COLLATE "default",
             min_val::text COLLATE "default", max_val::text COLLATE "default", boot_val::text COLLATE "default"
      FROM pg_settings WHERE name LIKE 'lsm\_am.%' ORDER BY name$$,
    $$VALUES ('lsm_am.flush_delay_ms', 'superuser', 'ms', '0', '10000', '0'),
             ('lsm_am.max_indexes', 'postmaster', NULL, '1', '10000', '64'),
             ('lsm_am.max_runs', 'user', NULL, '2', '256', '8'),
             ('lsm_am.memory', 'postmaster', 'MB', '1', '4095', '64'),
             ('lsm_am.memtable_size', 'user', 'kB', '64', '1048576', '4096')$$,
    'lsm_am settings: context, unit, range, boot value');

-- user settings can be changed, within range
SELECT lives_ok($$SET LOCAL lsm_am.memtable_size = '64kB'$$, 'set lsm_am.memtable_size to 64kB');
SELECT is(current_setting('lsm_am.memtable_size'), '64kB', 'lsm_am.memtable_size is now 64kB');
SELECT lives_ok($$SET LOCAL lsm_am.memtable_size = '1GB'$$, 'set lsm_am.memtable_size to its maximum');
SELECT throws_ok($$SET LOCAL lsm_am.memtable_size = '63kB'$$, '22023', NULL, 'lsm_am.memtable_size below 64kB is refused');
SELECT throws_ok($$SET LOCAL lsm_am.memtable_size = '2GB'$$, '22023', NULL, 'lsm_am.memtable_size above 1GB is refused');
SELECT lives_ok($$SET LOCAL lsm_am.max_runs = 2$$, 'set lsm_am.max_runs to 2');
SELECT throws_ok($$SET LOCAL lsm_am.max_runs = 1$$, '22023', NULL, 'lsm_am.max_runs below 2 is refused');
SELECT throws_ok($$SET LOCAL lsm_am.max_runs = 257$$, '22023', NULL, 'lsm_am.max_runs above 256 is refused');
SELECT throws_ok($$SET LOCAL lsm_am.memory = '128MB'$$, '55P02', NULL, 'lsm_am.memory needs a restart');
SELECT throws_ok($$SET LOCAL lsm_am.max_indexes = 10$$, '55P02', NULL, 'lsm_am.max_indexes needs a restart');
SELECT throws_ok($$SET LOCAL lsm_am.no_such_setting = 1$$, '42602', NULL, 'lsm_am is a reserved settings prefix');
RESET lsm_am.memtable_size;
RESET lsm_am.max_runs;

-- the memtable_size index option: 64 .. 1048576 (kB)
CREATE TABLE pgtap_set (k int4);
SELECT throws_ok($$CREATE INDEX pgtap_set_1 ON pgtap_set USING lsm (k) WITH (memtable_size = 1)$$,
                 '22023', 'value 1 out of bounds for option "memtable_size"', 'memtable_size = 1 is refused');
SELECT throws_ok($$CREATE INDEX pgtap_set_2 ON pgtap_set USING lsm (k) WITH (memtable_size = 63)$$,
                 '22023', 'value 63 out of bounds for option "memtable_size"', 'memtable_size = 63 is refused');
SELECT throws_ok($$CREATE INDEX pgtap_set_3 ON pgtap_set USING lsm (k) WITH (memtable_size = 0)$$,
                 '22023', 'value 0 out of bounds for option "memtable_size"', 'memtable_size = 0 is refused');
SELECT throws_ok($$CREATE INDEX pgtap_set_4 ON pgtap_set USING lsm (k) WITH (memtable_size = 99999999)$$,
                 '22023', 'value 99999999 out of bounds for option "memtable_size"', 'memtable_size = 99999999 is refused');
SELECT throws_ok($$CREATE INDEX pgtap_set_5 ON pgtap_set USING lsm (k) WITH (memtable_size = 1048577)$$,
                 '22023', 'value 1048577 out of bounds for option "memtable_size"', 'memtable_size = 1048577 is refused');
SELECT throws_ok($$CREATE INDEX pgtap_set_6 ON pgtap_set USING lsm (k) WITH (memtable_size = 'big')$$,
                 '22023', NULL, 'memtable_size = ''big'' is refused');
SELECT throws_ok($$CREATE INDEX pgtap_set_7 ON pgtap_set USING lsm (k) WITH (fillfactor = 90)$$,
                 '22023', 'unrecognized parameter "fillfactor"', 'lsm has no fillfactor option');
SELECT is((SELECT count(*)::int FROM pg_class WHERE relname LIKE 'pgtap\_set\__'), 0, 'none of those indexes exists');

-- valid values are stored in pg_class.reloptions
SELECT lives_ok($$CREATE INDEX pgtap_set_ok ON pgtap_set USING lsm (k) WITH (memtable_size = 128)$$,
                'memtable_size = 128 is accepted');
SELECT is((SELECT reloptions FROM pg_class WHERE relname = 'pgtap_set_ok'), ARRAY['memtable_size=128'],
          'memtable_size is stored in pg_class.reloptions');
SELECT lives_ok($$CREATE INDEX pgtap_set_min ON pgtap_set USING lsm (k) WITH (memtable_size = 64)$$,
                'memtable_size = 64 (minimum) is accepted');
SELECT lives_ok($$CREATE INDEX pgtap_set_max ON pgtap_set USING lsm (k) WITH (memtable_size = 1048576)$$,
                'memtable_size = 1048576 (maximum) is accepted');
SELECT lives_ok($$ALTER INDEX pgtap_set_ok SET (memtable_size = 256)$$, 'ALTER INDEX SET (memtable_size = 256)');
SELECT is((SELECT reloptions FROM pg_class WHERE relname = 'pgtap_set_ok'), ARRAY['memtable_size=256'],
          'ALTER INDEX SET updates pg_class.reloptions');
SELECT throws_ok($$ALTER INDEX pgtap_set_ok SET (memtable_size = 10)$$, '22023',
                 'value 10 out of bounds for option "memtable_size"', 'ALTER INDEX SET validates too');
SELECT lives_ok($$ALTER INDEX pgtap_set_ok RESET (memtable_size)$$, 'ALTER INDEX RESET (memtable_size)');
SELECT is((SELECT reloptions FROM pg_class WHERE relname = 'pgtap_set_ok'), NULL, 'RESET removes the option');

-- the option takes effect: 5000 int4 entries do not fit a 64 kB memtable
CREATE TABLE pgtap_set2 (k int4);
CREATE INDEX pgtap_set2_lsm ON pgtap_set2 USING lsm (k) WITH (memtable_size = 64);
INSERT INTO pgtap_set2 SELECT g FROM generate_series(1, 5000) g;
SELECT ok((SELECT runs > 0 AND memtable_entries + run_entries = 5000 FROM lsm_am.index_stats('pgtap_set2_lsm')),
          'a 64 kB memtable was flushed automatically, no entry lost');
-- and the default (4MB) holds 5000 int4 entries in the memtable
CREATE INDEX pgtap_set2_default ON pgtap_set2 USING lsm (k);
INSERT INTO pgtap_set2 SELECT g FROM generate_series(1, 5000) g;
SELECT results_eq($$SELECT memtable_entries, runs, run_entries FROM lsm_am.index_stats('pgtap_set2_default')$$,
                  $$VALUES (5000::bigint, 1, 5000::bigint)$$,
                  'with the default memtable_size 5000 new entries stay in the memtable');

SELECT * FROM finish();
ROLLBACK;
