/*
 * stats.c - median, min and max with one empty-input rule, the Wilson interval, the mean and
 * variance, and Student's t distribution (stats.h).
 *
 * qsort, not a selection algorithm: the arrays are repeats and forks (tens of values) and
 * epochs (at most a few thousand), where the sort is not measurable. Rejected: an insertion
 * sort per caller (there were four medians with three empty-input rules).
 */
#include "core/stats.h"
#include "core/check.h"

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
    /* the caller sorted v (O(n) to check: asan and fuzz builds only) */
    for (size_t k = 1; H2B_CHECK_SLOW && k < n; k++)
        H2B_ASSERT(!(v[k] < v[k - 1]));
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

/* Wilson (1927): the p whose normal-approximation interval has the observed k/n at its edge.
 * Rejected: the Wald interval k/n +- z*sqrt(p(1-p)/n), which is [0, 0] for 0 false alarms in 20
 * trials (it would claim certainty from 20 runs) and leaves [0, 1] near the edges; Clopper-Pearson,
 * which needs the beta quantile and is wider than the nominal level. */
void h2b_stats_wilson(uint64_t k, uint64_t n, double z, double *lo, double *hi)
{
    if (n == 0 || k > n) {
        *lo = *hi = NAN;
        return;
    }
    double nn = (double)n, p = (double)k / nn, z2 = z * z;
    double denom = 1.0 + z2 / nn;
    double center = (p + z2 / (2.0 * nn)) / denom;
    double half = z * sqrt(p * (1.0 - p) / nn + z2 / (4.0 * nn * nn)) / denom;
    *lo = k == 0 ? 0.0 : fmax(0.0, center - half);
    *hi = k == n ? 1.0 : fmin(1.0, center + half);
}

/* ---- Student's t (history.c's change-point test) ---- */

/* Continued fraction of the incomplete beta function (Numerical-Recipes-style Lentz). */
static double beta_cf(double a, double b, double x)
{
    const double tiny = 1e-300, eps = 1e-15;
    double qab = a + b, qap = a + 1, qam = a - 1;
    double c = 1, d = 1 - qab * x / qap;
    if (fabs(d) < tiny)
        d = tiny;
    d = 1 / d;
    double h = d;
    for (int m = 1; m <= 300; m++) {
        int m2 = 2 * m;
        double aa = m * (b - m) * x / ((qam + m2) * (a + m2));
        d = 1 + aa * d;
        d = fabs(d) < tiny ? tiny : d;
        c = 1 + aa / c;
        c = fabs(c) < tiny ? tiny : c;
        d = 1 / d;
        h *= d * c;
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
        d = 1 + aa * d;
        d = fabs(d) < tiny ? tiny : d;
        c = 1 + aa / c;
        c = fabs(c) < tiny ? tiny : c;
        d = 1 / d;
        double del = d * c;
        h *= del;
        if (fabs(del - 1) < eps)
            break;
    }
    return h;
}

/* Regularised incomplete beta I_x(a, b). */
static double inc_beta(double a, double b, double x)
{
    if (x <= 0)
        return 0;
    if (x >= 1)
        return 1;
    double front = exp(lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log1p(-x));
    if (x < (a + 1) / (a + b + 2))
        return front * beta_cf(a, b, x) / a;
    return 1 - front * beta_cf(b, a, 1 - x) / b;
}

double h2b_stats_t_cdf(double t, double df)
{
    double tail = 0.5 * inc_beta(df / 2, 0.5, df / (df + t * t));
    return t >= 0 ? 1 - tail : tail;
}

void h2b_stats_mean_var(const double *v, size_t n, double *mean, double *var)
{
    double s = 0;
    for (size_t i = 0; i < n; i++)
        s += v[i];
    *mean = s / (double)n;
    double ss = 0;
    for (size_t i = 0; i < n; i++)
        ss += (v[i] - *mean) * (v[i] - *mean);
    *var = n > 1 ? ss / (double)(n - 1) : 0;
}
