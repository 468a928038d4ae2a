#!/usr/bin/env bash
# run_peers.sh - h2bench run end to end: the bundled server with h2bench load, then the peers
# (nghttpd, h2o, nginx) driven by h2load. The probe finds the advertised
# SETTINGS_MAX_CONCURRENT_STREAMS, cells complete with 0 failed requests, and the results file
# validates. Then a target that dies mid-run: its cells are
# marked failed with the reason, the run goes on, exit 3, and the results file is still written.
. "$(dirname "$0")/lib.sh"
DATA=$SRC/tests/data/run
CHECK=$BIN/../tests/results_check

# An unwritable results path fails before anything is measured.
"$H2BENCH" run "$DATA/peers-small.json" --out /proc/no/such/dir/r.json --no-progress \
    >"$TMP/out" 2>"$TMP/err"
expect_eq "unwritable --out exit" "$?" 3
expect_eq "unwritable --out: nothing measured" "$(cat "$TMP/out")" ""
expect_match "unwritable --out message" "$(cat "$TMP/err")" 'cannot create the directory'

# --out's directory is created.
"$H2BENCH" run "$DATA/peers-small.json" --out "$TMP/new/dir/small.json" --no-progress \
    >"$TMP/out" 2>"$TMP/err"
expect_eq "small run exit" "$?" 0
mv "$TMP/new/dir/small.json" "$TMP/small.json"
"$CHECK" "$TMP/small.json" >"$TMP/cells"
expect_eq "small results validate" "$?" 0
cells=$(cat "$TMP/cells")
expect_eq "small: 4 cells" "$(grep -c '^nghttpd ' "$TMP/cells")" 4
# max_streams 8 configured and probed: 16 requested streams become 8 (cap 4096 does not bind).
expect_match "small: (4,16) -> 8 from the probe" "$cells" '^nghttpd 4 16 8 ok counted -$'
expect_match "small: (1,1) -> 1" "$cells" '^nghttpd 1 1 1 ok counted -$'
expect_eq "small: no failed requests" "$(grep -c 'failed_requests 0' "$TMP/cells")" 4
expect_match "small: results path printed" "$(cat "$TMP/out")" "results: $TMP/new/dir/small.json"
expect_match "small: probed max in results" "$(cat "$TMP/small.json")" '"server_max_streams": 8'
expect_match "small: percentiles from the log" "$(cat "$TMP/small.json")" '"p99": [0-9]+'
expect_match "small: instructions null with a reason" "$(cat "$TMP/small.json")" \
    '"note": ".*server_instructions_per_request'

# The bundled server (h2bench serve --port 0, its "listening on" line) with h2bench load --json.
"$H2BENCH" run "$DATA/bundled-small.json" --out "$TMP/bundled.json" --no-progress \
    >"$TMP/out" 2>"$TMP/err"
expect_eq "bundled run exit" "$?" 0
"$CHECK" "$TMP/bundled.json" >"$TMP/cells"
expect_eq "bundled results validate" "$?" 0
cells=$(cat "$TMP/cells")
expect_match "bundled: (4,8) -> 4 from the probe" "$cells" '^h2ref 4 8 4 ok counted -$'
expect_match "bundled: (1,1)" "$cells" '^h2ref 1 1 1 ok counted -$'
expect_eq "bundled: no failed requests" "$(grep -c 'failed_requests 0' "$TMP/cells")" 4
expect_match "bundled: percentiles and histogram from h2bench load" "$(cat "$TMP/bundled.json")" \
    '"latency_histogram": "h2bh1:'
expect_match "bundled: server CPU measured" "$(cat "$TMP/bundled.json")" '"server_cpu_s": [0-9]'

# A timed cell short of min_requests is extended once (to timeout_s / 2 here), then fails.
"$H2BENCH" run "$DATA/extend.json" --out "$TMP/extend.json" --no-progress >"$TMP/out" 2>"$TMP/err"
expect_eq "extend exit" "$?" 3
"$CHECK" "$TMP/extend.json" >"$TMP/cells"
expect_match "extend: failed for min_requests" "$(cat "$TMP/cells")" \
    'failed counted [0-9]+ requests succeeded, fewer than matrix.min_requests'
expect_match "extend: note says extended" "$(cat "$TMP/extend.json")" 'timed cell extended to 1.5 s'
kept=$(grep -o 'logs kept in /tmp/h2bench-run-[A-Za-z0-9]*' "$TMP/err" | awk '{print $4}')
[ -n "$kept" ] && rm -rf "$kept"

# Micro suites: their entries join the results; a suite that fails makes the run exit 3 with the
# results still written.
"$H2BENCH" run "$DATA/micro-only.json" --out "$TMP/micro.json" >"$TMP/out" 2>"$TMP/err"
expect_eq "micro-only exit" "$?" 0
"$CHECK" "$TMP/micro.json" >"$TMP/cells"
expect_eq "micro-only results validate" "$?" 0
expect_eq "micro-only: one entry" "$(cat "$TMP/cells")" "micro 1"
"$H2BENCH" run "$DATA/micro-none.json" --out "$TMP/micro-none.json" >"$TMP/out" 2>"$TMP/err"
expect_eq "micro-none exit" "$?" 3
expect_match "micro-none: says why" "$(cat "$TMP/err")" 'h2bench micro failed: .*no benchmark matches'
"$CHECK" "$TMP/micro-none.json" >"$TMP/cells"
expect_eq "micro-none results validate" "$?" 0
kept=$(grep -o 'logs kept in /tmp/h2bench-run-[A-Za-z0-9]*' "$TMP/err" | awk '{print $4}')
[ -n "$kept" ] && rm -rf "$kept"

# Ctrl-C (SIGINT to the run's process group, as a terminal sends it) during the first 30 s
# cell: that cell is recorded as interrupted, no other runs, the targets stop, results written.
setsid "$H2BENCH" run "$DATA/interrupt.json" --out "$TMP/int.json" --no-progress \
    >"$TMP/int.out" 2>"$TMP/int.err" &
runpid=$!
for _ in $(seq 200); do grep -q '^cell' "$TMP/int.out" 2>/dev/null && break; sleep 0.05; done
sleep 0.5
kill -INT -- -"$runpid"
wait "$runpid"
expect_eq "interrupted run exit" "$?" 3
"$CHECK" "$TMP/int.json" >"$TMP/cells"
expect_eq "interrupted results validate" "$?" 0
expect_match "interrupted cell recorded" "$(cat "$TMP/cells")" \
    '^h2ref 1 1 1 failed .*interrupted \(SIGINT\)'
expect_eq "no cell after the interrupt" "$(grep -c '^h2ref ' "$TMP/cells")" 1
expect_match "interrupted: says so" "$(cat "$TMP/int.err")" 'interrupted after 1 of 2 cells'
expect_eq "interrupted: no server left" "$(pgrep -f "$BIN/h2bench serve" -s "$runpid" | wc -l)" 0
kept=$(grep -o 'logs kept in /tmp/h2bench-run-[A-Za-z0-9]*' "$TMP/int.err" | awk '{print $4}')
[ -n "$kept" ] && rm -rf "$kept"

# A URL target: already running (here h2bench serve started by this script), only probed; its
# CPU and RSS are null with a note. The dry run probes it too.
"$H2BENCH" serve --port 0 --threads 1 --max-streams 6 >"$TMP/serve.out" 2>&1 &
PIDS+=($!)
for _ in $(seq 100); do grep -q '^listening on' "$TMP/serve.out" 2>/dev/null && break; sleep 0.05; done
url=$(sed -n 's/^listening on //p' "$TMP/serve.out")
cat >"$TMP/url.json" <<JSON
{"name": "url", "targets": [{"type": "url", "url": "$url"}],
 "client": {"type": "h2load"},
 "matrix": {"connections": [2], "streams": [10], "requests": 200, "min_requests": 200}}
JSON
plan=$("$H2BENCH" run "$TMP/url.json" --dry-run)
expect_match "url dry run probes the server" "$plan" 'max streams 6 \(probed\)'
"$H2BENCH" run "$TMP/url.json" --out "$TMP/url-results.json" >"$TMP/out" 2>"$TMP/err"
expect_eq "url run exit" "$?" 0
"$CHECK" "$TMP/url-results.json" >"$TMP/cells"
expect_match "url: probed 6 streams" "$(cat "$TMP/cells")" '^url 2 10 6 ok counted -$'
expect_match "url: server CPU null with a note" "$(cat "$TMP/url-results.json")" \
    '"server_cpu_s": null'
expect_match "url: note" "$(cat "$TMP/url-results.json")" 'url target: not started by the runner'

# Every shipped peer template renders, starts and answers. nghttpd and nginx advertise the
# configured SETTINGS_MAX_CONCURRENT_STREAMS; h2o 2.2.5 always advertises 100 (its directive
# limits concurrent processing), and the probe reports what is advertised, not what was asked.
"$H2BENCH" run "$DATA/peers-all.json" --out "$TMP/all.json" --no-progress >"$TMP/out" 2>"$TMP/err"
expect_eq "all peers run exit" "$?" 0
"$CHECK" "$TMP/all.json" >"$TMP/cells"
expect_eq "all peers results validate" "$?" 0
cells=$(cat "$TMP/cells")
expect_match "nghttpd answered, max 8" "$cells" '^nghttpd 2 16 8 ok counted -$'
expect_match "nginx answered, max 8" "$cells" '^nginx 2 16 8 ok counted -$'
expect_match "h2o answered, advertises 100" "$cells" '^h2o 2 16 16 ok counted -$'
expect_eq "all peers: no failed requests" "$(grep -c 'failed_requests 0' "$TMP/cells")" 3

"$H2BENCH" run "$DATA/dying.json" --peers-dir "$DATA/peers-dying" --out "$TMP/dying.json" \
    --no-progress >"$TMP/out" 2>"$TMP/err"
expect_eq "dying run exit" "$?" 3
"$CHECK" "$TMP/dying.json" >"$TMP/cells"
expect_eq "dying results validate" "$?" 0
expect_eq "dying: every cell recorded" "$(grep -c '^dying ' "$TMP/cells")" 4
expect_match "dying: first cell measured" "$(head -1 "$TMP/cells")" '^dying 1 1 1 ok '
expect_eq "dying: later cells failed" "$(grep -c '^dying .* failed ' "$TMP/cells")" 3
expect_match "dying: reason names the exit" "$(cat "$TMP/cells")" 'exited with status 7'
expect_match "dying: stderr says logs are kept" "$(cat "$TMP/err")" '3 of 4 cells failed'
kept=$(grep -o 'logs kept in /tmp/h2bench-run-[A-Za-z0-9]*' "$TMP/err" | awk '{print $4}')
[ -n "$kept" ] && rm -rf "$kept"

# --fail-fast stops at the first failed cell; the file is still written and valid.
"$H2BENCH" run "$DATA/dying.json" --peers-dir "$DATA/peers-dying" --out "$TMP/ff.json" \
    --fail-fast --no-progress >"$TMP/out" 2>"$TMP/err"
expect_eq "fail-fast exit" "$?" 3
"$CHECK" "$TMP/ff.json" >"$TMP/cells"
expect_eq "fail-fast results validate" "$?" 0
expect_eq "fail-fast: stops after the first failure" "$(grep -c '^dying ' "$TMP/cells")" 2
# The failed runs kept their run directories for inspection; remove exactly those.
for f in "$TMP"/err; do
    dir=$(grep -o 'logs kept in /tmp/h2bench-run-[A-Za-z0-9]*' "$f" | awk '{print $4}')
    [ -n "$dir" ] && rm -rf "$dir"
done
finish
