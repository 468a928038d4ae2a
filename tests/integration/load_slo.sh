#!/usr/bin/env bash
# load_slo.sh - `h2bench load --slo` against `h2bench serve`: a pass exits 0 and a breach 1
# naming the figure and its window, window verdicts in the JSON, a figure the run cannot show
# (p99.9 of 100 requests, a share of the offered rate in the closed loop) reported as not
# evaluable and never as a pass, --slo-abort stopping within one window of a breach (a 1.5 s
# SIGSTOP of the server), and unparsable objectives refused with exit 2 and the column.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/serve_lib.sh"
start_serve slo --threads 1 || { finish; exit 1; }
URL=$SERVE_URL
run() { # NAME ARGS... : $TMP/NAME.out, .err, .json; sets rc
    local name=$1
    shift
    "$H2BENCH" load --no-progress --json "$TMP/$name.json" "$@" >"$TMP/$name.out" 2>"$TMP/$name.err"
    rc=$?
}
verdicts() { jq -r '[.slo[] | .verdict] | join(" ")' "$TMP/$1.json"; }

# pass: thresholds no loopback server misses, over the run and three 1 s windows
run pass --total-rps 200 -D 3 -c 2 -m 8 --slo 'p99<2s,errors<1%,rps>0.5*offered' \
    --slo-window 1s "$URL/hello"
expect_eq "pass: exit" "$rc" 0
expect_eq "pass: 3 windows and the run, 3 objectives each" "$(jq '.slo | length' "$TMP/pass.json")" 12
expect_eq "pass: every verdict" "$(verdicts pass)" "$(printf 'pass %.0s' $(seq 12) | sed 's/ $//')"
expect_eq "pass: the run's span" "$(jq -c '.slo[-1] | [.start_s, .end_s]' "$TMP/pass.json")" "[0,3]"
expect_match "pass: printed" "$(cat "$TMP/pass.out")" '^slo: p99<2s run 0\.0-3\.0s: pass \('

# fail: no request takes less than a microsecond from its intended send time
run fail --total-rps 200 -D 2 -c 2 -m 8 --slo 'errors<1%,p99<1us' --slo-window 1s "$URL/hello"
expect_eq "fail: exit" "$rc" 1
expect_match "fail: the figure and the window named" "$(cat "$TMP/fail.err")" \
    '^h2bench load: SLO breached: p99<1us in window 0\.0-1\.0s: [0-9.]+ms, limit 0\.001ms; 3 breach'
expect_eq "fail: verdicts" "$(verdicts fail)" "pass fail pass fail pass fail"
# errors: every request answered 500
run errors -n 200 -c 2 --slo 'errors<1%' "$URL/status/500"
expect_eq "errors: exit" "$rc" 1
expect_eq "errors: value is the failed share" "$(jq '.slo[0].value' "$TMP/errors.json")" 1

# not evaluable: p99.9 needs 1000 requests; offered has no meaning in the closed loop
run ne -n 100 -c 2 --slo 'p999<10s,rps>0.9*offered,p99<10s' "$URL/hello"
expect_eq "not evaluable: exit (not a pass)" "$rc" 1
expect_eq "not evaluable: verdicts" "$(verdicts ne)" "not_evaluable not_evaluable pass"
expect_match "not evaluable: reasons" "$(jq -r '.slo[0].reason, .slo[1].reason' "$TMP/ne.json")" \
    'too few requests for this percentile'
expect_match "not evaluable: said" "$(cat "$TMP/ne.err")" 'SLO not shown: 2 objective\(s\) not evaluable'

# --slo-abort: the server stops 2 s into a 20 s run for 1.5 s; the windows the stall empties
# breach rps>0.9*offered, and the run ends within one window of the first breached window's end
"$H2BENCH" load --no-progress --json "$TMP/abort.json" --total-rps 200 -D 20 -c 2 -m 64 \
    --slo 'rps>0.9*offered' --slo-window 1s --slo-abort "$URL/hello" >"$TMP/abort.out" \
    2>"$TMP/abort.err" &
lp=$!
( sleep 2.2; kill -STOP "$SERVE_PID"; sleep 1.5; kill -CONT "$SERVE_PID" ) &
sp=$!
wait "$lp"
rc=$?
wait "$sp"
expect_eq "abort: exit" "$rc" 1
expect_match "abort: said" "$(cat "$TMP/abort.err")" 'SLO breached: rps>0\.9\*offered in window .*--slo-abort'
first=$(jq '[.slo[] | select(.verdict == "fail")][0].end_s' "$TMP/abort.json")
wall=$(jq '.wall_s' "$TMP/abort.json")
echo "abort: first breached window ends at ${first}s of the measurement, the run lasted ${wall}s"
if python3 -c "import sys; sys.exit(not ($wall <= $first + 1.0 and $wall < 15))"; then ok; else
    fail "abort: run lasted ${wall}s, first breach ended at ${first}s"; fi
# with a grace longer than the run, the same breach does not stop it
run grace --total-rps 100 -D 2 -c 2 --slo 'p99<1us' --slo-window 1s --slo-abort --slo-grace 5s \
    "$URL/hello"
expect_eq "grace: exit" "$rc" 1
expect_eq "grace: ran to the end" "$(jq '.interrupted' "$TMP/grace.json")" false

# unparsable objectives: exit 2, the column
bad() { expect_load_refused "$1" "$2" --slo "$3"; } # WHAT REGEX SLO
bad "no value" '^h2bench load: --slo:1:13: .*expected a duration' 'p99<5ms,p99<'
bad "no operator" '^h2bench load: --slo:1:1: .*expected an operator' 'p99=5ms'
bad "unknown metric" '^h2bench load: --slo:1:9: unknown metric .foo.' 'p99<5ms,foo<1ms'
bad "no unit" '^h2bench load: --slo:1:5: .5.: expected a duration with a unit' 'p99<5'
bad "errors share" '^h2bench load: --slo:1:8: ' 'errors<150%'
bad "rps form" '^h2bench load: --slo:1:5: .*offered' 'rps>x*offered'
"$H2BENCH" load --slo 'p99<5ms' --slo-abort "$URL/hello" >/dev/null 2>"$TMP/bad.err"
expect_eq "abort without window: exit" "$?" 2
expect_match "abort without window: message" "$(cat "$TMP/bad.err")" 'give --slo-window'
finish
