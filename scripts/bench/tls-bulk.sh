#!/usr/bin/env bash
# tls-bulk.sh - one TLS connection carrying 1 MiB GETs: h2bench serve against h2o (and another
# build of h2bench), each driven by h2load and by h2bench load, beside the two limits a TLS
# stream cannot pass on this machine: one core's AES-128-GCM at 16 KiB (`openssl speed`) and raw
# TCP over loopback (h2bench floor-serve answering each 40-byte request with 1 MiB, driven by
# `h2bench load --raw`: no HTTP, no TLS).
#
# Each server runs one worker on CPU 0, each client one thread on CPU 1, one connection, one
# stream at a time (-c 1 -m 1), N requests of 1 MiB (h2bench: /bytes/1048576; h2o: a 1 MiB file
# from its docroot). Servers and clients alternate within each of ROUNDS rounds; the table gives
# medians: GB/s (the response bytes over the client's wall time), and the CPU seconds per GB of
# the server (utime+stime from /proc) and of the client (its own utime+stime, GNU time).
#
# usage: scripts/bench/tls-bulk.sh [BUILD_BIN_DIR]
# env:   ROUNDS (default 3), N requests per load (default 2000), SERVERS (default "h2bench h2o";
#        "base" is BASE_BIN's h2bench), CLIENTS (default "h2load h2bench"), BASE_BIN=DIR (the
#        h2bench of another build, run the same way: an A/B of a change in one run)
# Not a test: speed is never asserted in CTest. Needs h2o, h2load, openssl, taskset, GNU time.
set -u
BIN=${1:-build/bin}
H2BENCH=$(realpath "$BIN/h2bench")
SRC=$(cd "$(dirname "$0")/../.." && pwd)
ROUNDS=${ROUNDS:-3}
N=${N:-2000}
SERVERS=${SERVERS:-h2bench h2o}
CLIENTS=${CLIENTS:-h2load h2bench}
BASE=
if [ -n "${BASE_BIN:-}" ]; then
    BASE=$(realpath "$BASE_BIN/h2bench")
    [ -x "$BASE" ] || { echo "tls-bulk: no h2bench in BASE_BIN=$BASE_BIN" >&2; exit 2; }
    case " $SERVERS " in *" base "*) ;; *) SERVERS="$SERVERS base" ;; esac
fi
for s in $SERVERS; do
    case "$s" in
    h2bench | h2o) ;;
    base) [ -n "$BASE" ] || { echo "tls-bulk: server 'base' needs BASE_BIN" >&2; exit 2; } ;;
    *) echo "tls-bulk: unknown server '$s' in SERVERS (h2bench h2o base)" >&2; exit 2 ;;
    esac
done
for c in $CLIENTS; do
    case "$c" in
    h2load | h2bench) ;;
    *) echo "tls-bulk: unknown client '$c' in CLIENTS (h2load h2bench)" >&2; exit 2 ;;
    esac
done
case "$ROUNDS$N" in *[!0-9]*) echo "tls-bulk: ROUNDS and N must be counts" >&2; exit 2 ;; esac
[ -x "$H2BENCH" ] || { echo "tls-bulk: no h2bench in $BIN" >&2; exit 2; }

TMP=$(mktemp -d)
PIDS=()
cleanup() {
    for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
    wait 2>/dev/null
    rm -rf "$TMP"
}
trap cleanup EXIT
HZ=$(getconf CLK_TCK)

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_line() { # log file: the server's ready line
    for _ in $(seq 100); do grep -q "listening on" "$1" 2>/dev/null && return 0; sleep 0.1; done
    echo "tls-bulk: no ready line in $1" >&2; exit 1
}
wait_port() {
    for _ in $(seq 100); do (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0; sleep 0.1; done
    echo "tls-bulk: nothing listens on $1" >&2; exit 1
}
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

# the certificate h2o serves (h2bench serve makes its own, the same kind: ECDSA P-256)
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -subj /CN=localhost \
    -keyout "$TMP/key.pem" -out "$TMP/cert.pem" >/dev/null 2>&1 || { echo "tls-bulk: openssl req failed" >&2; exit 1; }
mkdir -p "$TMP/doc"
head -c 1048576 /dev/zero >"$TMP/doc/mib"

start_h2bench() { # name binary
    taskset -c 0 "$2" serve --tls --threads 1 --cpus 0 --port 0 >"$TMP/$1.log" 2>&1 &
    PIDS+=($!)
    eval "PID_$1=$!"
    wait_line "$TMP/$1.log"
    eval "URL_$1=$(grep -o 'https://[^ ]*' "$TMP/$1.log" | head -1)/bytes/1048576"
}
for s in $SERVERS; do
    case "$s" in
    h2bench) start_h2bench h2bench "$H2BENCH" ;;
    base) start_h2bench base "$BASE" ;;
    h2o)
        P=$(free_port)
        sed -e "s|{host}|127.0.0.1|; s|{port}|$P|; s|{threads}|1|; s|{max_streams}|100|" \
            -e "s|{dir}|$TMP|; s|{docroot}|$TMP/doc|; s|{cert}|$TMP/cert.pem|; s|{key}|$TMP/key.pem|" \
            "$SRC/servers/peers/h2o-tls.conf.in" >"$TMP/h2o.conf"
        taskset -c 0 h2o -c "$TMP/h2o.conf" >"$TMP/h2o.log" 2>&1 &
        PIDS+=($!)
        PID_h2o=$!
        wait_port "$P"
        URL_h2o=https://127.0.0.1:$P/mib
        ;;
    esac
done

# one load: prints "GBps server_s_per_GB client_s_per_GB"
one() { # server client
    local pid url before after out t0 t1
    eval "pid=\$PID_$1 url=\$URL_$1"
    before=$(cpu_ticks "$pid")
    t0=$(date +%s.%N)
    if [ "$2" = h2load ]; then
        out=$(taskset -c 1 /usr/bin/time -f 'CPU %U %S' h2load -c 1 -m 1 -t 1 -n "$N" "$url" 2>&1)
    else
        out=$(taskset -c 1 /usr/bin/time -f 'CPU %U %S' "$H2BENCH" load -c 1 -m 1 -t 1 -n "$N" "$url" 2>&1)
    fi
    t1=$(date +%s.%N)
    after=$(cpu_ticks "$pid")
    echo "$out" | grep -q "$N succeeded" || { echo "tls-bulk: $1 by $2 failed:" >&2; echo "$out" >&2; exit 1; }
    echo "$out" | awk -v n="$N" -v sb="$before" -v sa="$after" -v hz="$HZ" '
        /finished in/ { d = $3; sub(/,$/, "", d); if (d ~ /ms$/) { sub(/ms$/, "", d); d /= 1000 } else sub(/s$/, "", d) }
        /^CPU / { c = $2 + $3 }
        END { gb = n * 1048576 / 1e9; printf "%.3f %.3f %.3f\n", gb / d, (sa - sb) / hz / gb, c / gb }'
}

for r in $(seq "$ROUNDS"); do
    for s in $SERVERS; do
        for c in $CLIENTS; do
            echo "$s $c $(one "$s" "$c")" >>"$TMP/rows"
        done
    done
done

# the limits, measured in the same run
AES=$(taskset -c 0 openssl speed -evp aes-128-gcm -bytes 16384 -seconds 2 2>/dev/null |
    awk '/^aes-128-gcm|^AES-128-GCM/ { v = $NF; sub(/k$/, "", v); printf "%.3f", v * 1000 / 1e9 }')
P=$(free_port)
taskset -c 0 "$H2BENCH" floor-serve --port "$P" --request-bytes 40 --response-bytes 1048576 >"$TMP/floor.log" 2>&1 &
PIDS+=($!)
wait_line "$TMP/floor.log"
RAW=$(taskset -c 1 "$H2BENCH" load --raw 40:1048576 -c 1 -t 1 -n "$N" "http://127.0.0.1:$P/" 2>&1 |
    awk -v n="$N" '/finished in/ { d = $3; sub(/,$/, "", d); if (d ~ /ms$/) { sub(/ms$/, "", d); d /= 1000 } else sub(/s$/, "", d); printf "%.3f", n * 1048576 / 1e9 / d }')

echo "one TLS connection, 1 MiB GETs, $N per load, $ROUNDS rounds (medians); server CPU 0, client CPU 1"
printf '%-10s %-8s %8s %14s %14s\n' server client GB/s "server s/GB" "client s/GB"
for s in $SERVERS; do
    for c in $CLIENTS; do
        awk -v s="$s" -v c="$c" '$1 == s && $2 == c { print $3, $4, $5 }' "$TMP/rows" | python3 -c '
import sys, statistics as st
rows = [list(map(float, l.split())) for l in sys.stdin if l.strip()]
print(" ".join("%.3f" % st.median(col) for col in zip(*rows)))' | {
            read -r g sv cl
            printf '%-10s %-8s %8s %14s %14s\n' "$s" "$c" "$g" "$sv" "$cl"
        }
    done
done
echo "limits: AES-128-GCM one core at 16 KiB ${AES:-?} GB/s; raw TCP loopback (floor-serve, load --raw) ${RAW:-?} GB/s"
