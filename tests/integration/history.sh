#!/usr/bin/env bash
# history.sh - `h2bench history` and `gate --history` on a made-up history: 16 results files
# built from a committed one (tests/data/report/base.json), a +10 % step in one benchmark's ns/op
# from run 11 (commit c10...), 0.5 % seeded noise elsewhere. Checks the change point, byte-equal
# JSON over two runs and over the inputs in another order, too-short series, fingerprints kept
# apart, the store (append, skip a run already there, a corrupt line reported and the rest read),
# the gate (passes until the run that completes the step, fails naming its first commit, passes
# again after), and bad input (exit 2 with file:line:column).
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || skip "python3 missing"
command -v jq >/dev/null || skip "jq missing"

RUNS=$TMP/runs
mkdir -p "$RUNS"
python3 - "$SRC/tests/data/report/base.json" "$RUNS" <<'EOF'
import json, random, sys
random.seed(36)
d = json.load(open(sys.argv[1]))
d["micro"] = d["micro"][:2]
d["matrix"] = d["matrix"][:2]
base = [m["ns_per_op"] for m in d["micro"]]
for r in range(16):
    x = json.loads(json.dumps(d))
    x["created"] = "2026-11-%02dT08:00:00Z" % (r + 1)
    x["tool"]["git_commit"] = "c%02d" % r + "0123456789"
    for i, m in enumerate(x["micro"]):
        step = 1.10 if (i == 0 and r >= 10) else 1.0
        m["ns_per_op"] = round(base[i] * step * (1 + random.gauss(0, 0.005)), 3)
    json.dump(x, open("%s/run%02d.json" % (sys.argv[2], r), "w"))
EOF
STEP="h2/stream-lifecycle - ns/op"

# The change point: run 11 (index 10), commit c10..., worse (a time grew), +10 %.
out=$("$H2BENCH" history "$RUNS" --metric ns/op)
expect_eq "history exit" "$?" 0
expect_match "the step's change point" "$(printf '%s\n' "$out" | grep -F "$STEP")" \
    " 16 +10 c100123456 .* \+1[0-9]\.[0-9] % .* worse"
expect_match "the other series has none" "$(printf '%s\n' "$out" | grep -F 'response-encoding/1 - ns/op')" \
    "no change"

"$H2BENCH" history "$RUNS" --json >"$TMP/a.json"
"$H2BENCH" history "$RUNS" --json >"$TMP/b.json"
"$H2BENCH" history $(ls "$RUNS"/*.json | sort -r) --json >"$TMP/c.json"
cmp -s "$TMP/a.json" "$TMP/b.json"
expect_eq "two runs, byte-identical JSON" "$?" 0
cmp -s "$TMP/a.json" "$TMP/c.json"
expect_eq "inputs in another order, byte-identical JSON" "$?" 0
expect_eq "json: the step" "$(jq -r --arg s "$STEP" '.series[] | select(.series == $s)
    | .change_points | map("\(.index) \(.commit) \(.worse)") | join(",")' "$TMP/a.json")" \
    "10 c100123456789 true"
expect_eq "json: nothing else moved" \
    "$(jq '[.series[] | select(.change_points | length > 0)] | length' "$TMP/a.json")" 2
expect_eq "json: ops/s moved the other way" "$(jq -r '.series[]
    | select(.series == "h2/stream-lifecycle - ops/s") | .change_points[0].change < -0.05' \
    "$TMP/a.json")" true

md=$("$H2BENCH" history "$RUNS" --md --filter stream-lifecycle --metric ns/op)
expect_match "md table" "$md" '^\| Series \| Fingerprint \| Runs \| Index \| Commit'
expect_match "md row" "$md" '\| h2/stream-lifecycle - ns/op \| 1 \| 16 \| 10 \| `c100123456`'

# Too short: four runs.
out=$("$H2BENCH" history "$RUNS"/run0[0-3].json --metric ns/op)
expect_match "too short" "$(printf '%s\n' "$out" | grep -F "$STEP")" "too short to test"

# Another machine: its own series, never mixed in.
jq '.env.cpu_model = "Other CPU"' "$RUNS/run15.json" >"$TMP/other.json"
n=$("$H2BENCH" history "$RUNS" "$TMP/other.json" --json --filter stream-lifecycle --metric ns/op |
    jq -r '[.series[] | "\(.runs)"] | join(" ")')
expect_eq "fingerprints kept apart (runs per series)" "$n" "16 1"

# The store and the gate: append run by run; the gate fails on the run that completes the step.
STORE=$TMP/store
verdicts=""
for f in "$RUNS"/run*.json; do
    "$H2BENCH" history --append "$STORE" "$f" >/dev/null
    [ $? -eq 0 ] || fail "append $f"
    "$H2BENCH" gate --history "$STORE" >"$TMP/gate.out" 2>&1
    rc=$?
    verdicts="$verdicts$rc"
    [ "$rc" -eq 1 ] && cp "$TMP/gate.out" "$TMP/gate.fail"
done
expect_match "gate: passes, fails once the step is confirmed, passes again" "$verdicts" \
    '^0{11,15}1+0+$'
expect_match "gate names the first commit of the new segment" "$(cat "$TMP/gate.fail" 2>/dev/null)" \
    "FAIL  h2/stream-lifecycle - ns/op: a change point of \+1[0-9]\.[0-9] % .* opens at commit c100123456789 \(run 11 of"
out=$("$H2BENCH" history --append "$STORE" "$RUNS/run05.json")
expect_match "append twice: nothing added" "$out" "0 line\(s\) added, [0-9]+ already there"
lines=$(wc -l <"$STORE/main.jsonl")
"$H2BENCH" history "$STORE" --json >"$TMP/s.json"
expect_eq "store: the same change point" "$(jq -r --arg s "$STEP" '.series[]
    | select(.series == $s) | .change_points[0].commit' "$TMP/s.json")" "c100123456789"
sed -i '2s/.*/{"series": broken/' "$STORE/main.jsonl"
"$H2BENCH" history "$STORE" --metric ns/op >"$TMP/s.out" 2>"$TMP/s.err"
expect_eq "corrupt line: still exit 0" "$?" 0
expect_match "corrupt line: file:line:column" "$(cat "$TMP/s.err")" "main.jsonl:2:[0-9]+: not a JSON object"
expect_match "corrupt line: the rest is read" "$(grep -F "$STEP" "$TMP/s.out")" " 16 +10 c100123456"
expect_eq "store lines" "$lines" "$((16 * 16))"
# lines that are JSON but not store lines: each located, the rest still read
printf '%s\n' '{"series":"x - ns/op","fingerprint":"f","bigger":false,"commit":"c","created":"t","value":-3}' \
    '{"series":"x - ns/op"}' '[1,2]' >>"$STORE/main.jsonl"
"$H2BENCH" history "$STORE" --metric ns/op >/dev/null 2>"$TMP/s.err"
expect_eq "bad lines: still exit 0" "$?" 0
expect_match "negative value located" "$(cat "$TMP/s.err")" "main.jsonl:$((lines + 1)):[0-9]+: value: expected a non-negative"
expect_match "missing field located" "$(cat "$TMP/s.err")" "main.jsonl:$((lines + 2)):1: fingerprint: missing required field"
expect_match "not an object located" "$(cat "$TMP/s.err")" "main.jsonl:$((lines + 3)):1: expected an object"
expect_match "bad lines counted" "$(cat "$TMP/s.err")" "4 corrupt store line\(s\) skipped"

# The report's History: the change point in its table, marked on the chart at run 11.
if "$H2BENCH" report "$RUNS"/run*.json -o "$TMP/report" >/dev/null 2>&1; then
    ok
    expect_match "report: change-point table" "$(cat "$TMP/report/REPORT.md")" \
        '\| h2/stream-lifecycle - ns/op \| 11 \| `c100123456789` \| .* \| \+1[0-9]\.[0-9] % worse \|'
    expect_match "report: the chart marks it" "$(grep -A1 '^# change points' "$TMP/report/history.dat")" \
        '^11 1\.[01][0-9]* "c100123"$'
else
    fail "report over the 16 runs"
fi
# A run's peak req/s is its own best cell, also one the newest run did not measure (issue 30:
# the History showed a run's peak over the head's cells only).
jq '.matrix += [.matrix[0] | .connections = 7777 | .req_per_s = 999999]' "$RUNS/run00.json" \
    >"$TMP/peak-old.json"
"$H2BENCH" report "$TMP/peak-old.json" "$RUNS/run01.json" -o "$TMP/peak" >/dev/null 2>&1
target=$(jq -r '.matrix[0].target' "$RUNS/run00.json")
expect_match "report: a run's own peak" "$(grep -F "| $target peak req/s |" "$TMP/peak/REPORT.md")" \
    "^\| $target peak req/s \| 999,999 \|"

# Bad input.
printf '{"schema": "h2bench.result/1",\n  "created": 5}\n' >"$TMP/bad.json"
"$H2BENCH" history "$TMP/bad.json" 2>"$TMP/bad.err" >/dev/null
expect_eq "malformed results: exit 2" "$?" 2
expect_match "malformed results: located" "$(cat "$TMP/bad.err")" "bad.json:[0-9]+:[0-9]+:"
"$H2BENCH" history --append "$STORE" --branch ../up "$RUNS/run00.json" 2>/dev/null
expect_eq "bad branch: exit 2" "$?" 2
"$H2BENCH" history --p-value 1.5 "$RUNS" 2>/dev/null
expect_eq "bad --p-value: exit 2" "$?" 2
"$H2BENCH" history "$TMP/nowhere" 2>/dev/null
expect_eq "missing input: exit 2" "$?" 2
"$H2BENCH" gate --history "$STORE" --ceilings x 2>/dev/null
expect_eq "gate --history with --ceilings: exit 2" "$?" 2
finish
