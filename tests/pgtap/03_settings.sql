-- 03_settings.sql — lsm_am settings (GUCs) and the index options
-- memtable_size, compaction, size_ratio, bloom_bits_per_key and bloom_columns
-- (pgTAP).  Assumes the server runs with the default settings.
BEGIN;
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS pgtap;
CREATE EXTENSION IF NOT EXISTS lsm_am;
RESET client_min_messages;

SELECT plan(95);

-- the DETAIL of the error a statement raises
CREATE FUNCTION pg_temp.err_detail(q text) RETURNS text LANGUAGE plpgsql AS $f$
DECLARE d text;
BEGIN
    EXECUTE q;
    RETURN NULL;
EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS d = PG_EXCEPTION_DETAIL;
    RETURN d;
END $f$;

-- defaults
SELECT is(current_setting('lsm_am.memory'), '64MB', 'lsm_am.memory defaults to 64MB');
SELECT is(current_setting('lsm_am.max_indexes'), '64', 'lsm_am.max_indexes defaults to 64');
SELECT is(current_setting('lsm_am.metadata_cache_size'), '32MB', 'lsm_am.metadata_cache_size defaults to 32MB');
SELECT is(current_setting('lsm_am.memtable_size'), '4MB', 'lsm_am.memtable_size defaults to 4MB');
SELECT is(current_setting('lsm_am.flush_delay_ms'), '0', 'lsm_am.flush_delay_ms (test hook) defaults to 0');
SELECT is(current_setting('lsm_am.replay_delay_ms'), '0', 'lsm_am.replay_delay_ms (test hook) defaults to 0');
SELECT is(current_setting('lsm_am.free_list_limit'), '160', 'lsm_am.free_list_limit (test hook) defaults to 160, all the free list holds');
SELECT is(current_setting('lsm_am.max_pieces'), '48', 'lsm_am.max_pieces (test hook) defaults to 48, the most a merge writes');
SELECT is(current_setting('lsm_am.fault'), '', 'lsm_am.fault (test hook) defaults to empty: no fault point armed');
SELECT throws_ok($$SET LOCAL lsm_am.fault = 'flush_page'$$, '22023', NULL,
                 'lsm_am.fault without a kind is refused');
SELECT lives_ok($$SET LOCAL lsm_am.fault = 'truncate:error:p0.5'$$,
                'lsm_am.fault takes a point, a kind and a probability');
SET LOCAL lsm_am.fault = '';  -- disarmed again: the rest of the file must not meet it
SELECT is(current_setting('lsm_am.log_maintenance'), 'off', 'lsm_am.log_maintenance defaults to off');
SELECT is(current_setting('lsm_am.l0_compaction_trigger'), '4', 'lsm_am.l0_compaction_trigger defaults to 4');
SELECT is(current_setting('lsm_am.l0_slowdown_trigger'), '20', 'lsm_am.l0_slowdown_trigger defaults to 20');
SELECT is(current_setting('lsm_am.l0_stop_trigger'), '36', 'lsm_am.l0_stop_trigger defaults to 36');
SELECT is(current_setting('lsm_am.max_workers'), '2', 'lsm_am.max_workers defaults to 2');
SELECT is(current_setting('lsm_am.worker_naptime'), '1s', 'lsm_am.worker_naptime defaults to 1s');
SELECT is(current_setting('lsm_am.worker_idle_timeout'), '10s', 'lsm_am.worker_idle_timeout defaults to 10s');
SELECT is(current_setting('lsm_am.max_runs', true), NULL, 'lsm_am.max_runs is gone (0.2)');

-- contexts, units and ranges
SELECT results_eq(
    $$SELECT name::text COLLATE "default", context::text COLLATE "default", unit::text COLLATE "default",
             min_val::text COLLATE "default", max_val::text COLLATE "default", boot_val::text COLLATE "default"
      FROM pg_settings WHERE name LIKE 'lsm\_am.%' ORDER BY name$$,
    $$VALUES ('lsm_am.fault', 'superuser', NULL, NULL, NULL, ''),
             ('lsm_am.flush_delay_ms', 'superuser', 'ms', '0', '10000', '0'),
             ('lsm_am.free_list_limit', 'postmaster', NULL, '2', '160', '160'),
             ('lsm_am.l0_compaction_trigger', 'user', NULL, '1', '64', '4'),
             ('lsm_am.l0_slowdown_trigger', 'user', NULL, '1', '100', '20'),
             ('lsm_am.l0_stop_trigger', 'user', NULL, '1', '100', '36'),
             ('lsm_am.log_maintenance', 'superuser', NULL, NULL, NULL, 'off'),
             ('lsm_am.max_indexes', 'postmaster', NULL, '1', '10000', '64'),
             ('lsm_am.max_pieces', 'sighup', NULL, '2', '48', '48'),
             ('lsm_am.max_workers', 'sighup', NULL, '0', '64', '2'),
             ('lsm_am.memory', 'postmaster', 'MB', '1', '4095', '64'),
             ('lsm_am.memtable_size', 'user', 'kB', '64', '1048576', '4096'),
             ('lsm_am.metadata_cache_size', 'postmaster', 'MB', '0', '4095', '32'),
             ('lsm_am.replay_delay_ms', 'superuser', 'ms', '0', '1000', '0'),
             ('lsm_am.worker_idle_timeout', 'sighup', 'ms', '0', '86400000', '10000'),
             ('lsm_am.worker_naptime', 'sighup', 'ms', '10', '3600000', '1000')$$,
    'lsm_am settings: context, unit, range, boot value');

-- user settings can be changed, within range
SELECT lives_ok($$SET LOCAL lsm_am.memtable_size = '64kB'$$, 'set lsm_am.memtable_size to 64kB');
SELECT is(current_setting('lsm_am.memtable_size'), '64kB', 'lsm_am.memtable_size is now 64kB');
SELECT lives_ok($$SET LOCAL lsm_am.memtable_size = '1GB'$$, 'set lsm_am.memtable_size to its maximum');
SELECT throws_ok($$SET LOCAL lsm_am.memtable_size = '63kB'$$, '22023', NULL, 'lsm_am.memtable_size below 64kB is refused');
SELECT throws_ok($$SET LOCAL lsm_am.memtable_size = '2GB'$$, '22023', NULL, 'lsm_am.memtable_size above 1GB is refused');
SELECT lives_ok($$SET LOCAL lsm_am.l0_compaction_trigger = 2$$, 'set lsm_am.l0_compaction_trigger to 2');
SELECT is(current_setting('lsm_am.l0_compaction_trigger'), '2', 'lsm_am.l0_compaction_trigger is now 2');
SELECT lives_ok($$SET LOCAL lsm_am.l0_compaction_trigger = 1$$, 'lsm_am.l0_compaction_trigger = 1 (minimum) is accepted');
SELECT lives_ok($$SET LOCAL lsm_am.l0_compaction_trigger = 64$$, 'lsm_am.l0_compaction_trigger = 64 (maximum) is accepted');
SELECT throws_ok($$SET LOCAL lsm_am.l0_compaction_trigger = 0$$, '22023',
                 '0 is outside the valid range for parameter "lsm_am.l0_compaction_trigger" (1 .. 64)',
                 'lsm_am.l0_compaction_trigger below 1 is refused');
SELECT throws_ok($$SET LOCAL lsm_am.l0_compaction_trigger = 65$$, '22023', NULL,
                 'lsm_am.l0_compaction_trigger above 64 is refused');
SELECT throws_ok($$SET LOCAL lsm_am.l0_compaction_trigger = 'two'$$, '22023', NULL,
                 'lsm_am.l0_compaction_trigger must be an integer');
SELECT lives_ok($$SET LOCAL lsm_am.l0_slowdown_trigger = 30$$, 'set lsm_am.l0_slowdown_trigger to 30');
SELECT throws_ok($$SET LOCAL lsm_am.l0_slowdown_trigger = 0$$, '22023', NULL, 'lsm_am.l0_slowdown_trigger below 1 is refused');
SELECT throws_ok($$SET LOCAL lsm_am.l0_slowdown_trigger = 101$$, '22023', NULL, 'lsm_am.l0_slowdown_trigger above 100 is refused');
SELECT lives_ok($$SET LOCAL lsm_am.l0_stop_trigger = 50$$, 'set lsm_am.l0_stop_trigger to 50');
SELECT throws_ok($$SET LOCAL lsm_am.l0_stop_trigger = 0$$, '22023', NULL, 'lsm_am.l0_stop_trigger below 1 is refused');
SELECT throws_ok($$SET LOCAL lsm_am.l0_stop_trigger = 101$$, '22023', NULL, 'lsm_am.l0_stop_trigger above 100 is refused');
SELECT throws_ok($$SET LOCAL lsm_am.max_workers = 0$$, '55P02', NULL,
                 'lsm_am.max_workers cannot be set in a session (server configuration)');
SELECT throws_ok($$SET LOCAL lsm_am.worker_naptime = '5s'$$, '55P02', NULL,
                 'lsm_am.worker_naptime cannot be set in a session (server configuration)');
SELECT throws_ok($$SET LOCAL lsm_am.worker_idle_timeout = '5s'$$, '55P02', NULL,
                 'lsm_am.worker_idle_timeout cannot be set in a session (server configuration)');
SELECT throws_ok($$SET LOCAL lsm_am.memory = '128MB'$$, '55P02', NULL, 'lsm_am.memory needs a restart');
SELECT throws_ok($$SET LOCAL lsm_am.max_indexes = 10$$, '55P02', NULL, 'lsm_am.max_indexes needs a restart');
SELECT throws_ok($$SET LOCAL lsm_am.metadata_cache_size = '8MB'$$, '55P02', NULL, 'lsm_am.metadata_cache_size needs a restart');
SELECT throws_ok($$SET LOCAL lsm_am.no_such_setting = 1$$, '42602', NULL, 'lsm_am is a reserved settings prefix');
SELECT throws_ok($$SET LOCAL lsm_am.max_runs = 2$$, '42602', NULL, 'lsm_am.max_runs no longer exists');
RESET lsm_am.memtable_size;
RESET lsm_am.l0_compaction_trigger;
RESET lsm_am.l0_slowdown_trigger;
RESET lsm_am.l0_stop_trigger;

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
-- (full memtables become immutable and wait for a flush; background workers
-- cannot see this transaction's index, so they may not be flushed yet)
SELECT ok((SELECT s.runs + m.immutable_memtables > 0 AND s.memtable_entries + s.run_entries = 5000
           FROM lsm_am.index_stats('pgtap_set2_lsm') s, lsm_am.maintenance_stats('pgtap_set2_lsm') m),
          'a 64 kB memtable was switched out automatically, no entry lost');
SELECT is((SELECT immutable_memtables <= 2 FROM lsm_am.maintenance_stats('pgtap_set2_lsm')), true,
          'at most 2 immutable memtables wait for a flush');
-- and the default (4MB) holds 5000 int4 entries in the memtable
CREATE INDEX pgtap_set2_default ON pgtap_set2 USING lsm (k);
INSERT INTO pgtap_set2 SELECT g FROM generate_series(1, 5000) g;
SELECT results_eq($$SELECT memtable_entries, runs, run_entries FROM lsm_am.index_stats('pgtap_set2_default')$$,
                  $$VALUES (5000::bigint, 1, 5000::bigint)$$,
                  'with the default memtable_size 5000 new entries stay in the memtable');
SELECT results_eq($$SELECT immutable_memtables, runs_per_level FROM lsm_am.maintenance_stats('pgtap_set2_default')$$,
                  $$VALUES (0, '{0,1}'::int[])$$,
                  'no memtable switch; the build''s run is at level 1');

-- the compaction, size_ratio, bloom_bits_per_key and bloom_columns options
SELECT throws_ok($$CREATE INDEX pgtap_set_a ON pgtap_set USING lsm (k) WITH (compaction = 'foo')$$,
                 '22023', 'invalid value for enum option "compaction": foo', 'compaction = ''foo'' is refused');
SELECT is((SELECT pg_temp.err_detail($$CREATE INDEX pgtap_set_a ON pgtap_set USING lsm (k) WITH (compaction = 'foo')$$)),
          'Valid values are "leveled", "tiered" and "lazy".', 'the error for compaction = ''foo'' names the valid values');
SELECT throws_ok($$CREATE INDEX pgtap_set_b ON pgtap_set USING lsm (k) WITH (compaction = '')$$,
                 '22023', NULL, 'an empty compaction is refused');
SELECT throws_ok($$CREATE INDEX pgtap_set_c ON pgtap_set USING lsm (k) WITH (compaction = 'level')$$,
                 '22023', 'invalid value for enum option "compaction": level', 'compaction = ''level'' is refused');
SELECT throws_ok($$CREATE INDEX pgtap_set_d ON pgtap_set USING lsm (k) WITH (size_ratio = 1)$$,
                 '22023', 'value 1 out of bounds for option "size_ratio"', 'size_ratio = 1 is refused');
SELECT throws_ok($$CREATE INDEX pgtap_set_e ON pgtap_set USING lsm (k) WITH (size_ratio = 101)$$,
                 '22023', 'value 101 out of bounds for option "size_ratio"', 'size_ratio = 101 is refused');
SELECT throws_ok($$CREATE INDEX pgtap_set_f ON pgtap_set USING lsm (k) WITH (size_ratio = 'ten')$$,
                 '22023', 'invalid value for integer option "size_ratio": ten', 'size_ratio = ''ten'' is refused');
SELECT throws_ok($$CREATE INDEX pgtap_set_g ON pgtap_set USING lsm (k) WITH (bloom_bits_per_key = -1)$$,
                 '22023', 'value -1 out of bounds for option "bloom_bits_per_key"', 'bloom_bits_per_key = -1 is refused');
SELECT throws_ok($$CREATE INDEX pgtap_set_h ON pgtap_set USING lsm (k) WITH (bloom_bits_per_key = 33)$$,
                 '22023', 'value 33 out of bounds for option "bloom_bits_per_key"', 'bloom_bits_per_key = 33 is refused');
SELECT throws_ok($$CREATE INDEX pgtap_set_i ON pgtap_set USING lsm (k) WITH (bloom_columns = -1)$$,
                 '22023', 'value -1 out of bounds for option "bloom_columns"', 'bloom_columns = -1 is refused');
SELECT throws_ok($$CREATE INDEX pgtap_set_j ON pgtap_set USING lsm (k) WITH (bloom_columns = 33)$$,
                 '22023', 'value 33 out of bounds for option "bloom_columns"', 'bloom_columns = 33 is refused');
SELECT is((SELECT count(*)::int FROM pg_class WHERE relname LIKE 'pgtap\_set\__'), 0, 'none of those indexes exists');
SELECT lives_ok($$CREATE INDEX pgtap_set_lv ON pgtap_set USING lsm (k) WITH (compaction = leveled)$$,
                'compaction = leveled is accepted');
SELECT lives_ok($$CREATE INDEX pgtap_set_uc ON pgtap_set USING lsm (k) WITH (compaction = 'TIERED')$$,
                'compaction values are case-insensitive, as for every enum option');
SELECT lives_ok($$CREATE INDEX pgtap_set_ti ON pgtap_set USING lsm (k)
                  WITH (compaction = 'tiered', size_ratio = 2, bloom_bits_per_key = 0, bloom_columns = 0)$$,
                'compaction = tiered, size_ratio = 2 (minimum), bloom_bits_per_key = 0, bloom_columns = 0 are accepted');
SELECT lives_ok($$CREATE INDEX pgtap_set_lz ON pgtap_set USING lsm (k)
                  WITH (compaction = lazy, size_ratio = 100, bloom_bits_per_key = 32, bloom_columns = 32)$$,
                'compaction = lazy, size_ratio = 100, bloom_bits_per_key = 32, bloom_columns = 32 (maxima) are accepted');
SELECT is((SELECT reloptions FROM pg_class WHERE relname = 'pgtap_set_ti'),
          ARRAY['compaction=tiered', 'size_ratio=2', 'bloom_bits_per_key=0', 'bloom_columns=0'],
          'the options are stored in pg_class.reloptions');
SELECT throws_ok($$ALTER INDEX pgtap_set_lv SET (compaction = 'foo')$$, '22023',
                 'invalid value for enum option "compaction": foo', 'ALTER INDEX SET validates compaction');
SELECT throws_ok($$ALTER INDEX pgtap_set_lv SET (size_ratio = 0)$$, '22023',
                 'value 0 out of bounds for option "size_ratio"', 'ALTER INDEX SET validates size_ratio');
SELECT lives_ok($$ALTER INDEX pgtap_set_lv SET (compaction = tiered, bloom_bits_per_key = 16)$$,
                'ALTER INDEX SET (compaction = tiered, bloom_bits_per_key = 16)');
SELECT is((SELECT reloptions FROM pg_class WHERE relname = 'pgtap_set_lv'),
          ARRAY['compaction=tiered', 'bloom_bits_per_key=16'], 'ALTER INDEX SET updates pg_class.reloptions');
SELECT lives_ok($$ALTER INDEX pgtap_set_lv RESET (compaction, bloom_bits_per_key)$$, 'ALTER INDEX RESET of both');
SELECT is((SELECT reloptions FROM pg_class WHERE relname = 'pgtap_set_lv'), NULL, 'RESET removes them');

-- size_ratio (default 10) sets the level of a built run: with memtable_size =
-- 64 the target of level 1 is 16 pages, so a run of 160 .. 1600 pages goes to
-- level 3 with size_ratio 10 and to level 2 with size_ratio 100
CREATE TABLE pgtap_sr (k int8);
INSERT INTO pgtap_sr SELECT g FROM generate_series(1, 200000) g;
CREATE INDEX pgtap_sr_def ON pgtap_sr USING lsm (k) WITH (memtable_size = 64);
CREATE INDEX pgtap_sr_10 ON pgtap_sr USING lsm (k) WITH (memtable_size = 64, size_ratio = 10);
CREATE INDEX pgtap_sr_100 ON pgtap_sr USING lsm (k) WITH (memtable_size = 64, size_ratio = 100);
SELECT results_eq(
    $$SELECT i::text, pages BETWEEN 161 AND 1600, level
      FROM unnest(ARRAY['pgtap_sr_def', 'pgtap_sr_10', 'pgtap_sr_100']::regclass[]) WITH ORDINALITY u(i, n),
           LATERAL lsm_am.index_info(i) ORDER BY n$$,
    $$VALUES ('pgtap_sr_def', true, 3), ('pgtap_sr_10', true, 3), ('pgtap_sr_100', true, 2)$$,
    'CREATE INDEX puts its run at the level its size calls for; size_ratio defaults to 10');

-- bloom_bits_per_key (default 10) and bloom_columns (default 1): two runs
-- with overlapping key ranges; a lookup probes the filter of each run unless
-- the index has no filters, or the lookup does not give equality on every
-- column the filters hash
CREATE FUNCTION pg_temp.probes(idx regclass, q text) RETURNS bigint LANGUAGE plpgsql AS $f$
DECLARE n bigint;
BEGIN
    PERFORM lsm_am.reset_lookup_stats(idx);
    PERFORM set_config('enable_seqscan', 'off', true);
    PERFORM set_config('enable_bitmapscan', 'off', true);
    EXECUTE q;
    PERFORM set_config('enable_seqscan', 'on', true);
    PERFORM set_config('enable_bitmapscan', 'on', true);
    SELECT filter_probes INTO n FROM lsm_am.lookup_stats(idx);
    RETURN n;
END $f$;
CREATE TABLE pgtap_bl_def (a int8, b int4);
CREATE TABLE pgtap_bl_off (a int8, b int4);
CREATE TABLE pgtap_bl_all (a int8, b int4);
CREATE INDEX pgtap_bl_def_lsm ON pgtap_bl_def USING lsm (a, b);
CREATE INDEX pgtap_bl_off_lsm ON pgtap_bl_off USING lsm (a, b) WITH (bloom_bits_per_key = 0);
CREATE INDEX pgtap_bl_all_lsm ON pgtap_bl_all USING lsm (a, b) WITH (bloom_columns = 0);
INSERT INTO pgtap_bl_def SELECT 2 * g + 1, g % 5 FROM generate_series(0, 999) g;
INSERT INTO pgtap_bl_off SELECT * FROM pgtap_bl_def;
INSERT INTO pgtap_bl_all SELECT * FROM pgtap_bl_def;
SELECT lsm_am.flush('pgtap_bl_def_lsm'), lsm_am.flush('pgtap_bl_off_lsm'), lsm_am.flush('pgtap_bl_all_lsm');
INSERT INTO pgtap_bl_def SELECT 2 * g, g % 5 FROM generate_series(0, 999) g;
INSERT INTO pgtap_bl_off SELECT 2 * g, g % 5 FROM generate_series(0, 999) g;
INSERT INTO pgtap_bl_all SELECT 2 * g, g % 5 FROM generate_series(0, 999) g;
SELECT lsm_am.flush('pgtap_bl_def_lsm'), lsm_am.flush('pgtap_bl_off_lsm'), lsm_am.flush('pgtap_bl_all_lsm');
SELECT results_eq(
    $$SELECT pg_temp.probes('pgtap_bl_def_lsm', 'SELECT * FROM pgtap_bl_def WHERE a = 500'),
             pg_temp.probes('pgtap_bl_def_lsm', 'SELECT * FROM pgtap_bl_def WHERE a = 500 AND b = 0')$$,
    $$VALUES (2::bigint, 2::bigint)$$,
    'default filters (10 bits per key, first column): lookups by the first column probe both runs');
SELECT results_eq(
    $$SELECT pg_temp.probes('pgtap_bl_off_lsm', 'SELECT * FROM pgtap_bl_off WHERE a = 500'),
             pg_temp.probes('pgtap_bl_off_lsm', 'SELECT * FROM pgtap_bl_off WHERE a = 500 AND b = 0')$$,
    $$VALUES (0::bigint, 0::bigint)$$,
    'bloom_bits_per_key = 0: no filter is probed');
SELECT results_eq(
    $$SELECT pg_temp.probes('pgtap_bl_all_lsm', 'SELECT * FROM pgtap_bl_all WHERE a = 500'),
             pg_temp.probes('pgtap_bl_all_lsm', 'SELECT * FROM pgtap_bl_all WHERE a = 500 AND b = 0')$$,
    $$VALUES (0::bigint, 2::bigint)$$,
    'bloom_columns = 0 (all): only lookups by both columns probe the filters');
SELECT results_eq(
    $$SELECT count(*)::int FROM pgtap_bl_def WHERE a = 500
      UNION ALL SELECT count(*)::int FROM pgtap_bl_off WHERE a = 500
      UNION ALL SELECT count(*)::int FROM pgtap_bl_all WHERE a = 500 AND b = 0$$,
    $$VALUES (1), (1), (1)$$,
    'the lookups find their row with and without filters');

SELECT * FROM finish();
ROLLBACK;
