#!/usr/bin/env bash
# load_capacity.sh - `h2bench load --find-max` finds a known capacity: against `h2bench serve`'s
# /delay/50 (the server's timers do not block it), 10 connections with one stream each can carry
# at most 10 / 50 ms = 200 requests/s; above it the client's backlog grows with every second and
# the median latency from the intended send time passes 75 ms (1.5 x the delay). The median,
# not p99: a busy machine's stalls of a few hundred ms reach the tail of a step at any rate,
# a backlog reaches its middle only above capacity. Three searches, run at once, must each
# answer within 5 % of 200, with a failing step within 2 % above the passing one, and print
# the search time.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/serve_lib.sh"
start_serve capacity --threads 1 || { finish; exit 1; }
URL=$SERVE_URL

# The three searches run at once (each waits on the server's timers, not on a CPU: a search
# takes 20-45 s of mostly sleep); each has its own connections, so each sees the same capacity.
declare -A SEARCH
for run in 1 2 3; do
    "$H2BENCH" load --find-max --slo 'p50<75ms,errors<1%' --find-max-step 2s --find-max-warm-up 0.5s \
        --find-max-start 50 -c 10 -m 1 --json "$TMP/cap$run.json" "$URL/delay/50" \
        >"$TMP/cap$run.out" 2>"$TMP/cap$run.err" &
    SEARCH[$run]=$!
    PIDS+=($!)
done
for run in 1 2 3; do
    wait "${SEARCH[$run]}"
    expect_eq "search $run: exit" "$?" 0
    grep -E '^(capacity|  last pass|  first fail|search):' "$TMP/cap$run.out"
    cap=$(jq '.capacity_per_s' "$TMP/cap$run.json")
    if python3 -c "import sys; sys.exit(not (190 <= $cap <= 210))"; then ok; else
        fail "search $run: capacity $cap req/s is not within 5 % of 200"; fi
    expect_eq "search $run: the answer is the last passing step" \
        "$(jq '.last_pass.rate_per_s == .capacity_per_s and .last_pass.verdict == "pass"' "$TMP/cap$run.json")" true
    expect_eq "search $run: a failing step within 2 % above it" \
        "$(jq '.first_fail.verdict == "fail" and .first_fail.rate_per_s > .capacity_per_s and .precision <= 0.02' "$TMP/cap$run.json")" true
    expect_eq "search $run: evidence has percentiles" \
        "$(jq '[.last_pass.latency_ns.p50, .first_fail.latency_ns.p50] | map(. > 0) | all' "$TMP/cap$run.json")" true
    expect_match "search $run: total time printed" "$(cat "$TMP/cap$run.out")" \
        '^search: [0-9]+ steps in [0-9.]+s$'
done

# an SLO nothing meets: no capacity, exit 1
"$H2BENCH" load --find-max --slo 'p99<1ms' --find-max-step 0.5s --find-max-warm-up 0 \
    --find-max-start 4 -c 2 -m 1 "$URL/delay/50" >"$TMP/none.out" 2>&1
expect_eq "unreachable SLO: exit" "$?" 1
expect_match "unreachable SLO: said" "$(cat "$TMP/none.out")" '^capacity: none: the lowest step'
# usage
"$H2BENCH" load --find-max -c 2 "$URL/hello" >/dev/null 2>"$TMP/bad.err"
expect_eq "--find-max without --slo: exit" "$?" 2
expect_match "--find-max without --slo: message" "$(cat "$TMP/bad.err")" '--find-max needs --slo'
"$H2BENCH" load --find-max --slo 'p99<1s' --total-rps 10 "$URL/hello" >/dev/null 2>&1
expect_eq "--find-max with --total-rps: exit" "$?" 2
finish
