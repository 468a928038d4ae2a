#!/usr/bin/env bash
# compare.sh - `h2bench compare A B` on fixtures with known differences: a p99 that doubled over
# three forks is significant, an unchanged ns/op is not, single samples say n/a, allocation
# counts are exact, matrix cells match across repeats; malformed input exits 2.
. "$(dirname "$0")/lib.sh"
D=$SRC/tests/data/gate

"$H2BENCH" compare "$D/compare-a.json" "$D/compare-b.json" --md "$TMP/cmp.md" >"$TMP/out" 2>"$TMP/err"
expect_eq "compare exit: the verdict fails (more allocations, p99 doubled)" "$?" 1
out=$(cat "$TMP/out")
expect_match "verdict: p99 doubled is slower" "$out" 'SLOWER +fx/alloc-free +p99 +820 ns +1\.65 µs +2\.01× +\[1\.778, 2\.125\]'
expect_match "verdict: one more allocation" "$out" 'MORE +fx/three-blocks +allocs/op +3 +4'
expect_match "verdict line" "$out" 'h2bench ab: FAIL: 1 slower, 2 with more allocations'
expect_match "md has the verdict" "$(cat "$TMP/cmp.md")" '## h2bench ab: FAIL'
# --md - through a pipe: the markdown follows the tables printed before it (stdout is flushed
# before the markdown is written to fd 1).
expect_eq "md on stdout comes after the tables" \
    "$("$H2BENCH" compare "$D/compare-a.json" "$D/compare-b.json" --md - 2>/dev/null | grep -nE '^(status  |## h2bench compare)' | cut -d: -f2 | cut -c1-6 | tr '\n' ' ')" \
    "status status ## h2b "
"$H2BENCH" compare "$D/compare-a.json" "$D/compare-b.json" --threshold 1.5 >"$TMP/out2" 2>&1
expect_eq "a 1.96x p99 passes a 150% threshold, the allocation still fails" "$?" 1
expect_match "threshold 150%: p99 same" "$(cat "$TMP/out2")" 'same +fx/alloc-free +p99'
"$H2BENCH" compare "$D/compare-a.json" "$D/compare-b.json" --threshold x >/dev/null 2>&1
expect_eq "bad --threshold" "$?" 2
# p99 forks 800/820/900 vs 1600/1650/1700: Welch 99.9% interval [447, 1173] ns.
expect_match "p99 doubled is significant" "$out" '^slower +fx/alloc-free +p99 +840 ns +1\.65 µs +1\.96× +\[\+447 ns, \+1\.17 µs\] +99\.9% CI of head − base, 3\+3 forks$'
expect_match "same ns/op is not" "$out" '^same +fx/alloc-free +ns/op +100 ns +100 ns +1\.00× +\[−'
expect_match "one sample is n/a" "$out" '^n/a +fx/tail +p99 .* - +1\+1 fork: no interval, needs 2 a side$'
expect_match "exact allocations" "$out" '^more +fx/three-blocks +allocs/op +3 +4 +1\.33× +- +exact counts differ$'
expect_match "matrix cell over repeats" "$out" '^slower +h2ref h2bench c=10 s=10 +req/s +100,167 +80,167 +0\.80× +\[−25,369, −14,631\]'
expect_match "lower latency p50 unchanged" "$out" '^same +h2ref h2bench c=10 s=10 +latency p50 '
# One A/B renderer: compare's rows and ab's verdict are laid out by the same table.
expect_eq "one header for both tables" "$(grep -c '^status  benchmark  .*metric  .*base  .*head  head/base  interval  *note$' "$TMP/out")" 2
expect_match "md verdict" "$(head -1 "$TMP/cmp.md")" '^## h2bench compare: 5 significantly worse, 0 significantly better, 15 rows'
expect_match "md row" "$(cat "$TMP/cmp.md")" '^\| slower \| fx/alloc-free \| p99 \| 840 ns \| 1\.65 µs \| 1\.96× \| \[\+447 ns, \+1\.17 µs\] \| 99\.9% CI of head − base, 3\+3 forks \|$'
expect_match "md failing row of the verdict" "$(cat "$TMP/cmp.md")" '^\| ❌ SLOWER \| fx/alloc-free \| p99 \| 820 ns \| 1\.65 µs \| 2\.01× \| \[1\.778, 2\.125\] \|  \|$'
expect_match "md names the sides" "$(cat "$TMP/cmp.md")" '^Base \(A\) `.*compare-a\.json` against head \(B\) `.*compare-b\.json`\.'
expect_match "md one sample" "$(cat "$TMP/cmp.md")" '^\| n/a \| fx/tail \| ns/op \| .* \| 1\+1 fork: no interval, needs 2 a side \|$'

# One A/B renderer: compare --md prints the very tables of the report's "A/B against the base"
# section for the same two files.
R=$SRC/tests/data/report
"$H2BENCH" compare "$R/base.json" "$R/head.json" --md "$TMP/rc.md" >/dev/null 2>&1
"$H2BENCH" report "$R/head.json" --compare "$R/base.json" -o "$TMP/rep" >/dev/null 2>&1
expect_eq "report with --compare exit" "$?" 0
# (from the first "### " to the next "## ", trailing blank lines dropped)
trim() { sed -e :a -e '/^\n*$/{$d;N;ba' -e '}'; }
awk '/^## / && on { exit } /^### / { on = 1 } on' "$TMP/rc.md" | trim >"$TMP/tables.compare"
awk '/^## / { ab = $0 == "## A/B against the base" } ab && /^### / { on = 1 } ab && on' \
    "$TMP/rep/REPORT.md" | trim >"$TMP/tables.report"
expect_match "the tables are there" "$(cat "$TMP/tables.compare")" '^### Component benchmarks'
expect_eq "compare --md and the report print the same A/B tables" \
    "$(diff "$TMP/tables.compare" "$TMP/tables.report" && echo same)" same

"$H2BENCH" compare "$D/compare-a.json" "$D/compare-a.json" >"$TMP/out" 2>&1
expect_eq "self compare exit" "$?" 0
expect_eq "nothing significant against itself" "$(grep -cE '^(slower|faster|more|less|SLOWER|MORE) ' "$TMP/out")" 0
expect_match "self compare verdict" "$(cat "$TMP/out")" 'h2bench ab: PASS' 

"$H2BENCH" compare "$D/compare-a.json" "$D/results-bad-forks.json" >/dev/null 2>"$TMP/err"
expect_eq "malformed B" "$?" 2
expect_match "malformed B position" "$(cat "$TMP/err")" 'results-bad-forks\.json:87:9: '
"$H2BENCH" compare "$D/compare-a.json" >/dev/null 2>"$TMP/err"
expect_eq "one file" "$?" 2
# One usage error for a bad option in compare, ab, gate and report (apps/output.c).
for cmd in compare ab gate report; do
    "$H2BENCH" $cmd --bogus >/dev/null 2>"$TMP/err"
    expect_eq "$cmd --bogus exit" "$?" 2
    expect_match "$cmd --bogus message" "$(head -1 "$TMP/err")" "^h2bench $cmd: unknown or incomplete option '--bogus'$"
done
"$H2BENCH" compare --help >/dev/null
expect_eq "--help" "$?" 0
finish
