/*
 * evaluate.c - h2b_gate_evaluate: load the ceilings and the results, judge the benchmarks
 * (h2b_gate_check), then the matrix cells against the ceilings' "cells" section and the cells'
 * own SLO verdicts and capacity searches (cells.c), into one report.
 *
 * Approach: the orchestration `h2bench gate` had in apps/cmd_gate.c moved here unchanged, so the
 * report (which judged only the benchmarks) gets the same rows. Both entry points end in one
 * judge(): h2b_gate_evaluate reads the results files into a gate set (the set keeps the
 * documents, and the cells are judged on those same documents: each file is read once), and
 * h2b_gate_evaluate_docs lends the set documents the caller already read (the report's).
 * Rejected: the report calling the cells' checks itself (a second copy of the order and of the
 * error handling, the way the two had drifted apart).
 */
#include "gates/evaluate.h"

#include "core/error.h"
#include "core/results.h"
#include "gates/cells.h"

#include <regex.h>
#include <string.h>

/* Whether the filter selects any benchmark of the ceilings or of the results. */
static bool filter_selects(const struct h2b_ceilings *c, const struct h2b_gate_set *s,
                           const regex_t *re)
{
    for (size_t i = 0; i < c->count; i++) {
        if (regexec(re, c->benches[i].name, 0, NULL, 0) == 0)
            return true;
    }
    for (size_t i = 0; i < s->count; i++) {
        if (regexec(re, s->obs[i].e->name, 0, NULL, 0) == 0)
            return true;
    }
    return false;
}

/* The cells' rows into r: the ceilings' "cells" section (if any) against the matrix cells of
 * the documents s holds (read once, for the benchmarks and the cells alike), and every cell's
 * SLO verdicts and capacity searches. */
static int check_cells(const char *ceilings_path, const struct h2b_gate_set *s,
                       const struct h2b_fingerprint *fp, bool strict, struct h2b_gate_report *r,
                       struct h2b_diag *diag)
{
    struct h2b_cell_gates *g = NULL;
    int rv = h2b_cell_gates_load(ceilings_path, &g, diag);
    if (rv != H2B_OK)
        return rv == H2B_ERR_NOMEM ? rv : H2B_ERR_PARSE;
    const char *const *paths = (const char *const *)s->sources;
    if ((g && h2b_cell_gates_check(g, s->docs, paths, s->n_sources, fp, strict, r) != H2B_OK) ||
        h2b_cell_slo_check(s->docs, paths, s->n_sources, r) != H2B_OK)
        rv = H2B_ERR_NOMEM;
    h2b_cell_gates_del(g);
    return rv;
}

/* The verdict on the results in s by the ceilings in out->ceilings (read from ceilings_path):
 * the benchmarks, then the cells. */
static int judge(const char *ceilings_path, const struct h2b_gate_set *s,
                 const struct h2b_gate_options *opt, struct h2b_gate_eval *out,
                 struct h2b_diag *diag)
{
    if (opt->filter && !filter_selects(out->ceilings, s, opt->filter))
        return H2B_ERR_NOTFOUND;
    int rv = h2b_gate_check(out->ceilings, s, opt, &out->report);
    if (rv == H2B_OK)
        rv = check_cells(ceilings_path, s, &out->ceilings->fingerprint, opt->strict, out->report,
                         diag);
    return rv;
}

int h2b_gate_evaluate(const char *ceilings_path, const char *const *results, size_t n,
                      const struct h2b_gate_options *opt, h2b_diag_fn on_diag, void *arg,
                      struct h2b_gate_eval *out, struct h2b_diag *diag)
{
    memset(out, 0, sizeof(*out));
    if (n > H2B_GATE_EVAL_MAX_RESULTS)
        n = H2B_GATE_EVAL_MAX_RESULTS;
    struct h2b_gate_set *s = NULL;
    int rv = h2b_ceilings_load(ceilings_path, &out->ceilings, on_diag, arg);
    if (rv == H2B_OK)
        rv = h2b_gate_set_load(results, n, &s, diag);
    if (rv == H2B_OK)
        rv = judge(ceilings_path, s, opt, out, diag);
    h2b_gate_set_del(s);
    return rv;
}

int h2b_gate_evaluate_docs(const char *ceilings_path, const struct h2b_results_doc *const *docs,
                           const char *const *paths, size_t n, const struct h2b_gate_options *opt,
                           h2b_diag_fn on_diag, void *arg, struct h2b_gate_eval *out,
                           struct h2b_diag *diag)
{
    memset(out, 0, sizeof(*out));
    struct h2b_gate_set *s = NULL;
    int rv = h2b_ceilings_load(ceilings_path, &out->ceilings, on_diag, arg);
    if (rv == H2B_OK)
        rv = h2b_gate_set_new(&s);
    for (size_t i = 0; i < n && rv == H2B_OK; i++)
        rv = h2b_gate_set_add(s, paths[i], docs[i]);
    if (rv == H2B_OK)
        rv = judge(ceilings_path, s, opt, out, diag);
    h2b_gate_set_del(s);
    return rv;
}

void h2b_gate_eval_free(struct h2b_gate_eval *e)
{
    h2b_gate_report_del(e->report);
    h2b_ceilings_del(e->ceilings);
    e->report = NULL;
    e->ceilings = NULL;
}
