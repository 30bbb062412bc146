# bench/headline.gp: the README's headline chart -- W1 EXPLAIN ANALYZE as
# typed, per PostgreSQL version, as a multiple of the plain query.  Called
# by bench/headline.sh with
#   datafile  lines: "PG15" stock exact profile timing_off  (NaN: not run)
#   outfile   the PNG
#   subtitle  the machine and the date
set terminal pngcairo size 1100,560 font "sans,11" noenhanced
set output outfile
set title "W1 (count(*) over 5M rows), EXPLAIN ANALYZE as typed: time as a multiple of the plain query (minimum of interleaved rounds), lower is better\n".subtitle
set ylabel "x plain query (1.0 = no overhead)"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set grid ytics
set key top right
set yrange [0:*]
set offsets 0, 0, graph 0.12, 0
set datafile missing "NaN"
set arrow from graph 0, first 1 to graph 1, first 1 nohead dashtype 2 linecolor rgb "#555555"
plot datafile using 2:xtic(1) title "stock" linecolor rgb "#c0392b", \
     '' using 3 title "fasttime exact (default)" linecolor rgb "#2471a3", \
     '' using 4 title "fasttime profiled" linecolor rgb "#27ae60", \
     '' using 5 title "fasttime, TIMING OFF" linecolor rgb "#7f8c8d", \
     '' using ($0 - 0.30):2:(sprintf("%.2f", $2)) with labels font "sans,9" offset 0,0.7 notitle, \
     '' using ($0 - 0.10):3:(sprintf("%.2f", $3)) with labels font "sans,9" offset 0,0.7 notitle, \
     '' using ($0 + 0.10):4:(sprintf("%.2f", $4)) with labels font "sans,9" offset 0,0.7 notitle, \
     '' using ($0 + 0.30):5:(sprintf("%.2f", $5)) with labels font "sans,9" offset 0,0.7 notitle
