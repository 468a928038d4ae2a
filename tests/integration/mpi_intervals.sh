#!/usr/bin/env bash
# mpi_intervals.sh - per-interval results, shapes and SLOs of one `mpirun … h2bench load` job on
# loopback (2 ranks, each given half the load): the job's intervals merged on rank 0 equal an
# offline `h2bench merge --interval-json` of the ranks' own interval files byte for byte, every
# interval's count follows a 3-stage shape summed over the ranks (load_shapes.sh's tolerance),
# --hdr-log holds one histogram per interval, --slo is judged on the merged windows and run
# (pass: exit 0, breach: exit 1), and bad input exits 2 (--slo-abort and --find-max under MPI;
# interval files that do not parse, named by file:line:column).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/serve_lib.sh"
command -v mpirun >/dev/null || skip "mpirun not installed"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl=self,vader OMPI_MCA_plm=isolated OMPI_MCA_btl_vader_single_copy_mechanism=none
MPIRUN=(timeout 60 mpirun --oversubscribe -np 2)
# Open MPI's own allocations are never freed (see mpi.sh): no leak check in the ranks.
export ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0"

start_serve mpiiv --threads 1 || { finish; exit 1; }
URL=$SERVE_URL/hello

t_before=$(date +%s)
# A 3-stage ramp for the job: 0 -> 400 req/s over 1 s, up to 800 over 1 s, down to 200 over 1 s
# (1300 requests), over 4 connections and 2 threads: one connection pair and one worker per rank.
"${MPIRUN[@]}" "$H2BENCH" load --stages 1s:400,1s:800,1s:200 -c 4 -m 16 -t 2 --no-progress \
    --interval-json "$TMP/job.ndjson" --hdr-log "$TMP/job.hlog" --json "$TMP/job.json" \
    --mpi-rank-json "$TMP/part" --slo 'p99<2s,errors<1%' --slo-window 1s "$URL" \
    >"$TMP/job.out" 2>"$TMP/job.err"
rc=$?
[ "$rc" = 0 ] || cat "$TMP/job.err"
expect_eq "stages job with --slo exits 0 (SLO held)" "$rc" 0
expect_match "the split names the shape" "$(cat "$TMP/job.out")" \
    "^mpi: 2 ranks; each rank: 2 of 4 connections, 1 threads of 2, its workers' share of the arrivals of the shape 1s:400,1s:800,1s:200"
expect_eq "3 intervals of 1 s" "$(wc -l <"$TMP/job.ndjson")" 3
expect_eq "each rank wrote its intervals" "$(cat "$TMP"/part.rank0.intervals.ndjson "$TMP"/part.rank1.intervals.ndjson | wc -l)" 6
expect_eq "both ranks served requests in every interval" \
    "$(jq -s 'map(select(.ended > 0)) | length' "$TMP"/part.rank*.intervals.ndjson)" 6

# The exact merge: offline, from the ranks' files, the same bytes as the job's --interval-json.
"$H2BENCH" merge --interval-json "$TMP/offline.ndjson" "$TMP/part.rank0.intervals.ndjson" \
    "$TMP/part.rank1.intervals.ndjson" >"$TMP/merge.out" 2>&1
expect_eq "offline interval merge exits 0" "$?" 0
expect_eq "merged intervals equal the offline merge, byte for byte" \
    "$(cmp "$TMP/job.ndjson" "$TMP/offline.ndjson" && echo same)" same
for i in 0 1 2; do
    expect_eq "interval $i: percentiles equal the offline merge" \
        "$(jq -c "select(.index == $i) | .latency_ns" "$TMP/job.ndjson")" \
        "$(jq -c "select(.index == $i) | .latency_ns" "$TMP/offline.ndjson")"
    expect_eq "interval $i: the ranks' counts add up" \
        "$(jq "select(.index == $i) | .latency_ns.count" "$TMP/job.ndjson")" \
        "$(jq -s "map(select(.index == $i) | .ended) | add" "$TMP"/part.rank*.intervals.ndjson)"
done
expect_eq "the intervals hold the job's merged histogram's requests" \
    "$(jq -s 'map(.ended) | add' "$TMP/job.ndjson")" "$(jq .latency_ns.count "$TMP/job.json")"
expect_eq "every intended request of the job was sent or counted unsent" \
    "$(jq '.started + .unsent' "$TMP/job.json")" 1300

# The sum of the ranks follows the shape (shape_table.py: the rule load_shapes.sh uses).
python3 "$(dirname "$0")/shape_table.py" 1s:400,1s:800,1s:200 "$TMP/job.ndjson" >"$TMP/table"
rc=$?
cat "$TMP/table"
expect_eq "every interval of the job on the shape (table above)" "$rc" 0

# --hdr-log: one latency histogram per interval, the merged ones.
expect_eq "hdr log: one latency line per interval" "$(grep -c '^Tag=latency,' "$TMP/job.hlog")" 3
t_after=$(date +%s)
st=$(sed -n 's/^#\[StartTime: \([0-9.]*\) .*/\1/p' "$TMP/job.hlog")
expect_eq "hdr log: StartTime is the job's start ($t_before <= ${st:-none} <= $t_after)" \
    "$(jq -n "${st:-0} >= $t_before and ${st:-0} <= $t_after")" true

# --slo: judged by rank 0 on the merged windows and the run.
expect_eq "slo: 3 windows and the run, 2 objectives each" "$(jq '.slo | length' "$TMP/job.json")" 8
expect_eq "slo: every verdict passes" "$(jq -c '[.slo[].verdict] | unique' "$TMP/job.json")" '["pass"]'
expect_eq "slo: the run's p99 is the job's merged p99" \
    "$(jq '.slo[] | select(.objective == "p99<2s" and .start_s == 0 and .end_s > 2) | .value' "$TMP/job.json")" \
    "$(jq .latency_ns.p99 "$TMP/job.json")"
expect_eq "slo: window 2's p99 is the merged interval's" \
    "$(jq '.slo[] | select(.objective == "p99<2s" and .start_s == 1 and .end_s == 2) | .value' "$TMP/job.json")" \
    "$(jq 'select(.index == 1) | .latency_ns.p99' "$TMP/job.ndjson")"

# A breach: no request answers within 1 us. Exit 1, the breach named, from rank 0 only. Windows
# of 1 s at 400 req/s hold about 400 requests, so p99 is evaluable in each (it needs more than
# 100; the first window of a slow-starting ASan run may hold fewer, and is then not evaluable).
"${MPIRUN[@]}" "$H2BENCH" load --total-rps 400 -D 2 -c 2 --no-progress --slo 'p99<1us' \
    --slo-window 1s --json "$TMP/breach.json" "$URL" >"$TMP/breach.out" 2>"$TMP/breach.err"
expect_eq "slo breach under MPI exits 1" "$?" 1
expect_match "the breach is named" "$(cat "$TMP/breach.err")" 'SLO breached: p99<1us in window [01]\.0-[12]\.0s: '
expect_eq "said once, by rank 0" "$(grep -c 'SLO breached' "$TMP/breach.err")" 1
expect_eq "breach: the run's verdict in the JSON" \
    "$(jq -r '.slo[] | select(.start_s == 0 and .end_s == 2) | .verdict' "$TMP/breach.json")" fail

# Refused under MPI, exit 2 with why: --slo-abort (windows are judged after the run) and
# --find-max (a step's verdict is not known to the ranks before the next step).
"${MPIRUN[@]}" "$H2BENCH" load --total-rps 200 -D 1 -c 2 --slo 'p99<1s' --slo-window 1s \
    --slo-abort "$URL" >"$TMP/abort.out" 2>&1
expect_eq "--slo-abort under MPI exits 2" "$?" 2
expect_match "--slo-abort: why" "$(cat "$TMP/abort.out")" '--slo-abort is not available under MPI: the ranks merge their intervals after the run'
"${MPIRUN[@]}" "$H2BENCH" load --find-max --slo 'p99<1s' -c 2 "$URL" >"$TMP/fm.out" 2>&1
expect_eq "--find-max under MPI exits 2" "$?" 2
expect_match "--find-max: why" "$(cat "$TMP/fm.out")" '--find-max is not available under MPI'
stop_serve "$SERVE_PID" >/dev/null

# Bad interval files for the offline merge: exit 2, file:line:column and what was expected.
head -1 "$TMP/job.ndjson" >"$TMP/bad1.ndjson"
echo '{"index": 1, "start_s": ' >>"$TMP/bad1.ndjson"
"$H2BENCH" merge --interval-json "$TMP/o.ndjson" "$TMP/bad1.ndjson" >/dev/null 2>"$TMP/bad1.err"
expect_eq "truncated line: exit 2" "$?" 2
expect_match "truncated line: file:line:column" "$(cat "$TMP/bad1.err")" "bad1.ndjson:2:[0-9]+: not JSON"
sed -n 2p "$TMP/job.ndjson" | jq -c 'del(.latency_histogram)' >"$TMP/bad2.ndjson"
"$H2BENCH" merge --interval-json "$TMP/o.ndjson" "$TMP/bad2.ndjson" >/dev/null 2>"$TMP/bad2.err"
expect_eq "no histogram: exit 2" "$?" 2
expect_match "no histogram: named" "$(cat "$TMP/bad2.err")" 'bad2.ndjson:1:[0-9]+: .*latency_histogram'
sed -n 2p "$TMP/job.ndjson" >"$TMP/bad3.ndjson"
printf '\n' >>"$TMP/bad3.ndjson"
head -1 "$TMP/job.ndjson" >>"$TMP/bad3.ndjson"
"$H2BENCH" merge --interval-json "$TMP/o.ndjson" "$TMP/bad3.ndjson" >/dev/null 2>"$TMP/bad3.err"
expect_eq "indexes going back: exit 2" "$?" 2
expect_match "indexes going back: line 3 named" "$(cat "$TMP/bad3.err")" 'bad3.ndjson:3:[0-9]+: .*index'
jq -c '.latency_ns.p99 = "fast"' "$TMP/bad3.ndjson" 2>/dev/null | head -1 >"$TMP/bad4.ndjson"
"$H2BENCH" merge --interval-json "$TMP/o.ndjson" "$TMP/bad4.ndjson" >/dev/null 2>"$TMP/bad4.err"
expect_eq "wrong type: exit 2" "$?" 2
expect_match "wrong type: named" "$(cat "$TMP/bad4.err")" 'bad4.ndjson:1:[0-9]+: .*p99'
"$H2BENCH" merge --interval-json "$TMP/o.ndjson" "$TMP/nonexistent.ndjson" >/dev/null 2>"$TMP/bad5.err"
expect_eq "missing file: exit 2" "$?" 2
"$H2BENCH" merge --interval-json "$TMP/o.ndjson" "$TMP" >/dev/null 2>"$TMP/bad7.err"
expect_eq "a directory: exit 2" "$?" 2
expect_match "a directory: named" "$(cat "$TMP/bad7.err")" 'is a directory, expected an NDJSON file'
"$H2BENCH" merge --interval-json "$TMP/o.ndjson" --json "$TMP/o.json" "$TMP/job.ndjson" >/dev/null 2>"$TMP/bad6.err"
expect_eq "--json and --interval-json together: exit 2" "$?" 2
expect_eq "nothing written on bad input" "$(test -e "$TMP/o.ndjson" && echo yes || echo no)" no
finish
