/*
 * gate_int.h - internals shared by the gate's files: gate_obs.c (observations), gate_runner.c
 * (the micro runner), gate.c (evaluation), gate_render.c (rendering), gate_propose.c
 * (proposals) and cells.c (end-to-end gates on matrix cells). Not a public header.
 */
#ifndef H2B_GATES_GATE_INT_H
#define H2B_GATES_GATE_INT_H

#include "core/buf.h"
#include "gates/gate.h"

/* Exact metrics are compared with this absolute slack, far below one byte or one allocation per
 * op, so that 192.00000000000003 (a ratio computed in floating point) still equals 192. */
#define H2B__GATE_EXACT_SLACK 1e-6

/* Appends a zeroed row for bench (copied) and metric (-1: the whole benchmark or cell) to r.
 * Returns the row, owned by r, or NULL when out of memory. */
struct h2b_gate_row *h2b__gate_add_row(struct h2b_gate_report *r, const char *bench, int metric);

/* The value of exact metric m across the observations of a benchmark: the largest; *lowest the
 * smallest, *varies whether they disagree by more than H2B__GATE_EXACT_SLACK. */
double h2b__gate_exact_value(const struct h2b_gate_obs *const *obs, size_t n, int m, bool *varies,
                             double *lowest);

/* Counts row in r's per-status totals (passed, failed, ...): the one place a status is tallied. */
void h2b__gate_count_row(struct h2b_gate_report *r, const struct h2b_gate_row *row);

/* Runs argv (argv[0] a path) in envp (NULL: ours), its stdout to our stderr (or discarded with
 * quiet), and waits. Returns H2B_OK when it exited 0; H2B_ERR_SYS (spawn failed) or
 * H2B_ERR_UNSUPPORTED (exited non-zero, killed), diag->message saying which. */
int h2b__gate_spawn(char *const *argv, char *const *envp, bool quiet, struct h2b_diag *diag);

/* Appends "^(a|b)$" to b, the regex metacharacters of names escaped: a --filter that selects
 * exactly these benchmarks. */
void h2b__gate_filter_for(struct h2b_buf *b, const char *const *names, size_t count);

#endif
