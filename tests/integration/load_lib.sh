# load_lib.sh - helpers for the `h2bench load` integration scripts: a free port, nghttpd on it,
# and fields out of the load's text output. Source after lib.sh.

# free_port: a port the kernel just gave out and released (nghttpd needs an explicit one).
free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# wait_port PORT: until something accepts on 127.0.0.1:PORT (at most 5 s).
wait_port() {
    for _ in $(seq 100); do
        (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
        sleep 0.05
    done
    return 1
}

# start_nghttpd DOCROOT [extra args...]: sets NGHTTPD_PID and PORT (h2c, one worker).
start_nghttpd() {
    local root=$1
    shift
    PORT=$(free_port)
    nghttpd --no-tls -n 1 -d "$root" "$@" "$PORT" >"$TMP/nghttpd.log" 2>&1 &
    NGHTTPD_PID=$!
    PIDS+=("$NGHTTPD_PID")
    wait_port "$PORT" || fail "nghttpd did not start on $PORT"
}

# field TEXT REGEX: first capture group of the first line matching REGEX (sed -E syntax).
field() { printf '%s\n' "$1" | sed -nE "s/$2/\\1/p" | head -1; }

# docroot with a small file
make_docroot() {
    mkdir -p "$TMP/www"
    printf 'hello\n' >"$TMP/www/hello"
}

# start_fake MODE: a fakepeer.py server (tests/integration/fakepeer.py MODE); sets FAKE_URL and
# FAKE_PID. The previous fakepeer of the same mode wrote the same file: it is removed first, or
# the wait could read the killed one's URL before the new child's redirection truncates it.
start_fake() {
    rm -f "$TMP/fake-$1.out"
    python3 "$SRC/tests/integration/fakepeer.py" "$1" >"$TMP/fake-$1.out" &
    FAKE_PID=$!
    PIDS+=($!)
    for _ in $(seq 100); do
        FAKE_URL=$(sed -n 's/^listening on //p' "$TMP/fake-$1.out")
        [ -n "$FAKE_URL" ] && return
        sleep 0.05
    done
    fail "fakepeer $1 did not start"
}
