#!/usr/bin/env bash
# hostile_h2.sh - hostile HTTP/2 clients against h2bench serve (label hostile-server-h2), the
# cases of issue 29 (h2raw.py). CMakeLists.txt runs it once per HTTP/2 engine
# (H2B_TEST_ENGINE, read by serve_lib.sh). Each bound is stated in the scenario that checks it.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/serve_lib.sh"
RAW="python3 $(dirname "$0")/h2raw.py"

# run_raw LABEL SCENARIO...: the scenarios against $PORT with H2B_SERVER_PID=$SERVE_PID; each
# must print at least one "ok" and no FAIL.
run_raw() {
    local label=$1
    shift
    H2B_SERVER_PID=$SERVE_PID $RAW 127.0.0.1 "$PORT" "$@" >"$TMP/$label.raw" 2>&1
    local rc=$?
    cat "$TMP/$label.raw"
    expect_eq "$label" "$rc" 0
    expect_eq "$label: no FAIL" "$(grep -c '^FAIL' "$TMP/$label.raw")" 0
    expect_match "$label: checks ran" "$(grep -c '^ok' "$TMP/$label.raw")" '^[1-9][0-9]*$'
}

mkdir -p "$TMP/www"
printf 'file body\n' >"$TMP/www/f.txt"
start_serve docroot --threads 1 --docroot "$TMP/www" --max-open-files 48 || { finish; exit; }
PORT=$(url_port "$SERVE_URL")
run_raw docroot docroot_fds
stop_serve "$SERVE_PID"; rc=$?
expect_eq "docroot server exit" "$rc" 0

# Flood budgets and SETTINGS (item 4): default --flood-burst 1000, bounds in each scenario.
start_serve floods --threads 1 || { finish; exit; }
PORT=$(url_port "$SERVE_URL")
run_raw floods settings_entries settings_last_window priority_idle
# CPU per MB of abusive input (resource ceilings): SETTINGS, PING, PRIORITY, RST_STREAM, empty
# DATA and CONTINUATION floods of 4 MB each, at most 8 x the CPU per MB of a legitimate upload
# measured side by side, or ended with ENHANCE_YOUR_CALM (the bound and why: h2raw.py
# cpu_per_mb).
run_raw cpu cpu_per_mb
stop_serve "$SERVE_PID"; rc=$?
expect_eq "floods server exit" "$rc" 0

# Graceful drain (item 3): the client's GOAWAY, then SIGTERM (the scenario sends it); the server
# must still exit 0 once stream 1 is answered.
start_serve drain --threads 1 --drain-timeout 5s || { finish; exit; }
PORT=$(url_port "$SERVE_URL")
run_raw drain drain_peer_goaway drain_sigterm
wait "$SERVE_PID"; rc=$?
expect_eq "drain server exit" "$rc" 0
finish
