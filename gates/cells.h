/*
 * cells.h - end-to-end gates on matrix cells: the "cells" section of a ceilings file.
 *
 *   "cells": {
 *     "h2ref:1x1": {                                   TARGET:CONNECTIONSxSTREAMS (--filter)
 *       "allocs_per_request": {"max": 0, "why": "..."},            exact budgets (cell.budgets)
 *       "bytes_per_request": ..., "reads_per_request": ..., "writes_per_request": ...,
 *       "writes_per_read": ..., "rss_per_connection_kib": ...,
 *       "instructions_per_request": {"max": N, "tolerance": 0.005, "why": "..."},
 *       "p99_ms": {"max": 5, "rate": 2000, "why": "..."},          open loop at that rate
 *       "min_ratio": {"reference": "nghttpd", "min": 0.95, "why": "..."}   req/s, same run
 *     }}
 *
 * Verdicts, as gate rows: a value above its ceiling (instructions: above max x (1 + tolerance);
 * min_ratio: below min) FAILs; a cell named here but absent from the results is MISSING (a
 * fail); a ceiling on a metric that is null, a failed cell, or a p99 measured at another rate
 * is INVALID (exit 3), with the reason from the results; a p99_ms ceiling on results from another
 * machine (the ceilings' fingerprint) is "not applicable", exit 3 only with --strict. The ratio is
 * req/s of the cell over the reference target's cell at the same point, both the median over
 * repeats of one results file: measured side by side, it holds across machines where an absolute
 * req/s never does.
 */
#ifndef H2B_GATES_CELLS_H
#define H2B_GATES_CELLS_H

#include "gates/gate.h"
#include "core/json.h"
#include "core/results.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The exact budgets first, in the order and with the keys of the core's budget table
 * (results.h), then the ceilings' own p99 and ratio floors. */
enum h2b_cell_metric {
    H2B_CELL_ALLOCS = H2B_BUDGET_ALLOCS,
    H2B_CELL_BYTES = H2B_BUDGET_BYTES,
    H2B_CELL_READS = H2B_BUDGET_READS,
    H2B_CELL_WRITES = H2B_BUDGET_WRITES,
    H2B_CELL_WRITES_PER_READ = H2B_BUDGET_WRITES_PER_READ,
    H2B_CELL_INSTRUCTIONS = H2B_BUDGET_INSTRUCTIONS,
    H2B_CELL_RSS_PER_CONN = H2B_BUDGET_RSS_PER_CONN,
    H2B_CELL_P99_MS = H2B_BUDGET_NMETRICS,
    H2B_CELL_MIN_RATIO,
    H2B_CELL_NMETRICS
};

struct h2b_cell_ceiling {
    bool set;
    double max;       /* min for min_ratio */
    double tolerance; /* instructions_per_request: allowed fraction above max (default 0.005) */
    double rate;      /* p99_ms: the open-loop rate (requests/s) the cell must have run at */
    char *reference;  /* min_ratio: the reference target's name */
    char *why;
};

struct h2b_cell_gate {
    char *key; /* "h2ref:1x1" as written */
    char *target;
    uint32_t connections, streams;
    struct h2b_cell_ceiling m[H2B_CELL_NMETRICS];
};

struct h2b_cell_gates {
    size_t count;
    struct h2b_cell_gate *cells;
};

/* The ceilings' key of m: a budget's results key (h2b_budget_metrics), "p99_ms" or "min_ratio". */
const char *h2b_cell_metric_key(enum h2b_cell_metric m);

/* Parses the "cells" object of a ceilings document (found at path "cells" in src). On a bad
 * section diag names file:line:column, the field path and what was expected. Returns H2B_OK,
 * H2B_ERR_PARSE or H2B_ERR_NOMEM; *out untouched on failure. */
int h2b_cell_gates_from_json(const json_t *cells, const struct h2b_json_src *src,
                             struct h2b_cell_gates **out, struct h2b_diag *diag);

void h2b_cell_gates_del(struct h2b_cell_gates *g);

/* The "cells" section of the ceilings file at path: *out NULL (and H2B_OK) when the file has
 * none. Returns H2B_OK, H2B_ERR_PARSE (diag at file:line:column), H2B_ERR_IO, H2B_ERR_NOMEM;
 * *out untouched on failure. */
int h2b_cell_gates_load(const char *path, struct h2b_cell_gates **out, struct h2b_diag *diag);

/* Checks every cell gate against the results documents (paths name them in the evidence) and
 * appends one row per gate to r, updating its counts and exit code. fp is where the ceilings
 * were set (NULL: anywhere): a p99_ms ceiling on results measured on another machine is
 * H2B_GATE_NA, "not applicable (set on <cpu model>)", failing (exit 3) only with strict, as the
 * micro p99 gate does. Returns H2B_OK or H2B_ERR_NOMEM. */
int h2b_cell_gates_check(const struct h2b_cell_gates *g, const struct h2b_results_doc *const *docs,
                         const char *const *paths, size_t ndocs, const struct h2b_fingerprint *fp,
                         bool strict, struct h2b_gate_report *r);

/* The objectives of every matrix cell that has them (matrix.slo: the cell's "slo" verdicts) and
 * the search of every find_max cell, as rows of r (one per cell and objective, one per search),
 * updating its counts and exit code. A breach in the run or in any window FAILs (exit 1),
 * naming the cell, the objective, the figure, the limit and the first breaching window; an
 * objective not evaluable over the run is INVALID (exit 3: never a pass); windows not evaluable
 * beside a run that is are named in the evidence. A search that found no passing step FAILs.
 * Returns H2B_OK or H2B_ERR_NOMEM. */
int h2b_cell_slo_check(const struct h2b_results_doc *const *docs, const char *const *paths,
                       size_t ndocs, struct h2b_gate_report *r);

#endif
