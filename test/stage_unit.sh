#!/usr/bin/env bash
# Stage: standalone C unit tests (test/unit/), no server needed.
#   test_clock: decision, frequency choice, tick->ns conversion, facts
#               serialization, one real detection (invariants only)
#   test_fault: the fault-injection machinery, offline
#   test_tsc_witness.sh: the witness of the machine's own TSC jumps and
#               the judge of clock WARNINGs the tests use, offline
# Each program prints TAP ending in "N passed, N failed"; a program that
# fails to build or dies without that line counts as one failure.
set -u
cd "$(dirname "$0")/.."
passed=0
failed=0
if ! make -s -C test/unit all 2>&1; then
	echo "not ok - test/unit did not build"
	echo "STAGE_RESULT unit 0 1"
	exit 0
fi
for prog in build/test_clock build/test_fault test_tsc_witness.sh; do
	out=$(mktemp)
	echo "# $prog"
	./test/unit/$prog 2>&1 | tee "$out"
	line=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$out" | tail -n 1)
	if [ -z "$line" ]; then
		echo "not ok - $prog ended without a result line (crashed?)"
		failed=$((failed + 1))
	else
		read -r p _ f _ <<<"$line"
		passed=$((passed + p))
		failed=$((failed + f))
	fi
	rm -f "$out"
done
echo "STAGE_RESULT unit $passed $failed"
