-- bench/sql/shapes.sql: plan shapes where estimated node times go wrong, for
-- bench/accuracy.sh (after setup.sql, harness.sql and tail.sql).
--   W6   a Nested Loop of about twenty calls, one of which holds nearly
--        all of its time (the inner index scan of one outer row walks
--        200,000 entries, the others one)
--   W7   a correlated SubPlan in a join's qual, run once per candidate pair
--   W8   hash, sort and aggregate builds: most of the time in a few calls
--   W9   an inner index scan rescanned 300,000 times
--   W10  a LIMIT that stops a hash join early
\set ON_ERROR_STOP 1
SET client_min_messages = warning;
DROP TABLE IF EXISTS skew, skew_outer;
CREATE TABLE skew(k int NOT NULL, v int NOT NULL);
INSERT INTO skew SELECT CASE WHEN g <= 20 THEN g ELSE 1 END, g FROM generate_series(1, 200000) g;
CREATE INDEX skew_k ON skew (k);
CREATE TABLE skew_outer AS SELECT g AS k FROM generate_series(1, 20) g;
VACUUM (FREEZE, ANALYZE) skew, skew_outer;
DELETE FROM bench_workloads WHERE id IN ('W6', 'W7', 'W8', 'W9', 'W10');
INSERT INTO bench_workloads(id, title, label, settings, query) VALUES
('W6', 'nested loop, skewed inner side: ~20 calls, one long', 'W6 skew',
 'enable_memoize=off;enable_bitmapscan=off',
 $q$SELECT so.k, x.v FROM skew_outer so
CROSS JOIN LATERAL (SELECT s.v FROM skew s WHERE s.k = so.k AND s.v % 50000 = 0 OFFSET 0) x$q$),
('W7', 'correlated SubPlan in a join qual', 'W7 subplan', 'enable_mergejoin=off;enable_nestloop=off',
 $q$SELECT count(*) FROM orders o JOIN customers c
  ON c.id = o.customer_id
 AND c.region <= (SELECT max(p.price)::int % 20 FROM prices p WHERE p.product_id = o.product_id)
WHERE o.id <= 100000$q$),
('W8', 'hash, sort and aggregate builds', 'W8 builds', 'work_mem=256MB',
 $q$SELECT c.region, o.product_id % 100 AS pg, sum(o.qty)
FROM orders o JOIN customers c ON c.id = o.customer_id
GROUP BY 1, 2 ORDER BY 3 DESC, 1, 2$q$),
('W9', 'inner index scan rescanned 300,000 times', 'W9 rescans',
 'enable_hashjoin=off;enable_mergejoin=off;enable_memoize=off',
 'SELECT count(*) FROM orders o JOIN customers c ON c.id = o.customer_id WHERE o.id <= 300000'),
('W10', 'LIMIT cutting a hash join short', 'W10 limit', 'enable_nestloop=off;enable_mergejoin=off',
 'SELECT o.id, c.region FROM orders o JOIN customers c ON c.id = o.customer_id WHERE c.region = 3 LIMIT 20000');
