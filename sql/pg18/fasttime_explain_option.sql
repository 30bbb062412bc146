--
-- EXPLAIN (ANALYZE, CLOCK_SOURCE): which clock timed the plan's nodes.
-- PostgreSQL 18 and later only (the Makefile adds this test there).
--
-- With fasttime.clock_source = clock_gettime the output is the same on
-- every machine and is printed in full, times masked.  Whether the TSC is
-- usable here is not known in advance, so what try_tsc prints is compared
-- with what fasttime_status() says is in effect instead.
--
SET client_min_messages = warning;
SET jit = off;
SET max_parallel_workers_per_gather = 0;

CREATE TABLE ft_eo (id int, v text);
INSERT INTO ft_eo SELECT g, md5(g::text) FROM generate_series(1, 1000) g;
VACUUM ANALYZE ft_eo;

-- EXPLAIN (ANALYZE) with more options, one row a line, times masked
CREATE FUNCTION ft_eo_lines(opts text,
							query text DEFAULT 'SELECT count(*) FROM ft_eo')
RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
	ln text;
BEGIN
	FOR ln IN EXECUTE format('EXPLAIN (ANALYZE, COSTS OFF, BUFFERS OFF, SUMMARY OFF, %s) %s',
							 opts, query) LOOP
		ln := regexp_replace(ln, 'actual time=[0-9.]+\.\.[0-9.]+', 'actual time=N..N', 'g');
		ln := regexp_replace(ln, '(Time": |Time: |Time>)[0-9]+\.[0-9]+', '\1N', 'g');
		RETURN QUERY SELECT regexp_split_to_table(ln, E'\n');
	END LOOP;
END
$$;

-- the Timing Source line of a text EXPLAIN (ANALYZE, CLOCK_SOURCE)
CREATE FUNCTION ft_eo_line(query text DEFAULT 'SELECT count(*) FROM ft_eo')
RETURNS text LANGUAGE sql AS $$
	SELECT string_agg(l, ' | ') FROM ft_eo_lines('CLOCK_SOURCE', query) l
	 WHERE l LIKE '%Timing Source%'
$$;

-- what fasttime says is in effect now, and the line that should print it
CREATE FUNCTION ft_eo_expected_line() RETURNS text LANGUAGE sql AS $$
	SELECT CASE current_setting('fasttime.clock_source_status')
		WHEN 'tsc' THEN
			format('Timing Source: tsc (%s kHz, %s%s)',
				   (SELECT value FROM fasttime_status() WHERE name = 'tsc_frequency_khz'),
				   (SELECT value FROM fasttime_status() WHERE name = 'tsc_frequency_origin'),
				   CASE current_setting('fasttime.ordered_reads')
						WHEN 'on' THEN '; ordered reads'
						ELSE '' END)
		ELSE
			format('Timing Source: clock_gettime (%s)',
				   (SELECT value FROM fasttime_status() WHERE name = 'setting_reason'))
		END
$$;

--
-- clock_gettime: the whole output in every format.  The default,
-- profiled timing, adds its own lines (tested below); exact timing with
-- clock_gettime is stock PostgreSQL's timing, and says so.
--
SHOW fasttime.node_timing;
SET fasttime.node_timing = exact;
SET fasttime.clock_source = clock_gettime;
SELECT * FROM ft_eo_lines('CLOCK_SOURCE');
SELECT * FROM ft_eo_lines('CLOCK_SOURCE, FORMAT JSON');
SELECT * FROM ft_eo_lines('CLOCK_SOURCE, FORMAT YAML');
SELECT * FROM ft_eo_lines('CLOCK_SOURCE, FORMAT XML');

-- TIMING OFF: no node was timed by any clock
SELECT * FROM ft_eo_lines('CLOCK_SOURCE, TIMING OFF');
SELECT * FROM ft_eo_lines('CLOCK_SOURCE, TIMING OFF, FORMAT JSON');

-- off by default, and when turned off
SELECT count(*) AS lines_without_option
  FROM ft_eo_lines('VERBOSE') l WHERE l LIKE '%Timing Source%';
SELECT count(*) AS lines_with_option_off
  FROM ft_eo_lines('CLOCK_SOURCE OFF, FORMAT JSON') l WHERE l LIKE '%Timing Source%';
SELECT count(*) AS lines_with_option_on
  FROM ft_eo_lines('CLOCK_SOURCE ON, FORMAT JSON') l WHERE l LIKE '%Timing Source%';

-- without ANALYZE nothing is timed, so there is nothing to tell
EXPLAIN (CLOCK_SOURCE) SELECT 1;
EXPLAIN (CLOCK_SOURCE, ANALYZE OFF) SELECT 1;
EXPLAIN (CLOCK_SOURCE OFF, COSTS OFF) SELECT 1;
EXPLAIN (ANALYZE, CLOCK_SOURCE 'sometimes') SELECT 1;

--
-- try_tsc: the TSC where it is usable, else clock_gettime with the reason
--
SET fasttime.clock_source = try_tsc;
SELECT ft_eo_line() = ft_eo_expected_line() AS text_as_in_effect;

-- the other formats carry the same facts as separate properties
CREATE FUNCTION ft_eo_json() RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE
	plan json;
BEGIN
	EXPLAIN (ANALYZE, CLOCK_SOURCE, FORMAT JSON) SELECT count(*) FROM ft_eo INTO plan;
	RETURN plan::jsonb -> 0;
END
$$;
CREATE FUNCTION ft_eo_props(fmt text) RETURNS SETOF text LANGUAGE sql AS $$
	SELECT l FROM ft_eo_lines('CLOCK_SOURCE, FORMAT ' || fmt) l
	 WHERE l ~ '(Timing|TSC)[ -]'
$$;
SELECT j -> 'Timing Source' = to_jsonb(current_setting('fasttime.clock_source_status'))
	   AS json_source,
	   CASE WHEN j ->> 'Timing Source' = 'tsc' THEN
			j ->> 'TSC Frequency' = (SELECT value FROM fasttime_status() WHERE name = 'tsc_frequency_khz')
			AND j ->> 'TSC Frequency Origin' = (SELECT value FROM fasttime_status() WHERE name = 'tsc_frequency_origin')
			AND NOT j ? 'Timing Source Reason'
	   ELSE
			j ->> 'Timing Source Reason' = (SELECT value FROM fasttime_status() WHERE name = 'setting_reason')
			AND NOT j ? 'TSC Frequency'
	   END AS json_details
  FROM ft_eo_json() AS j;
SELECT array_agg(l) =
	   CASE current_setting('fasttime.clock_source_status') WHEN 'tsc' THEN
			ARRAY['  Timing Source: "tsc"',
				  '  TSC Frequency: ' || (SELECT value FROM fasttime_status() WHERE name = 'tsc_frequency_khz'),
				  '  TSC Frequency Origin: "' || (SELECT value FROM fasttime_status() WHERE name = 'tsc_frequency_origin') || '"',
				  '  TSC Reads Ordered: "' || current_setting('fasttime.ordered_reads') || '"']
	   ELSE
			ARRAY['  Timing Source: "clock_gettime"',
				  '  Timing Source Reason: "' || (SELECT value FROM fasttime_status() WHERE name = 'setting_reason') || '"']
	   END AS yaml_as_in_effect
  FROM ft_eo_props('YAML') l;
SELECT array_agg(l) =
	   CASE current_setting('fasttime.clock_source_status') WHEN 'tsc' THEN
			ARRAY['    <Timing-Source>tsc</Timing-Source>',
				  '    <TSC-Frequency>' || (SELECT value FROM fasttime_status() WHERE name = 'tsc_frequency_khz') || '</TSC-Frequency>',
				  '    <TSC-Frequency-Origin>' || (SELECT value FROM fasttime_status() WHERE name = 'tsc_frequency_origin') || '</TSC-Frequency-Origin>',
				  '    <TSC-Reads-Ordered>' || current_setting('fasttime.ordered_reads') || '</TSC-Reads-Ordered>']
	   ELSE
			ARRAY['    <Timing-Source>clock_gettime</Timing-Source>',
				  '    <Timing-Source-Reason>' || (SELECT value FROM fasttime_status() WHERE name = 'setting_reason') || '</Timing-Source-Reason>']
	   END AS xml_as_in_effect
  FROM ft_eo_props('XML') l;

--
-- what is printed is what timed the statement, even when the statement
-- changes the setting before EXPLAIN prints
--
BEGIN;
SET LOCAL fasttime.clock_source = try_tsc;
SELECT ft_eo_expected_line() AS before_line \gset
SELECT ft_eo_line($$SELECT set_config('fasttime.clock_source', 'clock_gettime', true)$$)
	   = :'before_line' AS reports_clock_at_start;
SHOW fasttime.clock_source;
COMMIT;
BEGIN;
SET LOCAL fasttime.clock_source = clock_gettime;
SELECT ft_eo_line($$SELECT set_config('fasttime.clock_source', 'try_tsc', true)$$);
SHOW fasttime.clock_source;
COMMIT;

-- an EXPLAIN run inside the explained statement prints its own clock, and
-- leaves the outer one's alone
CREATE TEMP TABLE ft_eo_inner_lines (line text);
CREATE FUNCTION ft_eo_inner() RETURNS int LANGUAGE plpgsql AS $$
BEGIN
	PERFORM set_config('fasttime.clock_source', 'try_tsc', true);
	INSERT INTO ft_eo_inner_lines SELECT ft_eo_line('SELECT 1');
	RETURN 1;
END
$$;
BEGIN;
SET LOCAL fasttime.clock_source = clock_gettime;
SELECT ft_eo_line('SELECT ft_eo_inner()') AS outer_line;
SELECT line = ft_eo_expected_line() AS inner_as_in_effect FROM ft_eo_inner_lines;
COMMIT;

-- a statement that fails inside an exception block leaves nothing behind
SET fasttime.clock_source = try_tsc;
DO $$
BEGIN
	PERFORM ft_eo_line('SELECT 1 / (id - id) FROM ft_eo');
EXCEPTION WHEN division_by_zero THEN
	NULL;
END
$$;
SELECT ft_eo_line() = ft_eo_expected_line() AS after_failure_as_in_effect;

-- prepared statements, and parallel plans (the leader prints the line)
PREPARE ft_eo_q(int) AS SELECT count(*) FROM ft_eo WHERE id < $1;
SELECT ft_eo_line('EXECUTE ft_eo_q(10)') = ft_eo_expected_line() AS prepared_as_in_effect;
DEALLOCATE ft_eo_q;
BEGIN;
SET LOCAL max_parallel_workers_per_gather = 2;
SET LOCAL parallel_setup_cost = 0;
SET LOCAL parallel_tuple_cost = 0;
SET LOCAL min_parallel_table_scan_size = 0;
SELECT count(*) FILTER (WHERE l LIKE '%Gather%') > 0 AS parallel_plan,
	   count(*) FILTER (WHERE l LIKE '%Timing Source%') AS source_lines,
	   bool_or(l = ft_eo_expected_line()) AS parallel_as_in_effect
  FROM ft_eo_lines('CLOCK_SOURCE') l;
COMMIT;

-- each read discipline says so (the TSC's line, and "TSC Reads Ordered")
SET fasttime.ordered_reads = off;
SELECT ft_eo_line() = ft_eo_expected_line() AS plain_reads_line;
SET fasttime.ordered_reads = on;
SELECT ft_eo_line() = ft_eo_expected_line() AS ordered_reads_line;
SELECT j -> 'TSC Reads Ordered' IS NOT DISTINCT FROM
	   CASE WHEN j ->> 'Timing Source' = 'tsc' THEN '"on"'::jsonb END AS json_reads
  FROM ft_eo_json() AS j;
RESET fasttime.ordered_reads;

-- profiled timing (the default) names itself: exact while the run is
-- short, profiled with its ticks and expected error once it switched
SET fasttime.clock_source = try_tsc;
RESET fasttime.node_timing;
SET fasttime.profile_after = '10s';
SELECT l AS short_run_stays_exact FROM ft_eo_lines('CLOCK_SOURCE') l WHERE l LIKE '%Node Timing%';
SET fasttime.profile_after = 0;
SELECT l ~ '^Node Timing: profiled \(exact for the first [0-9.]+ ms, then [0-9]+ ticks of 1 ms( from the tick worker(, then timer signals)?)?; a node holding 10 % of the time: \+-[0-9.]+ %\)$'
	   AS profiled_line
  FROM ft_eo_lines('CLOCK_SOURCE', 'SELECT count(*) FROM ft_eo, pg_sleep(0.05)') l
 WHERE l LIKE '%Node Timing%';
CREATE FUNCTION ft_eo_json_of(q text) RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE
	plan json;
BEGIN
	EXECUTE 'EXPLAIN (ANALYZE, CLOCK_SOURCE, FORMAT JSON) ' || q INTO plan;
	RETURN plan::jsonb -> 0;
END
$$;
-- (a run busy after its switch: a run that waits takes no tick while it
-- waits, and its Profile Ticks count only ticks after the switch)
SELECT j ->> 'Node Timing' AS json_node_timing, (j ->> 'Profile Ticks')::int > 0 AS json_ticks,
	   j ? 'Expected Error At 10 Percent' AS json_error
  FROM ft_eo_json_of('SELECT count(*) FROM ft_eo a, ft_eo b WHERE a.id <> b.id') j;
-- a run that switched and took no tick after its switch (it waited) is
-- worth no more than one tick: never an expected error of zero
SELECT (j ->> 'Profile Ticks')::int > 0 OR
	   (j ->> 'Expected Error At 10 Percent')::float8 >= 300 AS no_tick_no_precision
  FROM ft_eo_json_of('SELECT count(*) FROM ft_eo, pg_sleep(0.05)') j;
-- the ticks of an exact prefix only ask whether the switch is due: a plan
-- not expected to end its prefix by reads (about 60,000 estimated calls,
-- between a hundredth of the read bound and the bound at profile_after =
-- 100ms) ticks every 5 ms from a quarter of profile_after, and Profile
-- Ticks counts none of them (before, prefix ticks came every interval and
-- counted): the backend's ticks minus the run's lie between 1 and those
-- of a 5 ms grid up to the prefix's end
SET fasttime.profile_after = '100ms';
SELECT value::bigint AS ticks_before FROM fasttime_status() WHERE name = 'profile_ticks' \gset
SELECT j AS prefix_json FROM ft_eo_json_of('SELECT count(*) FROM generate_series(1, 60000) g WHERE md5(repeat(g::text, 60)) <> ''x''') j \gset
SELECT value::bigint - :ticks_before - (:'prefix_json'::jsonb ->> 'Profile Ticks')::bigint AS prefix_ticks,
	   (:'prefix_json'::jsonb ->> 'Exact Prefix')::float8 AS prefix_ms,
	   (:'prefix_json'::jsonb ->> 'Execution Time')::float8 AS run_ms
  FROM fasttime_status() WHERE name = 'profile_ticks' \gset
SELECT :prefix_ticks >= 1 OR :run_ms < 30 AS prefix_ticked,
	   :prefix_ticks <= (least(:prefix_ms, :run_ms) - 25) / 5 + 3 AS prefix_ticks_every_5ms;
SET fasttime.profile_after = 0;
-- a run of many cheap calls ends its exact prefix once its reads have
-- cost a quarter of its time, at a tick that comes after one interval
-- when the planner expects the read bound to be passed: with
-- profile_after = 30s, 2M rows through a nested loop (about 0.1 s,
-- estimated at 1e10 calls) switch within the first second
SET fasttime.profile_after = '30s';
SELECT j ->> 'Node Timing' AS many_calls_switch,
	   (j ->> 'Exact Prefix')::float8 < 1000 AS prefix_short
  FROM ft_eo_json_of('SELECT count(*) FROM (SELECT 1 FROM generate_series(1, 100000) a, generate_series(1, 100000) b LIMIT 2000000) s') j;
SET fasttime.profile_after = 0;
-- ticks lengthen as a run goes on: 250 ticks at 1 ms, then 2 ms ones up
-- to fasttime.profile_interval_max (a run of about a second of waits);
-- one interval when the longest is the first
SET fasttime.profile_interval_max = 2;
SELECT j ->> 'Profile Interval' AS first_interval,
	   j ->> 'Profile Longest Interval' AS longest_interval
  FROM ft_eo_json_of('SELECT count(*) FROM (SELECT pg_sleep(0.001) FROM generate_series(1, 1000)) s') j;
SELECT l ~ '^Node Timing: profiled \(exact for the first [0-9.]+ ms, then [0-9]+ ticks of 1 to 2 ms( from the tick worker(, then timer signals)?)?; a node holding 10 % of the time: \+-[0-9.]+ %\)$'
	   AS lengthened_line
  FROM ft_eo_lines('CLOCK_SOURCE', 'SELECT count(*) FROM (SELECT pg_sleep(0.001) FROM generate_series(1, 1000)) s') l
 WHERE l LIKE '%Node Timing%';
SET fasttime.profile_interval_max = 1;
SELECT j ->> 'Profile Longest Interval' AS fixed_interval
  FROM ft_eo_json_of('SELECT count(*) FROM (SELECT pg_sleep(0.001) FROM generate_series(1, 400)) s') j;
RESET fasttime.profile_interval_max;
SET fasttime.clock_source = clock_gettime;
SELECT l AS profiled_clock_gettime FROM ft_eo_lines('CLOCK_SOURCE', 'SELECT count(*) FROM ft_eo, pg_sleep(0.05)') l
 WHERE l LIKE '%Timing Source%';
RESET fasttime.profile_after;

RESET fasttime.clock_source;
DROP FUNCTION ft_eo_lines, ft_eo_line, ft_eo_expected_line, ft_eo_json, ft_eo_props,
	ft_eo_inner, ft_eo_json_of;
DROP TABLE ft_eo;
