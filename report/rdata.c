/*
 * rdata.c - load results files for the report.
 *
 * The contract and every key belong to core's results model (h2b_results_doc_load decodes and
 * validates with file:line:column diagnostics). This file points the report at the model's
 * sections, runs the model's checks a renderer relies on (a cell's status and reason) and
 * decodes the histograms, so a malformed file is found before a line of the report is written.
 * The report's gate verdict and its A/B section judge this same loaded document (report.c)
 * instead of reading the file into a second model; only the History reads the runs again,
 * through the exports (gates/histset.c), which work on the JSON tree.
 *
 * Views, not copies: a cell is the model's cell (h2b_rdata_cell.e); what is kept beside it is
 * only what the tables derive and the model does not hold: the per-protocol column label (a
 * string made of three fields), the status as flags, the grouping keys as the integers the
 * tables compare exactly and print, and the decoded histogram (a structure of its own, decoded
 * once rather than per table).
 *
 * Rejected: rendering straight from the JSON tree. Every table would then repeat the type checks
 * and a malformed file would be found half-way through writing a report.
 */
#include "report/rdata.h"
#include "core/error.h"
#include "core/hist.h"
#include "core/json.h"
#include "core/results.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A micro entry's histogram is not drawn, but a bad encoding is an input error all the same. */
static int check_micro(const struct h2b_results_micro *e, const struct h2b_json_src *src,
                       const char *p, struct h2b_diag *d)
{
    struct h2b_hist *h = NULL;
    int rc = h2b_results_micro_hist(e, src, p, &h, d);
    h2b_hist_del(h);
    return rc;
}

/* Whether a cell is not the default cleartext h2 (matrix.protocol, matrix.tls). */
static bool off_default_protocol(const struct h2b_results_cell *e)
{
    return (e->protocol && strcmp(e->protocol, "h2") != 0) || e->tls == 1;
}

/* label: the results have a protocol axis, so the target's column is per protocol. */
static int load_cell(const struct h2b_results_cell *e, const struct h2b_json_src *src,
                     const char *p, bool label, struct h2b_rdata_cell *m, struct h2b_diag *d)
{
    int rc = h2b_results_cell_check(e, src, p, d);
    if (rc != H2B_OK)
        return rc;
    m->target = e->target;
    if (label) {
        snprintf(m->target_label, sizeof(m->target_label), "%s/%s%s", e->target,
                 e->protocol ? e->protocol : "h2", e->tls == 1 ? "+tls" : "");
        m->target = m->target_label;
    }
    m->skipped = h2b_results_cell_skipped(e);
    m->floor = e->target_type && strcmp(e->target_type, "floor") == 0;
    m->e = e;
    m->connections = (long)e->connections;
    m->streams_requested = (long)e->streams_requested;
    m->repeat = (long)e->repeat;
    m->failed = !h2b_results_cell_ok(e);
    return h2b_results_cell_hist(e, src, p, &m->hist, d);
}

static void results_free(struct h2b_rdata_results *r)
{
    for (size_t i = 0; i < r->n_cells; i++)
        h2b_hist_del(r->cells[i].hist);
    free(r->cells);
    h2b_results_doc_del(r->model);
    free(r->path);
    free(r);
}

void h2b_rdata_results_del(struct h2b_rdata_results *r)
{
    if (r)
        results_free(r);
}

static int convert(const struct h2b_json_src *src, struct h2b_results_doc *doc,
                   struct h2b_rdata_results *r, struct h2b_diag *d)
{
    r->tool = &doc->tool;
    r->scenario = &doc->scenario;
    r->env = &doc->env;
    size_t nm = doc->micro.n, nc = doc->matrix.n;
    r->micro = doc->micro.v;
    r->n_micro = nm;
    r->cells = calloc(nc ? nc : 1, sizeof(*r->cells));
    if (r->cells == NULL)
        return H2B_ERR_NOMEM;
    char p[64];
    int rc;
    for (size_t i = 0; i < nm; i++) {
        h2b_json_path_index(p, sizeof(p), "micro", i);
        if ((rc = check_micro(&r->micro[i], src, p, d)))
            return rc;
    }
    bool label = false;
    for (size_t i = 0; i < nc; i++)
        label = label || off_default_protocol(h2b_results_doc_cell(doc, i));
    for (size_t i = 0; i < nc; i++) {
        r->n_cells = i + 1;
        h2b_json_path_index(p, sizeof(p), "matrix", i);
        if ((rc = load_cell(h2b_results_doc_cell(doc, i), src, p, label, &r->cells[i], d)))
            return rc;
    }
    return H2B_OK;
}

int h2b_rdata_results_load(const char *path, struct h2b_rdata_results **out, struct h2b_diag *diag)
{
    struct h2b_diag d = {0};
    struct h2b_results_doc *doc = NULL;
    char *text = NULL;
    int rc = h2b_results_doc_load(path, &doc, &text, &d);
    if (rc != H2B_OK) {
        if (rc == H2B_ERR_NOMEM)
            h2b_diag_at(diag, path, 0, 0, "out of memory");
        else
            h2b_diag_pass(diag, &d, path, rc);
        /* An unreadable file is H2B_ERR_NOTFOUND so the CLI can call it an input error. */
        return rc == H2B_ERR_IO ? H2B_ERR_NOTFOUND : rc;
    }
    struct h2b_json_src src = {path, text};
    struct h2b_rdata_results *r = calloc(1, sizeof(*r));
    if (r == NULL) {
        h2b_results_doc_del(doc);
        free(text);
        return H2B_ERR_NOMEM;
    }
    r->model = doc;
    r->path = strdup(path);
    rc = r->path ? convert(&src, doc, r, &d) : H2B_ERR_NOMEM;
    free(text);
    if (rc) {
        if (rc == H2B_ERR_NOMEM)
            h2b_diag_at(diag, path, 0, 0, "out of memory");
        else
            h2b_diag_pass(diag, &d, path, rc);
        results_free(r);
        return rc;
    }
    *out = r;
    return H2B_OK;
}

const struct h2b_results_micro *h2b_rdata_micro_find(const struct h2b_rdata_results *r,
                                                     const char *name)
{
    for (size_t i = 0; i < r->n_micro; i++) {
        if (strcmp(r->micro[i].name, name) == 0)
            return &r->micro[i];
    }
    return NULL;
}
