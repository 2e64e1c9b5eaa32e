/* lsm_am--0.5.sql — install script of the lsm_am extension */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION lsm_am" to load this file. \quit

CREATE SCHEMA lsm_am;
COMMENT ON SCHEMA lsm_am IS 'functions and operator classes of the lsm index access method';
-- Every role may name the operator classes and call the functions; each
-- function checks its own privileges (index owner, or SELECT on the table).
GRANT USAGE ON SCHEMA lsm_am TO PUBLIC;

-- ------------------------------------------------------------------------
-- Access method
-- ------------------------------------------------------------------------
CREATE FUNCTION lsm_am.lsm_handler(internal)
RETURNS index_am_handler
AS 'MODULE_PATHNAME', 'lsm_handler'
LANGUAGE C;

CREATE ACCESS METHOD lsm TYPE INDEX HANDLER lsm_am.lsm_handler;
COMMENT ON ACCESS METHOD lsm IS 'LSM-tree index: inserts go to a shared-memory memtable and are merged into sorted runs';

-- ------------------------------------------------------------------------
-- Functions
-- ------------------------------------------------------------------------
CREATE FUNCTION lsm_am.flush(index regclass)
RETURNS void
AS 'MODULE_PATHNAME', 'lsm_flush'
LANGUAGE C STRICT;
COMMENT ON FUNCTION lsm_am.flush(regclass) IS 'write the memtable of an lsm index out as a sorted run (index owner only)';

CREATE FUNCTION lsm_am.index_stats(index regclass,
    OUT memtable_entries bigint,
    OUT memtable_bytes bigint,
    OUT runs integer,
    OUT run_entries bigint,
    OUT log_pages bigint,
    OUT total_pages bigint)
RETURNS record
AS 'MODULE_PATHNAME', 'lsm_index_stats'
LANGUAGE C STRICT;
COMMENT ON FUNCTION lsm_am.index_stats(regclass) IS 'memtable, run and page counts of an lsm index';

CREATE FUNCTION lsm_am.compact(index regclass)
RETURNS void
AS 'MODULE_PATHNAME', 'lsm_compact'
LANGUAGE C STRICT;
COMMENT ON FUNCTION lsm_am.compact(regclass) IS 'flush the memtable and merge every sorted run of an lsm index into one (index owner only)';

CREATE FUNCTION lsm_am.index_info(index regclass,
    OUT level integer,
    OUT run_id bigint,
    OUT entries bigint,
    OUT pages bigint,
    OUT smallest_key text,
    OUT largest_key text)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'lsm_index_info'
LANGUAGE C STRICT;
COMMENT ON FUNCTION lsm_am.index_info(regclass) IS 'one row per sorted run of an lsm index: level, id, live entries, pages, smallest and largest key';

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
    OUT leaked_pages bigint,
    OUT file_pages bigint,
    OUT space_amplification double precision,
    OUT pages_written_per_level bigint[],
    OUT write_amplification double precision)
RETURNS record
AS 'MODULE_PATHNAME', 'lsm_maintenance_stats'
LANGUAGE C STRICT;
COMMENT ON FUNCTION lsm_am.maintenance_stats(regclass) IS 'flushes, compactions, write stalls, WAL, space amplification (file pages / live pages) and write amplification (run pages written into each level, all of them per page flushed) of an lsm index (stall, WAL and per-level counters since the server started)';

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

-- ------------------------------------------------------------------------
-- Operator classes: btree's operators (strategies 1-5: < <= = >= >) and
-- btree's comparison function (support 1), so the planner sees the order.
-- The order lsm actually uses is that of the key encoding (src/lsmkey.c,
-- doc/key_encoding.md), which matches these functions exactly.  Cross-type
-- operators exist only where the types share an encoding: int2/int4/int8
-- and float4/float8.  varchar columns use text_ops.
-- ------------------------------------------------------------------------

-- integer_ops: int2, int4, int8 (one key domain: int64)
CREATE OPERATOR FAMILY lsm_am.integer_ops USING lsm;

CREATE OPERATOR CLASS lsm_am.int2_ops
    DEFAULT FOR TYPE int2 USING lsm FAMILY lsm_am.integer_ops AS
        OPERATOR 1 pg_catalog.<,
        OPERATOR 2 pg_catalog.<=,
        OPERATOR 3 pg_catalog.=,
        OPERATOR 4 pg_catalog.>=,
        OPERATOR 5 pg_catalog.>,
        FUNCTION 1 pg_catalog.btint2cmp(int2, int2);

CREATE OPERATOR CLASS lsm_am.int4_ops
    DEFAULT FOR TYPE int4 USING lsm FAMILY lsm_am.integer_ops AS
        OPERATOR 1 pg_catalog.<,
        OPERATOR 2 pg_catalog.<=,
        OPERATOR 3 pg_catalog.=,
        OPERATOR 4 pg_catalog.>=,
        OPERATOR 5 pg_catalog.>,
        FUNCTION 1 pg_catalog.btint4cmp(int4, int4);

CREATE OPERATOR CLASS lsm_am.int8_ops
    DEFAULT FOR TYPE int8 USING lsm FAMILY lsm_am.integer_ops AS
        OPERATOR 1 pg_catalog.<,
        OPERATOR 2 pg_catalog.<=,
        OPERATOR 3 pg_catalog.=,
        OPERATOR 4 pg_catalog.>=,
        OPERATOR 5 pg_catalog.>,
        FUNCTION 1 pg_catalog.btint8cmp(int8, int8);

ALTER OPERATOR FAMILY lsm_am.integer_ops USING lsm ADD
    OPERATOR 1 pg_catalog.< (int2, int4),
    OPERATOR 2 pg_catalog.<= (int2, int4),
    OPERATOR 3 pg_catalog.= (int2, int4),
    OPERATOR 4 pg_catalog.>= (int2, int4),
    OPERATOR 5 pg_catalog.> (int2, int4),
    FUNCTION 1 (int2, int4) pg_catalog.btint24cmp(int2, int4),
    OPERATOR 1 pg_catalog.< (int2, int8),
    OPERATOR 2 pg_catalog.<= (int2, int8),
    OPERATOR 3 pg_catalog.= (int2, int8),
    OPERATOR 4 pg_catalog.>= (int2, int8),
    OPERATOR 5 pg_catalog.> (int2, int8),
    FUNCTION 1 (int2, int8) pg_catalog.btint28cmp(int2, int8),
    OPERATOR 1 pg_catalog.< (int4, int2),
    OPERATOR 2 pg_catalog.<= (int4, int2),
    OPERATOR 3 pg_catalog.= (int4, int2),
    OPERATOR 4 pg_catalog.>= (int4, int2),
    OPERATOR 5 pg_catalog.> (int4, int2),
    FUNCTION 1 (int4, int2) pg_catalog.btint42cmp(int4, int2),
    OPERATOR 1 pg_catalog.< (int4, int8),
    OPERATOR 2 pg_catalog.<= (int4, int8),
    OPERATOR 3 pg_catalog.= (int4, int8),
    OPERATOR 4 pg_catalog.>= (int4, int8),
    OPERATOR 5 pg_catalog.> (int4, int8),
    FUNCTION 1 (int4, int8) pg_catalog.btint48cmp(int4, int8),
    OPERATOR 1 pg_catalog.< (int8, int2),
    OPERATOR 2 pg_catalog.<= (int8, int2),
    OPERATOR 3 pg_catalog.= (int8, int2),
    OPERATOR 4 pg_catalog.>= (int8, int2),
    OPERATOR 5 pg_catalog.> (int8, int2),
    FUNCTION 1 (int8, int2) pg_catalog.btint82cmp(int8, int2),
    OPERATOR 1 pg_catalog.< (int8, int4),
    OPERATOR 2 pg_catalog.<= (int8, int4),
    OPERATOR 3 pg_catalog.= (int8, int4),
    OPERATOR 4 pg_catalog.>= (int8, int4),
    OPERATOR 5 pg_catalog.> (int8, int4),
    FUNCTION 1 (int8, int4) pg_catalog.btint84cmp(int8, int4);

-- float_ops: float4, float8 (one key domain: float8)
CREATE OPERATOR FAMILY lsm_am.float_ops USING lsm;

CREATE OPERATOR CLASS lsm_am.float4_ops
    DEFAULT FOR TYPE float4 USING lsm FAMILY lsm_am.float_ops AS
        OPERATOR 1 pg_catalog.<,
        OPERATOR 2 pg_catalog.<=,
        OPERATOR 3 pg_catalog.=,
        OPERATOR 4 pg_catalog.>=,
        OPERATOR 5 pg_catalog.>,
        FUNCTION 1 pg_catalog.btfloat4cmp(float4, float4);

CREATE OPERATOR CLASS lsm_am.float8_ops
    DEFAULT FOR TYPE float8 USING lsm FAMILY lsm_am.float_ops AS
        OPERATOR 1 pg_catalog.<,
        OPERATOR 2 pg_catalog.<=,
        OPERATOR 3 pg_catalog.=,
        OPERATOR 4 pg_catalog.>=,
        OPERATOR 5 pg_catalog.>,
        FUNCTION 1 pg_catalog.btfloat8cmp(float8, float8);

ALTER OPERATOR FAMILY lsm_am.float_ops USING lsm ADD
    OPERATOR 1 pg_catalog.< (float4, float8),
    OPERATOR 2 pg_catalog.<= (float4, float8),
    OPERATOR 3 pg_catalog.= (float4, float8),
    OPERATOR 4 pg_catalog.>= (float4, float8),
    OPERATOR 5 pg_catalog.> (float4, float8),
    FUNCTION 1 (float4, float8) pg_catalog.btfloat48cmp(float4, float8),
    OPERATOR 1 pg_catalog.< (float8, float4),
    OPERATOR 2 pg_catalog.<= (float8, float4),
    OPERATOR 3 pg_catalog.= (float8, float4),
    OPERATOR 4 pg_catalog.>= (float8, float4),
    OPERATOR 5 pg_catalog.> (float8, float4),
    FUNCTION 1 (float8, float4) pg_catalog.btfloat84cmp(float8, float4);

-- One type per family (date, timestamp and timestamptz have no cross-type
-- operators: their encodings are different domains).
CREATE OPERATOR CLASS lsm_am.numeric_ops
    DEFAULT FOR TYPE numeric USING lsm AS
        OPERATOR 1 pg_catalog.<,
        OPERATOR 2 pg_catalog.<=,
        OPERATOR 3 pg_catalog.=,
        OPERATOR 4 pg_catalog.>=,
        OPERATOR 5 pg_catalog.>,
        FUNCTION 1 pg_catalog.numeric_cmp(numeric, numeric);

CREATE OPERATOR CLASS lsm_am.bool_ops
    DEFAULT FOR TYPE bool USING lsm AS
        OPERATOR 1 pg_catalog.<,
        OPERATOR 2 pg_catalog.<=,
        OPERATOR 3 pg_catalog.=,
        OPERATOR 4 pg_catalog.>=,
        OPERATOR 5 pg_catalog.>,
        FUNCTION 1 pg_catalog.btboolcmp(bool, bool);

CREATE OPERATOR CLASS lsm_am.date_ops
    DEFAULT FOR TYPE date USING lsm AS
        OPERATOR 1 pg_catalog.<,
        OPERATOR 2 pg_catalog.<=,
        OPERATOR 3 pg_catalog.=,
        OPERATOR 4 pg_catalog.>=,
        OPERATOR 5 pg_catalog.>,
        FUNCTION 1 pg_catalog.date_cmp(date, date);

CREATE OPERATOR CLASS lsm_am.time_ops
    DEFAULT FOR TYPE time USING lsm AS
        OPERATOR 1 pg_catalog.<,
        OPERATOR 2 pg_catalog.<=,
        OPERATOR 3 pg_catalog.=,
        OPERATOR 4 pg_catalog.>=,
        OPERATOR 5 pg_catalog.>,
        FUNCTION 1 pg_catalog.time_cmp(time, time);

CREATE OPERATOR CLASS lsm_am.timestamp_ops
    DEFAULT FOR TYPE timestamp USING lsm AS
        OPERATOR 1 pg_catalog.<,
        OPERATOR 2 pg_catalog.<=,
        OPERATOR 3 pg_catalog.=,
        OPERATOR 4 pg_catalog.>=,
        OPERATOR 5 pg_catalog.>,
        FUNCTION 1 pg_catalog.timestamp_cmp(timestamp, timestamp);

CREATE OPERATOR CLASS lsm_am.timestamptz_ops
    DEFAULT FOR TYPE timestamptz USING lsm AS
        OPERATOR 1 pg_catalog.<,
        OPERATOR 2 pg_catalog.<=,
        OPERATOR 3 pg_catalog.=,
        OPERATOR 4 pg_catalog.>=,
        OPERATOR 5 pg_catalog.>,
        FUNCTION 1 pg_catalog.timestamptz_cmp(timestamptz, timestamptz);

CREATE OPERATOR CLASS lsm_am.interval_ops
    DEFAULT FOR TYPE interval USING lsm AS
        OPERATOR 1 pg_catalog.<,
        OPERATOR 2 pg_catalog.<=,
        OPERATOR 3 pg_catalog.=,
        OPERATOR 4 pg_catalog.>=,
        OPERATOR 5 pg_catalog.>,
        FUNCTION 1 pg_catalog.interval_cmp(interval, interval);

CREATE OPERATOR CLASS lsm_am.uuid_ops
    DEFAULT FOR TYPE uuid USING lsm AS
        OPERATOR 1 pg_catalog.<,
        OPERATOR 2 pg_catalog.<=,
        OPERATOR 3 pg_catalog.=,
        OPERATOR 4 pg_catalog.>=,
        OPERATOR 5 pg_catalog.>,
        FUNCTION 1 pg_catalog.uuid_cmp(uuid, uuid);

CREATE OPERATOR CLASS lsm_am.text_ops
    DEFAULT FOR TYPE text USING lsm AS
        OPERATOR 1 pg_catalog.<,
        OPERATOR 2 pg_catalog.<=,
        OPERATOR 3 pg_catalog.=,
        OPERATOR 4 pg_catalog.>=,
        OPERATOR 5 pg_catalog.>,
        FUNCTION 1 pg_catalog.bttextcmp(text, text);

CREATE OPERATOR CLASS lsm_am.bytea_ops
    DEFAULT FOR TYPE bytea USING lsm AS
        OPERATOR 1 pg_catalog.<,
        OPERATOR 2 pg_catalog.<=,
        OPERATOR 3 pg_catalog.=,
        OPERATOR 4 pg_catalog.>=,
        OPERATOR 5 pg_catalog.>,
        FUNCTION 1 pg_catalog.byteacmp(bytea, bytea);

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
COMMENT ON FUNCTION lsm_am.reset_stats(regclass) IS 'zero the counters an lsm index keeps in shared memory: stalls, backend flushes, WAL bytes, pages written per level, lookups (index owner only)';

-- ------------------------------------------------------------------------
-- Verification and page inspection (issue 15).  As amcheck and
-- pageinspect: verify is for superusers unless granted; the inspection
-- functions check for a superuser themselves as well.
-- ------------------------------------------------------------------------
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
