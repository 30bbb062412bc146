-- test/load/setup.sql: tables and the checking function for stage_load.sh
CREATE TABLE orders AS
	SELECT g AS id, g % 5000 AS customer, (g * 7919) % 100000 AS amount,
		   md5(g::text) AS note
	FROM generate_series(1, 100000) g;
CREATE TABLE customers AS
	SELECT g AS id, 'c' || g AS name, g % 50 AS region
	FROM generate_series(0, 4999) g;
CREATE INDEX ON orders (customer);
CREATE INDEX ON orders (amount);
ALTER TABLE customers ADD PRIMARY KEY (id);
VACUUM ANALYZE orders, customers;

-- Run EXPLAIN (ANALYZE, FORMAT JSON) on a query and raise an ERROR (a
-- failed transaction in pgbench) if any node time is negative, has
-- startup after total, or exceeds the Execution Time times the number of
-- processes whose times are summed at that node.
CREATE FUNCTION ft_explain_check(q text) RETURNS int
LANGUAGE plpgsql AS $$
DECLARE
	j jsonb;
	exec float8;
	bad text;
	nodes int;
BEGIN
	EXECUTE 'EXPLAIN (ANALYZE, FORMAT JSON) ' || q INTO j;
	exec := (j -> 0 ->> 'Execution Time')::float8;
	WITH RECURSIVE n(node, procs) AS (
		SELECT j -> 0 -> 'Plan', 1
		UNION ALL
		SELECT c.value,
			   n.procs + CASE WHEN n.node ->> 'Node Type' IN ('Gather', 'Gather Merge')
							  THEN coalesce((n.node ->> 'Workers Launched')::int, 0)
							  ELSE 0 END
		FROM n CROSS JOIN LATERAL jsonb_array_elements(n.node -> 'Plans') c
	), t AS (
		SELECT node ->> 'Node Type' AS name, procs,
			   (node ->> 'Actual Startup Time')::float8 AS s,
			   (node ->> 'Actual Total Time')::float8 AS tot,
			   (node ->> 'Actual Loops')::float8 AS loops
		FROM n
	)
	SELECT count(*) FILTER (WHERE tot IS NOT NULL),
		   string_agg(format('%s: %s..%s ms x %s loops, execution %s ms x %s processes',
							 name, s, tot, loops, exec, procs), '; ')
			 FILTER (WHERE s < 0 OR tot < 0 OR s > tot + 0.01
					 OR tot * loops > exec * procs + 0.01 * greatest(loops, 1))
	INTO nodes, bad
	FROM t;
	IF bad IS NOT NULL THEN
		RAISE EXCEPTION 'fasttime load check: insane node times: %', bad;
	END IF;
	IF nodes = 0 THEN
		RAISE EXCEPTION 'fasttime load check: no node times in %', j;
	END IF;
	RETURN nodes;
END $$;

-- nested statements (PL/pgSQL via SPI), timed inside the outer query
CREATE FUNCTION ft_customer_total(c int) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE r bigint;
BEGIN
	SELECT sum(amount) INTO r FROM orders WHERE customer = c;
	RETURN r;
END $$;
