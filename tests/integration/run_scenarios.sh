#!/usr/bin/env bash
# run_scenarios.sh - h2bench run's input side, nothing started: every malformed scenario under
# tests/data/run/malformed/ exits 2 naming file:line:column and the field (table:
# tests/data/run/malformed.tsv), the shipped scenarios expand as documented in --dry-run, and
# bad options exit 2.
. "$(dirname "$0")/lib.sh"
DATA=$SRC/tests/data/run

while IFS=$'\t' read -r file regex; do
    case "$file" in '#'* | '') continue ;; esac
    "$H2BENCH" run "$DATA/malformed/$file" --dry-run >"$TMP/out" 2>"$TMP/err"
    rc=$?
    expect_eq "$file exit" "$rc" 2
    expect_match "$file message" "$(cat "$TMP/err")" "$regex"
    expect_eq "$file stdout empty" "$(cat "$TMP/out")" ""
done <"$DATA/malformed.tsv"

# Every file in the table exists and every malformed file is in the table.
for f in "$DATA"/malformed/*.json; do
    expect_match "$(basename "$f") listed" "$(cut -f1 "$DATA/malformed.tsv")" "^$(basename "$f")\$"
done

# The shipped scenarios are valid; matrix.json expands to 12 cells per target with effective
# streams 40 at (100, 100) and 4 at (1000, 10) and (1000, 100); its floor target has 12 cells of
# effective 1 (the run skips those with more than one requested stream).
for s in quick matrix h2load-matrix bulk ci budgets budgets-grpc protocols protocols-bulk grpc \
    grpc-stream uring; do
    "$H2BENCH" run "$SRC/scenarios/$s.json" --dry-run >"$TMP/$s.plan" 2>"$TMP/err"
    expect_eq "scenarios/$s.json dry run exit" "$?" 0
done
# grpc.json: 9 cells for each of h2ref, grpcpp and grpcio (100 x 100 runs 40 streams: the
# aggregate cap of 4096)
expect_match "grpc: 27 cells" "$(cat "$TMP/grpc.plan")" '^grpc: 27 cells \(3 targets\)'
# uring.json: h2ref on both backends, h2o and the floor on both backends at 4 x 2 points
expect_match "uring: 40 cells" "$(cat "$TMP/uring.plan")" '^uring: 40 cells \(5 targets\)'
expect_match "grpc-stream: 3 cells" "$(cat "$TMP/grpc-stream.plan")" '^grpc-stream: 3 cells \(3 targets\)'
expect_match "budgets-grpc: 8 cells" "$(cat "$TMP/budgets-grpc.plan")" \
    '^budgets-grpc: 8 cells \(2 targets\)'
plan=$(cat "$TMP/matrix.plan")
expect_match "matrix: 48 cells" "$plan" '^matrix: 48 cells \(4 targets\)'
expect_eq "matrix: cells of floor" "$(grep -cE "^ +[0-9]+ +floor +[0-9]+ +[0-9]+ +1 +1 " "$TMP/matrix.plan")" 12
for t in h2ref nghttpd h2o; do
    n=$(grep -cE "^ +[0-9]+ +$t " "$TMP/matrix.plan")
    expect_eq "matrix: cells of $t" "$n" 12
    expect_match "$t (100,100) -> 40" "$plan" "^ +[0-9]+ +$t +100 +100 +40 "
    expect_match "$t (1000,10) -> 4" "$plan" "^ +[0-9]+ +$t +1000 +10 +4 "
    expect_match "$t (1000,100) -> 4" "$plan" "^ +[0-9]+ +$t +1000 +100 +4 "
    expect_match "$t (10,100) -> 100" "$plan" "^ +[0-9]+ +$t +10 +100 +100 "
done
# Alternate order: the first point runs h2ref nghttpd h2o floor, the second the reverse.
order=$(grep -E '^ +[0-9]+ ' "$TMP/matrix.plan" | head -8 | awk '{print $2}' | tr '\n' ' ')
expect_eq "alternate order" "$order" "h2ref nghttpd h2o floor floor h2o nghttpd h2ref "
expect_match "ci: micro suite planned" "$(cat "$TMP/ci.plan")" "^micro: h2bench micro --profile ci --filter '\\.' --cpu 0"
bulk=$(grep -cE '^ +[0-9]+ +(h2ref|nghttpd|h2o) ' "$TMP/bulk.plan")
expect_eq "bulk: 2 x 1 x 3 frame sizes x 2 windows x 3 targets" "$bulk" 36

# --filter and --repeat shape the plan.
out=$("$H2BENCH" run "$SRC/scenarios/matrix.json" --dry-run --filter '1000x*,h2o:1x1' --repeat 2)
expect_match "filter+repeat: 26 cells" "$out" '^matrix: 26 cells'
"$H2BENCH" run "$SRC/scenarios/matrix.json" --dry-run --filter 'apache:1x1' >/dev/null 2>"$TMP/err"
expect_eq "unknown filter target exit" "$?" 2
expect_match "unknown filter target message" "$(cat "$TMP/err")" "no target named 'apache'"

# Bad options.
"$H2BENCH" run >/dev/null 2>&1
expect_eq "no scenario exit" "$?" 2
"$H2BENCH" run "$SRC/scenarios/quick.json" --repeat 0 >/dev/null 2>&1
expect_eq "--repeat 0 exit" "$?" 2
"$H2BENCH" run "$SRC/scenarios/quick.json" --bogus >/dev/null 2>"$TMP/err"
expect_eq "unknown flag exit" "$?" 2
expect_match "unknown flag: pointer to --help" "$(cat "$TMP/err")" "Run 'h2bench run --help'"
"$H2BENCH" run "$TMP/missing.json" --dry-run >/dev/null 2>"$TMP/err"
expect_eq "missing file exit" "$?" 2
expect_match "missing file message" "$(cat "$TMP/err")" 'missing\.json'
out=$("$H2BENCH" run --help)
expect_eq "--help exit" "$?" 0
expect_match "--help text" "$out" '--dry-run'
finish
