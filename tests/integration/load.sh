#!/usr/bin/env bash
# load.sh - `h2bench load` against nghttpd on loopback: exact counts, -D ends on time, the
# h2load-compatible text block, -v frame lines, --fail-on-error, a server killed or stopped
# mid-run, usage errors.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/load_lib.sh"
make_docroot
start_nghttpd "$TMP/www"
URL=http://127.0.0.1:$PORT

# counts add up: -n 10000 gives 10,000 succeeded, split over 10 connections x 10 streams
out=$("$H2BENCH" load -n 10000 -c 10 -m 10 -t 2 "$URL/hello"); rc=$?
expect_eq "-n 10000 exit" "$rc" 0
expect_match "-n 10000 requests line" "$out" \
    '^requests: 10000 total, 10000 started, 10000 done, 10000 succeeded, 0 failed, 0 errored, 0 timeout$'
expect_match "status codes line" "$out" '^status codes: 10000 2xx, 0 3xx, 0 4xx, 0 5xx$'
expect_match "exact status" "$out" 'status: 200 x10000$'
expect_match "finished line (h2load layout)" "$out" \
    '^finished in [0-9.]+(us|ms|s), [0-9]+\.[0-9]{2} req/s, [0-9.]+[KMG]?B/s$'
expect_match "traffic line (h2load layout)" "$out" \
    '^traffic: [0-9.]+[KMG]?B \([0-9]+\) total, [0-9.]+[KMG]?B \([0-9]+\) headers \(space savings [0-9.]+%\), [0-9.]+[KMG]?B \(60000\) data$'
expect_match "table header" "$out" '^                     min         max         mean         sd        \+/- sd$'
expect_match "request row" "$out" '^time for request: +[0-9.]+(us|ms|s) +[0-9.]+(us|ms|s) +[0-9.]+(us|ms|s) +[0-9.]+(us|ms|s) +[0-9.]+%$'
expect_match "req/s row" "$out" '^req/s           : +[0-9]+\.[0-9]{2} '
expect_match "percentile line" "$out" '^latency: p50 [0-9.]+(us|ms|s), p90 .*, p99 .*, p99\.9 .*, p99\.99 .*, max .* \(10000 requests'
expect_match "streams reported" "$out" 'requested 10, effective 10 \(server SETTINGS_MAX_CONCURRENT_STREAMS 100\)'

# -m above the server's SETTINGS_MAX_CONCURRENT_STREAMS is clamped, and both are reported
out=$("$H2BENCH" load -n 2000 -c 2 -m 500 "$URL/hello"); rc=$?
expect_eq "-m 500 exit" "$rc" 0
expect_match "-m clamped" "$out" 'requested 500, effective 100 \(server SETTINGS_MAX_CONCURRENT_STREAMS 100\)'
expect_match "-m 500 all succeeded" "$out" ' 2000 succeeded, 0 failed'

# -v: every frame on stderr (nghttp's layout), for both engines, and nothing of it on stdout
for engine in fast nghttp2; do
    "$H2BENCH" load -n 2 -v --engine "$engine" "$URL/hello" >"$TMP/v.out" 2>"$TMP/v.err"
    expect_eq "-v $engine exit" "$?" 0
    expect_match "-v $engine: SETTINGS sent" "$(cat "$TMP/v.err")" \
        '^\[ *[0-9]+\.[0-9]{3}\] \[conn 0\] send SETTINGS frame <length=[0-9]+, flags=0x00, stream_id=0>$'
    expect_eq "-v $engine: two responses' HEADERS received" \
        "$(grep -c 'recv HEADERS frame .*stream_id=[13]>' "$TMP/v.err")" 2
    expect_eq "-v $engine: no frame line on stdout" "$(grep -c ' frame <' "$TMP/v.out")" 0
done

# several URIs go round-robin: half of them 404 here
out=$("$H2BENCH" load -n 1000 -c 1 -m 4 "$URL/hello" "$URL/missing"); rc=$?
expect_eq "two URIs exit without --fail-on-error" "$rc" 0
expect_match "round-robin statuses" "$out" 'status: 200 x500 404 x500$'

# --fail-on-error: exit 1 when anything failed, 0 when nothing did
"$H2BENCH" load -n 100 -c 2 --fail-on-error "$URL/missing" >"$TMP/out" 2>"$TMP/err"; rc=$?
expect_eq "--fail-on-error with 404s" "$rc" 1
expect_match "--fail-on-error message" "$(cat "$TMP/err")" '100 of 100 requests failed'
"$H2BENCH" load -n 100 -c 2 --fail-on-error "$URL/hello" >/dev/null 2>&1; rc=$?
expect_eq "--fail-on-error all good" "$rc" 0

# --json: one matrix-cell-shaped object with DESIGN.md's fields, the configuration and histograms
out=$("$H2BENCH" load -n 3000 -c 3 -m 5 --json "$TMP/cell.json" "$URL/hello" "$URL/missing"); rc=$?
expect_eq "--json exit" "$rc" 0
for f in target client connections streams_requested streams_effective requests succeeded failed \
    errors duration_s req_per_s bytes_per_s latency_ns client_cpu_s; do
    expect_eq "--json has $f" "$(jq "has(\"$f\")" "$TMP/cell.json")" true
done
expect_eq "--json types" "$(jq -r '[(.target|type), (.client|type), (.connections|type),
    (.requests|type), (.duration_s|type), (.req_per_s|type), (.latency_ns|type)] | join(",")' \
    "$TMP/cell.json")" "string,string,number,number,number,number,object"
expect_eq "--json latency keys" "$(jq -r '.latency_ns | [has("min","p50","p90","p99","p999","max")
    | tostring] | unique | join(",")' "$TMP/cell.json")" "true"
expect_eq "--json counts" "$(jq -c '[.connections, .streams_requested, .streams_effective,
    .requests, .succeeded, .failed, .errors, .status_codes["200"], .status_codes["404"]]' \
    "$TMP/cell.json")" "[3,5,5,3000,1500,1500,0,1500,1500]"
# (a percentile is its bin's top, HdrHistogram's value: in the max's bin it passes the exact
# max by less than the bin's width, under 1/128 of the max)
expect_eq "--json percentiles ordered" "$(jq '.latency_ns | .min <= .p50 and .p50 <= .p90 and
    .p90 <= .p99 and .p99 <= .p999 and .p999 < .max * (1 + 1 / 128)' "$TMP/cell.json")" true
expect_match "--json histogram" "$(jq -r .histograms.latency "$TMP/cell.json")" '^h2bh1:'
expect_eq "--json config" "$(jq -c '[.config.options.requests, .config.uris[1]]' "$TMP/cell.json")" \
    "[3000,\"$URL/missing\"]"
expect_eq "--json records the default --coalesce (100us)" \
    "$(jq -c '.config.options.coalesce_s' "$TMP/cell.json")" "0.0001"
expect_eq "--json server metrics are null with a note" \
    "$(jq '.server_cpu_s == null and (.note | test("server_cpu_s"))' "$TMP/cell.json")" true
"$H2BENCH" load -n 10 --json /nonexistent-dir/x.json "$URL/hello" >/dev/null 2>"$TMP/err"; rc=$?
expect_eq "--json unwritable exit (checked before the run)" "$rc" 2
expect_match "--json unwritable message" "$(cat "$TMP/err")" \
    '^h2bench load: --json /nonexistent-dir/x.json: directory /nonexistent-dir does not exist$'

# Ctrl-C: partial results are printed and the JSON is written; the run stops at once
"$H2BENCH" load -D 60 -c 2 -m 2 --json "$TMP/int.json" "$URL/hello" >"$TMP/out" 2>&1 &
lp=$!
sleep 1
kill -INT "$lp"
start=$(date +%s%N)
wait "$lp"; rc=$?
ms=$(( ($(date +%s%N) - start) / 1000000 ))
expect_eq "SIGINT exit" "$rc" 3
if [ "$ms" -lt 2000 ]; then ok; else fail "SIGINT: took ${ms} ms to stop"; fi
expect_match "SIGINT partial results" "$(cat "$TMP/out")" 'interrupted: partial results'
expect_eq "SIGINT JSON" "$(jq '.interrupted and .succeeded > 0' "$TMP/int.json")" true

# -D ends on time (1 s measured after 0.5 s warm-up; generous upper bound for a loaded machine)
start=$(date +%s%N)
out=$("$H2BENCH" load -D 1 --warm-up-time 0.5 -c 4 -m 8 "$URL/hello"); rc=$?
ms=$(( ($(date +%s%N) - start) / 1000000 ))
expect_eq "-D exit" "$rc" 0
if [ "$ms" -ge 1500 ] && [ "$ms" -lt 4000 ]; then ok; else fail "-D 1 + warm-up 0.5 took ${ms} ms"; fi
started=$(field "$out" '^requests: [0-9]+ total, ([0-9]+) started.*')
done_=$(field "$out" '^requests: .* ([0-9]+) done.*')
unfinished=$(field "$out" '.* ([0-9]+) unfinished at the end$')
expect_eq "-D: started = done + unfinished" "$started" "$((done_ + unfinished))"
if [ "${started:-0}" -gt 100 ]; then ok; else fail "-D: only '$started' requests started"; fi

# --progress prints one line a second to stderr, also in -D mode
"$H2BENCH" load -D 2.2 -c 1 --progress "$URL/hello" >/dev/null 2>"$TMP/err"; rc=$?
expect_eq "--progress exit" "$rc" 0
expect_eq "--progress lines" "$(grep -c '^progress: ' "$TMP/err")" 2
expect_match "--progress line" "$(cat "$TMP/err")" \
    '^progress: [0-9.]+s, [0-9]+ ended, [0-9]+ req/s, [0-9]+ in flight, 0 errors, interval p50 [0-9.]+(us|ms|s) p99 '

# usage errors exit 2 with their one line and a pointer to --help on stderr (not the usage)
for args in "-c 0 $URL/" "-c 2 -n 1 $URL/" "-n 10x $URL/" "--arrival sometimes --total-rps 5 $URL/" "-r 2 -c 1 -n 4 $URL/" "-r 2 -D 1 -c 2 $URL/" "--h1 --rps 5 $URL/" "-p spdy $URL/" \
    "--warm-up-time 1 $URL/" "ftp://x/" "" "--no-such-flag $URL/"; do
    # shellcheck disable=SC2086
    "$H2BENCH" load $args >/dev/null 2>"$TMP/err"; rc=$?
    expect_eq "usage error exit for '$args'" "$rc" 2
    expect_match "pointer to --help for '$args'" "$(tail -n 1 "$TMP/err")" "^Run 'h2bench load --help' for the options\.$"
done
out=$("$H2BENCH" load --help); rc=$?
expect_eq "--help exit" "$rc" 0
expect_match "--help text" "$out" '--total-rps=R'

# nothing listening: runtime failure (3), errors counted, no hang
dead=$(free_port)
out=$(timeout 20 "$H2BENCH" load -n 10 -c 2 "http://127.0.0.1:$dead/" 2>"$TMP/err"); rc=$?
expect_eq "no server exit" "$rc" 3
expect_match "no server: requests errored" "$out" ' 10 failed, 10 errored'

# the server is killed mid-run: the run ends well before -D with the errors counted
start=$(date +%s%N)
( sleep 0.7; kill -9 "$NGHTTPD_PID" ) &
out=$(timeout 30 "$H2BENCH" load -D 20 -c 4 -m 8 --timeout 2s "$URL/hello"); rc=$?
ms=$(( ($(date +%s%N) - start) / 1000000 ))
wait "$NGHTTPD_PID" 2>/dev/null
if [ "$ms" -lt 10000 ]; then ok; else fail "killed server: run took ${ms} ms"; fi
errored=$(field "$out" '^requests: .* ([0-9]+) errored.*')
if [ "${errored:-0}" -gt 0 ]; then ok; else fail "killed server: no errors counted: $out"; fi

# a stopped (SIGSTOP) server: requests time out, the connections give up, the run ends. The
# server is stopped once both connections have carried requests (the kernel's count of bytes
# the server's sockets received), not after a fixed sleep: a client slow to start (TSan, a busy
# machine) once met a server already stopped, whose connections never got SETTINGS, so nothing
# timed out and nothing was tested.
start_nghttpd "$TMP/www"
(
    for _ in $(seq 200); do
        got=$(ss -tniH state established "( sport = :$PORT )" |
            grep -o 'bytes_received:[0-9]*' | awk -F: '$2 > 1000 {n++} END {print n + 0}')
        [ "$got" -ge 2 ] && break
        sleep 0.1
    done
    kill -STOP "$NGHTTPD_PID"
) &
start=$(date +%s%N)
out=$(timeout 30 "$H2BENCH" load -n 100000000 -c 2 -m 4 --timeout 1s "http://127.0.0.1:$PORT/hello"); rc=$?
ms=$(( ($(date +%s%N) - start) / 1000000 ))
kill -CONT "$NGHTTPD_PID"
if [ "$ms" -lt 10000 ]; then ok; else fail "stopped server: run took ${ms} ms"; fi
expect_match "stopped server: timeouts counted" "$out" ' [1-9][0-9]* timeout$'
finish
