/*
 * interval.c - per-interval results: each worker fills its own interval histogram and counts,
 * hands them over at the interval's end, and the thread that runs the load merges them.
 *
 * The hand-off is a ring of slots per worker with two counters (wrk's shape, STYLE rule 8: the
 * hot path touches only the worker's own slot): the worker publishes a finished slot by bumping
 * ipub (release), the aggregator merges every published slot bin for bin into that interval's
 * accumulator, resets it and gives it back by bumping icon. ipassed says every interval before
 * it is published, so an interval is emitted once all workers are past it: the merged
 * percentiles are exact (histograms merged, never percentiles averaged). An interval is the
 * requests that ended in [origin + k len, origin + (k + 1) len); a worker rolls over on the
 * first request or loop turn after the boundary (turns are at most 100 ms apart).
 *
 * Rejected: the progress line's snapshot request (load.c), whose boundary is wherever each
 * worker notices the request, and a worker late by 250 ms lands in the next interval; and one
 * shared histogram per interval with atomics, which costs every request a contended cache line.
 * If the aggregator falls a whole ring behind, a worker folds the next intervals into its
 * current slot rather than wait: the row they land in says how many it holds (coalesced).
 */
#include "load/engine.h"
#include "core/check.h"
#include "core/clock.h"
#include "core/array.h"
#include "core/buf.h"
#include "core/error.h"
#include "core/results.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SLOTS 64                   /* per worker: 64 intervals of lag before folding */
#define MAX_ACC (1u << 16)             /* intervals one worker may run ahead of the slowest */
#define LAG_NS (4ULL * H2B_NS_PER_SEC) /* the aggregator's lag the ring absorbs */

int h2b__load_ival_init(struct h2b__load_worker *w)
{
    const struct h2b__load_shared *sh = w->sh;
    uint64_t n = 2 + (LAG_NS + sh->i_len - 1) / sh->i_len;
    w->nislot = (uint32_t)(n < MAX_SLOTS ? n : MAX_SLOTS);
    w->islot = calloc(w->nislot, sizeof(*w->islot));
    if (!w->islot)
        return H2B_ERR_NOMEM;
    for (uint32_t i = 0; i < w->nislot; i++)
        if (h2b_hist_new_default(&w->islot[i].latency) != H2B_OK)
            return H2B_ERR_NOMEM;
    w->iseq = 0;
    w->i_end = sh->i_last == 0 ? UINT64_MAX : sh->i_origin + sh->i_len;
    atomic_store(&w->ipub, 0);
    atomic_store(&w->icon, 0);
    atomic_store(&w->ipassed, 0);
    return H2B_OK;
}

void h2b__load_ival_free(struct h2b__load_worker *w)
{
    if (!w->islot)
        return;
    for (uint32_t i = 0; i < w->nislot; i++)
        h2b_hist_del(w->islot[i].latency);
    free(w->islot);
    w->islot = NULL;
}

void h2b__load_ival_roll(struct h2b__load_worker *w)
{
    const struct h2b__load_shared *sh = w->sh;
    uint64_t k = (w->now - sh->i_origin) / sh->i_len;
    if (k > sh->i_last)
        k = sh->i_last;
    struct h2b__load_islot *s = &w->islot[w->iseq % w->nislot];
    if (k > s->last) {
        uint64_t con = atomic_load_explicit(&w->icon, memory_order_acquire);
        if (w->iseq + 2 - con <= w->nislot) {
            w->iseq++;
            atomic_store_explicit(&w->ipub, w->iseq, memory_order_release);
            s = &w->islot[w->iseq % w->nislot];
            s->first = k;
            s->ended = s->succeeded = s->errors = s->conns = 0; /* the aggregator reset it */
        }
        s->last = k;
    }
    w->i_end = k == sh->i_last ? UINT64_MAX : sh->i_origin + (k + 1) * sh->i_len;
    atomic_store_explicit(&w->ipassed, s->first, memory_order_release);
}

struct acc {
    uint64_t ended, succeeded, errors, coalesced, conns;
    struct h2b_hist *latency;
};

struct h2b__load_iagg {
    const struct h2b__load_shared *sh;
    uint32_t nw;
    bool *drained;   /* per worker: finished and its last slot merged */
    struct acc *acc; /* interval k at acc[k % nacc], for base <= k < base + nacc */
    size_t nacc;
    uint64_t base; /* the next interval to emit */
    uint64_t seen; /* 1 + the highest interval merged so far */
    struct h2b_results_interval *rows;
    size_t nrows, cap;
    struct h2b_hist *scratch; /* the acc being emitted, merged out of the ring */
};

static int acc_alloc(struct acc *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (h2b_hist_new_default(&v[i].latency) != H2B_OK)
            return H2B_ERR_NOMEM;
    return H2B_OK;
}

static void acc_del(struct acc *v, size_t n)
{
    for (size_t i = 0; v && i < n; i++)
        h2b_hist_del(v[i].latency);
    free(v);
}

int h2b__load_iagg_new(struct h2b__load_iagg **out, const struct h2b__load_shared *sh,
                       uint32_t nworkers)
{
    struct h2b__load_iagg *a = calloc(1, sizeof(*a));
    if (!a)
        return H2B_ERR_NOMEM;
    a->sh = sh;
    a->nw = nworkers;
    a->nacc = 8;
    a->drained = calloc(nworkers, sizeof(*a->drained));
    a->acc = calloc(a->nacc, sizeof(*a->acc));
    if (!a->drained || !a->acc || acc_alloc(a->acc, a->nacc) != H2B_OK ||
        h2b_hist_new_default(&a->scratch) != H2B_OK) {
        h2b__load_iagg_del(a);
        return H2B_ERR_NOMEM;
    }
    *out = a;
    return H2B_OK;
}

void h2b__load_iagg_del(struct h2b__load_iagg *a)
{
    if (!a)
        return;
    free(a->drained);
    acc_del(a->acc, a->nacc);
    for (size_t i = 0; i < a->nrows; i++)
        h2b_model_free(&h2b_results_interval_model, &a->rows[i]);
    free(a->rows);
    h2b_hist_del(a->scratch);
    free(a);
}

/* Room for interval k in the ring (doubling it, up to MAX_ACC). False: k is too far ahead. */
static bool acc_room(struct h2b__load_iagg *a, uint64_t k)
{
    if (k < a->base + a->nacc)
        return true;
    size_t n = a->nacc;
    while (k >= a->base + n && n < MAX_ACC)
        n *= 2;
    if (k >= a->base + n)
        return false;
    struct acc *v = calloc(n, sizeof(*v));
    if (!v || acc_alloc(v, n) != H2B_OK) {
        acc_del(v, n);
        return false;
    }
    for (uint64_t j = a->base; j < a->base + a->nacc; j++) {
        struct acc *from = &a->acc[j % a->nacc], *to = &v[j % n];
        struct h2b_hist *h = to->latency;
        *to = *from;
        from->latency = h; /* swapped: the old ring frees the new, empty one */
    }
    acc_del(a->acc, a->nacc);
    a->acc = v;
    a->nacc = n;
    return true;
}

static void merge_slot(struct h2b__load_iagg *a, struct h2b__load_islot *s)
{
    uint64_t k = s->last < a->base ? a->base : s->last;
    uint64_t folded = s->last - s->first;
    if (!acc_room(a, k)) {
        k = a->base + a->nacc - 1; /* cannot happen short of a worker stuck for hours */
        folded++;
    }
    struct acc *c = &a->acc[k % a->nacc];
    c->ended += s->ended;
    c->succeeded += s->succeeded;
    c->errors += s->errors;
    c->coalesced += folded;
    c->conns += s->conns;
    h2b_hist_merge(c->latency, s->latency);
    h2b_hist_reset(s->latency);
    s->ended = s->succeeded = s->errors = s->conns = 0;
    if (k + 1 > a->seen)
        a->seen = k + 1;
}

static void merge_published(struct h2b__load_iagg *a, struct h2b__load_worker *w)
{
    uint64_t pub = atomic_load_explicit(&w->ipub, memory_order_acquire);
    uint64_t con = atomic_load_explicit(&w->icon, memory_order_relaxed);
    for (uint64_t q = con; q < pub; q++)
        merge_slot(a, &w->islot[q % w->nislot]);
    atomic_store_explicit(&w->icon, pub, memory_order_release);
}

/* Interval k as a row; the accumulator is reset for its next use. */
static int emit(struct h2b__load_iagg *a, uint64_t k, uint64_t span_ns)
{
    const struct h2b__load_shared *sh = a->sh;
    const struct h2b_load_config *cfg = sh->cfg;
    if (a->nrows == a->cap) {
        struct h2b_results_interval *r =
            h2b_array_grow(a->rows, &a->cap, a->nrows + 1, sizeof(*r), 64);
        if (!r)
            return H2B_ERR_NOMEM;
        a->rows = r;
    }
    struct acc *c = &a->acc[k % a->nacc];
    struct h2b_results_interval *row = &a->rows[a->nrows];
    h2b_model_init(&h2b_results_interval_model, row);
    uint64_t start = k * sh->i_len, end = start + sh->i_len;
    if (end > span_ns)
        end = span_ns;
    double len_s = end > start ? (double)(end - start) / 1e9 : NAN;
    row->base.present = true;
    row->index = (double)k;
    row->start_s = (double)start / 1e9;
    row->end_s = (double)end / 1e9;
    row->offered_per_s = h2b_load_offered(cfg, start, end) / len_s;
    row->achieved_per_s = (double)c->ended / len_s;
    row->ended = (double)c->ended;
    row->succeeded = (double)c->succeeded;
    row->errors = (double)c->errors;
    if (c->coalesced)
        row->coalesced = (double)c->coalesced;
    if (cfg->conn_shape.nseg)
        row->connections = (double)c->conns;
    h2b_load_latency_of(&row->latency_ns, c->latency);
    char *enc = NULL;
    if (h2b_hist_encode(c->latency, &enc) != H2B_OK ||
        h2b_model_set_string(&row->latency_histogram, enc) != H2B_OK) {
        free(enc);
        h2b_model_free(&h2b_results_interval_model, row);
        return H2B_ERR_NOMEM;
    }
    free(enc);
    a->nrows++;
    if (cfg->on_interval)
        cfg->on_interval(cfg->on_interval_ctx, row, c->latency);
    c->ended = c->succeeded = c->errors = c->coalesced = c->conns = 0;
    h2b_hist_reset(c->latency);
    return H2B_OK;
}

double h2b_load_offered(const struct h2b_load_config *cfg, uint64_t from_ns, uint64_t to_ns)
{
    if (cfg->shape.nseg) { /* the shape starts with the run, the measurement after the warm-up */
        double n = h2b_shape_count(&cfg->shape, cfg->warmup_ns + to_ns) -
                   h2b_shape_count(&cfg->shape, cfg->warmup_ns + from_ns);
        /* one rank of an MPI job: its workers' share of the job's stream */
        return cfg->job_workers ? n * cfg->threads / cfg->job_workers : n;
    }
    if (cfg->rate > 0)
        return cfg->rate * (double)(to_ns - from_ns) / 1e9;
    return NAN;
}

int h2b__load_iagg_poll(struct h2b__load_iagg *a, struct h2b__load_worker *w, bool final,
                        uint64_t t_stop)
{
    const struct h2b__load_shared *sh = a->sh;
    uint64_t passed = UINT64_MAX;
    for (uint32_t i = 0; i < a->nw; i++) {
        if (a->drained[i])
            continue;
        if (final || atomic_load_explicit(&w[i].finished, memory_order_acquire)) {
            merge_published(a, &w[i]);
            /* the slot it was filling: never published, its own now that it has finished */
            merge_slot(a, &w[i].islot[w[i].iseq % w[i].nislot]);
            a->drained[i] = true;
            continue;
        }
        uint64_t p = atomic_load_explicit(&w[i].ipassed, memory_order_acquire);
        merge_published(a, &w[i]);
        if (p < passed)
            passed = p;
    }
    /* the measurement's length: -D's, or the run's when it ended (earlier, if stopped) */
    uint64_t span = sh->t_end ? sh->t_end - sh->i_origin : UINT64_MAX;
    if (final) {
        uint64_t end = sh->t_end && sh->t_end < t_stop ? sh->t_end : t_stop;
        span = end > sh->i_origin ? end - sh->i_origin : 0;
    }
    /* every worker finished: the last intervals wait for the final poll, which knows the end */
    uint64_t limit = passed == UINT64_MAX ? a->base : passed;
    if (final) {
        uint64_t last = span ? (span - 1) / sh->i_len + 1 : 0;
        limit = last > a->seen ? last : a->seen;
    }
    for (; a->base < limit; a->base++) {
        int rv = emit(a, a->base, span);
        if (rv != H2B_OK)
            return rv;
    }
    return H2B_OK;
}

void h2b__load_iagg_take(struct h2b__load_iagg *a, struct h2b_load_result *res)
{
    res->intervals = a->rows;
    res->nintervals = a->nrows;
    a->rows = NULL;
    a->nrows = a->cap = 0;
}

int h2b_load_intervals_ndjson(const struct h2b_load_result *res, char **out, size_t *outlen)
{
    struct h2b_buf b;
    h2b_buf_init(&b);
    for (size_t i = 0; i < res->nintervals && !h2b_buf_error(&b); i++) {
        json_t *o = NULL;
        char *line = NULL;
        if (h2b_model_to_json(&h2b_results_interval_model, &res->intervals[i], &o) != H2B_OK ||
            !(line = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(15)))) {
            json_decref(o);
            h2b_buf_free(&b);
            return H2B_ERR_NOMEM;
        }
        h2b_buf_puts(&b, line);
        h2b_buf_puts(&b, "\n");
        free(line);
        json_decref(o);
    }
    *outlen = b.len;
    return h2b_buf_finish(&b, out);
}
