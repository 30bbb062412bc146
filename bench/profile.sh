#!/usr/bin/env bash
# bench/profile.sh DIR PORT OUTDIR [WORKLOAD] [VARIANTS...]
# Where the time goes: perf record -g on the backend running a workload
# (default W1) under each variant (default V2 V3 V4), a few runs each, in a
# cluster bench/clock_cost.sh or bench/matrix.sh has set up (their --profile
# calls this).  Writes OUTDIR/perf-W-V.txt:
# the hottest symbols, self time, and the call chains into them.
# Hardware events are often missing in VMs, so this samples cpu-clock.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=$1 port=$2 out=$3
w=${4:-W1}
shift $(($# < 4 ? $# : 4))
variants=("$@")
[ ${#variants[@]} -gt 0 ] || variants=(V2 V3 V4)
. test/cluster.sh
command -v perf >/dev/null || { echo "profile: perf is not installed" >&2; exit 1; }

runs=5
for v in "${variants[@]}"; do
	# the backend announces its pid, then waits for perf to attach
	fifo=$(mktemp -u /tmp/fasttime-profile.XXXXXX)
	mkfifo "$fifo"
	{
		echo "SELECT pg_backend_pid();"
		read -r _ <"$fifo"
		for ((i = 0; i < runs; i++)); do
			echo "SELECT bench_measure('$w', '$v', 1000 + $i, 'profile') \\g /dev/null"
		done
	} | ft_psql "$dir" "$port" -At >"$out/profile-pid.txt" &
	client=$!
	for _ in $(seq 100); do
		[ -s "$out/profile-pid.txt" ] && break
		sleep 0.1
	done
	pid=$(head -1 "$out/profile-pid.txt")
	f=$w-${v//\//-}
	perf record -q -e cpu-clock -g -p "$pid" -o "$out/perf-$f.data" 2>/dev/null &
	perfpid=$!
	sleep 1
	echo go >"$fifo"
	wait "$client"
	kill -INT "$perfpid"
	wait "$perfpid" || true
	rm -f "$fifo" "$out/profile-pid.txt"
	{
		echo "# perf, cpu-clock, backend running $w under $v ($runs runs)"
		ft_psql "$dir" "$port" -At -c "
			SELECT 'median ' || round(percentile_cont(0.5) WITHIN GROUP (ORDER BY ms)::numeric, 1) || ' ms'
			FROM bench_results WHERE workload = '$w' AND variant = '$v' AND phase = 'profile'"
		echo
		echo "## self time"
		perf report -i "$out/perf-$f.data" --stdio --no-children --sort symbol \
			-g none --percent-limit 1 2>/dev/null | grep -v '^#' | sed '/^$/d'
		echo
		echo "## call chains (caller view) into the top symbols"
		perf report -i "$out/perf-$f.data" --stdio --no-children --sort symbol \
			-g caller,0.5,callee --percent-limit 5 2>/dev/null | grep -v '^#' | sed '/^$/d' | head -120
		# inside fasttime's hottest wrapper, instruction by instruction
		sym=$(perf report -i "$out/perf-$f.data" --stdio --no-children --sort symbol -g none 2>/dev/null |
			grep -o 'ft_[a-z0-9_]*' | head -1 || true)
		if [ -n "$sym" ]; then
			echo
			echo "## $sym, annotated (instructions with >= 0.5 % of its samples)"
			perf annotate -i "$out/perf-$f.data" --stdio -s "$sym" 2>/dev/null |
				awk -F: '$1 + 0 >= 0.5 || /Percent/ || /rdtsc/' | head -60
		fi
	} >"$out/perf-$f.txt"
	echo "profile: $out/perf-$f.txt" >&2
done
