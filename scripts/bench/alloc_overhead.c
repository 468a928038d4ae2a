/*
 * alloc_overhead.c - what the counting allocator costs per malloc/free pair.
 *
 * Built twice from this file: bench_alloc_plain (glibc alone) and bench_alloc_counting (linked
 * with h2bench::alloc). Each run does ITERS malloc/free pairs over a few small sizes, REPS times,
 * and prints the best ns per pair for each mode it supports: "disarmed" (the interposer is in the
 * path, counting off: the cost every h2bench process pays) and, in the counting build, "armed".
 * alloc_overhead.sh runs the two executables alternately on one CPU and reports the ratio, and
 * counts instructions per pair under callgrind (--mode runs a single mode for that).
 * Compiled with -fno-builtin so the pairs are not folded away.
 */
#include "core/clock.h"
#include "core/cli.h"
#include "core/cpu.h"
#ifdef H2B_BENCH_COUNTING
#include "core/alloc.h"
#endif

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *volatile sink;

static double run_pairs(uint64_t iters)
{
    static const size_t sizes[] = {16, 48, 64, 128, 256, 24, 512, 32};
    uint64_t t0 = h2b_clock_now_ns();
    for (uint64_t i = 0; i < iters; i++) {
        void *p = malloc(sizes[i & 7]);
        sink = p;
        free(p);
    }
    return (double)(h2b_clock_now_ns() - t0) / (double)iters;
}

static double best_of(uint64_t iters, uint64_t reps)
{
    double best = 1e300;
    for (uint64_t r = 0; r < reps; r++) {
        double ns = run_pairs(iters);
        if (ns < best)
            best = ns;
    }
    return best;
}

int main(int argc, char **argv)
{
    uint64_t iters = 2000000, reps = 5, cpu = 1;
    const char *only = NULL; /* --mode: run just this mode (for instruction counting) */
    for (int i = 1; i < argc; i++) {
        int rv = -1;
        if (strcmp(argv[i], "--iters") == 0 && i + 1 < argc)
            rv = h2b_cli_parse_u64(argv[++i], 1, 1000000000, &iters);
        else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc)
            rv = h2b_cli_parse_u64(argv[++i], 1, 1000, &reps);
        else if (strcmp(argv[i], "--cpu") == 0 && i + 1 < argc)
            rv = h2b_cli_parse_u64(argv[++i], 0, 1023, &cpu);
        else if (strcmp(argv[i], "--mode") == 0 && i + 1 < argc && (only = argv[++i]))
            rv = 0;
        if (rv != 0) {
            fprintf(stderr, "usage: %s [--iters N] [--reps N] [--cpu N] [--mode MODE]\n", argv[0]);
            return 2;
        }
    }
    if (h2b_cpu_pin_self_to((int)cpu) != 0)
        fprintf(stderr, "warning: cannot pin to CPU %d, running unpinned\n", (int)cpu);
    (void)best_of(iters / 10 + 1, 1); /* warm the heap and the caches */
    bool ran = false;
#ifdef H2B_BENCH_COUNTING
    if (!h2b_alloc_counting_available()) {
        fprintf(stderr, "counting allocator unavailable in this build\n");
        return 3;
    }
    if (only == NULL || strcmp(only, "disarmed") == 0) {
        printf("disarmed %.3f\n", best_of(iters, reps));
        ran = true;
    }
    if (only == NULL || strcmp(only, "armed") == 0) {
        h2b_alloc_reset();
        h2b_alloc_arm();
        double armed = best_of(iters, reps);
        h2b_alloc_disarm();
        struct h2b_alloc_stats s;
        h2b_alloc_read(&s);
        printf("armed %.3f\n", armed);
        printf("counted %llu\n", (unsigned long long)s.allocs);
        ran = true;
    }
#else
    if (only == NULL || strcmp(only, "plain") == 0) {
        printf("plain %.3f\n", best_of(iters, reps));
        ran = true;
    }
#endif
    if (!ran) {
        fprintf(stderr, "mode '%s' is not available in this build\n", only);
        return 2;
    }
    return 0;
}
