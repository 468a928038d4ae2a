/*
 * test_micro.c - the micro runner's internals: registry expansion of params, the median, a
 * fork's numbers surviving the JSON trip between processes, and merging forks (percentiles from
 * merged histograms, never averaged; allocation agreement; null metrics keep their reason).
 */
#include "core/error.h"
#include "micro/runner.h"
#include "core/stats.h"
#include "test.h"

#include <math.h>

static void noop(struct h2b_micro_state *st, uint64_t n)
{
    (void)st;
    (void)n;
}
H2B_MICRO_BENCH(plain, .name = "t/plain", .fn = noop)
H2B_MICRO_BENCH(param, .name = "t/param", .fn = noop, .params = "1,64", .ops_per_call = 4)

static void test_registry(void)
{
    CHECK_EQ_INT(h2b__micro_registry_load(), H2B_OK);
    CHECK_EQ_U64(h2b__micro_instance_count(), 3);
    const struct h2b_micro_instance *p = h2b__micro_find("t/param/64");
    CHECK(p != NULL);
    if (p) {
        CHECK_EQ_INT(p->param, 64);
        CHECK_EQ_U64(p->ops_per_call, 4);
    }
    CHECK(h2b__micro_find("t/param") == NULL);
    const struct h2b_micro_instance *q = h2b__micro_find("t/plain");
    CHECK(q != NULL && q->ops_per_call == 1 && q->param == 0);
}

static void test_median(void)
{
    double odd[] = {5, 1, 3};
    double even[] = {4, 1, 3, 2};
    CHECK(h2b_stats_median(odd, 3) == 3);
    CHECK(h2b_stats_median(even, 4) == 2.5);
    CHECK(isnan(h2b_stats_median(NULL, 0))); /* core's one rule: no values, no median */
    /* median_of leaves its input alone and sorts the scratch copy */
    const double in[] = {9, 7, 8, 1};
    double tmp[4];
    CHECK(h2b_stats_median_of(in, 4, tmp) == 7.5);
    CHECK(in[0] == 9 && in[3] == 1 && tmp[0] == 1 && tmp[3] == 9);
    CHECK(isnan(h2b_stats_median_of(in, 0, tmp)));
    /* quantiles interpolate between order statistics; the ends are the min and max */
    const double sorted[] = {1, 2, 3, 4, 5};
    CHECK(h2b_stats_quantile_sorted(sorted, 5, 0) == 1);
    CHECK(h2b_stats_quantile_sorted(sorted, 5, 1) == 5);
    CHECK(h2b_stats_quantile_sorted(sorted, 5, 0.5) == 3);
    CHECK(h2b_stats_quantile_sorted(sorted, 5, 0.125) == 1.5);
    CHECK(isnan(h2b_stats_quantile_sorted(sorted, 0, 0.5)));
}

/* A fork whose sample histogram holds count values of v. */
static void fake_fork(struct h2b_micro_fork *f, long pid, uint64_t v, uint64_t count, double ns,
                      double allocs)
{
    h2b__micro_fork_init(f);
    f->pid = pid;
    f->epochs = 3;
    f->epoch_ns_per_op[0] = ns;
    f->epoch_ns_per_op[1] = ns * 1.1;
    f->epoch_ns_per_op[2] = ns * 0.9;
    f->ops = 1000;
    f->cpu_ns_per_op = ns;
    h2b_hist_new_default(&f->hist);
    h2b_hist_record_n(f->hist, v, count);
    f->batch = 1;
    f->timer_overhead_ns = 25;
    f->allocs_per_op.available = f->bytes_per_op.available = true;
    f->allocs_per_op.value = allocs;
    f->bytes_per_op.value = allocs * 64;
    f->alloc_deterministic = true;
    snprintf(f->instructions_per_op.reason, sizeof f->instructions_per_op.reason, "no PMU");
}

static void test_json_roundtrip(void)
{
    struct h2b_micro_fork a, b;
    fake_fork(&a, 42, 1000, 7, 123.5, 3);
    json_t *j = h2b__micro_fork_to_json(&a);
    CHECK(j != NULL);
    h2b__micro_fork_init(&b);
    CHECK_EQ_INT(h2b__micro_fork_from_json(j, &b), H2B_OK);
    CHECK_EQ_INT(b.pid, 42);
    CHECK_EQ_U64(b.epochs, 3);
    CHECK(b.epoch_ns_per_op[1] == a.epoch_ns_per_op[1]); /* exact double round trip */
    CHECK(b.hist != NULL && b.hist->total == 7 && h2b_hist_percentile(b.hist, 50) >= 1000);
    CHECK(b.allocs_per_op.available && b.allocs_per_op.value == 3);
    CHECK(!b.instructions_per_op.available);
    CHECK_STR(b.instructions_per_op.reason, "no PMU");
    json_decref(j);
    h2b__micro_fork_free(&a);
    h2b__micro_fork_free(&b);
}

static void test_merge(void)
{
    static struct h2b_micro_result r;
    struct h2b_micro_instance inst = {.name = "t/merge", .ops_per_call = 1};
    r.inst = &inst;
    r.forks = 2;
    /* fork 0: 990 samples at 100 ns; fork 1: 10 samples at 10000 ns. Averaging per-fork p99s
     * would give ~5050 ns; the merged histogram puts p99 at 100 and p99.9 at 10000. */
    fake_fork(&r.fork[0], 1, 100, 990, 100, 3);
    fake_fork(&r.fork[1], 2, 10000, 10, 200, 3);
    CHECK_EQ_INT(h2b__micro_result_merge(&r), H2B_OK);
    CHECK_EQ_U64(r.samples, 1000);
    CHECK(r.p50 >= 100 && r.p50 < 102);
    CHECK(r.p99 >= 100 && r.p99 < 102);
    CHECK(r.p999 >= 9900 && r.p999 <= 10100);
    CHECK(r.ns_per_op == 145); /* median of {90,100,110,180,200,220} */
    CHECK(r.allocs_per_op.available && r.allocs_per_op.value == 3 && r.alloc_deterministic);
    CHECK(!r.instructions_per_op.available);
    json_t *e = h2b__micro_result_json(&r);
    CHECK(e != NULL);
    CHECK(json_is_null(json_object_get(e, "instructions_per_op")));
    CHECK(strstr(json_string_value(json_object_get(e, "note")), "no PMU") != NULL);
    CHECK_EQ_U64(json_array_size(json_object_get(e, "fork_p99_ns")), 2);
    /* 1000 samples: 10 above p99 (enough), 1 above p99.9 (not) */
    json_t *thin = json_object_get(e, "insufficient");
    CHECK_EQ_U64(json_array_size(thin), 1);
    CHECK_STR(json_string_value(json_array_get(thin, 0)), "p999_ns");
    json_decref(e);
    h2b__micro_result_free(&r);

    /* forks that disagree on allocations are not deterministic */
    memset(&r, 0, sizeof r);
    r.inst = &inst;
    r.forks = 2;
    fake_fork(&r.fork[0], 1, 100, 10, 100, 3);
    fake_fork(&r.fork[1], 2, 100, 10, 100, 4);
    CHECK_EQ_INT(h2b__micro_result_merge(&r), H2B_OK);
    CHECK(!r.alloc_deterministic);
    h2b__micro_result_free(&r);
}

int main(void)
{
    test_registry();
    test_median();
    test_json_roundtrip();
    test_merge();
    return test_report();
}
