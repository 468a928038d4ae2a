#!/usr/bin/env bash
# demo.sh - the main job on a fresh build. Until the server and the load generator exist this is
# the quickest real end-to-end job there is: the version and the histogram's accuracy check on a
# million samples.
set -euo pipefail
bin=${1:-build/bin}
"$bin/h2bench" --version
echo
build/tests/test_hist
