#!/usr/bin/env bash
# faults.sh - process-level faults end cleanly: a clear message, the right exit code, bounded
# time, and no output file half-written or an earlier one overwritten.
#   - h2bench load against servers that never answer SETTINGS, stop reading, or reset every
#     stream (fakepeer.py); the killed-server case is in load.sh;
#   - h2bench run when a peer cannot start (exits at once; no such executable);
#   - h2bench gate and h2bench report on a truncated results file.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/load_lib.sh"
CHECK=$BIN/../tests/results_check

# load MODE EXPECTED_RC: runs 20 requests with a 2 s request timeout under a 60 s watchdog.
load() {
    start_fake "$1"
    local t0=$SECONDS
    timeout 60 "$H2BENCH" load -n 20 -c 2 -m 2 --timeout 2s --fail-on-error \
        --json "$TMP/$1.json" "$FAKE_URL/hello" >"$TMP/$1.out" 2>"$TMP/$1.err"
    local rc=$?
    expect_eq "load vs $1: exit" "$rc" "$2"
    if [ $((SECONDS - t0)) -le 20 ]; then ok; else fail "load vs $1 took $((SECONDS - t0)) s"; fi
    expect_eq "load vs $1: JSON written, all 20 failed" "$(jq '.failed' "$TMP/$1.json")" 20
    expect_eq "load vs $1: none succeeded" "$(jq '.succeeded' "$TMP/$1.json")" 0
}

load silent 3
expect_match "silent: message" "$(cat "$TMP/silent.err")" 'no connection to 127.0.0.1:[0-9]+ could be made'
expect_match "silent: no SETTINGS" "$(cat "$TMP/silent.out")" 'SETTINGS_MAX_CONCURRENT_STREAMS none: no SETTINGS received'
load noread 1
expect_match "noread: message" "$(cat "$TMP/noread.err")" '20 of 20 requests failed'
if [ "$(jq '.timeouts' "$TMP/noread.json")" -ge 1 ]; then ok; else fail "noread: no timeout counted"; fi
load reset 1
expect_eq "reset: every stream counted as reset" "$(jq '.resets' "$TMP/reset.json")" 20
expect_match "reset: text output" "$(cat "$TMP/reset.out")" 'errors: 20 reset'
# fakepeer's SETTINGS carry no MAX_CONCURRENT_STREAMS: unlimited, not "0".
expect_match "reset: unlimited streams" "$(cat "$TMP/reset.out")" \
    'effective 2 \(server SETTINGS_MAX_CONCURRENT_STREAMS not advertised, unlimited\)'

# h2bench run: peers that cannot start. Each cell fails with the reason, exit 3, results valid.
mkdir -p "$TMP/peers"
cat >"$TMP/peers/peers.json" <<'JSON'
{
  "exits": {"description": "exits at once", "command": ["false"], "max_streams": 100},
  "missing": {"description": "no such program", "command": ["/no/such/server", "{port}"],
              "max_streams": 100}
}
JSON
cat >"$TMP/nostart.json" <<'JSON'
{
  "name": "nostart",
  "targets": [{"name": "exits", "type": "peer", "peer": "exits", "ready_timeout_s": 3},
              {"name": "missing", "type": "peer", "peer": "missing", "ready_timeout_s": 3}],
  "client": {"type": "h2load"},
  "matrix": {"connections": [1], "streams": [1], "duration_s": 0.5, "min_requests": 10}
}
JSON
t0=$SECONDS
timeout 120 "$H2BENCH" run "$TMP/nostart.json" --peers-dir "$TMP/peers" --out "$TMP/nostart-results.json" \
    --no-progress >"$TMP/run.out" 2>"$TMP/run.err"
expect_eq "run with peers that cannot start: exit" "$?" 3
if [ $((SECONDS - t0)) -le 30 ]; then ok; else fail "run took $((SECONDS - t0)) s"; fi
"$CHECK" "$TMP/nostart-results.json" >"$TMP/cells"
expect_eq "run: results file validates" "$?" 0
expect_eq "run: both cells failed" "$(grep -c ' failed ' "$TMP/cells")" 2
expect_match "run: reason for the peer that exits" "$(grep '^exits ' "$TMP/cells")" 'exit'
expect_match "run: reason for the missing program" "$(grep '^missing ' "$TMP/cells")" '/no/such/server'

# gate and report on a truncated results file: exit 2 naming file:line:column; the outputs a
# previous run left are untouched.
good=$SRC/tests/data/gate/results-pass.json
head -c $(($(wc -c <"$good") / 2)) "$good" >"$TMP/truncated.json"
echo previous >"$TMP/verdict.md"
echo previous >"$TMP/junit.xml"
"$H2BENCH" gate --ceilings "$SRC/tests/data/gate/ceilings.json" --results "$TMP/truncated.json" \
    --md "$TMP/verdict.md" --junit "$TMP/junit.xml" >"$TMP/gate.out" 2>"$TMP/gate.err"
expect_eq "gate on truncated results: exit" "$?" 2
expect_match "gate: file:line:column" "$(cat "$TMP/gate.err")" "truncated.json:[0-9]+:[0-9]+:"
expect_eq "gate: earlier --md untouched" "$(cat "$TMP/verdict.md")" previous
expect_eq "gate: earlier --junit untouched" "$(cat "$TMP/junit.xml")" previous

mkdir -p "$TMP/report"
echo previous >"$TMP/report/REPORT.md"
"$H2BENCH" report "$TMP/truncated.json" -o "$TMP/report" >"$TMP/report.out" 2>"$TMP/report.err"
expect_eq "report on truncated results: exit" "$?" 2
expect_match "report: file:line:column" "$(cat "$TMP/report.err")" "truncated.json:[0-9]+:[0-9]+:"
expect_eq "report: earlier REPORT.md untouched" "$(cat "$TMP/report/REPORT.md")" previous
expect_eq "report: nothing else written" "$(ls "$TMP/report")" REPORT.md
finish
