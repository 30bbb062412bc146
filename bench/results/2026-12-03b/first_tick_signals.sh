#!/usr/bin/env bash
# Timer signals and setitimer calls a backend takes in 2 s of pgbench -S
# (1 client, prepared) under auto_explain with log_analyze and profiled
# timing, counted by strace -c; for each build in turn (see first_tick.sh).
#   first_tick_signals.sh BINDIR PORT DATADIR OLD.so NEW.so
set -u
B=$1 P=$2 D=$3 OLD=$4 NEW=$5
lib=/usr/lib/postgresql/15/lib
o="-c session_preload_libraries=auto_explain -c auto_explain.log_min_duration=100s -c auto_explain.log_analyze=on -c fasttime.clock_source=try_tsc -c fasttime.node_timing=profile"
for build in old new old new; do
	# never overwrite a library a running server has loaded
	su postgres -c "$B/pg_ctl -D $D -w stop" >/dev/null
	if [ $build = old ]; then cp "$OLD" "$lib/fasttime.so"; else cp "$NEW" "$lib/fasttime.so"; fi
	su postgres -c "$B/pg_ctl -D $D -w start -l $D/../log" >/dev/null
	(PGOPTIONS="$o" "$B/pgbench" -h /tmp -p "$P" -U postgres -S -T 4 -c 1 -M prepared postgres >/dev/null 2>&1 &)
	sleep 1
	pid=$(pgrep -f "postgres: postgres postgres \[local\]" | head -n 1)
	out=$(timeout 2 strace -c -p "$pid" 2>&1)
	q=$(echo "$out" | awk '$NF == "recvfrom" {print $4}')
	s=$(echo "$out" | awk '$NF == "rt_sigreturn" {print $4}')
	t=$(echo "$out" | awk '$NF == "setitimer" {print $4}')
	echo "build $build queries ${q:-0} signals ${s:-0} setitimer ${t:-0}"
	sleep 2
done
