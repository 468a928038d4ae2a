#!/usr/bin/env bash
# grpc_interop.sh - gRPC interop, server side (issue 35 item 4): a python3-grpcio client
# (grpc_client.py, stubs generated here by protoc from servers/h2ref/grpc/echo.proto and Debian's
# grpc-proto health.proto) calls `h2bench serve` under each HTTP/2 engine: unary (up to a 4 MiB
# message, and one byte over: RESOURCE_EXHAUSTED), server, client and bidirectional streaming,
# the health check, unknown methods, a compressed call, a deadline, concurrent calls; every
# message's content is checked. The grpc++ client (h2bench-grpcpp-client, when CMake built it)
# makes the same kinds of calls through libgrpc++ under each engine too, and against the grpc++
# echo peer as a control; against a server that echoes wrong bytes (fakepeer.py grpcwrong)
# every one of its checks fails. Then grpc_raw.py sends what no gRPC library sends (malformed
# and lying prefixes, a message cut by the request's end, wrong content-types, deadlines only
# the server can enforce, a reset mid-message) and checks each status. The gRPC peers
# (servers/peers/: python3-grpcio, and grpc++ when CMake built it) pass grpc_client.py's checks
# too. Skipped (77) without python3-grpcio, python3-hpack or protoc.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/serve_lib.sh"

PY=/usr/bin/python3
HEALTH=/usr/share/grpc-proto/grpc/health/v1/health.proto
[ -x "$PY" ] && "$PY" -c 'import grpc, google.protobuf, hpack' 2>/dev/null ||
    skip "python3-grpcio, python3-protobuf or python3-hpack not installed"
command -v protoc >/dev/null || skip "protoc (protobuf-compiler) not installed"
[ -f "$HEALTH" ] || skip "grpc-proto not installed ($HEALTH)"

CLIENT=$BIN/h2bench-grpcpp-client
mkdir -p "$TMP/stubs"
protoc -I "$SRC/servers/h2ref/grpc" -I "$(dirname "$HEALTH")" --python_out="$TMP/stubs" \
    "$SRC/servers/h2ref/grpc/echo.proto" "$HEALTH" 2>"$TMP/protoc.err" ||
    { fail "protoc: $(cat "$TMP/protoc.err")"; finish; exit; }

# run_checks NAME CMD...: each "ok"/"FAIL" line of the command is one check.
run_checks() {
    local name=$1
    shift
    timeout 300 "$@" >"$TMP/$name.out" 2>"$TMP/$name.err"
    local rc=$?
    local oks fails
    oks=$(grep -c '^ok ' "$TMP/$name.out")
    fails=$(grep -c '^FAIL ' "$TMP/$name.out")
    PASSED=$((PASSED + oks))
    grep '^FAIL ' "$TMP/$name.out" | sed "s/^/FAIL: $name: /" >&2
    FAILED=$((FAILED + fails))
    if [ "$rc" -ne 0 ] && [ "$fails" -eq 0 ]; then
        fail "$name: exit $rc without a failed check: $(tail -5 "$TMP/$name.err")"
    fi
    expect_match "$name: checks made" "$oks" '^[1-9][0-9]*$'
}

for engine in fast nghttp2; do
    start_serve "srv-$engine" --threads 1 --engine "$engine" || continue
    hp=${SERVE_URL#http://}
    run_checks "grpcio-$engine" "$PY" "$(dirname "$0")/grpc_client.py" "$hp" "$TMP/stubs"
    run_checks "raw-$engine" "$PY" "$(dirname "$0")/grpc_raw.py" "${hp%:*}" "${hp##*:}"
    if [ -x "$CLIENT" ]; then run_checks "grpcpp-$engine" "$CLIENT" "$hp"; fi
    # every call was answered: the server's /stats counts them, and it is still healthy
    stats=$(curl -s --http2-prior-knowledge "$SERVE_URL/stats")
    expect_match "$engine: /stats counts the calls" "$(printf '%s' "$stats" | jq '.requests')" \
        '^[1-9][0-9]{2,}$'
    expect_eq "$engine: /hello still answers" \
        "$(curl -s --http2-prior-knowledge "$SERVE_URL/hello")" "Hello, World!"
    stop_serve "$SERVE_PID"
    expect_eq "$engine: clean exit" "$?" 0
done

# The gRPC peers (servers/peers/) pass the same checks: they answer what h2ref answers.
sed -e 's/{host}/127.0.0.1/; s/{port}/0/; s/{threads}/2/' \
    "$SRC/servers/peers/grpcio-echo.py.in" >"$TMP/grpcio-echo.py"
if start_peer grpcio "$PY" "$TMP/grpcio-echo.py"; then
    run_checks "grpcio-peer" "$PY" "$(dirname "$0")/grpc_client.py" "$PEER_HP" "$TMP/stubs" peer
    kill "$PEER_PID"
fi
if [ -x "$BIN/h2bench-grpcpp-echo" ]; then
    if start_peer grpcpp "$BIN/h2bench-grpcpp-echo" 127.0.0.1 0 2; then
        run_checks "grpcpp-peer" "$PY" "$(dirname "$0")/grpc_client.py" "$PEER_HP" "$TMP/stubs" peer
        # the control: the grpc++ client passes against the grpc++ server
        run_checks "grpcpp-client-peer" "$CLIENT" "$PEER_HP"
        kill "$PEER_PID"
    fi
    # The grpc++ client's checks can fail: a server that answers each message with its last
    # byte flipped (the statuses and lengths right) fails every one of them, and the client
    # exits 1. They are as many as the checks h2ref passed.
    if start_peer grpcwrong "$PY" "$(dirname "$0")/fakepeer.py" grpcwrong; then
        timeout 300 "$CLIENT" "$PEER_HP" >"$TMP/grpcpp-wrong.out" 2>"$TMP/grpcpp-wrong.err"
        expect_eq "grpcpp client against wrong bytes: exit" "$?" 1
        expect_eq "grpcpp client against wrong bytes: no check passed" \
            "$(grep -c '^ok ' "$TMP/grpcpp-wrong.out")" 0
        expect_eq "grpcpp client against wrong bytes: every check failed" \
            "$(grep -c '^FAIL ' "$TMP/grpcpp-wrong.out")" "$(grep -c '^ok ' "$TMP/grpcpp-fast.out")"
        kill "$PEER_PID"
    fi
else
    echo "grpcpp peer and client not built (libgrpc++-dev, libprotobuf-dev, protobuf-compiler-grpc): their checks skipped"
fi
finish
