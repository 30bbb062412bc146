#!/usr/bin/env bash
# Throwaway PostgreSQL clusters for fasttime's tests and benchmarks.
#
# Source this file, then:
#   ft_cluster_start DIR PORT [extra postgresql.conf lines...]
#   ft_psql DIR PORT [psql args...]
#   ft_cluster_stop DIR
# initdb and postgres refuse to run as root, so when we are root the
# cluster is owned by, and run as, an unprivileged user (FT_TEST_USER,
# default "postgres", created if missing).  Clients connect over a Unix
# socket in DIR as the cluster's superuser.
# PG_CONFIG selects the PostgreSQL installation (default: pg_config).

FT_PG_CONFIG=${PG_CONFIG:-pg_config}
FT_BINDIR=$("$FT_PG_CONFIG" --bindir)
FT_TEST_USER=${FT_TEST_USER:-postgres}

ft_as_owner() {
	if [ "$(id -u)" = 0 ]; then
		runuser -u "$FT_TEST_USER" -- "$@"
	else
		"$@"
	fi
}

ft_owner_name() {
	if [ "$(id -u)" = 0 ]; then echo "$FT_TEST_USER"; else id -un; fi
}

ft_cluster_start() {
	local dir=$1 port=$2
	shift 2
	if [ "$(id -u)" = 0 ] && ! id "$FT_TEST_USER" >/dev/null 2>&1; then
		useradd --system --create-home "$FT_TEST_USER"
	fi
	rm -rf "$dir"
	mkdir -p "$dir"
	[ "$(id -u)" = 0 ] && chown "$FT_TEST_USER" "$dir"
	ft_as_owner "$FT_BINDIR/initdb" -D "$dir/data" -A trust -U "$(ft_owner_name)" \
		--no-sync >"$dir/initdb.log" 2>&1 || { cat "$dir/initdb.log"; return 1; }
	{
		echo "port = $port"
		echo "listen_addresses = ''"
		echo "unix_socket_directories = '$dir'"
		echo "shared_preload_libraries = 'fasttime'"
		echo "fsync = off"
		echo "max_worker_processes = 8"
		echo "max_parallel_workers = 8"
		for line in "$@"; do echo "$line"; done
	} >>"$dir/data/postgresql.conf"
	ft_as_owner "$FT_BINDIR/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 start \
		>/dev/null || { cat "$dir/server.log"; return 1; }
}

ft_cluster_stop() {
	local dir=$1
	[ -d "$dir/data" ] || return 0
	ft_as_owner "$FT_BINDIR/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null 2>&1 || true
}

ft_psql() {
	local dir=$1 port=$2
	shift 2
	"$FT_BINDIR/psql" -X -h "$dir" -p "$port" -U "$(ft_owner_name)" -d postgres \
		-v ON_ERROR_STOP=1 "$@"
}

# A witness of the machine's own TSC jumps, outside the server
# (test/tsc_watch.c; why: see there).  Once per stage:
#   ft_tsc_watch_start DIR   build and start it, logging to DIR/tsc_watch.log
#                            (exported as FT_TSC_WATCH_LOG for TAP tests);
#                            it ends with the script that started it ($$)
# then around each check that wants no clock WARNING:
#   mark=$(ft_tsc_mark)                before the statements
#   why=$(ft_tsc_explained "$mark" <<<"$stderr_or_log")
#       status 0 when every WARNING in the text is fasttime's "the TSC
#       disagreed" and matches jumps witnessed since the mark; $why says so
ft_tsc_watch_start() {
	local dir=$1 here i
	here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
	FT_TSC_WATCH_LOG=$dir/tsc_watch.log
	export FT_TSC_WATCH_LOG
	: >"$FT_TSC_WATCH_LOG"
	if ! ${CC:-cc} -O2 -o "$dir/tsc_watch" "$here/tsc_watch.c" >"$dir/tsc_watch.build" 2>&1; then
		echo "unsupported (does not build: $(head -c 300 "$dir/tsc_watch.build"))" >>"$FT_TSC_WATCH_LOG"
		return 0
	fi
	"$dir/tsc_watch" "$FT_TSC_WATCH_LOG" $$ </dev/null >/dev/null 2>&1 &
	for i in $(seq 1 50); do
		grep -qE '^(ready|unsupported)' "$FT_TSC_WATCH_LOG" && break
		sleep 0.1
	done
	echo "# TSC witness: $(head -n 1 "$FT_TSC_WATCH_LOG")"
}

ft_tsc_mark() {
	stat -c %s "${FT_TSC_WATCH_LOG:-/nonexistent}" 2>/dev/null || echo 0
}

ft_tsc_explained() {
	python3 "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/tsc_explained.py" \
		"${FT_TSC_WATCH_LOG:-/nonexistent}" "$1"
}
