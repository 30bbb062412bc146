#!/usr/bin/env bash
# The profiled prefix's first tick (2026-12-03b): short queries back to back
# under auto_explain (log_analyze), two builds of fasttime alternately.
#   first_tick.sh BINDIR PORT DATADIR OLD.so NEW.so ROUNDS
# A server on PORT (data in DATADIR, run by user postgres, fasttime in
# shared_preload_libraries, pgbench tables at scale 5 and the function
# tiny() of this script) is restarted with each build in turn; each round
# runs, for each build, pgbench -S (1 client, 5 s, prepared) and a
# PL/pgSQL loop of 50,000 single-row index lookups, under auto_explain
# with log_analyze (log_min_duration 100 s: nothing logged) and
# log_nested_statements, with exact timing and with profiled timing
# (clock_source = try_tsc).  Prints one line per measurement.
set -u
B=$1 P=$2 D=$3 OLD=$4 NEW=$5 R=$6
lib=$("$B/pg_config" --pkglibdir 2>/dev/null || echo /usr/lib/postgresql/15/lib)
psql() { "$B/psql" -X -q -At -h /tmp -p "$P" -U postgres postgres "$@"; }
psql -c "CREATE TABLE IF NOT EXISTS a AS SELECT g, g % 50 AS k FROM generate_series(1, 200000) g" \
     -c "CREATE INDEX IF NOT EXISTS a_g ON a (g)" \
     -c "CREATE OR REPLACE FUNCTION tiny(n int) RETURNS bigint LANGUAGE plpgsql AS \$\$ DECLARE r bigint := 0; x bigint; BEGIN FOR i IN 1..n LOOP SELECT k INTO x FROM a WHERE g = i; r := r + x; END LOOP; RETURN r; END \$\$" >/dev/null
ae="-c session_preload_libraries=auto_explain -c auto_explain.log_min_duration=100s -c auto_explain.log_analyze=on -c auto_explain.log_nested_statements=on -c fasttime.clock_source=try_tsc"
for r in $(seq 1 "$R"); do
	for build in old new; do
		# never overwrite a library a running server has loaded
		su postgres -c "$B/pg_ctl -D $D -w stop" >/dev/null
		if [ $build = old ]; then cp "$OLD" "$lib/fasttime.so"; else cp "$NEW" "$lib/fasttime.so"; fi
		su postgres -c "$B/pg_ctl -D $D -w start -l $D/../log" >/dev/null
		for mode in exact profile; do
			o="$ae -c fasttime.node_timing=$mode"
			tps=$(PGOPTIONS="$o" "$B/pgbench" -h /tmp -p "$P" -U postgres -S -T 5 -c 1 -M prepared postgres 2>/dev/null |
				sed -n 's/^tps = \([0-9.]*\).*/\1/p')
			ms=$(PGOPTIONS="$o" "$B/psql" -X -q -h /tmp -p "$P" -U postgres postgres -c '\timing on' -c 'SELECT tiny(50000)' |
				sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p')
			echo "round $r build $build mode $mode pgbench_tps $tps tiny_ms $ms"
		done
	done
done
