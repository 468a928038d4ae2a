#!/usr/bin/env bash
# load_grpc.sh - `h2bench load --grpc METHOD` (issue 35, item 2 and the load half of item 4):
# h2bench serve under both server engines, over h2c and TLS, driven by both client engines:
# every unary call succeeds and is counted under grpc-status 0; an unknown method's calls are
# all UNIMPLEMENTED (12) and failed; ClientStream, Bidi and ServerStream with --grpc-messages 3
# succeed with the response length and bytes the echo service must give (and a server that
# answers other bytes of the right length fails every call, counted as content mismatches, with
# both engines); a deadline the server enforces
# gives DEADLINE_EXCEEDED (4) for every call; a server that is not gRPC (nghttpd) gives
# "missing"; --grpc-data sends a file's message as it is; the python3-grpcio peer (and the
# grpc++ peer when CMake built it) answer every call with status 0. Counts are exact. Bad
# combinations exit 2 naming what is wrong. A scenario whose matrix says "grpc" runs gRPC cells
# against h2ref and the grpcio peer side by side.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/serve_lib.sh"
. "$(dirname "$0")/load_lib.sh"

# call NAME ARGS... URL: one run, its JSON in $TMP/NAME.json, its text in $TMP/NAME.out, its exit
# code in RC.
call() {
    local name=$1
    shift
    timeout 120 "$H2BENCH" load --no-progress --json "$TMP/$name.json" "$@" \
        >"$TMP/$name.out" 2>"$TMP/$name.err"
    RC=$?
}

# expect_calls NAME SUCCEEDED FAILED CODES: the run's counts and its grpc.status_codes (compact
# JSON, e.g. {"0":600}).
expect_calls() {
    expect_eq "$1: exit" "$RC" 0
    expect_eq "$1: succeeded/failed/errored" \
        "$(jq -c '[.succeeded, .failed, .errors]' "$TMP/$1.json" 2>&1)" "[$2,$3,0]"
    expect_eq "$1: grpc status codes" "$(jq -c .grpc.status_codes "$TMP/$1.json" 2>&1)" "$4"
}

N=600
for sengine in fast nghttp2; do
    for tls in "" --tls; do
        start_serve "srv-$sengine$tls" --threads 1 --engine "$sengine" $tls || continue
        U=$SERVE_URL
        for cengine in fast nghttp2; do
            t="$sengine${tls}-$cengine"
            call "$t" --engine "$cengine" --grpc /h2bench.Echo/Unary --grpc-size 100 \
                -n $N -c 3 -m 4 "$U"
            expect_calls "$t" $N 0 "{\"0\":$N}"
            expect_eq "$t: echo lengths and contents checked" \
                "$(jq -c '[.grpc.expect_bytes, .grpc.length_mismatches, .grpc.content_mismatches, .engine]' "$TMP/$t.json")" \
                "[107,0,0,\"$cengine\"]"
            expect_match "$t: text line" "$(cat "$TMP/$t.out")" \
                "grpc-status codes: 0 OK $N; /h2bench.Echo/Unary 1 message\\(s\\) per call; response length checked \\(107 bytes\\): 0 mismatched; content checked: 0 mismatched"
        done
        stop_serve "$SERVE_PID" >/dev/null
    done
done
expect_eq "TLS run was over TLS" "$(jq -r .protocol "$TMP/fast--tls-fast.json")" h2

start_serve srv --threads 1 || { finish; exit 1; }
U=$SERVE_URL
for cengine in fast nghttp2; do
    call "unknown-$cengine" --engine "$cengine" --grpc h2bench.Echo/Nope -n 50 -c 2 -m 4 "$U"
    expect_calls "unknown-$cengine" 0 50 '{"12":50}'
    expect_eq "unknown-$cengine: every response was HTTP 200" \
        "$(jq -c .status_codes "$TMP/unknown-$cengine.json")" '{"200":50}'
    # streaming calls, 3 messages of 10 payload bytes: Bidi and ServerStream answer 3 x 17
    # bytes, ClientStream one 18-byte StreamSummary
    for m in Bidi:51 ClientStream:18 ServerStream:51; do
        t="${m%%:*}-$cengine"
        call "$t" --engine "$cengine" --grpc "/h2bench.Echo/${m%%:*}" --grpc-size 10 \
            --grpc-messages 3 -n 90 -c 2 -m 3 "$U"
        expect_calls "$t" 90 0 '{"0":90}'
        expect_eq "$t: length and content" "$(jq -c '[.grpc.expect_bytes, .grpc.length_mismatches, .grpc.content_mismatches, .grpc.messages]' "$TMP/$t.json")" \
            "[${m#*:},0,0,3]"
    done
    # Unary with 3 messages is a bad request: INTERNAL (13) from the server
    call "unary3-$cengine" --engine "$cengine" --grpc /h2bench.Echo/Unary --grpc-messages 3 \
        -n 20 -c 1 "$U"
    expect_calls "unary3-$cengine" 0 20 '{"13":20}'
    # a deadline: Bidi calls whose request cannot end (2 MB against a 0-byte receive window,
    # the echo held back), so the server's 100 ms timer ends each one
    call "deadline-$cengine" --engine "$cengine" --grpc /h2bench.Echo/Bidi --grpc-size 100000 \
        --grpc-messages 20 -w 0 -H 'grpc-timeout: 100m' -n 6 -c 2 -m 3 "$U"
    expect_calls "deadline-$cengine" 0 6 '{"4":6}'
    # closed loop by -D and the open loop both count every call
    call "open-$cengine" --engine "$cengine" --grpc /h2bench.Echo/Unary --grpc-size 5 \
        --total-rps 400 -n 200 -c 2 -m 4 "$U"
    expect_calls "open-$cengine" 200 0 '{"0":200}'
    call "timed-$cengine" --engine "$cengine" --grpc /h2bench.Echo/Unary -D 1 -c 2 -m 4 "$U"
    expect_eq "timed-$cengine: every ended call counted by status" \
        "$(jq '[.succeeded, .failed, .done, .grpc.status_codes."0"] | (.[0] > 0 and .[1] == 0 and .[0] == .[2] and .[0] == .[3])' \
            "$TMP/timed-$cengine.json")" true
done
# h2bench merge adds the parts' counts by grpc-status
"$H2BENCH" merge "$TMP/unknown-fast.json" "$TMP/Bidi-fast.json" --json "$TMP/merged.json" >/dev/null
expect_eq "merge: status counts add" "$(jq -c '[.grpc.status_codes, .succeeded, .failed]' "$TMP/merged.json")" \
    '[{"12":50,"0":90},90,50]'
# --fail-on-error: a failed call fails the run
call unknown-fail --grpc /x.Y/Z --fail-on-error -n 4 "$U"
expect_eq "--fail-on-error with failed calls: exit" "$RC" 1
# --grpc-data: an encoded EchoMessage (payload "abc") sent as it is; not length-checked
printf '\n\003abc' >"$TMP/msg.bin"
call data --grpc /h2bench.Echo/Bidi --grpc-data "$TMP/msg.bin" --grpc-messages 2 -n 40 -c 2 "$U"
expect_calls data 40 0 '{"0":40}'
expect_eq "data: sent as is, 2 x (5 + 5) bytes echoed per call" \
    "$(jq -c '[.grpc.data != null, .grpc.expect_bytes, .traffic.data]' "$TMP/data.json")" \
    '[true,null,800]'

# usage errors, before any load
expect_load_refused "--grpc --h1" '--grpc: gRPC runs over HTTP/2' --grpc /h2bench.Echo/Unary --h1
expect_load_refused "--grpc -p http/1.1" '--grpc: gRPC runs over HTTP/2' --grpc /h2bench.Echo/Unary \
    -p http/1.1
expect_load_refused "--grpc --raw" '--grpc: gRPC runs over HTTP/2' --grpc /h2bench.Echo/Unary \
    --raw 20:40
expect_load_refused "--grpc with a path" "--grpc /h2bench.Echo/Unary gives the path: the URI '.*/hello' must have none" \
    --grpc /h2bench.Echo/Unary
expect_load_refused "--grpc-size alone" '--grpc-data, --grpc-size and --grpc-messages need --grpc' \
    --grpc-size 10
expect_load_refused "--grpc bad method" "--grpc 'nope': not a valid value \\(expected /SERVICE/METHOD" \
    --grpc nope
expect_load_refused "--grpc-messages 0" "--grpc-messages '0'" --grpc /a.B/C --grpc-messages 0
expect_load_refused "--grpc -d" '--grpc: the method is every call.s path' --grpc /a.B/C -d "$TMP/msg.bin"
stop_serve "$SERVE_PID" >/dev/null

# a server that is not gRPC: nghttpd answers 404 without grpc-status: "missing", failed
make_docroot
start_nghttpd "$TMP/www"
call nghttpd --grpc /h2bench.Echo/Unary -n 20 -c 2 "http://127.0.0.1:$PORT"
expect_calls nghttpd 0 20 '{"missing":20}'

# a gRPC echo that answers every message with its last byte flipped (fakepeer.py grpcwrong): the
# lengths and statuses right, the bytes wrong; every call failed, counted as a content mismatch
# and not as a length one, and --fail-on-error exits 1
if start_peer grpcwrong python3 "$(dirname "$0")/fakepeer.py" grpcwrong; then
    for e in fast nghttp2; do
        for m in Unary:1 Bidi:3; do
            t="wrong-${m%%:*}-$e"
            call "$t" --engine "$e" --grpc "/h2bench.Echo/${m%%:*}" --grpc-size 100 \
                --grpc-messages "${m#*:}" --fail-on-error -n 40 -c 2 -m 4 "http://$PEER_HP"
            expect_eq "$t: --fail-on-error exit" "$RC" 1
            expect_eq "$t: succeeded/failed/errored" \
                "$(jq -c '[.succeeded, .failed, .errors]' "$TMP/$t.json" 2>&1)" "[0,40,0]"
            expect_eq "$t: status 0, right lengths, wrong bytes" \
                "$(jq -c '[.grpc.status_codes, .grpc.length_mismatches, .grpc.content_mismatches]' "$TMP/$t.json")" \
                '[{"0":40},0,40]'
            expect_match "$t: text line" "$(cat "$TMP/$t.out")" \
                "response length checked \\([0-9]+ bytes\\): 0 mismatched; content checked: 40 mismatched"
        done
    done
    kill "$PEER_PID"
fi

# the gRPC peers (servers/peers/), started by serve_lib.sh's start_peer
peer_calls() { # NAME: unary on both engines, and the streaming methods
    local e m t
    for e in fast nghttp2; do
        call "$1-$e" --engine "$e" --grpc /h2bench.Echo/Unary --grpc-size 100 -n 200 -c 2 -m 4 \
            "http://$PEER_HP"
        expect_calls "$1-$e" 200 0 '{"0":200}'
        expect_eq "$1-$e: echo lengths and contents" \
            "$(jq -c '[.grpc.length_mismatches, .grpc.content_mismatches]' "$TMP/$1-$e.json")" '[0,0]'
    done
    for m in Bidi ClientStream ServerStream; do
        t="$1-$m"
        call "$t" --grpc "/h2bench.Echo/$m" --grpc-size 10 --grpc-messages 3 -n 30 -c 1 -m 3 \
            "http://$PEER_HP"
        expect_calls "$t" 30 0 '{"0":30}'
        expect_eq "$t: lengths and contents" \
            "$(jq -c '[.grpc.length_mismatches, .grpc.content_mismatches]' "$TMP/$t.json")" '[0,0]'
    done
    call "$1-unknown" --grpc /h2bench.Echo/Nope -n 10 "http://$PEER_HP"
    expect_calls "$1-unknown" 0 10 '{"12":10}'
}
PY=/usr/bin/python3 # Debian's, with python3-grpcio (grpc_interop.sh uses it too)
if [ -x "$PY" ] && "$PY" -c 'import grpc' 2>/dev/null; then
    sed -e 's/{host}/127.0.0.1/; s/{port}/0/; s/{threads}/2/' \
        "$SRC/servers/peers/grpcio-echo.py.in" >"$TMP/grpcio-echo.py"
    if start_peer grpcio "$PY" "$TMP/grpcio-echo.py"; then
        peer_calls grpcio
        kill "$PEER_PID"
    fi
else
    echo "python3-grpcio not installed: the grpcio peer's checks skipped"
fi
# a scenario's matrix.grpc: every cell gRPC calls, h2ref and the grpcio peer side by side (the
# peer's cells are skipped without python3-grpcio, and then only h2ref's are counted)
timeout 280 "$H2BENCH" run "$SRC/tests/data/run/grpc-cells.json" --out "$TMP/run.json" \
    >"$TMP/run.out" 2>"$TMP/run.err"
expect_eq "run grpc-cells: exit" "$?" 0
expect_eq "run grpc-cells: h2ref's 4 cells, every call status 0" \
    "$(jq -c '[.matrix[] | select(.target == "h2ref") | [.requests, .succeeded, .failed]] | unique' "$TMP/run.json")" \
    '[[1000,1000,0]]'
# a scenario with matrix.grpc and budgets: the budget passes send the same gRPC calls (POST,
# application/grpc, te: trailers, the call's body), and count one only with grpc-status 0: h2ref
# allocates nothing per warm call and reads and writes once per round of 4 calls; an unknown
# method's calls (UNIMPLEMENTED) leave every budget null, naming the status
"$H2BENCH" --version | grep -q sanitizers && san=1 || san=0
timeout 280 "$H2BENCH" run "$SRC/tests/data/run/grpc-budgets.json" --no-progress \
    --out "$TMP/gb.json" >"$TMP/gb.out" 2>&1
expect_eq "run grpc-budgets: exit" "$?" 0
if [ "$san" = 1 ]; then
    expect_match "grpc budgets: RSS per connection measured (sanitizer build)" \
        "$(jq '.matrix[0].budgets.rss_per_connection_kib' "$TMP/gb.json")" '^[0-9.]+$'
else
    expect_eq "grpc budgets: allocs, bytes, reads, writes per call" \
        "$(jq -c '.matrix[0].budgets | [.allocs_per_request, .bytes_per_request, .reads_per_request, .writes_per_request]' "$TMP/gb.json")" \
        '[0,0,0.25,0.25]'
fi
jq '.matrix.grpc.method = "/h2bench.Echo/Nope" | .budgets.rss_connections = 2' \
    "$SRC/tests/data/run/grpc-budgets.json" >"$TMP/gb-nope.json"
timeout 280 "$H2BENCH" run "$TMP/gb-nope.json" --no-progress --out "$TMP/gb-nope-r.json" \
    >"$TMP/gb-nope.out" 2>&1
expect_eq "grpc budgets, unknown method: the cell failed, exit" "$?" 3
expect_eq "grpc budgets, unknown method: every budget null" \
    "$(jq -c '.matrix[0].budgets | [.allocs_per_request, .reads_per_request, .rss_per_connection_kib]' "$TMP/gb-nope-r.json")" \
    '[null,null,null]'
expect_match "grpc budgets, unknown method: the reason names the status" \
    "$(jq -r '.matrix[0].budgets.note' "$TMP/gb-nope-r.json")" 'grpc-status other than 0'
if [ -x "$PY" ] && "$PY" -c 'import grpc' 2>/dev/null; then
    expect_eq "run grpc-cells: grpcio's 4 cells, every call status 0" \
        "$(jq -c '[.matrix[] | select(.target == "grpcio") | [.requests, .succeeded, .failed]] | (length|tostring) + (unique|tostring)' "$TMP/run.json")" \
        '"4[[1000,1000,0]]"'
fi
if [ -x "$BIN/h2bench-grpcpp-echo" ]; then
    if start_peer grpcpp "$BIN/h2bench-grpcpp-echo" 127.0.0.1 0 2; then
        peer_calls grpcpp
        kill "$PEER_PID"
    fi
    # h2bench run finds the peer it builds beside itself, with its directory not in PATH
    cat >"$TMP/grpcpp-cell.json" <<'JSON'
{"name": "grpcpp-cell", "targets": [{"name": "grpcpp", "type": "peer", "peer": "grpcpp", "threads": 1}],
 "client": {"type": "h2bench", "threads": 1},
 "matrix": {"connections": [2], "streams": [4], "requests": 1000,
            "grpc": {"method": "/h2bench.Echo/Unary", "size": 100}}}
JSON
    PATH=/usr/bin:/bin timeout 120 "$H2BENCH" run "$TMP/grpcpp-cell.json" --no-progress \
        --out "$TMP/grpcpp-run.json" >"$TMP/grpcpp-run.out" 2>&1
    expect_eq "run grpcpp cell (peer beside h2bench, not in PATH): exit" "$?" 0
    expect_eq "run grpcpp cell: every call status 0" \
        "$(jq -c '[.matrix[] | [.requests, .succeeded, .failed]]' "$TMP/grpcpp-run.json")" \
        '[[1000,1000,0]]'
else
    echo "grpcpp peer not built (libgrpc++-dev, protobuf-compiler-grpc): its checks skipped"
fi
finish
