/*
 * groups.c - the queries the renderers ask of a results file: its distinct targets and
 * (connections, streams) keys, and the values, histograms and latency of one matrix group (the
 * repeats of one target at one key).
 *
 * Approach: pure functions over the loaded results (rdata.h); md.c, plots.c and profiles.c call
 * them, report.c drives the renderers. They lived in report.c, which made md.c and plots.c call
 * back into the file that calls them (an include circle); here they depend on rdata only.
 * Rejected: moving them into rdata.c (the results data model would learn the report's notion
 * of a group and its cell keys).
 */
#include "report/groups.h"
#include "core/results.h"
#include "core/error.h"
#include "core/hist.h"
#include "core/stats.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define MAX_REPEATS 256

static int cmp_key(const void *a, const void *b)
{
    const struct h2b__cellkey *x = a, *y = b;
    if (x->connections != y->connections)
        return x->connections < y->connections ? -1 : 1;
    return (x->streams > y->streams) - (x->streams < y->streams);
}

int h2b__report_index(const struct h2b_rdata_results *r, const char ***targets, size_t *n_targets,
                      struct h2b__cellkey **keys, size_t *n_keys)
{
    size_t n = r->n_cells ? r->n_cells : 1;
    const char **t = calloc(n, sizeof(*t));
    struct h2b__cellkey *k = calloc(n, sizeof(*k));
    if (t == NULL || k == NULL) {
        free(t);
        free(k);
        return H2B_ERR_NOMEM;
    }
    size_t nt = 0, nk = 0;
    for (size_t i = 0; i < r->n_cells; i++) {
        const struct h2b_rdata_cell *c = &r->cells[i];
        size_t j;
        for (j = 0; j < nt && strcmp(t[j], c->target) != 0; j++)
            ;
        if (j == nt)
            t[nt++] = c->target;
        for (j = 0; j < nk; j++) {
            if (k[j].connections == c->connections && k[j].streams == c->streams_requested)
                break;
        }
        if (j == nk)
            k[nk++] = (struct h2b__cellkey){c->connections, c->streams_requested};
    }
    qsort(k, nk, sizeof(*k), cmp_key);
    *targets = t;
    *n_targets = nt;
    *keys = k;
    *n_keys = nk;
    return H2B_OK;
}

static bool in_group(const struct h2b_rdata_cell *c, const char *target, struct h2b__cellkey k)
{
    return c->connections == k.connections && c->streams_requested == k.streams &&
           strcmp(c->target, target) == 0;
}

size_t h2b__report_group(const struct h2b_rdata_results *r, const char *target,
                         struct h2b__cellkey k, int which, double *out, size_t max)
{
    size_t n = 0;
    for (size_t i = 0; i < r->n_cells && n < max; i++) {
        const struct h2b_rdata_cell *c = &r->cells[i];
        if (c->failed || !in_group(c, target, k))
            continue;
        double v;
        switch (which) {
        case H2B__GROUP_RPS:
            v = c->e->req_per_s;
            break;
        case H2B__GROUP_P50:
            v = c->e->latency_ns.p50;
            break;
        case H2B__GROUP_P99:
            v = c->e->latency_ns.p99;
            break;
        case H2B__GROUP_SERVER_NS_PER_REQ:
            v = c->e->requests > 0 ? c->e->server_cpu_s * 1e9 / c->e->requests : NAN;
            break;
        default:
            v = c->e->server_rss_kib;
        }
        if (!isnan(v))
            out[n++] = v;
    }
    return n;
}

double h2b__report_peak_rps(const struct h2b_rdata_results *r, const char *target,
                            const struct h2b__cellkey *keys, size_t n_keys)
{
    double peak = NAN;
    for (size_t k = 0; k < n_keys; k++) {
        double v[MAX_REPEATS];
        size_t n = h2b__report_group(r, target, keys[k], H2B__GROUP_RPS, v, MAX_REPEATS);
        double med = h2b_stats_median(v, n);
        if (n > 0 && (isnan(peak) || med > peak))
            peak = med;
    }
    return peak;
}

double h2b__report_run_peak_rps(const struct h2b_rdata_results *r, const char *target)
{
    const char **targets = NULL;
    struct h2b__cellkey *keys = NULL;
    size_t nt = 0, nk = 0;
    if (h2b__report_index(r, &targets, &nt, &keys, &nk) != H2B_OK)
        return NAN;
    double peak = h2b__report_peak_rps(r, target, keys, nk);
    free(targets);
    free(keys);
    return peak;
}

struct h2b_hist *h2b__report_group_hist(const struct h2b_rdata_results *r, const char *target,
                                        struct h2b__cellkey k, size_t *repeats)
{
    struct h2b_hist *m = NULL;
    *repeats = 0;
    for (size_t i = 0; i < r->n_cells; i++) {
        const struct h2b_rdata_cell *c = &r->cells[i];
        if (c->failed || !in_group(c, target, k))
            continue;
        (*repeats)++;
        if (c->hist == NULL ||
            (m == NULL &&
             h2b_hist_new(&m, c->hist->lowest, c->hist->highest, c->hist->sub_bits) != H2B_OK) ||
            h2b_hist_merge(m, c->hist) != H2B_OK) {
            h2b_hist_del(m);
            return NULL;
        }
    }
    if (m && m->total == 0) {
        h2b_hist_del(m);
        return NULL;
    }
    return m;
}

double h2b__report_group_latency(const struct h2b_rdata_results *r, const char *target,
                                 struct h2b__cellkey k, double p, bool *merged)
{
    size_t repeats;
    struct h2b_hist *m = h2b__report_group_hist(r, target, k, &repeats);
    *merged = m != NULL && repeats > 1;
    if (*merged) {
        double v = (double)h2b_hist_percentile(m, p);
        h2b_hist_del(m);
        return v;
    }
    h2b_hist_del(m);
    double vals[MAX_REPEATS];
    size_t nv = h2b__report_group(r, target, k, p < 75 ? H2B__GROUP_P50 : H2B__GROUP_P99, vals,
                                  MAX_REPEATS);
    return h2b_stats_median(vals, nv);
}
