#!/usr/bin/env bash
# cpu-busy.sh [INTERVAL] -- CMD...: runs CMD and prints, every INTERVAL seconds (default 5), how
# busy the whole machine's CPUs were over it (all CPUs, in % of their time, from /proc/stat), then
# the mean over CMD's run. Whether a schedule keeps the CPUs busy: .ci/run, or a CTest suite at
# some -j, on an otherwise idle machine. Exits with CMD's exit code.
#
# usage: scripts/bench/cpu-busy.sh 5 -- ctest --test-dir build -j 8
set -uo pipefail
interval=5
if [ "${1:-}" != -- ]; then
    interval=${1:-}
    shift
fi
[ "${1:-}" = -- ] && [ $# -ge 2 ] || { echo "usage: cpu-busy.sh [INTERVAL] -- CMD..." >&2; exit 2; }
shift
case $interval in '' | *[!0-9]*) echo "cpu-busy.sh: INTERVAL must be whole seconds" >&2; exit 2 ;; esac
snap() { # busy and total jiffies of all CPUs
    local _ u n s i w x y z
    read -r _ u n s i w x y z _ </proc/stat
    echo "$((u + n + s + x + y + z)) $((u + n + s + i + w + x + y + z))"
}
"$@" &
pid=$!
t0=$(date +%s)
read -r b0 a0 < <(snap)
read -r pb pa <<<"$b0 $a0"
while kill -0 "$pid" 2>/dev/null; do
    sleep "$interval"
    read -r b a < <(snap)
    [ "$a" -gt "$pa" ] && echo "cpu-busy: $(($(date +%s) - t0))s $((100 * (b - pb) / (a - pa)))%" >&2
    pb=$b pa=$a
done
wait "$pid"
rc=$?
read -r b a < <(snap)
[ "$a" -gt "$a0" ] && echo "cpu-busy: mean $((100 * (b - b0) / (a - a0)))% over $(($(date +%s) - t0))s" >&2
exit "$rc"
