# bench/matrix.gp: one EXPLAIN mode's time as a multiple of the plain
# query, per workload and PostgreSQL version.  Called by bench/run.sh with
#   datafile  lines: "W1 PG15" stock exact floor  (NaN: not run)
#   outfile   the PNG
#   mode      the EXPLAIN mode, for the title
#   subtitle  the machine
set terminal pngcairo size 1200,620 font "sans,11" noenhanced
set output outfile
set title mode.": time as a multiple of the plain query, lower is better\n".subtitle
set ylabel "x plain query (1.0 = no overhead)"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set grid ytics
set key top right
set yrange [0:*]
set offsets 0, 0, graph 0.1, 0
set datafile missing "NaN"
set arrow from graph 0, first 1 to graph 1, first 1 nohead dashtype 2 linecolor rgb "#555555"
plot datafile using 2:xtic(1) title "stock (clock_gettime)" linecolor rgb "#c0392b", \
     '' using 3 title "fasttime exact" linecolor rgb "#2471a3", \
     '' using 4 title "floor (no clock read)" linecolor rgb "#7f8c8d", \
     '' using ($0 - 0.27):2:(sprintf("%.2f", $2)) with labels font "sans,8" offset 0,0.6 notitle, \
     '' using ($0):3:(sprintf("%.2f", $3)) with labels font "sans,8" offset 0,0.6 notitle, \
     '' using ($0 + 0.27):4:(sprintf("%.2f", $4)) with labels font "sans,8" offset 0,0.6 notitle
