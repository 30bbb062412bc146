#!/usr/bin/env bash
# Stage: pg_regress suite (sql/, expected/) against a throwaway cluster
# with shared_preload_libraries = 'fasttime'.
set -u
cd "$(dirname "$0")/.."
. test/cluster.sh
dir=$(mktemp -d /tmp/fasttime-regress.XXXXXX)
port=${FT_REGRESS_PORT:-55432}
trap 'ft_cluster_stop "$dir"; rm -rf "$dir"' EXIT
if ! ft_cluster_start "$dir" "$port" "auto_explain.log_min_duration = -1"; then
	echo "STAGE_RESULT regress 0 1"
	exit 0
fi
# every test the Makefile runs for this version (sql/*.sql and the
# version's own, sql/pg18/ ...), so that one that bails out counts as failed
ntests=$(make -s PG_CONFIG="$PG_CONFIG" \
	--eval='ft-print-regress: ; @echo $(words $(REGRESS))' ft-print-regress)
case $ntests in '' | *[!0-9]*) ntests=$(ls sql/*.sql | wc -l) ;; esac
make -s PG_CONFIG="$PG_CONFIG" installcheck PGHOST="$dir" PGPORT="$port" \
	PGUSER="$(ft_owner_name)" >"$dir/installcheck.out" 2>&1
cat "$dir/installcheck.out"
# pg_regress prints one line per test: "test NAME ... ok|FAILED" (15) or
# "ok N - NAME" / "not ok N - NAME" (16+)
failed=$(grep -cE '(\.\.\. FAILED|^not ok )' "$dir/installcheck.out")
passed=$(grep -cE '(\.\.\. ok|^ok [0-9]+ )' "$dir/installcheck.out")
if [ $((passed + failed)) -lt "$ntests" ]; then
	failed=$((ntests - passed))
fi
[ -f regression.diffs ] && head -c 20000 regression.diffs
echo "STAGE_RESULT regress $passed $failed"
