# Requests per second against connections: one line per target (colour) and requested streams
# per connection (dash and point). Each point is the median of the cell's repeats.
set xlabel "Connections (log scale)"
set ylabel "Requests per second"
set logscale x
set xrange [{{XMIN}}:{{XMAX}}]
set xtics ({{XTICS}})
set format y "%.1s%c"
set yrange [0:*]
set key outside right top vertical
plot {{PLOT}}
