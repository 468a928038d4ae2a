#!/usr/bin/env bash
# test-cpu.sh - each CTest test's wall time and CPU time, the CPU counted in a cgroup of its own
# (cgroup v1 cpuacct), so the servers, peers and clients a test starts count too, waited for or
# not. Prints "NAME WALL_S CPU_S CPU/WALL EXIT", longest CPU first, then the totals. A test whose
# CPU/WALL stays under 0.4 in the Release and the ASan build is what tests/CMakeLists.txt lists
# as light. Runs JOBS tests at once (default 2): CPU seconds hold under that, wall times do not.
#
# usage: scripts/bench/test-cpu.sh [BUILD_DIR] [CTEST_REGEX]   (as root; JOBS=N to change)
set -euo pipefail
BUILD=${1:-build}
REGEX=${2:-.}
JOBS=${JOBS:-2}
CG=/sys/fs/cgroup/cpuacct
[ -w "$CG" ] || { echo "test-cpu.sh: needs a writable cgroup v1 cpuacct at $CG (root)" >&2; exit 2; }
[ -d "$BUILD" ] || { echo "test-cpu.sh: no build directory $BUILD" >&2; exit 2; }
one() { # one TEST: runs it alone in a fresh cgroup
    local t=$1 g="$CG/h2b-test-cpu.$$.$RANDOM" s e rc=0
    mkdir "$g"
    s=$(date +%s.%N)
    bash -c "echo \$\$ >'$g/cgroup.procs'; exec ctest --test-dir '$BUILD' -R '^${t//./\\.}\$' -Q" \
        >/dev/null 2>&1 || rc=$?
    e=$(date +%s.%N)
    sleep 0.2 # what the test left behind finishes exiting
    local ns
    ns=$(cat "$g/cpuacct.usage")
    for p in $(cat "$g/cgroup.procs"); do echo "$p" >"$CG/cgroup.procs" 2>/dev/null || true; done
    rmdir "$g"
    awk -v t="$t" -v s="$s" -v e="$e" -v ns="$ns" -v rc="$rc" \
        'BEGIN { w = e - s; c = ns / 1e9; printf "%s %.1f %.1f %.2f %d\n", t, w, c, c / (w > 0 ? w : 1), rc }'
}
export -f one
export BUILD CG
ctest --test-dir "$BUILD" -N -R "$REGEX" | sed -n 's/^ *Test *#[0-9]*: //p' |
    xargs -P "$JOBS" -I{} bash -c 'one "$1"' _ {} | sort -k3 -rn |
    awk '{ print; w += $2; c += $3 } END { printf "total: %d tests, %.1f s of test wall time, %.1f CPU-s\n", NR, w, c }'
