-- bench/sql/shares.sql: the data and the shapes of bench/shares.sh (the
-- absolute reference: perf's picture of the plain query against each timing
-- mode's EXPLAIN ANALYZE picture).  psql variable: scale (1 = the sizes
-- below; 0.25 for a quick look).
--
-- Every shape is one query whose plan has no two nodes of one type that the
-- stack cannot tell apart (bench/shares.py, "Mapping samples to plan
-- nodes"): siblings are of different types, or one of them sits under a
-- node the other has not (a hash join's inner side under its Hash).  Each
-- returns one row, so that sending rows to the client (outside every plan
-- node) is nothing.  settings: GUCs set (SET LOCAL) for the shape in every
-- configuration, the plain run included, so that all runs get one plan.

\set ON_ERROR_STOP 1
SET client_min_messages = warning;
SET max_parallel_workers_per_gather = 0;
SET maintenance_work_mem = '512MB';

DROP TABLE IF EXISTS shares_ints, shares_texts, shares_orders, shares_customers,
	shares_mem, shares_outer20, shares_shapes, shares_pairs;

-- count(*), filter, arithmetic, parallel, CTE: 4M ints
CREATE TABLE shares_ints(key int NOT NULL);
INSERT INTO shares_ints SELECT generate_series(1, (4000000 * :scale)::int);

-- sort: 600k text keys in random order (md5 of the row number)
CREATE TABLE shares_texts(t text NOT NULL);
INSERT INTO shares_texts SELECT md5(i::text) FROM generate_series(1, (600000 * :scale)::int) i;

-- joins: 1M orders, 100k customers (10 orders each, spread by
-- multiplicative hashing so that no join sees its input in key order);
-- g: 2,000 distinct customers for the Memoize shape
CREATE TABLE shares_customers(id int PRIMARY KEY, region int NOT NULL);
INSERT INTO shares_customers SELECT i, i % 20 FROM generate_series(1, 100000) i;
CREATE TABLE shares_orders(id int PRIMARY KEY, customer_id int NOT NULL,
						   g int NOT NULL, qty int NOT NULL);
INSERT INTO shares_orders
SELECT i, 1 + (i::bigint * 7919) % 100000, 1 + (i::bigint * 104729) % 2000, 1 + i % 9
FROM generate_series(1, (1000000 * :scale)::int) i;
CREATE INDEX shares_orders_customer ON shares_orders(customer_id);
-- the nestloop_filter pair's outer side: 20 rows, materialized and
-- rescanned for each customer
CREATE TABLE shares_outer20 AS SELECT g AS k FROM generate_series(1, 20) g;

-- memory-bound scan: 3M rows of ~100 bytes (~400 MB), an index on a
-- random permutation of the rows: an index scan's heap fetches land on
-- random pages of a table far larger than the caches
CREATE TABLE shares_mem(id int NOT NULL, r int NOT NULL, v int NOT NULL, pad text NOT NULL);
INSERT INTO shares_mem
SELECT i, ((i::bigint * 1000003) % (3000000 * :scale)::int)::int, i % 97, repeat('m', 64)
FROM generate_series(1, (3000000 * :scale)::int) i;
CREATE INDEX shares_mem_r ON shares_mem(r);

VACUUM FREEZE ANALYZE shares_ints, shares_texts, shares_customers, shares_orders, shares_mem, shares_outer20;
CHECKPOINT;

-- The shapes, in report order.
CREATE TABLE shares_shapes(id text PRIMARY KEY, ord int NOT NULL, title text NOT NULL,
						   settings text NOT NULL, query text NOT NULL);
INSERT INTO shares_shapes VALUES
('count', 1, 'count(*) over 4M ints', '',
 $q$SELECT count(*) FROM shares_ints$q$),
('filter', 2, 'a scan filtering 6 rows of 7', '',
 $q$SELECT count(*) FROM shares_ints WHERE key % 7 = 0$q$),
('arith', 3, 'an aggregate of arithmetic expressions', '',
 $q$SELECT sum(key * 3 + 1), sum((key % 1000) * (key % 7)), avg(key::float8 * 0.5 + 1.0), max(key / 3 - key % 11) FROM shares_ints$q$),
('hashjoin', 4, 'hash join (1M x 100k) under an aggregate',
 'enable_mergejoin=off;enable_nestloop=off;work_mem=256MB',
 $q$SELECT count(*), sum(o.qty * c.region) FROM shares_orders o JOIN shares_customers c ON c.id = o.customer_id$q$),
('sort', 5, 'sort of 600k text keys (collation "C")', 'work_mem=512MB',
 $q$SELECT count(*) FROM (SELECT t FROM shares_texts ORDER BY t COLLATE "C" OFFSET 0) s$q$),
('nestloop', 6, 'nested loop, index scan rescanned 20k times',
 'enable_hashjoin=off;enable_mergejoin=off;enable_bitmapscan=off;enable_material=off;enable_memoize=off',
 $q$SELECT sum(o.qty) FROM shares_customers c JOIN shares_orders o ON o.customer_id = c.id WHERE c.id % 5 = 0$q$),
('subplan', 7, 'a correlated SubPlan (an index scan) in a scan''s filter, 200k calls', '',
 $q$SELECT count(*) FROM shares_orders o WHERE o.id % 5 = 0 AND o.qty <= (SELECT c.region FROM shares_customers c WHERE c.id = o.customer_id)$q$),
('parallel', 8, 'parallel aggregate: the leader and one worker',
 'max_parallel_workers_per_gather=1;parallel_setup_cost=0;parallel_tuple_cost=0;min_parallel_table_scan_size=0;parallel_leader_participation=on',
 $q$SELECT count(*), sum(key % 13) FROM shares_ints WHERE key % 3 <> 0$q$),
('membound', 9, 'memory-bound scan: 300k heap fetches at random pages of 400 MB',
 'enable_seqscan=off;enable_bitmapscan=off',
 $q$SELECT sum(v) FROM shares_mem WHERE r < 300000$q$),
('memoize', 10, 'Memoize: 250k outer rows, 2,000 distinct keys',
 'enable_hashjoin=off;enable_mergejoin=off;enable_memoize=on;enable_material=off',
 $q$SELECT sum(c.region) FROM shares_orders o JOIN shares_customers c ON c.id = o.g WHERE o.id % 4 = 0$q$),
('mergejoin', 11, 'Merge Join: an index-only scan against a sort of 250k rows',
 'enable_hashjoin=off;enable_nestloop=off;enable_seqscan=off;enable_indexscan=off;enable_bitmapscan=off;work_mem=256MB',
 $q$SELECT count(*), sum(o.qty) FROM shares_orders o JOIN shares_customers c ON c.id = o.customer_id WHERE o.id % 4 = 0$q$),
('cte', 12, 'a CTE scanned twice (a hash join of it with itself)',
 'enable_mergejoin=off;enable_nestloop=off;work_mem=256MB',
 $q$WITH c AS MATERIALIZED (SELECT key, key % 1000 AS g FROM shares_ints WHERE key % 8 = 0) SELECT count(*), sum(c1.g) FROM c c1 JOIN c c2 ON c2.key = c1.key$q$),
('window', 13, 'a window function over a sort of 500k rows', 'work_mem=256MB',
 $q$SELECT count(*), sum(w) FROM (SELECT sum(key) OVER (ORDER BY key % 1000, key ROWS BETWEEN 3 PRECEDING AND CURRENT ROW) AS w FROM shares_ints WHERE key <= 500000) s$q$),
('material', 14, 'a Materialize rescanned 2,000 times (a nested loop''s join filter, 1M pairs)',
 'enable_hashjoin=off;enable_mergejoin=off;enable_material=on',
 $q$SELECT count(*) FROM shares_customers a JOIN shares_customers b ON b.region < a.region WHERE a.id % 50 = 0 AND b.id % 200 = 0$q$),
('bitmap', 15, 'a bitmap heap scan of 300k rows (12k pages) over a bitmap index scan',
 'enable_seqscan=off;enable_indexscan=off',
 $q$SELECT sum(v) FROM shares_mem WHERE r < 300000$q$),
('append', 16, 'an Append of a filtered scan and a Function Scan (1M rows of generate_series, materialized at its first call)', '',
 $q$SELECT count(*), sum(k) FROM (SELECT key AS k FROM shares_ints WHERE key % 2 = 0 UNION ALL SELECT g FROM generate_series(1, 1000000) g) s$q$),
('gathermerge', 17, 'Gather Merge of two sorts (the leader and one worker)',
 'max_parallel_workers_per_gather=1;parallel_setup_cost=0;parallel_tuple_cost=0;min_parallel_table_scan_size=0;parallel_leader_participation=on;work_mem=256MB',
 $q$SELECT count(*), sum(k) FROM (SELECT key % 1000 AS k FROM shares_ints WHERE key % 3 <> 0 ORDER BY key % 1000, key OFFSET 0) s$q$),
('incrsort', 18, 'Incremental Sort: 25,000 small sorts over an index scan of 1M rows', 'work_mem=256MB',
 $q$SELECT count(*), sum(q) FROM (SELECT qty AS q FROM shares_orders WHERE id > 0 ORDER BY customer_id, qty OFFSET 0) s$q$),
('projectset', 19, 'ProjectSet: a set-returning function in the target list, 2M rows from 1M', '',
 $q$SELECT sum(x) FROM (SELECT generate_series(1, key % 5) AS x FROM shares_ints WHERE key <= 1000000) s$q$),
('hashagg', 20, 'HashAggregate of 4M rows into 200k groups', 'work_mem=256MB',
 $q$SELECT count(*), sum(c) FROM (SELECT key % 200000 AS k, count(*) AS c FROM shares_ints GROUP BY 1) s$q$),
('recursive', 21, 'a recursive CTE of 200k steps (a WorkTable Scan rescanned each step)', '',
 $q$WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 200000) SELECT sum(n) FROM r$q$),
('topn', 22, 'a top-N heap sort (LIMIT 100) of 4M rows', '',
 $q$SELECT sum(key) FROM (SELECT key FROM shares_ints ORDER BY hashint4(key) LIMIT 100) s$q$);

-- Pairs (ord 100 and up, run only when named in --shapes): truth pairs of
-- bench/sql/truth.sql rebuilt on these tables, each a base and a work
-- query with the same plan, the work query adding known work to one node,
-- the target (shares_pairs).  perf's samples of the plain base and work
-- queries say how much of the added time lands in the target's subtree
-- and how much elsewhere when nothing is instrumented: where the
-- additivity that bench/truth.sh assumes (the other nodes' time does not
-- change) fails by itself, perf shows it too (bench/shares.py, "Pairs").
INSERT INTO shares_shapes VALUES
('p_leaf_base', 100, 'pair leaf_qual, base', '',
 $q$SELECT count(*) FROM shares_ints WHERE key >= 0$q$),
('p_leaf_work', 101, 'pair leaf_qual, work: float math in the scan''s qual', '',
 $q$SELECT count(*) FROM shares_ints WHERE key >= 0 AND ln(key::float8) >= 0 AND sqrt(key::float8) >= 0 AND cos(key::float8) >= -2 AND sin(key::float8) >= -2$q$),
('p_memleaf_base', 102, 'pair mem_leaf, base: each row reads one of 1,024 elements of a 64 MB array', '',
 $q$SELECT sum(x) FROM (SELECT (SELECT array_fill(1, ARRAY[16777216 + (random() * 0)::int]))[1 + (hashint4(key) & 1023)] AS x FROM shares_ints OFFSET 0) s$q$),
('p_memleaf_work', 103, 'pair mem_leaf, work: each row reads anywhere in the array (a cache and TLB miss)', '',
 $q$SELECT sum(x) FROM (SELECT (SELECT array_fill(1, ARRAY[16777216 + (random() * 0)::int]))[1 + (hashint4(key) & 16777215)] AS x FROM shares_ints OFFSET 0) s$q$),
('p_hashprobe_base', 104, 'pair hash_probe, base', 'enable_mergejoin=off;enable_nestloop=off;work_mem=256MB',
 $q$SELECT count(*) FROM shares_orders o JOIN shares_customers c ON c.id = o.customer_id WHERE o.id >= 0$q$),
('p_hashprobe_work', 105, 'pair hash_probe, work: md5 in the probe side''s scan', 'enable_mergejoin=off;enable_nestloop=off;work_mem=256MB',
 $q$SELECT count(*) FROM shares_orders o JOIN shares_customers c ON c.id = o.customer_id WHERE o.id >= 0 AND md5(md5(o.id::text)) <> ''$q$),
('p_windowsort_base', 106, 'pair window_sort, base', 'work_mem=256MB',
 $q$SELECT count(*), sum(r) FROM (SELECT sum(o.id) OVER (PARTITION BY o.g ORDER BY o.id) AS r FROM shares_orders o WHERE o.qty >= 0) s$q$),
('p_windowsort_work', 107, 'pair window_sort, work: md5 in the scan below the Sort', 'work_mem=256MB',
 $q$SELECT count(*), sum(r) FROM (SELECT sum(o.id) OVER (PARTITION BY o.g ORDER BY o.id) AS r FROM shares_orders o WHERE o.qty >= 0 AND md5(md5(o.id::text)) <> '') s$q$),
('p_nlfilter_base', 108, 'pair nestloop_filter, base', 'enable_hashjoin=off;enable_mergejoin=off;enable_material=on;enable_memoize=off',
 $q$SELECT count(*) FROM shares_outer20 a JOIN shares_customers b ON b.region + a.k >= 0$q$),
('p_nlfilter_work', 109, 'pair nestloop_filter, work: float math in the join filter', 'enable_hashjoin=off;enable_mergejoin=off;enable_material=on;enable_memoize=off',
 $q$SELECT count(*) FROM shares_outer20 a JOIN shares_customers b ON b.region + a.k >= 0 AND ln((b.id + a.k)::float8) >= 0 AND sqrt((b.id + a.k)::float8) >= 0$q$);

-- pairs: a title, the base and the work shape, and the target: the plan
-- node (its label in the report, a prefix) whose subtree holds the work
CREATE TABLE shares_pairs(id text PRIMARY KEY, title text NOT NULL, base text NOT NULL,
						  work text NOT NULL, target text NOT NULL);
INSERT INTO shares_pairs VALUES
('leaf_qual', 'cheap work on every row in a leaf''s qual (the control)', 'p_leaf_base', 'p_leaf_work', 'Seq Scan'),
('mem_leaf', 'memory latency in a leaf''s short calls', 'p_memleaf_base', 'p_memleaf_work', 'Seq Scan'),
('hash_probe', 'a hash join''s probe side, the work in its scan', 'p_hashprobe_base', 'p_hashprobe_work', 'Seq Scan on shares_orders'),
('window_sort', 'a running sum over a sort, the work in the scan below the Sort', 'p_windowsort_base', 'p_windowsort_work', 'Seq Scan'),
('nestloop_filter', 'a nested loop''s join filter over 2M pairs (a Materialize of 20 rows rescanned for each of 100k rows), the work in the filter', 'p_nlfilter_base', 'p_nlfilter_work', 'Nested Loop');

SELECT relname, pg_size_pretty(pg_relation_size(oid)) AS size
FROM pg_class WHERE relname LIKE 'shares\_%' AND relkind = 'r'
	AND relname NOT IN ('shares_shapes', 'shares_pairs') ORDER BY relname;
