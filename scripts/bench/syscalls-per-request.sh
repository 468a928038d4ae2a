#!/usr/bin/env bash
# syscalls-per-request.sh [N] [CELLS] - the server's system calls per request, by kind, for
# h2bench serve --io epoll and --io uring (issue 33): one worker on CPU 0, h2bench load on CPU 1
# driving /hello at each cell (CxM: connections x streams per connection, default
# "1x1 10x1 10x10 1000x4"). After a warm-up run on the same connections' shape, `strace -c -f -p`
# counts every thread of the server during N requests (default 20000); the table divides each
# kind by N. Counts, not timing: strace slows the server, not what it calls. Needs strace and a
# Release build in build/.
set -u
cd "$(dirname "$0")/../.."
H2BENCH=${H2BENCH:-$PWD/build/bin/h2bench}
N=${1:-20000}
CELLS=${2:-"1x1 10x1 10x10 1000x4"}
command -v strace >/dev/null || { echo "syscalls-per-request.sh: needs strace" >&2; exit 2; }
TMP=$(mktemp -d)
SPID=
cleanup() {
    [ -n "$SPID" ] && kill "$SPID" 2>/dev/null && wait "$SPID" 2>/dev/null
    rm -rf "$TMP"
}
trap cleanup EXIT

# count IO CELL: one row per syscall kind, "IO CELL NAME CALLS".
count() {
    local io=$1 cell=$2 c=${2%x*} m=${2#*x}
    "$H2BENCH" serve --io "$io" --threads 1 --cpus 0 >"$TMP/serve.out" 2>"$TMP/serve.err" &
    SPID=$!
    local url=
    for _ in $(seq 100); do
        url=$(sed -n 's/^listening on //p' "$TMP/serve.out" 2>/dev/null)
        [ -n "$url" ] && break
        sleep 0.05
    done
    [ -n "$url" ] || { echo "serve --io $io did not start: $(cat "$TMP/serve.err")" >&2; exit 1; }
    if [ "$io" = uring ] && ! grep -qx 'io: uring' "$TMP/serve.out"; then
        echo "serve --io uring fell back: $(cat "$TMP/serve.out")" >&2
        exit 1
    fi
    taskset -c 1 "$H2BENCH" load -n $((N / 4 > c ? N / 4 : c)) -c "$c" -m "$m" "$url/hello" >/dev/null 2>&1
    strace -c -f -p "$SPID" -o "$TMP/strace.txt" 2>/dev/null &
    local tpid=$!
    sleep 0.5 # attached to every thread before the measured run
    taskset -c 1 "$H2BENCH" load -n "$N" -c "$c" -m "$m" "$url/hello" >"$TMP/load.out" 2>&1
    grep -q "$N succeeded" "$TMP/load.out" || { echo "load at $cell on $io: $(grep requests: "$TMP/load.out")" >&2; exit 1; }
    kill -INT "$tpid"
    wait "$tpid" 2>/dev/null
    kill -TERM "$SPID"
    wait "$SPID" 2>/dev/null
    SPID=
    # strace -c: "% time seconds usecs/call calls errors syscall"; the rows between the rulers
    awk -v io="$io" -v cell="$cell" '/^-/ {rule++; next} rule == 1 && NF >= 5 {print io, cell, $NF, $4}' \
        "$TMP/strace.txt"
}

for cell in $CELLS; do
    for io in epoll uring; do
        count "$io" "$cell"
    done
done >"$TMP/rows"

python3 - "$TMP/rows" "$N" "$CELLS" <<'EOF'
import collections, sys
rows, n, cells = sys.argv[1], int(sys.argv[2]), sys.argv[3].split()
calls = collections.defaultdict(int)
kinds = set()
for line in open(rows):
    io, cell, name, k = line.split()
    calls[(io, cell, name)] += int(k)
    kinds.add(name)
# the connection's life (accept, close, setsockopt) is per connection, the rest per request
print(f"system calls per request, {n} requests of /hello per cell, one worker (strace -c -f -p)\n")
cols = [(cell, io) for cell in cells for io in ("epoll", "uring")]
print("| syscall | " + " | ".join(f"{c} {io}" for c, io in cols) + " |")
print("|---|" + "---:|" * len(cols))
order = sorted(kinds, key=lambda k: -sum(calls[(io, c, k)] for c, io in cols))
for k in order:
    print(f"| {k} | " + " | ".join(f"{calls[(io, c, k)] / n:.3f}" for c, io in cols) + " |")
print("| **total** | " + " | ".join(
    f"**{sum(calls[(io, c, k)] for k in kinds) / n:.3f}**" for c, io in cols) + " |")
EOF
