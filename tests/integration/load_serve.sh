#!/usr/bin/env bash
# load_serve.sh - `h2bench load` against `h2bench serve`: latency truth on /delay/MS, the
# coordinated-omission test (--rate with the server stopped mid-run), --fail-on-error on
# /status/500, TLS with ALPN, POST bodies.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/serve_lib.sh"
start_serve h2ref --threads 1 || { finish; exit 1; }
URL=$SERVE_URL

# latency truth: a server path that answers after 20 ms. No run may report less than the delay,
# and the latencies must fit in the run that held them: in closed loop each of the 4 stream slots
# (-c 2 -m 2) sends its next request when its last one ends, so the latencies of one slot add up
# to at most the run's wall time, and those of all 200 to at most 4 times it. A client that adds
# a millisecond to each measurement (or measures from an earlier start) adds 200 ms to that sum,
# more than the 4 slots' idle gaps and connection set-up take on a quiet machine, and fails. A
# busy machine widens the gaps, never the sum: this bound is the run's own, not a committed time
# (before, "p50 within 1 ms above 20 ms, in one of 5 runs" failed on a loaded machine). The mean
# comes from the histogram's bin midpoints, within half a bin (3 significant digits: 1/2048 of
# the value at most) of the exact one, so the bound carries that factor.
out=$("$H2BENCH" load -n 200 -c 2 -m 2 --json "$TMP/delay.json" "$URL/delay/20"); rc=$?
expect_eq "/delay/20 exit" "$rc" 0
expect_match "/delay/20 all succeeded" "$out" ' 200 succeeded, 0 failed'
read -r min mean n wall < <(jq -r '"\(.latency_ns.min) \(.latency_ns.mean) \(.succeeded) \(.wall_s)"' \
    "$TMP/delay.json")
echo "latency truth: /delay/20 min = $min ns, mean = $mean ns over $n requests in $wall s"
if [ "$min" -ge 20000000 ]; then ok; else fail "/delay/20: min $min ns is below the delay"; fi
expect_eq "/delay/20: the latencies fit in the run (sum <= 4 slots x wall time)" \
    "$(jq -n --argjson m "$mean" --argjson n "$n" --argjson w "$wall" 'if $m * $n <= 4 * $w * 1e9 * (1 + 1 / 2048) then "yes" else "no: \($m * $n / 1e9) s > 4 x \($w) s" end' -r)" yes

# --fail-on-error: exit 1 against a server answering 500, and the exact code is counted
out=$("$H2BENCH" load -n 50 -c 2 --fail-on-error "$URL/status/500" 2>"$TMP/err"); rc=$?
expect_eq "/status/500 --fail-on-error exit" "$rc" 1
expect_match "/status/500 counted" "$out" 'status: 500 x50$'
expect_match "/status/500 class" "$out" '^status codes: 0 2xx, 0 3xx, 0 4xx, 50 5xx$'
out=$("$H2BENCH" load -n 50 -c 2 "$URL/status/204" "$URL/status/302" "$URL/status/429"); rc=$?
expect_eq "mixed statuses exit" "$rc" 0
expect_match "exact codes" "$out" 'status: 204 x17 302 x17 429 x16$'
expect_match "2xx/3xx succeed, 4xx fail" "$out" ' 34 succeeded, 16 failed, 0 errored'

# POST bodies (-d): 64 KiB each, sent whole (windows are 1M at the server)
head -c 65536 /dev/zero >"$TMP/body"
out=$("$H2BENCH" load -n 100 -c 2 -m 4 -d "$TMP/body" --json "$TMP/post.json" "$URL/sink"); rc=$?
expect_eq "-d exit" "$rc" 0
expect_match "-d all succeeded" "$out" ' 100 succeeded, 0 failed'
sent=$(jq '.traffic.sent' "$TMP/post.json")
if [ "$sent" -ge $((100 * 65536)) ]; then ok; else fail "-d: only $sent bytes sent"; fi

# -i FILE: URIs one per line (blank lines skipped), round-robin per connection
printf '%s\n' "$URL/hello" "$URL/bytes/100" "" "$URL/status/201" >"$TMP/uris"
out=$("$H2BENCH" load -n 300 -c 3 -i "$TMP/uris"); rc=$?
expect_eq "-i exit" "$rc" 0
expect_match "-i round-robin" "$out" 'status: 200 x200 201 x100$'
expect_match "-i data bytes" "$out" '\(11300\) data$'

# RFC windows (-w 16 -W 16): 1 MB responses need WINDOW_UPDATEs and all arrive
out=$("$H2BENCH" load -n 40 -c 2 -m 4 -w 16 -W 16 "$URL/bytes/1000000"); rc=$?
expect_eq "-w 16 exit" "$rc" 0
expect_match "-w 16 all data" "$out" ' 40 succeeded, 0 failed.*|\(40000000\) data$'
expect_match "-w 16 data bytes" "$out" '\(40000000\) data$'

# -T: connections live at most 1 s; they are replaced and the run goes on to its -D
out=$("$H2BENCH" load -D 2.5 -c 2 -m 2 -T 1s "$URL/hello"); rc=$?
expect_eq "-T exit" "$rc" 0
reconnects=$(printf '%s\n' "$out" | sed -nE 's/.* ([0-9]+) reconnects;.*/\1/p')
if [ "${reconnects:-0}" -ge 2 ]; then ok; else fail "-T 1s: only '$reconnects' reconnects"; fi

# --cpus: worker i runs on the i-th CPU of the list (read back from /proc while it runs)
"$H2BENCH" load -D 1.5 -c 2 -t 2 --cpus 0 "$URL/hello" >/dev/null 2>&1 &
lp=$!
sleep 0.7
pinned=$(for t in /proc/$lp/task/*; do
    [ "$(cat "$t/comm" 2>/dev/null)" = h2b-load-1 ] && sed -n 's/^Cpus_allowed_list:\s*//p' "$t/status"
done)
wait "$lp"; rc=$?
expect_eq "--cpus exit" "$rc" 0
expect_eq "--cpus 0: worker 1 pinned to CPU 0 (the list wraps)" "$pinned" 0

# coordinated omission: 2000 req/s for 5 s, the server stopped for 1 s in the middle. Latency
# from the intended send time must show the stall (p99 >= 500 ms); the actual-send-time view
# (service) is printed beside it for comparison.
( sleep 2; kill -STOP "$SERVE_PID"; sleep 1; kill -CONT "$SERVE_PID" ) &
stopper=$!
out=$("$H2BENCH" load --total-rps 2000 -D 5 -c 2 -m 8 --json "$TMP/co.json" "$URL/hello"); rc=$?
wait "$stopper"
expect_eq "CO run exit" "$rc" 0
p99=$(jq '.latency_ns.p99' "$TMP/co.json")
sp99=$(jq '.service_ns.p99' "$TMP/co.json")
echo "coordinated omission: p99 from intended send time = $((p99 / 1000000)) ms;" \
    "the actual-send-time view would say p99 = $((sp99 / 1000000)) ms"
if [ "$p99" -ge 500000000 ]; then ok; else fail "CO: p99 $p99 ns < 500 ms"; fi
achieved=$(jq '.open_loop.achieved_per_s | floor' "$TMP/co.json")
if [ "$achieved" -ge 1800 ]; then ok; else fail "CO: achieved only $achieved req/s"; fi
expect_eq "CO: no errors" "$(jq '.errors' "$TMP/co.json")" 0

# TLS with ALPN h2
start_serve tls --threads 1 --tls || { finish; exit 1; }
out=$("$H2BENCH" load -n 2000 -c 4 -m 10 -t 2 "$SERVE_URL/hello"); rc=$?
expect_eq "TLS exit" "$rc" 0
expect_match "TLS all succeeded" "$out" ' 2000 succeeded, 0 failed, 0 errored'
expect_match "TLS protocol" "$out" 'SETTINGS_MAX_CONCURRENT_STREAMS 256\); h2$'
expect_match "TLS handshake times" "$out" '^tls: handshake p50 [0-9.]+(us|ms|s), max .* \(4 handshakes\)'
# h2c against a TLS port fails cleanly (no hang), and TLS against h2c too
out=$(timeout 20 "$H2BENCH" load -n 4 -c 2 --timeout 2s "http://${SERVE_URL#https://}/hello" 2>&1); rc=$?
if [ "$rc" -eq 3 ]; then ok; else fail "h2c to a TLS port: exit $rc"; fi
out=$(timeout 20 "$H2BENCH" load -n 4 -c 2 --timeout 2s "https://${URL#http://}/hello" 2>&1); rc=$?
if [ "$rc" -eq 3 ]; then ok; else fail "TLS to an h2c port: exit $rc"; fi
finish
