/*
 * test_load_intervals.c - per-interval results of parts run side by side (an MPI job's ranks):
 * --interval-json lines parse back (bad lines refused at file:line:column), merge interval by
 * interval (counts and offered requests add, the span is the widest, an index only one part has
 * stays, percentiles read from the histograms merged bin for bin: the same as one histogram of
 * every value), and an SLO judges the merged windows after the run (h2b_slo_replay).
 */
#include "core/error.h"
#include "core/hist.h"
#include "core/json.h"
#include "core/model.h"
#include "core/results.h"
#include "load/load.h"
#include "load/slo.h"
#include "test.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* One row of index k over [k, k + len) s, offered req/s, with values lo, lo + step, ... n of
 * them (also recorded into all, when given). */
static void row(struct h2b_results_interval *r, double k, double len, double offered, uint64_t lo,
                uint64_t step, uint64_t n, struct h2b_hist *all)
{
    struct h2b_hist *h = NULL;
    CHECK_EQ_INT(h2b_hist_new_default(&h), H2B_OK);
    for (uint64_t i = 0; i < n; i++) {
        h2b_hist_record(h, lo + i * step);
        if (all)
            h2b_hist_record(all, lo + i * step);
    }
    h2b_model_init(&h2b_results_interval_model, r);
    r->base.present = true;
    r->index = k;
    r->start_s = k;
    r->end_s = k + len;
    r->offered_per_s = offered;
    r->achieved_per_s = (double)n / len;
    r->ended = (double)n;
    r->succeeded = (double)n;
    r->errors = 0;
    h2b_load_latency_of(&r->latency_ns, h);
    char *enc = NULL;
    CHECK_EQ_INT(h2b_hist_encode(h, &enc), H2B_OK);
    CHECK_EQ_INT(h2b_model_set_string(&r->latency_histogram, enc), H2B_OK);
    free(enc);
    h2b_hist_del(h);
}

/* rows as NDJSON text, as --interval-json writes them */
static char *ndjson(struct h2b_results_interval *rows, size_t n, size_t *len)
{
    struct h2b_load_result res;
    memset(&res, 0, sizeof(res));
    res.intervals = rows;
    res.nintervals = n;
    char *text = NULL;
    CHECK_EQ_INT(h2b_load_intervals_ndjson(&res, &text, len), H2B_OK);
    return text;
}

static void merge(void)
{
    struct h2b_hist *all1 = NULL;
    CHECK_EQ_INT(h2b_hist_new_default(&all1), H2B_OK);
    /* part A: intervals 0 and 1; part B: 1 (a shorter last one) and 2 */
    struct h2b_results_interval a[2], b[2];
    row(&a[0], 0, 1, 100, 1000, 10, 100, NULL);
    row(&a[1], 1, 1, 100, 5000, 7, 333, all1);
    row(&b[0], 1, 0.5, 60, 90000, 1000, 40, all1);
    row(&b[1], 2, 1, 50, 2000, 3, 10, NULL);
    size_t la = 0, lb = 0;
    char *ta = ndjson(a, 2, &la), *tb = ndjson(b, 2, &lb);
    struct h2b_results_interval *pa = NULL, *pb = NULL, *m = NULL;
    size_t na = 0, nb = 0, nm = 0;
    struct h2b_diag d = {0};
    CHECK_EQ_INT(h2b_load_intervals_parse("a", ta, la, &pa, &na, &d), H2B_OK);
    CHECK_EQ_INT(h2b_load_intervals_parse("b", tb, lb, &pb, &nb, &d), H2B_OK);
    CHECK_EQ_U64(na, 2);
    CHECK_EQ_U64(nb, 2);
    struct h2b_results_interval *parts[] = {pa, pb};
    size_t nparts[] = {na, nb};
    const char *files[] = {"a", "b"};
    CHECK_EQ_INT(h2b_load_intervals_merge(parts, nparts, files, 2, &m, &nm, &d), H2B_OK);
    CHECK_EQ_U64(nm, 3);
    if (nm == 3) {
        CHECK(m[0].index == 0 && m[0].ended == 100 && m[0].offered_per_s == 100);
        CHECK(m[1].index == 1 && m[1].ended == 373 && m[1].succeeded == 373);
        CHECK(m[1].start_s == 1 && m[1].end_s == 2);  /* the widest span */
        CHECK(fabs(m[1].offered_per_s - 130) < 1e-9); /* 100 x 1 s + 60 x 0.5 s */
        CHECK(m[1].achieved_per_s == 373);
        CHECK(m[2].index == 2 && m[2].ended == 10);
        /* the percentiles of the merged histograms: those of one histogram of every value */
        struct h2b_results_latency want;
        h2b_model_init(&h2b_results_latency_model, &want);
        h2b_load_latency_of(&want, all1);
        CHECK(m[1].latency_ns.p50 == want.p50 && m[1].latency_ns.p99 == want.p99 &&
              m[1].latency_ns.p999 == want.p999 && m[1].latency_ns.max == want.max &&
              m[1].latency_ns.min == want.min && m[1].latency_ns.count == 373);
        char *enc = NULL;
        CHECK_EQ_INT(h2b_hist_encode(all1, &enc), H2B_OK);
        CHECK_STR(m[1].latency_histogram, enc);
        free(enc);

        /* an SLO on the merged rows: windows of 1 s, p99 < 50 us breaks only in window 1 */
        struct h2b_slo s = {0};
        CHECK_EQ_INT(h2b_slo_parse(&s, "p99<50us", &d), H2B_OK);
        s.window_ns = 1000000000;
        h2b_slo_replay(&s, m, nm);
        CHECK_EQ_INT(s.rc, H2B_OK);
        CHECK_EQ_U64(s.verdicts.n, 3);
        CHECK_EQ_U64(s.failed, 1);
        const struct h2b_results_slo *v =
            h2b_model_array_at(&h2b_results_slo_model, &s.verdicts, 1);
        CHECK(v && v->start_s == 1 && strcmp(v->verdict, "fail") == 0);
        h2b_slo_free(&s);
    }
    h2b_load_intervals_free(m, nm);
    h2b_load_intervals_free(pa, na);
    h2b_load_intervals_free(pb, nb);
    for (int i = 0; i < 2; i++) {
        h2b_model_free(&h2b_results_interval_model, &a[i]);
        h2b_model_free(&h2b_results_interval_model, &b[i]);
    }
    free(ta);
    free(tb);
    h2b_hist_del(all1);
}

static void bad(void)
{
    struct h2b_results_interval r[2];
    row(&r[0], 0, 1, 10, 1000, 1, 5, NULL);
    row(&r[1], 1, 1, 10, 1000, 1, 5, NULL);
    size_t len = 0;
    char *good = ndjson(r, 2, &len);
    char *nl = good ? strchr(good, '\n') : NULL;
    CHECK(nl != NULL);
    if (!nl)
        return;
    size_t first = (size_t)(nl - good) + 1; /* the first line, newline included */
    static const struct {
        const char *second; /* the file's second line */
        int line;
        const char *what;
    } cases[] = {
        {"{\"index\": 2, \"start_s\": ", 2, "not JSON"},
        {"{\"index\": 0, \"start_s\": 0, \"end_s\": 1, \"latency_histogram\": \"x\"}", 2, "index"},
        {"{\"index\": 1, \"start_s\": 1, \"end_s\": 2}", 2, "latency_histogram"},
        {"{\"index\": 1.5, \"start_s\": 1, \"end_s\": 2}", 2, "index"},
        {"{\"index\": 1, \"start_s\": \"one\"}", 2, "start_s"},
        {"\n\n[1, 2]", 4, "expected"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        size_t n2 = strlen(cases[i].second);
        char *text = malloc(first + n2 + 1);
        CHECK(text != NULL);
        if (!text)
            continue;
        memcpy(text, good, first);
        memcpy(text + first, cases[i].second, n2 + 1);
        struct h2b_results_interval *rows = NULL;
        size_t n = 0;
        struct h2b_diag d = {0};
        CHECK_EQ_INT(h2b_load_intervals_parse("iv.ndjson", text, first + n2, &rows, &n, &d),
                     H2B_ERR_PARSE);
        CHECK_STR(d.file, "iv.ndjson");
        CHECK_EQ_INT(d.line, cases[i].line);
        CHECK(d.column >= 1);
        if (!strstr(d.message, cases[i].what))
            fprintf(stderr, "case %zu: '%s' not in '%s'\n", i, cases[i].what, d.message);
        CHECK(strstr(d.message, cases[i].what) != NULL);
        free(text);
    }
    /* nothing at all */
    struct h2b_results_interval *rows = NULL;
    size_t n = 0;
    struct h2b_diag d = {0};
    CHECK_EQ_INT(h2b_load_intervals_parse("empty", "\n", 1, &rows, &n, &d), H2B_ERR_PARSE);
    CHECK(strstr(d.message, "found none") != NULL);
    free(good);
    for (int i = 0; i < 2; i++)
        h2b_model_free(&h2b_results_interval_model, &r[i]);
}

int main(void)
{
    merge();
    bad();
    return test_report();
}
