/*
 * gate.c - evaluate ceilings against observations and confirm p99 breaches (gate.h).
 *
 * Approach: every (benchmark, metric) pair with a ceiling becomes one row; rows are computed in
 * a first pass, p99 breaches are collected and re-measured in one runner invocation per
 * confirmation round (only the breached benchmarks, so a round costs seconds, not the suite),
 * and a breach fails only if every round breaches too. Renderers (gate_render.c) work on the
 * finished rows, so the table, markdown and JUnit outputs can never disagree about the verdict.
 * Observations are gate_obs.c's (views of the results model), the runner gate_runner.c's,
 * proposals gate_propose.c's. A row copies its benchmark's name and writes its evidence: the
 * report outlives the results it judged (h2b_gate_evaluate frees the set before it returns it).
 *
 * Why the best fork's p99: interference from other processes (a compiler on the other core, a
 * timer interrupt storm) only ever adds latency, so across independent forks the lowest p99 is the
 * one least contaminated. A real regression raises every fork, so it raises the minimum too.
 * Rejected: the merged p99 (one disturbed fork drags it up), the mean of forks (same problem),
 * and relative thresholds against the previous run (a comparison against the wrong base).
 */
#include "gates/gate.h"
#include "gates/gate_int.h"
#include "core/buf.h"
#include "core/check.h"
#include "core/error.h"
#include "core/clock.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void h2b_gate_report_del(struct h2b_gate_report *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->count; i++) {
        free(r->rows[i].bench);
        free(r->rows[i].evidence);
    }
    free(r->rows);
    free(r->invalid_reason);
    free(r);
}

struct h2b_gate_row *h2b__gate_add_row(struct h2b_gate_report *r, const char *bench, int metric)
{
    struct h2b_gate_row *rows = realloc(r->rows, (r->count + 1) * sizeof(*rows));
    if (!rows)
        return NULL;
    r->rows = rows;
    struct h2b_gate_row *row = &rows[r->count];
    memset(row, 0, sizeof(*row));
    row->metric = metric;
    row->bench = strdup(bench);
    if (!row->bench)
        return NULL;
    r->count++;
    return row;
}

void h2b__gate_count_row(struct h2b_gate_report *r, const struct h2b_gate_row *row)
{
    switch (row->status) {
    case H2B_GATE_PASS:
        r->passed++;
        break;
    case H2B_GATE_FAIL:
        r->failed++;
        break;
    case H2B_GATE_MISSING:
        r->missing++;
        break;
    case H2B_GATE_UNGATED:
        r->ungated++;
        break;
    case H2B_GATE_INVALID:
        r->invalid++;
        break;
    case H2B_GATE_NA:
        r->not_applicable++;
        break;
    }
}

/* The value of exact metric m across every observation of a benchmark: the largest. Sets
 * *varies when the observations disagree (a non-deterministic allocation). */
double h2b__gate_exact_value(const struct h2b_gate_obs *const *obs, size_t n, int m, bool *varies,
                             double *lowest)
{
    double hi = -INFINITY, lo = INFINITY;
    for (size_t i = 0; i < n; i++) {
        double v = h2b_gate_obs_value(obs[i], (enum h2b_metric)m);
        hi = v > hi ? v : hi;
        lo = v < lo ? v : lo;
    }
    *varies = hi - lo > H2B__GATE_EXACT_SLACK;
    *lowest = lo;
    return hi;
}

static void fmt_forks(struct h2b_buf *b, const struct h2b_gate_obs *const *obs, size_t n)
{
    size_t total = 0;
    for (size_t i = 0; i < n; i++) {
        const struct h2b_model_nums *f = &obs[i]->e->fork_p99_ns;
        total += f->v && f->n ? f->n : 1;
    }
    h2b_buf_printf(b, "best of %zu fork p99s (", total);
    const char *sep = "";
    for (size_t i = 0; i < n; i++) {
        const struct h2b_model_nums *f = &obs[i]->e->fork_p99_ns;
        if (!f->v || !f->n) {
            h2b_buf_printf(b, "%s%.0f merged", sep, obs[i]->e->p99_ns);
            sep = ", ";
        }
        for (size_t k = 0; f->v && k < f->n; k++) {
            h2b_buf_printf(b, "%s%.0f", sep, f->v[k]);
            sep = ", ";
        }
    }
    h2b_buf_printf(b, " ns)");
}

static int finish_evidence(struct h2b_gate_row *row, struct h2b_buf *b)
{
    free(row->evidence);
    row->evidence = NULL;
    return h2b_buf_finish(b, &row->evidence);
}

static bool baseline_of(const struct h2b_baseline *bl, int m, double *v)
{
    switch (m) {
    case H2B_METRIC_BYTES_PER_OP:
        *v = bl->bytes_per_op;
        return bl->has_bytes;
    case H2B_METRIC_ALLOCS_PER_OP:
        *v = bl->allocs_per_op;
        return bl->has_allocs;
    case H2B_METRIC_P99_NS:
        *v = bl->p99_ns;
        return bl->has_p99;
    default:
        return false;
    }
}

/* A p99 breach waiting for confirmation. */
struct pending {
    size_t row;
    const char *name;
};

/* Whether the ceilings' fingerprint matches the results': absolute p99 ceilings need the same
 * machine, instruction ceilings the same build (and the same instruction source). */
struct applies {
    bool machine, build;
    char machine_why[400], build_why[400];
    const struct h2b_fingerprint *want;
};

bool h2b_gate_machine_applies(const struct h2b_fingerprint *want,
                              const struct h2b_fingerprint *have, char *na, size_t size)
{
    char why[256] = "";
    bool same = h2b_fingerprint_same_machine(want, have, why, sizeof(why));
    snprintf(na, size, "not applicable (set on %.120s%s%.200s)",
             want->cpu_model ? want->cpu_model : "another machine", same ? "" : "; ", why);
    return same;
}

static void fingerprint_verdict(const struct h2b_ceilings *c, const struct h2b_gate_set *s,
                                struct applies *a)
{
    char why[256] = "";
    const struct h2b_fingerprint *fp = &c->fingerprint;
    struct h2b_fingerprint have; /* a view of the results' env */
    h2b_gate_set_fingerprint(s, &have);
    a->want = fp;
    a->machine = h2b_gate_machine_applies(fp, &have, a->machine_why, sizeof(a->machine_why));
    a->build = h2b_fingerprint_same_build(fp, &have, why, sizeof(why));
    snprintf(a->build_why, sizeof(a->build_why),
             "not applicable (counted with %.60s %.20s, nghttp2 %.20s; %.200s)",
             fp->compiler ? fp->compiler : "another compiler", fp->build_type ? fp->build_type : "",
             fp->nghttp2 ? fp->nghttp2 : "?", why);
}

static int evaluate_bench(struct h2b_gate_report *r, const struct h2b_ceiling_bench *cb,
                          const struct h2b_gate_obs *const *obs, size_t n, struct pending *pend,
                          size_t *n_pend, const struct applies *ap, bool strict)
{
    if (n == 0) {
        struct h2b_gate_row *row = h2b__gate_add_row(r, cb->name, -1);
        if (!row)
            return H2B_ERR_NOMEM;
        row->status = H2B_GATE_MISSING;
        row->failing = true;
        struct h2b_buf b = {0};
        h2b_buf_printf(&b, "named in the ceilings but absent from the results");
        return finish_evidence(row, &b);
    }
    for (int m = 0; m < H2B_METRIC_COUNT; m++) {
        const struct h2b_ceiling *c = &cb->metric[m];
        if (!c->set)
            continue;
        struct h2b_gate_row *row = h2b__gate_add_row(r, cb->name, m);
        if (!row)
            return H2B_ERR_NOMEM;
        row->has_ceiling = true;
        row->ceiling = c->max;
        row->has_baseline = baseline_of(&cb->baseline, m, &row->baseline);
        struct h2b_buf b = {0};
        /* An absolute p99 set on another machine, or an instruction count from another build
         * (or another counter), says nothing here: reported as such, never as pass or fail. */
        const char *na = NULL;
        char src_why[256];
        if (m == H2B_METRIC_P99_NS && !ap->machine)
            na = ap->machine_why;
        if (m == H2B_METRIC_INSTRUCTIONS_PER_OP && !ap->build)
            na = ap->build_why;
        for (size_t i = 0; !na && m == H2B_METRIC_INSTRUCTIONS_PER_OP && i < n; i++) {
            const char *want = ap->want->instructions_source,
                       *have = obs[i]->e->instructions_source;
            if (want && have && strcmp(want, have) != 0) {
                snprintf(src_why, sizeof(src_why),
                         "not applicable (counted with %.30s; %.30s in %.150s)", want, have,
                         obs[i]->source);
                na = src_why;
            }
        }
        if (na) {
            row->status = H2B_GATE_NA;
            row->failing = strict;
            h2b_buf_printf(&b, "%s%s", na, strict ? " (--strict: invalid)" : "");
            int rv = finish_evidence(row, &b);
            if (rv != H2B_OK)
                return rv;
            continue;
        }
        /* A benchmark that failed, or a ceiling on a metric this run did not measure, cannot
         * pass. */
        for (size_t i = 0; i < n && row->status != H2B_GATE_INVALID; i++) {
            const struct h2b_results_micro *e = obs[i]->e;
            if (e->error) {
                row->status = H2B_GATE_INVALID;
                row->failing = true;
                h2b_buf_printf(&b, "the benchmark failed in %s: %s", obs[i]->source, e->error);
            } else if (!h2b_gate_obs_has(obs[i], (enum h2b_metric)m)) {
                row->status = H2B_GATE_INVALID;
                row->failing = true;
                h2b_buf_printf(&b, "%s is null in %s: %s", h2b_metric_key(m), obs[i]->source,
                               e->note ? e->note : "no reason given");
            }
        }
        if (row->status == H2B_GATE_INVALID) {
            int rv = finish_evidence(row, &b);
            if (rv != H2B_OK)
                return rv;
            continue;
        }
        if (m == H2B_METRIC_P99_NS) {
            double best = INFINITY;
            for (size_t i = 0; i < n; i++) {
                double v = h2b_gate_robust_p99(obs[i]);
                best = v < best ? v : best;
            }
            row->has_current = true;
            row->current = best;
            fmt_forks(&b, obs, n);
            if (best > c->max) {
                row->status = H2B_GATE_FAIL;
                row->failing = true;
                pend[*n_pend].row = r->count - 1;
                pend[*n_pend].name = cb->name;
                (*n_pend)++;
            }
        } else {
            bool varies;
            double lowest;
            row->has_current = true;
            row->current = h2b__gate_exact_value(obs, n, m, &varies, &lowest);
            h2b_buf_printf(&b, "exact");
            for (size_t i = 0; i < n; i++) {
                if (h2b_gate_obs_nondeterministic(obs[i]) && m != H2B_METRIC_INSTRUCTIONS_PER_OP) {
                    h2b_buf_printf(&b, "; runner flags it not deterministic");
                    break;
                }
            }
            if (varies)
                h2b_buf_printf(&b, "; not deterministic: %.15g to %.15g across results files",
                               lowest, row->current);
            if (row->current > c->max + H2B__GATE_EXACT_SLACK) {
                row->status = H2B_GATE_FAIL;
                row->failing = true;
                h2b_buf_printf(&b, "; %.15g over the ceiling", row->current - c->max);
            }
        }
        int rv = finish_evidence(row, &b);
        if (rv != H2B_OK)
            return rv;
    }
    return H2B_OK;
}

/* Re-measures pending breaches; a breach that any round does not reproduce passes. */
static int confirm(struct h2b_gate_report *r, const struct h2b_gate_options *opt,
                   struct pending *pend, size_t n_pend)
{
    const char **names = malloc((n_pend ? n_pend : 1) * sizeof(*names));
    double *p99 = malloc((n_pend ? n_pend : 1) * sizeof(*p99));
    int rv = H2B_OK;
    if (!names || !p99) {
        rv = H2B_ERR_NOMEM;
        goto out;
    }
    size_t live = n_pend;
    for (int round = 1; round <= opt->confirm && live > 0 && opt->rerun; round++) {
        size_t k = 0;
        for (size_t i = 0; i < n_pend; i++) {
            if (pend[i].name)
                names[k++] = pend[i].name;
        }
        H2B_ASSERT(k == live); /* a breach leaves the pending list only by settling */
        r->confirm_runs++;
        rv = opt->rerun(opt->rerun_arg, names, k, p99);
        if (rv != H2B_OK) {
            for (size_t i = 0; i < n_pend; i++) {
                if (!pend[i].name)
                    continue;
                struct h2b_gate_row *row = &r->rows[pend[i].row];
                row->status = H2B_GATE_INVALID;
                struct h2b_buf b = {0};
                h2b_buf_printf(&b, "%s; confirmation run %d could not run (%s)", row->evidence,
                               round, h2b_strerror(rv));
                rv = finish_evidence(row, &b);
                if (rv != H2B_OK)
                    goto out;
            }
            goto out;
        }
        k = 0;
        for (size_t i = 0; i < n_pend; i++) {
            if (!pend[i].name)
                continue;
            struct h2b_gate_row *row = &r->rows[pend[i].row];
            double v = p99[k++];
            struct h2b_buf b = {0};
            if (isnan(v)) {
                row->status = H2B_GATE_INVALID;
                h2b_buf_printf(&b, "%s; absent from confirmation run %d", row->evidence, round);
                pend[i].name = NULL;
                live--;
            } else if (v <= row->ceiling) {
                row->status = H2B_GATE_PASS;
                row->failing = false;
                h2b_buf_printf(&b, "%s; breach not confirmed: re-run %d p99 %.0f ns", row->evidence,
                               round, v);
                pend[i].name = NULL;
                live--;
            } else {
                h2b_buf_printf(&b, "%s; confirmed by re-run %d: %.0f ns", row->evidence, round, v);
            }
            rv = finish_evidence(row, &b);
            if (rv != H2B_OK)
                goto out;
        }
    }
    for (size_t i = 0; i < n_pend; i++) {
        if (!pend[i].name)
            continue;
        struct h2b_gate_row *row = &r->rows[pend[i].row];
        if (opt->confirm == 0 || !opt->rerun) {
            struct h2b_buf b = {0};
            h2b_buf_printf(&b, "%s; no confirmation re-run", row->evidence);
            rv = finish_evidence(row, &b);
            if (rv != H2B_OK)
                goto out;
        }
    }
out:
    free(names);
    free(p99);
    return rv;
}

static int severity(const struct h2b_gate_row *row)
{
    if (row->status == H2B_GATE_INVALID)
        return 0;
    if (row->failing)
        return 1;
    if (row->status == H2B_GATE_UNGATED)
        return 2;
    return 3;
}

/* Stable sort by severity (insertion sort: reports have tens of rows). */
static void sort_rows(struct h2b_gate_report *r)
{
    for (size_t i = 1; i < r->count; i++) {
        struct h2b_gate_row row = r->rows[i];
        size_t j = i;
        while (j > 0 && severity(&r->rows[j - 1]) > severity(&row)) {
            r->rows[j] = r->rows[j - 1];
            j--;
        }
        r->rows[j] = row;
    }
}

static bool selected(const struct h2b_gate_options *opt, const char *name)
{
    return !opt->filter || regexec(opt->filter, name, 0, NULL, 0) == 0;
}

int h2b_gate_check(const struct h2b_ceilings *c, const struct h2b_gate_set *s,
                   const struct h2b_gate_options *opt, struct h2b_gate_report **out)
{
    struct h2b_gate_report *r = calloc(1, sizeof(*r));
    const struct h2b_gate_obs **obs = malloc((s->count ? s->count : 1) * sizeof(*obs));
    struct pending *pend = malloc((c->count ? c->count : 1) * sizeof(*pend));
    size_t n_pend = 0;
    int rv = H2B_ERR_NOMEM;
    uint64_t t0 = h2b_clock_now_ns();
    if (!r || !obs || !pend)
        goto out_err;
    h2b_clock_utc_string(r->started, sizeof(r->started));
    if (s->invalid) {
        r->invalid_reason = strdup(s->invalid);
        if (!r->invalid_reason)
            goto out_err;
        r->exit_code = 3;
        goto out_ok;
    }
    struct applies ap;
    fingerprint_verdict(c, s, &ap);
    for (size_t i = 0; i < c->count; i++) {
        if (!selected(opt, c->benches[i].name))
            continue;
        size_t n = 0;
        for (size_t j = 0; j < s->count; j++) {
            if (strcmp(s->obs[j].e->name, c->benches[i].name) == 0)
                obs[n++] = &s->obs[j];
        }
        rv = evaluate_bench(r, &c->benches[i], obs, n, pend, &n_pend, &ap, opt->strict);
        if (rv != H2B_OK)
            goto out_err;
        H2B_ASSERT(n_pend <= i + 1); /* one p99 breach at most per benchmark: pend has count */
    }
    if (n_pend) {
        rv = confirm(r, opt, pend, n_pend);
        if (rv != H2B_OK)
            goto out_err;
    }
    for (size_t j = 0; j < s->count; j++) {
        const struct h2b_gate_obs *o = &s->obs[j];
        const char *name = o->e->name;
        bool seen = h2b_ceilings_find(c, name) != NULL || !selected(opt, name);
        for (size_t k = 0; k < j && !seen; k++)
            seen = strcmp(s->obs[k].e->name, name) == 0;
        if (seen)
            continue;
        struct h2b_gate_row *row = h2b__gate_add_row(r, name, -1);
        if (!row) {
            rv = H2B_ERR_NOMEM;
            goto out_err;
        }
        row->status = H2B_GATE_UNGATED;
        row->failing = opt->strict;
        struct h2b_buf b = {0};
        h2b_buf_printf(&b,
                       "no ceiling in the ceilings file%s; B/op %.15g, allocs/op %.15g, p99 "
                       "%.0f ns",
                       opt->strict ? " (--strict)" : "",
                       h2b_gate_obs_value(o, H2B_METRIC_BYTES_PER_OP),
                       h2b_gate_obs_value(o, H2B_METRIC_ALLOCS_PER_OP), h2b_gate_robust_p99(o));
        rv = finish_evidence(row, &b);
        if (rv != H2B_OK)
            goto out_err;
    }
    for (size_t i = 0; i < r->count; i++)
        h2b__gate_count_row(r, &r->rows[i]);
    H2B_ASSERT((size_t)(r->passed + r->failed + r->missing + r->ungated + r->invalid +
                        r->not_applicable) == r->count); /* every row counted once */
    sort_rows(r);
    if (r->invalid || (opt->strict && r->not_applicable))
        r->exit_code = 3;
    else if (r->failed || r->missing || (opt->strict && r->ungated))
        r->exit_code = 1;
out_ok:
    r->elapsed_s = (double)(h2b_clock_now_ns() - t0) / 1e9;
    free(obs);
    free(pend);
    *out = r;
    return H2B_OK;
out_err:
    free(obs);
    free(pend);
    h2b_gate_report_del(r);
    return rv;
}
