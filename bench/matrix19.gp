# bench/matrix19.gp: PostgreSQL 19, one EXPLAIN mode's time as a multiple
# of the plain query: stock with the server's own clock (timing_clock_source
# auto and system) against fasttime exact (start read ordered, and plain
# reads).
#   datafile  lines: W1 stock_auto stock_system exact plain
#   outfile   the PNG
#   mode      the EXPLAIN mode, for the title
#   subtitle  the machine
set terminal pngcairo size 1200,620 font "sans,11" noenhanced
set output outfile
set title "PostgreSQL 19, ".mode.": time as a multiple of the plain query, lower is better\n".subtitle
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
plot datafile using 2:xtic(1) title "stock, server's TSC clock (auto)" linecolor rgb "#c0392b", \
     '' using 3 title "stock, system clock" linecolor rgb "#e59866", \
     '' using 4 title "fasttime exact (start read ordered)" linecolor rgb "#2471a3", \
     '' using 5 title "fasttime exact, plain reads" linecolor rgb "#1abc9c", \
     '' using ($0 - 0.34):2:(sprintf("%.2f", $2)) with labels font "sans,8" offset 0,0.6 notitle, \
     '' using ($0 - 0.11):3:(sprintf("%.2f", $3)) with labels font "sans,8" offset 0,0.6 notitle, \
     '' using ($0 + 0.11):4:(sprintf("%.2f", $4)) with labels font "sans,8" offset 0,0.6 notitle, \
     '' using ($0 + 0.34):5:(sprintf("%.2f", $5)) with labels font "sans,8" offset 0,0.6 notitle
