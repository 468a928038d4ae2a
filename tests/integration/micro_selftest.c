/*
 * micro_selftest.c - benchmarks with known truth, built as a user's benchmark executable would
 * be (H2B_MICRO_BENCH + h2b_micro_main); tests/integration/micro.sh checks what the runner
 * reports for them.
 *
 *   selftest/alloc-3x64    three 64-byte blocks allocated (and freed) per op: 3 allocs, 192 B
 *   selftest/alloc-none    arithmetic only: 0 and 0
 *   selftest/alloc-lazy    a process-wide cache allocated on the first call ever and a
 *                          per-run buffer allocated on the first call after setup: 0 and 0
 *   selftest/bimodal       ~5 us per op, every 64th op (1.6%) ~200 us: p50 fast, p99 slow
 *   selftest/tiny          a few arithmetic instructions (the callgrind determinism check)
 *   selftest/fails         reports a failure (exit 3)
 *   selftest/observe       cheap; its setup appends "fork=<h2b_micro_fork_index()> env=<value of
 *                          H2B_SELFTEST_ENV> pad=<1 if H2B_MICRO_ENV_PAD is set>" to the file
 *                          $H2B_SELFTEST_LOG names (when set): what a fork sees
 *   selftest/per-call      cheap, with .sample_per_call: the sample pass must not batch it
 * Built with -fno-builtin so malloc/free pairs cannot be folded away.
 */
#include "h2bench/micro.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static void alloc_3x64(struct h2b_micro_state *st, uint64_t n)
{
    (void)st;
    for (uint64_t i = 0; i < n; i++) {
        void *a = malloc(64), *b = malloc(64), *c = malloc(64);
        h2b_micro_escape(a);
        h2b_micro_escape(b);
        h2b_micro_escape(c);
        free(c);
        free(b);
        free(a);
    }
}
H2B_MICRO_BENCH(alloc_3x64, .name = "selftest/alloc-3x64", .fn = alloc_3x64)

static void alloc_none(struct h2b_micro_state *st, uint64_t n)
{
    (void)st;
    uint64_t x = 88172645463325252ULL;
    for (uint64_t i = 0; i < n; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        H2B_MICRO_KEEP(x);
    }
}
H2B_MICRO_BENCH(alloc_none, .name = "selftest/alloc-none", .fn = alloc_none)

static char *global_cache;

static int lazy_setup(struct h2b_micro_state *st)
{
    h2b_micro_set_data(st, NULL);
    return 0;
}

static void lazy_teardown(struct h2b_micro_state *st)
{
    free(h2b_micro_data(st));
}

static void alloc_lazy(struct h2b_micro_state *st, uint64_t n)
{
    if (!global_cache)
        global_cache = calloc(1, 4096);
    if (!h2b_micro_data(st))
        h2b_micro_set_data(st, malloc(1024));
    char *buf = h2b_micro_data(st);
    for (uint64_t i = 0; i < n; i++) {
        buf[i % 1024] = global_cache[i % 4096];
        h2b_micro_escape(buf);
    }
}
H2B_MICRO_BENCH(alloc_lazy, .name = "selftest/alloc-lazy", .fn = alloc_lazy, .setup = lazy_setup,
                .teardown = lazy_teardown)

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void spin(uint64_t ns)
{
    uint64_t end = now_ns() + ns;
    while (now_ns() < end) {
    }
}

static void bimodal(struct h2b_micro_state *st, uint64_t n)
{
    static uint64_t op;
    (void)st;
    for (uint64_t i = 0; i < n; i++)
        spin(++op % 64 == 0 ? 200000 : 5000);
}
H2B_MICRO_BENCH(bimodal, .name = "selftest/bimodal", .fn = bimodal)

static void tiny(struct h2b_micro_state *st, uint64_t n)
{
    (void)st;
    uint64_t x = 1;
    for (uint64_t i = 0; i < n; i++) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        H2B_MICRO_KEEP(x);
    }
}
H2B_MICRO_BENCH(tiny, .name = "selftest/tiny", .fn = tiny)

static void fails(struct h2b_micro_state *st, uint64_t n)
{
    (void)n;
    h2b_micro_fail(st, "deliberate failure");
}
H2B_MICRO_BENCH(fails, .name = "selftest/fails", .fn = fails)

int main(int argc, char **argv)
{
    return h2b_micro_main(argc, argv);
}

static void cheap(struct h2b_micro_state *st, uint64_t n)
{
    (void)st;
    uint64_t x = 1;
    for (uint64_t i = 0; i < n; i++) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        H2B_MICRO_KEEP(x);
    }
}

static int observe_setup(struct h2b_micro_state *st)
{
    const char *log = getenv("H2B_SELFTEST_LOG"), *env = getenv("H2B_SELFTEST_ENV");
    FILE *f = log ? fopen(log, "a") : NULL;
    if (f) {
        fprintf(f, "fork=%d env=%s pad=%d\n", h2b_micro_fork_index(st), env ? env : "-",
                getenv("H2B_MICRO_ENV_PAD") ? 1 : 0);
        fclose(f);
    }
    return 0;
}
H2B_MICRO_BENCH(observe, .name = "selftest/observe", .fn = cheap, .setup = observe_setup)
H2B_MICRO_BENCH(per_call, .name = "selftest/per-call", .fn = cheap, .sample_per_call = 1)
