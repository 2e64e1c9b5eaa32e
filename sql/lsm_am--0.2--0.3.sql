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

-- Monitoring (issue 15): running maintenance jobs, one row per lsm index,
-- counter reset.  The readers show an index only to roles that may SELECT
-- from its table (or have pg_read_all_stats).
CREATE FUNCTION lsm_am.maintenance_progress(
    OUT pid integer,
    OUT relid regclass,
    OUT indexrelid regclass,
    OUT kind text,
    OUT input_runs integer,
    OUT input_levels integer[],
    OUT output_level integer,
    OUT pages_done bigint,
    OUT pages_total bigint,
    OUT started_at timestamp with time zone)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'lsm_maintenance_progress'
LANGUAGE C STRICT VOLATILE;
COMMENT ON FUNCTION lsm_am.maintenance_progress() IS 'flushes, compactions, trivial moves, run rewrites, relocations and VACUUM passes running on lsm indexes of the current database (rows only for tables the caller may SELECT from)';

CREATE VIEW lsm_am.progress AS
    SELECT * FROM lsm_am.maintenance_progress();
COMMENT ON VIEW lsm_am.progress IS 'maintenance jobs running on lsm indexes of the current database, with pages done of total';
GRANT SELECT ON lsm_am.progress TO PUBLIC;

CREATE FUNCTION lsm_am.index_summary(index regclass,
    OUT policy text,
    OUT memtable_entries bigint,
    OUT memtable_bytes bigint,
    OUT memtable_fill double precision,
    OUT immutable_memtables integer,
    OUT runs_per_level integer[],
    OUT live_pages bigint,
    OUT total_pages bigint,
    OUT pending boolean,
    OUT running text,
    OUT flushes bigint,
    OUT compactions bigint,
    OUT last_flush timestamp with time zone,
    OUT last_compaction timestamp with time zone,
    OUT slowdowns bigint,
    OUT stops bigint,
    OUT stall_ms double precision)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'lsm_index_summary'
LANGUAGE C STRICT VOLATILE;
COMMENT ON FUNCTION lsm_am.index_summary(regclass) IS 'the lsm_am.indexes row of one lsm index (no row unless the caller may SELECT from its table); never loads the memtable';

CREATE VIEW lsm_am.indexes AS
    SELECT n.nspname AS schemaname, t.relname AS relname, c.relname AS indexrelname,
           i.indrelid::regclass AS relid, i.indexrelid::regclass AS indexrelid, s.*
    FROM pg_catalog.pg_index i
    JOIN pg_catalog.pg_class c ON c.oid = i.indexrelid
    JOIN pg_catalog.pg_class t ON t.oid = i.indrelid
    JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
    JOIN pg_catalog.pg_am a ON a.oid = c.relam
    CROSS JOIN LATERAL lsm_am.index_summary(i.indexrelid) s
    WHERE a.amname = 'lsm' AND c.relkind = 'i';
COMMENT ON VIEW lsm_am.indexes IS 'every lsm index of the current database whose table the caller may SELECT from: policy, memtable fill, runs per level, pages, pending and running work, last flush and compaction, stalls';
GRANT SELECT ON lsm_am.indexes TO PUBLIC;

CREATE FUNCTION lsm_am.table_indexes(tab regclass)
RETURNS SETOF lsm_am.indexes
AS $$
    SELECT x.* FROM lsm_am.indexes x
    WHERE x.relid OPERATOR(pg_catalog.=) tab
       OR x.relid IN (SELECT p.relid FROM pg_catalog.pg_partition_tree(tab) p)
    ORDER BY x.schemaname, x.relname, x.indexrelname
$$ LANGUAGE sql VOLATILE STRICT;
COMMENT ON FUNCTION lsm_am.table_indexes(regclass) IS 'the lsm_am.indexes rows of every lsm index on a table and, for a partitioned table, on each of its partitions';

CREATE FUNCTION lsm_am.reset_stats(index regclass)
RETURNS void
AS 'MODULE_PATHNAME', 'lsm_reset_stats'
LANGUAGE C STRICT;
COMMENT ON FUNCTION lsm_am.reset_stats(regclass) IS 'zero the counters an lsm index keeps in shared memory: stalls, backend flushes, WAL bytes, lookups (index owner only)';

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
