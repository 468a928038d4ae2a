/*
 * stats.c - medians and Welch's t interval at 99.9%.
 *
 * Why Welch and 99.9%: the samples are per-fork or per-repeat values (3 to 10 a side), their
 * variances differ between builds, and a report compares many metrics at once, so a strict
 * level keeps false "significant" verdicts rare without a multiple-comparison correction. The t
 * quantiles come from a table (df 1..30, then 40, 60, 120, infinity) instead of an incomplete
 * beta inverse: the table is exact to the digits shown and easy to check against any textbook.
 */
#include "stats.h"

#include <math.h>
#include <stdlib.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double h2b_stats_median(double *v, size_t n)
{
    if (n == 0)
        return NAN;
    qsort(v, n, sizeof(*v), cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

/* t_{0.9995, df} for df = 1..30. */
static const double t999_table[30] = {
    636.619, 31.599, 12.924, 8.610, 6.869, 5.959, 5.408, 5.041, 4.781, 4.587,
    4.437,   4.318,  4.221,  4.140, 4.073, 4.015, 3.965, 3.922, 3.883, 3.850,
    3.819,   3.792,  3.768,  3.745, 3.725, 3.707, 3.690, 3.674, 3.659, 3.646,
};

double h2b_stats_t999(double df)
{
    if (!(df >= 1.0))
        return t999_table[0];
    if (df < 31.0)
        return t999_table[(int)df - 1];
    if (df < 40.0)
        return t999_table[29];
    if (df < 60.0)
        return 3.551;
    if (df < 120.0)
        return 3.460;
    if (df < 1e6)
        return 3.373;
    return 3.291;
}

static void mean_var(const double *v, size_t n, double *mean, double *var)
{
    double s = 0.0;
    for (size_t i = 0; i < n; i++)
        s += v[i];
    *mean = s / (double)n;
    double ss = 0.0;
    for (size_t i = 0; i < n; i++)
        ss += (v[i] - *mean) * (v[i] - *mean);
    *var = n > 1 ? ss / (double)(n - 1) : 0.0;
}

struct h2b_stats_ab h2b_stats_welch(const double *base, size_t nb, const double *head, size_t nh)
{
    struct h2b_stats_ab r = {0};
    if (nb == 0 || nh == 0)
        return r;
    double mb, vb, mh, vh;
    mean_var(base, nb, &mb, &vb);
    mean_var(head, nh, &mh, &vh);
    r.diff = mh - mb;
    if (nb < 2 || nh < 2)
        return r;
    r.testable = true;
    double sb = vb / (double)nb, sh = vh / (double)nh;
    double se = sqrt(sb + sh);
    if (se == 0.0) {
        r.df = (double)(nb + nh - 2);
        r.lo = r.hi = r.diff;
        r.significant = r.diff != 0.0;
        return r;
    }
    double den = sb * sb / (double)(nb - 1) + sh * sh / (double)(nh - 1);
    r.df = den > 0.0 ? (sb + sh) * (sb + sh) / den : (double)(nb + nh - 2);
    double half = h2b_stats_t999(r.df) * se;
    r.lo = r.diff - half;
    r.hi = r.diff + half;
    r.significant = r.lo > 0.0 || r.hi < 0.0;
    return r;
}
