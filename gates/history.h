/*
 * history.h - change points over a series of runs (`h2bench history`, `gate --history`).
 *
 * A series is one metric of one benchmark or matrix cell, measured once per run, oldest first.
 * h2b_history_detect finds the runs where its level changed: E-divisive means (binary
 * segmentation on the energy distance) with a Student's t-test as the significance check, so the
 * same input always gives the same change points. A change point is kept when its t-test p-value
 * is at most p_value and its relative change of medians at least min_change.
 */
#ifndef H2B_GATES_HISTORY_H
#define H2B_GATES_HISTORY_H

#include <stdbool.h>
#include <stddef.h>

/* Defaults, from the synthetic truth of tests/unit/test_history.c (docs/history.md): at
 * p = 0.001 (Nyrkiö's) and 3 points a side the scan's best split of 60 points of pure 2 % noise
 * passed in 2.2 % of series; p = 0.0005 with 5 points a side keeps that under 1 % and still finds
 * a 3 % step in 94 %. */
#define H2B_HISTORY_P_VALUE 0.0005
#define H2B_HISTORY_MIN_CHANGE 0.01
#define H2B_HISTORY_MIN_POINTS 5
/* The points the incremental check (store, gate) looks back over: its cost is O(WINDOW^2),
 * whatever the length of the history. */
#define H2B_HISTORY_WINDOW 128

struct h2b_history_opts {
    double p_value;    /* the t-test's largest p-value, 0 < p < 1 */
    double min_change; /* the smallest |after / before - 1| kept, >= 0 (0.01: 1 %) */
    size_t min_points; /* the fewest points a segment may have, >= 2 */
};

/* The defaults above. */
void h2b_history_opts_default(struct h2b_history_opts *o);

struct h2b_history_cp {
    size_t index;         /* the first point of the new segment */
    double before, after; /* medians of the segments either side */
    double change;        /* after / before - 1 (NAN when before is 0) */
    double p;             /* Student's t-test p-value, two-sided, of the two segments' means */
};

/* Finds the change points of x[0..n), in index order, into *out (caller frees; NULL when there
 * are none) and *count. Returns H2B_OK, H2B_ERR_RANGE when the series is too short to test (fewer
 * than 2 * min_points points; *out NULL, *count 0), H2B_ERR_INVAL (bad options or a non-finite
 * value) or H2B_ERR_NOMEM. Cost O(n^2) per change point found. */
int h2b_history_detect(const double *x, size_t n, const struct h2b_history_opts *o,
                       struct h2b_history_cp **out, size_t *count);

/* Whether the newest point x[n - 1] completes a change point that the series without it did
 * not have: the last change point of the final H2B_HISTORY_WINDOW points, unless the same
 * window one point earlier already had one within min_points of it. *cp (index into x) is set
 * when true. Returns H2B_OK (with *opened), H2B_ERR_INVAL or H2B_ERR_NOMEM; a series too short to
 * test opens nothing. Cost O(WINDOW^2) whatever n is: this is the incremental check. */
int h2b_history_newest(const double *x, size_t n, const struct h2b_history_opts *o, bool *opened,
                       struct h2b_history_cp *cp);

#endif
