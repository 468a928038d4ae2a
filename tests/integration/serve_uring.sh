#!/usr/bin/env bash
# serve_uring.sh - h2bench serve --io uring (issue 33): the fallback to epoll when io_uring is
# refused (one stderr line, the "io:" line, /stats), 200 connections of 1 MiB responses with every
# byte counted, clients that reset their connection while the server is sending, and a clean exit
# after each (the sanitizer builds run it too: a connection freed before its last completion is
# a use-after-free there).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/serve_lib.sh"

# stats_field URL KEY: one top-level value of /stats (strings unquoted).
stats_field() {
    curl -s --max-time 5 "$1/stats" | python3 -c 'import json,sys; v=json.load(sys.stdin).get(sys.argv[1]); print("null" if v is None else v)' "$2"
}

# wait_conns URL N: waits up to 10 s for /stats conns_open to come down to N (the /stats request's
# own connection counts); prints the last value seen.
wait_conns() {
    local v=
    for _ in $(seq 100); do
        v=$(stats_field "$1" conns_open)
        [ "$v" = "$2" ] && break
        sleep 0.1
    done
    printf '%s\n' "$v"
}

# 1. Refused: H2B_URING_FAIL=1 stands for io_uring_disabled=2, seccomp or ENOSYS.
H2B_URING_FAIL=1 H2B_TEST_IO= start_serve fallback --threads 1 --io uring || { finish; exit; }
expect_match "fallback: io line" "$(grep '^io:' "$TMP/fallback.out")" \
    '^io: epoll \(io_uring unavailable: .*H2B_URING_FAIL=1.*\)$'
expect_eq "fallback: one stderr line" "$(wc -l <"$TMP/fallback.err")" 1
expect_match "fallback: stderr" "$(cat "$TMP/fallback.err")" \
    '^h2bench serve: --io uring: .*H2B_URING_FAIL=1.*; using epoll$'
expect_eq "fallback: /stats io" "$(stats_field "$SERVE_URL" io)" epoll
expect_match "fallback: /stats io_fallback" "$(stats_field "$SERVE_URL" io_fallback)" 'H2B_URING_FAIL=1'
expect_eq "fallback: serves" "$(curl -s --http2-prior-knowledge "$SERVE_URL/hello")" "Hello, World!"
stop_serve "$SERVE_PID"; rc=$?
expect_eq "fallback server exit" "$rc" 0

# The default and --io epoll name no fallback.
H2B_TEST_IO= start_serve epoll --threads 1 || { finish; exit; }
expect_eq "epoll: no io line" "$(grep -c '^io:' "$TMP/epoll.out")" 0
expect_eq "epoll: /stats io" "$(stats_field "$SERVE_URL" io)" epoll
expect_eq "epoll: /stats io_fallback" "$(stats_field "$SERVE_URL" io_fallback)" null
stop_serve "$SERVE_PID" >/dev/null

# 2. io_uring itself, one worker accepting in its own ring, then two behind the handoff.
for threads in 1 2; do
    name=uring$threads
    H2B_TEST_IO=uring start_serve "$name" --threads "$threads" || { finish; exit; }
    expect_eq "$name: /stats io" "$(stats_field "$SERVE_URL" io)" uring
    expect_eq "$name: /stats io_fallback" "$(stats_field "$SERVE_URL" io_fallback)" null
    # 200 connections, 1 MiB each, two streams each: every byte arrives.
    n=400
    "$H2BENCH" load -n $n -c 200 -m 2 "$SERVE_URL/bytes/1048576" >"$TMP/$name.load" 2>&1
    expect_eq "$name: load exit" "$?" 0
    expect_match "$name: all succeeded" "$(grep '^requests:' "$TMP/$name.load")" \
        "^requests: $n total, $n started, $n done, $n succeeded, 0 failed"
    expect_match "$name: every byte" "$(grep '^traffic:' "$TMP/$name.load")" \
        "\($((n * 1048576))\) data$"
    # h1 and h2 small requests interleaved on many connections
    "$H2BENCH" load -n 20000 -c 100 -m 10 "$SERVE_URL/hello" >"$TMP/$name.small" 2>&1
    expect_match "$name: small all succeeded" "$(grep '^requests:' "$TMP/$name.small")" \
        "^requests: 20000 total, 20000 started, 20000 done, 20000 succeeded, 0 failed"
    for i in 1 2 3; do
        expect_eq "$name: h1 $i" "$(curl -s "$SERVE_URL/bytes/70000" | wc -c)" 70000
    done
    # 3. Close while sending: 60 clients ask for 8 x 1 MiB, read 1 KiB and reset the connection
    # (SO_LINGER 0), so sends are in flight or queued when the socket goes.
    python3 - "$(url_port "$SERVE_URL")" <<'EOF'
import socket, struct, sys

port = int(sys.argv[1])
def frame(t, flags, sid, payload):
    return struct.pack(">I", len(payload))[1:] + bytes([t, flags]) + struct.pack(">I", sid) + payload
def headers(sid, path):
    # HPACK: :method GET (2), :scheme http (6), :path literal without indexing, :authority
    block = b"\x82\x86" + b"\x04" + bytes([len(path)]) + path + b"\x01\x09localhost"
    return frame(1, 0x5, sid, block)
socks = []
for i in range(60):
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + frame(4, 0, 0, b"") +
              b"".join(headers(2 * k + 1, b"/bytes/1048576") for k in range(8)))
    s.recv(1024)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    socks.append(s)
    if len(socks) == 10 or i == 59:
        for x in socks:
            x.close()
        socks = []
EOF
    expect_eq "$name: reset clients ran" "$?" 0
    expect_eq "$name: connections closed" "$(wait_conns "$SERVE_URL" 1)" 1
    expect_eq "$name: serves after resets" \
        "$(curl -s --http2-prior-knowledge "$SERVE_URL/bytes/1048576" | wc -c)" 1048576
    stop_serve "$SERVE_PID"; rc=$?
    expect_eq "$name: server exit" "$rc" 0
    expect_eq "$name: stderr empty" "$(cat "$TMP/$name.err")" ""
done

# 4. A client that uploads to /echo and never reads: on epoll the engine's output-queue guard cuts
# it once its input backs up; on uring too (input held behind a send that cannot complete goes in
# after a turn), not only when the slow-client timeout (60 s here) would.
H2B_TEST_IO=uring start_serve noread --threads 1 --slow-timeout 60s || { finish; exit; }
python3 - "$(url_port "$SERVE_URL")" <<'EOF2'
import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
body = 64 << 20
s.sendall(b"POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % body)
s.settimeout(30)  # a bound only: the guard answers at once
chunk, sent = b"x" * 65536, 0
try:
    while sent < body:
        sent += s.send(chunk)
except OSError:
    pass  # reset by the server's guard: what this case waits for
EOF2
expect_match "noread: cut by the output queue guard" "$(stats_field "$SERVE_URL" guard_outbound_queue)" '^[1-9]'
expect_eq "noread: serves after" "$(curl -s "$SERVE_URL/hello")" "Hello, World!"
stop_serve "$SERVE_PID"; rc=$?
expect_eq "noread server exit" "$rc" 0
finish
