/*
 * console.c - what `h2bench run` prints: the progress bar (o->log, stderr), the cell table, the dry
 * run's plan, the per-point summaries and the budget table (o->report, stdout).
 *
 * Approach: every line is printed as its cell finishes (a run of minutes shows its cells as
 * they come, and an interrupted run has printed what it measured); the summaries are computed
 * from the results document being built, through the core results model, so the tables show
 * what the file holds and cannot drift from it. Medians over repeats, never means.
 *
 * Rejected: a table library or a column-width pass over all rows (the cell lines must appear
 * one by one, so widths are fixed); ANSI erase on a TERM=dumb terminal (it gets padding).
 */
#include "run/runner_int.h"

#include "run/budget.h"
#include "core/clock.h"
#include "core/results.h"
#include "core/stats.h"
#include "run/target.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void h2b__run_proto_label(char *buf, size_t size, enum h2b_protocol p, bool tls)
{
    say(buf, size, "%s%s", h2b_protocol_name(p), tls ? "+tls" : "");
}

/* The scenario has a protocol or TLS axis (the console tables show a protocol column). */
static bool proto_axis(const struct run *r)
{
    const struct h2b_matrix_spec *m = &r->s->matrix;
    return m->nprotocols > 1 || m->ntls > 1 ||
           (m->nprotocols == 1 && m->protocols[0] != H2B_PROTO_H2) || (m->ntls == 1 && m->tls[0]);
}

/* ---- progress ---- */

static void fmt_clock(char *buf, size_t size, double s)
{
    unsigned t = s < 0 ? 0 : s > 359999 ? 359999 : (unsigned)(s + 0.5);
    say(buf, size, "%u:%02u", t / 60, t % 60);
}

static double cell_estimate_s(const struct h2b_scenario *s)
{
    return s->matrix.duration_s > 0 ? s->matrix.duration_s + s->matrix.warmup_s + 0.5 : 1.0;
}

static bool dumb_terminal(void)
{
    const char *t = getenv("TERM");
    return t && strcmp(t, "dumb") == 0;
}

void h2b__run_progress(struct run *r, size_t i)
{
    if (!r->o->progress || !r->o->log)
        return;
    const struct h2b_cell *c = &r->cells[i];
    double elapsed = (double)(h2b_clock_now_ns() - r->started_ns) / 1e9;
    double per = r->done ? elapsed / (double)r->done : cell_estimate_s(r->s);
    char el[16], eta[16], bar[21];
    fmt_clock(el, sizeof(el), elapsed);
    fmt_clock(eta, sizeof(eta), per * (double)(r->ncells - r->done));
    size_t fill = r->ncells ? r->done * 20 / r->ncells : 0;
    for (size_t k = 0; k < 20; k++)
        bar[k] = k < fill ? '#' : '.';
    bar[20] = '\0';
    /* a terminal without ANSI erase-to-end-of-line (TERM=dumb) gets the line padded instead */
    fprintf(r->o->log, "\r[%s] cell %zu/%zu %-8s %ux%u  elapsed %s  ETA %s %s", bar, i + 1,
            r->ncells, r->s->targets[c->target].name, c->connections, c->streams_requested, el, eta,
            dumb_terminal() ? "     " : "\033[K");
    fflush(r->o->log);
    r->bar_shown = true;
}

void h2b__run_warn(const struct run *r, const char *fmt, ...)
{
    if (!r->o->log)
        return;
    va_list ap;
    va_start(ap, fmt);
    fputs("h2bench run: ", r->o->log);
    vfprintf(r->o->log, fmt, ap);
    va_end(ap);
}

void h2b__run_progress_clear(struct run *r)
{
    if (r->bar_shown) {
        if (dumb_terminal())
            fprintf(r->o->log, "\r%79s\r", "");
        else
            fprintf(r->o->log, "\r\033[K");
        fflush(r->o->log);
        r->bar_shown = false;
    }
}

/* ---- output ---- */

static void fmt_ns(char *buf, size_t size, bool have, uint64_t ns)
{
    if (!have)
        snprintf(buf, size, "-");
    else if (ns >= 10 * H2B_NS_PER_MS)
        snprintf(buf, size, "%.1fms", (double)ns / 1e6);
    else if (ns >= H2B_NS_PER_MS)
        snprintf(buf, size, "%.2fms", (double)ns / 1e6);
    else
        snprintf(buf, size, "%.0fus", (double)ns / 1e3);
}

/* Under a cell's line: its objectives' verdicts over the run (the breached ones named) and the
 * capacity its search found; h2bench gate judges them from the results. */
static void print_verdicts(FILE *f, const struct h2b_cell_metrics *m)
{
    size_t pass = 0, bad = 0, ne = 0, windows = 0, wbad = 0;
    char names[256] = "";
    size_t used = 0;
    for (size_t k = 0; k < m->slo.n; k++) {
        const struct h2b_results_slo *v = h2b_model_array_at(&h2b_results_slo_model, &m->slo, k);
        bool run = v->scope && strcmp(v->scope, "run") == 0;
        bool failed = v->verdict && strcmp(v->verdict, "fail") == 0;
        if (!run) {
            windows++;
            wbad += failed;
            continue;
        }
        if (failed && used < sizeof(names))
            used += (size_t)snprintf(names + used, sizeof(names) - used, "%s%s", bad ? ", " : "",
                                     v->objective ? v->objective : "?");
        bad += failed;
        pass += v->verdict && strcmp(v->verdict, "pass") == 0;
        ne += !failed && !(v->verdict && strcmp(v->verdict, "pass") == 0);
    }
    if (pass + bad + ne) {
        fprintf(f, "      slo over the run: %zu held, %zu breached%s%s%s, %zu not evaluable", pass,
                bad, bad ? " (" : "", names, bad ? ")" : "", ne);
        if (windows)
            fprintf(f, "; windows: %zu of %zu verdicts breached", wbad, windows);
        fprintf(f, "\n");
    }
    const struct h2b_results_search *s = &m->search;
    if (!s->base.present)
        return;
    if (isnan(s->capacity_per_s))
        fprintf(f, "      capacity: none, the lowest step fails (%zu steps, %.1f s)\n", s->steps.n,
                s->search_s);
    else
        fprintf(f, "      capacity: %.1f req/s (%zu steps, %.1f s)\n", s->capacity_per_s,
                s->steps.n, s->search_s);
}

void h2b__run_print_cell_line(const struct run *r, size_t i, const struct cell_result *res)
{
    const struct h2b_cell *c = &r->cells[i];
    FILE *f = r->o->report;
    char p50[16], p99[16], cs[32];
    if (!f)
        return;
    snprintf(cs, sizeof(cs), "%u/%u", c->streams_requested, c->streams_effective);
    char proto[16] = "";
    if (proto_axis(r))
        h2b__run_proto_label(proto, sizeof(proto), c->protocol, c->tls);
    if (!res->ok) {
        fprintf(f, "%4zu  %-9s%s%-6s %6u %9s  %s: %s\n", i + 1, r->s->targets[c->target].name,
                proto[0] ? " " : "", proto, c->connections, cs, res->skipped ? "SKIPPED" : "FAILED",
                res->reason);
        fflush(f);
        return;
    }
    fmt_ns(p50, sizeof(p50), res->m.have_percentiles, res->m.lat_p50_ns);
    fmt_ns(p99, sizeof(p99), res->m.have_percentiles, res->m.lat_p99_ns);
    fprintf(f, "%4zu  %-9s%s%-6s %6u %9s %11.0f %9.3f %8s %8s %7llu %6.2f %6.2f %8llu", i + 1,
            r->s->targets[c->target].name, proto[0] ? " " : "", proto, c->connections, cs,
            res->m.req_per_s, res->m.bytes_per_s / 1e9, p50, p99, (unsigned long long)res->m.failed,
            res->client_cpu_s, res->server_cpu_s, (unsigned long long)res->server_rss_kib);
    if (c->tls && res->m.tls_version[0] && isfinite(res->m.tls_records_per_response))
        fprintf(f, " %6.2f %s", res->m.tls_records_per_response, res->m.tls_version);
    else if (c->tls && res->m.tls_version[0])
        fprintf(f, " %6s %s", "-", res->m.tls_version);
    fprintf(f, "\n");
    print_verdicts(f, &res->m);
    fflush(f);
}

void h2b__run_print_header(const struct run *r)
{
    if (!r->o->report)
        return;
    bool axis = proto_axis(r);
    fprintf(r->o->report, "%4s  %-9s%s%-6s %6s %9s %11s %9s %8s %8s %7s %6s %6s %8s%s\n", "cell",
            "target", axis ? " " : "", axis ? "proto" : "", "conns", "streams", "req/s", "GB/s",
            "p50", "p99", "failed", "cli_s", "srv_s", "srv_KiB", axis ? " rec/rsp tls" : "");
    fflush(r->o->report); /* out before the first cell runs, as each cell's line is */
}

static void print_cells_plan(const struct run *r)
{
    FILE *f = r->o->report;
    fprintf(f, "%s: %zu cell%s (%zu target%s)\n", r->s->name, r->ncells, r->ncells == 1 ? "" : "s",
            r->s->ntargets, r->s->ntargets == 1 ? "" : "s");
    for (size_t t = 0; t < r->s->ntargets; t++)
        fprintf(f, "  target %-9s max streams %u (%s)\n", r->s->targets[t].name, r->server_max[t],
                r->server_max_probed[t] ? "probed" : "configured, not probed in a dry run");
    bool axis = proto_axis(r);
    fprintf(f, "%4s  %-9s %6s %9s %9s %10s %8s %6s %6s%s\n", "cell", "target", "conns", "requested",
            "effective", "server_max", "frame", "window", "repeat", axis ? "  proto" : "");
    for (size_t i = 0; i < r->ncells; i++) {
        const struct h2b_cell *c = &r->cells[i];
        char frame[16] = "-", window[16] = "-";
        if (c->frame_size)
            snprintf(frame, sizeof(frame), "%u", c->frame_size);
        if (c->window_bits)
            snprintf(window, sizeof(window), "2^%u-1", c->window_bits);
        char proto[16] = "";
        if (axis)
            h2b__run_proto_label(proto, sizeof(proto), c->protocol, c->tls);
        struct h2b_diag why = {0};
        bool serves = h2b_target_serves(&r->s->targets[c->target], r->peers, c->protocol, c->tls,
                                        h2b__run_have_h3(), &why) &&
                      h2b__run_client_serves(r, c, &why);
        fprintf(f, "%4zu  %-9s %6u %9u %9u %10u %8s %6s %6u%s%s%s%s\n", i + 1,
                r->s->targets[c->target].name, c->connections, c->streams_requested,
                c->streams_effective, c->server_max_streams, frame, window, c->repeat,
                axis ? "  " : "", proto, serves ? "" : "  skipped: ", serves ? "" : why.message);
    }
}

enum metric { METRIC_REQ_PER_S, METRIC_REQ_PER_CPU_S, METRIC_GB_PER_S, METRIC_GBIT_PER_S };

/* A successful cell's value of metric; false when it has none. */
static bool cell_metric(const json_t *matrix_doc, size_t j, enum metric metric, double *out)
{
    struct h2b_results_cell c;
    bool ok = false;
    if (h2b_results_get_cell(matrix_doc, j, &c) == H2B_OK && c.status &&
        strcmp(c.status, "ok") == 0) {
        switch (metric) {
        case METRIC_REQ_PER_S:
            *out = c.req_per_s;
            ok = !isnan(c.req_per_s);
            break;
        case METRIC_GB_PER_S:
            *out = c.bytes_per_s / 1e9;
            ok = !isnan(c.bytes_per_s);
            break;
        case METRIC_GBIT_PER_S:
            *out = c.bytes_per_s * 8 / 1e9;
            ok = !isnan(c.bytes_per_s);
            break;
        case METRIC_REQ_PER_CPU_S:
            ok = !isnan(c.succeeded) && c.server_cpu_s > 0;
            *out = ok ? c.succeeded / c.server_cpu_s : 0;
            break;
        }
    }
    h2b_results_cell_free(&c);
    return ok;
}

static bool same_point(const struct h2b_cell *a, const struct h2b_cell *b)
{
    return a->connections == b->connections && a->streams_requested == b->streams_requested &&
           a->frame_size == b->frame_size && a->window_bits == b->window_bits &&
           a->protocol == b->protocol && a->tls == b->tls;
}

/* Median of metric over the repeats of target t at point c; 0 when no cell has it. */
static double point_median(const struct run *r, const json_t *doc, const struct h2b_cell *c,
                           size_t t, enum metric metric)
{
    double vals[1024];
    size_t nv = 0;
    for (size_t j = 0; j < r->ncells && j < h2b_results_cell_count(doc) && nv < 1024; j++) {
        if (r->cells[j].target == t && same_point(&r->cells[j], c) &&
            cell_metric(doc, j, metric, &vals[nv]))
            nv++;
    }
    return nv ? h2b_stats_median(vals, nv) : 0;
}

/* One row per matrix point, one column per target that ran (a target --filter left out has
 * none) and each later one's ratio to the first: "nghttpd/h2ref 0.97x" reads "nghttpd does 0.97
 * times what h2ref does", the orientation of the report's tables and of compare's head/base
 * (above 1 means more of the metric than the reference, the first target). */
static void print_summary(const struct run *r, const json_t *doc, enum metric metric,
                          const char *what)
{
    FILE *f = r->o->report;
    /* Only the cells that ran (an interrupted run has fewer entries than cells). */
    size_t ran = h2b_results_cell_count(doc) < r->ncells ? h2b_results_cell_count(doc) : r->ncells;
    size_t tg[16], nt = 0;
    for (size_t t = 0; t < r->s->ntargets && nt < 16; t++) {
        bool has = false;
        for (size_t i = 0; i < ran && !has; i++)
            has = r->cells[i].target == t;
        if (has)
            tg[nt++] = t;
    }
    if (!f || nt == 0)
        return;
    bool axis = proto_axis(r);
    fprintf(f, "\n%s, median over repeats:\n%s%-6s %-9s", what, axis ? "proto   " : "", "conns",
            "streams");
    for (size_t t = 0; t < nt; t++)
        fprintf(f, " %12s", r->s->targets[tg[t]].name);
    for (size_t t = 1; t < nt; t++) {
        char ratio[64];
        snprintf(ratio, sizeof(ratio), "%s/%s", r->s->targets[tg[t]].name,
                 r->s->targets[tg[0]].name);
        fprintf(f, " %15s", ratio);
    }
    fprintf(f, "\n");
    for (size_t i = 0; i < ran; i++) {
        const struct h2b_cell *c = &r->cells[i];
        bool first = true;
        for (size_t j = 0; j < i; j++)
            first = first && !same_point(&r->cells[j], c);
        if (!first)
            continue;
        double v[16];
        for (size_t t = 0; t < nt; t++)
            v[t] = point_median(r, doc, c, tg[t], metric);
        char cs[32];
        snprintf(cs, sizeof(cs), "%u/%u", c->streams_requested, c->streams_effective);
        if (axis) {
            char proto[16];
            h2b__run_proto_label(proto, sizeof(proto), c->protocol, c->tls);
            fprintf(f, "%-7s ", proto);
        }
        fprintf(f, "%-6u %-9s", c->connections, cs);
        for (size_t t = 0; t < nt; t++) {
            if (v[t] <= 0)
                fprintf(f, " %12s", "-");
            else if (metric == METRIC_GB_PER_S || metric == METRIC_GBIT_PER_S)
                fprintf(f, " %12.3f", v[t]);
            else
                fprintf(f, " %12.0f", v[t]);
        }
        for (size_t t = 1; t < nt; t++) {
            if (v[0] > 0 && v[t] > 0)
                fprintf(f, " %14.2fx", v[t] / v[0]);
            else
                fprintf(f, " %15s", "-");
        }
        if (c->frame_size || c->window_bits)
            fprintf(f, "  frame %u, window 2^%u-1", c->frame_size, c->window_bits);
        fprintf(f, "\n");
    }
}

void h2b__run_print_plan(const struct run *r)
{
    if (r->s->has_matrix)
        print_cells_plan(r);
    if (r->s->micro.enabled)
        fprintf(r->o->report, "micro: h2bench micro --profile %s --filter '%s' --cpu %u\n",
                r->s->micro.profile, r->s->micro.filter, r->s->micro.cpu);
}

void h2b__run_print_summaries(const struct run *r, const json_t *doc)
{
    print_summary(r, doc, METRIC_REQ_PER_S, "req/s");
    if (strncmp(r->s->matrix.path, "/bytes/", 7) == 0) {
        print_summary(r, doc, METRIC_GB_PER_S, "GB/s (response bytes)");
        if (proto_axis(r)) /* the bulk tables people draw (nspeed's) are in bits */
            print_summary(r, doc, METRIC_GBIT_PER_S, "Gbit/s (response bytes x 8)");
    }
    /* On a shared machine throughput follows whatever CPU the server got; requests per CPU
     * second of the server is the steadier comparison (its CPU time includes warm-up). */
    print_summary(r, doc, METRIC_REQ_PER_CPU_S, "requests per server CPU second");
}

/* "What a request costs each server": one row per target and point, null as "-" (the results
 * file says why). */
void h2b__run_print_budgets(const struct run *r, const json_t *doc)
{
    FILE *f = r->o->report;
    if (!f)
        return;
    fprintf(f, "\nWhat a request costs each server (budgets, exact; instructions: callgrind):\n");
    int w = 10; /* the target column: as wide as the longest name */
    for (size_t t = 0; t < r->s->ntargets; t++) {
        size_t len = strlen(r->s->targets[t].name);
        w = len > (size_t)w && len < 64 ? (int)len : w;
    }
    fprintf(f, "%-*s %9s %9s %10s %8s %8s %9s %12s %9s\n", w, "target", "point", "allocs/req",
            "bytes/req", "reads", "writes", "wr/read", "instr/req", "KiB/conn");
    size_t ran = h2b_results_cell_count(doc) < r->ncells ? h2b_results_cell_count(doc) : r->ncells;
    for (size_t i = 0; i < ran; i++) {
        const struct h2b_cell *c = &r->cells[i];
        bool first = c->repeat == 0;
        for (size_t j = 0; j < i && first; j++)
            first = !(r->cells[j].target == c->target && same_point(&r->cells[j], c));
        struct h2b_results_cell e;
        bool have = first && h2b_results_get_cell(doc, i, &e) == H2B_OK && e.budgets.base.present;
        char point[32], cols[H2B_BUDGET_NMETRICS][24];
        snprintf(point, sizeof(point), "%ux%u", c->connections, c->streams_effective);
        for (int m = 0; have && m < H2B_BUDGET_NMETRICS; m++) {
            double x = h2b_results_budget_get(&e.budgets, m);
            if (!isnan(x))
                snprintf(cols[m], sizeof(cols[m]), m == H2B_BUDGET_INSTRUCTIONS ? "%.0f" : "%.2f",
                         x);
            else
                snprintf(cols[m], sizeof(cols[m]), "-");
        }
        if (first)
            h2b_results_cell_free(&e);
        if (!have)
            continue;
        fprintf(f, "%-*s %9s %9s %10s %8s %8s %9s %12s %9s\n", w, r->s->targets[c->target].name,
                point, cols[H2B_BUDGET_ALLOCS], cols[H2B_BUDGET_BYTES], cols[H2B_BUDGET_READS],
                cols[H2B_BUDGET_WRITES], cols[H2B_BUDGET_WRITES_PER_READ],
                cols[H2B_BUDGET_INSTRUCTIONS], cols[H2B_BUDGET_RSS_PER_CONN]);
    }
}
