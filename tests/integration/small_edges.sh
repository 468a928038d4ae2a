#!/usr/bin/env bash
# small_edges.sh - issue 30 item 11's printer edges: counts of one read in the singular
# ("1 benchmark", "1 epoch", "1 cell (1 target)") and a load run in which no request ended
# prints its percentiles as n/a, never "p50 0us".
. "$(dirname "$0")/lib.sh"

out=$(timeout 120 "$H2BENCH" micro --filter '^h2/stream-lifecycle$' --forks 1 --warmup 10ms \
    --time 20ms --epochs 1 2>&1)
expect_match "micro: singular" "$out" '^# 1 benchmark, 1 fork, warm-up 10 ms, 20 ms per pass, 1 epoch'
expect_eq "micro: no '1 benchmarks'" "$(printf '%s\n' "$out" | grep -cE '\b1 (benchmarks|epochs)\b')" 0

out=$("$H2BENCH" run "$SRC/tests/data/run/bundled-small.json" --dry-run --filter 'h2ref:1x1' 2>&1)
expect_match "run --dry-run: singular" "$out" '^bundled-small: 1 cell \(1 target\)$'
out=$("$H2BENCH" run "$SRC/tests/data/run/bundled-small.json" --dry-run 2>&1)
expect_match "run --dry-run: plural" "$out" '^bundled-small: 4 cells \(1 target\)$'

# Nothing listens on port 1: every request fails before a response, so no latency exists.
out=$(timeout 30 "$H2BENCH" load -n 10 -c 1 http://127.0.0.1:1/ 2>&1)
expect_match "empty run: latency n/a" "$out" '^latency: n/a \(0 requests'
expect_match "empty run: service n/a" "$out" '^service: n/a \(0 requests'
expect_eq "empty run: no 0us percentile" "$(printf '%s\n' "$out" | grep -cE 'p50 0(us|ns)')" 0
finish
