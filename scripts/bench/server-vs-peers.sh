#!/usr/bin/env bash
# server-vs-peers.sh - h2bench serve against nghttpd and h2o, side by side, in one invocation.
#
# Each server runs ONE worker pinned to CPU 0 (taskset -c 0; nghttpd -n 1, h2o num-threads 1,
# h2bench serve --threads 1 --cpus 0); h2load runs one thread pinned to CPU 1. Servers are
# measured alternately, round after round, so drift on this shared machine hits all of them
# alike; the tables show the median of the rounds and the ratio of h2bench to each peer: req/s
# (GB/s for 1 MiB), and the server's CPU time per request (utime+stime from /proc, all its
# threads), which a busy machine disturbs much less than throughput.
# Cells: (connections, streams) = (1,1) (10,10) (100,100) (1000,4) on /hello (13 bytes), then
# 1 MiB responses (10 connections x 1 stream) in GB/s. Peak RSS of each server during the
# (1000,4) cell is sampled from /proc.
#
# CLIENT=h2bench drives every server with `h2bench load` instead (one thread, CPU 1) over the
# 12 cells of scenarios/matrix.json (connections {1,10,100,1000} x streams {1,10,100}, streams
# capped at 4096 / connections as the matrix's aggregate cap does: 1000 x 10 and 1000 x 100 run
# 4), and adds the client's CPU share of its core per cell (its "client cpu" line over the wall
# time): a cell where it reached 90 % is flagged, since it then measured the client, not the
# server. h2load costs more per request than the servers, so the default view mostly measures
# h2load; it stays as the second view.
#
# usage: scripts/bench/server-vs-peers.sh [BUILD_BIN_DIR]
# env:   ROUNDS (default 3), SCALE multiplies the request count of every cell (default 1),
#        CLIENT h2load (default) or h2bench,
#        COUNTS=1: instead of the tables, syscalls by kind and epoll wake-ups per request of each
#        server at (10,10) and (1000,4), counted by `perf stat -e 'syscalls:sys_enter_*' -p PID`
#        (tracepoints, no hardware counters needed) as the difference between a run of N and one
#        of 3N requests, so connection set-up cancels out; the client is h2bench load
# Not a test: speed is never asserted in CTest. Needs nghttpd, h2o, h2load, taskset.
set -u
BIN=${1:-build/bin}
H2BENCH=$(realpath "$BIN/h2bench")
SRC=$(cd "$(dirname "$0")/../.." && pwd)
ROUNDS=${ROUNDS:-3}
SCALE=${SCALE:-1}
CLIENT=${CLIENT:-h2load}
case "$CLIENT" in
h2load | h2bench) ;;
*) echo "server-vs-peers: CLIENT must be h2load or h2bench, not '$CLIENT'" >&2; exit 2 ;;
esac
TICK=$(getconf CLK_TCK)
TMP=$(mktemp -d)
PIDS=()
cleanup() {
    for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
    for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null; done
    rm -rf "$TMP"
}
trap cleanup EXIT

for tool in nghttpd h2o h2load taskset python3; do
    command -v "$tool" >/dev/null || { echo "server-vs-peers: $tool not found" >&2; exit 3; }
done
[ -x "$H2BENCH" ] || { echo "server-vs-peers: no $H2BENCH (build first)" >&2; exit 3; }

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_port() {
    for _ in $(seq 100); do
        (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
        sleep 0.1
    done
    echo "server-vs-peers: nothing listens on port $1" >&2
    exit 3
}

# Same bodies everywhere: 13-byte /hello and a 1 MiB file for the peers' docroot.
DOC=$TMP/doc
mkdir -p "$DOC"
printf 'Hello, World!' >"$DOC/hello"
python3 -c 'import sys; sys.stdout.buffer.write(bytes(i & 255 for i in range(1 << 20)))' >"$DOC/1m"

# h2bench serve
taskset -c 0 "$H2BENCH" serve --threads 1 --cpus 0 --max-connections 8192 \
    >"$TMP/h2bench.out" 2>"$TMP/h2bench.err" &
PID_h2bench=$!
PIDS+=("$PID_h2bench")
for _ in $(seq 100); do grep -q '^listening on' "$TMP/h2bench.out" && break; sleep 0.1; done
URL_h2bench=$(sed -n 's/^listening on //p' "$TMP/h2bench.out")
[ -n "$URL_h2bench" ] || { echo "server-vs-peers: h2bench serve did not start" >&2; exit 3; }

# nghttpd: one thread, same stream limit and windows as ours (1 MiB stream, 16 MiB connection).
P=$(free_port)
taskset -c 0 nghttpd --no-tls -n 1 -a 127.0.0.1 -d "$DOC" -m 256 -w 20 -W 24 "$P" \
    >"$TMP/nghttpd.log" 2>&1 &
PID_nghttpd=$!
PIDS+=("$PID_nghttpd")
wait_port "$P"
URL_nghttpd=http://127.0.0.1:$P

# h2o 2.2.5 from the shared peer template (servers/peers/h2o.conf.in).
P=$(free_port)
sed -e "s|{host}|127.0.0.1|; s|{port}|$P|; s|{threads}|1|; s|{max_streams}|100|" \
    -e "s|{dir}|$TMP|; s|{docroot}|$DOC|" "$SRC/servers/peers/h2o.conf.in" >"$TMP/h2o.conf"
taskset -c 0 h2o -c "$TMP/h2o.conf" >"$TMP/h2o.log" 2>&1 &
PID_h2o=$!
PIDS+=("$PID_h2o")
wait_port "$P"
URL_h2o=http://127.0.0.1:$P

SERVERS="h2bench nghttpd h2o"
path_for() { # server, kind
    case "$1:$2" in
    h2bench:hello) echo /hello ;;
    h2bench:mib) echo /bytes/1048576 ;;
    *:hello) echo /hello ;;
    *:mib) echo /1m ;;
    esac
}

# peak_rss PID: highest VmRSS (KiB) seen until the file $TMP/stop-rss appears.
peak_rss() {
    local peak=0 v
    while [ ! -e "$TMP/stop-rss" ]; do
        v=$(sed -n 's/^VmRSS:[[:space:]]*\([0-9]*\) kB/\1/p' "/proc/$1/status" 2>/dev/null)
        [ -n "$v" ] && [ "$v" -gt "$peak" ] && peak=$v
        sleep 0.05
    done
    echo "$peak"
}

cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

# client_cmd C M N URL: the load command of $CLIENT, one thread on CPU 1.
client_cmd() {
    if [ "$CLIENT" = h2bench ]; then
        taskset -c 1 "$H2BENCH" load -t 1 -c "$1" -m "$2" -n "$3" "$4"
    else
        taskset -c 1 h2load -t 1 -c "$1" -m "$2" -n "$3" "$4"
    fi
}

# client_share OUTPUT: the client's CPU over its wall time (h2bench load's "client cpu" line and
# "finished in"), or - for h2load, which reports neither.
client_share() {
    printf '%s\n' "$1" | awk '
        /^finished in / { t = $3; sub(/,$/, "", t)
                          if (t ~ /ms$/) { sub(/ms$/, "", t); wall = t / 1000 }
                          else if (t ~ /us$/) { sub(/us$/, "", t); wall = t / 1e6 }
                          else { sub(/s$/, "", t); wall = t } }
        /^client cpu: / { cpu = $3 + $5; sub(/s$/, "", $3) }
        END { if (wall > 0 && cpu != "") printf "%.3f", cpu / wall; else printf "-" }'
}

# run SERVER KIND C M N -> prints "req_per_s bytes_per_s unit cpu_ticks requests_done client_share"
run() {
    local s=$1 kind=$2 c=$3 m=$4 n=$5 url pid out t0 t1 sampler=
    eval "url=\$URL_$s; pid=\$PID_$s"
    rm -f "$TMP/stop-rss"
    if [ "$c" -ge 1000 ]; then
        peak_rss "$pid" >"$TMP/rss.$s" &
        sampler=$!
    fi
    t0=$(cpu_ticks "$pid")
    out=$(client_cmd "$c" "$m" "$n" "$url$(path_for "$s" "$kind")" 2>&1)
    t1=$(cpu_ticks "$pid")
    touch "$TMP/stop-rss"
    [ -n "$sampler" ] && wait "$sampler"
    if ! printf '%s' "$out" | grep -q ' 0 failed, 0 errored'; then
        echo "$s $kind ($c,$m): $(printf '%s' "$out" | grep -E '^requests:' | head -1)" >&2
    fi
    local rate ok
    rate=$(printf '%s\n' "$out" | sed -n 's/^finished in [^,]*, \([0-9.]*\) req\/s, \([0-9.]*\)\([KMG]*\)B\/s.*/\1 \2 \3/p')
    ok=$(printf '%s\n' "$out" | sed -n 's/^requests: .* \([0-9]*\) succeeded.*/\1/p')
    [ -n "$rate" ] && echo "$rate $((t1 - t0)) ${ok:-0} $(client_share "$out")"
}

# kind:connections:streams:requests
if [ "$CLIENT" = h2bench ]; then # scenarios/matrix.json's 12 cells (aggregate cap 4096)
    CELLS="hello:1:1:5000 hello:1:10:40000 hello:1:100:40000
           hello:10:1:20000 hello:10:10:40000 hello:10:100:60000
           hello:100:1:20000 hello:100:10:60000 hello:100:40:60000
           hello:1000:1:20000 hello:1000:4:40000:10 hello:1000:4:40000:100"
else
    CELLS="hello:1:1:3000 hello:10:10:40000 hello:100:100:100000 hello:1000:4:40000 mib:10:1:400"
fi
echo "server-vs-peers: $ROUNDS rounds, servers on CPU 0, $CLIENT on CPU 1 (SCALE=$SCALE)"
echo "  h2bench: $URL_h2bench  nghttpd: $URL_nghttpd  h2o: $URL_h2o"
# counts SERVER C M N: "syscall count" lines of the perf stat attached to SERVER over one load.
counts() {
    local pid url
    eval "url=\$URL_$1; pid=\$PID_$1"
    perf stat -x, -e 'syscalls:sys_enter_*' -p "$pid" -o "$TMP/perf.$1" &
    local perfpid=$!
    sleep 0.3
    taskset -c 1 "$H2BENCH" load -t 1 -c "$2" -m "$3" -n "$4" "$url$(path_for "$1" hello)" \
        >/dev/null 2>&1
    kill -INT "$perfpid"
    wait "$perfpid"
    awk -F, '$1 ~ /^[0-9]+$/ && $1 > 0 { sub(/^syscalls:sys_enter_/, "", $3); print $3, $1 }' \
        "$TMP/perf.$1"
}
if [ "${COUNTS:-0}" = 1 ]; then
    command -v perf >/dev/null || { echo "server-vs-peers: perf not found" >&2; exit 3; }
    for s in $SERVERS; do run "$s" hello 10 10 2000 >/dev/null; done
    for cell in 10:10:20000 1000:4:20000; do
        IFS=: read -r c m n <<<"$cell"
        for s in $SERVERS; do
            counts "$s" "$c" "$m" "$n" | sed "s/^/$c:$m $s 1 $n /" >>"$TMP/counts"
            counts "$s" "$c" "$m" $((3 * n)) | sed "s/^/$c:$m $s 3 $n /" >>"$TMP/counts"
        done
    done
    python3 - "$TMP/counts" <<'EOF'
import sys
v = {}
for line in open(sys.argv[1]):
    cell, srv, k, n, name, cnt = line.split()
    v.setdefault((cell, srv), {}).setdefault(name, {})[k] = (int(cnt), int(n))
print("syscalls per request (difference of a 3N and an N run; epoll_* = wake-ups)")
for (cell, srv), by in v.items():
    per = {}
    for name, r in by.items():
        c3, n = r.get("3", (0, 0))
        c1, _ = r.get("1", (0, n))
        if n:
            per[name] = (c3 - c1) / (2 * n)
    tot = sum(x for x in per.values() if x > 0)
    top = sorted(((x, k) for k, x in per.items() if x >= 0.0005), reverse=True)
    print("(%s) %-8s total %.3f: %s" % (cell.replace(":", ","), srv, tot,
          ", ".join("%s %.4f" % (k, x) for x, k in top)))
EOF
    exit 0
fi

for s in $SERVERS; do # warm-up: page cache, code paths, lazy allocations
    run "$s" hello 10 10 2000 >/dev/null
done
for r in $(seq "$ROUNDS"); do
    for cell in $CELLS; do
        IFS=: read -r kind c m n req <<<"$cell"
        n=$(awk -v n="$n" -v k="$SCALE" -v c="$c" 'BEGIN { v = int(n * k); print (v < c ? c : v) }')
        for s in $SERVERS; do
            res=$(run "$s" "$kind" "$c" "$m" "$n")
            echo "$kind:$c:$m${req:+/$req} $s $res" >>"$TMP/results"
            [ -e "$TMP/rss.$s" ] && [ "$kind:$c" = "hello:1000" ] &&
                echo "$s $(cat "$TMP/rss.$s")" >>"$TMP/rss" && rm -f "$TMP/rss.$s"
        done
    done
    echo "  round $r done" >&2
done

python3 - "$TMP/results" "$TMP/rss" "$TICK" "$CLIENT" <<'EOF'
import statistics, sys
div = lambda a, b: a / b if b else float("nan")
tick = float(sys.argv[3])
client = sys.argv[4]
res, cpu, share = {}, {}, {}
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) < 8:
        continue
    if f[7] != "-":
        share.setdefault(f[0], {}).setdefault(f[1], []).append(float(f[7]))
    cell, srv, rps, bps, unit = f[0], f[1], float(f[2]), float(f[3]), f[4]
    scale = {"": 1, "K": 1e3, "M": 1e6, "G": 1e9}.get(unit, 1)
    res.setdefault(cell, {}).setdefault(srv, []).append((rps, bps * scale))
    if int(f[6]) > 0:
        cpu.setdefault(cell, {}).setdefault(srv, []).append(int(f[5]) / tick / int(f[6]) * 1e6)
print()
print("| cell (c,m) | h2bench | nghttpd | h2o | vs nghttpd | vs h2o |")
print("|---|---:|---:|---:|---:|---:|")
for cell, by in res.items():
    kind, c, m = cell.split(":")
    mib = kind == "mib"
    def med(s):
        v = [x[1] / 1e9 if mib else x[0] for x in by.get(s, [])]
        return statistics.median(v) if v else float("nan")
    a, n, h = med("h2bench"), med("nghttpd"), med("h2o")
    fmt = (lambda v: "%.2f GB/s" % v) if mib else (lambda v: "%.0f" % v)
    name = "1 MiB (%s,%s)" % (c, m) if mib else "/hello (%s,%s)" % (c, m)
    print("| %s | %s | %s | %s | %.2fx | %.2fx |" % (name, fmt(a), fmt(n), fmt(h), div(a, n), div(a, h)))
print()
print("server CPU per request, microseconds (lower is better; ratio = peer / h2bench)")
if share:
    print("client: highest share of its core in any round, per server; '!' marks a cell where "
          "it reached 90 % (the cell measured the client)")
print()
extra = " client h2bench/nghttpd/h2o |" if share else ""
print("| cell (c,m) | h2bench | nghttpd | h2o | nghttpd/h2bench | h2o/h2bench |" + extra)
print("|---|---:|---:|---:|---:|---:|" + ("---|" if share else ""))
for cell, by in cpu.items():
    kind, c, m = cell.split(":")
    med = lambda s: statistics.median(by[s]) if by.get(s) else float("nan")
    a, n, h = med("h2bench"), med("nghttpd"), med("h2o")
    name = "1 MiB (%s,%s)" % (c, m) if kind == "mib" else "/hello (%s,%s)" % (c, m)
    col = ""
    if share:
        sh = share.get(cell, {})
        top = [max(sh[s]) if sh.get(s) else float("nan") for s in ("h2bench", "nghttpd", "h2o")]
        col = " %s |" % " / ".join(
            ("%.0f%%%s" % (v * 100, "!" if v >= 0.9 else "")) if v == v else "-" for v in top)
    print("| %s | %.1f | %.1f | %.1f | %.2fx | %.2fx |%s" % (name, a, n, h, div(n, a), div(h, a), col))
try:
    rss = {}
    for line in open(sys.argv[2]):
        s, v = line.split()
        rss.setdefault(s, []).append(int(v))
    print()
    print("peak RSS during (1000,4): " + ", ".join(
        "%s %.1f MiB" % (s, max(v) / 1024) for s, v in rss.items()))
except FileNotFoundError:
    pass
EOF
