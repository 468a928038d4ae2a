/*
 * stats.h - the statistics the report computes itself: medians of repeats. (A/B intervals come
 * from the gate engine's h2b_compare, so `h2bench report` and `h2bench compare` agree.)
 *
 * Pure functions on caller arrays; thread-safe; no allocation.
 */
#ifndef H2B_STATS_H
#define H2B_STATS_H

#include <stddef.h>

/* Median of n values (n >= 1), sorting v in place. NAN when n == 0. */
double h2b_stats_median(double *v, size_t n);

#endif
