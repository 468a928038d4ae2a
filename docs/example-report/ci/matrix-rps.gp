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
set xrange [0.625:16]
set xtics ("1" 1, "10" 10)
set format y "%.1s%c"
set yrange [0:*]
set key outside right top vertical
plot 'matrix-rps.dat' index 0 using 1:2 with linespoints lw 2 lc rgb "#1f77b4" dt 1 pt 7 ps 1.2 title 'h2ref, 1 stream', 'matrix-rps.dat' index 1 using 1:2 with linespoints lw 2 lc rgb "#1f77b4" dt 2 pt 5 ps 1.2 title 'h2ref, 10 streams'
set terminal svg size 960,560 dynamic noenhanced font "sans,10" background "#ffffff"
set output 'matrix-rps.svg'
replot
unset output
