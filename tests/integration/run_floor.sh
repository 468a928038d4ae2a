#!/usr/bin/env bash
# run_floor.sh - the scenario target type "floor": h2bench run starts h2bench floor-serve, drives
# it with load --raw at each c x 1 cell beside a bundled target (c x m with m > 1 is skipped with
# its reason), marks its cells "target_type": "floor", the report shows the skipped cells as
# skipped (not failed) with their reason once, and the report's "Against the kernel's floor"
# table gives the bundled server's req/s and server CPU per request as fractions of the floor's
# (positive numbers; no rate is asserted). Bad floor fields exit 2 with file:line:column.
. "$(dirname "$0")/lib.sh"
command -v jq >/dev/null || skip "jq is not installed"
[ "$(nproc)" -ge 2 ] || skip "needs two CPUs (server on 0, client on 1)"

cat >"$TMP/floor.json" <<'JSON'
{
  "name": "floor-test",
  "targets": [
    {"name": "h2ref", "type": "bundled", "cpus": "0", "threads": 1},
    {"type": "floor", "cpus": "0"}
  ],
  "client": {"type": "h2bench", "cpus": "1", "threads": 1},
  "matrix": {"connections": [1, 10], "streams": [1, 4], "path": "/hello", "duration_s": 0.5,
             "warmup_s": 0.1, "min_requests": 50, "order": "alternate"}
}
JSON
"$H2BENCH" run "$TMP/floor.json" --out "$TMP/r.json" >"$TMP/run.out" 2>&1
expect_eq "run exits 0" "$?" 0
R=$TMP/r.json
expect_eq "floor cells at c x 1 ran" \
    "$(jq -c '[.matrix[] | select(.target == "floor" and .streams_requested == 1) | .status] | sort' "$R")" \
    '["ok","ok"]'
expect_eq "floor cells at c x 4 skipped with the reason" \
    "$(jq -r '[.matrix[] | select(.target == "floor" and .streams_requested == 4) | .status + ": " + .reason] | unique | .[]' "$R")" \
    "skipped: the floor is defined at c x 1 only (one raw request in flight per connection)"
expect_eq "floor cells say target_type floor" \
    "$(jq '[.matrix[] | select(.target == "floor") | .target_type] | unique' -c "$R")" '["floor"]'
expect_eq "h2ref cells carry no target_type" \
    "$(jq '[.matrix[] | select(.target == "h2ref") | has("target_type")] | unique' -c "$R")" '[false]'
expect_eq "floor cells answered every request" \
    "$(jq '[.matrix[] | select(.target == "floor" and .status == "ok") | .requests == .succeeded and .requests >= 50] | unique' -c "$R")" '[true]'
expect_eq "the servers' I/O backend: epoll, no fallback" \
    "$(jq -c '[.matrix[] | select(.status == "ok") | [.server_io, has("server_io_fallback")]] | unique' "$R")" \
    '[["epoll",false]]'
expect_eq "floor server CPU measured" \
    "$(jq '[.matrix[] | select(.target == "floor" and .status == "ok") | .server_cpu_s > 0] | unique' -c "$R")" '[true]'

"$H2BENCH" report "$R" --out "$TMP/rep" >"$TMP/report.out" 2>&1
expect_eq "report exits 0" "$?" 0
MD=$TMP/rep/REPORT.md
expect_match "report has the floor section" "$(cat "$MD")" "^### Against the kernel's floor$"
expect_match "floor table header" "$(cat "$MD")" '\| Target \| Cell \| req/s ÷ floor \| server CPU/request ÷ floor \|'
for c in 1 10; do
    row=$(grep -E "^\| h2ref \| ${c}×1 \| " "$MD")
    expect_match "h2ref ${c}x1 row: positive fractions" "$row" \
        "^\| h2ref \| ${c}×1 \| [0-9]+\.[0-9]{2}× \| [0-9]+\.[0-9]{2}× \|$"
    pos=$(printf '%s' "$row" | awk -F'|' '{gsub(/[ ×]/, "", $4); gsub(/[ ×]/, "", $5); print ($4 > 0 && $5 > 0) ? "yes" : "no"}')
    expect_eq "h2ref ${c}x1 fractions > 0" "$pos" yes
done
expect_eq "no floor row at c x 4" "$(grep -cE '^\| h2ref \| [0-9]+×4 \|' "$MD")" 0
# the skipped floor cells: "skipped" in the throughput table (not "failed"), left out of the
# streams column, counted once under their reason, and not among the failures
for c in 1 10; do
    expect_match "throughput ${c}x4: floor skipped" "$(grep -E "^\| $c \| 4/" "$MD" | head -1)" \
        "^\| $c \| 4/[0-9]+ \| [0-9,]+ \| skipped \| n/a \|$"
done
expect_match "skipped cells counted under their reason" "$(cat "$MD")" \
    '^- 2 of [0-9]+ cells: the floor is defined at c x 1 only'
expect_eq "skipped cells are not failures" "$(grep -c 'Failures and errors' "$MD")" 0
expect_eq "no row for the floor against itself" "$(grep -cE '^\| floor \| [0-9]+×1 \|' "$MD")" 0

# The I/O backend each target's ready line named: on the ring, and after a forced fallback
# (H2B_URING_FAIL=1) epoll with the reason, for the bundled server and the floor alike.
cat >"$TMP/io.json" <<'JSON'
{
  "name": "floor-io",
  "targets": [
    {"name": "h2ref-uring", "type": "bundled", "cpus": "0", "args": ["--io", "uring"]},
    {"name": "floor-uring", "type": "floor", "cpus": "0", "io": "uring"}
  ],
  "client": {"type": "h2bench", "cpus": "1", "threads": 1},
  "matrix": {"connections": [2], "streams": [1], "path": "/hello", "requests": 100,
             "min_requests": 100}
}
JSON
H2B_URING_FAIL=1 "$H2BENCH" run "$TMP/io.json" --out "$TMP/fb.json" >"$TMP/fb.out" 2>&1
expect_eq "forced fallback: run exits 0" "$?" 0
expect_eq "forced fallback: server_io epoll with the reason" \
    "$(jq -c '[.matrix[] | [.target, .status, .server_io, .server_io_fallback]]' "$TMP/fb.json")" \
    '[["h2ref-uring","ok","epoll","io_uring_queue_init: disabled by H2B_URING_FAIL=1"],["floor-uring","ok","epoll","io_uring_queue_init: disabled by H2B_URING_FAIL=1"]]'
"$H2BENCH" report "$TMP/fb.json" --out "$TMP/fb-rep" >/dev/null 2>&1
expect_eq "forced fallback: the report's Server I/O line" \
    "$(grep -F -- '- **Server I/O:**' "$TMP/fb-rep/REPORT.md")" \
    '- **Server I/O:** h2ref-uring epoll (io_uring unavailable: io_uring_queue_init: disabled by H2B_URING_FAIL=1); floor-uring epoll (io_uring unavailable: io_uring_queue_init: disabled by H2B_URING_FAIL=1).'
"$H2BENCH" run "$TMP/io.json" --out "$TMP/ring.json" >"$TMP/ring.out" 2>&1
expect_eq "io_uring: run exits 0" "$?" 0
if grep -q 'io_uring_queue_init: \(Operation not permitted\|Function not implemented\)\|no liburing' \
    "$TMP/ring.json"; then
    echo "this machine or build refuses io_uring: the ring's server_io is not checked"
else
    expect_eq "io_uring: server_io uring, no fallback" \
        "$(jq -c '[.matrix[] | [.target, .status, .server_io, has("server_io_fallback")]]' "$TMP/ring.json")" \
        '[["h2ref-uring","ok","uring",false],["floor-uring","ok","uring",false]]'
fi

# bad fields: exit 2, file:line:column and what was expected
bad() { # LABEL TARGET-JSON EXPECTED-MESSAGE
    printf '{"name": "bad", "targets": [\n  %s\n], "matrix": {"connections": [1], "streams": [1], "path": "/hello", "requests": 10}}\n' \
        "$2" >"$TMP/bad.json"
    out=$("$H2BENCH" run "$TMP/bad.json" --out "$TMP/bad-out.json" 2>&1)
    expect_eq "$1: exit 2" "$?" 2
    expect_match "$1: message" "$out" "$TMP/bad.json:2:[0-9]+: $3"
}
bad "floor threads" '{"type": "floor", "threads": 2}' 'targets\[0\]\.threads: a target of type "floor" takes no "threads"'
bad "floor max_streams" '{"type": "floor", "max_streams": 2}' 'targets\[0\]\.max_streams: a target of type "floor" takes no'
bad "floor request_bytes 0" '{"type": "floor", "request_bytes": 0}' 'targets\[0\]\.request_bytes: expected'
bad "floor response_bytes too large" '{"type": "floor", "response_bytes": 2000000}' 'targets\[0\]\.response_bytes: expected'
bad "floor request_bytes string" '{"type": "floor", "request_bytes": "20"}' 'targets\[0\]\.request_bytes: expected'
bad "response_bytes on a bundled target" '{"type": "bundled", "response_bytes": 40}' \
    'targets\[0\]\.response_bytes: only a target of type "floor" takes "response_bytes"'
bad "floor io" '{"type": "floor", "io": "poll"}' 'targets\[0\]\.io: expected "epoll" or "uring"'
bad "floor io not a string" '{"type": "floor", "io": 1}' 'targets\[0\]\.io: expected'
bad "io on a bundled target" '{"type": "bundled", "io": "uring"}' \
    'targets\[0\]\.io: only a target of type "floor" takes "io"'
bad "unknown type" '{"type": "flor"}' 'targets\[0\]\.type: expected "bundled", "peer", "url", "command" or "floor"'
finish
