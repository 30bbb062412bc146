--
-- EXPLAIN ANALYZE under each clock source: the same rows, loops and
-- buffers as stock timing, and times that make sense.  No number that
-- depends on the machine or on timing appears in the output.
--
-- "tsc" is requested as try_tsc, so the suite runs the same on a machine
-- whose TSC is not usable; fasttime_guc covers that case's errors.
--
SET client_min_messages = warning;
SET jit = off;
SET max_parallel_workers_per_gather = 0;

CREATE TABLE ft_a (id int PRIMARY KEY, grp int, v text);
CREATE TABLE ft_b (id int, a_id int, w numeric);
INSERT INTO ft_a SELECT g, g % 17, md5(g::text) FROM generate_series(1, 20000) g;
INSERT INTO ft_b SELECT g, (g * 7) % 20000 + 1, g / 3.0 FROM generate_series(1, 60000) g;
CREATE INDEX ON ft_b (a_id);
CREATE TABLE ft_part (id int, k int) PARTITION BY RANGE (id);
CREATE TABLE ft_part_1 PARTITION OF ft_part FOR VALUES FROM (0) TO (10000);
CREATE TABLE ft_part_2 PARTITION OF ft_part FOR VALUES FROM (10000) TO (20001);
INSERT INTO ft_part SELECT g, g % 5 FROM generate_series(1, 20000) g;
VACUUM ANALYZE ft_a, ft_b, ft_part;

-- EXPLAIN (ANALYZE, FORMAT JSON) of a query under a clock source
CREATE FUNCTION ft_explain(query text, source text, opts text DEFAULT '')
RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE
	plan json;
BEGIN
	PERFORM set_config('fasttime.clock_source',
					   CASE source WHEN 'tsc' THEN 'try_tsc' ELSE source END, true);
	EXECUTE format('EXPLAIN (ANALYZE, COSTS OFF, FORMAT JSON%s) %s', opts, query)
		INTO plan;
	RETURN plan::jsonb -> 0;
END
$$;

-- drop what legitimately varies from run to run: times and memory, and
-- in parallel plans, buffer counts and per-node rows and loops (stock
-- timing does not repeat them either: they depend on which process got to
-- a page or a phase first, and a late worker may skip a node entirely;
-- the leader's share decides whether its sort spills)
CREATE FUNCTION ft_strip(j jsonb, parallel bool DEFAULT false)
RETURNS jsonb LANGUAGE sql IMMUTABLE AS $$
	SELECT CASE jsonb_typeof(j)
		WHEN 'object' THEN (
			SELECT coalesce(jsonb_object_agg(key, ft_strip(value, parallel)), '{}')
			  FROM jsonb_each(j)
			 WHERE key NOT IN ('Actual Startup Time', 'Actual Total Time',
							   'Planning Time', 'Execution Time', 'Planning',
							   'Peak Memory Usage', 'Sort Space Used',
							   'WAL Bytes', 'WAL FPI', 'Triggers',
							   -- per-worker details depend on how work was shared
							   'Workers')
			   AND NOT (parallel AND (key LIKE '% Blocks' OR
									  key IN ('Actual Rows', 'Actual Loops',
											  'Sort Method', 'Sort Space Type'))))
		WHEN 'array' THEN (
			SELECT coalesce(jsonb_agg(ft_strip(value, parallel) ORDER BY ord), '[]')
			  FROM jsonb_array_elements(j) WITH ORDINALITY AS e(value, ord))
		ELSE j END
$$;

-- every node of a plan, with its parent's times
CREATE FUNCTION ft_nodes(plan jsonb, parent jsonb DEFAULT NULL,
						 in_parallel bool DEFAULT false)
RETURNS TABLE(node jsonb, parent_node jsonb, parallel bool)
LANGUAGE sql AS $$
	SELECT plan, parent, in_parallel
	UNION ALL
	SELECT n.*
	  FROM jsonb_array_elements(coalesce(plan -> 'Plans', '[]')) AS c(child),
		   LATERAL ft_nodes(c.child, plan,
							in_parallel OR plan ->> 'Node Type' IN ('Gather', 'Gather Merge')) AS n
$$;

-- the time relations that must hold; returns the violations
CREATE FUNCTION ft_time_violations(result jsonb) RETURNS SETOF text
LANGUAGE sql AS $$
	-- every node: first tuple no later than the last
	SELECT format('%s: startup %s > total %s', node ->> 'Node Type',
				  node ->> 'Actual Startup Time', node ->> 'Actual Total Time')
	  FROM ft_nodes(result -> 'Plan')
	 WHERE (node ->> 'Actual Startup Time')::numeric >
		   (node ->> 'Actual Total Time')::numeric
	UNION ALL
	-- no negative times
	SELECT format('%s: negative time', node ->> 'Node Type')
	  FROM ft_nodes(result -> 'Plan')
	 WHERE (node ->> 'Actual Startup Time')::numeric < 0
	UNION ALL
	-- a child runs inside its parent's calls, so in one process the
	-- parent's time over all loops covers the child's (rounding allowed)
	SELECT format('%s (%s x %s) below %s (%s x %s)',
				  node ->> 'Node Type', node ->> 'Actual Total Time', node ->> 'Actual Loops',
				  parent_node ->> 'Node Type', parent_node ->> 'Actual Total Time',
				  parent_node ->> 'Actual Loops')
	  FROM ft_nodes(result -> 'Plan')
	 WHERE parent_node IS NOT NULL AND NOT parallel
	   AND node ->> 'Parent Relationship' IN ('Outer', 'Inner', 'Member')
	   AND (node ->> 'Actual Loops')::numeric > 0
	   AND (node ->> 'Actual Total Time')::numeric * (node ->> 'Actual Loops')::numeric >
		   (parent_node ->> 'Actual Total Time')::numeric * (parent_node ->> 'Actual Loops')::numeric
		   + 0.0005 * ((node ->> 'Actual Loops')::numeric + (parent_node ->> 'Actual Loops')::numeric) + 0.002
	UNION ALL
	-- the top node ends before the statement does
	SELECT format('top node %s ms > execution time %s ms',
				  result -> 'Plan' ->> 'Actual Total Time', result ->> 'Execution Time')
	 WHERE (result -> 'Plan' ->> 'Actual Total Time')::numeric >
		   (result ->> 'Execution Time')::numeric + 0.01
$$;

CREATE TABLE ft_queries (name text PRIMARY KEY, query text, parallel bool DEFAULT false);
INSERT INTO ft_queries VALUES
 ('seqscan agg', 'SELECT count(*) FROM ft_a', false),
 ('hash join', 'SELECT count(*) FROM ft_a JOIN ft_b ON ft_b.a_id = ft_a.id', false),
 ('merge join', 'SELECT count(*) FROM (SELECT * FROM ft_a ORDER BY id) a JOIN (SELECT * FROM ft_b ORDER BY a_id) b ON b.a_id = a.id', false),
 ('nested loop index', 'SELECT sum(b.w) FROM ft_a a JOIN ft_b b ON b.a_id = a.id WHERE a.id < 300', false),
 ('bitmap', 'SELECT count(*) FROM ft_b WHERE a_id < 500 OR a_id > 19500', false),
 ('subplan', 'SELECT id, (SELECT max(w) FROM ft_b WHERE ft_b.a_id = ft_a.id) FROM ft_a WHERE id <= 200', false),
 ('initplan', 'SELECT count(*) FROM ft_b WHERE w > (SELECT avg(w) FROM ft_b)', false),
 ('cte', 'WITH c AS MATERIALIZED (SELECT * FROM ft_a WHERE grp = 3) SELECT count(*) FROM c x JOIN c y ON x.id = y.id', false),
 ('window', 'SELECT grp, id, sum(id) OVER (PARTITION BY grp ORDER BY id) FROM ft_a ORDER BY grp, id LIMIT 50', false),
 ('sort limit', 'SELECT * FROM ft_b ORDER BY w DESC, id LIMIT 10', false),
 ('append', 'SELECT k, count(*) FROM ft_part GROUP BY k ORDER BY k', false),
 ('union', 'SELECT id FROM ft_a WHERE id < 10 UNION SELECT a_id FROM ft_b WHERE id < 10', false),
 ('semi join', 'SELECT count(*) FROM ft_a WHERE EXISTS (SELECT 1 FROM ft_b WHERE ft_b.a_id = ft_a.id AND ft_b.w > 100)', false),
 ('parallel seqscan', 'SELECT count(*) FROM ft_b WHERE w > 10', true),
 ('parallel hash join', 'SELECT count(*) FROM ft_a JOIN ft_b ON ft_b.a_id = ft_a.id', true),
 ('parallel gather merge', 'SELECT id FROM ft_b WHERE w > 5 ORDER BY w', true);

-- parallel plans are forced where asked for; a run that could not get all
-- its workers (the previous query's may still be exiting) is repeated
CREATE FUNCTION ft_run(q ft_queries, source text, opts text DEFAULT '')
RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE
	r jsonb;
BEGIN
	IF NOT q.parallel THEN
		SET LOCAL max_parallel_workers_per_gather = 0;
		RETURN ft_explain(q.query, source, opts);
	END IF;
	SET LOCAL max_parallel_workers_per_gather = 2;
	SET LOCAL parallel_setup_cost = 0;
	SET LOCAL parallel_tuple_cost = 0;
	SET LOCAL min_parallel_table_scan_size = 0;
	SET LOCAL parallel_leader_participation = on;
	FOR attempt IN 1 .. 50 LOOP
		r := ft_explain(q.query, source, opts);
		EXIT WHEN NOT EXISTS (
			SELECT FROM ft_nodes(r -> 'Plan') n
			 WHERE n.node ? 'Workers Planned'
			   AND n.node -> 'Workers Launched' <> n.node -> 'Workers Planned');
		PERFORM pg_sleep(0.02);
	END LOOP;
	RETURN r;
END
$$;

-- warm the caches, so hits and reads are the same in every later run
SELECT count(*) AS warmed FROM ft_queries q, LATERAL ft_run(q, 'clock_gettime', ', BUFFERS');

-- the same plan, rows, loops and buffers under two sources (for parallel
-- plans: the same plan and the same number of result rows)
CREATE FUNCTION ft_same(q ft_queries, source_a text, source_b text, opts text)
RETURNS bool LANGUAGE plpgsql AS $$
DECLARE
	a jsonb := ft_run(q, source_a, opts);
	b jsonb := ft_run(q, source_b, opts);
BEGIN
	RETURN ft_strip(a, q.parallel) = ft_strip(b, q.parallel)
		AND a -> 'Plan' -> 'Actual Rows' = b -> 'Plan' -> 'Actual Rows';
END
$$;

SELECT q.name,
	   ft_same(q, 'clock_gettime', 'tsc', ', BUFFERS') AS tsc_same,
	   ft_same(q, 'clock_gettime', 'auto', ', BUFFERS') AS auto_same,
	   ft_same(q, 'clock_gettime', 'tsc', ', BUFFERS, TIMING OFF') AS timing_off_same
  FROM ft_queries q ORDER BY q.name;

-- parallel plans did run in parallel, with all workers
SELECT q.name, n.node ->> 'Workers Planned' AS planned, n.node ->> 'Workers Launched' AS launched
  FROM ft_queries q, LATERAL ft_nodes(ft_run(q, 'tsc') -> 'Plan') n
 WHERE q.parallel AND n.node ->> 'Node Type' IN ('Gather', 'Gather Merge')
 ORDER BY q.name;

-- times make sense under every source
SELECT q.name, s.source, v AS violation
  FROM ft_queries q,
	   unnest(ARRAY['clock_gettime', 'tsc', 'auto']) AS s(source),
	   LATERAL ft_time_violations(ft_run(q, s.source)) AS v
 ORDER BY 1, 2, 3;

-- every timed node reports a time, workers' nodes included
SELECT q.name, count(*) FILTER (WHERE n.node ? 'Actual Total Time') = count(*) AS all_timed
  FROM ft_queries q, LATERAL ft_nodes(ft_run(q, 'tsc') -> 'Plan') n
 GROUP BY q.name ORDER BY q.name;

-- a node that sleeps reads the slept time: at least 100 ms, and within the
-- statement's own execution time
SELECT s.source,
	   (r -> 'Plan' ->> 'Actual Total Time')::numeric >= 99.9 AS slept_enough,
	   (r -> 'Plan' ->> 'Actual Total Time')::numeric <=
	   (r ->> 'Execution Time')::numeric + 0.01 AS within_execution,
	   (r -> 'Plan' ->> 'Actual Total Time')::numeric >=
	   0.97 * (r ->> 'Execution Time')::numeric AS close_to_execution
  FROM unnest(ARRAY['clock_gettime', 'tsc']) AS s(source),
	   LATERAL ft_explain('SELECT pg_sleep(0.1)', s.source) AS r
 ORDER BY 1;

-- three 30 ms sleeps inside a function scan's projection
SELECT s.source,
	   (r -> 'Plan' ->> 'Actual Total Time')::numeric >= 89.9 AS slept_enough
  FROM unnest(ARRAY['clock_gettime', 'tsc']) AS s(source),
	   LATERAL ft_explain('SELECT pg_sleep(0.03) FROM generate_series(1, 3)', s.source) AS r
 ORDER BY 1;

-- WAL usage is reported as stock reports it (rolled back each time)
BEGIN;
SELECT (ft_explain('INSERT INTO ft_b SELECT g, 1, 0 FROM generate_series(1, 100) g',
				   'tsc', ', WAL') -> 'Plan' ->> 'WAL Records')::int >= 100 AS wal_records_counted;
ROLLBACK;
BEGIN;
CREATE TABLE ft_w (i int, t text);
SELECT ft_explain('INSERT INTO ft_w SELECT g, repeat(''x'', 50) FROM generate_series(1, 500) g',
				  'clock_gettime', ', WAL') -> 'Plan' -> 'WAL Records' AS wal_stock \gset
ROLLBACK;
BEGIN;
CREATE TABLE ft_w (i int, t text);
SELECT ft_explain('INSERT INTO ft_w SELECT g, repeat(''x'', 50) FROM generate_series(1, 500) g',
				  'tsc', ', WAL') -> 'Plan' -> 'WAL Records' AS wal_tsc \gset
ROLLBACK;
SELECT :wal_stock = :wal_tsc AS wal_same;

-- the text format hides nothing: same lines with the numbers masked
CREATE FUNCTION ft_text(query text, source text) RETURNS SETOF text
LANGUAGE plpgsql AS $$
DECLARE
	ln text;
BEGIN
	PERFORM set_config('fasttime.clock_source',
					   CASE source WHEN 'tsc' THEN 'try_tsc' ELSE source END, true);
	-- the same on every version: 18 shows buffers unless told not to,
	-- prints rows with two decimals, and adds Index Searches
	FOR ln IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, SUMMARY OFF, BUFFERS OFF) ' || query LOOP
		CONTINUE WHEN ln ~ '^ *Index Searches: ';
		ln := regexp_replace(ln, '(rows=[0-9]+)\.00 ', '\1 ');
		RETURN NEXT regexp_replace(ln, 'actual time=[0-9.]+\.\.[0-9.]+', 'actual time=N..N');
	END LOOP;
END
$$;
SELECT * FROM ft_text('SELECT count(*) FROM ft_a JOIN ft_b ON ft_b.a_id = ft_a.id WHERE ft_a.grp = 1', 'tsc');
SELECT (SELECT array_agg(l) FROM ft_text('SELECT count(*) FROM ft_a JOIN ft_b ON ft_b.a_id = ft_a.id WHERE ft_a.grp = 1', 'tsc') l)
     = (SELECT array_agg(l) FROM ft_text('SELECT count(*) FROM ft_a JOIN ft_b ON ft_b.a_id = ft_a.id WHERE ft_a.grp = 1', 'clock_gettime') l)
  AS text_same;

-- fasttime_status() counts the nodes of the latest TSC-timed query: every
-- node of the plan, when the TSC is in effect
SET fasttime.clock_source = try_tsc;
SELECT ft_explain('SELECT count(*) FROM ft_a JOIN ft_b ON ft_b.a_id = ft_a.id', 'tsc') AS r \gset
SELECT (SELECT value::int FROM fasttime_status() WHERE name = 'tsc_timed_nodes_last_query') =
	   (SELECT count(*) FROM ft_nodes((:'r'::jsonb) -> 'Plan'))
	   OR current_setting('fasttime.clock_source_status') = 'clock_gettime' AS all_nodes_tsc_timed;
SELECT (SELECT value::int FROM fasttime_status() WHERE name = 'tsc_disagreements') = 0
	   AS no_clock_disagreements;

RESET fasttime.clock_source;
DROP FUNCTION ft_same, ft_run, ft_explain, ft_strip, ft_nodes, ft_time_violations, ft_text;
DROP TABLE ft_queries, ft_a, ft_b, ft_part;
