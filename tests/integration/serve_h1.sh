#!/usr/bin/env bash
# serve_h1.sh - HTTP/1.1 in h2bench serve: curl --http1.1 and h2load --h1 on the cleartext port
# (told apart from h2c by the first bytes, h2c still served there) and over TLS (ALPN
# http/1.1 next to h2), every endpoint, keep-alive, chunked uploads, then the hostile cases of
# h1raw.py (414/431, smuggling pairs, bad framing, slow headers, idle keep-alive, a pipelined
# batch split at every byte), the guards counted in /stats and a clean exit 0.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/serve_lib.sh"
RAW="python3 $(dirname "$0")/h1raw.py"

h2load_ok() { # LABEL N OUTPUT
    expect_match "$1" "$3" "requests: $2 total, $2 started, $2 done, $2 succeeded, 0 failed, 0 errored, 0 timeout"
}

start_serve h1 --threads 2 --idle-timeout 1s --slow-timeout 1s || { finish; exit; }
PID=$SERVE_PID
URL=$SERVE_URL
PORT=$(url_port "$URL")
c11() { curl -sS --max-time 10 --http1.1 "$@"; }
expect_eq "hello" "$(c11 -w ' %{http_version} %{http_code}' "$URL/hello")" "Hello, World! 1.1 200"
expect_eq "root" "$(c11 "$URL/")" "Hello, World!"
expect_eq "bytes length" "$(c11 "$URL/bytes/3000000" | wc -c)" 3000000
expect_eq "bytes pattern" "$(c11 "$URL/bytes/600" | od -An -tu1 -j 256 -N 3 | tr -s ' ')" " 0 1 2"
head -c 2000000 /dev/urandom >"$TMP/up.bin"
c11 --data-binary @"$TMP/up.bin" -o "$TMP/echo.bin" "$URL/echo"
expect_eq "echo (Content-Length)" "$(cmp -s "$TMP/up.bin" "$TMP/echo.bin" && echo same)" same
c11 -H 'Transfer-Encoding: chunked' --data-binary @"$TMP/up.bin" -o "$TMP/echo2.bin" "$URL/echo"
expect_eq "echo (chunked)" "$(cmp -s "$TMP/up.bin" "$TMP/echo2.bin" && echo same)" same
expect_eq "sink (chunked)" "$(c11 -H 'Transfer-Encoding: chunked' --data-binary @"$TMP/up.bin" "$URL/sink")" 2000000
expect_eq "sink (Content-Length)" "$(c11 --data-binary @"$TMP/up.bin" "$URL/sink")" 2000000
expect_eq "status" "$(c11 -o /dev/null -w '%{http_code}' "$URL/status/503")" 503
expect_eq "not found" "$(c11 -o /dev/null -w '%{http_code}' "$URL/nope")" 404
expect_eq "GET /sink" "$(c11 -o /dev/null -w '%{http_code}' "$URL/sink")" 405
expect_eq "delay" "$(c11 "$URL/delay/200")" "Hello, World!"
expect_match "stats" "$(c11 "$URL/stats")" '"requests":[1-9]'
expect_eq "HEAD" "$(c11 -I "$URL/bytes/77" | tr -d '\r' | grep -i '^content-length')" "Content-Length: 77"
# keep-alive: three URLs, one connection
out=$(c11 -v "$URL/hello" "$URL/hello" "$URL/hello" 2>&1)
expect_eq "keep-alive reuse" "$(grep -c 'Re-using existing connection' <<<"$out")" 2
expect_eq "h2c on the same port" "$(curl -sS --max-time 10 --http2-prior-knowledge -w ' %{http_version}' "$URL/hello")" "Hello, World! 2"
h2load_ok "h2load --h1 hello" 4000 "$(h2load --h1 -n 4000 -c 20 "$URL/hello" 2>&1)"
h2load_ok "h2load --h1 bytes" 400 "$(h2load --h1 -n 400 -c 4 "$URL/bytes/100000" 2>&1)"
h2load_ok "h2load --h1 upload" 400 "$(h2load --h1 -n 400 -c 4 -d "$TMP/up.bin" "$URL/sink" 2>&1)"
h2load_ok "h2load h2c beside" 4000 "$(h2load -n 4000 -c 10 -m 10 "$URL/hello" 2>&1)"

$RAW 127.0.0.1 "$PORT" all >"$TMP/raw.out" 2>&1; rc=$?
cat "$TMP/raw.out"
expect_eq "h1raw scenarios" "$rc" 0
expect_match "h1raw ran" "$(grep -c '^ok' "$TMP/raw.out")" '^(1[5-9]|[2-9][0-9])$'
stats=$(c11 "$URL/stats")
expect_match "slow headers counted" "$stats" '"guard_slow_client":[1-9]'
expect_match "idle counted" "$stats" '"guard_idle_timeout":[1-9]'
expect_match "414 counted" "$stats" '"414":[1-9]'
stop_serve "$PID"; rc=$?
expect_eq "server exit" "$rc" 0

start_serve h1tls --threads 2 --tls || { finish; exit; }
TURL=$SERVE_URL
expect_eq "TLS http/1.1" "$(curl -sSk --max-time 10 --http1.1 -w ' %{http_version}' "$TURL/hello")" "Hello, World! 1.1"
expect_eq "TLS h2" "$(curl -sSk --max-time 10 --http2 -w ' %{http_version}' "$TURL/hello")" "Hello, World! 2"
expect_eq "TLS echo" "$(curl -sSk --max-time 10 --http1.1 --data-binary @"$TMP/up.bin" "$TURL/echo" | cmp -s - "$TMP/up.bin" && echo same)" same
out=$(h2load --h1 -n 2000 -c 10 "$TURL/hello" 2>&1)
h2load_ok "TLS h2load --h1" 2000 "$out"
expect_match "TLS h2load ALPN" "$out" "Application protocol: http/1.1"
h2load_ok "TLS h2load --h1 bytes" 200 "$(h2load --h1 -n 200 -c 2 "$TURL/bytes/1000000" 2>&1)"
out=$(h2load -n 2000 -c 10 -m 10 "$TURL/hello" 2>&1)
h2load_ok "TLS h2 beside" 2000 "$out"
expect_match "TLS h2 ALPN" "$out" "Application protocol: h2"
stop_serve "$SERVE_PID"; rc=$?
expect_eq "TLS server exit" "$rc" 0
finish
