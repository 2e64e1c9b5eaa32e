-- lsm_collation_libc: lsm refuses an index column under a libc collation
-- other than C, POSIX and C.UTF-8 (here en_US.UTF-8), with a hint; a btree
-- index on such a column is fine.  Needs the OS locale en_US.UTF-8 on the
-- server (tests/setup.sh generates it); without it the checks are skipped
-- with a notice (expected/lsm_collation_libc_1.out).
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS lsm_am;
RESET client_min_messages;
CREATE SCHEMA lsm_collation_libc;
SET search_path = lsm_collation_libc, public;
\set VERBOSITY default

-- CREATE COLLATION loads the locale: it fails when the server lacks it
DO $$ BEGIN
    CREATE COLLATION en_libc (provider = libc, locale = 'en_US.UTF-8');
EXCEPTION WHEN invalid_parameter_value THEN
    RAISE NOTICE 'the server has no en_US.UTF-8 locale: the libc collation checks are skipped';
END $$;
SELECT to_regcollation('en_libc') IS NOT NULL AS have_en_libc \gset
\if :have_en_libc
CREATE TABLE coll_t (id int, t text COLLATE "C", v varchar(20) COLLATE "C");
INSERT INTO coll_t VALUES (1, 'b', 'b'), (2, 'a', 'a'), (3, 'B', 'B'), (4, 'A', 'A');
CREATE INDEX coll_t_en ON coll_t USING lsm (t COLLATE en_libc);
CREATE INDEX coll_t_en2 ON coll_t USING lsm (id, v COLLATE en_libc);
CREATE TABLE coll_t2 (t text COLLATE en_libc);
CREATE INDEX coll_t2_lsm ON coll_t2 USING lsm (t);
-- (a btree index is fine)
CREATE INDEX coll_t2_bt ON coll_t2 USING btree (t);
\endif

SET client_min_messages = warning;
DROP SCHEMA lsm_collation_libc CASCADE;
RESET client_min_messages;
RESET search_path;
