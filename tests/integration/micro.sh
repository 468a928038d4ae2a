#!/usr/bin/env bash
# micro.sh - the micro runner against benchmarks with known truth (micro_selftest), its options,
# output formats and exit codes, and one short in-process pass over the built-in HTTP/2 suite.
# Asserts what is measured exactly (allocations, instruction counts, which mode a percentile is
# in, process ids), never how fast anything is.
. "$(dirname "$0")/lib.sh"

SELF=$BIN/micro_selftest
FAST=(--warmup 1ms --time 20ms --epochs 5)
sanitized=no
if "$H2BENCH" --version | grep -q sanitizers; then sanitized=yes; fi
j() { jq -r "$2" "$1"; }
entry() { jq -r --arg n "$2" ".micro[] | select(.name == \$n) | $3" "$1"; }

# --- listing, filtering, usage errors --------------------------------------------------------
out=$("$SELF" --list); rc=$?
expect_eq "--list exit" "$rc" 0
expect_match "--list names" "$out" '^selftest/alloc-3x64$'
expect_eq "--filter" "$("$SELF" --list --filter 'alloc-(none|lazy)$' | tr '\n' ' ')" \
    "selftest/alloc-none selftest/alloc-lazy "
"$SELF" --forks x >/dev/null 2>"$TMP/err"; rc=$?
expect_eq "bad --forks exit" "$rc" 2
expect_match "bad --forks message" "$(cat "$TMP/err")" 'forks wants'
"$SELF" --profile nope >/dev/null 2>&1; expect_eq "bad --profile exit" "$?" 2
"$SELF" --filter '(' >/dev/null 2>&1; expect_eq "bad --filter exit" "$?" 2
"$SELF" --filter 'no-such-bench' >/dev/null 2>&1; expect_eq "no match exit" "$?" 2
"$SELF" --help >"$TMP/help"; expect_eq "--help exit" "$?" 0
expect_match "--help text" "$(cat "$TMP/help")" '--format FMT'
"$H2BENCH" micro --bogus >/dev/null 2>"$TMP/err"; expect_eq "h2bench micro bad flag" "$?" 2
expect_match "usage on stderr" "$(cat "$TMP/err")" 'usage:'

# --- --cpu pins the runner and, through inheritance, its forks ----------------------------------
"$SELF" --filter alloc-none --cpu 0 --forks 1 "${FAST[@]}" --json "$TMP/cpu.json" >/dev/null 2>&1
expect_eq "--cpu 0 exit" "$?" 0
expect_eq "--cpu 0 measured" "$(entry "$TMP/cpu.json" selftest/alloc-none .forks)" 1
"$SELF" --cpu 99999 >/dev/null 2>&1; expect_eq "bad --cpu exit" "$?" 2

# --- a failing benchmark is exit 3 and says why ---------------------------------------------------
"$SELF" --filter fails "${FAST[@]}" >"$TMP/out" 2>&1; rc=$?
expect_eq "failing benchmark exit" "$rc" 3
expect_match "failure reason" "$(cat "$TMP/out")" 'FAILED: deliberate failure'

# --- allocation, percentiles, instructions, forks (one run, JSON) --------------------------------
"$SELF" --filter 'alloc|bimodal' --forks 3 --warmup 1ms --time 150ms --epochs 5 \
    --json "$TMP/r.json" >"$TMP/out" & runner=$!
wait $runner; rc=$?
expect_eq "selftest run exit" "$rc" 0
expect_eq "schema" "$(j "$TMP/r.json" .schema)" "h2bench.result/1"
if [ "$sanitized" = no ]; then
    expect_eq "3x64 allocs/op" "$(entry "$TMP/r.json" selftest/alloc-3x64 .allocs_per_op)" 3
    expect_eq "3x64 B/op" "$(entry "$TMP/r.json" selftest/alloc-3x64 .bytes_per_op)" 192
    expect_eq "3x64 deterministic" \
        "$(entry "$TMP/r.json" selftest/alloc-3x64 .alloc_deterministic)" true
    expect_eq "none allocs/op" "$(entry "$TMP/r.json" selftest/alloc-none .allocs_per_op)" 0
    expect_eq "none B/op" "$(entry "$TMP/r.json" selftest/alloc-none .bytes_per_op)" 0
    expect_eq "lazy allocs/op" "$(entry "$TMP/r.json" selftest/alloc-lazy .allocs_per_op)" 0
    expect_eq "lazy B/op" "$(entry "$TMP/r.json" selftest/alloc-lazy .bytes_per_op)" 0
else
    echo "skip: exact allocation checks (sanitizer build: the sanitizer owns malloc)"
    expect_eq "alloc null under sanitizers" \
        "$(entry "$TMP/r.json" selftest/alloc-3x64 .allocs_per_op)" null
    expect_match "alloc reason under sanitizers" \
        "$(entry "$TMP/r.json" selftest/alloc-3x64 .note)" 'allocation counting unavailable'
fi
# bimodal: ~5 us, every 64th op ~200 us. p50 in the fast mode, p99 in the slow one.
p50=$(entry "$TMP/r.json" selftest/bimodal .p50_ns)
p99=$(entry "$TMP/r.json" selftest/bimodal .p99_ns)
expect_match "bimodal p50 in fast mode ($p50)" "$([ "$p50" -ge 4000 ] && [ "$p50" -lt 50000 ] && echo yes)" yes
expect_match "bimodal p99 in slow mode ($p99)" "$([ "$p99" -ge 150000 ] && echo yes)" yes
# forks: three distinct child processes, none of them the runner
pids=$(entry "$TMP/r.json" selftest/bimodal '.fork_pids | map(tostring) | join(" ")')
expect_eq "three fork pids" "$(echo "$pids" | wc -w)" 3
expect_eq "fork pids distinct" "$(echo "$pids" | tr ' ' '\n' | sort -u | wc -l)" 3
expect_eq "forks are not the runner" "$(echo "$pids" | tr ' ' '\n' | grep -cx "$runner")" 0
expect_eq "forks field" "$(entry "$TMP/r.json" selftest/bimodal .forks)" 3
expect_eq "per-fork p99s" "$(entry "$TMP/r.json" selftest/bimodal '.fork_p99_ns | length')" 3
expect_match "merged histogram" "$(entry "$TMP/r.json" selftest/bimodal .histogram)" '^h2bh1:'
# instructions: no hardware counters here -> null with the reason
expect_eq "instructions null" "$(entry "$TMP/r.json" selftest/bimodal .instructions_per_op)" null
expect_match "instructions reason" "$(entry "$TMP/r.json" selftest/bimodal .note)" \
    'instructions_per_op: perf_event_open'

# --- exporters ------------------------------------------------------------------------------
"$SELF" --filter 'alloc-none' --forks 2 "${FAST[@]}" --format gbench >"$TMP/gb.json" 2>/dev/null
expect_eq "gbench exit" "$?" 0
expect_eq "gbench one iteration entry per fork, then 3 aggregates" \
    "$(j "$TMP/gb.json" '[.benchmarks[].run_type] | join(" ")')" "iteration iteration aggregate aggregate aggregate"
expect_eq "gbench fields" "$(j "$TMP/gb.json" '.benchmarks[1] | [.name, .run_type, .time_unit,
    .repetition_index, (.real_time > 0), (.cpu_time >= 0)] | join(",")')" \
    "selftest/alloc-none,iteration,ns,1,true,true"
expect_eq "gbench context" "$(j "$TMP/gb.json" '.context | has("caches") and has("date")')" true
"$SELF" --filter 'alloc-3x64' --forks 1 "${FAST[@]}" --format gab >"$TMP/gab.json" 2>/dev/null
expect_eq "gab exit" "$?" 0
expect_eq "gab shape" "$(j "$TMP/gab.json" 'type == "array" and all(.[]; has("name") and has("unit")
    and (.value | type == "number"))')" true
expect_match "gab ns/op" "$(j "$TMP/gab.json" '.[].name')" 'selftest/alloc-3x64 - ns/op'

# --- callgrind: deterministic instruction counts --------------------------------------------------
if [ "$sanitized" = no ]; then
    for i in 1 2; do
        "$SELF" --filter tiny --forks 1 "${FAST[@]}" --callgrind --json "$TMP/cg$i.json" \
            >/dev/null 2>&1
        expect_eq "callgrind run $i exit" "$?" 0
    done
    a=$(entry "$TMP/cg1.json" selftest/tiny .instructions_per_op)
    b=$(entry "$TMP/cg2.json" selftest/tiny .instructions_per_op)
    expect_match "callgrind counted ($a)" "$a" '^[0-9]'
    expect_eq "callgrind runs identical" "$a" "$b"
    expect_eq "callgrind source" "$(entry "$TMP/cg1.json" selftest/tiny .instructions_source)" \
        callgrind
else
    echo "skip: --callgrind (a sanitizer build cannot run under valgrind)"
fi

# --- the built-in suite: every benchmark runs and checks itself -----------------------------------
out=$("$H2BENCH" micro --list)
for name in h2/stream-lifecycle h2/response-encoding/1 h2/response-encoding/8 \
    h2/response-encoding/64 h2/response-encoding/256 hpack/decode-browser-request \
    hpack/encode-typical-response h2/frame-read-validate-discard h2/post-1k-lifecycle \
    h2/stream-1mib-response h2ref/route-and-respond; do
    expect_match "suite has $name" "$out" "^$name\$"
done
"$H2BENCH" micro --forks 0 --warmup 1ms --time 5ms --epochs 3 --json "$TMP/suite.json" \
    >"$TMP/suite.out" 2>&1
expect_eq "suite exit" "$?" 0
expect_eq "suite entries" "$(j "$TMP/suite.json" '.micro | length')" "$(echo "$out" | wc -l)"
expect_eq "suite no errors" "$(j "$TMP/suite.json" '[.micro[] | select(has("error"))] | length')" 0
finish
