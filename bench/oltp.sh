#!/usr/bin/env bash
# bench/oltp.sh -- issue 43: auto_explain on every statement of a busy
# server.  What does it cost the backends, per transaction, to run
# auto_explain with log_analyze on every statement (nested ones included)
# of a small OLTP load, timed stock (clock_gettime) or by fasttime (TSC,
# exact or profiled), against auto_explain loaded without log_analyze?
#
# A throwaway cluster (test/cluster.sh; port FT_OLTP_PORT, jit, autovacuum
# off, fsync off, shared_buffers FT_OLTP_SHARED_BUFFERS) preloads
#     shared_preload_libraries = '<fasttime.so>,auto_explain'
# (an absolute path: a copy of the build under test in
# /tmp/fasttime-oltp-PORT-lib, so nothing is installed into PostgreSQL's
# lib/ and a build replaced elsewhere meanwhile does not matter; the
# README's order, which it says works either way), with
# auto_explain.log_min_duration = 10s (nothing is logged: the cost is the
# instrumentation, not the logging) and log_nested_statements = on.
# pgbench -i -s FT_OLTP_SCALE, then two PL/pgSQL functions:
#     lookups(n, start)  n primary-key lookups on pgbench_accounts
#     updates(n, start)  n single-row UPDATEs of pgbench_accounts by key
# (aids start, start + 7919, ... modulo the table: random pages).
#
# Shapes (one pgbench script each):
#     select   pgbench -S (one PK lookup per transaction)
#     tpcb     pgbench's tpcb-like script (3 updates, an insert, WAL)
#     lookups  SELECT lookups(FT_OLTP_NESTED, random start)
#     updates  SELECT updates(FT_OLTP_NESTED_UPDATES, random start)
# Modes, applied per pgbench run through PGOPTIONS (no restart):
#     off            auto_explain.log_analyze = off (loaded, not instrumenting)
#     stock          log_analyze, log_timing, fasttime.clock_source =
#                    clock_gettime, node_timing = exact: plans instrumented
#                    exactly as stock PostgreSQL does
#     default        log_analyze, log_timing, no fasttime setting: the
#                    shipped defaults
#     exact          log_analyze, log_timing, clock_source = try_tsc, exact
#     profile        log_analyze, log_timing, try_tsc, node_timing = profile
#     notiming       log_analyze, log_timing = off, try_tsc (fasttime's
#                    wrappers, no clock)
#     stocknotiming  log_analyze, log_timing = off, clock_gettime
#     stockbuf, exactbuf, profilebuf
#                    stock, exact, profile with auto_explain.log_buffers = on
# Every mode sets log_analyze, log_timing and log_buffers explicitly; the
# fasttime settings it does not name stay at fasttime's defaults.  The
# report lists what SHOW gives for each mode, fasttime.clock_source_status
# (the clock actually in effect: try_tsc falls back to clock_gettime where
# the TSC is not usable) and, on 19, the server's timing_clock_source.
#
# The judge: the backends' CPU time per transaction.  The host is shared
# (2 cores, other jobs) and tps spreads up to 2x between rounds, but the CPU
# a backend spends on a transaction barely moves with what else runs.
# pgbench's backends are children of the postmaster: when they exit and
# are reaped, their user and system time is added to the postmaster's
# cutime + cstime (fields 16 and 17 of /proc/PID/stat, clock ticks).  Each
# run reads that sum, runs pgbench (its own connections and its first
# check connection only: -n, no vacuum; the write shapes' pgbench_history
# truncate and vacuum of branches/tellers happen before the first read),
# waits until the postmaster has no children but its auxiliary processes
# (counted once at start), and reads it again.  CPU per transaction =
# delta ticks / transactions processed (connection start-up, a few ms per
# run, is included: under 1 % at a few thousand transactions).  Auxiliary
# processes (WAL writer, checkpointer, ...) are not counted: they do not
# exit.  tps is recorded too (pgbench's, without connection time), and
# what the rest of the machine kept busy meanwhile ("others", in CPUs:
# /proc/stat's busy ticks less the backends' and pgbench's CPU; "steal"
# apart).  The judge is not immune to the host: other jobs' cache traffic
# makes a backend spend more CPU per transaction (here up to 3x for
# pgbench -S while others kept 1.5 of the 2 CPUs busy; within 1-3 %
# between modes while they kept ~0).  Read the others column beside the
# numbers, or set FT_OLTP_MAX_OTHERS.
#
# Interleaving: for each round, for each build (A, B alternating which goes
# first), for each shape, protocol and client count, each mode once, in an
# order shuffled per round (seeded): host noise spreads over all modes.
# Ratios are taken within a round (mode / stock, mode / off, B / A) and
# their median and min-max reported.
#
# The mixed method (FT_OLTP_METHOD=mixed).  On this host two runs a minute
# apart can differ by 10-30 % in CPU per transaction with nothing of ours
# running, more than the 1 % the comparison is about, and no number of
# rounds of separate runs brought the spread of the per-round ratios
# under a few %.  So the modes are interleaved per transaction instead:
# one pgbench run holds one script per mode, each beginning with a SELECT
# of set_config() calls that sets all five settings (auto_explain's
# log_analyze, log_timing, log_buffers; fasttime's clock_source,
# node_timing: the same calls in every script, only the values differ;
# "default" and "off" give fasttime's boot values) and then the shape's
# statements (pgbench's own tpcb-like and select-only scripts, written
# out).  pgbench picks a script at random for each transaction, so every
# mode sees the host as it is in the same seconds.  The judge is the
# mean latency of the fastest 90 % of a mode's transactions (pgbench's
# transaction log, -l, µs; trimmed, because the host's stalls put a tail
# of milliseconds on a few transactions, which moves a mean by percents,
# and a median of whole microseconds is too coarse), the set_config
# statement included: with one client each transaction's latency is the
# backend's CPU for it plus the client's and the socket's, which do not
# depend on the mode.  The set_config statement (timed under whichever
# mode the transaction before set) is the same in every mode and dilutes
# the ratios: its mean latency (pgbench -r) is reported beside them, and
# the difference between two modes in us is undiluted.  (Subtracting it
# was tried: its mean carries the host's stalls that the trimmed mean
# leaves out, and with two clients on two busy CPUs it came out larger
# than whole transactions.)  Ratios are taken per round, median and
# min-max over rounds.  What it cannot see: what a mode costs outside its
# transactions, and a cost that only shows when one mode runs alone (a
# cache a mode would keep warm).  With two clients the latency also holds
# the wait for a CPU.  Output: raw.csv (round, shape, protocol, clients,
# mode, build, seconds, xacts, lat_us (trimmed mean), lat_mean_us, setcfg_us,
# net_us = lat_us (the judged column), run_cpu_us (the
# backends' CPU per transaction over the whole mixed run, all modes), tps,
# others_cpus), and the report as for runs, on net_us.
#
# Output, in FT_OLTP_OUT: raw.csv, one line per run (round, shape,
# protocol, clients, mode, build, seconds, xacts, cpu_ticks,
# cpu_us_per_xact, tps, then pos: its place in the round's mode order,
# pgbench_ms: pgbench's own CPU, others_cpus, steal_cpus, kept);
# settings.tsv, what SHOW gave under each mode; report.md (bench/oltp.py:
# the tables, with the header facts: command line, PostgreSQL, machine and
# clocksource, the builds' sha256); run.log, the progress lines.
#
# Knobs (all optional; FT_* pass into .ci/pg-chroot.sh):
#   PG_CONFIG              the PostgreSQL installation (default pg_config)
#   FT_OLTP_SO             absolute (or repository-relative) path of the
#                          fasttime.so to test (FASTTIME_SO also read);
#                          unset: the checkout is built into a temporary
#                          directory with make (never installed)
#   FT_OLTP_SO_B           a second build (FASTTIME_SO_B also read): every
#                          round runs every mode under both, restarting the
#                          server between them; the report adds B/A ratios
#   FT_OLTP_SHAPES         default "select tpcb lookups updates"
#   FT_OLTP_PROTOCOLS      default "simple prepared" (pgbench -M)
#   FT_OLTP_CLIENTS        default "1 2" (pgbench -c N -j N)
#   FT_OLTP_MODES          default "off stock default exact profile notiming
#                          stockbuf exactbuf"
#   FT_OLTP_ROUNDS         default 5
#   FT_OLTP_SECONDS        seconds per pgbench run, default 5
#   FT_OLTP_SCALE          pgbench -i scale, default 10
#   FT_OLTP_NESTED         lookups per lookups() call, default 50
#   FT_OLTP_NESTED_UPDATES updates per updates() call, default FT_OLTP_NESTED
#   FT_OLTP_SEED           seed of the per-round mode order, default 43
#   FT_OLTP_MAX_OTHERS     set (e.g. 0.3): a run during which the rest of
#                          the machine kept more CPUs than this busy is run
#                          again, up to FT_OLTP_RETRIES (default 2) times;
#                          the last attempt is kept either way.  Unset:
#                          every run is kept.  (On this host a run's CPU
#                          per transaction follows the foreign load: other
#                          jobs' cache traffic makes the backend slower
#                          per transaction, up to 3x here.)
#   FT_OLTP_METHOD         "runs" (default): one pgbench run per mode, judged
#                          by the backends' CPU per transaction, as above;
#                          "mixed": one pgbench run per round in which every
#                          mode is a script of its own (-f, equal weights),
#                          so consecutive transactions run in different
#                          modes, judged by the transactions' latency (see
#                          "The mixed method" below)
#   FT_OLTP_PORT           default 5611 (cluster in /tmp/fasttime-oltp-PORT)
#   FT_OLTP_SHARED_BUFFERS default 256MB
#   FT_OLTP_OUT            result directory, default
#                          bench/results/DATE-oltp-pgMAJOR (-2, -3, ... if
#                          taken): raw.csv, report.md, settings.tsv, run.log
#   FT_OLTP_LABEL, FT_OLTP_LABEL_B
#                          what to call the builds in the report (default:
#                          git describe of the checkout for a build made
#                          here, else the .so's path; sha256 always shown)
#
# Examples:
#   bench/oltp.sh                                           # 15 (pg_config)
#   PG_CONFIG=/var/cache/fasttime-ci/pg18/bin/pg_config bench/oltp.sh
#   .ci/pg-chroot.sh 19 bench/oltp.sh                       # 19, in its chroot
#   FT_OLTP_SO=/tmp/old/fasttime.so FT_OLTP_SO_B=/tmp/new/fasttime.so \
#       FT_OLTP_SHAPES=lookups bench/oltp.sh                # two builds
#   FT_OLTP_ROUNDS=2 FT_OLTP_SECONDS=3 FT_OLTP_PROTOCOLS=prepared \
#       FT_OLTP_CLIENTS=1 bench/oltp.sh                     # a short look
# A full default run: 4 shapes x 2 protocols x 2 client counts x 8 modes x
# 5 rounds = 640 runs of 5 s, about an hour (two hours with FT_OLTP_SO_B).
set -u
cmdline="$0${*:+ $*}"
cd "$(dirname "$0")/.." || exit 1
repo=$(pwd)
unset PGOPTIONS

SHAPES=${FT_OLTP_SHAPES:-select tpcb lookups updates}
PROTOCOLS=${FT_OLTP_PROTOCOLS:-simple prepared}
CLIENTS=${FT_OLTP_CLIENTS:-1 2}
MODES=${FT_OLTP_MODES:-off stock default exact profile notiming stockbuf exactbuf}
ROUNDS=${FT_OLTP_ROUNDS:-5}
SECS=${FT_OLTP_SECONDS:-5}
SCALE=${FT_OLTP_SCALE:-10}
NESTED=${FT_OLTP_NESTED:-50}
NESTED_UPD=${FT_OLTP_NESTED_UPDATES:-$NESTED}
SEED=${FT_OLTP_SEED:-43}
PORT=${FT_OLTP_PORT:-5611}
MAX_OTHERS=${FT_OLTP_MAX_OTHERS:-}
RETRIES=${FT_OLTP_RETRIES:-2}
SB=${FT_OLTP_SHARED_BUFFERS:-256MB}
METHOD=${FT_OLTP_METHOD:-runs}
case $METHOD in runs | mixed) ;; *) echo "oltp: FT_OLTP_METHOD must be runs or mixed" >&2; exit 2 ;; esac
SO_A=${FT_OLTP_SO:-${FASTTIME_SO:-}}
SO_B=${FT_OLTP_SO_B:-${FASTTIME_SO_B:-}}

. test/cluster.sh
MAJOR=$("$FT_PG_CONFIG" --version | sed -E 's/^PostgreSQL ([0-9]+).*/\1/')
[ -x "$FT_BINDIR/pgbench" ] || { echo "oltp: no pgbench in $FT_BINDIR" >&2; exit 1; }
[ -f "$("$FT_PG_CONFIG" --pkglibdir)/auto_explain.so" ] ||
	{ echo "oltp: no auto_explain.so in $("$FT_PG_CONFIG" --pkglibdir)" >&2; exit 1; }

for m in $MODES; do
	case $m in
	off | stock | default | exact | profile | notiming | stocknotiming | stockbuf | exactbuf | profilebuf) ;;
	*) echo "oltp: unknown mode $m" >&2; exit 2 ;;
	esac
done
for s in $SHAPES; do
	case $s in select | tpcb | lookups | updates) ;; *) echo "oltp: unknown shape $s" >&2; exit 2 ;; esac
done

OUT=${FT_OLTP_OUT:-bench/results/$(date +%F)-oltp-pg$MAJOR}
if [ -z "${FT_OLTP_OUT:-}" ] && [ -e "$OUT" ]; then
	i=2
	while [ -e "$OUT-$i" ]; do i=$((i + 1)); done
	OUT=$OUT-$i
fi
mkdir -p "$OUT" || exit 1
OUT=$(cd "$OUT" && pwd)
LOG=$OUT/run.log
: >"$LOG"
say() { echo "$*" | tee -a "$LOG" >&2; }

D=/tmp/fasttime-oltp-$PORT
BUILD_TMP=
cleanup() {
	ft_cluster_stop "$D"
	rm -rf "$D" "$D-lib"
	[ -n "$BUILD_TMP" ] && rm -rf "$BUILD_TMP"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM HUP

# --- the build(s) under test ---------------------------------------------
LABEL_A=${FT_OLTP_LABEL:-}
LABEL_B=${FT_OLTP_LABEL_B:-}
if [ -z "$SO_A" ]; then
	BUILD_TMP=$(mktemp -d /tmp/fasttime-oltp-build.XXXXXX)
	say "oltp: building $repo into $BUILD_TMP (PG_CONFIG=$FT_PG_CONFIG)"
	tar -C "$repo" --exclude=./.git --exclude='*.o' --exclude='*.so' --exclude='*.bc' \
		--exclude=./bench/results -cf - . | tar -C "$BUILD_TMP" -xf - || exit 1
	if ! make -C "$BUILD_TMP" -s -j"$(nproc)" PG_CONFIG="$FT_PG_CONFIG" with_llvm=no \
		>"$BUILD_TMP/build.log" 2>&1; then
		cat "$BUILD_TMP/build.log" >&2
		exit 1
	fi
	SO_A=$BUILD_TMP/fasttime.so
	if [ -z "$LABEL_A" ]; then
		LABEL_A="checkout $(git -C "$repo" describe --always --dirty 2>/dev/null || echo "(git describe unavailable)") built here"
	fi
fi
resolve_so() {
	case $1 in /*) echo "$1" ;; *) echo "$repo/$1" ;; esac
}
SO_A=$(resolve_so "$SO_A")
[ -f "$SO_A" ] || { echo "oltp: no such file: $SO_A" >&2; exit 1; }
[ -n "$LABEL_A" ] || LABEL_A=$SO_A
BUILDS=A
if [ -n "$SO_B" ]; then
	SO_B=$(resolve_so "$SO_B")
	[ -f "$SO_B" ] || { echo "oltp: no such file: $SO_B" >&2; exit 1; }
	[ -n "$LABEL_B" ] || LABEL_B=$SO_B
	BUILDS="A B"
fi

# --- the cluster ----------------------------------------------------------
# the builds, copied where the server's user can read them
SODIR=$D-lib
rm -rf "$SODIR"
mkdir -p "$SODIR" && chmod 755 "$SODIR" || exit 1
for b in $BUILDS; do
	if [ "$b" = A ]; then src=$SO_A; else src=$SO_B; fi
	cp "$src" "$SODIR/fasttime-$b.so" && chmod 755 "$SODIR/fasttime-$b.so" || exit 1
done
preload() { echo "shared_preload_libraries = '$SODIR/fasttime-$1.so,auto_explain'"; }
say "oltp: cluster in $D, port $PORT, PostgreSQL $MAJOR"
ft_cluster_start "$D" "$PORT" "jit = off" "autovacuum = off" "shared_buffers = '$SB'" \
	"max_parallel_workers_per_gather = 0" "log_min_messages = warning" \
	"auto_explain.log_min_duration = '10s'" "auto_explain.log_nested_statements = on" \
	"$(preload A)" || exit 1
CUR=A
PM=$(head -n 1 "$D/data/postmaster.pid")
# the server on build B (A), restarted; shared_buffers warmed with every
# page of the tables and indexes, by index (a sequential scan of a table
# over a quarter of shared_buffers goes through a small ring); then the
# postmaster's children settle to its auxiliary processes
use_build() {
	local b=$1
	if [ "$CUR" != "$b" ]; then
		ft_as_owner "$FT_BINDIR/pg_ctl" -D "$D/data" -m fast -w stop >/dev/null || return 1
		sed -i '/^shared_preload_libraries/d' "$D/data/postgresql.conf"
		preload "$b" >>"$D/data/postgresql.conf"
		ft_as_owner "$FT_BINDIR/pg_ctl" -D "$D/data" -l "$D/server.log" -w -t 60 start >/dev/null ||
			{ tail -n 20 "$D/server.log" >&2; return 1; }
		CUR=$b
		PM=$(head -n 1 "$D/data/postmaster.pid")
		WARM=
	fi
	[ -n "${WARM:-}" ] && return 0
	q -c "SET enable_seqscan = off" -c "SET enable_bitmapscan = off" \
		-c "SELECT sum(abalance) FROM pgbench_accounts WHERE aid > 0" \
		-c "SELECT sum(bbalance) FROM pgbench_branches WHERE bid > 0" \
		-c "SELECT sum(tbalance) FROM pgbench_tellers WHERE tid > 0" >/dev/null || return 1
	WARM=1
	sleep 1
	AUX=$(nchildren)
}
q() { PGOPTIONS='' ft_psql "$D" "$PORT" -q -At "$@"; }
nchildren() {
	local f=/proc/$PM/task/$PM/children kids
	if [ -r "$f" ]; then
		read -r -a kids <"$f"
		echo "${#kids[@]}"
	else
		# no CONFIG_PROC_CHILDREN: scan for the parent pid (field 4)
		awk -v pm="$PM" '{ sub(/^.*\) /, ""); if ($2 == pm) n++ } END { print n + 0 }' \
			/proc/[0-9]*/stat 2>/dev/null
	fi
}
# the reaped children's CPU time, in clock ticks
child_ticks() {
	local s f
	s=$(<"/proc/$PM/stat")
	s=${s##*) }
	read -r -a f <<<"$s"
	# f[0] is field 3: cutime (16) and cstime (17)
	echo $((f[13] + f[14]))
}
# this shell's reaped children's CPU (pgbench's), in ms: the builtin
# times, run in this shell (in a subshell it would see none), whose second
# line is the children's user and system time, to the millisecond
ms_of() { # 1m2.345s: sets REPLY to the milliseconds
	local v=${1%s} sec
	sec=${v#*m}
	REPLY=$(((${v%%m*} * 60 + 10#${sec%.*}) * 1000 + 10#${sec#*.}))
}
my_ms() { # sets MY_MS
	local cu cs c
	times >"$D/times"
	{ read -r _; read -r cu cs; } <"$D/times"
	ms_of "$cu"
	c=$REPLY
	ms_of "$cs"
	MY_MS=$((c + REPLY))
}
# the whole machine's busy ticks (/proc/stat: user, nice, system, irq,
# softirq) and, apart, the hypervisor's steal
host_ticks() {
	local u n sy irq sirq steal
	# cpu user nice system idle iowait irq softirq steal ...
	read -r _ u n sy _ _ irq sirq steal _ </proc/stat
	echo "$((u + n + sy + irq + sirq)) $steal"
}
wait_idle() {
	local i
	for i in $(seq 1 600); do
		[ "$(nchildren)" -le "$AUX" ] && return 0
		sleep 0.05
	done
	say "oltp: WARNING: postmaster still has $(nchildren) children (auxiliary: $AUX) after 30 s"
	return 1
}

owner=$(ft_owner_name)
say "oltp: pgbench -i -s $SCALE"
PGOPTIONS='' "$FT_BINDIR/pgbench" -i -q -s "$SCALE" -h "$D" -p "$PORT" -U "$owner" postgres \
	>"$D/init.log" 2>&1 || { cat "$D/init.log" >&2; exit 1; }
NACC=$((100000 * SCALE))
q -c "VACUUM ANALYZE" -c "CHECKPOINT" \
	-c "CREATE FUNCTION lookups(n int, start int) RETURNS bigint LANGUAGE plpgsql AS \$\$
DECLARE x int; s bigint := 0;
BEGIN
	FOR i IN 0 .. n - 1 LOOP
		SELECT abalance INTO x FROM pgbench_accounts WHERE aid = 1 + (start + i * 7919) % $NACC;
		s := s + x;
	END LOOP;
	RETURN s;
END \$\$" \
	-c "CREATE FUNCTION updates(n int, start int) RETURNS void LANGUAGE plpgsql AS \$\$
BEGIN
	FOR i IN 0 .. n - 1 LOOP
		UPDATE pgbench_accounts SET abalance = abalance + 1 WHERE aid = 1 + (start + i * 7919) % $NACC;
	END LOOP;
END \$\$" >/dev/null || exit 1
printf '\\set aid random(1, %d)\nSELECT lookups(%d, :aid);\n' "$NACC" "$NESTED" >"$D/lookups.sql"
printf '\\set aid random(1, %d)\nSELECT updates(%d, :aid);\n' "$NACC" "$NESTED_UPD" >"$D/updates.sql"
use_build A || exit 1

mode_opts() {
	local on="-c auto_explain.log_analyze=on" t="-c auto_explain.log_timing=on"
	local nt="-c auto_explain.log_timing=off" nb="-c auto_explain.log_buffers=off"
	local bf="-c auto_explain.log_buffers=on"
	local st="-c fasttime.clock_source=clock_gettime -c fasttime.node_timing=exact"
	local ex="-c fasttime.clock_source=try_tsc -c fasttime.node_timing=exact"
	local pr="-c fasttime.clock_source=try_tsc -c fasttime.node_timing=profile"
	case $1 in
	off) echo "-c auto_explain.log_analyze=off $t $nb" ;;
	stock) echo "$on $t $nb $st" ;;
	default) echo "$on $t $nb" ;;
	exact) echo "$on $t $nb $ex" ;;
	profile) echo "$on $t $nb $pr" ;;
	notiming) echo "$on $nt $nb $ex" ;;
	stocknotiming) echo "$on $nt $nb $st" ;;
	stockbuf) echo "$on $t $bf $st" ;;
	exactbuf) echo "$on $t $bf $ex" ;;
	profilebuf) echo "$on $t $bf $pr" ;;
	esac
}
# the mixed method: a mode as one SELECT of set_config() calls, the same
# five in every mode; "off" and "default" give fasttime's boot values
mode_sql() {
	local a=on t=on b=off cs=$BOOT_CS nt=$BOOT_NT
	case $1 in
	off) a=off ;;
	stock) cs=clock_gettime nt=exact ;;
	default) ;;
	exact) cs=try_tsc nt=exact ;;
	profile) cs=try_tsc nt=profile ;;
	notiming) t=off cs=try_tsc nt=exact ;;
	stocknotiming) t=off cs=clock_gettime nt=exact ;;
	stockbuf) b=on cs=clock_gettime nt=exact ;;
	exactbuf) b=on cs=try_tsc nt=exact ;;
	profilebuf) b=on cs=try_tsc nt=profile ;;
	esac
	echo "SELECT set_config('auto_explain.log_analyze', '$a', false), set_config('auto_explain.log_timing', '$t', false), set_config('auto_explain.log_buffers', '$b', false), set_config('fasttime.clock_source', '$cs', false), set_config('fasttime.node_timing', '$nt', false);"
}
# the mixed method: a shape's statements (pgbench's builtin scripts
# written out, with the scale's numbers in place of :scale)
shape_sql() {
	case $1 in
	select)
		printf '\\set aid random(1, %d)\nSELECT abalance FROM pgbench_accounts WHERE aid = :aid;\n' "$NACC"
		;;
	tpcb)
		printf '\\set aid random(1, %d)\n\\set bid random(1, %d)\n\\set tid random(1, %d)\n\\set delta random(-5000, 5000)\n' \
			"$NACC" "$SCALE" "$((10 * SCALE))"
		printf '%s\n' "BEGIN;" \
			"UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;" \
			"SELECT abalance FROM pgbench_accounts WHERE aid = :aid;" \
			"UPDATE pgbench_tellers SET tbalance = tbalance + :delta WHERE tid = :tid;" \
			"UPDATE pgbench_branches SET bbalance = bbalance + :delta WHERE bid = :bid;" \
			"INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (:tid, :bid, :aid, :delta, CURRENT_TIMESTAMP);" \
			"END;"
		;;
	lookups) cat "$D/lookups.sql" ;;
	updates) cat "$D/updates.sql" ;;
	esac
}
BOOT_CS=$(q -c "SELECT boot_val FROM pg_settings WHERE name = 'fasttime.clock_source'")
BOOT_NT=$(q -c "SELECT boot_val FROM pg_settings WHERE name = 'fasttime.node_timing'")
[ -n "$BOOT_CS" ] && [ -n "$BOOT_NT" ] || { echo "oltp: fasttime's settings not found" >&2; exit 1; }
shape_args() {
	case $1 in
	select) echo "-S" ;;
	tpcb) echo "" ;;
	lookups) echo "-f $D/lookups.sql" ;;
	updates) echo "-f $D/updates.sql" ;;
	esac
}

# --- facts for the report (psql here, never during a run) -----------------
settings_of() { # build
	local m guc v
	for m in $MODES; do
		for guc in auto_explain.log_analyze auto_explain.log_timing auto_explain.log_buffers \
			fasttime.clock_source fasttime.node_timing fasttime.clock_source_status; do
			v=$(PGOPTIONS=$(mode_opts "$m") ft_psql "$D" "$PORT" -q -At -c "SHOW $guc" 2>&1 | tr '\n' ' ')
			printf '%s\t%s\t%s\t%s\n' "$1" "$m" "$guc" "${v% }"
		done
	done
	if [ "$MAJOR" -ge 19 ]; then
		printf '%s\t%s\t%s\t%s\n' "$1" "(server)" timing_clock_source "$(q -c 'SHOW timing_clock_source' 2>&1)"
	fi
}
{
	printf 'build\tmode\tsetting\tvalue\n'
	settings_of A
} >"$OUT/settings.tsv"
server_version=$(q -c "SHOW server_version")
so_facts() { # label path
	echo "- build $1: $2 ($3), sha256 $(sha256sum "$4" | cut -c1-16)..."
}
{
	echo "# OLTP under auto_explain (bench/oltp.sh, issue 43)"
	echo
	echo "- started $(date -u '+%F %T') UTC; command: \`$(for v in $(compgen -e | grep -E '^(PG_CONFIG|FT_OLTP_|FASTTIME_SO)' | sort); do printf '%s=%q ' "$v" "${!v}"; done)$cmdline\`"
	echo "- PostgreSQL $server_version ($FT_PG_CONFIG)"
	echo "- machine: $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), $(nproc) CPUs, kernel $(uname -r), clocksource $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource 2>/dev/null || echo '?')"
	so_facts A "$LABEL_A" "$SO_A" "$SODIR/fasttime-A.so"
	[ -n "$SO_B" ] && so_facts B "$LABEL_B" "$SO_B" "$SODIR/fasttime-B.so"
	echo "- shared_preload_libraries = '<build>,auto_explain'; auto_explain.log_min_duration = 10s, log_nested_statements = on; jit, autovacuum, fsync off; shared_buffers $SB"
	echo "- pgbench -i -s $SCALE; lookups($NESTED), updates($NESTED_UPD); shapes: $SHAPES; protocols: $PROTOCOLS; clients: $CLIENTS"
	if [ "$METHOD" = mixed ]; then
		echo "- method: mixed (every mode a script of one pgbench run per round, picked at random per transaction); $ROUNDS rounds x $SECS s; modes: $MODES"
	else
		echo "- $ROUNDS rounds x $SECS s per run; modes: $MODES (order shuffled per round, seed $SEED)"
	fi
	[ -n "$MAX_OTHERS" ] && echo "- a run is repeated (up to $RETRIES times) while the rest of the machine keeps more than $MAX_OTHERS CPUs busy"
} >"$OUT/header.md"

# --- the runs -------------------------------------------------------------
RAW=$OUT/raw.csv
if [ "$METHOD" = mixed ]; then
	echo "round,shape,protocol,clients,mode,build,seconds,xacts,lat_us,lat_mean_us,setcfg_us,net_us,run_cpu_us,tps,others_cpus" >"$RAW"
else
	echo "round,shape,protocol,clients,mode,build,seconds,xacts,cpu_ticks,cpu_us_per_xact,tps,pos,pgbench_ms,others_cpus,steal_cpus,kept" >"$RAW"
fi
TCK=$(getconf CLK_TCK)
RANDOM=$SEED
read -r -a modes_arr <<<"$MODES"

# one run, or with FT_OLTP_MAX_OTHERS up to FT_OLTP_RETRIES more while the
# rest of the machine kept more CPUs busy than that (every attempt is in
# raw.csv; kept = 0 marks those set aside)
run_one() { # round shape protocol clients mode build pos
	local a
	for ((a = 0; ; a++)); do
		measure_one "$@"
		if [ -z "$MAX_OTHERS" ] || [ "$a" -ge "$RETRIES" ] ||
			awk -v o="$OTHERS" -v x="$MAX_OTHERS" 'BEGIN { exit !(o <= x) }'; then
			echo "$ROW,1" >>"$RAW"
			return
		fi
		echo "$ROW,0" >>"$RAW"
		say "oltp: others used $OTHERS CPUs (over $MAX_OTHERS): that run again"
	done
}
measure_one() { # round shape protocol clients mode build pos: sets ROW, OTHERS
	local r=$1 shape=$2 proto=$3 c=$4 m=$5 b=$6 pos=$7 t0 t1 out rc xacts tps us ticks
	local h0 h1 st0 st1 p0 p1 w0 w1 others steal
	case $shape in
	tpcb | updates)
		q -c "VACUUM pgbench_branches" -c "VACUUM pgbench_tellers" -c "TRUNCATE pgbench_history" >/dev/null
		;;
	esac
	wait_idle
	read -r h0 st0 <<<"$(host_ticks)"
	w0=$EPOCHREALTIME
	my_ms
	p0=$MY_MS
	t0=$(child_ticks)
	out=$D/pgbench.out
	# shellcheck disable=SC2046 # shape_args is words
	PGOPTIONS=$(mode_opts "$m") "$FT_BINDIR/pgbench" -n -M "$proto" -c "$c" -j "$c" -T "$SECS" \
		$(shape_args "$shape") -h "$D" -p "$PORT" -U "$owner" postgres >"$out" 2>&1
	rc=$?
	wait_idle
	t1=$(child_ticks)
	my_ms
	p1=$MY_MS
	w1=$EPOCHREALTIME
	read -r h1 st1 <<<"$(host_ticks)"
	ticks=$((t1 - t0))
	# what the rest of the machine used meanwhile (the wait for the
	# backends' exit included), in CPUs, and the hypervisor's steal
	others=$(awk -v h=$((h1 - h0)) -v t="$ticks" -v p=$((p1 - p0)) -v s="$w0" -v e="$w1" -v k="$TCK" \
		'BEGIN { printf "%.2f", (h - t - p * k / 1000) / k / (e - s) }')
	steal=$(awk -v x=$((st1 - st0)) -v s="$w0" -v e="$w1" -v k="$TCK" 'BEGIN { printf "%.2f", x / k / (e - s) }')
	xacts=$(sed -nE 's/^number of transactions actually processed: ([0-9]+).*/\1/p' "$out")
	tps=$(sed -nE 's/^tps = ([0-9.]+).*/\1/p' "$out" | head -n 1)
	if [ "$rc" != 0 ] || [ -z "$xacts" ] || [ "$xacts" = 0 ]; then
		say "oltp: WARNING: round $r $shape $proto c$c $m $b: pgbench failed (status $rc):"
		tail -n 5 "$out" | tee -a "$LOG" >&2
		xacts=0 us='' tps=${tps:-}
	else
		us=$(awk -v t="$ticks" -v h="$TCK" -v n="$xacts" 'BEGIN { printf "%.2f", t * 1e6 / h / n }')
		grep -E '^number of failed transactions: [1-9]' "$out" | sed "s/^/oltp: round $r $shape $proto c$c $m $b: /" | tee -a "$LOG" >&2
	fi
	ROW="$r,$shape,$proto,$c,$m,$b,$SECS,$xacts,$ticks,$us,$tps,$pos,$((p1 - p0)),$others,$steal"
	OTHERS=$others
	printf 'oltp: round %s %-7s %-8s c%s %-13s %s %8s xacts %8s us/xact %8.0f tps, others %s CPUs\n' \
		"$r" "$shape" "$proto" "$c" "$m" "$b" "$xacts" "$us" "${tps:-0}" "$others" | tee -a "$LOG" >&2
}

# the mixed method: one pgbench run with a script per mode (see the
# header); appends a line per mode to raw.csv
run_mixed() { # round shape protocol clients build
	local r=$1 shape=$2 proto=$3 c=$4 b=$5 m fargs=() out rc t0 t1 h0 h1 st0 st1 w0 w1 p0 p1
	for m in "${modes_arr[@]}"; do
		{ mode_sql "$m"; shape_sql "$shape"; } >"$D/mix-$m.sql"
		fargs+=(-f "$D/mix-$m.sql@1")
	done
	case $shape in
	tpcb | updates)
		q -c "VACUUM pgbench_branches" -c "VACUUM pgbench_tellers" -c "TRUNCATE pgbench_history" >/dev/null
		;;
	esac
	rm -f "$D"/mixlog*
	wait_idle
	read -r h0 st0 <<<"$(host_ticks)"
	w0=$EPOCHREALTIME
	my_ms
	p0=$MY_MS
	t0=$(child_ticks)
	out=$D/pgbench.out
	(cd "$D" && "$FT_BINDIR/pgbench" -n -M "$proto" -c "$c" -j "$c" -T "$SECS" -r -l \
		--log-prefix="$D/mixlog" "${fargs[@]}" -h "$D" -p "$PORT" -U "$owner" postgres) >"$out" 2>&1
	rc=$?
	wait_idle
	t1=$(child_ticks)
	my_ms
	p1=$MY_MS
	w1=$EPOCHREALTIME
	read -r h1 st1 <<<"$(host_ticks)"
	if [ "$rc" != 0 ]; then
		say "oltp: WARNING: round $r $shape $proto c$c $b (mixed): pgbench failed (status $rc):"
		tail -n 5 "$out" | tee -a "$LOG" >&2
		return
	fi
	python3 - "$out" "$r" "$shape" "$proto" "$c" "$b" "$SECS" "$((t1 - t0))" "$TCK" \
		"$(awk -v h=$((h1 - h0)) -v t=$((t1 - t0)) -v p=$((p1 - p0)) -v s="$w0" -v e="$w1" -v k="$TCK" \
			'BEGIN { printf "%.2f", (h - t - p * k / 1000) / k / (e - s) }')" \
		"${modes_arr[@]}" "$D"/mixlog* <<'PY' | tee -a "$RAW" | sed 's/^/oltp: mixed /' | tee -a "$LOG" >&2
import re, sys
out, r, shape, proto, c, b, secs, ticks, tck, others = sys.argv[1:11]
rest = sys.argv[11:]
logs = [a for a in rest if "/mixlog" in a]
modes = [a for a in rest if "/mixlog" not in a]
lat = {i: [] for i in range(len(modes))}
for path in logs:
    for line in open(path):
        f = line.split()
        # client transaction time script epoch us [lag] [retries]
        if len(f) >= 6 and f[2].isdigit():
            lat[int(f[3])].append(int(f[2]))
n = {i: len(v) for i, v in lat.items()}
# pgbench -r: per script, the statement latencies in ms (means); the
# set_config statement's, weighted by the script's transactions
text = open(out).read()
setcfg, tot = 0.0, 0
for sec in re.split(r"\nSQL script \d+: ", text)[1:]:
    mx = re.search(r"- (\d+) transactions", sec)
    ms = re.search(r"^\s+([0-9.]+)\s+(?:\d+\s+)*SELECT set_config", sec, re.M)
    if mx and ms:
        setcfg += float(ms.group(1)) * 1000 * int(mx.group(1))
        tot += int(mx.group(1))
setcfg = setcfg / tot if tot else float("nan")
xall = sum(n.values())
tps = re.search(r"^tps = ([0-9.]+)", text, re.M)
run_cpu = int(ticks) * 1e6 / int(tck) / xall if xall else float("nan")
for i, m in enumerate(modes):
    if n[i] == 0:
        continue
    v = sorted(lat[i])
    # the mean of the fastest 90 % (a median of whole microseconds is too
    # coarse for a statement of 40 us)
    k = max(1, (n[i] * 9) // 10)
    med = sum(v[:k]) / k
    mean = sum(v) / n[i]
    print(f"{r},{shape},{proto},{c},{m},{b},{secs},{n[i]},{med:.1f},{mean:.2f},{setcfg:.2f},"
          f"{med:.2f},{run_cpu:.2f},{float(tps.group(1)) if tps else 0:.1f},{others}")
PY
}

n_runs=0
for _ in $SHAPES; do for _ in $PROTOCOLS; do for _ in $CLIENTS; do n_runs=$((n_runs + ${#modes_arr[@]})); done; done; done
n_builds=$(wc -w <<<"$BUILDS")
if [ "$METHOD" = mixed ]; then
	n_runs=$((n_runs / ${#modes_arr[@]}))
	say "oltp: mixed: $((ROUNDS * n_builds * n_runs)) runs of $SECS s, each with all $((${#modes_arr[@]})) modes (about $((ROUNDS * n_builds * n_runs * (SECS + 2) / 60 + 1)) min); results in $OUT"
else
say "oltp: $((ROUNDS * n_builds * n_runs)) runs of $SECS s (about $((ROUNDS * n_builds * n_runs * (SECS + 1) / 60 + 1)) min); results in $OUT"
fi
begin=$(date +%s)
for r in $(seq 1 "$ROUNDS"); do
	if [ $((r % 2)) = 1 ]; then order=$BUILDS; else order=$(echo "$BUILDS" | awk '{ for (i = NF; i > 0; i--) printf "%s ", $i }'); fi
	for b in $order; do
		use_build "$b" || exit 1
		[ "$r" = 1 ] && [ "$b" = B ] && settings_of B >>"$OUT/settings.tsv"
		for shape in $SHAPES; do
			for proto in $PROTOCOLS; do
				for c in $CLIENTS; do
					if [ "$METHOD" = mixed ]; then
						run_mixed "$r" "$shape" "$proto" "$c" "$b"
						continue
					fi
					# this round's order of the modes: Fisher-Yates
					local_modes=("${modes_arr[@]}")
					for ((i = ${#local_modes[@]} - 1; i > 0; i--)); do
						j=$((RANDOM % (i + 1)))
						t=${local_modes[i]}
						local_modes[i]=${local_modes[j]}
						local_modes[j]=$t
					done
					pos=0
					for m in "${local_modes[@]}"; do
						pos=$((pos + 1))
						run_one "$r" "$shape" "$proto" "$c" "$m" "$b" "$pos"
					done
				done
			done
		done
	done
done
say "oltp: runs took $(($(date +%s) - begin)) s"

python3 bench/oltp.py "$RAW" "$OUT/settings.tsv" "$OUT/header.md" >"$OUT/report.md" || exit 1
rm -f "$OUT/header.md"
cat "$OUT/report.md"
