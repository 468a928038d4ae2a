/*
 * profiles.c - the report's "Profiles" section: per profiled cell, each target's top symbols
 * side by side, its DSO split as a stacked bar, its flame graph; for an A/B report the
 * differential flame graph of the cell whose req/s fell most.
 *
 * Approach: the tables come from the summaries the results cells carry (cell.profile.server,
 * written by harness/run/profile.c). The flame graphs are drawn again from the folded stacks
 * into the report's directory rather than copied: a results file is hostile input, and an SVG
 * it points at could carry script; redrawn, every byte of the SVG comes from our writer and its
 * one XML escaper. Artefact paths must be relative and free of "..": they are resolved against
 * the results file's directory, so a results file cannot make the report read elsewhere.
 *
 * Rejected: embedding the SVGs' text into the markdown (viewers strip inline SVG); a chart per
 * cell for the DSO split (one stacked bar chart with a bar per profiled target and cell reads
 * at a glance).
 */
#include "report/chart.h"
#include "core/error.h"
#include "prof/prof.h"
#include "report/report_int.h"
#include "core/results.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TOP_ROWS 12

static const char *const dso_labels[] = {"kernel", "libnghttp2", "TLS (libssl, libcrypto)",
                                         "libc",   "own code",   "other"};
static const char *const dso_colors[] = {"#e8913a", "#4e8fd6", "#9b6bd6",
                                         "#4fb56a", "#e0c341", "#a0a0a0"};
#define NDSO 6

/* A markdown code span holding s: inside one, markdown and HTML are not interpreted; a
 * backtick would end it (it becomes '), a '|' would end the table cell (escaped), control
 * characters would end the line (spaces). The one escaper for names in the report's tables. */
void h2b__report_md_code(struct h2b_buf *o, const char *s)
{
    h2b_buf_puts(o, "`");
    for (; *s; s++) {
        if (*s == '`')
            h2b_buf_puts(o, "'");
        else if (*s == '|')
            h2b_buf_puts(o, "\\|");
        else if ((unsigned char)*s < 0x20 || *s == 0x7f)
            h2b_buf_puts(o, " ");
        else
            h2b_buf_append(o, s, 1);
    }
    h2b_buf_puts(o, "`");
}

/* The server profile of cell i of r, or NULL. */
static const struct h2b_results_profile *server_profile(const struct h2b_rdata_results *r, size_t i)
{
    if (!r->model || i >= r->n_cells)
        return NULL;
    const struct h2b_results_cell *c = h2b_results_doc_cell(r->model, i);
    return c && c->profile.base.present && c->profile.server.base.present ? &c->profile.server
                                                                          : NULL;
}

/* Share of class k (dso_keys order) in a split. */
static double dso_value(const struct h2b_results_dso_pct *s, size_t k)
{
    const double v[NDSO] = {s->kernel, s->nghttp2, s->tls, s->libc, s->own, s->other};
    return s->base.present && k < NDSO ? v[k] : NAN;
}

/* Row i of a profile's top symbols, or NULL. */
static const struct h2b_results_symbol *top_row(const struct h2b_results_profile *p, size_t i)
{
    return p && i < p->top.n ? &((const struct h2b_results_symbol *)p->top.v)[i] : NULL;
}

/* path of an artefact named rel in results file r's directory; false when rel is not a plain
 * relative path (absolute, "..", empty) or too long. */
static bool artefact_path(const struct h2b_rdata_results *r, const char *rel, char *buf,
                          size_t size)
{
    if (!rel || !*rel || rel[0] == '/' || strstr(rel, "..") || strchr(rel, '\\'))
        return false;
    const char *slash = strrchr(r->path, '/');
    int n = snprintf(buf, size, "%.*s%s", slash ? (int)(slash + 1 - r->path) : 0, r->path, rel);
    return n > 0 && (size_t)n < size;
}

/* The report's file name for the flame graph of cell i: profile-cell-I-TARGET.svg (target
 * reduced to a file-name-safe set). */
static void svg_name(const struct h2b_rdata_results *r, size_t i, const char *prefix, char *buf,
                     size_t size)
{
    char safe[64];
    size_t k = 0;
    for (const char *t = r->cells[i].target; *t && k < sizeof(safe) - 1; t++) {
        char c = *t;
        safe[k++] = ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                     c == '-' || c == '_')
                        ? c
                        : '_';
    }
    safe[k] = '\0';
    snprintf(buf, size, "%s-cell-%zu-%s.svg", prefix, i, safe);
}

static int load_folded(const struct h2b_rdata_results *r, const struct h2b_results_profile *p,
                       struct h2b_prof **out, char *why, size_t why_size)
{
    char path[4096];
    if (!artefact_path(r, p->folded, path, sizeof(path))) {
        snprintf(why, why_size, "the profile's folded path is not a relative path");
        return H2B_ERR_PARSE;
    }
    struct h2b_prof *prof = NULL;
    struct h2b_diag d = {0};
    int rc = h2b_prof_new(&prof, p->exe);
    if (rc == H2B_OK)
        rc = h2b_prof_read_folded(prof, path, &d);
    if (rc) {
        snprintf(why, why_size, "%s", d.message[0] ? d.message : h2b_strerror(rc));
        h2b_prof_del(prof);
        return rc;
    }
    *out = prof;
    return H2B_OK;
}

/* The first profiled repeat of (target, key) in r, or SIZE_MAX. */
static size_t profiled_cell(const struct h2b_rdata_results *r, const char *target,
                            struct h2b__cellkey k)
{
    for (size_t i = 0; i < r->n_cells; i++) {
        const struct h2b_rdata_cell *c = &r->cells[i];
        if (strcmp(c->target, target) == 0 && c->connections == k.connections &&
            c->streams_requested == k.streams && server_profile(r, i))
            return i;
    }
    return SIZE_MAX;
}

/* The A/B pick: among cells profiled in both runs, the one whose median req/s fell most. */
static bool most_regressed(const struct h2b__report *rep, size_t *bi, size_t *hi, double *ratio)
{
    bool found = false;
    for (size_t i = 0; i < rep->head->n_cells; i++) {
        const struct h2b_rdata_cell *h = &rep->head->cells[i];
        if (!server_profile(rep->head, i) || h->failed || !(h->e->req_per_s > 0))
            continue;
        struct h2b__cellkey k = {h->connections, h->streams_requested};
        size_t b = profiled_cell(rep->base, h->target, k);
        if (b == SIZE_MAX || rep->base->cells[b].failed || !(rep->base->cells[b].e->req_per_s > 0))
            continue;
        double q = h->e->req_per_s / rep->base->cells[b].e->req_per_s;
        if (!found || q < *ratio) {
            found = true;
            *ratio = q;
            *bi = b;
            *hi = i;
        }
    }
    return found;
}

int h2b__report_plot_profiles(struct h2b__report *rep, const char *dir)
{
    const struct h2b_rdata_results *r = rep->head;
    struct h2b_buf data;
    h2b_buf_init(&data);
    h2b_buf_puts(&data, "# cell kernel nghttp2 tls libc own other (% of samples)\n");
    size_t bars = 0;
    int rc = H2B_OK;
    rep->profile_note[0] = '\0';
    for (size_t i = 0; i < r->n_cells && rc == H2B_OK; i++) {
        const struct h2b_results_profile *p = server_profile(r, i);
        if (!p)
            continue;
        char label[160], name[160], path[4200], why[512], title[300];
        snprintf(label, sizeof(label), "%s %ldx%ld", r->cells[i].target, r->cells[i].connections,
                 r->cells[i].streams_requested);
        h2b__report_dat_quoted(&data, label);
        for (size_t k = 0; k < NDSO; k++) {
            double v = dso_value(&p->dso_pct, k);
            h2b_buf_printf(&data, " %.3f", isnan(v) ? 0.0 : v);
        }
        h2b_buf_puts(&data, "\n");
        bars++;
        /* the flame graph, redrawn from the folded stacks */
        struct h2b_prof *prof = NULL;
        svg_name(r, i, "profile", name, sizeof(name));
        snprintf(path, sizeof(path), "%s/%s", dir, name);
        snprintf(title, sizeof(title), "%s (%s)", label, p->exe ? p->exe : "?");
        struct h2b_diag d = {0};
        if (load_folded(r, p, &prof, why, sizeof(why)) != H2B_OK ||
            h2b_prof_flame_svg(prof, title, path, &d) != H2B_OK) {
            size_t used = strlen(rep->profile_note);
            snprintf(rep->profile_note + used, sizeof(rep->profile_note) - used,
                     "%sno flame graph for cell %zu: %s", used ? "; " : "", i,
                     d.message[0] ? d.message : why);
        }
        h2b_prof_del(prof);
    }
    rep->profile_diff = false;
    size_t bi = 0, hi = 0;
    double ratio = 1;
    if (rep->base && most_regressed(rep, &bi, &hi, &ratio)) {
        struct h2b_prof *a = NULL, *b = NULL;
        char why[512] = "", name[160], path[4200], title[300];
        struct h2b_diag d = {0};
        svg_name(r, hi, "profile-diff", name, sizeof(name));
        snprintf(path, sizeof(path), "%s/%s", dir, name);
        snprintf(title, sizeof(title), "%s %ldx%ld: base -> head (req/s x%.2f)",
                 r->cells[hi].target, r->cells[hi].connections, r->cells[hi].streams_requested,
                 ratio);
        if (load_folded(rep->base, server_profile(rep->base, bi), &a, why, sizeof(why)) == H2B_OK &&
            load_folded(r, server_profile(r, hi), &b, why, sizeof(why)) == H2B_OK &&
            h2b_prof_diff_svg(a, b, title, path, &d) == H2B_OK) {
            rep->profile_diff = true;
            rep->profile_diff_cell = hi;
            rep->profile_diff_ratio = ratio;
        } else {
            size_t used = strlen(rep->profile_note);
            snprintf(rep->profile_note + used, sizeof(rep->profile_note) - used,
                     "%sno differential flame graph: %s", used ? "; " : "",
                     d.message[0] ? d.message : why);
        }
        h2b_prof_del(a);
        h2b_prof_del(b);
    }
    if (bars) {
        struct h2b_buf plot;
        h2b_buf_init(&plot);
        h2b_buf_puts(&plot, "'profile-dso.dat' using 2:xtic(1)");
        for (size_t k = 0; k < NDSO; k++) {
            if (k)
                h2b_buf_printf(&plot, ", '' using %zu", k + 2);
            h2b_buf_printf(&plot, " title \"%s\" lc rgb \"%s\"", dso_labels[k], dso_colors[k]);
        }
        struct h2b_chart_var vars[] = {{"PLOT", h2b_buf_str(&plot)}};
        rc = h2b_buf_error(&plot);
        if (rc == H2B_OK)
            rc = h2b__report_emit(rep, dir, H2B__CHART_DSO, "profile-dso", "dso",
                                  "Where the CPU samples fell, by DSO", &data, vars, 1);
        h2b_buf_free(&plot);
    }
    h2b_buf_free(&data);
    return rc;
}

static void fmt_pct(double v, char *buf, size_t n)
{
    if (isnan(v))
        snprintf(buf, n, "—");
    else
        snprintf(buf, n, "%.1f %%", v);
}

/* One point (connections x streams): the targets' top symbols side by side, then their splits. */
static void point(const struct h2b__report *rep, struct h2b_buf *o, struct h2b__cellkey k)
{
    const struct h2b_rdata_results *r = rep->head;
    size_t cells[64], n = 0;
    for (size_t t = 0; t < rep->n_targets && n < 64; t++) {
        size_t i = profiled_cell(r, rep->targets[t], k);
        if (i != SIZE_MAX)
            cells[n++] = i;
    }
    if (n == 0)
        return;
    h2b_buf_printf(o, "\n### %ld connections × %ld streams\n\n", k.connections, k.streams);
    h2b_buf_puts(o, "Top symbols by self share of the CPU samples (total: the share of "
                    "samples with the symbol anywhere on the stack).\n\n| # |");
    for (size_t j = 0; j < n; j++)
        h2b_buf_printf(o, " %s symbol | DSO | self | total |", r->cells[cells[j]].target);
    h2b_buf_puts(o, "\n|---:|");
    for (size_t j = 0; j < n; j++)
        h2b_buf_puts(o, "---|---|---:|---:|");
    h2b_buf_puts(o, "\n");
    for (size_t row = 0; row < TOP_ROWS; row++) {
        bool any = false;
        for (size_t j = 0; j < n; j++)
            any = any || top_row(server_profile(r, cells[j]), row);
        if (!any)
            break;
        h2b_buf_printf(o, "| %zu |", row + 1);
        for (size_t j = 0; j < n; j++) {
            const struct h2b_results_symbol *e = top_row(server_profile(r, cells[j]), row);
            const char *sym = e ? e->symbol : NULL, *cls = e ? e->class_ : NULL;
            if (!e || !sym) {
                h2b_buf_puts(o, " | | | |");
                continue;
            }
            char self[32], total[32];
            fmt_pct(e->self_pct, self, sizeof(self));
            fmt_pct(e->total_pct, total, sizeof(total));
            h2b_buf_puts(o, " ");
            h2b__report_md_code(o, sym);
            h2b_buf_puts(o, " | ");
            h2b__report_md_code(o, cls ? cls : "?");
            h2b_buf_printf(o, " | %s | %s |", self, total);
        }
        h2b_buf_puts(o, "\n");
    }
    h2b_buf_puts(o, "\n| Target | samples |");
    for (size_t d = 0; d < NDSO; d++)
        h2b_buf_printf(o, " %s |", dso_labels[d]);
    h2b_buf_puts(o, " sum | flame graph |\n|---|---:|");
    for (size_t d = 0; d <= NDSO; d++)
        h2b_buf_puts(o, "---:|");
    h2b_buf_puts(o, "---|\n");
    for (size_t j = 0; j < n; j++) {
        const struct h2b_results_profile *p = server_profile(r, cells[j]);
        double sum = 0;
        h2b_buf_printf(o, "| %s (", r->cells[cells[j]].target);
        h2b__report_md_code(o, p->exe ? p->exe : "?");
        h2b_buf_printf(o, ") | %.0f |", p->samples);
        for (size_t d = 0; d < NDSO; d++) {
            char b[32];
            double v = dso_value(&p->dso_pct, d);
            sum += isnan(v) ? 0 : v;
            fmt_pct(v, b, sizeof(b));
            h2b_buf_printf(o, " %s |", b);
        }
        char name[160];
        svg_name(r, cells[j], "profile", name, sizeof(name));
        h2b_buf_printf(o, " %.1f %% | [SVG](%s) |\n", sum, name);
    }
    for (size_t j = 0; j < n; j++) {
        char name[160];
        svg_name(r, cells[j], "profile", name, sizeof(name));
        h2b_buf_printf(o, "\n![flame graph of %s](%s)\n", r->cells[cells[j]].target, name);
    }
}

void h2b__report_profiles_md(const struct h2b__report *rep, struct h2b_buf *o)
{
    const struct h2b_rdata_results *r = rep->head;
    bool any = false;
    for (size_t i = 0; i < r->n_cells && !any; i++)
        any = server_profile(r, i) != NULL;
    if (!any)
        return;
    h2b_buf_puts(o, "\n## Profiles\n\n");
    h2b_buf_puts(o, "CPU profiles of the targets during the cells `--perf-record` named, after "
                    "warm-up: `perf record -e cpu-clock -F 499 --call-graph dwarf` attached to the "
                    "server process, folded by h2bench (docs/profiles.md). A DSO split classifies "
                    "each sample by its leaf frame. Frames Debian ships without symbols show as "
                    "the library's name (`[libnghttp2.so.14.24.1]`: nghttp2's internal "
                    "functions). The flame graphs are interactive in a browser (hover, click to "
                    "zoom, search).\n");
    for (size_t k = 0; k < rep->n_keys; k++)
        point(rep, o, rep->keys[k]);
    h2b__report_chart(rep, o, H2B__CHART_DSO);
    if (rep->profile_diff) {
        const struct h2b_rdata_cell *c = &r->cells[rep->profile_diff_cell];
        char name[160];
        svg_name(r, rep->profile_diff_cell, "profile-diff", name, sizeof(name));
        h2b_buf_printf(o,
                       "\n### Where the most-regressed cell's time went\n\n%s at %ld × %ld "
                       "went from base to head at %.2f× the req/s. The differential flame "
                       "graph has head's shape; red frames take a larger share of head's "
                       "samples than of base's, blue ones a smaller share.\n\n"
                       "![differential flame graph](%s) ([SVG](%s))\n",
                       c->target, c->connections, c->streams_requested, rep->profile_diff_ratio,
                       name, name);
    }
    if (rep->profile_note[0])
        h2b_buf_printf(o, "\nNot drawn: %s.\n", rep->profile_note);
    /* where a profiled cell has no profile, its note says why */
    for (size_t i = 0; i < r->n_cells; i++) {
        const struct h2b_results_cell *c = r->model ? h2b_results_doc_cell(r->model, i) : NULL;
        if (c && c->profile.base.present && !server_profile(r, i) && r->cells[i].e->note) {
            h2b_buf_printf(o,
                           "\n%s %ld × %ld: no profile (see the cell's note: ", r->cells[i].target,
                           r->cells[i].connections, r->cells[i].streams_requested);
            h2b__report_md_code(o, r->cells[i].e->note);
            h2b_buf_puts(o, ").\n");
        }
    }
}
