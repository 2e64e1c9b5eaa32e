-- lsm_collation_icu: lsm indexes under ICU collations.  und-x-icu and
-- en-US-x-icu are accepted (index and index-only scans in the collation's
-- order); the words of lsm_types under und-x-icu (text and varchar) and a
-- nondeterministic ICU collation, through the lsm index (ASC and DESC)
-- compared with seqscan+sort by lsm_check().  On a server without ICU (built
-- without it) the checks are skipped with a notice
-- (expected/lsm_collation_icu_1.out).
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS lsm_am;
RESET client_min_messages;
CREATE SCHEMA lsm_collation_icu;
SET search_path = lsm_collation_icu, public;
\set VERBOSITY default

-- lsm_check(query): sql/lsm_setup.sql (the first test) defines it.

SELECT to_regcollation('pg_catalog."und-x-icu"') IS NOT NULL AS have_icu \gset
\if :have_icu
-- accepted: ICU collations
CREATE TABLE coll_t (id int, t text COLLATE "C", v varchar(20) COLLATE "C");
INSERT INTO coll_t VALUES (1, 'b', 'b'), (2, 'a', 'a'), (3, 'B', 'B'), (4, 'A', 'A');
CREATE INDEX coll_t_icu ON coll_t USING lsm (t COLLATE "und-x-icu");
CREATE INDEX coll_t_icu_v ON coll_t USING lsm (v COLLATE "en-US-x-icu");
SET enable_seqscan = off;
SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT t FROM coll_t WHERE t COLLATE "und-x-icu" > 'a' ORDER BY t COLLATE "und-x-icu";
SELECT t FROM coll_t WHERE t COLLATE "und-x-icu" > 'a' ORDER BY t COLLATE "und-x-icu";
EXPLAIN (COSTS OFF) SELECT id FROM coll_t ORDER BY v COLLATE "en-US-x-icu";
SELECT id, v FROM coll_t ORDER BY v COLLATE "en-US-x-icu";
RESET enable_seqscan;
RESET enable_bitmapscan;

-- key order: the words of lsm_types
CREATE TABLE koc_words (w text);
INSERT INTO koc_words VALUES (''), (' '), ('  '), ('a'), ('A'), ('b'), ('B'),
    ('ab'), ('a b'), ('a-b'), ('ab '), ('abc'), ('Abc'), ('ABC'), ('é'), ('e'),
    ('E'), (E'e\u0301'), ('É'), ('ß'), ('ss'), ('SS'), ('ẞ'), ('ﬁ'), ('fi'),
    ('Æ'), ('ae'), ('ä'), ('aa'), ('z'), ('Z'), ('ö'), ('oe'), ('日本'), ('日'),
    ('한국어'), ('😀'), ('😀a'), (E'\uFFFD'), (E'\uFFFF'), ('~'), ('!'), ('0'),
    ('9'), ('10'), ('1'), ('-1'), ('a1'), ('a10'), ('a2'), (E'tab\there'),
    (E'\u0001'), (E'\u007f'), (E'x\u0001'), ('Ω'), ('ω'), ('Ǆ'), ('ǅ'), ('ǆ'),
    (E'\u00a0'), (E'a\u0300'), ('à'), ('co-op'), ('coop'), ('co op'),
    ('résumé'), ('resume'), ('Resume'), ('RÉSUMÉ'), (repeat('x', 600)),
    (repeat('x', 600) || 'y'), (NULL);
CREATE TABLE koc_text_icu (id serial, v text COLLATE "und-x-icu");
CREATE INDEX koc_text_icu_lsm ON koc_text_icu USING lsm (v);
INSERT INTO koc_text_icu (v) SELECT w FROM koc_words;
CREATE TABLE koc_varchar_icu (id serial, v varchar(2000) COLLATE "und-x-icu");
INSERT INTO koc_varchar_icu (v) SELECT w FROM koc_words;
CREATE INDEX koc_varchar_icu_lsm ON koc_varchar_icu USING lsm (v);
CREATE COLLATION koc_ci (provider = icu, locale = 'und-u-ks-level1', deterministic = false);
CREATE TABLE koc_text_ci (id serial, v text COLLATE koc_ci);
INSERT INTO koc_text_ci (v) SELECT w FROM koc_words;
CREATE INDEX koc_text_ci_lsm ON koc_text_ci USING lsm (v);
-- ASCII letters only are printed (the rest depends on the ICU version)
SELECT id, v FROM koc_text_icu WHERE v ~ '^[A-Za-z]{1,10}$' ORDER BY v, id;
SELECT id, v FROM koc_text_ci WHERE v = 'resume' ORDER BY id;
SELECT id, v FROM koc_text_ci WHERE v = 'ABC' ORDER BY id;
SELECT q, lsm_check(q) FROM (VALUES
    ('SELECT id, v FROM koc_text_icu ORDER BY v, id'),
    ('SELECT id, v FROM koc_text_icu ORDER BY v DESC, id'),
    ('SELECT id, v FROM koc_text_icu WHERE v > ''a'' AND v < ''c'' ORDER BY v, id'),
    ('SELECT id, v FROM koc_text_icu WHERE v = ''e'' ORDER BY id'),
    ('SELECT id, v FROM koc_varchar_icu ORDER BY v, id'),
    ('SELECT id, v FROM koc_varchar_icu WHERE v >= ''Z'' ORDER BY v DESC, id'),
    ('SELECT id, v FROM koc_text_ci ORDER BY v, id'),
    ('SELECT id, v FROM koc_text_ci WHERE v = ''RESUME'' ORDER BY id'),
    ('SELECT id, v FROM koc_text_ci WHERE v = ''SS'' ORDER BY id'),
    ('SELECT id, v FROM koc_text_ci WHERE v > ''b'' AND v < ''e'' ORDER BY v, id')
) t(q);
\else
DO $$ BEGIN
    RAISE NOTICE 'collation "und-x-icu" does not exist (a server built without ICU): the ICU checks are skipped';
END $$;
\endif

SET client_min_messages = warning;
DROP SCHEMA lsm_collation_icu CASCADE;
RESET client_min_messages;
RESET search_path;
