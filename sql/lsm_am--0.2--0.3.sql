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
LANGUAGE C STRICT;
COMMENT ON FUNCTION lsm_am.verify(regclass, boolean) IS 'check an lsm index (metapage, page ownership, every page, key order, fences, bloom filters, log and memtables; with heapallindexed every heap tuple has its entry); ERROR index_corrupted on the first problem, nothing if sound';
REVOKE EXECUTE ON FUNCTION lsm_am.verify(regclass, boolean) FROM PUBLIC;

CREATE FUNCTION lsm_am.metapage(index regclass,
    OUT magic text,
    OUT version integer,
    OUT key_fingerprint text,
    OUT instance_id text,
    OUT next_run_id bigint,
    OUT next_epoch bigint,
    OUT nblocks bigint,
    OUT nruns bigint,
    OUT nfree bigint,
    OUT nimm bigint,
    OUT flushes bigint,
    OUT compactions bigint,
    OUT trivial_moves bigint,
    OUT pages_flushed bigint,
    OUT pages_compacted bigint,
    OUT leaked_pages bigint)
RETURNS record
AS 'MODULE_PATHNAME', 'lsm_inspect_metapage'
LANGUAGE C STRICT;
COMMENT ON FUNCTION lsm_am.metapage(regclass) IS 'the metapage of an lsm index as stored (superuser)';
REVOKE EXECUTE ON FUNCTION lsm_am.metapage(regclass) FROM PUBLIC;

CREATE FUNCTION lsm_am.manifest(index regclass,
    OUT kind text,
    OUT id bigint,
    OUT level integer,
    OUT start_block bigint,
    OUT pages bigint,
    OUT entries bigint,
    OUT bloom_columns integer,
    OUT bloom_start bigint,
    OUT bloom_blocks bigint,
    OUT reuse_after text,
    OUT smallest_key text,
    OUT largest_key text)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'lsm_inspect_manifest'
LANGUAGE C STRICT;
COMMENT ON FUNCTION lsm_am.manifest(regclass) IS 'what owns the pages of an lsm index, as the metapage says: runs, log chains, free and reserved extents (superuser)';
REVOKE EXECUTE ON FUNCTION lsm_am.manifest(regclass) FROM PUBLIC;

CREATE FUNCTION lsm_am.page_header(index regclass, blkno bigint,
    OUT blkno bigint,
    OUT kind text,
    OUT version integer,
    OUT owner bigint,
    OUT next bigint,
    OUT checksum integer,
    OUT checksum_ok boolean,
    OUT lsn pg_lsn,
    OUT flags integer,
    OUT lower integer,
    OUT upper integer,
    OUT special integer,
    OUT items integer,
    OUT valid boolean)
RETURNS record
AS 'MODULE_PATHNAME', 'lsm_inspect_page_header'
LANGUAGE C STRICT;
COMMENT ON FUNCTION lsm_am.page_header(regclass, bigint) IS 'one page of an lsm index: kind, owner, LSN, flags, items (superuser)';
REVOKE EXECUTE ON FUNCTION lsm_am.page_header(regclass, bigint) FROM PUBLIC;

CREATE FUNCTION lsm_am.page_items(index regclass, blkno bigint,
    OUT itemno integer,
    OUT key text,
    OUT tid tid,
    OUT child bigint)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'lsm_inspect_page_items'
LANGUAGE C STRICT;
COMMENT ON FUNCTION lsm_am.page_items(regclass, bigint) IS 'the entries of a data or log page, the separators of a run header or fence page, decoded (superuser)';
REVOKE EXECUTE ON FUNCTION lsm_am.page_items(regclass, bigint) FROM PUBLIC;
