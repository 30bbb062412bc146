#!/usr/bin/env bash
# Fault-injection tests: EXPLAIN ANALYZE under a node clock that jumps or
# crawls, and a server whose clock facts say the TSC is unusable.  Runs
# against a PRIVATE installation holding a FAULT_INJECTION=1 build (see
# private_install.sh), never the system PostgreSQL.  Prints TAP ending in
# "N passed, N failed"; exits non-zero on failure.
#
#   test/fault/run.sh                         build /tmp/ft-fault-root, test
#   FT_FAULT_ROOT=/tmp/x FT_FAULT_NO_BUILD=1 test/fault/run.sh
#                                             use a private install already
#                                             built with FAULT_INJECTION=1
#   FT_FAULT_PORT=5503                        port (5502-5509 are ours)
#   FT_FAULT_SERVER_ENV="VAR=value ..."       extra postmaster environment
#                                             (e.g. LD_PRELOAD for ASan)
#
# test/fault/run.sh
set -u
cd "$(dirname "$0")/../.."
here=test/fault
root=${FT_FAULT_ROOT:-/tmp/ft-fault-root}
port=${FT_FAULT_PORT:-5503}
sys_pg_config=${PG_CONFIG:-pg_config}

. test/tap.sh
finish() {
	echo "1..$n"
	echo "$passed passed, $failed failed"
	[ "$failed" -eq 0 ]
	exit $?
}

. $here/private_install.sh
if [ -z "${FT_FAULT_NO_BUILD:-}" ]; then
	if ! FT_SYSTEM_PG_CONFIG=$sys_pg_config ft_private_install "$root" FAULT_INJECTION=1; then
		t_ok 1 "fault build installed privately in $root"
		finish
	fi
fi
PG_CONFIG=$(FT_SYSTEM_PG_CONFIG=$sys_pg_config ft_private_pg_config "$root")
export PG_CONFIG
. test/cluster.sh
case "$FT_BINDIR" in
	"$root"/*) ;;
	*) t_ok 1 "cluster binaries come from $root (got $FT_BINDIR)"; finish ;;
esac

dir=$(mktemp -d /tmp/ft-fault-cluster.XXXXXX)
chmod 755 "$dir"
trap 'ft_cluster_stop "$dir"; rm -rf "$dir"' EXIT
log=$dir/server.log

# (Re)start the postmaster with FASTTIME_FAULT_FACTS=$1 (may be empty).
pm_restart() {
	ft_as_owner "$FT_BINDIR/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null 2>&1
	ft_as_owner env ${FT_FAULT_SERVER_ENV:-} FASTTIME_FAULT_FACTS="$1" \
		"$FT_BINDIR/pg_ctl" -D "$dir/data" -l "$log" -w -t 60 start >/dev/null 2>&1
}
log_since() { tail -c +"$(($1 + 1))" "$log"; }
ft_tsc_watch_start "$dir"
log_size() { stat -c %s "$log" 2>/dev/null || echo 0; }
q() { ft_psql "$dir" "$port" -At -q "$@"; }

if ! ft_cluster_start "$dir" "$port" "max_parallel_workers_per_gather = 2" \
	"log_min_messages = log"; then
	t_ok 1 "cluster on the fault build starts"
	finish
fi
pm_restart "" || { t_ok 1 "postmaster restarts with the test environment" "$(tail -n 20 "$log")"; finish; }
out=$(q -c "SHOW fasttime.fault_tick_mode" 2>&1)
t_ok $([ "$out" = none ] && echo 0 || echo 1) "server runs the fault build (fasttime.fault_tick_mode exists)" "$out"
q -c "CREATE TABLE ft AS SELECT g, md5(g::text) AS t FROM generate_series(1, 200000) g" \
	-c "VACUUM ANALYZE ft" || { t_ok 1 "test table created"; finish; }
pm_pid=$(head -n 1 "$dir/data/postmaster.pid")

serial="SET max_parallel_workers_per_gather = 0"
parallel="SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0; SET min_parallel_table_scan_size = 0; SET max_parallel_workers_per_gather = 2"
query="EXPLAIN (ANALYZE, FORMAT JSON) SELECT count(*), max(a.t) FROM ft a JOIN ft b USING (g) WHERE a.g % 3 = 0"

# explain_case DESCRIPTION WARNING(yes|no|any) SETUP_SQL
#   runs the query after SETUP_SQL in one session; checks that it ran,
#   that node times are sane, and whether the clock WARNING appeared.
#   A WARNING where none is wanted passes only when the machine's own TSC
#   jumped during the case, witnessed outside the server (ft_tsc_explained):
#   the WARNING is then right, and times are checked as measured.
#   $fake_witness, if set, is appended to the witness's log after the mark:
#   a jump as the witness logs the machine's; $witnessed says whether the
#   last case took that path.
fake_witness=
witnessed=
explain_case() {
	local desc=$1 want_warn=$2 setup=$3 json err rc msg mark why=
	mark=$(ft_tsc_mark)
	witnessed=
	[ -n "$fake_witness" ] && echo "$fake_witness" >>"$FT_TSC_WATCH_LOG"
	json=$(q -c "$setup" -c "$query" 2>"$dir/stderr")
	rc=$?
	err=$(cat "$dir/stderr")
	if [ $rc -ne 0 ]; then
		t_ok 1 "$desc: EXPLAIN ANALYZE runs" "$err"
		return
	fi
	if [ "$want_warn" = no ] && grep -q WARNING <<<"$err" &&
		why=$(ft_tsc_explained "$mark" <<<"$err"); then
		echo "# $desc: $why"
		want_warn=witnessed
		witnessed=1
	else
		why=
	fi
	# where the clocks disagree, times are shown as measured: only
	# "no negative time, startup <= total" holds (check_explain.py)
	if [ "$want_warn" = yes ] || [ "$want_warn" = witnessed ]; then
		msg=$(printf '%s' "$json" | python3 $here/check_explain.py --as-measured)
		t_ok $? "$desc: times as measured, none negative ($msg)" "$msg"
	else
		msg=$(printf '%s' "$json" | python3 $here/check_explain.py)
		t_ok $? "$desc: times sane ($msg)" "$msg"
	fi
	if [[ "$setup" == *parallel_setup_cost* ]]; then
		printf '%s' "$json" | grep -q '"Workers Launched": [1-9]'
		t_ok $? "$desc: parallel workers launched"
	fi
	case $want_warn in
		yes)
			grep -q 'WARNING:  fasttime: the TSC disagreed' <<<"$err"
			t_ok $? "$desc: WARNING that the TSC disagreed" "$err" ;;
		no)
			! grep -q 'WARNING' <<<"$err"
			t_ok $? "$desc: no WARNING" "$err" ;;
		witnessed)
			t_ok 0 "$desc: no WARNING but the machine's ($why)" ;;
	esac
}

# ---- tick faults, armed at run time -------------------------------------
# Exact timing (whatever node_timing's default), where every node call
# reads the clock: the faults are armed at the Nth read.
echo "# tick faults (fasttime.fault_tick_*), node clock = TSC, exact timing"
tsc="SET fasttime.clock_source = tsc; SET fasttime.node_timing = exact"
if ! q -c "$tsc" 2>"$dir/stderr"; then
	t_skip "the TSC is not usable here, tick faults need it: $(cat "$dir/stderr")"
else
	out=$(q -c "$tsc" -c "SHOW fasttime.clock_source_status")
	t_ok $([ "$out" = tsc ] && echo 0 || echo 1) "clock_source = tsc is in effect" "$out"
	# for the fact faults below: a function declared with "tsc" while the
	# TSC was usable
	out=$(q -c "CREATE FUNCTION f_tsc() RETURNS text LANGUAGE sql SET fasttime.clock_source = tsc
		AS \$\$SELECT current_setting('fasttime.clock_source') || ' ' || current_setting('fasttime.clock_source_status')\$\$" 2>&1)
	t_ok $? "a function declared with SET fasttime.clock_source = tsc is created" "$out"
	H='SET fasttime.fault_tick_amount_ns = 3.6e12'	# one hour
	explain_case "no fault, serial" no "$tsc; $serial"
	explain_case "no fault, parallel" no "$tsc; $parallel"
	explain_case "jump forward 1 h at read 3 (first node read), serial" yes \
		"$tsc; $serial; $H; SET fasttime.fault_tick_at = 3; SET fasttime.fault_tick_mode = jump_forward"
	explain_case "jump forward 1 h at read 500, serial" yes \
		"$tsc; $serial; $H; SET fasttime.fault_tick_at = 500; SET fasttime.fault_tick_mode = jump_forward"
	# the same jump, as though the machine's TSC had made it: the witness
	# logs it (faked here), and a case that wants no WARNING accepts this
	# one; a witnessed jump of another size explains nothing
	fake_witness="jump $(date +%s)000 3600000000000"
	explain_case "jump forward 1 h at read 500, witnessed as the machine's, serial" no \
		"$tsc; $serial; $H; SET fasttime.fault_tick_at = 500; SET fasttime.fault_tick_mode = jump_forward"
	fake_witness=
	t_ok $([ -n "$witnessed" ] && echo 0 || echo 1) \
		"a WARNING matching a witnessed jump passes as the machine's, times checked as measured"
	mark=$(ft_tsc_mark)
	echo "jump $(date +%s)000 7200000000000" >>"$FT_TSC_WATCH_LOG"
	q -c "$tsc; $serial; $H; SET fasttime.fault_tick_at = 500; SET fasttime.fault_tick_mode = jump_forward" \
		-c "$query" >/dev/null 2>"$dir/stderr"
	why=$(ft_tsc_explained "$mark" <"$dir/stderr")
	t_ok $([ $? = 1 ] && grep -q 'do not account for' <<<"$why" && echo 0 || echo 1) \
		"a WARNING of 1 h is not the machine's when the witness saw 2 h ($why)" "$(cat "$dir/stderr")"
	explain_case "jump forward 2 ms at read 500, serial" yes \
		"$tsc; $serial; SET fasttime.fault_tick_amount_ns = 2e6; SET fasttime.fault_tick_at = 500; SET fasttime.fault_tick_mode = jump_forward"
	explain_case "jump back 1 h at read 500, serial" yes \
		"$tsc; $serial; $H; SET fasttime.fault_tick_at = 500; SET fasttime.fault_tick_mode = jump_back"
	explain_case "jump back 1 us at read 500 (CPU skew), serial" no \
		"$tsc; $serial; SET fasttime.fault_tick_amount_ns = 1000; SET fasttime.fault_tick_at = 500; SET fasttime.fault_tick_mode = jump_back"
	explain_case "slow reads (1 us), serial" no \
		"$tsc; $serial; SET fasttime.fault_tick_mode = slow"
	explain_case "jump forward 1 h at read 200, parallel" yes \
		"$tsc; $parallel; $H; SET fasttime.fault_tick_at = 200; SET fasttime.fault_tick_mode = jump_forward"
	explain_case "jump back 1 h at read 200, parallel" yes \
		"$tsc; $parallel; $H; SET fasttime.fault_tick_at = 200; SET fasttime.fault_tick_mode = jump_back"
	explain_case "slow reads (1 us), parallel" no \
		"$tsc; $parallel; SET fasttime.fault_tick_mode = slow"
	# a jump inside nested queries that auto_explain times too (each
	# nests a query clock inside the outer query's)
	json=$(q -c "$tsc; LOAD 'auto_explain'; SET auto_explain.log_min_duration = 0; SET auto_explain.log_analyze = on; SET auto_explain.log_nested_statements = on" \
		-c "$H; SET fasttime.fault_tick_at = 300; SET fasttime.fault_tick_mode = jump_forward" \
		-c "CREATE OR REPLACE FUNCTION ft_inner(int) RETURNS bigint LANGUAGE sql AS 'SELECT count(*) FROM generate_series(1, \$1 * 10)'" \
		-c "EXPLAIN (ANALYZE, FORMAT JSON) SELECT ft_inner(g) FROM ft WHERE g < 40" 2>"$dir/stderr")
	msg=$(printf '%s' "$json" | python3 $here/check_explain.py --as-measured)
	t_ok $? "jump forward inside auto_explain-timed nested queries: outer times as measured, none negative ($msg)" \
		"$msg $(cat "$dir/stderr")"
	grep -q 'WARNING:  fasttime: the TSC disagreed' "$dir/stderr"
	t_ok $? "jump forward inside nested queries: WARNING" "$(cat "$dir/stderr")"
	# the hint tells the DBA what to do
	out=$(q -c "$tsc; $serial; $H; SET fasttime.fault_tick_at = 500; SET fasttime.fault_tick_mode = jump_forward" \
		-c "$query" 2>&1 >/dev/null)
	grep -q 'SET fasttime.clock_source = clock_gettime' <<<"$out"
	t_ok $? "the WARNING's HINT names SET fasttime.clock_source = clock_gettime" "$out"
	explain_case "new session after faults: clean" no "$tsc; $serial"
fi
out=$(q -c "SELECT 1" 2>&1)
t_ok $([ "$out" = 1 ] && [ "$(head -n 1 "$dir/data/postmaster.pid")" = "$pm_pid" ] && echo 0 || echo 1) \
	"server stayed up through the tick faults (same postmaster, no restart)" "$out"
! grep -E 'terminated by signal|PANIC|was terminated' "$log" >/dev/null
t_ok $? "no backend crashed" "$(grep -E 'terminated by signal|PANIC|was terminated' "$log")"

# ---- clock facts that declare the TSC unusable --------------------------
echo "# fact faults (FASTTIME_FAULT_FACTS at postmaster start)"
fact_case() {	# fact_case TOKEN NEEDLE TSC_REFUSED(yes|no)
	local tok=$1 needle=$2 refused=$3 off out
	off=$(log_size)
	if ! pm_restart "$tok"; then
		t_ok 1 "$tok: postmaster starts" "$(log_since "$off")"
		return
	fi
	out=$(q -c "SHOW fasttime.clock_source_status" 2>&1)
	t_ok $([ "$out" = clock_gettime ] && echo 0 || echo 1) \
		"$tok: auto times nodes with clock_gettime" "$out"
	out=$(log_since "$off")
	grep -q "clock fact fault \"${tok##*,}\" applied" <<<"$out" &&
		grep -A1 'plan nodes are timed with clock_gettime' <<<"$out" | grep -q "DETAIL:.*$needle"
	t_ok $? "$tok: server log says clock_gettime, and why (\"$needle\")" "$out"
	out=$(q -c "SET fasttime.clock_source = tsc" -c "SHOW fasttime.clock_source_status" 2>&1)
	if [ "$refused" = yes ]; then
		grep -q 'cannot be "tsc" on this machine' <<<"$out" && grep -q "DETAIL:.*$needle" <<<"$out"
		t_ok $? "$tok: SET clock_source = tsc is refused, DETAIL names the cause" "$out"
		out=$(q -c "SET fasttime.clock_source = try_tsc" -c "SHOW fasttime.clock_source_status" 2>&1)
		! grep -q 'NOTICE' <<<"$out" && grep -q '^clock_gettime$' <<<"$out"
		t_ok $? "$tok: try_tsc falls back, silently (no NOTICE)" "$out"
		# the machine changed under a function declared with "tsc": it
		# still runs, every call, on clock_gettime and silently
		if [ "$(q -c "SELECT to_regproc('f_tsc') IS NOT NULL")" = t ]; then
			out=$(q -c "SELECT f_tsc()" -c "SELECT f_tsc()" 2>&1)
			t_ok $([ "$out" = $'tsc clock_gettime\ntsc clock_gettime' ] && echo 0 || echo 1) \
				"$tok: a function declared with clock_source = tsc runs, on clock_gettime, without a word" "$out"
		else
			t_skip "$tok: no function declared with clock_source = tsc (the TSC was not usable when it was to be created)"
		fi
		# DDL storing "tsc" here (a restored dump): a NOTICE, and stored
		out=$(q -c "SET client_min_messages = notice" -c "CREATE FUNCTION f_tsc2() RETURNS text LANGUAGE sql
			SET fasttime.clock_source = tsc AS \$\$SELECT current_setting('fasttime.clock_source_status')\$\$" \
			-c "SELECT f_tsc2()" -c "DROP FUNCTION f_tsc2()" 2>&1)
		grep -q 'NOTICE:  fasttime.clock_source cannot be "tsc" on this machine' <<<"$out" &&
			grep -q "DETAIL:.*$needle" <<<"$out" && grep -q '^clock_gettime$' <<<"$out" &&
			! grep -q 'ERROR' <<<"$out"
		t_ok $? "$tok: CREATE FUNCTION ... SET clock_source = tsc draws a NOTICE naming the cause, and the function runs on clock_gettime" "$out"
		# a reload of a postgresql.conf saying "tsc": refused (the next start
		# would fail), logged with why, the old value kept
		off=$(log_size)
		ft_as_owner sh -c "echo 'fasttime.clock_source = tsc # fault test' >> '$dir/data/postgresql.conf'"
		q -c "SELECT pg_reload_conf()" >/dev/null 2>&1
		# the postmaster's verdict, logged once it has read the file
		for _ in $(seq 50); do
			grep -q 'contains errors\|parameter "fasttime.clock_source" changed' <<<"$(log_since "$off")" && break
			sleep 0.2
		done
		out=$(q -c "SHOW fasttime.clock_source" 2>&1)
		logged=$(log_since "$off")
		ft_as_owner sed -i '/# fault test$/d' "$dir/data/postgresql.conf"
		off2=$(log_size)
		q -c "SELECT pg_reload_conf()" >/dev/null 2>&1
		for _ in $(seq 50); do
			grep -q 'reloading configuration files' <<<"$(log_since "$off2")" && break
			sleep 0.2
		done
		sleep 0.5
		[ "$out" = auto ] && grep -q 'LOG:  fasttime.clock_source cannot be "tsc" on this machine' <<<"$logged" &&
			grep -q 'contains errors; unaffected changes were applied' <<<"$logged"
		t_ok $? "$tok: a reload with clock_source = tsc in postgresql.conf is refused and logged, auto kept" \
			"SHOW: $out; log: $(head -n 8 <<<"$logged")"
	else
		t_ok $([ "$out" = tsc ] && echo 0 || echo 1) \
			"$tok: an explicit tsc overrides auto's caution" "$out"
	fi
	explain_case "$tok: auto, parallel" no "$parallel"
}
# Each case starts from machine kind (a) (kernel clocksource tsc, RDTSCP,
# cheap reads) and adds its fault, so the reason the test expects is the
# fault's on any machine: on a kvm-clock guest the kernel's clocksource
# would otherwise decide first.
fact_case "machine_a,no_invariant" "invariant" yes
fact_case "machine_a,no_frequency" "could not be calibrated" yes
fact_case "machine_a,kernel_hpet" "hpet" no
fact_case "machine_a,slow_tsc" "not clearly cheaper" no
fact_case "machine_a,kernel_no_invariant" "the kernel does not list the TSC as invariant" yes

# ---- the decision path on both machine kinds CI runs on -----------------
# Whatever this machine is, auto, tsc, try_tsc, fasttime_status and (on 18)
# EXPLAIN's clock line are checked under the injected facts of both kinds:
#   a  kernel clocksource tsc, RDTSCP: auto picks the TSC;
#   b  kvm-clock with tsc=unstable, no RDTSCP: auto keeps clock_gettime,
#      tsc and try_tsc time with LFENCE;RDTSC;
# and b with an emulator's CPUID claiming RDTSCP (valgrind's does).
pg_major=$("$PG_CONFIG" --version | sed -E 's/^PostgreSQL ([0-9]+).*/\1/')
st() {	# st NAME...: "name=value" lines of fasttime_status()
	local names
	names=$(printf "'%s'," "$@")
	q -c "SET fasttime.clock_source = ${src:-auto}" \
		-c "SELECT name || '=' || coalesce(value, '<null>') FROM fasttime_status() WHERE name IN (${names%,}) ORDER BY name"
}
kind_case() {	# kind_case KIND FACTS AUTO_CHOICE AUTO_NEEDLE RDTSCP
	local kind=$1 facts=$2 want=$3 needle=$4 rdtscp=$5 off out src
	off=$(log_size)
	if ! pm_restart "$facts"; then
		t_ok 1 "kind $kind ($facts): postmaster starts" "$(log_since "$off")"
		return
	fi
	q -c "CREATE EXTENSION IF NOT EXISTS fasttime" >/dev/null 2>&1
	out=$(q -c "SHOW fasttime.clock_source_status" 2>&1)
	t_ok $([ "$out" = "$want" ] && echo 0 || echo 1) "kind $kind: auto times nodes with $want" "$out"
	out=$(log_since "$off")
	grep -A1 "plan nodes are timed with $want" <<<"$out" | grep -q "DETAIL:.*$needle"
	t_ok $? "kind $kind: the start-up log says $want, and why (\"$needle\")" "$out"
	src=auto
	out=$(st rdtscp tsc_ordered_read auto_reason effective_source cpu_flags_note 2>&1)
	local ordered=lfence\;rdtsc
	[ "$rdtscp" = true ] && ordered=rdtscp
	grep -qx "rdtscp=$rdtscp" <<<"$out" && grep -qx "tsc_ordered_read=$ordered" <<<"$out" &&
		grep -qx "effective_source=$want" <<<"$out" && grep -q "^auto_reason=.*$needle" <<<"$out"
	t_ok $? "kind $kind: fasttime_status says rdtscp=$rdtscp, ordered read $ordered, auto's reason" "$out"
	for src in tsc try_tsc; do
		out=$(q -c "SET fasttime.clock_source = $src" -c "SHOW fasttime.clock_source_status" 2>&1)
		t_ok $([ "$out" = tsc ] && echo 0 || echo 1) "kind $kind: clock_source = $src times nodes with the TSC" "$out"
		explain_case "kind $kind: $src, serial" no "SET fasttime.clock_source = $src; $serial"
	done
	explain_case "kind $kind: auto, parallel" no "$parallel"
	if [ "$pg_major" -ge 18 ]; then
		out=$(q -c "EXPLAIN (ANALYZE, CLOCK_SOURCE, COSTS OFF) SELECT count(*) FROM ft" 2>&1)
		if [ "$want" = tsc ]; then
			grep -q '^ *Timing Source: tsc (' <<<"$out"
		else
			grep -q "^ *Timing Source: clock_gettime (.*$needle" <<<"$out"
		fi
		t_ok $? "kind $kind: EXPLAIN (ANALYZE, CLOCK_SOURCE) names $want" "$out"
		out=$(q -c "SET fasttime.clock_source = tsc" \
			-c "EXPLAIN (ANALYZE, CLOCK_SOURCE, COSTS OFF) SELECT count(*) FROM ft" 2>&1)
		grep -q '^ *Timing Source: tsc (' <<<"$out"
		t_ok $? "kind $kind: EXPLAIN (ANALYZE, CLOCK_SOURCE) with tsc names the TSC" "$out"
	fi
}
echo "# the decision path under machine kind (a) and kind (b)"
kind_case a machine_a tsc "the kernel clocksource is tsc" true
kind_case b machine_b clock_gettime 'kernel uses clocksource "kvm-clock"' false
kind_case "b + an emulator's CPUID" "machine_b,cpuid_rdtscp" clock_gettime 'kvm-clock' false
out=$(st cpu_flags_note cpuid_rdtscp kernel_rdtscp 2>&1)
grep -qx 'cpuid_rdtscp=true' <<<"$out" && grep -qx 'kernel_rdtscp=false' <<<"$out" &&
	grep -q '^cpu_flags_note=.*CPUID reports RDTSCP but the kernel does not list' <<<"$out"
t_ok $? "kind b + an emulator's CPUID: fasttime_status shows both views and which decided" "$out"

# postgresql.conf asks for tsc on a machine that cannot: refuse to start
off=$(log_size)
echo "fasttime.clock_source = tsc" >>"$dir/data/postgresql.conf"
if pm_restart "machine_a,no_invariant"; then
	t_ok 1 "clock_source = tsc in postgresql.conf without an invariant TSC: start refused"
else
	out=$(log_since "$off")
	grep -q 'FATAL:.*fasttime.clock_source is "tsc" but the TSC cannot be used' <<<"$out" &&
		grep -q 'DETAIL:.*invariant' <<<"$out"
	t_ok $? "clock_source = tsc in postgresql.conf without an invariant TSC: start refused, FATAL says why" "$out"
fi
sed -i '/^fasttime.clock_source = tsc$/d' "$dir/data/postgresql.conf"
pm_restart ""
out=$(q -c "SELECT count(*) FROM ft" 2>&1)
t_ok $([ "$out" = 200000 ] && echo 0 || echo 1) "server starts again without the fault" "$out"
! grep -E 'terminated by signal|PANIC' "$log" >/dev/null
t_ok $? "no backend crashed in the whole run" "$(grep -E 'terminated by signal|PANIC' "$log")"
finish
