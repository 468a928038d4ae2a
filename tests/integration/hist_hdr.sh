#!/usr/bin/env bash
# hist_hdr.sh - h2bench's percentiles equal HdrHistogram's getValueAtPercentile on chosen data:
# test_hist_hdr --export builds six histograms (1, 3, 200, 1,000, 20,000 and 100,000 values,
# groups ending exactly on the ranks of p50 ... p99.99, and a lognormal run with clamped values)
# and prints what h2bench reports (the JSON's latency_ns path) with each histogram in the V2
# encoding `--hdr-log` writes; hdr-histogram-js decodes each and must give the same p50, p75,
# p90, p99, p99.9 and p99.99 and, for the max, the top of the exact max's bin. Skipped (77)
# when node or the package is missing.
. "$(dirname "$0")/lib.sh"
JS=$SRC/tests/js
CASES=$BIN/../tests/test_hist_hdr
command -v node >/dev/null && [ -d "$JS/node_modules/hdr-histogram-js" ] ||
    skip "hdr-histogram-js not installed (make -f Makefile.ci deps)"
[ -x "$CASES" ] || { fail "no $CASES"; finish; exit 1; }

"$CASES" --export >"$TMP/cases.txt"
expect_eq "export: exit" "$?" 0
node "$JS/percentiles.js" "$TMP/cases.txt" >"$TMP/js.txt"
expect_eq "hdr-histogram-js: exit" "$?" 0
expect_eq "six cases decoded" "$(wc -l <"$TMP/js.txt")" 6
names=(p50 p75 p90 p99 p99.9 p99.99 max)
while read -r name n p50 p75 p90 p99 p999 p9999 maxbin max _; do
    read -r jname jn j50 j75 j90 j99 j999 j9999 jmax <&3
    expect_eq "$name: the same case" "$jname" "$name"
    expect_eq "$name: count" "$jn" "$n"
    ours=("$p50" "$p75" "$p90" "$p99" "$p999" "$p9999" "$maxbin")
    theirs=("$j50" "$j75" "$j90" "$j99" "$j999" "$j9999" "$jmax")
    for i in "${!names[@]}"; do
        expect_eq "$name (N=$n): ${names[$i]}: h2bench vs HdrHistogram" "${ours[$i]}" "${theirs[$i]}"
    done
    echo "$name N=$n: h2bench p50..p99.99 $p50 $p75 $p90 $p99 $p999 $p9999 max $max (bin top $maxbin);" \
        "hdr-histogram-js $j50 $j75 $j90 $j99 $j999 $j9999 max $jmax"
done <"$TMP/cases.txt" 3<"$TMP/js.txt"
finish
