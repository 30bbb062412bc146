#!/usr/bin/env bash
# What instrumenting every nested statement costs: SELECT tiny(50000) (a
# PL/pgSQL loop of 50,000 single-row index lookups, see first_tick.sh)
# without auto_explain, and under auto_explain (log_analyze,
# log_nested_statements, log_min_duration 100 s: nothing logged) with
# stock timing (fasttime.clock_source = clock_gettime), fasttime's exact
# timing (try_tsc), profiled timing, and auto_explain.log_timing = off;
# psql's \timing, ROUNDS interleaved rounds.
#   nested_cost.sh BINDIR PORT ROUNDS
set -u
B=$1 P=$2 R=$3
AE="LOAD 'auto_explain'; SET auto_explain.log_min_duration = '100s'; SET auto_explain.log_analyze = on; SET auto_explain.log_nested_statements = on;"
echo "round plain stock exact profile timing_off (ms)"
for r in $(seq 1 "$R"); do
	line="$r"
	for m in "" "$AE SET fasttime.clock_source = clock_gettime;" "$AE SET fasttime.clock_source = try_tsc;" \
		"$AE SET fasttime.clock_source = try_tsc; SET fasttime.node_timing = profile;" "$AE SET auto_explain.log_timing = off;"; do
		t=$("$B/psql" -X -q -At -h /tmp -p "$P" -U postgres postgres -c "$m" -c '\timing on' -c 'SELECT tiny(50000)' |
			sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p')
		line="$line $t"
	done
	echo "$line"
done
