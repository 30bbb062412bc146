#!/usr/bin/env bash
# Stage: PostgreSQL's own regression suite under auto_explain, five
# times: on a server without fasttime (stock); with fasttime and
# fasttime.clock_source = clock_gettime (its executor hooks on every
# query, the plans left on stock's instrumentation); with
# clock_source = try_tsc (exact timing on fasttime's wrappers with the
# TSC, wherever the TSC is usable: both kinds of machine CI runs on); and
# with fasttime.node_timing = profile switching at the first tick
# (profile_after = 0), once with clock_gettime and once with try_tsc
# (auto picks one or the other by machine).  Each statement of the suite runs with auto_explain
# logging it with ANALYZE, BUFFERS and WAL (nested statements too); every
# result file of the fasttime runs must be the same as stock's, no
# backend may crash, and fasttime may print no WARNING -- except the
# "TSC disagreed" WARNING for a jump of the machine's own TSC that the
# witness outside the server saw (test/tsc_watch.c).
#
# Needs the server's source tree for the suite's SQL and expected files:
# FT_PG_SOURCE_TARBALL names a PostgreSQL source tarball of the server's
# version (.ci/run passes the one .ci/build-pg.sh 18 downloaded); without
# it the stage is skipped.  The suite's C libraries (regress.so, and
# contrib/spi's refint.so and autoinc.so that the triggers test loads) are
# built from the tarball with the server's compiler, flags and headers, so
# the tests that need them run and are compared too; any that does not
# build is left out, and the tests that need it fail the same way in every
# run, which is what is compared.
set -u
cd "$(dirname "$0")/.."
. test/cluster.sh
. test/tap.sh

tarball=${FT_PG_SOURCE_TARBALL:-}
if [ -z "$tarball" ] || [ ! -f "$tarball" ]; then
	t_skip "no PostgreSQL source tarball (FT_PG_SOURCE_TARBALL)"
	echo "STAGE_RESULT pgregress $passed $failed"
	exit 0
fi
work=$(mktemp -d /tmp/fasttime-pgregress.XXXXXX)
[ "$(id -u)" = 0 ] && chown "$FT_TEST_USER" "$work"
trap 'for r in stock exact tsc profile profile_tsc; do ft_cluster_stop "$work/$r"; done; rm -rf "$work"' EXIT
top=$(tar -tf "$tarball" | head -n 1 | cut -d/ -f1)
tar -xf "$tarball" -C "$work" "$top/src/test/regress"
src=$work/$top/src/test/regress
tar -xf "$tarball" -C "$work" "$top/contrib/spi" 2>/dev/null
built=() unbuilt=()
cc=$("$FT_PG_CONFIG" --cc)
cflags="$("$FT_PG_CONFIG" --cflags) $("$FT_PG_CONFIG" --cflags_sl)"
inc=$("$FT_PG_CONFIG" --includedir-server)
for c in "$src/regress.c" "$work/$top/contrib/spi/refint.c" "$work/$top/contrib/spi/autoinc.c"; do
	[ -f "$c" ] || continue
	so=$(basename "$c" .c).so
	# shellcheck disable=SC2086
	if $cc $cflags -shared -I"$inc" -o "$src/$so" "$c" >"$work/cc-$so.log" 2>&1; then
		built+=("$so")
	else
		unbuilt+=("$so")
	fi
done
echo "# the suite's C libraries: built ${built[*]:-none}${unbuilt:+; did not build: ${unbuilt[*]}}"
chmod -R a+rwX "$work/$top"
pg_regress=$(dirname "$("$FT_PG_CONFIG" --pgxs)")/../test/regress/pg_regress
port=${FT_REGRESS_PORT:-55432}

run_suite() {				# run_suite NAME PORT LIBRARIES SETTING...
	local name=$1 port=$2 libs=$3 dir=$work/$1
	shift 3
	ft_cluster_start "$dir" "$port" "shared_preload_libraries = '$libs'" \
		"auto_explain.log_min_duration = 0" "auto_explain.log_analyze = on" \
		"auto_explain.log_nested_statements = on" "auto_explain.log_buffers = on" \
		"auto_explain.log_wal = on" "auto_explain.log_level = debug1" \
		"$@" "max_connections = 30" || return 1
	mkdir -p "$dir/out"
	[ "$(id -u)" = 0 ] && chown "$FT_TEST_USER" "$dir/out"
	(cd "$src" && ft_as_owner "$pg_regress" --inputdir="$src" --outputdir="$dir/out" \
		--bindir="$FT_BINDIR" --host="$dir" --port="$port" --user="$(ft_owner_name)" \
		--schedule="$src/parallel_schedule" --max-connections=10 --dlpath="$src" \
		>"$dir/out/run.log" 2>&1)
	# which clock the run's settings put in effect (a note: the TSC where
	# it is usable, clock_gettime elsewhere)
	case $libs in
	*fasttime*) ft_psql "$dir" "$port" -Atc "SHOW fasttime.clock_source_status" \
		>"$dir/out/clock_status" 2>&1 ;;
	esac
	ft_cluster_stop "$dir"
	return 0
}

ft_tsc_watch_start "$work"
declare -A mark
t0=$SECONDS
run_suite stock $((port + 1)) auto_explain
mark[exact]=$(ft_tsc_mark)
run_suite exact $((port + 2)) fasttime,auto_explain "fasttime.clock_source = clock_gettime"
mark[tsc]=$(ft_tsc_mark)
run_suite tsc $((port + 4)) fasttime,auto_explain "fasttime.clock_source = try_tsc"
mark[profile]=$(ft_tsc_mark)
run_suite profile $((port + 3)) fasttime,auto_explain "fasttime.node_timing = profile" \
	"fasttime.profile_after = 0" "fasttime.clock_source = clock_gettime"
mark[profile_tsc]=$(ft_tsc_mark)
run_suite profile_tsc $((port + 5)) fasttime,auto_explain "fasttime.node_timing = profile" \
	"fasttime.profile_after = 0" "fasttime.clock_source = try_tsc"
echo "# the five runs took $((SECONDS - t0)) s"
for r in stock exact tsc profile profile_tsc; do
	[ -f "$work/$r/out/clock_status" ] &&
		echo "# $r: fasttime.clock_source_status = $(head -n 1 "$work/$r/out/clock_status")"
	echo "# $r: $(grep -hoE '[0-9]+ of [0-9]+ tests [a-z, 0-9]*|All [0-9]+ tests passed' "$work/$r/out/run.log" 2>/dev/null | head -n 1)"
done

nstock=$(ls "$work/stock/out/results" 2>/dev/null | wc -l)
for r in exact tsc profile profile_tsc; do
	nr=$(ls "$work/$r/out/results" 2>/dev/null | wc -l)
	t_ok $([ "$nstock" -gt 100 ] && [ "$nstock" = "$nr" ] && echo 0 || echo 1) \
		"$r: every result file written ($nstock stock, $nr $r)"
	differ=""
	for f in "$work/stock/out/results"/*.out; do
		b=$(basename "$f")
		cmp -s "$f" "$work/$r/out/results/$b" || differ+="$b "
	done
	t_ok $([ -z "$differ" ] && echo 0 || echo 1) "$r: every result as on the server without fasttime" \
		"$(for b in $differ; do diff -u "$work/stock/out/results/$b" "$work/$r/out/results/$b" | head -n 20; done)"
	crashes=$(grep -cE "terminated by signal|PANIC|TRAP:" "$work/$r/server.log")
	t_ok $([ "$crashes" = 0 ] && echo 0 || echo 1) "$r: no backend crashed" \
		"$(grep -E "terminated by signal|PANIC|TRAP:" "$work/$r/server.log" | head)"
	warns=$(grep -cE "WARNING: +fasttime" "$work/$r/server.log")
	warned=$(grep -A1 -E "WARNING: +fasttime" "$work/$r/server.log")
	if [ "$warns" != 0 ] && why=$(ft_tsc_explained "${mark[$r]}" <<<"$warned"); then
		t_ok 0 "$r: fasttime's $warns WARNINGs all the machine's TSC jumps ($why)"
	else
		t_ok $([ "$warns" = 0 ] && echo 0 || echo 1) "$r: fasttime printed no warning" \
			"$(head <<<"$warned")"
	fi
done
echo "STAGE_RESULT pgregress $passed $failed"
