#!/usr/bin/env bash
# load_ended_early.sh - a -D run whose server dies says so: `h2bench load -D 3` against an
# `h2bench serve` killed once the load is under way ends before its deadline; the run warns on
# stderr ("run ended after X s of the 3.00 s asked for: every connection closed or failed"),
# exits 3 (a failed measurement, as an interrupted run) and its --json carries
# "ended_early": true and the reason. A -D run the server outlives does none of this. HTTP/2
# and HTTP/1.1 (--h1: its own engine) alike; `merge` keeps the flag.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/serve_lib.sh"

# killed_run LABEL [load options...]: -D 3 with --progress; the server is killed (SIGKILL, no
# GOAWAY) after the first progress line, so every connection was up before it died.
killed_run() {
    local label=$1
    shift
    start_serve "$label" --threads 1 || return 1
    "$H2BENCH" load "$@" -D 3 -c 2 --progress --json "$TMP/$label.json" "$SERVE_URL/hello" \
        >"$TMP/$label.load.out" 2>"$TMP/$label.load.err" &
    local load=$!
    for _ in $(seq 200); do
        grep -q . "$TMP/$label.load.err" 2>/dev/null && break
        kill -0 "$load" 2>/dev/null || break
        sleep 0.05
    done
    kill -KILL "$SERVE_PID"
    wait "$SERVE_PID" 2>/dev/null
    wait "$load"
    local rc=$?
    local err
    err=$(cat "$TMP/$label.load.err")
    expect_eq "$label: exit code" "$rc" 3
    expect_match "$label: warning" "$err" \
        '^h2bench load: warning: run ended after [0-9.]+ s of the 3\.00 s asked for: every connection closed or failed \([0-9]+ connected'
    expect_eq "$label: json ended_early" "$(jq -r .ended_early "$TMP/$label.json")" true
    expect_match "$label: json reason" "$(jq -r .ended_early_reason "$TMP/$label.json")" \
        '^every connection closed or failed'
    # the measured span is the shortened one, not the 3 s asked for
    expect_eq "$label: duration_s below 3" "$(jq '.duration_s < 3' "$TMP/$label.json")" true
}

# whole_run LABEL [load options...]: -D 1 against a server that lives: no warning, exit 0.
whole_run() {
    local label=$1
    shift
    start_serve "$label" --threads 1 || return 1
    "$H2BENCH" load "$@" -D 1 -c 2 --json "$TMP/$label.json" "$SERVE_URL/hello" \
        >"$TMP/$label.load.out" 2>"$TMP/$label.load.err"
    expect_eq "$label: exit code" "$?" 0
    expect_eq "$label: no warning" "$(grep -c 'warning' "$TMP/$label.load.err")" 0
    expect_eq "$label: json ended_early" "$(jq -r .ended_early "$TMP/$label.json")" false
    expect_eq "$label: json reason" "$(jq -r .ended_early_reason "$TMP/$label.json")" null
    stop_serve "$SERVE_PID" >/dev/null
}

killed_run h2-killed
whole_run h2-whole
# a merged result ended early when one of its parts did, with that part's reason
"$H2BENCH" merge "$TMP/h2-whole.json" "$TMP/h2-killed.json" --json "$TMP/merged.json" >/dev/null 2>&1
expect_eq "merge: exit code" "$?" 0
expect_eq "merge: ended_early" "$(jq -r .ended_early "$TMP/merged.json")" true
expect_eq "merge: reason" "$(jq -r .ended_early_reason "$TMP/merged.json")" \
    "$(jq -r .ended_early_reason "$TMP/h2-killed.json")"
killed_run h1-killed --h1
whole_run h1-whole --h1
finish
