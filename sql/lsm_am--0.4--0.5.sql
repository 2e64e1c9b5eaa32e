-- lsm_am 0.4 -> 0.5: lsm_am.maintenance_stats() reports write
-- amplification: two more columns, pages_written_per_level (run pages
-- written into each level since the server started: [1] by flushes into
-- level 0, [2] and on by merges into levels 1 and deeper) and
-- write_amplification (all of them per page flushed).  A function's OUT
-- columns cannot be changed in place, so it is dropped and created again;
-- a view of your own over it must be dropped first (the update says so) and
-- created again after.  reset_stats() zeroes the new counters too (its
-- comment says so).  The library of 0.5 also serves a 0.4 catalog (the
-- first 20 columns), so the update can wait.  The on-disk format is
-- unchanged (version 2).
\echo Use "ALTER EXTENSION lsm_am UPDATE TO '0.5'" to load this file. \quit

DROP FUNCTION lsm_am.maintenance_stats(regclass);
CREATE FUNCTION lsm_am.maintenance_stats(index regclass,
    OUT immutable_memtables integer,
    OUT runs_per_level integer[],
    OUT flushes bigint,
    OUT compactions bigint,
    OUT trivial_moves bigint,
    OUT pages_flushed bigint,
    OUT pages_compacted bigint,
    OUT slowdowns bigint,
    OUT stops bigint,
    OUT stall_ms double precision,
    OUT backend_flushes bigint,
    OUT wal_log_bytes bigint,
    OUT wal_flush_bytes bigint,
    OUT wal_compact_bytes bigint,
    OUT free_pages bigint,
    OUT accounted_pages bigint,
    OUT pending boolean,
    OUT leaked_pages bigint,
    OUT file_pages bigint,
    OUT space_amplification double precision,
    OUT pages_written_per_level bigint[],
    OUT write_amplification double precision)
RETURNS record
AS 'MODULE_PATHNAME', 'lsm_maintenance_stats'
LANGUAGE C STRICT;
COMMENT ON FUNCTION lsm_am.maintenance_stats(regclass) IS 'flushes, compactions, write stalls, WAL, space amplification (file pages / live pages) and write amplification (run pages written into each level, all of them per page flushed) of an lsm index (stall, WAL and per-level counters since the server started)';
COMMENT ON FUNCTION lsm_am.reset_stats(regclass) IS 'zero the counters an lsm index keeps in shared memory: stalls, backend flushes, WAL bytes, pages written per level, lookups (index owner only)';
