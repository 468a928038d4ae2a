/* test_gate.c - the gate engine on in-memory inputs: statistics (t quantiles, Welch interval),
 * ceilings round trip, exact and robust checks, proposals; the observations as views of the
 * results documents the set keeps (they outlive every input the caller passed in, and a
 * borrowed document outlives the set), and the one verdict of h2b_gate_evaluate whether it
 * reads the files or is given the documents. */
#include "gates/ceilings.h"
#include "core/error.h"
#include "core/fs.h"
#include "gates/evaluate.h"
#include "gates/gate.h"
#include "gate_fixture.h"
#include "test.h"

#include <math.h>

#ifndef H2B_TEST_DATA
#error "H2B_TEST_DATA must name tests/data/gate"
#endif

static bool near(double a, double b, double tol)
{
    return fabs(a - b) <= tol;
}

/* A set with one benchmark observation; forks may be NULL. */
static struct h2b_gate_set *one(const char *name, double bytes, double allocs, double *forks,
                                size_t n)
{
    struct h2b_results_doc *d = fixture_doc();
    struct h2b_results_micro *e = d ? fixture_micro(d, name) : NULL;
    if (!e || (n && h2b_model_set_nums(&e->fork_p99_ns, forks, n) != H2B_OK)) {
        h2b_results_doc_del(d);
        return NULL;
    }
    e->bytes_per_op = bytes;
    e->allocs_per_op = allocs;
    e->p99_ns = n ? forks[n - 1] : 0;
    e->p50_ns = 100;
    e->p999_ns = 5000;
    e->samples = NAN; /* unknown: does not block a p99 ceiling */
    e->forks = n ? (double)n : NAN;
    return fixture_set(d);
}

/* The entry behind observation i of s (the model the view reads), to change it. */
static struct h2b_results_micro *entry(const struct h2b_gate_set *s, size_t i)
{
    return (struct h2b_results_micro *)s->obs[i].e;
}

static void test_ceilings_round_trip(void)
{
    struct h2b_ceilings *c = NULL, *back = NULL;
    struct h2b_ceiling_bench *b = NULL;
    char *text = NULL;
    CHECK_EQ_INT(h2b_ceilings_new(&c), H2B_OK);
    CHECK_EQ_INT(h2b_ceilings_add(c, "x/y", &b), H2B_OK);
    CHECK_EQ_INT(h2b_ceilings_set(b, H2B_METRIC_BYTES_PER_OP, 192, "exact"), H2B_OK);
    CHECK_EQ_INT(h2b_ceilings_set(b, H2B_METRIC_P99_NS, 1234.5, "headroom"), H2B_OK);
    b->baseline.has_p99 = true;
    b->baseline.p99_ns = 900;
    b->baseline.runs = 5;
    CHECK_EQ_INT(h2b_ceilings_to_json(c, &text), H2B_OK);
    CHECK(strstr(text, "\"max\": 192,") != NULL); /* integers stay integers */
    json_error_t err;
    json_t *root = json_loads(text, 0, &err);
    struct h2b_json_src src = {.file = "memory", .text = text};
    CHECK_EQ_INT(h2b_ceilings_from_json(root, &src, &back, NULL, NULL), H2B_OK);
    const struct h2b_ceiling_bench *e = back ? h2b_ceilings_find(back, "x/y") : NULL;
    CHECK(e && e->metric[H2B_METRIC_BYTES_PER_OP].max == 192);
    CHECK(e && e->metric[H2B_METRIC_P99_NS].max == 1234.5);
    CHECK(e && !e->metric[H2B_METRIC_ALLOCS_PER_OP].set);
    CHECK(e && e->baseline.has_p99 && e->baseline.p99_ns == 900 && e->baseline.runs == 5);
    CHECK_STR(h2b_metric_key(H2B_METRIC_INSTRUCTIONS_PER_OP), "instructions_per_op");
    CHECK_EQ_INT(h2b_metric_from_key("p99"), -1);
    json_decref(root);
    free(text);
    h2b_ceilings_del(c);
    h2b_ceilings_del(back);
}

static void test_check(void)
{
    struct h2b_ceilings *c = NULL;
    struct h2b_ceiling_bench *b = NULL;
    h2b_ceilings_new(&c);
    h2b_ceilings_add(c, "bench", &b);
    h2b_ceilings_set(b, H2B_METRIC_BYTES_PER_OP, 192, "exact");
    h2b_ceilings_set(b, H2B_METRIC_ALLOCS_PER_OP, 3, "exact");
    h2b_ceilings_set(b, H2B_METRIC_P99_NS, 1000, "headroom");
    struct h2b_gate_options opt = {.confirm = 0};
    struct h2b_gate_report *r = NULL;

    /* Floating-point noise in an exact ratio is not a byte. */
    double forks[] = {900, 5000, 4000};
    struct h2b_gate_set *s = one("bench", 192.00000000000003, 3, forks, 3);
    CHECK_EQ_INT(h2b_gate_check(c, s, &opt, &r), H2B_OK);
    CHECK(r && r->exit_code == 0 && r->passed == 3);
    CHECK(s && near(h2b_gate_robust_p99(&s->obs[0]), 900, 0));
    h2b_gate_report_del(r);
    h2b_gate_set_del(s);

    /* One byte more fails. */
    s = one("bench", 193, 3, forks, 3);
    r = NULL;
    CHECK_EQ_INT(h2b_gate_check(c, s, &opt, &r), H2B_OK);
    CHECK(r && r->exit_code == 1 && r->failed == 1);
    CHECK(r && r->rows[0].status == H2B_GATE_FAIL && r->rows[0].metric == H2B_METRIC_BYTES_PER_OP);
    h2b_gate_report_del(r);
    h2b_gate_set_del(s);

    /* Every fork over the ceiling fails the p99 gate (no confirmation asked). */
    double slow[] = {1100, 1200, 1300};
    s = one("bench", 192, 3, slow, 3);
    r = NULL;
    CHECK_EQ_INT(h2b_gate_check(c, s, &opt, &r), H2B_OK);
    CHECK(r && r->exit_code == 1 && r->rows[0].metric == H2B_METRIC_P99_NS);
    CHECK(r && near(r->rows[0].current, 1100, 0));
    h2b_gate_report_del(r);

    /* Proposal: worst best-fork p99 over runs, plus headroom, rounded up. */
    struct h2b_gate_set *fast = one("bench", 192, 3, forks, 3);
    const struct h2b_gate_set *runs[] = {s, fast};
    struct h2b_gate_propose_options popt = {.headroom = 0.35, .date = "2026-11-30", .tool = "t"};
    struct h2b_ceilings *p = NULL;
    CHECK_EQ_INT(h2b_gate_propose(runs, 2, &popt, &p), H2B_OK);
    const struct h2b_ceiling_bench *pb = p ? h2b_ceilings_find(p, "bench") : NULL;
    CHECK(pb && pb->metric[H2B_METRIC_P99_NS].max == 1485); /* 1100 * 1.35 */
    CHECK(pb && pb->metric[H2B_METRIC_BYTES_PER_OP].max == 192);
    CHECK(pb && pb->metric[H2B_METRIC_ALLOCS_PER_OP].max == 3);
    CHECK(pb && !pb->metric[H2B_METRIC_INSTRUCTIONS_PER_OP].set);
    CHECK(pb && pb->baseline.runs == 2);
    CHECK(pb && strstr(pb->metric[H2B_METRIC_P99_NS].why, "+ 35% headroom") != NULL);
    CHECK_EQ_INT(h2b_gate_propose(runs, 0, &popt, &p), H2B_ERR_INVAL);
    h2b_ceilings_del(p);

    /* Allocation the runner flags as not deterministic (amortised growth): the next whole unit
     * above the largest value, so the wobble never fails but one more per op does. */
    struct h2b_gate_set *wob = one("bench", 1090.757, 10.0313, forks, 3);
    entry(wob, 0)->alloc_deterministic = 0;
    const struct h2b_gate_set *wruns[] = {wob};
    p = NULL;
    CHECK_EQ_INT(h2b_gate_propose(wruns, 1, &popt, &p), H2B_OK);
    pb = p ? h2b_ceilings_find(p, "bench") : NULL;
    CHECK(pb && pb->metric[H2B_METRIC_BYTES_PER_OP].max == 1091);
    CHECK(pb && pb->metric[H2B_METRIC_ALLOCS_PER_OP].max == 11);
    CHECK(pb && strstr(pb->metric[H2B_METRIC_BYTES_PER_OP].why, "NOT deterministic") != NULL);
    CHECK(pb && pb->baseline.has_bytes && pb->baseline.bytes_per_op == 1090.757);
    h2b_ceilings_del(p);

    /* Too few samples per fork for a p99: no p99 ceiling, a baseline note instead. */
    entry(wob, 0)->samples = 3 * 9000.0;
    p = NULL;
    CHECK_EQ_INT(h2b_gate_propose(wruns, 1, &popt, &p), H2B_OK);
    pb = p ? h2b_ceilings_find(p, "bench") : NULL;
    CHECK(pb && !pb->metric[H2B_METRIC_P99_NS].set);
    CHECK(pb && pb->baseline.note && strstr(pb->baseline.note, "9000 samples per fork"));
    char *md = NULL;
    CHECK(p && h2b_ceilings_baselines_md(p, "x.json", &md) == H2B_OK);
    CHECK(md && strstr(md, "| not gated¹ |") && strstr(md, "¹ `bench`: p99 not gated"));
    free(md);
    h2b_ceilings_del(p);
    h2b_gate_set_del(wob);
    h2b_gate_set_del(fast);
    h2b_gate_set_del(s);
    h2b_ceilings_del(c);
}

/* A set read from a file keeps the document its views point into: they stay valid after every
 * input of the call is gone (the path's buffer scribbled over and freed, the file and its
 * directory removed), and die with the set. Under AddressSanitizer a view that still pointed
 * into something freed would fail here. */
static void test_views_outlive_inputs(void)
{
    char *text = NULL;
    size_t len = 0;
    struct h2b_diag rd = {0};
    CHECK_EQ_INT(h2b_fs_read_file(H2B_TEST_DATA "/results-pass.json", 1 << 20, &text, &len, &rd),
                 H2B_OK);
    char dir[] = "/tmp/h2b-test-gate-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char *path = malloc(sizeof(dir) + 16);
    CHECK(path != NULL);
    if (!text || !path) {
        free(text);
        free(path);
        return;
    }
    snprintf(path, sizeof(dir) + 16, "%s/r.json", dir);
    CHECK_EQ_INT(test_write_text(path, text), 0);
    free(text);
    char saved[sizeof(dir) + 16];
    snprintf(saved, sizeof(saved), "%s", path);
    struct h2b_gate_set *s = NULL;
    struct h2b_diag d = {0};
    const char *paths[] = {path};
    CHECK_EQ_INT(h2b_gate_set_load(paths, 1, &s, &d), H2B_OK);
    memset(path, 'X', strlen(path));
    free(path);
    unlink(saved);
    rmdir(dir);
    if (!s)
        return;
    CHECK(s->count >= 2 && s->n_sources == 1 && !s->invalid);
    const struct h2b_gate_obs *o = &s->obs[0];
    CHECK_STR(o->e->name, "fx/alloc-free");
    CHECK(o->source == s->sources[0]);
    CHECK_STR(o->source, saved);
    CHECK(o->e == h2b_results_doc_micro(s->docs[0], 0)); /* the model's entry, not a copy */
    CHECK(h2b_gate_obs_has(o, H2B_METRIC_P99_NS) &&
          !h2b_gate_obs_has(o, H2B_METRIC_INSTRUCTIONS_PER_OP));
    CHECK(h2b_gate_obs_value(o, H2B_METRIC_BYTES_PER_OP) == 0);
    CHECK(h2b_gate_obs_value(o, H2B_METRIC_P99_NS) == 900);
    CHECK_EQ_INT(h2b_gate_obs_forks(o), 3);
    CHECK(near(h2b_gate_robust_p99(o), 800, 0)); /* the best of the legacy p99_ns_forks */
    struct h2b_fingerprint fp;
    h2b_gate_set_fingerprint(s, &fp);
    CHECK(fp.set && fp.cpus == 2 && fp.cpu_model == s->env->cpu_model); /* a view */
    CHECK_STR(fp.cpu_model, "fixture CPU");
    /* the whole gate on the views alone */
    struct h2b_ceilings *c = NULL;
    struct h2b_gate_report *r = NULL;
    struct h2b_gate_options opt = {.confirm = 0};
    CHECK_EQ_INT(h2b_ceilings_load(H2B_TEST_DATA "/ceilings.json", &c, NULL, NULL), H2B_OK);
    CHECK(c && h2b_gate_check(c, s, &opt, &r) == H2B_OK);
    CHECK(r && r->exit_code == 0 && r->passed > 0 && r->failed == 0);
    h2b_gate_report_del(r);
    h2b_ceilings_del(c);
    h2b_gate_set_del(s);
}

/* A borrowed document (h2b_gate_set_add) is the caller's: the set's views read it, and deleting
 * the set leaves it whole. */
static void test_borrowed_views(void)
{
    struct h2b_results_doc *doc = NULL;
    struct h2b_diag d = {0};
    CHECK_EQ_INT(h2b_results_doc_load(H2B_TEST_DATA "/results-pass.json", &doc, NULL, &d), H2B_OK);
    struct h2b_gate_set *s = NULL;
    CHECK_EQ_INT(h2b_gate_set_new(&s), H2B_OK);
    if (!doc || !s) {
        h2b_results_doc_del(doc);
        h2b_gate_set_del(s);
        return;
    }
    CHECK_EQ_INT(h2b_gate_set_add(s, "borrowed.json", doc), H2B_OK);
    CHECK(s->count == doc->micro.n && s->docs[0] == doc && s->owned[0] == NULL);
    for (size_t i = 0; i < s->count; i++)
        CHECK(s->obs[i].e == h2b_results_doc_micro(doc, i));
    CHECK(s->env == &doc->env);
    h2b_gate_set_del(s);
    CHECK_STR(h2b_results_doc_micro(doc, 0)->name, "fx/alloc-free"); /* still the caller's */
    h2b_results_doc_del(doc);
}

/* The same verdict from the files (h2b_gate_evaluate) and from documents already read
 * (h2b_gate_evaluate_docs, the report's way): row by row, evidence included. */
static void test_evaluate_docs(void)
{
    const char *files[] = {H2B_TEST_DATA "/results-alloc-byte.json",
                           H2B_TEST_DATA "/results-extra.json"};
    struct h2b_results_doc *docs[2] = {NULL, NULL};
    struct h2b_diag d = {0};
    for (int i = 0; i < 2; i++)
        CHECK_EQ_INT(h2b_results_doc_load(files[i], &docs[i], NULL, &d), H2B_OK);
    struct h2b_gate_options opt = {.confirm = 0, .strict = true};
    struct h2b_gate_eval a, b;
    CHECK_EQ_INT(
        h2b_gate_evaluate(H2B_TEST_DATA "/ceilings.json", files, 2, &opt, NULL, NULL, &a, &d),
        H2B_OK);
    CHECK_EQ_INT(h2b_gate_evaluate_docs(H2B_TEST_DATA "/ceilings.json",
                                        (const struct h2b_results_doc *const *)docs, files, 2, &opt,
                                        NULL, NULL, &b, &d),
                 H2B_OK);
    CHECK(a.report && b.report && a.report->count == b.report->count && a.report->count > 0);
    CHECK(a.report && a.report->exit_code == 1 && a.report->failed == 1 && a.report->ungated > 0);
    for (size_t i = 0; a.report && b.report && i < a.report->count && i < b.report->count; i++) {
        const struct h2b_gate_row *x = &a.report->rows[i], *y = &b.report->rows[i];
        CHECK_STR(x->bench, y->bench);
        CHECK(x->metric == y->metric && x->status == y->status && x->failing == y->failing);
        CHECK_STR(x->evidence, y->evidence);
    }
    CHECK(a.report && b.report && a.report->exit_code == b.report->exit_code);
    h2b_gate_eval_free(&a);
    h2b_gate_eval_free(&b);
    h2b_results_doc_del(docs[0]);
    h2b_results_doc_del(docs[1]);
}

int main(void)
{
    test_ceilings_round_trip();
    test_check();
    test_views_outlive_inputs();
    test_borrowed_views();
    test_evaluate_docs();
    return test_report();
}
