#!/usr/bin/env bash
# floor.sh - the kernel's floor: `h2bench floor-serve` driven by `h2bench load --raw`. Every
# request sent is answered, with exactly REQ bytes out and RESP bytes back per request (closed
# and open loop); a peer that sends garbage or floods requests and never reads leaves the
# server's RSS bounded and the server answering others; SIGTERM exits 0; bad flags exit 2.
# H2B_TEST_IO=uring (the floor.uring variant) runs every floor-serve with --io uring, and one
# that fell back to epoll fails (floor_uring.sh checks the fallback and the ring's own bounds).
. "$(dirname "$0")/lib.sh"
command -v jq >/dev/null || skip "jq is not installed"
command -v python3 >/dev/null || skip "python3 is not installed"

. "$(dirname "$0")/floor_lib.sh"
# start_floor REQ RESP: FLOOR_PID, FLOOR_URL (and FLOOR_PORT); on the ring with H2B_TEST_IO=uring
start_floor() {
    start_floor_as floor ${H2B_TEST_IO:+--io "$H2B_TEST_IO"} --request-bytes "$1" --response-bytes "$2"
    if [ "${H2B_TEST_IO:-}" = uring ] && ! grep -qx 'io: uring' "$TMP/floor.out"; then
        uring_refused floor && skip "this machine refuses io_uring: $(grep '^io:' "$TMP/floor.out")"
        fail "floor-serve --io uring is not running: $(grep '^io:' "$TMP/floor.out")"
    fi
}
rss_kib() { awk '/^VmRSS/ {print $2}' "/proc/$1/status"; }

start_floor 20 40
N=20000
out=$("$H2BENCH" load --raw 20:40 -n $N -c 10 --json "$TMP/raw.json" "$FLOOR_URL/" 2>&1)
expect_match "raw closed loop: all answered" "$out" \
    "requests: $N total, $N started, $N done, $N succeeded, 0 failed, 0 errored, 0 timeout"
expect_eq "raw: bytes sent = 20 per request" "$(jq .traffic.sent "$TMP/raw.json")" $((20 * N))
expect_eq "raw: bytes read = 40 per request" "$(jq .traffic.total "$TMP/raw.json")" $((40 * N))
expect_eq "raw: engine" "$(jq -r .engine "$TMP/raw.json")" raw
expect_eq "raw: protocol" "$(jq -r .protocol "$TMP/raw.json")" tcp
expect_eq "raw: one in flight per connection" "$(jq .streams_effective "$TMP/raw.json")" 1
expect_eq "raw: latency recorded" "$(jq '.latency_ns.p50 > 0' "$TMP/raw.json")" true
# open loop, by count (a busy CPU starts the schedule late)
out=$("$H2BENCH" load --raw 20:40 -n 300 -c 4 --total-rps 600 --json "$TMP/rate.json" "$FLOOR_URL/" 2>&1)
expect_match "raw open loop: all answered" "$out" "requests: 300 total, 300 started, 300 done, 300 succeeded"
expect_eq "raw open loop: bytes" "$(jq '[.traffic.sent, .traffic.total]' -c "$TMP/rate.json")" "[6000,12000]"
# a response the client did not expect (the server answers 40, the client wants 30) is a
# protocol error, never a success
out=$("$H2BENCH" load --raw 20:30 -n 10 -c 1 "$FLOOR_URL/" 2>&1)
expect_match "raw: a longer answer is a protocol error" "$out" "0 succeeded"
kill -TERM "$FLOOR_PID"
wait "$FLOOR_PID"
expect_eq "floor-serve: SIGTERM exits 0" "$?" 0

# hostile peers: garbage, and a flood of requests from a peer that never reads
start_floor 20 16384
before=$(rss_kib "$FLOOR_PID")
python3 - "$FLOOR_PORT" <<'PY'
import os, socket, sys, time
port = int(sys.argv[1])
socks = []
for i in range(50):  # never read: every one floods requests until its send buffer is full
    s = socket.create_connection(("127.0.0.1", port))
    s.setblocking(False)
    sent = 0
    t = time.time()
    while time.time() - t < 0.2:
        try:
            sent += s.send(os.urandom(65536))
        except BlockingIOError:
            time.sleep(0.01)
    socks.append(s)
g = socket.create_connection(("127.0.0.1", port))  # garbage of every size, then a half close
for n in (1, 7, 19, 1000, 65537):
    g.sendall(os.urandom(n))
g.shutdown(socket.SHUT_WR)
time.sleep(0.5)
print("peers left open")
sys.stdout.flush()
time.sleep(3)
PY
after=$(rss_kib "$FLOOR_PID")
echo "floor-serve RSS: ${before} KiB before, ${after} KiB with 50 non-reading flooders"
expect_eq "floor-serve RSS stays bounded (${before} -> ${after} KiB, < +8 MiB)" \
    "$([ "$after" -lt $((before + 8192)) ] && echo yes)" yes
out=$("$H2BENCH" load --raw 20:16384 -n 200 -c 2 "$FLOOR_URL/" 2>&1)
expect_match "floor-serve still answers after hostile peers" "$out" "200 succeeded, 0 failed"
kill -TERM "$FLOOR_PID"
wait "$FLOOR_PID"
expect_eq "floor-serve: SIGTERM with hostile peers gone exits 0" "$?" 0

# bad flags: exit 2
"$H2BENCH" floor-serve --request-bytes 0 --response-bytes 40 >/dev/null 2>&1
expect_eq "floor-serve --request-bytes 0" "$?" 2
"$H2BENCH" floor-serve --response-bytes 40 >/dev/null 2>&1
expect_eq "floor-serve without --request-bytes" "$?" 2
for bad in 20 20: :40 0:40 20:x 20:2000000; do
    "$H2BENCH" load --raw "$bad" -n 1 http://127.0.0.1:1/ >/dev/null 2>&1
    expect_eq "load --raw $bad" "$?" 2
done
"$H2BENCH" load --raw 20:40 --h1 -n 1 http://127.0.0.1:1/ >/dev/null 2>&1
expect_eq "load --raw with --h1" "$?" 2
"$H2BENCH" load --raw 20:40 -n 1 https://127.0.0.1:1/ >/dev/null 2>&1
expect_eq "load --raw with https://" "$?" 2
finish
