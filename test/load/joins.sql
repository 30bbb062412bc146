-- joins: hash, merge, nested loop over an index
\set c random(0, 4999)
SELECT ft_explain_check('SELECT count(*), sum(o.amount) FROM orders o JOIN customers c ON c.id = o.customer WHERE c.region = ' || (:c % 50));
SET enable_hashjoin = off;
SELECT ft_explain_check('SELECT count(*) FROM orders o JOIN customers c ON c.id = o.customer WHERE o.amount < ' || (:c * 10));
RESET enable_hashjoin;
SELECT ft_explain_check('SELECT c.name, o.amount FROM customers c JOIN orders o ON o.customer = c.id WHERE c.id BETWEEN ' || :c || ' AND ' || (:c + 3));
