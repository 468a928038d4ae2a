#!/usr/bin/env bash
# mpi-scaling.sh - does splitting one load over MPI ranks cost throughput? Side by side, same
# total connections and requests: `mpirun -np 2 h2bench load -t 2` (2 ranks, 1 thread each)
# against one `h2bench load -t 2` process, alternating the order every repeat, against one
# `h2bench serve` (1 worker thread) pinned to SERVER_CPU; both clients pinned to CLIENT_CPUS.
# Prints medians of aggregate req/s and the ratio MPI/one process (goal: within 5 %).
# Not a test: the machine is shared, so read the ratio, not the absolutes.
#
# usage: scripts/bench/mpi-scaling.sh [build/bin] [repeats]
set -euo pipefail
BIN=${1:-build/bin}
REPEATS=${2:-5}
H2BENCH=$(realpath "$BIN/h2bench")
SERVER_CPU=${SERVER_CPU:-0}
CLIENT_CPUS=${CLIENT_CPUS:-1}
C=${C:-20}
M=${M:-10}
N=${N:-200000}
command -v mpirun >/dev/null || { echo "needs mpirun (openmpi-bin)" >&2; exit 2; }
[ -x "$H2BENCH" ] || { echo "no $H2BENCH: build first" >&2; exit 2; }
# Open MPI refuses root unless told twice (docs/distributed.md).
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

TMP=$(mktemp -d)
SERVER=
cleanup() { [ -n "$SERVER" ] && kill "$SERVER" 2>/dev/null; wait 2>/dev/null; rm -rf "$TMP"; }
trap cleanup EXIT
taskset -c "$SERVER_CPU" "$H2BENCH" serve --threads 1 >"$TMP/serve.out" 2>&1 &
SERVER=$!
for _ in $(seq 100); do grep -q '^listening on' "$TMP/serve.out" && break; sleep 0.05; done
URL=$(sed -n 's/^listening on //p' "$TMP/serve.out")/hello

# run KIND: prints the job's req/s
run() {
    local cmd=("$H2BENCH" load --no-progress -n "$N" -c "$C" -m "$M" -t 2 "$URL" --json "$TMP/r.json")
    if [ "$1" = mpi ]; then
        taskset -c "$CLIENT_CPUS" mpirun --oversubscribe --bind-to none -np 2 "${cmd[@]}" >"$TMP/out" 2>&1
    else
        taskset -c "$CLIENT_CPUS" "${cmd[@]}" >"$TMP/out" 2>&1
    fi || { echo "$1 failed:" >&2; cat "$TMP/out" >&2; exit 3; }
    [ "$(jq .succeeded "$TMP/r.json")" = "$N" ] || { echo "$1: not all requests succeeded" >&2; exit 3; }
    jq .req_per_s "$TMP/r.json"
}

median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

: >"$TMP/mpi"; : >"$TMP/one"
for r in $(seq "$REPEATS"); do
    if [ $((r % 2)) -eq 1 ]; then run mpi >>"$TMP/mpi"; run one >>"$TMP/one"
    else run one >>"$TMP/one"; run mpi >>"$TMP/mpi"; fi
done
mpi=$(median <"$TMP/mpi")
one=$(median <"$TMP/one")
echo "server: h2bench serve --threads 1 on CPU $SERVER_CPU; clients on CPUs $CLIENT_CPUS;" \
    "-n $N -c $C -m $M -t 2; $REPEATS repeats, medians"
printf '%-34s %12s\n' "client" "req/s"
printf '%-34s %12.0f\n' "mpirun -np 2 (1 thread per rank)" "$mpi"
printf '%-34s %12.0f\n' "one process, -t 2" "$one"
printf '%-34s %12.3f\n' "ratio MPI / one process" "$(awk -v a="$mpi" -v b="$one" 'BEGIN { print a / b }')"
