#!/usr/bin/env bash
# run_console.sh - the console summary of h2bench run and the report agree (issue 30 item 7):
# one ratio orientation everywhere (each later target over the first, as the report's tables
# and compare's head/base), a target --filter left out gets no column, and the
# requests-per-server-CPU-second table comes from a CPU time finer than 10 ms clock ticks.
. "$(dirname "$0")/lib.sh"
command -v nghttpd >/dev/null || skip "nghttpd not installed (nghttp2-server)"
DATA=$SRC/tests/data/run

"$H2BENCH" run "$DATA/two-targets.json" --out "$TMP/r.json" --no-progress >"$TMP/out" 2>"$TMP/err"
expect_eq "two targets: exit" "$?" 0
out=$(cat "$TMP/out")
expect_match "console: ratio header other/first" "$out" 'h2ref +nghttpd +nghttpd/h2ref'
expect_eq "console: no first/other header" "$(grep -c 'h2ref/nghttpd' "$TMP/out")" 0
# The printed ratio is nghttpd's req/s over h2ref's (within the rounding of the printed values).
row=$(awk '/^req\/s, median over repeats/ {getline; getline; print; exit}' "$TMP/out")
expect_match "console: req/s row" "$row" '^2 +4/4 +[0-9]+ +[0-9]+ +[0-9.]+x$'
verdict=$(echo "$row" | awk '{a = $3; b = $4; r = $5; sub("x", "", r);
    want = b / a; d = r - want; if (d < 0) d = -d; print (d <= 0.01 + want * 0.01) ? "agree" : "differ " want}')
expect_eq "console: ratio is nghttpd/h2ref" "$verdict" agree

# The report's ratio column names the same pair in the same order, with the same value.
"$H2BENCH" report "$TMP/r.json" -o "$TMP/rep" >/dev/null 2>"$TMP/rep.err"
expect_eq "report: exit" "$?" 0
hdr=$(grep -F '| Connections | Requested/effective streams |' "$TMP/rep/REPORT.md" | head -1)
expect_match "report: ratio header other / first" "$hdr" '\| nghttpd / h2ref \|'
rr=$(grep -E '^\| 2 \| 4/4 \|' "$TMP/rep/REPORT.md" | head -1 | awk -F'|' '{print $6}' | tr -dc '0-9.')
cr=$(echo "$row" | awk '{r = $5; sub("x", "", r); print r}')
expect_eq "report and console: same ratio" "$(awk -v a="$rr" -v b="$cr" 'BEGIN {d = a - b; if (d < 0) d = -d; print (d < 0.015) ? "same" : a " vs " b}')" same

# Server CPU time at nanosecond resolution: not every cell's figure is a multiple of 10 ms
# (each is, when it comes from /proc/PID/stat's clock ticks; with 2,000 requests a precise
# figure lands on one with a chance near 1e-7 per cell).
ticks=$(python3 - "$TMP/r.json" <<'PY'
import json, sys
cells = json.load(open(sys.argv[1]))["matrix"]
vals = [c["server_cpu_s"] for c in cells if c.get("server_cpu_s")]
print(len(vals), sum(1 for v in vals if abs(v * 100 - round(v * 100)) < 1e-6))
PY
)
expect_eq "server_cpu_s: 2 cells, none on a 10 ms tick" "$ticks" "2 0"
cpu=$(awk '/^requests per server CPU second/ {getline; getline; print; exit}' "$TMP/out")
expect_match "console: per-CPU-second row" "$cpu" '^2 +4/4 +[0-9]+ +[0-9]+ +[0-9.]+x$'

# --filter to one target: its columns only, no column of "-" for the other, no ratio.
"$H2BENCH" run "$DATA/two-targets.json" --filter 'nghttpd:2x4' --out "$TMP/f.json" \
    --no-progress >"$TMP/fout" 2>"$TMP/ferr"
expect_eq "filtered: exit" "$?" 0
fhdr=$(awk '/^req\/s, median over repeats/ {getline; print; exit}' "$TMP/fout")
expect_match "filtered: nghttpd column" "$fhdr" 'nghttpd$'
expect_eq "filtered: no h2ref column" "$(grep -cE '^(conns|proto).*h2ref' "$TMP/fout")" 0
frow=$(awk '/^req\/s, median over repeats/ {getline; getline; print; exit}' "$TMP/fout")
expect_match "filtered: one value, no dashes" "$frow" '^2 +4/4 +[0-9]+$'
finish
