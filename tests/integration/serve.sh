#!/usr/bin/env bash
# serve.sh - h2bench serve against real clients on loopback: curl (h2c prior knowledge and TLS
# with ALPN h2), nghttp, h2load at (1,1), (100,10), (1000,4), every endpoint, and a clean exit 0
# on SIGTERM in the middle of a load.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/serve_lib.sh"

out=$("$H2BENCH" serve --help); rc=$?
expect_eq "serve --help exit" "$rc" 0
expect_match "serve --help text" "$out" 'listening on'
"$H2BENCH" serve --bogus >/dev/null 2>"$TMP/err"; rc=$?
expect_eq "serve bad flag exit" "$rc" 2
"$H2BENCH" serve --port 70000 >/dev/null 2>"$TMP/err"; rc=$?
expect_eq "serve bad port exit" "$rc" 2
expect_match "serve bad port message" "$(cat "$TMP/err")" "invalid --port '70000'"

mkdir -p "$TMP/docroot/sub"
head -c 100000 /dev/urandom >"$TMP/docroot/sub/file.bin"
start_serve h2c --threads 2 --docroot "$TMP/docroot" || { finish; exit; }
URL=$SERVE_URL
H2C_PID=$SERVE_PID
expect_match "ready line" "$URL" '^http://127\.0\.0\.1:[0-9]+$'
C="curl -s --max-time 20 --http2-prior-knowledge"

expect_eq "curl h2c /hello" "$($C "$URL/hello")" "Hello, World!"
expect_eq "curl h2c / " "$($C "$URL/")" "Hello, World!"
expect_eq "curl h2c version" "$($C -o /dev/null -w '%{http_version}' "$URL/hello")" "2"
expect_eq "/status/418" "$($C -o /dev/null -w '%{http_code}' "$URL/status/418")" "418"
expect_eq "/status/99 is 400" "$($C -o /dev/null -w '%{http_code}' "$URL/status/99")" "400"
expect_eq "/bytes/abc is 400" "$($C -o /dev/null -w '%{http_code}' "$URL/bytes/abc")" "400"
expect_eq "unknown path 404" "$($C -o /dev/null -w '%{http_code}' "$URL/no/such")" "404"
expect_eq "GET /sink is 405" "$($C -o /dev/null -w '%{http_code}' "$URL/sink")" "405"
expect_eq "HEAD /bytes/5 length" \
    "$($C -I "$URL/bytes/5" | tr -d '\r' | sed -n 's/^content-length: //p')" "5"
expect_eq "/bytes/0 empty" "$($C "$URL/bytes/0" | wc -c)" "0"
$C "$URL/sub/file.bin" -o "$TMP/got.bin"
expect_eq "docroot file" "$(cmp -s "$TMP/got.bin" "$TMP/docroot/sub/file.bin" && echo same)" same
expect_eq "docroot no traversal" "$($C -o /dev/null -w '%{http_code}' "$URL/../etc/passwd")" "404"
# content-type by extension (was application/octet-stream for every file); a type as long as
# an indexed one (image/jpeg beside text/plain) must not be sent as the indexed one
for f in a.txt b.HTML c.json d.jpg e.wasm f.unknown g; do echo x >"$TMP/docroot/$f"; done
# (one nghttp, one connection, so the encoder's table is shared by the responses; curl 7.88
# cannot reuse a prior-knowledge h2c connection; responses in stream order = the URIs' order)
names=(a.txt c.json d.jpg e.wasm b.HTML f.unknown g)
want="text/plain application/json image/jpeg application/wasm text/html"
want="$want application/octet-stream application/octet-stream"
args=()
for f in "${names[@]}"; do args+=("$URL/$f"); done
got=$(timeout 20 nghttp -v "${args[@]}" 2>&1 |
    sed -n 's/.*recv (stream_id=\([0-9]*\)) content-type: \(.*\)$/\1 \2/p' | sort -n |
    cut -d' ' -f2 | tr '\n' ' ' | sed 's/ $//')
expect_eq "docroot content-types by extension, one connection" "$got" "$want"
# Issue 13 defect 1: an absolute path ("//etc/hostname"), encoded dot segments and symlinks
# leading out of the docroot all stay 404 (the reproduction was curl on //etc/hostname).
ln -s /etc/hostname "$TMP/docroot/out"
for p in //etc/hostname /sub/%2e%2e/%2e%2e/etc/hostname /out /sub/../sub/file.bin; do
    expect_eq "docroot refuses $p" "$($C --path-as-is -o /dev/null -w '%{http_code}' "$URL$p")" "404"
done

# A warm worker serves docroot files without an allocation per request (the :path kept until
# the request ends comes from the worker's free list): 10,000 requests after a warm-up may cost
# the workers a handful of allocations (the /stats requests' own connections), not one each.
printf 'small\n' >"$TMP/docroot/small.txt"
worker_allocs() { $C -s "$URL/stats" | jq .worker_allocs; }
"$H2BENCH" load -n 1000 -c 2 -m 10 "$URL/small.txt" >/dev/null 2>&1
a0=$(worker_allocs)
"$H2BENCH" load -n 10000 -c 2 -m 10 "$URL/small.txt" >"$TMP/small.out" 2>&1
a1=$(worker_allocs)
expect_match "docroot load served" "$(cat "$TMP/small.out")" 'requests: 10000 total, 10000 started, 10000 done, 10000 succeeded'
expect_eq "docroot requests allocate nothing when warm ($((a1 - a0)) allocations for 10000)" \
    "$((a1 - a0 < 100))" 1

# Issue 13 defect 12: HEAD /stats sends headers only (curl -I failed with a protocol error).
expect_match "HEAD /stats" "$($C -I "$URL/stats" 2>&1 | tr -d '\r' | head -1)" '^HTTP/2 200'

# /delay answers after the delay without blocking the worker: a concurrent /hello is fast.
$C -o "$TMP/delay.txt" -w '%{time_total}' "$URL/delay/1500" >"$TMP/delay.time" &
DPID=$!
sleep 0.2
t0=$(date +%s%N)
expect_eq "hello during a delay" "$($C "$URL/hello")" "Hello, World!"
t1=$(date +%s%N)
expect_eq "hello not blocked by a delay" "$(( (t1 - t0) < 1000000000 ))" 1
wait $DPID
expect_eq "/delay body" "$(cat "$TMP/delay.txt")" "Hello, World!"
expect_match "/delay took >= 1.5 s" "$(cat "$TMP/delay.time")" '^(1\.[5-9]|[2-9])'

# nghttp fetches 1 MiB; the bytes follow the pattern byte[i] = i & 0xff.
nghttp "$URL/bytes/1048576" >"$TMP/mib.bin" 2>"$TMP/nghttp.err"
expect_eq "nghttp 1 MiB size" "$(stat -c %s "$TMP/mib.bin")" 1048576
expect_eq "nghttp 1 MiB pattern" "$(python3 -c '
import sys; d = open(sys.argv[1], "rb").read()
print("ok" if d == bytes(i & 255 for i in range(len(d))) else "bad")' "$TMP/mib.bin")" ok

# 10 MiB through /echo comes back identical; /sink counts it.
head -c 10485760 /dev/urandom >"$TMP/10m.bin"
$C --data-binary @"$TMP/10m.bin" "$URL/echo" -o "$TMP/echoed.bin"
expect_eq "10 MiB echo identical" "$(cmp -s "$TMP/10m.bin" "$TMP/echoed.bin" && echo same)" same
expect_eq "10 MiB sink count" "$($C --data-binary @"$TMP/10m.bin" "$URL/sink")" 10485760

# h2load cells: every request succeeds.
for cell in "1 1 200" "100 10 4000" "1000 4 8000"; do
    set -- $cell
    out=$(h2load -c "$1" -m "$2" -n "$3" "$URL/hello" 2>&1)
    expect_match "h2load c=$1 m=$2" "$out" "requests: $3 total, $3 started, $3 done, $3 succeeded, 0 failed, 0 errored"
done

# /stats is JSON that counted those requests.
stats=$($C "$URL/stats")
expect_eq "/stats parses" "$(printf '%s' "$stats" | python3 -c '
import json, sys; s = json.load(sys.stdin)
print("ok" if s["requests"] >= 12200 and s["responses"]["200"] >= 12200 and s["conns_total"] >= 1101
      and s["rss_kib"] > 0 and "allocs_per_request" in s else s)')" ok

# TLS with ALPN h2 and a self-signed certificate made in memory.
start_serve tls --tls --threads 1 || { finish; exit; }
TLS_URL=$SERVE_URL
expect_match "TLS ready line" "$TLS_URL" '^https://127\.0\.0\.1:[0-9]+$'
T="curl -sk --max-time 20 --http2"
expect_eq "curl TLS /hello" "$($T "$TLS_URL/hello")" "Hello, World!"
expect_eq "curl TLS version" "$($T -o /dev/null -w '%{http_version}' "$TLS_URL/hello")" "2"
expect_eq "curl TLS 1.2" "$($T --tlsv1.2 --tls-max 1.2 "$TLS_URL/hello")" "Hello, World!"
$T --data-binary @"$TMP/10m.bin" "$TLS_URL/echo" -o "$TMP/echoed-tls.bin"
expect_eq "TLS 10 MiB echo" "$(cmp -s "$TMP/10m.bin" "$TMP/echoed-tls.bin" && echo same)" same
out=$(h2load -c 20 -m 10 -n 2000 "$TLS_URL/bytes/1000" 2>&1)
expect_match "h2load TLS" "$out" "2000 succeeded, 0 failed, 0 errored"
expect_eq "TLS with ALPN http/1.1 served (serve_h1.sh tests it fully)" \
    "$(curl -sk --max-time 5 --http1.1 -w ' %{http_version}' "$TLS_URL/hello")" "Hello, World! 1.1"
TLS_PORT=$(url_port "$TLS_URL")
out=$(timeout 10 openssl s_client -connect "127.0.0.1:$TLS_PORT" -alpn foo </dev/null 2>&1)
expect_match "TLS with neither h2 nor http/1.1 in ALPN refused" "$out" "no application protocol"
stop_serve "$SERVE_PID"; rc=$?
expect_eq "TLS server exit" "$rc" 0

# SIGTERM during a load: GOAWAY, drain, exit 0.
h2load -c 50 -m 10 -n 100000000 -D 20 "$URL/bytes/4096" >"$TMP/load.out" 2>&1 &
LPID=$!
PIDS+=("$LPID")
sleep 1
stop_serve "$H2C_PID"; rc=$?
expect_eq "SIGTERM during load: exit 0" "$rc" 0
kill "$LPID" 2>/dev/null
wait "$LPID" 2>/dev/null
finish
