# Latency and rate over time for a shaped cell (matrix.stages / matrix.step): p50 and p99 of each
# interval from intended send times on the left axis, the rate the shape offered and the rate
# achieved on the right; dotted vertical lines mark the shape's boundaries (where a stage or a
# step ends). Each point is an interval, drawn at its middle.
set xlabel "Time since the start of the measurement (s)"
set ylabel "Latency ({{UNIT}})"
set y2label "Rate (req/s)"
set border 11 lc rgb "#444444"
set xrange [0:{{XMAX}}]
set yrange [0:*]
set y2range [0:*]
set ytics nomirror
set y2tics
set key outside bottom center horizontal
{{MARKS}}
plot {{PLOT}}
