-- lsm_flush: lsm_am.flush(), lsm_am.index_stats(), scans over memtable +
-- runs, automatic flushes and merges with a small memtable_size, VACUUM.
-- Page counts and byte sizes are not printed (only whether they are > 0);
-- memtable_entries + run_entries must always equal the number of index
-- entries.  Automatic flushes and compactions run in background workers, so
-- the tests call lsm_am.wait_for_merges() before looking at runs, and
-- lsm_am.check_index() after each scenario proves that no page leaked.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS lsm_am;
RESET client_min_messages;
CREATE SCHEMA lsm_flush;
SET search_path = lsm_flush, public;

-- lsm_check(query): sql/lsm_setup.sql (the first test) defines it.

CREATE VIEW st AS
    SELECT c.relname AS index, s.memtable_entries, s.memtable_bytes > 0 AS has_memtable_bytes,
           s.runs, s.run_entries, s.log_pages > 0 AS has_log_pages, s.total_pages >= 1 AS has_pages
    FROM pg_class c, LATERAL lsm_am.index_stats(c.oid) s
    WHERE c.relam = (SELECT oid FROM pg_am WHERE amname = 'lsm') AND c.relkind = 'i'
      AND c.relnamespace = 'lsm_flush'::regnamespace;
-- the shape of the levels: level-0 runs (flushed memtables), the most runs
-- any level >= 1 holds, flushes and compactions done
CREATE VIEW lv AS
    SELECT c.relname AS index, coalesce(m.runs_per_level[1], 0) AS l0_runs,
           (SELECT coalesce(max(n), 0) FROM unnest(m.runs_per_level[2:]) n) AS max_deeper_level_runs,
           m.flushes, m.compactions
    FROM pg_class c, LATERAL lsm_am.maintenance_stats(c.oid) m
    WHERE c.relam = (SELECT oid FROM pg_am WHERE amname = 'lsm') AND c.relkind = 'i'
      AND c.relnamespace = 'lsm_flush'::regnamespace;
-- every page accounted for: no leaked page, nothing reserved when idle
CREATE VIEW pg AS
    SELECT c.relname AS index, k.leaked_pages, k.dropped_pages, k.reserved_pages,
           k.total_pages = 1 + k.log_pages + k.run_pages + k.free_pages + k.reserved_pages
                           + k.unused_pages AS all_pages_accounted
    FROM pg_class c, LATERAL lsm_am.check_index(c.oid) k
    WHERE c.relam = (SELECT oid FROM pg_am WHERE amname = 'lsm') AND c.relkind = 'i'
      AND c.relnamespace = 'lsm_flush'::regnamespace;

-- index_stats' result shape
SELECT * FROM lsm_am.index_stats(NULL);

CREATE TABLE fl (id int, k int8) WITH (autovacuum_enabled = off);
CREATE TABLE fl_bt (id int, k int8) WITH (autovacuum_enabled = off);
CREATE INDEX fl_lsm ON fl USING lsm (k);
CREATE INDEX fl_bt_k ON fl_bt (k);
-- an empty index: nothing anywhere
SELECT * FROM st;
SELECT lsm_am.flush('fl_lsm');
SELECT * FROM st;

INSERT INTO fl SELECT g, (g * 7919) % 1009 FROM generate_series(1, 1000) g;
INSERT INTO fl_bt SELECT * FROM fl;
-- all in the memtable
SELECT * FROM st;
SELECT lsm_am.flush('fl_lsm');
-- all in one run
SELECT * FROM st;
-- flushing an empty memtable adds no run
SELECT lsm_am.flush('fl_lsm'::regclass);
SELECT * FROM st;
-- the flushed log pages went to the free list: none leaked
SELECT * FROM pg WHERE index = 'fl_lsm';

-- memtable + run: overlapping keys, updates (new versions in the memtable,
-- old ones in the run), deletes
INSERT INTO fl SELECT g, (g * 31) % 1009 FROM generate_series(1001, 1500) g;
UPDATE fl SET k = k + 2000 WHERE id % 10 = 0;
DELETE FROM fl WHERE id % 10 = 1;
INSERT INTO fl_bt SELECT g, (g * 31) % 1009 FROM generate_series(1001, 1500) g;
UPDATE fl_bt SET k = k + 2000 WHERE id % 10 = 0;
DELETE FROM fl_bt WHERE id % 10 = 1;
-- 500 inserted + 150 updated row versions
SELECT * FROM st;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT id FROM fl WHERE k < 100 EXCEPT ALL SELECT id FROM fl_bt WHERE k < 100;
SELECT id FROM fl_bt WHERE k < 100 EXCEPT ALL SELECT id FROM fl WHERE k < 100;
SELECT id FROM fl WHERE k >= 2000 EXCEPT ALL SELECT id FROM fl_bt WHERE k >= 2000;
SELECT id FROM fl_bt WHERE k >= 2000 EXCEPT ALL SELECT id FROM fl WHERE k >= 2000;
-- id 4 (in the run) and id 1152 (in the memtable)
SELECT id, k FROM fl WHERE k = 397 ORDER BY id;
SELECT id, k FROM fl_bt WHERE k = 397 ORDER BY id;
-- id 920 had k = 500 and was updated to 2500
SELECT id, k FROM fl WHERE k = 500 ORDER BY id;
SELECT id, k FROM fl WHERE k = 2500 ORDER BY id;
SELECT count(*), min(k), max(k) FROM fl WHERE k > 0;
SELECT count(*), min(k), max(k) FROM fl_bt WHERE k > 0;
SELECT q, lsm_check(q) FROM (VALUES
    ('SELECT id, k FROM fl ORDER BY k, id'),
    ('SELECT id, k FROM fl ORDER BY k DESC, id'),
    ('SELECT id, k FROM fl WHERE k BETWEEN 100 AND 200 ORDER BY k, id'),
    ('SELECT id, k FROM fl WHERE k = 397 ORDER BY id'),
    ('SELECT k FROM fl WHERE k > 2500 ORDER BY k DESC')
) t(q);

-- a second flush: two runs, both read by scans
SELECT lsm_am.flush('fl_lsm');
SELECT index, memtable_entries, runs, run_entries FROM st;
SELECT q, lsm_check(q) FROM (VALUES
    ('SELECT id, k FROM fl ORDER BY k, id'),
    ('SELECT id, k FROM fl ORDER BY k DESC, id'),
    ('SELECT id, k FROM fl WHERE k BETWEEN 100 AND 200 ORDER BY k, id')
) t(q);
SELECT id FROM fl WHERE k > 0 EXCEPT ALL SELECT id FROM fl_bt WHERE k > 0;
SELECT id FROM fl_bt WHERE k > 0 EXCEPT ALL SELECT id FROM fl WHERE k > 0;

-- VACUUM removes the 300 dead row versions (150 old versions of updated rows,
-- 150 deleted rows) from the runs
VACUUM fl;
SELECT index, memtable_entries, runs, run_entries FROM st;
SELECT count(*) FROM fl;
SELECT q, lsm_check(q) FROM (VALUES
    ('SELECT id, k FROM fl ORDER BY k, id'),
    ('SELECT id, k FROM fl WHERE k >= 2000 ORDER BY k DESC, id')
) t(q);

-- aborted inserts are in the index until VACUUM, but never returned
BEGIN;
INSERT INTO fl SELECT g, 5 FROM generate_series(10001, 10100) g;
SELECT count(*) FROM fl WHERE k = 5;
ROLLBACK;
SELECT count(*) FROM fl WHERE k = 5;
SELECT index, memtable_entries, runs, run_entries FROM st;
VACUUM fl;
SELECT index, memtable_entries, runs, run_entries FROM st;
SELECT count(*) FROM fl WHERE k = 5;
SELECT * FROM pg WHERE index = 'fl_lsm';

-- a small memtable_size forces automatic flushes (full memtables become
-- immutable and a worker flushes them into level-0 runs); once
-- lsm_am.l0_compaction_trigger level-0 runs exist, they are compacted into
-- level 1 (leveled: every level >= 1 is one run cut into pieces, runs whose
-- key ranges never overlap)
CREATE FUNCTION overlapping_pieces(idx regclass) RETURNS bigint LANGUAGE sql AS $$
  WITH r AS (
    SELECT level, run_id,
           (split_part(btrim(smallest_key, '()'), ',', 1)::int8, split_part(btrim(smallest_key, '()'), ',', 2)) AS lo,
           (split_part(btrim(largest_key, '()'), ',', 1)::int8, split_part(btrim(largest_key, '()'), ',', 2)) AS hi
      FROM lsm_am.index_info(idx) WHERE level > 0)
  SELECT count(*) FROM r a JOIN r b ON a.level = b.level AND a.run_id < b.run_id
   WHERE a.lo <= b.hi AND b.lo <= a.hi $$;
CREATE TABLE sm (id int, k int8, t text COLLATE "C") WITH (autovacuum_enabled = off);
CREATE INDEX sm_lsm ON sm USING lsm (k, t) WITH (memtable_size = 64);
SELECT relname, reloptions FROM pg_class WHERE relname = 'sm_lsm';
SHOW lsm_am.l0_compaction_trigger;
INSERT INTO sm SELECT g, (g * 7919) % 10007, 'r' || (g % 100) FROM generate_series(1, 4000) g;
SELECT memtable_entries + run_entries AS entries FROM st WHERE index = 'sm_lsm';
SELECT lsm_am.wait_for_merges('sm_lsm');
SELECT runs > 0 AS flushed, memtable_entries + run_entries AS entries FROM st WHERE index = 'sm_lsm';
INSERT INTO sm SELECT g, (g * 7919) % 10007, 'r' || (g % 100) FROM generate_series(4001, 20000) g;
SELECT memtable_entries + run_entries AS entries FROM st WHERE index = 'sm_lsm';
SELECT lsm_am.wait_for_merges('sm_lsm');
SELECT memtable_entries + run_entries AS entries FROM st WHERE index = 'sm_lsm';
SELECT flushes > 4 AS several_flushes, compactions > 0 AS compacted,
       l0_runs < 4 AS l0_below_trigger
FROM lv WHERE index = 'sm_lsm';
SELECT overlapping_pieces('sm_lsm');
SELECT * FROM pg WHERE index = 'sm_lsm';
SELECT q, lsm_check(q) FROM (VALUES
    ('SELECT id, k FROM sm WHERE k < 50 ORDER BY k, id'),
    ('SELECT id, k, t FROM sm WHERE k = 4242 ORDER BY id'),
    ('SELECT id, k, t FROM sm WHERE k = 4242 AND t = ''r14'' ORDER BY id'),
    ('SELECT k, t FROM sm WHERE k > 9990 ORDER BY k DESC, t DESC'),
    ('SELECT count(*) FROM (SELECT k FROM sm ORDER BY k, t) s'),
    ('SELECT k, t FROM sm WHERE k BETWEEN 3000 AND 3100 ORDER BY k, t')
) t(q);
-- with lsm_am.l0_compaction_trigger = 2 every second flush starts a merge:
-- once the merges are done at most one level-0 run is left.  Set in the
-- server configuration, which the background workers read (lsm_compaction
-- tests the setting made in a session).  The same value is set in this
-- session too: wait_for_merges judges "nothing pending" by this backend's
-- setting, and the reload's signal can reach it after the next statement
-- began (a CI run on a loaded machine saw 2 level-0 runs left that way)
ALTER SYSTEM SET lsm_am.l0_compaction_trigger = 2;
SELECT pg_reload_conf();
SET lsm_am.l0_compaction_trigger = 2;
INSERT INTO sm SELECT g, (g * 7919) % 10007, 'r' || (g % 100) FROM generate_series(20001, 25000) g;
SELECT lsm_am.wait_for_merges('sm_lsm');
SELECT l0_runs <= 1 AS merged FROM lv WHERE index = 'sm_lsm';
SELECT overlapping_pieces('sm_lsm');
SELECT memtable_entries + run_entries AS entries FROM st WHERE index = 'sm_lsm';
SELECT * FROM pg WHERE index = 'sm_lsm';
SELECT q, lsm_check(q) FROM (VALUES
    ('SELECT id, k FROM sm WHERE k < 50 ORDER BY k, id'),
    ('SELECT id, k, t FROM sm WHERE k = 4242 AND t = ''r14'' ORDER BY id'),
    ('SELECT k, t FROM sm WHERE k > 9990 ORDER BY k DESC, t DESC'),
    ('SELECT k, t FROM sm WHERE k BETWEEN 3000 AND 3100 ORDER BY k, t')
) t(q);
SELECT count(*) FROM sm WHERE k >= 0;
SELECT id, k, t FROM sm WHERE k = 4242 ORDER BY id;
ALTER SYSTEM RESET lsm_am.l0_compaction_trigger;
SELECT pg_reload_conf();
RESET lsm_am.l0_compaction_trigger;

-- VACUUM after deleting 3/5 of the rows: run_entries drops to the live count
DELETE FROM sm WHERE id % 5 IN (0, 1, 2);
SELECT memtable_entries + run_entries AS entries_before_vacuum FROM st WHERE index = 'sm_lsm';
VACUUM sm;
SELECT memtable_entries, run_entries, runs > 0 AS has_runs FROM st WHERE index = 'sm_lsm';
SELECT lsm_am.wait_for_merges('sm_lsm');
SELECT memtable_entries, run_entries FROM st WHERE index = 'sm_lsm';
SELECT * FROM pg WHERE index = 'sm_lsm';
SELECT count(*) FROM sm;
-- ids 1407 and 21421 were deleted
SELECT id, k, t FROM sm WHERE k = 4242 ORDER BY id;
SELECT q, lsm_check(q) FROM (VALUES
    ('SELECT id, k FROM sm WHERE k < 50 ORDER BY k, id'),
    ('SELECT k, t FROM sm WHERE k > 9990 ORDER BY k DESC, t DESC'),
    ('SELECT id, k, t FROM sm WHERE k = 4242 ORDER BY id'),
    ('SELECT id, k, t FROM sm WHERE k BETWEEN 3000 AND 3100 ORDER BY k, t, id')
) t(q);

-- the lsm_am.memtable_size setting is the default for indexes without the
-- reloption
CREATE TABLE gs (id int, k int4) WITH (autovacuum_enabled = off);
CREATE INDEX gs_lsm ON gs USING lsm (k);
SET lsm_am.memtable_size = '64kB';
INSERT INTO gs SELECT g, g FROM generate_series(1, 10000) g;
SELECT lsm_am.wait_for_merges('gs_lsm');
SELECT runs >= 1 AS has_runs, memtable_entries + run_entries AS entries FROM st WHERE index = 'gs_lsm';
SELECT flushes > 1 AS several_flushes FROM lv WHERE index = 'gs_lsm';
RESET lsm_am.memtable_size;
-- a reloption set later applies too
CREATE TABLE ro (id int, k int4) WITH (autovacuum_enabled = off);
CREATE INDEX ro_lsm ON ro USING lsm (k);
ALTER INDEX ro_lsm SET (memtable_size = 64);
SELECT relname, reloptions FROM pg_class WHERE relname = 'ro_lsm';
INSERT INTO ro SELECT g, g FROM generate_series(1, 10000) g;
SELECT lsm_am.wait_for_merges('ro_lsm');
SELECT runs >= 1 AS has_runs, memtable_entries + run_entries AS entries FROM st WHERE index = 'ro_lsm';
SELECT flushes > 1 AS several_flushes FROM lv WHERE index = 'ro_lsm';
SELECT q, lsm_check(q) FROM (VALUES
    ('SELECT k FROM gs WHERE k % 1000 = 0 AND k > 0 ORDER BY k DESC'),
    ('SELECT k FROM ro WHERE k BETWEEN 2500 AND 2600 ORDER BY k')
) t(q);
-- lsm_am.compact(): one run, at the level its size calls for; all pages of
-- the runs it replaced are free again
SELECT lsm_am.compact('sm_lsm');
SELECT runs, memtable_entries, run_entries FROM st WHERE index = 'sm_lsm';
SELECT level >= 1 AS level_ge_1, entries FROM lsm_am.index_info('sm_lsm');
SELECT * FROM pg ORDER BY index;

RESET enable_seqscan;
RESET enable_bitmapscan;
SET client_min_messages = warning;
DROP SCHEMA lsm_flush CASCADE;
RESET client_min_messages;
RESET search_path;
