#!/usr/bin/env bash
# grpc-vs-peers.sh - unary gRPC calls on h2bench serve beside the grpc++ peer (Debian's libgrpc++,
# build/bin/h2bench-grpcpp-echo) and the grpcio peer (python3-grpcio), driven by
# `h2bench load --grpc /h2bench.Echo/Unary --grpc-size 64`, in one invocation.
#
# Each server runs one worker thread (grpcio: its minimum of 4 worker threads) pinned to CPU 0;
# the client runs one thread pinned to CPU 1. Servers alternate round after round so drift hits
# them alike. Per cell and server: calls/s (grpc-status 0 only), the server's CPU per call
# (utime+stime of all its threads from /proc over the run) and the client's CPU per call (its own
# rusage). The ratios are h2ref's against each peer's, the median of the rounds.
#
# Usage: scripts/bench/grpc-vs-peers.sh [BUILD_BIN]   (ROUNDS=3, SECONDS_PER_CELL=5,
#        CELLS="1:1 10:10 100:10" as connections:streams)
set -euo pipefail
BIN=${1:-$(cd "$(dirname "$0")/../.." && pwd)/build/bin}
SRC=$(cd "$(dirname "$0")/../.." && pwd)
ROUNDS=${ROUNDS:-3}
SECS=${SECONDS_PER_CELL:-5}
CELLS=${CELLS:-"1:1 10:10 100:10"}
TMP=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$TMP"' EXIT
[ -x "$BIN/h2bench-grpcpp-echo" ] || { echo "grpc-vs-peers: $BIN/h2bench-grpcpp-echo not built" >&2; exit 2; }

free_port() { /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
cpu_ticks() { # utime+stime of every thread of pid $1
    local f
    read -r -a f <<<"$(sed 's/.*) //' "/proc/$1/stat")"
    echo $((f[11] + f[12]))
}
start_server() { # NAME PORT -> PID on stdout
    case $1 in
    h2ref) taskset -c 0 "$BIN/h2bench" serve --threads 1 --port "$2" >"$TMP/$1.log" 2>&1 & ;;
    grpcpp) taskset -c 0 "$BIN/h2bench-grpcpp-echo" 127.0.0.1 "$2" 1 >"$TMP/$1.log" 2>&1 & ;;
    grpcio)
        sed -e "s/{host}/127.0.0.1/g" -e "s/{port}/$2/g" -e "s/{threads}/4/g" \
            "$SRC/servers/peers/grpcio-echo.py.in" >"$TMP/grpcio.py"
        taskset -c 0 /usr/bin/python3 "$TMP/grpcio.py" >"$TMP/$1.log" 2>&1 &
        ;;
    esac
    local pid=$!
    for _ in $(seq 100); do
        (exec 3<>"/dev/tcp/127.0.0.1/$2") 2>/dev/null && break
        sleep 0.1
    done
    echo "$pid"
}
tck=$(getconf CLK_TCK)
for r in $(seq "$ROUNDS"); do
    for cell in $CELLS; do
        c=${cell%%:*} m=${cell##*:}
        for s in h2ref grpcpp grpcio; do
            port=$(free_port)
            pid=$(start_server "$s" "$port")
            "$BIN/h2bench" load --grpc /h2bench.Echo/Unary --grpc-size 64 -c "$c" -m "$m" -D 1 \
                -t 1 "http://127.0.0.1:$port/" >/dev/null 2>&1 || true # warm-up
            t0=$(cpu_ticks "$pid")
            taskset -c 1 "$BIN/h2bench" load --grpc /h2bench.Echo/Unary --grpc-size 64 -c "$c" \
                -m "$m" -D "$SECS" -t 1 --json "$TMP/r.json" "http://127.0.0.1:$port/" >/dev/null 2>&1 || true
            t1=$(cpu_ticks "$pid")
            kill "$pid"
            wait "$pid" 2>/dev/null || true
            /usr/bin/python3 - "$TMP/r.json" "$s" "$c" "$m" "$r" $((t1 - t0)) "$tck" >>"$TMP/rows" <<'PY'
import json, sys
f, s, c, m, r, ticks, tck = sys.argv[1:]
d = json.load(open(f))
ok = d["grpc"]["status_codes"].get("0", 0)
rate = ok / d["duration_s"] if d["duration_s"] else 0
srv = int(ticks) / int(tck) / ok * 1e6 if ok else float("nan")
cli = d["client_cpu_s"] / ok * 1e6 if ok else float("nan")
print(s, c, m, r, f"{rate:.0f}", f"{srv:.2f}", f"{cli:.2f}", ok, d["requests"] - ok)
PY
        done
    done
done
/usr/bin/python3 - "$TMP/rows" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
med = {}
for s, c, m, r, rate, srv, cli, ok, bad in rows:
    med.setdefault((c, m, s), []).append((float(rate), float(srv), float(cli), int(bad)))
print("| cell (c x m) | server | calls/s | server CPU us/call | client CPU us/call | failed calls |")
print("|---|---|---:|---:|---:|---:|")
cells = sorted({(c, m) for c, m, _ in med}, key=lambda x: (int(x[0]), int(x[1])))
for c, m in cells:
    for s in ("h2ref", "grpcpp", "grpcio"):
        v = med[(c, m, s)]
        print(f"| {c} x {m} | {s} | {statistics.median(x[0] for x in v):.0f} | "
              f"{statistics.median(x[1] for x in v):.2f} | {statistics.median(x[2] for x in v):.2f} | "
              f"{sum(x[3] for x in v)} |")
print()
print("| cell | h2ref / grpcpp calls/s | h2ref / grpcpp server CPU per call | h2ref / grpcio calls/s | h2ref / grpcio server CPU per call |")
print("|---|---:|---:|---:|---:|")
for c, m in cells:
    h = [statistics.median(x[i] for x in med[(c, m, "h2ref")]) for i in (0, 1)]
    g = [statistics.median(x[i] for x in med[(c, m, "grpcpp")]) for i in (0, 1)]
    p = [statistics.median(x[i] for x in med[(c, m, "grpcio")]) for i in (0, 1)]
    print(f"| {c} x {m} | {h[0]/g[0]:.2f} | {h[1]/g[1]:.2f} | {h[0]/p[0]:.2f} | {h[1]/p[1]:.2f} |")
PY
