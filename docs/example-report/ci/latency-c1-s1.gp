# 'Latency percentile spectrum, 1 connection x 1 stream'
# Written by `h2bench report` from its template report/templates/latency.gp. To render
# latency-c1-s1.png and latency-c1-s1.svg again, run `gnuplot latency-c1-s1.gp` in this directory.
reset
set encoding utf8
# gnuplot-nox has pngcairo; builds without cairo have the libgd png terminal only.
if (strstrt(GPVAL_TERMINALS, "pngcairo") > 0) {
    set terminal pngcairo size 960,560 noenhanced font "sans,10" background "#ffffff"
} else {
    set terminal png size 960,560 noenhanced background "#ffffff"
}
set output 'latency-c1-s1.png'
set title 'Latency percentile spectrum, 1 connection x 1 stream' noenhanced
set grid lc rgb "#dddddd"
set border 3 lc rgb "#444444"
set tics nomirror
set key noenhanced
set datafile missing "?"
# Latency percentile spectrum (HdrHistogram style): the x axis is 1/(1-p) on a log scale so the
# tail gets as much room as the median; one line per target, from the merged histogram.
set xlabel "Percentile"
set ylabel "Latency (µs)"
set logscale x
set xrange [1:10000]
set xtics ("0%%" 1, "90%%" 10, "99%%" 100, "99.9%%" 1000, "99.99%%" 10000, "99.999%%" 100000, "99.9999%%" 1000000)
set yrange [0:*]
set key left top
plot 'latency-c1-s1.dat' index 0 using 1:2 with lines lw 2 lc rgb "#1f77b4" title 'h2ref'
set terminal svg size 960,560 dynamic noenhanced font "sans,10" background "#ffffff"
set output 'latency-c1-s1.svg'
replot
unset output
