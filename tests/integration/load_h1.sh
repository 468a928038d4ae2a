#!/usr/bin/env bash
# load_h1.sh - h2bench load's HTTP/1.1 engine (--h1, -p http/1.1, --npn-list) against h2bench
# serve (cleartext and TLS), nginx and h2o: every request succeeds, the protocol is reported, the
# body bytes are counted, and --npn-list follows the server's choice. Over TLS both engines
# count the application_data records they receive: a 1 MiB body needs at least 64 records of
# at most 16 KiB, a 13-byte "Hello, World!" response a handful at most.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/serve_lib.sh"
ok_run() { # LABEL N OUTPUT
    expect_match "$1" "$3" "requests: $2 total, $2 started, $2 done, $2 succeeded, 0 failed, 0 errored, 0 timeout"
}
start_serve h1 --threads 1 || { finish; exit; }
URL=$SERVE_URL
out=$("$H2BENCH" load --h1 -n 2000 -c 10 "$URL/hello" 2>&1)
ok_run "--h1 hello" 2000 "$out"
expect_match "--h1 protocol" "$out" "; http/1.1"
# h2load's "Application protocol:" line, at the same place (after the spawning line), and no
# SETTINGS figure: HTTP/1.1 has none.
expect_eq "--h1 Application protocol line" "$(printf '%s\n' "$out" | grep -A1 '^spawning thread' | tail -1)" \
    "Application protocol: http/1.1"
if command -v h2load >/dev/null; then
    expect_eq "h2load --h1 prints the same line" "$(h2load --h1 -n 10 -c 1 "$URL/hello" 2>&1 |
        grep -A1 '^spawning thread' | tail -1)" "Application protocol: http/1.1"
fi
expect_eq "--h1: no SETTINGS_MAX_CONCURRENT_STREAMS" "$(printf '%s\n' "$out" | grep -c SETTINGS)" 0
expect_match "--h1: streams line" "$out" 'effective 1 \(HTTP/1.1: one request at a time per connection\); http/1.1'
out=$("$H2BENCH" load -p http/1.1 -n 100 -c 2 "$URL/bytes/100000" 2>&1)
ok_run "-p http/1.1 bytes" 100 "$out"
expect_match "bytes counted" "$out" "\(10000000\) data"
head -c 5000 /dev/urandom >"$TMP/body"
ok_run "--h1 upload" 200 "$("$H2BENCH" load --h1 -n 200 -c 2 -d "$TMP/body" "$URL/echo" 2>&1)"
# a count, not -D 1: under a busy CPU the schedule starts late and -D 1 holds 298 arrivals
ok_run "--h1 open loop" 300 "$("$H2BENCH" load --h1 -n 300 -c 4 --total-rps 600 "$URL/hello" 2>&1)"
"$H2BENCH" load --h1 -n 100 -c 2 --json "$TMP/h1.json" "$URL/hello" >/dev/null 2>&1
expect_eq "json protocol" "$(jq -r .protocol "$TMP/h1.json")" "http/1.1"
stop_serve "$SERVE_PID" >/dev/null
start_serve h1tls --threads 1 --tls || { finish; exit; }
TURL=$SERVE_URL
ok_run "TLS --h1" 1000 "$("$H2BENCH" load --h1 -n 1000 -c 4 "$TURL/hello" 2>&1)"
out=$("$H2BENCH" load --npn-list http/1.1 -n 100 -c 2 "$TURL/hello" 2>&1)
expect_match "--npn-list http/1.1" "$out" "100 succeeded.*|; http/1.1"
expect_match "--npn-list http/1.1 protocol" "$out" "; http/1.1"
expect_match "--npn-list h2,http/1.1 picks h2" "$("$H2BENCH" load --npn-list h2,http/1.1 -n 100 -c 2 "$TURL/hello" 2>&1)" "; h2$"
# tls_records_per_response, h1 and h2, against known response sizes
for p in h1 h2; do
    flag=$([ $p = h1 ] && echo --h1 || echo -m1)
    "$H2BENCH" load $flag -n 20 -c 1 --json "$TMP/big-$p.json" "$TURL/bytes/1048576" >"$TMP/big-$p.out" 2>&1
    expect_match "$p 1 MiB over TLS" "$(cat "$TMP/big-$p.out")" "20 succeeded, 0 failed"
    expect_match "$p records line" "$(cat "$TMP/big-$p.out")" "^tls: TLSv1.3 [A-Z0-9_]+; [0-9.]+ records per response"
    expect_eq "$p 1 MiB: >= 64 records per response" \
        "$(jq '.tls_records_per_response >= 64 and .tls_records_per_response < 200' "$TMP/big-$p.json")" true
    expect_eq "$p json tls_version" "$(jq -r .tls_version "$TMP/big-$p.json")" TLSv1.3
    expect_match "$p json tls_cipher" "$(jq -r .tls_cipher "$TMP/big-$p.json")" "^TLS_"
    "$H2BENCH" load $flag -n 200 -c 2 --json "$TMP/small-$p.json" "$TURL/hello" >/dev/null 2>&1
    expect_eq "$p hello: 1..3 records per response" \
        "$(jq '.tls_records_per_response >= 1 and .tls_records_per_response <= 3' "$TMP/small-$p.json")" true
done
expect_eq "cleartext: no tls fields" "$(jq 'has("tls_records_per_response") or has("tls_version")' "$TMP/h1.json")" false
stop_serve "$SERVE_PID" >/dev/null
# h2o (HTTP/1.1 and h2c on one cleartext port; Debian's h2o 2.2.5), static files
if command -v h2o >/dev/null; then
    HPORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
    mkdir -p "$TMP/h2o/docs"
    printf 'Hello, World!' >"$TMP/h2o/docs/hello"
    head -c 100000 /dev/zero >"$TMP/h2o/docs/big"
    printf 'user: root\nlisten:\n  host: 127.0.0.1\n  port: %s\nnum-threads: 1\nerror-log: %s/h2o/error.log\nhosts:\n  default:\n    paths:\n      /:\n        file.dir: %s/h2o/docs\n' \
        "$HPORT" "$TMP" "$TMP" >"$TMP/h2o/h2o.conf"
    h2o -c "$TMP/h2o/h2o.conf" >"$TMP/h2o/out.log" 2>&1 &
    HPID=$!
    PIDS+=("$HPID")
    for _ in $(seq 50); do curl -s -o /dev/null "http://127.0.0.1:$HPORT/hello" && break; sleep 0.1; done
    out=$("$H2BENCH" load --h1 -n 5000 -c 10 "http://127.0.0.1:$HPORT/hello" 2>&1)
    ok_run "h2o --h1" 5000 "$out"
    expect_match "h2o --h1 protocol" "$out" "; http/1.1"
    out=$("$H2BENCH" load --h1 -n 200 -c 2 "http://127.0.0.1:$HPORT/big" 2>&1)
    ok_run "h2o --h1 100 kB" 200 "$out"
    expect_match "h2o --h1 bytes counted" "$out" "\(20000000\) data"
    kill "$HPID"; wait "$HPID" 2>/dev/null
else
    fail "h2o not installed (make -f Makefile.ci deps): h2o --h1 interop not checked"
fi
# nginx (HTTP/1.1 keep-alive, the Debian package)
if command -v nginx >/dev/null; then
    NPORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
    mkdir -p "$TMP/ng/logs"
    printf 'daemon off;\nworker_processes 1;\npid %s/ng/nginx.pid;\nerror_log %s/ng/logs/error.log;\nevents {}\nhttp { access_log off; keepalive_requests 100000; server { listen 127.0.0.1:%s; location / { return 200 "Hello, World!"; } } }\n' "$TMP" "$TMP" "$NPORT" >"$TMP/ng/nginx.conf"
    nginx -p "$TMP/ng" -c "$TMP/ng/nginx.conf" &
    NPID=$!
    PIDS+=("$NPID")
    for _ in $(seq 50); do curl -s -o /dev/null "http://127.0.0.1:$NPORT/" && break; sleep 0.1; done
    ok_run "nginx --h1" 5000 "$("$H2BENCH" load --h1 -n 5000 -c 10 "http://127.0.0.1:$NPORT/" 2>&1)"
    kill "$NPID"; wait "$NPID" 2>/dev/null
fi
finish
