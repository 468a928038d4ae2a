#!/usr/bin/env bash
# gate_inject.sh - the gate catches real regressions in the real component suite: with
# H2B_INJECT_ALLOC one benchmark makes one extra allocation per operation and the allocation gate
# fails (exit 1) naming the benchmark and metric, against the committed gates/ceilings.json
# (exact counts hold on any machine with the same build); the extra allocation also raises the
# callgrind instruction count past its committed ceiling, and two runs count identically. With
# H2B_INJECT_SLOW one benchmark takes ten times as long and the p99 gate fails (exit 1) after its
# confirmation re-run, which inherits the injection. p99 ceilings hold only on the machine that set them, so the p99 half proposes
# its ceiling here first (3 runs, pinned, default headroom), then checks a fresh unchanged run
# (passes) and an injected one (fails): nothing is compared with a time measured elsewhere.
# In a sanitizer build the numbers cannot be gated, and the test asserts the gate says so
# (exit 3) instead. CTest runs it RUN_SERIAL: another test on the other core must not be part
# of one run and not of the other.
. "$(dirname "$0")/lib.sh"
C=$SRC/gates/ceilings.json
ALLOC=hpack/encode-typical-response
SLOW=h2/response-encoding/8
sanitized=0
"$H2BENCH" --version | grep -q sanitizers && sanitized=1

CPU=0
micro() { "$H2BENCH" micro --profile ci --cpu $CPU --filter "^$1\$" --json "$2" "${@:3}" >/dev/null 2>"$TMP/micro.err"; }
gate_with() { "$H2BENCH" gate --ceilings "$1" --cpu $CPU --filter "^$2\$" --results "$3" >"$TMP/out" 2>"$TMP/err"; echo $?; }
# The exact half: the committed ceilings with their machine-bound p99 rows left out.
jq 'del(.benchmarks[].p99_ns)' "$C" >"$TMP/exact.json"
gate() { gate_with "$TMP/exact.json" "$@"; }

if [ "$sanitized" = 1 ]; then
    # valgrind cannot run an ASan/TSan binary: the sanitized half runs without --callgrind.
    micro "$ALLOC" "$TMP/plain.json"
    expect_eq "micro runs" "$?" 0
    expect_eq "sanitizer build cannot be gated" "$(gate "$ALLOC" "$TMP/plain.json")" 3
    expect_match "and says why" "$(cat "$TMP/err")" 'sanitizers'
    finish
    exit $?
fi
micro "$ALLOC" "$TMP/plain.json" --callgrind
expect_eq "micro runs" "$?" 0
expect_eq "unchanged code passes" "$(gate "$ALLOC" "$TMP/plain.json")" 0
expect_match "instructions gated" "$(cat "$TMP/out")" "^PASS +$ALLOC +instr/op"
micro "$ALLOC" "$TMP/plain2.json" --callgrind
expect_eq "two runs count the same instructions" \
    "$(jq '.micro[0].instructions_per_op' "$TMP/plain2.json")" "$(jq '.micro[0].instructions_per_op' "$TMP/plain.json")"
expect_eq "counted by callgrind" "$(jq -r '.micro[0].instructions_source' "$TMP/plain.json")" callgrind

H2B_INJECT_ALLOC=$ALLOC micro "$ALLOC" "$TMP/alloc.json" --callgrind
expect_eq "micro with one more allocation" "$?" 0
expect_eq "allocation gate fails" "$(gate "$ALLOC" "$TMP/alloc.json")" 1
expect_match "names benchmark and allocs/op" "$(cat "$TMP/out")" "^FAIL +$ALLOC +allocs/op .* 1 over the ceiling"
expect_match "names benchmark and B/op" "$(cat "$TMP/out")" "^FAIL +$ALLOC +B/op .* 16 over the ceiling"
expect_match "the instruction gate fails too" "$(cat "$TMP/out")" "^FAIL +$ALLOC +instr/op .* over the ceiling"
# Without instruction counts the committed instruction ceiling cannot be judged: invalid.
micro "$ALLOC" "$TMP/nocg.json"
expect_eq "instruction ceiling, no count: invalid" "$(gate "$ALLOC" "$TMP/nocg.json")" 3

# p99: ceilings proposed on this machine, now, from three runs of the unchanged code, with the
# fresh run checked against them taken between the first and the second. RUN_SERIAL keeps other
# tests off the machine, but not what runs beside the suite (CI's sanitizer builds start and end
# during it): taken after all three, a fresh run and both its confirmations once breached a
# ceiling set under lighter load (the clean-clone CI run of 211c6e4). Between them, a change of
# load lies on both sides of it.
micro "$SLOW" "$TMP/base1.json"
micro "$SLOW" "$TMP/fresh.json"
for i in 2 3; do micro "$SLOW" "$TMP/base$i.json"; done
"$H2BENCH" gate --propose --filter "^$SLOW\$" --results "$TMP"/base{1,2,3}.json \
    --write "$TMP/local.json" >/dev/null 2>"$TMP/err"
expect_eq "propose p99 ceiling here" "$?" 0
expect_match "proposal has a p99 ceiling" "$(cat "$TMP/local.json")" '"p99_ns"'

# A breach of unchanged code is noise by definition: two confirmations must both breach too
# before it counts (a burst from outside this test rarely lasts three runs).
expect_eq "fresh unchanged run passes the local p99 ceiling" \
    "$("$H2BENCH" gate --ceilings "$TMP/local.json" --cpu $CPU --confirm 2 --filter "^$SLOW\$" \
        --results "$TMP/fresh.json" >"$TMP/out" 2>"$TMP/err"; echo $?)" 0

# Ten times slower (a busy wait of 900 % of each call after it): the ceiling was set minutes
# earlier, and on a shared machine the load can differ between then and the check by more than
# the 35 % headroom allows for a mere doubling (a 2x run breached at 3535 ns, its confirmation
# re-run measured 2063 ns against a 2321 ns ceiling set under heavier load). How often the gate
# catches 2x and +25 % is measured, not asserted: h2bench gate --calibrate (docs/gates.md).
export H2B_INJECT_SLOW=$SLOW H2B_INJECT_SLOW_PERCENT=900
micro "$SLOW" "$TMP/slow.json"
expect_eq "micro with ten times the work" "$?" 0
expect_eq "p99 gate fails" "$(gate_with "$TMP/local.json" "$SLOW" "$TMP/slow.json")" 1
expect_match "names benchmark and p99, confirmed" "$(cat "$TMP/out")" "^FAIL +$SLOW +p99 .*confirmed by re-run 1"
unset H2B_INJECT_SLOW H2B_INJECT_SLOW_PERCENT
finish
