/*
 * groups.h - queries over a results file for the report's renderers (groups.c): targets, cell
 * keys and matrix groups. Internal to report/.
 */
#ifndef H2B_REPORT_GROUPS_H
#define H2B_REPORT_GROUPS_H

#include "core/hist.h"
#include "report/rdata.h"

#include <stdbool.h>
#include <stddef.h>

/* One row of the matrix tables: a (connections, requested streams) pair. */
struct h2b__cellkey {
    long connections;
    long streams;
};

/* Distinct targets and (connections, streams) keys of r, allocated into *targets / *keys. */
int h2b__report_index(const struct h2b_rdata_results *r, const char ***targets, size_t *n_targets,
                      struct h2b__cellkey **keys, size_t *n_keys);

/* What h2b__report_group collects from each repeat. */
enum h2b__group_metric {
    H2B__GROUP_RPS,
    H2B__GROUP_P50,
    H2B__GROUP_P99,
    H2B__GROUP_SERVER_NS_PER_REQ, /* server CPU time per request, ns */
    H2B__GROUP_SERVER_RSS_KIB
};

/* Values of one matrix group: the repeats of (target, connections, requested streams) that did
 * not fail and measured which (enum h2b__group_metric). Returns how many were written (at most
 * max). */
size_t h2b__report_group(const struct h2b_rdata_results *r, const char *target,
                         struct h2b__cellkey k, int which, double *out, size_t max);

/* The histograms of a group's repeats merged into a new histogram (caller frees), or NULL when
 * a repeat has none (or on allocation failure). *repeats counts the group's measured repeats. */
struct h2b_hist *h2b__report_group_hist(const struct h2b_rdata_results *r, const char *target,
                                        struct h2b__cellkey k, size_t *repeats);

/* The group's latency percentile p (50, 99) in ns: from the repeats' histograms merged when
 * there are several repeats and all have one, else the median of the repeats' values. NAN when
 * nothing was measured. *merged says which it was. */
double h2b__report_group_latency(const struct h2b_rdata_results *r, const char *target,
                                 struct h2b__cellkey k, double p, bool *merged);

/* The best median req/s over the cells keys of target in r; NAN when no cell measured. */
double h2b__report_peak_rps(const struct h2b_rdata_results *r, const char *target,
                            const struct h2b__cellkey *keys, size_t n_keys);

/* The best median req/s of target over r's own cell keys (a run of a history may have measured
 * keys the head did not); NAN when no cell measured or on allocation failure. */
double h2b__report_run_peak_rps(const struct h2b_rdata_results *r, const char *target);

#endif
