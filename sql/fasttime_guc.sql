--
-- fasttime.clock_source and fasttime.clock_source_status
--
-- Whether this machine's TSC is usable is not known in advance, so the
-- machine-dependent parts are written as relations that must hold either
-- way: "tsc" is accepted exactly when the TSC is usable, and then the
-- status says tsc; otherwise it is refused with SQLSTATE 0A000.
--

-- try a setting, report the outcome in a machine-independent way
CREATE FUNCTION try_source(src text) RETURNS text
LANGUAGE plpgsql AS $$
BEGIN
	PERFORM set_config('fasttime.clock_source', src, false);
	RETURN 'status=' || current_setting('fasttime.clock_source_status');
EXCEPTION WHEN OTHERS THEN
	RETURN 'refused ' || SQLSTATE;
END
$$;

-- can the current role read a setting?
CREATE FUNCTION can_read(setting text) RETURNS text
LANGUAGE plpgsql AS $$
BEGIN
	PERFORM current_setting(setting);
	RETURN 'readable';
EXCEPTION WHEN insufficient_privilege THEN
	RETURN 'refused ' || SQLSTATE;
END
$$;

SELECT name, boot_val, context, vartype, enumvals,
       CASE WHEN vartype IN ('integer', 'bool') THEN setting = boot_val
            ELSE setting IN ('auto', 'tsc', 'clock_gettime') END AS setting_ok
  FROM pg_settings
 WHERE name LIKE 'fasttime.%' AND name NOT LIKE 'fasttime.fault%'  -- test builds
 ORDER BY name;

SHOW fasttime.clock_source;

-- the status is read-only everywhere
SET fasttime.clock_source_status = 'tsc';
ALTER SYSTEM SET fasttime.clock_source_status = 'tsc';
SET fasttime.clock_source_status TO DEFAULT;

-- the hidden hand-over to parallel workers cannot be set by users
SET fasttime.leader_facts = 'ft1:00000000:';
SET fasttime.leader_facts = 'ft2:00000000:';
-- superusers can read it (tag ft2, the layout hash, the hex image)
SELECT current_setting('fasttime.leader_facts') ~ '^(ft2:[0-9a-f]{8}:[0-9a-f]+)?$'
  AS leader_facts_shape;
-- nor can what the clock checks hand over (empty: this backend's clocks
-- have not disagreed)
SET fasttime.leader_clock_check = 'fell back: no';
SELECT current_setting('fasttime.leader_clock_check') = '' AS no_clock_check_to_hand_over;

-- bad values
SET fasttime.clock_source = 'rdtsc';
SET fasttime.clock_source = '';
SET fasttime.unknown_setting = 1;

-- removed in 1.0 (CHANGELOG.md): fasttime.timing_sample_interval is an
-- unknown name under fasttime's reserved prefix, and ordered_reads has no
-- "start" any more
SET fasttime.timing_sample_interval = 1;
SET fasttime.ordered_reads = start;

-- clock_gettime is always possible and is stock timing
SET fasttime.clock_source = clock_gettime;
SHOW fasttime.clock_source_status;

-- tsc: accepted with status tsc, or refused with feature_not_supported
SELECT try_source('tsc') IN ('status=tsc', 'refused 0A000') AS tsc_outcome_valid;

-- try_tsc uses the TSC exactly when tsc would be accepted
SELECT (try_source('tsc') = 'status=tsc') =
       (try_source('try_tsc') = 'status=tsc') AS try_tsc_agrees_with_tsc;
SELECT try_source('try_tsc') IN ('status=tsc', 'status=clock_gettime') AS try_tsc_never_fails;

-- auto never fails and says what it chose
SELECT try_source('auto') IN ('status=tsc', 'status=clock_gettime') AS auto_outcome_valid;
-- auto only chooses the TSC where tsc would be accepted
SELECT try_source('auto') = 'status=clock_gettime' OR try_source('tsc') = 'status=tsc'
  AS auto_is_conservative;

-- a refused SET leaves the previous value in place
SET fasttime.clock_source = clock_gettime;
SELECT try_source('tsc') = 'status=tsc'
       OR current_setting('fasttime.clock_source') = 'clock_gettime' AS refusal_keeps_old_value;

-- a function's SET clause runs the setting's check at every call: it
-- says nothing, whether the TSC is usable or not (SHOW and
-- fasttime_status() say what try_tsc fell back to)
CREATE FUNCTION timed_try_tsc() RETURNS boolean LANGUAGE sql
  SET fasttime.clock_source = try_tsc
  AS $$SELECT current_setting('fasttime.clock_source_status') IN ('tsc', 'clock_gettime')$$;
SELECT timed_try_tsc(), timed_try_tsc(), timed_try_tsc();
DROP FUNCTION timed_try_tsc();

-- SET LOCAL and RESET behave like any setting
BEGIN;
SET LOCAL fasttime.clock_source = clock_gettime;
SHOW fasttime.clock_source;
COMMIT;
RESET fasttime.clock_source;
SHOW fasttime.clock_source;

-- superuser-only, like core's timing settings; GRANT SET ON PARAMETER works
CREATE ROLE fasttime_plain;
SET ROLE fasttime_plain;
SET fasttime.clock_source = clock_gettime;
SELECT current_setting('fasttime.clock_source_status') IN ('tsc', 'clock_gettime') AS status_readable;
RESET ROLE;
GRANT SET ON PARAMETER fasttime.clock_source TO fasttime_plain;
SET ROLE fasttime_plain;
SET fasttime.clock_source = clock_gettime;
SHOW fasttime.clock_source_status;
RESET fasttime.clock_source;
-- the facts handed to parallel workers (CPU, hypervisor, clocksources) are
-- for superusers only (the error's wording differs between versions, its
-- SQLSTATE does not)
SELECT can_read('fasttime.leader_facts') AS leader_facts,
       can_read('fasttime.leader_clock_check') AS leader_clock_check,
       can_read('fasttime.clock_source_status') AS clock_source_status;
SELECT count(*) FROM pg_settings
 WHERE name IN ('fasttime.leader_facts', 'fasttime.leader_clock_check');
RESET ROLE;
SELECT can_read('fasttime.leader_facts') AS leader_facts_as_superuser;
REVOKE SET ON PARAMETER fasttime.clock_source FROM fasttime_plain;
DROP ROLE fasttime_plain;

DROP FUNCTION try_source(text);
DROP FUNCTION can_read(text);
