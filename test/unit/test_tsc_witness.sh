#!/usr/bin/env bash
# The witness of the machine's own TSC jumps (test/tsc_watch.c) and the
# judge of fasttime's clock WARNINGs against it (test/tsc_explained.py),
# offline: the tests' "no WARNING" checks accept a WARNING only through
# them, so they must accept exactly the WARNINGs a witnessed jump explains.
# Prints TAP ending in "N passed, N failed".
set -u
cd "$(dirname "$0")/../.."
. test/tap.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
judge() { python3 test/tsc_explained.py "$@"; }

# ---- the witness ----------------------------------------------------------
if ${CC:-cc} -O2 -Wall -Wextra -Werror -o "$tmp/tsc_watch" test/tsc_watch.c 2>"$tmp/cc.err"; then
	t_ok 0 "tsc_watch builds warning-free"
	# told to follow a process that ends soon: the witness must end too
	sleep 1 &
	follow=$!
	"$tmp/tsc_watch" "$tmp/w.log" $follow </dev/null >/dev/null 2>&1 &
	echo $! >"$tmp/pid"
	for i in $(seq 1 30); do
		grep -qE '^(ready|unsupported)' "$tmp/w.log" 2>/dev/null && break
		sleep 0.1
	done
	first=$(head -n 1 "$tmp/w.log" 2>/dev/null)
	[[ "$first" =~ ^ready\ [1-9][0-9]{6,}$ || "$first" = unsupported ]]
	t_ok $? "tsc_watch calibrates and says so (\"$first\")" "$first"
	wait $follow
	sleep 0.3
	! kill -0 "$(cat "$tmp/pid")" 2>/dev/null
	t_ok $? "tsc_watch ends when the process it follows has ended"
	! grep -vE '^(ready [0-9]+|unsupported|jump [0-9]+ -?[0-9]+)$' "$tmp/w.log" >/dev/null
	t_ok $? "tsc_watch's log has only ready/jump lines" "$(cat "$tmp/w.log")"
else
	t_ok 1 "tsc_watch builds warning-free" "$(cat "$tmp/cc.err")"
fi

# ---- the judge ------------------------------------------------------------
warn() {	# warn WALL_MS TSC_MS: fasttime's WARNING with its DETAIL
	printf 'WARNING:  fasttime: the TSC disagreed with clock_gettime during this query\n'
	printf 'DETAIL:  Over %s ms of clock_gettime time, the TSC advanced %s ms. The plan node times of this query were taken with the TSC and are shown as measured.\n' "$1" "$2"
}
log=$tmp/j.log
printf 'ready 2096012203\n' >"$log"
mark=$(stat -c %s "$log")
why=$(warn 240.424 486999250.706 | judge "$log" "$mark")
t_ok $([ $? = 1 ] && echo 0 || echo 1) "a WARNING with no jump witnessed is not the machine's" "$why"
printf 'jump 1764720000000 486999010283000\n' >>"$log"
why=$(warn 240.424 486999250.706 | judge "$log" "$mark")
t_ok $? "a WARNING the size of a witnessed jump is the machine's ($why)" "$why"
why=$(warn 240.424 486999250.706 | judge "$log" "$(stat -c %s "$log")")
t_ok $([ $? = 1 ] && echo 0 || echo 1) "a jump witnessed before the mark explains nothing" "$why"
why=$(warn 240.424 245.424 | judge "$log" "$mark")
t_ok $([ $? = 1 ] && echo 0 || echo 1) "a 5 ms disagreement is not explained by a jump of days" "$why"
why=$(warn 240.424 -486998769.859 | judge "$log" "$mark")
t_ok $([ $? = 1 ] && echo 0 || echo 1) "a jump back is not explained by a jump forward" "$why"
why=$({ warn 240.424 486999250.706; echo 'WARNING:  something else'; } | judge "$log" "$mark")
t_ok $([ $? = 1 ] && echo 0 || echo 1) "another WARNING beside it is not the machine's" "$why"
why=$(echo 'WARNING:  fasttime: the TSC disagreed with clock_gettime during this query' | judge "$log" "$mark")
t_ok $([ $? = 1 ] && echo 0 || echo 1) "a disagreement WARNING without its DETAIL is not explained" "$why"
printf 'jump 1764720000100 -3000000\n' >>"$log"
why=$({ warn 100 486999110.283; warn 50 47; } | judge "$log" "$mark")
t_ok $? "two WARNINGs, each the size of some witnessed jumps, are the machine's ($why)" "$why"
why=$(warn 240.424 486999250.706 | judge "$tmp/none.log" 0)
t_ok $([ $? = 1 ] && echo 0 || echo 1) "with no witness, no WARNING is the machine's" "$why"
why=$({ printf 'LOG:  fasttime: the TSC disagreed with clock_gettime during a query\n'; printf 'DETAIL:  Over 100 ms of clock_gettime time, the TSC advanced 486999110.283 ms. The plan node times of that query were taken with the TSC and are shown as measured.\n'; } | judge "$log" "$mark")
t_ok $? "a disagreement logged at LOG (auto_explain's query), the size of a witnessed jump, is the machine's ($why)" "$why"
why=$(printf 'LOG:  fasttime: the TSC disagreed with clock_gettime during a query\n' | judge "$log" "$mark")
t_ok $([ $? = 1 ] && echo 0 || echo 1) "a disagreement at LOG without its DETAIL is not explained" "$why"
why=$(echo 'NOTICE:  nothing' | judge "$log" "$mark")
t_ok $([ $? = 1 ] && echo 0 || echo 1) "text with no WARNING has nothing to explain" "$why"

echo "1..$n"
echo "$passed passed, $failed failed"
