#!/usr/bin/env bash
# load-vs-h2load.sh - client cost and throughput of `h2bench load` against h2load, side by side.
#
# One nghttpd worker pinned to CPU 0 serves a 12-byte file; h2load, `h2bench load` (the default
# fast engine), `h2bench load --engine nghttp2`, `h2bench load --coalesce=0` (the fast engine
# without its nap before an epoll sleep) and `h2bench load --io uring` (the fast engine on
# io_uring) (all one thread, pinned to CPU 1; TOOLS picks some: h2load fast nghttp2 nocoal uring)
# take turns on the same server, rotating the order every repeat, at
# (connections, streams) = (1,1), (10,10), (100,100), (1000,4). Client CPU (user+sys of the client
# process, from /usr/bin/time) is reported per 100,000 requests together with req/s; the table
# shows medians over the repeats and each client's ratios to h2load (CPU, req/s). Goal for the
# fast engine: CPU ratio <= 0.5 and req/s ratio >= 0.98 in every cell. Not a test: on a
# shared machine read ratios, not absolutes. Runs unattended: with no arguments it prints the
# table and exits 0 (2: a tool is missing, 3: a run failed).
#
# usage: scripts/bench/load-vs-h2load.sh [build/bin] [repeats]
set -euo pipefail
BIN=${1:-build/bin}
REPEATS=${2:-3}
H2BENCH=$BIN/h2bench
SERVER_CPU=${SERVER_CPU:-0}
CLIENT_CPU=${CLIENT_CPU:-1}
CELLS=${CELLS:-"1,1,10000 10,10,400000 100,100,400000 1000,4,200000"}
TOOLS=${TOOLS:-"h2load fast nghttp2 nocoal uring"}
read -r -a tools <<<"$TOOLS"
[ "${tools[0]}" = h2load ] || { echo "TOOLS must start with h2load (the reference)" >&2; exit 2; }
command -v h2load >/dev/null && command -v nghttpd >/dev/null ||
    { echo "needs h2load and nghttpd (nghttp2-client, nghttp2-server)" >&2; exit 2; }
[ -x "$H2BENCH" ] || { echo "no $H2BENCH: build first" >&2; exit 2; }

TMP=$(mktemp -d)
SERVER=
cleanup() { [ -n "$SERVER" ] && kill "$SERVER" 2>/dev/null; wait 2>/dev/null; rm -rf "$TMP"; }
trap cleanup EXIT
mkdir -p "$TMP/www"
printf 'hello world\n' >"$TMP/www/index.html"
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
taskset -c "$SERVER_CPU" nghttpd --no-tls -n 1 -d "$TMP/www" "$PORT" >/dev/null 2>&1 &
SERVER=$!
for _ in $(seq 100); do (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null && break; sleep 0.05; done
ulimit -n 20000 2>/dev/null || true
URL=http://127.0.0.1:$PORT/index.html

# run TOOL C M N: prints "cpu_seconds req_per_s" for one run
run() {
    local tool=$1 c=$2 m=$3 n=$4 cmd
    case $tool in
    h2load) cmd=(h2load) ;;
    fast) cmd=("$H2BENCH" load --no-progress --engine fast) ;;
    nocoal) cmd=("$H2BENCH" load --no-progress --engine fast --coalesce=0) ;;
    uring) cmd=("$H2BENCH" load --no-progress --engine fast --io uring) ;;
    nghttp2) cmd=("$H2BENCH" load --no-progress --engine nghttp2) ;;
    *) echo "unknown tool $tool (TOOLS: h2load fast nghttp2 nocoal uring)" >&2; exit 2 ;;
    esac
    /usr/bin/time -f '%U %S' -o "$TMP/time" taskset -c "$CLIENT_CPU" \
        "${cmd[@]}" -n "$n" -c "$c" -m "$m" -t 1 "$URL" >"$TMP/out" 2>&1 ||
        { echo "$tool failed:" >&2; cat "$TMP/out" >&2; exit 3; }
    grep -q " $n succeeded" "$TMP/out" || { echo "$tool: not all requests succeeded" >&2; cat "$TMP/out" >&2; exit 3; }
    local rps cpu
    rps=$(sed -nE 's/^finished in [^,]+, ([0-9.]+) req\/s.*/\1/p' "$TMP/out")
    cpu=$(awk '{print $1 + $2}' "$TMP/time")
    echo "$cpu $rps"
}

median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

echo "server: nghttpd -n 1 on CPU $SERVER_CPU; clients: -t 1 on CPU $CLIENT_CPU; $REPEATS repeats, medians"
echo "(client CPU seconds per 100,000 requests; fast = h2bench load, nghttp2 = --engine nghttp2,"
echo " nocoal = --coalesce=0, uring = --io uring; X/h2l = the ratio to h2load)"
echo "(timings: CPU seconds and req/s move with any other work on the machine; read the ratios)"
printf '%-10s %-7s' "(c,m)" "requests"
for t in "${tools[@]}"; do printf ' | %10s %9s' "$t cpu" "req/s"; done
for t in "${tools[@]:1}"; do printf ' | %12s %9s' "$t/h2l cpu" "req/s"; done
echo
for cell in $CELLS; do
    IFS=, read -r c m n <<<"$cell"
    for t in "${tools[@]}"; do : >"$TMP/$t.cpu"; : >"$TMP/$t.rps"; done
    for r in $(seq "$REPEATS"); do
        k=$((r % ${#tools[@]})) # the order rotates by one tool every repeat
        for tool in "${tools[@]:k}" "${tools[@]:0:k}"; do
            read -r cpu rps < <(run "$tool" "$c" "$m" "$n")
            awk -v c="$cpu" -v n="$n" 'BEGIN {print c * 100000 / n}' >>"$TMP/$tool.cpu"
            echo "$rps" >>"$TMP/$tool.rps"
        done
    done
    hc=$(median <"$TMP/h2load.cpu"); hr=$(median <"$TMP/h2load.rps")
    printf '%-10s %-7s' "($c,$m)" "$n"
    for t in "${tools[@]}"; do
        printf ' | %9.3fs %9.0f' "$(median <"$TMP/$t.cpu")" "$(median <"$TMP/$t.rps")"
    done
    for t in "${tools[@]:1}"; do
        awk -v hc="$hc" -v hr="$hr" -v c="$(median <"$TMP/$t.cpu")" -v r="$(median <"$TMP/$t.rps")" \
            'BEGIN { printf " | %12.2f %9.2f", (hc > 0 ? c / hc : 0), (hr > 0 ? r / hr : 0) }'
    done
    echo
done
