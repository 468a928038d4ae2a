/*
 * stats.c - median, min and max with one empty-input rule (stats.h).
 *
 * qsort, not a selection algorithm: the arrays are repeats and forks (tens of values) and
 * epochs (at most a few thousand), where the sort is not measurable. Rejected: an insertion
 * sort per caller (there were four medians with three empty-input rules).
 */
#include "core/stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void h2b_stats_sort(double *v, size_t n)
{
    if (n > 1)
        qsort(v, n, sizeof(*v), cmp_double);
}

double h2b_stats_median(double *v, size_t n)
{
    if (n == 0)
        return NAN;
    h2b_stats_sort(v, n);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

double h2b_stats_median_of(const double *v, size_t n, double *tmp)
{
    if (n == 0)
        return NAN;
    memcpy(tmp, v, n * sizeof(*tmp));
    return h2b_stats_median(tmp, n);
}

double h2b_stats_quantile_sorted(const double *v, size_t n, double q)
{
    if (n == 0)
        return NAN;
    double pos = q * (double)(n - 1);
    size_t i = (size_t)pos;
    if (i + 1 >= n)
        return v[n - 1];
    double frac = pos - (double)i;
    return v[i] + frac * (v[i + 1] - v[i]);
}

double h2b_stats_min(const double *v, size_t n)
{
    double m = NAN;
    for (size_t i = 0; i < n; i++)
        m = i == 0 || v[i] < m ? v[i] : m;
    return m;
}

double h2b_stats_max(const double *v, size_t n)
{
    double m = NAN;
    for (size_t i = 0; i < n; i++)
        m = i == 0 || v[i] > m ? v[i] : m;
    return m;
}
