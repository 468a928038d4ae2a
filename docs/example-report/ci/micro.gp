# 'Component suite: ns/op and p99 per benchmark'
# Written by `h2bench report` from its template report/templates/micro.gp. To render
# micro.png and micro.svg again, run `gnuplot micro.gp` in this directory.
reset
set encoding utf8
# gnuplot-nox has pngcairo; builds without cairo have the libgd png terminal only.
if (strstrt(GPVAL_TERMINALS, "pngcairo") > 0) {
    set terminal pngcairo size 960,560 noenhanced font "sans,10" background "#ffffff"
} else {
    set terminal png size 960,560 noenhanced background "#ffffff"
}
set output 'micro.png'
set title 'Component suite: ns/op and p99 per benchmark' noenhanced
set grid lc rgb "#dddddd"
set border 3 lc rgb "#444444"
set tics nomirror
set key noenhanced
set datafile missing "?"
# The component suite as bars: ns/op (median of epochs) and p99 per operation, log scale because
# the suite spans from hundreds of nanoseconds to milliseconds.
set style data histograms
set style histogram clustered gap 1
set style fill solid 1.0 border lc rgb "#444444"
set boxwidth 0.9
set logscale y
set yrange [100:*]
set ylabel "Time per operation (log scale)"
set ytics ("1 ns" 1, "10 ns" 10, "100 ns" 100, "1 µs" 1e3, "10 µs" 1e4, "100 µs" 1e5, "1 ms" 1e6, "10 ms" 1e7, "100 ms" 1e8, "1 s" 1e9, "10 s" 1e10)
set xtics rotate by 30 right
set bmargin 11
set key left top
plot 'micro.dat' using 2:xtic(1) title "ns/op (median of epochs)" lc rgb "#1f77b4", '' using 3 title "p99 per operation" lc rgb "#ff7f0e"
set terminal svg size 960,560 dynamic noenhanced font "sans,10" background "#ffffff"
set output 'micro.svg'
replot
unset output
