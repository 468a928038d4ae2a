#!/usr/bin/env bash
# load_results.sh - load results are first-class (issue 30 item 4): `compare` and `report` read
# what `h2bench load --json` and `h2bench merge` write (the load document's matrix cell, through
# the core results model), as they read run and micro results.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/load_lib.sh"
command -v nghttpd >/dev/null || skip "nghttpd not installed"
make_docroot
start_nghttpd "$TMP/www"
URL=http://127.0.0.1:$PORT/hello

for i in 1 2 3; do
    "$H2BENCH" load -n 2000 -c 2 -m 4 --json "$TMP/l$i.json" "$URL" >/dev/null 2>"$TMP/err"
    expect_eq "load --json $i exit ($(head -c 200 "$TMP/err"))" "$?" 0
done
"$H2BENCH" merge --json "$TMP/m.json" "$TMP/l1.json" "$TMP/l2.json" >/dev/null 2>"$TMP/err"
expect_eq "merge exit ($(head -c 200 "$TMP/err"))" "$?" 0

# A sanitizer build's own measurements are never judged (compare says INVALID, exit 3); what is
# tested here is the reading of load documents, so its files lose the sanitizer mark (and the
# RelWithDebInfo build type of the asan preset) first.
if "$H2BENCH" --version | grep -q sanitizers; then
    "$H2BENCH" compare "$TMP/l1.json" "$TMP/l2.json" >"$TMP/out" 2>"$TMP/err"
    expect_eq "sanitizer build's load results: compare exit" "$?" 3
    expect_match "and says why" "$(tail -n 1 "$TMP/out")" \
        '^h2bench compare: INVALID: .*measured in a build with sanitizers'
    for f in l1 l2 l3 m; do
        jq '.env.sanitizers = [] | .env.build_type = "Release"' "$TMP/$f.json" >"$TMP/$f.plain" &&
            mv "$TMP/$f.plain" "$TMP/$f.json"
    done
fi

"$H2BENCH" compare "$TMP/l1.json" "$TMP/l2.json" >"$TMP/out" 2>"$TMP/err"
expect_eq "compare two load results: exit (one run a side: nothing judged)" "$?" 0
out=$(cat "$TMP/out")
expect_match "the cell's req/s row" "$out" \
    "^n/a +http://127\\.0\\.0\\.1:$PORT/hello:2x4 h2c +req/s +[0-9,]+ +[0-9,]+ +[0-9.]+× +- +no interval: 1 base and 1 head samples"
expect_match "the cell's p99 row" "$out" "^n/a +http://127\\.0\\.0\\.1:$PORT/hello:2x4 h2c +p99 "
expect_match "closing line" "$(tail -n 1 "$TMP/out")" '^h2bench compare: PASS: '
"$H2BENCH" compare "$TMP/m.json" "$TMP/l3.json" >"$TMP/out" 2>"$TMP/err"
expect_eq "compare merge output with a load result: exit ($(head -c 200 "$TMP/err"))" "$?" 0
expect_match "merge output is read" "$(cat "$TMP/out")" '^h2bench compare: PASS: '

"$H2BENCH" report "$TMP/l2.json" --compare "$TMP/l1.json" -o "$TMP/r" >/dev/null 2>"$TMP/err"
expect_eq "report on load results: exit ($(head -c 200 "$TMP/err"))" "$?" 0
md=$(cat "$TMP/r/REPORT.md" 2>/dev/null)
expect_eq "report title" "$(printf '%s\n' "$md" | head -n 1)" "# h2bench performance report: 1 matrix cell"
expect_match "measured when the file was written" "$md" '^Measured [0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z with h2bench '
expect_match "the A/B section judges the cell" "$md" "^\\| n/a \\| http://127\\.0\\.0\\.1:$PORT/hello:2x4 h2c \\| req/s \\|"
"$H2BENCH" report "$TMP/m.json" -o "$TMP/rm" >/dev/null 2>"$TMP/err"
expect_eq "report on merge output: exit ($(head -c 200 "$TMP/err"))" "$?" 0

# a load document that breaks the model is still an input error naming file:line:column
sed 's/"requests": [0-9]*/"requests": "many"/' "$TMP/l1.json" >"$TMP/bad.json"
"$H2BENCH" compare "$TMP/bad.json" "$TMP/l2.json" >/dev/null 2>"$TMP/err"
expect_eq "malformed load result exit" "$?" 2
expect_match "malformed load result position" "$(cat "$TMP/err")" 'bad\.json:[0-9]+:[0-9]+: requests'
# its env too, which the report, compare, the gate and the history read through the same model
jq '.env.kernel = 6' "$TMP/l1.json" >"$TMP/bad-env.json"
"$H2BENCH" report "$TMP/bad-env.json" -o "$TMP/rb" >/dev/null 2>"$TMP/err"
expect_eq "load result with a bad env: report exit" "$?" 2
expect_match "load result with a bad env: located" "$(cat "$TMP/err")" \
    'bad-env\.json:[0-9]+:[0-9]+: env\.kernel: expected a non-empty string'
"$H2BENCH" history --append "$TMP/hist" "$TMP/bad-env.json" >/dev/null 2>"$TMP/err"
expect_eq "load result with a bad env: history exit" "$?" 2
expect_match "load result with a bad env: history names it" "$(cat "$TMP/err")" 'env\.kernel'
# the machine a load result was measured on is its history series' fingerprint
"$H2BENCH" history --append "$TMP/hist" "$TMP/l1.json" >/dev/null 2>"$TMP/err"
expect_eq "load result into a history: exit ($(head -c 200 "$TMP/err"))" "$?" 0
expect_match "its fingerprint is the env's" "$(cat "$TMP"/hist/*.jsonl 2>/dev/null | head -n 1)" \
    "\"fingerprint\": ?\"$(jq -r '.env.cpu_model | gsub("[()@.]"; ".")' "$TMP/l1.json"), $(jq -r .env.cpus "$TMP/l1.json") cpus, "
finish
