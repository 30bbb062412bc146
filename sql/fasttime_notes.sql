-- fasttime_notes: the per-query notes (what timed each instrumented query)
-- go away with their query, however it ends, and each plan node is
-- counted once.
LOAD 'auto_explain';
SET auto_explain.log_min_duration = 0;
SET auto_explain.log_analyze = on;
SET client_min_messages = warning;
SELECT value::bigint AS small_before FROM fasttime_status() WHERE name = 'small_plans_left_stock' \gset
-- (auto_explain instruments every query; the status queries below are
-- small plans, left as stock built them, with no note: 0 means no note is
-- left)

-- a cursor whose FETCH fails inside a savepoint: its portal never reaches
-- ExecutorEnd, and the note must still go (40 times over)
DO $$
BEGIN
	FOR i IN 1..40 LOOP
		BEGIN
			PERFORM count(*) FROM (SELECT 1 / (3 - g) FROM generate_series(1, 50) g) s;
		EXCEPTION WHEN division_by_zero THEN
			NULL;
		END;
	END LOOP;
END
$$;
SELECT value AS open_query_notes FROM fasttime_status() WHERE name = 'open_query_notes';
-- the queries above were put on fasttime's wrappers, so that there were
-- notes to lose: the two small plans since the count was read are the
-- status queries (the one above and the one reading it)
SELECT value::bigint - :small_before AS small_plans_since
  FROM fasttime_status() WHERE name = 'small_plans_left_stock';

BEGIN;
DECLARE c CURSOR FOR SELECT 1 / (3 - g) FROM generate_series(1, 50) g;
SAVEPOINT s;
FETCH ALL FROM c;
ROLLBACK TO s;
CLOSE c;
COMMIT;
SELECT value AS open_query_notes FROM fasttime_status() WHERE name = 'open_query_notes';

-- the same with a PL/pgSQL cursor fetched inside an EXCEPTION block,
-- 10,000 times: the session ends up like a fresh one
CREATE FUNCTION fetch_failing() RETURNS int LANGUAGE plpgsql AS $$
DECLARE
	c refcursor;
	r int;
BEGIN
	OPEN c FOR SELECT 1 / (3 - g) FROM generate_series(1, 50) g;
	BEGIN
		LOOP
			FETCH c INTO r;
			EXIT WHEN NOT FOUND;
		END LOOP;
	EXCEPTION WHEN division_by_zero THEN
		RETURN -1;
	END;
	RETURN r;
END
$$;
SELECT count(*) FILTER (WHERE fetch_failing() = -1) AS failed_fetches
  FROM generate_series(1, 10000);
SELECT value AS open_query_notes FROM fasttime_status() WHERE name = 'open_query_notes';

-- nested: a note per open query while they run, none afterwards
SELECT count(*) FROM (SELECT fetch_failing() FROM generate_series(1, 30)) s;
SELECT value AS open_query_notes FROM fasttime_status() WHERE name = 'open_query_notes';

-- a plan of fewer than 8 estimated node calls (a one-row lookup) under
-- auto_explain is left as stock built it: counted, no note; a larger one
-- is not; nor is the plan of an EXPLAIN ANALYZE, however small, nor one
-- asked for with exact timing and fasttime.clock_source = clock_gettime
-- (stock anyway).
-- Each count includes the status query reading it.
CREATE TABLE notes_small AS SELECT g FROM generate_series(1, 1000) g;
CREATE INDEX ON notes_small (g);
ANALYZE notes_small;
SELECT value::bigint AS small_before FROM fasttime_status() WHERE name = 'small_plans_left_stock' \gset
SELECT g FROM notes_small WHERE g = 7;
SELECT value::bigint - :small_before AS small_lookup
  FROM fasttime_status() WHERE name = 'small_plans_left_stock';
SELECT value::bigint AS small_before FROM fasttime_status() WHERE name = 'small_plans_left_stock' \gset
SELECT count(*) FROM notes_small;
DO $$
DECLARE j json;
BEGIN
	EXECUTE 'EXPLAIN (ANALYZE, FORMAT JSON) SELECT g FROM notes_small WHERE g = 7' INTO j;
END
$$;
SET fasttime.clock_source = clock_gettime;
SET fasttime.node_timing = exact;
SELECT g FROM notes_small WHERE g = 8;
RESET fasttime.clock_source;
RESET fasttime.node_timing;
SELECT value::bigint - :small_before AS small_others
  FROM fasttime_status() WHERE name = 'small_plans_left_stock';
SELECT value AS open_query_notes FROM fasttime_status() WHERE name = 'open_query_notes';
DROP TABLE notes_small;
RESET auto_explain.log_min_duration;

-- each node counted once: this plan has three nodes (a Function Scan, a
-- SubPlan's Aggregate and the Seq Scan below it); where the TSC is not
-- usable there is nothing to count
CREATE TABLE notes_big AS SELECT g AS x FROM generate_series(1, 1000) g;
SET fasttime.clock_source = try_tsc;
DO $$
BEGIN
	EXECUTE 'EXPLAIN (ANALYZE) SELECT g, (SELECT max(x) FROM notes_big WHERE x < g) FROM generate_series(1, 3) g';
END
$$;
SELECT CASE WHEN current_setting('fasttime.clock_source_status') = 'tsc'
            THEN value::int ELSE 3 END AS nodes_counted_once
  FROM fasttime_status() WHERE name = 'tsc_timed_nodes_last_query';
RESET fasttime.clock_source;

DROP TABLE notes_big;
DROP FUNCTION fetch_failing();
