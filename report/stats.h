/*
 * stats.h - the small statistics a report needs: medians of repeats and an A/B test.
 *
 * Pure functions on caller arrays; thread-safe; no allocation.
 */
#ifndef H2B_STATS_H
#define H2B_STATS_H

#include <stdbool.h>
#include <stddef.h>

/* Median of n values (n >= 1), sorting v in place. NAN when n == 0. */
double h2b_stats_median(double *v, size_t n);

/* Two-sided Student t quantile for confidence level 0.999 (t_{0.9995}) at df degrees of freedom
 * (df >= 1; fractional df round down, which widens the interval: conservative). */
double h2b_stats_t999(double df);

struct h2b_stats_ab {
    bool testable;    /* both sides have at least 2 samples */
    bool significant; /* the 99.9% CI of the difference excludes 0 */
    double diff;      /* mean(head) - mean(base) */
    double lo, hi;    /* 99.9% Welch confidence interval of diff (when testable) */
    double df;        /* Welch-Satterthwaite degrees of freedom (when testable) */
};

/* Welch's unequal-variance comparison of head against base at 99.9% confidence. With zero
 * spread on both sides the interval collapses to the difference itself. */
struct h2b_stats_ab h2b_stats_welch(const double *base, size_t nb, const double *head, size_t nh);

#endif
