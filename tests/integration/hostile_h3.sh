#!/usr/bin/env bash
# hostile_h3.sh - HTTP/3 under a burst of /delay requests (label hostile-server-h3, issue 29
# item 15). Bound stated, a side-by-side ratio: quadrupling the /delay requests in flight (4000,
# then 16000, 250 per connection, all waiting at once) may at most multiply the server's CPU
# time by 8; the sorted list the delays used to wait in made it about 16 (quadratic), the heap
# makes it about 4. CPU time is the sum over the server's threads of /proc/PID/task/*/schedstat
# (nanoseconds on the CPU), so a busy machine slows the run but does not move the ratio much.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/serve_lib.sh"

cpu_ns() { cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{n += $1} END {print n + 0}'; }

burst() { # N: sets BURST_NS, the server CPU ns for N /delay/8000 requests over N/250 connections
    BURST_NS=0
    start_serve "h3-$1" --threads 1 --h3 || return 1
    local t0 t1
    t0=$(cpu_ns "$SERVE_PID")
    timeout 120 "$H2BENCH" load --h3 --no-progress -n "$1" -c $(($1 / 250)) -m 250 --timeout 60s \
        --json "$TMP/h3-$1.json" "$SERVE_URL/delay/8000" >"$TMP/h3-$1.out" 2>&1
    t1=$(cpu_ns "$SERVE_PID")
    stop_serve "$SERVE_PID" >/dev/null
    expect_eq "h3 $1 /delay: all succeeded" "$(jq .succeeded "$TMP/h3-$1.json" 2>&1)" "$1"
    BURST_NS=$((t1 - t0))
}

burst 4000
small=$BURST_NS
burst 16000
large=$BURST_NS
echo "server CPU: ${small} ns for 4000 /delay requests, ${large} ns for 16000"
expect_match "CPU measured" "$small $large" '^[1-9][0-9]* [1-9][0-9]*$'
expect_eq "16000 /delay cost at most 8 x 4000's (${large} vs ${small} ns)" \
    "$(( ${large:-0} <= 8 * ${small:-0} && ${small:-0} > 0 ))" 1
finish
