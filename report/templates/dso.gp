# The DSO split of each profiled cell as one stacked bar: the share of the CPU samples whose leaf
# frame was in the kernel, libnghttp2, TLS, libc, the target's own binary or anything else.
set style data histograms
set style histogram rowstacked
set style fill solid 1.0 border lc rgb "#444444"
set boxwidth 0.6
set yrange [0:100]
set ylabel "Share of CPU samples (%)"
set xtics rotate by 30 right
set bmargin 8
set key outside right top
plot {{PLOT}}
