-- test/load/switch_clock.sql: prepended to every load script; each
-- transaction starts on a randomly chosen clock source
\set src random(1, 4)
\if :src = 1
SET fasttime.clock_source = tsc;
\elif :src = 2
SET fasttime.clock_source = try_tsc;
\elif :src = 3
SET fasttime.clock_source = auto;
\else
SET fasttime.clock_source = clock_gettime;
\endif
