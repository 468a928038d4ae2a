#!/usr/bin/env bash
# conformance.sh BIN SRC TARGET - the offline conformance suite (conformance.py, the 147 h2spec
# server cases) against one server on an ephemeral loopback port.
#
#   h2ref-h2c, h2ref-tls  the gate: `h2bench serve`, every case must pass (or fail as listed in
#                         known-failures.txt: reported server bugs, XPASS when fixed)
#   nghttpd, h2o          a report, not a gate: prints the table; fails only if the suite could
#                         not run to the end (server not started, client crash, bad JSON)
#
# Each run leaves BIN/../conformance/TARGET.json; table.py turns those into one table.
. "$(dirname "$0")/../integration/lib.sh"
. "$(dirname "$0")/../integration/serve_lib.sh"
. "$(dirname "$0")/../integration/load_lib.sh"
TARGET=${3:?target: h2ref-h2c, h2ref-tls, nghttpd or h2o}
HERE=$SRC/tests/conformance
PY=/usr/bin/python3 # Debian's, which sees python3-hyperframe and python3-hpack
OUT=$BIN/../conformance
mkdir -p "$OUT"
JSON=$OUT/$TARGET.json
rm -f "$JSON"

mkdir -p "$TMP/www"
printf 'conformance suite docroot index\n' >"$TMP/www/index.html"

# run_suite PORT [conformance.py options]: runs the suite, prints its output, sets RC.
run_suite() {
    local port=$1
    shift
    $PY "$HERE/conformance.py" --port "$port" --name "$TARGET" --json "$JSON" "$@" \
        >"$TMP/suite.out" 2>&1
    RC=$?
    cat "$TMP/suite.out"
}

# json_field EXPR: a value out of the results file.
json_field() { $PY -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$JSON" "$1" 2>/dev/null; }

case $TARGET in
h2ref-h2c | h2ref-tls)
    tls=()
    [ "$TARGET" = h2ref-tls ] && tls=(--tls)
    start_serve serve --threads 1 "${tls[@]}" || { finish; exit; }
    run_suite "$(url_port "$SERVE_URL")" "${tls[@]}" --known-failures "$HERE/known-failures.txt"
    expect_eq "suite exit code (0: every case passed or failed as known)" "$RC" 0
    expect_eq "cases run" "$(json_field 'd["summary"]["total"]')" 147
    expect_eq "no case failed" "$(json_field 'd["summary"]["failed"]')" 0
    expect_eq "no case skipped" "$(json_field 'd["summary"]["skipped"]')" 0
    # Every case not listed as a known failure passed, and every case has a verdict.
    expect_eq "passed + known failures = 147" \
        "$(json_field 'd["summary"]["passed"] + d["summary"]["known_failures"] + d["summary"]["known_failures_passed"]')" 147
    expect_match "the server answered with TLS" "$(json_field 'd["tls"]')" "^$([ -n "${tls[*]}" ] && echo True || echo False)$"
    stop_serve "$SERVE_PID"
    expect_eq "server exit after the suite" "$?" 0
    ;;
nghttpd)
    PORT=$(free_port)
    nghttpd --no-tls -n 1 -a 127.0.0.1 -d "$TMP/www" "$PORT" >"$TMP/nghttpd.log" 2>&1 &
    PIDS+=($!)
    wait_port "$PORT" || { fail "nghttpd did not start on $PORT: $(cat "$TMP/nghttpd.log")"; finish; exit; }
    run_suite "$PORT"
    ;;
h2o)
    PORT=$(free_port)
    mkdir -p "$TMP/h2o"
    sed -e "s|{host}|127.0.0.1|; s|{port}|$PORT|; s|{threads}|1|; s|{max_streams}|100|" \
        -e "s|{dir}|$TMP/h2o|; s|{docroot}|$TMP/www|" "$SRC/servers/peers/h2o.conf.in" >"$TMP/h2o/h2o.conf"
    h2o -c "$TMP/h2o/h2o.conf" >"$TMP/h2o/out.log" 2>&1 &
    PIDS+=($!)
    wait_port "$PORT" || { fail "h2o did not start on $PORT: $(cat "$TMP/h2o/out.log")"; finish; exit; }
    run_suite "$PORT"
    ;;
*)
    echo "conformance.sh: unknown target '$TARGET'" >&2
    exit 2
    ;;
esac

case $TARGET in
nghttpd | h2o)
    # A report: the verdicts are the peer's, but the suite itself must have run to the end.
    expect_match "suite ran to the end (exit 0 or 1, got $RC)" "$RC" '^[01]$'
    expect_eq "cases run" "$(json_field 'd["summary"]["total"]')" 147
    expect_eq "every case has a verdict" \
        "$(json_field 'sum(1 for c in d["cases"] if c["result"] in ("pass", "fail", "skip"))')" 147
    expect_match "most cases pass (a peer that fails most means the suite is broken)" \
        "$(json_field 'd["summary"]["passed"]')" '^1[2-4][0-9]$'
    ;;
esac
finish
