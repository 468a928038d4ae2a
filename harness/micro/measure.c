/*
 * measure.c - the passes of one benchmark instance, run in the current process (one fork).
 *
 * Each pass has its own iteration plan, so instrumentation never disturbs timing:
 *   warm-up   doubling batches until the warm-up time has passed (and at least 100 us of work),
 *             which also estimates the cost of one call;
 *   time      epochs of n calls timed as a whole (the clock is read twice per epoch, never per
 *             call); n = epoch target / estimated cost, +0..20% random jitter so epochs do not
 *             alias with periodic noise (nanobench); ns/op is the median of epochs;
 *   sample    per-call latency into a histogram; calls cheaper than 20x the clock's own cost are
 *             timed in batches of b calls and recorded as batch time / b (JMH's batch size);
 *   alloc     the counting allocator armed around n and then 4n calls, each after a fresh setup,
 *             so one-time costs (lazy initialisation inside a run) cancel in the difference:
 *             allocs/op = (allocs(4n) - allocs(n)) / 3n, exact; a second repeat must agree;
 *   instr     perf_event_open(instructions:u) around n and 4n calls, same difference; where the
 *             machine has no counters the reason is kept and the value is null.
 * Setup and teardown run outside every measured region. The callgrind pass
 * (h2b__micro_measure_callgrind) runs under valgrind, where timing is meaningless, so it only
 * brackets n and 4n calls with callgrind client requests; the parent reads the dumps.
 */
#include "core/clock.h"
#include "core/rand.h"
#include "core/env.h"
#include "core/error.h"
#include "micro/runner.h"

#include "core/alloc.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <valgrind/callgrind.h>

struct h2b_micro_state {
    const struct h2b_micro_instance *inst;
    void *data;
    bool failed;
    char reason[H2B_MICRO_REASON_MAX];
};

int h2b__micro_fork_index;

int h2b_micro_fork_index(const struct h2b_micro_state *st)
{
    (void)st;
    return h2b__micro_fork_index;
}

int64_t h2b_micro_param(const struct h2b_micro_state *st)
{
    return st->inst->param;
}

void *h2b_micro_arg(const struct h2b_micro_state *st)
{
    return st->inst->bench->arg;
}

void h2b_micro_set_data(struct h2b_micro_state *st, void *data)
{
    st->data = data;
}

void *h2b_micro_data(const struct h2b_micro_state *st)
{
    return st->data;
}

const char *h2b_micro_name(const struct h2b_micro_state *st)
{
    return st->inst->name;
}

void h2b_micro_fail(struct h2b_micro_state *st, const char *fmt, ...)
{
    if (st->failed)
        return; /* keep the first reason */
    st->failed = true;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(st->reason, sizeof st->reason, fmt, ap);
    va_end(ap);
}

static void set_reason(struct h2b_micro_maybe *m, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void set_reason(struct h2b_micro_maybe *m, const char *fmt, ...)
{
    m->available = false;
    m->value = 0;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(m->reason, sizeof m->reason, fmt, ap);
    va_end(ap);
}

static void set_value(struct h2b_micro_maybe *m, double v)
{
    m->available = true;
    m->value = v;
    m->reason[0] = '\0';
}

void h2b__micro_fork_init(struct h2b_micro_fork *f)
{
    memset(f, 0, sizeof *f);
    set_reason(&f->allocs_per_op, "not measured");
    set_reason(&f->bytes_per_op, "not measured");
    set_reason(&f->instructions_per_op, "not measured");
}

void h2b__micro_fork_free(struct h2b_micro_fork *f)
{
    h2b_hist_del(f->hist);
    f->hist = NULL;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

uint64_t h2b__micro_timer_overhead_ns(void)
{
    enum { N = 1001 };
    uint64_t d[N];
    for (int i = 0; i < N; i++) {
        uint64_t t0 = h2b_clock_now_ns();
        uint64_t t1 = h2b_clock_now_ns();
        d[i] = t1 - t0;
    }
    qsort(d, N, sizeof d[0], cmp_u64);
    return d[N / 2];
}

/* setup (untimed); false if it failed. */
static bool begin(struct h2b_micro_state *st)
{
    st->data = NULL;
    const struct h2b_micro_bench *b = st->inst->bench;
    if (b->setup && b->setup(st) != 0 && !st->failed)
        h2b_micro_fail(st, "setup failed");
    return !st->failed;
}

static void end(struct h2b_micro_state *st)
{
    const struct h2b_micro_bench *b = st->inst->bench;
    if (b->teardown)
        b->teardown(st);
    st->data = NULL;
}

/* Warm-up; returns the estimated ns per call (> 0). */
static double warm_up(struct h2b_micro_state *st, uint64_t warmup_ns)
{
    const uint64_t min_work_ns = 100 * H2B_NS_PER_US;
    uint64_t n = 1, start = h2b_clock_now_ns();
    double est = 1;
    for (;;) {
        uint64_t t0 = h2b_clock_now_ns();
        st->inst->bench->fn(st, n);
        uint64_t t1 = h2b_clock_now_ns();
        if (st->failed)
            return 1;
        est = (double)(t1 - t0) / (double)n;
        if (est <= 0)
            est = 0.25; /* below the clock's resolution */
        if (t1 - start >= warmup_ns && t1 - t0 >= min_work_ns)
            break;
        if (n < (UINT64_C(1) << 40))
            n *= 2;
    }
    return est;
}

static uint64_t calls_for(double ns_per_call, uint64_t target_ns, uint64_t min, uint64_t max)
{
    double n = (double)target_ns / ns_per_call;
    if (n < (double)min)
        return min;
    if (n > (double)max)
        return max;
    return (uint64_t)n;
}

static void time_pass(struct h2b_micro_state *st, const struct h2b_micro_config *cfg, double *est,
                      struct h2b_micro_fork *f)
{
    const struct h2b_micro_instance *in = st->inst;
    unsigned epochs = cfg->epochs ? cfg->epochs : 1;
    if (epochs > H2B_MICRO_MAX_EPOCHS)
        epochs = H2B_MICRO_MAX_EPOCHS;
    uint64_t target = cfg->time_ns / epochs;
    if (target == 0)
        target = 1;
    uint64_t rng = cfg->seed ^ ((uint64_t)getpid() << 32) ^ 0x9e3779b97f4a7c15ULL;
    uint64_t start = h2b_clock_now_ns(), cpu_total = 0, wall_total = 0;
    f->epochs = 0;
    f->ops = 0;
    for (unsigned e = 0; e < epochs; e++) {
        double jitter = 1.0 + 0.2 * (double)(h2b_rand_xorshift64(&rng) >> 11) / 9007199254740992.0;
        uint64_t n = calls_for(*est / jitter, target, 1, UINT64_C(1) << 40);
        uint64_t c0 = h2b_clock_thread_cpu_ns();
        uint64_t t0 = h2b_clock_now_ns();
        in->bench->fn(st, n);
        uint64_t t1 = h2b_clock_now_ns();
        uint64_t c1 = h2b_clock_thread_cpu_ns();
        if (st->failed)
            return;
        double ops = (double)n * (double)in->ops_per_call;
        f->epoch_ns_per_op[f->epochs++] = (double)(t1 - t0) / ops;
        f->ops += n * in->ops_per_call;
        wall_total += t1 - t0;
        cpu_total += c1 - c0;
        if (t1 > t0)
            *est = (double)(t1 - t0) / (double)n;
        /* a call much longer than an epoch must not stretch the pass without bound */
        if (e >= 2 && t1 - start > 3 * cfg->time_ns)
            break;
    }
    f->cpu_ns_per_op = f->ops ? (double)cpu_total / (double)f->ops : 0;
    (void)wall_total;
}

static int sample_pass(struct h2b_micro_state *st, const struct h2b_micro_config *cfg, double est,
                       struct h2b_micro_fork *f)
{
    const struct h2b_micro_instance *in = st->inst;
    int rc = h2b_hist_new_default(&f->hist);
    if (rc != H2B_OK)
        return rc;
    f->timer_overhead_ns = h2b__micro_timer_overhead_ns();
    /* batch until the two clock reads are at most 5% of what a sample measures */
    uint64_t b = 1;
    bool per_call = cfg->sample_per_call || in->bench->sample_per_call;
    while (!per_call && (double)b * est < 20.0 * (double)f->timer_overhead_ns && b < 65536)
        b *= 2;
    f->batch = b;
    uint64_t per_sample_ops = b * in->ops_per_call;
    uint64_t deadline = h2b_clock_now_ns() + cfg->time_ns, t1;
    uint64_t samples = 0;
    do {
        uint64_t t0 = h2b_clock_now_ns();
        in->bench->fn(st, b);
        t1 = h2b_clock_now_ns();
        h2b_hist_record(f->hist, (t1 - t0 + per_sample_ops / 2) / per_sample_ops);
        samples++;
    } while (t1 < deadline && !st->failed && samples < 100000000);
    return H2B_OK;
}

/* The allocation and instruction passes measure n and 4n calls with a fixed n, the same in every
 * fork and every run: work that recurs every k ops (a WINDOW_UPDATE every 32 requests) then
 * contributes the same fraction everywhere, so forks agree exactly. 4n = 256 calls keeps the
 * slowest suite benchmark (a few hundred us per call) well under a second. */
#define MARGINAL_CALLS 64

/* One armed run of calls; false if the benchmark failed. */
static bool alloc_run(struct h2b_micro_state *st, uint64_t calls, struct h2b_alloc_stats *s)
{
    if (!begin(st))
        return false;
    h2b_alloc_reset();
    h2b_alloc_arm();
    st->inst->bench->fn(st, calls);
    h2b_alloc_disarm();
    h2b_alloc_read(s);
    end(st);
    return !st->failed;
}

static void alloc_pass(struct h2b_micro_state *st, struct h2b_micro_fork *f)
{
    if (!h2b_alloc_counting_available()) {
#ifdef H2B_SANITIZED
        const char *why = "sanitizer build: the sanitizer owns malloc";
#else
        const char *why = "the counting allocator is not linked into this executable";
#endif
        set_reason(&f->allocs_per_op, "allocation counting unavailable: %s", why);
        set_reason(&f->bytes_per_op, "allocation counting unavailable: %s", why);
        return;
    }
    uint64_t n = MARGINAL_CALLS;
    double ops = 3.0 * (double)n * (double)st->inst->ops_per_call;
    double allocs[2] = {0, 0}, bytes[2] = {0, 0};
    for (int rep = 0; rep < 2; rep++) {
        struct h2b_alloc_stats a, b;
        if (!alloc_run(st, n, &a) || !alloc_run(st, 4 * n, &b))
            return;
        allocs[rep] = ((double)b.allocs - (double)a.allocs) / ops;
        bytes[rep] = ((double)b.bytes - (double)a.bytes) / ops;
    }
    set_value(&f->allocs_per_op, allocs[0]);
    set_value(&f->bytes_per_op, bytes[0]);
    f->alloc_deterministic = allocs[0] == allocs[1] && bytes[0] == bytes[1];
}

/* An instructions:u counter, or -1 with the reason (h2b_env_perf_counters explains it). */
static int perf_open(char *reason, size_t size)
{
    struct perf_event_attr a;
    memset(&a, 0, sizeof a);
    a.type = PERF_TYPE_HARDWARE;
    a.size = sizeof a;
    a.config = PERF_COUNT_HW_INSTRUCTIONS;
    a.disabled = 1;
    a.exclude_kernel = 1;
    a.exclude_hv = 1;
    int fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
    if (fd >= 0)
        return fd;
    char why[H2B_MICRO_REASON_MAX - 64];
    h2b_env_perf_counters(why, sizeof why);
    snprintf(reason, size, "%s; --callgrind gives deterministic counts", why);
    return -1;
}

static bool perf_run(struct h2b_micro_state *st, int fd, uint64_t calls, uint64_t *count)
{
    ioctl(fd, PERF_EVENT_IOC_RESET, 0);
    ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
    st->inst->bench->fn(st, calls);
    ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
    return read(fd, count, sizeof *count) == (ssize_t)sizeof *count && !st->failed;
}

static void instr_pass(struct h2b_micro_state *st, struct h2b_micro_fork *f)
{
    char reason[H2B_MICRO_REASON_MAX];
    int fd = perf_open(reason, sizeof reason);
    if (fd < 0) {
        set_reason(&f->instructions_per_op, "%s", reason);
        return;
    }
    uint64_t n = MARGINAL_CALLS, a = 0, b = 0;
    if (begin(st)) {
        bool ok = perf_run(st, fd, n, &a) && perf_run(st, fd, 4 * n, &b);
        end(st);
        if (ok && b >= a)
            set_value(&f->instructions_per_op,
                      (double)(b - a) / (3.0 * (double)n * (double)st->inst->ops_per_call));
        else if (!st->failed)
            set_reason(&f->instructions_per_op, "perf counter read failed");
    }
    close(fd);
}

int h2b__micro_measure(const struct h2b_micro_instance *inst, const struct h2b_micro_config *cfg,
                       struct h2b_micro_fork *f)
{
    struct h2b_micro_state st = {.inst = inst};
    int rc = H2B_OK;
    f->pid = (long)getpid();
    if (!begin(&st))
        goto out_fail;
    double est = warm_up(&st, cfg->warmup_ns);
    if (!st.failed)
        time_pass(&st, cfg, &est, f);
    if (!st.failed)
        rc = sample_pass(&st, cfg, est, f);
    end(&st);
    if (rc != H2B_OK || st.failed)
        goto out_fail;
    alloc_pass(&st, f);
    if (!st.failed)
        instr_pass(&st, f);
out_fail:
    if (st.failed)
        snprintf(f->error, sizeof f->error, "%s", st.reason);
    return rc;
}

int h2b__micro_measure_callgrind(const struct h2b_micro_instance *inst, uint64_t calls,
                                 struct h2b_micro_fork *f)
{
    struct h2b_micro_state st = {.inst = inst};
    f->pid = (long)getpid();
    if (!RUNNING_ON_VALGRIND) {
        snprintf(f->error, sizeof f->error, "the callgrind pass must run under valgrind");
        return H2B_OK;
    }
    if (!begin(&st))
        goto out;
    /* one uninstrumented call first: lazy symbol binding and first-touch work stay out */
    inst->bench->fn(&st, 1);
    CALLGRIND_START_INSTRUMENTATION;
    CALLGRIND_ZERO_STATS;
    inst->bench->fn(&st, calls);
    CALLGRIND_DUMP_STATS_AT("h2bench-n");
    inst->bench->fn(&st, 4 * calls);
    CALLGRIND_DUMP_STATS_AT("h2bench-4n");
    CALLGRIND_STOP_INSTRUMENTATION;
    end(&st);
out:
    if (st.failed)
        snprintf(f->error, sizeof f->error, "%s", st.reason);
    return H2B_OK;
}
