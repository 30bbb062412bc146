-- bench/sql/harness.sql: workloads, variants, and the server-side timer.
--
-- Every run, of every variant, is timed the same way: by clock_timestamp()
-- read immediately before and after a PL/pgSQL EXECUTE of the statement,
-- in the backend that runs it.  That covers parse, plan, execution and,
-- for the EXPLAIN variants, building the EXPLAIN output (tens of
-- microseconds for these plans) -- and nothing on the client side: no
-- connection, no network, no psql formatting.  The plain statement (V1)
-- thus gets exactly the same treatment as the EXPLAIN variants.  For the
-- EXPLAIN variants EXPLAIN's own "Execution Time" is kept as well, as a
-- cross-check (it excludes planning and output).
--
-- A shared machine adds noise: while another process has the CPU, the
-- backend's clock keeps running.  So each run also notes how long the
-- backend sat in the kernel's run queue, ready but not running, from
-- /proc/self/schedstat (second field, in ns, accounted whenever the task
-- gets a CPU back, hence exact once we are running again).  Wall time
-- minus that wait is the backend's on-CPU time for the run (the queries
-- read cached data, so they do not sleep on I/O): the same number on an
-- idle machine, and much steadier on a busy one.  Without
-- /proc/self/schedstat the wait is NULL and only wall time is reported.
--
-- Each measurement is one transaction (one SELECT bench_measure(...)), whose
-- settings -- the workload's, plus fasttime.clock_source and
-- fasttime.node_timing = exact for V2 to V5 (exact timing, or stock's
-- with clock_gettime, whatever node_timing's default) -- are
-- transaction-local, so no run inherits anything from the one before.

\set ON_ERROR_STOP 1
SET client_min_messages = warning;

DROP TABLE IF EXISTS bench_workloads, bench_variants, bench_results;

CREATE TABLE bench_workloads(
	id text PRIMARY KEY,
	title text NOT NULL,
	label text NOT NULL,				-- short, for the chart
	settings text NOT NULL DEFAULT '',	-- "name=value;name=value", per run
	query text NOT NULL,
	nodes int,							-- filled in by bench_count_calls
	node_calls float8,
	plan text
);

INSERT INTO bench_workloads(id, title, label, settings, query) VALUES
('W1', 'count(*) over lotsarows (reference case)', 'W1 count(*)', '',
 'SELECT count(*) FROM lotsarows'),

-- Nested Loop over a Hash Join, each outer row probing an index (a
-- lateral "price as of the order's day" lookup the planner cannot hash).
-- Memoize is off: the (product, day) keys are nearly all distinct, and it
-- would only add a node that misses.
('W2', 'hash join + nested loop with index scan', 'W2 joins', 'enable_memoize=off',
 $q$SELECT count(*), sum(o.qty * p.price)
FROM orders o
JOIN customers c ON c.id = o.customer_id
CROSS JOIN LATERAL (SELECT pr.price FROM prices pr
                    WHERE pr.product_id = o.product_id AND pr.valid_from <= o.day
                    ORDER BY pr.valid_from DESC LIMIT 1) p
WHERE c.region < 4$q$),

-- Aggregate, Limit, Subquery Scan (with a filter), WindowAgg, Sort, Hash
-- Join, Seq Scan, Hash, Seq Scan: nine nodes, most rows passing through
-- six of them.  work_mem keeps the sort in memory.
('W3', 'deep plan: join, sort, window, filter, limit', 'W3 deep plan', 'work_mem=256MB',
 $q$SELECT count(*), sum(running) FROM (
  SELECT o_id, running FROM (
    SELECT o.id AS o_id,
           sum(o.qty) OVER (PARTITION BY o.day ORDER BY o.id) AS running
    FROM orders o JOIN customers c ON c.id = o.customer_id
    WHERE c.region < 10
  ) w WHERE running % 3 = 0
  LIMIT 100000
) x$q$),

('W4', 'count(*) over widerows (one tuple per page)', 'W4 wide rows', '',
 'SELECT count(*) FROM widerows');

CREATE TABLE bench_variants(
	id text PRIMARY KEY,
	title text NOT NULL,
	prefix text NOT NULL,
	clock_source text,			-- fasttime.clock_source for the run, if any
	settings text NOT NULL DEFAULT ''	-- more settings, "name=value;..."
);

INSERT INTO bench_variants VALUES
('V1', 'plain statement', '', NULL, ''),
('V2', 'EXPLAIN ANALYZE, TIMING OFF', 'EXPLAIN (ANALYZE, TIMING OFF) ', 'clock_gettime', 'fasttime.node_timing=exact'),
('V3', 'TIMING ON, clock_gettime (stock)', 'EXPLAIN (ANALYZE, TIMING ON) ', 'clock_gettime', 'fasttime.node_timing=exact'),
('V4', 'TIMING ON, tsc', 'EXPLAIN (ANALYZE, TIMING ON) ', 'tsc', 'fasttime.node_timing=exact'),
('V5', 'TIMING ON, auto', 'EXPLAIN (ANALYZE, TIMING ON) ', 'auto', 'fasttime.node_timing=exact');

CREATE TABLE bench_results(
	seq serial PRIMARY KEY,
	workload text NOT NULL,
	variant text NOT NULL,
	round int NOT NULL,
	phase text NOT NULL,		-- warmup or measure
	ms float8,					-- clock_timestamp() around EXECUTE; NULL: not run
	cpu_ms float8,				-- ms minus the run-queue wait: on-CPU time
	rq_wait_ms float8,			-- time spent waiting for a CPU
	explain_ms float8,			-- EXPLAIN's Execution Time, V2 to V5
	clock text,					-- clock the nodes were timed with, V3 to V5
	note text
);

-- Apply a workload's settings for the current transaction.
CREATE OR REPLACE FUNCTION bench_apply_settings(settings text)
RETURNS void LANGUAGE plpgsql AS $$
DECLARE
	item text;
BEGIN
	FOREACH item IN ARRAY string_to_array(settings, ';') LOOP
		IF btrim(item) <> '' THEN
			PERFORM set_config(btrim(split_part(item, '=', 1)),
							   btrim(split_part(item, '=', 2)), true);
		END IF;
	END LOOP;
END
$$;

-- Nanoseconds this backend has waited in the run queue, or NULL.
CREATE OR REPLACE FUNCTION bench_rq_wait_ns()
RETURNS float8 LANGUAGE plpgsql AS $$
BEGIN
	RETURN split_part(pg_read_file('/proc/self/schedstat'), ' ', 2)::float8;
EXCEPTION WHEN OTHERS THEN
	RETURN NULL;
END
$$;

-- One run of one variant of one workload, recorded in bench_results.
CREATE OR REPLACE FUNCTION bench_measure(w text, v text, rnd int, ph text)
RETURNS float8 LANGUAGE plpgsql AS $$
DECLARE
	wl bench_workloads;
	va bench_variants;
	stmt text;
	line text;
	t0 timestamptz;
	t1 timestamptz;
	elapsed float8;
	exec_ms float8;
	wait0 float8;
	wait1 float8;
	eff text;
BEGIN
	SELECT * INTO STRICT wl FROM bench_workloads WHERE id = w;
	SELECT * INTO STRICT va FROM bench_variants WHERE id = v;
	PERFORM bench_apply_settings(wl.settings);
	PERFORM bench_apply_settings(va.settings);
	IF va.clock_source IS NOT NULL THEN
		BEGIN
			PERFORM set_config('fasttime.clock_source', va.clock_source, true);
		EXCEPTION WHEN OTHERS THEN
			-- e.g. "tsc" refused on a machine whose TSC is not usable
			INSERT INTO bench_results(workload, variant, round, phase, note)
			VALUES (w, v, rnd, ph, SQLERRM);
			RETURN NULL;
		END;
		eff := current_setting('fasttime.clock_source_status');
	END IF;
	stmt := va.prefix || wl.query;
	wait0 := bench_rq_wait_ns();

	IF va.prefix = '' THEN
		t0 := clock_timestamp();
		EXECUTE stmt;
		t1 := clock_timestamp();
	ELSE
		t0 := clock_timestamp();
		FOR line IN EXECUTE stmt LOOP
			IF line LIKE 'Execution Time:%' THEN
				exec_ms := substring(line FROM '([0-9.]+) ms')::float8;
			END IF;
		END LOOP;
		t1 := clock_timestamp();
	END IF;
	wait1 := bench_rq_wait_ns();
	elapsed := extract(epoch FROM t1 - t0) * 1000.0;

	INSERT INTO bench_results(workload, variant, round, phase, ms, cpu_ms,
							  rq_wait_ms, explain_ms, clock)
	VALUES (w, v, rnd, ph, elapsed, elapsed - (wait1 - wait0) / 1e6,
			(wait1 - wait0) / 1e6, exec_ms, eff);
	RETURN elapsed;
END
$$;

-- Timed node calls of a workload, from one EXPLAIN (ANALYZE, TIMING OFF,
-- FORMAT JSON) run.  A node's ExecProcNode runs once per row it returns
-- plus once per loop for the call that finds it exhausted, so a node
-- costs rows x loops + loops timed calls ("Actual Rows" is the per-loop
-- average, rounded: exact for loops = 1, approximate otherwise; the child
-- of a Limit that stops early is never asked for its end-of-data row, so
-- this over-counts such a child by one per loop: in W2, the index scan
-- under the Limit, about 9 % of the total).  Hash and bitmap index nodes are not
-- called per row: they are started and stopped once per loop around
-- MultiExecProcNode, so they count loops only.
CREATE OR REPLACE FUNCTION bench_count_calls(w text)
RETURNS void LANGUAGE plpgsql AS $$
DECLARE
	wl bench_workloads;
	plan_json jsonb;
	plan_text text := '';
	line text;
	n int;
	calls float8;
BEGIN
	SELECT * INTO STRICT wl FROM bench_workloads WHERE id = w;
	PERFORM bench_apply_settings(wl.settings);
	EXECUTE 'EXPLAIN (ANALYZE, TIMING OFF, FORMAT JSON) ' || wl.query INTO plan_json;
	WITH RECURSIVE node(p) AS (
		SELECT plan_json -> 0 -> 'Plan'
		UNION ALL
		SELECT c FROM node, jsonb_array_elements(node.p -> 'Plans') c
	)
	SELECT count(*),
		   sum(CASE WHEN p ->> 'Node Type' IN ('Hash', 'Bitmap Index Scan',
											  'BitmapAnd', 'BitmapOr')
					THEN (p ->> 'Actual Loops')::float8
					ELSE ((p ->> 'Actual Rows')::float8 + 1) *
						 (p ->> 'Actual Loops')::float8
			   END)
	INTO n, calls
	FROM node;
	-- the plan in text form, for bench/out/plans.txt
	FOR line IN EXECUTE 'EXPLAIN (ANALYZE, TIMING OFF) ' || wl.query LOOP
		plan_text := plan_text || line || E'\n';
	END LOOP;
	UPDATE bench_workloads SET nodes = n, node_calls = calls, plan = plan_text
	WHERE id = w;
END
$$;
