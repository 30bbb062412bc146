-- the clock switched between statements of one transaction, and nested
-- statements (PL/pgSQL via SPI) timed inside the outer query
\set c random(0, 4900)
BEGIN;
SET LOCAL fasttime.clock_source = try_tsc;
SELECT ft_explain_check('SELECT ft_customer_total(id) FROM customers WHERE id BETWEEN ' || :c || ' AND ' || (:c + 20));
SET LOCAL fasttime.clock_source = clock_gettime;
SELECT ft_explain_check('SELECT count(*) FROM orders WHERE customer = ' || :c);
SET LOCAL fasttime.clock_source = auto;
SELECT ft_explain_check('SELECT sum(ft_customer_total(id)) FROM customers WHERE id < ' || (:c % 30));
COMMIT;
