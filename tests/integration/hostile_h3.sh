#!/usr/bin/env bash
# hostile_h3.sh - HTTP/3 under hostile clients (label hostile-server-h3, issue 29 item 15): /echo
# streams that are never read, then a burst of /delay requests.
#
# /echo memory (15b), bounds stated below. /delay (15a), a side-by-side ratio: quadrupling the /delay requests in flight (4000,
# then 16000, 250 per connection, all waiting at once) may at most multiply the server's CPU
# time by 8; the sorted list the delays used to wait in made it about 16 (quadratic), the heap
# makes it about 4. CPU time is the sum over the server's threads of /proc/PID/task/*/schedstat
# (nanoseconds on the CPU), so a busy machine slows the run but does not move the ratio much.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/serve_lib.sh"

command -v gtlsclient >/dev/null || { fail "gtlsclient missing (make -f Makefile.ci deps)"; finish; exit; }

# /echo streams whose client grants a 1-byte response window (issue 29 item 15b): each stream
# fills its 256 KiB ring and keeps it nearly full, since the echo leaves a byte per window
# update (the client renews its 1-byte window as it reads). ngtcp2's gtlsclient is that client (--max-stream-data-bidi-local=1), 4 of them with 100 POST /echo
# streams of 1 MiB each: 64 MiB of rings if nothing refuses them (100 rings would be 25 MiB,
# the 16 MiB connection window stops each connection at 64 of them).
head -c 1048576 /dev/zero >"$TMP/1m"
rss_kib() { sed -n "s/^$2:[[:space:]]*\([0-9]*\) kB/\1/p" "/proc/$1/status"; }

# echo_flood NAME [serve options]: sets GROW (server VmHWM during the flood - VmRSS before, KiB)
# and GUARD (the h3 /stats guard_memory after it). The clients run until the server's RSS has
# not grown for 2 s (every ring it will grant is full), at most 30 s, then are killed.
echo_flood() {
    local name=$1 port before i last same pids=()
    shift
    GROW=0 GUARD=
    start_serve "$name" --threads 1 --h3 "$@" || return 1
    port=$(url_port "$SERVE_URL")
    before=$(rss_kib "$SERVE_PID" VmRSS)
    for i in 1 2 3 4; do
        timeout 60 gtlsclient -q --data="$TMP/1m" -m POST -n 100 --max-streams-bidi=100 \
            --max-stream-data-bidi-local=1 127.0.0.1 "$port" "https://127.0.0.1:$port/echo" \
            >/dev/null 2>&1 &
        pids+=($!)
    done
    last=0 same=0
    for i in $(seq 60); do
        sleep 0.5
        GROW=$(($(rss_kib "$SERVE_PID" VmHWM) - before))
        if [ "$GROW" -gt $((last + 256)) ]; then last=$GROW same=0; else same=$((same + 1)); fi
        [ "$same" -ge 4 ] && [ "$i" -ge 6 ] && break
    done
    kill "${pids[@]}" 2>/dev/null
    wait "${pids[@]}" 2>/dev/null
    rm -rf "$TMP/dl" && mkdir -p "$TMP/dl"
    timeout 30 gtlsclient -q --exit-on-all-streams-close --download="$TMP/dl" 127.0.0.1 "$port" \
        "https://127.0.0.1:$port/stats" >/dev/null 2>&1
    GUARD=$(jq -r .guard_memory "$TMP/dl/stats" 2>/dev/null)
    timeout 30 gtlsclient -q --exit-on-all-streams-close --download="$TMP/dl" 127.0.0.1 "$port" \
        "https://127.0.0.1:$port/hello" >/dev/null 2>&1
    expect_eq "$name: /hello still served" "$(cat "$TMP/dl/hello" 2>/dev/null)" "Hello, World!"
    stop_serve "$SERVE_PID" >/dev/null
    echo "$name ($*): RSS grew ${GROW} KiB, guard_memory ${GUARD}"
}

# Side by side: no budget and no per-connection cap (the rings really are held), the server-wide
# --memory-budget, and the per-connection --echo-conn-buffer alone.
echo_flood echo-free --memory-budget 0 --echo-conn-buffer 1G
free_grow=$GROW
expect_eq "no budget: no /echo refused" "$GUARD" 0
echo_flood echo-budget --memory-budget 16M --echo-conn-buffer 1G
budget_grow=$GROW
expect_match "--memory-budget 16M: /echo refused with 503 (guard_memory)" "$GUARD" '^[1-9][0-9]*$'
echo_flood echo-conn --memory-budget 0 --echo-conn-buffer 1M
conn_grow=$GROW
expect_match "--echo-conn-buffer 1M: /echo refused with 503 (guard_memory)" "$GUARD" '^[1-9][0-9]*$'
# ASan's quarantine and shadow memory keep freed buffers in RSS: the bounds are checked in
# ordinary builds only (the refusals are checked everywhere).
if "$H2BENCH" --version | grep -q sanitizers; then
    echo "/echo RSS bounds not checked: sanitizer build"
else
    # The bounds: the budget or 4 x the connection cap, plus 8 MiB for the 400 streams' QUIC
    # and HTTP/3 state, the refused streams' 503s and malloc's slack (measured: about 2 MiB).
    # Without a budget the same clients grow it past 40 MiB, so the bounds can fail.
    expect_eq "no budget: RSS grows past 40 MiB (${free_grow} KiB)" "$((free_grow > 40960))" 1
    expect_eq "--memory-budget 16M: RSS growth ${budget_grow} KiB <= 16 MiB + 8 MiB" \
        "$((budget_grow <= 24576))" 1
    expect_eq "--echo-conn-buffer 1M: RSS growth ${conn_grow} KiB <= 4 x 1 MiB + 8 MiB" \
        "$((conn_grow <= 12288))" 1
fi

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
