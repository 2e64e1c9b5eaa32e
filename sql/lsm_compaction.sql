-- lsm_compaction: compaction policies (index option compaction, size_ratio),
-- changing the policy of an index, and the index option l0_compaction_trigger.
-- Flushes are explicit (lsm_am.flush() writes one level-0 run); the
-- background workers compact, and lsm_am.wait_for_merges() waits for them.
-- The server runs with the default settings (lsm_am.l0_compaction_trigger 4).
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS lsm_am;
RESET client_min_messages;
CREATE SCHEMA lsm_compaction;
SET search_path = lsm_compaction, public;

-- lsm_check(query): sql/lsm_setup.sql (the first test) defines it.

-- every page accounted for: no leaked page, nothing reserved when idle
CREATE VIEW pg AS
    SELECT c.relname AS index, k.leaked_pages, k.dropped_pages, k.reserved_pages,
           k.total_pages = 1 + k.log_pages + k.run_pages + k.free_pages + k.reserved_pages
                           + k.unused_pages AS all_pages_accounted
    FROM pg_class c, LATERAL lsm_am.check_index(c.oid) k
    WHERE c.relam = (SELECT oid FROM pg_am WHERE amname = 'lsm') AND c.relkind = 'i'
      AND c.relnamespace = 'lsm_compaction'::regnamespace;

-- four explicit flushes per round (500 random keys each: hashint8 spreads
-- them over the int4 range), then the workers
-- compact:
--  leveled (default): the level-0 runs and the level-1 run they overlap
--    become one level-1 run;
--  tiered: the level-0 runs become one more level-1 run; size_ratio level-1
--    runs become one level-2 run, and so on;
--  lazy: tiered above the last level, leveled at the last level (level 1
--    here: the runs are far below its target size).
CREATE TABLE pl_lev (k int8) WITH (autovacuum_enabled = off);
CREATE TABLE pl_tier (k int8) WITH (autovacuum_enabled = off);
CREATE TABLE pl_tier2 (k int8) WITH (autovacuum_enabled = off);
CREATE TABLE pl_lazy (k int8) WITH (autovacuum_enabled = off);
CREATE INDEX pl_lev_k ON pl_lev USING lsm (k);
CREATE INDEX pl_tier_k ON pl_tier USING lsm (k) WITH (compaction = tiered);
CREATE INDEX pl_tier2_k ON pl_tier2 USING lsm (k) WITH (compaction = tiered, size_ratio = 2);
CREATE INDEX pl_lazy_k ON pl_lazy USING lsm (k) WITH (compaction = lazy);
CREATE PROCEDURE pl_round(r int) LANGUAGE plpgsql AS $p$
DECLARE t text;
BEGIN
    FOR i IN 1 .. 4 LOOP
        FOREACH t IN ARRAY ARRAY['pl_lev', 'pl_tier', 'pl_tier2', 'pl_lazy'] LOOP
            EXECUTE format('INSERT INTO %I SELECT hashint8(%s + g) FROM generate_series(1, 500) g',
                           t, r * 100000 + i * 1000);
            PERFORM lsm_am.flush((t || '_k')::regclass);
        END LOOP;
    END LOOP;
END
$p$;
-- waits for the merges of each index first
CREATE VIEW pl AS
    SELECT i::text AS index, w AS merged, m.runs_per_level, m.compactions, m.trivial_moves
    FROM unnest(ARRAY['pl_lev_k', 'pl_tier_k', 'pl_tier2_k', 'pl_lazy_k']::regclass[]) WITH ORDINALITY u(i, n),
         LATERAL lsm_am.wait_for_merges(i) w, LATERAL lsm_am.maintenance_stats(i) m
    ORDER BY n;
CALL pl_round(1);
SELECT * FROM pl;
CALL pl_round(2);
SELECT * FROM pl;
CALL pl_round(3);
SELECT * FROM pl;
SELECT q, lsm_check(q) FROM (VALUES
    ('SELECT k FROM pl_lev WHERE k BETWEEN -1000000000 AND 0 ORDER BY k'),
    ('SELECT k FROM pl_tier WHERE k BETWEEN -1000000000 AND 0 ORDER BY k DESC'),
    ('SELECT k FROM pl_tier2 WHERE k < -2000000000 ORDER BY k'),
    ('SELECT k FROM pl_lazy WHERE k >= 2000000000 ORDER BY k DESC'),
    ('SELECT count(*) FROM pl_tier WHERE k = hashint8(203001)'),
    ('SELECT count(*) FROM pl_tier2 WHERE k = hashint8(101500)'),
    ('SELECT count(*) FROM (SELECT k FROM pl_lazy ORDER BY k) s')
) t(q);
SELECT count(*) FROM pl_lev WHERE k >= -9223372036854775808;
SELECT * FROM pg ORDER BY index;

-- a new policy applies to the next compactions: switched to leveled, the
-- tiered index's three overlapping level-1 runs are merged into one
-- (a repair) without any new flush
ALTER INDEX pl_tier_k SET (compaction = leveled);
SELECT * FROM pl WHERE index = 'pl_tier_k';
SELECT level, count(*) AS runs, sum(entries) AS entries FROM lsm_am.index_info('pl_tier_k')
GROUP BY level ORDER BY level;
SELECT q, lsm_check(q) FROM (VALUES
    ('SELECT k FROM pl_tier WHERE k BETWEEN 0 AND 1000000000 ORDER BY k')
) t(q);
SELECT * FROM pg WHERE index = 'pl_tier_k';

-- the index option l0_compaction_trigger = 2: two level-0 runs start a
-- compaction (a worker compacts by the index's options, never by a session's
-- SET), and lsm_am.wait_for_merges() waits until it is done
SELECT lsm_am.compact('pl_lev_k');
SELECT runs_per_level FROM lsm_am.maintenance_stats('pl_lev_k');
ALTER INDEX pl_lev_k SET (l0_compaction_trigger = 2);
SELECT reloptions FROM pg_class WHERE relname = 'pl_lev_k';
INSERT INTO pl_lev SELECT hashint8(900000 + g) FROM generate_series(1, 500) g;
SELECT lsm_am.flush('pl_lev_k');
INSERT INTO pl_lev SELECT hashint8(901000 + g) FROM generate_series(1, 500) g;
SELECT lsm_am.flush('pl_lev_k');
SELECT lsm_am.wait_for_merges('pl_lev_k', '10 seconds');
SELECT coalesce(runs_per_level[1], 0) <= 1 AS merged FROM lsm_am.maintenance_stats('pl_lev_k');
ALTER INDEX pl_lev_k RESET (l0_compaction_trigger);
SELECT * FROM pg ORDER BY index;

SET client_min_messages = warning;
DROP SCHEMA lsm_compaction CASCADE;
RESET client_min_messages;
RESET search_path;
