/*
 * history.c - change-point detection over a series of runs (see history.h).
 *
 * Approach: E-divisive means (Matteson and James 2014, as MongoDB's CI and Apache Otava run it)
 * with Otava's replacement of the permutation test by Student's t-test, so the answer is a pure
 * function of the input. Binary segmentation: every segment between the change points found so
 * far offers its best split, the one maximising the energy statistic
 *
 *     Q(tau) = m k / (m + k) * (2/(m k) S_xy - 2/(m(m-1)) S_xx - 2/(k(k-1)) S_yy)
 *
 * (m points before tau, k after; S are sums of |x_i - x_j| across and within the two sides,
 * alpha = 1). Each offer is judged by a pooled-variance t-test of the two sides' means and the
 * relative change of their medians; the offer with the smallest p-value is taken while it is at
 * most p_value and changes the level by at least min_change. The sums are updated as tau moves
 * one point right (O(segment) each), so one segment's best split costs O(segment^2). Ties are
 * broken by index, never by chance. The scan keeps min_points on either side of a split, so a
 * step in the newest runs is first seen placed a few points early; each change point is then
 * moved, within min_points, to the run that best splits its two segments by least squares. After
 * that each change point is judged again
 * against its final neighbours (a split may have been taken against a longer segment than it
 * ends up with) and the weakest failing one is removed until all pass.
 *
 * Incremental use (the store, the gate): h2b_history_newest looks only at the last
 * H2B_HISTORY_WINDOW points, with and without the newest one, so the check an append triggers
 * costs O(WINDOW^2) whatever the length of the history; the older change points are final and are
 * what `h2bench history` reports over the whole series.
 *
 * Written here: no packaged C library (Debian's or elsewhere) implements E-divisive; Otava and
 * the signal-processing-algorithms package it came from are Python. The t distribution is
 * core/stats.c's (h2b_stats_t_cdf). Rejected: the permutation test of the
 * original E-divisive (random, so two runs over one input could disagree, and hundreds of
 * re-evaluations per candidate); a windowed step detector like Chromium's (it misses drift that
 * no single window shows as a step).
 */
#include "gates/history.h"
#include "core/check.h"
#include "core/error.h"
#include "core/stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void h2b_history_opts_default(struct h2b_history_opts *o)
{
    o->p_value = H2B_HISTORY_P_VALUE;
    o->min_change = H2B_HISTORY_MIN_CHANGE;
    o->min_points = H2B_HISTORY_MIN_POINTS;
}

/* The split of x[a, b) maximising Q, into *tau and *q; false when the segment is too short. */
static bool best_split(const double *x, size_t a, size_t b, size_t minp, size_t *tau, double *q)
{
    if (b - a < 2 * minp)
        return false;
    size_t t = a + minp;
    double wl = 0, wr = 0, c = 0;
    for (size_t i = a; i < b; i++) {
        for (size_t j = i + 1; j < b; j++) {
            double d = fabs(x[i] - x[j]);
            if (j < t)
                wl += d;
            else if (i >= t)
                wr += d;
            else
                c += d;
        }
    }
    double best = -INFINITY;
    for (; t <= b - minp; t++) {
        double m = (double)(t - a), k = (double)(b - t);
        double e = 2 * c / (m * k) - 2 * wl / (m * (m - 1)) - 2 * wr / (k * (k - 1));
        double qt = m * k / (m + k) * e;
        if (qt > best) {
            best = qt;
            *tau = t;
        }
        /* x[t] moves from the right side to the left */
        double sl = 0, sr = 0;
        for (size_t i = a; i < t; i++)
            sl += fabs(x[i] - x[t]);
        for (size_t j = t + 1; j < b; j++)
            sr += fabs(x[t] - x[j]);
        wl += sl;
        wr -= sr;
        c += sr - sl;
    }
    *q = best;
    return true;
}

/* Judges the change at t between x[a, t) and x[t, b): p-value and medians. tmp holds b - a. */
static void judge(const double *x, size_t a, size_t t, size_t b, double *tmp,
                  struct h2b_history_cp *cp)
{
    size_t n1 = t - a, n2 = b - t;
    double m1, v1, m2, v2;
    h2b_stats_mean_var(x + a, n1, &m1, &v1);
    h2b_stats_mean_var(x + t, n2, &m2, &v2);
    double df = (double)(n1 + n2 - 2);
    double sp2 = ((double)(n1 - 1) * v1 + (double)(n2 - 1) * v2) / df;
    double se = sqrt(sp2 * (1 / (double)n1 + 1 / (double)n2));
    cp->index = t;
    if (se == 0 || !isfinite(se))
        cp->p = m1 == m2 ? 1 : 0;
    else
        cp->p = 2 * h2b_stats_t_cdf(-fabs(m2 - m1) / se, df);
    cp->before = h2b_stats_median_of(x + a, n1, tmp);
    cp->after = h2b_stats_median_of(x + t, n2, tmp);
    cp->change = cp->before != 0 ? cp->after / cp->before - 1 : NAN;
}

/* Whether a judged change is large enough: a level leaving 0 always is. */
static bool big_enough(const struct h2b_history_cp *cp, double min_change)
{
    if (isnan(cp->change))
        return cp->after != cp->before;
    return fabs(cp->change) >= min_change;
}

/* The split of x[a, b) within minp of t (at least one point a side) that maximises the
 * two-segment least-squares statistic m k / (m + k) (mean_left - mean_right)^2: the scan keeps
 * min_points a side, so a step in the last few points is found but placed up to min_points
 * early; this puts it on the run where the level moved. */
static size_t refine(const double *x, size_t a, size_t t, size_t b, size_t minp)
{
    size_t lo = t > a + minp ? t - minp : a + 1, hi = t + minp < b ? t + minp : b - 1;
    double total = 0, left = 0;
    for (size_t i = a; i < b; i++)
        total += x[i];
    for (size_t i = a; i < lo; i++)
        left += x[i];
    size_t best = t;
    double best_s = -1;
    for (size_t u = lo; u <= hi; u++) {
        double m = (double)(u - a), k = (double)(b - u);
        double d = left / m - (total - left) / k;
        double st = m * k / (m + k) * d * d;
        if (st > best_s) {
            best_s = st;
            best = u;
        }
        left += x[u];
    }
    return best;
}

struct offer {
    size_t a, b;
    bool valid; /* the segment has a split worth testing */
    double q;
    struct h2b_history_cp cp;
};

static void make_offer(const double *x, size_t a, size_t b, const struct h2b_history_opts *o,
                       double *tmp, struct offer *of)
{
    of->a = a;
    of->b = b;
    size_t tau = 0;
    of->valid = best_split(x, a, b, o->min_points, &tau, &of->q);
    if (!of->valid)
        return;
    judge(x, a, tau, b, tmp, &of->cp);
    of->valid = of->cp.p <= o->p_value && big_enough(&of->cp, o->min_change);
}

int h2b_history_detect(const double *x, size_t n, const struct h2b_history_opts *o,
                       struct h2b_history_cp **out, size_t *count)
{
    *out = NULL;
    *count = 0;
    if (!(o->p_value > 0 && o->p_value < 1) || !(o->min_change >= 0) || o->min_points < 2)
        return H2B_ERR_INVAL;
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(x[i]))
            return H2B_ERR_INVAL;
    }
    if (n < 2 * o->min_points)
        return H2B_ERR_RANGE;
    /* at most n / min_points segments, so as many offers and change points */
    size_t cap = n / o->min_points + 1;
    struct offer *offers = calloc(cap, sizeof(*offers));
    size_t *cps = calloc(cap + 1, sizeof(*cps));
    double *tmp = malloc(n * sizeof(*tmp));
    struct h2b_history_cp *res = NULL;
    int rv = H2B_ERR_NOMEM;
    if (!offers || !cps || !tmp)
        goto out;
    size_t noff = 1, ncp = 0;
    make_offer(x, 0, n, o, tmp, &offers[0]);
    for (;;) {
        size_t best = noff;
        for (size_t i = 0; i < noff; i++) {
            if (!offers[i].valid)
                continue;
            if (best == noff || offers[i].cp.p < offers[best].cp.p ||
                (offers[i].cp.p == offers[best].cp.p && offers[i].q > offers[best].q))
                best = i;
        }
        if (best == noff)
            break;
        H2B_ASSERT(noff < cap && ncp < cap);
        struct offer taken = offers[best];
        size_t tau = taken.cp.index;
        /* the segment becomes two offers: [a, tau) in place, [tau, b) at the end */
        make_offer(x, taken.a, tau, o, tmp, &offers[best]);
        make_offer(x, tau, taken.b, o, tmp, &offers[noff++]);
        size_t k = ncp;
        while (k > 0 && cps[k - 1] > tau) {
            cps[k] = cps[k - 1];
            k--;
        }
        cps[k] = tau;
        ncp++;
    }
    /* locate each by least squares within min_points of where the scan put it */
    for (size_t i = 0; i < ncp; i++) {
        size_t a = i ? cps[i - 1] : 0, b = i + 1 < ncp ? cps[i + 1] : n;
        cps[i] = refine(x, a, cps[i], b, o->min_points);
    }
    res = ncp ? calloc(ncp, sizeof(*res)) : NULL;
    if (ncp && !res)
        goto out;
    /* judge each against its final neighbours; drop the weakest failing one until all pass */
    for (;;) {
        size_t weakest = ncp;
        for (size_t i = 0; i < ncp; i++) {
            size_t a = i ? cps[i - 1] : 0, b = i + 1 < ncp ? cps[i + 1] : n;
            judge(x, a, cps[i], b, tmp, &res[i]);
            bool pass = res[i].p <= o->p_value && big_enough(&res[i], o->min_change);
            if (pass)
                continue;
            if (weakest == ncp || res[i].p > res[weakest].p ||
                (res[i].p == res[weakest].p && fabs(res[i].after - res[i].before) <
                                                   fabs(res[weakest].after - res[weakest].before)))
                weakest = i;
        }
        if (weakest == ncp)
            break;
        memmove(&cps[weakest], &cps[weakest + 1], (ncp - weakest - 1) * sizeof(*cps));
        ncp--;
    }
    if (ncp == 0) {
        free(res);
        res = NULL;
    }
    *out = res;
    *count = ncp;
    res = NULL;
    rv = H2B_OK;
out:
    free(res);
    free(offers);
    free(cps);
    free(tmp);
    return rv;
}

/* The last change point of the window of at most H2B_HISTORY_WINDOW points ending at x[end - 1],
 * as an index into x; false when there is none (or the window is too short to test). */
static int last_cp(const double *x, size_t end, const struct h2b_history_opts *o, bool *found,
                   struct h2b_history_cp *cp)
{
    size_t start = end > H2B_HISTORY_WINDOW ? end - H2B_HISTORY_WINDOW : 0;
    struct h2b_history_cp *cps = NULL;
    size_t n = 0;
    int rv = h2b_history_detect(x + start, end - start, o, &cps, &n);
    *found = false;
    if (rv == H2B_ERR_RANGE)
        return H2B_OK;
    if (rv != H2B_OK)
        return rv;
    if (n > 0) {
        *cp = cps[n - 1];
        cp->index += start;
        *found = true;
    }
    free(cps);
    return H2B_OK;
}

int h2b_history_newest(const double *x, size_t n, const struct h2b_history_opts *o, bool *opened,
                       struct h2b_history_cp *cp)
{
    *opened = false;
    if (n < 2)
        return H2B_OK;
    bool now = false, before = false;
    struct h2b_history_cp c1, c0;
    int rv = last_cp(x, n, o, &now, &c1);
    if (rv == H2B_OK && now)
        rv = last_cp(x, n - 1, o, &before, &c0);
    if (rv != H2B_OK)
        return rv;
    if (now && (!before || c1.index >= c0.index + o->min_points)) {
        *opened = true;
        *cp = c1;
    }
    return H2B_OK;
}
