#!/usr/bin/env bash
# h2-vs-h3.sh - HTTP/2 over TLS against HTTP/3 over QUIC, side by side, on this machine.
#
# One `h2bench serve --h3 --threads 1` (TCP and UDP on the same port) pinned to SERVER_CPU, and
# ngtcp2's gtlsserver (the h3 peer) on the same CPU; `h2bench load` (one thread) pinned to
# CLIENT_CPU takes turns: h2 and h3 on our server, then h3 on gtlsserver, alternating every
# repeat. Cells: one 1 GiB GET (Gbit/s and server CPU seconds), and 50,000 small GETs at
# -c 10 -m 10 (req/s, p50, p99). The table shows medians over the repeats. Not a test: the
# machine is shared, so read the columns against each other, not as absolutes.
#
# usage: scripts/bench/h2-vs-h3.sh [build/bin] [repeats]
set -euo pipefail
BIN=${1:-build/bin}
REPEATS=${2:-3}
H2BENCH=$BIN/h2bench
SERVER_CPU=${SERVER_CPU:-0}
CLIENT_CPU=${CLIENT_CPU:-1}
BULK=${BULK:-1073741824}
SMALL_N=${SMALL_N:-50000}
command -v gtlsserver >/dev/null && command -v jq >/dev/null ||
    { echo "needs gtlsserver and jq (ngtcp2-server, jq)" >&2; exit 2; }
[ -x "$H2BENCH" ] || { echo "no $H2BENCH: build first" >&2; exit 2; }

TMP=$(mktemp -d)
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; rm -rf "$TMP"; }
trap cleanup EXIT

"$H2BENCH" serve --h3 --threads 1 --cpus "$SERVER_CPU" >"$TMP/serve.out" 2>&1 &
SPID=$!
PIDS+=("$SPID")
for _ in $(seq 100); do grep -q '^listening on' "$TMP/serve.out" && break; sleep 0.1; done
URL=$(sed -n 's/^listening on //p' "$TMP/serve.out")
[ -n "$URL" ] || { echo "h2bench serve did not start" >&2; exit 3; }

mkdir -p "$TMP/www"
printf 'Hello, World!' >"$TMP/www/index.html"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -subj /CN=localhost \
    -keyout "$TMP/key.pem" -out "$TMP/cert.pem" 2>/dev/null
GPORT=$(python3 -c 'import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
taskset -c "$SERVER_CPU" gtlsserver -q -d "$TMP/www" --max-dyn-length="$BULK" 127.0.0.1 "$GPORT" \
    "$TMP/key.pem" "$TMP/cert.pem" >/dev/null 2>&1 &
GPID=$!
PIDS+=("$GPID")
sleep 0.5

cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
# run NAME PID FLAGS URL...: one load; appends "NAME metric value" lines to $TMP/rows
run() {
    local name=$1 pid=$2 flags=$3 bulk_url=$4 small_url=$5
    local t0 t1
    t0=$(cpu_ticks "$pid")
    # shellcheck disable=SC2086
    "$H2BENCH" load $flags --no-progress --cpus "$CLIENT_CPU" -n 1 -c 1 --json "$TMP/b.json" \
        "$bulk_url" >/dev/null 2>&1
    t1=$(cpu_ticks "$pid")
    jq -r --arg n "$name" --argjson cpu "$(((t1 - t0)))" --argjson hz "$(getconf CLK_TCK)" \
        '"\($n) gbps \(.traffic.data * 8 / .duration_s / 1e9)\n\($n) scpu \($cpu / $hz)\n\($n) bulkok \(.traffic.data)"' \
        "$TMP/b.json" >>"$TMP/rows"
    # shellcheck disable=SC2086
    "$H2BENCH" load $flags --no-progress --cpus "$CLIENT_CPU" -n "$SMALL_N" -c 10 -m 10 \
        --json "$TMP/s.json" "$small_url" >/dev/null 2>&1
    jq -r --arg n "$name" \
        '"\($n) rps \(.req_per_s)\n\($n) p50 \(.latency_ns.p50 / 1000)\n\($n) p99 \(.latency_ns.p99 / 1000)\n\($n) failed \(.failed)"' \
        "$TMP/s.json" >>"$TMP/rows"
}

: >"$TMP/rows"
for r in $(seq "$REPEATS"); do
    order="h2 h3 gtls"
    [ $((r % 2)) -eq 0 ] && order="gtls h3 h2"
    for who in $order; do
        case $who in
        h2) run "h2bench-serve-h2" "$SPID" "" "$URL/bytes/$BULK" "$URL/" ;;
        h3) run "h2bench-serve-h3" "$SPID" "--h3" "$URL/bytes/$BULK" "$URL/" ;;
        gtls) run "gtlsserver-h3" "$GPID" "--h3" "https://127.0.0.1:$GPORT/$BULK" \
            "https://127.0.0.1:$GPORT/" ;;
        esac
    done
done

median() { sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
m() { awk -v n="$1" -v k="$2" '$1 == n && $2 == k {print $3}' "$TMP/rows" | median; }
echo "| target | 1 GiB GET Gbit/s | server CPU s per GiB | small GET req/s | p50 us | p99 us | failed |"
echo "|---|---|---|---|---|---|---|"
for n in h2bench-serve-h2 h2bench-serve-h3 gtlsserver-h3; do
    printf '| %s | %.2f | %.2f | %.0f | %.0f | %.0f | %s |\n' "$n" "$(m $n gbps)" "$(m $n scpu)" \
        "$(m $n rps)" "$(m $n p50)" "$(m $n p99)" "$(m $n failed)"
done
echo
echo "medians of $REPEATS repeats; server CPU $SERVER_CPU, client CPU $CLIENT_CPU; $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
