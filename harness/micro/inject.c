/*
 * inject.c - deliberate regressions, so that the gate can be shown to catch real ones.
 *
 * H2B_INJECT_ALLOC=<instance name>: that benchmark makes one extra allocation (16 bytes,
 * malloc + free) per operation, inside the measured loop.
 * H2B_INJECT_SLOW=<instance name>: that benchmark does its work twice per operation.
 *
 * The variables are read when the registry builds its instances (forks inherit them), and only
 * the named instance is wrapped: its bench struct is replaced by a copy whose fn calls the
 * original. Nothing changes when they are unset. Used by tests/integration/gate_inject.sh.
 * Rejected: a build option; one binary that can show both regressions on demand keeps the test
 * short and the release build identical to the one CI gates.
 */
#include "runner.h"

#include <stdlib.h>
#include <string.h>

static struct h2b_micro_bench alloc_bench, slow_bench;
static h2b_micro_fn alloc_orig, slow_orig;

static void alloc_fn(struct h2b_micro_state *st, uint64_t n)
{
    alloc_orig(st, n);
    for (uint64_t i = 0; i < n; i++) {
        void *p = malloc(16);
        H2B_MICRO_KEEP(p);
        free(p);
    }
}

static void slow_fn(struct h2b_micro_state *st, uint64_t n)
{
    slow_orig(st, n);
    slow_orig(st, n);
}

static bool named(const char *var, const char *name)
{
    const char *v = getenv(var);
    return v && strcmp(v, name) == 0;
}

const struct h2b_micro_bench *h2b__micro_inject(const struct h2b_micro_bench *b, const char *name)
{
    if (named("H2B_INJECT_ALLOC", name)) {
        alloc_bench = *b;
        alloc_orig = b->fn;
        alloc_bench.fn = alloc_fn;
        b = &alloc_bench;
    }
    if (named("H2B_INJECT_SLOW", name)) {
        slow_bench = *b;
        slow_orig = b->fn;
        slow_bench.fn = slow_fn;
        b = &slow_bench;
    }
    return b;
}
