#!/usr/bin/env bash
# syscalls-per-request.sh [--client] [N] [CELLS] - system calls per request, by kind, for the
# two I/O backends (issue 33), at each cell (CxM: connections x streams per connection, default
# "1x1 10x1 10x10 1000x4") of /hello; one server worker on CPU 0, h2bench load on CPU 1.
#   - the server (default): h2bench serve --io epoll and --io uring. After a warm-up run on the
#     same connections' shape, `strace -c -f -p` counts every thread of the server during N
#     requests (default 20000); the table divides each kind by N.
#   - the client (--client): h2bench load --io epoll and --io uring against h2bench serve on
#     epoll. `strace -c -f` counts every thread of the load process in a run of N requests and in
#     one of N/5; the table divides the difference by 4N/5, so what every run does once (start-up,
#     threads, rings, the connections' set-up) cancels out: the calls per request of a run that
#     is under way.
# Counts, not timing: strace slows the traced process, not what it calls. Needs strace and a
# Release build in build/.
set -u
cd "$(dirname "$0")/../.."
H2BENCH=${H2BENCH:-$PWD/build/bin/h2bench}
SIDE=server
if [ "${1:-}" = --client ]; then
    SIDE=client
    shift
fi
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

# strace_rows IO CELL FILE [SIGN]: strace -c's rows ("% time seconds usecs/call calls errors
# syscall", between the rulers) as "IO CELL NAME CALLS", CALLS times SIGN (default 1).
strace_rows() {
    awk -v io="$1" -v cell="$2" -v sign="${4:-1}" \
        '/^-/ {rule++; next} rule == 1 && NF >= 5 {print io, cell, $NF, sign * $4}' "$3"
}

# serve IO: starts h2bench serve --io IO (one worker on CPU 0) as SPID, its URL in URL.
serve() {
    local io=$1
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
    URL=$url
}

stop_serve() {
    kill -TERM "$SPID"
    wait "$SPID" 2>/dev/null
    SPID=
}

# count_client IO CELL: h2bench load --io IO's rows for N requests less those for N/5.
count_client() {
    local io=$1 cell=$2 c=${2%x*} m=${2#*x} url n k
    serve epoll
    url=$URL
    for n in "$N" $((N / 5)); do
        taskset -c 1 strace -c -f -o "$TMP/strace.txt" \
            "$H2BENCH" load --io "$io" -n "$n" -c "$c" -m "$m" "$url/hello" >"$TMP/load.out" 2>&1
        grep -q "$n succeeded" "$TMP/load.out" || { echo "load at $cell on $io: $(cat "$TMP/load.out")" >&2; exit 1; }
        if grep -q 'using epoll' "$TMP/load.out"; then
            echo "load --io $io fell back: $(grep 'using epoll' "$TMP/load.out")" >&2
            exit 1
        fi
        k=$([ "$n" = "$N" ] && echo 1 || echo -1)
        strace_rows "$io" "$cell" "$TMP/strace.txt" "$k"
    done
    stop_serve
}

# count IO CELL: one row per syscall kind, "IO CELL NAME CALLS".
count() {
    local io=$1 cell=$2 c=${2%x*} m=${2#*x} url
    serve "$io"
    url=$URL
    taskset -c 1 "$H2BENCH" load -n $((N / 4 > c ? N / 4 : c)) -c "$c" -m "$m" "$url/hello" >/dev/null 2>&1
    strace -c -f -p "$SPID" -o "$TMP/strace.txt" 2>/dev/null &
    local tpid=$!
    sleep 0.5 # attached to every thread before the measured run
    taskset -c 1 "$H2BENCH" load -n "$N" -c "$c" -m "$m" "$url/hello" >"$TMP/load.out" 2>&1
    grep -q "$N succeeded" "$TMP/load.out" || { echo "load at $cell on $io: $(grep requests: "$TMP/load.out")" >&2; exit 1; }
    kill -INT "$tpid"
    wait "$tpid" 2>/dev/null
    stop_serve
    strace_rows "$io" "$cell" "$TMP/strace.txt"
}

for cell in $CELLS; do
    for io in epoll uring; do
        if [ "$SIDE" = client ]; then
            count_client "$io" "$cell"
        else
            count "$io" "$cell"
        fi
    done
done >"$TMP/rows"

python3 - "$TMP/rows" "$N" "$CELLS" "$SIDE" <<'EOF'
import collections, sys
rows, n, cells, side = sys.argv[1], int(sys.argv[2]), sys.argv[3].split(), sys.argv[4]
calls = collections.defaultdict(int)
kinds = set()
for line in open(rows):
    io, cell, name, k = line.split()
    calls[(io, cell, name)] += int(k)
    kinds.add(name)
if side == "client":
    n -= n // 5  # the difference of two runs: N and N/5 requests
    # what both runs made as often (start-up, connections) is 0 per request: not shown
    kinds = {k for k in kinds if any(abs(calls[(io, c, k)]) / n >= 0.0005 for c in cells for io in ("epoll", "uring"))}
    print(f"client system calls per request of a run under way (h2bench load, strace -c -f: a run of "
          f"{n + n // 4} requests of /hello less one of {n // 4}), h2ref on epoll\n")
else:
    # the connection's life (accept, close, setsockopt) is per connection, the rest per request
    print(f"system calls per request, {n} requests of /hello per cell, one worker (strace -c -f -p)\n")
cols = [(cell, io) for cell in cells for io in ("epoll", "uring")]
print("| syscall | " + " | ".join(f"{c} {io}" for c, io in cols) + " |")
print("|---|" + "---:|" * len(cols))
order = sorted(kinds, key=lambda k: -sum(abs(calls[(io, c, k)]) for c, io in cols))
for k in order:
    print(f"| {k} | " + " | ".join(f"{calls[(io, c, k)] / n + 0.0:.3f}".replace("-0.000", "0.000") for c, io in cols) + " |")
print("| **total** | " + " | ".join(
    f"**{sum(calls[(io, c, k)] for k in kinds) / n:.3f}**" for c, io in cols) + " |")
EOF
