#!/usr/bin/env bash
# floor_uring.sh - `h2bench floor-serve --io uring` (issue 33): the fallback to epoll when the
# ring is refused (the "io:" line, one stderr line, still every answer exact); on the ring,
# exact answer bytes for 300 connections, for pipelined requests (a partial one unanswered until
# its last byte, thousands in one write past the owed-answers bound), peers that flood and never
# read (the server stops reading them: their bytes wait in its sockets; RSS bounded; others still
# answered), and SIGTERM with those peers still connected and sends in flight exits 0 (the
# sanitizer builds run it too: a connection freed before its last completion is caught there).
# floor.sh runs again on the ring as floor.uring.
. "$(dirname "$0")/lib.sh"
command -v jq >/dev/null || skip "jq is not installed"
command -v python3 >/dev/null || skip "python3 is not installed"

. "$(dirname "$0")/floor_lib.sh"
stop_floor() {
    kill -TERM "$FLOOR_PID"
    wait "$FLOOR_PID"
}
rss_kib() { awk '/^VmRSS/ {print $2}' "/proc/$1/status"; }

# 1. Refused: H2B_URING_FAIL=1 stands for io_uring_disabled=2, seccomp or ENOSYS.
H2B_URING_FAIL=1 start_floor_as fallback --io uring --request-bytes 20 --response-bytes 40
expect_match "fallback: io line" "$(grep '^io:' "$TMP/fallback.out")" \
    '^io: epoll \(io_uring unavailable: .*H2B_URING_FAIL=1.*\)$'
expect_eq "fallback: one stderr line" "$(wc -l <"$TMP/fallback.err")" 1
expect_match "fallback: stderr" "$(cat "$TMP/fallback.err")" \
    '^h2bench floor-serve: --io uring: .*H2B_URING_FAIL=1.*; using epoll$'
"$H2BENCH" load --raw 20:40 -n 2000 -c 10 --json "$TMP/fallback.json" "$FLOOR_URL/" >/dev/null 2>&1
expect_eq "fallback: every answer, exact bytes" \
    "$(jq -c '[.succeeded, .traffic.sent, .traffic.total]' "$TMP/fallback.json")" \
    "[2000,40000,80000]"
stop_floor
expect_eq "fallback: SIGTERM exits 0" "$?" 0
for io in "" "--io epoll"; do
    # shellcheck disable=SC2086
    start_floor_as epoll $io --request-bytes 20 --response-bytes 40
    expect_eq "floor-serve $io: no io line" "$(grep -c '^io:' "$TMP/epoll.out")" 0
    expect_eq "floor-serve $io: no stderr" "$(wc -c <"$TMP/epoll.err")" 0
    stop_floor
done
"$H2BENCH" floor-serve --io poll --request-bytes 20 --response-bytes 40 >/dev/null 2>"$TMP/bad.err"
expect_eq "--io poll exits 2" "$?" 2
expect_match "--io poll names the option" "$(cat "$TMP/bad.err")" "invalid --io 'poll'"

# 2. The ring itself. A kernel that refuses io_uring leaves nothing more to test here.
start_floor_as uring --io uring --request-bytes 20 --response-bytes 40
if ! grep -qx 'io: uring' "$TMP/uring.out"; then
    uring_refused uring && skip "this machine's kernel refuses io_uring: $(grep '^io:' "$TMP/uring.out")"
    fail "--io uring is not running: $(grep '^io:' "$TMP/uring.out")"
    finish
    exit
fi
expect_eq "uring: no stderr" "$(wc -c <"$TMP/uring.err")" 0
N=20000
"$H2BENCH" load --raw 20:40 -n $N -c 300 --json "$TMP/many.json" "$FLOOR_URL/" >/dev/null 2>&1
expect_eq "uring: 300 connections, every answer, exact bytes" \
    "$(jq -c '[.succeeded, .traffic.sent, .traffic.total]' "$TMP/many.json")" \
    "[$N,$((20 * N)),$((40 * N))]"
# Pipelined: K whole requests and a partial one in one write get exactly K answers; the last
# byte of the partial one gets one more. Then 5000 requests in one write (past the 64 answers
# owed at which the server stops reading, so its receive is cancelled and re-armed many times)
# get exactly 5000 answers, on 100 connections at once.
python3 - "$FLOOR_PORT" >"$TMP/pipe.out" 2>&1 <<'PY'
import socket, sys
port = int(sys.argv[1])

def read_exact(s, n):
    got = b""
    while len(got) < n:
        b = s.recv(n - len(got))
        if not b:
            raise SystemExit("closed after %d of %d bytes" % (len(got), n))
        got += b
    return got

def nothing_more(s):
    s.settimeout(0.3)
    try:
        b = s.recv(1)
        return len(b) == 0 and "closed" or "one byte too many"
    except socket.timeout:
        return None
    finally:
        s.settimeout(30)

socks = [socket.create_connection(("127.0.0.1", port), timeout=30) for _ in range(100)]
bad = 0
for k, s in enumerate(socks):
    s.sendall(b"r" * (20 * (k + 1) + 19))
for k, s in enumerate(socks):
    if read_exact(s, 40 * (k + 1)) != bytes(40 * (k + 1)):
        bad += 1
for s in socks[:5]:  # the partial request is not answered (a negative check: cannot fail falsely)
    why = nothing_more(s)
    if why:
        print("partial request:", why)
        bad += 1
for s in socks:
    s.sendall(b"x")
for s in socks:
    read_exact(s, 40)
for s in socks:
    s.sendall(b"p" * (20 * 5000))
for s in socks:
    read_exact(s, 40 * 5000)
for s in socks[:5]:
    why = nothing_more(s)
    if why:
        print("after 5000:", why)
        bad += 1
print("pipelined bad:", bad)
PY
expect_eq "uring: pipelined answers exact" "$(tail -1 "$TMP/pipe.out")" "pipelined bad: 0"
stop_floor
expect_eq "uring: SIGTERM exits 0" "$?" 0

# 3. Peers that flood requests and never read: once 64 answers are owed the server stops reading,
# so each peer's sending stalls, its bytes wait unread in the server's socket (the receive queue
# in /proc/net/tcp), and the server's memory does not grow. A bound on what a peer got to send
# before it stalled, from this machine's socket buffer limits: a server that kept reading (and
# counting) would take far more.
start_floor_as flood --io uring --request-bytes 20 --response-bytes 16384
before=$(rss_kib "$FLOOR_PID")
python3 - "$FLOOR_PORT" "$TMP/flood.ready" >"$TMP/flood.out" 2>&1 <<'PY' &
import socket, sys, time
port, ready = int(sys.argv[1]), sys.argv[2]
rmem = int(open("/proc/sys/net/ipv4/tcp_rmem").read().split()[2])
wmem = int(open("/proc/sys/net/ipv4/tcp_wmem").read().split()[2])
bound = rmem + wmem + 64 * 20 + (1 << 20)
socks, stalled, most = [], 0, 0
for i in range(20):
    s = socket.create_connection(("127.0.0.1", port))
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # answers back up at once
    s.setblocking(False)
    sent, idle = 0, None
    while sent <= bound:
        try:
            sent += s.send(b"f" * 65536)
            idle = None
        except BlockingIOError:
            idle = idle or time.monotonic()
            if time.monotonic() - idle > 0.5:
                stalled += 1
                break
            time.sleep(0.01)
    most = max(most, sent)
    socks.append(s)
unread = 0
for path in ("/proc/net/tcp", "/proc/net/tcp6"):
    try:
        lines = open(path).read().splitlines()[1:]
    except OSError:
        continue
    for line in lines:
        f = line.split()
        lport = int(f[1].split(":")[1], 16)
        rxq = int(f[4].split(":")[1], 16)
        if lport == port and f[3] == "01" and rxq > 0:
            unread += 1
print("stalled %d of 20, unread %d, most sent %d, bound %d" % (stalled, unread, most, bound))
sys.stdout.flush()
open(ready, "w").close()
time.sleep(60)  # open until the server is stopped under them
PY
PIDS+=("$!")
for _ in $(seq 600); do [ -e "$TMP/flood.ready" ] && break; sleep 0.1; done
cat "$TMP/flood.out"
expect_match "flood: every peer stalled" "$(cat "$TMP/flood.out")" '^stalled 20 of 20'
expect_match "flood: the server leaves their bytes unread" "$(cat "$TMP/flood.out")" 'unread 20,'
after=$(rss_kib "$FLOOR_PID")
echo "floor-serve --io uring RSS: ${before} KiB before, ${after} KiB with 20 non-reading flooders"
expect_eq "flood: RSS stays bounded (${before} -> ${after} KiB, < +8 MiB)" \
    "$([ "$after" -lt $((before + 8192)) ] && echo yes)" yes
"$H2BENCH" load --raw 20:16384 -n 200 -c 2 --json "$TMP/others.json" "$FLOOR_URL/" >/dev/null 2>&1
expect_eq "flood: others still answered, exact bytes" \
    "$(jq -c '[.succeeded, .traffic.total]' "$TMP/others.json")" "[200,$((200 * 16384))]"
# SIGTERM with the flooders connected: a send blocked in the kernel on each, receives cancelled
stop_floor
expect_eq "flood: SIGTERM with peers connected exits 0" "$?" 0
finish
