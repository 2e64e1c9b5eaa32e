-- lsm_setup: run first (REGRESS in the Makefile, tests/run_all.sh): the
-- extension, and the helpers the other tests share, in schema public.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS lsm_am;
RESET client_min_messages;

-- lsm_check(query): run the query with only index scans allowed and check
-- that the plan scans at least one lsm index; run it again with index scans
-- disabled (seqscan + sort) and compare the two row lists, in order.
-- Returns 'ok (N rows)' or a description of the difference.
CREATE FUNCTION lsm_check(q text) RETURNS text LANGUAGE plpgsql AS $f$
DECLARE
    plan text := '';
    line text;
    got text;
    want text;
    n bigint;
BEGIN
    PERFORM set_config('enable_seqscan', 'off', true);
    PERFORM set_config('enable_bitmapscan', 'off', true);
    PERFORM set_config('enable_indexscan', 'on', true);
    PERFORM set_config('enable_indexonlyscan', 'on', true);
    FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
        plan := plan || line || E'\n';
    END LOOP;
    IF NOT EXISTS (
        SELECT FROM regexp_matches(plan, 'Index (?:Only )?Scan (?:Backward )?using (\S+)', 'g') m
        JOIN pg_class c ON c.relname = m[1] AND c.relkind = 'i'
        JOIN pg_am a ON a.oid = c.relam AND a.amname = 'lsm') THEN
        RETURN 'lsm index not used: ' || plan;
    END IF;
    EXECUTE format('SELECT count(*), string_agg(x::text, %L) FROM (%s) x', '|', q)
        INTO n, got;
    PERFORM set_config('enable_seqscan', 'on', true);
    PERFORM set_config('enable_indexscan', 'off', true);
    PERFORM set_config('enable_indexonlyscan', 'off', true);
    EXECUTE format('SELECT string_agg(x::text, %L) FROM (%s) x', '|', q) INTO want;
    PERFORM set_config('enable_seqscan', 'on', true);
    PERFORM set_config('enable_bitmapscan', 'on', true);
    PERFORM set_config('enable_indexscan', 'on', true);
    PERFORM set_config('enable_indexonlyscan', 'on', true);
    IF got IS DISTINCT FROM want THEN
        RETURN 'MISMATCH lsm: ' || coalesce(got, '<none>') || ' expected: ' || coalesce(want, '<none>');
    END IF;
    RETURN 'ok (' || n || ' rows)';
END
$f$;
