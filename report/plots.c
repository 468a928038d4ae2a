/*
 * plots.c - the data files and gnuplot scripts behind the report's charts.
 *
 * Which charts: the component suite as bars (head run), req/s against connections (one line
 * per target and requested stream level), the latency percentile spectrum for a few chosen
 * cells (the lightest, the first target's throughput peak and the heaviest: the three places a
 * reader looks), and a history across runs when several results files are given. A chart is
 * only written when it has data, because gnuplot fails on an empty log-scale axis.
 *
 * Data files are whitespace tables, one gnuplot "index" block per line of the chart, so a user
 * can re-plot them with any tool.
 */
#include "report/chart.h"
#include "core/error.h"
#include "core/hist.h"
#include "core/results.h"
#include "report/report_int.h"
#include "core/stats.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_REPEATS 256

static const char *const colors[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd",
                                     "#ff7f0e", "#8c564b", "#e377c2", "#17becf"};
#define N_COLORS (sizeof(colors) / sizeof(colors[0]))

/* A "# ..." comment line of a data file: s without control characters. */
static void dat_comment(struct h2b_buf *b, const char *s)
{
    for (; *s; s++)
        h2b_buf_append(b, (unsigned char)*s < 0x20 ? " " : s, 1);
}

/* h2b__report_emit() for the line charts whose template takes an x range, x tics and plot clauses
 * (req/s against connections, history across runs); a failed buffer fails the chart. */
static int emit_lines(struct h2b__report *rep, const char *dir, enum h2b__chart_kind kind,
                      const char *name, const char *title, struct h2b_buf *data, const char *xmin,
                      const char *xmax, struct h2b_buf *xtics, struct h2b_buf *plot)
{
    struct h2b_chart_var vars[] = {
        {"XMIN", xmin}, {"XMAX", xmax}, {"XTICS", h2b_buf_str(xtics)}, {"PLOT", h2b_buf_str(plot)}};
    int rc = h2b_buf_error(plot) ? h2b_buf_error(plot) : h2b_buf_error(xtics);
    if (rc == H2B_OK)
        rc = h2b__report_emit(rep, dir, kind, name, name, title, data, vars, 4);
    return rc;
}

static int plot_micro(struct h2b__report *rep, const char *dir)
{
    const struct h2b_rdata_results *r = rep->head;
    double ymin = INFINITY;
    for (size_t i = 0; i < r->n_micro; i++) {
        if (r->micro[i].ns_per_op > 0 && r->micro[i].ns_per_op < ymin)
            ymin = r->micro[i].ns_per_op;
        if (r->micro[i].p99_ns > 0 && r->micro[i].p99_ns < ymin)
            ymin = r->micro[i].p99_ns;
    }
    if (!isfinite(ymin))
        return H2B_OK;
    struct h2b_buf data, plot;
    h2b_buf_init(&data);
    h2b_buf_init(&plot);
    h2b_buf_puts(&data, "# benchmark ns_per_op p99_ns\n");
    for (size_t i = 0; i < r->n_micro; i++) {
        const struct h2b_results_micro *m = &r->micro[i];
        h2b__report_dat_quoted(&data, m->name);
        h2b_buf_printf(&data, " %.6g", m->ns_per_op > 0 ? m->ns_per_op : NAN);
        if (m->p99_ns > 0)
            h2b_buf_printf(&data, " %.6g\n", m->p99_ns);
        else
            h2b_buf_puts(&data, " ?\n");
    }
    h2b_buf_printf(&plot,
                   "'micro.dat' using 2:xtic(1) title \"ns/op (median of epochs)\" "
                   "lc rgb \"%s\", '' using 3 title \"p99 per operation\" lc rgb \"%s\"",
                   colors[0], colors[4]);
    char ybuf[32];
    snprintf(ybuf, sizeof(ybuf), "%g", pow(10, floor(log10(ymin))));
    struct h2b_chart_var vars[] = {{"YMIN", ybuf}, {"PLOT", h2b_buf_str(&plot)}};
    int rc = h2b_buf_error(&plot);
    if (rc == H2B_OK)
        rc = h2b__report_emit(rep, dir, H2B__CHART_MICRO, "micro", "micro",
                              "Component suite: ns/op and p99 per benchmark", &data, vars, 2);
    h2b_buf_free(&data);
    h2b_buf_free(&plot);
    return rc;
}

static int plot_rps(struct h2b__report *rep, const char *dir)
{
    const struct h2b_rdata_results *r = rep->head;
    struct h2b_buf data, plot, xtics;
    h2b_buf_init(&data);
    h2b_buf_init(&plot);
    h2b_buf_init(&xtics);
    long streams[64];
    size_t ns = 0;
    for (size_t k = 0; k < rep->n_keys; k++) {
        size_t j;
        for (j = 0; j < ns && streams[j] != rep->keys[k].streams; j++)
            ;
        if (j == ns && ns < 64)
            streams[ns++] = rep->keys[k].streams;
    }
    long cmin = 0, cmax = 0, prev = 0;
    size_t block = 0;
    for (size_t t = 0; t < rep->n_targets; t++) {
        for (size_t s = 0; s < ns; s++) {
            size_t points = 0;
            for (size_t k = 0; k < rep->n_keys; k++) {
                if (rep->keys[k].streams != streams[s])
                    continue;
                double v[MAX_REPEATS];
                size_t n = h2b__report_group(r, rep->targets[t], rep->keys[k], H2B__GROUP_RPS, v,
                                             MAX_REPEATS);
                if (n == 0)
                    continue;
                if (points == 0) {
                    h2b_buf_puts(&data, "# ");
                    dat_comment(&data, rep->targets[t]);
                    h2b_buf_printf(&data, ", %ld streams requested\n", streams[s]);
                }
                h2b_buf_printf(&data, "%ld %.6g\n", rep->keys[k].connections,
                               h2b_stats_median(v, n));
                points++;
            }
            if (points == 0)
                continue;
            h2b_buf_puts(&data, "\n\n");
            char title[160];
            snprintf(title, sizeof(title), "%s, %ld stream%s", rep->targets[t], streams[s],
                     streams[s] == 1 ? "" : "s");
            h2b_buf_printf(&plot,
                           "%s'matrix-rps.dat' index %zu using 1:2 with linespoints "
                           "lw 2 lc rgb \"%s\" dt %zu pt %zu ps 1.2 title ",
                           block ? ", " : "", block, colors[t % N_COLORS], s % 5 + 1,
                           (size_t[]){7, 5, 9, 11, 13}[s % 5]);
            h2b_chart_quote(&plot, title);
            block++;
        }
    }
    int rc = H2B_OK;
    if (block == 0)
        goto out;
    for (size_t k = 0; k < rep->n_keys; k++) {
        long c = rep->keys[k].connections;
        if (cmin == 0 || c < cmin)
            cmin = c;
        if (c > cmax)
            cmax = c;
        if (c != prev)
            h2b_buf_printf(&xtics, "%s\"%ld\" %ld", prev ? ", " : "", c, c);
        prev = c;
    }
    char xmin[32], xmax[32];
    snprintf(xmin, sizeof(xmin), "%g", cmin / 1.6);
    snprintf(xmax, sizeof(xmax), "%g", cmax * 1.6);
    rc = emit_lines(rep, dir, H2B__CHART_RPS, "matrix-rps",
                    "Requests per second against connections", &data, xmin, xmax, &xtics, &plot);
out:
    h2b_buf_free(&data);
    h2b_buf_free(&plot);
    h2b_buf_free(&xtics);
    return rc;
}

struct spectrum {
    struct h2b_buf *data;
    uint64_t total, cum;
    double unit, xmax;
};

static int spectrum_point(uint64_t value, uint64_t count, void *arg)
{
    struct spectrum *s = arg;
    s->cum += count;
    /* the last bin sits at 1 - 1/total, the finest percentile the samples resolve */
    double x =
        s->cum >= s->total ? (double)s->total : 1.0 / (1.0 - (double)s->cum / (double)s->total);
    h2b_buf_printf(s->data, "%.6g %.6g\n", x < s->xmax ? x : s->xmax, (double)value / s->unit);
    return 0;
}

static int plot_latency_cell(struct h2b__report *rep, const char *dir, struct h2b__cellkey k)
{
    struct h2b_hist *h[64] = {0};
    size_t nt = rep->n_targets < 64 ? rep->n_targets : 64, have = 0;
    uint64_t total_max = 0, vmax = 0;
    for (size_t t = 0; t < nt; t++) {
        size_t repeats;
        h[t] = h2b__report_group_hist(rep->head, rep->targets[t], k, &repeats);
        if (h[t]) {
            have++;
            if (h[t]->total > total_max)
                total_max = h[t]->total;
            if (h[t]->max > vmax)
                vmax = h[t]->max;
        }
    }
    int rc = H2B_OK;
    if (have == 0)
        goto out;
    double xmax = pow(10, ceil(log10((double)total_max)));
    if (xmax > 1e6)
        xmax = 1e6;
    if (xmax < 10)
        xmax = 10;
    double unit = vmax >= 1e6 ? 1e6 : 1e3;
    struct h2b_buf data, plot;
    h2b_buf_init(&data);
    h2b_buf_init(&plot);
    size_t block = 0;
    for (size_t t = 0; t < nt; t++) {
        if (h[t] == NULL)
            continue;
        h2b_buf_puts(&data, "# ");
        dat_comment(&data, rep->targets[t]);
        h2b_buf_printf(&data, ": x = 1/(1-percentile), latency in %s\n", unit == 1e6 ? "ms" : "us");
        h2b_buf_printf(&data, "1 %.6g\n", (double)h[t]->min / unit);
        struct spectrum sp = {&data, h[t]->total, 0, unit, xmax};
        h2b_hist_foreach(h[t], spectrum_point, &sp);
        h2b_buf_puts(&data, "\n\n");
        char name[64];
        snprintf(name, sizeof(name), "latency-c%ld-s%ld", k.connections, k.streams);
        h2b_buf_printf(&plot,
                       "%s'%s.dat' index %zu using 1:2 with lines lw 2 lc rgb \"%s\" "
                       "title ",
                       block ? ", " : "", name, block, colors[t % N_COLORS]);
        h2b_chart_quote(&plot, rep->targets[t]);
        block++;
    }
    char name[64], title[160], xbuf[32];
    snprintf(name, sizeof(name), "latency-c%ld-s%ld", k.connections, k.streams);
    snprintf(title, sizeof(title), "Latency percentile spectrum, %ld connection%s x %ld stream%s",
             k.connections, k.connections == 1 ? "" : "s", k.streams, k.streams == 1 ? "" : "s");
    snprintf(xbuf, sizeof(xbuf), "%g", xmax);
    struct h2b_chart_var vars[] = {
        {"XMAX", xbuf}, {"UNIT", unit == 1e6 ? "ms" : "µs"}, {"PLOT", h2b_buf_str(&plot)}};
    rc = h2b_buf_error(&plot);
    if (rc == H2B_OK)
        rc = h2b__report_emit(rep, dir, H2B__CHART_LATENCY, name, "latency", title, &data, vars, 3);
    h2b_buf_free(&data);
    h2b_buf_free(&plot);
out:
    for (size_t t = 0; t < nt; t++)
        h2b_hist_del(h[t]);
    return rc;
}

/* The lightest cell, the first target's req/s peak and the heaviest cell, without repeats. */
static int plot_latency(struct h2b__report *rep, const char *dir)
{
    if (rep->n_keys == 0 || rep->n_targets == 0)
        return H2B_OK;
    size_t pick[3] = {0, 0, rep->n_keys - 1};
    double best = -1;
    for (size_t k = 0; k < rep->n_keys; k++) {
        double v[MAX_REPEATS];
        size_t n = h2b__report_group(rep->head, rep->targets[0], rep->keys[k], H2B__GROUP_RPS, v,
                                     MAX_REPEATS);
        double med = h2b_stats_median(v, n);
        if (n > 0 && med > best) {
            best = med;
            pick[1] = k;
        }
        long load = rep->keys[k].connections * rep->keys[k].streams;
        long hl = rep->keys[pick[2]].connections * rep->keys[pick[2]].streams;
        if (load > hl)
            pick[2] = k;
    }
    /* ascending, without duplicates */
    size_t order[3] = {pick[0], pick[1], pick[2]};
    for (int i = 0; i < 3; i++) {
        for (int j = i + 1; j < 3; j++) {
            if (order[j] < order[i]) {
                size_t t = order[i];
                order[i] = order[j];
                order[j] = t;
            }
        }
    }
    for (int i = 0; i < 3; i++) {
        if (i > 0 && order[i] == order[i - 1])
            continue;
        int rc = plot_latency_cell(rep, dir, rep->keys[order[i]]);
        if (rc)
            return rc;
    }
    return H2B_OK;
}

/* One line of the history chart: v[r] relative to v[0]; skipped when run 1 has no value. */
static void history_series(struct h2b_buf *data, struct h2b_buf *plot, size_t *block,
                           const char *title, const double *v, size_t nr)
{
    if (!(v[0] > 0))
        return;
    h2b_buf_puts(data, "# ");
    dat_comment(data, title);
    h2b_buf_puts(data, " relative to run 1\n");
    for (size_t r = 0; r < nr; r++) {
        if (v[r] > 0)
            h2b_buf_printf(data, "%zu %.6g\n", r + 1, v[r] / v[0]);
    }
    h2b_buf_puts(data, "\n\n");
    h2b_buf_printf(plot,
                   "%s'history.dat' index %zu using 1:2 with linespoints lw 2 "
                   "lc rgb \"%s\" dt %zu pt 7 title ",
                   *block ? ", " : "", *block, colors[*block % N_COLORS], *block / N_COLORS + 1);
    h2b_chart_quote(plot, title);
    (*block)++;
}

/* The change points of micro benchmark name's ns/op series (rep->hist) as "run value commit"
 * rows, at the run that opens each, relative to run 1 as its line is drawn. */
static void history_marks(const struct h2b__report *rep, struct h2b_buf *marks, const char *name,
                          const double *v, size_t nr)
{
    const struct h2b_histset *h = rep->hist;
    char series[300];
    snprintf(series, sizeof(series), "%s - ns/op", name);
    for (size_t i = 0; h && i < h->n; i++) {
        const struct h2b_histset_series *s = &h->s[i];
        if (strcmp(s->name, series) != 0)
            continue;
        for (size_t k = 0; k < s->ncps; k++) {
            const struct h2b_histset_point *p = &s->p[s->cps[k].index];
            size_t r = h2b__report_history_run(rep, p);
            if (r >= nr || !(v[r] > 0))
                continue;
            char label[16];
            snprintf(label, sizeof(label), "%.7s", p->commit);
            h2b_buf_printf(marks, "%zu %.6g ", r + 1, v[r] / v[0]);
            h2b__report_dat_quoted(marks, label);
            h2b_buf_puts(marks, "\n");
        }
    }
}

static int plot_history(struct h2b__report *rep, const char *dir)
{
    if (rep->n_runs < 2)
        return H2B_OK;
    struct h2b_buf data, plot, xtics, marks;
    h2b_buf_init(&data);
    h2b_buf_init(&plot);
    h2b_buf_init(&xtics);
    h2b_buf_init(&marks);
    size_t block = 0;
    double v[H2B__MAX_RUNS];
    size_t nr = rep->n_runs < H2B__MAX_RUNS ? rep->n_runs : H2B__MAX_RUNS;
    for (size_t i = 0; i < rep->head->n_micro; i++) {
        const char *name = rep->head->micro[i].name;
        for (size_t r = 0; r < nr; r++) {
            const struct h2b_results_micro *m = h2b_rdata_micro_find(rep->runs[r], name);
            v[r] = m ? m->ns_per_op : NAN;
        }
        char title[160];
        snprintf(title, sizeof(title), "%s ns/op", name);
        if (v[0] > 0)
            history_marks(rep, &marks, name, v, nr);
        history_series(&data, &plot, &block, title, v, nr);
    }
    for (size_t t = 0; t < rep->n_targets; t++) {
        for (size_t r = 0; r < nr; r++)
            v[r] = h2b__report_run_peak_rps(rep->runs[r], rep->targets[t]);
        char title[160];
        snprintf(title, sizeof(title), "%s peak req/s", rep->targets[t]);
        history_series(&data, &plot, &block, title, v, nr);
    }
    int rc = H2B_OK;
    if (block == 0)
        goto out;
    if (marks.len) {
        /* the change points, on their series' line, labelled with the first commit */
        h2b_buf_puts(&data, "# change points: run, relative value, commit\n");
        h2b_buf_append(&data, marks.data, marks.len);
        h2b_buf_puts(&data, "\n\n");
        h2b_buf_printf(&plot,
                       ", 'history.dat' index %zu using 1:2:3 with labels point pt 6 ps 2.5 "
                       "lc rgb \"#d62728\" offset 0,1.2 font \",9\" title \"change point (first "
                       "commit)\"",
                       block);
    }
    for (size_t r = 0; r < rep->n_runs; r++) {
        char label[16];
        snprintf(label, sizeof(label), "%.10s", rep->runs[r]->model->created);
        /* "N\n" . 'date': the date comes from a results file, so it is a quoted literal */
        h2b_buf_printf(&xtics, "%s\"%zu\\n\".", r ? ", " : "", r + 1);
        h2b_chart_quote(&xtics, label);
        h2b_buf_printf(&xtics, " %zu", r + 1);
    }
    char xmin[16], xmax[16];
    snprintf(xmin, sizeof(xmin), "0.7");
    snprintf(xmax, sizeof(xmax), "%.1f", (double)rep->n_runs + 0.3);
    rc = emit_lines(rep, dir, H2B__CHART_HISTORY, "history",
                    "History across runs, relative to run 1", &data, xmin, xmax, &xtics, &plot);
out:
    h2b_buf_free(&data);
    h2b_buf_free(&plot);
    h2b_buf_free(&xtics);
    h2b_buf_free(&marks);
    return rc;
}

/* The search of head's cell i, or NULL when the cell ran none (matrix.find_max). */
static const struct h2b_results_search *cell_search(const struct h2b_rdata_results *r, size_t i)
{
    const struct h2b_results_cell *c = h2b_results_doc_cell(r->model, i);
    return c && c->search.base.present ? &c->search : NULL;
}

#define MAX_STEPS 512 /* steps drawn per search (a search runs a few dozen) */

static int by_rate(const void *a, const void *b)
{
    double x = (*(const struct h2b_results_search_step *const *)a)->rate_per_s;
    double y = (*(const struct h2b_results_search_step *const *)b)->rate_per_s;
    return (x > y) - (x < y);
}

/* One block of the capacity chart: the steps of search s sorted by rate, "rate p50 p99 pass". */
static void capacity_block(struct h2b_buf *data, const struct h2b_results_search *s, double unit)
{
    const struct h2b_results_search_step *st[MAX_STEPS] = {0};
    size_t n = 0;
    for (size_t j = 0; j < s->steps.n && n < MAX_STEPS; j++) {
        const struct h2b_results_search_step *e =
            h2b_model_array_at(&h2b_results_search_step_model, &s->steps, j);
        if (isfinite(e->rate_per_s) && e->latency_ns.base.present)
            st[n++] = e;
    }
    qsort(st, n, sizeof(st[0]), by_rate);
    for (size_t j = 0; j < n; j++) {
        const struct h2b_results_latency *l = &st[j]->latency_ns;
        h2b_buf_printf(data, "%.6g ", st[j]->rate_per_s);
        if (isfinite(l->p50))
            h2b_buf_printf(data, "%.6g ", l->p50 / unit);
        else
            h2b_buf_puts(data, "? ");
        if (isfinite(l->p99))
            h2b_buf_printf(data, "%.6g ", l->p99 / unit);
        else
            h2b_buf_puts(data, "? ");
        h2b_buf_printf(data, "%d\n", st[j]->verdict && strcmp(st[j]->verdict, "pass") == 0 ? 1 : 0);
    }
}

/* Latency against offered rate for target t: every find_max cell of it, its knee marked. */
static int plot_capacity_target(struct h2b__report *rep, const char *dir, size_t t)
{
    const struct h2b_rdata_results *r = rep->head;
    double vmax = 0;
    size_t cells = 0;
    for (size_t i = 0; i < r->n_cells; i++) {
        const struct h2b_results_search *s = cell_search(r, i);
        if (!s || strcmp(r->cells[i].target, rep->targets[t]) != 0)
            continue;
        cells++;
        for (size_t j = 0; j < s->steps.n; j++) {
            const struct h2b_results_search_step *e =
                h2b_model_array_at(&h2b_results_search_step_model, &s->steps, j);
            if (isfinite(e->latency_ns.p99) && e->latency_ns.p99 > vmax)
                vmax = e->latency_ns.p99;
        }
    }
    if (cells == 0)
        return H2B_OK;
    double unit = vmax >= 1e6 ? 1e6 : 1e3;
    char name[64];
    snprintf(name, sizeof(name), "capacity-%zu", t);
    struct h2b_buf data, plot, marks;
    h2b_buf_init(&data);
    h2b_buf_init(&plot);
    h2b_buf_init(&marks);
    size_t block = 0;
    for (size_t i = 0; i < r->n_cells; i++) {
        const struct h2b_results_search *s = cell_search(r, i);
        if (!s || strcmp(r->cells[i].target, rep->targets[t]) != 0)
            continue;
        const struct h2b_rdata_cell *c = &r->cells[i];
        char cell[96], title[160];
        snprintf(cell, sizeof(cell), "%ldx%ld%s", c->connections, c->streams_requested,
                 c->repeat > 0 ? " (repeat)" : "");
        h2b_buf_puts(&data, "# ");
        dat_comment(&data, rep->targets[t]);
        h2b_buf_printf(&data, " %s: offered req/s, p50 and p99 in %s, 1 = a passing step\n", cell,
                       unit == 1e6 ? "ms" : "us");
        capacity_block(&data, s, unit);
        h2b_buf_puts(&data, "\n\n");
        const char *color = colors[block % N_COLORS];
        for (int q = 0; q < 2; q++) {
            snprintf(title, sizeof(title), "%s %s", cell, q ? "p99" : "p50");
            h2b_buf_printf(&plot,
                           "%s'%s.dat' index %zu using 1:%d with linespoints lw 2 lc rgb \"%s\" "
                           "dt %d pt 7 title ",
                           block || q ? ", " : "", name, block, q ? 3 : 2, color, q ? 2 : 1);
            h2b_chart_quote(&plot, title);
        }
        /* failing steps: an open circle on their p99 */
        h2b_buf_printf(&plot,
                       ", '%s.dat' index %zu using 1:($4 == 0 ? $3 : 1/0) with points pt 6 "
                       "ps 2 lc rgb \"%s\" title ",
                       name, block, color);
        snprintf(title, sizeof(title), "%s failing step", cell);
        h2b_chart_quote(&plot, title);
        if (isfinite(s->capacity_per_s)) {
            char label[128];
            snprintf(label, sizeof(label), "knee %s: %.0f req/s", cell, s->capacity_per_s);
            h2b_buf_printf(&marks,
                           "set arrow from %.6g, graph 0 to %.6g, graph 1 nohead dt 3 lw 2 "
                           "lc rgb \"%s\"\nset label ",
                           s->capacity_per_s, s->capacity_per_s, color);
            h2b_chart_quote(&marks, label);
            h2b_buf_printf(&marks, " at %.6g, graph %.3g offset 0.5,0 tc rgb \"%s\"\n",
                           s->capacity_per_s, 0.95 - 0.06 * (double)(block % 8), color);
        }
        block++;
    }
    char title[200];
    snprintf(title, sizeof(title), "Latency against offered rate: %s (capacity search)",
             rep->targets[t]);
    struct h2b_chart_var vars[] = {{"UNIT", unit == 1e6 ? "ms" : "µs"},
                                   {"MARKS", h2b_buf_str(&marks)},
                                   {"PLOT", h2b_buf_str(&plot)}};
    int rc = h2b_buf_error(&plot) ? h2b_buf_error(&plot) : h2b_buf_error(&marks);
    if (rc == H2B_OK)
        rc = h2b__report_emit(rep, dir, H2B__CHART_CAPACITY, name, "capacity", title, &data, vars,
                              3);
    h2b_buf_free(&data);
    h2b_buf_free(&plot);
    h2b_buf_free(&marks);
    return rc;
}

static int plot_capacity(struct h2b__report *rep, const char *dir)
{
    for (size_t t = 0; t < rep->n_targets; t++) {
        int rc = plot_capacity_target(rep, dir, t);
        if (rc)
            return rc;
    }
    return H2B_OK;
}

/* Whether head's cell i has a load over time to draw (a shaped cell's intervals). */
bool h2b__report_over_time(const struct h2b_rdata_results *r, size_t i)
{
    const struct h2b_results_cell *c = h2b_results_doc_cell(r->model, i);
    return c && !r->cells[i].failed && c->intervals.n > 0;
}

/* The chart of one shaped cell: "mid_s p50 p99 offered achieved" per interval, the shape's
 * boundaries as dotted vertical lines. */
static int plot_over_time_cell(struct h2b__report *rep, const char *dir, size_t i)
{
    const struct h2b_rdata_results *r = rep->head;
    const struct h2b_results_cell *c = h2b_results_doc_cell(r->model, i);
    const struct h2b_rdata_cell *rc_ = &r->cells[i];
    double vmax = 0, tmax = 0;
    for (size_t j = 0; j < c->intervals.n; j++) {
        const struct h2b_results_cell_interval *e =
            h2b_model_array_at(&h2b_results_cell_interval_model, &c->intervals, j);
        if (isfinite(e->p99_ns) && e->p99_ns > vmax)
            vmax = e->p99_ns;
        if (e->end_s > tmax)
            tmax = e->end_s;
    }
    double unit = vmax >= 1e6 ? 1e6 : 1e3;
    char name[64], cell[96], title[200], xmax[32];
    snprintf(name, sizeof(name), "over-time-%zu", i);
    snprintf(cell, sizeof(cell), "%ldx%ld%s", rc_->connections, rc_->streams_requested,
             rc_->repeat > 0 ? " (repeat)" : "");
    snprintf(xmax, sizeof(xmax), "%.6g", tmax > 0 ? tmax : 1);
    struct h2b_buf data, plot, marks;
    h2b_buf_init(&data);
    h2b_buf_init(&plot);
    h2b_buf_init(&marks);
    h2b_buf_puts(&data, "# ");
    dat_comment(&data, rc_->target);
    h2b_buf_printf(&data,
                   " %s: interval middle (s), p50 and p99 in %s, offered and achieved req/s\n",
                   cell, unit == 1e6 ? "ms" : "us");
    for (size_t j = 0; j < c->intervals.n; j++) {
        const struct h2b_results_cell_interval *e =
            h2b_model_array_at(&h2b_results_cell_interval_model, &c->intervals, j);
        const double v[] = {e->p50_ns / unit, e->p99_ns / unit, e->offered_per_s,
                            e->achieved_per_s};
        h2b_buf_printf(&data, "%.6g", (e->start_s + e->end_s) / 2);
        for (size_t k = 0; k < sizeof(v) / sizeof(v[0]); k++) {
            if (isfinite(v[k]))
                h2b_buf_printf(&data, " %.6g", v[k]);
            else
                h2b_buf_puts(&data, " ?");
        }
        h2b_buf_puts(&data, "\n");
    }
    static const struct {
        int col;
        const char *axes, *style, *label;
    } lines[] = {
        {2, "x1y1", "lw 2 lc rgb \"#1f77b4\" pt 7", "p50"},
        {3, "x1y1", "lw 2 lc rgb \"#d62728\" pt 7", "p99"},
        {4, "x1y2", "lw 5 lc rgb \"#c0c0c0\" pt 0", "offered req/s"},
        {5, "x1y2", "lw 2 lc rgb \"#2ca02c\" pt 5", "achieved req/s"},
    };
    for (size_t k = 0; k < sizeof(lines) / sizeof(lines[0]); k++)
        h2b_buf_printf(&plot, "%s'%s.dat' using 1:%d axes %s with linespoints %s title \"%s\"",
                       k ? ", " : "", name, lines[k].col, lines[k].axes, lines[k].style,
                       lines[k].label);
    for (size_t j = 0; j < c->shape_bounds_s.n; j++)
        h2b_buf_printf(&marks,
                       "set arrow from %.6g, graph 0 to %.6g, graph 1 nohead dt 3 lw 1.5 "
                       "lc rgb \"#444444\"\n",
                       c->shape_bounds_s.v[j], c->shape_bounds_s.v[j]);
    snprintf(title, sizeof(title), "Latency and rate over time: %s %s (stage boundaries dotted)",
             rc_->target, cell);
    struct h2b_chart_var vars[] = {{"UNIT", unit == 1e6 ? "ms" : "µs"},
                                   {"XMAX", xmax},
                                   {"MARKS", h2b_buf_str(&marks)},
                                   {"PLOT", h2b_buf_str(&plot)}};
    int rc = h2b_buf_error(&plot) ? h2b_buf_error(&plot) : h2b_buf_error(&marks);
    if (rc == H2B_OK)
        rc = h2b__report_emit(rep, dir, H2B__CHART_OVER_TIME, name, "over-time", title, &data, vars,
                              4);
    h2b_buf_free(&data);
    h2b_buf_free(&plot);
    h2b_buf_free(&marks);
    return rc;
}

/* Latency and rate over time: the first H2B__REPORT_MAX_OVER_TIME shaped cells of head. */
static int plot_over_time(struct h2b__report *rep, const char *dir)
{
    size_t n = 0;
    for (size_t i = 0; i < rep->head->n_cells && n < H2B__REPORT_MAX_OVER_TIME; i++) {
        if (!h2b__report_over_time(rep->head, i))
            continue;
        int rc = plot_over_time_cell(rep, dir, i);
        if (rc)
            return rc;
        n++;
    }
    return H2B_OK;
}

int h2b__report_plots(struct h2b__report *rep, const char *dir)
{
    int rc;
    if ((rc = plot_micro(rep, dir)) || (rc = plot_rps(rep, dir)) || (rc = plot_latency(rep, dir)) ||
        (rc = plot_capacity(rep, dir)) || (rc = plot_over_time(rep, dir)) ||
        (rc = plot_history(rep, dir)) || (rc = h2b__report_plot_profiles(rep, dir)))
        return rc;
    return H2B_OK;
}
