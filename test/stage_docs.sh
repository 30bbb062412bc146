#!/usr/bin/env bash
# Stage: the documentation against the installed extension
# (test/check_docs.py).  Starts a throwaway cluster with fasttime
# preloaded, reads pg_settings, the extension's functions and
# fasttime_status() rows through the SQL that test/check_docs.py
# --facts-sql writes, and checks docs/configuration.md,
# docs/sql-functions.md and README.md against them.  About 5 s (33 s
# under aarch64 emulation, where .ci/stage_arm64.sh runs it too).
#
#   PG_CONFIG=... test/stage_docs.sh        (run by test/run_all.sh)
#
# First, with no server, the map of the code in docs/how-it-works.md
# against src/'s #include lines (test/check_code_map.py).
#
# Ends with STAGE_RESULT docs <passed> <failed>.  The other checks that
# need no server (versions, links) run once in CI (.ci/run), not here.
set -u
cd "$(dirname "$0")/.."
. test/cluster.sh
dir=$(mktemp -d /tmp/fasttime-docs.XXXXXX)
port=${FT_DOCS_PORT:-$((${FT_REGRESS_PORT:-55432} + 1))}
trap 'ft_cluster_stop "$dir"; rm -rf "$dir"' EXIT
map_passed=0
map_failed=0
result() {						# result PASSED FAILED: adds the map's
	echo "STAGE_RESULT docs $(($1 + map_passed)) $(($2 + map_failed))"
	exit 0
}
if ! command -v python3 >/dev/null; then
	echo "not ok - python3 is needed to check the documentation"
	result 0 1
fi
out=$(python3 test/check_code_map.py)
echo "$out"
line=$(echo "$out" | grep -E '^[0-9]+ passed, [0-9]+ failed$' | tail -n 1)
if [ -n "$line" ]; then
	map_passed=$(echo "$line" | cut -d' ' -f1)
	map_failed=$(echo "$line" | cut -d' ' -f3)
else
	map_failed=1
fi
if ! ft_cluster_start "$dir" "$port"; then
	result 0 1
fi
python3 test/check_docs.py --facts-sql >"$dir/facts.sql"
chmod a+r "$dir/facts.sql"
if ! ft_psql "$dir" "$port" -qAt -F $'\t' -f "$dir/facts.sql" >"$dir/facts.tsv" 2>"$dir/facts.err"; then
	cat "$dir/facts.err"
	echo "not ok - reading the facts from the server"
	result 0 1
fi
out=$(python3 test/check_docs.py --facts "$dir/facts.tsv")
echo "$out"
line=$(echo "$out" | grep -E '^[0-9]+ passed, [0-9]+ failed$' | tail -n 1)
if [ -n "$line" ]; then
	result "$(echo "$line" | cut -d' ' -f1)" "$(echo "$line" | cut -d' ' -f3)"
else
	result 0 1
fi
