#!/usr/bin/env bash
# conformance.sh BIN SRC TARGET - the offline conformance suite (conformance.py, the 147 h2spec
# server cases) against one server on an ephemeral loopback port.
#
#   h2ref-h2c, h2ref-tls  the gate: `h2bench serve`, every case must pass (or fail as listed in
#                         known-failures.txt: reported server bugs, XPASS when fixed)
#   nghttpd, h2o          a report, not a gate: prints the table; fails only if the suite could
#                         not run to the end (server not started, client crash, bad JSON)
#   selftest              the runner's own verdicts: a known failure that passes fails the run
#                         (unless racy), bad known-failures files and results are usage errors,
#                         a wrong error code fails where --lenient (h2spec) passes it
#
# Each run leaves BIN/../conformance/TARGET.json (TARGET-nghttp2.json with H2B_TEST_ENGINE=nghttp2);
# table.py turns those into one table.
. "$(dirname "$0")/../integration/lib.sh"
. "$(dirname "$0")/../integration/serve_lib.sh"
. "$(dirname "$0")/../integration/load_lib.sh"
TARGET=${3:?target: h2ref-h2c, h2ref-tls, nghttpd, h2o or selftest}
HERE=$SRC/tests/conformance
PY=/usr/bin/python3 # Debian's, which sees python3-hyperframe and python3-hpack
OUT=$BIN/../conformance
mkdir -p "$OUT"
# One file per target and engine: the two engines' runs of a target go in parallel under
# ctest -j, and one file for both let one run delete or rewrite what the other was reading.
JSON=$OUT/$TARGET${H2B_TEST_ENGINE:+-$H2B_TEST_ENGINE}.json
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

# start_h2o: h2o (servers/peers/h2o.conf.in, one thread) on a free port; sets PORT.
start_h2o() {
    PORT=$(free_port)
    mkdir -p "$TMP/h2o"
    sed -e "s|{host}|127.0.0.1|; s|{port}|$PORT|; s|{threads}|1|; s|{max_streams}|100|" \
        -e "s|{dir}|$TMP/h2o|; s|{docroot}|$TMP/www|" "$SRC/servers/peers/h2o.conf.in" >"$TMP/h2o/h2o.conf"
    h2o -c "$TMP/h2o/h2o.conf" >"$TMP/h2o/out.log" 2>&1 &
    PIDS+=($!)
    wait_port "$PORT" || { fail "h2o did not start on $PORT: $(cat "$TMP/h2o/out.log")"; return 1; }
}

# json_field EXPR: a value out of the results file.
json_field() { $PY -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$JSON" "$1" 2>/dev/null; }

case $TARGET in
h2ref-h2c | h2ref-tls)
    tls=()
    [ "$TARGET" = h2ref-tls ] && tls=(--tls)
    start_serve serve --threads 1 "${tls[@]}" || { finish; exit; }
    # A read that times out fails its case; a passing case never waits for one. So the wait is
    # long enough for a sanitizer build on a busy machine (2 s, h2spec's default, was not).
    run_suite "$(url_port "$SERVE_URL")" "${tls[@]}" --timeout 10 \
        --known-failures "$HERE/known-failures.txt"
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
selftest)
    start_serve serve --threads 1 || { finish; exit; }
    port=$(url_port "$SERVE_URL")
    printf 'generic/3.7/1 listed although h2ref passes it\n' >"$TMP/kf-xpass"
    run_suite "$port" --only generic/3.7/1 --known-failures "$TMP/kf-xpass"
    expect_eq "a listed case that passes fails the run" "$RC" 1
    expect_match "reported as XPASS" "$(cat "$TMP/suite.out")" 'generic/3.7/1 +XPASS'
    printf 'generic/3.7/1 racy listed, racy\n' >"$TMP/kf-racy"
    run_suite "$port" --only generic/3.7/1 --known-failures "$TMP/kf-racy"
    expect_eq "a racy listed case that passes does not" "$RC" 0
    printf '# comment\n\nhttp2/9.9/1 no such case\n' >"$TMP/kf-bad"
    run_suite "$port" --only generic/3.7/1 --known-failures "$TMP/kf-bad"
    expect_eq "unknown case id in the known-failures file: usage error" "$RC" 2
    expect_match "file:line:column named" "$(cat "$TMP/suite.out")" "kf-bad:3:1: expected a case id"
    printf 'generic/3.7/1\n' >"$TMP/kf-noreason"
    run_suite "$port" --only generic/3.7/1 --known-failures "$TMP/kf-noreason"
    expect_eq "an entry without a reason: usage error" "$RC" 2
    run_suite "$port" --only nothing/
    expect_eq "--only matching no case: usage error" "$RC" 2
    stop_serve "$SERVE_PID"
    run_suite "$port" --only generic/3.7/1
    expect_eq "server gone: runtime failure" "$RC" 3
    # h2o answers 5.1.1/2 with GOAWAY(STREAM_CLOSED) where RFC 9113 requires PROTOCOL_ERROR: the
    # suite fails it, h2spec's verdict (--lenient) passes it once the connection closes.
    start_h2o || { finish; exit; }
    run_suite "$PORT" --only http2/5.1.1/2
    expect_eq "wrong GOAWAY code fails" "$RC" 1
    expect_match "the code is named" "$(cat "$TMP/suite.out")" 'GOAWAY\(sid=0, STREAM_CLOSED\), expected PROTOCOL_ERROR'
    run_suite "$PORT" --only http2/5.1.1/2 --lenient
    expect_eq "h2spec's verdict passes it" "$RC" 0
    printf '{"cases": 3}' >"$TMP/bad.json"
    $PY "$HERE/table.py" "$TMP/bad.json" >"$TMP/table.out" 2>&1
    expect_eq "table.py on a non-result: usage error" "$?" 2
    expect_match "table.py names the file" "$(cat "$TMP/table.out")" 'bad.json: expected a conformance.py'
    $PY "$HERE/table.py" "$JSON" >"$TMP/table.out" 2>&1
    expect_eq "table.py on a result" "$?" 0
    expect_match "table.py shows the server" "$(cat "$TMP/table.out")" '^\| selftest \| 1 \| 1 \| 0 \| 0 \|$'
    ;;
nghttpd)
    PORT=$(free_port)
    nghttpd --no-tls -n 1 -a 127.0.0.1 -d "$TMP/www" "$PORT" >"$TMP/nghttpd.log" 2>&1 &
    PIDS+=($!)
    wait_port "$PORT" || { fail "nghttpd did not start on $PORT: $(cat "$TMP/nghttpd.log")"; finish; exit; }
    run_suite "$PORT"
    ;;
h2o)
    start_h2o || { finish; exit; }
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
