#!/usr/bin/env bash
# Stage: load test.  pgbench, 8 clients, FT_LOAD_SECONDS (default 20) s,
# over the scripts in test/load/: EXPLAIN ANALYZE of joins, sorts,
# aggregates, window functions, parallel plans and nested PL/pgSQL
# statements, each transaction on a randomly chosen fasttime.clock_source
# (tsc, try_tsc, auto, clock_gettime; switched with SET LOCAL between the
# statements of one transaction as well), with auto_explain (log_analyze,
# nested statements) loaded in every session.  Every EXPLAIN goes through
# ft_explain_check() (test/load/setup.sql), which raises an ERROR -- a
# failed pgbench transaction -- on a negative node time or one above the
# Execution Time.
#
# Checks, one point each: setup; pgbench ran to the end (no client
# aborted); 0 failed transactions; every script ran; no TSC-disagreement
# WARNING; the server never restarted (pg_postmaster_start_time unchanged,
# no "terminated by signal" in the log); auto_explain logged plans; the
# server answers afterwards.
#
#   test/stage_load.sh
#   FT_LOAD_SECONDS=60 FT_LOAD_PORT=5513 test/stage_load.sh
#
# Ends with "STAGE_RESULT load <passed> <failed>".
set -u
cd "$(dirname "$0")/.."
. test/cluster.sh
secs=${FT_LOAD_SECONDS:-20}
port=${FT_LOAD_PORT:-5512}	# 5510-5517 are ours
clients=8
here=test/load

. test/tap.sh
finish() {
	echo "STAGE_RESULT load $passed $failed"
	exit 0
}

pgbench=$FT_BINDIR/pgbench
if [ ! -x "$pgbench" ]; then
	t_ok 1 "pgbench found in $FT_BINDIR"
	finish
fi
if [ ! -f "$("$FT_PG_CONFIG" --pkglibdir)/fasttime.so" ]; then
	t_ok 1 "fasttime is installed (run test/stage_build.sh first)"
	finish
fi

dir=$(mktemp -d /tmp/ft-load.XXXXXX)
chmod 755 "$dir"
trap 'ft_cluster_stop "$dir"; rm -rf "$dir"' EXIT
log=$dir/server.log
q() { ft_psql "$dir" "$port" -At -q "$@"; }

if ! ft_cluster_start "$dir" "$port" "max_connections = 40" "jit = off" \
	"max_parallel_workers_per_gather = 2" \
	"session_preload_libraries = 'auto_explain'" \
	"auto_explain.log_min_duration = '100ms'" \
	"auto_explain.log_analyze = on" \
	"auto_explain.log_timing = on" \
	"auto_explain.log_nested_statements = on"; then
	t_ok 1 "load cluster starts on port $port"
	finish
fi
out=$(q -f $here/setup.sql 2>&1)
t_ok $? "setup: tables, ft_explain_check()" "$out"
pm_start=$(q -c "SELECT pg_postmaster_start_time()")

# The scripts: the clock switch in front of each body.  Where the TSC is
# not usable, "tsc" would be refused (an ERROR, by design): use try_tsc.
tsc_note=""
if ! err=$(q -c "SET fasttime.clock_source = tsc" 2>&1); then
	tsc_note=" (TSC unusable here, tsc replaced by try_tsc: ${err%%$'\n'*})"
fi
args=()
for body in joins sorts_aggs parallel switch_in_xact; do
	if [ -n "$tsc_note" ]; then
		sed 's/clock_source = tsc;/clock_source = try_tsc;/' $here/switch_clock.sql
	else
		cat $here/switch_clock.sql
	fi >"$dir/$body.sql"
	cat $here/$body.sql >>"$dir/$body.sql"
	args+=(-f "$dir/$body.sql")
done
chmod a+r "$dir"/*.sql

echo "# pgbench: $clients clients, $secs s, scripts joins sorts_aggs parallel switch_in_xact$tsc_note"
ft_tsc_watch_start "$dir"
mark=$(ft_tsc_mark)
t0=$(date +%s)
"$pgbench" -n -h "$dir" -p "$port" -U "$(ft_owner_name)" -c $clients -j 2 -T "$secs" \
	"${args[@]}" postgres >"$dir/pgbench.out" 2>&1
rc=$?
took=$(($(date +%s) - t0))
grep -vE '^(pgbench: )?client [0-9]+ ' "$dir/pgbench.out" | head -n 60
out=$(cat "$dir/pgbench.out")
processed=$(sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' <<<"$out")
failed_tx=$(sed -n 's/^number of failed transactions: \([0-9]*\).*/\1/p' <<<"$out")
# The machine's own TSC jumps (witnessed outside the server, see
# test/tsc_watch.c) draw fasttime's WARNING, rightly, and the times of
# the queries they hit are as measured, which ft_explain_check() may
# reject with an ERROR that ends a client.  Such a run is judged by the
# WARNINGs alone: each must match a witnessed jump, and every ERROR must be
# ft_explain_check()'s.
jumped=
warned=$(grep -A1 -E '(WARNING|LOG): +(fasttime: )?the TSC disagreed' "$log")
if [ -n "$warned" ] && why=$(ft_tsc_explained "$mark" <<<"$warned"); then
	echo "# $why"
	if ! grep -E 'ERROR:' "$log" | grep -qv 'fasttime load check: insane node times'; then
		jumped=$why
	fi
fi

if [ -n "$jumped" ]; then
	t_ok 0 "pgbench ran ${took} s; clients ended only by times the machine's TSC jump made insane ($jumped)"
	t_ok $([ "${processed:-0}" -gt 0 ] && echo 0 || echo 1) \
		"transactions processed (${processed:-0}; ${failed_tx:-n/a} failed on the machine's TSC jump)"
else
t_ok $([ $rc = 0 ] && ! grep -q 'aborted' <<<"$out" && [ "$took" -ge "$secs" ] && echo 0 || echo 1) \
	"pgbench ran ${took} s to the end, no client aborted (exit $rc)" \
	"$(grep -E 'aborted|ERROR|error' <<<"$out" | head -n 10)"
t_ok $([ "${processed:-0}" -gt 0 ] && [ "${failed_tx:-0}" = 0 ] && echo 0 || echo 1) \
	"0 failed transactions (${processed:-0} processed, ${failed_tx:-n/a} failed)" \
	"$(grep -E 'ERROR|error|check' <<<"$out" | head -n 10)"
fi
# per script: " - N transactions (...)"
counts=$(sed -nE 's/^ - ([0-9]+) transactions .*/\1/p' <<<"$out" | tr '\n' ' ')
t_ok $([ "$(wc -w <<<"$counts")" = 4 ] && ! grep -qw 0 <<<"$counts" && echo 0 || echo 1) \
	"every script ran transactions ($counts)" "$(grep -A4 -E '^SQL script' <<<"$out")"

warn=$(grep -cE '(WARNING|LOG): +(fasttime: )?the TSC disagreed' "$log")
if [ "$warn" != 0 ] && why=$(ft_tsc_explained "$mark" <<<"$warned"); then
	t_ok 0 "$warn TSC-disagreement WARNINGs under load, all the machine's ($why)"
else
t_ok $([ "$warn" = 0 ] && echo 0 || echo 1) \
	"no TSC-disagreement WARNING under load ($warn)" \
	"$(grep -A1 -E '(WARNING|LOG): +(fasttime: )?the TSC disagreed' "$log" | head -n 8)"
fi
ae=$(grep -c 'duration: .* ms  plan:' "$log")
t_ok $([ "$ae" -gt 0 ] && echo 0 || echo 1) "auto_explain logged $ae analyzed plans (>= 100 ms) under load"

now=$(q -c "SELECT pg_postmaster_start_time()" 2>&1)
t_ok $([ "$now" = "$pm_start" ] && echo 0 || echo 1) \
	"the server never restarted (postmaster start time unchanged)" "$pm_start -> $now"
! grep -E 'terminated by signal|PANIC|was terminated|server process .* exited' "$log" >/dev/null
t_ok $? "no \"terminated by signal\" or PANIC in the server log" \
	"$(grep -E 'terminated by signal|PANIC|was terminated|server process .* exited' "$log" | head)"
out=$(q -c "SET fasttime.clock_source = auto" \
	-c "SELECT ft_explain_check('SELECT count(*) FROM orders a JOIN customers c ON c.id = a.customer')" 2>&1)
t_ok $([[ "$out" =~ ^[0-9]+$ ]] && echo 0 || echo 1) "the server answers afterwards, times sane" "$out"
finish
