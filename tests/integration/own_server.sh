#!/usr/bin/env bash
# own_server.sh - the worked example of docs/scenarios.md "Benchmark your own server", taken
# from the document itself: nghttpd started as a command target beside the bundled server.
# Both are measured, mysrv's budgets are numbers, and h2ref makes no allocation per request.
. "$(dirname "$0")/lib.sh"
command -v nghttpd >/dev/null || { echo "nghttpd not installed (nghttp2-server)"; exit 1; }
sed -n '/<!-- example: own-server -->/,/<!-- end example -->/p' "$SRC/docs/scenarios.md" |
    sed '1,2d;$d' | sed '$d' >"$TMP/own.json"
expect_match "example extracted" "$(head -c 40 "$TMP/own.json")" '^\{'
"$H2BENCH" run "$TMP/own.json" --out "$TMP/own-r.json" --no-progress >"$TMP/out" 2>"$TMP/err"
expect_eq "example runs" "$?" 0
expect_match "example prints the budgets table" "$(cat "$TMP/out")" \
    'What a request costs each server'
summary=$(python3 - "$TMP/own-r.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
for c in doc["matrix"]:
    b = c["budgets"]
    print(c["target"], c["status"],
          *["%s=%s" % (k, "null" if b[k] is None else "num") for k in
            ("allocs_per_request", "writes_per_request", "instructions_per_request",
             "rss_per_connection_kib")], "allocs=%s" % b["allocs_per_request"])
PY
)
expect_match "mysrv measured" "$summary" \
    'mysrv ok allocs_per_request=num writes_per_request=num instructions_per_request=num rss_per_connection_kib=num'
if "$H2BENCH" --version | grep -q sanitizers; then
    # Sanitized h2bench serve cannot be preloaded or run under valgrind: null, with the reason.
    expect_match "h2ref: null under sanitizers" "$(cat "$TMP/own-r.json")" \
        'allocs_per_request: this h2bench is built with sanitizers'
else
    expect_match "h2ref: 0 allocations per warm request" "$summary" 'h2ref ok .* allocs=0.0$'
fi
finish
