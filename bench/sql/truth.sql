-- bench/sql/truth.sql: the ground-truth pairs of bench/truth.sh (after
-- setup.sql and harness.sql).
--
-- Each pair is two queries with the same plan, the same rows and the same
-- node calls; the second ("work") adds CPU work or waits inside one known
-- node, the target (or memory latency: the same loads, made to miss the
-- caches).  The difference of their run times is the cost of that
-- work, so a truthful timing mode shows that difference on the target's
-- inclusive time, and none of it in the own time of any node outside the
-- target's subtree.  The per-call observer effect of a mode cancels: both
-- queries make the same calls.  (Not quite for memory latency: an ordered
-- read waits for the loads in flight, so misses that plain reads let
-- overlap are paid one after another, and the work costs more under
-- ordered reads.  Each mode is judged against its own difference.)
--
-- target: the plan node doing the added work, as "Node Type" or
-- "Node Type/alias", the first match in pre-order (subplans included); a
-- trailing "+" lets the work show anywhere in the target's subtree (the
-- parallel pair: the work runs in the processes below its Gather, whose
-- node times are averages over them).
-- Every added work is meant to be 100 ms or more on these machines, and
-- where the rest of the plan is large, about as large as the rest of the
-- plan: the check reads the work against the noise of the whole plan (the
-- guest's speed moves between runs), so a small difference over a large
-- plan measures the noise.  bench/truth.py flags a pair whose measured
-- difference is smaller than 100 ms.
\set ON_ERROR_STOP 1
SET client_min_messages = warning;
SET max_parallel_workers_per_gather = 0;

-- CPU work that the executor does not see: a PL/pgSQL loop (no query, no
-- buffers, no plan nodes).
CREATE OR REPLACE FUNCTION truth_spin(n int) RETURNS bool
LANGUAGE plpgsql AS $$
DECLARE
	x bigint := 0;
BEGIN
	FOR i IN 1..n LOOP
		x := x + i;
	END LOOP;
	RETURN x >= 0;
END
$$;

-- A wait: the backend sleeps, using no CPU.
CREATE OR REPLACE FUNCTION truth_sleep(s float8) RETURNS bool
LANGUAGE plpgsql AS $$
BEGIN
	IF s > 0 THEN
		PERFORM pg_sleep(s);
	END IF;
	RETURN true;
END
$$;

-- The same loop declared IMMUTABLE (it is: the result depends on n alone),
-- for a qual that must not stop the planner from caching (Memoize); give
-- it an argument that depends on a column, or the planner folds the call.
CREATE OR REPLACE FUNCTION truth_spin_imm(n int) RETURNS bool
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
	x bigint := 0;
BEGIN
	FOR i IN 1..n LOOP
		x := x + i;
	END LOOP;
	RETURN x >= 0;
END
$$;

-- A set-returning PL/pgSQL function: n rows, after spin iterations of work.
CREATE OR REPLACE FUNCTION truth_srf(n int, spin int) RETURNS SETOF int
LANGUAGE plpgsql AS $$
BEGIN
	PERFORM truth_spin(spin);
	RETURN QUERY SELECT g FROM generate_series(1, n) g;
END
$$;

-- A skewed inner side: key 1 has 1,000,000 rows, keys 2..20 one each.
DROP TABLE IF EXISTS truth_skew, truth_outer, truth_outer2, truth_dim, truth_fact;
CREATE TABLE truth_skew(k int NOT NULL, v int NOT NULL);
INSERT INTO truth_skew SELECT CASE WHEN g <= 20 THEN g ELSE 1 END, g
FROM generate_series(1, 1000000) g;
CREATE INDEX truth_skew_k ON truth_skew (k);
CREATE TABLE truth_outer AS SELECT g AS k FROM generate_series(1, 20) g;
CREATE TABLE truth_outer2 AS SELECT g AS k FROM generate_series(1, 2000) g;

-- A dimension of 400,000 rows hashed, sorted and aggregated; a fact table
-- of 500,000 rows probing it (larger, so that the dimension is the side
-- hashed).
CREATE TABLE truth_dim(id int PRIMARY KEY, grp int NOT NULL, pad text NOT NULL);
INSERT INTO truth_dim SELECT g, g % 50, 'p' || g FROM generate_series(1, 400000) g;
CREATE TABLE truth_fact(id int NOT NULL, dim_id int NOT NULL);
INSERT INTO truth_fact SELECT g, 1 + (g::bigint * 7919) % 400000 FROM generate_series(1, 500000) g;
-- Memory latency: a dimension of 1,000,000 rows hashed (a ~43 MB hash
-- table, larger than these machines' caches), a fact table of 3,000,000
-- rows whose two keys both find exactly one row: k_local among the first
-- 1,024 ids (their buckets and tuples stay in the cache), k_rand anywhere
-- (nearly every probe misses the caches twice, bucket and tuple).
DROP TABLE IF EXISTS truth_mdim, truth_mfact;
CREATE TABLE truth_mdim(id int PRIMARY KEY, v int NOT NULL);
INSERT INTO truth_mdim SELECT g, g FROM generate_series(1, 1000000) g;
CREATE TABLE truth_mfact(k_local int NOT NULL, k_rand int NOT NULL);
INSERT INTO truth_mfact SELECT 1 + (hashint4(g) & 1023), 1 + ((hashint4(g)::bigint & 2147483647) % 1000000)
FROM generate_series(1, 3000000) g;
VACUUM (FREEZE, ANALYZE) truth_skew, truth_outer, truth_outer2, truth_dim, truth_fact, truth_mdim, truth_mfact;

DROP TABLE IF EXISTS truth_pairs;
CREATE TABLE truth_pairs(
	id text PRIMARY KEY,
	title text NOT NULL,
	settings text NOT NULL DEFAULT '',
	target text NOT NULL,
	base text NOT NULL,
	work text NOT NULL
);

-- The three costs used below, per evaluation on these machines (roughly):
-- the float expression ~60 ns, md5 of a short text ~0.4 us, truth_spin(n)
-- ~n x 20 ns.
INSERT INTO truth_pairs(id, title, settings, target, base, work) VALUES
('leaf_qual', 'cheap work on every row, in a leaf''s qual', '', 'Seq Scan',
 $q$SELECT count(*) FROM lotsarows WHERE key >= 0$q$,
 $q$SELECT count(*) FROM lotsarows WHERE key >= 0 AND ln(key::float8) >= 0 AND sqrt(key::float8) >= 0 AND cos(key::float8) >= -2 AND sin(key::float8) >= -2$q$),
('agg_arg', 'cheap work on every row, in the aggregate''s argument', '', 'Aggregate',
 $q$SELECT sum(key) FROM lotsarows$q$,
 $q$SELECT sum(key + (ln(key::float8) * 0)::int + (sqrt(key::float8) * 0)::int) FROM lotsarows$q$),
('join_qual', 'work on every joined pair, in a hash join''s qual',
 'enable_mergejoin=off;enable_nestloop=off', 'Hash Join',
 $q$SELECT count(*) FROM orders o JOIN customers c ON c.id = o.customer_id AND o.qty + c.region >= 0 WHERE o.id <= 300000$q$,
 $q$SELECT count(*) FROM orders o JOIN customers c ON c.id = o.customer_id AND o.qty + c.region >= 0 AND md5(md5(md5(o.id::text || c.region::text))) <> '' WHERE o.id <= 300000$q$),
('join_projection', 'work on every joined row, in a join''s projection',
 'enable_mergejoin=off;enable_nestloop=off', 'Hash Join',
 $q$SELECT count(x) FROM (SELECT o.id::text || c.region::text AS x FROM orders o JOIN customers c ON c.id = o.customer_id WHERE o.id <= 300000 OFFSET 0) s$q$,
 $q$SELECT count(x) FROM (SELECT md5(md5(md5(o.id::text || c.region::text))) AS x FROM orders o JOIN customers c ON c.id = o.customer_id WHERE o.id <= 300000 OFFSET 0) s$q$),
('rare_cpu_1e3', '1 row in 1,000 costs ~20 us of CPU, in a leaf''s qual', '', 'Seq Scan',
 $q$SELECT count(*) FROM lotsarows WHERE CASE WHEN key % 1000 = 0 THEN truth_spin(0) ELSE true END$q$,
 $q$SELECT count(*) FROM lotsarows WHERE CASE WHEN key % 1000 = 0 THEN truth_spin(1000) ELSE true END$q$),
('rare_cpu_1e5', '1 row in 100,000 costs ~2 ms of CPU, in a leaf''s qual', '', 'Seq Scan',
 $q$SELECT count(*) FROM lotsarows WHERE CASE WHEN key % 100000 = 0 THEN truth_spin(0) ELSE true END$q$,
 $q$SELECT count(*) FROM lotsarows WHERE CASE WHEN key % 100000 = 0 THEN truth_spin(100000) ELSE true END$q$),
('rare_wait_1e5', '1 row in 100,000 waits 10 ms, in a leaf''s qual', '', 'Seq Scan',
 $q$SELECT count(*) FROM lotsarows WHERE CASE WHEN key % 100000 = 0 THEN truth_sleep(0) ELSE true END$q$,
 $q$SELECT count(*) FROM lotsarows WHERE CASE WHEN key % 100000 = 0 THEN truth_sleep(0.01) ELSE true END$q$),
('rare_cpu_parent', '1 row in 1,000 costs ~60 us of CPU, in the aggregate''s argument', '', 'Aggregate',
 $q$SELECT sum(CASE WHEN key % 1000 = 0 AND truth_spin(0) THEN 1 ELSE 0 END) FROM lotsarows$q$,
 $q$SELECT sum(CASE WHEN key % 1000 = 0 AND truth_spin(3000) THEN 1 ELSE 0 END) FROM lotsarows$q$),
('skewed_inner', 'nested loop, a skewed rescanned inner index scan (one outer row: 1M inner rows)',
 'enable_memoize=off;enable_bitmapscan=off;enable_hashjoin=off;enable_mergejoin=off;enable_seqscan=off', 'Index Scan',
 $q$SELECT count(*) FROM truth_outer o CROSS JOIN LATERAL (SELECT s.v FROM truth_skew s WHERE s.k = o.k AND s.v >= 0 OFFSET 0) x$q$,
 $q$SELECT count(*) FROM truth_outer o CROSS JOIN LATERAL (SELECT s.v FROM truth_skew s WHERE s.k = o.k AND s.v >= 0 AND md5(md5(s.v::text)) <> '' OFFSET 0) x$q$),
('subplan_qual', 'a correlated SubPlan in a qual, the work in the SubPlan''s scan',
 'enable_bitmapscan=off', 'Index Scan/p',
 $q$SELECT count(*) FROM orders o WHERE o.id <= 30000 AND o.qty <= (SELECT max(p.price) FROM prices p WHERE p.product_id = o.product_id AND p.valid_from >= 0)$q$,
 $q$SELECT count(*) FROM orders o WHERE o.id <= 30000 AND o.qty <= (SELECT max(p.price) FROM prices p WHERE p.product_id = o.product_id AND p.valid_from >= 0 AND md5(md5(md5(md5(p.valid_from::text)))) <> '')$q$),
('lateral_srf', 'a PL/pgSQL set-returning function per outer row (LATERAL)',
 'enable_hashjoin=off;enable_mergejoin=off', 'Function Scan',
 $q$SELECT count(*) FROM truth_outer2 o CROSS JOIN LATERAL truth_srf(10 + o.k * 0, 0) f$q$,
 $q$SELECT count(*) FROM truth_outer2 o CROSS JOIN LATERAL truth_srf(10 + o.k * 0, 5000) f$q$),
('hash_build', 'a hash build, the work in the scan below the Hash',
 'enable_mergejoin=off;enable_nestloop=off;work_mem=256MB', 'Seq Scan/d',
 $q$SELECT count(*) FROM truth_fact f JOIN truth_dim d ON d.id = f.dim_id WHERE d.grp >= 0$q$,
 $q$SELECT count(*) FROM truth_fact f JOIN truth_dim d ON d.id = f.dim_id WHERE d.grp >= 0 AND md5(md5(md5(md5(d.pad)))) <> ''$q$),
('hash_probe', 'a hash join''s probe side, the work in its scan (short calls, a row each; the join''s own time grows with it in every mode, stock and the floor: -6 % on 15, float math instead -10 %)',
 'enable_mergejoin=off;enable_nestloop=off;work_mem=256MB', 'Seq Scan/f',
 $q$SELECT count(*) FROM truth_fact f JOIN truth_dim d ON d.id = f.dim_id WHERE f.id >= 0$q$,
 $q$SELECT count(*) FROM truth_fact f JOIN truth_dim d ON d.id = f.dim_id WHERE f.id >= 0 AND md5(md5(md5(f.id::text))) <> ''$q$),
('sort_build', 'a sort, the work in the scan below the Sort', 'work_mem=256MB', 'Seq Scan',
 $q$SELECT count(*) FROM (SELECT d.id FROM truth_dim d WHERE d.grp >= 0 ORDER BY d.grp, d.id OFFSET 0) s$q$,
 $q$SELECT count(*) FROM (SELECT d.id FROM truth_dim d WHERE d.grp >= 0 AND md5(md5(md5(md5(d.pad)))) <> '' ORDER BY d.grp, d.id OFFSET 0) s$q$),
('hashagg_build', 'a hash aggregate, the work in its transition arguments',
 'enable_sort=off;work_mem=256MB', 'Aggregate',
 $q$SELECT grp, sum(id) FROM truth_dim GROUP BY grp$q$,
 $q$SELECT grp, sum(id + length(md5(pad)) * 0) FROM truth_dim GROUP BY grp$q$),
('window_arg', 'a running sum over a sort (WindowAgg), the work in the window aggregate''s argument',
 'work_mem=256MB', 'WindowAgg',
 $q$SELECT count(*), sum(r) FROM (SELECT sum(d.id) OVER (PARTITION BY d.grp ORDER BY d.id) AS r FROM truth_dim d WHERE d.grp >= 0) s$q$,
 $q$SELECT count(*), sum(r) FROM (SELECT sum(d.id + length(md5(md5(d.pad))) * 0) OVER (PARTITION BY d.grp ORDER BY d.id) AS r FROM truth_dim d WHERE d.grp >= 0) s$q$),
('window_sort', 'a running sum over a sort (WindowAgg), the work in the scan below the Sort',
 'work_mem=256MB', 'Seq Scan',
 $q$SELECT count(*), sum(r) FROM (SELECT sum(d.id) OVER (PARTITION BY d.grp ORDER BY d.id) AS r FROM truth_dim d WHERE d.grp >= 0) s$q$,
 $q$SELECT count(*), sum(r) FROM (SELECT sum(d.id) OVER (PARTITION BY d.grp ORDER BY d.id) AS r FROM truth_dim d WHERE d.grp >= 0 AND md5(md5(d.pad)) <> '') s$q$),
('mem_leaf', 'memory latency in a leaf''s short calls: each row reads one element of a 64 MB array (an InitPlan), among 1,024 (cached) or anywhere (a cache and TLB miss)', '', 'Seq Scan',
 $q$SELECT sum(x) FROM (SELECT (SELECT array_fill(1, ARRAY[16777216 + (random() * 0)::int]))[1 + (hashint4(key) & 1023)] AS x FROM lotsarows OFFSET 0) s$q$,
 $q$SELECT sum(x) FROM (SELECT (SELECT array_fill(1, ARRAY[16777216 + (random() * 0)::int]))[1 + (hashint4(key) & 16777215)] AS x FROM lotsarows OFFSET 0) s$q$),
('mem_probe', 'memory latency in a hash join''s probes: 3M probes of a 43 MB hash table, among 1,024 keys (cached) or anywhere (misses)',
 'enable_mergejoin=off;enable_nestloop=off;work_mem=1GB', 'Hash Join',
 $q$SELECT count(*) FROM truth_mfact f JOIN truth_mdim d ON d.id = f.k_local$q$,
 $q$SELECT count(*) FROM truth_mfact f JOIN truth_mdim d ON d.id = f.k_rand$q$),
('limit', 'a LIMIT cutting a scan short, the work in the scan''s qual', '', 'Seq Scan',
 $q$SELECT count(*) FROM (SELECT key FROM lotsarows WHERE key >= 0 LIMIT 3000000) s$q$,
 $q$SELECT count(*) FROM (SELECT key FROM lotsarows WHERE key >= 0 AND ln(key::float8) >= 0 AND sqrt(key::float8) >= 0 AND cos(key::float8) >= -2 AND sin(key::float8) >= -2 LIMIT 3000000) s$q$),
('parallel', 'a parallel scan (two workers and the leader), the work in its qual',
 'max_parallel_workers_per_gather=2;parallel_setup_cost=0;parallel_tuple_cost=0;min_parallel_table_scan_size=0', 'Gather+',
 $q$SELECT count(*) FROM lotsarows WHERE key >= 0$q$,
 $q$SELECT count(*) FROM lotsarows WHERE key >= 0 AND ln(key::float8) >= 0 AND sqrt(key::float8) >= 0 AND cos(key::float8) >= -2 AND sin(key::float8) >= -2$q$),
('bitmap_qual', 'a bitmap heap scan (its bitmap index scan timed apart, by the Bitmap Heap Scan''s own calls), the work in its filter',
 'enable_seqscan=off;enable_indexscan=off', 'Bitmap Heap Scan',
 $q$SELECT count(*) FROM orders o WHERE o.id <= 300000 AND o.qty >= 0$q$,
 $q$SELECT count(*) FROM orders o WHERE o.id <= 300000 AND o.qty >= 0 AND md5(md5(md5(o.id::text))) <> ''$q$),
('append_member', 'an Append of two scans, the work in the second one''s filter', '', 'Seq Scan/orders',
 $q$SELECT count(*), sum(k) FROM (SELECT key AS k FROM lotsarows WHERE key >= 0 UNION ALL SELECT id FROM orders WHERE qty >= 0) s$q$,
 $q$SELECT count(*), sum(k) FROM (SELECT key AS k FROM lotsarows WHERE key >= 0 UNION ALL SELECT id FROM orders WHERE qty >= 0 AND md5(md5(id::text)) <> '') s$q$),
('memoize_inner', 'a Memoize over a rescanned index scan (10,000 misses among 300,000 lookups), the work in the index scan''s filter (run on misses only; before 18 its leak is unreadable, EXPLAIN giving each of the Memoize''s 300,000 loops to 0.001 ms; from 18 truth.sh reads unrounded times)',
 'enable_hashjoin=off;enable_mergejoin=off;enable_memoize=on;enable_material=off;enable_bitmapscan=off;enable_seqscan=off', 'Index Scan/c',
 $q$SELECT sum(c.region) FROM orders o JOIN customers c ON c.id = o.product_id AND truth_spin_imm(c.region * 0) WHERE o.id <= 300000$q$,
 $q$SELECT sum(c.region) FROM orders o JOIN customers c ON c.id = o.product_id AND truth_spin_imm(300 + c.region * 0) WHERE o.id <= 300000$q$),
('material_inner', 'a Materialize rescanned 20 times (the inner side of a left join), the work in the scan below it, run once',
 'enable_hashjoin=off;enable_mergejoin=off;enable_material=on;enable_memoize=off', 'Seq Scan/customers',
 $q$SELECT count(*) FROM truth_outer a LEFT JOIN (SELECT id, region FROM customers WHERE id >= 0) b ON b.region < a.k$q$,
 $q$SELECT count(*) FROM truth_outer a LEFT JOIN (SELECT id, region FROM customers WHERE id >= 0 AND md5(md5(md5(md5(md5(id::text))))) <> '') b ON b.region < a.k$q$),
('nestloop_filter', 'a nested loop''s join filter over 2M pairs (100,000 outer rows, a Materialize of 20 rows rescanned for each), the work in the filter',
 'enable_hashjoin=off;enable_mergejoin=off;enable_material=on;enable_memoize=off', 'Nested Loop',
 $q$SELECT count(*) FROM truth_outer a JOIN customers b ON b.region + a.k >= 0$q$,
 $q$SELECT count(*) FROM truth_outer a JOIN customers b ON b.region + a.k >= 0 AND ln((b.id + a.k)::float8) >= 0 AND sqrt((b.id + a.k)::float8) >= 0$q$),
('rare_wait_parent', '1 row in 100,000 waits 10 ms, in the aggregate''s argument', '', 'Aggregate',
 $q$SELECT sum(CASE WHEN key % 100000 = 0 AND truth_sleep(0) THEN 1 ELSE 0 END) FROM lotsarows$q$,
 $q$SELECT sum(CASE WHEN key % 100000 = 0 AND truth_sleep(0.01) THEN 1 ELSE 0 END) FROM lotsarows$q$),
('cte_twice', 'a CTE read by two CTE Scans (a hash join of it with itself), the work in the CTE''s scan',
 'enable_mergejoin=off;enable_nestloop=off;work_mem=256MB', 'Seq Scan/orders',
 $q$WITH c AS MATERIALIZED (SELECT id FROM orders WHERE qty >= 0) SELECT count(*) FROM c c1 JOIN c c2 ON c2.id = c1.id$q$,
 $q$WITH c AS MATERIALIZED (SELECT id FROM orders WHERE qty >= 0 AND md5(md5(id::text)) <> '') SELECT count(*) FROM c c1 JOIN c c2 ON c2.id = c1.id$q$),
('initplan', 'an uncorrelated InitPlan evaluated at the outer scan''s first row, the work in its scan', '', 'Seq Scan/orders',
 $q$SELECT count(*) FROM lotsarows WHERE key > (SELECT count(*) FROM orders WHERE qty >= 0) - 1000000000$q$,
 $q$SELECT count(*) FROM lotsarows WHERE key > (SELECT count(*) FROM orders WHERE qty >= 0 AND md5(md5(id::text)) <> '') - 1000000000$q$),
('merge_qual', 'a Merge Join over two sorts, the work in its join filter',
 'enable_hashjoin=off;enable_nestloop=off;work_mem=256MB', 'Merge Join',
 $q$SELECT count(*) FROM orders o JOIN customers c ON c.id = o.customer_id AND o.qty + c.region >= 0 WHERE o.id <= 300000$q$,
 $q$SELECT count(*) FROM orders o JOIN customers c ON c.id = o.customer_id AND o.qty + c.region >= 0 AND md5(md5(o.id::text || c.region::text)) <> '' WHERE o.id <= 300000$q$),
('gather_merge', 'a parallel sort of 1.25M rows (two workers and the leader, a Gather Merge), the work in the scan below the sorts',
 'max_parallel_workers_per_gather=2;parallel_setup_cost=0;parallel_tuple_cost=0;min_parallel_table_scan_size=0;work_mem=256MB', 'Gather Merge+',
 $q$SELECT count(*), sum(k) FROM (SELECT key % 1000 AS k FROM lotsarows WHERE key % 4 = 0 ORDER BY key % 1000, key OFFSET 0) s$q$,
 $q$SELECT count(*), sum(k) FROM (SELECT key % 1000 AS k FROM lotsarows WHERE key % 4 = 0 AND md5(md5(md5(key::text))) <> '' ORDER BY key % 1000, key OFFSET 0) s$q$);

-- The work of some pairs again, in the target's scan alone: the scan under
-- a bare count(*), with and without the same qual (bench/truth.sh's mode
-- "alone").  A pair's plain run time difference against this one says
-- whether the plain query is additive: above 1, the work costs more inside
-- the plan than by itself (another node's own time grows with it, say a
-- parent's memory-bound inserts, probes or tuplestore writes now
-- interleaved with it), and no
-- truthful mode can read all of the pair's difference on the target.
ALTER TABLE truth_pairs ADD COLUMN alone_base text, ADD COLUMN alone_work text;
UPDATE truth_pairs SET
	alone_base = $q$SELECT count(*) FROM truth_dim d WHERE d.grp >= 0$q$,
	alone_work = $q$SELECT count(*) FROM truth_dim d WHERE d.grp >= 0 AND md5(md5(md5(md5(d.pad)))) <> ''$q$
	WHERE id IN ('hash_build', 'sort_build');
UPDATE truth_pairs SET
	alone_base = $q$SELECT count(*) FROM truth_fact f WHERE f.id >= 0$q$,
	alone_work = $q$SELECT count(*) FROM truth_fact f WHERE f.id >= 0 AND md5(md5(md5(f.id::text))) <> ''$q$
	WHERE id = 'hash_probe';
UPDATE truth_pairs SET
	alone_base = $q$SELECT count(*) FROM truth_dim d WHERE d.grp >= 0$q$,
	alone_work = $q$SELECT count(*) FROM truth_dim d WHERE d.grp >= 0 AND md5(md5(d.pad)) <> ''$q$
	WHERE id = 'window_sort';
UPDATE truth_pairs SET
	alone_base = $q$SELECT count(*) FROM customers WHERE id >= 0$q$,
	alone_work = $q$SELECT count(*) FROM customers WHERE id >= 0 AND md5(md5(md5(md5(md5(id::text))))) <> ''$q$
	WHERE id = 'material_inner';
UPDATE truth_pairs SET
	alone_base = $q$SELECT count(*) FROM orders WHERE qty >= 0$q$,
	alone_work = $q$SELECT count(*) FROM orders WHERE qty >= 0 AND md5(md5(id::text)) <> ''$q$
	WHERE id IN ('append_member', 'cte_twice');

-- One EXPLAIN (ANALYZE, FORMAT JSON) of a statement, with its run time as
-- measured around it in the backend (clock_timestamp).
CREATE OR REPLACE FUNCTION truth_explain(stmt text)
RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE
	j jsonb;
	t0 timestamptz;
BEGIN
	t0 := clock_timestamp();
	EXECUTE 'EXPLAIN (ANALYZE, BUFFERS OFF, FORMAT JSON) ' || stmt INTO j;
	RETURN jsonb_build_object('ms', extract(epoch FROM clock_timestamp() - t0) * 1000.0,
							  'plan', j -> 0);
END
$$;

-- The same statement run plainly: its run time only.
CREATE OR REPLACE FUNCTION truth_plain(stmt text)
RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE
	t0 timestamptz;
BEGIN
	t0 := clock_timestamp();
	EXECUTE stmt;
	RETURN jsonb_build_object('ms', extract(epoch FROM clock_timestamp() - t0) * 1000.0);
END
$$;
