-- lsm_am 0.2 -> 0.3: ordinary roles may use the lsm_am schema (operator
-- classes, functions; each function checks its own privileges);
-- maintenance_stats reports file pages and space amplification.  The on-disk
-- format is unchanged.
\echo Use "ALTER EXTENSION lsm_am UPDATE TO '0.3'" to load this file. \quit

GRANT USAGE ON SCHEMA lsm_am TO PUBLIC;

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
    OUT space_amplification double precision)
RETURNS record
AS 'MODULE_PATHNAME', 'lsm_maintenance_stats'
LANGUAGE C STRICT;
COMMENT ON FUNCTION lsm_am.maintenance_stats(regclass) IS 'flushes, compactions, write stalls, WAL and space amplification (file pages / live pages) of an lsm index (stall and WAL counters since the server started)';

-- Verification and page inspection (issue 15).
CREATE FUNCTION lsm_am.verify(index regclass, heapallindexed boolean DEFAULT false)
RETURNS void
AS 'MODULE_PATHNAME', 'lsm_verify'
LANGUAGE C STRICT PARALLEL RESTRICTED;
COMMENT ON FUNCTION lsm_am.verify(regclass, boolean) IS 'check an lsm index (metapage, page ownership, every page, key order, fences, bloom filters, log and memtables; with heapallindexed every heap tuple has its entry); ERROR index_corrupted on the first problem, nothing if sound';
REVOKE EXECUTE ON FUNCTION lsm_am.verify(regclass, boolean) FROM PUBLIC;
