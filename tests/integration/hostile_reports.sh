#!/usr/bin/env bash
# hostile_reports.sh - names from results files cannot inject markdown or HTML into REPORT.md,
# gate.md and the comparison (ab.md's table), nor control bytes into terminal tables (issue 29
# item 6). The report fixtures get hostile names: a backtick that would end a code span
# followed by raw HTML, a '|' that would end a table cell, an ANSI escape; mdcheck.py checks
# each markdown output, and the terminal outputs must carry no control byte but newlines.
. "$(dirname "$0")/lib.sh"
CHECK="python3 $(dirname "$0")/mdcheck.py"
D=$SRC/tests/data/report

EVIL_BENCH=$'h2/stream`<img src=x onerror=alert(1)>|x\e[31m'
EVIL_SCEN='m`<script>alert(1)</script>'
EVIL_TARGET='h2ref`<b>|t'
evil() { # IN OUT
    jq --arg b "$EVIL_BENCH" --arg s "$EVIL_SCEN" --arg t "$EVIL_TARGET" '
        .scenario.name = $s
        | .micro[0].name = $b
        | .env.warnings += ["<img src=y>` end"]
        | .matrix |= map(if .target == "h2ref" then .target = $t else . end)' "$1" >"$2"
}
evil "$D/head.json" "$TMP/head.json"
evil "$D/base.json" "$TMP/base.json"
jq --arg b "$EVIL_BENCH" '.benchmarks[$b] = .benchmarks["h2/stream-lifecycle"]' \
    "$D/ceilings.json" >"$TMP/ceilings.json"

# the rendered form of the bench name in a code span (| escaped, ESC as ?)
SHOWN='h2/stream`<img src=x onerror=alert(1)>\|x?[31m'
"$H2BENCH" report "$TMP/base.json" "$TMP/head.json" --ceilings "$TMP/ceilings.json" \
    --compare "$TMP/base.json" -o "$TMP/rep" --gnuplot /nonexistent >"$TMP/rep.out" 2>&1
expect_eq "report written" "$?" 0
$CHECK "$TMP/rep/REPORT.md" "$SHOWN" >"$TMP/rep.chk"; rc=$?
cat "$TMP/rep.chk"
expect_eq "REPORT.md holds" "$rc" 0

"$H2BENCH" gate --ceilings "$TMP/ceilings.json" --results "$TMP/head.json" --confirm 0 \
    --md "$TMP/gate.md" >"$TMP/gate.txt" 2>&1
$CHECK "$TMP/gate.md" "$SHOWN" >"$TMP/gate.chk"; rc=$?
cat "$TMP/gate.chk"
expect_eq "gate.md holds" "$rc" 0
expect_eq "gate's terminal table: no control bytes" "$(tr -d '\n' <"$TMP/gate.txt" | tr -d '\040-\176\200-\377' | wc -c)" 0
expect_match "gate's terminal table shows the name" "$(cat "$TMP/gate.txt")" 'onerror=alert\(1\)>\|x\?\[31m'

"$H2BENCH" compare "$TMP/base.json" "$TMP/head.json" --md "$TMP/ab.md" >"$TMP/cmp.txt" 2>&1
$CHECK "$TMP/ab.md" 'onerror=alert(1)\>\|x?\[31m' >"$TMP/ab.chk"; rc=$?
cat "$TMP/ab.chk"
expect_eq "compare/ab markdown holds" "$rc" 0
expect_eq "compare's terminal table: no control bytes" "$(tr -d '\n' <"$TMP/cmp.txt" | tr -d '\040-\176\200-\377' | wc -c)" 0

# a shaped cell's load over time (matrix[].intervals, shape_bounds_s): wrong types, too many
# intervals, starts going back and boundaries out of order exit 2 naming the place; values at
# the edge of a double and a hostile target name are drawn without breaking the markdown or
# reaching the chart script as syntax
bad_time() { # LABEL JQ MESSAGE
    jq "$2" "$TMP/head.json" >"$TMP/time-$1.json"
    err=$("$H2BENCH" report "$TMP/time-$1.json" -o "$TMP/time-$1" --gnuplot /nonexistent 2>&1)
    expect_eq "over time $1: exit 2" "$?" 2
    expect_match "over time $1: names the place" "$err" "time-$1\\.json:[0-9]+:[0-9]+: $3"
}
bad_time type '.matrix[0].intervals = [{"start_s": "0", "end_s": 1}]' \
    'matrix\[0\]\.intervals\[0\]\.start_s: expected a non-negative number'
bad_time object '.matrix[0].intervals = {"start_s": 0}' 'matrix\[0\]\.intervals: expected an array'
bad_time huge '.matrix[0].intervals = [range(86401) | {start_s: ., end_s: (. + 1)}]' \
    'matrix\[0\]\.intervals: 86401 intervals: expected at most 86400'
bad_time back '.matrix[0].intervals = [{"start_s": 2, "end_s": 3}, {"start_s": 1, "end_s": 2}]' \
    'matrix\[0\]\.intervals\[1\]: expected start_s at or after'
bad_time bounds '.matrix[0].shape_bounds_s = [2, 1]' 'matrix\[0\]\.shape_bounds_s\[1\]: expected seconds above'
jq '.matrix[0].intervals = [{"start_s": 0, "end_s": 1, "offered_per_s": 1e300, "achieved_per_s": 0,
        "errors": 0, "p50_ns": 1, "p99_ns": 9007199254740991}, {"start_s": 1, "end_s": 1e300,
        "offered_per_s": null, "achieved_per_s": 1e-300, "errors": 3, "p50_ns": null, "p99_ns": null}]
    | .matrix[0].shape_bounds_s = [0.5, 1e300]' "$TMP/head.json" >"$TMP/time-edge.json"
"$H2BENCH" report "$TMP/time-edge.json" -o "$TMP/time-edge" --gnuplot /nonexistent >"$TMP/time-edge.out" 2>&1
expect_eq "over time edge values: report written" "$?" 0
$CHECK "$TMP/time-edge/REPORT.md" 'Over time' >"$TMP/time-edge.chk"; rc=$?
cat "$TMP/time-edge.chk"
expect_eq "over time edge values: REPORT.md holds" "$rc" 0
expect_eq "over time: the hostile target's backquotes dropped in the chart script" \
    "$(grep -v '^#' "$TMP/time-edge/over-time-0.gp" | grep -c '`')" 0
expect_eq "over time: the title carries the name, quoted" \
    "$(grep -c "^set title 'Latency and rate over time: h2ref<b>|t 1x1" "$TMP/time-edge/over-time-0.gp")" 1
expect_eq "over time: a null figure is missing data, not a number" \
    "$(grep -vc '^#' "$TMP/time-edge/over-time-0.dat") $(grep -c ' ? ?' "$TMP/time-edge/over-time-0.dat")" '2 1'

# report --summary (issue 30): the charts are Mermaid blocks, and a target or benchmark name
# that would end a Mermaid string, statement or the ``` fence ends none of them.
MM_TARGET=$'nghttpd"] [x`\n```\n%%{init: {}}%%<b>#quot;'
jq --arg t "$MM_TARGET" '.matrix |= map(if .target == "nghttpd" then .target = $t else . end)' \
    "$TMP/head.json" >"$TMP/mm.json"
"$H2BENCH" report "$TMP/mm.json" -o "$TMP/mm" --gnuplot /nonexistent --summary \
    >"$TMP/summary.md" 2>"$TMP/summary.err"
expect_eq "summary written" "$?" 0
python3 "$(dirname "$0")/mermaidcheck.py" "$TMP/summary.md" 3 >"$TMP/mm.chk"; rc=$?
cat "$TMP/mm.chk"
expect_eq "summary: Mermaid blocks well formed" "$rc" 0
expect_eq "summary: hostile target's chart title" \
    "$(grep -cF "    title \"nghttpd') (x'?'''?%%(init: ())%%?b??quot?: req/s" "$TMP/summary.md")" 1
expect_eq "summary: no PNG link" "$(grep -c '\.png)' "$TMP/summary.md")" 0
$CHECK "$TMP/summary.md" "$SHOWN" >"$TMP/summary.chk"; rc=$?
cat "$TMP/summary.chk"
expect_eq "summary markdown holds" "$rc" 0

# h2bench merge (item 8): status-code keys must be three digits (or "other"), counts
# non-negative integers, and a merged count past 2^63-1 is an input error: exit 2, nothing
# written. A clean merge still adds the counts.
. "$(dirname "$0")/serve_lib.sh"
start_serve merge --threads 1 || { finish; exit; }
"$H2BENCH" load -n 10 -c 1 --no-progress --json "$TMP/a.json" "$SERVE_URL/hello" >/dev/null 2>&1
expect_eq "load for merge" "$(jq -c .status_codes "$TMP/a.json")" '{"200":10}'
stop_serve "$SERVE_PID" >/dev/null
"$H2BENCH" merge "$TMP/a.json" "$TMP/a.json" --json "$TMP/aa.json" >/dev/null 2>&1
expect_eq "clean merge adds" "$(jq -c .status_codes "$TMP/aa.json")" '{"200":20}'
bad_merge() { # LABEL JQ [SED]: the part is a.json through jq, then sed (jq cannot print 2^63-1)
    jq "$2" "$TMP/a.json" | sed -e "${3:-}" >"$TMP/bad-$1.json"
    err=$("$H2BENCH" merge "$TMP/bad-$1.json" "$TMP/bad-$1.json" --json "$TMP/m-$1.json" 2>&1)
    expect_eq "merge $1: exit 2" "$?" 2
    expect_match "merge $1: names the file" "$err" "bad-$1\\.json:[0-9]+:[0-9]+: status_codes"
    expect_eq "merge $1: nothing written" "$(test -e "$TMP/m-$1.json" && echo yes || echo no)" no
}
bad_merge overflow '.status_codes["200"] = 424242' 's/424242/9223372036854775807/'
bad_merge key '.status_codes["<img>"] = 1'
bad_merge string '.status_codes["200"] = "10"'
bad_merge negative '.status_codes["200"] = -1'
finish
