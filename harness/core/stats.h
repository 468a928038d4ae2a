/*
 * stats.h - the order statistics every engine uses: median and friends; the one interval of a
 * proportion (Wilson); the mean and variance, and Student's t distribution (history's test).
 *
 * One rule for empty input: NAN ("no value"), never 0, so an empty set cannot pass for a
 * measured zero. Pure functions on caller arrays; thread-safe; no allocation.
 */
#ifndef H2B_CORE_STATS_H
#define H2B_CORE_STATS_H

#include <stddef.h>
#include <stdint.h>

/* Median of v[0..n), sorting v in place; the mean of the two middle values when n is even.
 * NAN when n == 0. */
double h2b_stats_median(double *v, size_t n);

/* Median of v[0..n) without touching v: copied into tmp[0..n) (scratch the caller owns) and
 * sorted there. NAN when n == 0. */
double h2b_stats_median_of(const double *v, size_t n, double *tmp);

/* Sorts v[0..n) ascending in place. */
void h2b_stats_sort(double *v, size_t n);

/* The q-quantile (0..1) of ascending v[0..n) by linear interpolation between order statistics;
 * NAN when n == 0. */
double h2b_stats_quantile_sorted(const double *v, size_t n, double q);

/* Smallest and largest of v[0..n); NAN when n == 0. v is not modified. */
double h2b_stats_min(const double *v, size_t n);
double h2b_stats_max(const double *v, size_t n);

/* The Wilson score interval of a proportion: k successes in n trials (k <= n), at the normal
 * quantile z (1.96 for 95 %). Writes [*lo, *hi], inside [0, 1]; both NAN when n == 0 or k > n.
 * Unlike the normal approximation it stays inside [0, 1] and is not [0, 0] for 0 of n. */
void h2b_stats_wilson(uint64_t k, uint64_t n, double z, double *lo, double *hi);

/* Mean and sample variance (n - 1; 0 for one sample) of v[0..n), n >= 1. */
void h2b_stats_mean_var(const double *v, size_t n, double *mean, double *var);

/* P(T <= t) for Student's t with df degrees of freedom (df > 0), by the regularised incomplete
 * beta function (a continued fraction): 1e-12 or better for the p-values the gates use. */
double h2b_stats_t_cdf(double t, double df);

#endif
