#!/usr/bin/env bash
# Run every fasttime test against one PostgreSQL installation and print
# one closing line "N passed, N failed".
#
#   test/run_all.sh                 # PG_CONFIG from PATH
#   PG_CONFIG=/path/to/pg_config test/run_all.sh
#
# Needs: the PostgreSQL server and its -dev files for that version, write
# access to its installation directories (run as root, or with sudo), and
# a C compiler.  Each stage is a script that ends by printing
#   STAGE_RESULT <name> <passed> <failed>
# and this script adds them up.  A stage that dies without printing that
# line counts as one failure.
set -u
cd "$(dirname "$0")/.."
if [ -z "${PG_CONFIG:-}" ]; then
	if command -v pg_config >/dev/null; then
		PG_CONFIG=pg_config
	elif [ -x /usr/lib/postgresql/15/bin/pg_config ]; then
		PG_CONFIG=/usr/lib/postgresql/15/bin/pg_config
	else
		echo "no pg_config found: run ./demo.sh first (it installs PostgreSQL 15), or set PG_CONFIG" >&2
		echo "0 passed, 1 failed"
		exit 1
	fi
fi
export PG_CONFIG

stages=(test/stage_build.sh test/stage_no_faults.sh test/stage_unit.sh
		test/stage_regress.sh test/stage_docs.sh test/stage_tap.sh test/stage_load.sh
		test/stage_sanitize.sh test/stage_pgregress.sh)

total_pass=0
total_fail=0
summary=""
for stage in "${stages[@]}"; do
	[ -x "$stage" ] || continue
	if [ "${FT_SKIP_STAGES:-}" != "" ] && [[ " $FT_SKIP_STAGES " == *" $(basename "$stage" .sh | sed 's/^stage_//') "* ]]; then
		echo "== skipping $stage (FT_SKIP_STAGES)"
		continue
	fi
	echo "== $stage ($("$PG_CONFIG" --version))"
	log=$(mktemp)
	t0=$SECONDS
	"$stage" 2>&1 | tee "$log"
	line=$(grep '^STAGE_RESULT ' "$log" | tail -n 1)
	rm -f "$log"
	if [ -z "$line" ]; then
		name=$(basename "$stage" .sh)
		p=0
		f=1
		echo "== $stage ended without a result: counted as 1 failure"
	else
		read -r _ name p f <<<"$line"
	fi
	total_pass=$((total_pass + p))
	total_fail=$((total_fail + f))
	summary+=$(printf '%-10s %4d passed, %4d failed  %4d s' "$name" "$p" "$f" $((SECONDS - t0)))$'\n'
	# nothing after a failed build is meaningful
	if [ "$name" = build ] && [ "$f" -gt 0 ]; then
		break
	fi
done
echo
echo "== summary for $("$PG_CONFIG" --version)"
printf '%s' "$summary"
echo "$total_pass passed, $total_fail failed"
[ "$total_fail" -eq 0 ]
