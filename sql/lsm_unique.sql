-- Unique lsm indexes: the error messages, as btree's (issue 17).
SELECT pg_indexam_has_property((SELECT oid FROM pg_am WHERE amname = 'lsm'), 'can_unique') AS can_unique;
CREATE TABLE uq (id int, u uuid, a int, b text, v text);
CREATE UNIQUE INDEX uq_u ON uq USING lsm (u);
CREATE UNIQUE INDEX uq_ab ON uq USING lsm (a, b);
INSERT INTO uq VALUES (1, '00000000-0000-0000-0000-000000000001', 1, 'x', 'first');
-- a duplicate of a live row, in the memtable and then in a run
INSERT INTO uq VALUES (2, '00000000-0000-0000-0000-000000000001', 2, 'x', 'dup');
SELECT lsm_am.flush('uq_u');
INSERT INTO uq VALUES (2, '00000000-0000-0000-0000-000000000001', 2, 'x', 'dup');
-- multi-column: only the whole key conflicts
INSERT INTO uq VALUES (3, '00000000-0000-0000-0000-000000000003', 1, 'y', 'ok');
INSERT INTO uq VALUES (4, '00000000-0000-0000-0000-000000000004', 1, 'y', 'dup');
-- NULLs are distinct by default
INSERT INTO uq VALUES (5, NULL, NULL, NULL, 'null'), (6, NULL, NULL, NULL, 'null');
-- a deleted or rolled-back duplicate does not conflict
DELETE FROM uq WHERE id = 3;
INSERT INTO uq VALUES (7, '00000000-0000-0000-0000-000000000007', 1, 'y', 'again');
BEGIN;
INSERT INTO uq VALUES (8, '00000000-0000-0000-0000-000000000008', 8, 'z', 'gone');
ROLLBACK;
INSERT INTO uq VALUES (8, '00000000-0000-0000-0000-000000000008', 8, 'z', 'kept');
-- a savepoint's duplicate fails alone
BEGIN;
SAVEPOINT s;
INSERT INTO uq VALUES (9, '00000000-0000-0000-0000-000000000008', 9, 'z', 'dup');
ROLLBACK TO SAVEPOINT s;
INSERT INTO uq VALUES (9, '00000000-0000-0000-0000-000000000009', 9, 'z', 'ok');
COMMIT;
-- ON CONFLICT infers the lsm index as its arbiter
INSERT INTO uq VALUES (10, '00000000-0000-0000-0000-000000000001', 10, 'z', 'nothing')
    ON CONFLICT (u) DO NOTHING;
INSERT INTO uq VALUES (10, '00000000-0000-0000-0000-000000000001', 10, 'z', 'updated')
    ON CONFLICT (u) DO UPDATE SET v = excluded.v RETURNING id, v;
INSERT INTO uq VALUES (11, '00000000-0000-0000-0000-000000000011', 1, 'x', 'other arbiter')
    ON CONFLICT (a, b) DO UPDATE SET v = excluded.v RETURNING id, v;
EXPLAIN (COSTS OFF) INSERT INTO uq VALUES (12, NULL, 1, 'x', 'e') ON CONFLICT (u) DO NOTHING;
SELECT id, u, a, b, v FROM uq ORDER BY id;
-- CREATE UNIQUE INDEX over duplicates; NULLS NOT DISTINCT; expressions
CREATE UNIQUE INDEX uq_nn ON uq USING lsm (u) NULLS NOT DISTINCT;
DELETE FROM uq WHERE id = 6;
CREATE UNIQUE INDEX uq_nn ON uq USING lsm (u) NULLS NOT DISTINCT;
INSERT INTO uq VALUES (13, NULL, 13, 'n', 'second null');
CREATE UNIQUE INDEX uq_lower ON uq USING lsm ((lower(b)), a);
CREATE UNIQUE INDEX uq_dup ON uq USING lsm (b);
CREATE UNIQUE INDEX CONCURRENTLY uq_dup ON uq USING lsm (b);
SELECT indisvalid FROM pg_index WHERE indexrelid = 'uq_dup'::regclass;
DROP INDEX uq_dup;
-- constraints stay btree-only (PostgreSQL's rule), deferrable ones too
ALTER TABLE uq ADD CONSTRAINT uq_u_c UNIQUE USING INDEX uq_u;
ALTER TABLE uq ADD CONSTRAINT uq_u_c UNIQUE USING INDEX uq_u DEFERRABLE INITIALLY DEFERRED;
ALTER TABLE uq ADD PRIMARY KEY USING INDEX uq_u;
-- the same errors as btree on a twin
CREATE TABLE uqb (LIKE uq);
INSERT INTO uqb SELECT * FROM uq;
CREATE UNIQUE INDEX uqb_u ON uqb USING btree (u);
INSERT INTO uqb SELECT * FROM uq WHERE id = 1;
INSERT INTO uq SELECT * FROM uq WHERE id = 1;
SELECT lsm_am.verify('uq_u', true), lsm_am.verify('uq_ab', true);
DROP TABLE uq, uqb;
