#!/usr/bin/env bash
# load_h1.sh - h2bench load's HTTP/1.1 engine (--h1, -p http/1.1, --npn-list) against h2bench
# serve (cleartext and TLS) and nginx: every request succeeds, the protocol is reported, the
# body bytes are counted, and --npn-list follows the server's choice.
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
out=$("$H2BENCH" load -p http/1.1 -n 100 -c 2 "$URL/bytes/100000" 2>&1)
ok_run "-p http/1.1 bytes" 100 "$out"
expect_match "bytes counted" "$out" "\(10000000\) data"
head -c 5000 /dev/urandom >"$TMP/body"
ok_run "--h1 upload" 200 "$("$H2BENCH" load --h1 -n 200 -c 2 -d "$TMP/body" "$URL/echo" 2>&1)"
ok_run "--h1 open loop" 300 "$("$H2BENCH" load --h1 -D 1 -c 4 --total-rps 300 "$URL/hello" 2>&1)"
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
stop_serve "$SERVE_PID" >/dev/null
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
