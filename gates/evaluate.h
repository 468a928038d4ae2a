/*
 * evaluate.h - the gate's whole verdict on results files, in one call: the ceilings' benchmarks
 * (gate.c), the ceilings' matrix cells (cells.c), and the cells' own SLO verdicts and capacity
 * searches. `h2bench gate` and the report (report/report.c) both call it, so the report cannot
 * show a verdict the gate would not give (before, the report judged only the benchmarks).
 */
#ifndef H2B_GATES_EVALUATE_H
#define H2B_GATES_EVALUATE_H

#include "core/diag.h"
#include "gates/ceilings.h"
#include "gates/gate.h"

#include <stddef.h>

/* At most this many results files in one evaluation (h2bench gate --results ...). */
#define H2B_GATE_EVAL_MAX_RESULTS 64

struct h2b_gate_eval {
    struct h2b_ceilings *ceilings; /* the loaded ceilings (the report reads their why lines) */
    struct h2b_gate_report *report;
};

/*
 * Loads ceilings_path and the n results files and judges them with opt (its filter, strictness
 * and confirmation re-runs). Every diagnostic of the ceilings file goes to on_diag; the first
 * failure of another input is in *diag. Returns H2B_OK with *out filled (free it with
 * h2b_gate_eval_free, also after a failure), H2B_ERR_NOTFOUND when opt->filter selects no
 * benchmark of the ceilings or of the results (nothing would be checked: a typo, not a pass),
 * H2B_ERR_PARSE for a cells section that does not parse, or the loader's error.
 */
int h2b_gate_evaluate(const char *ceilings_path, const char *const *results, size_t n,
                      const struct h2b_gate_options *opt, h2b_diag_fn on_diag, void *arg,
                      struct h2b_gate_eval *out, struct h2b_diag *diag);

/*
 * As h2b_gate_evaluate, on n documents the caller has read already (paths[i] names docs[i] in
 * the evidence): the same verdict, without reading the files again. The documents are borrowed
 * for the call only; the report judges the runs it renders with it.
 */
struct h2b_results_doc;
int h2b_gate_evaluate_docs(const char *ceilings_path, const struct h2b_results_doc *const *docs,
                           const char *const *paths, size_t n, const struct h2b_gate_options *opt,
                           h2b_diag_fn on_diag, void *arg, struct h2b_gate_eval *out,
                           struct h2b_diag *diag);

void h2b_gate_eval_free(struct h2b_gate_eval *e);

#endif
