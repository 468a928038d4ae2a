#!/usr/bin/env bash
# example-report.sh - regenerates docs/example-report/ on this machine:
#   docs/example-report/     two runs of scenarios/matrix.json (3 repeats per cell) with the same
#                            build, one after the other, reported together with the first as the
#                            A/B base: same code on both sides, so the A/B shows what noise alone
#                            looks like here;
#   docs/example-report/ci/  one run of scenarios/ci.json (the component suite in the CI profile
#                            and a smoke matrix) reported against gates/ceilings.json.
# `h2bench run` exits non-zero when a cell fails but still writes its results; the report shows
# the failed cells. Old charts are removed first so the directory holds only what REPORT.md uses.
set -uo pipefail
bin=${1:-build/bin}
out=docs/example-report
mkdir -p "$out/ci"
rm -f "$out"/*.png "$out"/*.svg "$out"/*.gp "$out"/*.dat "$out"/ci/*.png "$out"/ci/*.svg \
    "$out"/ci/*.gp "$out"/ci/*.dat
for i in 1 2; do
    "$bin/h2bench" run scenarios/matrix.json --repeat 3 --out "$out/matrix-$i.json"
    echo "example-report: matrix run $i exited $?"
done
"$bin/h2bench" run scenarios/ci.json --out "$out/ci/ci.json"
echo "example-report: ci run exited $?"
set -e
"$bin/h2bench" report "$out/matrix-1.json" "$out/matrix-2.json" --compare "$out/matrix-1.json" \
    -o "$out"
"$bin/h2bench" report "$out/ci/ci.json" --ceilings gates/ceilings.json -o "$out/ci"
