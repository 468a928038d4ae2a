#!/usr/bin/env bash
# compare.sh - `h2bench compare A B` on fixtures with known differences: a p99 that doubled over
# three forks is slower, an unchanged ns/op is the same, single samples say n/a, allocation
# counts are exact, matrix cells match across repeats; one verdict per row and the exit code
# follows it; malformed input exits 2.
. "$(dirname "$0")/lib.sh"
D=$SRC/tests/data/gate

"$H2BENCH" compare "$D/compare-a.json" "$D/compare-b.json" --md "$TMP/cmp.md" >"$TMP/out" 2>"$TMP/err"
expect_eq "compare exit: the verdict fails (more allocations, p99 doubled)" "$?" 1
out=$(cat "$TMP/out")
expect_match "p99 doubled is slower" "$out" '^SLOWER +fx/alloc-free +p99 +820 ns +1\.65 µs +2\.01× +\[1\.778, 2\.125\]$'
expect_match "one more allocation" "$out" '^MORE +fx/three-blocks +allocs/op +3 +4 +1\.33× +-$'
expect_match "same ns/op" "$out" '^same +fx/alloc-free +ns/op +100 ns +100 ns +1\.00× +\[0\.98'
expect_match "one sample is n/a" "$out" '^n/a +fx/tail +p99 .* - +no interval: 1 base and 1 head samples'
# cells with no "status" (what load --json and merge write) are measured cells
expect_match "matrix cell over repeats" "$out" '^SLOWER +h2ref:10x10 +req/s +100,000 +80,000 +0\.80× +\[0\.7'
# One verdict per row: one table, each (benchmark, metric) once, one closing line that is
# compare's and says what the exit code says.
expect_eq "one table" "$(grep -c '^status  benchmark  .*metric  .*base  .*head  head/base  interval  *note$' "$TMP/out")" 1
expect_eq "each row once" "$(awk 'NR > 3 && NF > 3 { print $2, $3 }' "$TMP/out" | sort | uniq -d)" ""
expect_eq "rows: 12 micro, 2 cell" "$(grep -cE '^(SLOWER|MORE|same|n/a|faster|less) ' "$TMP/out")" 14
expect_match "verdict line" "$(tail -n 1 "$TMP/out")" '^h2bench compare: FAIL: 3 slower, 2 with more allocations'
if grep -q 'h2bench ab' "$TMP/out"; then fail "compare's output names h2bench ab"; else ok; fi
expect_match "md has the verdict" "$(head -1 "$TMP/cmp.md")" '^## h2bench compare: FAIL'
expect_match "md failing row" "$(cat "$TMP/cmp.md")" '^\| ❌ SLOWER \| fx/alloc-free \| p99 \| 820 ns \| 1\.65 µs \| 2\.01× \| \[1\.778, 2\.125\] \|  \|$'
expect_match "md names the sides" "$(cat "$TMP/cmp.md")" '^Base \(A\) `.*compare-a\.json` against head \(B\) `.*compare-b\.json`\.'
# --md - through a pipe: the markdown follows the table printed before it (stdout is flushed
# before the markdown is written to fd 1).
expect_eq "md on stdout comes after the table" \
    "$("$H2BENCH" compare "$D/compare-a.json" "$D/compare-b.json" --md - 2>/dev/null | grep -nE '^(status  |## h2bench compare)' | cut -d: -f2 | cut -c1-6 | tr '\n' ' ')" \
    "status ## h2b "
"$H2BENCH" compare "$D/compare-a.json" "$D/compare-b.json" --threshold 1.5 >"$TMP/out2" 2>&1
expect_eq "a 2.01x p99 passes a 150% threshold, the allocation still fails" "$?" 1
expect_match "threshold 150%: p99 same" "$(cat "$TMP/out2")" 'same +fx/alloc-free +p99'
"$H2BENCH" compare "$D/compare-a.json" "$D/compare-b.json" --threshold x >/dev/null 2>&1
expect_eq "bad --threshold" "$?" 2

# One verdict: compare --md prints the very table of the report's "A/B against the base"
# section for the same two files.
R=$SRC/tests/data/report
"$H2BENCH" compare "$R/base.json" "$R/head.json" --md "$TMP/rc.md" >/dev/null 2>&1
"$H2BENCH" report "$R/head.json" --compare "$R/base.json" -o "$TMP/rep" >/dev/null 2>&1
expect_eq "report with --compare exit" "$?" 0
# (the table's lines, from its header to the first line that is not a row)
awk '/^\| Status / { on = 1 } on && !/^\|/ { exit } on' "$TMP/rc.md" >"$TMP/tables.compare"
awk '/^## / { ab = $0 == "## A/B against the base" } ab && /^\| Status / { on = 1 }
     on && !/^\|/ { exit } on' "$TMP/rep/REPORT.md" >"$TMP/tables.report"
expect_match "the table is there" "$(cat "$TMP/tables.compare")" '^\| Status \| Benchmark'
expect_match "the report's section has compare's verdict" "$(cat "$TMP/rep/REPORT.md")" \
    'row for row: h2bench compare: (PASS|FAIL): '
expect_eq "compare --md and the report print the same A/B tables" \
    "$(diff "$TMP/tables.compare" "$TMP/tables.report" && echo same)" same

"$H2BENCH" compare "$D/compare-a.json" "$D/compare-a.json" >"$TMP/out" 2>&1
expect_eq "self compare exit" "$?" 0
expect_eq "nothing significant against itself" "$(grep -cE '^(slower|faster|more|less|SLOWER|MORE) ' "$TMP/out")" 0
expect_match "self compare verdict" "$(cat "$TMP/out")" 'h2bench compare: PASS' 

"$H2BENCH" compare "$D/compare-a.json" "$D/results-bad-forks.json" >/dev/null 2>"$TMP/err"
expect_eq "malformed B" "$?" 2
expect_match "malformed B position" "$(cat "$TMP/err")" 'results-bad-forks\.json:87:9: '
"$H2BENCH" compare "$D/compare-a.json" >/dev/null 2>"$TMP/err"
expect_eq "one file" "$?" 2
# One usage error for a bad option in compare, ab, gate and report (apps/output.c).
for cmd in compare ab gate report; do
    "$H2BENCH" $cmd --bogus >/dev/null 2>"$TMP/err"
    expect_eq "$cmd --bogus exit" "$?" 2
    expect_match "$cmd --bogus message" "$(head -1 "$TMP/err")" "^h2bench $cmd: unknown option '--bogus'$"
done
"$H2BENCH" compare --help >/dev/null
expect_eq "--help" "$?" 0
finish
