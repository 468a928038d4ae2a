# The component suite as bars: ns/op (median of epochs) and p99 per operation, log scale because
# the suite spans from hundreds of nanoseconds to milliseconds.
set style data histograms
set style histogram clustered gap 1
set style fill solid 1.0 border lc rgb "#444444"
set boxwidth 0.9
set logscale y
set yrange [{{YMIN}}:*]
set ylabel "Time per operation (log scale)"
set ytics ("1 ns" 1, "10 ns" 10, "100 ns" 100, "1 µs" 1e3, "10 µs" 1e4, "100 µs" 1e5, "1 ms" 1e6, "10 ms" 1e7, "100 ms" 1e8, "1 s" 1e9, "10 s" 1e10)
set xtics rotate by 30 right
set bmargin 11
set key left top
plot {{PLOT}}
