# Latency against offered rate from the steps of capacity searches (matrix.find_max): for each
# cell, p50 and p99 of every step; open circles are failing steps; the dashed line marks the
# knee, the capacity found (the last passing rate).
set xlabel "Offered rate (req/s)"
set ylabel "Latency ({{UNIT}})"
set xrange [0:*]
set yrange [0:*]
set key left top
{{MARKS}}
plot {{PLOT}}
