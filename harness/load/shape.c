/*
 * shape.c - piecewise-linear load shapes and the inverse of their integral (see shape.h).
 *
 * Each segment stores the requests intended before it, so the integral at t is one segment's
 * closed form, and its inverse is a quadratic solved in the cancellation-free form
 * tau = 2m / (r0 + sqrt(r0^2 + 2 s m)) (s the slope, m the requests into the segment), which
 * holds for rising, falling and flat segments alike and never divides by the slope. The segment
 * is found by binary search over `before`. Rejected: stepping the rate in small increments (the
 * times would follow the shape only approximately, and drift with the step).
 */
#include "load/shape.h"
#include "core/array.h"
#include "core/cli.h"
#include "core/error.h"
#include "core/json.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SHAPE_NS (30ULL * 24 * 3600 * 1000000000ULL) /* 30 days */
#define MAX_RATE 1e9

static double seg_count(const struct h2b_shape_seg *g, double tau_s)
{
    double len_s = (double)g->len_ns / 1e9;
    return g->r0 * tau_s + (g->r1 - g->r0) / len_s * tau_s * tau_s / 2;
}

static int push(struct h2b_shape *s, size_t *cap, uint64_t len_ns, double r0, double r1)
{
    if (s->nseg == H2B_SHAPE_MAX_SEGMENTS)
        return H2B_ERR_INVAL;
    if (s->nseg == *cap) {
        struct h2b_shape_seg *g = h2b_array_grow(s->seg, cap, s->nseg + 1, sizeof(*g), 8);
        if (!g)
            return H2B_ERR_NOMEM;
        s->seg = g;
    }
    struct h2b_shape_seg *g = &s->seg[s->nseg++];
    g->start_ns = s->total_ns;
    g->len_ns = len_ns;
    g->r0 = r0;
    g->r1 = r1;
    g->before = s->total;
    s->total_ns += len_ns;
    s->total += seg_count(g, (double)len_ns / 1e9);
    return H2B_OK;
}

/* Parses text[from, to) with parse into a copy (the core parsers take whole strings). */
static int field(const char *text, size_t from, size_t to, char *buf, size_t n)
{
    if (to - from >= n)
        return H2B_ERR_PARSE;
    memcpy(buf, text + from, to - from);
    buf[to - from] = '\0';
    return H2B_OK;
}

/* What a shape's values are, as its flag's messages say them. */
struct unit {
    const char *flag;         /* "--stages" */
    const char *step_flag;    /* "--step" */
    const char *field;        /* a stage's value: "rate" */
    const char *start;        /* the staircase's first value: "RATE" */
    const char *what;         /* "requests/s" */
    const char *range;        /* "0..1e9" */
    const char *start_range;  /* "0.001..1e9" */
    const char *step_example; /* "100+50/5s" */
    const char *value;        /* "a rate in req/s" */
    const char *empty;        /* a shape of zeros */
    double start_min, max;
};

static const struct unit RATES = {
    .flag = "--stages",
    .step_flag = "--step",
    .field = "rate",
    .start = "RATE",
    .what = "requests/s",
    .range = "0..1e9",
    .start_range = "0.001..1e9",
    .step_example = "100+50/5s",
    .value = "a rate in req/s",
    .empty = "the shape intends no request (every rate is 0)",
    .start_min = 0.001,
    .max = MAX_RATE,
};
static const struct unit CONNS = {
    .flag = "--conn-stages",
    .step_flag = "--conn-step",
    .field = "connections",
    .start = "N",
    .what = "connections",
    .range = "0..1000000",
    .start_range = "1..1000000",
    .step_example = "2+2/5s",
    .value = "a number of connections",
    .empty = "the shape opens no connection (every value is 0)",
    .start_min = 1,
    .max = H2B_SHAPE_MAX_CONNS,
};

static int parse_stages(struct h2b_shape *s, const char *text, double start_rate,
                        const struct unit *u, struct h2b_diag *d)
{
    struct h2b_shape out = {0};
    size_t cap = 0, pos = 0, len = strlen(text);
    double rate = start_rate;
    int stage = 1, rv = H2B_OK;
    char buf[64];
    if (len == 0) {
        h2b_diag_at(d, u->flag, 1, 1, "empty (expected DUR:%s[,DUR:%s...])", u->start, u->start);
        return H2B_ERR_PARSE;
    }
    for (;; stage++) {
        const char *comma = strchr(text + pos, ',');
        size_t end = comma ? (size_t)(comma - text) : len;
        const char *colon = memchr(text + pos, ':', end - pos);
        if (!colon) {
            h2b_diag_at(d, u->flag, 1, (int)pos + 1,
                        "stage %d: expected DUR:%s (a duration, a colon, %s)", stage, u->start,
                        u->value);
            rv = H2B_ERR_PARSE;
            break;
        }
        size_t c = (size_t)(colon - text);
        uint64_t dur;
        double target;
        if (field(text, pos, c, buf, sizeof(buf)) != H2B_OK ||
            h2b_cli_parse_duration_ns(buf, 1, MAX_SHAPE_NS, &dur) != H2B_OK) {
            h2b_diag_at(d, u->flag, 1, (int)pos + 1,
                        "stage %d: duration '%.*s': expected a duration > 0 (10s, 500ms)", stage,
                        (int)(c - pos), text + pos);
            rv = H2B_ERR_PARSE;
            break;
        }
        if (field(text, c + 1, end, buf, sizeof(buf)) != H2B_OK ||
            h2b_cli_parse_double(buf, 0, u->max, &target) != H2B_OK) {
            h2b_diag_at(d, u->flag, 1, (int)c + 2, "stage %d: %s '%.*s': expected %s in %s", stage,
                        u->field, (int)(end - c - 1), text + c + 1, u->what, u->range);
            rv = H2B_ERR_PARSE;
            break;
        }
        if (out.total_ns + dur > MAX_SHAPE_NS) {
            h2b_diag_at(d, u->flag, 1, (int)pos + 1, "stage %d: the shape is longer than 30 days",
                        stage);
            rv = H2B_ERR_PARSE;
            break;
        }
        if ((rv = push(&out, &cap, dur, rate, target)) != H2B_OK) {
            h2b_diag_at(d, u->flag, 1, (int)pos + 1, "stage %d: %s", stage,
                        rv == H2B_ERR_NOMEM ? "out of memory" : "too many stages");
            rv = rv == H2B_ERR_NOMEM ? rv : H2B_ERR_PARSE;
            break;
        }
        rate = target;
        if (!comma)
            break;
        pos = end + 1;
    }
    if (rv == H2B_OK && !(out.total > 0)) {
        h2b_diag_at(d, u->flag, 1, 1, "%s", u->empty);
        rv = H2B_ERR_PARSE;
    }
    if (rv != H2B_OK) {
        free(out.seg);
        return rv;
    }
    *s = out;
    return H2B_OK;
}

int h2b_shape_parse_stages(struct h2b_shape *s, const char *text, double start_rate,
                           struct h2b_diag *d)
{
    return parse_stages(s, text, start_rate, &RATES, d);
}

int h2b_shape_parse_conn_stages(struct h2b_shape *s, const char *text, struct h2b_diag *d)
{
    return parse_stages(s, text, 0, &CONNS, d);
}

static int parse_step(const char *text, double *rate, double *step, uint64_t *dur_ns,
                      const struct unit *u, struct h2b_diag *d)
{
    const char *plus = strchr(text, '+');
    const char *slash = plus ? strchr(plus, '/') : NULL;
    char buf[64];
    double r, st;
    uint64_t dur;
    if (!plus || !slash) {
        h2b_diag_at(d, u->step_flag, 1, 1, "expected %s+STEP/DUR, like %s", u->start,
                    u->step_example);
        return H2B_ERR_PARSE;
    }
    size_t p = (size_t)(plus - text), sl = (size_t)(slash - text), len = strlen(text);
    if (field(text, 0, p, buf, sizeof(buf)) != H2B_OK ||
        h2b_cli_parse_double(buf, u->start_min, u->max, &r) != H2B_OK) {
        h2b_diag_at(d, u->step_flag, 1, 1, "%s '%.*s': expected %s in %s", u->start, (int)p, text,
                    u->what, u->start_range);
        return H2B_ERR_PARSE;
    }
    if (field(text, p + 1, sl, buf, sizeof(buf)) != H2B_OK ||
        h2b_cli_parse_double(buf, 0, u->max, &st) != H2B_OK) {
        h2b_diag_at(d, u->step_flag, 1, (int)p + 2, "STEP '%.*s': expected %s in %s",
                    (int)(sl - p - 1), plus + 1, u->what, u->range);
        return H2B_ERR_PARSE;
    }
    if (field(text, sl + 1, len, buf, sizeof(buf)) != H2B_OK ||
        h2b_cli_parse_duration_ns(buf, 1000000, MAX_SHAPE_NS, &dur) != H2B_OK) {
        h2b_diag_at(d, u->step_flag, 1, (int)sl + 2, "DUR '%s': expected a duration >= 1ms",
                    slash + 1);
        return H2B_ERR_PARSE;
    }
    *rate = r;
    *step = st;
    *dur_ns = dur;
    return H2B_OK;
}

int h2b_shape_parse_step(const char *text, double *rate, double *step, uint64_t *dur_ns,
                         struct h2b_diag *d)
{
    return parse_step(text, rate, step, dur_ns, &RATES, d);
}

int h2b_shape_parse_conn_step(const char *text, double *n, double *step, uint64_t *dur_ns,
                              struct h2b_diag *d)
{
    return parse_step(text, n, step, dur_ns, &CONNS, d);
}

int h2b_shape_steps(struct h2b_shape *s, double rate, double step, uint64_t dur_ns,
                    uint64_t total_ns)
{
    if (dur_ns == 0 || total_ns == 0 || !(rate > 0) || step < 0)
        return H2B_ERR_INVAL;
    if ((total_ns + dur_ns - 1) / dur_ns > H2B_SHAPE_MAX_SEGMENTS)
        return H2B_ERR_INVAL;
    struct h2b_shape out = {0};
    size_t cap = 0;
    for (uint64_t k = 0; out.total_ns < total_ns; k++) {
        uint64_t len = total_ns - out.total_ns < dur_ns ? total_ns - out.total_ns : dur_ns;
        double r = rate + step * (double)k;
        int rv = push(&out, &cap, len, r, r);
        if (rv != H2B_OK) {
            free(out.seg);
            return rv;
        }
    }
    *s = out;
    return H2B_OK;
}

void h2b_shape_free(struct h2b_shape *s)
{
    free(s->seg);
    memset(s, 0, sizeof(*s));
}

/* The last segment whose key (start_ns with by_time, else before) is <= x: keys never fall. */
static size_t seg_find(const struct h2b_shape *s, double x, bool by_time)
{
    size_t lo = 0, hi = s->nseg;
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        double key = by_time ? (double)s->seg[mid].start_ns : s->seg[mid].before;
        if (key <= x)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

/* The segment holding t_ns (t_ns < total_ns). */
static const struct h2b_shape_seg *seg_at(const struct h2b_shape *s, uint64_t t_ns)
{
    return &s->seg[seg_find(s, (double)t_ns, true)];
}

double h2b_shape_rate_at(const struct h2b_shape *s, uint64_t t_ns)
{
    if (t_ns >= s->total_ns)
        return 0;
    const struct h2b_shape_seg *g = seg_at(s, t_ns);
    return g->r0 + (g->r1 - g->r0) * (double)(t_ns - g->start_ns) / (double)g->len_ns;
}

double h2b_shape_count(const struct h2b_shape *s, uint64_t t_ns)
{
    if (t_ns >= s->total_ns)
        return s->total;
    const struct h2b_shape_seg *g = seg_at(s, t_ns);
    return g->before + seg_count(g, (double)(t_ns - g->start_ns) / 1e9);
}

uint64_t h2b_shape_time_of(const struct h2b_shape *s, double n)
{
    if (!(n < s->total) || s->nseg == 0)
        return UINT64_MAX;
    /* the last segment with `before` <= n: segments of rate 0 hold no request, so the one
     * after them (same `before`) is the one that takes n */
    size_t lo = seg_find(s, n, false);
    const struct h2b_shape_seg *g = &s->seg[lo];
    double len_s = (double)g->len_ns / 1e9;
    double m = n - g->before;
    if (m < 0)
        m = 0;
    double slope = (g->r1 - g->r0) / len_s;
    double disc = g->r0 * g->r0 + 2 * slope * m;
    double tau = m == 0 ? 0 : disc > 0 ? 2 * m / (g->r0 + sqrt(disc)) : len_s;
    if (!(tau <= len_s) || !isfinite(tau))
        tau = len_s; /* rounding at the segment's very end */
    return g->start_ns + (uint64_t)llround(tau * 1e9);
}

double h2b_shape_peak(const struct h2b_shape *s)
{
    double p = 0;
    for (size_t i = 0; i < s->nseg; i++) {
        if (s->seg[i].r0 > p)
            p = s->seg[i].r0;
        if (s->seg[i].r1 > p)
            p = s->seg[i].r1;
    }
    return p;
}

uint32_t h2b_shape_share(const struct h2b_shape *s, uint64_t t_ns, uint32_t n, uint32_t k)
{
    double v = h2b_shape_rate_at(s, t_ns);
    uint64_t total = v > 0 ? (uint64_t)llround(v) : 0;
    return (uint32_t)(total / n + (k < total % n ? 1 : 0));
}
