/*
 * test_hist_hdr.c - percentiles at HdrHistogram's ranks, on chosen data.
 *
 * Six run sizes (1, 3, 200, 1,000, 20,000 and 100,000 values) whose groups of equal values end
 * exactly on the ranks of p50, p75, p90, p99, p99.9 and p99.99 where p x N is an integer: the
 * bin that reaches the rank is the answer, the next bin is the classic mistake (99.9 / 100 x
 * 20,000 is 19,980.000000000004 in doubles, which a plain ceil makes 19,981). The largest run
 * is lognormal with three values past the 60 s ceiling (clamped). Without arguments each
 * percentile is checked against the sorted values at the exact rank ceil(p x N / 100), in
 * integers; p99.99 of 1,000 values falls in the max's bin, where the answer is the bin's top
 * (HdrHistogram's), not the exact max.
 *
 * `test_hist_hdr --export` prints, one case a line, what h2bench reports (the JSON's
 * latency_ns percentiles through h2b_load_latency_of, p75 through h2b_hist_percentile) and the
 * histogram in HdrHistogram's V2 compressed encoding (h2b_load_hdr_encode, as `--hdr-log`
 * writes it): tests/integration/hist_hdr.sh decodes each with hdr-histogram-js and compares.
 * Line: NAME N P50 P75 P90 P99 P999 P9999 MAX_BIN_TOP MAX BASE64.
 */
#include "core/error.h"
#include "core/hist.h"
#include "core/results.h"
#include "load/load.h"
#include "test.h"

#include <math.h>

struct group {
    uint64_t value, count;
};

struct hcase {
    const char *name;
    const struct group *groups; /* NULL: the lognormal run */
    size_t ngroups;
};

/* p x N integral at every reported percentile, each group ending on a rank */
static const struct group one[] = {{765000, 1}};
static const struct group three[] = {{100, 1}, {200, 1}, {300000, 1}};
static const struct group edges_1000[] = {{1000, 500}, {2000, 250}, {5000, 150},
                                          {20000, 90}, {100000, 9}, {782000, 1}};
static const struct group edges_20000[] = {{300000, 10000}, {400000, 5000}, {500000, 3000},
                                           {650000, 1800},  {765000, 180},  {770000, 18},
                                           {782000, 2}};

#define N_LOGNORMAL 100000
#define N_SMALL 200
static struct group small[N_SMALL]; /* 1 .. 200 once each: bucket 0, exact bins */

static const struct hcase cases[] = {
    {"one", one, sizeof(one) / sizeof(one[0])},
    {"three", three, sizeof(three) / sizeof(three[0])},
    {"small-200", small, N_SMALL},
    {"edges-1000", edges_1000, sizeof(edges_1000) / sizeof(edges_1000[0])},
    {"edges-20000", edges_20000, sizeof(edges_20000) / sizeof(edges_20000[0])},
    {"lognormal-100000", NULL, 0},
};

/* p in hundredths of a percent, so that the exact rank is integer arithmetic */
static const unsigned pct100[] = {5000, 7500, 9000, 9900, 9990, 9999};

static uint64_t rng_state = 0x2545F4914F6CDD1DULL;

static double rng_unit(void)
{
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return ((double)((z ^ (z >> 31)) >> 11) + 0.5) / 9007199254740992.0;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Fills h and a sorted copy of every recorded value (after clamping); returns the count. */
static size_t build(const struct hcase *c, struct h2b_hist *h, uint64_t **sorted)
{
    size_t n = 0;
    if (c->groups) {
        for (size_t i = 0; i < c->ngroups; i++)
            n += c->groups[i].count;
    } else {
        n = N_LOGNORMAL;
    }
    uint64_t *v = malloc(n * sizeof(*v));
    if (v == NULL)
        abort();
    size_t k = 0;
    if (c->groups) {
        for (size_t i = 0; i < c->ngroups; i++) {
            h2b_hist_record_n(h, c->groups[i].value, c->groups[i].count);
            for (uint64_t j = 0; j < c->groups[i].count; j++)
                v[k++] = c->groups[i].value;
        }
    } else {
        rng_state = 0x2545F4914F6CDD1DULL;
        for (; k < n; k++) {
            double normal = sqrt(-2.0 * log(rng_unit())) * cos(2.0 * M_PI * rng_unit());
            uint64_t x = k < 3 ? 70000000000ULL : (uint64_t)exp(log(1e6) + normal) + 1;
            h2b_hist_record(h, x);
            v[k] = x < h->highest ? x : h->highest;
        }
    }
    qsort(v, n, sizeof(*v), cmp_u64);
    *sorted = v;
    return n;
}

static void check_case(const struct hcase *c)
{
    struct h2b_hist *h = NULL;
    uint64_t *v = NULL;
    CHECK_EQ_INT(h2b_hist_new_default(&h), H2B_OK);
    size_t n = build(c, h, &v);
    CHECK_EQ_U64(h->total, n);
    for (size_t i = 0; i < sizeof(pct100) / sizeof(pct100[0]); i++) {
        uint64_t rank = ((uint64_t)pct100[i] * n + 9999) / 10000;
        uint64_t want = h2b_hist_highest_equivalent(h, v[rank - 1]);
        uint64_t got = h2b_hist_percentile(h, pct100[i] / 100.0);
        if (got != want)
            fprintf(stderr, "%s: p%.2f: rank %" PRIu64 " is %" PRIu64 ", bin top %" PRIu64 "\n",
                    c->name, pct100[i] / 100.0, rank, v[rank - 1], want);
        CHECK_EQ_U64(got, want);
    }
    CHECK_EQ_U64(h2b_hist_percentile(h, 0), h2b_hist_lowest_equivalent(h, v[0]));
    CHECK_EQ_U64(h2b_hist_percentile(h, 100), h2b_hist_highest_equivalent(h, v[n - 1]));
    CHECK_EQ_U64(h->max, v[n - 1]); /* the exact max is kept beside the percentiles */
    free(v);
    h2b_hist_del(h);
}

static int export_case(const struct hcase *c)
{
    struct h2b_hist *h = NULL;
    uint64_t *v = NULL;
    char *b64 = NULL;
    if (h2b_hist_new_default(&h) != H2B_OK)
        return 1;
    size_t n = build(c, h, &v);
    struct h2b_results_latency l = {0};
    h2b_load_latency_of(&l, h);
    int rv = h2b_load_hdr_encode(h, &b64);
    if (rv == H2B_OK)
        printf("%s %zu %.0f %" PRIu64 " %.0f %.0f %.0f %.0f %" PRIu64 " %.0f %s\n", c->name, n,
               l.p50, h2b_hist_percentile(h, 75), l.p90, l.p99, l.p999, l.p9999,
               h2b_hist_highest_equivalent(h, h->max), l.max, b64);
    free(b64);
    free(v);
    h2b_hist_del(h);
    return rv != H2B_OK;
}

int main(int argc, char **argv)
{
    for (size_t i = 0; i < N_SMALL; i++)
        small[i] = (struct group){i + 1, 1};
    size_t ncases = sizeof(cases) / sizeof(cases[0]);
    if (argc == 2 && strcmp(argv[1], "--export") == 0) {
        int bad = 0;
        for (size_t i = 0; i < ncases; i++)
            bad |= export_case(&cases[i]);
        return bad;
    }
    if (argc != 1) {
        fprintf(stderr, "usage: test_hist_hdr [--export]\n");
        return 2;
    }
    for (size_t i = 0; i < ncases; i++)
        check_case(&cases[i]);
    return test_report();
}
