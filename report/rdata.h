/*
 * rdata.h - results and ceilings files as the report reads them.
 *
 * Loads an h2bench.result/1 document, validates the fields the report uses and exposes them:
 * the tool, scenario, env and micro entries as views of the decoded model (r->model owns them),
 * the matrix cells as views of the model's cells with what the tables derive beside them (a
 * protocol label, the grouping keys, the decoded histogram). All live as
 * long as the owning h2b_rdata_results. (Ceilings are read by the gate engine, gates/ceilings.h.)
 * Numbers that are null or absent are NAN ("not measured"); the report prints them as such,
 * never as 0.
 */
#ifndef H2B_REPORT_RDATA_H
#define H2B_REPORT_RDATA_H

#include "core/json.h"

#include <stdbool.h>
#include <stddef.h>

struct h2b_hist;
struct h2b_results_cell;
struct h2b_results_doc;
struct h2b_results_env;
struct h2b_results_micro;
struct h2b_results_scenario;
struct h2b_results_tool;

/* A matrix cell as the report's tables group and draw it: the model's cell (a view; every metric
 * is read there) and what the tables derive from it. */
struct h2b_rdata_cell {
    const struct h2b_results_cell *e;
    const char *target;    /* the target, or target_label when the results have a protocol axis */
    char target_label[96]; /* "h2ref/h1+tls": protocols side by side, one column each */
    bool skipped;          /* "status": "skipped" (the target cannot serve it); failed too */
    bool floor;            /* "target_type": "floor": the kernel's floor, not a server */
    long connections;      /* the grouping keys, as the tables print them */
    long streams_requested;
    long repeat;
    bool failed;           /* the cell was not measured ("status": "failed", with "reason") */
    struct h2b_hist *hist; /* e's histogram decoded; NULL when it has none */
};

struct h2b_rdata_results {
    char *path;
    struct h2b_results_doc *model; /* the decoded document, owner of every string below */
    /* views of model's sections (created is model->created) */
    const struct h2b_results_tool *tool;
    const struct h2b_results_scenario *scenario;
    const struct h2b_results_env *env;
    const struct h2b_results_micro *micro; /* a view: model's micro entries (histograms checked) */
    size_t n_micro;
    struct h2b_rdata_cell *cells;
    size_t n_cells;
};

/* Reads a results file, validated by h2b_results_read's rules plus the optional fields the report
 * reads. On malformed input returns H2B_ERR_PARSE with
 * diag at file:line:column saying what was expected; H2B_ERR_NOTFOUND when the file cannot be
 * opened or read;
 * H2B_ERR_NOMEM. *out untouched on failure; the caller owns *out (h2b_rdata_results_del). */
int h2b_rdata_results_load(const char *path, struct h2b_rdata_results **out, struct h2b_diag *diag);
void h2b_rdata_results_del(struct h2b_rdata_results *r);

/* The micro entry named name, or NULL. */
const struct h2b_results_micro *h2b_rdata_micro_find(const struct h2b_rdata_results *r,
                                                     const char *name);

#endif
