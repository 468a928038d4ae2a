#!/usr/bin/env bash
# gate_calibrate.sh - `h2bench gate --calibrate N`, small N on fast configurations:
#  - a trial count that is 0, negative, not a number, or options without --calibrate: exit 2;
#  - micro (one cheap benchmark, no callgrind): A/A raises no false alarm on the exact
#    allocation gates, +1 allocation per op is detected in every trial, and +1 % instructions is
#    "not applicable" without --callgrind (never counted as detected);
#  - a scenario with h2ref beside a user's command target (budget_server): A/A 0 false alarms on
#    both, +1 allocation per request detected in every h2ref trial, and the command target's
#    injection reported "not applicable", with no trial;
#  - the JSON, markdown and table outputs agree, and every rate carries its Wilson interval.
# Only counts and exit codes are asserted, never a time or a rate of a timing gate. In a sanitizer
# build the numbers cannot be gated: the test asserts that a calibration says so (exit 3).
. "$(dirname "$0")/lib.sh"
N=3
B=hpack/encode-typical-response

for bad in 0 -1 -3 x 1.5 ''; do
    "$H2BENCH" gate --calibrate "$bad" --ceilings "$SRC/gates/ceilings.json" >"$TMP/out" 2>"$TMP/err"
    expect_eq "--calibrate '$bad' exit" "$?" 2
    expect_match "--calibrate '$bad' says why" "$(cat "$TMP/err")" "--calibrate: expected the number of trials"
done
"$H2BENCH" gate --ceilings "$SRC/gates/ceilings.json" --scenario x.json >"$TMP/out" 2>"$TMP/err"
expect_eq "--scenario without --calibrate exit" "$?" 2
"$H2BENCH" gate --calibrate 2 --ceilings "$SRC/gates/ceilings.json" --inject bogus >"$TMP/out" 2>"$TMP/err"
expect_eq "--inject bogus exit" "$?" 2
"$H2BENCH" gate --calibrate 2 --ceilings "$SRC/gates/ceilings.json" --inject slow25 >"$TMP/out" 2>"$TMP/err"
expect_eq "--inject slow25 outside ab exit" "$?" 2
"$H2BENCH" gate --calibrate 2 --ceilings "$TMP/nope.json" >"$TMP/out" 2>"$TMP/err"
expect_eq "missing ceilings exit" "$?" 2

# cell FILE GATE KIND FIELD: a field of one row's tally ("-" when absent)
cell() {
    python3 - "$@" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
row = next((r for r in doc["rows"] if r["gate"] == sys.argv[2]), None)
v = (row or {}).get(sys.argv[3], {}).get(sys.argv[4], "-")
print(" ".join("%.6f" % x for x in v) if isinstance(v, list) else v)
PY
}

if "$H2BENCH" --version | grep -q sanitizers; then
    "$H2BENCH" gate --calibrate 1 --ceilings "$SRC/gates/ceilings.json" --filter "^$B\$" \
        --inject alloc >"$TMP/out" 2>"$TMP/err"
    expect_eq "sanitizer build: calibration cannot gate" "$?" 3
    expect_match "and says why" "$(cat "$TMP/err")" "cannot be gated: .*sanitizers"
    [ "$PASSED" -gt 0 ] || fail "no checks ran"
    finish
    exit
fi

# --- micro ---
"$H2BENCH" gate --calibrate $N --ceilings "$SRC/gates/ceilings.json" --filter "^$B\$" \
    --inject alloc,instr --json "$TMP/m.json" --md "$TMP/m.md" >"$TMP/m.out" 2>"$TMP/m.err"
expect_eq "micro calibrate exit" "$?" 0
expect_eq "schema" "$(python3 -c "import json; print(json.load(open('$TMP/m.json'))['schema'])")" \
    "h2bench.calibration/1"
for m in allocs_per_op bytes_per_op; do
    expect_eq "A/A $m trials" "$(cell "$TMP/m.json" "$B $m" aa trials)" $N
    expect_eq "A/A $m false alarms" "$(cell "$TMP/m.json" "$B $m" aa red)" 0
    expect_eq "+1 alloc $m trials" "$(cell "$TMP/m.json" "$B $m" alloc trials)" $N
    expect_eq "+1 alloc $m detected" "$(cell "$TMP/m.json" "$B $m" alloc red)" $N
done
# 0 of 3 and 3 of 3 at 95 %: [0, 0.561506] and [0.438494, 1]
expect_eq "A/A Wilson interval" "$(cell "$TMP/m.json" "$B allocs_per_op" aa wilson95)" \
    "0.000000 0.561506"
expect_eq "+1 alloc Wilson interval" "$(cell "$TMP/m.json" "$B allocs_per_op" alloc wilson95)" \
    "0.438494 1.000000"
expect_match "+1 % instr without --callgrind" \
    "$(cell "$TMP/m.json" "$B allocs_per_op" instr not_applicable)" "only with --callgrind"
expect_eq "no instruction trial counted" "$(cell "$TMP/m.json" "$B allocs_per_op" instr red)" "-"
expect_match "table row" "$(cat "$TMP/m.out")" \
    "^$B allocs_per_op +0/$N 0% \[0\.0, 56\.2\] +$N/$N 100% \[43\.8, 100\.0\] +n/a"
expect_match "markdown row" "$(cat "$TMP/m.md")" \
    "^\| \`$B allocs_per_op\` \| 0/$N 0% \[0\.0, 56\.2\] \| $N/$N 100% \[43\.8, 100\.0\] \| n/a \|"
expect_match "progress on stderr" "$(cat "$TMP/m.err")" "alloc $B: trial $N of $N"

# --- a scenario: h2ref and a command target ---
sed -e "s|{bin}|$BIN/../tests|g" "$SRC/tests/data/calibrate/two.json" >"$TMP/two.json"
"$H2BENCH" gate --calibrate $N --ceilings "$SRC/tests/data/calibrate/two-ceilings.json" \
    --scenario "$TMP/two.json" --inject alloc --json "$TMP/s.json" --md "$TMP/s.md" \
    >"$TMP/s.out" 2>"$TMP/s.err"
expect_eq "scenario calibrate exit" "$?" 0
for t in h2ref srv; do
    expect_eq "A/A $t trials" "$(cell "$TMP/s.json" "$t:1x1 allocs_per_request" aa trials)" $N
    expect_eq "A/A $t false alarms" "$(cell "$TMP/s.json" "$t:1x1 allocs_per_request" aa red)" 0
done
expect_eq "h2ref +1 alloc detected" "$(cell "$TMP/s.json" "h2ref:1x1 allocs_per_request" alloc red)" $N
expect_eq "h2ref +1 alloc trials" "$(cell "$TMP/s.json" "h2ref:1x1 allocs_per_request" alloc trials)" $N
expect_match "command target: not applicable" \
    "$(cell "$TMP/s.json" "srv:1x1 allocs_per_request" alloc not_applicable)" "a command target"
expect_eq "command target: never detected" "$(cell "$TMP/s.json" "srv:1x1 allocs_per_request" alloc red)" "-"
expect_match "command target n/a in the table" "$(cat "$TMP/s.out")" \
    "^srv:1x1 allocs_per_request +0/$N 0% \[0\.0, 56\.2\] +n/a"
expect_match "command target explained in markdown" "$(cat "$TMP/s.md")" \
    "^- \`srv:1x1\`, \+1 alloc: a command target"
expect_eq "no injected trial of the command target" "$(grep -c 'alloc srv' "$TMP/s.err")" 0

[ "$PASSED" -gt 0 ] || fail "no checks ran"
finish
