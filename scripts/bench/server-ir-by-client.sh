#!/usr/bin/env bash
# server-ir-by-client.sh - what a request costs the server, in instructions, under each client.
#
# The server (h2ref: `h2bench serve --threads 1`; nghttpd: one worker serving a 12-byte file)
# runs under callgrind and is driven by h2load, by `h2bench load` (fast engine) and by `h2bench
# load --engine nghttp2`, with the same -c/-m. Each client runs on a fresh server instance at
# -n N1 and at -n N2; the server's instructions per request are (Ir(N2) - Ir(N1)) / (N2 - N1),
# which cancels the server's start, the connections' set-up and its exit. The same difference
# gives the server's reads and sends per request, from valgrind's syscall trace: a read that
# returned data, and a send/sendmsg/write/writev.
#
# Why the reads matter: a server pays for a read, a parse loop's set-up and a flush once per
# wake-up, not once per request, so its cost per request falls as a read finds more requests.
# Under callgrind the server is ~50 times slower than either client, so at -m 10 every client
# has its next requests queued before the server reads again, and the batching is the server's
# own, the same under each client: the reads column shows it. A client whose requests cost the
# server more at equal batching (literal headers it must Huffman-decode, say) is a worse
# instrument for server benchmarks: the columns must agree. At 1 x 1 each read holds one request
# whatever the client does. Each h2bench engine runs twice: as it is, and with h2load's
# user-agent (-H), whose requests are h2load's byte for byte.
#
# Not a test: tests/integration/load_neutral.sh asserts the 10 x 10 row against h2ref. The counts
# are deterministic up to glibc's free lists (tens of instructions per run).
#
# usage: scripts/bench/server-ir-by-client.sh [build/bin] [N1 N2]
#   CELLS="C,M ..." (default "1,1 10,10 100,10"), SERVERS="h2ref nghttpd" (the default),
#   EXTRA="path/to/other/h2bench ..." adds client rows for other h2bench binaries (before/after).
# Prints one table per server: client, Ir/request, reads/request, sends/request, Ir ratio to
# h2load's. Exit 2: a tool is missing; 3: a run failed.
set -euo pipefail
BIN=${1:-build/bin}
N1=${2:-2000} N2=${3:-12000}
CELLS=${CELLS:-"1,1 10,10 100,10"}
SERVERS=${SERVERS:-"h2ref nghttpd"}
H2BENCH=$BIN/h2bench
command -v h2load >/dev/null && command -v valgrind >/dev/null ||
    { echo "needs h2load and valgrind" >&2; exit 2; }
# h2load's user-agent, for the rows that send it: h2bench's own (h2bench/VERSION) is 8 bytes
# shorter, which is all that tells the two clients' requests apart on the wire.
UA="h2load nghttp2/$(h2load --version | sed -n 's/.*nghttp2\/\([0-9.]*\).*/\1/p' | head -1)"
[ -x "$H2BENCH" ] || { echo "no $H2BENCH: build first" >&2; exit 2; }
case " $SERVERS " in *" nghttpd "*) command -v nghttpd >/dev/null ||
    { echo "needs nghttpd (nghttp2-server) or SERVERS=h2ref" >&2; exit 2; } ;;
esac
TMP=$(mktemp -d)
SERVER=
cleanup() { [ -n "$SERVER" ] && kill "$SERVER" 2>/dev/null; wait 2>/dev/null; rm -rf "$TMP"; }
trap cleanup EXIT
mkdir -p "$TMP/www"
printf 'hello world\n' >"$TMP/www/hello"

# syscalls FILE: "reads sends" from valgrind's --trace-syscalls output (a syscall that blocks
# prints its result on a later line, after "[async]").
syscalls() {
    python3 - "$1" <<'PY'
import re, sys
pend, reads, sends = {}, 0, 0
def count(name, res, val):
    global reads, sends
    if name in ("sys_recvfrom", "sys_read") and res == "Success" and val > 0:
        reads += 1
    elif name in ("sys_sendto", "sys_sendmsg", "sys_writev", "sys_write") and res == "Success":
        sends += 1
for line in open(sys.argv[1], errors="replace"):
    m = re.match(r"SYSCALL\[\d+,(\d+)\]\(\d+\) (sys_\w+)", line)
    if m:
        r = re.search(r"--> (Success|Failure)\((0x[0-9a-f]+)\)", line)
        if r:
            count(m.group(2), r.group(1), int(r.group(2), 16))
        else:
            pend[m.group(1)] = m.group(2)
        continue
    m = re.match(r"SYSCALL\[\d+,(\d+)\]\(\d+\) \.\.\. \[async\] --> (Success|Failure)\((0x[0-9a-f]+)\)", line)
    if m and m.group(1) in pend:
        count(pend.pop(m.group(1)), m.group(2), int(m.group(3), 16))
print(reads, sends)
PY
}

free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# server_counts SERVER C M N CLIENT...: "Ir reads sends" of the server over one client run
server_counts() {
    local server=$1 c=$2 m=$3 n=$4
    shift 4
    local vg=(valgrind --tool=callgrind --trace-syscalls=yes --callgrind-out-file="$TMP/cg.out")
    local url= port
    if [ "$server" = h2ref ]; then
        "${vg[@]}" "$H2BENCH" serve --threads 1 >"$TMP/serve.out" 2>"$TMP/vg.err" &
        SERVER=$!
        for _ in $(seq 300); do
            url=$(sed -nE 's/^listening on (http:[^ ]*).*/\1/p' "$TMP/serve.out")
            [ -n "$url" ] && break
            sleep 0.1
        done
    else
        port=$(free_port)
        "${vg[@]}" nghttpd --no-tls -n 1 -d "$TMP/www" "$port" >"$TMP/serve.out" 2>"$TMP/vg.err" &
        SERVER=$!
        for _ in $(seq 300); do
            (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && { url=http://127.0.0.1:$port; break; }
            sleep 0.1
        done
    fi
    [ -n "$url" ] || { echo "$server did not start: $(tail -5 "$TMP/vg.err")" >&2; exit 3; }
    # The readiness probe above made one connection to nghttpd: counted at N1 and N2 alike.
    "$@" -n "$n" -c "$c" -m "$m" "$url/hello" >"$TMP/client.out" 2>&1 ||
        { echo "$* failed:" >&2; cat "$TMP/client.out" >&2; exit 3; }
    grep -q " $n succeeded" "$TMP/client.out" ||
        { echo "$*: not all requests succeeded" >&2; cat "$TMP/client.out" >&2; exit 3; }
    kill -TERM "$SERVER"
    wait "$SERVER" || true
    SERVER=
    echo "$(sed -nE 's/^(summary|totals): ([0-9]+).*/\2/p' "$TMP/cg.out" | head -1) $(syscalls "$TMP/vg.err")"
}

# per_request SERVER C M CLIENT...: "Ir/req reads/req sends/req"
per_request() {
    local a b
    a=$(server_counts "$1" "$2" "$3" "$N1" "${@:4}")
    b=$(server_counts "$1" "$2" "$3" "$N2" "${@:4}")
    awk -v a="$a" -v b="$b" -v d=$((N2 - N1)) 'BEGIN {
        split(a, x, " "); split(b, y, " ")
        printf "%.0f %.3f %.3f", (y[1] - x[1]) / d, (y[2] - x[2]) / d, (y[3] - x[3]) / d }'
}

for server in $SERVERS; do
    for cell in $CELLS; do
        c=${cell%,*} m=${cell#*,}
        echo "$server under callgrind, -c $c -m $m, (count(-n $N2) - count(-n $N1)) / $((N2 - N1))"
        printf '%-52s %10s %10s %10s %8s\n' client "Ir/req" "reads/req" "sends/req" "Ir ratio"
        ref=$(per_request "$server" "$c" "$m" h2load)
        row() { # NAME "IR READS SENDS"
            # shellcheck disable=SC2086
            set -- "$1" $2
            printf '%-52s %10s %10s %10s %8s\n' "$1" "$2" "$3" "$4" \
                "$(awk -v a="$2" -v b="${ref%% *}" 'BEGIN {printf "%.4f", a / b}')"
        }
        row h2load "$ref"
        for b in "$H2BENCH" ${EXTRA:-}; do
            for engine in fast nghttp2; do
                row "$b load --engine $engine" \
                    "$(per_request "$server" "$c" "$m" "$b" load --no-progress --engine $engine)"
                row "$b load --engine $engine (h2load's UA)" \
                    "$(per_request "$server" "$c" "$m" "$b" load --no-progress --engine $engine -H "user-agent: $UA")"
            done
        done
        echo
    done
done
