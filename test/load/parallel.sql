-- parallel plans: parallel aggregate, parallel hash join, Gather Merge
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SELECT ft_explain_check('SELECT count(*), max(note) FROM orders');
SELECT ft_explain_check('SELECT count(*) FROM orders a JOIN orders b ON a.id = b.amount');
SELECT ft_explain_check('SELECT customer, sum(amount) FROM orders GROUP BY customer ORDER BY customer');
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;
