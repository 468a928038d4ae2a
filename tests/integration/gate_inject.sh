#!/usr/bin/env bash
# gate_inject.sh - the gate catches real regressions in the real component suite: with
# H2B_INJECT_ALLOC one benchmark makes one extra allocation per operation and the allocation gate
# fails (exit 1) naming the benchmark and metric; with H2B_INJECT_SLOW one benchmark does its
# work twice and the p99 gate fails (exit 1) after its confirmation re-run, which inherits the
# injection. Against the committed gates/ceilings.json. In a sanitizer build the numbers cannot
# be gated, and the test asserts the gate says so (exit 3) instead.
. "$(dirname "$0")/lib.sh"
C=$SRC/gates/ceilings.json
ALLOC=hpack/encode-typical-response
SLOW=h2/response-encoding/8
sanitized=0
"$H2BENCH" --version | grep -q sanitizers && sanitized=1

micro() { "$H2BENCH" micro --profile ci --filter "^$1\$" --json "$2" >/dev/null 2>"$TMP/micro.err"; }
gate() { "$H2BENCH" gate --ceilings "$C" --filter "^$1\$" --results "$2" >"$TMP/out" 2>"$TMP/err"; echo $?; }

micro "$ALLOC" "$TMP/plain.json"
expect_eq "micro runs" "$?" 0
if [ "$sanitized" = 1 ]; then
    expect_eq "sanitizer build cannot be gated" "$(gate "$ALLOC" "$TMP/plain.json")" 3
    expect_match "and says why" "$(cat "$TMP/err")" 'sanitizers'
    finish
    exit $?
fi
expect_eq "unchanged code passes" "$(gate "$ALLOC" "$TMP/plain.json")" 0

H2B_INJECT_ALLOC=$ALLOC micro "$ALLOC" "$TMP/alloc.json"
expect_eq "micro with one more allocation" "$?" 0
expect_eq "allocation gate fails" "$(gate "$ALLOC" "$TMP/alloc.json")" 1
expect_match "names benchmark and allocs/op" "$(cat "$TMP/out")" "^FAIL +$ALLOC +allocs/op .* 1 over the ceiling"
expect_match "names benchmark and B/op" "$(cat "$TMP/out")" "^FAIL +$ALLOC +B/op .* 16 over the ceiling"

export H2B_INJECT_SLOW=$SLOW
micro "$SLOW" "$TMP/slow.json"
expect_eq "micro with twice the work" "$?" 0
expect_eq "p99 gate fails" "$(gate "$SLOW" "$TMP/slow.json")" 1
expect_match "names benchmark and p99, confirmed" "$(cat "$TMP/out")" "^FAIL +$SLOW +p99 .*confirmed by re-run 1"
unset H2B_INJECT_SLOW
finish
