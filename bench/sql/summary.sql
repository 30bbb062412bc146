-- bench/sql/summary.sql: per workload, variant and metric, the median over
-- the measured rounds, the overhead over TIMING OFF (V2) and over the plain
-- statement (V1), and the overhead per timed node call.  Metrics: wall
-- (clock_timestamp() around EXECUTE) and cpu (wall minus the backend's
-- run-queue wait; see harness.sql).  Warm-up rounds are not counted.
\set ON_ERROR_STOP 1
SET client_min_messages = warning;
DROP VIEW IF EXISTS bench_summary;
CREATE VIEW bench_summary AS
WITH runs AS (
	SELECT workload, variant, 'wall' AS metric, ms AS v, rq_wait_ms, explain_ms, clock
	FROM bench_results WHERE phase = 'measure'
	UNION ALL
	SELECT workload, variant, 'cpu', cpu_ms, rq_wait_ms, explain_ms, clock
	FROM bench_results WHERE phase = 'measure' AND cpu_ms IS NOT NULL
),
med AS (
	SELECT workload, variant, metric,
		   count(v) AS runs,
		   percentile_cont(0.5) WITHIN GROUP (ORDER BY v) AS median_ms,
		   min(v) AS min_ms,
		   max(v) AS max_ms,
		   100 * (percentile_cont(0.75) WITHIN GROUP (ORDER BY v) -
				  percentile_cont(0.25) WITHIN GROUP (ORDER BY v)) /
			   nullif(percentile_cont(0.5) WITHIN GROUP (ORDER BY v), 0) AS iqr_pct,
		   percentile_cont(0.5) WITHIN GROUP (ORDER BY rq_wait_ms) AS median_wait_ms,
		   percentile_cont(0.5) WITHIN GROUP (ORDER BY explain_ms) AS median_explain_ms,
		   string_agg(DISTINCT clock, '/') AS clock
	FROM runs
	GROUP BY workload, variant, metric
)
SELECT m.workload, m.variant, m.metric, m.runs, m.median_ms, m.min_ms, m.max_ms,
	   m.iqr_pct, m.median_wait_ms, m.median_explain_ms, m.clock,
	   100 * (m.median_ms / v1.median_ms - 1) AS pct_over_plain,
	   100 * (m.median_ms / v2.median_ms - 1) AS pct_over_off,
	   (m.median_ms - v2.median_ms) * 1e6 / w.node_calls AS ns_per_call
FROM med m
JOIN bench_workloads w ON w.id = m.workload
LEFT JOIN med v1 ON (v1.workload, v1.variant, v1.metric) = (m.workload, 'V1', m.metric)
LEFT JOIN med v2 ON (v2.workload, v2.variant, v2.metric) = (m.workload, 'V2', m.metric);
