/*
 * slo.c - --slo objectives: parse, judge spans, hook into the per-interval results (slo.h).
 *
 * A window is built from whole intervals (the interval hook merges their histograms, so a
 * window's percentiles are exact, never averaged); the run is judged on the run's own
 * histogram. Each judgement appends one verdict row (the core results model's
 * h2b_results_slo), which the JSON output carries as they are. Rejected: evaluating windows on
 * the progress line's snapshots, whose boundaries move with the workers' wake-ups.
 */
#include "load/slo.h"
#include "load/load.h"
#include "core/cli.h"
#include "core/error.h"
#include "core/json.h"
#include "core/results.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* One clause text[from, to) (column: from + 1) into c. */
static int parse_clause(struct h2b_slo_clause *c, const char *text, size_t from, size_t to,
                        struct h2b_diag *d)
{
    while (from < to && isspace((unsigned char)text[from]))
        from++;
    while (to > from && isspace((unsigned char)text[to - 1]))
        to--;
    int col = (int)from + 1;
    if (to == from) {
        h2b_diag_at(d, "--slo", 1, col, "empty objective (expected METRIC<VALUE, like p99<5ms)");
        return H2B_ERR_PARSE;
    }
    if (to - from >= sizeof(c->text)) {
        h2b_diag_at(d, "--slo", 1, col, "objective longer than %zu characters",
                    sizeof(c->text) - 1);
        return H2B_ERR_PARSE;
    }
    memset(c, 0, sizeof(*c));
    memcpy(c->text, text + from, to - from);
    const char *s = c->text;
    size_t m = strcspn(s, "<>");
    if (s[m] == '\0') {
        h2b_diag_at(d, "--slo", 1, col, "'%s': expected an operator (< <= > >=)", s);
        return H2B_ERR_PARSE;
    }
    char metric[32];
    size_t ml = m;
    while (ml > 0 && isspace((unsigned char)s[ml - 1]))
        ml--;
    if (ml == 0 || ml >= sizeof(metric)) {
        h2b_diag_at(d, "--slo", 1, col,
                    "'%s': expected a metric before the operator (pNN, max, mean, errors, rps)", s);
        return H2B_ERR_PARSE;
    }
    memcpy(metric, s, ml);
    metric[ml] = '\0';
    const char *op = s + m;
    size_t oplen = op[1] == '=' ? 2 : 1;
    c->op = op[0] == '<' ? (oplen == 2 ? H2B_SLO_LE : H2B_SLO_LT)
                         : (oplen == 2 ? H2B_SLO_GE : H2B_SLO_GT);
    const char *val = op + oplen;
    while (isspace((unsigned char)*val))
        val++;
    int vcol = col + (int)(val - s);
    if (metric[0] == 'p' && isdigit((unsigned char)metric[1])) {
        /* p99 = 99, p999 = 99.9, p9999 = 99.99, p99.5 = 99.5 */
        char num[40];
        const char *digits = metric + 1;
        if (strncmp(digits, "100", 3) == 0) {
            h2b_diag_at(d, "--slo", 1, col, "'%s': expected a percentile below 100 (p99, p999)",
                        metric);
            return H2B_ERR_PARSE;
        }
        if (strchr(digits, '.') || strlen(digits) <= 2) {
            snprintf(num, sizeof(num), "%s", digits);
        } else {
            snprintf(num, sizeof(num), "%.2s.%s", digits, digits + 2);
        }
        if (h2b_cli_parse_double(num, 1e-9, 100, &c->pct) != H2B_OK || !(c->pct < 100)) {
            h2b_diag_at(d, "--slo", 1, col, "'%s': expected a percentile below 100 (p99, p999)",
                        metric);
            return H2B_ERR_PARSE;
        }
        c->metric = H2B_SLO_PCT;
    } else if (strcmp(metric, "max") == 0) {
        c->metric = H2B_SLO_MAX;
    } else if (strcmp(metric, "mean") == 0) {
        c->metric = H2B_SLO_MEAN;
    } else if (strcmp(metric, "errors") == 0) {
        c->metric = H2B_SLO_ERRORS;
    } else if (strcmp(metric, "rps") == 0) {
        c->metric = H2B_SLO_RPS;
    } else {
        h2b_diag_at(d, "--slo", 1, col,
                    "unknown metric '%s' (expected pNN, max, mean, errors or rps)", metric);
        return H2B_ERR_PARSE;
    }
    uint64_t ns;
    double x;
    size_t vl = strlen(val);
    switch (c->metric) {
    case H2B_SLO_PCT:
    case H2B_SLO_MAX:
    case H2B_SLO_MEAN:
        /* a bare number would be seconds to the duration parser: a unit is required */
        if (vl == 0 || isdigit((unsigned char)val[vl - 1]) ||
            h2b_cli_parse_duration_ns(val, 0, UINT64_MAX / 2, &ns) != H2B_OK) {
            h2b_diag_at(d, "--slo", 1, vcol, "'%s': expected a duration with a unit (5ms, 250us)",
                        val);
            return H2B_ERR_PARSE;
        }
        c->limit = (double)ns;
        return H2B_OK;
    case H2B_SLO_ERRORS: {
        char num[40];
        bool pct = vl > 0 && val[vl - 1] == '%';
        snprintf(num, sizeof(num), "%.*s", (int)(pct ? vl - 1 : vl), val);
        if (vl == 0 || vl >= sizeof(num) ||
            h2b_cli_parse_double(num, 0, pct ? 100 : 1, &x) != H2B_OK) {
            h2b_diag_at(d, "--slo", 1, vcol,
                        "'%s': expected a share of the requests (0.1%% or 0.001)", val);
            return H2B_ERR_PARSE;
        }
        c->limit = pct ? x / 100 : x;
        return H2B_OK;
    }
    case H2B_SLO_RPS: {
        const char *star = strchr(val, '*');
        char num[40];
        if (star && strcmp(star + 1, "offered") == 0 && (size_t)(star - val) < sizeof(num)) {
            snprintf(num, sizeof(num), "%.*s", (int)(star - val), val);
            if (h2b_cli_parse_double(num, 0, 1e6, &x) == H2B_OK) {
                c->of_offered = x;
                return H2B_OK;
            }
        } else if (!star && strcmp(val, "offered") == 0) {
            c->of_offered = 1;
            return H2B_OK;
        } else if (!star && h2b_cli_parse_double(val, 0, 1e12, &x) == H2B_OK) {
            c->limit = x;
            return H2B_OK;
        }
        h2b_diag_at(d, "--slo", 1, vcol,
                    "'%s': expected requests/s or a share of the offered rate (0.98*offered)", val);
        return H2B_ERR_PARSE;
    }
    }
    return H2B_ERR_PARSE;
}

int h2b_slo_parse(struct h2b_slo *s, const char *text, struct h2b_diag *d)
{
    size_t len = strlen(text), pos = 0;
    s->n = 0;
    for (;;) {
        const char *comma = strchr(text + pos, ',');
        size_t end = comma ? (size_t)(comma - text) : len;
        if (s->n == H2B_SLO_MAX_CLAUSES) {
            h2b_diag_at(d, "--slo", 1, (int)pos + 1, "more than %d objectives",
                        H2B_SLO_MAX_CLAUSES);
            return H2B_ERR_PARSE;
        }
        int rv = parse_clause(&s->clause[s->n], text, pos, end, d);
        if (rv != H2B_OK)
            return rv;
        s->n++;
        if (!comma)
            break;
        pos = end + 1;
    }
    return H2B_OK;
}

void h2b_slo_free(struct h2b_slo *s)
{
    h2b_model_array_free(&h2b_results_slo_model, &s->verdicts);
    h2b_hist_del(s->w_latency);
    s->w_latency = NULL;
}

/* The clause's figure over span into *value (and *limit); NULL when the span cannot show it,
 * else the verdict. */
static const char *judge(const struct h2b_slo_clause *c, const struct h2b_slo_span *sp,
                         double *value, double *limit, const char **reason)
{
    const struct h2b_hist *h = sp->latency;
    double count = h ? (double)h->total : 0;
    double len = sp->end_s - sp->start_s;
    *limit = c->limit;
    switch (c->metric) {
    case H2B_SLO_PCT:
        /* a percentile is shown only with a sample above it: p99.9 needs 1000 requests */
        if (count * (100 - c->pct) / 100 < 1 - 1e-9) {
            *reason = "too few requests for this percentile";
            return NULL;
        }
        *value = (double)h2b_hist_percentile(h, c->pct);
        break;
    case H2B_SLO_MAX:
    case H2B_SLO_MEAN:
        if (count == 0) {
            *reason = "no request ended";
            return NULL;
        }
        *value = c->metric == H2B_SLO_MAX ? (double)h->max : h2b_hist_mean(h);
        break;
    case H2B_SLO_ERRORS:
        if (!(sp->ended > 0)) {
            *reason = "no request ended";
            return NULL;
        }
        *value = sp->errors / sp->ended;
        break;
    case H2B_SLO_RPS:
        if (!(len > 0)) {
            *reason = "an empty span";
            return NULL;
        }
        *value = sp->ended / len;
        if (c->of_offered > 0) {
            if (!isfinite(sp->offered)) {
                *reason = "no offered rate (closed loop)";
                return NULL;
            }
            *limit = c->of_offered * sp->offered / len;
        }
        break;
    }
    bool ok = c->op == H2B_SLO_LT   ? *value < *limit
              : c->op == H2B_SLO_LE ? *value <= *limit
              : c->op == H2B_SLO_GT ? *value > *limit
                                    : *value >= *limit;
    return ok ? "pass" : "fail";
}

/* Verdict i is one of the run's (not a window's). */
static bool of_run(const struct h2b_slo *s, size_t i)
{
    return s->run_judged && i >= s->run_at;
}

bool h2b_slo_judge(struct h2b_slo *s, const struct h2b_slo_span *span, bool run)
{
    bool all = true;
    if (run && !s->run_judged) {
        s->run_judged = true;
        s->run_at = s->verdicts.n;
    }
    for (size_t i = 0; i < s->n; i++) {
        double value = NAN, limit = NAN;
        const char *reason = NULL;
        const char *v = judge(&s->clause[i], span, &value, &limit, &reason);
        struct h2b_results_slo *r;
        if (h2b_model_array_push(&h2b_results_slo_model, &s->verdicts, (void **)&r) != H2B_OK) {
            s->rc = H2B_ERR_NOMEM;
            return all;
        }
        r->base.present = true;
        r->start_s = span->start_s;
        r->end_s = span->end_s;
        if (v) {
            r->value = value;
            r->limit = limit;
        }
        if (h2b_model_set_string(&r->objective, s->clause[i].text) != H2B_OK ||
            h2b_model_set_string(&r->verdict, v ? v : "not_evaluable") != H2B_OK ||
            h2b_model_set_string(&r->reason, reason) != H2B_OK ||
            h2b_model_set_string(&r->scope, run ? "run" : "window") != H2B_OK)
            s->rc = H2B_ERR_NOMEM;
        if (!v) {
            s->not_evaluable++;
            s->run_not_evaluable += run;
        } else if (strcmp(v, "fail") == 0) {
            s->failed++;
            s->run_failed += run;
            all = false;
        }
    }
    return all;
}

static void window_close(struct h2b_slo *s)
{
    if (!s->w_open)
        return;
    struct h2b_slo_span sp = {.start_s = s->w_start,
                              .end_s = s->w_end,
                              .latency = s->w_latency,
                              .ended = s->w_ended,
                              .errors = s->w_errors,
                              .offered = s->w_offered};
    bool ok = h2b_slo_judge(s, &sp, false);
    s->w_open = false;
    s->w_ended = s->w_errors = s->w_offered = 0;
    h2b_hist_reset(s->w_latency);
    if (!ok && s->abort && !s->aborted && s->w_end * 1e9 >= (double)s->grace_ns) {
        s->aborted = true;
        h2b_load_stop();
    }
}

void h2b_slo_on_interval(void *ctx, const struct h2b_results_interval *row,
                         const struct h2b_hist *latency)
{
    struct h2b_slo *s = ctx;
    if (!s->window_ns || s->aborted)
        return;
    if (!s->w_latency && h2b_hist_new_default(&s->w_latency) != H2B_OK) {
        s->rc = H2B_ERR_NOMEM;
        return;
    }
    if (!s->w_open) {
        s->w_open = true;
        s->w_start = row->start_s;
    }
    s->w_end = row->end_s;
    s->w_ended += row->ended;
    s->w_errors += row->errors;
    s->w_offered +=
        isfinite(row->offered_per_s) ? row->offered_per_s * (row->end_s - row->start_s) : NAN;
    if (h2b_hist_merge(s->w_latency, latency) != H2B_OK)
        s->rc = H2B_ERR_NOMEM;
    /* whole when it spans window_ns (the intervals divide it; 1 ns of slack for the doubles) */
    if ((s->w_end - s->w_start) * 1e9 + 1 >= (double)s->window_ns)
        window_close(s);
}

void h2b_slo_replay(struct h2b_slo *s, const struct h2b_results_interval *rows, size_t n)
{
    for (size_t i = 0; i < n && s->rc == H2B_OK; i++) {
        struct h2b_hist *h = NULL;
        if (!rows[i].latency_histogram ||
            h2b_hist_decode(rows[i].latency_histogram, &h) != H2B_OK) {
            s->rc = H2B_ERR_PARSE; /* our own encoding: only memory can make it fail */
            break;
        }
        h2b_slo_on_interval(s, &rows[i], h);
        h2b_hist_del(h);
    }
}

void h2b_slo_run_span(struct h2b_slo_span *sp, const struct h2b_load_config *cfg,
                      const struct h2b_load_result *res)
{
    memset(sp, 0, sizeof(*sp));
    sp->end_s = (double)res->measure_ns / 1e9;
    sp->latency = res->s.latency;
    sp->ended = (double)(res->s.done + res->s.errored);
    sp->errors = (double)res->s.failed;
    sp->offered = h2b_load_offered(cfg, 0, res->measure_ns);
}

void h2b_slo_finish(struct h2b_slo *s, const struct h2b_slo_span *run)
{
    if (!s->aborted)
        window_close(s); /* the last, shorter window */
    h2b_slo_judge(s, run, true);
}

static void figure(char *buf, size_t n, const struct h2b_slo_clause *c, double v)
{
    if (!isfinite(v))
        snprintf(buf, n, "-");
    else if (c->metric == H2B_SLO_ERRORS)
        snprintf(buf, n, "%.3f%%", v * 100);
    else if (c->metric == H2B_SLO_RPS)
        snprintf(buf, n, "%.1f req/s", v);
    else
        snprintf(buf, n, "%.3fms", v / 1e6);
}

void h2b_slo_report_text(FILE *f, const struct h2b_slo *s)
{
    size_t shown = 0, hidden = 0;
    for (size_t i = 0; i < s->verdicts.n; i++) {
        const struct h2b_results_slo *r =
            h2b_model_array_at(&h2b_results_slo_model, &s->verdicts, i);
        bool run = of_run(s, i);
        if (!run && strcmp(r->verdict, "pass") == 0)
            continue;
        if (!run && shown == 10) {
            hidden++;
            continue;
        }
        shown += !run;
        const struct h2b_slo_clause *c = &s->clause[i % s->n];
        char v[48], l[48];
        figure(v, sizeof(v), c, r->value);
        figure(l, sizeof(l), c, r->limit);
        fprintf(f, "slo: %s %s %.1f-%.1fs: %s", r->objective, run ? "run" : "window", r->start_s,
                r->end_s, r->verdict);
        if (r->reason)
            fprintf(f, " (%s)\n", r->reason);
        else
            fprintf(f, " (%s, limit %s)\n", v, l);
    }
    if (hidden)
        fprintf(f, "slo: %zu more window verdicts that are not a pass (see --json)\n", hidden);
    if (s->aborted)
        fprintf(f, "slo: the run was stopped at the first breached window (--slo-abort)\n");
}

void h2b_slo_first_breach(const struct h2b_slo *s, char *buf, size_t n)
{
    for (size_t i = 0; i < s->verdicts.n; i++) {
        const struct h2b_results_slo *r =
            h2b_model_array_at(&h2b_results_slo_model, &s->verdicts, i);
        if (strcmp(r->verdict, "fail") != 0)
            continue;
        const struct h2b_slo_clause *c = &s->clause[i % s->n];
        char v[48], l[48];
        figure(v, sizeof(v), c, r->value);
        figure(l, sizeof(l), c, r->limit);
        snprintf(buf, n, "SLO breached: %s in %s %.1f-%.1fs: %s, limit %s; %zu breach(es)%s",
                 r->objective, of_run(s, i) ? "the run" : "window", r->start_s, r->end_s, v, l,
                 s->failed, s->aborted ? ", run stopped (--slo-abort)" : "");
        return;
    }
    snprintf(buf, n, "SLO not shown: %zu objective(s) not evaluable over the run",
             s->run_not_evaluable);
}
