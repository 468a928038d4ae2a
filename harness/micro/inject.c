/*
 * inject.c - deliberate regressions, so that the gate can be shown to catch real ones.
 *
 * H2B_INJECT_ALLOC=<instance name>: that benchmark makes one extra allocation (16 bytes,
 * malloc + free) per operation, inside the measured loop.
 * H2B_INJECT_SLOW=<instance name>: that benchmark does its work twice per operation.
 * H2B_INJECT_SLOW_PERCENT=P (1..1000, with H2B_INJECT_SLOW): instead of doing the work twice,
 * every call of the benchmark's loop is followed by a busy wait of P % of the time the call
 * took, in wall time and in CPU time alike, so each operation, and each latency sample, is P %
 * slower on either clock (25: a +25 % slowdown).
 * H2B_INJECT_INSTR=<instance name> with H2B_INJECT_INSTR_COUNT=C (1..10^9): that benchmark
 * executes C more instructions per operation (h2b_cpu_burn_instructions, exact on x86-64), so
 * `h2bench gate --calibrate` can ask for +1 % of an instruction ceiling. Without a valid count
 * nothing is injected: there is no sensible default size for "more instructions".
 * Rejected for P: repeating the work for P % of the calls (n/4 extra calls): ns/op grows by
 * P %, but one sample in four doubles, so p99 would double too; that is a different regression.
 *
 * The variables are read when the registry builds its instances (forks inherit them), and only
 * the named instance is wrapped: its bench struct is replaced by a copy whose fn calls the
 * original. Nothing changes when they are unset. Used by tests/integration/gate_inject.sh and
 * the A/B power measurements of docs/gates.md.
 * Rejected: a build option; one binary that can show both regressions on demand keeps the test
 * short and the release build identical to the one CI gates.
 */
#include "core/clock.h"
#include "core/cpu.h"
#include "core/cli.h"
#include "core/error.h"
#include "micro/runner.h"

#include <stdlib.h>
#include <string.h>

static struct h2b_micro_bench alloc_bench, slow_bench, instr_bench;
static h2b_micro_fn alloc_orig, slow_orig, instr_orig;
static uint64_t slow_percent; /* 0: twice the work */
static uint64_t instr_count;  /* instructions added per operation */

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
    if (slow_percent == 0) {
        slow_orig(st, n);
        slow_orig(st, n);
        return;
    }
    uint64_t t0 = h2b_clock_now_ns(), c0 = h2b_clock_thread_cpu_ns();
    slow_orig(st, n);
    uint64_t t1 = h2b_clock_now_ns(), c1 = h2b_clock_thread_cpu_ns();
    uint64_t until = t1 + (t1 - t0) * slow_percent / 100;
    uint64_t cpu_until = c1 + (c1 - c0) * slow_percent / 100;
    /* Both clocks: the wait must add P % of the call's wall time (what ns/op and the latency
     * samples see) and P % of its CPU time (what a CPU-time comparison sees, such as Google
     * Benchmark's compare.py). On wall time alone, a wait preempted by other work used less CPU
     * than that: export.sh saw +49.9 % CPU for +200 % in a busy CI run. */
    while (h2b_clock_now_ns() < until || h2b_clock_thread_cpu_ns() < cpu_until)
        h2b_micro_clobber();
}

static void instr_fn(struct h2b_micro_state *st, uint64_t n)
{
    instr_orig(st, n);
    h2b_cpu_burn_instructions(instr_count * n);
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
        const char *pct = getenv("H2B_INJECT_SLOW_PERCENT");
        uint64_t p = 0;
        if (pct && pct[0] && h2b_cli_parse_u64(pct, 1, 1000, &p) != H2B_OK)
            p = 0; /* an unparsable percentage keeps the documented default: twice the work */
        slow_percent = p;
        slow_bench = *b;
        slow_orig = b->fn;
        slow_bench.fn = slow_fn;
        b = &slow_bench;
    }
    const char *count = getenv("H2B_INJECT_INSTR_COUNT");
    uint64_t c = 0;
    if (named("H2B_INJECT_INSTR", name) && count &&
        h2b_cli_parse_u64(count, 1, 1000000000, &c) == H2B_OK) {
        instr_count = c;
        instr_bench = *b;
        instr_orig = b->fn;
        instr_bench.fn = instr_fn;
        b = &instr_bench;
    }
    return b;
}
