#!/usr/bin/env bash
# example-report.sh - regenerates docs/example-report/ on this machine: two runs of
# scenarios/matrix.json (3 repeats per cell) with the same build, one after the other, then
# `h2bench report` on both with the first as the A/B base. Same code on both sides, so the A/B section shows what noise
# alone looks like here. `h2bench run` exits non-zero when a cell fails but still writes its
# results; the report shows the failed cells.
set -uo pipefail
bin=${1:-build/bin}
out=docs/example-report
mkdir -p "$out"
for i in 1 2; do
    "$bin/h2bench" run scenarios/matrix.json --repeat 3 --out "$out/matrix-$i.json"
    echo "example-report: run $i exited $?"
done
set -e
"$bin/h2bench" report "$out/matrix-1.json" "$out/matrix-2.json" --compare "$out/matrix-1.json" \
    -o "$out"
