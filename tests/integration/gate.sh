#!/usr/bin/env bash
# gate.sh - `h2bench gate` on fixture results: every exit code, exact allocation ceilings, the
# robust p99 check with its confirmation re-runs (through a fake runner), malformed inputs with
# file:line:column, --strict, the markdown and JUnit outputs, and --propose never touching the
# ceilings file.
. "$(dirname "$0")/lib.sh"
D=$SRC/tests/data/gate
C=$D/ceilings.json
FAKE=$SRC/tests/integration/fake_runner.sh

gate() { "$H2BENCH" gate "$@" >"$TMP/out" 2>"$TMP/err"; echo $?; }

# --- verdicts ---------------------------------------------------------------------------------
expect_eq "pass exit" "$(gate --ceilings "$C" --results "$D/results-pass.json")" 0
expect_match "pass verdict" "$(cat "$TMP/out")" '^PASS: 9 passed, 0 exceeded, 0 missing'

expect_eq "one byte more per op exit" "$(gate --ceilings "$C" --results "$D/results-alloc-byte.json")" 1
expect_match "one byte more names benchmark and metric" "$(cat "$TMP/out")" \
    '^FAIL +fx/three-blocks +B/op +192 +192 +193 '
expect_eq "one allocation more exit" "$(gate --ceilings "$C" --results "$D/results-alloc-count.json")" 1
expect_match "one allocation more row" "$(cat "$TMP/out")" '^FAIL +fx/three-blocks +allocs/op .* 4 '

expect_eq "p99 breach without confirmation" \
    "$(gate --ceilings "$C" --results "$D/results-p99.json" --confirm 0)" 1
expect_match "p99 row" "$(cat "$TMP/out")" '^FAIL +fx/tail +p99 .*9000 ns.*no confirmation re-run'

# The best fork decides: one fork disturbed to 31 us does not fail a 6 us ceiling.
expect_eq "noisy fork passes" "$(gate --ceilings "$C" --results "$D/results-noisy-fork.json")" 0

# Confirmation re-runs: only the breached benchmark, with the CI profile.
export FAKE_RUNNER_LOG=$TMP/runner.log
: >"$FAKE_RUNNER_LOG"
export FAKE_RUNNER_OUTPUTS="$D/rerun-tail-pass.json"
expect_eq "unconfirmed breach passes" \
    "$(gate --ceilings "$C" --results "$D/results-p99.json" --runner "$FAKE" --cpu 0)" 0
expect_match "unconfirmed evidence" "$(cat "$TMP/out")" 'breach not confirmed: re-run 1 p99 4100 ns'
expect_eq "one re-run" "$(wc -l <"$FAKE_RUNNER_LOG")" 1
expect_eq "re-run arguments" "$(cat "$FAKE_RUNNER_LOG")" \
    "micro --profile ci --json $(sed -n 's/.*--json \([^ ]*\).*/\1/p' "$FAKE_RUNNER_LOG") --cpu 0 --filter ^fx/tail\$"

: >"$FAKE_RUNNER_LOG"
export FAKE_RUNNER_OUTPUTS="$D/rerun-tail-breach.json $D/rerun-tail-breach.json"
expect_eq "confirmed breach fails" \
    "$(gate --ceilings "$C" --results "$D/results-p99.json" --runner "$FAKE" --confirm 2)" 1
expect_match "confirmed evidence" "$(cat "$TMP/out")" 'confirmed by re-run 2: 9100 ns'
expect_eq "two re-runs" "$(wc -l <"$FAKE_RUNNER_LOG")" 2

: >"$FAKE_RUNNER_LOG"
export FAKE_RUNNER_OUTPUTS="$D/rerun-tail-breach.json $D/rerun-tail-pass.json"
expect_eq "every confirmation must breach" \
    "$(gate --ceilings "$C" --results "$D/results-p99.json" --runner "$FAKE" --confirm 2)" 0

: >"$FAKE_RUNNER_LOG"
expect_eq "re-run that cannot run is invalid" "$(FAKE_RUNNER_EXIT=1 gate --ceilings "$C" \
    --results "$D/results-p99.json" --runner "$FAKE")" 3
expect_match "re-run failure evidence" "$(cat "$TMP/out")" '^INVALID +fx/tail +p99 .*could not run'
expect_eq "missing runner is invalid" "$(gate --ceilings "$C" --results "$D/results-p99.json" \
    --runner "$TMP/no-such-runner")" 3

# Missing and unceilinged benchmarks.
expect_eq "missing benchmark fails" "$(gate --ceilings "$C" --results "$D/results-missing.json")" 1
expect_match "missing row" "$(cat "$TMP/out")" '^MISSING +fx/tail '
expect_eq "benchmark without ceiling passes" "$(gate --ceilings "$C" --results "$D/results-extra.json")" 0
expect_match "ungated row" "$(cat "$TMP/out")" '^ungated +fx/new '
expect_eq "--strict fails it" "$(gate --ceilings "$C" --results "$D/results-extra.json" --strict)" 1
# --filter: a partial run is gated on its own benchmarks only.
expect_eq "filter skips the missing" "$(gate --ceilings "$C" --results "$D/results-missing.json" \
    --filter '^fx/(alloc-free|three-blocks)$')" 0
expect_eq "filter keeps failures" "$(gate --ceilings "$C" --results "$D/results-alloc-byte.json" \
    --filter 'three')" 1
expect_eq "filter bad regex" "$(gate --ceilings "$C" --results "$D/results-pass.json" --filter '(')" 2

# Invalid measurements.
expect_eq "sanitizer build" "$(gate --ceilings "$C" --results "$D/results-asan.json")" 3
expect_match "sanitizer reason" "$(cat "$TMP/err")" 'sanitizers \(address,undefined\)'
expect_eq "debug build" "$(gate --ceilings "$C" --results "$D/results-debug.json")" 3
expect_eq "unmeasured counter" "$(gate --ceilings "$D/ceilings-instructions.json" \
    --results "$D/results-pass.json")" 3
expect_match "unmeasured counter row" "$(cat "$TMP/out")" '^INVALID +fx/tail +instr/op .*hardware counters unavailable'

# --- malformed input: exit 2 with file:line:column -------------------------------------------
expect_eq "ceilings bad JSON" "$(gate --ceilings "$D/ceilings-bad-syntax.json" --results "$D/results-pass.json")" 2
expect_match "ceilings bad JSON position" "$(cat "$TMP/err")" 'ceilings-bad-syntax\.json:4:62: '
expect_eq "ceilings wrong type" "$(gate --ceilings "$D/ceilings-bad-type.json" --results "$D/results-pass.json")" 2
expect_match "ceilings wrong type position" "$(cat "$TMP/err")" \
    'ceilings-bad-type\.json:6:25: benchmarks\.fx/alloc-free\.p99_ns\.max: expected a non-negative number'
expect_eq "ceilings unknown metric" "$(gate --ceilings "$D/ceilings-unknown-metric.json" --results "$D/results-pass.json")" 2
expect_match "ceilings unknown metric position" "$(cat "$TMP/err")" \
    'ceilings-unknown-metric\.json:6:14: benchmarks\.fx/alloc-free\.p99: unknown metric'
expect_eq "results bad JSON" "$(gate --ceilings "$C" --results "$D/results-bad-syntax.json")" 2
expect_match "results bad JSON position" "$(cat "$TMP/err")" 'results-bad-syntax\.json:4:38: '
expect_eq "results wrong type" "$(gate --ceilings "$C" --results "$D/results-bad-forks.json")" 2
expect_match "results wrong type position" "$(cat "$TMP/err")" \
    'results-bad-forks\.json:87:9: micro\[2\]\.p99_ns_forks\[1\]: expected a non-negative number'
expect_eq "results file missing" "$(gate --ceilings "$C" --results "$TMP/nope.json")" 2
expect_eq "unknown flag" "$(gate --ceilings "$C" --frobnicate)" 2
expect_match "pointer to --help on stderr" "$(cat "$TMP/err")" "Run 'h2bench gate --help'"
expect_eq "no results" "$(gate --ceilings "$C")" 2
expect_eq "--help" "$(gate --help)" 0

# --- outputs ------------------------------------------------------------------------------------
expect_eq "md and junit" "$(gate --ceilings "$C" --results "$D/results-alloc-byte.json" \
    --md "$TMP/gate.md" --junit "$TMP/gate.xml")" 1
expect_match "md verdict first" "$(head -1 "$TMP/gate.md")" '^## h2bench gate: ❌ FAIL: 8 passed, 1 exceeded'
expect_match "md columns" "$(cat "$TMP/gate.md")" '\| \| Benchmark \| Metric \| Baseline \| Ceiling \| Current \| Δ \| Evidence \|'
expect_match "md failing row" "$(sed -n 5p "$TMP/gate.md")" '^\| ❌ \| `fx/three-blocks` \| B/op \| 192 \| 192 \| 193 \| \+0\.5% \|'
expect_match "junit totals" "$(cat "$TMP/gate.xml")" '<testsuite name="h2bench.gate" tests="9" failures="1" errors="0"'
expect_eq "junit one testcase per gate" "$(grep -c '<testcase ' "$TMP/gate.xml")" 9
expect_match "junit time and timestamp" "$(cat "$TMP/gate.xml")" \
    '<testsuite name="h2bench.gate" [^>]* time="[0-9]+\.[0-9]{3}" timestamp="20[0-9]{2}-[0-9]{2}-[0-9]{2}T[0-9:]+Z"'
expect_eq "junit testcases carry time" "$(grep -c '<testcase [^>]*time="' "$TMP/gate.xml")" 9
expect_match "junit failure" "$(cat "$TMP/gate.xml")" '<failure type="exceeded" message="fx/three-blocks B/op: current 193, ceiling 192">'

# --- proposals ----------------------------------------------------------------------------------
cp "$C" "$TMP/ceilings.json"
before=$(sha256sum <"$TMP/ceilings.json")
expect_eq "propose from files" "$(gate --propose --ceilings "$TMP/ceilings.json" --date 2026-11-30 \
    --results "$D/results-pass.json" "$D/results-noisy-fork.json" "$D/results-p99.json" \
    --write "$TMP/proposal.json")" 0
expect_eq "proposal printed and written alike" "$(cat "$TMP/out")" "$(cat "$TMP/proposal.json")"
expect_eq "ceilings untouched by --propose" "$(sha256sum <"$TMP/ceilings.json")" "$before"
# fx/tail best-fork p99 per run: 4000, 4300, 9000 -> worst 9000 * 1.35 = 12150.
tail_block=$(sed -n '/"fx\/tail"/,/"baseline"/p' "$TMP/proposal.json")
expect_match "p99 ceiling is worst + 35%" "$tail_block" '"max": 12150,'
expect_match "p99 why line" "$tail_block" \
    "2026-11-30: worst of 3 runs' best-fork p99 \(4000\.\.9000 ns\) \+ 35% headroom"
expect_match "exact allocation ceiling" "$tail_block" '"max": 64,'
expect_eq "proposal is a valid ceilings file" \
    "$(gate --ceilings "$TMP/proposal.json" --results "$D/results-pass.json")" 0
expect_eq "--write onto the ceilings is refused" "$(gate --propose --ceilings "$TMP/ceilings.json" \
    --results "$D/results-pass.json" --write "$TMP/ceilings.json")" 2
expect_eq "ceilings still untouched" "$(sha256sum <"$TMP/ceilings.json")" "$before"
expect_eq "proposal from a sanitizer build" \
    "$(gate --propose --results "$D/results-asan.json")" 3
: >"$FAKE_RUNNER_LOG"
export FAKE_RUNNER_OUTPUTS="$D/results-pass.json $D/results-noisy-fork.json"
expect_eq "propose --runs" "$(gate --propose --runs 2 --headroom 0.5 --runner "$FAKE")" 0
expect_eq "propose --runs ran the runner twice" "$(grep -c '^micro --profile ci --json ' "$FAKE_RUNNER_LOG")" 2
expect_match "headroom 50%" "$(sed -n '/"fx\/tail"/,/"baseline"/p' "$TMP/out")" '"max": 6450,'
# --- fingerprints: absolute p99 ceilings belong to a machine, instruction ceilings to a build -----
fp() { jq --arg cpu "$1" --arg cc "$2" '. + {fingerprint: {cpu_model: $cpu, cpus: 2, kernel: "6.1.0",
    compiler: $cc, build_type: "Release", nghttp2: "1.52.0"}}' "$C" >"$TMP/fp.json"; }
fp "fixture CPU" "GNU 12.2.0"
expect_eq "same fingerprint: judged" "$(gate --ceilings "$TMP/fp.json" --results "$D/results-p99.json" --confirm 0)" 1
fp "Other CPU 9000" "GNU 12.2.0"
expect_eq "other CPU: p99 not applicable, exit 0" "$(gate --ceilings "$TMP/fp.json" --results "$D/results-p99.json" --confirm 0)" 0
expect_match "other CPU: p99 row" "$(cat "$TMP/out")" '^n/a +fx/tail +p99 .*not applicable \(set on Other CPU 9000; cpu_model .fixture CPU. here\)'
expect_match "other CPU: exact rows still judged" "$(cat "$TMP/out")" '^PASS +fx/three-blocks +allocs/op'
expect_match "other CPU: verdict says so" "$(cat "$TMP/out")" 'not applicable \(ceilings set on another machine or build\)'
expect_eq "other CPU, --strict: exit 3" "$(gate --ceilings "$TMP/fp.json" --results "$D/results-pass.json" --strict)" 3
expect_match "other CPU, --strict row" "$(cat "$TMP/out")" '^N/A! +fx/.* +p99 .*--strict: invalid'
expect_eq "other CPU: allocation still fails" "$(gate --ceilings "$TMP/fp.json" --results "$D/results-alloc-count.json")" 1
# an instruction ceiling counted with another compiler is not applicable either
fp "fixture CPU" "clang 99"
jq '.benchmarks["fx/three-blocks"].instructions_per_op = {max: 1000, why: "fixture"}' "$TMP/fp.json" >"$TMP/fpi.json"
expect_eq "other compiler: exit 0" "$(gate --ceilings "$TMP/fpi.json" --results "$D/results-pass.json")" 0
expect_match "other compiler: instr row" "$(cat "$TMP/out")" '^n/a +fx/three-blocks +instr/op .*not applicable \(counted with clang 99'
expect_match "other compiler: p99 too" "$(cat "$TMP/out")" '^n/a +fx/.* +p99 .*compiler .GNU 12.2.0. here'
"$H2BENCH" gate --ceilings "$TMP/fp.json" --baselines-md - >"$TMP/bl.md"
expect_match "BASELINES.md names the machine" "$(cat "$TMP/bl.md")" '^Set on: Other CPU 9000|^Set on: fixture CPU'
# a cell's p99_ms ceiling follows the same rule (issue 15 item 3: "checked the way micro p99 is")
jq '. + {matrix: [{target: "srv", client: "h2bench", connections: 1, streams_requested: 1,
    streams_effective: 1, path: "/hello", repeat: 0, status: "ok", requests: 2000, succeeded: 2000,
    failed: 0, errors: 0, duration_s: 2, req_per_s: 999, bytes_per_s: 1000, rate: 1000,
    latency_ns: {p50: 500000, p90: 800000, p99: 2000000, p999: 3000000, max: 3000000}}]}' \
    "$D/results-pass.json" >"$TMP/cellp99.json"
cellfp() { jq --arg cpu "$1" --argjson max "$2" '.benchmarks |= map_values(del(.p99_ns))
    | . + {cells: {"srv:1x1": {p99_ms: {max: $max, rate: 1000, why: "fixture"}}},
           fingerprint: {cpu_model: $cpu, cpus: 2, kernel: "6.1.0", compiler: "GNU 12.2.0",
                         build_type: "Release", nghttp2: "1.52.0"}}' "$C" >"$TMP/cellfp.json"; }
cellfp "fixture CPU" 5
expect_eq "cell p99, same machine: pass" "$(gate --ceilings "$TMP/cellfp.json" --results "$TMP/cellp99.json")" 0
expect_match "cell p99, same machine: row" "$(cat "$TMP/out")" '^PASS +srv:1x1 p99_ms .*p99 2 ms at 1000 req/s'
cellfp "fixture CPU" 1
expect_eq "cell p99, same machine, over the ceiling: fail" "$(gate --ceilings "$TMP/cellfp.json" --results "$TMP/cellp99.json")" 1
cellfp "Other CPU 9000" 1
expect_eq "cell p99, other CPU: not applicable, exit 0" "$(gate --ceilings "$TMP/cellfp.json" --results "$TMP/cellp99.json")" 0
expect_match "cell p99, other CPU: row" "$(cat "$TMP/out")" '^n/a +srv:1x1 p99_ms .*not applicable \(set on Other CPU 9000; cpu_model .fixture CPU. here\)'
expect_match "cell p99, other CPU: verdict" "$(cat "$TMP/out")" '1 not applicable'
expect_eq "cell p99, other CPU, --strict: exit 3" "$(gate --ceilings "$TMP/cellfp.json" --results "$TMP/cellp99.json" --strict)" 3
expect_match "cell p99, other CPU, --strict row" "$(cat "$TMP/out")" '^N/A! +srv:1x1 p99_ms .*--strict: invalid'
jq '.fingerprint = {cpu_model: 3}' "$C" >"$TMP/fpbad.json"
expect_eq "bad fingerprint: exit 2" "$(gate --ceilings "$TMP/fpbad.json" --results "$D/results-pass.json")" 2
expect_match "bad fingerprint: located" "$(cat "$TMP/err")" 'fpbad.json:[0-9]+:[0-9]+: fingerprint.cpu_model: expected a non-empty string'
# a proposal records where it was measured
expect_eq "propose records the fingerprint" "$(gate --propose --results "$D/results-pass.json")" 0
# one run's why lines read in the singular: "in 1 run", never "each of 1 runs"
expect_match "one run: exact count in 1 run" "$(cat "$TMP/out")" '"why": "[^"]*: exact, [0-9.e+-]+ in 1 run; '
expect_eq "one run: no '1 runs'" "$(grep -cE '\b1 runs' "$TMP/out")" 0
expect_eq "proposal fingerprint" "$(sed -n '/"fingerprint"/,/}/p' "$TMP/out" | tr -d ' \n')" \
    '"fingerprint":{"cpu_model":"fixtureCPU","cpus":2,"kernel":"6.1.0","compiler":"GNU12.2.0","build_type":"Release","nghttp2":"1.52.0"},'

# --- blind spots (issue 13, defect 13) -----------------------------------------------------------
expect_eq "--filter matching nothing: usage error" \
    "$(gate --ceilings "$C" --results "$D/results-pass.json" --filter '^no/such$')" 2
expect_match "--filter matching nothing: says so" "$(cat "$TMP/err")" "matches no benchmark"
jq '.micro[0].p99_ns = 5000' "$D/results-pass.json" >"$TMP/p99-outside.json"
expect_eq "p99_ns outside its forks: invalid" "$(gate --ceilings "$C" --results "$TMP/p99-outside.json")" 3
expect_match "p99_ns outside its forks: named" "$(cat "$TMP/err")" 'p99_ns 5000 lies outside its forks. p99 \(800\.\.900\)'
jq '.micro[0].forks = 0' "$D/results-pass.json" >"$TMP/forks0.json"
expect_eq "forks 0 with three fork values: invalid" "$(gate --ceilings "$C" --results "$TMP/forks0.json")" 3
expect_match "forks 0: named" "$(cat "$TMP/err")" 'forks is 0 but it has 3 fork p99'
jq 'del(.env.sanitizers)' "$D/results-pass.json" >"$TMP/nosan.json"
expect_eq "no env.sanitizers: invalid" "$(gate --ceilings "$C" --results "$TMP/nosan.json")" 3
expect_match "no env.sanitizers: named" "$(cat "$TMP/err")" 'env.sanitizers is missing'
jq '.env.sanitizers = "address"' "$D/results-pass.json" >"$TMP/san-string.json"
expect_eq "env.sanitizers not an array: input error" \
    "$(gate --ceilings "$C" --results "$TMP/san-string.json")" 2
expect_match "env.sanitizers not an array: located" "$(cat "$TMP/err")" \
    'san-string\.json:[0-9]+:[0-9]+: env\.sanitizers: expected an array'
finish
