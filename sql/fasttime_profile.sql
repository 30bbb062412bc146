-- fasttime_profile: profiled node timing (fasttime.node_timing = profile).
-- Times differ from run to run, so every check below is a relation that
-- holds whatever the machine: known waits land on the node that waits,
-- a parent is never shorter than its child, rows and loops are stock's.
SET client_min_messages = warning;
SET max_parallel_workers_per_gather = 0;
SET jit = off;
SET fasttime.clock_source = try_tsc;

-- a wait the backend spends inside whatever node evaluates it
CREATE FUNCTION ft_prof_sleep(s float8) RETURNS bool LANGUAGE plpgsql AS $$
BEGIN
	PERFORM pg_sleep(s);
	RETURN true;
END $$;

-- EXPLAIN (ANALYZE, FORMAT JSON) of a statement
CREATE FUNCTION ft_prof_plan(stmt text) RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE
	j jsonb;
BEGIN
	EXECUTE 'EXPLAIN (ANALYZE, BUFFERS OFF, FORMAT JSON) ' || stmt INTO j;
	RETURN j -> 0;
END $$;

-- every plan node with its parent's inclusive time (loops times per loop)
CREATE FUNCTION ft_prof_nodes(plan jsonb)
RETURNS TABLE(node_type text, total_ms float8, parent_ms float8, startup_ms float8,
			  per_loop_ms float8, node_rows float8, loops float8)
LANGUAGE sql AS $$
	WITH RECURSIVE n(p, parent_total) AS (
		SELECT plan -> 'Plan', NULL::float8
		UNION ALL
		SELECT c, (n.p ->> 'Actual Total Time')::float8 * (n.p ->> 'Actual Loops')::float8
		FROM n, jsonb_array_elements(n.p -> 'Plans') c
	)
	SELECT p ->> 'Node Type',
		   (p ->> 'Actual Total Time')::float8 * (p ->> 'Actual Loops')::float8,
		   parent_total,
		   (p ->> 'Actual Startup Time')::float8,
		   (p ->> 'Actual Total Time')::float8,
		   (p ->> 'Actual Rows')::float8,
		   (p ->> 'Actual Loops')::float8
	FROM n
$$;

-- the plan without its times: what must be the same as stock's
CREATE FUNCTION ft_prof_untimed(plan jsonb) RETURNS text LANGUAGE sql AS $$
	SELECT string_agg(format('%s %s %s %s', p ->> 'Node Type', p ->> 'Actual Rows',
							 p ->> 'Actual Loops', coalesce(p ->> 'Rows Removed by Filter', '')),
					  ' | ')
	FROM (
		WITH RECURSIVE n(p) AS (
			SELECT plan -> 'Plan'
			UNION ALL
			SELECT c FROM n, jsonb_array_elements(n.p -> 'Plans') c
		)
		SELECT p FROM n
	) s
$$;

-- a profiled run from its first tick on
SET fasttime.node_timing = profile;
SET fasttime.profile_after = 0;
SHOW fasttime.node_timing;
SHOW fasttime.profile_interval;

-- 20 waits of 10 ms in the Function Scan's filter: the scan holds them,
-- the Aggregate above it adds next to nothing, and Execution Time holds
-- everything
CREATE TEMP TABLE r AS
SELECT ft_prof_plan('SELECT count(*) FROM generate_series(1, 20) g WHERE ft_prof_sleep(0.01)') AS j;
SELECT n.node_type, n.total_ms >= 190 AS holds_the_waits,
	   n.parent_ms IS NULL OR n.parent_ms >= n.total_ms AS within_parent,
	   n.startup_ms <= n.per_loop_ms AS startup_within_total
FROM r, ft_prof_nodes(r.j) n;
SELECT (j ->> 'Execution Time')::float8 >= (j -> 'Plan' ->> 'Actual Total Time')::float8 AS within_execution,
	   (j -> 'Plan' ->> 'Actual Total Time')::float8 -
	   (j -> 'Plan' -> 'Plans' -> 0 ->> 'Actual Total Time')::float8 < 20 AS aggregate_adds_little
FROM r;
DROP TABLE r;

-- the same with the clock_gettime clock
SET fasttime.clock_source = clock_gettime;
CREATE TEMP TABLE r AS
SELECT ft_prof_plan('SELECT count(*) FROM generate_series(1, 20) g WHERE ft_prof_sleep(0.01)') AS j;
SELECT n.node_type, n.total_ms >= 190 AS holds_the_waits,
	   n.parent_ms IS NULL OR n.parent_ms >= n.total_ms AS within_parent
FROM r, ft_prof_nodes(r.j) n;
DROP TABLE r;
SET fasttime.clock_source = try_tsc;

-- waits in the aggregate's argument are the Aggregate's own time
CREATE TEMP TABLE r AS
SELECT ft_prof_plan('SELECT count(ft_prof_sleep(0.01)) FROM generate_series(1, 20) g') AS j;
SELECT (j -> 'Plan' ->> 'Actual Total Time')::float8 -
	   (j -> 'Plan' -> 'Plans' -> 0 ->> 'Actual Total Time')::float8 >= 190 AS aggregate_holds_the_waits,
	   (j -> 'Plan' -> 'Plans' -> 0 ->> 'Actual Total Time')::float8 < 20 AS scan_holds_little
FROM r;
DROP TABLE r;

-- a hash join's probe side: CPU work in the probe scan's filter, spread
-- over many short calls, is the scan's (the join credits the time up to
-- its return only in the call in which its Hash ran, else every return
-- would take the probe's time since the last tick: about all of it)
CREATE TABLE ft_prof_probe AS SELECT g AS id FROM generate_series(1, 100000) g;
CREATE TABLE ft_prof_build AS SELECT g AS id FROM generate_series(1, 2000) g;
ANALYZE ft_prof_probe, ft_prof_build;
SET enable_mergejoin = off;
SET enable_nestloop = off;
CREATE TEMP TABLE r AS
SELECT ft_prof_plan('SELECT count(*) FROM ft_prof_probe p JOIN ft_prof_build b ON b.id = p.id % 2000 + 1 WHERE md5(md5(md5(p.id::text))) <> ''''') AS j;
SELECT hj ->> 'Node Type' AS join_node,
	   hj -> 'Plans' -> 0 ->> 'Relation Name' AS probe,
	   (hj -> 'Plans' -> 0 ->> 'Actual Total Time')::float8 >=
	   0.5 * (hj ->> 'Actual Total Time')::float8 AS probe_holds_its_work,
	   (hj ->> 'Actual Total Time')::float8 >=
	   (hj -> 'Plans' -> 0 ->> 'Actual Total Time')::float8 AS within_join
FROM (SELECT j -> 'Plan' -> 'Plans' -> 0 AS hj FROM r) s;
DROP TABLE r;
RESET enable_mergejoin;
RESET enable_nestloop;
DROP TABLE ft_prof_probe, ft_prof_build;

-- a node rescanned once per outer row whose first call of each scan runs
-- a child the executor times itself (a Bitmap Heap Scan): the outer
-- side's work between the rescans stays the outer side's (that call is
-- exact, and the time before it goes to no node that happens to be on
-- the chain when it starts)
CREATE TABLE ft_prof_bhs AS SELECT g AS k FROM generate_series(1, 3000) g;
CREATE INDEX ON ft_prof_bhs (k);
ANALYZE ft_prof_bhs;
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SET enable_indexscan = off;
SET enable_seqscan = off;
SET enable_material = off;
SET enable_memoize = off;
CREATE TEMP TABLE r AS
SELECT ft_prof_plan('SELECT count(*) FROM generate_series(1, 3000) g JOIN ft_prof_bhs b ON b.k = g WHERE md5(repeat(g::text, 4000)) <> ''''') AS j;
SELECT string_agg(n.node_type, ', ') AS nodes,
	   max(n.total_ms) FILTER (WHERE n.node_type = 'Function Scan') >=
	   0.5 * max(n.total_ms) FILTER (WHERE n.node_type = 'Nested Loop') AS outer_holds_its_work,
	   max(n.total_ms) FILTER (WHERE n.node_type = 'Bitmap Heap Scan') <=
	   0.4 * max(n.total_ms) FILTER (WHERE n.node_type = 'Nested Loop') AS rescanned_holds_little,
	   bool_and(n.parent_ms IS NULL OR n.parent_ms >= n.total_ms - 0.002 * n.loops) AS within_parents
FROM r, ft_prof_nodes(r.j) n;
DROP TABLE r;
RESET enable_hashjoin;
RESET enable_mergejoin;
RESET enable_indexscan;
RESET enable_seqscan;
RESET enable_material;
RESET enable_memoize;
DROP TABLE ft_prof_bhs;

-- a query run by a function inside a node: the calling node's time
-- contains it
CREATE FUNCTION ft_prof_inner() RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
	c bigint;
BEGIN
	SELECT count(*) INTO c FROM generate_series(1, 3) g WHERE ft_prof_sleep(0.005);
	RETURN c;
END $$;
CREATE TEMP TABLE r AS
SELECT ft_prof_plan('SELECT sum(ft_prof_inner()) FROM generate_series(1, 15) g') AS j;
SELECT (j -> 'Plan' ->> 'Actual Total Time')::float8 >= 215 AS caller_holds_nested,
	   (j ->> 'Execution Time')::float8 >= (j -> 'Plan' ->> 'Actual Total Time')::float8 AS within_execution
FROM r;
DROP TABLE r;

-- plan shapes: no node longer than its parent, startup within total, and
-- rows, loops and removed rows as stock counts them
CREATE TABLE ft_prof_a AS SELECT g AS id, g % 100 AS grp FROM generate_series(1, 200000) g;
CREATE TABLE ft_prof_b AS SELECT g AS id, g % 7 AS v FROM generate_series(1, 20000) g;
CREATE INDEX ON ft_prof_b (id);
ANALYZE ft_prof_a, ft_prof_b;
CREATE TEMP TABLE shapes(id int, stmt text);
INSERT INTO shapes VALUES
(1, 'SELECT count(*) FROM ft_prof_a a JOIN ft_prof_b b ON b.id = a.id WHERE a.grp < 50'),
(2, 'SELECT grp, count(*) FROM ft_prof_a GROUP BY grp ORDER BY 2 DESC, 1 LIMIT 5'),
(3, 'SELECT count(*) FROM ft_prof_a a WHERE a.id <= 20000 AND a.grp <= (SELECT max(v) FROM ft_prof_b b WHERE b.id = a.id)'),
(4, 'WITH w AS MATERIALIZED (SELECT id FROM ft_prof_a WHERE grp = 3) SELECT count(*) FROM w x JOIN w y USING (id)'),
(5, 'SELECT count(*) FROM (SELECT id FROM ft_prof_a ORDER BY grp, id LIMIT 100000) s'),
(6, 'SELECT count(*) FROM ft_prof_b b, LATERAL (SELECT count(*) c FROM ft_prof_a a WHERE a.id = b.id * 3) x WHERE b.id < 200');
CREATE TEMP TABLE stock AS
SELECT id, ft_prof_untimed(ft_prof_plan(stmt)) AS counts FROM shapes
WHERE set_config('fasttime.node_timing', 'exact', true) IS NOT NULL
  AND set_config('fasttime.clock_source', 'clock_gettime', true) IS NOT NULL;
SET fasttime.node_timing = profile;
SET fasttime.clock_source = try_tsc;
CREATE TEMP TABLE prof AS SELECT id, ft_prof_plan(stmt) AS j FROM shapes;
SELECT p.id,
	   ft_prof_untimed(p.j) = s.counts AS counts_as_stock,
	   bool_and(n.parent_ms IS NULL OR n.parent_ms >= n.total_ms - 0.002 * n.loops) AS within_parents,
	   bool_and(n.startup_ms <= n.per_loop_ms) AS startup_within_total
FROM prof p JOIN stock s USING (id), ft_prof_nodes(p.j) n
GROUP BY p.id, s.counts, p.j ORDER BY p.id;

-- the switch landing inside a Hash Join's build (the first tick switches,
-- profile_after = 0, while shape 4 builds its hash table): the Hash's
-- build frame, exact in flight, keeps its time up to the switch and is
-- profiled from there, with the calls above and below it; no child longer
-- than its parent, in every run
SELECT count(*) FILTER (WHERE NOT ok) AS runs_with_a_child_longer
FROM (SELECT i, bool_and(n.parent_ms IS NULL OR n.parent_ms >= n.total_ms - 0.002 * n.loops) AS ok
	  FROM generate_series(1, 20) i,
		   LATERAL (SELECT ft_prof_plan(stmt) AS j FROM shapes WHERE id = 4 AND i > 0) p,
		   ft_prof_nodes(p.j) n
	  GROUP BY i) s;

-- a Hash Join rebuilt for every outer row (its Hash depends on the row)
-- runs its probe side's first call -- here a function scan whose first
-- call makes all its rows, nearly all of the join's time -- in the call
-- that builds its table.  When that call was exact (its Hash timed by
-- core) and the scan profiled inside it, the scan got only the ticks'
-- time no exact call had taken (about 40 % of the join's); it holds
-- nearly all of it, within the join
CREATE FUNCTION ft_prof_rows(n int) RETURNS SETOF int LANGUAGE plpgsql AS $$
BEGIN
	FOR i IN 1 .. n LOOP
		PERFORM md5(repeat(i::text, 100));
		RETURN NEXT i;
	END LOOP;
END $$;
CREATE TABLE ft_prof_hb AS SELECT g AS k FROM generate_series(1, 20) g;
ANALYZE ft_prof_hb;
SET enable_mergejoin = off;
SET enable_memoize = off;
SET enable_material = off;
SELECT count(*) FILTER (WHERE NOT holds) AS runs_probe_short,
	   count(*) FILTER (WHERE NOT ok) AS runs_with_a_child_longer
FROM (SELECT i, bool_and(n.parent_ms IS NULL OR n.parent_ms >= n.total_ms - 0.002 * n.loops) AS ok,
			 coalesce(bool_or(n.node_type = 'Function Scan' AND n.loops > 1 AND
							  n.total_ms >= 0.8 * n.parent_ms), false) AS holds
	  FROM generate_series(1, 5) i,
		   LATERAL (SELECT ft_prof_plan('SELECT count(*) FROM generate_series(1, 200) o, LATERAL (SELECT count(*) FROM ft_prof_rows(150 + o % 2) r JOIN (SELECT k FROM ft_prof_hb WHERE k <> o) b ON b.k = r) s') AS j
					WHERE i > 0) p,
		   ft_prof_nodes(p.j) n
	  GROUP BY i) s;
RESET enable_mergejoin;
RESET enable_memoize;
RESET enable_material;
DROP TABLE ft_prof_hb;
DROP FUNCTION ft_prof_rows(int);

-- an error inside a profiled run leaves nothing behind: the next run's
-- numbers hold as before
SELECT count(*) FROM generate_series(1, 100000) g WHERE ft_prof_sleep(0) AND 1 / (g - 50000) > 0;
CREATE TEMP TABLE r AS
SELECT ft_prof_plan('SELECT count(*) FROM generate_series(1, 20) g WHERE ft_prof_sleep(0.01)') AS j;
SELECT n.node_type, n.total_ms >= 190 AS holds_the_waits,
	   n.parent_ms IS NULL OR n.parent_ms >= n.total_ms AS within_parent
FROM r, ft_prof_nodes(r.j) n;
DROP TABLE r;
-- and inside a subtransaction of a function called by a node
CREATE FUNCTION ft_prof_catch(i int) RETURNS int LANGUAGE plpgsql AS $$
BEGIN
	BEGIN
		PERFORM count(*) FROM generate_series(1, 1000) g WHERE 1 / (g - i) > 0;
	EXCEPTION WHEN division_by_zero THEN
		RETURN -1;
	END;
	RETURN i;
END $$;
CREATE TEMP TABLE r AS
SELECT ft_prof_plan('SELECT sum(ft_prof_catch(g % 2000)) FROM generate_series(1, 3000) g') AS j;
SELECT n.node_type, n.node_rows,
	   n.parent_ms IS NULL OR n.parent_ms >= n.total_ms AS within_parent
FROM r, ft_prof_nodes(r.j) n;
DROP TABLE r;

-- statement_timeout still fires during a profiled run (where it lands
-- varies: no context)
\set VERBOSITY terse
SET statement_timeout = '200ms';
SELECT count(*) FROM generate_series(1, 100) g WHERE ft_prof_sleep(0.01);
RESET statement_timeout;
\set VERBOSITY default

-- a cursor: its fetches run profiled, the time between them is nobody's
BEGIN;
DECLARE c CURSOR FOR SELECT g FROM generate_series(1, 40) g WHERE ft_prof_sleep(0.005);
FETCH 20 FROM c;
SELECT pg_sleep(0.05);
FETCH 20 FROM c;
COMMIT;

-- a query that is not timed (auto_explain instruments it with buffers and
-- TIMING OFF), run inside a profiled node: its calls are on the chain for
-- their buffer counts only, and the ticks pass over them to the profiled
-- node that runs it, which holds its waits and its buffers, the same
-- buffers as under stock timing
CREATE TABLE ft_prof_small AS SELECT g AS id FROM generate_series(1, 2000) g;
CREATE FUNCTION ft_prof_nested_untimed(s float8) RETURNS bool LANGUAGE plpgsql AS $$
BEGIN
	PERFORM count(*) FROM ft_prof_small WHERE id = 1 AND ft_prof_sleep(s);
	RETURN true;
END $$;
CREATE FUNCTION ft_prof_plan_buffers(stmt text) RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE
	j jsonb;
BEGIN
	EXECUTE 'EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ' || stmt INTO j;
	RETURN j -> 0;
END $$;
LOAD 'auto_explain';
SET auto_explain.log_min_duration = 0;
SET auto_explain.log_analyze = on;
SET auto_explain.log_buffers = on;
SET auto_explain.log_timing = off;
SET auto_explain.log_nested_statements = on;
SET auto_explain.log_level = debug5;
CREATE TEMP TABLE r(mode text, j jsonb);
INSERT INTO r SELECT 'warm-up', ft_prof_plan_buffers('SELECT count(*) FROM generate_series(1, 20) g WHERE ft_prof_nested_untimed(0.01)');
INSERT INTO r SELECT 'profile', ft_prof_plan_buffers('SELECT count(*) FROM generate_series(1, 20) g WHERE ft_prof_nested_untimed(0.01)');
SET fasttime.node_timing = exact;
SET fasttime.clock_source = clock_gettime;
INSERT INTO r SELECT 'stock', ft_prof_plan_buffers('SELECT count(*) FROM generate_series(1, 20) g WHERE ft_prof_nested_untimed(0.01)');
SET fasttime.clock_source = try_tsc;
SET fasttime.node_timing = profile;
SELECT (fs ->> 'Actual Total Time')::float8 >= 190 AS scan_holds_the_waits,
	   (j -> 'Plan' ->> 'Actual Total Time')::float8 >=
	   (fs ->> 'Actual Total Time')::float8 AS within_parent,
	   (fs ->> 'Shared Hit Blocks')::int > 0 AS scan_holds_buffers
FROM (SELECT j, j -> 'Plan' -> 'Plans' -> 0 AS fs FROM r WHERE mode = 'profile') s;
SELECT count(DISTINCT (j -> 'Plan' -> 'Plans' -> 0 ->> 'Shared Hit Blocks')) = 1 AS same_buffers_as_stock
FROM r WHERE mode IN ('profile', 'stock');
DROP TABLE r, ft_prof_small;
RESET auto_explain.log_min_duration;
RESET auto_explain.log_analyze;
RESET auto_explain.log_buffers;
RESET auto_explain.log_timing;
RESET auto_explain.log_nested_statements;
RESET auto_explain.log_level;

-- the exact prefix takes no timer signal before a quarter of
-- profile_after unless the plan is expected to pass its read bound: with
-- profile_after = 30s, a query of tens of milliseconds estimated at about
-- 3e7 node calls (a LIMIT over a three-way cross join; generate_series
-- gives exact row estimates) takes no tick (its first would come at
-- 7.5 s).  It is profiled, not declined: 3e7 calls lie between the read
-- bound's hundredth and the read bound itself for any read from 1.3 to
-- 125 ns.
SET fasttime.profile_after = '30s';
SELECT value::bigint AS ticks_before FROM fasttime_status() WHERE name = 'profile_ticks' \gset
SELECT value::bigint AS declined_before FROM fasttime_status() WHERE name = 'profile_declined_queries' \gset
DO $$
DECLARE j json;
BEGIN
	EXECUTE 'EXPLAIN (ANALYZE, FORMAT JSON) SELECT count(*) FROM (SELECT 1 FROM generate_series(1, 1000) a, generate_series(1, 100) b, generate_series(1, 100) c LIMIT 100000) s' INTO j;
	EXECUTE 'EXPLAIN (ANALYZE, FORMAT JSON) SELECT count(*) FROM (SELECT 1 FROM generate_series(1, 1000) a, generate_series(1, 100) b, generate_series(1, 100) c LIMIT 100000) s' INTO j;
END $$;
SELECT value::bigint - :ticks_before AS ticks_in_short_queries
FROM fasttime_status() WHERE name = 'profile_ticks';
SELECT value::bigint - :declined_before AS declined_big_estimates
FROM fasttime_status() WHERE name = 'profile_declined_queries';
-- a plan estimated far past the read bound (1e10 calls) takes its first
-- tick after one interval, and its ticks come long before 7.5 s: a run of
-- 2M rows through a nested loop, whose reads soon cost a quarter of its
-- time, switches then (on 18 and later fasttime_explain_option shows
-- the switch)
SELECT value::bigint AS ticks_before FROM fasttime_status() WHERE name = 'profile_ticks' \gset
DO $$
DECLARE j json;
BEGIN
	EXECUTE 'EXPLAIN (ANALYZE, FORMAT JSON) SELECT count(*) FROM (SELECT 1 FROM generate_series(1, 100000) a, generate_series(1, 100000) b LIMIT 2000000) s' INTO j;
END $$;
SELECT value::bigint - :ticks_before > 0 AS ticks_in_a_long_plan
FROM fasttime_status() WHERE name = 'profile_ticks';
-- under auto_explain the same plan's first tick stays at a quarter of
-- profile_after (7.5 s): short statements estimated high, back to back,
-- would each leave a signal pending
LOAD 'auto_explain';
SET auto_explain.log_min_duration = '100s';
SET auto_explain.log_analyze = on;
SELECT value::bigint AS ticks_before FROM fasttime_status() WHERE name = 'profile_ticks' \gset
SELECT count(*) FROM (SELECT 1 FROM generate_series(1, 100000) a, generate_series(1, 100000) b LIMIT 2000000) s;
SELECT value::bigint - :ticks_before AS ticks_under_auto_explain
FROM fasttime_status() WHERE name = 'profile_ticks';
RESET auto_explain.log_min_duration;
RESET auto_explain.log_analyze;

-- a plan estimated at a few node calls is not profiled: with neither
-- frames nor a tick it is timed exactly from start to end (its reads cost
-- less than a profiled run's set-up: 20 ms of prefix bound such a plan's
-- reads far above its calls), or, below FT_SMALL_PLAN_CALLS, left as
-- stock built it; nested statements too, and the outer query of one
SET fasttime.profile_after = '20ms';
SELECT value::bigint AS declined_before FROM fasttime_status() WHERE name = 'profile_declined_queries' \gset
SELECT value::bigint AS small_before FROM fasttime_status() WHERE name = 'small_plans_left_stock' \gset
SELECT value::bigint AS ticks_before FROM fasttime_status() WHERE name = 'profile_ticks' \gset
CREATE TABLE ft_prof_tiny AS SELECT g FROM generate_series(1, 1000) g;
CREATE INDEX ON ft_prof_tiny (g);
ANALYZE ft_prof_tiny;
CREATE FUNCTION ft_prof_lookups(n int) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE r bigint := 0; x int;
BEGIN
	FOR i IN 1..n LOOP
		SELECT g INTO x FROM ft_prof_tiny WHERE g = i;
		r := r + x;
	END LOOP;
	RETURN r;
END $$;
LOAD 'auto_explain';
SET auto_explain.log_min_duration = '100s';
SET auto_explain.log_analyze = on;
SET auto_explain.log_nested_statements = on;
SELECT ft_prof_lookups(50);
RESET auto_explain.log_min_duration;
RESET auto_explain.log_analyze;
RESET auto_explain.log_nested_statements;
SELECT sum(value::bigint) - :declined_before - :small_before AS tiny_statements_not_profiled
FROM fasttime_status() WHERE name IN ('profile_declined_queries', 'small_plans_left_stock');
SELECT value::bigint - :small_before >= 50 AS lookups_left_stock
FROM fasttime_status() WHERE name = 'small_plans_left_stock';
SELECT value::bigint - :ticks_before AS ticks_in_tiny_statements
FROM fasttime_status() WHERE name = 'profile_ticks';
-- a recursive CTE's steps are the planner's guess (31 rows here, for
-- 1,000 steps): its plan is never declined as small
SELECT value::bigint AS declined_before FROM fasttime_status() WHERE name = 'profile_declined_queries' \gset
DO $$
DECLARE j json;
BEGIN
	EXECUTE 'EXPLAIN (ANALYZE, FORMAT JSON) WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 1000) SELECT sum(n) FROM r' INTO j;
END $$;
SELECT value::bigint - :declined_before AS recursive_cte_declined
FROM fasttime_status() WHERE name = 'profile_declined_queries';
-- with no exact prefix every plan is profiled
SET fasttime.profile_after = 0;
SELECT value::bigint AS declined_before FROM fasttime_status() WHERE name = 'profile_declined_queries' \gset
DO $$
DECLARE j json;
BEGIN
	EXECUTE 'EXPLAIN (ANALYZE, FORMAT JSON) SELECT g FROM ft_prof_tiny WHERE g = 7' INTO j;
END $$;
SELECT value::bigint - :declined_before AS declined_without_prefix
FROM fasttime_status() WHERE name = 'profile_declined_queries';
DROP FUNCTION ft_prof_lookups(int);
DROP TABLE ft_prof_tiny;

-- status: the settings, and ticks happened
SELECT name, value FROM fasttime_status()
WHERE name IN ('node_timing', 'profile_interval_ms', 'profile_interval_max_ms', 'profile_after_ms');
SELECT value::bigint > 0 AS ticked FROM fasttime_status() WHERE name = 'profile_ticks';
-- what a tick costs: fasttime_status() does not measure it (anyone may
-- call it), fasttime_overhead(source => 'profile_tick') does
SELECT value IS NULL AS tick_cost_not_measured FROM fasttime_status() WHERE name = 'profile_tick_cost_ns';
SELECT count(*) FROM fasttime_overhead(0.05, 'profile_tick');
SELECT value::float8 >= 0 AS tick_cost_measured FROM fasttime_status() WHERE name = 'profile_tick_cost_ns';

-- bad settings are refused (the messages' wording differs between versions)
CREATE FUNCTION ft_prof_try(setting text, val text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
	PERFORM set_config(setting, val, false);
	RETURN 'accepted';
EXCEPTION WHEN OTHERS THEN
	RETURN 'refused: ' || SQLSTATE;
END $$;
SELECT s, v, ft_prof_try(s, v)
FROM (VALUES ('fasttime.node_timing', 'sampled'), ('fasttime.profile_interval', '0'),
			 ('fasttime.profile_interval', '1001'), ('fasttime.profile_after', '-1'),
			 ('fasttime.profile_interval', '2ms'), ('fasttime.profile_after', '1s'),
			 ('fasttime.profile_interval_max', '0'), ('fasttime.profile_interval_max', '1001'),
			 ('fasttime.profile_interval_max', '8ms')) t(s, v);

DROP TABLE ft_prof_a, ft_prof_b;
