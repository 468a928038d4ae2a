# lib.sh - shared helpers for integration scripts: assertions that count, and cleanup of the
# processes a script started. Source it; call `finish` last.
set -u
BIN=${1:?bin dir}
SRC=${2:?source dir}
H2BENCH=$BIN/h2bench
PASSED=0
FAILED=0
PIDS=()
TMP=$(mktemp -d)
# H2B_TEST_LOAD_IO=epoll|uring (the load tests' *.uring variants in CMakeLists.txt): every
# `h2bench load` of the script runs with that --io, through a wrapper that execs the real binary
# (the same process: $! and signals reach it). A ring this machine refuses skips the script; any
# other fallback to epoll fails it (the probe connects to port 1, refused at once).
if [ -n "${H2B_TEST_LOAD_IO:-}" ]; then
    printf '#!/bin/sh\nif [ "$1" = load ]; then shift; exec "%s" load --io "%s" "$@"; fi\nexec "%s" "$@"\n' \
        "$H2BENCH" "$H2B_TEST_LOAD_IO" "$H2BENCH" >"$TMP/h2bench"
    chmod +x "$TMP/h2bench"
    probe=$("$H2BENCH" load --io "$H2B_TEST_LOAD_IO" -n 1 --timeout 2s http://127.0.0.1:1/ 2>&1 | grep 'using epoll')
    H2BENCH=$TMP/h2bench
    if printf '%s' "$probe" | grep -qE 'io_uring_queue_init: (Operation not permitted|Function not implemented)'; then
        echo "skipped: this machine's kernel refuses io_uring: $probe"
        rm -rf "$TMP"
        exit 77
    fi
    [ -z "$probe" ] || echo "FAIL: load --io $H2B_TEST_LOAD_IO fell back: $probe" >&2
    [ -z "$probe" ] || FAILED=1
fi

cleanup() {
    for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
    for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null; done
    rm -rf "$TMP"
}
trap cleanup EXIT

ok() { PASSED=$((PASSED + 1)); }
fail() { FAILED=$((FAILED + 1)); echo "FAIL: $*" >&2; }

# expect_eq WHAT ACTUAL EXPECTED
expect_eq() { if [ "$2" = "$3" ]; then ok; else fail "$1: got '$2', expected '$3'"; fi; }
# expect_match WHAT TEXT REGEX
expect_match() { if printf '%s' "$2" | grep -Eq -- "$3"; then ok; else fail "$1: '$3' not in: $2"; fi; }

# finish: the closing line; a script that made no check fails (it tested nothing).
finish() {
    if [ "$PASSED" -eq 0 ] && [ "$FAILED" -eq 0 ]; then
        fail "no check was made"
    fi
    echo "$PASSED passed, $FAILED failed"
    [ "$FAILED" -eq 0 ]
}

# skip REASON: this build or machine cannot run the script; CTest reports it skipped (exit 77,
# SKIP_RETURN_CODE), never passed.
# fresh_output NAME: empties $TMP/NAME.out and $TMP/NAME.err before a process is started with
# its output there. The shell's redirection truncates them only once the child runs, and a wait
# that reads them first would read the ready line of an earlier process of the same NAME (a
# clean-clone CI run under load: "srv-fast: --io uring is not running: ", the old "listening on"
# read, then the new, empty file grepped for "io:"; or a dead server's URL).
fresh_output() {
    : >"$TMP/$1.out"
    : >"$TMP/$1.err"
}
skip() {
    echo "skipped: $*"
    exit 77
}
