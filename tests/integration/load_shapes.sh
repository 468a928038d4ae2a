#!/usr/bin/env bash
# load_shapes.sh - `h2bench load --stages/--step` against `h2bench serve`: each interval's
# achieved count against the shape's integral (the table is printed), the run's total exactly
# the integral (sent, or counted unsent at the end within the run's release lag), a 1 s server stall mid-ramp in that interval's p99 from intended send times, and
# bad shapes refused with exit 2 naming the field and its column.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/serve_lib.sh"
start_serve shapes --threads 1 || { finish; exit 1; }
URL=$SERVE_URL

# A 3-stage ramp: 0 -> 400 req/s over 2 s, up to 800 over 2 s, down to 200 over 2 s. The shape
# intends 400 + 1200 + 1000 = 2600 requests. A request counts in the interval it ended in, so the
# one intended just before a boundary may end after it: an interval may differ from the
# integral by 2 % plus what the shape intends during the slowest request that may cross the
# interval's end (the max latency of that interval and of the next, where such a request is
# recorded; measured in the same run), never more (shape_table.py).
"$H2BENCH" load --stages 2s:400,2s:800,2s:200 -c 4 -m 16 -t 2 --no-progress \
    --interval-json "$TMP/iv.ndjson" --json "$TMP/stages.json" "$URL/hello" >"$TMP/stages.out"
expect_eq "stages: exit" "$?" 0
expect_eq "stages: 6 intervals of 1 s" "$(wc -l <"$TMP/iv.ndjson")" 6
# Every intended request is accounted for: sent, or counted as the backlog at the end (a worker
# that wakes after the end does not send what was due just before it; it says so in unsent).
# That backlog is at most what the last stage intends during the run's worst release lag, + 1
# (measured in the same run; one request was left so in a CI run with the other tests beside).
expect_eq "stages: every intended request was sent or counted unsent" \
    "$(jq '.started + .unsent' "$TMP/stages.json")" 2600
expect_eq "stages: the backlog at the end is within the release lag" \
    "$(jq '.unsent <= (200 * .open_loop.max_release_lag_ns / 1e9 | ceil) + 1' "$TMP/stages.json")" true
expect_eq "stages: the intervals hold every request that ended" \
    "$(jq -s 'map(.ended) | add' "$TMP/iv.ndjson")" \
    "$(jq '.started - .unfinished' "$TMP/stages.json")"
expect_eq "stages: no error" "$(jq -s 'map(.errors) | add' "$TMP/iv.ndjson")" 0
python3 "$(dirname "$0")/shape_table.py" 2s:400,2s:800,2s:200 "$TMP/iv.ndjson" >"$TMP/table"
rc=$?
cat "$TMP/table"
expect_eq "stages: every interval on the shape (table above)" "$rc" 0

# A 1 s stall mid-ramp: the server stops 1.5 s into 0 -> 600 req/s over 3 s. Latency from the
# intended send time charges the stall to every request it delayed, so the interval the
# stall ends in has a p99 near a second, and the first interval, before it, does not.
"$H2BENCH" load --stages 3s:600 -c 2 -m 64 --no-progress --interval-json "$TMP/stall.ndjson" \
    "$URL/hello" >"$TMP/stall.out" &
lp=$!
( sleep 1.5; kill -STOP "$SERVE_PID"; sleep 1; kill -CONT "$SERVE_PID" ) &
sp=$!
wait "$lp"
expect_eq "stall: exit" "$?" 0
wait "$sp"
worst=$(jq -s 'map(.latency_ns.p99 // 0) | max' "$TMP/stall.ndjson")
first=$(jq -s '.[0].latency_ns.p99' "$TMP/stall.ndjson")
echo "stall: p99 per interval (ms): $(jq -s -c 'map((.latency_ns.p99 // 0) / 1e6 | floor)' "$TMP/stall.ndjson")"
if [ "$worst" -ge 500000000 ]; then ok; else fail "stall: worst interval p99 $worst ns < 500 ms"; fi
if [ "$first" -lt 500000000 ]; then ok; else fail "stall: the first interval (before it) has p99 $first ns"; fi

# --step: 100 req/s, +100 every second, for 3 s: 100 + 200 + 300 requests
"$H2BENCH" load --step 100+100/1s -D 3 -c 2 -m 8 --no-progress --json "$TMP/step.json" \
    "$URL/hello" >/dev/null
expect_eq "step: exit" "$?" 0
# As for the stages: every intended request sent or counted unsent, the backlog at most what the
# last step (300 req/s) intends during the worst release lag, + 1 (596 sent and 4 unsent in a CI
# run beside the ASan suite and the fuzz smoke). The lag covers the backlog itself: a worker that
# stalled just before the end released nothing late, and 6 of these runs side by side once left
# more unsent than the releases' lag allowed.
expect_eq "step: the staircase's requests, sent or counted unsent" \
    "$(jq '.started + .unsent' "$TMP/step.json")" 600
expect_eq "step: the backlog at the end is within the release lag" \
    "$(jq '.unsent <= (300 * .open_loop.max_release_lag_ns / 1e9 | ceil) + 1' "$TMP/step.json")" true

# bad shapes: exit 2, the flag, the column and the field named
bad() { expect_load_refused "$@"; } # WHAT EXPECTED-REGEX ARGS...
bad "negative rate" "^h2bench load: --stages:1:12: stage 2: rate '-3'" --stages 10s:100,5s:-3
bad "zero duration" "^h2bench load: --stages:1:9: stage 2: duration '0s'" --stages 10s:100,0s:5
bad "garbage" "^h2bench load: --stages:1:1: stage 1: expected DUR:RATE" --stages fast
bad "step field" "^h2bench load: --step:1:5: STEP 'x'" --step 100+x/1s -D 2
bad "step without -D" "--step needs -D" --step 100+10/1s
bad "stages with -D" "no -D" --stages 1s:10 -D 2
finish
