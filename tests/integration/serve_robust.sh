#!/usr/bin/env bash
# serve_robust.sh - hostile clients against h2bench serve (tests/integration/h2raw.py): bad
# preface, invalid frames, bad HPACK, rapid reset, PING/SETTINGS/CONTINUATION floods, 100,000
# empty DATA frames, oversized headers, idle and slow clients, --max-connections. Each must end
# with the right GOAWAY/RST_STREAM or a closed connection while other clients are served, the
# guards are counted in /stats, RSS stays bounded and the server still exits 0.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/serve_lib.sh"
RAW="python3 $(dirname "$0")/h2raw.py"

start_serve robust --threads 2 --idle-timeout 1s --slow-timeout 1s || { finish; exit; }
PID=$SERVE_PID
PORT=$(url_port "$SERVE_URL")
$RAW 127.0.0.1 "$PORT" all >"$TMP/raw.out" 2>&1; rc=$?
cat "$TMP/raw.out"
expect_eq "raw scenarios" "$rc" 0
expect_eq "no scenario failed" "$(grep -c '^FAIL' "$TMP/raw.out")" 0
expect_match "scenarios ran" "$(grep -c '^ok' "$TMP/raw.out")" '^(2[5-9]|[3-9][0-9])$'
hwm=$(sed -n 's/^VmHWM:[[:space:]]*\([0-9]*\) kB/\1/p' "/proc/$PID/status")
expect_eq "peak RSS under 256 MiB (${hwm} KiB)" "$(( hwm < 262144 ))" 1
stop_serve "$PID"; rc=$?
expect_eq "server exit after abuse" "$rc" 0

# One worker, so the /delay bursts and the control request share it (issue 13 defect 5).
start_serve delay --threads 1 || { finish; exit; }
$RAW 127.0.0.1 "$(url_port "$SERVE_URL")" delay_order >"$TMP/delay.out" 2>&1; rc=$?
cat "$TMP/delay.out"
expect_eq "delay order" "$rc" 0
stop_serve "$SERVE_PID"; rc=$?
expect_eq "delay server exit" "$rc" 0

# Request and FIN together (issue 13 defect 7): answered, then closed; no CLOSE-WAIT left.
start_serve closewait --threads 1 --max-connections 100 || { finish; exit; }
$RAW 127.0.0.1 "$(url_port "$SERVE_URL")" close_wait >"$TMP/closewait.out" 2>&1; rc=$?
cat "$TMP/closewait.out"
expect_eq "close wait" "$rc" 0
stop_serve "$SERVE_PID"; rc=$?
expect_eq "closewait server exit" "$rc" 0

# Request, incomplete request and FIN: the incomplete stream is reset and the connection closed
# once the other is answered, long before the slow-client timeout (which held it before).
start_serve finhold --threads 1 --slow-timeout 120s --idle-timeout 120s || { finish; exit; }
$RAW 127.0.0.1 "$(url_port "$SERVE_URL")" fin_incomplete >"$TMP/finhold.out" 2>&1; rc=$?
cat "$TMP/finhold.out"
expect_eq "incomplete request and FIN" "$rc" 0
stop_serve "$SERVE_PID"; rc=$?
expect_eq "finhold server exit" "$rc" 0

start_serve perip --threads 2 --max-connections-per-ip 3 || { finish; exit; }
$RAW 127.0.0.1 "$(url_port "$SERVE_URL")" max_connections_per_ip >"$TMP/perip.out" 2>&1; rc=$?
cat "$TMP/perip.out"
expect_eq "max connections per ip" "$rc" 0
stats=$(curl -s --max-time 5 --http2-prior-knowledge "$SERVE_URL/stats")
expect_match "per-ip refusals counted" "$stats" '"guard_max_connections_per_ip":[1-9]'
stop_serve "$SERVE_PID"; rc=$?
expect_eq "perip server exit" "$rc" 0

# 200 zero-window /echo streams (issue 13 defect 8), side by side: without a budget the
# server's RSS grows by their 200 MiB; with --memory-budget 32M it stays under baseline +
# budget + the free lists' cap, and new streams are refused meanwhile.
rss_growth() { # NAME BUDGETED [serve options]: VmHWM - VmRSS before, in KiB
    local name=$1 budgeted=$2
    shift 2
    start_serve "$name" --threads 2 --echo-conn-buffer 64M "$@" || return 1
    local pid=$SERVE_PID before hwm
    curl -s --max-time 5 --http2-prior-knowledge "$SERVE_URL/hello" >/dev/null
    before=$(sed -n 's/^VmRSS:[[:space:]]*\([0-9]*\) kB/\1/p' "/proc/$pid/status")
    H2RAW_BUDGETED=$budgeted $RAW 127.0.0.1 "$(url_port "$SERVE_URL")" echo_flood \
        >"$TMP/$name.raw" 2>&1
    echo "rc=$?" >>"$TMP/$name.raw"
    hwm=$(sed -n 's/^VmHWM:[[:space:]]*\([0-9]*\) kB/\1/p' "/proc/$pid/status")
    stop_serve "$pid" >/dev/null
    echo $((hwm - before))
}
free_grow=$(rss_growth echo-free 0 --memory-budget 0)
cat "$TMP/echo-free.raw"
budget_grow=$(rss_growth echo-budget 1 --memory-budget 32M)
cat "$TMP/echo-budget.raw"
echo "RSS growth under 200 zero-window echo streams: no budget ${free_grow} KiB, --memory-budget 32M ${budget_grow} KiB"
expect_eq "echo flood without budget" "$(grep -c '^rc=0' "$TMP/echo-free.raw")" 1
expect_eq "echo flood with budget" "$(grep -c '^rc=0' "$TMP/echo-budget.raw")" 1
# the per-connection cap alone: 20 connections x 1 MiB
conn_grow=$(rss_growth echo-conn 1 --memory-budget 0 --echo-conn-buffer 1M)
cat "$TMP/echo-conn.raw"
expect_eq "echo flood with --echo-conn-buffer 1M" "$(grep -c '^rc=0' "$TMP/echo-conn.raw")" 1
# ASan's quarantine and shadow memory keep freed buffers in RSS: the bounds are checked in
# ordinary builds only (the resets and the refusals are checked everywhere).
if "$H2BENCH" --version | grep -q sanitizers; then
    echo "echo RSS bounds not checked: sanitizer build"
else
    # the comparison can fail: without a budget the streams really hold their bytes
    expect_eq "without a budget RSS grows past 100 MiB (${free_grow} KiB)" \
        "$((free_grow > 102400))" 1
    # the budget counts the free lists too; + 2 workers x 2 MiB of grants, sessions, malloc's
    # per-thread arenas. Measured alone with --engine nghttp2: 32.5-34.4 MiB at 6541b81,
    # 33.4-35.4 MiB at 3f02e21; once 38.4 MiB in a loaded -j2 CI run. 40 MiB still tells it
    # from the 200 MiB an unbudgeted server holds.
    expect_eq "with --memory-budget 32M RSS grows under 40 MiB (${budget_grow} KiB)" \
        "$((budget_grow < 40960))" 1
    expect_eq "with --echo-conn-buffer 1M RSS grows under 28 MiB (${conn_grow} KiB)" \
        "$((conn_grow < 28672))" 1
fi

start_serve maxconn --threads 1 --max-connections 2 || { finish; exit; }
$RAW 127.0.0.1 "$(url_port "$SERVE_URL")" max_connections >"$TMP/maxconn.out" 2>&1; rc=$?
cat "$TMP/maxconn.out"
expect_eq "max connections" "$rc" 0
stats=$(curl -s --max-time 5 --http2-prior-knowledge "$SERVE_URL/stats")
expect_match "max connections counted" "$stats" '"guard_max_connections":[1-9]'
stop_serve "$SERVE_PID"; rc=$?
expect_eq "maxconn server exit" "$rc" 0
finish
