-- lsm_am 0.1 -> 0.2: background merge workers, levels and compaction
-- policies, page recycling.  The on-disk format changed (version 2): indexes
-- built by 0.1 report "REINDEX the index" until they are rebuilt.
\echo Use "ALTER EXTENSION lsm_am UPDATE TO '0.2'" to load this file. \quit

CREATE FUNCTION lsm_am.wait_for_merges(index regclass,
    timeout interval DEFAULT '1 minute')
RETURNS boolean
AS 'MODULE_PATHNAME', 'lsm_wait_for_merges'
LANGUAGE C STRICT;
COMMENT ON FUNCTION lsm_am.wait_for_merges(regclass, interval) IS 'wait until no flush or compaction of an lsm index is pending; false if the timeout passed first';

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
    OUT leaked_pages bigint)
RETURNS record
AS 'MODULE_PATHNAME', 'lsm_maintenance_stats'
LANGUAGE C STRICT;
COMMENT ON FUNCTION lsm_am.maintenance_stats(regclass) IS 'flushes, compactions, write stalls and WAL of an lsm index (stall and WAL counters since the server started)';

CREATE FUNCTION lsm_am.check_index(index regclass,
    OUT total_pages bigint,
    OUT log_pages bigint,
    OUT run_pages bigint,
    OUT free_pages bigint,
    OUT reserved_pages bigint,
    OUT unused_pages bigint,
    OUT leaked_pages bigint,
    OUT dropped_pages bigint)
RETURNS record
AS 'MODULE_PATHNAME', 'lsm_check_index'
LANGUAGE C STRICT;
COMMENT ON FUNCTION lsm_am.check_index(regclass) IS 'account for every page of an lsm index: log, run, free, reserved; leaked_pages must be 0';

CREATE FUNCTION lsm_am.lookup_stats(index regclass,
    OUT lookups bigint,
    OUT filter_probes bigint,
    OUT filter_negatives bigint,
    OUT false_positives bigint,
    OUT data_pages_read bigint)
RETURNS record
AS 'MODULE_PATHNAME', 'lsm_lookup_stats'
LANGUAGE C STRICT;
COMMENT ON FUNCTION lsm_am.lookup_stats(regclass) IS 'point lookups, bloom filter probes, negatives and false positives, and run data pages read by scans of an lsm index (since the server started)';

CREATE FUNCTION lsm_am.reset_lookup_stats(index regclass)
RETURNS void
AS 'MODULE_PATHNAME', 'lsm_reset_lookup_stats'
LANGUAGE C STRICT;
COMMENT ON FUNCTION lsm_am.reset_lookup_stats(regclass) IS 'zero the counters of lsm_am.lookup_stats';
