/*
 * test_hist.c - the histogram against exact truth.
 *
 * Percentiles are compared with an exactly sorted array (rank ceil(p*N)) on uniform, lognormal
 * and Pareto data; merge must equal recording into one; the encoding must round-trip and reject
 * every corruption we can think of.
 */
#include "core/error.h"
#include "core/hist.h"
#include "test.h"

#include <math.h>

static uint64_t rng_state = 0x9E3779B97F4A7C15ULL;

static uint64_t rng_next(void)
{
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static double rng_unit(void)
{
    return ((double)(rng_next() >> 11) + 0.5) / 9007199254740992.0;
}

static double rng_normal(void)
{
    return sqrt(-2.0 * log(rng_unit())) * cos(2.0 * M_PI * rng_unit());
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static const double percentiles[] = {0, 1, 10, 25, 50, 75, 90, 99, 99.9, 99.99, 99.999, 100};

/* Returns the worst relative error of h's percentiles against the sorted samples. */
static double worst_error(const struct h2b_hist *h, uint64_t *sorted, size_t n)
{
    double worst = 0;
    for (size_t i = 0; i < sizeof(percentiles) / sizeof(percentiles[0]); i++) {
        size_t rank = (size_t)ceil(percentiles[i] / 100.0 * (double)n);
        if (rank < 1)
            rank = 1;
        uint64_t exact = sorted[rank - 1];
        uint64_t got = h2b_hist_percentile(h, percentiles[i]);
        double err = exact ? fabs((double)got - (double)exact) / (double)exact : (double)got;
        if (err > worst)
            worst = err;
    }
    return worst;
}

static void check_distribution(const char *name, uint64_t (*gen)(void), size_t n)
{
    uint64_t *v = malloc(n * sizeof(*v));
    struct h2b_hist *h;
    CHECK_EQ_INT(h2b_hist_new_default(&h), H2B_OK);
    double sum = 0, sumsq = 0;
    for (size_t i = 0; i < n; i++) {
        v[i] = gen();
        h2b_hist_record(h, v[i]);
        sum += (double)v[i];
    }
    double mean = sum / (double)n;
    for (size_t i = 0; i < n; i++)
        sumsq += ((double)v[i] - mean) * ((double)v[i] - mean);
    qsort(v, n, sizeof(*v), cmp_u64);
    double worst = worst_error(h, v, n);
    printf("%s: %zu samples, worst relative percentile error %.4f%%\n", name, n, worst * 100);
    CHECK(worst <= 0.01);
    CHECK_EQ_U64(h->total, n);
    CHECK_EQ_U64(h->min, v[0]);
    CHECK_EQ_U64(h->max, v[n - 1]);
    CHECK_EQ_U64(h2b_hist_percentile(h, 100), h2b_hist_highest_equivalent(h, v[n - 1]));
    CHECK_EQ_U64(h2b_hist_percentile(h, 0), h2b_hist_lowest_equivalent(h, v[0]));
    CHECK(fabs(h2b_hist_mean(h) - mean) / mean <= 0.01);
    double sd = sqrt(sumsq / (double)n);
    CHECK(fabs(h2b_hist_stddev(h) - sd) / sd <= 0.01);
    h2b_hist_del(h);
    free(v);
}

static uint64_t gen_uniform(void)
{
    return 1 + rng_next() % 10000000;
}

static uint64_t gen_lognormal(void)
{
    return (uint64_t)exp(log(1e6) + 1.0 * rng_normal()) + 1; /* median ~1 ms */
}

static uint64_t gen_pareto(void)
{
    double x = 20000.0 / pow(rng_unit(), 1.0 / 1.2); /* heavy tail, alpha 1.2, from 20 us */
    return x > 5e10 ? 50000000000ULL : (uint64_t)x;
}

static void check_merge(void)
{
    struct h2b_hist *a, *b, *all;
    h2b_hist_new_default(&a);
    h2b_hist_new_default(&b);
    h2b_hist_new_default(&all);
    for (int i = 0; i < 100000; i++) {
        uint64_t x = gen_lognormal();
        h2b_hist_record(i % 3 ? a : b, x);
        h2b_hist_record(all, x);
    }
    CHECK_EQ_INT(h2b_hist_merge(a, b), H2B_OK);
    CHECK_EQ_U64(a->total, all->total);
    CHECK_EQ_U64(a->min, all->min);
    CHECK_EQ_U64(a->max, all->max);
    CHECK(memcmp(a->counts, all->counts, a->count_len * sizeof(a->counts[0])) == 0);

    struct h2b_hist *other;
    CHECK_EQ_INT(h2b_hist_new(&other, 1, 1000000, 7), H2B_OK);
    h2b_hist_record(other, 5);
    uint64_t before = a->total;
    CHECK_EQ_INT(h2b_hist_merge(a, other), H2B_ERR_INVAL);
    CHECK_EQ_U64(a->total, before);
    h2b_hist_del(other);
    h2b_hist_del(a);
    h2b_hist_del(b);
    h2b_hist_del(all);
}

static void check_config_and_clamp(void)
{
    struct h2b_hist *h = (struct h2b_hist *)&rng_state; /* sentinel: must stay untouched */
    CHECK_EQ_INT(h2b_hist_new(&h, 0, 100, 7), H2B_ERR_INVAL);
    CHECK_EQ_INT(h2b_hist_new(&h, 10, 15, 7), H2B_ERR_INVAL);
    CHECK_EQ_INT(h2b_hist_new(&h, 1, 100, 0), H2B_ERR_INVAL);
    CHECK_EQ_INT(h2b_hist_new(&h, 1, 100, 15), H2B_ERR_INVAL);
    CHECK(h == (struct h2b_hist *)&rng_state);

    CHECK_EQ_INT(h2b_hist_new(&h, 100, 1000000, 7), H2B_OK);
    CHECK_EQ_U64(h2b_hist_percentile(h, 50), 0); /* empty */
    CHECK(h2b_hist_mean(h) == 0);
    h2b_hist_record(h, 5);
    h2b_hist_record(h, 5000000);
    h2b_hist_record_n(h, 1000, 8);
    CHECK_EQ_U64(h->total, 10);
    CHECK_EQ_U64(h->clamped, 2);
    CHECK_EQ_U64(h->min, 100);
    CHECK_EQ_U64(h->max, 1000000);
    CHECK_EQ_U64(h2b_hist_percentile(h, 50), h2b_hist_highest_equivalent(h, 1000));
    CHECK(h2b_hist_lowest_equivalent(h, 1000) <= 1000);
    CHECK(h2b_hist_highest_equivalent(h, 1000) >= 1000);
    /* Small values are exact: bucket 0 has unit 1. */
    for (uint64_t v = 0; v < 256; v++)
        CHECK_EQ_U64(h2b_hist_lowest_equivalent(h, v), v);
    h2b_hist_reset(h);
    CHECK_EQ_U64(h->total, 0);
    CHECK_EQ_U64(h2b_hist_percentile(h, 99), 0);
    h2b_hist_del(h);
    h2b_hist_del(NULL);
}

/* p x N exactly on a bin edge: the percentile is the bin that reaches the rank, as
 * HdrHistogram's getValueAtPercentile gives it, not the next one (99.9 % of 20,000 is 19,980,
 * which a plain ceil of the floating-point product makes 19,981), and its value is that bin's
 * top (p0: its bottom), never bounded by the exact min or max. */
static void check_rank_on_edge(void)
{
    struct h2b_hist *h = NULL;
    CHECK_EQ_INT(h2b_hist_new(&h, 1, 60000000000ULL, 7), H2B_OK);
    h2b_hist_record_n(h, 1000, 19980);
    h2b_hist_record_n(h, 900000, 20);
    CHECK_EQ_U64(h2b_hist_percentile(h, 99.9), h2b_hist_highest_equivalent(h, 1000));
    /* the top of the max's bin, as HdrHistogram reports it, not the exact max */
    CHECK_EQ_U64(h2b_hist_percentile(h, 99.91), h2b_hist_highest_equivalent(h, 900000));
    CHECK(h2b_hist_percentile(h, 99.91) > h->max);
    h2b_hist_reset(h);
    h2b_hist_record_n(h, 500, 99);
    h2b_hist_record_n(h, 70000, 1);
    CHECK_EQ_U64(h2b_hist_percentile(h, 99), h2b_hist_highest_equivalent(h, 500));
    CHECK_EQ_U64(h2b_hist_percentile(h, 0), h2b_hist_lowest_equivalent(h, 500)); /* p0: bottom */
    h2b_hist_del(h);
}

static void check_encoding(void)
{
    struct h2b_hist *h, *d = NULL;
    h2b_hist_new_default(&h);
    char *text;
    /* Empty histogram round-trips. */
    CHECK_EQ_INT(h2b_hist_encode(h, &text), H2B_OK);
    CHECK_EQ_INT(h2b_hist_decode(text, &d), H2B_OK);
    CHECK(d != NULL && d->total == 0 && d->max == 0);
    h2b_hist_del(d);
    free(text);

    for (int i = 0; i < 200000; i++)
        h2b_hist_record(h, gen_pareto());
    h2b_hist_record(h, 70000000000ULL); /* clamped */
    CHECK_EQ_INT(h2b_hist_encode(h, &text), H2B_OK);
    printf("encoding of %" PRIu64 " Pareto samples: %zu bytes\n", h->total, strlen(text));
    d = NULL;
    CHECK_EQ_INT(h2b_hist_decode(text, &d), H2B_OK);
    CHECK(d != NULL);
    if (d) {
        CHECK(h2b_hist_same_config(h, d));
        CHECK_EQ_U64(d->total, h->total);
        CHECK_EQ_U64(d->min, h->min);
        CHECK_EQ_U64(d->max, h->max);
        CHECK_EQ_U64(d->clamped, h->clamped);
        CHECK(memcmp(d->counts, h->counts, h->count_len * sizeof(h->counts[0])) == 0);
        h2b_hist_del(d);
    }

    /* Corruptions: every single-character change and every truncation is rejected. */
    size_t len = strlen(text);
    int accepted = 0;
    for (size_t i = 0; i < len; i += 1 + len / 400) {
        char saved = text[i];
        text[i] = saved == 'A' ? 'B' : 'A';
        d = (struct h2b_hist *)&rng_state;
        if (h2b_hist_decode(text, &d) == H2B_OK) {
            accepted++;
            h2b_hist_del(d);
        } else {
            CHECK(d == (struct h2b_hist *)&rng_state);
        }
        text[i] = saved;
    }
    CHECK_EQ_INT(accepted, 0);
    for (size_t cut = 0; cut < len; cut += 1 + len / 100) {
        char saved = text[cut];
        text[cut] = '\0';
        if (h2b_hist_decode(text, &d) == H2B_OK) {
            accepted++;
            h2b_hist_del(d);
        }
        text[cut] = saved;
    }
    CHECK_EQ_INT(accepted, 0);
    static const char *bad[] = {"",          "h2bh1:",         "h2bh2:AAAA", "h2bh1:!!!!",
                                "h2bh1:AAA", "h2bh1:AA==AA==", "hdr1:AAAA"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        CHECK_EQ_INT(h2b_hist_decode(bad[i], &d), H2B_ERR_PARSE);
    CHECK_EQ_INT(h2b_hist_decode(NULL, &d), H2B_ERR_PARSE);
    free(text);
    h2b_hist_del(h);
}

int main(void)
{
    check_distribution("uniform", gen_uniform, 1000000);
    check_distribution("lognormal", gen_lognormal, 1000000);
    check_distribution("pareto", gen_pareto, 1000000);
    check_merge();
    check_config_and_clamp();
    check_rank_on_edge();
    check_encoding();
    return test_report();
}
