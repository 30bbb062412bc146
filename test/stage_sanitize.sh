#!/usr/bin/env bash
# Stage: fasttime under sanitizers, in PRIVATE installations (see
# test/fault/private_install.sh) so no instrumented build ever reaches the
# system PostgreSQL.
#
#   1. the unit tests built with ASan + UBSan (standalone programs);
#   2. fasttime built with UBSan (-fsanitize=undefined,float-cast-overflow),
#      a cluster preloading it: the regression suite (sql/*.sql) and
#      EXPLAIN ANALYZE over parallel plans;
#   3. valgrind memcheck on a single-user backend preloading the same build,
#      running EXPLAIN ANALYZE (errors counted only where fasttime is on the
#      stack: the packaged postgres is not a valgrind build);
#   4. the fault-injection tests (test/fault/run.sh) on a UBSan + fault build.
# Clean = every check passes and no sanitizer report appears anywhere.
#
# ASan is used for the unit tests only: preloading libasan into the
# uninstrumented packaged postgres hangs it at start-up (even --version).
#
# Ports 5505 and 5506.  Ends with "STAGE_RESULT sanitize <passed> <failed>".
set -u
cd "$(dirname "$0")/.."
SYS_PG_CONFIG=${PG_CONFIG:-pg_config}
. test/fault/private_install.sh

. test/tap.sh
finish() {
	echo "STAGE_RESULT sanitize $passed $failed"
	exit 0
}

work=$(mktemp -d /tmp/ft-sanitize.XXXXXX)
chmod 777 "$work"
# one private installation per PostgreSQL major version, so runs against
# different versions cannot remove each other's
pg_major=$("$SYS_PG_CONFIG" --version | sed -E 's/^PostgreSQL ([0-9]+).*/\1/')
san_root=${FT_SAN_ROOT:-/tmp/ft-san-root-$pg_major}
sanfault_root=${FT_SANFAULT_ROOT:-/tmp/ft-sanfault-root-$pg_major}
SANFLAGS="-fsanitize=undefined -fsanitize=float-cast-overflow -fno-omit-frame-pointer -g -O1"
UBSAN_ENV="UBSAN_OPTIONS=print_stacktrace=1:log_path=$work/ubsan"
cluster_dir=$work/cluster
cleanup() {
	[ -n "${FT_BINDIR:-}" ] && ft_cluster_stop "$cluster_dir"
	rm -rf "$work"
}
trap cleanup EXIT
san_reports() {		# any sanitizer output so far, anywhere
	cat "$work"/ubsan.* "$work"/asan.* 2>/dev/null
	grep -h -E 'runtime error:|AddressSanitizer|UndefinedBehaviorSanitizer' \
		"$cluster_dir"/server.log "$work"/*.log 2>/dev/null
}

# ---- 1. unit tests under ASan + UBSan ------------------------------------
out=$(make -s -C test/unit check SAN=1 2>&1)
rc=$?
echo "$out" | grep -E '^(not ok|[0-9]+ passed)'
! grep -qE 'runtime error:|AddressSanitizer|LeakSanitizer' <<<"$out" && [ $rc -eq 0 ]
t_ok $? "unit tests clean under ASan + UBSan" "$(grep -E -A8 'not ok|runtime error|Sanitizer' <<<"$out")"

# ---- 2. UBSan build: regression suite and parallel EXPLAIN ---------------
if ! FT_SYSTEM_PG_CONFIG=$SYS_PG_CONFIG ft_private_install "$san_root" \
	"PG_CFLAGS=$SANFLAGS" >"$work/build.log" 2>&1; then
	t_ok 1 "UBSan build installed privately in $san_root" "$(tail -n 30 "$work/build.log")"
	finish
fi
t_ok 0 "UBSan build installed privately in $san_root"
export PG_CONFIG=$(FT_SYSTEM_PG_CONFIG=$SYS_PG_CONFIG ft_private_pg_config "$san_root")
. test/cluster.sh

restart_with_env() {	# restart_with_env DIR VAR=value...
	local d=$1
	shift
	ft_as_owner "$FT_BINDIR/pg_ctl" -D "$d/data" -m fast -w stop >/dev/null 2>&1
	ft_as_owner env "$@" "$FT_BINDIR/pg_ctl" -D "$d/data" -l "$d/server.log" \
		-w -t 120 start >/dev/null
}
port=5505
if ! ft_cluster_start "$cluster_dir" $port "auto_explain.log_min_duration = -1" ||
	! restart_with_env "$cluster_dir" "$UBSAN_ENV"; then
	t_ok 1 "cluster preloading the UBSan build starts" "$(tail -n 30 "$cluster_dir/server.log")"
	finish
fi
ldd "$san_root$("$SYS_PG_CONFIG" --pkglibdir)/fasttime.so" | grep -q libubsan
t_ok $? "the preloaded fasttime.so is the UBSan build"

ntests=$(ls sql/*.sql 2>/dev/null | wc -l)
if [ "$ntests" -gt 0 ]; then
	make -s -C "$san_root.src" PG_CONFIG="$PG_CONFIG" installcheck PGHOST="$cluster_dir" \
		PGPORT=$port PGUSER="$(ft_owner_name)" >"$work/installcheck.log" 2>&1
	cat "$work/installcheck.log"
	rfailed=$(grep -cE '(\.\.\. FAILED|^not ok )' "$work/installcheck.log")
	rpassed=$(grep -cE '(\.\.\. ok|^ok [0-9]+ )' "$work/installcheck.log")
	[ $((rpassed + rfailed)) -lt "$ntests" ] && rfailed=$((ntests - rpassed))
	[ -f "$san_root.src/regression.diffs" ] && head -c 10000 "$san_root.src/regression.diffs"
	passed=$((passed + rpassed))
	failed=$((failed + rfailed))
	echo "# regression suite under UBSan: $rpassed passed, $rfailed failed"
fi

qp() { ft_psql "$cluster_dir" $port -At -q "$@"; }
qp -c "CREATE TABLE san_t AS SELECT g, g % 1000 AS k, md5(g::text) AS t FROM generate_series(1, 300000) g" \
	-c "CREATE INDEX ON san_t (k)" -c "VACUUM ANALYZE san_t" >/dev/null 2>&1
par="SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0; SET min_parallel_table_scan_size = 0; SET min_parallel_index_scan_size = 0; SET max_parallel_workers_per_gather = 2"
queries=(
	"SELECT count(*) FROM san_t WHERE t LIKE 'a%'"
	"SELECT count(*), max(a.t) FROM san_t a JOIN san_t b USING (g) WHERE a.k < 500"
	"SELECT k, count(*) FROM san_t GROUP BY k ORDER BY k LIMIT 5"
	"SELECT * FROM san_t ORDER BY t LIMIT 10"
	"SELECT count(*) FROM san_t a WHERE EXISTS (SELECT 1 FROM san_t b WHERE b.g = a.g + 1 AND b.k = 7)"
)
for src in tsc clock_gettime; do
	for qtext in "${queries[@]}"; do
		json=$(qp -c "SET fasttime.clock_source = $src; $par" \
			-c "EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) $qtext" 2>"$work/stderr.log")
		msg=$(printf '%s' "$json" | python3 test/fault/check_explain.py)
		rc=$?
		printf '%s' "$json" | grep -q '"Workers Launched": [1-9]' || { rc=1; msg="no parallel workers launched; $msg"; }
		t_ok $rc "parallel EXPLAIN ANALYZE ($src): ${qtext:0:50}... ($msg)" "$(cat "$work/stderr.log")"
	done
done
out=$(san_reports)
t_ok $([ -z "$out" ] && echo 0 || echo 1) "no UBSan report from the regression suite and parallel plans" "$out"

# ---- 3. valgrind memcheck on a single-user backend ------------------------
ft_cluster_stop "$cluster_dir"
cat >"$work/single.sql" <<'EOF'
SET fasttime.clock_source = tsc;
SHOW fasttime.clock_source_status;
EXPLAIN (ANALYZE, BUFFERS) SELECT count(*), max(a.t) FROM san_t a JOIN san_t b USING (g) WHERE a.k < 5;
EXPLAIN (ANALYZE) SELECT k, count(*) FROM san_t WHERE k < 50 GROUP BY k ORDER BY k;
SET fasttime.clock_source = try_tsc;
EXPLAIN (ANALYZE, TIMING ON) SELECT * FROM san_t WHERE k = 3 ORDER BY t LIMIT 3;
SET fasttime.clock_source = clock_gettime;
EXPLAIN (ANALYZE) SELECT count(*) FROM san_t WHERE k = 4;
EOF
chmod 644 "$work/single.sql"
if command -v valgrind >/dev/null; then
	ft_as_owner timeout 240 valgrind --quiet --error-limit=no --num-callers=30 \
		--log-file="$work/valgrind.log" \
		"$FT_BINDIR/postgres" --single -D "$cluster_dir/data" \
		-c shared_preload_libraries=fasttime -c max_parallel_workers_per_gather=0 \
		postgres <"$work/single.sql" >"$work/single.out" 2>&1
	rc=$?
	# error blocks mentioning fasttime's code
	ours=$(awk 'BEGIN { RS = "==[0-9]+== \n" } /fasttime\.so|ft_[a-z_0-9]+ \(|\((clock_[a-z]+|node_timing|fasttime|fault_injection|sql_functions|ticks|compat)\.[ch]:/ { print; n++ } END { exit n > 0 }' \
		"$work/valgrind.log" >"$work/valgrind-ours.log"; echo $?)
	total=$(grep -cE '^==[0-9]+== (Invalid|Conditional|Use of uninit|Syscall param|Mismatched|Source and destination)' "$work/valgrind.log")
	grep -q 'plan nodes are timed with\|clock_source_status' "$work/single.out"
	grep -c 'Execution Time' "$work/single.out" | grep -qx 4
	ran=$?
	t_ok $([ $rc -eq 0 ] && [ $ran -eq 0 ] && echo 0 || echo 1) \
		"single-user backend under valgrind ran 4 EXPLAIN ANALYZE (rc $rc)" "$(tail -n 20 "$work/single.out")"
	t_ok "$ours" "valgrind: no memory error with fasttime on the stack ($total in postgres itself)" \
		"$(head -n 60 "$work/valgrind-ours.log")"
else
	echo "ok - # SKIP valgrind not installed"
fi

# ---- 4. fault-injection tests on a UBSan + fault build ---------------------
if FT_SYSTEM_PG_CONFIG=$SYS_PG_CONFIG ft_private_install "$sanfault_root" FAULT_INJECTION=1 \
	"PG_CFLAGS=$SANFLAGS" >"$work/build-fault.log" 2>&1; then
	PG_CONFIG=$SYS_PG_CONFIG FT_FAULT_ROOT=$sanfault_root FT_FAULT_NO_BUILD=1 FT_FAULT_PORT=5506 \
		FT_FAULT_SERVER_ENV="$UBSAN_ENV" test/fault/run.sh >"$work/fault.log" 2>&1
	cat "$work/fault.log"
	line=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$work/fault.log" | tail -n 1)
	if [ -n "$line" ]; then
		read -r p _ f _ <<<"$line"
		passed=$((passed + p))
		failed=$((failed + f))
	else
		t_ok 1 "fault-injection tests ended with a count"
	fi
else
	t_ok 1 "UBSan + fault build installed privately in $sanfault_root" "$(tail -n 30 "$work/build-fault.log")"
fi

out=$(san_reports)
t_ok $([ -z "$out" ] && echo 0 || echo 1) "no sanitizer report in the whole stage" "$out"
finish
