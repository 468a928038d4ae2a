#!/usr/bin/env bash
# server-ir-by-client.sh - what a request costs the server, in instructions, under each client:
# h2ref (`h2bench serve --threads 1`) runs under callgrind and is driven once by h2load, once by
# `h2bench load` (fast engine) and once by `h2bench load --engine nghttp2`, with the same
# -c/-m. Each client runs on a fresh server instance at -n N1 and at -n N2; the server's
# instructions per request are (Ir(N2) - Ir(N1)) / (N2 - N1), which cancels the server's start,
# the connections' set-up and its graceful exit. A load generator whose requests cost the server
# more (literal headers it must Huffman-decode, say) than h2load's is a worse instrument for
# server benchmarks: the columns must agree. Not a test (callgrind is slow); the counts are
# deterministic up to glibc's free lists (tens of instructions per run).
#
# usage: scripts/bench/server-ir-by-client.sh [build/bin] [C M N1 N2]
# EXTRA="path/to/other/h2bench ..." adds columns for other h2bench binaries (before/after).
set -euo pipefail
BIN=${1:-build/bin}
C=${2:-10} M=${3:-10} N1=${4:-2000} N2=${5:-20000}
H2BENCH=$BIN/h2bench
command -v h2load >/dev/null && command -v valgrind >/dev/null ||
    { echo "needs h2load and valgrind" >&2; exit 2; }
[ -x "$H2BENCH" ] || { echo "no $H2BENCH: build first" >&2; exit 2; }
TMP=$(mktemp -d)
SERVER=
cleanup() { [ -n "$SERVER" ] && kill "$SERVER" 2>/dev/null; wait 2>/dev/null; rm -rf "$TMP"; }
trap cleanup EXIT

# server_ir CLIENT... (the client's command without -n and URL) N: the server's total Ir
server_ir() {
    local n=${*: -1}
    local cmd=("${@:1:$#-1}")
    valgrind --tool=callgrind --callgrind-out-file="$TMP/cg.out" "$H2BENCH" serve --threads 1 \
        >"$TMP/serve.out" 2>"$TMP/vg.err" &
    SERVER=$!
    local url=
    for _ in $(seq 300); do
        url=$(sed -nE 's/^listening on (http:[^ ]*).*/\1/p' "$TMP/serve.out")
        [ -n "$url" ] && break
        sleep 0.1
    done
    [ -n "$url" ] || { echo "server did not start: $(cat "$TMP/vg.err")" >&2; exit 3; }
    "${cmd[@]}" -n "$n" -c "$C" -m "$M" "$url/hello" >"$TMP/client.out" 2>&1 ||
        { echo "${cmd[*]} failed:" >&2; cat "$TMP/client.out" >&2; exit 3; }
    grep -q " $n succeeded" "$TMP/client.out" ||
        { echo "${cmd[*]}: not all requests succeeded" >&2; cat "$TMP/client.out" >&2; exit 3; }
    kill -TERM "$SERVER"
    wait "$SERVER" || true
    SERVER=
    sed -nE 's/^(summary|totals): ([0-9]+).*/\2/p' "$TMP/cg.out" | head -1
}

per_request() {
    local a b
    a=$(server_ir "$@" "$N1")
    b=$(server_ir "$@" "$N2")
    awk -v a="$a" -v b="$b" -v d=$((N2 - N1)) 'BEGIN {printf "%.0f", (b - a) / d}'
}

echo "h2ref (h2bench serve --threads 1) under callgrind, -c $C -m $M, (Ir(-n $N2) - Ir(-n $N1)) / $((N2 - N1))"
printf '%-40s %12s\n' "client" "server Ir/req"
printf '%-40s %12s\n' "h2load" "$(per_request h2load)"
for b in "$H2BENCH" ${EXTRA:-}; do
    printf '%-40s %12s\n' "$b load (fast)" "$(per_request "$b" load --no-progress)"
    printf '%-40s %12s\n' "$b load --engine nghttp2" \
        "$(per_request "$b" load --no-progress --engine nghttp2)"
done
