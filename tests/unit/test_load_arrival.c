/*
 * test_load_arrival.c - the open-loop schedule: constant times are exact and drift-free, Poisson
 * gaps have the right mean and spread, a seed reproduces a schedule, bad input is refused.
 */
#include "load/arrival.h"
#include "core/error.h"
#include "test.h"

#include <math.h>

static void constant_exact(void)
{
    struct h2b_arrival a;
    CHECK_EQ_INT(h2b_arrival_init(&a, H2B_ARRIVAL_CONSTANT, 2000, 1000, 7), H2B_OK);
    CHECK_EQ_U64(h2b_arrival_peek(&a), 1000);
    CHECK_EQ_U64(h2b_arrival_pop(&a), 1000);
    CHECK_EQ_U64(h2b_arrival_pop(&a), 1000 + 500000);
    CHECK_EQ_U64(h2b_arrival_peek(&a), 1000 + 1000000);
    /* a fractional interval (3 per second = 333,333,333.3 ns) does not drift over 3e6 steps */
    CHECK_EQ_INT(h2b_arrival_init(&a, H2B_ARRIVAL_CONSTANT, 3, 0, 0), H2B_OK);
    uint64_t t = 0;
    for (int i = 0; i <= 3000000; i++)
        t = h2b_arrival_pop(&a);
    CHECK_EQ_U64(t, 1000000ULL * 1000000000ULL);
    /* monotonic, one per interval */
    CHECK_EQ_INT(h2b_arrival_init(&a, H2B_ARRIVAL_CONSTANT, 7, 5, 0), H2B_OK);
    uint64_t prev = h2b_arrival_pop(&a);
    int ok = 1;
    for (int i = 0; i < 1000; i++) {
        uint64_t x = h2b_arrival_pop(&a);
        uint64_t gap = x - prev;
        if (gap < 142857142 || gap > 142857143)
            ok = 0;
        prev = x;
    }
    CHECK(ok);
}

static void poisson_shape(void)
{
    struct h2b_arrival a, b;
    const double rate = 10000;
    const int n = 200000;
    CHECK_EQ_INT(h2b_arrival_init(&a, H2B_ARRIVAL_POISSON, rate, 0, 42), H2B_OK);
    CHECK_EQ_INT(h2b_arrival_init(&b, H2B_ARRIVAL_POISSON, rate, 0, 42), H2B_OK);
    double sum = 0, sum2 = 0;
    uint64_t prev = 0;
    int same = 1, monotonic = 1;
    for (int i = 0; i < n; i++) {
        uint64_t x = h2b_arrival_pop(&a);
        if (x != h2b_arrival_pop(&b))
            same = 0;
        if (x < prev)
            monotonic = 0;
        double gap = (double)(x - prev);
        sum += gap;
        sum2 += gap * gap;
        prev = x;
    }
    CHECK(same);
    CHECK(monotonic);
    double mean = sum / n, sd = sqrt(sum2 / n - mean * mean);
    /* exponential: mean = sd = 1/rate = 100 us; 200k samples put both within 1.5% */
    CHECK(fabs(mean - 100000.0) < 1500.0);
    CHECK(fabs(sd - 100000.0) < 1500.0);
    /* the total after n arrivals matches n / rate */
    CHECK(fabs((double)prev - n * 1e9 / rate) < 0.02 * n * 1e9 / rate);
    /* another seed gives another schedule */
    CHECK_EQ_INT(h2b_arrival_init(&b, H2B_ARRIVAL_POISSON, rate, 0, 43), H2B_OK);
    CHECK_EQ_INT(h2b_arrival_init(&a, H2B_ARRIVAL_POISSON, rate, 0, 42), H2B_OK);
    int differ = 0;
    for (int i = 0; i < 10; i++)
        differ |= h2b_arrival_pop(&a) != h2b_arrival_pop(&b);
    CHECK(differ);
}

static void bad_input(void)
{
    struct h2b_arrival a = {.k = 99};
    CHECK_EQ_INT(h2b_arrival_init(&a, H2B_ARRIVAL_CONSTANT, 0, 0, 0), H2B_ERR_INVAL);
    CHECK_EQ_INT(h2b_arrival_init(&a, H2B_ARRIVAL_CONSTANT, -5, 0, 0), H2B_ERR_INVAL);
    CHECK_EQ_INT(h2b_arrival_init(&a, H2B_ARRIVAL_POISSON, NAN, 0, 0), H2B_ERR_INVAL);
    CHECK_EQ_INT(h2b_arrival_init(&a, (enum h2b_arrival_kind)9, 5, 0, 0), H2B_ERR_INVAL);
    CHECK_EQ_U64(a.k, 99); /* untouched on failure */
    enum h2b_arrival_kind k = H2B_ARRIVAL_POISSON;
    CHECK_EQ_INT(h2b_arrival_parse_kind("constant", &k), H2B_OK);
    CHECK_EQ_INT(k, H2B_ARRIVAL_CONSTANT);
    CHECK_EQ_INT(h2b_arrival_parse_kind("poisson", &k), H2B_OK);
    CHECK_EQ_INT(k, H2B_ARRIVAL_POISSON);
    CHECK_EQ_INT(h2b_arrival_parse_kind("Poisson", &k), H2B_ERR_PARSE);
    CHECK_EQ_INT(h2b_arrival_parse_kind("", &k), H2B_ERR_PARSE);
    CHECK_EQ_INT(h2b_arrival_parse_kind(NULL, &k), H2B_ERR_PARSE);
    CHECK_EQ_INT(k, H2B_ARRIVAL_POISSON);
    CHECK_STR(h2b_arrival_kind_name(H2B_ARRIVAL_CONSTANT), "constant");
    CHECK_STR(h2b_arrival_kind_name(H2B_ARRIVAL_POISSON), "poisson");
}

int main(void)
{
    constant_exact();
    poisson_shape();
    bad_input();
    return test_report();
}
