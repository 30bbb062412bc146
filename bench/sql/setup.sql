-- bench/sql/setup.sql: the benchmark's data, loaded into a throwaway
-- cluster by bench/clock_cost.sh.  psql variables (all row counts):
--   rows       lotsarows, the reference case (W1)
--   orders     orders, the outer side of the joins (W2, W3)
--   customers  customers, the hashed side of the joins
--   products   products; each has 10 prices, valid from day 0, 40, ..., 360
--   wide       widerows, one tuple per 8 kB page (W4)
-- Everything is frozen and analyzed, so that no variant pays for hint
-- bits, visibility-map updates or a missing statistic.

\set ON_ERROR_STOP 1
SET client_min_messages = warning;
SET max_parallel_workers_per_gather = 0;
SET maintenance_work_mem = '256MB';

-- W1: the reference thread's table.
DROP TABLE IF EXISTS lotsarows;
CREATE TABLE lotsarows(key int not null);
INSERT INTO lotsarows SELECT generate_series(1, :rows);

-- W2, W3: orders, customers, and prices valid from a day on.  The keys are
-- spread with multiplicative hashing so that neither join sees its input
-- in key order.
DROP TABLE IF EXISTS orders, customers, prices;
CREATE TABLE customers(id int PRIMARY KEY, region int NOT NULL);
INSERT INTO customers SELECT i, i % 20 FROM generate_series(1, :customers) i;

CREATE TABLE prices(product_id int NOT NULL, valid_from int NOT NULL,
					price numeric NOT NULL,
					PRIMARY KEY (product_id, valid_from));
INSERT INTO prices
SELECT p, d, (p % 97) + d / 100.0
FROM generate_series(1, :products) p, generate_series(0, 360, 40) d;

CREATE TABLE orders(id int PRIMARY KEY, customer_id int NOT NULL,
					product_id int NOT NULL, day int NOT NULL, qty int NOT NULL);
INSERT INTO orders
SELECT i,
	   1 + (i::bigint * 7919) % :customers,
	   1 + (i::bigint * 104729) % :products,
	   (i * 31) % 365,
	   1 + i % 9
FROM generate_series(1, :orders) i;

-- W4: the wide-row case.  With fillfactor 10 a page takes new tuples only
-- while it is at most 10 % full (819 bytes), so each ~530-byte tuple gets a
-- page of its own: the scan does a page's worth of work per row.
DROP TABLE IF EXISTS widerows;
CREATE TABLE widerows(key int NOT NULL, pad text NOT NULL) WITH (fillfactor = 10);
INSERT INTO widerows SELECT i, repeat('x', 500) FROM generate_series(1, :wide) i;

VACUUM FREEZE ANALYZE lotsarows, customers, prices, orders, widerows;
CHECKPOINT;

SELECT relname, relpages, reltuples::bigint AS reltuples,
	   pg_size_pretty(pg_relation_size(oid)) AS size
FROM pg_class
WHERE relname IN ('lotsarows', 'orders', 'customers', 'prices', 'widerows')
ORDER BY relname;
