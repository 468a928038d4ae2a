# Latency percentile spectrum (HdrHistogram style): the x axis is 1/(1-p) on a log scale so the
# tail gets as much room as the median; one line per target, from the merged histogram.
set xlabel "Percentile"
set ylabel "Latency ({{UNIT}})"
set logscale x
set xrange [1:{{XMAX}}]
set xtics ("0%%" 1, "90%%" 10, "99%%" 100, "99.9%%" 1000, "99.99%%" 10000, "99.999%%" 100000, "99.9999%%" 1000000)
set yrange [0:*]
set key left top
plot {{PLOT}}
