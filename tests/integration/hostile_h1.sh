#!/usr/bin/env bash
# hostile_h1.sh - hostile HTTP/1.1 clients against h2bench serve (label hostile-server-h1), the
# cases of issue 29 (h1raw.py's hx_* scenarios). The timers are set to 300 s, far beyond the
# scenarios' 10 s waits, so a close the client sees comes from its own FIN, not the idle or
# slow-client timeout. Bound stated: --max-connections 4 must serve 12 clients in turn that
# each close after their response (every finished connection is released).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/serve_lib.sh"
RAW="python3 $(dirname "$0")/h1raw.py"

run_raw() { # LABEL PORT SCENARIO...
    local label=$1 port=$2
    shift 2
    $RAW 127.0.0.1 "$port" "$@" >"$TMP/$label.out" 2>&1
    local rc=$?
    cat "$TMP/$label.out"
    expect_eq "$label" "$rc" 0
    expect_eq "$label: scenarios ran" "$(grep -c '^ok' "$TMP/$label.out")" "$#"
}

start_serve fin --threads 1 --max-connections 4 --idle-timeout 300s --slow-timeout 300s ||
    { finish; exit; }
PORT=$(url_port "$SERVE_URL")
run_raw fin_cases "$PORT" fin_idle fin_with_request fin_delay fin_pipelined fin_partial fin_body \
    fin_lockout absolute_form empty_line chunk_size_line
stats=$(curl -sS --max-time 10 --http1.1 "$SERVE_URL/stats")
expect_match "no idle-timeout close" "$stats" '"guard_idle_timeout":0[,}]'
expect_match "no slow-client close" "$stats" '"guard_slow_client":0[,}]'
stop_serve "$SERVE_PID"; rc=$?
expect_eq "server exit" "$rc" 0
finish
