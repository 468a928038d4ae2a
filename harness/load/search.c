/*
 * search.c - the capacity search behind --find-max (see search.h).
 *
 * Each step is its own h2b_load_run (fresh connections, a warm-up, then the hold), so a step
 * cannot inherit the backlog of an overloaded one before it. Exponential growth finds a failing
 * rate in log2(capacity / start) steps; bisection then halves the bracket until
 * (fail - pass) / pass <= precision. Rejected: one long run whose rate is adjusted on the fly
 * (Nighthawk's adaptive controller): the backlog an overloaded interval leaves behind is
 * charged to the next rate, and the answer depends on the order the rates were tried.
 */
#include "load/search.h"
#include "load/engine.h"
#include "load/slo.h"
#include "core/clock.h"
#include "core/error.h"
#include "core/json.h"
#include "core/results.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_STEPS 64

struct search {
    const struct h2b_load_config *cfg;
    h2b_load_search_fn each;
    void *ctx;
    struct h2b_results_search *out;
    struct h2b_diag *err;
};

/* Runs one try of a step at rate; *pass says whether every objective was shown to hold. */
static int try_once(struct search *s, double rate, bool *pass, bool *shown)
{
    const struct h2b_load_config *cfg = s->cfg;
    struct h2b_load_config c = *cfg; /* shallow: the run reads, never frees */
    c.rate = rate;
    c.duration_ns = cfg->find_max_step_ns;
    c.warmup_ns = cfg->find_max_warmup_ns;
    c.requests = 0;
    c.interval_ns = 0;
    c.on_interval = NULL;
    c.find_max = false;
    struct h2b_slo slo;
    memcpy(&slo, cfg->slo, sizeof(slo));
    memset(&slo.verdicts, 0, sizeof(slo.verdicts));
    slo.failed = slo.not_evaluable = slo.run_failed = slo.run_not_evaluable = 0;
    slo.run_judged = false;
    slo.w_latency = NULL;
    slo.rc = H2B_OK;
    c.slo = &slo;
    struct h2b_load_result res;
    int rv = h2b_load_run(&c, NULL, NULL, &res, s->err);
    if (rv != H2B_OK)
        return rv;
    struct h2b_slo_span sp;
    h2b_slo_run_span(&sp, &c, &res);
    h2b_slo_judge(&slo, &sp, true);
    *pass = slo.run_failed == 0 && slo.run_not_evaluable == 0;
    *shown = *pass || slo.run_failed > 0;
    struct h2b_results_search_step *st;
    rv = h2b_model_array_push(&h2b_results_search_step_model, &s->out->steps, (void **)&st);
    if (rv == H2B_OK) {
        st->base.present = true;
        st->rate_per_s = rate;
        st->achieved_per_s = sp.end_s > 0 ? sp.ended / sp.end_s : NAN;
        st->ended = sp.ended;
        st->errors = sp.errors;
        h2b_load_latency_of(&st->latency_ns, res.s.latency);
        rv = h2b_model_set_string(&st->verdict, *pass            ? "pass"
                                                : slo.run_failed ? "fail"
                                                                 : "not_evaluable");
    }
    if (rv == H2B_OK && res.s.conns_ok == 0)
        rv = h2b__load_errf(s->err, H2B_ERR_IO, "no connection to %s could be made",
                            cfg->uris[0].authority);
    if (rv == H2B_OK && (res.interrupted || slo.rc != H2B_OK))
        rv = slo.rc != H2B_OK ? slo.rc : H2B_ERR_INTERRUPTED;
    if (rv == H2B_OK && s->each)
        s->each(s->ctx, s->out->steps.n - 1, st);
    h2b_slo_free(&slo);
    h2b_load_result_free(&res);
    return rv;
}

/* A step: up to 1 + find_max_retries tries while it fails. A busy machine's stall can fail a
 * step below capacity, but nothing makes a step above it pass (its backlog grows whatever
 * happens), so a failing step is confirmed before it counts; every try is in out->steps. */
static int step(struct search *s, double rate, bool *pass, bool *shown)
{
    int rv = H2B_OK;
    for (uint32_t k = 0; k <= s->cfg->find_max_retries && rv == H2B_OK; k++) {
        rv = try_once(s, rate, pass, shown);
        if (*pass || !*shown)
            break;
    }
    return rv;
}

/* Copies step i of the search into *dst (last_pass or first_fail). */
static int keep(struct h2b_results_search *o, struct h2b_results_search_step *dst)
{
    h2b_model_free(&h2b_results_search_step_model, dst);
    return h2b_model_copy(
        &h2b_results_search_step_model, dst,
        h2b_model_array_at(&h2b_results_search_step_model, &o->steps, o->steps.n - 1));
}

int h2b_load_find_max(const struct h2b_load_config *cfg, h2b_load_search_fn each, void *ctx,
                      struct h2b_results_search *out, struct h2b_diag *err)
{
    struct search s = {.cfg = cfg, .each = each, .ctx = ctx, .out = out, .err = err};
    h2b_model_init(&h2b_results_search_model, out);
    out->base.present = true;
    out->step_s = (double)cfg->find_max_step_ns / 1e9;
    out->warm_up_s = (double)cfg->find_max_warmup_ns / 1e9;
    if (h2b_model_set_string(&out->slo, cfg->slo_text) != H2B_OK)
        return H2B_ERR_NOMEM;
    uint64_t t0 = h2b_clock_now_ns();
    double lo = NAN, hi = NAN, rate = cfg->find_max_start;
    double floor_rate = cfg->threads; /* every worker needs 1 request/s */
    int rv = H2B_OK;
    bool pass = false, shown = false;
    /* bracket: double while passing (or while the step is too short to show a figure: more
     * requests will), halve while failing */
    while (rv == H2B_OK && out->steps.n < MAX_STEPS) {
        if ((rv = step(&s, rate, &pass, &shown)) != H2B_OK)
            break;
        if (pass || !shown) {
            if (pass) {
                lo = rate;
                rv = keep(out, &out->last_pass);
            }
            if (!isnan(hi) || rate >= cfg->find_max_limit)
                break;
            rate = fmin(rate * 2, cfg->find_max_limit);
        } else {
            hi = rate;
            rv = keep(out, &out->first_fail);
            if (!isnan(lo) || rate / 2 < floor_rate)
                break;
            rate /= 2;
        }
    }
    /* bisect [lo, hi]: a step that cannot show its figures does not pass */
    while (rv == H2B_OK && !isnan(lo) && !isnan(hi) && (hi - lo) / lo > cfg->find_max_precision &&
           out->steps.n < MAX_STEPS) {
        rate = (lo + hi) / 2;
        if ((rv = step(&s, rate, &pass, &shown)) != H2B_OK)
            break;
        if (pass) {
            lo = rate;
            rv = keep(out, &out->last_pass);
        } else {
            hi = rate;
            rv = keep(out, &out->first_fail);
        }
    }
    out->capacity_per_s = lo;
    out->precision = !isnan(lo) && !isnan(hi) ? (hi - lo) / lo : NAN;
    out->search_s = (double)(h2b_clock_now_ns() - t0) / 1e9;
    return rv;
}
