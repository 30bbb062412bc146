-- bench/sql/summary.sql: medians over the measured rounds, overhead over
-- TIMING OFF (V2) and over the plain statement (V1), and the overhead per
-- timed node call.  Warm-up rounds are in bench_results but not here.
\set ON_ERROR_STOP 1
SET client_min_messages = warning;
DROP VIEW IF EXISTS bench_summary;
CREATE VIEW bench_summary AS
WITH med AS (
	SELECT workload, variant,
		   count(ms) AS runs,
		   percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) AS median_ms,
		   min(ms) AS min_ms,
		   max(ms) AS max_ms,
		   100 * (percentile_cont(0.75) WITHIN GROUP (ORDER BY ms) -
				  percentile_cont(0.25) WITHIN GROUP (ORDER BY ms)) /
			   nullif(percentile_cont(0.5) WITHIN GROUP (ORDER BY ms), 0) AS iqr_pct,
		   percentile_cont(0.5) WITHIN GROUP (ORDER BY explain_ms) AS median_explain_ms,
		   string_agg(DISTINCT clock, '/') AS clock
	FROM bench_results
	WHERE phase = 'measure'
	GROUP BY workload, variant
)
SELECT m.workload, m.variant, m.runs, m.median_ms, m.min_ms, m.max_ms,
	   m.iqr_pct, m.median_explain_ms, m.clock,
	   100 * (m.median_ms / v1.median_ms - 1) AS pct_over_plain,
	   100 * (m.median_ms / v2.median_ms - 1) AS pct_over_off,
	   100 * (m.median_explain_ms / v2.median_explain_ms - 1) AS explain_pct_over_off,
	   (m.median_ms - v2.median_ms) * 1e6 / w.node_calls AS ns_per_call
FROM med m
JOIN bench_workloads w ON w.id = m.workload
LEFT JOIN med v1 ON v1.workload = m.workload AND v1.variant = 'V1'
LEFT JOIN med v2 ON v2.workload = m.workload AND v2.variant = 'V2';
