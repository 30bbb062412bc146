--
-- fasttime_profile_error: the error bars of profiled node times in EXPLAIN
-- (ANALYZE, CLOCK_SOURCE).  PostgreSQL 18 and later only (the per-node
-- EXPLAIN hook; the Makefile adds this test there).
--
-- Times and tick counts differ from run to run: every check is a relation
-- (ticks taken, an error above zero and below the node's time), never a
-- number.
--
SET client_min_messages = warning;
SET jit = off;
SET max_parallel_workers_per_gather = 0;
SET fasttime.clock_source = try_tsc;

CREATE TABLE ft_pe (id int, v text);
INSERT INTO ft_pe SELECT g, md5(g::text) FROM generate_series(1, 100000) g;
VACUUM ANALYZE ft_pe;

-- a run of a few hundred ms: a Seq Scan hashing each row under a Sort
-- that orders the hashes, under an Aggregate; each holds a share of it
CREATE FUNCTION ft_pe_query() RETURNS text LANGUAGE sql AS $$
	SELECT 'SELECT count(*) FROM (SELECT md5(md5(md5(v))) m FROM ft_pe ORDER BY 1) s'
$$;

-- EXPLAIN with options, as text lines
CREATE FUNCTION ft_pe_lines(opts text, query text DEFAULT ft_pe_query())
RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
	ln text;
BEGIN
	FOR ln IN EXECUTE format('EXPLAIN (%s) %s', opts, query) LOOP
		RETURN QUERY SELECT regexp_split_to_table(ln, E'\n');
	END LOOP;
END
$$;

-- EXPLAIN (ANALYZE, CLOCK_SOURCE, FORMAT JSON): the plan's nodes
CREATE FUNCTION ft_pe_nodes(opts text DEFAULT 'ANALYZE, CLOCK_SOURCE',
							query text DEFAULT ft_pe_query())
RETURNS TABLE(node_type text, total_ms float8, ticks bigint, error_ms float8,
			  has_ticks bool, has_error bool, under_hash bool)
LANGUAGE plpgsql AS $$
DECLARE
	plan jsonb;
BEGIN
	EXECUTE format('EXPLAIN (%s, FORMAT JSON) %s', opts, query) INTO plan;
	RETURN QUERY
	WITH RECURSIVE n(p, h) AS (
		SELECT plan -> 0 -> 'Plan', false
		UNION ALL
		SELECT c, n.h OR n.p ->> 'Node Type' = 'Hash'
		FROM n, jsonb_array_elements(n.p -> 'Plans') c
	)
	SELECT p ->> 'Node Type', (p ->> 'Actual Total Time')::float8,
		   (p ->> 'Profile Ticks')::bigint, (p ->> 'Profile Error')::float8,
		   p ? 'Profile Ticks', p ? 'Profile Error', h
	FROM n;
END
$$;

--
-- profiled from the first tick on
--
SET fasttime.node_timing = profile;
SET fasttime.profile_after = 0;

-- every node of the long run took ticks; the Seq Scan, which holds part
-- of the time, has an error above zero and below its time; no node's
-- error reaches its time
SELECT node_type, ticks > 0 AS took_ticks,
	   error_ms >= 0 AND error_ms < total_ms AS error_below_time
  FROM ft_pe_nodes();
SELECT error_ms > 0 AS scan_error_above_zero,
	   error_ms < total_ms AS scan_error_below_time
  FROM ft_pe_nodes() WHERE node_type = 'Seq Scan';

-- a Hash, which the executor runs through MultiExecProcNode, is timed
-- through its child's calls: the Hash and the scan below it, which does
-- the md5 work, take ticks like any node, the scan reads no longer than
-- the Hash, and the Hash Join above has its line too
SELECT count(*) FILTER (WHERE under_hash) AS nodes_under_hash,
	   bool_and(has_ticks AND has_error) FILTER (WHERE under_hash OR node_type = 'Hash') AS build_side_lines,
	   max(total_ms) FILTER (WHERE under_hash) <=
	   max(total_ms) FILTER (WHERE node_type = 'Hash') AS scan_within_hash,
	   bool_or(node_type = 'Hash Join' AND ticks > 0) AS join_took_ticks
  FROM ft_pe_nodes('ANALYZE, CLOCK_SOURCE',
				   'SELECT count(*) FROM ft_pe a JOIN ft_pe b USING (id) WHERE md5(md5(md5(b.v))) > $$a$$');

-- the text line: one per node that took ticks
SELECT count(*) FILTER (WHERE l ~ '^\s*(->\s*)?Profile: [0-9]+ ticks?, \+-[0-9]+\.[0-9]{3} ms$') AS profile_lines,
	   count(*) FILTER (WHERE l LIKE '%Profile:%') AS any_profile_lines
  FROM ft_pe_lines('ANALYZE, CLOCK_SOURCE, COSTS OFF, BUFFERS OFF') l;

-- YAML and XML carry the same properties
SELECT count(*) FILTER (WHERE l ~ '^\s*Profile Ticks: [0-9]+$') AS yaml_ticks,
	   count(*) FILTER (WHERE l ~ '^\s*Profile Error: [0-9]+\.[0-9]{3}$') AS yaml_errors
  FROM ft_pe_lines('ANALYZE, CLOCK_SOURCE, FORMAT YAML') l;
SELECT count(*) FILTER (WHERE l ~ '<Profile-Ticks>[0-9]+</Profile-Ticks>') AS xml_ticks,
	   count(*) FILTER (WHERE l ~ '<Profile-Error>[0-9]+\.[0-9]{3}</Profile-Error>') AS xml_errors
  FROM ft_pe_lines('ANALYZE, CLOCK_SOURCE, FORMAT XML') l;

-- nothing unless asked: without CLOCK_SOURCE, with CLOCK_SOURCE false,
-- without ANALYZE
SELECT count(*) FILTER (WHERE has_ticks OR has_error) AS without_clock_source
  FROM ft_pe_nodes('ANALYZE');
SELECT count(*) FILTER (WHERE has_ticks OR has_error) AS clock_source_false
  FROM ft_pe_nodes('ANALYZE, CLOCK_SOURCE false');
SELECT count(*) FILTER (WHERE l LIKE '%Profile%') AS without_analyze
  FROM ft_pe_lines('COSTS OFF') l;

-- profiled timing's exact calls read the TSC in order, whatever
-- fasttime.ordered_reads says: the Timing Source line says so when the
-- TSC timed the plan
SET fasttime.ordered_reads = off;
SELECT bool_and((l LIKE '%; ordered reads)') =
				(current_setting('fasttime.clock_source_status') = 'tsc')) AS profiled_ordered_reads
  FROM ft_pe_lines('ANALYZE, CLOCK_SOURCE, COSTS OFF, BUFFERS OFF, SUMMARY OFF') l
 WHERE l LIKE 'Timing Source:%';
RESET fasttime.ordered_reads;

-- a run timed exactly throughout, profiled timing asked for but the run
-- shorter than the exact prefix: no error bars
SET fasttime.profile_after = '10s';
SELECT count(*) FILTER (WHERE has_ticks OR has_error) AS exact_prefix_only
  FROM ft_pe_nodes();
RESET fasttime.profile_after;

-- exact timing: no error bars
SET fasttime.node_timing = exact;
SELECT count(*) FILTER (WHERE has_ticks OR has_error) AS exact_timing
  FROM ft_pe_nodes();

RESET fasttime.node_timing;
RESET fasttime.clock_source;
DROP FUNCTION ft_pe_query, ft_pe_lines, ft_pe_nodes;
DROP TABLE ft_pe;
