#!/usr/bin/env bash
# alloc_overhead.sh - cost of the counting allocator per malloc/free pair, side by side.
#
#   scripts/bench/alloc_overhead.sh [BIN_DIR] [ROUNDS]
#
# Runs bench_alloc_plain (glibc) and bench_alloc_counting (h2bench::alloc linked in) alternately,
# ROUNDS times each, pinned to CPU 1, and prints the best ns/pair of each and the ratios. Then,
# because a shared machine makes nanoseconds noisy, it counts instructions per pair exactly with
# callgrind: (instructions at 2N pairs - instructions at N pairs) / N cancels start-up and exit.
# Use a Release build (build/bin): the numbers of other builds mean nothing.
set -euo pipefail
bin=${1:-build/bin}
rounds=${2:-5}
for b in bench_alloc_plain bench_alloc_counting; do
  [[ -x $bin/$b ]] || { echo "missing $bin/$b: build the release preset first" >&2; exit 2; }
done
best() { sort -g | head -1; }
plain=() disarmed=() armed=()
for ((r = 0; r < rounds; r++)); do
  plain+=("$("$bin"/bench_alloc_plain --cpu 1 | awk '$1 == "plain" {print $2}')")
  out=$("$bin"/bench_alloc_counting --cpu 1)
  disarmed+=("$(awk '$1 == "disarmed" {print $2}' <<<"$out")")
  armed+=("$(awk '$1 == "armed" {print $2}' <<<"$out")")
done
p=$(printf '%s\n' "${plain[@]}" | best)
d=$(printf '%s\n' "${disarmed[@]}" | best)
a=$(printf '%s\n' "${armed[@]}" | best)
echo "malloc+free pair, best of $rounds alternating rounds on CPU 1 (ns/pair):"
echo "  glibc alone:           $p   (all rounds: ${plain[*]})"
echo "  interposer, disarmed:  $d   (all rounds: ${disarmed[*]})"
echo "  interposer, armed:     $a   (all rounds: ${armed[*]})"
awk -v p="$p" -v d="$d" -v a="$a" 'BEGIN {
  printf "disarmed overhead: %+.2f ns/pair (ratio %.3f)\n", d - p, d / p
  printf "armed overhead:    %+.2f ns/pair (ratio %.3f)\n", a - p, a / p }'

if ! command -v valgrind >/dev/null; then
  echo "valgrind not installed: no instruction counts"
  exit 0
fi
# Instructions of one run, all threads, as callgrind's "Collected" total.
ir() {
  valgrind --tool=callgrind --callgrind-out-file=/dev/null "$bin/$1" --mode "$2" --iters "$3" \
    --reps 1 --cpu 1 2>&1 >/dev/null | awk '/Collected :/ {print $4}'
}
n=100000
per_pair() { # binary mode -> instructions per malloc/free pair (warm-up adds n/10 pairs)
  local a b
  a=$(ir "$1" "$2" $n)
  b=$(ir "$1" "$2" $((2 * n)))
  awk -v a="$a" -v b="$b" -v n=$n 'BEGIN { printf "%.2f", (b - a) / (n + n / 10) }'
}
ip=$(per_pair bench_alloc_plain plain)
id=$(per_pair bench_alloc_counting disarmed)
ia=$(per_pair bench_alloc_counting armed)
echo "instructions per malloc+free pair (callgrind, exact):"
echo "  glibc alone: $ip   disarmed: $id   armed: $ia"
awk -v p="$ip" -v d="$id" -v a="$ia" 'BEGIN {
  printf "disarmed: %+.2f instructions/pair; armed: %+.2f instructions/pair\n", d - p, a - p }'
