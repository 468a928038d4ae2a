# serve_lib.sh - start `h2bench serve` for a test and learn its URL. Source after lib.sh.

declare -A SERVE_NAMES # PID -> the NAME given to start_serve

# start_serve NAME [serve options...]: starts the server in the background (stdout to
# $TMP/NAME.out, stderr to $TMP/NAME.err), waits up to 10 s for its "listening on" line, sets
# SERVE_PID and SERVE_URL (http[s]://127.0.0.1:PORT). Returns 1 if it never got ready.
# H2B_TEST_ENGINE=fast|nghttp2 in the environment runs the server with that --engine (the
# *_nghttp2 test variants in CMakeLists.txt set it); H2B_TEST_IO=epoll|uring with that --io (the
# *.uring variants), and a server that fell back from uring to epoll fails the test.
start_serve() {
    local name=$1
    shift
    fresh_output "$name"
    "$H2BENCH" serve ${H2B_TEST_ENGINE:+--engine "$H2B_TEST_ENGINE"} ${H2B_TEST_IO:+--io "$H2B_TEST_IO"} \
        "$@" >"$TMP/$name.out" 2>"$TMP/$name.err" &
    SERVE_PID=$!
    PIDS+=("$SERVE_PID")
    SERVE_NAMES[$SERVE_PID]=$name
    SERVE_URL=
    for _ in $(seq 100); do
        SERVE_URL=$(sed -n 's/^listening on \(https\{0,1\}:\/\/.*\)$/\1/p' "$TMP/$name.out")
        if [ -n "$SERVE_URL" ] && [ "${H2B_TEST_IO:-}" = uring ] && ! grep -qx 'io: uring' "$TMP/$name.out"; then
            # A kernel that refuses io_uring itself (a seccomp filter, io_uring_disabled, ENOSYS)
            # leaves nothing to test here: skipped, and said so. Any other fallback fails.
            if grep -qE '^io: epoll \(io_uring unavailable: io_uring_queue_init: (Operation not permitted|Function not implemented)\)' \
                "$TMP/$name.out"; then
                skip "$name: this machine's kernel refuses io_uring: $(grep '^io:' "$TMP/$name.out")"
            fi
            fail "$name: --io uring is not running: $(grep '^io:' "$TMP/$name.out")"
            return 1
        fi
        [ -n "$SERVE_URL" ] && return 0
        kill -0 "$SERVE_PID" 2>/dev/null || break
        sleep 0.1
    done
    fail "$name: server not ready: $(cat "$TMP/$name.err")"
    return 1
}

# stop_serve PID: SIGTERM, then the exit code (waits at most 10 s before SIGKILL). A server that
# exits other than 0 has the end of its stderr printed (a sanitizer's report, an H2B_ASSERT).
stop_serve() {
    kill -TERM "$1" 2>/dev/null
    for _ in $(seq 100); do
        kill -0 "$1" 2>/dev/null || break
        sleep 0.1
    done
    kill -KILL "$1" 2>/dev/null
    wait "$1"
    local rc=$? name=${SERVE_NAMES[$1]:-}
    if [ "$rc" -ne 0 ] && [ -n "$name" ] && [ -s "$TMP/$name.err" ]; then
        echo "server '$name' exited $rc after SIGTERM; the end of its stderr:"
        tail -n 80 "$TMP/$name.err" | sed 's/^/  | /'
    fi
    return "$rc"
}

# url_port URL: the port of http://host:port
url_port() { printf '%s\n' "${1##*:}"; }

# expect_load_refused WHAT EXPECTED-REGEX ARGS...: `h2bench load ARGS $SERVE_URL/hello` exits 2
# and its first line on stderr matches EXPECTED-REGEX (bad input is named before anything runs).
expect_load_refused() {
    local what=$1 re=$2
    shift 2
    "$H2BENCH" load "$@" "$SERVE_URL/hello" >/dev/null 2>"$TMP/refused.err"
    expect_eq "$what: exit" "$?" 2
    expect_match "$what: message" "$(head -1 "$TMP/refused.err")" "$re"
}

# start_peer NAME CMD...: a peer that prints "listening on http://HOST:PORT" (the gRPC peers of
# servers/peers/); sets PEER_HP and PEER_PID, and adds the pid to PIDS (stopped at exit).
start_peer() {
    local name=$1
    shift
    fresh_output "$name"
    "$@" >"$TMP/$name.out" 2>"$TMP/$name.err" &
    PEER_PID=$!
    PIDS+=("$PEER_PID")
    PEER_HP=
    for _ in $(seq 100); do
        PEER_HP=$(sed -n 's/^listening on http:\/\///p' "$TMP/$name.out")
        [ -n "$PEER_HP" ] && return 0
        kill -0 "$PEER_PID" 2>/dev/null || break
        sleep 0.1
    done
    fail "$name: not ready: $(cat "$TMP/$name.err")"
    return 1
}
