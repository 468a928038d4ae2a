#!/usr/bin/env bash
# load_hpack.sh - the request header blocks `h2bench load` puts on the wire (issue 18: the fast
# engine's per-connection HPACK encoder and its block cache), read by a real server: nghttpd -v
# prints every request HEADERS frame's length and the fields it decoded from it.
#  - default tables: on every connection the first block indexes :authority and user-agent and
#    every later block of the same URI is shorter than the first and the same length (the cached
#    block); every block decodes to exactly the request's fields; the later blocks are as long
#    as those of h2load and of --engine nghttp2 (both an nghttp2 session's encoder), side by side.
#  - the server allows no dynamic table (nghttpd -c 0, SETTINGS_HEADER_TABLE_SIZE 0): every
#    request still succeeds and decodes, and nothing shrinks (nothing may be indexed).
#  - --encoder-header-table-size 0 on our side: the same.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/load_lib.sh"

make_docroot
printf 'other\n' >"$TMP/www/other"
VERSION=$("$H2BENCH" load --version | sed -nE 's/^h2bench load ([^ ]+).*/\1/p')

# blocks LOG: one line per request HEADERS frame nghttpd read, in order:
# "CONN STREAM LENGTH PATH OK" (OK: the decoded fields are exactly the request's, in order)
blocks() {
    python3 - "$1" "$PORT" "$2" <<'EOF'
import re, sys
log, port, agent = sys.argv[1], sys.argv[2], sys.argv[3]
fields, out = {}, []
for line in open(log, errors="replace"):
    m = re.match(r"\[id=(\d+)\] \[ *[0-9.]+\] recv \(stream_id=(\d+)\) ([^:]+|:[^:]+): (.*)$", line)
    if m:
        fields.setdefault((m[1], m[2]), []).append((m[3], m[4]))
        continue
    m = re.match(r"\[id=(\d+)\] \[ *[0-9.]+\] recv HEADERS frame <length=(\d+), flags=0x05, stream_id=(\d+)>", line)
    if m:
        got = fields.pop((m[1], m[3]), [])
        path = dict(got).get(":path", "?")
        want = [(":path", path), (":scheme", "http"), (":authority", "127.0.0.1:" + port),
                (":method", "GET"), ("user-agent", agent)]  # h2load's order
        out.append("%s %s %s %s %s" % (m[1], m[3], m[2], path, "ok" if got == want else "bad:%r" % got))
print("\n".join(out))
EOF
}

# run NAME NGHTTPD_ARGS -- CLIENT...: one nghttpd -v, the client's -n 12 -c 2 -m 1 over two URIs
run() {
    local name=$1
    shift
    local sargs=()
    while [ "$1" != "--" ]; do sargs+=("$1"); shift; done
    shift
    start_nghttpd "$TMP/www" -v "${sargs[@]}"
    timeout 60 "$@" -n 12 -c 2 -m 1 "http://127.0.0.1:$PORT/hello" "http://127.0.0.1:$PORT/other" \
        >"$TMP/$name.out" 2>&1
    expect_eq "$name: exit" "$?" 0
    expect_match "$name: every request succeeded" "$(cat "$TMP/$name.out")" " 12 succeeded, 0 failed"
    kill "$NGHTTPD_PID"
    wait "$NGHTTPD_PID" 2>/dev/null
    cp "$TMP/nghttpd.log" "$TMP/$name.log"
}

# later LIST PATH: the distinct lengths of a path's blocks after each connection's first two
later() { awk -v p="$2" '{n[$1]++} n[$1] > 2 && $4 == p {print $3}' <<<"$1" | sort -u | paste -sd' '; }

check_decoded() { # NAME LIST: 12 blocks, each decoded to exactly the request
    expect_eq "$1: 12 request blocks read" "$(wc -l <<<"$2")" 12
    expect_eq "$1: every block decodes to the request's fields" \
        "$(awk '$5 != "ok"' <<<"$2")" ""
}

# default tables
run fast -- "$H2BENCH" load --no-progress
fast=$(blocks "$TMP/fast.log" "h2bench/$VERSION")
check_decoded fast "$fast"
expect_eq "fast: two connections" "$(awk '{print $1}' <<<"$fast" | sort -u | wc -l)" 2
for conn in $(awk '{print $1}' <<<"$fast" | sort -u); do
    first=$(awk -v c="$conn" '$1 == c {print $3; exit}' <<<"$fast")
    for p in /hello /other; do
        lens=$(awk -v c="$conn" -v p="$p" '$1 == c && $4 == p {print $3}' <<<"$fast")
        # the connection's first block carries the literals; from the second of a path on,
        # every block of that path is its cached block: one length, shorter than the first
        rest=$(tail -n +2 <<<"$lens" | sort -u)
        expect_eq "fast conn $conn $p: later blocks all one length" "$(wc -l <<<"$rest")" 1
        if [ "$rest" -lt "$first" ]; then ok; else
            fail "fast conn $conn $p: later block $rest not shorter than the first $first"; fi
    done
done

run nghttp2 -- "$H2BENCH" load --no-progress --engine nghttp2
ng=$(blocks "$TMP/nghttp2.log" "h2bench/$VERSION")
check_decoded nghttp2 "$ng"
run h2load -- h2load
h2l=$(blocks "$TMP/h2load.log" "$(sed -nE 's/^h2load nghttp2\/([^ ]+).*/h2load nghttp2\/\1/p' \
    <<<"$(h2load --version)")")
expect_eq "h2load: 12 request blocks read" "$(wc -l <<<"$h2l")" 12
for p in /hello /other; do
    expect_eq "fast $p: later blocks as long as --engine nghttp2's" "$(later "$fast" $p)" \
        "$(later "$ng" $p)"
    expect_eq "fast $p: later blocks as long as h2load's" "$(later "$fast" $p)" "$(later "$h2l" $p)"
done

# the server allows no dynamic table: a size update to 0, then literals only
run t0 -c 0 -- "$H2BENCH" load --no-progress
t0=$(blocks "$TMP/t0.log" "h2bench/$VERSION")
check_decoded "server table 0" "$t0"
for p in /hello /other; do
    n=$(later "$t0" $p)
    expect_eq "server table 0 $p: one length" "$(wc -w <<<"$n")" 1
    if [ "$n" -gt "$(later "$fast" $p)" ]; then ok; else
        fail "server table 0 $p: blocks of $n bytes, not longer than indexed ones"; fi
done

# our encoder allows no dynamic table
run e0 -- "$H2BENCH" load --no-progress --encoder-header-table-size 0
e0=$(blocks "$TMP/e0.log" "h2bench/$VERSION")
check_decoded "encoder table 0" "$e0"
for p in /hello /other; do
    expect_eq "encoder table 0 $p: as long as with the server's table 0" "$(later "$e0" $p)" \
        "$(later "$t0" $p)"
done
finish
