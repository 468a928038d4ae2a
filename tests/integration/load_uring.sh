#!/usr/bin/env bash
# load_uring.sh - h2bench load --io uring (issue 33, the client half): the fallback to epoll when
# io_uring is refused (one stderr line, the run completes with the right counts), --h3's fallback,
# then many connections with large responses on the ring with every byte counted: HTTP/2 (200
# connections x 4 streams of 1 MiB), HTTP/1.1 (100 connections of 1 MiB) and TLS (50 connections
# x 4 streams of 64 KiB, readiness-based on the ring). The server runs on epoll throughout: only
# the client's backend is under test. The sanitizer builds run it too: a connection state freed
# before its last completion is a use-after-free there.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/serve_lib.sh"
H2B_TEST_IO=
start_serve h2ref --threads 1 || { finish; exit 1; }
URL=$SERVE_URL

# json_of FILE: requests succeeded, data bytes, failed (one line)
json_of() {
    jq -r '"\(.succeeded) \(.traffic.data) \(.failed)"' "$1"
}

# 1. Refused: H2B_URING_FAIL=1 stands for io_uring_disabled=2, seccomp or ENOSYS.
H2B_URING_FAIL=1 "$H2BENCH" load --io uring -n 500 -c 4 -m 4 --json "$TMP/fb.json" "$URL/hello" \
    >"$TMP/fb.out" 2>"$TMP/fb.err"
rc=$?
expect_eq "fallback: exit" "$rc" 0
expect_eq "fallback: one stderr line" "$(cat "$TMP/fb.err")" \
    "h2bench load: --io uring: io_uring_queue_init: disabled by H2B_URING_FAIL=1; using epoll"
expect_eq "fallback: every request" "$(json_of "$TMP/fb.json")" "500 6500 0"
expect_eq "fallback: JSON io, io_fallback, options.io" \
    "$(jq -c '[.io, .io_fallback, .config.options.io]' "$TMP/fb.json")" \
    '["epoll","io_uring_queue_init: disabled by H2B_URING_FAIL=1","uring"]'

# 2. --h3 stays on its UDP epoll path and says so, once (a dead port: the line comes first).
"$H2BENCH" load --io uring --h3 -n 1 --timeout 1s "https://127.0.0.1:1/" >/dev/null 2>"$TMP/h3.err"
if ! grep -q 'not available in this build' "$TMP/h3.err"; then
    expect_eq "--h3 fallback line" "$(grep -c 'using epoll' "$TMP/h3.err")" 1
    expect_match "--h3 fallback reason" "$(cat "$TMP/h3.err")" \
        'h2bench load: --io uring: the HTTP/3 engine runs on its UDP epoll path; using epoll'
fi

# 3. No fallback here: the same run on the ring says nothing on stderr.
"$H2BENCH" load --io uring -n 500 -c 4 -m 4 --json "$TMP/ok.json" "$URL/hello" >/dev/null \
    2>"$TMP/ok.err"
expect_eq "uring: silent stderr" "$(cat "$TMP/ok.err")" ""
expect_eq "uring: every request" "$(json_of "$TMP/ok.json")" "500 6500 0"
expect_eq "uring: JSON io, io_fallback, options.io" \
    "$(jq -c '[.io, .io_fallback, .config.options.io]' "$TMP/ok.json")" '["uring",null,"uring"]'
# merged: a common backend is kept; parts on different ones give io null, a note, and the reason
"$H2BENCH" merge "$TMP/ok.json" "$TMP/ok.json" --json "$TMP/m-ok.json" >/dev/null
expect_eq "merge: the common io kept" "$(jq -c '[.io, .io_fallback]' "$TMP/m-ok.json")" '["uring",null]'
"$H2BENCH" merge "$TMP/fb.json" "$TMP/ok.json" --json "$TMP/m-mix.json" >/dev/null
expect_eq "merge: different backends give io null and the fallback's reason" \
    "$(jq -c '[.io, .io_fallback]' "$TMP/m-mix.json")" '[null,"io_uring_queue_init: disabled by H2B_URING_FAIL=1"]'
expect_match "merge: the note names both backends" "$(jq -r .note "$TMP/m-mix.json")" \
    'io: the parts ran different I/O backends \(epoll and uring\)'

# 4. 200 connections x 4 streams, 1 MiB each: every byte of 800 responses.
MiB=1048576
"$H2BENCH" load --io uring -n 800 -c 200 -m 4 --json "$TMP/big.json" "$URL/bytes/$MiB" \
    >"$TMP/big.out" 2>"$TMP/big.err"
expect_eq "h2 200x4 1 MiB: exit" "$?" 0
expect_eq "h2 200x4 1 MiB: counts and bytes" "$(json_of "$TMP/big.json")" "800 $((800 * MiB)) 0"
expect_eq "h2 200x4 1 MiB: stderr" "$(cat "$TMP/big.err")" ""

# 5. The same over nghttp2's session, fewer responses.
"$H2BENCH" load --io uring --engine nghttp2 -n 400 -c 200 -m 2 --json "$TMP/ng.json" \
    "$URL/bytes/$MiB" >/dev/null 2>&1
expect_eq "nghttp2 200x2 1 MiB: counts and bytes" "$(json_of "$TMP/ng.json")" "400 $((400 * MiB)) 0"

# 6. HTTP/1.1: 100 connections, 2 responses of 1 MiB each.
"$H2BENCH" load --io uring --h1 -n 200 -c 100 --json "$TMP/h1.json" "$URL/bytes/$MiB" \
    >/dev/null 2>&1
expect_eq "h1 100 x 1 MiB: counts and bytes" "$(json_of "$TMP/h1.json")" "200 $((200 * MiB)) 0"

# 7. Uploads the server does not answer: gRPC Bidi calls of 2 MB each against a 0-byte receive
# window, the echo held back until the server's 100 ms deadline ends each call. Each connection
# writes megabytes while the server sends nothing back, so only the send buffer's drains
# (EPOLLOUT, level-triggered as on epoll) move the rest: one lost after the first left the
# HEADERS of the later calls unsent until the server's idle timeout (10 s, resets counted).
for e in fast nghttp2; do
    "$H2BENCH" load --io uring --engine "$e" --grpc /h2bench.Echo/Bidi --grpc-size 100000 \
        --grpc-messages 20 -w 0 -H 'grpc-timeout: 100m' -n 6 -c 2 -m 3 --json "$TMP/dl-$e.json" \
        "$URL" >/dev/null 2>&1
    expect_eq "held uploads ($e): every call ended by its deadline" \
        "$(jq -c '[.succeeded, .failed, .errors, .grpc.status_codes]' "$TMP/dl-$e.json")" '[0,6,0,{"4":6}]'
done

# 8. TLS stays readiness-based on the ring (POLL_ADD, SSL_read/SSL_write).
start_serve h2ref-tls --threads 1 --tls || { finish; exit 1; }
"$H2BENCH" load --io uring -n 400 -c 50 -m 4 --json "$TMP/tls.json" "$SERVE_URL/bytes/65536" \
    >/dev/null 2>"$TMP/tls.err"
expect_eq "TLS 50x4 64 KiB: counts and bytes" "$(json_of "$TMP/tls.json")" "400 $((400 * 65536)) 0"
expect_eq "TLS: over TLS" "$(jq -r .protocol "$TMP/tls.json")" h2
expect_eq "TLS: stderr" "$(cat "$TMP/tls.err")" ""

finish
