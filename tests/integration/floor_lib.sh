# floor_lib.sh - start `h2bench floor-serve` for a test and learn its URL. Source after lib.sh.

# start_floor_as NAME ARGS...: starts floor-serve with ARGS in the background (stdout to
# $TMP/NAME.out, stderr to $TMP/NAME.err), waits up to 10 s for its "listening on" line, sets
# FLOOR_PID, FLOOR_URL and FLOOR_PORT, and checks the line.
start_floor_as() {
    local name=$1
    shift
    fresh_output "$name"
    "$H2BENCH" floor-serve "$@" >"$TMP/$name.out" 2>"$TMP/$name.err" &
    FLOOR_PID=$!
    PIDS+=("$FLOOR_PID")
    FLOOR_URL=
    for _ in $(seq 100); do
        FLOOR_URL=$(sed -n 's/^listening on //p' "$TMP/$name.out")
        [ -n "$FLOOR_URL" ] && break
        sleep 0.1
    done
    FLOOR_PORT=${FLOOR_URL##*:}
    expect_match "$name: floor-serve ready line" "$FLOOR_URL" '^http://127\.0\.0\.1:[0-9]+$'
}

# uring_refused NAME: true when floor-serve NAME's "io:" line says this kernel or build refuses
# io_uring (a seccomp filter, io_uring_disabled, ENOSYS, no liburing): nothing to test on the ring.
uring_refused() {
    grep -qE '^io: epoll \(io_uring unavailable: (io_uring_queue_init: (Operation not permitted|Function not implemented)|this build has no liburing)' \
        "$TMP/$1.out"
}
