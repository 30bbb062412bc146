-- bench/sql/tail.sql: W5, a plan whose per-call times are heavy-tailed,
-- for bench/accuracy.sh.  The Seq Scan's filter does about a thousand
-- times the work on one row in a thousand, so 0.1 % of the scan's calls
-- carry about half of its time: the case where an estimate from a share of
-- the calls (or of the time) is weakest.
\set ON_ERROR_STOP 1
SET client_min_messages = warning;
DROP TABLE IF EXISTS tail;
CREATE TABLE tail AS SELECT g FROM generate_series(1, 200000) g;
VACUUM (FREEZE, ANALYZE) tail;
CREATE OR REPLACE FUNCTION bench_tail(i int) RETURNS bool LANGUAGE plpgsql AS $$
BEGIN
	IF i % 1000 = 0 THEN
		PERFORM count(*) FROM generate_series(1, 3000);
	END IF;
	RETURN true;
END $$;
DELETE FROM bench_workloads WHERE id = 'W5';
INSERT INTO bench_workloads(id, title, label, query)
VALUES ('W5', 'heavy-tailed: 1 row in 1000 costs ~1000x', 'W5 tail',
		'SELECT count(*) FROM tail WHERE bench_tail(g)');
