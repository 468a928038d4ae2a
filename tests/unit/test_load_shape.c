/*
 * test_load_shape.c - load shapes: --stages and --step parse (and refuse bad input naming the
 * field and its column), the integral and its inverse are exact, and a shaped schedule's
 * intended times follow the shape: worker i of t takes arrivals i, i + t, ... of one stream.
 * Connection shapes (--conn-stages, --conn-step) parse with their own flag and words, and their
 * value at t is dealt over the workers as -c is, the shares adding up to the rounded value.
 */
#include "load/arrival.h"
#include "load/shape.h"
#include "core/error.h"
#include "core/json.h"
#include "test.h"

#include <math.h>
#include <string.h>

#define S 1000000000ULL

static void stages_integral(void)
{
    struct h2b_shape s;
    struct h2b_diag d = {0};
    CHECK_EQ_INT(h2b_shape_parse_stages(&s, "10s:1000,30s:5000,10s:0", 0, &d), H2B_OK);
    CHECK_EQ_U64(s.nseg, 3);
    CHECK_EQ_U64(s.total_ns, 50 * S);
    /* 0->1000 over 10 s: 5000; 1000->5000 over 30 s: 90000; 5000->0 over 10 s: 25000 */
    CHECK(fabs(s.total - 120000) < 1e-6);
    CHECK(fabs(h2b_shape_count(&s, 10 * S) - 5000) < 1e-6);
    CHECK(fabs(h2b_shape_count(&s, 40 * S) - 95000) < 1e-6);
    CHECK(fabs(h2b_shape_rate_at(&s, 5 * S) - 500) < 1e-9);
    CHECK(fabs(h2b_shape_rate_at(&s, 25 * S) - 3000) < 1e-9);
    CHECK(fabs(h2b_shape_peak(&s) - 5000) < 1e-9);
    /* the inverse: 0 -> 0; on the first ramp N(t) = 50 t^2, so the 1250th request is at 5 s */
    CHECK_EQ_U64(h2b_shape_time_of(&s, 0), 0);
    CHECK_EQ_U64(h2b_shape_time_of(&s, 1250), 5 * S);
    CHECK_EQ_U64(h2b_shape_time_of(&s, 5000), 10 * S);
    CHECK_EQ_U64(h2b_shape_time_of(&s, 120000), UINT64_MAX);
    /* inverse of the integral round-trips within a nanosecond everywhere (falling part too) */
    int ok = 1;
    for (uint64_t t = 1; t < 50 * S; t += 7777777) {
        uint64_t back = h2b_shape_time_of(&s, h2b_shape_count(&s, t));
        if (back + 1 < t || back > t + 1)
            ok = 0;
    }
    CHECK(ok);
    h2b_shape_free(&s);
    /* a start rate (--total-rps) and a hold: 100 -> 100 over 2 s is flat */
    CHECK_EQ_INT(h2b_shape_parse_stages(&s, "2s:100,500ms:0", 100, &d), H2B_OK);
    CHECK(fabs(s.total - 225) < 1e-9);
    CHECK_EQ_U64(h2b_shape_time_of(&s, 1), 10000000);
    h2b_shape_free(&s);
    /* a pause at rate 0 between two holds takes no request: the next one starts after it */
    CHECK_EQ_INT(h2b_shape_parse_stages(&s, "1s:10,0.5s:10,1s:0,1s:0,1s:10", 10, &d), H2B_OK);
    uint64_t t15 = h2b_shape_time_of(&s, 15); /* the first request after the flat 1.5 s */
    CHECK(t15 >= 1500000000ULL && t15 < 2600000000ULL);
    h2b_shape_free(&s);
}

static void stages_bad(void)
{
    static const struct {
        const char *text;
        int column;
        const char *words;
    } bad[] = {
        {"", 1, "empty"},
        {"10s", 1, "expected DUR:RATE"},
        {"10s:100,0s:5", 9, "duration '0s'"},
        {"10s:100,5s:-3", 12, "rate '-3'"},
        {"10s:100,5s:abc", 12, "rate 'abc'"},
        {"ten:100", 1, "duration 'ten'"},
        {"10s:100,,5s:1", 9, "stage 2"},
        {"1s:0,2s:0", 1, "no request"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct h2b_shape s = {0};
        struct h2b_diag d = {0};
        CHECK_EQ_INT(h2b_shape_parse_stages(&s, bad[i].text, 0, &d), H2B_ERR_PARSE);
        CHECK_STR(d.file, "--stages");
        CHECK_EQ_INT(d.column, bad[i].column);
        CHECK(strstr(d.message, bad[i].words) != NULL);
        CHECK(s.seg == NULL);
    }
}

static void steps(void)
{
    double r, st;
    uint64_t dur;
    struct h2b_diag d = {0};
    CHECK_EQ_INT(h2b_shape_parse_step("100+50/5s", &r, &st, &dur, &d), H2B_OK);
    CHECK(r == 100 && st == 50 && dur == 5 * S);
    struct h2b_shape s;
    CHECK_EQ_INT(h2b_shape_steps(&s, r, st, dur, 12 * S), H2B_OK);
    CHECK_EQ_U64(s.nseg, 3);
    /* 100*5 + 150*5 + 200*2 */
    CHECK(fabs(s.total - 1650) < 1e-9);
    CHECK_EQ_U64(h2b_shape_time_of(&s, 500), 5 * S);
    CHECK_EQ_U64(h2b_shape_time_of(&s, 503), 5 * S + 20000000);
    h2b_shape_free(&s);
    CHECK_EQ_INT(h2b_shape_parse_step("100+50", &r, &st, &dur, &d), H2B_ERR_PARSE);
    CHECK_EQ_INT(h2b_shape_parse_step("-1+50/5s", &r, &st, &dur, &d), H2B_ERR_PARSE);
    CHECK_EQ_INT(d.column, 1);
    CHECK_EQ_INT(h2b_shape_parse_step("100+x/5s", &r, &st, &dur, &d), H2B_ERR_PARSE);
    CHECK_EQ_INT(d.column, 5);
    CHECK(strstr(d.message, "STEP") != NULL);
    CHECK_EQ_INT(h2b_shape_parse_step("100+5/0s", &r, &st, &dur, &d), H2B_ERR_PARSE);
    CHECK_EQ_INT(d.column, 7);
    CHECK(strstr(d.message, "DUR") != NULL);
    CHECK_EQ_INT(h2b_shape_steps(&s, 100, 1, S / 1000, 1000 * S), H2B_ERR_INVAL);
}

/* Two workers on one shape: their merged arrivals are exactly the run's stream, each at the
 * integral's inverse, and the count per second is the shape's integral over that second. */
static void shaped_schedule(void)
{
    struct h2b_shape s;
    struct h2b_diag d = {0};
    CHECK_EQ_INT(h2b_shape_parse_stages(&s, "2s:1000,2s:1000,1s:0", 0, &d), H2B_OK);
    struct h2b_arrival a[2];
    const uint64_t t0 = 123456789;
    for (int i = 0; i < 2; i++)
        CHECK_EQ_INT(h2b_arrival_init_shaped(&a[i], H2B_ARRIVAL_CONSTANT, &s, 2, i, t0, 1), H2B_OK);
    uint64_t per_s[6] = {0};
    int exact = 1, ordered = 1;
    uint64_t prev = 0;
    for (uint64_t n = 0;; n++) {
        struct h2b_arrival *w = &a[n % 2];
        uint64_t t = h2b_arrival_pop(w);
        if (t == UINT64_MAX)
            break;
        if (t != t0 + h2b_shape_time_of(&s, (double)n))
            exact = 0;
        if (t < prev)
            ordered = 0;
        prev = t;
        per_s[(t - t0) / S]++;
    }
    CHECK(exact);
    CHECK(ordered);
    /* integrals: 250, 750, 1000, 1000, 500 */
    CHECK_EQ_U64(per_s[0], 250);
    CHECK_EQ_U64(per_s[1], 750);
    CHECK_EQ_U64(per_s[2], 1000);
    CHECK_EQ_U64(per_s[3], 1000);
    CHECK_EQ_U64(per_s[4], 500);
    CHECK_EQ_U64(per_s[5], 0);
    /* poisson over the shape: reproducible, and the count per second near the integral */
    struct h2b_arrival p, q;
    CHECK_EQ_INT(h2b_arrival_init_shaped(&p, H2B_ARRIVAL_POISSON, &s, 1, 0, 0, 9), H2B_OK);
    CHECK_EQ_INT(h2b_arrival_init_shaped(&q, H2B_ARRIVAL_POISSON, &s, 1, 0, 0, 9), H2B_OK);
    uint64_t total = 0;
    int same = 1;
    for (uint64_t t; (t = h2b_arrival_pop(&p)) != UINT64_MAX; total++)
        if (t != h2b_arrival_pop(&q))
            same = 0;
    CHECK(same);
    CHECK(total > 3300 && total < 3700); /* 3500 expected, sd ~59 */
    CHECK_EQ_INT(h2b_arrival_init_shaped(&p, H2B_ARRIVAL_CONSTANT, &s, 0.5, 0, 0, 9),
                 H2B_ERR_INVAL);
    h2b_shape_free(&s);
}

/* --conn-stages 2s:8,2s:8,2s:2 over 3 workers: the shares add up to the rounded value at every
 * t, each is monotone where the shape is, and the first workers take the remainder. */
static void conn_shares(void)
{
    struct h2b_shape s;
    struct h2b_diag d = {0};
    CHECK_EQ_INT(h2b_shape_parse_conn_stages(&s, "2s:8,2s:8,2s:2", &d), H2B_OK);
    CHECK_EQ_U64(s.total_ns, 6 * S);
    CHECK(fabs(h2b_shape_peak(&s) - 8) < 1e-9);
    int sums = 1, monotone = 1;
    uint32_t prev[3] = {0, 0, 0};
    for (uint64_t t = 0; t < 6 * S; t += S / 100) {
        uint32_t all = 0;
        for (uint32_t k = 0; k < 3; k++) {
            uint32_t v = h2b_shape_share(&s, t, 3, k);
            all += v;
            /* rising up to 2 s, flat to 4 s, falling after */
            if ((t <= 2 * S && v < prev[k]) || (t > 4 * S && v > prev[k]))
                monotone = 0;
            prev[k] = v;
        }
        if (all != (uint32_t)llround(h2b_shape_rate_at(&s, t)))
            sums = 0;
    }
    CHECK(sums);
    CHECK(monotone);
    /* at 1 s: 4 connections, 2 + 1 + 1; at 3 s: 8, 3 + 3 + 2; 5 s: 5, 2 + 2 + 1 */
    CHECK_EQ_U64(h2b_shape_share(&s, 1 * S, 3, 0), 2);
    CHECK_EQ_U64(h2b_shape_share(&s, 1 * S, 3, 2), 1);
    CHECK_EQ_U64(h2b_shape_share(&s, 3 * S, 3, 1), 3);
    CHECK_EQ_U64(h2b_shape_share(&s, 3 * S, 3, 2), 2);
    CHECK_EQ_U64(h2b_shape_share(&s, 5 * S, 3, 0), 2);
    CHECK_EQ_U64(h2b_shape_share(&s, 5 * S, 3, 2), 1);
    /* rounding to the nearest: 0.5 connections at 125 ms (0 -> 8 over 2 s) is one */
    CHECK_EQ_U64(h2b_shape_share(&s, S / 8, 1, 0), 1);
    CHECK_EQ_U64(h2b_shape_share(&s, S / 8 - S / 100, 1, 0), 0);
    CHECK_EQ_U64(h2b_shape_share(&s, 6 * S, 1, 0), 0); /* past the end */
    h2b_shape_free(&s);

    struct h2b_shape z = {0};
    CHECK_EQ_INT(h2b_shape_parse_conn_stages(&z, "2s:8,1s:-3", &d), H2B_ERR_PARSE);
    CHECK_STR(d.file, "--conn-stages");
    CHECK_EQ_INT(d.column, 9);
    CHECK(strstr(d.message, "stage 2: connections '-3'") != NULL);
    CHECK_EQ_INT(h2b_shape_parse_conn_stages(&z, "2s:8,0s:3", &d), H2B_ERR_PARSE);
    CHECK_EQ_INT(d.column, 6);
    CHECK(strstr(d.message, "duration '0s'") != NULL);
    CHECK_EQ_INT(h2b_shape_parse_conn_stages(&z, "1s:0", &d), H2B_ERR_PARSE);
    CHECK(strstr(d.message, "no connection") != NULL);
    CHECK(z.seg == NULL);

    double n, st;
    uint64_t dur;
    CHECK_EQ_INT(h2b_shape_parse_conn_step("2+3/5s", &n, &st, &dur, &d), H2B_OK);
    CHECK(n == 2 && st == 3 && dur == 5 * S);
    CHECK_EQ_INT(h2b_shape_parse_conn_step("0+3/5s", &n, &st, &dur, &d), H2B_ERR_PARSE);
    CHECK_STR(d.file, "--conn-step");
    CHECK_EQ_INT(d.column, 1);
    CHECK(strstr(d.message, "N '0'") != NULL);
    CHECK_EQ_INT(h2b_shape_parse_conn_step("2+x/5s", &n, &st, &dur, &d), H2B_ERR_PARSE);
    CHECK_EQ_INT(d.column, 3);
    /* the rate's flag keeps its words */
    CHECK_EQ_INT(h2b_shape_parse_step("-1+50/5s", &n, &st, &dur, &d), H2B_ERR_PARSE);
    CHECK_STR(d.file, "--step");
    CHECK(strstr(d.message, "requests/s") != NULL);
}

int main(void)
{
    conn_shares();
    stages_integral();
    stages_bad();
    steps();
    shaped_schedule();
    return test_report();
}
