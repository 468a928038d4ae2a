#!/usr/bin/env bash
# load_fast_hostile.sh - both HTTP/2 engines (--engine fast and nghttp2) against the hostile
# servers of issue 18 (fakepeer.py): every byte sent on its own (frames, padding lengths and
# SETTINGS entries split at every boundary; padding, PRIORITY, CONTINUATION, PING and
# WINDOW_UPDATE in the answers; with CONTINUATION for the fast engine only, see below), a stream window shrunk to 0 and reopened mid-response and
# mid-upload, HPACK table size updates with SETTINGS_HEADER_TABLE_SIZE changed mid-connection,
# GOAWAY with a last-stream-id in the middle of the streams in flight (those above it are
# counted as reset, not retried, and the connection reconnects for the rest), and a
# PUSH_PROMISE (a protocol violation: the connection ends with GOAWAY and is counted). Each run
# is bounded (60 s watchdog, --timeout 10s); counts are asserted exactly and must be the same
# for both engines.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/load_lib.sh"

# both NAME MODE JQ EXPECTED ARGS...: runs each engine against a fresh fakepeer MODE; the jq
# expression over the JSON must print EXPECTED for both.
both() {
    local name=$1 mode=$2 q=$3 want=$4 e
    shift 4
    for e in fast nghttp2; do
        start_fake "$mode"
        timeout 60 "$H2BENCH" load --engine "$e" --no-progress --timeout 10s \
            --json "$TMP/$name-$e.json" "$@" "$FAKE_URL/x" >"$TMP/$name-$e.out" 2>"$TMP/$name-$e.err"
        local rc=$?
        kill "$FAKE_PID" 2>/dev/null
        if [ ! -s "$TMP/$name-$e.json" ]; then
            fail "$name ($e): no JSON (exit $rc): $(tail -3 "$TMP/$name-$e.err")"
            continue
        fi
        expect_eq "$name ($e): $q" "$(jq -c "$q" "$TMP/$name-$e.json")" "$want"
    done
}

head -c 1000 /dev/zero | tr '\0' 'b' >"$TMP/body"
Q='[.succeeded, .failed, .resets, .protocol_errors, .connection_errors]'
both splitnc splitnc "$Q + [.traffic.data]" '[20,0,0,0,0,120]' -n 20 -c 1 -m 2
# with CONTINUATION: libnghttp2 1.52 (h2load too) ends its session when a CONTINUATION frame
# arrives in pieces, so only the fast engine is held to every request succeeding
start_fake split
timeout 60 "$H2BENCH" load --engine fast --no-progress --timeout 10s --json "$TMP/split.json" \
    -n 20 -c 1 -m 2 "$FAKE_URL/x" >"$TMP/split.out" 2>&1
expect_eq "split (fast): $Q + [.traffic.data]" "$(jq -c "$Q + [.traffic.data]" "$TMP/split.json")" \
    '[20,0,0,0,0,120]'
kill "$FAKE_PID" 2>/dev/null
both shrink shrink "$Q" '[20,0,0,0,0]' -n 20 -c 2 -m 2
both shrink-upload shrink "$Q" '[20,0,0,0,0]' -n 20 -c 2 -m 2 -d "$TMP/body"
both tablesize tablesize "$Q + [.traffic.headers_decompressed]" '[20,0,0,0,0,340]' -n 20 -c 1 -m 2
# GOAWAY: per connection 2 answered, 2 refused; 5 connections (4 reconnects) for 20 requests
both goaway goaway "$Q + [.reconnects]" '[10,10,10,0,0,4]' -n 20 -c 1 -m 4
# PUSH_PROMISE with push disabled: a connection error, counted; no reconnect without a response
both push push '[.succeeded, (.connection_errors >= 1)]' '[0,true]' -n 4 -c 1 -m 2
finish
