/*
 * md.c - REPORT.md: the sections of a performance write-up, in the order a reviewer reads them.
 *
 * Method first (what was measured where, and why the absolute numbers only hold here), then the
 * component suite, the gated hot paths, the end-to-end matrix, the A/B against a base and the
 * history. A section without data is left out rather than printed empty; a metric that was not
 * measured prints "n/a" with the reason the results file gives, never 0.
 *
 * The output is deterministic for given inputs (no generation timestamp, inputs named by their
 * base names), so golden tests compare it byte for byte.
 */
#include "error.h"
#include "report_int.h"
#include "stats.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#define MAX_REPEATS 256
#define B(x) char x[64]

static void chart(const struct h2b__report *rep, struct h2b_strbuf *o, enum h2b__chart_kind kind)
{
    if (!rep->charts_rendered)
        return;
    for (size_t i = 0; i < rep->n_charts; i++) {
        const struct h2b__chart *c = &rep->charts[i];
        if (c->kind == kind)
            h2b_strbuf_printf(o, "\n![%s](%s.png) ([SVG](%s.svg))\n", c->alt, c->name, c->name);
    }
}

static const char *env_str(const struct h2b_rdata_results *r, const char *key)
{
    json_t *v = json_object_get(r->env, key);
    return json_is_string(v) ? json_string_value(v) : NULL;
}

static long env_long(const struct h2b_rdata_results *r, const char *key)
{
    json_t *v = json_object_get(r->env, key);
    return json_is_integer(v) ? (long)json_integer_value(v) : -1;
}

static void title(const struct h2b__report *rep, struct h2b_strbuf *o)
{
    const struct h2b_rdata_results *r = rep->head;
    h2b_strbuf_printf(o, "# h2bench performance report: %s\n\n", r->scenario_name);
    h2b_strbuf_printf(o, "Measured %s with %s %s", r->created, r->tool_name, r->tool_version);
    if (r->git_commit)
        h2b_strbuf_printf(o, " (commit `%s`)", r->git_commit);
    h2b_strbuf_printf(o, "; results `%s`.", h2b__basename(r->path));
    if (rep->n_runs > 1)
        h2b_strbuf_printf(o,
                          " The History section covers %zu runs; every other section "
                          "describes the last one.",
                          rep->n_runs);
    h2b_strbuf_puts(o, "\n");
    if (!rep->charts_rendered)
        h2b_strbuf_printf(o,
                          "\n> **Charts not rendered:** %s. Their gnuplot scripts and data "
                          "are in this directory; run `gnuplot *.gp` here to draw them.\n",
                          rep->charts_note);
}

static long count_repeats(const struct h2b_rdata_results *r)
{
    long max = -1;
    for (size_t i = 0; i < r->n_cells; i++) {
        if (r->cells[i].repeat > max)
            max = r->cells[i].repeat;
    }
    return max + 1;
}

static void method(const struct h2b__report *rep, struct h2b_strbuf *o)
{
    static const char *const known[] = {"cpu_model",  "cpus",     "kernel",  "compiler",
                                        "build_type", "nghttp2",  "openssl", "perf_counters",
                                        "pinning",    "warnings", NULL};
    const struct h2b_rdata_results *r = rep->head;
    h2b_strbuf_puts(o, "\n## Method\n\n");
    h2b_strbuf_printf(o, "- **Scenario:** `%s`", r->scenario_name);
    if (r->scenario_file)
        h2b_strbuf_printf(o, " from `%s`", r->scenario_file);
    if (r->scenario_sha256)
        h2b_strbuf_printf(o, " (sha256 `%.12s`)", r->scenario_sha256);
    h2b_strbuf_printf(o, ", measured %s.\n", r->created);
    const char *cpu = env_str(r, "cpu_model");
    long cpus = env_long(r, "cpus");
    h2b_strbuf_printf(o, "- **Machine:** %s", cpu ? cpu : "unknown CPU");
    if (cpus > 0)
        h2b_strbuf_printf(o, ", %ld CPU%s", cpus, cpus == 1 ? "" : "s");
    if (env_str(r, "kernel"))
        h2b_strbuf_printf(o, ", Linux %s", env_str(r, "kernel"));
    h2b_strbuf_puts(o, ".\n");
    const char *bt = env_str(r, "build_type");
    h2b_strbuf_printf(o, "- **Build:** %s, %s build",
                      env_str(r, "compiler") ? env_str(r, "compiler") : "unknown compiler",
                      bt ? bt : "unknown");
    if (env_str(r, "nghttp2"))
        h2b_strbuf_printf(o, "; nghttp2 %s", env_str(r, "nghttp2"));
    if (env_str(r, "openssl"))
        h2b_strbuf_printf(o, ", OpenSSL %s", env_str(r, "openssl"));
    h2b_strbuf_puts(o, ".");
    if (bt && strcmp(bt, "Release") != 0)
        h2b_strbuf_printf(o, " **Not a Release build: these numbers do not count for gates.**");
    h2b_strbuf_puts(o, "\n");
    json_t *pin = json_object_get(r->env, "pinning");
    json_t *srv = json_object_get(pin, "server"), *cli = json_object_get(pin, "client");
    if (json_is_string(srv) && json_is_string(cli))
        h2b_strbuf_printf(o, "- **Pinning:** servers on CPU %s, the client on CPU %s.\n",
                          json_string_value(srv), json_string_value(cli));
    else
        h2b_strbuf_puts(o, "- **Pinning:** none recorded; server and client shared the CPUs.\n");
    json_t *pc = json_object_get(r->env, "perf_counters");
    if (json_is_boolean(pc))
        h2b_strbuf_printf(o, "- **Hardware counters:** %s.\n",
                          json_is_true(pc) ? "available (instructions/op from perf_event_open)"
                                           : "not available on this machine; instructions/op "
                                             "only where callgrind measured them");
    if (r->n_cells > 0) {
        long reps = count_repeats(r);
        h2b_strbuf_printf(o,
                          "- **Repeats:** each matrix cell measured %ld time%s, targets "
                          "alternating within each cell%s.\n",
                          reps, reps == 1 ? "" : "s",
                          reps > 1 ? "; tables show the median of the repeats" : "");
    }
    if (r->n_micro > 0) {
        long fmin = -1, fmax = -1;
        for (size_t i = 0; i < r->n_micro; i++) {
            long f = r->micro[i].forks;
            if (f > 0 && (fmin < 0 || f < fmin))
                fmin = f;
            if (f > fmax)
                fmax = f;
        }
        if (fmin > 0 && fmin == fmax)
            h2b_strbuf_printf(o,
                              "- **Forks:** every component benchmark ran in %ld fresh "
                              "process%s; percentiles merged across forks from histograms, "
                              "never averaged.\n",
                              fmin, fmin == 1 ? "" : "es");
        else if (fmin > 0)
            h2b_strbuf_printf(o,
                              "- **Forks:** %ld to %ld fresh processes per component "
                              "benchmark; percentiles merged across forks from histograms.\n",
                              fmin, fmax);
    }
    /* Anything else the producer recorded in env, so no fingerprint field is silently lost. */
    const char *key;
    json_t *v;
    bool first = true;
    json_object_foreach(r->env, key, v)
    {
        bool is_known = false;
        for (const char *const *k = known; *k; k++)
            is_known = is_known || strcmp(*k, key) == 0;
        if (is_known || !(json_is_string(v) || json_is_number(v) || json_is_boolean(v)))
            continue;
        h2b_strbuf_printf(o, "%s%s ", first ? "- **Also recorded:** " : ", ", key);
        if (json_is_string(v))
            h2b_strbuf_printf(o, "`%s`", json_string_value(v));
        else if (json_is_integer(v))
            h2b_strbuf_printf(o, "%lld", (long long)json_integer_value(v));
        else if (json_is_real(v))
            h2b_strbuf_printf(o, "%g", json_real_value(v));
        else
            h2b_strbuf_puts(o, json_is_true(v) ? "true" : "false");
        first = false;
    }
    if (!first)
        h2b_strbuf_puts(o, ".\n");
    json_t *warn = json_object_get(r->env, "warnings");
    size_t wi;
    json_array_foreach(warn, wi, v)
    {
        if (json_is_string(v))
            h2b_strbuf_printf(o, "- **Warning:** %s\n", json_string_value(v));
    }
    h2b_strbuf_printf(o, "\n> Absolute numbers hold for this machine only");
    if (cpus > 0)
        h2b_strbuf_printf(o, " (%ld CPU%s, shared with whatever else ran)", cpus,
                          cpus == 1 ? "" : "s");
    h2b_strbuf_puts(o, ". Compare ratios measured side by side in one run; do not compare these "
                       "numbers with another machine's.\n");
}

static void micro(const struct h2b__report *rep, struct h2b_strbuf *o)
{
    const struct h2b_rdata_results *r = rep->head;
    if (r->n_micro == 0)
        return;
    h2b_strbuf_puts(o, "\n## Component results\n\n");
    h2b_strbuf_printf(o,
                      "%zu benchmark%s. ns/op is the median over timed epochs; B/op and "
                      "allocs/op are exact counts from the counting allocator; p50, p99 and "
                      "p99.9 are per-operation latencies.\n\n",
                      r->n_micro, r->n_micro == 1 ? "" : "s");
    h2b_strbuf_puts(o, "| Benchmark | ns/op | B/op | allocs/op | p50 | p99 | p99.9 | "
                       "instructions/op | forks |\n"
                       "|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    bool notes = false;
    for (size_t i = 0; i < r->n_micro; i++) {
        const struct h2b_rdata_micro *m = &r->micro[i];
        B(a);
        B(b);
        B(c);
        B(d);
        B(e);
        B(f);
        B(g);
        h2b_strbuf_printf(o, "| `%s` | %s | %s | %s | %s | %s | %s | %s | ", m->name,
                          h2b__fmt_ns(m->ns_per_op, a, 64), h2b__fmt_count(m->bytes_per_op, b, 64),
                          h2b__fmt_count(m->allocs_per_op, c, 64), h2b__fmt_ns(m->p50_ns, d, 64),
                          h2b__fmt_ns(m->p99_ns, e, 64), h2b__fmt_ns(m->p999_ns, f, 64),
                          h2b__fmt_count(m->instructions_per_op, g, 64));
        if (m->forks > 0)
            h2b_strbuf_printf(o, "%ld |\n", m->forks);
        else
            h2b_strbuf_puts(o, "n/a |\n");
        notes = notes || m->note || m->error;
    }
    if (notes) {
        h2b_strbuf_puts(o, "\nNotes from the results file:\n\n");
        for (size_t i = 0; i < r->n_micro; i++) {
            const struct h2b_rdata_micro *m = &r->micro[i];
            if (m->error)
                h2b_strbuf_printf(o, "- `%s`: **failed**: %s\n", m->name, m->error);
            if (m->note)
                h2b_strbuf_printf(o, "- `%s`: %s\n", m->name, m->note);
        }
    }
    chart(rep, o, H2B__CHART_MICRO);
}

static const char *metric_label(const char *metric)
{
    static const char *const map[][2] = {{"bytes_per_op", "B/op"},
                                         {"allocs_per_op", "allocs/op"},
                                         {"p99_ns", "p99"},
                                         {"p50_ns", "p50"},
                                         {"p999_ns", "p99.9"},
                                         {"ns_per_op", "ns/op"},
                                         {"instructions_per_op", "instructions/op"}};
    for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++) {
        if (strcmp(map[i][0], metric) == 0)
            return map[i][1];
    }
    return metric;
}

static bool is_time_metric(const char *metric)
{
    size_t n = strlen(metric);
    return n > 3 && strcmp(metric + n - 3, "_ns") == 0;
}

/* The value a ceiling is checked against: for p99 the best fork's when forks are recorded (the
 * statistic noise cannot push up much), else the merged value. */
static double ceiling_value(const struct h2b_rdata_micro *m, const char *metric, bool *best_fork)
{
    *best_fork = false;
    if (strcmp(metric, "p99_ns") == 0 && m->n_p99_forks > 0) {
        double best = m->p99_forks[0];
        for (size_t i = 1; i < m->n_p99_forks; i++)
            best = m->p99_forks[i] < best ? m->p99_forks[i] : best;
        *best_fork = true;
        return best;
    }
    static const char *const names[] = {
        "bytes_per_op", "allocs_per_op",      "p99_ns", "p50_ns", "p999_ns",
        "ns_per_op",    "instructions_per_op"};
    const double vals[] = {m->bytes_per_op, m->allocs_per_op,      m->p99_ns, m->p50_ns, m->p999_ns,
                           m->ns_per_op,    m->instructions_per_op};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        if (strcmp(names[i], metric) == 0)
            return vals[i];
    }
    return NAN;
}

static void fmt_metric(const char *metric, double v, char *buf, size_t n)
{
    if (is_time_metric(metric))
        h2b__fmt_ns(v, buf, n);
    else
        h2b__fmt_count(v, buf, n);
}

static void gates(const struct h2b__report *rep, struct h2b_strbuf *o)
{
    const struct h2b_rdata_ceilings *ce = rep->ceilings;
    if (ce == NULL)
        return;
    size_t pass = 0, over = 0, missing = 0, unmeasured = 0;
    struct h2b_strbuf rows;
    h2b_strbuf_init(&rows);
    for (size_t i = 0; i < ce->n_items; i++) {
        const struct h2b_rdata_ceiling *c = &ce->items[i];
        const struct h2b_rdata_micro *m = h2b_rdata_micro_find(rep->head, c->bench);
        B(lim);
        B(cur);
        fmt_metric(c->metric, c->max, lim, sizeof(lim));
        if (m == NULL) {
            missing++;
            h2b_strbuf_printf(&rows,
                              "| `%s` | %s | %s | missing | — | ❌ missing from the "
                              "results | %s |\n",
                              c->bench, metric_label(c->metric), lim, c->why);
            continue;
        }
        bool best;
        double v = ceiling_value(m, c->metric, &best);
        if (isnan(v)) {
            unmeasured++;
            h2b_strbuf_printf(&rows, "| `%s` | %s | %s | n/a | — | ⚠️ not measured | %s |\n",
                              c->bench, metric_label(c->metric), lim, c->why);
            continue;
        }
        fmt_metric(c->metric, v, cur, sizeof(cur));
        char head[48];
        if (c->max > 0)
            snprintf(head, sizeof(head), "%s%.1f%%", v > c->max ? "−" : "",
                     fabs(c->max - v) / c->max * 100.0);
        else
            snprintf(head, sizeof(head), "%s", v > c->max ? "exceeded" : "exact");
        bool ok = v <= c->max;
        if (ok)
            pass++;
        else
            over++;
        h2b_strbuf_printf(&rows, "| `%s` | %s | %s | %s%s | %s | %s | %s |\n", c->bench,
                          metric_label(c->metric), lim, cur, best ? " (best fork)" : "", head,
                          ok ? "✅ pass" : "❌ exceeded", c->why);
    }
    h2b_strbuf_puts(o, "\n## Gated hot paths\n\n");
    size_t total = ce->n_items;
    h2b_strbuf_printf(o, "**%s %zu of %zu ceilings hold", over + missing ? "❌" : "✅", pass, total);
    if (over)
        h2b_strbuf_printf(o, ", %zu exceeded", over);
    if (missing)
        h2b_strbuf_printf(o, ", %zu missing from the results", missing);
    if (unmeasured)
        h2b_strbuf_printf(o, ", %zu not measured", unmeasured);
    h2b_strbuf_printf(o, ".** Ceilings from `%s`.\n\n", h2b__basename(ce->path));
    h2b_strbuf_puts(o, "Allocation ceilings are exact. p99 is compared as the best fork's p99 "
                       "when the results record forks, a statistic noise cannot push up much. "
                       "This table informs; `h2bench gate` decides, and confirms a p99 breach "
                       "by re-running before it fails.\n\n");
    h2b_strbuf_puts(o, "| Benchmark | Metric | Ceiling | Current | Headroom | Verdict | Why |\n"
                       "|---|---|---:|---:|---:|---|---|\n");
    h2b_strbuf_puts(o, h2b_strbuf_str(&rows));
    if (h2b_strbuf_error(&rows))
        h2b_strbuf_printf(o, "(table lost: %s)\n", h2b_strerror(h2b_strbuf_error(&rows)));
    h2b_strbuf_free(&rows);
}

/* "100/40", or per target when the targets' servers advertised different limits. */
static void streams_label(const struct h2b__report *rep, struct h2b__cellkey k, char *buf, size_t n)
{
    long eff[64];
    size_t nt = rep->n_targets < 64 ? rep->n_targets : 64;
    bool same = true;
    for (size_t t = 0; t < nt; t++) {
        eff[t] = -1;
        for (size_t i = 0; i < rep->head->n_cells; i++) {
            const struct h2b_rdata_cell *c = &rep->head->cells[i];
            if (c->connections == k.connections && c->streams_requested == k.streams &&
                strcmp(c->target, rep->targets[t]) == 0) {
                eff[t] = c->streams_effective;
                break;
            }
        }
        if (t > 0 && eff[t] >= 0 && eff[0] >= 0 && eff[t] != eff[0])
            same = false;
    }
    if (same) {
        snprintf(buf, n, "%ld/%ld", k.streams, eff[0]);
        return;
    }
    size_t o = 0;
    for (size_t t = 0; t < nt && o < n; t++)
        o += (size_t)snprintf(buf + o, n - o, "%s%ld/%ld (%s)", t ? ", " : "", k.streams, eff[t],
                              rep->targets[t]);
}

static size_t failed_in_group(const struct h2b_rdata_results *r, const char *target,
                              struct h2b__cellkey k, size_t *all)
{
    size_t f = 0;
    *all = 0;
    for (size_t i = 0; i < r->n_cells; i++) {
        const struct h2b_rdata_cell *c = &r->cells[i];
        if (c->connections != k.connections || c->streams_requested != k.streams ||
            strcmp(c->target, target) != 0)
            continue;
        (*all)++;
        f += c->failed;
    }
    return f;
}

static void matrix(const struct h2b__report *rep, struct h2b_strbuf *o)
{
    const struct h2b_rdata_results *r = rep->head;
    if (r->n_cells == 0)
        return;
    h2b_strbuf_puts(o, "\n## End-to-end matrix\n\n");
    const char *client = r->cells[0].client;
    h2b_strbuf_printf(o, "%zu target%s (", rep->n_targets, rep->n_targets == 1 ? "" : "s");
    for (size_t t = 0; t < rep->n_targets; t++)
        h2b_strbuf_printf(o, "%s%s", t ? ", " : "", rep->targets[t]);
    h2b_strbuf_printf(o,
                      ") over %zu cells, load from %s. Effective streams per connection = "
                      "min(requested, the server's SETTINGS_MAX_CONCURRENT_STREAMS, the "
                      "aggregate cap / connections).",
                      rep->n_keys, client ? client : "the client");
    if (rep->n_targets > 1)
        h2b_strbuf_printf(o, " Ratios are against %s, measured alternately in the same run.",
                          rep->targets[0]);
    h2b_strbuf_puts(o, "\n\n### Throughput\n\n| Connections | Requested/effective streams |");
    for (size_t t = 0; t < rep->n_targets; t++)
        h2b_strbuf_printf(o, " %s req/s |", rep->targets[t]);
    for (size_t t = 1; t < rep->n_targets; t++)
        h2b_strbuf_printf(o, " %s / %s |", rep->targets[t], rep->targets[0]);
    h2b_strbuf_puts(o, "\n|---:|---:|");
    for (size_t t = 0; t < 2 * rep->n_targets - 1; t++)
        h2b_strbuf_puts(o, "---:|");
    h2b_strbuf_puts(o, "\n");
    for (size_t k = 0; k < rep->n_keys; k++) {
        char sl[256];
        streams_label(rep, rep->keys[k], sl, sizeof(sl));
        h2b_strbuf_printf(o, "| %ld | %s |", rep->keys[k].connections, sl);
        double first = NAN;
        for (size_t t = 0; t < rep->n_targets; t++) {
            double v[MAX_REPEATS];
            size_t n = h2b__report_group(r, rep->targets[t], rep->keys[k], 0, v, MAX_REPEATS);
            size_t all, f = failed_in_group(r, rep->targets[t], rep->keys[k], &all);
            double med = h2b_stats_median(v, n);
            if (t == 0)
                first = med;
            B(a);
            if (n == 0)
                h2b_strbuf_puts(o, all ? " failed |" : " — |");
            else if (f)
                h2b_strbuf_printf(o, " %s (%zu of %zu repeats failed) |", h2b__fmt_rate(med, a, 64),
                                  f, all);
            else
                h2b_strbuf_printf(o, " %s |", h2b__fmt_rate(med, a, 64));
        }
        for (size_t t = 1; t < rep->n_targets; t++) {
            double v[MAX_REPEATS];
            size_t n = h2b__report_group(r, rep->targets[t], rep->keys[k], 0, v, MAX_REPEATS);
            B(a);
            h2b_strbuf_printf(o, " %s |", h2b__fmt_ratio(h2b_stats_median(v, n), first, a, 64));
        }
        h2b_strbuf_puts(o, "\n");
    }
    chart(rep, o, H2B__CHART_RPS);

    h2b_strbuf_puts(o, "\n### Latency\n\n| Connections | Requested/effective streams |");
    for (size_t t = 0; t < rep->n_targets; t++)
        h2b_strbuf_printf(o, " %s p50 | %s p99 |", rep->targets[t], rep->targets[t]);
    h2b_strbuf_puts(o, "\n|---:|---:|");
    for (size_t t = 0; t < 2 * rep->n_targets; t++)
        h2b_strbuf_puts(o, "---:|");
    h2b_strbuf_puts(o, "\n");
    bool any_merged = false, any_median = false;
    for (size_t k = 0; k < rep->n_keys; k++) {
        char sl[256];
        streams_label(rep, rep->keys[k], sl, sizeof(sl));
        h2b_strbuf_printf(o, "| %ld | %s |", rep->keys[k].connections, sl);
        for (size_t t = 0; t < rep->n_targets; t++) {
            for (int q = 0; q < 2; q++) {
                bool merged;
                double v = h2b__report_group_latency(r, rep->targets[t], rep->keys[k],
                                                     q ? 99.0 : 50.0, &merged);
                B(a);
                h2b_strbuf_printf(o, " %s |", isnan(v) ? "—" : h2b__fmt_ns(v, a, 64));
                size_t all;
                size_t f = failed_in_group(r, rep->targets[t], rep->keys[k], &all);
                if (!isnan(v) && all - f > 1) {
                    any_merged = any_merged || merged;
                    any_median = any_median || !merged;
                }
            }
        }
        h2b_strbuf_puts(o, "\n");
    }
    if (any_merged || any_median) {
        h2b_strbuf_puts(o, "\nWith several repeats, ");
        if (any_merged)
            h2b_strbuf_puts(o, "percentiles come from the repeats' histograms merged (never "
                               "averaged)");
        if (any_merged && any_median)
            h2b_strbuf_puts(o, "; cells without histograms show ");
        else if (any_median)
            h2b_strbuf_puts(o, "cells show ");
        if (any_median)
            h2b_strbuf_puts(o, "the median of the repeats' percentiles (the results carry no "
                               "histograms to merge)");
        h2b_strbuf_puts(o, ".\n");
    }
    chart(rep, o, H2B__CHART_LATENCY);

    bool header = false;
    for (size_t i = 0; i < r->n_cells; i++) {
        const struct h2b_rdata_cell *c = &r->cells[i];
        bool bad = c->failed || c->failed_requests > 0 || c->errors > 0;
        if (!bad && !c->note)
            continue;
        if (!header)
            h2b_strbuf_puts(o, "\n### Failures, errors and notes\n\n");
        header = true;
        h2b_strbuf_printf(o, "- %s at %ld connection%s × %ld stream%s, repeat %ld: ", c->target,
                          c->connections, c->connections == 1 ? "" : "s", c->streams_requested,
                          c->streams_requested == 1 ? "" : "s", c->repeat);
        B(a);
        B(b);
        if (c->failed)
            h2b_strbuf_printf(o, "**cell failed**: %s", c->reason);
        else if (bad)
            h2b_strbuf_printf(
                o, "%s failed requests, %s errors",
                h2b__fmt_count(isnan(c->failed_requests) ? 0 : c->failed_requests, a, 64),
                h2b__fmt_count(isnan(c->errors) ? 0 : c->errors, b, 64));
        if (c->note)
            h2b_strbuf_printf(o, "%s%s", c->failed || bad ? "; " : "", c->note);
        h2b_strbuf_puts(o, "\n");
    }
}

/* One A/B row: significance text from per-fork or per-repeat samples. */
static void significance(const double *b, size_t nb, const double *h, size_t nh, bool time,
                         const char *unit, char *buf, size_t n)
{
    if (nb < 2 || nh < 2) {
        snprintf(buf, n, "n/a (%zu %s in base, %zu in head; needs 2 a side)", nb, unit, nh);
        return;
    }
    struct h2b_stats_ab ab = h2b_stats_welch(b, nb, h, nh);
    B(lo);
    B(hi);
    if (time) {
        h2b__fmt_signed_ns(ab.lo, lo, 64);
        h2b__fmt_signed_ns(ab.hi, hi, 64);
    } else {
        h2b__fmt_signed_rate(ab.lo, lo, 64);
        h2b__fmt_signed_rate(ab.hi, hi, 64);
    }
    snprintf(buf, n, "%s: 99.9%% CI of head − base [%s, %s], %zu+%zu %s",
             ab.significant ? "**yes**" : "no", lo, hi, nb, nh, unit);
}

static void ab_micro(const struct h2b__report *rep, struct h2b_strbuf *o)
{
    const struct h2b_rdata_results *base = rep->base, *head = rep->head;
    size_t shared = 0;
    for (size_t i = 0; i < head->n_micro; i++)
        shared += h2b_rdata_micro_find(base, head->micro[i].name) != NULL;
    if (shared == 0)
        return;
    h2b_strbuf_puts(o, "\n### Component benchmarks\n\n"
                       "| Benchmark | Metric | Base | Head | Ratio | Significant? |\n"
                       "|---|---|---:|---:|---:|---|\n");
    for (size_t i = 0; i < head->n_micro; i++) {
        const struct h2b_rdata_micro *h = &head->micro[i];
        const struct h2b_rdata_micro *b = h2b_rdata_micro_find(base, h->name);
        if (b == NULL)
            continue;
        B(x);
        B(y);
        B(z);
        char sig[256];
        significance(b->ns_forks, b->n_ns_forks, h->ns_forks, h->n_ns_forks, true, "forks", sig,
                     sizeof(sig));
        h2b_strbuf_printf(o, "| `%s` | ns/op | %s | %s | %s | %s |\n", h->name,
                          h2b__fmt_ns(b->ns_per_op, x, 64), h2b__fmt_ns(h->ns_per_op, y, 64),
                          h2b__fmt_ratio(h->ns_per_op, b->ns_per_op, z, 64), sig);
        significance(b->p99_forks, b->n_p99_forks, h->p99_forks, h->n_p99_forks, true, "forks", sig,
                     sizeof(sig));
        h2b_strbuf_printf(o, "| | p99 | %s | %s | %s | %s |\n", h2b__fmt_ns(b->p99_ns, x, 64),
                          h2b__fmt_ns(h->p99_ns, y, 64),
                          h2b__fmt_ratio(h->p99_ns, b->p99_ns, z, 64), sig);
        const char *names[2] = {"B/op", "allocs/op"};
        double bv[2] = {b->bytes_per_op, b->allocs_per_op};
        double hv[2] = {h->bytes_per_op, h->allocs_per_op};
        for (int k = 0; k < 2; k++) {
            const char *verdict = isnan(bv[k]) || isnan(hv[k]) ? "n/a (not measured)"
                                  : bv[k] == hv[k]             ? "no: exact counts, equal"
                                                               : "**yes**: exact counts differ";
            h2b_strbuf_printf(o, "| | %s | %s | %s | %s | %s |\n", names[k],
                              h2b__fmt_count(bv[k], x, 64), h2b__fmt_count(hv[k], y, 64),
                              h2b__fmt_ratio(hv[k], bv[k], z, 64), verdict);
        }
    }
}

static void ab_matrix(const struct h2b__report *rep, struct h2b_strbuf *o)
{
    const struct h2b_rdata_results *base = rep->base, *head = rep->head;
    bool header = false;
    for (size_t k = 0; k < rep->n_keys; k++) {
        for (size_t t = 0; t < rep->n_targets; t++) {
            double hv[MAX_REPEATS], bv[MAX_REPEATS];
            size_t nh = h2b__report_group(head, rep->targets[t], rep->keys[k], 0, hv, MAX_REPEATS);
            size_t nb = h2b__report_group(base, rep->targets[t], rep->keys[k], 0, bv, MAX_REPEATS);
            if (nh == 0 || nb == 0)
                continue;
            if (!header)
                h2b_strbuf_puts(o, "\n### End-to-end cells\n\n"
                                   "| Target | Connections | Streams | Metric | Base | Head | "
                                   "Ratio | Significant? |\n"
                                   "|---|---:|---:|---|---:|---:|---:|---|\n");
            header = true;
            char sig[256];
            B(x);
            B(y);
            B(z);
            significance(bv, nb, hv, nh, false, "repeats", sig, sizeof(sig));
            double mb = h2b_stats_median(bv, nb), mh = h2b_stats_median(hv, nh);
            h2b_strbuf_printf(o, "| %s | %ld | %ld | req/s | %s | %s | %s | %s |\n",
                              rep->targets[t], rep->keys[k].connections, rep->keys[k].streams,
                              h2b__fmt_rate(mb, x, 64), h2b__fmt_rate(mh, y, 64),
                              h2b__fmt_ratio(mh, mb, z, 64), sig);
            nh = h2b__report_group(head, rep->targets[t], rep->keys[k], 2, hv, MAX_REPEATS);
            nb = h2b__report_group(base, rep->targets[t], rep->keys[k], 2, bv, MAX_REPEATS);
            significance(bv, nb, hv, nh, true, "repeats", sig, sizeof(sig));
            bool merged;
            double pb =
                h2b__report_group_latency(base, rep->targets[t], rep->keys[k], 99.0, &merged);
            double ph =
                h2b__report_group_latency(head, rep->targets[t], rep->keys[k], 99.0, &merged);
            h2b_strbuf_printf(o, "| | | | p99 | %s | %s | %s | %s |\n", h2b__fmt_ns(pb, x, 64),
                              h2b__fmt_ns(ph, y, 64), h2b__fmt_ratio(ph, pb, z, 64), sig);
        }
    }
}

static void ab(const struct h2b__report *rep, struct h2b_strbuf *o)
{
    const struct h2b_rdata_results *base = rep->base, *head = rep->head;
    if (base == NULL)
        return;
    h2b_strbuf_puts(o, "\n## A/B against the base\n\n");
    h2b_strbuf_printf(o, "Base `%s` (measured %s", h2b__basename(base->path), base->created);
    if (base->git_commit)
        h2b_strbuf_printf(o, ", commit `%s`", base->git_commit);
    h2b_strbuf_printf(o, ") against head `%s` (measured %s", h2b__basename(head->path),
                      head->created);
    if (head->git_commit)
        h2b_strbuf_printf(o, ", commit `%s`", head->git_commit);
    h2b_strbuf_puts(o, "). Ratio is head / base. A difference is significant when the 99.9% "
                       "Welch confidence interval of head − base, from the per-fork or "
                       "per-repeat values, excludes zero; with fewer than two values a side "
                       "there is no test and the table says n/a. Allocation counts are exact, so "
                       "any difference in them is real.");
    const char *bcpu = env_str(base, "cpu_model"), *hcpu = env_str(head, "cpu_model");
    if (bcpu && hcpu && strcmp(bcpu, hcpu) != 0)
        h2b_strbuf_printf(o,
                          " **The two runs were measured on different CPUs (%s vs %s): "
                          "timing ratios mix code and machine.**",
                          bcpu, hcpu);
    h2b_strbuf_puts(o, "\n");
    ab_micro(rep, o);
    ab_matrix(rep, o);
    bool first = true;
    for (size_t i = 0; i < head->n_micro; i++) {
        if (h2b_rdata_micro_find(base, head->micro[i].name) == NULL) {
            h2b_strbuf_printf(o, "%s`%s`", first ? "\nOnly in head: " : ", ", head->micro[i].name);
            first = false;
        }
    }
    if (!first)
        h2b_strbuf_puts(o, ".\n");
    first = true;
    for (size_t i = 0; i < base->n_micro; i++) {
        if (h2b_rdata_micro_find(head, base->micro[i].name) == NULL) {
            h2b_strbuf_printf(o, "%s`%s`", first ? "\nOnly in base: " : ", ", base->micro[i].name);
            first = false;
        }
    }
    if (!first)
        h2b_strbuf_puts(o, ".\n");
}

static void history(const struct h2b__report *rep, struct h2b_strbuf *o)
{
    if (rep->n_runs < 2)
        return;
    h2b_strbuf_puts(o, "\n## History\n\n");
    h2b_strbuf_printf(o, "%zu runs, in the order given on the command line:\n\n", rep->n_runs);
    for (size_t r = 0; r < rep->n_runs; r++) {
        const struct h2b_rdata_results *x = rep->runs[r];
        h2b_strbuf_printf(o, "%zu. `%s`, measured %s", r + 1, h2b__basename(x->path), x->created);
        if (x->git_commit)
            h2b_strbuf_printf(o, ", commit `%s`", x->git_commit);
        h2b_strbuf_puts(o, "\n");
    }
    h2b_strbuf_puts(o, "\n| Series |");
    for (size_t r = 0; r < rep->n_runs; r++)
        h2b_strbuf_printf(o, " Run %zu |", r + 1);
    h2b_strbuf_puts(o, " Last / first |\n|---|");
    for (size_t r = 0; r <= rep->n_runs; r++)
        h2b_strbuf_puts(o, "---:|");
    h2b_strbuf_puts(o, "\n");
    const struct h2b_rdata_results *first = rep->runs[0];
    for (size_t i = 0; i < rep->head->n_micro; i++) {
        const char *name = rep->head->micro[i].name;
        h2b_strbuf_printf(o, "| `%s` ns/op |", name);
        for (size_t r = 0; r < rep->n_runs; r++) {
            const struct h2b_rdata_micro *m = h2b_rdata_micro_find(rep->runs[r], name);
            B(a);
            h2b_strbuf_printf(o, " %s |", m ? h2b__fmt_ns(m->ns_per_op, a, 64) : "—");
        }
        const struct h2b_rdata_micro *m0 = h2b_rdata_micro_find(first, name);
        B(z);
        h2b_strbuf_printf(o, " %s |\n",
                          m0 ? h2b__fmt_ratio(rep->head->micro[i].ns_per_op, m0->ns_per_op, z, 64)
                             : "—");
    }
    /* Matrix: each target's best cell (median req/s over repeats) per run. */
    for (size_t t = 0; t < rep->n_targets; t++) {
        double peak[64];
        size_t nr = rep->n_runs < 64 ? rep->n_runs : 64;
        h2b_strbuf_printf(o, "| %s peak req/s |", rep->targets[t]);
        for (size_t r = 0; r < nr; r++) {
            peak[r] = NAN;
            for (size_t k = 0; k < rep->n_keys; k++) {
                double v[MAX_REPEATS];
                size_t n = h2b__report_group(rep->runs[r], rep->targets[t], rep->keys[k], 0, v,
                                             MAX_REPEATS);
                double med = h2b_stats_median(v, n);
                if (n > 0 && (isnan(peak[r]) || med > peak[r]))
                    peak[r] = med;
            }
            B(a);
            h2b_strbuf_printf(o, " %s |", isnan(peak[r]) ? "—" : h2b__fmt_rate(peak[r], a, 64));
        }
        B(z);
        h2b_strbuf_printf(o, " %s |\n", h2b__fmt_ratio(peak[nr - 1], peak[0], z, 64));
    }
    chart(rep, o, H2B__CHART_HISTORY);
}

int h2b__report_markdown(const struct h2b__report *rep, struct h2b_strbuf *out)
{
    title(rep, out);
    method(rep, out);
    micro(rep, out);
    gates(rep, out);
    matrix(rep, out);
    ab(rep, out);
    history(rep, out);
    return h2b_strbuf_error(out);
}
