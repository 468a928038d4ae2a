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
# THREADS=2 is the second table: every server with two workers (h2bench serve --threads 2, h2o
# num-threads 2, nghttpd -n 2) and the client with two threads, server and client on both CPUs;
# the client's share is then of its two cores, and a client at 90 % there also starves the server.
#
# COUNTS=1 prints, instead of the tables, what a request costs each server in one run,
# alternating: CPU (perf's task-clock, ns resolution, all threads, from runs without
# tracepoints), context switches, packets sent in its context (net_dev_queue), syscalls
# by kind, epoll wake-ups (epoll_wait/epoll_pwait/epoll_pwait2 returns) and epoll_ctl calls per
# request, at (1,1) (10,1) (10,10) (1000,1) (1000,4) (COUNT_CELLS="c:m:n ..." to change them).
# Counted by `perf stat -e raw_syscalls:sys_enter,syscalls:sys_enter_<kind>... -p PID` (software
# events and tracepoints: no hardware counters needed; "other" is every syscall not listed),
# enabled just around the load, as the difference between a run of 3N and one of N requests on
# the same kind of connections, so connection set-up and teardown cancel out. The client is
# `h2bench load`; each count is taken ROUNDS times, the table gives the medians.
#
# PROFILE=1 takes `perf record -e cpu-clock -g -p PID` of each server during one load at
# (10,10) (1000,4) (1,1) (PROFILE_CELLS to change) and prints the split of samples by kind of
# code (kernel, libnghttp2, libc, the server's own binary, other libraries) and the top symbols.
# Shares of time: on a shared machine they move with the other work (label them so).
#
# SERVERS="h2bench h2o" picks the servers (default: h2bench nghttpd h2o; "uring" is h2bench serve
# --io uring, the same binary on its io_uring backend, e.g. SERVERS="h2bench uring h2o"; "floor"
# and "floor-uring" are the kernel's floor, `h2bench floor-serve` on epoll and on io_uring (one
# thread, raw TCP, FLOOR_BYTES=20:40 request:response bytes as the scenario target "floor"),
# driven by `h2bench load --raw` in the one-stream /hello cells only, so they need CLIENT=h2bench
# (the other cells show "-" for them; COUNTS and PROFILE take their one-stream cells); BASE_BIN=DIR adds
# "base", the h2bench of another build (DIR/h2bench), run the same way beside this one: an A/B
# of a server change in one run, alternating (e.g. a worktree of main at BASE_BIN=../main/build/bin);
# "base-uring" is that build on --io uring (SERVERS="uring base-uring" BASE_BIN=...: an A/B of
# the io_uring backend alone; "base" is then added only if named).
#
# usage: scripts/bench/server-vs-peers.sh [BUILD_BIN_DIR]
# env:   ROUNDS (default 3), SCALE multiplies the request count of every cell (default 1),
#        CLIENT h2load (default) or h2bench, THREADS 1 (default) or 2, COUNTS, PROFILE, SERVERS,
#        BASE_BIN, FLOOR_BYTES (above)
# Not a test: speed is never asserted in CTest. Needs nghttpd, h2o, h2load, taskset, and perf for
# COUNTS and PROFILE.
set -u
BIN=${1:-build/bin}
H2BENCH=$(realpath "$BIN/h2bench")
SRC=$(cd "$(dirname "$0")/../.." && pwd)
ROUNDS=${ROUNDS:-3}
SCALE=${SCALE:-1}
CLIENT=${CLIENT:-h2load}
THREADS=${THREADS:-1}
SERVERS=${SERVERS:-h2bench nghttpd h2o}
BASE=
if [ -n "${BASE_BIN:-}" ]; then
    BASE=$(realpath "$BASE_BIN/h2bench")
    [ -x "$BASE" ] || { echo "server-vs-peers: no h2bench in BASE_BIN=$BASE_BIN" >&2; exit 2; }
    case " $SERVERS " in *" base "* | *" base-uring "*) ;; *) SERVERS="$SERVERS base" ;; esac
fi
# COUNTS and PROFILE always drive the servers with h2bench load, one load per count.
if [ "${COUNTS:-0}" = 1 ] || [ "${PROFILE:-0}" = 1 ]; then CLIENT=h2bench; fi
case "$CLIENT" in
h2load | h2bench) ;;
*) echo "server-vs-peers: CLIENT must be h2load or h2bench, not '$CLIENT'" >&2; exit 2 ;;
esac
case "$THREADS" in
1 | 2) ;;
*) echo "server-vs-peers: THREADS must be 1 or 2, not '$THREADS'" >&2; exit 2 ;;
esac
for s in $SERVERS; do
    case "$s" in
    h2bench | uring | nghttpd | h2o) ;;
    floor | floor-uring)
        [ "$CLIENT" = h2bench ] ||
            { echo "server-vs-peers: server $s is raw TCP: it needs CLIENT=h2bench (load --raw)" >&2; exit 2; } ;;
    base | base-uring) [ -n "$BASE" ] || { echo "server-vs-peers: server $s needs BASE_BIN" >&2; exit 2; } ;;
    *) echo "server-vs-peers: unknown server '$s' in SERVERS (h2bench uring floor floor-uring nghttpd h2o base base-uring)" >&2; exit 2 ;;
    esac
done
TICK=$(getconf CLK_TCK)
TMP=$(mktemp -d)
PIDS=()
cleanup() {
    for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
    for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null; done
    rm -rf "$TMP"
}
trap cleanup EXIT

has() { case " $SERVERS " in *" $1 "*) return 0 ;; esac; return 1; }
# var SERVER: the server's name as a shell variable's suffix (URL_floor_uring)
var() { printf '%s' "${1//-/_}"; }
# is_floor SERVER: a raw-TCP floor, which takes only the one-stream /hello cells (skip_cell)
is_floor() { case "$1" in floor | floor-uring) return 0 ;; esac; return 1; }
FLOOR_BYTES=${FLOOR_BYTES:-20:40}
case "$FLOOR_BYTES" in
[1-9]*:[1-9]*) ;;
*) echo "server-vs-peers: FLOOR_BYTES must be REQ:RESP bytes, not '$FLOOR_BYTES'" >&2; exit 2 ;;
esac
# skip_cell SERVER KIND M: true when SERVER does not take the cell (a floor beyond one stream)
skip_cell() { is_floor "$1" && { [ "$2" != hello ] || [ "$3" != 1 ]; }; }
NEED="taskset python3"
has nghttpd && NEED="$NEED nghttpd"
has h2o && NEED="$NEED h2o"
[ "$CLIENT" = h2load ] && NEED="$NEED h2load"
for tool in $NEED; do
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

# Where servers and the client run: THREADS=1 (default) puts one server worker on CPU 0 and
# the client's one thread on CPU 1; THREADS=2 gives every server two workers and the client two
# threads, all on both CPUs (the machine has two).
if [ "$THREADS" = 1 ]; then
    SCPU=0 CCPU=1 CTHREADS=1
else
    SCPU=0-$((THREADS - 1)) CCPU=0-$((THREADS - 1)) CTHREADS=$THREADS
fi

# start_h2bench NAME BINARY [ARGS...]: h2bench serve as server NAME (h2bench, uring with --io
# uring, or base for BASE_BIN); floor and floor-uring are h2bench floor-serve (one thread).
start_h2bench() {
    local name=$1 bin=$2
    shift 2
    if is_floor "$name"; then
        taskset -c "$SCPU" "$bin" floor-serve --max-connections 8192 \
            --request-bytes "${FLOOR_BYTES%%:*}" --response-bytes "${FLOOR_BYTES#*:}" \
            "$@" >"$TMP/$name.out" 2>"$TMP/$name.err" &
    else
        taskset -c "$SCPU" "$bin" serve --threads "$THREADS" --cpus "$SCPU" --max-connections 8192 \
            "$@" >"$TMP/$name.out" 2>"$TMP/$name.err" &
    fi
    set -- "$(var "$name")" "$bin" "$name"
    eval "PID_$1=\$!"
    PIDS+=("$!")
    local u=
    for _ in $(seq 100); do
        u=$(sed -n 's/^listening on //p' "$TMP/$3.out")
        [ -n "$u" ] && break
        sleep 0.1
    done
    [ -n "$u" ] || { echo "server-vs-peers: $2 serve did not start" >&2; exit 3; }
    eval "URL_$1=\$u"
}

has h2bench && start_h2bench h2bench "$H2BENCH"
has base && start_h2bench base "$BASE"
has floor && start_h2bench floor "$H2BENCH"
for s in uring floor-uring base-uring; do
    has $s || continue
    bin=$H2BENCH
    [ "$s" = base-uring ] && bin=$BASE
    start_h2bench $s "$bin" --io uring
    grep -qx 'io: uring' "$TMP/$s.out" ||
        { echo "server-vs-peers: $s: --io uring fell back: $(grep '^io:' "$TMP/$s.out")" >&2; exit 3; }
done

# nghttpd: same stream limit and windows as ours (1 MiB stream, 16 MiB connection).
if has nghttpd; then
    P=$(free_port)
    taskset -c "$SCPU" nghttpd --no-tls -n "$THREADS" -a 127.0.0.1 -d "$DOC" -m 256 -w 20 -W 24 \
        "$P" >"$TMP/nghttpd.log" 2>&1 &
    PID_nghttpd=$!
    PIDS+=("$PID_nghttpd")
    wait_port "$P"
    URL_nghttpd=http://127.0.0.1:$P
fi

# h2o 2.2.5 from the shared peer template (servers/peers/h2o.conf.in).
if has h2o; then
    P=$(free_port)
    sed -e "s|{host}|127.0.0.1|; s|{port}|$P|; s|{threads}|$THREADS|; s|{max_streams}|100|" \
        -e "s|{dir}|$TMP|; s|{docroot}|$DOC|" "$SRC/servers/peers/h2o.conf.in" >"$TMP/h2o.conf"
    taskset -c "$SCPU" h2o -c "$TMP/h2o.conf" >"$TMP/h2o.log" 2>&1 &
    PID_h2o=$!
    PIDS+=("$PID_h2o")
    wait_port "$P"
    URL_h2o=http://127.0.0.1:$P
fi

path_for() { # server, kind
    case "$1:$2" in
    h2bench:hello | base:hello | uring:hello | base-uring:hello) echo /hello ;;
    floor:* | floor-uring:*) echo / ;;
    h2bench:mib | base:mib | uring:mib | base-uring:mib) echo /bytes/1048576 ;;
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

# client_threads C: $CTHREADS, but no more threads than connections (both clients refuse that).
client_threads() { if [ "$1" -lt "$CTHREADS" ]; then echo "$1"; else echo "$CTHREADS"; fi; }

# client_cmd C M N URL [SERVER]: the load command of $CLIENT, $CTHREADS threads on $CCPU (raw
# TCP for a floor).
client_cmd() {
    if is_floor "${5:-}"; then
        taskset -c "$CCPU" "$H2BENCH" load --raw "$FLOOR_BYTES" -t "$(client_threads "$1")" \
            -c "$1" -n "$3" "$4"
    elif [ "$CLIENT" = h2bench ]; then
        taskset -c "$CCPU" "$H2BENCH" load -t "$(client_threads "$1")" -c "$1" -m "$2" -n "$3" "$4"
    else
        taskset -c "$CCPU" h2load -t "$(client_threads "$1")" -c "$1" -m "$2" -n "$3" "$4"
    fi
}

# client_share OUTPUT THREADS: the client's CPU over its wall time and thread count (h2bench
# load's "client cpu" line and "finished in"), or - for h2load, which reports neither.
client_share() {
    printf '%s\n' "$1" | awk -v ct="$2" '
        /^finished in / { t = $3; sub(/,$/, "", t)
                          if (t ~ /ms$/) { sub(/ms$/, "", t); wall = t / 1000 }
                          else if (t ~ /us$/) { sub(/us$/, "", t); wall = t / 1e6 }
                          else { sub(/s$/, "", t); wall = t } }
        /^client cpu: / { cpu = $3 + $5; sub(/s$/, "", $3) }
        END { if (wall > 0 && cpu != "") printf "%.3f", cpu / wall / ct; else printf "-" }'
}

# run SERVER KIND C M N -> prints "req_per_s bytes_per_s unit cpu_ticks requests_done client_share"
run() {
    local s=$1 kind=$2 c=$3 m=$4 n=$5 url pid out t0 t1 sampler=
    skip_cell "$s" "$kind" "$m" && return 0
    eval "url=\$URL_$(var "$s"); pid=\$PID_$(var "$s")"
    rm -f "$TMP/stop-rss"
    if [ "$c" -ge 1000 ]; then
        peak_rss "$pid" >"$TMP/rss.$s" &
        sampler=$!
    fi
    t0=$(cpu_ticks "$pid")
    out=$(client_cmd "$c" "$m" "$n" "$url$(path_for "$s" "$kind")" "$s" 2>&1)
    t1=$(cpu_ticks "$pid")
    touch "$TMP/stop-rss"
    [ -n "$sampler" ] && wait "$sampler"
    if ! printf '%s' "$out" | grep -q ' 0 failed, 0 errored'; then
        echo "$s $kind ($c,$m): $(printf '%s' "$out" | grep -E '^requests:' | head -1)" >&2
    fi
    local rate ok
    rate=$(printf '%s\n' "$out" | sed -n 's/^finished in [^,]*, \([0-9.]*\) req\/s, \([0-9.]*\)\([KMG]*\)B\/s.*/\1 \2 \3/p')
    ok=$(printf '%s\n' "$out" | sed -n 's/^requests: .* \([0-9]*\) succeeded.*/\1/p')
    [ -n "$rate" ] && echo "$rate $((t1 - t0)) ${ok:-0} $(client_share "$out" "$(client_threads "$c")")"
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
echo "server-vs-peers: $ROUNDS rounds, $THREADS server thread(s) on CPU $SCPU, $CLIENT with $CTHREADS thread(s) on CPU $CCPU (SCALE=$SCALE)"
for s in $SERVERS; do eval "echo \"  $s: \$URL_$(var "$s")\""; done
echo "  load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"

# perf_ctl_start OUTFILE PERF-ARGS...: a perf (stat or record) attached with its events off,
# driven through two FIFOs: perf_ctl enable|disable waits for perf's ack, so the counting
# window is exactly the load in between. perf_ctl_stop ends it.
perf_ctl_start() {
    local out=$1
    shift
    rm -f "$TMP/ctl" "$TMP/ack"
    mkfifo "$TMP/ctl" "$TMP/ack"
    perf "$@" -D -1 --control "fifo:$TMP/ctl,$TMP/ack" -o "$out" >"$TMP/perf.log" 2>&1 &
    PERF_PID=$!
    exec 7>"$TMP/ctl" 8<"$TMP/ack"
}
perf_ctl() {
    local a
    echo "$1" >&7
    read -r a <&8
}
perf_ctl_stop() {
    exec 7>&- 8<&-
    kill -INT "$PERF_PID" 2>/dev/null
    wait "$PERF_PID"
}
# load_only SERVER C M N: one h2bench load of /hello (raw for a floor), output discarded (COUNTS,
# PROFILE).
load_only() {
    local url
    eval "url=\$URL_$(var "$1")"
    client_cmd "$2" "$3" "$4" "$url$(path_for "$1" hello)" "$1" >"$TMP/load.out" 2>&1 ||
        echo "server-vs-peers: load of $1 ($2,$3) failed: $(tail -1 "$TMP/load.out")" >&2
}
perf_check() {
    command -v perf >/dev/null || { echo "server-vs-peers: perf not found" >&2; exit 3; }
    perf stat -e task-clock -o /dev/null true 2>/dev/null ||
        { echo "server-vs-peers: perf stat does not run here (perf_event_paranoid?)" >&2; exit 3; }
}

if [ "${COUNTS:-0}" = 1 ]; then
    perf_check
    # The syscalls worth naming; the tracepoints the kernel has (perf refuses a missing one).
    EV=raw_syscalls:sys_enter,net:net_dev_queue
    for k in read write readv writev pread64 sendto sendmsg recvfrom recvmsg epoll_wait \
        epoll_pwait epoll_pwait2 epoll_ctl accept accept4 close shutdown setsockopt getsockopt \
        openat newfstatat fstat futex sendfile64 mmap munmap brk madvise ioctl fcntl getpid \
        clock_gettime clock_nanosleep; do
        [ -d "/sys/kernel/tracing/events/syscalls/sys_enter_$k" ] && EV="$EV,syscalls:sys_enter_$k"
    done
    for s in $SERVERS; do load_only "$s" 10 "$(is_floor "$s" && echo 1 || echo 10)" 2000; done
    for r in $(seq "$ROUNDS"); do
        for cell in ${COUNT_CELLS:-1:1:5000 10:1:20000 10:10:20000 1000:1:20000 1000:4:20000}; do
            IFS=: read -r c m n <<<"$cell"
            for s in $SERVERS; do
                skip_cell "$s" hello "$m" && continue
                # Tracepoints cost time at every syscall, more for the server making more
                # of them: the CPU figure comes from runs with software counters only.
                for pass in "cpu:task-clock,context-switches" "$EV"; do
                    for k in 1 3; do
                        eval "pid=\$PID_$(var "$s")"
                        perf_ctl_start "$TMP/stat" stat -x, -e "${pass#cpu:}" -p "$pid"
                        perf_ctl enable
                        load_only "$s" "$c" "$m" $((k * n))
                        perf_ctl disable
                        perf_ctl_stop
                        awk -F, -v p="$r $c,$m $s $k $n" -v pre="${pass%%:*}" '$1 ~ /^[0-9.]+$/ {
                            e = $3; sub(/^syscalls:sys_enter_/, "", e)
                            print p, (pre == "cpu" ? "cpu:" : "") e, $1 }' \
                            "$TMP/stat" >>"$TMP/counts"
                    done
                done
            done
        done
        echo "  round $r done" >&2
    done
    python3 - "$TMP/counts" <<'EOF'
import statistics, sys
raw = {}
for line in open(sys.argv[1]):
    rnd, cell, srv, k, n, name, val = line.split()
    raw.setdefault((cell, srv), {}).setdefault(rnd, {}).setdefault(name, {})[k] = float(val)
    raw[(cell, srv)][rnd].setdefault("#n", {})[k] = int(n)
EPOLL = ("epoll_wait", "epoll_pwait", "epoll_pwait2")
print()
print("Per request: difference of a 3N and an N run on the same kind of connections, median of")
print("the rounds. CPU from perf's task-clock (all threads; runs without tracepoints); packets out =")
print("net_dev_queue in the server's context (loopback: its responses and ACKs); wakeups =")
print("epoll_wait/_pwait/_pwait2 returns; 'other' = syscalls not named.")
print()
print("| cell (c,m) | server | CPU us/req | ctx switches | packets out | syscalls | epoll wakeups | epoll_ctl | by kind |")
print("|---|---|---:|---:|---:|---:|---:|---:|---|")
for (cell, srv), rounds in raw.items():
    per = {}
    for rnd, by in rounds.items():
        n = by["#n"]["1"]
        for name, v in by.items():
            if name != "#n":
                per.setdefault(name, []).append((v.get("3", 0.0) - v.get("1", 0.0)) / (2 * n))
    med = {k: statistics.median(v) for k, v in per.items()}
    total = med.pop("raw_syscalls:sys_enter", 0.0)
    pkts = med.pop("net:net_dev_queue", 0.0)
    cpu = med.pop("cpu:task-clock", 0.0) * 1e3  # msec per request -> us
    cs = med.pop("cpu:context-switches", 0.0)
    named = sum(v for v in med.values())
    wake = sum(med.get(k, 0.0) for k in EPOLL)
    kinds = sorted(((v, k) for k, v in med.items() if v >= 0.0005), reverse=True)
    if total - named >= 0.0005:
        kinds.append((total - named, "other"))
    print("| (%s) | %s | %.2f | %.3f | %.3f | %.3f | %.4f | %.4f | %s |" % (
        cell, srv, cpu, cs, pkts, total, wake, med.get("epoll_ctl", 0.0),
        ", ".join("%s %.3f" % (k, v) for v, k in kinds)))
EOF
    exit 0
fi

if [ "${PROFILE:-0}" = 1 ]; then
    perf_check
    for s in $SERVERS; do load_only "$s" 10 "$(is_floor "$s" && echo 1 || echo 10)" 2000; done
    for cell in ${PROFILE_CELLS:-10:10:200000 1000:4:200000 1:1:20000}; do
        IFS=: read -r c m n <<<"$cell"
        n=$(awk -v n="$n" -v k="$SCALE" -v c="$c" 'BEGIN { v = int(n * k); print (v < c ? c : v) }')
        for s in $SERVERS; do
            skip_cell "$s" hello "$m" && continue
            eval "pid=\$PID_$(var "$s")"
            perf_ctl_start "$TMP/prof.data" record -e cpu-clock -g -p "$pid"
            perf_ctl enable
            load_only "$s" "$c" "$m" "$n"
            perf_ctl disable
            perf_ctl_stop
            perf report -i "$TMP/prof.data" --no-children --sort dso -g none --stdio -q \
                2>/dev/null | sed "s|^|dso $c,$m $s |" >>"$TMP/prof"
            perf report -i "$TMP/prof.data" --no-children --sort dso,sym -g none --stdio -q \
                2>/dev/null | head -12 | sed "s|^|sym $c,$m $s |" >>"$TMP/prof"
            rm -f "$TMP/prof.data"
        done
    done
    python3 - "$TMP/prof" <<'EOF'
import sys
split, top = {}, {}
def kind(dso, srv):
    if dso.startswith("[kernel") or dso == "[unknown]":
        return "kernel"
    if dso.startswith("libnghttp2"):
        return "libnghttp2"
    if dso.startswith("libc.so") or dso.startswith("libc-"):
        return "libc"
    if dso in ("h2bench", "h2o", "nghttpd"):
        return "own"
    return "other"
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) < 5 or not f[3].endswith("%"):
        continue
    what, cell, srv, pct, dso = f[0], f[1], f[2], float(f[3][:-1]), f[4]
    if what == "dso":
        d = split.setdefault((cell, srv), {})
        k = kind(dso, srv)
        d[k] = d.get(k, 0.0) + pct
    else:
        sym = " ".join(f[6:]) if len(f) > 6 else "?"
        top.setdefault((cell, srv), []).append("%s %.1f%%" % (sym, pct))
print()
print("CPU samples (perf record -e cpu-clock -g, the server's threads); shares of time, so")
print("they move with other work on a shared machine. own = the server's binary.")
print()
print("| cell (c,m) | server | kernel | libnghttp2 | libc | own | other |")
print("|---|---|---:|---:|---:|---:|---:|")
for (cell, srv), d in split.items():
    print("| (%s) | %s | %s |" % (cell, srv, " | ".join(
        "%.1f %%" % d.get(k, 0.0) for k in ("kernel", "libnghttp2", "libc", "own", "other"))))
print()
for (cell, srv), syms in top.items():
    print("(%s) %s: %s" % (cell, srv, "; ".join(syms[:10])))
EOF
    exit 0
fi

for s in $SERVERS; do # warm-up: page cache, code paths, lazy allocations
    run "$s" hello 10 "$(is_floor "$s" && echo 1 || echo 10)" 2000 >/dev/null
done
for r in $(seq "$ROUNDS"); do
    for cell in $CELLS; do
        IFS=: read -r kind c m n req <<<"$cell"
        n=$(awk -v n="$n" -v k="$SCALE" -v c="$c" 'BEGIN { v = int(n * k); print (v < c ? c : v) }')
        for s in $SERVERS; do
            skip_cell "$s" "$kind" "$m" && continue
            res=$(run "$s" "$kind" "$c" "$m" "$n")
            echo "$kind:$c:$m${req:+/$req} $s $res" >>"$TMP/results"
            [ -e "$TMP/rss.$s" ] && [ "$kind:$c" = "hello:1000" ] &&
                echo "$s $(cat "$TMP/rss.$s")" >>"$TMP/rss" && rm -f "$TMP/rss.$s"
        done
    done
    echo "  round $r done" >&2
done

python3 - "$TMP/results" "$TMP/rss" "$TICK" "$SERVERS" <<'EOF'
import statistics, sys
div = lambda a, b: a / b if b else float("nan")
dash = lambda f, v: "-" if v != v else f % v  # a cell a server does not take (a floor's m > 1)
tick = float(sys.argv[3])
servers = sys.argv[4].split()
ref = "h2bench" if "h2bench" in servers else servers[0]
others = [s for s in servers if s != ref]
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
def name_of(cell):
    kind, c, m = cell.split(":")
    return "1 MiB (%s,%s)" % (c, m) if kind == "mib" else "/hello (%s,%s)" % (c, m)
print()
print("| cell (c,m) | %s | %s |" % (" | ".join(servers), " | ".join("%s vs %s" % (ref, o) for o in others)))
print("|---|%s" % ("---:|" * (len(servers) + len(others))))
for cell, by in res.items():
    mib = cell.startswith("mib:")
    def med(s):
        v = [x[1] / 1e9 if mib else x[0] for x in by.get(s, [])]
        return statistics.median(v) if v else float("nan")
    fmt = (lambda v: dash("%.2f GB/s", v)) if mib else (lambda v: dash("%.0f", v))
    print("| %s | %s | %s |" % (name_of(cell), " | ".join(fmt(med(s)) for s in servers),
          " | ".join(dash("%.2fx", div(med(ref), med(o))) for o in others)))
print()
print("server CPU per request, microseconds (lower is better; ratio = peer / %s)" % ref)
if share:
    print("client: highest share of its core(s) in any round, per server; '!' marks a cell where "
          "it reached 90 % (the cell measured the client)")
print()
extra = " client %s |" % "/".join(servers) if share else ""
print("| cell (c,m) | %s | %s |%s" % (" | ".join(servers), " | ".join("%s/%s" % (o, ref) for o in others), extra))
print("|---|%s%s" % ("---:|" * (len(servers) + len(others)), "---|" if share else ""))
for cell, by in cpu.items():
    med = lambda s: statistics.median(by[s]) if by.get(s) else float("nan")
    col = ""
    if share:
        sh = share.get(cell, {})
        top = [max(sh[s]) if sh.get(s) else float("nan") for s in servers]
        col = " %s |" % " / ".join(
            ("%.0f%%%s" % (v * 100, "!" if v >= 0.9 else "")) if v == v else "-" for v in top)
    print("| %s | %s | %s |%s" % (name_of(cell), " | ".join(dash("%.1f", med(s)) for s in servers),
          " | ".join(dash("%.2fx", div(med(o), med(ref))) for o in others), col))
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
