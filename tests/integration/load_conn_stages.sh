#!/usr/bin/env bash
# load_conn_stages.sh - `h2bench load --conn-stages/--conn-step` against `h2bench serve`: the
# connections open at each interval's end follow the shape (within the rounding and half an
# interval either side of the boundary), on the fast and nghttp2 HTTP/2 engines and on HTTP/1.1;
# no error; every request ended is counted once (the intervals add up to the run, the server saw
# as many); the server sees the connections: the peak when the shape only rises and falls, and
# the reopened ones when it rises again; bad input exits 2 naming the flag, field and column.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/serve_lib.sh"
command -v curl >/dev/null || { skip "curl missing"; exit; }
start_serve conns --threads 1 || { finish; exit 1; }
URL=$SERVE_URL

# stats: the server's /stats JSON (its own connection counts in conns_total; its request counts
# in requests only at the next /stats)
stats() { curl -s --http2-prior-knowledge "$URL/stats"; }

# on_shape SHAPE NDJSON: every interval's connections (open at its end) is the shape's value,
# rounded, somewhere within half an interval of that end (the count is taken when a worker
# notices the boundary; a connection above the shape is open until its requests have ended)
on_shape() {
    python3 - "$1" "$2" <<'EOF'
import json, sys
stages = [(float(d.rstrip('s')), float(n)) for d, n in (x.split(':') for x in sys.argv[1].split(','))]
pts, t, v = [(0.0, 0.0)], 0.0, 0.0
for d, n in stages:
    t += d
    pts.append((t, n))
def at(x):
    x = min(max(x, 0.0), pts[-1][0])
    for (t0, v0), (t1, v1) in zip(pts, pts[1:]):
        if t0 <= x <= t1:
            return v0 + (v1 - v0) * (x - t0) / (t1 - t0)
    return pts[-1][1]
rows = [json.loads(l) for l in open(sys.argv[2])]
bad = 0
for r in rows:
    half = (r['end_s'] - r['start_s']) / 2
    xs = [r['end_s'] - half + half * k / 50 for k in range(101)]
    vals = [int(at(x) + 0.5) for x in xs]
    ok = min(vals) <= r['connections'] <= max(vals)
    bad += not ok
    print(f"{r['start_s']:4.1f}-{r['end_s']:4.1f}s connections {r['connections']:3d} "
          f"shape {min(vals)}..{max(vals)} {'ok' if ok else 'OFF'}")
sys.exit(1 if bad or not rows else 0)
EOF
}

# ramp NAME ARGS...: a 0 -> 8 -> 8 -> 2 ramp of 2 s stages with ARGS (an engine, a protocol)
ramp() {
    local name=$1
    shift
    local before after
    before=$(stats)
    "$H2BENCH" load --conn-stages 2s:8,2s:8,2s:2 -m 4 -t 2 --no-progress "$@" \
        --interval-json "$TMP/$name.ndjson" --json "$TMP/$name.json" "$URL/delay/5" >"$TMP/$name.out"
    expect_eq "$name: exit" "$?" 0
    expect_eq "$name: 6 intervals of 1 s" "$(wc -l <"$TMP/$name.ndjson")" 6
    on_shape 2s:8,2s:8,2s:2 "$TMP/$name.ndjson" >"$TMP/$name.table"
    local rc=$?
    cat "$TMP/$name.table"
    expect_eq "$name: the connections follow the shape (table above)" "$rc" 0
    expect_eq "$name: no error" "$(jq -s 'map(.errors) | add' "$TMP/$name.ndjson")" 0
    expect_eq "$name: none failed" "$(jq '.failed' "$TMP/$name.json")" 0
    # each request ended once: the intervals hold exactly the run's ended requests
    local ended
    ended=$(jq -s 'map(.ended) | add' "$TMP/$name.ndjson")
    expect_eq "$name: the intervals hold every request that ended" "$ended" \
        "$(jq '.started - .unfinished' "$TMP/$name.json")"
    expect_eq "$name: some requests" "$(jq '.done > 0' "$TMP/$name.json")" true
    # the server answered each of them, and at most those started (the unfinished may have
    # reached it); the /stats request after the run is one more
    after=$(stats)
    local reqs
    reqs=$(($(jq .requests <<<"$after") - $(jq .requests <<<"$before") - 1))
    echo "$name: the server got $reqs requests, $ended ended"
    expect_eq "$name: the server got the ended requests, at most the started ones" \
        "$(jq --argjson r "$reqs" --argjson e "$ended" '$r >= $e and $r <= .started' \
            "$TMP/$name.json")" true
    # 8 connections, never more: the shape only rises to its peak, then falls (/stats's own is the 1)
    expect_eq "$name: the server saw the peak's 8 connections" \
        "$(($(jq .conns_total <<<"$after") - $(jq .conns_total <<<"$before") - 1))" 8
    expect_eq "$name: 8 up" "$(jq '.connections_up' "$TMP/$name.json")" 8
    expect_eq "$name: -c is the peak" "$(jq '.connections' "$TMP/$name.json")" 8
    expect_match "$name: the text's connection ramp row" "$(cat "$TMP/$name.out")" \
        "^connection ramp: 2s:8,2s:8,2s:2; open at each 1s interval's end: [0-9]+ [0-9]+ 8 8 [0-9]+ [0-9]+$"
}
ramp fast --engine fast
ramp nghttp2 --engine nghttp2
ramp h1 --h1

# Down and up again: 4 -> 1 -> 4. The three connections wound down are reopened, so the server
# sees 4 + 3 connections; a connection above the shape finished its requests (no error).
before=$(stats | jq .conns_total)
"$H2BENCH" load --conn-stages 1s:4,1s:4,1s:1,1s:1,1s:4 -m 4 -t 2 --no-progress \
    --interval-json "$TMP/again.ndjson" --json "$TMP/again.json" "$URL/delay/5" >/dev/null
expect_eq "again: exit" "$?" 0
on_shape 1s:4,1s:4,1s:1,1s:1,1s:4 "$TMP/again.ndjson" >"$TMP/again.table"
rc=$?
cat "$TMP/again.table"
expect_eq "again: the connections follow the shape (table above)" "$rc" 0
expect_eq "again: no error" "$(jq '.failed' "$TMP/again.json")" 0
expect_eq "again: 7 connections up (3 reopened)" "$(jq '.connections_up' "$TMP/again.json")" 7
expect_eq "again: the server saw 7" "$(($(stats | jq .conns_total) - before - 1))" 7

# --conn-step: 1 connection, +1 every second, for 3 s: 1, 2, 3 (-c 5 allows more)
"$H2BENCH" load --conn-step 1+1/1s -D 3 -c 5 -m 2 --no-progress \
    --interval-json "$TMP/step.ndjson" --json "$TMP/step.json" "$URL/delay/5" >/dev/null
expect_eq "step: exit" "$?" 0
expect_eq "step: connections per interval" "$(jq -s -c 'map(.connections)' "$TMP/step.ndjson")" \
    "[1,2,3]"
expect_eq "step: 3 up" "$(jq '.connections_up' "$TMP/step.json")" 3

# bad input: exit 2, the flags named (a shape as --stages says it: flag, column, stage, field)
bad() { expect_load_refused "$@"; } # WHAT EXPECTED-REGEX ARGS...
bad "negative count" "^h2bench load: --conn-stages:1:9: stage 2: connections '-3'" \
    --conn-stages 2s:8,1s:-3
bad "zero duration" "^h2bench load: --conn-stages:1:6: stage 2: duration '0s'" \
    --conn-stages 2s:8,0s:3
bad "garbage" "^h2bench load: --conn-stages:1:1: stage 1: expected DUR:N" --conn-stages many
bad "step field" "^h2bench load: --conn-step:1:3: STEP 'x'" --conn-step 2+x/1s -D 2
bad "step without -D" "--conn-step needs -D" --conn-step 2+1/1s
bad "stages with -D" "--conn-stages sets the run's length: no -D" --conn-stages 1s:2 -D 2
bad "-c below the peak" "-c 4 is below the peak of --conn-stages '2s:8' \(8 connections\)" \
    --conn-stages 2s:8 -c 4
bad "with --total-rps" "--conn-stages .*not with an open-loop rate \(--total-rps" \
    --conn-stages 2s:8 --total-rps 100
bad "with --stages" "--conn-stages .*not with an open-loop rate" --conn-stages 2s:8 --stages 2s:8
bad "with --step" "--conn-step .*not with an open-loop rate" --conn-step 2+1/1s --step 1+1/1s -D 2
bad "with --rps" "--conn-stages .*not with an open-loop rate" --conn-stages 2s:8 --rps 10
bad "with --find-max" "--conn-stages .*--find-max" --conn-stages 2s:8 --find-max --slo 'p99<1s'
bad "with -n" "--conn-stages: not with -n" --conn-stages 2s:8 -n 100
bad "with -r" "--conn-stages: not with -n .* or -r" --conn-stages 2s:8 -r 2
bad "two shapes" "give one shape, once" --conn-stages 2s:8 --conn-step 1+1/1s -D 2
finish
