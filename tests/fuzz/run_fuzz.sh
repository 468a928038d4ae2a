#!/usr/bin/env bash
# run_fuzz.sh FUZZER SECONDS WORKDIR SEEDS - fuzzes for SECONDS of CPU time from the committed
# seeds. New corpus entries and crash artifacts go to WORKDIR (the build tree), never the source
# tree. Prints libFuzzer's final stats (exec count) and fails on any finding.
#
# CPU time, not wall time: the budget is the fuzzer's own user+system time, read from
# /proc/PID/stat every 0.2 s, and the fuzzer is asked to stop with SIGUSR1 when it has used it.
# So the smoke does the same work on a quiet machine as on a busy one, where a wall-time budget
# fuzzes less the busier the machine is. Wall time is bounded too, at 30 times the budget.
#
# SIGUSR1, not SIGINT: libFuzzer's SIGINT handler prints the stats and then allocates (it removes
# its temporary directories) inside the signal handler, so a signal that lands while the fuzzer
# holds the allocator's lock can hang it there; one CI run saw that (stats printed, no exit in
# 5 s). SIGUSR1 only sets a flag; the fuzzing loop sees it after the current input, prints the
# stats and exits 0 outside any signal handler. (Leaks are still caught per input, as before.)
set -euo pipefail
fuzzer=$1 seconds=$2 work=$3 seeds=$4
mkdir -p "$work/corpus"
ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} "$fuzzer" -max_total_time="$((seconds * 30))" \
    -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 -artifact_prefix="$work/" \
    "$work/corpus" "$seeds" 2>"$work/log" &
pid=$!
tck=$(getconf CLK_TCK)
budget=$((seconds * tck))
stopped=0
while kill -0 "$pid" 2>/dev/null; do
    # Fields 14 and 15 of /proc/PID/stat (utime, stime) in clock ticks; the command name (field 2)
    # is cut off first, as it may hold spaces.
    stat=$(cat "/proc/$pid/stat" 2>/dev/null) || break
    read -r -a f <<<"${stat##*) }"
    if [ $((f[11] + f[12])) -ge "$budget" ]; then
        kill -USR1 "$pid" 2>/dev/null || true
        stopped=1
        # libFuzzer stops after the input it is running (-timeout=10 bounds that); one that has
        # not exited after 30 s is killed, and the smoke fails.
        for _ in $(seq 300); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        if kill -0 "$pid" 2>/dev/null; then
            kill -KILL "$pid" 2>/dev/null || true
            stopped=hung
        fi
        break
    fi
    sleep 0.2
done
rc=0
wait "$pid" || rc=$?
if [ "$rc" -ne 0 ] || [ "$stopped" = hung ]; then
    [ "$stopped" != hung ] || echo "run_fuzz.sh: $fuzzer did not exit on SIGUSR1 (killed)"
    tail -60 "$work/log"
    exit 1
fi
grep -E '^stat::(number_of_executed_units|average_exec_per_sec|new_units_added)' "$work/log"
echo "cpu_seconds: $seconds (stopped at the budget: $([ "$stopped" = 1 ] && echo yes || echo no))"
