#!/usr/bin/env bash
# run_url.sh - a url target written with an IPv6 literal, http://[::1]:PORT, against
# `h2bench serve` bound to ::1: the dry run probes its SETTINGS, the run's readiness probe, load
# client (h2bench load, then h2load) and results all take the bracketed address; `h2bench load`
# takes it directly and in --connect-to. All of it goes through the one URL parser
# (harness/core/url.c); the probe used to cut "http://[::1]:PORT" at the first ':'.
. "$(dirname "$0")/lib.sh"
CHECK=$BIN/../tests/results_check

"$H2BENCH" serve --host ::1 --port 0 --threads 1 --max-streams 6 >"$TMP/serve.out" 2>&1 &
PIDS+=($!)
for _ in $(seq 100); do grep -q '^listening on' "$TMP/serve.out" 2>/dev/null && break; sleep 0.05; done
url=$(sed -n 's/^listening on //p' "$TMP/serve.out")
expect_match "serve on ::1 prints a bracketed URL" "$url" '^http://\[::1\]:[0-9]+$'
port=${url##*:}

for client in h2bench h2load; do
    cat >"$TMP/$client.json" <<JSON
{"name": "v6-$client", "targets": [{"type": "url", "url": "$url"}],
 "client": {"type": "$client"},
 "matrix": {"connections": [2], "streams": [10], "requests": 200, "min_requests": 200}}
JSON
    plan=$("$H2BENCH" run "$TMP/$client.json" --dry-run 2>"$TMP/err")
    expect_eq "$client: dry run exit" "$?" 0
    expect_match "$client: dry run probes [::1]" "$plan" 'max streams 6 \(probed\)'
    "$H2BENCH" run "$TMP/$client.json" --out "$TMP/$client-results.json" --no-progress \
        >"$TMP/out" 2>"$TMP/err"
    expect_eq "$client: run exit" "$?" 0
    "$CHECK" "$TMP/$client-results.json" >"$TMP/cells"
    expect_eq "$client: results validate" "$?" 0
    expect_match "$client: probed 6 streams, cell ok" "$(cat "$TMP/cells")" \
        '^url 2 10 6 ok counted -$'
    expect_match "$client: no failed request" "$(cat "$TMP/cells")" 'failed_requests 0'
done

# h2bench load on its own: the URI, and --connect-to with the bracketed form.
"$H2BENCH" load -n 4 -c 1 --json "$TMP/l.json" "$url/" >"$TMP/out" 2>&1
expect_eq "load [::1] exit" "$?" 0
expect_match "load [::1]: 4 succeeded" "$(cat "$TMP/l.json")" '"succeeded": 4,'
"$H2BENCH" load -n 4 -c 1 --connect-to "[::1]:$port" --json "$TMP/ct.json" \
    "http://example.invalid/" >"$TMP/out" 2>&1
expect_eq "load --connect-to [::1]:PORT exit" "$?" 0
expect_match "load --connect-to: 4 succeeded" "$(cat "$TMP/ct.json")" '"succeeded": 4,'

# Bad URLs are usage errors with the column and what was expected, nothing run.
"$H2BENCH" load -n 1 "http://[::1:$port/" >"$TMP/out" 2>"$TMP/err"
expect_eq "load unclosed bracket exit" "$?" 2
expect_match "load unclosed bracket message" "$(cat "$TMP/err")" "expected '\]' closing the IPv6 address \(byte [0-9]+ of the URL\)"
"$H2BENCH" load -n 1 "http://user@[::1]:$port/" >"$TMP/out" 2>"$TMP/err"
expect_eq "load userinfo exit" "$?" 2
expect_match "load userinfo message" "$(cat "$TMP/err")" 'user information .* not supported.*\(byte 12 of the URL\)'
"$H2BENCH" load -n 1 --connect-to "::1:$port" http://h/ >"$TMP/out" 2>"$TMP/err"
expect_eq "load --connect-to unbracketed exit" "$?" 2
expect_match "load --connect-to unbracketed message" "$(cat "$TMP/err")" 'expected a host before'
finish
