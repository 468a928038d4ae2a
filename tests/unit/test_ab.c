/* test_ab.c - the A/B verdict (gates/ab.c) on in-memory observation sets: the bootstrap
 * interval, time verdicts against the threshold, exact counts, the not-deterministic rule,
 * p99 sample guards, benchmarks on one side only, invalid sides, the merge of a side's
 * results files (gates/abrun.c), and the verdict on matrix cells (h2b_ab_judge_cells). */
#include "gates/ab.h"
#include "gates/abtable.h"
#include "core/fmt.h"
#include "core/verdict.h"
#include "gates/abrun.h"
#include "core/error.h"
#include "core/model.h"
#include "core/results.h"
#include "gate_fixture.h"
#include "test.h"

#include <math.h>
#include <unistd.h>

/* A set with one benchmark: per-fork ns/op (p99 forks = 2 x ns), allocs. */
static struct h2b_gate_set *side(const char *name, const double *ns, size_t n, double allocs,
                                 bool nondet, double samples)
{
    struct h2b_results_doc *d = fixture_doc();
    struct h2b_results_micro *e = d ? fixture_micro(d, name) : NULL;
    double p99[64];
    for (size_t i = 0; i < n && i < 64; i++)
        p99[i] = 2 * ns[i];
    if (!e || n > 64 || h2b_model_set_nums(&e->fork_ns_per_op, ns, n) != H2B_OK ||
        h2b_model_set_nums(&e->fork_p99_ns, p99, n) != H2B_OK) {
        h2b_results_doc_del(d);
        return NULL;
    }
    e->allocs_per_op = allocs;
    e->bytes_per_op = allocs * 16;
    e->alloc_deterministic = nondet ? 0 : 1;
    e->ns_per_op = ns[0];
    e->samples = samples;
    e->forks = (double)n;
    e->p99_ns = p99[0]; /* one of the forks': the merged p99 lies between them (checked) */
    return fixture_set(d);
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
    CHECK_EQ_INT(h2b_model_set_string(&h2b_results_doc_micro(b->docs[0], 0)->error, "setup failed"),
                 H2B_OK);
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

/* Sets d's env to a Release build with the sanitizers in san (a JSON array), through the model. */
static void set_env(struct h2b_results_doc *d, const char *san)
{
    char text[128];
    snprintf(text, sizeof(text), "{\"build_type\": \"Release\", \"sanitizers\": %s}", san);
    json_t *j = json_loads(text, 0, NULL);
    struct h2b_diag diag;
    h2b_model_free(&h2b_results_env_model, &d->env);
    CHECK_EQ_INT(h2b_model_from_json(&h2b_results_env_model, j, NULL, "env", 0, &d->env, &diag),
                 H2B_OK);
    json_decref(j);
}

/* A results document of one cell "srv:1x1" with n repeats: req/s rps[i], p99 p99_ms[i] ms,
 * and (allocs >= 0) budgets of allocs and instr per request. Caller frees (h2b_model_free). */
static void cells_doc(struct h2b_results_doc *d, const double *rps, const double *p99_ms, size_t n,
                      double allocs, double instr)
{
    h2b_model_init(&h2b_results_doc_model, d);
    set_env(d, "[]");
    for (size_t i = 0; i < n; i++) {
        void *e = NULL;
        CHECK_EQ_INT(h2b_model_array_push(&h2b_results_cell_model, &d->matrix, &e), H2B_OK);
        struct h2b_results_cell *c = e;
        c->target = strdup("srv");
        c->status = strdup("ok");
        c->connections = 1;
        c->streams_requested = 1;
        c->repeat = (double)i;
        c->req_per_s = rps[i];
        c->latency_ns.p99 = p99_ms[i] * 1e6;
        if (allocs >= 0) {
            c->budgets.base.present = true;
            c->budgets.allocs_per_request = allocs;
            c->budgets.bytes_per_request = allocs * 24;
            c->budgets.instructions_per_request = instr;
        }
    }
}

static const struct h2b_ab_row *cell_row(const struct h2b_ab_report *r, const char *metric)
{
    for (size_t i = 0; i < r->count; i++) {
        if (strcmp(r->rows[i].bench, "srv:1x1") == 0 && r->rows[i].metric &&
            strcmp(r->rows[i].metric, metric) == 0)
            return &r->rows[i];
    }
    return NULL;
}

static void test_cells(void)
{
    static const double rps[] = {1000, 1020, 980, 1010, 990, 1005, 995, 1015};
    static const double half[] = {500, 510, 490, 505, 495, 502, 498, 507};
    static const double p99[] = {2.0, 2.1, 1.9, 2.05, 1.95, 2.02, 1.98, 2.01};
    static const double p99x2[] = {4.0, 4.2, 3.8, 4.1, 3.9, 4.04, 3.96, 4.02};
    struct {
        const char *what;
        const double *rps_b, *p99_b;
        double allocs_b, instr_b;
        const char *metric;
        enum h2b_ab_status want;
        int exit_code;
    } cases[] = {
        {"same", rps, p99, 5, 10000, "req/s", H2B_AB_SAME, 0},
        {"same p99", rps, p99, 5, 10000, "p99", H2B_AB_SAME, 0},
        {"half the req/s", half, p99, 5, 10000, "req/s", H2B_AB_SLOWER, 1},
        {"twice the p99", rps, p99x2, 5, 10000, "p99", H2B_AB_SLOWER, 1},
        {"one more allocation", rps, p99, 6, 10000, "allocs/req", H2B_AB_INCREASE, 1},
        {"its bytes", rps, p99, 6, 10000, "B/req", H2B_AB_INCREASE, 1},
        /* 0.3 allocation more is within half a unit (its 7.2 bytes are not: exit 1) */
        {"a fraction of an allocation", rps, p99, 5.3, 10000, "allocs/req", H2B_AB_SAME, 1},
        {"instructions +0.4 %", rps, p99, 5, 10040, "instr/req", H2B_AB_SAME, 0},
        {"instructions +1 %", rps, p99, 5, 10100, "instr/req", H2B_AB_INCREASE, 1},
        {"fewer allocations", rps, p99, 4, 10000, "allocs/req", H2B_AB_DECREASE, 0},
    };
    for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
        struct h2b_results_doc a, b;
        cells_doc(&a, rps, p99, 8, 5, 10000);
        cells_doc(&b, cases[k].rps_b, cases[k].p99_b, 8, cases[k].allocs_b, cases[k].instr_b);
        struct h2b_ab_report *r = NULL;
        CHECK_EQ_INT(h2b_ab_judge_cells(&a, "a.json", &b, "b.json", &opt, &r), H2B_OK);
        const struct h2b_ab_row *x = r ? cell_row(r, cases[k].metric) : NULL;
        if (!x || x->status != cases[k].want || r->exit_code != cases[k].exit_code)
            fprintf(stderr, "cells case '%s': status %d exit %d\n", cases[k].what,
                    x ? (int)x->status : -1, r ? r->exit_code : -1);
        CHECK(x && x->status == cases[k].want);
        CHECK(r && r->exit_code == cases[k].exit_code);
        h2b_ab_report_del(r);
        h2b_model_free(&h2b_results_doc_model, &a);
        h2b_model_free(&h2b_results_doc_model, &b);
    }
    /* no budgets on either side: no budget rows; only on one side: not judged */
    struct h2b_results_doc a, b;
    cells_doc(&a, rps, p99, 8, -1, 0);
    cells_doc(&b, rps, p99, 8, 5, 10000);
    struct h2b_ab_report *r = NULL;
    CHECK_EQ_INT(h2b_ab_judge_cells(&a, "a.json", &b, "b.json", &opt, &r), H2B_OK);
    const struct h2b_ab_row *x = r ? cell_row(r, "allocs/req") : NULL;
    CHECK(x && x->status == H2B_AB_NA && r->exit_code == 0);
    h2b_ab_report_del(r);
    /* a sanitizer build on one side: invalid, exit 3 */
    set_env(&b, "[\"address\"]");
    r = NULL;
    CHECK_EQ_INT(h2b_ab_judge_cells(&a, "a.json", &b, "b.json", &opt, &r), H2B_OK);
    CHECK(r && r->exit_code == 3 && r->invalid_reason && strstr(r->invalid_reason, "head"));
    h2b_ab_report_del(r);
    h2b_model_free(&h2b_results_doc_model, &a);
    h2b_model_free(&h2b_results_doc_model, &b);
}

/* One vocabulary (core/verdict.h) and one A/B table (gates/abtable.h): the failing form is upper
 * case, columns line up by terminal columns (µs and × are two bytes), a failing markdown row
 * carries its icon, a benchmark name with '|' is escaped. */
static void test_table(void)
{
    CHECK_STR(h2b_verdict_words(H2B_VERDICT_SLOWER, true)->word, "SLOWER");
    CHECK_STR(h2b_verdict_words(H2B_VERDICT_SLOWER, false)->word, "slower");
    CHECK_STR(h2b_verdict_words(H2B_VERDICT_MORE, true)->word, "MORE");
    CHECK_STR(h2b_verdict_words(H2B_VERDICT_UNGATED, true)->word, "UNGATED!");
    CHECK_STR(h2b_verdict_words((enum h2b_verdict)99, false)->word, "INVALID");
    CHECK(h2b_verdict_of_exit(0) == H2B_VERDICT_PASS &&
          h2b_verdict_of_exit(1) == H2B_VERDICT_FAIL &&
          h2b_verdict_of_exit(3) == H2B_VERDICT_INVALID);
    CHECK_STR(h2b_gate_words(H2B_GATE_NA, true)->word, "N/A!");
    CHECK_EQ_INT((int)h2b_fmt_width("1.65 µs"), 7);

    struct h2b_abtable_row rows[] = {
        {.status = H2B_VERDICT_SLOWER,
         .failing = true,
         .bench = "a|b",
         .metric = "p99",
         .unit = H2B_ABTABLE_NS,
         .base = 820,
         .head = 1650,
         .interval = H2B_ABTABLE_RATIO,
         .lo = 1.778,
         .hi = 2.125},
        {.status = H2B_VERDICT_SAME,
         .bench = "c",
         .metric = "req/s",
         .unit = H2B_ABTABLE_RATE,
         .base = 100167,
         .head = 80167,
         .interval = H2B_ABTABLE_DIFF,
         .lo = -25369,
         .hi = -14631,
         .note = "3+3 repeats"},
        {.status = H2B_VERDICT_ONLY,
         .bench = "d",
         .base = NAN,
         .head = NAN,
         .note = "only in the base"},
    };
    struct h2b_buf b = {0};
    h2b_abtable_text(&b, rows, 3);
    const char *t = h2b_buf_str(&b);
    CHECK(
        strstr(
            t,
            "status  benchmark  metric     base     head  head/base  interval            note\n") ==
        t);
    CHECK(strstr(t, "\nSLOWER  a|b        p99      820 ns  1.65 µs      2.01×  [1.778, 2.125]\n"));
    CHECK(strstr(t, "\nsame    c          req/s   100,167   80,167      0.80×  [−25,369, −14,631]  "
                    "3+3 repeats\n"));
    CHECK(strstr(t, "\nonly    d          -             -        -          -  -                   "
                    "only in the base\n"));
    h2b_buf_free(&b);
    h2b_abtable_md(&b, rows, 3);
    t = h2b_buf_str(&b);
    CHECK(strstr(t, "| ❌ SLOWER | a\\|b | p99 | 820 ns | 1.65 µs | 2.01× | [1.778, 2.125] |  |\n"));
    CHECK(strstr(t, "| only | d | - | - | - | - | - | only in the base |\n"));
    h2b_buf_free(&b);
}

int main(void)
{
    test_table();
    test_bootstrap();
    test_time_verdicts();
    test_exact();
    test_sides();
    test_merge();
    test_cells();
    return test_report();
}
