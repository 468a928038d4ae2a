# 'History across runs, relative to run 1'
# Written by `h2bench report` from its template report/templates/history.gp. To render
# history.png and history.svg again, run `gnuplot history.gp` in this directory.
reset
set encoding utf8
# gnuplot-nox has pngcairo; builds without cairo have the libgd png terminal only.
if (strstrt(GPVAL_TERMINALS, "pngcairo") > 0) {
    set terminal pngcairo size 960,560 noenhanced font "sans,10" background "#ffffff"
} else {
    set terminal png size 960,560 noenhanced background "#ffffff"
}
set output 'history.png'
set title 'History across runs, relative to run 1' noenhanced
set grid lc rgb "#dddddd"
set border 3 lc rgb "#444444"
set tics nomirror
set key noenhanced
set datafile missing "?"
# History across runs: each series relative to its value in the first run (1.0 = unchanged),
# so benchmarks of very different cost share one axis. Lower is better for times, higher for
# throughput; the report's table says which is which.
set xlabel "Run" offset 0,-1
set ylabel "Relative to the first run"
set xrange [0.7:2.3]
set xtics ("1\n".'2026-12-06' 1, "2\n".'2026-12-06' 2)
set yrange [*:*]
set offsets 0, 0, graph 0.08, graph 0.08
set format y "%.2f"
set key outside right top vertical
plot 'history.dat' index 0 using 1:2 with linespoints lw 2 lc rgb "#1f77b4" dt 1 pt 7 title 'h2ref peak req/s', 'history.dat' index 1 using 1:2 with linespoints lw 2 lc rgb "#d62728" dt 1 pt 7 title 'nghttpd peak req/s', 'history.dat' index 2 using 1:2 with linespoints lw 2 lc rgb "#2ca02c" dt 1 pt 7 title 'h2o peak req/s', 'history.dat' index 3 using 1:2 with linespoints lw 2 lc rgb "#9467bd" dt 1 pt 7 title 'floor peak req/s'
set terminal svg size 960,560 dynamic noenhanced font "sans,10" background "#ffffff"
set output 'history.svg'
replot
unset output
