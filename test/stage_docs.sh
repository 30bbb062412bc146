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
# Ends with STAGE_RESULT docs <passed> <failed>.  The checks that need no
# server (versions, links) run once in CI (.ci/run), not here.
set -u
cd "$(dirname "$0")/.."
. test/cluster.sh
dir=$(mktemp -d /tmp/fasttime-docs.XXXXXX)
port=${FT_DOCS_PORT:-$((${FT_REGRESS_PORT:-55432} + 1))}
trap 'ft_cluster_stop "$dir"; rm -rf "$dir"' EXIT
if ! command -v python3 >/dev/null; then
	echo "not ok - python3 is needed to check the documentation"
	echo "STAGE_RESULT docs 0 1"
	exit 0
fi
if ! ft_cluster_start "$dir" "$port"; then
	echo "STAGE_RESULT docs 0 1"
	exit 0
fi
python3 test/check_docs.py --facts-sql >"$dir/facts.sql"
chmod a+r "$dir/facts.sql"
if ! ft_psql "$dir" "$port" -qAt -F $'\t' -f "$dir/facts.sql" >"$dir/facts.tsv" 2>"$dir/facts.err"; then
	cat "$dir/facts.err"
	echo "not ok - reading the facts from the server"
	echo "STAGE_RESULT docs 0 1"
	exit 0
fi
out=$(python3 test/check_docs.py --facts "$dir/facts.tsv")
echo "$out"
line=$(echo "$out" | grep -E '^[0-9]+ passed, [0-9]+ failed$' | tail -n 1)
if [ -n "$line" ]; then
	echo "STAGE_RESULT docs $(echo "$line" | cut -d' ' -f1) $(echo "$line" | cut -d' ' -f3)"
else
	echo "STAGE_RESULT docs 0 1"
fi
