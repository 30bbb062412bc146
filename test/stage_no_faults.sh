#!/usr/bin/env bash
# Stage: the product library holds no fault-injection code.  A fault build
# (make FAULT_INJECTION=1) adds test/fault/fault_injection.c and the hooks
# that call it; the product build, which stage_build.sh has just made,
# must have none of them: no symbol of theirs (nm: fault_*, ft_fault_*, the fact
# hooks' ft_register_facts_faults and ft_facts_faults, ft_set_raw_clock)
# and, among its strings, no fault setting (fasttime.fault_*), fault
# environment variable (FASTTIME_FAULT_*), fault message or the hooks'
# type FtFactsFaults (in the debug information).
#
#   test/stage_no_faults.sh            checks ./fasttime.so
#   test/stage_no_faults.sh LIB.so     checks LIB.so
#
# Exits 0 when LIB.so is clean, 1 when it is not (and says what it found),
# 2 when it cannot look; the last line is
# "STAGE_RESULT no_faults <passed> <failed>".  stage_tap.sh runs it on the
# fault build it makes, which it must reject.
set -u
cd "$(dirname "$0")/.."
so=${1:-fasttime.so}

result() {						# result PASSED FAILED EXIT
	echo "STAGE_RESULT no_faults $1 $2"
	exit "$3"
}

if ! syms=$(nm "$so" 2>&1) || ! grep -qE ' T _PG_init$' <<<"$syms"; then
	echo "not ok - nm lists no _PG_init in $so (not built?): cannot check it"
	result 0 1 2
fi
# "default" is no fault
bad_syms=$(grep -iE 'fault|raw_clock|mangle_published' <<<"$syms" | grep -viE 'default')
bad_strs=$(strings -a "$so" | grep -E 'fasttime\.fault_|FASTTIME_FAULT|FtFactsFaults|fault injection' | sort -u)
if [ -z "$bad_syms$bad_strs" ]; then
	echo "ok - $so has no fault-injection symbol, setting or message"
	result 1 0 0
fi
echo "not ok - $so holds fault-injection code (a fault build is make FAULT_INJECTION=1 only):"
[ -n "$bad_syms" ] && sed 's/^/#   symbol: /' <<<"$bad_syms" | head -n 40
[ -n "$bad_strs" ] && sed 's/^/#   string: /' <<<"$bad_strs" | head -n 40
result 0 1 1
