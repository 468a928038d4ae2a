# 'Requests per second against connections'
# Written by `h2bench report` from its template report/templates/matrix-rps.gp. To render
# matrix-rps.png and matrix-rps.svg again, run `gnuplot matrix-rps.gp` in this directory.
reset
set encoding utf8
# gnuplot-nox has pngcairo; builds without cairo have the libgd png terminal only.
if (strstrt(GPVAL_TERMINALS, "pngcairo") > 0) {
    set terminal pngcairo size 960,560 noenhanced font "sans,10" background "#ffffff"
} else {
    set terminal png size 960,560 noenhanced background "#ffffff"
}
set output 'matrix-rps.png'
set title 'Requests per second against connections' noenhanced
set grid lc rgb "#dddddd"
set border 3 lc rgb "#444444"
set tics nomirror
set key noenhanced
set datafile missing "?"
# Requests per second against connections: one line per target (colour) and requested streams
# per connection (dash and point). Each point is the median of the cell's repeats.
set xlabel "Connections (log scale)"
set ylabel "Requests per second"
set logscale x
set xrange [0.625:1600]
set xtics ("1" 1, "10" 10, "100" 100, "1000" 1000)
set format y "%.1s%c"
set yrange [0:*]
set key outside right top vertical
plot 'matrix-rps.dat' index 0 using 1:2 with linespoints lw 2 lc rgb "#1f77b4" dt 1 pt 7 ps 1.2 title 'h2ref, 1 stream', 'matrix-rps.dat' index 1 using 1:2 with linespoints lw 2 lc rgb "#1f77b4" dt 2 pt 5 ps 1.2 title 'h2ref, 10 streams', 'matrix-rps.dat' index 2 using 1:2 with linespoints lw 2 lc rgb "#1f77b4" dt 3 pt 9 ps 1.2 title 'h2ref, 100 streams', 'matrix-rps.dat' index 3 using 1:2 with linespoints lw 2 lc rgb "#d62728" dt 1 pt 7 ps 1.2 title 'nghttpd, 1 stream', 'matrix-rps.dat' index 4 using 1:2 with linespoints lw 2 lc rgb "#d62728" dt 2 pt 5 ps 1.2 title 'nghttpd, 10 streams', 'matrix-rps.dat' index 5 using 1:2 with linespoints lw 2 lc rgb "#d62728" dt 3 pt 9 ps 1.2 title 'nghttpd, 100 streams', 'matrix-rps.dat' index 6 using 1:2 with linespoints lw 2 lc rgb "#2ca02c" dt 1 pt 7 ps 1.2 title 'h2o, 1 stream', 'matrix-rps.dat' index 7 using 1:2 with linespoints lw 2 lc rgb "#2ca02c" dt 2 pt 5 ps 1.2 title 'h2o, 10 streams', 'matrix-rps.dat' index 8 using 1:2 with linespoints lw 2 lc rgb "#2ca02c" dt 3 pt 9 ps 1.2 title 'h2o, 100 streams', 'matrix-rps.dat' index 9 using 1:2 with linespoints lw 2 lc rgb "#9467bd" dt 1 pt 7 ps 1.2 title 'floor, 1 stream'
set terminal svg size 960,560 dynamic noenhanced font "sans,10" background "#ffffff"
set output 'matrix-rps.svg'
replot
unset output
