#!/usr/bin/env bash
# hostile_client.sh - scripted hostile servers (fakepeer.py) in front of h2bench load, both
# HTTP/2 engines (label hostile-client), the cases of issue 29.
#
# Item 5, bound stated: against a server that completes the handshake, then never reads and
# floods PINGs, `load -n 1` ends (the connection is cut, its one request failed) instead of
# queueing ACKs without bound, and the client's peak RSS stays within 32 MiB of its peak against
# a server that just stops reading (noread, -D 3s), side by side. The flood run has a 60 s
# watchdog and, outside sanitizer builds, a 1 GiB address-space limit, so a regression fails
# the test instead of exhausting the machine's memory.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/load_lib.sh"

AS_LIMIT=()
ldd "$H2BENCH" | grep -q 'libasan' || AS_LIMIT=(prlimit --as=1073741824)

# peak_rss MODE ENGINE ARGS...: runs load against a fresh fakepeer MODE; prints the peak RSS
# (KiB) and leaves the JSON in $TMP/MODE-ENGINE.json.
peak_rss() {
    local mode=$1 e=$2
    shift 2
    start_fake "$mode"
    /usr/bin/time -f '%M' -o "$TMP/$mode-$e.rss" timeout 60 "${AS_LIMIT[@]}" "$H2BENCH" load \
        --engine "$e" --no-progress -c 1 --timeout 0 --json "$TMP/$mode-$e.json" "$@" \
        "$FAKE_URL/x" >"$TMP/$mode-$e.out" 2>"$TMP/$mode-$e.err"
    kill "$FAKE_PID" 2>/dev/null
    tail -1 "$TMP/$mode-$e.rss"
}

for e in fast nghttp2; do
    base=$(peak_rss noread "$e" -D 3s)
    flood=$(peak_rss pingflood "$e" -n 1)
    echo "$e: peak RSS ${flood} KiB against the PING flood, ${base} KiB against noread"
    expect_match "$e: peak RSS measured" "$base $flood" '^[0-9]+ [0-9]+$'
    expect_eq "$e: PING flood peak RSS ${flood} KiB <= noread ${base} KiB + 32 MiB" \
        "$(( ${flood:-999999999} <= ${base:-0} + 32768 ))" 1
    expect_eq "$e: the flooded connection ended" \
        "$(jq -c '[.succeeded, .failed]' "$TMP/pingflood-$e.json" 2>&1)" '[0,1]'
done

# Item 13: malformed responses are failures in both engines, as h2load counts them (nghttp2's
# HTTP messaging rules): :status in trailers, a :path in a response, an uppercase field name,
# connection: close. A valid trailer block still succeeds.
responses() { # MODE EXPECTED
    local e
    for e in fast nghttp2; do
        start_fake "$1"
        timeout 60 "$H2BENCH" load --engine "$e" --no-progress --timeout 10s -n 4 -c 1 -m 2 \
            --json "$TMP/$1-$e.json" "$FAKE_URL/x" >"$TMP/$1-$e.out" 2>&1
        kill "$FAKE_PID" 2>/dev/null
        expect_eq "$1 ($e): [succeeded, failed]" \
            "$(jq -c '[.succeeded, .failed]' "$TMP/$1-$e.json" 2>&1)" "$2"
    done
}
responses trailer '[4,0]'
responses trailerstatus '[0,4]'
responses pseudo '[0,4]'
responses upper '[0,4]'
responses connhdr '[0,4]'
finish
