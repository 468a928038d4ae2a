/*
 * ab.c - the A/B verdict of a head against a base measured in the same job (see ab.h).
 *
 * Approach. Each side contributes one value per fork (a fork of an interleaved `h2bench ab` run
 * is one invocation of the benchmark executable, so the forks of the two sides alternate in
 * time: A B B A ...). The statistic of a side is the median of its forks: one fork disturbed
 * by another process (a compiler on the same core) moves a mean, not a median. The uncertainty
 * of the ratio of the two medians comes from a percentile bootstrap that resamples each side's
 * forks independently, with a fixed seed, so a verdict is a pure function of the two files:
 * `h2bench compare base.json head.json` repeats exactly what `h2bench ab` decided.
 *
 * A time metric fails only when its whole interval lies above 1 + threshold: significance
 * alone is not enough (a 2 % change that is real is not what a 10 % gate is for), and a large
 * change measured too loosely to exclude 1 + threshold is reported, not failed. Exact counts
 * fail on any increase, as in the gate.
 *
 * The sides are gate sets (views of the results model, gate.h); what is copied is what outlives
 * them or mixes them: a row's benchmark name (the report outlives the sets), and a side's fork
 * values gathered from several entries into the one sample the bootstrap resamples.
 *
 * Rejected: Welch's t interval (compare's second table until issue 30): it assumes normal fork
 * means, and a p99 over forks is skewed with occasional far outliers. Rejected: pairing fork i of
 * the base with fork i of the head (the ABBA rounds): pairing would cancel slow drift better, but
 * files do not record which forks ran side by side, and compare must reach the same verdict from
 * the files alone. The interleaving still makes drift hit both sides alike in expectation.
 */
#include "gates/ab.h"
#include "gates/abtable.h"
#include "core/buf.h"
#include "core/check.h"
#include "core/error.h"
#include "core/rand.h"
#include "core/stats.h"
#include "core/results.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- statistics */

static void resample(const double *v, size_t n, double *out, uint64_t *rng)
{
    for (size_t i = 0; i < n; i++)
        out[i] = v[h2b_rand_xorshift64(rng) % n];
}

int h2b_ab_bootstrap_ratio(const double *a, size_t na, const double *b, size_t nb, double conf,
                           unsigned resamples, uint64_t seed, struct h2b_ab_ci *out)
{
    memset(out, 0, sizeof(*out));
    out->na = na;
    out->nb = nb;
    if (na == 0 || nb == 0)
        return H2B_OK;
    size_t nmax = na > nb ? na : nb;
    double *tmp = malloc(nmax * sizeof(*tmp));
    double *draw = malloc(nmax * sizeof(*draw));
    if (!tmp || !draw) {
        free(tmp);
        free(draw);
        return H2B_ERR_NOMEM;
    }
    double ma = h2b_stats_median_of(a, na, tmp), mb = h2b_stats_median_of(b, nb, tmp);
    if (!(ma > 0)) {
        free(tmp);
        free(draw);
        return H2B_OK;
    }
    out->ratio = mb / ma;
    if (na < 2 || nb < 2) {
        free(tmp);
        free(draw);
        return H2B_OK;
    }
    if (resamples == 0)
        resamples = 4000;
    double *ratios = malloc((size_t)resamples * sizeof(*ratios));
    if (!ratios) {
        free(tmp);
        free(draw);
        return H2B_ERR_NOMEM;
    }
    uint64_t rng = seed ? seed : 0x2545f4914f6cdd1dULL;
    size_t n = 0;
    for (unsigned r = 0; r < resamples; r++) {
        resample(a, na, draw, &rng);
        double ra = h2b_stats_median_of(draw, na, tmp);
        resample(b, nb, draw, &rng);
        double rb = h2b_stats_median_of(draw, nb, tmp);
        if (ra > 0)
            ratios[n++] = rb / ra;
    }
    if (n >= 2) {
        h2b_stats_sort(ratios, n);
        out->lo = h2b_stats_quantile_sorted(ratios, n, (1 - conf) / 2);
        out->hi = h2b_stats_quantile_sorted(ratios, n, (1 + conf) / 2);
        out->has = true;
    }
    free(ratios);
    free(tmp);
    free(draw);
    return H2B_OK;
}

/* ---------------------------------------------------------------- judging */

void h2b_ab_report_del(struct h2b_ab_report *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->count; i++) {
        free(r->rows[i].bench);
        free(r->rows[i].note);
    }
    free(r->rows);
    free(r->invalid_reason);
    free(r);
}

static struct h2b_ab_row *add_row(struct h2b_ab_report *r, const char *bench, const char *metric)
{
    struct h2b_ab_row *rows = realloc(r->rows, (r->count + 1) * sizeof(*rows));
    if (!rows)
        return NULL;
    r->rows = rows;
    struct h2b_ab_row *row = &rows[r->count];
    memset(row, 0, sizeof(*row));
    row->bench = strdup(bench);
    if (!row->bench)
        return NULL;
    r->count++;
    row->metric = metric;
    row->base = row->head = NAN;
    return row;
}

static int set_note(struct h2b_ab_row *row, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static int set_note(struct h2b_ab_row *row, const char *fmt, ...)
{
    char text[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof(text), fmt, ap);
    va_end(ap);
    free(row->note);
    row->note = strdup(text);
    return row->note ? H2B_OK : H2B_ERR_NOMEM;
}

/* The observations of one benchmark on one side (several results files may hold it). */
struct side {
    const struct h2b_gate_obs *obs[64];
    size_t n;
};

static void collect(const struct h2b_gate_set *s, const char *name, struct side *out)
{
    out->n = 0;
    for (size_t i = 0; i < s->count && out->n < sizeof(out->obs) / sizeof(out->obs[0]); i++) {
        if (strcmp(s->obs[i].e->name, name) == 0)
            out->obs[out->n++] = &s->obs[i];
    }
}

/* The per-fork values of a time metric of o (fork_p99_ns or fork_ns_per_op): their count, 0
 * when the entry has none. */
static size_t forks_of(const struct h2b_gate_obs *o, bool p99, const double **f)
{
    const struct h2b_model_nums *nums = p99 ? &o->e->fork_p99_ns : &o->e->fork_ns_per_op;
    *f = nums->v;
    return nums->v ? nums->n : 0;
}

/* Every fork's value of a time metric over the side's observations: the per-fork arrays, or
 * the entry's single value when it has none. *v is malloc'd (NULL when there is nothing): a
 * copy, since it gathers the forks of several entries into the one sample the bootstrap
 * resamples. */
static int fork_values(const struct side *sd, bool p99, double **v, size_t *n)
{
    size_t total = 0;
    const double *f;
    for (size_t i = 0; i < sd->n; i++) {
        size_t k = forks_of(sd->obs[i], p99, &f);
        total += k ? k : 1;
    }
    *v = NULL;
    *n = 0;
    if (total == 0)
        return H2B_OK;
    double *out = malloc(total * sizeof(*out));
    if (!out)
        return H2B_ERR_NOMEM;
    size_t m = 0;
    for (size_t i = 0; i < sd->n; i++) {
        const struct h2b_gate_obs *o = sd->obs[i];
        size_t k = forks_of(o, p99, &f);
        H2B_ASSERT(m + (k ? k : 1) <= total); /* counted in the first pass */
        if (k) {
            memcpy(out + m, f, k * sizeof(*out));
            m += k;
        } else {
            double x = p99 ? o->e->p99_ns : o->e->ns_per_op;
            if (!isnan(x))
                out[m++] = x;
        }
    }
    if (m == 0) {
        free(out);
        return H2B_OK;
    }
    *v = out;
    *n = m;
    return H2B_OK;
}

/* The fewest latency samples per fork over the side's observations; INFINITY when unknown. */
static double samples_per_fork(const struct side *sd)
{
    double least = INFINITY;
    for (size_t i = 0; i < sd->n; i++) {
        const struct h2b_gate_obs *o = sd->obs[i];
        int forks = h2b_gate_obs_forks(o);
        if (isnan(o->e->samples) || forks <= 0)
            continue;
        double per = o->e->samples / forks;
        if (per < least)
            least = per;
    }
    return least;
}

/* The verdict of one time-like metric from the samples of each side (va, vb: one value per fork,
 * or per repeat of a cell). higher_better: req/s, where a fall is the regression. min_samples
 * (a p99's samples per fork, INFINITY when not known or not relevant) below
 * H2B_GATE_MIN_P99_SAMPLES leaves the row not judged. */
static int judge_samples(struct h2b_ab_report *r, const char *name, const char *metric,
                         const double *va, size_t na, const double *vb, size_t nb,
                         bool higher_better, double min_samples, const struct h2b_ab_options *opt)
{
    struct h2b_ab_row *row = add_row(r, name, metric);
    if (!row)
        return H2B_ERR_NOMEM;
    row->higher_better = higher_better;
    if (na == 0 || nb == 0) {
        row->status = H2B_AB_NA;
        return set_note(row, "not measured on the %s side", na == 0 ? "base" : "head");
    }
    double *tmp = malloc((na > nb ? na : nb) * sizeof(*tmp));
    if (!tmp)
        return H2B_ERR_NOMEM;
    row->base = h2b_stats_median_of(va, na, tmp);
    row->head = h2b_stats_median_of(vb, nb, tmp);
    free(tmp);
    int rv = h2b_ab_bootstrap_ratio(va, na, vb, nb, opt->confidence, opt->resamples, opt->seed,
                                    &row->ci);
    if (rv != H2B_OK)
        return rv;
    if (min_samples < H2B_GATE_MIN_P99_SAMPLES) {
        row->status = H2B_AB_NA;
        return set_note(row, "not judged: %.0f samples per fork, a p99 needs %d", min_samples,
                        H2B_GATE_MIN_P99_SAMPLES);
    }
    if (!row->ci.has) {
        row->status = H2B_AB_NA;
        return set_note(row, "no interval: %zu base and %zu head samples (2 or more each needed)",
                        na, nb);
    }
    double up = 1 + opt->threshold, down = 1 / (1 + opt->threshold);
    bool worse = higher_better ? row->ci.hi < down : row->ci.lo > up;
    bool better = higher_better ? row->ci.lo > up : row->ci.hi < down;
    if (worse) {
        row->status = H2B_AB_SLOWER;
        row->failing = true;
    } else if (better) {
        row->status = H2B_AB_FASTER;
    } else {
        row->status = H2B_AB_SAME;
    }
    return H2B_OK;
}

static int judge_time(struct h2b_ab_report *r, const char *name, const struct side *a,
                      const struct side *b, bool p99, const struct h2b_ab_options *opt)
{
    double *va = NULL, *vb = NULL;
    size_t na = 0, nb = 0;
    int rv = fork_values(a, p99, &va, &na);
    if (rv == H2B_OK)
        rv = fork_values(b, p99, &vb, &nb);
    double least = INFINITY;
    if (p99) {
        double sa = samples_per_fork(a), sb = samples_per_fork(b);
        least = sa < sb ? sa : sb;
    }
    if (rv == H2B_OK)
        rv = judge_samples(r, name, p99 ? "p99" : "ns/op", va, na, vb, nb, false, least, opt);
    free(va);
    free(vb);
    return rv;
}

static bool exact_of(const struct side *sd, int m, double *v, bool *nondet)
{
    bool any = false;
    *nondet = false;
    for (size_t i = 0; i < sd->n; i++) {
        const struct h2b_gate_obs *o = sd->obs[i];
        double x = h2b_gate_obs_value(o, (enum h2b_metric)m);
        if (isnan(x))
            continue;
        if (!any || x > *v)
            *v = x;
        any = true;
        if (h2b_gate_obs_nondeterministic(o) && m != H2B_METRIC_INSTRUCTIONS_PER_OP)
            *nondet = true;
    }
    return any;
}

static int judge_exact(struct h2b_ab_report *r, const char *name, const struct side *a,
                       const struct side *b, int m)
{
    double va = 0, vb = 0;
    bool nda, ndb;
    bool ha = exact_of(a, m, &va, &nda), hb = exact_of(b, m, &vb, &ndb);
    if (!ha && !hb)
        return H2B_OK; /* not measured anywhere (instructions without counters): no row */
    struct h2b_ab_row *row = add_row(r, name, h2b_metric_label(m));
    if (!row)
        return H2B_ERR_NOMEM;
    row->exact = true;
    if (!ha || !hb) {
        row->status = H2B_AB_NA;
        if (ha)
            row->base = va;
        if (hb)
            row->head = vb;
        return set_note(row, "measured on the %s side only", ha ? "base" : "head");
    }
    row->base = va;
    row->head = vb;
    row->ci.ratio = va > 0 ? vb / va : NAN;
    double ca = va, cb = vb;
    if (nda || ndb) {
        ca = ceil(va);
        cb = ceil(vb);
    }
    if (cb > ca) {
        row->status = H2B_AB_INCREASE;
        row->failing = true;
    } else if (cb < ca) {
        row->status = H2B_AB_DECREASE;
    } else {
        row->status = H2B_AB_SAME;
    }
    if (nda || ndb)
        return set_note(row, "not deterministic (amortised growth): whole units compared");
    return H2B_OK;
}

static int severity(const struct h2b_ab_row *row)
{
    if (row->failing)
        return 0;
    if (row->status == H2B_AB_FASTER || row->status == H2B_AB_DECREASE)
        return 1;
    return 2;
}

static int cmp_rows(const void *x, const void *y)
{
    const struct h2b_ab_row *a = x, *b = y;
    return severity(a) - severity(b);
}

/* Stable sort by severity (insertion sort keeps the original order within a class). */
static void sort_rows(struct h2b_ab_report *r)
{
    for (size_t i = 1; i < r->count; i++) {
        struct h2b_ab_row key = r->rows[i];
        size_t j = i;
        while (j > 0 && cmp_rows(&r->rows[j - 1], &key) > 0) {
            r->rows[j] = r->rows[j - 1];
            j--;
        }
        r->rows[j] = key;
    }
}

static bool seen_before(const struct h2b_gate_set *s, size_t i)
{
    for (size_t j = 0; j < i; j++) {
        if (strcmp(s->obs[j].e->name, s->obs[i].e->name) == 0)
            return true;
    }
    return false;
}

static const char *failed_bench(const struct h2b_gate_set *s)
{
    for (size_t i = 0; i < s->count; i++) {
        if (s->obs[i].e->error)
            return s->obs[i].e->name;
    }
    return NULL;
}

static int judge_bench(struct h2b_ab_report *r, const struct h2b_gate_set *base,
                       const struct h2b_gate_set *head, const char *name,
                       const struct h2b_ab_options *opt)
{
    struct side a, b;
    collect(base, name, &a);
    collect(head, name, &b);
    if (a.n == 0 || b.n == 0) {
        struct h2b_ab_row *row = add_row(r, name, NULL);
        if (!row)
            return H2B_ERR_NOMEM;
        row->status = H2B_AB_ONLY;
        return set_note(row, "only in the %s", a.n ? "base" : "head");
    }
    int rv = judge_time(r, name, &a, &b, false, opt);
    if (rv == H2B_OK)
        rv = judge_time(r, name, &a, &b, true, opt);
    if (rv == H2B_OK)
        rv = judge_exact(r, name, &a, &b, H2B_METRIC_ALLOCS_PER_OP);
    if (rv == H2B_OK)
        rv = judge_exact(r, name, &a, &b, H2B_METRIC_BYTES_PER_OP);
    if (rv == H2B_OK)
        rv = judge_exact(r, name, &a, &b, H2B_METRIC_INSTRUCTIONS_PER_OP);
    return rv;
}

/* The end of every judge: *out = r on success, r freed on failure (rv returned). */
static int hand_over(struct h2b_ab_report *r, int rv, struct h2b_ab_report **out)
{
    if (rv != H2B_OK) {
        h2b_ab_report_del(r);
        return rv;
    }
    *out = r;
    return H2B_OK;
}

/* The counts by status, the failing rows first, and the exit code. */
static void finish_report(struct h2b_ab_report *r)
{
    for (size_t i = 0; i < r->count; i++) {
        switch (r->rows[i].status) {
        case H2B_AB_SAME:
            r->same++;
            break;
        case H2B_AB_SLOWER:
            r->slower++;
            break;
        case H2B_AB_FASTER:
            r->faster++;
            break;
        case H2B_AB_INCREASE:
            r->increased++;
            break;
        case H2B_AB_DECREASE:
            r->decreased++;
            break;
        case H2B_AB_NA:
            r->not_judged++;
            break;
        case H2B_AB_ONLY:
            r->only++;
            break;
        }
    }
    sort_rows(r);
    r->exit_code = r->slower || r->increased ? 1 : 0;
}

int h2b_ab_judge(const struct h2b_gate_set *base, const struct h2b_gate_set *head,
                 const struct h2b_ab_options *opt, struct h2b_ab_report **out)
{
    if (!(opt->threshold >= 0 && opt->threshold < 100) ||
        !(opt->confidence > 0 && opt->confidence < 1))
        return H2B_ERR_INVAL;
    struct h2b_ab_report *r = calloc(1, sizeof(*r));
    if (!r)
        return H2B_ERR_NOMEM;
    r->threshold = opt->threshold;
    r->confidence = opt->confidence;
    int rv = H2B_OK;
    const char *failed = NULL, *side = NULL;
    struct h2b_buf why = {0};
    if (base->invalid || head->invalid) {
        h2b_buf_printf(&why, "%s side cannot be judged: %s", base->invalid ? "base" : "head",
                       base->invalid ? base->invalid : head->invalid);
    } else if ((failed = failed_bench(base)) || (failed = failed_bench(head))) {
        side = failed_bench(base) ? "base" : "head";
        h2b_buf_printf(&why, "benchmark %s failed on the %s side", failed, side);
    } else if (base->count == 0 || head->count == 0) {
        h2b_buf_printf(&why, "no micro benchmarks on the %s side", base->count ? "head" : "base");
    }
    if (why.len || why.err) {
        rv = h2b_buf_finish(&why, &r->invalid_reason);
        r->exit_code = 3;
        goto out;
    }
    for (size_t i = 0; i < base->count && rv == H2B_OK; i++) {
        if (!seen_before(base, i))
            rv = judge_bench(r, base, head, base->obs[i].e->name, opt);
    }
    for (size_t i = 0; i < head->count && rv == H2B_OK; i++) {
        struct side a;
        if (seen_before(head, i))
            continue;
        collect(base, head->obs[i].e->name, &a);
        if (a.n == 0)
            rv = judge_bench(r, base, head, head->obs[i].e->name, opt);
    }
    if (rv != H2B_OK)
        goto out;
    finish_report(r);
out:
    h2b_buf_free(&why);
    return hand_over(r, rv, out);
}

/* ---------------------------------------------------------------- matrix cells */

/* A cell's identity across runs: TARGET:CONNSxSTREAMS (the --filter syntax) and the sweep axes
 * that were set (protocol, tls, frame size, window, path, rate). */
static void cell_key(const struct h2b_results_cell *c, char *buf, size_t size)
{
    int n = snprintf(buf, size, "%.64s:%.0fx%.0f", c->target ? c->target : "?", c->connections,
                     c->streams_requested);
    if (n > 0 && (size_t)n < size && c->protocol && strcmp(c->protocol, "h2") != 0)
        n += snprintf(buf + n, size - (size_t)n, " %.8s", c->protocol); /* h2: the default */
    if (n > 0 && (size_t)n < size && c->tls == 1)
        n += snprintf(buf + n, size - (size_t)n, " tls");
    if (n > 0 && (size_t)n < size && !isnan(c->frame_size))
        n += snprintf(buf + n, size - (size_t)n, " f=%.0f", c->frame_size);
    if (n > 0 && (size_t)n < size && !isnan(c->window_bits))
        n += snprintf(buf + n, size - (size_t)n, " w=%.0f", c->window_bits);
    if (n > 0 && (size_t)n < size && c->path && strcmp(c->path, "/hello") != 0)
        n += snprintf(buf + n, size - (size_t)n, " %.64s", c->path);
    if (n > 0 && (size_t)n < size && !isnan(c->rate))
        snprintf(buf + n, size - (size_t)n, " @%.15g/s", c->rate);
}

/* A measured cell: "status": "ok", or no status at all (load --json and merge write none; a
 * cell that was not measured says "failed" or "skipped"). */
static bool cell_ok(const struct h2b_results_cell *c)
{
    return !c->status || strcmp(c->status, "ok") == 0;
}

/* The per-request budgets a cell carries, with their labels and what an increase is: a count
 * (allocations, bytes, syscalls) fails when it grows by half a unit per request or more (one more
 * per request fails; the fraction amortised growth leaves does not), instructions when they grow
 * by more than H2B_AB_INSTR_TOLERANCE (glibc's free lists move them by a few tens). */
#define H2B_AB_INSTR_TOLERANCE 0.005
static const enum h2b_budget_metric budget_rows[] = {
    H2B_BUDGET_ALLOCS, H2B_BUDGET_BYTES,        H2B_BUDGET_READS,
    H2B_BUDGET_WRITES, H2B_BUDGET_INSTRUCTIONS,
};

/* The samples of one cell key on one side: p99 (ns) and req/s of every ok repeat, and the
 * budget values of those that carry them. */
struct cell_side {
    double *p99, *rps, *budget[sizeof(budget_rows) / sizeof(budget_rows[0])];
    size_t n_p99, n_rps, n_budget[sizeof(budget_rows) / sizeof(budget_rows[0])];
    size_t failed, total;
    const char *reason;
};

static void cell_side_free(struct cell_side *cs)
{
    free(cs->p99);
    free(cs->rps);
    for (size_t k = 0; k < sizeof(budget_rows) / sizeof(budget_rows[0]); k++)
        free(cs->budget[k]);
}

static int gather_cells(const struct h2b_results_doc *d, const char *key, struct cell_side *cs)
{
    memset(cs, 0, sizeof(*cs));
    size_t n = d->matrix.n ? d->matrix.n : 1, nb = sizeof(budget_rows) / sizeof(budget_rows[0]);
    cs->p99 = malloc(n * sizeof(double));
    cs->rps = malloc(n * sizeof(double));
    bool ok = cs->p99 && cs->rps;
    for (size_t k = 0; k < nb && ok; k++)
        ok = (cs->budget[k] = malloc(n * sizeof(double))) != NULL;
    if (!ok)
        return H2B_ERR_NOMEM;
    for (size_t i = 0; i < d->matrix.n; i++) {
        const struct h2b_results_cell *c = h2b_results_doc_cell(d, i);
        char k2[256];
        cell_key(c, k2, sizeof(k2));
        if (strcmp(k2, key) != 0)
            continue;
        cs->total++;
        if (!cell_ok(c)) {
            cs->failed++;
            cs->reason = c->reason;
            continue;
        }
        if (!isnan(c->latency_ns.p99))
            cs->p99[cs->n_p99++] = c->latency_ns.p99;
        if (!isnan(c->req_per_s))
            cs->rps[cs->n_rps++] = c->req_per_s;
        for (size_t k = 0; k < nb && c->budgets.base.present; k++) {
            double v = h2b_results_budget_get(&c->budgets, budget_rows[k]);
            if (!isnan(v))
                cs->budget[k][cs->n_budget[k]++] = v;
        }
    }
    return H2B_OK;
}

static int judge_budget(struct h2b_ab_report *r, const char *key, size_t k,
                        const struct cell_side *a, const struct cell_side *b)
{
    size_t na = a->n_budget[k], nb = b->n_budget[k];
    if (na == 0 && nb == 0)
        return H2B_OK; /* no budgets on either side: no row */
    struct h2b_ab_row *row = add_row(r, key, h2b_budget_metrics[budget_rows[k]].unit);
    if (!row)
        return H2B_ERR_NOMEM;
    row->exact = true;
    double *tmp = malloc((na > nb ? na : nb) * sizeof(*tmp));
    if (!tmp)
        return H2B_ERR_NOMEM;
    if (na)
        row->base = h2b_stats_median_of(a->budget[k], na, tmp);
    if (nb)
        row->head = h2b_stats_median_of(b->budget[k], nb, tmp);
    free(tmp);
    if (!na || !nb) {
        row->status = H2B_AB_NA;
        return set_note(row, "measured on the %s side only", na ? "base" : "head");
    }
    row->ci.ratio = row->base > 0 ? row->head / row->base : NAN;
    double slack =
        budget_rows[k] == H2B_BUDGET_INSTRUCTIONS ? H2B_AB_INSTR_TOLERANCE * row->base : 0.5;
    if (row->head - row->base >= slack && row->head > row->base) {
        row->status = H2B_AB_INCREASE;
        row->failing = true;
    } else if (row->base - row->head >= slack && row->head < row->base) {
        row->status = H2B_AB_DECREASE;
    } else {
        row->status = H2B_AB_SAME;
    }
    return budget_rows[k] == H2B_BUDGET_INSTRUCTIONS
               ? set_note(row, "median of %zu and %zu; more than %.1f %% above fails", na, nb,
                          H2B_AB_INSTR_TOLERANCE * 100)
               : H2B_OK;
}

static int judge_cell(struct h2b_ab_report *r, const struct h2b_results_doc *base,
                      const struct h2b_results_doc *head, const char *key,
                      const struct h2b_ab_options *opt)
{
    struct cell_side a, b;
    int rv = gather_cells(base, key, &a);
    if (rv == H2B_OK)
        rv = gather_cells(head, key, &b);
    else
        memset(&b, 0, sizeof(b));
    if (rv != H2B_OK)
        goto out;
    if (a.total == 0 || b.total == 0) {
        struct h2b_ab_row *row = add_row(r, key, NULL);
        rv = row ? H2B_OK : H2B_ERR_NOMEM;
        if (row) {
            row->status = H2B_AB_ONLY;
            rv = set_note(row, "only in the %s", a.total ? "base" : "head");
        }
        goto out;
    }
    if (a.failed == a.total || b.failed == b.total) {
        const struct cell_side *f = a.failed == a.total ? &a : &b;
        struct h2b_ab_row *row = add_row(r, key, NULL);
        rv = row ? H2B_OK : H2B_ERR_NOMEM;
        if (row) {
            row->status = H2B_AB_NA;
            rv = set_note(row, "failed on the %s side: %.300s", f == &a ? "base" : "head",
                          f->reason ? f->reason : "no reason recorded");
        }
        goto out;
    }
    rv = judge_samples(r, key, "p99", a.p99, a.n_p99, b.p99, b.n_p99, false, INFINITY, opt);
    if (rv == H2B_OK)
        rv = judge_samples(r, key, "req/s", a.rps, a.n_rps, b.rps, b.n_rps, true, INFINITY, opt);
    for (size_t k = 0; rv == H2B_OK && k < sizeof(budget_rows) / sizeof(budget_rows[0]); k++)
        rv = judge_budget(r, key, k, &a, &b);
out:
    cell_side_free(&a);
    cell_side_free(&b);
    return rv;
}

/* A gate set of each side's document, borrowed (views: the documents outlive the sets). The
 * caller frees both, whatever this returns. */
static int sets_of(const struct h2b_results_doc *base, const char *base_path,
                   const struct h2b_results_doc *head, const char *head_path,
                   struct h2b_gate_set **sa, struct h2b_gate_set **sb)
{
    int rv = h2b_gate_set_new(sa);
    if (rv == H2B_OK)
        rv = h2b_gate_set_new(sb);
    if (rv == H2B_OK)
        rv = h2b_gate_set_add(*sa, base_path, base);
    if (rv == H2B_OK)
        rv = h2b_gate_set_add(*sb, head_path, head);
    return rv;
}

/* Whether key was already judged: a cell of d before index i, or (head) any cell of base. */
static bool key_seen(const struct h2b_results_doc *d, size_t i, const char *key)
{
    for (size_t j = 0; j < i && j < d->matrix.n; j++) {
        char k2[256];
        cell_key(h2b_results_doc_cell(d, j), k2, sizeof(k2));
        if (strcmp(k2, key) == 0)
            return true;
    }
    return false;
}

int h2b_ab_judge_cells(const struct h2b_results_doc *base, const char *base_path,
                       const struct h2b_results_doc *head, const char *head_path,
                       const struct h2b_ab_options *opt, struct h2b_ab_report **out)
{
    if (!(opt->threshold >= 0 && opt->threshold < 100) ||
        !(opt->confidence > 0 && opt->confidence < 1))
        return H2B_ERR_INVAL;
    struct h2b_ab_report *r = calloc(1, sizeof(*r));
    struct h2b_gate_set *sa = NULL, *sb = NULL;
    struct h2b_buf why = {0};
    /* the gate set's view of each document says whether its timings may be judged at all */
    int rv = r ? sets_of(base, base_path, head, head_path, &sa, &sb) : H2B_ERR_NOMEM;
    if (rv != H2B_OK)
        goto out;
    r->threshold = opt->threshold;
    r->confidence = opt->confidence;
    if (sa->invalid || sb->invalid)
        h2b_buf_printf(&why, "%s side cannot be judged: %s", sa->invalid ? "base" : "head",
                       sa->invalid ? sa->invalid : sb->invalid);
    else if (base->matrix.n == 0 || head->matrix.n == 0)
        h2b_buf_printf(&why, "no matrix cells on the %s side", base->matrix.n ? "head" : "base");
    if (why.len || why.err) {
        rv = h2b_buf_finish(&why, &r->invalid_reason);
        r->exit_code = 3;
        goto out;
    }
    for (size_t i = 0; i < base->matrix.n && rv == H2B_OK; i++) {
        char key[256];
        cell_key(h2b_results_doc_cell(base, i), key, sizeof(key));
        if (!key_seen(base, i, key))
            rv = judge_cell(r, base, head, key, opt);
    }
    for (size_t i = 0; i < head->matrix.n && rv == H2B_OK; i++) {
        char key[256];
        cell_key(h2b_results_doc_cell(head, i), key, sizeof(key));
        if (!key_seen(head, i, key) && !key_seen(base, base->matrix.n, key))
            rv = judge_cell(r, base, head, key, opt);
    }
    if (rv == H2B_OK)
        finish_report(r);
out:
    h2b_buf_free(&why);
    h2b_gate_set_del(sa);
    h2b_gate_set_del(sb);
    return hand_over(r, rv, out);
}

/* ---------------------------------------------------------------- both kinds */

/* Moves from's rows into into (from is freed), and counts and sorts them again; an invalid side
 * makes the whole invalid. H2B_OK or H2B_ERR_NOMEM (both freed). */
static int merge_into(struct h2b_ab_report *into, struct h2b_ab_report *from)
{
    if (!into->invalid_reason && from->invalid_reason) {
        into->invalid_reason = from->invalid_reason;
        from->invalid_reason = NULL;
        into->exit_code = from->exit_code;
    }
    if (from->count) {
        struct h2b_ab_row *rows = realloc(into->rows, (into->count + from->count) * sizeof(*rows));
        if (!rows) {
            h2b_ab_report_del(from);
            return H2B_ERR_NOMEM;
        }
        memcpy(rows + into->count, from->rows, from->count * sizeof(*rows));
        into->rows = rows;
        into->count += from->count;
        from->count = 0;
    }
    h2b_ab_report_del(from);
    if (!into->invalid_reason) {
        into->same = into->slower = into->faster = into->increased = 0;
        into->decreased = into->not_judged = into->only = 0;
        finish_report(into);
    }
    return H2B_OK;
}

/* The verdict on the first document of each set, whatever it holds (the sets' views of them
 * are the micro side; the documents themselves the cells'). */
static int judge_sets(const struct h2b_gate_set *sa, const struct h2b_gate_set *sb,
                      const struct h2b_ab_options *opt, struct h2b_ab_report **out)
{
    H2B_ASSERT(sa->n_sources == 1 && sb->n_sources == 1);
    const struct h2b_results_doc *da = sa->docs[0], *db = sb->docs[0];
    struct h2b_ab_report *r = NULL, *cells = NULL;
    int rv = H2B_OK;
    bool micro = sa->count || sb->count, matrix = da->matrix.n || db->matrix.n;
    if (micro)
        rv = h2b_ab_judge(sa, sb, opt, &r);
    if (rv == H2B_OK && matrix)
        rv = h2b_ab_judge_cells(da, sa->sources[0], db, sb->sources[0], opt, r ? &cells : &r);
    if (rv == H2B_OK && cells)
        rv = merge_into(r, cells);
    if (rv == H2B_OK && !r) {
        r = calloc(1, sizeof(*r));
        if (r)
            r->invalid_reason = strdup("neither file holds micro benchmarks or matrix cells");
        if (!r || !r->invalid_reason) {
            rv = H2B_ERR_NOMEM;
        } else {
            r->threshold = opt->threshold;
            r->confidence = opt->confidence;
            r->exit_code = 3;
        }
    }
    return hand_over(r, rv, out);
}

int h2b_ab_judge_files(const char *base_path, const char *head_path,
                       const struct h2b_ab_options *opt, struct h2b_ab_report **out,
                       struct h2b_diag *diag)
{
    struct h2b_gate_set *sa = NULL, *sb = NULL;
    int rv = h2b_gate_set_load(&base_path, 1, &sa, diag);
    if (rv == H2B_OK)
        rv = h2b_gate_set_load(&head_path, 1, &sb, diag);
    if (rv == H2B_OK)
        rv = judge_sets(sa, sb, opt, out);
    h2b_gate_set_del(sa);
    h2b_gate_set_del(sb);
    return rv;
}

int h2b_ab_judge_docs(const struct h2b_results_doc *base, const char *base_path,
                      const struct h2b_results_doc *head, const char *head_path,
                      const struct h2b_ab_options *opt, struct h2b_ab_report **out)
{
    struct h2b_gate_set *sa = NULL, *sb = NULL;
    int rv = sets_of(base, base_path, head, head_path, &sa, &sb);
    if (rv == H2B_OK)
        rv = judge_sets(sa, sb, opt, out);
    h2b_gate_set_del(sa);
    h2b_gate_set_del(sb);
    return rv;
}

/* ---------------------------------------------------------------- rendering */

void h2b_ab_row_view(const struct h2b_ab_row *row, struct h2b_abtable_row *v)
{
    memset(v, 0, sizeof(*v));
    v->status = (enum h2b_verdict)row->status;
    v->failing = row->failing;
    v->bench = row->bench;
    v->metric = row->metric;
    v->unit = row->exact           ? H2B_ABTABLE_COUNT
              : row->higher_better ? H2B_ABTABLE_RATE
                                   : H2B_ABTABLE_NS;
    v->base = row->base;
    v->head = row->head;
    if (row->ci.has) {
        v->interval = H2B_ABTABLE_RATIO;
        v->lo = row->ci.lo;
        v->hi = row->ci.hi;
    }
    v->note = row->note;
}

void h2b_ab_verdict_line(struct h2b_buf *b, const struct h2b_ab_report *r, const char *prefix)
{
    const char *cmd = r->command ? r->command : "ab";
    if (r->invalid_reason) {
        h2b_buf_printf(b, "%sh2bench %s: %s: %s\n", prefix, cmd,
                       h2b_verdict_words(H2B_VERDICT_INVALID, true)->word, r->invalid_reason);
        return;
    }
    h2b_buf_printf(b,
                   "%sh2bench %s: %s: %d slower, %d with more allocations or instructions, "
                   "%d faster, %d fewer, %d same, %d not judged "
                   "(head/base, %.0f%% bootstrap interval, threshold %.0f%%)\n",
                   prefix, cmd, h2b_verdict_words(h2b_verdict_of_exit(r->exit_code), true)->word,
                   r->slower, r->increased, r->faster, r->decreased, r->same, r->not_judged,
                   r->confidence * 100, r->threshold * 100);
}

/* The report's rows as views for the one A/B table (abtable.h); NULL when out of memory. */
static struct h2b_abtable_row *views(const struct h2b_ab_report *r)
{
    struct h2b_abtable_row *v = calloc(r->count ? r->count : 1, sizeof(*v));
    for (size_t i = 0; v && i < r->count; i++)
        h2b_ab_row_view(&r->rows[i], &v[i]);
    return v;
}

int h2b_ab_render_table(const struct h2b_ab_report *r, char **out)
{
    struct h2b_buf b = {0};
    if (!r->invalid_reason) {
        struct h2b_abtable_row *v = views(r);
        if (!v)
            return H2B_ERR_NOMEM;
        h2b_abtable_text(&b, v, r->count);
        free(v);
    }
    h2b_ab_verdict_line(&b, r, "");
    return h2b_buf_finish(&b, out);
}

int h2b_ab_rows_md(struct h2b_buf *b, const struct h2b_ab_report *r)
{
    if (r->invalid_reason)
        return H2B_OK;
    struct h2b_abtable_row *v = views(r);
    if (!v)
        return H2B_ERR_NOMEM;
    h2b_abtable_md(b, v, r->count);
    free(v);
    return H2B_OK;
}

int h2b_ab_render_md(const struct h2b_ab_report *r, char **out)
{
    struct h2b_buf b = {0};
    h2b_ab_verdict_line(&b, r, "## ");
    if (!r->invalid_reason)
        h2b_buf_puts(&b, "\n");
    if (h2b_ab_rows_md(&b, r) != H2B_OK) {
        h2b_buf_free(&b);
        return H2B_ERR_NOMEM;
    }
    return h2b_buf_finish(&b, out);
}
