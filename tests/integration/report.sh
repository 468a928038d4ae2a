#!/usr/bin/env bash
# report.sh - `h2bench report` on the fixture results in tests/data/report/: the markdown matches
# the golden file section by section, the charts are real PNGs with the series drawn, the report
# is still written (and says so) without gnuplot, and failures leave the output untouched.
# After an intended change to the markdown, regenerate the golden file and review its diff:
#   build/bin/h2bench report tests/data/report/{older,base,head}.json \
#     --ceilings tests/data/report/ceilings.json --compare tests/data/report/base.json -o /tmp/r &&
#   cp /tmp/r/REPORT.md tests/data/report/golden/REPORT.md
. "$(dirname "$0")/lib.sh"

DATA=$SRC/tests/data/report
GOLDEN=$DATA/golden/REPORT.md
PNG_CHECK=$BIN/../tests/png_check
RUNS=("$DATA/older.json" "$DATA/base.json" "$DATA/head.json")
FULL=(--ceilings "$DATA/ceilings.json" --compare "$DATA/base.json")

# split_sections FILE DIR: DIR/00 is the title block, DIR/01... one "## " section each.
split_sections() {
    rm -rf "$2" && mkdir -p "$2"
    awk -v dir="$2" 'BEGIN { f = dir "/00" } /^## / { n++; f = sprintf("%s/%02d", dir, n) }
                     { print > f }' "$1"
}
section_title() { head -n 1 "$1"; }

# compare_sections WHAT ACTUAL [TITLE...]: the named sections (all when none) equal the golden.
compare_sections() {
    local what=$1 actual=$2
    shift 2
    split_sections "$GOLDEN" "$TMP/golden.d"
    split_sections "$actual" "$TMP/actual.d"
    if [ $# -eq 0 ]; then
        expect_eq "$what: section count" "$(ls "$TMP/actual.d" | wc -l)" \
            "$(ls "$TMP/golden.d" | wc -l)"
    fi
    for g in "$TMP"/golden.d/*; do
        local t a=""
        t=$(section_title "$g")
        if [ $# -gt 0 ] && ! printf '%s\n' "$@" | grep -qxF -- "$t"; then
            continue
        fi
        for c in "$TMP"/actual.d/*; do
            [ "$(section_title "$c")" = "$t" ] && a=$c
        done
        if [ -z "$a" ]; then
            fail "$what: section '$t' missing"
        elif diff -u "$g" "$a" >"$TMP/section.diff"; then
            ok
        else
            fail "$what: section '$t' differs from the golden file:"
            head -n 40 "$TMP/section.diff" >&2
        fi
    done
}

# 1. The full report: every section as in the golden file, every chart drawn.
out=$TMP/full
"$H2BENCH" report "${RUNS[@]}" "${FULL[@]}" -o "$out" >"$TMP/stdout" 2>"$TMP/stderr"; rc=$?
expect_eq "full report exit" "$rc" 0
expect_eq "no markdown on stdout without --summary" "$(cat "$TMP/stdout")" ""
expect_match "says where it wrote" "$(cat "$TMP/stderr")" "wrote $out/REPORT.md"
compare_sections "full report" "$out/REPORT.md"
charts=$(grep -o '([a-z0-9-]*\.png)' "$out/REPORT.md" | tr -d '()')
# the suite, req/s, the history, and the spectrum at 1x1 and at 1000x100 (h2ref's peak, too)
expect_eq "charts embedded" "$(echo $charts)" \
    "micro.png matrix-rps.png latency-c1-s1.png latency-c1000-s100.png history.png"
for png in $charts; do
    # h2ref and nghttpd lines (or the suite's two bar colours) must be on the image
    case $png in
    micro.png) colours="1f77b4 ff7f0e" ;;
    *) colours="1f77b4 d62728" ;;
    esac
    if res=$("$PNG_CHECK" "$out/$png" $colours 2>&1); then ok; else fail "$png: $res"; fi
    svg=${png%.png}.svg
    expect_match "$svg is SVG" "$(head -c 300 "$out/$svg" 2>&1)" '<svg'
    expect_eq "${png%.png}.gp kept" "$(test -s "$out/${png%.png}.gp" && echo yes)" yes
done
expect_eq "no temporary directory left" "$(ls -A "$out" | grep -c '^\.')" 0
# The check itself must be able to fail: an SVG and a blank render are rejected.
if "$PNG_CHECK" "$out/micro.svg" >/dev/null 2>&1; then fail "png_check accepted an SVG"; else ok; fi
gnuplot -e "set terminal pngcairo; set output '$TMP/blank.png'; unset border; unset tics;
            plot [0:1][0:1] NaN notitle" 2>/dev/null
if "$PNG_CHECK" "$TMP/blank.png" >/dev/null 2>&1; then fail "png_check accepted a blank render"
else ok; fi

# A relative output directory works the same (gnuplot runs in it, its log is opened first).
(cd "$TMP" && "$H2BENCH" report "$DATA/head.json" -o rel/out 2>"$TMP/stderr")
expect_eq "relative -o: exit" "$?" 0
expect_eq "relative -o: charts rendered" "$(grep -c 'Charts not rendered' "$TMP/rel/out/REPORT.md")" 0
expect_eq "relative -o: PNGs" "$(ls "$TMP/rel/out" | grep -c '\.png$')" 4
# trailing slashes name the same directory, and the path printed has none doubled
(cd "$TMP" && "$H2BENCH" report "$DATA/head.json" -o slash/out// 2>"$TMP/stderr")
expect_eq "-o DIR//: exit" "$?" 0
expect_eq "-o DIR//: the path printed" "$(cat "$TMP/stderr")" "h2bench report: wrote slash/out/REPORT.md"

# 2. --summary prints REPORT.md with its charts drawn inline for a step summary: Mermaid
# xychart-beta blocks (the suite, one req/s chart per target) where REPORT.md links PNGs.
"$H2BENCH" report "${RUNS[@]}" "${FULL[@]}" -o "$TMP/sum" --summary >"$TMP/summary.md" 2>/dev/null
rc=$?
expect_eq "--summary exit" "$rc" 0
expect_eq "--summary: REPORT.md's sections" "$(grep '^#' "$TMP/summary.md")" \
    "$(grep '^#' "$TMP/sum/REPORT.md")"
expect_eq "--summary: REPORT.md outside the charts" \
    "$(grep -v -e '^```' -e '^xychart' -e '^    ' -e 'png' -e '^$' "$TMP/summary.md")" \
    "$(grep -v -e 'png' -e '^$' "$TMP/sum/REPORT.md")"
expect_eq "--summary: no PNG link" "$(grep -c '](.*\.png)' "$TMP/summary.md")" 0
expect_eq "REPORT.md keeps its PNG links" "$(grep -c '](.*\.png)' "$TMP/sum/REPORT.md" | grep -c '^[1-9]')" 1
python3 "$(dirname "$0")/mermaidcheck.py" "$TMP/summary.md" 2 >"$TMP/summary.chk"
expect_eq "--summary: Mermaid blocks well formed" "$?" 0
cat "$TMP/summary.chk"
expect_match "--summary: the suite's chart" "$(cat "$TMP/summary.md")" \
    '^    title "Component suite: ns/op per benchmark'

# 3. Without gnuplot (named by H2B_GNUPLOT, then absent from PATH): written, without charts.
check_no_gnuplot() {
    local what=$1 dir=$2
    expect_match "$what: says so" "$(cat "$dir/REPORT.md")" \
        'Charts not rendered:\*\* gnuplot was not found'
    expect_eq "$what: no PNG" "$(ls "$dir" | grep -c '\.png$')" 0
    expect_eq "$what: no image links" "$(grep -c '^!\[' "$dir/REPORT.md")" 0
    expect_eq "$what: scripts kept" "$(ls "$dir" | grep -c '\.gp$')" 5
    compare_sections "$what" "$dir/REPORT.md" "## Method" "## Gated hot paths" \
        "## A/B against the base"
}
H2B_GNUPLOT=/nonexistent/gnuplot "$H2BENCH" report "${RUNS[@]}" "${FULL[@]}" -o "$TMP/nogp" \
    2>"$TMP/stderr"
expect_eq "H2B_GNUPLOT missing: exit" "$?" 0
check_no_gnuplot "H2B_GNUPLOT missing" "$TMP/nogp"
env -u H2B_GNUPLOT PATH=/nonexistent "$H2BENCH" report "${RUNS[@]}" "${FULL[@]}" \
    -o "$TMP/nopath" 2>"$TMP/stderr"
expect_eq "gnuplot not in PATH: exit" "$?" 0
check_no_gnuplot "gnuplot not in PATH" "$TMP/nopath"

# 3b. Hostile strings (issue 13 defect 2): target and benchmark names and the creation date
# carry backquotes, quotes and newlines. gnuplot runs for real; nothing may execute.
hostile() {
    python3 - "$1" "$2" "$3" <<'PY'
import json, sys
src, dst, pwn = sys.argv[1:]
d = json.load(open(src))
d["created"] = "`touch %s.created`" % pwn
for c in d.get("matrix", []):
    c["target"] = c["target"] + "`touch %s.target`'\"x\ny" % pwn
for m in d.get("micro", []):
    m["name"] = m["name"] + "`touch %s.micro`'\"@x"  % pwn
json.dump(d, open(dst, "w"))
PY
}
hostile "$DATA/base.json" "$TMP/hostile-base.json" "$TMP/pwned"
hostile "$DATA/head.json" "$TMP/hostile-head.json" "$TMP/pwned"
"$H2BENCH" report "$TMP/hostile-base.json" "$TMP/hostile-head.json" -o "$TMP/hostile" \
    2>"$TMP/stderr"
expect_eq "hostile names: exit" "$?" 0
expect_eq "hostile names: charts rendered" \
    "$(grep -c 'Charts not rendered' "$TMP/hostile/REPORT.md")" 0
expect_eq "hostile names: PNGs" "$(ls "$TMP/hostile" | grep -c '\.png$')" 5
expect_eq "hostile names: no command ran" "$(ls "$TMP" | grep -c '^pwned')" 0
expect_eq "hostile names: no backquote from the data in a script" \
    "$(cat "$TMP"/hostile/*.gp | grep -c '`touch')" 0

# 4. Failures leave the output directory as it was.
mkdir -p "$TMP/keep" && echo "previous report" >"$TMP/keep/REPORT.md"
snapshot() { (cd "$TMP/keep" && ls -A && cat REPORT.md); }
before=$(snapshot)
"$H2BENCH" report "${RUNS[@]}" -o "$TMP/keep" --gnuplot /bin/false 2>"$TMP/stderr"
expect_eq "gnuplot failing: exit" "$?" 3
expect_match "gnuplot failing: message" "$(cat "$TMP/stderr")" 'rendering charts: /bin/false exited'
expect_eq "gnuplot failing: output untouched" "$(snapshot)" "$before"
# its error quoted from the end of its log: the last lines, a long log's start left out
printf '#!/bin/sh\nseq 1 400\necho "plot x"\necho "     ^"\necho "line 3: undefined variable: x"\necho\nexit 1\n' \
    >"$TMP/badgnuplot"
chmod +x "$TMP/badgnuplot"
"$H2BENCH" report "${RUNS[@]}" -o "$TMP/keep" --gnuplot "$TMP/badgnuplot" 2>"$TMP/stderr"
expect_eq "gnuplot error: exit" "$?" 3
expect_match "gnuplot error: its last lines quoted" "$(tr '\n' '|' <"$TMP/stderr")" \
    'exited with status 1: .*\|399\|400\|plot x\|     \^\|line 3: undefined variable: x\|$'
expect_eq "gnuplot error: the log's start left out" "$(grep -c '^1$' "$TMP/stderr")" 0
expect_eq "gnuplot error: output untouched" "$(snapshot)" "$before"

bad=$TMP/bad
mkdir -p "$bad"
head -c 2000 "$DATA/head.json" >"$bad/truncated.json"
"$H2BENCH" report "${RUNS[@]}" "$bad/truncated.json" -o "$TMP/keep" 2>"$TMP/stderr"
expect_eq "truncated JSON: exit" "$?" 2
expect_match "truncated JSON: file:line:column" "$(cat "$TMP/stderr")" \
    "$bad/truncated.json:[0-9]+:[0-9]+: "
expect_eq "truncated JSON: output untouched" "$(snapshot)" "$before"

sed '0,/"p99_ns": [0-9]*/s//"p99_ns": "fast"/' "$DATA/head.json" >"$bad/type.json"
"$H2BENCH" report "$bad/type.json" -o "$TMP/keep" 2>"$TMP/stderr"
expect_eq "wrong type: exit" "$?" 2
expect_match "wrong type: names the field" "$(cat "$TMP/stderr")" \
    "$bad/type.json:[0-9]+:[0-9]+: micro\[0\]\.p99_ns: expected a non-negative integer"

# env is modelled like the rest: a fingerprint field of the wrong type is located, not skipped
jq '.env.cpus = "two"' "$DATA/head.json" >"$bad/env.json"
"$H2BENCH" report "$bad/env.json" -o "$TMP/keep" 2>"$TMP/stderr"
expect_eq "env field of the wrong type: exit" "$?" 2
expect_match "env field of the wrong type: names the field" "$(cat "$TMP/stderr")" \
    "$bad/env.json:[0-9]+:[0-9]+: env\.cpus: expected a non-negative integer"
jq '.env.warnings += [7]' "$DATA/head.json" >"$bad/env-warning.json"
"$H2BENCH" report "$bad/env-warning.json" -o "$TMP/keep" 2>"$TMP/stderr"
expect_eq "env warning not a string: exit" "$?" 2
expect_match "env warning not a string: names the element" "$(cat "$TMP/stderr")" \
    "$bad/env-warning.json:[0-9]+:[0-9]+: env\.warnings\[1\]: expected a non-empty string"

sed 's|h2bench.result/1|h2bench.result/9|' "$DATA/head.json" >"$bad/schema.json"
"$H2BENCH" report "$bad/schema.json" -o "$TMP/keep" 2>"$TMP/stderr"
expect_eq "wrong schema: exit" "$?" 2
expect_match "wrong schema: message" "$(cat "$TMP/stderr")" \
    "$bad/schema.json:[0-9]+:[0-9]+: schema: .*h2bench.result/1"

printf '{"schema": "h2bench.ceilings/1", "benchmarks": {"x": {"p99_ns": {"max": "1"}}}}\n' \
    >"$bad/ceilings.json"
"$H2BENCH" report "$DATA/head.json" --ceilings "$bad/ceilings.json" -o "$TMP/keep" \
    2>"$TMP/stderr"
expect_eq "malformed ceilings: exit" "$?" 2
expect_match "malformed ceilings: names the field" "$(cat "$TMP/stderr")" \
    "$bad/ceilings.json:1:[0-9]+: benchmarks.x.p99_ns.max: expected"

"$H2BENCH" report "$bad/absent.json" -o "$TMP/keep" 2>"$TMP/stderr"
expect_eq "missing results file: exit" "$?" 2
expect_eq "all failures: output untouched" "$(snapshot)" "$before"

# 5. Usage.
"$H2BENCH" report --help >"$TMP/stdout"
expect_eq "--help exit" "$?" 0
expect_match "--help text" "$(cat "$TMP/stdout")" 'usage: h2bench report RESULTS'
"$H2BENCH" report "$DATA/head.json" 2>"$TMP/stderr"
expect_eq "no -o: exit" "$?" 2
"$H2BENCH" report -o "$TMP/x" 2>"$TMP/stderr"
expect_eq "no results: exit" "$?" 2
"$H2BENCH" report "$DATA/head.json" -o "$TMP/x" --bogus 2>"$TMP/stderr"
expect_eq "unknown flag: exit" "$?" 2
expect_match "unknown flag: pointer to --help" "$(cat "$TMP/stderr")" "Run 'h2bench report --help'"
finish
