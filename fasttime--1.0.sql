/* fasttime--1.0.sql */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION fasttime" to load this file. \quit

--
-- pg_test_timing from inside the server, for every clock source at once.
-- Buckets are [lower_ns, upper_ns): bucket 0 is [0, 1), deltas of 0 ns
-- (two reads that returned the same time); bucket b >= 1 is
-- [2^(b-1), 2^b).  duration is in seconds per source, 0.01 to 60; a NULL
-- duration gives no rows, a NULL source measures every usable source.
--
CREATE FUNCTION fasttime_histogram(
	duration float8 DEFAULT 3,
	source text DEFAULT NULL)
RETURNS TABLE (
	source text,
	lower_ns bigint,
	upper_ns bigint,
	count bigint,
	percent float8,
	cumulative_percent float8,
	bar text)
AS 'MODULE_PATHNAME', 'fasttime_histogram'
LANGUAGE C VOLATILE PARALLEL UNSAFE ROWS 60;

COMMENT ON FUNCTION fasttime_histogram(float8, text) IS
'pg_test_timing histogram of consecutive clock reads, per clock source, lowest bucket first';

--
-- The cost of one read of each clock source: clock_gettime (stock
-- PostgreSQL's clock), tsc (plain RDTSC; on aarch64 MRS CNTVCT_EL0) and
-- tsc_ordered (RDTSCP where the CPU has it, else LFENCE;RDTSC; on aarch64
-- ISB;MRS).  Exact node timing reads LFENCE;RDTSC by default, so on a CPU
-- with RDTSCP tsc_ordered is a read of the same kind, not the same
-- instructions (docs/sql-functions.md).  source =>
-- 'profile_tick' instead measures what one tick of profiled timing costs
-- the backend, in CPU time (measured once per backend, then kept).
--
CREATE FUNCTION fasttime_overhead(
	duration float8 DEFAULT 1,
	source text DEFAULT NULL)
RETURNS TABLE (
	source text,
	loops bigint,
	ns_per_loop float8,
	min_ns bigint,
	median_ns bigint,
	p99_ns bigint,
	max_ns bigint,
	verdict text)
AS 'MODULE_PATHNAME', 'fasttime_overhead'
LANGUAGE C VOLATILE PARALLEL UNSAFE ROWS 3;

COMMENT ON FUNCTION fasttime_overhead(float8, text) IS
'cost of one clock read per clock source, and whether per-node timing is affordable';

--
-- What fasttime found on this machine and chose, one name/value row per
-- fact (docs/sql-functions.md lists every row).  It measures nothing.
--
CREATE FUNCTION fasttime_status()
RETURNS TABLE (
	name text,
	value text)
AS 'MODULE_PATHNAME', 'fasttime_status'
LANGUAGE C VOLATILE PARALLEL RESTRICTED ROWS 30;

COMMENT ON FUNCTION fasttime_status() IS
'what fasttime knows about this machine''s clocks, what it chose and why';

CREATE FUNCTION fasttime_drift(
	duration float8 DEFAULT 1)
RETURNS TABLE (
	tsc_ns bigint,
	clock_gettime_ns bigint,
	drift_ppm float8,
	monotonic_raw_ns bigint,
	drift_raw_ppm float8)
AS 'MODULE_PATHNAME', 'fasttime_drift'
LANGUAGE C VOLATILE PARALLEL UNSAFE ROWS 1;

COMMENT ON FUNCTION fasttime_drift(float8) IS
'one interval measured by the TSC, by clock_gettime (CLOCK_MONOTONIC) and by CLOCK_MONOTONIC_RAW, to check the TSC conversion';

-- The measuring functions keep a CPU busy (or, for fasttime_drift, a
-- backend) for up to a minute per source: not for everyone, but for the
-- monitoring role.  fasttime_status only reports cached facts.
REVOKE EXECUTE ON FUNCTION fasttime_histogram(float8, text) FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION fasttime_overhead(float8, text) FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION fasttime_drift(float8) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION fasttime_histogram(float8, text) TO pg_monitor;
GRANT EXECUTE ON FUNCTION fasttime_overhead(float8, text) TO pg_monitor;
GRANT EXECUTE ON FUNCTION fasttime_drift(float8) TO pg_monitor;
