#!/usr/bin/env bash
# demo.sh - the main job on a fresh build. Until the server and the load generator exist this is
# the quickest real end-to-end job there is: the version and the histogram's accuracy check on a
# million samples.
set -euo pipefail
bin=${1:-build/bin}
"$bin/h2bench" --version
echo
build/tests/test_hist

# The report: on the newest results under results/runs/ (where `h2bench run` writes), else on the
# test fixtures, and say which.
echo
results=$(ls -t results/runs/*.json 2>/dev/null | head -n 1 || true)
if [ -z "$results" ]; then
    results=tests/data/report/head.json
    echo "report: no results under results/runs/ yet, rendering the test fixture $results"
fi
"$bin/h2bench" report "$results" -o build/demo-report
echo "report: $(pwd)/build/demo-report/REPORT.md"
