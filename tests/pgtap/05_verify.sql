-- 05_verify.sql — lsm_am.verify() and the page inspection functions
-- (metapage, manifest, page_header, page_items): signatures, behaviour on a
-- sound index, errors and privileges (pgTAP).  Damaged pages are
-- tests/t/019_verify.pl's.
BEGIN;
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS pgtap;
CREATE EXTENSION IF NOT EXISTS lsm_am;
RESET client_min_messages;

SELECT plan(46);

-- signatures
SELECT has_function('lsm_am', 'verify', ARRAY['regclass', 'boolean']);
SELECT function_returns('lsm_am', 'verify', ARRAY['regclass', 'boolean'], 'void');
SELECT is(pg_get_function_arguments('lsm_am.verify(regclass, boolean)'::regprocedure),
          'index regclass, heapallindexed boolean DEFAULT false',
          'verify: heapallindexed defaults to false');
SELECT function_returns('lsm_am', 'metapage', ARRAY['regclass'], 'record');
SELECT function_returns('lsm_am', 'manifest', ARRAY['regclass'], 'setof record');
SELECT function_returns('lsm_am', 'page_header', ARRAY['regclass', 'bigint'], 'record');
SELECT function_returns('lsm_am', 'page_items', ARRAY['regclass', 'bigint'], 'setof record');
SELECT is((SELECT proargnames FROM pg_proc WHERE oid = 'lsm_am.manifest(regclass)'::regprocedure),
          ARRAY['index', 'kind', 'id', 'level', 'start_block', 'pages', 'entries', 'bloom_columns',
                'bloom_start', 'bloom_blocks', 'reuse_after', 'smallest_key', 'largest_key'],
          'manifest argument and OUT column names');
SELECT is((SELECT proargnames FROM pg_proc WHERE oid = 'lsm_am.page_header(regclass, bigint)'::regprocedure),
          ARRAY['index', 'blkno', 'blkno', 'kind', 'version', 'owner', 'next', 'checksum', 'checksum_ok',
                'lsn', 'flags', 'lower', 'upper', 'special', 'items', 'valid'],
          'page_header argument and OUT column names');
SELECT is((SELECT proargnames FROM pg_proc WHERE oid = 'lsm_am.page_items(regclass, bigint)'::regprocedure),
          ARRAY['index', 'blkno', 'itemno', 'key', 'tid', 'child'],
          'page_items argument and OUT column names');

-- a sound index: one run (CREATE INDEX), a log (inserts after it)
CREATE TABLE pgtap_v (id int, k int8, s text COLLATE "C");
INSERT INTO pgtap_v SELECT g, (g * 7919) % 100003, 'v' || g FROM generate_series(1, 20000) g;
CREATE INDEX pgtap_v_k ON pgtap_v USING lsm (k) WITH (bloom_bits_per_key = 10);
CREATE INDEX pgtap_v_sk ON pgtap_v USING lsm (s, k);
CREATE INDEX pgtap_v_bt ON pgtap_v (k);
INSERT INTO pgtap_v SELECT g, (g * 7919) % 100003, 'v' || g FROM generate_series(20001, 20500) g;
SELECT lives_ok($$SELECT lsm_am.verify('pgtap_v_k')$$, 'verify passes a sound index');
SELECT lives_ok($$SELECT lsm_am.verify('pgtap_v_k', true)$$, 'verify with heapallindexed passes a sound index');
SELECT lives_ok($$SELECT lsm_am.verify('pgtap_v_sk', true)$$, 'verify passes a sound two-column text index');
SELECT is((SELECT lsm_am.verify('pgtap_v_k')::text), '', 'verify returns nothing (void) for a sound index');
SELECT lsm_am.flush('pgtap_v_k');
DELETE FROM pgtap_v WHERE id % 7 = 0;
INSERT INTO pgtap_v SELECT g, (g * 7919) % 100003, 'v' || g FROM generate_series(20501, 20800) g;
SELECT lives_ok($$SELECT lsm_am.verify('pgtap_v_k', true)$$,
                'verify passes after a flush (two runs) and deletes (dead entries are no problem)');
SELECT throws_ok($$SELECT lsm_am.verify('pgtap_v_bt')$$, '42809', '"pgtap_v_bt" is not an lsm index',
                 'verify on a btree index fails with wrong_object_type');
SELECT throws_ok($$SELECT lsm_am.verify('pgtap_v')$$, '42809', '"pgtap_v" is not an lsm index',
                 'verify on a table fails with wrong_object_type');
SELECT is((SELECT lsm_am.verify(NULL) IS NULL), true, 'verify(NULL) is NULL (strict)');

-- inspection of the same index
SELECT is((SELECT magic || ' ' || version || ' ' || nruns FROM lsm_am.metapage('pgtap_v_k')),
          '4c534d31 2 2', 'metapage: magic, format version 2, two runs');
SELECT is((SELECT count(*)::int FROM lsm_am.manifest('pgtap_v_k') WHERE kind = 'run'), 2,
          'manifest: a row per run');
SELECT is((SELECT count(*)::int FROM lsm_am.manifest('pgtap_v_k') WHERE kind = 'log'), 1,
          'manifest: a row for the active log chain');
SELECT is((SELECT array_agg(level ORDER BY id) FROM lsm_am.manifest('pgtap_v_k') WHERE kind = 'run'),
          ARRAY[1, 0], 'manifest: the built run at level 1, the flushed one at level 0');
SELECT is((SELECT count(*)::int FROM lsm_am.manifest('pgtap_v_k') m, lsm_am.index_info('pgtap_v_k') i
           WHERE m.kind = 'run' AND m.id = i.run_id AND m.level = i.level AND m.entries = i.entries
             AND m.smallest_key = i.smallest_key AND m.largest_key = i.largest_key), 2,
          'manifest agrees with index_info on every run');
SELECT ok((SELECT bool_and(bloom_columns = 1 AND bloom_blocks > 0) FROM lsm_am.manifest('pgtap_v_k') WHERE kind = 'run'),
          'manifest: every run has a bloom filter on one column');
SELECT is((SELECT kind FROM lsm_am.page_header('pgtap_v_k', 0)), 'meta', 'page_header: block 0 is the metapage');
SELECT is((SELECT kind || ' ' || owner FROM lsm_am.page_header('pgtap_v_k',
               (SELECT start_block FROM lsm_am.manifest('pgtap_v_k') WHERE kind = 'run' AND id = 1))),
          'run header 1', 'page_header: a run starts with its header, owned by the run');
SELECT is((SELECT kind FROM lsm_am.page_header('pgtap_v_k',
               (SELECT start_block + 1 FROM lsm_am.manifest('pgtap_v_k') WHERE kind = 'run' AND id = 1))),
          'run data', 'page_header: the header is followed by data pages');
SELECT is((SELECT h.kind || ' ' || (h.owner = m.id)::text || ' ' || h.checksum_ok::text
           FROM lsm_am.manifest('pgtap_v_k') m, lsm_am.page_header('pgtap_v_k', m.start_block) h
           WHERE m.kind = 'log'), 'log true true', 'page_header: the log chain head carries its epoch and a good checksum');
SELECT ok((SELECT bool_and(valid) FROM generate_series(0, pg_relation_size('pgtap_v_k') / 8192 - 1) b,
                  lsm_am.page_header('pgtap_v_k', b) h WHERE kind <> 'new'),
          'page_header: every page of a sound index decodes');
SELECT is((SELECT key FROM lsm_am.page_items('pgtap_v_k',
               (SELECT start_block + 1 FROM lsm_am.manifest('pgtap_v_k') WHERE kind = 'run' AND id = 1))
           WHERE itemno = 1),
          (SELECT smallest_key FROM lsm_am.manifest('pgtap_v_k') WHERE kind = 'run' AND id = 1),
          'page_items: the first entry of the first data page is the run''s smallest key');
SELECT is((SELECT count(*)::int FROM lsm_am.page_items('pgtap_v_k',
               (SELECT start_block + 1 FROM lsm_am.manifest('pgtap_v_k') WHERE kind = 'run' AND id = 1))),
          (SELECT items FROM lsm_am.page_header('pgtap_v_k',
               (SELECT start_block + 1 FROM lsm_am.manifest('pgtap_v_k') WHERE kind = 'run' AND id = 1))),
          'page_items: as many entries as page_header counts');
SELECT is_empty($$SELECT 1 FROM lsm_am.page_items('pgtap_v_k',
                    (SELECT start_block + 1 FROM lsm_am.manifest('pgtap_v_k') WHERE kind = 'run' AND id = 1)) i
                  JOIN pgtap_v t ON t.ctid = i.tid WHERE i.key <> '(' || t.k || ')'$$,
                'page_items: every entry''s key is its heap tuple''s value');
SELECT is((SELECT count(*)::int FROM lsm_am.page_items('pgtap_v_k',
               (SELECT start_block FROM lsm_am.manifest('pgtap_v_k') WHERE kind = 'run' AND id = 1))
           WHERE child IS NOT NULL), (SELECT items FROM lsm_am.page_header('pgtap_v_k',
               (SELECT start_block FROM lsm_am.manifest('pgtap_v_k') WHERE kind = 'run' AND id = 1))),
          'page_items of a run header: its separators, each with a child page');
SELECT is((SELECT key FROM lsm_am.page_items('pgtap_v_sk',
               (SELECT start_block + 1 FROM lsm_am.manifest('pgtap_v_sk') WHERE kind = 'run'))
           WHERE itemno = 1), '(v1, 7919)', 'page_items: a two-column key through the output functions');
SELECT is((SELECT count(*)::int FROM lsm_am.manifest('pgtap_v_k') m, lsm_am.page_items('pgtap_v_k', m.start_block)
           WHERE m.kind = 'log'), (SELECT items FROM lsm_am.manifest('pgtap_v_k') m,
           lsm_am.page_header('pgtap_v_k', m.start_block) WHERE m.kind = 'log'),
          'page_items decodes the entries of a log page');
SELECT is_empty($$SELECT * FROM lsm_am.page_items('pgtap_v_k', 0)$$, 'page_items: the metapage has no items');
SELECT throws_ok($$SELECT * FROM lsm_am.page_header('pgtap_v_k', 1000000)$$, '22023', NULL,
                 'page_header of a block beyond the end fails with invalid_parameter_value');
SELECT throws_ok($$SELECT * FROM lsm_am.page_items('pgtap_v_k', -1)$$, '22023', NULL,
                 'page_items of a negative block fails with invalid_parameter_value');
SELECT throws_ok($$SELECT * FROM lsm_am.metapage('pgtap_v_bt')$$, '42809', '"pgtap_v_bt" is not an lsm index',
                 'metapage of a btree index fails with wrong_object_type');

-- privileges: verify is revoked from PUBLIC (amcheck's rule), grantable,
-- and needs SELECT on the table; page inspection is for superusers only.
CREATE ROLE pgtap_verify_role NOLOGIN;
SELECT ok(NOT has_function_privilege('pgtap_verify_role', 'lsm_am.verify(regclass, boolean)', 'EXECUTE'),
          'verify is not executable by PUBLIC');
SELECT ok(NOT has_function_privilege('pgtap_verify_role', 'lsm_am.page_items(regclass, bigint)', 'EXECUTE'),
          'page_items is not executable by PUBLIC');
SET ROLE pgtap_verify_role;
SELECT throws_ok($$SELECT lsm_am.verify('pgtap_v_k')$$, '42501', 'permission denied for function verify',
                 'verify without the grant fails with insufficient_privilege');
SELECT throws_ok($$SELECT * FROM lsm_am.metapage('pgtap_v_k')$$, '42501', 'permission denied for function metapage',
                 'metapage without the grant fails with insufficient_privilege');
RESET ROLE;
GRANT EXECUTE ON FUNCTION lsm_am.verify(regclass, boolean) TO pgtap_verify_role;
GRANT EXECUTE ON FUNCTION lsm_am.page_header(regclass, bigint) TO pgtap_verify_role;
SET ROLE pgtap_verify_role;
SELECT throws_ok($$SELECT lsm_am.verify('pgtap_v_k', true)$$, '42501', 'permission denied for index "pgtap_v_k"',
                 'verify granted but without SELECT on the table fails (it shows keys)');
RESET ROLE;
GRANT SELECT ON pgtap_v TO pgtap_verify_role;
SET ROLE pgtap_verify_role;
SELECT lives_ok($$SELECT lsm_am.verify('pgtap_v_k', true)$$, 'verify granted, with SELECT on the table, works');
SELECT throws_ok($$SELECT * FROM lsm_am.page_header('pgtap_v_k', 0)$$, '42501',
                 'must be superuser to use lsm_am page inspection functions',
                 'page_header granted to a non-superuser still fails: superuser only');
RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
