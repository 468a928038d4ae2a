/* test_ab.c - the A/B verdict (gates/ab.c) on in-memory observation sets: the bootstrap
 * interval, time verdicts against the threshold, exact counts, the not-deterministic rule,
 * p99 sample guards, benchmarks on one side only, invalid sides, and the merge of a side's
 * results files (gates/abrun.c). */
#include "ab.h"
#include "abrun.h"
#include "error.h"
#include "results.h"
#include "test.h"

#include <math.h>
#include <unistd.h>

/* A set with one benchmark: per-fork ns/op (p99 forks = 2 x ns), allocs. */
static struct h2b_gate_set *side(const char *name, const double *ns, size_t n, double allocs,
                                 bool nondet, double samples)
{
    struct h2b_gate_set *s;
    if (h2b_gate_set_new(&s) != H2B_OK)
        return NULL;
    s->obs = calloc(1, sizeof(*s->obs));
    s->count = 1;
    struct h2b_gate_obs *o = &s->obs[0];
    o->name = strdup(name);
    o->source = "memory";
    o->value[H2B_METRIC_ALLOCS_PER_OP] = allocs;
    o->value[H2B_METRIC_BYTES_PER_OP] = allocs * 16;
    o->has[H2B_METRIC_ALLOCS_PER_OP] = o->has[H2B_METRIC_BYTES_PER_OP] = true;
    o->alloc_nondeterministic = nondet;
    o->ns_per_op = ns[0];
    o->samples = samples;
    o->forks = (int)n;
    o->ns_forks = malloc(n * sizeof(double));
    o->p99_forks = malloc(n * sizeof(double));
    for (size_t i = 0; i < n; i++) {
        o->ns_forks[i] = ns[i];
        o->p99_forks[i] = 2 * ns[i];
    }
    o->n_ns_forks = o->n_p99_forks = n;
    o->value[H2B_METRIC_P99_NS] = 2 * ns[0];
    o->has[H2B_METRIC_P99_NS] = true;
    return s;
}

static const struct h2b_ab_row *row(const struct h2b_ab_report *r, const char *metric)
{
    for (size_t i = 0; i < r->count; i++) {
        if (r->rows[i].metric && strcmp(r->rows[i].metric, metric) == 0)
            return &r->rows[i];
    }
    return NULL;
}

static const struct h2b_ab_options opt = {.threshold = 0.10, .confidence = 0.99};

static struct h2b_ab_report *judge(struct h2b_gate_set *a, struct h2b_gate_set *b)
{
    struct h2b_ab_report *r = NULL;
    CHECK_EQ_INT(h2b_ab_judge(a, b, &opt, &r), H2B_OK);
    h2b_gate_set_del(a);
    h2b_gate_set_del(b);
    return r;
}

static const double base10[] = {1000, 1010, 990, 1005, 995, 1020, 980, 1000, 1015, 985};

static void test_bootstrap(void)
{
    struct h2b_ab_ci ci, again;
    CHECK_EQ_INT(h2b_ab_bootstrap_ratio(base10, 10, base10, 10, 0.99, 0, 0, &ci), H2B_OK);
    CHECK(ci.has && ci.ratio == 1.0 && ci.lo <= 1.0 && ci.hi >= 1.0);
    CHECK(ci.lo > 0.95 && ci.hi < 1.05);
    /* deterministic: the same inputs give the same interval */
    CHECK_EQ_INT(h2b_ab_bootstrap_ratio(base10, 10, base10, 10, 0.99, 0, 0, &again), H2B_OK);
    CHECK(again.lo == ci.lo && again.hi == ci.hi);
    double twice[10];
    for (int i = 0; i < 10; i++)
        twice[i] = 2 * base10[i];
    CHECK_EQ_INT(h2b_ab_bootstrap_ratio(base10, 10, twice, 10, 0.99, 0, 0, &ci), H2B_OK);
    CHECK(ci.has && fabs(ci.ratio - 2.0) < 1e-9 && ci.lo > 1.9 && ci.hi < 2.1);
    /* one sample on a side: a ratio, no interval */
    CHECK_EQ_INT(h2b_ab_bootstrap_ratio(base10, 1, twice, 10, 0.99, 0, 0, &ci), H2B_OK);
    CHECK(!ci.has && ci.ratio > 0);
    double zero[] = {0, 0};
    CHECK_EQ_INT(h2b_ab_bootstrap_ratio(zero, 2, twice, 10, 0.99, 0, 0, &ci), H2B_OK);
    CHECK(!ci.has);
}

static void test_time_verdicts(void)
{
    double slow[10], slight[10], fast[10], wide[10];
    for (int i = 0; i < 10; i++) {
        slow[i] = 2 * base10[i];
        slight[i] = 1.05 * base10[i];
        fast[i] = 0.5 * base10[i];
        wide[i] = i % 2 ? 3000 : 700; /* 1.85x median, but too loose to exclude 1.1 */
    }
    struct h2b_ab_report *r =
        judge(side("x", base10, 10, 1, false, 1e6), side("x", base10, 10, 1, false, 1e6));
    CHECK_EQ_INT(r->exit_code, 0);
    CHECK(row(r, "ns/op")->status == H2B_AB_SAME && row(r, "p99")->status == H2B_AB_SAME);
    h2b_ab_report_del(r);

    r = judge(side("x", base10, 10, 1, false, 1e6), side("x", slow, 10, 1, false, 1e6));
    CHECK_EQ_INT(r->exit_code, 1);
    CHECK(row(r, "ns/op")->status == H2B_AB_SLOWER && row(r, "ns/op")->failing);
    CHECK(r->rows[0].failing); /* failing rows first */
    char *text = NULL;
    CHECK_EQ_INT(h2b_ab_render_md(r, &text), H2B_OK);
    CHECK(text && strncmp(text, "## h2bench ab: FAIL", 19) == 0 && strstr(text, "SLOWER"));
    free(text);
    h2b_ab_report_del(r);

    /* real but under the threshold: not a failure */
    r = judge(side("x", base10, 10, 1, false, 1e6), side("x", slight, 10, 1, false, 1e6));
    CHECK_EQ_INT(r->exit_code, 0);
    CHECK(row(r, "ns/op")->status == H2B_AB_SAME);
    h2b_ab_report_del(r);

    r = judge(side("x", base10, 10, 1, false, 1e6), side("x", fast, 10, 1, false, 1e6));
    CHECK_EQ_INT(r->exit_code, 0);
    CHECK(row(r, "ns/op")->status == H2B_AB_FASTER);
    h2b_ab_report_del(r);

    r = judge(side("x", base10, 10, 1, false, 1e6), side("x", wide, 10, 1, false, 1e6));
    CHECK(row(r, "ns/op")->status == H2B_AB_SAME && row(r, "ns/op")->ci.lo < 1.1);
    h2b_ab_report_del(r);

    /* p99 on too few samples per fork is not judged, even when twice as slow */
    r = judge(side("x", base10, 10, 1, false, 5000), side("x", slow, 10, 1, false, 5000));
    CHECK(row(r, "p99")->status == H2B_AB_NA && strstr(row(r, "p99")->note, "10000"));
    CHECK(row(r, "ns/op")->status == H2B_AB_SLOWER);
    h2b_ab_report_del(r);
}

static void test_exact(void)
{
    struct h2b_ab_report *r =
        judge(side("x", base10, 10, 8, false, 1e6), side("x", base10, 10, 9, false, 1e6));
    CHECK_EQ_INT(r->exit_code, 1);
    CHECK(row(r, "allocs/op")->status == H2B_AB_INCREASE && row(r, "B/op")->failing);
    h2b_ab_report_del(r);

    r = judge(side("x", base10, 10, 9, false, 1e6), side("x", base10, 10, 8, false, 1e6));
    CHECK_EQ_INT(r->exit_code, 0);
    CHECK(row(r, "allocs/op")->status == H2B_AB_DECREASE);
    h2b_ab_report_del(r);

    /* not deterministic: the decimals wobble and do not fail; one more allocation does */
    r = judge(side("x", base10, 10, 10.0311, true, 1e6), side("x", base10, 10, 10.0313, true, 1e6));
    CHECK_EQ_INT(r->exit_code, 0);
    CHECK(row(r, "allocs/op")->status == H2B_AB_SAME && row(r, "allocs/op")->note);
    h2b_ab_report_del(r);
    r = judge(side("x", base10, 10, 10.0311, true, 1e6), side("x", base10, 10, 11.0312, true, 1e6));
    CHECK_EQ_INT(r->exit_code, 1);
    h2b_ab_report_del(r);
}

static void test_sides(void)
{
    struct h2b_ab_report *r =
        judge(side("old", base10, 10, 1, false, 1e6), side("new", base10, 10, 1, false, 1e6));
    CHECK_EQ_INT(r->exit_code, 0);
    CHECK_EQ_INT(r->only, 2);
    h2b_ab_report_del(r);

    struct h2b_gate_set *a = side("x", base10, 10, 1, false, 1e6);
    struct h2b_gate_set *b = side("x", base10, 10, 1, false, 1e6);
    b->invalid = strdup("head.json: measured in a build with sanitizers (address)");
    r = judge(a, b);
    CHECK_EQ_INT(r->exit_code, 3);
    CHECK(r->invalid_reason && strstr(r->invalid_reason, "sanitizers"));
    h2b_ab_report_del(r);

    a = side("x", base10, 10, 1, false, 1e6);
    b = side("x", base10, 10, 1, false, 1e6);
    b->obs[0].error = strdup("setup failed");
    r = judge(a, b);
    CHECK_EQ_INT(r->exit_code, 3);
    h2b_ab_report_del(r);

    struct h2b_ab_options bad = {.threshold = -1, .confidence = 0.99};
    a = side("x", base10, 10, 1, false, 1e6);
    CHECK_EQ_INT(h2b_ab_judge(a, a, &bad, &r), H2B_ERR_INVAL);
    h2b_gate_set_del(a);
}

/* Two one-fork results files of one side merge into one entry with both forks. */
static void test_merge(void)
{
    char dir[] = "/tmp/h2b-test-ab-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char p[2][300];
    for (int i = 0; i < 2; i++) {
        json_t *doc = NULL;
        CHECK_EQ_INT(h2b_results_new(&doc, NULL, NULL), H2B_OK);
        json_t *e =
            json_pack("{s:s, s:i, s:i, s:i, s:n, s:f, s:f, s:f, s:b, s:i, s:i, s:[f], "
                      "s:[f], s:[i], s:i}",
                      "name", "x", "ops", 1000, "p50_ns", 150, "p999_ns", 400,
                      "instructions_per_op", "ns_per_op", 100.0 * (i + 1), "allocs_per_op", 2.0 + i,
                      "bytes_per_op", 32.0, "alloc_deterministic", 1, "p99_ns", 200 * (i + 1),
                      "forks", 1, "fork_p99_ns", 200.0 * (i + 1), "fork_ns_per_op", 100.0 * (i + 1),
                      "fork_pids", 10 + i, "samples", 20000);
        struct h2b_results_micro me;
        struct h2b_diag md;
        CHECK_EQ_INT(h2b_results_micro_from_json(e, NULL, "", H2B_MODEL_CONTRACT, &me, &md),
                     H2B_OK);
        CHECK_EQ_INT(h2b_results_append_micro(doc, &me), H2B_OK);
        h2b_results_micro_free(&me);
        json_decref(e);
        snprintf(p[i], sizeof(p[i]), "%s/r%d.json", dir, i);
        struct h2b_diag d;
        int wrv = h2b_results_write(p[i], doc, &d);
        if (wrv != H2B_OK)
            fprintf(stderr, "%s\n", d.message);
        CHECK_EQ_INT(wrv, H2B_OK);
        json_decref(doc);
    }
    const char *paths[] = {p[0], p[1]};
    json_t *m = NULL;
    struct h2b_diag d;
    CHECK_EQ_INT(h2b_ab_merge_results(paths, 2, &m, &d), H2B_OK);
    json_t *e = json_array_get(json_object_get(m, "micro"), 0);
    CHECK(json_integer_value(json_object_get(e, "forks")) == 2);
    CHECK(json_array_size(json_object_get(e, "fork_p99_ns")) == 2);
    CHECK(json_number_value(json_object_get(e, "ns_per_op")) == 150.0);
    CHECK(json_number_value(json_object_get(e, "allocs_per_op")) == 3.0);
    CHECK(json_is_false(json_object_get(e, "alloc_deterministic")));
    CHECK(json_integer_value(json_object_get(e, "samples")) == 40000);
    CHECK_EQ_INT(h2b_results_validate(m, NULL, &d), H2B_OK);
    json_decref(m);
    unlink(p[0]);
    unlink(p[1]);
    rmdir(dir);
}

int main(void)
{
    test_bootstrap();
    test_time_verdicts();
    test_exact();
    test_sides();
    test_merge();
    return test_report();
}
