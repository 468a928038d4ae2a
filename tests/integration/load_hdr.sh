#!/usr/bin/env bash
# load_hdr.sh - `h2bench load --hdr-log` is an HdrHistogram interval log that HdrHistogram's own
# code reads: hdr-histogram-js (tests/js, installed by `make -f Makefile.ci deps`) decodes every
# histogram to h2bench's total count exactly, its exact max to the same bin (and the log's
# Interval_Max column holds the exact max), and every printed percentile to HdrHistogram's
# getValueAtPercentile exactly: latency_ns/service_ns/ttfb_ns/connect_ns p50 ... p99.99 in the
# JSON, the latency/service/ttfb lines of the text block and `--latency`'s p50 ... p99.99 (in
# their printed units). `--latency` prints wrk2's spectrum layout. `h2bench merge` of two runs
# matches HdrHistogram's own add of their exports. Skipped (77) when node or the package is
# missing.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/serve_lib.sh"
JS=$SRC/tests/js
command -v node >/dev/null && [ -d "$JS/node_modules/hdr-histogram-js" ] ||
    { echo "hdr-histogram-js not installed (make -f Makefile.ci deps): skipped"; exit 77; }
start_serve h2c --threads 1 || { finish; exit 1; }

# a spread of latencies: immediate answers and 2 ms / 7 ms timers
"$H2BENCH" load -n 1000 -c 3 -m 4 --latency --hdr-log "$TMP/run.hlog" --json "$TMP/run.json" \
    "$SERVE_URL/hello" "$SERVE_URL/delay/2" "$SERVE_URL/delay/7" >"$TMP/run.out"
expect_eq "run: exit" "$?" 0
expect_match "log: version line" "$(cat "$TMP/run.hlog")" '^#\[Histogram log format version 1\.3\]$'
expect_match "log: column line" "$(cat "$TMP/run.hlog")" \
    '^"StartTimestamp","Interval_Length","Interval_Max","Interval_Compressed_Histogram"$'

for tag in latency service ttfb connect; do
    key=${tag}_ns
    max=$(jq ".$key.max" "$TMP/run.json")
    node "$JS/decode_hdr.js" "$TMP/run.hlog" "$max" >"$TMP/$tag.js.json"
    expect_eq "$tag: decoded" "$?" 0
    js() { jq ".$tag.$1" "$TMP/$tag.js.json"; }
    expect_eq "$tag: total count" "$(js count)" "$(jq ".$key.count" "$TMP/run.json")"
    expect_eq "$tag: max, as the histogram knows it" "$(js max)" "$(js 'highest_equivalent[0]')"
    expect_eq "$tag: Interval_Max is the exact max (ms)" \
        "$(python3 -c "print(round($(js interval_max_ms) * 1e6))")" "$max"
    # the same value as HdrHistogram's, the top of the rank's bin, on rank edges too (p99.9 of
    # 1000: 99.9 % x 1000 is 999.0000000000001 in floating point) and in the max's bin
    for p in p50 p90 p99 p999 p9999; do
        expect_eq "$tag $p: h2bench vs hdr-histogram-js" "$(jq ".$key.$p" "$TMP/run.json")" \
            "$(js "$p")"
    done
done
echo "latency: h2bench $(jq -c .latency_ns "$TMP/run.json"); hdr-histogram-js $(jq -c .latency "$TMP/latency.js.json")"

# the text block: each percentile as HdrHistogram gives it, printed as h2bench prints durations
# (h2load's format_duration: NNus below 1 ms, else two decimals with ms or s), the max exact
dur() {
    python3 -c '
import math, sys
s = int(sys.argv[1]) / 1e9
def d(v):  # dtos: llround(100 v), halves away from zero
    x = 100.0 * v
    return "%d.%02d" % divmod(math.floor(x) + (x - math.floor(x) >= 0.5), 100)
print(d(s) + "s" if s >= 1.0 else d(s * 1000.0) + "ms" if s >= 0.001 else "%dus" % int(s * 1000000.0))
' "$1"
}
for tag in latency service ttfb; do
    js() { jq ".$tag.$1" "$TMP/$tag.js.json"; }
    want="$tag: p50 $(dur "$(js p50)"), p90 $(dur "$(js p90)"), p99 $(dur "$(js p99)"),"
    want+=" p99.9 $(dur "$(js p999)"), p99.99 $(dur "$(js p9999)"),"
    want+=" max $(dur "$(jq ".${tag}_ns.max" "$TMP/run.json")") (1000 requests, "
    expect_eq "text block: $tag line" "$(grep "^$tag: " "$TMP/run.out" | cut -c1-${#want})" "$want"
done
# --latency: wrk2's p50 ... p99.99 lines, in ms with three decimals
for p in 50:p50 90:p90 95:p95 99:p99 99.9:p999 99.99:p9999; do
    want=$(python3 -c "import sys; print('%7.3f%% %10.3fms' % (float(sys.argv[1]), int(sys.argv[2]) / 1e6))" \
        "${p%%:*}" "$(jq ".latency.${p#*:}" "$TMP/latency.js.json")")
    expect_eq "--latency: ${p%%:*}%" "$(grep -F -x -- "$want" "$TMP/run.out")" "$want"
done

# --latency: wrk2's layout
out=$(cat "$TMP/run.out")
expect_match "--latency: distribution" "$out" \
    $'Latency Distribution \\(HdrHistogram - latency from submission\\)\n 50\\.000% +[0-9.]+ms\n 90\\.000%'
expect_match "--latency: spectrum header" "$out" \
    'Value +Percentile +TotalCount 1/\(1-Percentile\)'
expect_match "--latency: last line at 100%" "$out" \
    "[0-9.]+ +1\\.000000 +1000 +inf"
expect_match "--latency: footer" "$out" \
    $'#\\[Max     = +[0-9.]+, Total count    = +1000\\]\n#\\[Buckets = +[0-9]+, SubBuckets     = +256\\]'
# h2bench merge: two runs side by side merged into one result; the reference is HdrHistogram's
# own add of the two exports (hdr-histogram-js), and the counts must be the sums.
for part in a b; do
    "$H2BENCH" load -n 300 -c 2 -m 2 --hdr-log "$TMP/$part.hlog" --json "$TMP/$part.json" \
        "$SERVE_URL/hello" "$SERVE_URL/delay/3" >/dev/null &
    PIDS+=($!)
done
wait "${PIDS[@]: -2}"
"$H2BENCH" merge "$TMP/a.json" "$TMP/b.json" --json "$TMP/ab.json" >"$TMP/merge.out"
expect_eq "merge: exit" "$?" 0
expect_match "merge: summary" "$(cat "$TMP/merge.out")" '^merged 2 results: 600 requests'
for f in requests succeeded started done connections connections_up; do
    expect_eq "merge: $f adds" "$(jq ".$f" "$TMP/ab.json")" \
        "$(jq -s ".[0].$f + .[1].$f" "$TMP/a.json" "$TMP/b.json")"
done
expect_eq "merge: status codes add" "$(jq '.status_codes["200"]' "$TMP/ab.json")" 600
expect_eq "merge: rates add" "$(jq -s '(.[2].req_per_s - .[0].req_per_s - .[1].req_per_s) as $d |
    ($d * $d) < 1e-12 * .[2].req_per_s * .[2].req_per_s' "$TMP/a.json" "$TMP/b.json" \
    "$TMP/ab.json")" true
node "$JS/decode_hdr.js" --sum "$TMP/a.hlog" "$TMP/b.hlog" >"$TMP/sum.json"
for tag in latency service ttfb; do
    expect_eq "merge: $tag count as HdrHistogram's add" "$(jq ".${tag}_ns.count" "$TMP/ab.json")" \
        "$(jq ".$tag.count" "$TMP/sum.json")"
    # every percentile of the merged histogram is HdrHistogram's of its add
    for p in p50 p90 p99 p999 p9999; do
        expect_eq "merge $tag $p: h2bench merge vs HdrHistogram add" \
            "$(jq ".${tag}_ns.$p" "$TMP/ab.json")" "$(jq ".$tag.$p" "$TMP/sum.json")"
    done
done
# the engine and the connection errors survive a merge: errors add, a common engine is kept,
# parts of different engines give engine null and a note naming both
jq '.connection_errors = 1' "$TMP/a.json" >"$TMP/a1.json"
jq '.connection_errors = 2' "$TMP/b.json" >"$TMP/b2.json"
jq '.engine = "nghttp2"' "$TMP/b.json" >"$TMP/bn.json"
"$H2BENCH" merge "$TMP/a1.json" "$TMP/b2.json" --json "$TMP/ab2.json" >/dev/null
expect_eq "merge: connection_errors add" "$(jq .connection_errors "$TMP/ab2.json")" 3
expect_eq "merge: the common engine is kept" "$(jq -r .engine "$TMP/ab2.json")" \
    "$(jq -r .engine "$TMP/a.json")"
"$H2BENCH" merge "$TMP/a.json" "$TMP/bn.json" --json "$TMP/abn.json" >/dev/null
expect_eq "merge: different engines give null" "$(jq .engine "$TMP/abn.json")" null
expect_match "merge: the note names both engines" "$(jq -r .note "$TMP/abn.json")" \
    'engine: the parts ran different engines \(fast and nghttp2\)'
printf '{"schema": "h2bench.load/1",\n "requests": "x"}\n' >"$TMP/bad.json"
"$H2BENCH" merge "$TMP/a.json" "$TMP/bad.json" --json "$TMP/never.json" 2>"$TMP/merge.err"
expect_eq "merge: bad part exits 2" "$?" 2
expect_match "merge: names file:line:column" "$(cat "$TMP/merge.err")" 'bad.json:[0-9]+:[0-9]+:'
if [ -e "$TMP/never.json" ]; then fail "merge: wrote output for bad input"; else ok; fi
finish
