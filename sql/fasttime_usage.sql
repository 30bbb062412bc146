-- fasttime_usage: which nodes' buffer and WAL usage is derived from their
-- parent's (src/usage_derive.c), and which must not be.  A derived node's
-- calls make no transitions; its totals are copied from its parent's, an
-- Aggregate that provably does no buffer or WAL work of its own.  Whether
-- the totals then equal stock's is t/007's to check (every variant
-- against stock); here, that the shapes that allow it get it and the
-- shapes that would make it wrong do not.
SET client_min_messages = warning;
SET max_parallel_workers_per_gather = 0;
SET jit = off;
SET fasttime.clock_source = try_tsc;

CREATE TABLE fu AS SELECT g, g % 10 AS k, md5(g::text) AS s
FROM generate_series(1, 20000) g;
-- values past the TOAST threshold that do not compress: stored out of
-- line, so detoasting them reads the TOAST table's buffers
CREATE TABLE fu_toast AS
SELECT g AS id, (SELECT string_agg(md5(g::text || x::text), '')
				 FROM generate_series(1, 100) x) AS big
FROM generate_series(1, 50) g;
ANALYZE fu, fu_toast;
CREATE FUNCTION fu_reads(n bigint) RETURNS bigint LANGUAGE plpgsql AS $$
BEGIN
	RETURN n + (SELECT count(*) FROM fu_toast);
END $$;

-- Run EXPLAIN ANALYZE with the options given on a query; return how many
-- nodes had their usage derived, and the top node's and its child's
-- shared hits.
CREATE FUNCTION fu_derived(opts text, q text,
						   OUT derived int, OUT top_hits bigint,
						   OUT child_hits bigint)
LANGUAGE plpgsql AS $$
DECLARE
	plan json;
BEGIN
	EXECUTE format('EXPLAIN (ANALYZE, FORMAT JSON, %s) %s', opts, q) INTO plan;
	SELECT value::int INTO derived FROM fasttime_status()
	WHERE name = 'usage_derived_nodes_last_query';
	top_hits := (plan -> 0 -> 'Plan' ->> 'Shared Hit Blocks')::bigint;
	child_hits := (plan -> 0 -> 'Plan' -> 'Plans' -> 0 ->> 'Shared Hit Blocks')::bigint;
END $$;

-- derived: aggregates of integers and floats over their input, with
-- arithmetic, casts and a HAVING clause; a chain of two
SELECT derived, top_hits = child_hits AS same_hits, top_hits > 0 AS counted
FROM fu_derived('BUFFERS', 'SELECT count(*) FROM fu');
SELECT derived, top_hits = child_hits AS same_hits
FROM fu_derived('BUFFERS', 'SELECT count(*), sum(g), avg(k), min(g), max(g::int8), avg(g::float8), sum(g::int8) FROM fu WHERE k < 5');
SELECT derived, top_hits = child_hits AS same_hits
FROM fu_derived('BUFFERS', 'SELECT count(*) * 2, count(s) FROM fu HAVING count(*) > 5');
SELECT derived
FROM fu_derived('BUFFERS', 'SELECT sum(c) FROM (SELECT count(*) AS c FROM fu) x');
-- WAL alone counts too; with neither, there is nothing to derive
SELECT derived FROM fu_derived('BUFFERS OFF, WAL', 'SELECT count(*) FROM fu');
SELECT derived FROM fu_derived('BUFFERS OFF', 'SELECT count(*) FROM fu');
-- profiled timing: the same
SET fasttime.node_timing = profile;
SELECT derived, top_hits = child_hits AS same_hits
FROM fu_derived('BUFFERS', 'SELECT count(*) FROM fu');
RESET fasttime.node_timing;
-- fasttime.derived_usage = off: every node compares at its own calls
SET fasttime.derived_usage = off;
SELECT derived FROM fu_derived('BUFFERS', 'SELECT count(*) FROM fu');
RESET fasttime.derived_usage;

-- not derived: the Aggregate reads buffers of its own
-- detoasting an argument (max over text): the Aggregate's own hits
SELECT derived, top_hits > child_hits AS aggregate_reads_more
FROM fu_derived('BUFFERS', 'SELECT count(*), max(big) FROM fu_toast');
-- a function running a query, in the target list and in an argument
SELECT derived, top_hits > child_hits AS aggregate_reads_more
FROM fu_derived('BUFFERS', 'SELECT fu_reads(count(*)) FROM fu');
SELECT derived FROM fu_derived('BUFFERS', 'SELECT sum(fu_reads(g)) FROM fu WHERE g < 3');
-- DISTINCT inside the aggregate (it sorts, and may spill)
SELECT derived FROM fu_derived('BUFFERS', 'SELECT count(DISTINCT k) FROM fu');
-- grouping (a hash table, which may spill)
SELECT derived FROM fu_derived('BUFFERS', 'SELECT k, count(*) FROM fu GROUP BY k');
-- an InitPlan attached to the Aggregate, read by the scan below it: only
-- the InitPlan's own Aggregate is derived
SELECT derived FROM fu_derived('BUFFERS', 'SELECT count(*) FROM fu WHERE g < (SELECT max(g) / 2 FROM fu)');
-- a child that depends on a parameter (rescanned inside the parent's call)
SELECT derived FROM fu_derived('BUFFERS',
	'SELECT (SELECT count(*) FROM fu WHERE fu.k = t.k) FROM (VALUES (1), (2)) t(k)');

DROP FUNCTION fu_derived(text, text);
DROP FUNCTION fu_reads(bigint);
DROP TABLE fu, fu_toast;
