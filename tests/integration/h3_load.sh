#!/usr/bin/env bash
# h3_load.sh - h2bench load --h3 against h2bench serve --h3 and against ngtcp2's gtlsserver (the
# "gtlsserver" peer of servers/peers/peers.json, started here from its command template):
# -n 1000 -c 10 -m 10 with 0 failed, the -m clamp to the server's stream limit, POST bodies,
# a 1 GiB GET whose byte count is checked, open-loop --total-rps with progress lines, the JSON, bad
# usage (exit 2) and a port where nothing listens (exit 3), and server memory per connection.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/serve_lib.sh"

command -v gtlsserver >/dev/null || { fail "gtlsserver missing (make -f Makefile.ci deps)"; finish; exit; }
L="$H2BENCH load --h3 --no-progress"

# free_udp_port: a UDP port nobody is bound to right now
free_udp_port() {
    /usr/bin/python3 -c 'import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
# check_run NAME JSON REQUESTS: the JSON of a run says REQUESTS succeeded over h3, 0 failed
check_run() {
    expect_eq "$1: protocol" "$(jq -r .protocol "$2")" h3
    expect_eq "$1: succeeded" "$(jq -r .succeeded "$2")" "$3"
    expect_eq "$1: failed" "$(jq -r .failed "$2")" 0
}

"$H2BENCH" load --h3 http://127.0.0.1:1/ >/dev/null 2>"$TMP/err"; rc=$?
expect_eq "--h3 with http:// is a usage error" "$rc" 2
expect_match "--h3 http:// message" "$(cat "$TMP/err")" "needs an https:// URI"
out=$("$H2BENCH" load --help); expect_match "--help lists --h3" "$out" "--h3"

# ---- against our server ----
start_serve h3 --h3 --max-streams 64 || { finish; exit; }
URL=$SERVE_URL
SPID=$SERVE_PID
$L -n 1000 -c 10 -m 10 --json "$TMP/a.json" "$URL/" >"$TMP/a.out" 2>&1
expect_eq "h2bench serve --h3: -n 1000 -c 10 -m 10 exit" "$?" 0
check_run "serve --h3" "$TMP/a.json" 1000
expect_eq "serve --h3: 10 streams per connection" "$(jq -r .streams_effective "$TMP/a.json")" 10
expect_match "text names h3" "$(cat "$TMP/a.out")" "; h3$"
expect_match "Application protocol line (as h2load's)" "$(cat "$TMP/a.out")" "^Application protocol: h3$"
expect_match "text: 1000 succeeded" "$(cat "$TMP/a.out")" "1000 succeeded, 0 failed"

$L -n 200 -c 2 -m 100 --json "$TMP/m.json" "$URL/bytes/1000" >/dev/null 2>&1
check_run "-m 100 against --max-streams 64" "$TMP/m.json" 200
expect_eq "-m clamped to the server's 64" "$(jq -r .streams_effective "$TMP/m.json")" 64
expect_eq "/bytes/1000 x200 data" "$(jq -r .traffic.data "$TMP/m.json")" 200000

head -c 100000 /dev/urandom >"$TMP/body.bin"
$L -n 100 -c 2 -m 5 -d "$TMP/body.bin" --json "$TMP/p.json" "$URL/echo" >/dev/null 2>&1
check_run "POST /echo 100 KB" "$TMP/p.json" 100
expect_eq "POST /echo: every body came back" "$(jq -r .traffic.data "$TMP/p.json")" 10000000

$L -n 1 -c 1 --json "$TMP/g.json" "$URL/bytes/1073741824" >/dev/null 2>&1
check_run "1 GiB GET" "$TMP/g.json" 1
expect_eq "1 GiB GET: every byte arrived" "$(jq -r .traffic.data "$TMP/g.json")" 1073741824
echo "h3 1 GiB GET (taken while the machine was shared): $(jq -r .duration_s "$TMP/g.json") s"

"$H2BENCH" load --h3 --progress -D 2 -c 4 -m 4 --total-rps 500 --json "$TMP/r.json" "$URL/" \
    >"$TMP/r.out" 2>"$TMP/r.err"
expect_eq "--total-rps 500 -D 2 exit" "$?" 0
expect_eq "--total-rps: 0 failed" "$(jq -r .failed "$TMP/r.json")" 0
n=$(jq -r .succeeded "$TMP/r.json")
expect_eq "--total-rps 500 for 2 s: 900..1001 requests (got $n)" "$((n >= 900 && n <= 1001))" 1
expect_match "--total-rps latency is from the intended time" "$(cat "$TMP/r.out")" "from intended send time"
expect_match "progress lines" "$(cat "$TMP/r.err")" "^progress: "

# Server memory: VmHWM before and with 200 connections open at once (each holds a 2 s request).
hwm() { sed -n 's/^VmHWM:[[:space:]]*\([0-9]*\) kB/\1/p' "/proc/$SPID/status"; }
h0=$(hwm)
$L -n 200 -c 200 --json "$TMP/c.json" "$URL/delay/2000" >/dev/null 2>&1
check_run "200 connections" "$TMP/c.json" 200
h1=$(hwm)
per=$(( (h1 - h0) / 200 ))
echo "h3 server memory: VmHWM ${h0} KiB -> ${h1} KiB with 200 connections: ${per} KiB per connection"
expect_eq "server memory per h3 connection < 400 KiB (${per} KiB)" "$((per < 400))" 1
stop_serve "$SPID"
expect_eq "serve --h3 SIGTERM exit" "$?" 0

# Bounded connections: over --max-connections the server refuses, the rest are served.
start_serve cap --h3 --max-connections 5 || { finish; exit; }
$L -n 20 -c 10 --timeout 5s --json "$TMP/cap.json" "$SERVE_URL/" >/dev/null 2>&1
expect_eq "--max-connections 5: 5 connections up" "$(jq -r .connections_up "$TMP/cap.json")" 5
expect_eq "--max-connections 5: 10 requests served" "$(jq -r .succeeded "$TMP/cap.json")" 10
stop_serve "$SERVE_PID"

# Nothing listening on the UDP port: no connection, exit 3, quickly.
P=$(free_udp_port)
timeout 20 $L -n 2 -c 2 --timeout 2s "https://127.0.0.1:$P/" >/dev/null 2>"$TMP/none.err"
expect_eq "no h3 server: exit 3" "$?" 3

# ---- against gtlsserver, started from peers.json ----
PEERDIR=$TMP/peer
mkdir -p "$PEERDIR/docroot"
printf 'hello from the docroot\n' >"$PEERDIR/docroot/index.html"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -subj /CN=localhost \
    -addext "subjectAltName=DNS:localhost,IP:127.0.0.1" -keyout "$PEERDIR/key.pem" \
    -out "$PEERDIR/cert.pem" 2>/dev/null
GP=$(free_udp_port)
mapfile -t CMD < <(jq -r '.gtlsserver.command[]' "$SRC/servers/peers/peers.json" |
    sed -e "s|{docroot}|$PEERDIR/docroot|g" -e "s|{host}|127.0.0.1|g" -e "s|{port}|$GP|g" \
        -e "s|{dir}|$PEERDIR|g")
"${CMD[@]}" >"$TMP/gtlsserver.out" 2>&1 &
GPID=$!
PIDS+=("$GPID")
sleep 0.5
$L -n 1000 -c 10 -m 10 --json "$TMP/gs.json" "https://127.0.0.1:$GP/" >/dev/null 2>&1
expect_eq "gtlsserver: -n 1000 -c 10 -m 10 exit" "$?" 0
check_run "gtlsserver" "$TMP/gs.json" 1000
expect_eq "gtlsserver: docroot body bytes" "$(jq -r .traffic.data "$TMP/gs.json")" 23000
$L -n 20 -c 2 -m 10 --json "$TMP/gd.json" "https://127.0.0.1:$GP/1000000" >/dev/null 2>&1
check_run "gtlsserver /1000000 (generated)" "$TMP/gd.json" 20
expect_eq "gtlsserver: 20 MB of generated bytes" "$(jq -r .traffic.data "$TMP/gd.json")" 20000000
kill "$GPID" 2>/dev/null
finish
