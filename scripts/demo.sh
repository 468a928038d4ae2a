#!/usr/bin/env bash
# demo.sh - the main job on a fresh build: scenarios/quick.json (the bundled server alone driven
# by h2bench load over connections {1, 10, 100} x streams {1, 10, 100}, about 30 s), then a
# report on those results, and where both went.
set -euo pipefail
bin=${1:-build/bin}
"$bin/h2bench" --version
echo
results=results/runs/quick-$(date -u +%Y%m%dT%H%M%SZ).json
"$bin/h2bench" run scenarios/quick.json --out "$results"
echo "demo: results in $(pwd)/$results"

echo
"$bin/h2bench" report "$results" -o build/demo-report
echo "report: $(pwd)/build/demo-report/REPORT.md"
