#!/usr/bin/env bash
# report_micro.sh - `h2bench report` on what `h2bench micro --json` writes (the file `make gate`
# reports on): results with no scenario get a title and a Scenario line that say what they hold,
# never "(null)" or an empty name.
. "$(dirname "$0")/lib.sh"

"$H2BENCH" micro --filter '^hpack/decode-browser-request$' --forks 0 --warmup 5ms --time 10ms \
    --json "$TMP/m.json" >/dev/null 2>"$TMP/err"
rc=$?
expect_eq "micro --json exit ($(head -c 300 "$TMP/err"))" "$rc" 0
"$H2BENCH" report "$TMP/m.json" -o "$TMP/r" >/dev/null 2>"$TMP/err"
rc=$?
expect_eq "report exit ($(head -c 300 "$TMP/err"))" "$rc" 0
md=$(cat "$TMP/r/REPORT.md" 2>/dev/null)
expect_eq "title" "$(printf '%s\n' "$md" | head -n 1)" \
    "# h2bench performance report: 1 micro benchmark"
expect_match "Scenario line" "$md" \
    '^- \*\*Scenario:\*\* none \(`h2bench micro --json` runs no scenario file\), measured [0-9]{4}-'
if printf '%s' "$md" | grep -q '(null)'; then fail "(null) in the report"; else ok; fi
finish
