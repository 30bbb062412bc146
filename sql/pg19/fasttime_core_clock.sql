--
-- fasttime_core_clock (PostgreSQL 19 and later): fasttime next to the
-- server's own clock, timing_clock_source.
--
-- auto follows the server: it times plan nodes with the TSC only where
-- the server's TSC clock is in effect (and fasttime's own facts accept the
-- TSC).  Whatever times the nodes, their times are written in the unit the
-- server's instr_time has (TSC ticks when its TSC clock is in effect,
-- nanoseconds otherwise), so that EXPLAIN reads them right.  Whether the
-- server's TSC clock can be switched on depends on the machine, so what
-- depends on it is checked, not printed.
--
-- the server's TSC clock, if this machine has it: true, or false when the
-- server refuses it
CREATE FUNCTION core_tsc_on() RETURNS bool LANGUAGE plpgsql AS $$
BEGIN
	SET timing_clock_source = tsc;
	RETURN current_setting('timing_clock_source') = 'tsc';
EXCEPTION WHEN OTHERS THEN
	RETURN false;
END
$$;
CREATE FUNCTION status(n text) RETURNS text LANGUAGE sql AS
$$ SELECT value FROM fasttime_status() WHERE name = n $$;
-- the server on the system clock: nanoseconds, and auto does not use the TSC
SET fasttime.clock_source = auto;
SET timing_clock_source = system;
SELECT status('core_timing_clock_source') AS core_setting,
       status('core_tsc_enabled') AS core_tsc,
       status('node_time_unit') AS unit,
       current_setting('fasttime.clock_source_status') AS auto_clock;
-- where fasttime's own facts accept the TSC, auto says it follows the server
SELECT status('tsc_usable') = 'false'
       OR status('auto_reason') NOT LIKE 'auto chose the TSC%'
       OR status('auto_reason') LIKE '%the server''s own timing uses the system clock (timing_clock_source = system)%'
       AS auto_reason_names_server;
-- the server on its TSC clock, where it can be: TSC ticks, and auto uses
-- the TSC exactly when fasttime's facts accept it
SELECT NOT core_tsc_on()
       OR (status('core_tsc_enabled') = 'true' AND status('node_time_unit') = 'tsc_ticks'
           AND (current_setting('fasttime.clock_source_status') = 'tsc') =
               (status('auto_reason') NOT LIKE 'auto chose clock_gettime%'))
       AS core_tsc_followed;
RESET timing_clock_source;
-- Node times in the server's unit: a plan that sleeps 100 ms, under every
-- fasttime.clock_source (tsc where fasttime can use it), with the server on
-- either clock.  The top node must have taken at least
-- the 100 ms slept and no more than the whole execution, which the server
-- times itself: TSC ticks read as nanoseconds, or the reverse, would be
-- off by the TSC's frequency in GHz.
CREATE FUNCTION node_times_consistent() RETURNS bool LANGUAGE plpgsql AS $$
DECLARE
	core text;
	ft text;
	j json;
	node_ms float8;
	exec_ms float8;
	ok bool := true;
BEGIN
	FOREACH core IN ARRAY ARRAY['system', 'tsc'] LOOP
		IF core = 'tsc' AND NOT core_tsc_on() THEN
			CONTINUE;
		END IF;
		EXECUTE format('SET timing_clock_source = %s', core);
		FOREACH ft IN ARRAY ARRAY['auto', 'try_tsc', 'clock_gettime'] LOOP
			EXECUTE format('SET fasttime.clock_source = %s', ft);
			EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, FORMAT JSON) '
				'SELECT pg_sleep(0.01) FROM generate_series(1, 10)' INTO j;
			node_ms := (j -> 0 -> 'Plan' ->> 'Actual Total Time')::float8;
			exec_ms := (j -> 0 ->> 'Execution Time')::float8;
			IF NOT (node_ms >= 100.0 AND node_ms <= exec_ms) THEN
				ok := false;
				RAISE NOTICE 'timing_clock_source %, fasttime.clock_source %: node % ms, execution % ms',
					core, ft, node_ms, exec_ms;
			END IF;
		END LOOP;
	END LOOP;
	RESET timing_clock_source;
	RESET fasttime.clock_source;
	RETURN ok;
END
$$;
SELECT node_times_consistent();
DROP FUNCTION node_times_consistent();
-- EXPLAIN (CLOCK_SOURCE) names the frequency that converts the node times:
-- the server's when its TSC clock is in effect (the nodes hold its raw
-- ticks), fasttime's otherwise.  Checked wherever fasttime times with the
-- TSC; a machine without a usable TSC passes trivially.
CREATE FUNCTION label_frequency_right() RETURNS bool LANGUAGE plpgsql AS $$
DECLARE
	core text;
	j json;
	khz float8;
	origin text;
	server_khz float8;
	ok bool := true;
BEGIN
	SET fasttime.clock_source = try_tsc;
	SET fasttime.node_timing = exact;
	FOREACH core IN ARRAY ARRAY['system', 'tsc'] LOOP
		IF core = 'tsc' AND NOT core_tsc_on() THEN
			CONTINUE;
		END IF;
		EXECUTE format('SET timing_clock_source = %s', core);
		EXECUTE 'EXPLAIN (ANALYZE, CLOCK_SOURCE, COSTS OFF, FORMAT JSON) '
			'SELECT count(*) FROM generate_series(1, 10000)' INTO j;
		IF (j -> 0 ->> 'Timing Source') IS DISTINCT FROM 'tsc' THEN
			CONTINUE;
		END IF;
		khz := (j -> 0 ->> 'TSC Frequency')::float8;
		origin := j -> 0 ->> 'TSC Frequency Origin';
		server_khz := status('core_tsc_frequency_khz')::float8;
		IF khz IS NULL OR origin IS NULL THEN
			ok := false;
			RAISE NOTICE 'TSC-timed, but EXPLAIN names no frequency or origin: %', j;
		ELSIF core = 'tsc' AND NOT (origin = 'server' AND abs(khz - server_khz) <= server_khz * 0.001) THEN
			ok := false;
			RAISE NOTICE 'server TSC clock at % kHz: EXPLAIN says % kHz (%)', server_khz, khz, origin;
		ELSIF core = 'system' AND (origin = 'server' OR
				abs(khz - status('tsc_frequency_khz')::float8) > khz * 0.001) THEN
			ok := false;
			RAISE NOTICE 'server on the system clock: EXPLAIN says % kHz (%), fasttime has % kHz',
				khz, origin, status('tsc_frequency_khz');
		END IF;
	END LOOP;
	RESET timing_clock_source;
	RESET fasttime.clock_source;
	RESET fasttime.node_timing;
	RETURN ok;
END
$$;
SELECT label_frequency_right();
DROP FUNCTION label_frequency_right();
DROP FUNCTION status(text);
DROP FUNCTION core_tsc_on();
