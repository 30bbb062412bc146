-- sorts, top-N, aggregates (hashed, sorted), window functions
\set a random(1, 99000)
SELECT ft_explain_check('SELECT * FROM orders WHERE amount > ' || :a || ' ORDER BY note LIMIT 20');
SELECT ft_explain_check('SELECT customer, count(*), avg(amount) FROM orders GROUP BY customer ORDER BY 3 DESC LIMIT 5');
SET enable_hashagg = off;
SELECT ft_explain_check('SELECT amount % 100, count(DISTINCT customer) FROM orders WHERE id < 50000 GROUP BY 1');
RESET enable_hashagg;
SELECT ft_explain_check('SELECT id, rank() OVER (PARTITION BY customer ORDER BY amount) FROM orders WHERE customer < ' || (:a % 200));
