CREATE OR REPLACE FUNCTION ft_json_of(q text) RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE plan json;
BEGIN
	EXECUTE 'EXPLAIN (ANALYZE, CLOCK_SOURCE, FORMAT JSON) ' || q INTO plan;
	RETURN plan::jsonb -> 0;
END $$;
SET fasttime.profile_after = '100ms';
SELECT value::bigint AS ticks_before FROM fasttime_status() WHERE name = 'profile_ticks' \gset
SELECT j AS prefix_json FROM ft_json_of('SELECT count(*) FROM generate_series(1, 60000) g WHERE md5(repeat(g::text, 60)) <> ''x''') j \gset
SELECT value::bigint - :ticks_before AS all_ticks, (:'prefix_json'::jsonb ->> 'Profile Ticks')::bigint AS run_ticks,
	   (:'prefix_json'::jsonb ->> 'Exact Prefix')::float8 AS prefix_ms,
	   (:'prefix_json'::jsonb ->> 'Execution Time')::float8 AS run_ms
  FROM fasttime_status() WHERE name = 'profile_ticks';
