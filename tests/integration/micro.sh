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
expect_match "pointer to --help on stderr" "$(cat "$TMP/err")" "Run 'h2bench micro --help'"

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
    # The benchmark keeps its environment under callgrind; the padding keeps the count from
    # moving with it (a 3000-byte variable more gives the same count).
    H2B_SELFTEST_LOG=$TMP/cg-obs.log H2B_SELFTEST_ENV=kept "$SELF" --filter observe --forks 1 \
        "${FAST[@]}" --callgrind --json "$TMP/cg-obs.json" >/dev/null 2>&1
    expect_eq "callgrind with the environment: exit" "$?" 0
    expect_match "the callgrind pass sees the benchmark's environment" \
        "$(grep 'pad=1' "$TMP/cg-obs.log")" '^fork=0 env=kept pad=1$'
    H2B_SELFTEST_BIG=$(head -c 3000 /dev/zero | tr '\0' y) "$SELF" --filter tiny --forks 1 \
        "${FAST[@]}" --callgrind --json "$TMP/cg3.json" >/dev/null 2>&1
    expect_eq "callgrind count does not move with the environment" \
        "$(entry "$TMP/cg3.json" selftest/tiny .instructions_per_op)" "$a"
    # valgrind comes from PATH or $H2B_VALGRIND, never a fixed /usr/bin path.
    mkdir -p "$TMP/vgbin"
    printf '#!/bin/sh\necho used >>"%s"\nexec %s "$@"\n' "$TMP/vg.log" "$(command -v valgrind)" \
        >"$TMP/vgbin/valgrind"
    chmod +x "$TMP/vgbin/valgrind"
    PATH="$TMP/vgbin:$PATH" "$SELF" --filter tiny --forks 1 "${FAST[@]}" --callgrind \
        --json "$TMP/cg-path.json" >/dev/null 2>&1
    expect_eq "valgrind found on PATH: exit" "$?" 0
    expect_eq "the valgrind on PATH ran" "$(cat "$TMP/vg.log" 2>/dev/null)" used
    H2B_VALGRIND=$TMP/vgbin/valgrind "$SELF" --filter tiny --forks 1 "${FAST[@]}" --callgrind \
        --json "$TMP/cg-env.json" >/dev/null 2>&1
    expect_eq "H2B_VALGRIND: exit" "$?" 0
    expect_eq "H2B_VALGRIND ran" "$(cat "$TMP/vg.log" | wc -l)" 2
    H2B_VALGRIND=$TMP/no-such-valgrind "$SELF" --filter tiny --forks 1 "${FAST[@]}" --callgrind \
        --json "$TMP/cg-bad.json" >"$TMP/cg-bad.out" 2>&1
    expect_eq "H2B_VALGRIND not a program: exit 3" "$?" 3
    expect_match "names it" "$(entry "$TMP/cg-bad.json" selftest/tiny .error)" \
        "H2B_VALGRIND=$TMP/no-such-valgrind is not an executable program"
    PATH=$TMP/empty "$SELF" --filter tiny --forks 1 "${FAST[@]}" --callgrind \
        --json "$TMP/cg-nopath.json" >/dev/null 2>&1
    expect_eq "no valgrind on PATH: exit 3" "$?" 3
    expect_match "says so" "$(entry "$TMP/cg-nopath.json" selftest/tiny .error)" \
        'valgrind is not on PATH'
else
    echo "skip: --callgrind (a sanitizer build cannot run under valgrind)"
fi

# --- fork index, environment, call-by-call sampling ------------------------------------------------
H2B_SELFTEST_LOG=$TMP/obs.log H2B_SELFTEST_ENV=kept "$SELF" --filter observe --forks 3 \
    "${FAST[@]}" >/dev/null 2>&1
expect_eq "observe exit" "$?" 0
expect_eq "h2b_micro_fork_index: 0..forks-1" \
    "$(sed -n 's/^fork=\([0-9]*\) .*/\1/p' "$TMP/obs.log" | sort -un | tr '\n' ' ')" "0 1 2 "
expect_eq "every fork sees the environment" "$(grep -vc ' env=kept ' "$TMP/obs.log")" 0
"$SELF" --filter 'alloc-none|per-call' --forks 1 "${FAST[@]}" --json "$TMP/batch.json" \
    >/dev/null 2>&1
expect_eq "batch run exit" "$?" 0
expect_match "a cheap call is sampled in batches" \
    "$(entry "$TMP/batch.json" selftest/alloc-none .sample_batch)" '^([2-9]|[1-9][0-9]+)$'
expect_eq ".sample_per_call: one call per sample" \
    "$(entry "$TMP/batch.json" selftest/per-call .sample_batch)" 1
"$SELF" --filter alloc-none --forks 1 "${FAST[@]}" --sample-per-call --json "$TMP/batch1.json" \
    >/dev/null 2>&1
expect_eq "--sample-per-call: one call per sample" \
    "$(entry "$TMP/batch1.json" selftest/alloc-none .sample_batch)" 1

# --- the header's example compiles clean under -Wpedantic -Werror ---------------------------------
{
    printf '#include "h2bench/micro.h"\nstatic const char input[] = "42";\n'
    printf 'static int my_parse(const char *s) { return s[0]; }\n'
    sed -n '1,/^#ifndef/p' "$SRC/include/h2bench/micro.h" | sed -n 's/^ \*     //p'
} >"$TMP/header_example.c"
expect_match "header example extracted" "$(cat "$TMP/header_example.c")" 'H2B_MICRO_BENCH\(parse'
for std in c11 gnu11 c17; do
    cc -std=$std -Wall -Wpedantic -Werror -I"$SRC/include" -c "$TMP/header_example.c" \
        -o "$TMP/header_example.o" 2>"$TMP/pedantic.err"
    expect_eq "header example: -std=$std -Wpedantic -Werror" "$?" 0
    [ -s "$TMP/pedantic.err" ] && cat "$TMP/pedantic.err" >&2
done

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
