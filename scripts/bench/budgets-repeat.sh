#!/usr/bin/env bash
# budgets-repeat.sh - how steady the budgets gate is: runs `make -f Makefile.ci budgets-gate`'s two
# commands N times on unchanged code and prints, per cell, every run's callgrind instructions per
# request (the mean of the run's two measurements), their spread, and how many runs the gate
# passed, failed or found invalid. BUSY=1 keeps the other CPU (1, the client's) busy with a spin
# loop for the whole series, as a shared CI runner would. COUNTS=FILE keeps the per-run counts
# (run, cell, instructions per request, the two callgrind runs) as TSV.
#
# usage: scripts/bench/budgets-repeat.sh [N] [build/bin]     (N defaults to 20)
set -euo pipefail
N=${1:-20}
BIN=${2:-build/bin}
[ -x "$BIN/h2bench" ] || { echo "no $BIN/h2bench: build first" >&2; exit 2; }
command -v jq >/dev/null || { echo "needs jq" >&2; exit 2; }
TMP=$(mktemp -d)
SPIN=
cleanup() { [ -n "$SPIN" ] && kill "$SPIN" 2>/dev/null; wait 2>/dev/null || true; rm -rf "$TMP"; }
trap cleanup EXIT
if [ "${BUSY:-0}" = 1 ]; then
    taskset -c 1 sh -c 'while :; do :; done' &
    SPIN=$!
fi
pass=0 fail=0 invalid=0
for i in $(seq 1 "$N"); do
    "$BIN/h2bench" run scenarios/budgets.json --filter h2ref --no-progress \
        --out "$TMP/run$i.json" >"$TMP/run$i.log" 2>&1 || { echo "run $i failed:"; cat "$TMP/run$i.log"; exit 3; }
    rc=0
    "$BIN/h2bench" gate --ceilings gates/budgets-ceilings.json --results "$TMP/run$i.json" \
        >"$TMP/gate$i.log" 2>&1 || rc=$?
    case $rc in 0) pass=$((pass + 1)) ;; 1) fail=$((fail + 1)) ;; *) invalid=$((invalid + 1)) ;; esac
    jq -r --arg run "$i" '.matrix[] | select(.budgets) |
        [$run, "\(.target):\(.connections)x\(.streams_requested)",
         (.budgets.instructions_per_request // "null"),
         ((.budgets.instructions_runs // []) | map(tostring) | join("/"))] | @tsv' \
        "$TMP/run$i.json" >>"$TMP/counts.tsv"
    echo "run $i/$N: gate exit $rc"
done
echo
printf '%-14s %10s %10s %8s  %s\n' cell min max spread 'counts per run'
cut -f2 "$TMP/counts.tsv" | sort -u | while read -r cell; do
    awk -F'\t' -v c="$cell" '$2 == c {
        v = $3 + 0; all = all (all ? " " : "") sprintf("%.1f", v)
        if (n == 0 || v < lo) lo = v; if (n == 0 || v > hi) hi = v; n++ }
      END { printf "%-14s %10.1f %10.1f %7.3f%%  %s\n", c, lo, hi, (hi - lo) / lo * 100, all }' \
        "$TMP/counts.tsv"
done
[ -n "${COUNTS:-}" ] && cp "$TMP/counts.tsv" "$COUNTS"
echo
echo "gate: $pass passed, $fail failed, $invalid invalid of $N (BUSY=${BUSY:-0})"
[ "$fail" = 0 ] && [ "$invalid" = 0 ]
