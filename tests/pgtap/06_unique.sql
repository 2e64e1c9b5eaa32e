-- 06_unique.sql — unique lsm indexes (issue 17): the catalog
-- (amcanunique, indisunique), the errors and their SQLSTATEs, ON CONFLICT
-- arbiters, and the constraint refusal (pgTAP).  Concurrency, crashes and
-- standbys are tests/t/024_unique.pl's.
BEGIN;
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS pgtap;
CREATE EXTENSION IF NOT EXISTS lsm_am;
RESET client_min_messages;

SELECT plan(16);

SELECT ok(pg_indexam_has_property((SELECT oid FROM pg_am WHERE amname = 'lsm'), 'can_unique'),
          'amcanunique: lsm can be unique');
CREATE TABLE pt_u (k int8, t text, v int);
CREATE UNIQUE INDEX pt_u_k ON pt_u USING lsm (k);
CREATE UNIQUE INDEX pt_u_kt ON pt_u USING lsm (k, t) NULLS NOT DISTINCT;
SELECT ok((SELECT indisunique AND indimmediate AND NOT indnullsnotdistinct FROM pg_index WHERE indexrelid = 'pt_u_k'::regclass),
          'pt_u_k is unique and immediate');
SELECT ok((SELECT indisunique AND indnullsnotdistinct FROM pg_index WHERE indexrelid = 'pt_u_kt'::regclass),
          'pt_u_kt is unique, NULLS NOT DISTINCT');
SELECT ok(pg_index_has_property('pt_u_k'::regclass, 'clusterable'), 'an lsm unique index is clusterable (CLUSTER ... USING it)');

INSERT INTO pt_u VALUES (1, 'a', 0), (2, NULL, 0);
SELECT throws_ok('INSERT INTO pt_u VALUES (1, ''b'', 0)', '23505',
                 'duplicate key value violates unique constraint "pt_u_k"',
                 'a duplicate: SQLSTATE 23505, btree''s message');
SELECT lives_ok('INSERT INTO pt_u VALUES (NULL, NULL, 0), (NULL, ''x'', 0)',
                'NULLs are distinct in pt_u_k');
SELECT throws_ok('INSERT INTO pt_u VALUES (NULL, NULL, 0)', '23505',
                 'duplicate key value violates unique constraint "pt_u_kt"',
                 'NULLS NOT DISTINCT: a second (NULL, NULL) conflicts');
SELECT lsm_am.flush('pt_u_k');
SELECT throws_ok('INSERT INTO pt_u VALUES (2, ''c'', 0)', '23505',
                 'duplicate key value violates unique constraint "pt_u_k"',
                 'a duplicate of a key in a run');
SELECT is((SELECT count(*) FROM pt_u WHERE k = 2)::int, 1, 'one row with key 2');

SELECT results_eq($$INSERT INTO pt_u VALUES (1, 'z', 9), (3, 'z', 9) ON CONFLICT (k) DO NOTHING RETURNING k$$,
                  $$VALUES (3::int8)$$, 'ON CONFLICT (k) DO NOTHING: only the new key');
SELECT results_eq($$INSERT INTO pt_u VALUES (1, 'z', 9) ON CONFLICT (k) DO UPDATE SET v = pt_u.v + 5 RETURNING v$$,
                  $$VALUES (5)$$, 'ON CONFLICT (k) DO UPDATE updates the existing row');

SELECT throws_ok('CREATE UNIQUE INDEX pt_u_v ON pt_u USING lsm (v)', '23505',
                 'could not create unique index "pt_u_v"', 'a build over duplicates fails as btree''s');
SELECT throws_ok('CREATE UNIQUE INDEX pt_u_t ON pt_u USING lsm (t) NULLS NOT DISTINCT', '23505',
                 'could not create unique index "pt_u_t"', 'NULLS NOT DISTINCT build over two NULLs fails');
SELECT throws_ok('ALTER TABLE pt_u ADD CONSTRAINT pt_u_c UNIQUE USING INDEX pt_u_k', '42809',
                 'index "pt_u_k" is not a btree', 'UNIQUE constraints stay btree-only');
SELECT throws_ok('ALTER TABLE pt_u ADD PRIMARY KEY USING INDEX pt_u_k', '42809',
                 'index "pt_u_k" is not a btree', 'primary keys stay btree-only');
SELECT lives_ok($$SELECT lsm_am.verify('pt_u_k', true)$$, 'verify(pt_u_k, heapallindexed)');

SELECT * FROM finish();
ROLLBACK;
