#!/usr/bin/env bash
# serve_engines.sh - the differential test of `h2bench serve`'s two HTTP/2 engines (issue 17):
# --engine nghttp2 (an nghttp2_session per connection, h2_nghttp2.c) and --engine fast (our own
# framing, h2_fast.c) run side by side with the same options; `h2bench load` sends each the same
# load. Requests, successes, failures, errors, status codes and DATA bytes must be equal (the
# compressed response headers differ by design: the engines encode them differently). Cases:
# many small responses; 64 KiB files over a 16 KiB stream window (WINDOW_UPDATE both ways);
# request bodies to /sink and /echo over the same window (the server's receive-side flow
# control); mixed routes and statuses, HEAD-less; TLS. The server's /stats must count the
# same requests and statuses on both.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/serve_lib.sh"
. "$(dirname "$0")/load_lib.sh"

make_docroot
head -c 65536 /dev/zero | tr '\0' 'x' >"$TMP/www/big"
head -c 40000 /dev/urandom >"$TMP/body"

# both PROTO_OPTS...: starts one server per engine with the same options; sets URL_nghttp2 and
# URL_fast.
both() {
    local e
    for e in nghttp2 fast; do
        start_serve "srv-$e" --threads 1 --window 16K --docroot "$TMP/www" "$@" --engine "$e" ||
            return 1
        printf -v "URL_$e" '%s' "$SERVE_URL"
        printf -v "PID_$e" '%s' "$SERVE_PID"
    done
}

# differ NAME PATHS... -- LOAD_ARGS...: the same load against both engines; compares the JSON.
differ() {
    local name=$1
    shift
    local paths=()
    while [ $# -gt 0 ] && [ "$1" != -- ]; do
        paths+=("$1")
        shift
    done
    shift
    local e u urls
    for e in nghttp2 fast; do
        u="URL_$e"
        urls=()
        for p in "${paths[@]}"; do urls+=("${!u}$p"); done
        timeout 120 "$H2BENCH" load --no-progress --json "$TMP/$name-$e.json" "$@" "${urls[@]}" \
            >"$TMP/$name-$e.out" 2>"$TMP/$name-$e.err"
        echo $? >"$TMP/$name-$e.rc"
    done
    expect_eq "$name: exit codes" "$(cat "$TMP/$name-fast.rc")" "$(cat "$TMP/$name-nghttp2.rc")"
    local q='[.requests, .started, .done, .succeeded, .failed, .errors, .timeouts, .resets,
              .protocol_errors, .not_sent, .unfinished, .status_codes, .traffic.data,
              .connections_up, .connections_failed, .connection_errors, .latency_ns.count]'
    expect_eq "$name: counts, statuses and body bytes equal (nghttp2 vs fast)" \
        "$(jq -c "$q" "$TMP/$name-nghttp2.json")" "$(jq -c "$q" "$TMP/$name-fast.json")"
}

# sane NAME SUCCEEDED_MIN DATA_MIN: the compared counts are real (a test that cannot fail is a
# defect)
sane() {
    expect_match "$1: succeeded" "$(jq ".succeeded >= $2" "$TMP/$1-fast.json")" '^true$'
    expect_match "$1: body bytes" "$(jq '.traffic.data >= '"$3" "$TMP/$1-fast.json")" '^true$'
}

both || { finish; exit 1; }
differ small /hello -- -n 3000 -c 4 -m 8
sane small 3000 39000
differ big /big -- -n 200 -c 2 -m 4 -w 14 -W 15
sane big 200 13107200
differ sink /sink -- -n 100 -c 2 -m 4 -d "$TMP/body"
sane sink 100 600
differ echo /echo -- -n 100 -c 2 -m 4 -d "$TMP/body"
sane echo 100 4000000
differ mixed /hello /status/503 /nothing-here /bytes/70000 /status/204 /big -- -n 600 -c 3 -m 4
sane mixed 390 4000000
expect_match "mixed: 503s" "$(jq '.status_codes."503" >= 90' "$TMP/mixed-fast.json")" '^true$'
# the servers counted the same
for e in nghttp2 fast; do
    u="URL_$e"
    curl -s --http2-prior-knowledge "${!u}/stats" | jq -c '[.requests, .responses]' >"$TMP/stats-$e"
done
expect_eq "server /stats: requests and statuses equal" "$(cat "$TMP/stats-nghttp2")" "$(cat "$TMP/stats-fast")"
expect_match "server /stats: counted" "$(cat "$TMP/stats-fast")" '^\[4000,'
stop_serve "$PID_nghttp2" >/dev/null
stop_serve "$PID_fast" >/dev/null

both --tls || { finish; exit 1; }
differ tls /hello /bytes/100000 /echo -- -n 600 -c 4 -m 8 -d "$TMP/body"
sane tls 600 10000000
stop_serve "$PID_nghttp2" >/dev/null
stop_serve "$PID_fast" >/dev/null
finish
