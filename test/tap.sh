#!/usr/bin/env bash
# TAP-style test points for fasttime's shell test scripts.  Source it, then:
#   t_ok STATUS DESCRIPTION [DIAGNOSTIC]   a point; STATUS 0 = pass
#   t_skip REASON                          a skipped point (counts as passed)
# and read $n, $passed and $failed when done.  A failing point prints the
# first lines of DIAGNOSTIC as "#" comments.

n=0
passed=0
failed=0

t_ok() {
	n=$((n + 1))
	if [ "$1" = 0 ]; then
		passed=$((passed + 1))
		echo "ok $n - $2"
	else
		failed=$((failed + 1))
		echo "not ok $n - $2"
		[ -n "${3:-}" ] && printf '%s\n' "$3" | head -n 20 | sed 's/^/#   /'
	fi
	return 0
}

t_skip() {
	n=$((n + 1))
	passed=$((passed + 1))
	echo "ok $n - # SKIP $1"
}
