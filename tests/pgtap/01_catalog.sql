-- 01_catalog.sql — the catalog objects of lsm_am: extension, schema, access
-- method, operator classes and families; and ALTER EXTENSION lsm_am UPDATE
-- from every earlier version gives a fresh install's catalog (pgTAP).
BEGIN;
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS pgtap;
CREATE EXTENSION IF NOT EXISTS lsm_am;
RESET client_min_messages;

SELECT plan(95);

-- extension, schema, access method
SELECT has_extension('lsm_am');
SELECT is((SELECT extversion FROM pg_extension WHERE extname = 'lsm_am'), '0.5', 'lsm_am version is 0.5 (the default)');
SELECT is((SELECT default_version FROM pg_available_extensions WHERE name = 'lsm_am'), '0.5',
          'the default version of lsm_am is 0.5');
SELECT set_eq($$SELECT version FROM pg_available_extension_versions WHERE name = 'lsm_am'$$,
              ARRAY['0.1', '0.2', '0.3', '0.4', '0.5'], 'versions 0.1 to 0.5 of lsm_am are available');
SELECT set_eq($$SELECT source, path FROM pg_extension_update_paths('lsm_am') WHERE target = '0.5'$$,
              $$VALUES ('0.1', '0.1--0.2--0.3--0.4--0.5'), ('0.2', '0.2--0.3--0.4--0.5'),
                       ('0.3', '0.3--0.4--0.5'), ('0.4', '0.4--0.5')$$,
              'lsm_am can be updated to 0.5 from 0.1, 0.2, 0.3 and 0.4, one version at a time');
SELECT is_empty($$SELECT source, target FROM pg_extension_update_paths('lsm_am')
                  WHERE source::numeric > target::numeric AND path IS NOT NULL$$,
                'no update path leads to an older version');
SELECT has_schema('lsm_am');
SELECT is_empty(
    $$SELECT p.oid::regprocedure FROM pg_depend d JOIN pg_proc p ON p.oid = d.objid
      WHERE d.classid = 'pg_proc'::regclass AND d.deptype = 'e'
        AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'lsm_am')
        AND p.pronamespace <> 'lsm_am'::regnamespace$$,
    'every function of the extension is in schema lsm_am');
SELECT ok(EXISTS (SELECT FROM pg_am WHERE amname = 'lsm'), 'access method lsm exists');
SELECT is((SELECT amtype FROM pg_am WHERE amname = 'lsm')::text, 'i', 'lsm is an index access method');
SELECT is((SELECT amhandler::regprocedure::text FROM pg_am WHERE amname = 'lsm'),
          'lsm_am.lsm_handler(internal)', 'lsm handler is lsm_am.lsm_handler');
SELECT function_returns('lsm_am', 'lsm_handler', ARRAY['internal'], 'index_am_handler');

-- access method properties
SELECT ok(pg_indexam_has_property((SELECT oid FROM pg_am WHERE amname = 'lsm'), 'can_order'), 'lsm can order');
SELECT ok(pg_indexam_has_property((SELECT oid FROM pg_am WHERE amname = 'lsm'), 'can_unique'), 'lsm can be unique (CREATE UNIQUE INDEX, ON CONFLICT arbiters)');
SELECT ok(pg_indexam_has_property((SELECT oid FROM pg_am WHERE amname = 'lsm'), 'can_multi_col'), 'lsm can be multi-column');
SELECT ok(pg_indexam_has_property((SELECT oid FROM pg_am WHERE amname = 'lsm'), 'can_exclude'), 'lsm can back exclusion constraints (it has amgettuple)');
SELECT ok(pg_indexam_has_property((SELECT oid FROM pg_am WHERE amname = 'lsm'), 'can_include'), 'lsm has INCLUDE columns');

-- the 15 operator classes
SELECT has_opclass('lsm_am'::name, 'int2_ops'::name, 'operator class lsm_am.int2_ops exists');
SELECT has_opclass('lsm_am'::name, 'int4_ops'::name, 'operator class lsm_am.int4_ops exists');
SELECT has_opclass('lsm_am'::name, 'int8_ops'::name, 'operator class lsm_am.int8_ops exists');
SELECT has_opclass('lsm_am'::name, 'float4_ops'::name, 'operator class lsm_am.float4_ops exists');
SELECT has_opclass('lsm_am'::name, 'float8_ops'::name, 'operator class lsm_am.float8_ops exists');
SELECT has_opclass('lsm_am'::name, 'numeric_ops'::name, 'operator class lsm_am.numeric_ops exists');
SELECT has_opclass('lsm_am'::name, 'bool_ops'::name, 'operator class lsm_am.bool_ops exists');
SELECT has_opclass('lsm_am'::name, 'date_ops'::name, 'operator class lsm_am.date_ops exists');
SELECT has_opclass('lsm_am'::name, 'time_ops'::name, 'operator class lsm_am.time_ops exists');
SELECT has_opclass('lsm_am'::name, 'timestamp_ops'::name, 'operator class lsm_am.timestamp_ops exists');
SELECT has_opclass('lsm_am'::name, 'timestamptz_ops'::name, 'operator class lsm_am.timestamptz_ops exists');
SELECT has_opclass('lsm_am'::name, 'interval_ops'::name, 'operator class lsm_am.interval_ops exists');
SELECT has_opclass('lsm_am'::name, 'uuid_ops'::name, 'operator class lsm_am.uuid_ops exists');
SELECT has_opclass('lsm_am'::name, 'text_ops'::name, 'operator class lsm_am.text_ops exists');
SELECT has_opclass('lsm_am'::name, 'bytea_ops'::name, 'operator class lsm_am.bytea_ops exists');

-- each is the default for its type, in the expected family
SELECT results_eq(
    $$SELECT c.opcname::text COLLATE "default", c.opcintype::regtype::text, c.opcdefault, f.opfname::text COLLATE "default",
             cn.nspname::text COLLATE "default", fn.nspname::text COLLATE "default"
      FROM pg_opclass c
      JOIN pg_opfamily f ON f.oid = c.opcfamily
      JOIN pg_namespace cn ON cn.oid = c.opcnamespace
      JOIN pg_namespace fn ON fn.oid = f.opfnamespace
      WHERE c.opcmethod = (SELECT oid FROM pg_am WHERE amname = 'lsm')
      ORDER BY c.opcname$$,
    $$VALUES ('bool_ops', 'boolean', true, 'bool_ops', 'lsm_am', 'lsm_am'),
             ('bytea_ops', 'bytea', true, 'bytea_ops', 'lsm_am', 'lsm_am'),
             ('date_ops', 'date', true, 'date_ops', 'lsm_am', 'lsm_am'),
             ('float4_ops', 'real', true, 'float_ops', 'lsm_am', 'lsm_am'),
             ('float8_ops', 'double precision', true, 'float_ops', 'lsm_am', 'lsm_am'),
             ('int2_ops', 'smallint', true, 'integer_ops', 'lsm_am', 'lsm_am'),
             ('int4_ops', 'integer', true, 'integer_ops', 'lsm_am', 'lsm_am'),
             ('int8_ops', 'bigint', true, 'integer_ops', 'lsm_am', 'lsm_am'),
             ('interval_ops', 'interval', true, 'interval_ops', 'lsm_am', 'lsm_am'),
             ('numeric_ops', 'numeric', true, 'numeric_ops', 'lsm_am', 'lsm_am'),
             ('text_ops', 'text', true, 'text_ops', 'lsm_am', 'lsm_am'),
             ('time_ops', 'time without time zone', true, 'time_ops', 'lsm_am', 'lsm_am'),
             ('timestamp_ops', 'timestamp without time zone', true, 'timestamp_ops', 'lsm_am', 'lsm_am'),
             ('timestamptz_ops', 'timestamp with time zone', true, 'timestamptz_ops', 'lsm_am', 'lsm_am'),
             ('uuid_ops', 'uuid', true, 'uuid_ops', 'lsm_am', 'lsm_am')$$,
    'the 15 lsm operator classes: default for their type, in the expected family'
);
SELECT is((SELECT count(*)::int FROM pg_opfamily WHERE opfmethod = (SELECT oid FROM pg_am WHERE amname = 'lsm')),
          12, 'lsm has 12 operator families (integer_ops, float_ops and 10 single-type ones)');

-- amvalidate() accepts every operator class
SELECT is((SELECT bool_and(amvalidate(oid)) FROM pg_opclass
           WHERE opcmethod = (SELECT oid FROM pg_am WHERE amname = 'lsm')),
          true, 'amvalidate() is true for every lsm operator class');

-- operators 1-5 and support function 1 for each type pair of each family
SELECT set_eq(
    $$SELECT f.opfname::text COLLATE "default", o.amoplefttype::regtype::text, o.amoprighttype::regtype::text
      FROM pg_amop o JOIN pg_opfamily f ON f.oid = o.amopfamily
      WHERE f.opfmethod = (SELECT oid FROM pg_am WHERE amname = 'lsm')$$,
    $$SELECT fam, l, r FROM (VALUES ('smallint'), ('integer'), ('bigint')) a(l),
                            (VALUES ('smallint'), ('integer'), ('bigint')) b(r),
                            (VALUES ('integer_ops')) c(fam)
      UNION ALL
      SELECT 'float_ops', l, r FROM (VALUES ('real'), ('double precision')) a(l),
                                    (VALUES ('real'), ('double precision')) b(r)
      UNION ALL
      SELECT fam, t, t FROM (VALUES ('numeric_ops', 'numeric'), ('bool_ops', 'boolean'),
          ('date_ops', 'date'), ('time_ops', 'time without time zone'),
          ('timestamp_ops', 'timestamp without time zone'),
          ('timestamptz_ops', 'timestamp with time zone'), ('interval_ops', 'interval'),
          ('uuid_ops', 'uuid'), ('text_ops', 'text'), ('bytea_ops', 'bytea')) v(fam, t)$$,
    'operator type pairs: integer_ops all 9 int2/int4/int8 pairs, float_ops 4, others their own type'
);
SELECT is_empty(
    $$SELECT o.amopfamily, o.amoplefttype, o.amoprighttype
      FROM pg_amop o JOIN pg_opfamily f ON f.oid = o.amopfamily
      WHERE f.opfmethod = (SELECT oid FROM pg_am WHERE amname = 'lsm')
      GROUP BY 1, 2, 3
      HAVING array_agg(o.amopstrategy::int ORDER BY o.amopstrategy) <> '{1,2,3,4,5}'
          OR bool_or(o.amoppurpose <> 's')$$,
    'every type pair has search operators for strategies 1 to 5, and only those'
);
SELECT set_eq(
    $$SELECT p.amprocfamily, p.amproclefttype, p.amprocrighttype, p.amprocnum::int
      FROM pg_amproc p JOIN pg_opfamily f ON f.oid = p.amprocfamily
      WHERE f.opfmethod = (SELECT oid FROM pg_am WHERE amname = 'lsm')$$,
    $$SELECT DISTINCT o.amopfamily, o.amoplefttype, o.amoprighttype, 1
      FROM pg_amop o JOIN pg_opfamily f ON f.oid = o.amopfamily
      WHERE f.opfmethod = (SELECT oid FROM pg_am WHERE amname = 'lsm')$$,
    'every type pair has support function 1, and there are no other support functions'
);
SELECT is((SELECT count(*)::int FROM pg_amop o JOIN pg_opfamily f ON f.oid = o.amopfamily
           WHERE f.opfname = 'integer_ops' AND f.opfmethod = (SELECT oid FROM pg_am WHERE amname = 'lsm')),
          45, 'integer_ops has 9 type pairs x 5 operators');
SELECT is((SELECT count(*)::int FROM pg_amproc p JOIN pg_opfamily f ON f.oid = p.amprocfamily
           WHERE f.opfname = 'integer_ops' AND f.opfmethod = (SELECT oid FROM pg_am WHERE amname = 'lsm')),
          9, 'integer_ops has 9 support functions');
-- the operators and functions are btree's, with btree's strategy numbers
SELECT is_empty(
    $$SELECT o.amopopr::regoperator, o.amopstrategy
      FROM pg_amop o JOIN pg_opfamily f ON f.oid = o.amopfamily
      WHERE f.opfmethod = (SELECT oid FROM pg_am WHERE amname = 'lsm')
        AND NOT EXISTS (SELECT FROM pg_amop b
                        WHERE b.amopmethod = (SELECT oid FROM pg_am WHERE amname = 'btree')
                          AND b.amopopr = o.amopopr AND b.amopstrategy = o.amopstrategy
                          AND b.amoplefttype = o.amoplefttype AND b.amoprighttype = o.amoprighttype)$$,
    'every lsm operator is the btree operator for the same strategy and types'
);
SELECT is_empty(
    $$SELECT p.amproc::regprocedure
      FROM pg_amproc p JOIN pg_opfamily f ON f.oid = p.amprocfamily
      WHERE f.opfmethod = (SELECT oid FROM pg_am WHERE amname = 'lsm')
        AND NOT EXISTS (SELECT FROM pg_amproc b JOIN pg_opfamily bf ON bf.oid = b.amprocfamily
                        WHERE bf.opfmethod = (SELECT oid FROM pg_am WHERE amname = 'btree')
                          AND b.amprocnum = 1 AND b.amproc = p.amproc
                          AND b.amproclefttype = p.amproclefttype
                          AND b.amprocrighttype = p.amprocrighttype)$$,
    'every lsm support function 1 is btree''s comparison function for the same types'
);
-- varchar uses text_ops
SELECT is((SELECT c.opcname::text FROM pg_opclass c
           WHERE c.opcmethod = (SELECT oid FROM pg_am WHERE amname = 'lsm') AND c.opcdefault
             AND c.opcintype = 'text'::regtype), 'text_ops', 'text_ops is the default for text (and varchar)');
-- an index picks the default operator classes
CREATE TABLE pgtap_cat (a int2, b float8, c varchar(10) COLLATE "C", d timestamptz);
CREATE INDEX pgtap_cat_lsm ON pgtap_cat USING lsm (a, b, c, d);
SELECT is((SELECT array_agg(c.opcname::text ORDER BY k.n)
           FROM pg_index i, unnest(i.indclass::oid[]) WITH ORDINALITY k(opc, n)
           JOIN pg_opclass c ON c.oid = k.opc
           WHERE i.indexrelid = 'pgtap_cat_lsm'::regclass),
          ARRAY['int2_ops', 'float8_ops', 'text_ops', 'timestamptz_ops'],
          'CREATE INDEX USING lsm picks the default operator classes');
SELECT is((SELECT amname::text FROM pg_class c JOIN pg_am a ON a.oid = c.relam
           WHERE c.oid = 'pgtap_cat_lsm'::regclass), 'lsm', 'the index uses access method lsm');


-- ------------------------------------------------------------------------
-- ALTER EXTENSION lsm_am UPDATE from every earlier version (0.1 to 0.4)
-- gives exactly the objects of a fresh install of 0.5.  The catalog is read
-- through temporary views (schema by name: DROP EXTENSION gives it a new
-- oid); a fresh 0.5's rows are kept in tables, and each updated catalog is
-- compared with them (DROP EXTENSION is rolled back with the rest).
-- ------------------------------------------------------------------------
-- the functions: signatures, results, defaults, strictness, volatility,
-- parallel safety, C symbols, comments, privileges
CREATE TEMP VIEW lsm_cat_functions AS
    SELECT p.oid::regprocedure::text AS sig, pg_get_function_arguments(p.oid) AS args,
           pg_get_function_result(p.oid) AS result, p.proisstrict, p.provolatile, p.proparallel,
           p.prosecdef, p.prosrc, p.probin, obj_description(p.oid, 'pg_proc') AS descr, p.proacl::text AS acl
    FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = 'lsm_am';
-- the views: columns, definition, comment, privileges
CREATE TEMP VIEW lsm_cat_views AS
    SELECT c.relname::text AS name, pg_get_viewdef(c.oid) AS def,
           obj_description(c.oid, 'pg_class') AS descr, c.relacl::text AS acl,
           (SELECT string_agg(a.attname || ' ' || format_type(a.atttypid, a.atttypmod), ', ' ORDER BY a.attnum)
            FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attnum > 0) AS cols
    FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE n.nspname = 'lsm_am' AND c.relkind = 'v';
-- the schema: owner, comment, privileges
CREATE TEMP VIEW lsm_cat_schema AS
    SELECT n.nspowner::regrole::text AS owner, obj_description(n.oid, 'pg_namespace') AS descr,
           n.nspacl::text AS acl
    FROM pg_namespace n WHERE n.nspname = 'lsm_am';
-- every member of the extension (schema, access method, operator classes
-- and families, functions, views) with its comment
CREATE TEMP VIEW lsm_cat_members AS
    SELECT o.type, o.identity,
           (SELECT description FROM pg_description
            WHERE classoid = d.classid AND objoid = d.objid AND objsubid = 0) AS descr
    FROM pg_depend d, pg_identify_object(d.classid, d.objid, d.objsubid) o
    WHERE d.deptype = 'e' AND d.refclassid = 'pg_extension'::regclass
      AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'lsm_am');
-- the access method's handler, and the operator classes and their families
CREATE TEMP VIEW lsm_cat_opclasses AS
    SELECT a.amname::text AS am, a.amtype, a.amhandler::regprocedure::text AS handler,
           c.opcname::text AS opclass, c.opcintype::regtype::text AS type, c.opcdefault,
           f.opfname::text AS family, c.opckeytype::regtype::text AS keytype
    FROM pg_am a LEFT JOIN pg_opclass c ON c.opcmethod = a.oid
                 LEFT JOIN pg_opfamily f ON f.oid = c.opcfamily
    WHERE a.amname = 'lsm';
-- the operators and support functions of each family
CREATE TEMP VIEW lsm_cat_amops AS
    SELECT f.opfname::text AS family, o.amoplefttype::regtype::text AS l, o.amoprighttype::regtype::text AS r,
           'op ' || o.amopstrategy AS num, o.amopopr::regoperator::text AS member, o.amoppurpose::text AS purpose
    FROM pg_amop o JOIN pg_opfamily f ON f.oid = o.amopfamily JOIN pg_am a ON a.oid = f.opfmethod
    WHERE a.amname = 'lsm'
    UNION ALL
    SELECT f.opfname::text, p.amproclefttype::regtype::text, p.amprocrighttype::regtype::text,
           'proc ' || p.amprocnum, p.amproc::regprocedure::text, ''
    FROM pg_amproc p JOIN pg_opfamily f ON f.oid = p.amprocfamily JOIN pg_am a ON a.oid = f.opfmethod
    WHERE a.amname = 'lsm';
-- the initial privileges pg_dump reads (pg_init_privs) of the members
CREATE TEMP VIEW lsm_cat_init_privs AS
    SELECT o.type, o.identity, i.privtype::text, i.initprivs::text
    FROM pg_init_privs i, pg_identify_object(i.classoid, i.objoid, i.objsubid) o
    WHERE EXISTS (SELECT FROM pg_depend d
                  WHERE d.classid = i.classoid AND d.objid = i.objoid AND d.deptype = 'e'
                    AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'lsm_am'));

CREATE TEMP TABLE lsm_fresh_functions AS SELECT * FROM lsm_cat_functions;
CREATE TEMP TABLE lsm_fresh_views AS SELECT * FROM lsm_cat_views;
CREATE TEMP TABLE lsm_fresh_schema AS SELECT * FROM lsm_cat_schema;
CREATE TEMP TABLE lsm_fresh_members AS SELECT * FROM lsm_cat_members;
CREATE TEMP TABLE lsm_fresh_opclasses AS SELECT * FROM lsm_cat_opclasses;
CREATE TEMP TABLE lsm_fresh_amops AS SELECT * FROM lsm_cat_amops;
CREATE TEMP TABLE lsm_fresh_init_privs AS SELECT * FROM lsm_cat_init_privs;
-- the snapshot is not empty (a broken view would make every comparison pass)
SELECT ok((SELECT count(*) FROM lsm_fresh_functions) >= 19
          AND (SELECT count(*) FROM lsm_fresh_members) >= 50
          AND (SELECT count(*) FROM lsm_fresh_opclasses) = 15
          AND (SELECT count(*) FROM lsm_fresh_amops) = 6 * (9 + 4 + 10)
          AND (SELECT count(*) FROM lsm_fresh_init_privs) >= 8
          AND (SELECT count(*) FROM lsm_fresh_schema) = 1,
          'a fresh 0.5 as read by the views: 19+ functions, 50+ members, 15 operator classes, '
          '138 operators and support functions, 8+ initial privileges, the schema');
SELECT set_eq($$SELECT name FROM lsm_fresh_views$$, ARRAY['progress', 'indexes'],
              'lsm_am 0.5 has the views progress and indexes');

-- lsm_cat_same(HOW): the catalog now is a fresh 0.5's (8 tests)
CREATE FUNCTION pg_temp.lsm_cat_same(how text) RETURNS SETOF text LANGUAGE plpgsql AS $f$
BEGIN
    RETURN NEXT set_eq('SELECT * FROM lsm_cat_functions', 'SELECT * FROM lsm_fresh_functions',
                       how || ': the functions are those of a fresh 0.5');
    RETURN NEXT set_eq('SELECT * FROM lsm_cat_views', 'SELECT * FROM lsm_fresh_views',
                       how || ': the views are those of a fresh 0.5');
    RETURN NEXT set_eq('SELECT * FROM lsm_cat_schema', 'SELECT * FROM lsm_fresh_schema',
                       how || ': the lsm_am schema has the owner, comment and grants of a fresh 0.5');
    RETURN NEXT set_eq('SELECT * FROM lsm_cat_members', 'SELECT * FROM lsm_fresh_members',
                       how || ': the extension''s members and their comments are those of a fresh 0.5');
    RETURN NEXT set_eq('SELECT * FROM lsm_cat_opclasses', 'SELECT * FROM lsm_fresh_opclasses',
                       how || ': the access method and operator classes are those of a fresh 0.5');
    RETURN NEXT set_eq('SELECT * FROM lsm_cat_amops', 'SELECT * FROM lsm_fresh_amops',
                       how || ': the operator families hold the operators and functions of a fresh 0.5');
    RETURN NEXT set_eq('SELECT * FROM lsm_cat_init_privs', 'SELECT * FROM lsm_fresh_init_privs',
                       how || ': pg_init_privs (what pg_dump takes as the initial privileges) is a fresh 0.5''s');
    RETURN NEXT is((SELECT extversion FROM pg_extension WHERE extname = 'lsm_am'), '0.5',
                   how || ': lsm_am is at version 0.5');
END
$f$;

-- one version at a time: 0.1, then UPDATE TO each next version
SET client_min_messages = warning;
DROP EXTENSION lsm_am CASCADE;
RESET client_min_messages;
CREATE EXTENSION lsm_am VERSION '0.1';
SELECT is((SELECT count(*)::int FROM lsm_cat_functions), 5, 'lsm_am 0.1 has 5 functions');
ALTER EXTENSION lsm_am UPDATE TO '0.2';
SELECT is((SELECT extversion FROM pg_extension WHERE extname = 'lsm_am'), '0.2', 'ALTER EXTENSION lsm_am UPDATE TO 0.2');
ALTER EXTENSION lsm_am UPDATE TO '0.3';
SELECT is((SELECT extversion FROM pg_extension WHERE extname = 'lsm_am'), '0.3', 'ALTER EXTENSION lsm_am UPDATE TO 0.3');
ALTER EXTENSION lsm_am UPDATE TO '0.4';
SELECT is((SELECT extversion FROM pg_extension WHERE extname = 'lsm_am'), '0.4', 'ALTER EXTENSION lsm_am UPDATE TO 0.4');
ALTER EXTENSION lsm_am UPDATE TO '0.5';
SELECT * FROM pg_temp.lsm_cat_same('0.1, then UPDATE TO 0.2, 0.3, 0.4 and 0.5');

-- from a fresh install of each earlier version, ALTER EXTENSION lsm_am UPDATE
SET client_min_messages = warning;
DROP EXTENSION lsm_am CASCADE;
RESET client_min_messages;
CREATE EXTENSION lsm_am VERSION '0.1';
ALTER EXTENSION lsm_am UPDATE;
SELECT * FROM pg_temp.lsm_cat_same('UPDATE from a fresh 0.1');

SET client_min_messages = warning;
DROP EXTENSION lsm_am CASCADE;
RESET client_min_messages;
CREATE EXTENSION lsm_am VERSION '0.2';
SELECT is((SELECT extversion FROM pg_extension WHERE extname = 'lsm_am'), '0.2', 'CREATE EXTENSION lsm_am VERSION 0.2');
ALTER EXTENSION lsm_am UPDATE;
SELECT * FROM pg_temp.lsm_cat_same('UPDATE from a fresh 0.2');

SET client_min_messages = warning;
DROP EXTENSION lsm_am CASCADE;
RESET client_min_messages;
CREATE EXTENSION lsm_am VERSION '0.3';
SELECT is((SELECT extversion FROM pg_extension WHERE extname = 'lsm_am'), '0.3', 'CREATE EXTENSION lsm_am VERSION 0.3');
ALTER EXTENSION lsm_am UPDATE;
SELECT * FROM pg_temp.lsm_cat_same('UPDATE from a fresh 0.3');

-- 0.4: this library serves its catalog before the update (maintenance_stats
-- declared with 20 columns there; 0.5 adds two)
SET client_min_messages = warning;
DROP EXTENSION lsm_am CASCADE;
RESET client_min_messages;
CREATE EXTENSION lsm_am VERSION '0.4';
SELECT is((SELECT extversion FROM pg_extension WHERE extname = 'lsm_am'), '0.4', 'CREATE EXTENSION lsm_am VERSION 0.4');
CREATE TABLE pgtap_cat_v4 (k int);
CREATE INDEX pgtap_cat_v4_k ON pgtap_cat_v4 USING lsm (k);
INSERT INTO pgtap_cat_v4 SELECT g FROM generate_series(1, 100) g;
SELECT is((SELECT (accounted_pages >= 1 AND file_pages >= 1 AND space_amplification > 0)
           FROM lsm_am.maintenance_stats('pgtap_cat_v4_k')), true,
          'with the 0.4 catalog, maintenance_stats returns its 20 columns from this library');
DROP TABLE pgtap_cat_v4;
ALTER EXTENSION lsm_am UPDATE;
SELECT * FROM pg_temp.lsm_cat_same('UPDATE from a fresh 0.4');

SELECT * FROM finish();
ROLLBACK;
