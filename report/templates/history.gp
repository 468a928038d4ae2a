# History across runs: each series relative to its value in the first run (1.0 = unchanged),
# so benchmarks of very different cost share one axis. Lower is better for times, higher for
# throughput; the report's table says which is which.
set xlabel "Run" offset 0,-1
set ylabel "Relative to the first run"
set xrange [{{XMIN}}:{{XMAX}}]
set xtics ({{XTICS}})
set yrange [*:*]
set offsets 0, 0, graph 0.08, graph 0.08
set format y "%.2f"
set key outside right top vertical
plot {{PLOT}}
