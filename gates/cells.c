/*
 * cells.c - the "cells" section of a ceilings file: exact budget ceilings, p99 at a fixed
 * open-loop rate and req/s floors against a reference target, checked on matrix cells.
 *
 * Approach: the section is parsed here with the core JSON helpers (file:line:column on every
 * problem) and checked against results documents read through the core results model (cell
 * budgets via h2b_model_number, so no results key is spelt here except the ceilings' own). The
 * verdicts become rows of the micro gate's report, so one table, one markdown and one JUnit
 * file carry both kinds of gate and one exit code rules them.
 *
 * Several cells can match one key (repeats, several results files): exact budgets must hold
 * for the largest value seen; p99 is the best (lowest) of the repeats, the way micro p99 is the
 * best fork, since a slow repeat on a shared machine measured the machine; the ratio compares
 * medians. Rejected: a separate gate command for cells (two exit codes to combine in CI).
 *
 * The cells' own objectives (matrix.slo) need no ceilings: the client judged them and the cell
 * carries the verdicts, so h2b_cell_slo_check only reads them back as rows (a breach anywhere
 * fails, not evaluable over the run is invalid), in the objective's unit read with load's SLO
 * parser. Rejected: judging the objectives again from the cell's histogram (the windows' are
 * not in the results, and two judges could disagree).
 */
#include "gates/cells.h"
#include "gates/gate_int.h"

#include "core/buf.h"
#include "core/error.h"
#include "core/fmt.h"
#include "core/model.h"
#include "core/stats.h"
#include "load/slo.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PATH_LEN 256
#define DEFAULT_TOLERANCE 0.005

const char *h2b_cell_metric_key(enum h2b_cell_metric m)
{
    if ((unsigned)m < H2B_BUDGET_NMETRICS)
        return h2b_budget_metrics[m].key;
    return m == H2B_CELL_P99_MS ? "p99_ms" : m == H2B_CELL_MIN_RATIO ? "min_ratio" : "?";
}

void h2b_cell_gates_del(struct h2b_cell_gates *g)
{
    if (!g)
        return;
    for (size_t i = 0; i < g->count; i++) {
        free(g->cells[i].key);
        free(g->cells[i].target);
        for (int m = 0; m < H2B_CELL_NMETRICS; m++) {
            free(g->cells[i].m[m].why);
            free(g->cells[i].m[m].reference);
        }
    }
    free(g->cells);
    free(g);
}

/* "TARGET:CxS" -> its parts; false when it is not that shape. */
static bool split_key(const char *key, char *target, size_t tsize, uint32_t *conns,
                      uint32_t *streams)
{
    const char *colon = strrchr(key, ':');
    if (!colon || colon == key || (size_t)(colon - key) >= tsize)
        return false;
    char *end;
    unsigned long c = strtoul(colon + 1, &end, 10);
    if (end == colon + 1 || *end != 'x' || c == 0 || c > UINT32_MAX)
        return false;
    const char *s_at = end + 1;
    unsigned long s = strtoul(s_at, &end, 10);
    if (end == s_at || *end || s == 0 || s > UINT32_MAX || colon[1] == '+' || s_at[0] == '+' ||
        colon[1] == '-' || s_at[0] == '-' || colon[1] == ' ' || s_at[0] == ' ')
        return false;
    memcpy(target, key, (size_t)(colon - key));
    target[colon - key] = '\0';
    *conns = (uint32_t)c;
    *streams = (uint32_t)s;
    return true;
}

static int fail_at(struct h2b_diag *d, const struct h2b_json_src *src, const char *path,
                   const char *msg)
{
    h2b_diag_set(d, src ? src->file : NULL, src ? src->text : NULL, path, "%s", msg);
    return H2B_ERR_PARSE;
}

static int parse_metric(const json_t *v, const char *path, enum h2b_cell_metric m,
                        const struct h2b_json_src *src, struct h2b_cell_ceiling *c,
                        struct h2b_diag *d)
{
    static const char *const exact_keys[] = {"max", "why", NULL};
    static const char *const instr_keys[] = {"max", "tolerance", "why", NULL};
    static const char *const p99_keys[] = {"max", "rate", "why", NULL};
    static const char *const ratio_keys[] = {"reference", "min", "why", NULL};
    const char *const *allowed = m == H2B_CELL_INSTRUCTIONS ? instr_keys
                                 : m == H2B_CELL_P99_MS     ? p99_keys
                                 : m == H2B_CELL_MIN_RATIO  ? ratio_keys
                                                            : exact_keys;
    const char *why = NULL, *ref = NULL;
    int rc;
    if ((rc = h2b_json_check_object(src, v, path, H2B_JSON_REQUIRED, &(json_t *){NULL}, d)) ||
        (rc = h2b_json_check_keys(src, v, path, allowed, d)))
        return rc < 0 ? rc : H2B_ERR_PARSE;
    if (m == H2B_CELL_MIN_RATIO) {
        if ((rc = h2b_json_get_string(src, v, path, "reference", H2B_JSON_REQUIRED, &ref, d)) ||
            (rc = h2b_json_get_double(src, v, path, "min", H2B_JSON_REQUIRED, 1e-9, 1e9, &c->max,
                                      d)))
            return H2B_ERR_PARSE;
    } else if ((rc = h2b_json_get_double(src, v, path, "max", H2B_JSON_REQUIRED, 0, 1e18, &c->max,
                                         d))) {
        return H2B_ERR_PARSE;
    }
    c->tolerance = m == H2B_CELL_INSTRUCTIONS ? DEFAULT_TOLERANCE : 0;
    if (m == H2B_CELL_INSTRUCTIONS &&
        h2b_json_get_double(src, v, path, "tolerance", H2B_JSON_OPTIONAL, 0, 1, &c->tolerance, d) <
            0)
        return H2B_ERR_PARSE;
    if (m == H2B_CELL_P99_MS &&
        h2b_json_get_double(src, v, path, "rate", H2B_JSON_REQUIRED, 1e-9, 1e9, &c->rate, d))
        return H2B_ERR_PARSE;
    if (h2b_json_get_string(src, v, path, "why", H2B_JSON_REQUIRED, &why, d))
        return H2B_ERR_PARSE;
    c->why = strdup(why);
    c->reference = ref ? strdup(ref) : NULL;
    if (!c->why || (ref && !c->reference))
        return H2B_ERR_NOMEM;
    c->set = true;
    return H2B_OK;
}

int h2b_cell_gates_from_json(const json_t *cells, const struct h2b_json_src *src,
                             struct h2b_cell_gates **out, struct h2b_diag *d)
{
    char path[PATH_LEN], mpath[PATH_LEN];
    int rc;
    if ((rc = h2b_json_check_object(src, cells, "cells", H2B_JSON_REQUIRED, &(json_t *){NULL}, d)))
        return rc < 0 ? rc : H2B_ERR_PARSE;
    struct h2b_cell_gates *g = calloc(1, sizeof(*g));
    size_t n = json_object_size(cells);
    if (!g || !(g->cells = calloc(n ? n : 1, sizeof(*g->cells)))) {
        free(g);
        return H2B_ERR_NOMEM;
    }
    const char *key;
    json_t *v;
    rc = H2B_OK;
    json_object_foreach((json_t *)cells, key, v)
    {
        struct h2b_cell_gate *e = &g->cells[g->count++];
        char target[128];
        h2b_json_path_key(path, sizeof(path), "cells", key);
        if (!split_key(key, target, sizeof(target), &e->connections, &e->streams)) {
            rc = fail_at(d, src, path,
                         "expected a cell key TARGET:CONNECTIONSxSTREAMS (the --filter syntax), "
                         "e.g. \"h2ref:1x1\"");
            goto out;
        }
        if (!(e->key = strdup(key)) || !(e->target = strdup(target))) {
            rc = H2B_ERR_NOMEM;
            goto out;
        }
        if ((rc = h2b_json_check_object(src, v, path, H2B_JSON_REQUIRED, &(json_t *){NULL}, d))) {
            rc = rc < 0 ? rc : H2B_ERR_PARSE;
            goto out;
        }
        if (json_object_size(v) == 0) {
            rc = fail_at(d, src, path, "expected at least one ceiling for this cell");
            goto out;
        }
        const char *mk;
        json_t *mv;
        json_object_foreach(v, mk, mv)
        {
            int m = -1;
            for (int k = 0; k < H2B_CELL_NMETRICS && m < 0; k++)
                m = strcmp(h2b_cell_metric_key((enum h2b_cell_metric)k), mk) == 0 ? k : -1;
            h2b_json_path_key(mpath, sizeof(mpath), path, mk);
            if (m < 0) {
                char known[400];
                size_t at = 0;
                for (int k = 0; k < H2B_CELL_NMETRICS && at < sizeof(known); k++)
                    at += (size_t)snprintf(known + at, sizeof(known) - at, "%s%s", k ? ", " : "",
                                           h2b_cell_metric_key((enum h2b_cell_metric)k));
                h2b_diag_set(d, src ? src->file : NULL, src ? src->text : NULL, mpath,
                             "unknown ceiling (known: %s)", known);
                rc = H2B_ERR_PARSE;
                goto out;
            }
            if ((rc = parse_metric(mv, mpath, (enum h2b_cell_metric)m, src, &e->m[m], d)))
                goto out;
            if (m == H2B_CELL_MIN_RATIO && strcmp(e->m[m].reference, e->target) == 0) {
                char rpath[PATH_LEN];
                h2b_json_path_key(rpath, sizeof(rpath), mpath, "reference");
                rc = fail_at(d, src, rpath, "a target cannot be its own reference");
                goto out;
            }
        }
    }
out:
    if (rc) {
        h2b_cell_gates_del(g);
        return rc;
    }
    *out = g;
    return H2B_OK;
}

/* ---- checking ---- */

struct match {
    const struct h2b_results_cell *cell;
    const char *path;
    size_t doc; /* index into docs */
};

static size_t find_cells(const struct h2b_results_doc *const *docs, const char *const *paths,
                         size_t ndocs, const char *target, uint32_t conns, uint32_t streams,
                         struct match *out, size_t max, size_t only_doc)
{
    size_t n = 0;
    for (size_t k = 0; k < ndocs; k++) {
        if (only_doc != (size_t)-1 && k != only_doc)
            continue;
        for (size_t i = 0; i < docs[k]->matrix.n && n < max; i++) {
            const struct h2b_results_cell *c = h2b_results_doc_cell(docs[k], i);
            if (c->target && strcmp(c->target, target) == 0 && c->connections == conns &&
                c->streams_requested == streams) {
                out[n].cell = c;
                out[n].path = paths[k];
                out[n].doc = k;
                n++;
            }
        }
    }
    return n;
}

/* The reason a budget is null: its "metric: reason" part of the budgets' note. */
static void null_reason(const struct h2b_results_cell *c, const char *key, char *buf, size_t size)
{
    char why[360];
    if (!c->budgets.base.present)
        snprintf(buf, size, "the cell has no budgets (add a \"budgets\" block to the scenario)");
    else if (h2b_model_note_reason(c->budgets.note, key, why, sizeof(why)))
        snprintf(buf, size, "null: %s", why);
    else
        snprintf(buf, size, "null (no reason recorded)");
}

/* Median req/s of the ok cells in ms[0..n); NAN when none. */
static double median_rps(const struct match *ms, size_t n)
{
    double v[256];
    size_t k = 0;
    for (size_t i = 0; i < n && k < 256; i++) {
        const struct h2b_results_cell *c = ms[i].cell;
        if (h2b_results_cell_ok(c) && !isnan(c->req_per_s))
            v[k++] = c->req_per_s;
    }
    return h2b_stats_median(v, k);
}

/* An absolute p99 is a property of the machine it was measured on: judged only when every
 * results file the cells come from was measured where the ceilings were set (the micro p99
 * rule, h2b_gate_machine_applies). false: na holds the evidence. */
static bool p99_applies(const struct h2b_fingerprint *want, const struct match *ms, size_t n,
                        const struct h2b_results_doc *const *docs, char *na, size_t size)
{
    for (size_t i = 0; i < n; i++) {
        struct h2b_fingerprint have; /* a view of the document's env: nothing to free */
        h2b_fingerprint_view(&docs[ms[i].doc]->env, &have);
        if (!h2b_gate_machine_applies(want, &have, na, size))
            return false;
    }
    return true;
}

static int check_metric(const struct h2b_cell_gate *e, enum h2b_cell_metric m,
                        const struct match *ms, size_t n, const struct h2b_results_doc *const *docs,
                        const char *const *paths, size_t ndocs, const struct h2b_fingerprint *fp,
                        bool strict, struct h2b_gate_row *row, struct h2b_buf *ev)
{
    const struct h2b_cell_ceiling *c = &e->m[m];
    row->has_ceiling = true;
    row->ceiling = c->max;
    for (size_t i = 0; i < n; i++) {
        /* A server that fell back to another I/O backend than it was asked for (io_uring
         * refused) measured another program: its ceilings say nothing of it, either way. */
        const struct h2b_results_cell *cell = ms[i].cell;
        if (cell->server_io_fallback) {
            row->status = H2B_GATE_NA;
            h2b_buf_printf(ev, "not applicable (the server ran on %.20s in %.200s: %.200s)%s",
                           cell->server_io ? cell->server_io : "another I/O backend", ms[i].path,
                           cell->server_io_fallback, strict ? " (--strict: invalid)" : "");
            return H2B_OK;
        }
    }
    for (size_t i = 0; i < n; i++) {
        const struct h2b_results_cell *cell = ms[i].cell;
        if (!h2b_results_cell_ok(cell)) {
            row->status = H2B_GATE_INVALID;
            h2b_buf_printf(ev, "the cell failed in %s: %s", ms[i].path,
                           cell->reason ? cell->reason : "(no reason)");
            return H2B_OK;
        }
    }
    if (m == H2B_CELL_MIN_RATIO) {
        /* Per results file: the reference measured in the same run. The worst file counts. */
        double worst = INFINITY;
        for (size_t k = 0; k < ndocs; k++) {
            struct match mine[256], ref[256];
            size_t nm =
                find_cells(docs, paths, ndocs, e->target, e->connections, e->streams, mine, 256, k);
            size_t nr = find_cells(docs, paths, ndocs, c->reference, e->connections, e->streams,
                                   ref, 256, k);
            if (nm == 0)
                continue;
            double a = median_rps(mine, nm), b = median_rps(ref, nr);
            if (nr == 0 || isnan(b) || b <= 0) {
                row->status = nr == 0 ? H2B_GATE_MISSING : H2B_GATE_INVALID;
                h2b_buf_printf(ev, "reference %s:%ux%u %s in %s", c->reference, e->connections,
                               e->streams, nr == 0 ? "not in the results" : "has no req/s",
                               paths[k]);
                return H2B_OK;
            }
            worst = a / b < worst ? a / b : worst;
        }
        row->has_current = true;
        row->current = worst;
        row->status = worst >= c->max ? H2B_GATE_PASS : H2B_GATE_FAIL;
        h2b_buf_printf(ev, "req/s %s / %s = %.4g, floor %.4g (%s)", e->target, c->reference, worst,
                       c->max, c->why);
        return H2B_OK;
    }
    if (m == H2B_CELL_P99_MS) {
        char na[400];
        if (fp && !p99_applies(fp, ms, n, docs, na, sizeof(na))) {
            row->status = H2B_GATE_NA;
            h2b_buf_printf(ev, "%s%s", na, strict ? " (--strict: invalid)" : "");
            return H2B_OK;
        }
        double best = INFINITY;
        for (size_t i = 0; i < n; i++) {
            const struct h2b_results_cell *cell = ms[i].cell;
            if (isnan(cell->rate) || fabs(cell->rate - c->rate) > 1e-9 * c->rate) {
                row->status = H2B_GATE_INVALID;
                if (isnan(cell->rate))
                    h2b_buf_printf(ev,
                                   "the cell ran closed-loop; the p99 ceiling is for an open "
                                   "loop at %.15g req/s (set matrix.rate)",
                                   c->rate);
                else
                    h2b_buf_printf(ev, "the cell ran at %.15g req/s, the ceiling is for %.15g",
                                   cell->rate, c->rate);
                return H2B_OK;
            }
            if (isnan(cell->latency_ns.p99)) {
                row->status = H2B_GATE_INVALID;
                h2b_buf_printf(ev, "the cell has no p99 (%s)", ms[i].path);
                return H2B_OK;
            }
            best = cell->latency_ns.p99 / 1e6 < best ? cell->latency_ns.p99 / 1e6 : best;
        }
        row->has_current = true;
        row->current = best;
        row->status = best <= c->max ? H2B_GATE_PASS : H2B_GATE_FAIL;
        h2b_buf_printf(ev,
                       "p99 %.4g ms at %.15g req/s open loop, best of %zu, ceiling %.4g ms (%s)",
                       best, c->rate, n, c->max, c->why);
        return H2B_OK;
    }
    double worst = -INFINITY;
    for (size_t i = 0; i < n; i++) {
        double v = h2b_results_budget_get(&ms[i].cell->budgets, (enum h2b_budget_metric)m);
        if (isnan(v)) {
            char why[400];
            null_reason(ms[i].cell, h2b_cell_metric_key(m), why, sizeof(why));
            row->status = H2B_GATE_INVALID;
            h2b_buf_printf(ev, "%s is unmeasured in %s: %s", h2b_cell_metric_key(m), ms[i].path,
                           why);
            return H2B_OK;
        }
        worst = v > worst ? v : worst;
    }
    double limit = c->max * (1 + c->tolerance);
    /* Budgets are ratios of exact counts; allow only floating-point rounding. */
    double slack = 1e-9 * (fabs(limit) > 1 ? fabs(limit) : 1);
    row->has_current = true;
    row->current = worst;
    row->status = worst <= limit + slack ? H2B_GATE_PASS : H2B_GATE_FAIL;
    if (m == H2B_CELL_INSTRUCTIONS)
        h2b_buf_printf(ev, "%s %.10g, ceiling %.10g + %.2g %% (%s)", h2b_cell_metric_key(m), worst,
                       c->max, c->tolerance * 100, c->why);
    else
        h2b_buf_printf(ev, "%s %.10g, ceiling %.10g (%s)", h2b_cell_metric_key(m), worst, c->max,
                       c->why);
    return H2B_OK;
}

int h2b_cell_gates_check(const struct h2b_cell_gates *g, const struct h2b_results_doc *const *docs,
                         const char *const *paths, size_t ndocs, const struct h2b_fingerprint *fp,
                         bool strict, struct h2b_gate_report *r)
{
    struct match ms[256];
    for (size_t i = 0; i < g->count; i++) {
        const struct h2b_cell_gate *e = &g->cells[i];
        size_t n = find_cells(docs, paths, ndocs, e->target, e->connections, e->streams, ms, 256,
                              (size_t)-1);
        for (int m = 0; m < H2B_CELL_NMETRICS; m++) {
            if (!e->m[m].set)
                continue;
            char bench[300];
            struct h2b_gate_row *row;
            snprintf(bench, sizeof(bench), "%s %s", e->key, h2b_cell_metric_key(m));
            int rc;
            if (!(row = h2b__gate_add_row(r, bench, -1)))
                return H2B_ERR_NOMEM;
            struct h2b_buf ev = {0};
            if (n == 0) {
                row->status = H2B_GATE_MISSING;
                row->has_ceiling = true;
                row->ceiling = e->m[m].max;
                h2b_buf_printf(&ev, "no cell %s:%ux%u in the results", e->target, e->connections,
                               e->streams);
            } else {
                check_metric(e, (enum h2b_cell_metric)m, ms, n, docs, paths, ndocs, fp, strict, row,
                             &ev);
            }
            row->failing = row->status == H2B_GATE_NA ? strict : row->status != H2B_GATE_PASS;
            if ((rc = h2b_buf_finish(&ev, &row->evidence)))
                return rc;
            h2b__gate_count_row(r, row);
        }
    }
    if (r->invalid || (strict && r->not_applicable))
        r->exit_code = 3;
    else if (r->exit_code == 0 && (r->failed || r->missing))
        r->exit_code = 1;
    return H2B_OK;
}

int h2b_cell_gates_load(const char *path, struct h2b_cell_gates **out, struct h2b_diag *diag)
{
    json_t *doc = NULL;
    char *text = NULL;
    int rv = h2b_json_load(path, &doc, &text, diag);
    if (rv != H2B_OK)
        return rv;
    const json_t *cells = json_object_get(doc, "cells");
    struct h2b_json_src src = {path, text};
    struct h2b_cell_gates *g = NULL;
    if (cells)
        rv = h2b_cell_gates_from_json(cells, &src, &g, diag);
    if (rv == H2B_OK)
        *out = g;
    json_decref(doc);
    free(text);
    return rv;
}

/* ---- SLO verdicts and capacity searches (matrix.slo, matrix.find_max) ---- */

/* A cell as the gate names it: TARGET:CONNSxSTREAMS (the --filter syntax), then the protocol
 * when it is not cleartext h2 and the repeat when it is not the first. */
static void cell_name(const struct h2b_results_cell *c, char *buf, size_t size)
{
    bool h2 = !c->protocol || strcmp(c->protocol, "h2") == 0;
    bool tls = c->tls == 1;
    char proto[48] = "", rep[32] = "";
    if (!h2 || tls)
        snprintf(proto, sizeof(proto), " %s%s", c->protocol ? c->protocol : "h2",
                 tls ? "+tls" : "");
    if (c->repeat > 0)
        snprintf(rep, sizeof(rep), " repeat %.0f", c->repeat);
    snprintf(buf, size, "%s:%.0fx%.0f%s%s", c->target ? c->target : "?", c->connections,
             c->streams_requested, proto, rep);
}

/* A verdict's figure in its objective's unit: ns for latency, a ratio for errors, req/s. */
static void slo_value(const char *objective, double v, char *buf, size_t size)
{
    struct h2b_slo s;
    struct h2b_diag d;
    memset(&s, 0, sizeof(s));
    int rc = objective ? h2b_slo_parse(&s, objective, &d) : H2B_ERR_PARSE;
    enum h2b_slo_metric m = rc == H2B_OK && s.n == 1 ? s.clause[0].metric : H2B_SLO_RPS;
    h2b_slo_free(&s);
    if (isnan(v))
        snprintf(buf, size, "-");
    else if (rc != H2B_OK || s.n != 1)
        snprintf(buf, size, "%.6g", v);
    else if (m == H2B_SLO_ERRORS)
        snprintf(buf, size, "%.4g %%", v * 100);
    else if (m == H2B_SLO_RPS)
        snprintf(buf, size, "%.1f req/s", v);
    else
        h2b_fmt_ns(v, buf, size);
}

static bool is(const char *s, const char *word)
{
    return s && strcmp(s, word) == 0;
}

/* The latency of a search step, for the evidence. */
static void step_text(const struct h2b_results_search_step *st, char *buf, size_t size)
{
    char p50[32], p99[32];
    if (!st->latency_ns.base.present || isnan(st->latency_ns.p99)) {
        snprintf(buf, size, "%.1f req/s (no latency)", st->rate_per_s);
        return;
    }
    h2b_fmt_ns(st->latency_ns.p50, p50, sizeof(p50));
    h2b_fmt_ns(st->latency_ns.p99, p99, sizeof(p99));
    snprintf(buf, size, "%.1f req/s (p50 %s, p99 %s)", st->rate_per_s, p50, p99);
}

static int search_row(const struct h2b_results_cell *c, const char *name, const char *path,
                      struct h2b_gate_report *r)
{
    const struct h2b_results_search *s = &c->search;
    char bench[300], pass[96], fail[96];
    snprintf(bench, sizeof(bench), "%s capacity", name);
    struct h2b_gate_row *row = h2b__gate_add_row(r, bench, -1);
    if (!row)
        return H2B_ERR_NOMEM;
    struct h2b_buf ev = {0};
    step_text(&s->last_pass, pass, sizeof(pass));
    step_text(&s->first_fail, fail, sizeof(fail));
    if (isnan(s->capacity_per_s)) {
        row->status = H2B_GATE_FAIL;
        h2b_buf_printf(&ev, "no step holds '%s': the lowest, %s, fails (%s)", s->slo ? s->slo : "?",
                       s->first_fail.base.present ? fail : "?", path);
    } else {
        row->status = H2B_GATE_PASS;
        row->has_current = true;
        row->current = s->capacity_per_s;
        h2b_buf_printf(&ev, "capacity %.1f req/s at '%s': last pass %s, first fail %s (%s)",
                       s->capacity_per_s, s->slo ? s->slo : "?", pass,
                       s->first_fail.base.present ? fail : "none up to the limit", path);
    }
    row->failing = row->status != H2B_GATE_PASS;
    int rc = h2b_buf_finish(&ev, &row->evidence);
    h2b__gate_count_row(r, row);
    return rc;
}

#define MAX_OBJECTIVES 64 /* distinct objectives judged per cell (load allows 32) */

/* One row for objective obj of cell c: its run verdict, and its windows. */
static int objective_row(const struct h2b_results_cell *c, const char *name, const char *obj,
                         const char *path, struct h2b_gate_report *r)
{
    const struct h2b_results_slo *run = NULL, *first_bad = NULL, *first_ne = NULL;
    size_t windows = 0, bad = 0, ne = 0, last = SIZE_MAX;
    for (size_t i = 0; i < c->slo.n; i++) {
        const struct h2b_results_slo *v = h2b_model_array_at(&h2b_results_slo_model, &c->slo, i);
        if (is(v->objective, obj))
            last = i;
    }
    for (size_t i = 0; i < c->slo.n; i++) {
        const struct h2b_results_slo *v = h2b_model_array_at(&h2b_results_slo_model, &c->slo, i);
        if (!is(v->objective, obj))
            continue;
        /* verdicts written before "scope" existed: the run's is the objective's last one */
        if (v->scope ? is(v->scope, "run") : i == last) {
            run = v;
            continue;
        }
        windows++;
        if (is(v->verdict, "fail") && !bad++)
            first_bad = v;
        else if (!is(v->verdict, "pass") && !is(v->verdict, "fail") && !ne++)
            first_ne = v;
    }
    char bench[300], val[48], lim[48], wval[48];
    snprintf(bench, sizeof(bench), "%s slo %s", name, obj);
    struct h2b_gate_row *row = h2b__gate_add_row(r, bench, -1);
    if (!row)
        return H2B_ERR_NOMEM;
    struct h2b_buf ev = {0};
    bool run_fail = run && is(run->verdict, "fail");
    bool run_pass = run && is(run->verdict, "pass");
    if (run && !isnan(run->value)) {
        row->has_current = true;
        row->current = run->value;
    }
    if (run && !isnan(run->limit)) {
        row->has_ceiling = true;
        row->ceiling = run->limit;
    }
    slo_value(obj, run ? run->value : NAN, val, sizeof(val));
    slo_value(obj, run ? run->limit : NAN, lim, sizeof(lim));
    if (!run)
        h2b_buf_printf(&ev, "%s: no verdict over the run", obj);
    else if (run_pass || run_fail)
        h2b_buf_printf(&ev, "%s over the run %.1f-%.1fs: %s, limit %s: %s", obj, run->start_s,
                       run->end_s, val, lim, run_fail ? "breached" : "holds");
    else
        h2b_buf_printf(&ev, "%s over the run %.1f-%.1fs: not evaluable: %s", obj, run->start_s,
                       run->end_s, run->reason ? run->reason : "no reason recorded");
    if (first_bad) {
        slo_value(obj, first_bad->value, wval, sizeof(wval));
        h2b_buf_printf(&ev, "; %zu of %zu windows breached, the first %.1f-%.1fs: %s", bad, windows,
                       first_bad->start_s, first_bad->end_s, wval);
    }
    if (first_ne)
        h2b_buf_printf(&ev, "; %zu of %zu windows not evaluable (the first %.1f-%.1fs: %s)", ne,
                       windows, first_ne->start_s, first_ne->end_s,
                       first_ne->reason ? first_ne->reason : "no reason recorded");
    h2b_buf_printf(&ev, " (%s)", path);
    /* A breach anywhere fails; a run that cannot be judged is invalid (exit 3), never a pass;
     * a window that cannot be judged beside a run that can is reported, as load reports it. */
    row->status = run_fail || bad ? H2B_GATE_FAIL : run_pass ? H2B_GATE_PASS : H2B_GATE_INVALID;
    row->failing = row->status != H2B_GATE_PASS;
    int rc = h2b_buf_finish(&ev, &row->evidence);
    h2b__gate_count_row(r, row);
    return rc;
}

int h2b_cell_slo_check(const struct h2b_results_doc *const *docs, const char *const *paths,
                       size_t ndocs, struct h2b_gate_report *r)
{
    int rc = H2B_OK;
    for (size_t k = 0; k < ndocs && rc == H2B_OK; k++) {
        for (size_t i = 0; i < docs[k]->matrix.n && rc == H2B_OK; i++) {
            const struct h2b_results_cell *c = h2b_results_doc_cell(docs[k], i);
            char name[200];
            cell_name(c, name, sizeof(name));
            if (c->search.base.present)
                rc = search_row(c, name, paths[k], r);
            const char *seen[MAX_OBJECTIVES];
            size_t nseen = 0;
            for (size_t v = 0; v < c->slo.n && rc == H2B_OK; v++) {
                const struct h2b_results_slo *e =
                    h2b_model_array_at(&h2b_results_slo_model, &c->slo, v);
                const char *obj = e->objective ? e->objective : "?";
                size_t j = 0;
                while (j < nseen && strcmp(seen[j], obj) != 0)
                    j++;
                if (j < nseen)
                    continue;
                if (nseen == MAX_OBJECTIVES)
                    break;
                seen[nseen++] = obj;
                rc = objective_row(c, name, obj, paths[k], r);
            }
        }
    }
    if (r->invalid)
        r->exit_code = 3;
    else if (r->exit_code == 0 && (r->failed || r->missing))
        r->exit_code = 1;
    return rc;
}
