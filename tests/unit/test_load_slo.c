/*
 * test_load_slo.c - --slo: the objectives parse (p999 is 99.9, errors take % or a ratio, rps a
 * rate or K*offered), bad text is refused at its column, and a span is judged pass, fail or
 * not evaluable (never a pass when the figure cannot be shown).
 */
#include "load/slo.h"
#include "core/error.h"
#include "core/json.h"
#include "core/model.h"
#include "core/results.h"
#include "test.h"

#include <math.h>
#include <string.h>

static void parse(void)
{
    struct h2b_slo s = {0};
    struct h2b_diag d = {0};
    CHECK_EQ_INT(h2b_slo_parse(&s,
                               "p99<5ms, p999 <= 20ms,errors<0.1%,rps>0.98*offered,"
                               "rps>=100,max<1s,mean<250us,p99.5<1ms,errors<0.02",
                               &d),
                 H2B_OK);
    CHECK_EQ_U64(s.n, 9);
    CHECK(s.clause[0].metric == H2B_SLO_PCT && s.clause[0].pct == 99 &&
          s.clause[0].op == H2B_SLO_LT && s.clause[0].limit == 5e6);
    CHECK(fabs(s.clause[1].pct - 99.9) < 1e-12 && s.clause[1].op == H2B_SLO_LE);
    CHECK_STR(s.clause[1].text, "p999 <= 20ms");
    CHECK(s.clause[2].metric == H2B_SLO_ERRORS && fabs(s.clause[2].limit - 0.001) < 1e-15);
    CHECK(s.clause[3].metric == H2B_SLO_RPS && s.clause[3].of_offered == 0.98 &&
          s.clause[3].op == H2B_SLO_GT);
    CHECK(s.clause[4].limit == 100 && s.clause[4].op == H2B_SLO_GE);
    CHECK(s.clause[5].metric == H2B_SLO_MAX && s.clause[5].limit == 1e9);
    CHECK(s.clause[6].metric == H2B_SLO_MEAN && s.clause[6].limit == 250e3);
    CHECK(fabs(s.clause[7].pct - 99.5) < 1e-12);
    CHECK(fabs(s.clause[8].limit - 0.02) < 1e-15);
    static const struct {
        const char *text;
        int column;
    } bad[] = {{"p99<5ms,p99<", 13}, {"p99=5ms", 1},  {"p99<5ms,foo<1ms", 9}, {"p99<5", 5},
               {"errors<150%", 8},   {"p100<1s", 1},  {",p99<1ms", 1},        {"<1ms", 1},
               {"rps>x*offered", 5}, {"mean<fast", 6}};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct h2b_slo b = {0};
        CHECK_EQ_INT(h2b_slo_parse(&b, bad[i].text, &d), H2B_ERR_PARSE);
        CHECK_STR(d.file, "--slo");
        CHECK_EQ_INT(d.column, bad[i].column);
    }
}

static const char *verdict(const struct h2b_slo *s, size_t i)
{
    const struct h2b_results_slo *r = h2b_model_array_at(&h2b_results_slo_model, &s->verdicts, i);
    return r->verdict;
}

static void judge(void)
{
    struct h2b_slo s = {0};
    struct h2b_diag d = {0};
    CHECK_EQ_INT(h2b_slo_parse(&s, "p99<5ms,p999<5ms,errors<1%,rps>0.9*offered", &d), H2B_OK);
    struct h2b_hist *h;
    CHECK_EQ_INT(h2b_hist_new_default(&h), H2B_OK);
    /* 100 requests: 99 at 1 ms, one at 50 ms. p99 is 1 ms; p99.9 needs 1000 requests */
    h2b_hist_record_n(h, 1000000, 99);
    h2b_hist_record(h, 50000000);
    struct h2b_slo_span sp = {
        .start_s = 0, .end_s = 1, .latency = h, .ended = 100, .errors = 0, .offered = NAN};
    CHECK(h2b_slo_judge(&s, &sp, false)); /* a window: not evaluable is not a breach */
    CHECK_STR(verdict(&s, 0), "pass");
    CHECK_STR(verdict(&s, 1), "not_evaluable");
    CHECK_STR(verdict(&s, 2), "pass");
    CHECK_STR(verdict(&s, 3), "not_evaluable"); /* closed loop: no offered rate */
    CHECK_EQ_U64(s.not_evaluable, 2);
    CHECK_EQ_U64(s.run_not_evaluable, 0);
    /* 1000 requests with 10 slow: p99.9 is shown and fails; 2 % errors fail; 100 of 200 offered */
    h2b_hist_record_n(h, 1000000, 891);
    h2b_hist_record_n(h, 50000000, 9);
    sp.ended = 1000;
    sp.errors = 20;
    sp.offered = 2000;
    CHECK(!h2b_slo_judge(&s, &sp, true)); /* the run */
    CHECK_STR(verdict(&s, 4), "pass");
    CHECK_STR(verdict(&s, 5), "fail");
    CHECK_STR(verdict(&s, 6), "fail");
    CHECK_STR(verdict(&s, 7), "fail");
    const struct h2b_results_slo *r = h2b_model_array_at(&h2b_results_slo_model, &s.verdicts, 7);
    CHECK(r->value == 1000 && fabs(r->limit - 1800) < 1e-9);
    CHECK_EQ_U64(s.failed, 3);
    CHECK_EQ_U64(s.run_failed, 3);
    char why[256];
    h2b_slo_first_breach(&s, why, sizeof(why));
    /* p99.9 is HdrHistogram's value: the top of the bin holding 50 ms, 50,069,503 ns */
    CHECK(strstr(why, "p999<5ms in the run 0.0-1.0s: 50.070ms, limit 5.000ms") != NULL);
    h2b_hist_del(h);
    h2b_slo_free(&s);
}

int main(void)
{
    parse();
    judge();
    return test_report();
}
