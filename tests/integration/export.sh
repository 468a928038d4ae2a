#!/usr/bin/env bash
# export.sh - the tracker formats: Google Benchmark JSON read by Google Benchmark's own
# compare.py (Debian libbenchmark-tools, with python3-scipy), which must parse both outputs and
# report the injected slowdown (H2B_INJECT_SLOW_PERCENT=200: three times the time); aggregate rows; BMF and
# github-action-benchmark exports of micro results, of run results (repeats folded into one
# series) and of an `h2bench load --json` document; `export --format gbench` of saved run, load
# and merge results, read by compare.py; bad input.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/serve_lib.sh"
B=hpack/encode-typical-response
FAST=(--warmup 5ms --time 20ms --epochs 3)
j() { jq -r "$2" "$1"; }

# Google Benchmark JSON: a row per fork, then mean/median/stddev rows.
"$H2BENCH" micro --filter "^$B\$" --forks 5 "${FAST[@]}" --format gbench >"$TMP/a.json" 2>/dev/null
expect_eq "gbench exit" "$?" 0
# Three times the time per call (a busy wait of 200 % of each call after it): doing the work
# twice was not twice the CPU for this benchmark (the second encoding of a response finds the
# table warm), and one clean CI run saw +30.5 %.
H2B_INJECT_SLOW=$B H2B_INJECT_SLOW_PERCENT=200 "$H2BENCH" micro --filter "^$B\$" --forks 5 \
    "${FAST[@]}" --format gbench >"$TMP/b.json" 2>/dev/null
expect_eq "gbench exit (slow)" "$?" 0
expect_eq "gbench rows" "$(j "$TMP/a.json" '[.benchmarks[].run_type] | join(" ")')" \
    "iteration iteration iteration iteration iteration aggregate aggregate aggregate"
expect_eq "gbench aggregates" "$(j "$TMP/a.json" '[.benchmarks[] | select(.run_type == "aggregate")
    | [.name, .aggregate_name, .iterations, .time_unit] | join(",")] | join(" ")')" \
    "${B}_mean,mean,5,ns ${B}_median,median,5,ns ${B}_stddev,stddev,5,ns"
"$H2BENCH" micro --filter "^$B\$" --forks 2 "${FAST[@]}" --format gbench \
    --gbench-aggregates only >"$TMP/only.json" 2>/dev/null
expect_eq "gbench aggregates only" "$(j "$TMP/only.json" '[.benchmarks[].aggregate_name] | join(" ")')" \
    "mean median stddev"
"$H2BENCH" micro --filter "^$B\$" --forks 2 "${FAST[@]}" --format gbench \
    --gbench-aggregates bogus >/dev/null 2>&1
expect_eq "bad --gbench-aggregates" "$?" 2

# compare.py (the system python: it has python3-scipy) parses both and sees the slowdown. CPU
# time is compared: the busy wait triples it, while preemption by other tests does not.
PY=/usr/bin/python3
CMP=/usr/share/benchmark/compare.py
if [ -f "$CMP" ] && "$PY" -c 'import scipy' 2>/dev/null; then
    "$PY" "$CMP" --no-color -d "$TMP/cmp.json" benchmarks "$TMP/a.json" "$TMP/b.json" >"$TMP/cmp.out" 2>&1
    rc=$?
    expect_eq "compare.py exit" "$rc" 0
    [ "$rc" -eq 0 ] || cat "$TMP/cmp.out" >&2
    expect_match "compare.py table names the benchmark" "$(cat "$TMP/cmp.out")" "${B}_median"
    expect_match "compare.py runs its U test on the forks" "$(cat "$TMP/cmp.out")" "U Test, Repetitions: 5 vs 5"
    cpu=$(jq -r --arg n "${B}_median" '.[] | select(.name == $n) | .measurements[0].cpu' "$TMP/cmp.json")
    expect_eq "compare.py: median CPU time +50% or more" \
        "$(awk -v c="$cpu" 'BEGIN { print (c > 0.5 ? "slower" : "not slower: " c) }')" slower
else
    fail "compare.py or python3-scipy missing (Makefile.ci PACKAGES: libbenchmark-tools python3-scipy)"
fi

# BMF and GAB from micro.
"$H2BENCH" micro --filter "^$B\$" --forks 2 "${FAST[@]}" --format bmf >"$TMP/m.bmf" 2>/dev/null
expect_eq "micro bmf exit" "$?" 0
# a sanitizer build cannot count allocations: those measures are null there, so left out
if "$H2BENCH" --version | grep -q sanitizers; then
    want="latency p99-latency throughput"
else
    want="allocs-per-op bytes-per-op latency p99-latency throughput"
fi
expect_eq "micro bmf measures" "$(j "$TMP/m.bmf" ".[\"$B\"] | keys | join(\" \")")" "$want"
expect_eq "micro bmf bounds" "$(j "$TMP/m.bmf" ".[\"$B\"].latency | (.lower_value <= .value and .value <= .upper_value)")" true
"$H2BENCH" micro --filter "^$B\$" --forks 1 "${FAST[@]}" --format gab >"$TMP/m.gab" 2>/dev/null
expect_eq "micro gab exit" "$?" 0
expect_eq "micro gab shape" "$(j "$TMP/m.gab" 'type == "array" and all(.[]; (.name|type) == "string" and (.unit|type) == "string" and (.value|type) == "number")')" true
expect_match "micro gab ns/op" "$(j "$TMP/m.gab" '.[].name')" "$B - ns/op"
expect_eq "micro gab names unique" "$(j "$TMP/m.gab" '[.[].name] | length == (unique | length)')" true
"$H2BENCH" micro --filter "^$B\$" --forks 1 "${FAST[@]}" --format gab-bigger >"$TMP/m.gabb" 2>/dev/null
expect_eq "micro gab-bigger is ops/s" "$(j "$TMP/m.gabb" '[.[].unit] | unique | join(",")')" "ops/s"

# Run results: 72 cells, 3 repeats each, become 24 series.
R=$SRC/tests/data/report/base.json
"$H2BENCH" export --format bmf "$R" >"$TMP/r.bmf"
expect_eq "run bmf exit" "$?" 0
cells=$(jq '[.matrix[] | "\(.target) \(.client) c=\(.connections) s=\(.streams_requested)"] | unique | length' "$R")
expect_eq "run bmf: one series per cell" "$(jq '[keys[] | select(test(" c="))] | length' "$TMP/r.bmf")" "$cells"
key=$(jq -r '.matrix[0] | "\(.target) \(.client) c=\(.connections) s=\(.streams_requested)"' "$R")
med=$(jq --arg t "$(jq -r '.matrix[0].target' "$R")" --argjson c "$(jq '.matrix[0].connections' "$R")" \
    --argjson s "$(jq '.matrix[0].streams_requested' "$R")" \
    '[.matrix[] | select(.target == $t and .connections == $c and .streams_requested == $s
      and .client == "h2bench") | .req_per_s] | sort | .[length / 2 | floor]' "$R")
expect_eq "run bmf: req/s is the median of the repeats" "$(jq --arg k "$key" '.[$k].throughput.value' "$TMP/r.bmf")" "$med"
"$H2BENCH" export --format gab-bigger "$R" --out "$TMP/r.gabb"
expect_eq "run gab-bigger exit" "$?" 0
expect_match "run gab-bigger req/s" "$(j "$TMP/r.gabb" '.[].name')" "$key - req/s"
"$H2BENCH" export --format gab "$R" >"$TMP/r.gab"
expect_match "run gab p99" "$(j "$TMP/r.gab" '.[].name')" "$key - p99"

# gbench from saved run results (micro entries and repeated cells): Google Benchmark rows
# that compare.py reads; forks and repeats are its repetitions.
have_cmp() { [ -f "$CMP" ] && "$PY" -c 'import scipy' 2>/dev/null; }
"$H2BENCH" export --format gbench "$R" >"$TMP/r.gb"
expect_eq "run gbench exit" "$?" 0
"$H2BENCH" export --format gbench "$SRC/tests/data/report/head.json" --out "$TMP/h.gb"
expect_eq "run gbench (head) exit" "$?" 0
expect_eq "run gbench: a cell's repeats are rows" \
    "$(jq --arg k "$key" '[.benchmarks[] | select(.name == $k and .run_type == "iteration")] | length' "$TMP/r.gb")" \
    "$(jq --arg t "$(jq -r '.matrix[0].target' "$R")" --argjson c "$(jq '.matrix[0].connections' "$R")" \
        --argjson s "$(jq '.matrix[0].streams_requested' "$R")" \
        '[.matrix[] | select(.target == $t and .connections == $c and .streams_requested == $s and .client == "h2bench")] | length' "$R")"
expect_eq "run gbench: ns per request is 1e9 / req/s" \
    "$(jq --arg k "$key" '[.benchmarks[] | select(.name == $k and .run_type == "iteration") | (.real_time * .items_per_second / 1e9 * 1000 | round)] | unique' "$TMP/r.gb" | tr -d ' \n')" \
    "[1000]"
expect_eq "run gbench: micro aggregates" \
    "$(jq -r '[.benchmarks[] | select(.run_name == "h2/stream-lifecycle" and .run_type == "aggregate") | .aggregate_name] | join(" ")' "$TMP/r.gb")" \
    "mean median stddev"
if have_cmp; then
    "$PY" "$CMP" --no-color benchmarks "$TMP/r.gb" "$TMP/h.gb" >"$TMP/rcmp.out" 2>&1
    expect_eq "compare.py on saved results: exit" "$?" 0
    expect_match "compare.py: a micro benchmark" "$(cat "$TMP/rcmp.out")" "^h2/stream-lifecycle_median "
    expect_match "compare.py: a cell" "$(cat "$TMP/rcmp.out")" "^h2ref h2bench c=1 s=1_median "
    expect_match "compare.py: U test over the repeats" "$(cat "$TMP/rcmp.out")" "U Test, Repetitions: 3 vs 3"
fi

# A load document, with the server of this test.
start_serve h2ref --threads 1 || { finish; exit 1; }
"$H2BENCH" load -n 300 -c 2 -m 4 --json "$TMP/load.json" "$SERVE_URL/" >/dev/null 2>&1
expect_eq "load exit" "$?" 0
"$H2BENCH" load -n 300 -c 2 -m 4 --json "$TMP/load2.json" "$SERVE_URL/" >/dev/null 2>&1
expect_eq "load exit (2)" "$?" 0
stop_serve "$SERVE_PID" >/dev/null 2>&1
# gbench from load --json and from a merge of two: compare.py reads them
"$H2BENCH" export --format gbench "$TMP/load.json" >"$TMP/l.gb"
expect_eq "load gbench exit" "$?" 0
"$H2BENCH" export --format gbench "$TMP/load2.json" >"$TMP/l2.gb"
expect_eq "load gbench rows: req/s and p99" \
    "$(jq -r '[.benchmarks[].name | sub(".* c=2 s=4"; "")] | join(",")' "$TMP/l.gb")" ",/p99"
expect_eq "load gbench: items_per_second is req/s" "$(jq '.benchmarks[0].items_per_second' "$TMP/l.gb")" \
    "$(jq '.req_per_s' "$TMP/load.json")"
# (a merge of the two runs is one job of 4 connections: its cell is c=4, so it is compared
# with another merge)
"$H2BENCH" merge "$TMP/load.json" "$TMP/load2.json" --json "$TMP/merged.json" >/dev/null 2>&1
"$H2BENCH" merge "$TMP/load2.json" "$TMP/load.json" --json "$TMP/merged2.json" >/dev/null 2>&1
"$H2BENCH" export --format gbench "$TMP/merged.json" >"$TMP/m.gb"
expect_eq "merged gbench exit" "$?" 0
"$H2BENCH" export --format gbench "$TMP/merged2.json" >"$TMP/m2.gb"
if have_cmp; then
    "$PY" "$CMP" --no-color benchmarks "$TMP/l.gb" "$TMP/l2.gb" >"$TMP/lcmp.out" 2>&1
    expect_eq "compare.py on two load results: exit" "$?" 0
    expect_match "compare.py: the load cell" "$(cat "$TMP/lcmp.out")" "c=2 s=4 "
    "$PY" "$CMP" --no-color benchmarks "$TMP/m.gb" "$TMP/m2.gb" >"$TMP/mcmp.out" 2>&1
    expect_eq "compare.py on merged results: exit" "$?" 0
    expect_match "compare.py: the merged cell's p99" "$(cat "$TMP/mcmp.out")" "c=4 s=4/p99 "
fi
"$H2BENCH" export --format bmf "$TMP/load.json" >"$TMP/l.bmf"
expect_eq "load bmf exit" "$?" 0
expect_eq "load bmf measures" "$(jq -r '.[] | keys | join(" ")' "$TMP/l.bmf")" "p50-latency p99-latency throughput"
expect_eq "load bmf req/s" "$(jq '.[].throughput.value' "$TMP/l.bmf")" "$(jq '.req_per_s' "$TMP/load.json")"

# Bad input.
echo '{"schema": "other/1"}' >"$TMP/other.json"
"$H2BENCH" export --format bmf "$TMP/other.json" >/dev/null 2>"$TMP/err"
expect_eq "other schema: exit" "$?" 2
expect_match "other schema: named" "$(cat "$TMP/err")" "other.json: schema"
printf '{"schema": "h2bench.result/1",\n "micro": 3}\n' >"$TMP/bad.json"
"$H2BENCH" export --format bmf "$TMP/bad.json" >/dev/null 2>"$TMP/err"
expect_eq "malformed results: exit" "$?" 2
expect_match "malformed results: file:line" "$(cat "$TMP/err")" "bad.json:[0-9]+"
"$H2BENCH" export --format xml "$R" >/dev/null 2>&1
expect_eq "bad --format" "$?" 2
"$H2BENCH" export --format bmf "$TMP/none.json" >/dev/null 2>&1
expect_eq "missing file" "$?" 2
finish
