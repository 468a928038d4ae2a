#!/usr/bin/env bash
# run_fuzz.sh FUZZER SECONDS WORKDIR SEEDS - fuzzes for SECONDS from the committed seeds.
# New corpus entries and crash artifacts go to WORKDIR (the build tree), never the source tree.
# Prints libFuzzer's final stats (exec count) and fails on any finding.
set -euo pipefail
fuzzer=$1 seconds=$2 work=$3 seeds=$4
mkdir -p "$work/corpus"
ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} "$fuzzer" -max_total_time="$seconds" \
    -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 -artifact_prefix="$work/" \
    "$work/corpus" "$seeds" 2>"$work/log" || { tail -60 "$work/log"; exit 1; }
grep -E '^stat::(number_of_executed_units|average_exec_per_sec|new_units_added)' "$work/log"
