# bench/overhead.gp: bar chart of the TIMING ON overhead over TIMING OFF,
# per workload and clock source.  Called by bench/clock_cost.sh with
#   datafile  lines: "W1" stock% tsc% auto%
#   outfile   the PNG
#   metric    what was compared
#   subtitle  the machine
set terminal pngcairo size 1100,600 font "sans,11" noenhanced
set output outfile
set title "EXPLAIN (ANALYZE, TIMING ON) overhead over TIMING OFF, ".metric.", lower is better\n".subtitle
set ylabel "extra time over TIMING OFF (%)"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set grid ytics
set key top right
set yrange [-10<*<0:*]
set autoscale yfixmin
set offsets 0, 0, graph 0.12, 0
# the brief's target for the tsc source on W1
set arrow from graph 0, first 10 to graph 1, first 10 nohead dashtype 2 linecolor rgb "#2471a3"
set label "W1 tsc target +10 %" at graph 0.995, first 10 right offset 0,0.6 textcolor rgb "#2471a3" font "sans,9"
plot datafile using 2:xtic(1) title "stock clock_gettime" linecolor rgb "#c0392b", \
     '' using 3 title "fasttime tsc" linecolor rgb "#2471a3", \
     '' using 4 title "fasttime auto" linecolor rgb "#5dade2", \
     '' using ($0 - 0.3):($2 > 0 ? $2 : 0):(sprintf("%+.1f%%", $2)) with labels font "sans,9" offset 0,0.7 notitle, \
     '' using ($0):($3 > 0 ? $3 : 0):(sprintf("%+.1f%%", $3)) with labels font "sans,9" offset 0,0.7 notitle, \
     '' using ($0 + 0.3):($4 > 0 ? $4 : 0):(sprintf("%+.1f%%", $4)) with labels font "sans,9" offset 0,0.7 notitle
