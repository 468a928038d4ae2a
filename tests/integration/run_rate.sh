#!/usr/bin/env bash
# run_rate.sh - a scenario's matrix.rate runs every cell open loop at that total rate: h2bench
# load gets --total-rps and the cell's req/s is the offered rate, not the server's capacity
# (the same cell without rate, side by side, goes much faster).
. "$(dirname "$0")/lib.sh"
CHECK=$BIN/../tests/results_check
for rate in 400 0; do
    cat >"$TMP/rate$rate.json" <<JSON
{
  "name": "rate$rate",
  "targets": [{"name": "h2ref", "type": "bundled", "threads": 1}],
  "client": {"type": "h2bench", "threads": 1},
  "matrix": {"connections": [2], "streams": [4], "duration_s": 1, "min_requests": 10,
             "rate": $rate}
}
JSON
    timeout 120 "$H2BENCH" run "$TMP/rate$rate.json" --out "$TMP/res$rate.json" --no-progress \
        >"$TMP/run$rate.out" 2>"$TMP/run$rate.err"
    expect_eq "rate $rate: exit ($(tail -1 "$TMP/run$rate.err"))" "$?" 0
done
open=$(jq '.matrix[0].req_per_s' "$TMP/res400.json")
closed=$(jq '.matrix[0].req_per_s' "$TMP/res0.json")
echo "open loop at 400 req/s: $open req/s; closed loop: $closed req/s"
# Open loop never runs above the offered rate (+5 % for the 1 s window's edges). Below it, a
# client starved of CPU (a busy CI machine, ctest -j2 under ASan) can fall behind its schedule:
# seen at 180 and 337 req/s, so the lower bound only asks that it ran as an open loop at all.
if python3 -c "import sys; sys.exit(not (0.25 * 400 <= $open <= 1.05 * 400))"; then ok; else
    fail "rate 400: the cell ran at $open req/s"; fi
if python3 -c "import sys; sys.exit(not $closed > 2 * $open)"; then ok; else
    fail "closed loop ($closed req/s) is not clearly faster than the offered 400"; fi
"$H2BENCH" run "$TMP/rate400.json" --dry-run >/dev/null 2>&1
expect_eq "rate: dry run valid" "$?" 0
sed 's/"rate": 400/"rate": -1/' "$TMP/rate400.json" >"$TMP/bad.json"
"$H2BENCH" run "$TMP/bad.json" --dry-run >/dev/null 2>"$TMP/bad.err"
expect_eq "rate -1: exit" "$?" 2
expect_match "rate -1: where" "$(cat "$TMP/bad.err")" 'bad.json:[0-9]+:[0-9]+: matrix.rate'
finish
