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
#include "core/buf.h"
#include "gates/ceilings.h"
#include "gates/ab.h"
#include "core/error.h"
#include "gates/gate.h"
#include "report/report_int.h"
#include "core/results.h"
#include "core/stats.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_REPEATS 256
#define B(x) char x[64]

/* Every string from a results file (names, targets, reasons, notes, environment) goes out
 * through the one escaper for where it lands (core/buf.h): txt() for markdown text, code() for
 * a code span. NULL prints nothing. */
static void txt(struct h2b_buf *o, const char *s)
{
    if (s)
        h2b_buf_md(o, s);
}

static void txt_n(struct h2b_buf *o, const char *s, size_t n)
{
    char *c = strndup(s, n);
    if (!c) {
        o->err = o->err ? o->err : H2B_ERR_NOMEM;
        return;
    }
    h2b_buf_md(o, c);
    free(c);
}

static void code(struct h2b_buf *o, const char *s)
{
    if (s)
        h2b_buf_md_code(o, s);
}

/* "`file`SEPmeasured WHEN, commit `C`": one results file in the A/B and History sections. */
static void run_line(struct h2b_buf *o, const struct h2b_rdata_results *x, const char *sep)
{
    code(o, h2b__basename(x->path));
    h2b_buf_puts(o, sep);
    h2b_buf_puts(o, "measured ");
    txt(o, x->model->created);
    if (x->tool->git_commit) {
        h2b_buf_puts(o, ", commit ");
        code(o, x->tool->git_commit);
    }
}

/* What the results measured, for the title: the scenario's name; results that ran no scenario
 * (`h2bench micro --json`, what `make gate` writes) have none and say what they hold instead. */
static void subject(struct h2b_buf *o, const struct h2b_rdata_results *r)
{
    if (r->scenario->name)
        txt(o, r->scenario->name);
    else if (r->n_cells == 0)
        h2b_buf_printf(o, "%zu micro benchmark%s", r->n_micro, r->n_micro == 1 ? "" : "s");
    else
        h2b_buf_printf(o, "%zu matrix cell%s", r->n_cells, r->n_cells == 1 ? "" : "s");
}

static void title(const struct h2b__report *rep, struct h2b_buf *o)
{
    const struct h2b_rdata_results *r = rep->head;
    h2b_buf_puts(o, "# h2bench performance report: ");
    subject(o, r);
    h2b_buf_puts(o, "\n\nMeasured ");
    txt(o, r->model->created);
    h2b_buf_puts(o, " with ");
    txt(o, r->tool->name);
    h2b_buf_puts(o, " ");
    txt(o, r->tool->version);
    if (r->tool->git_commit) {
        h2b_buf_puts(o, " (commit ");
        code(o, r->tool->git_commit);
        h2b_buf_puts(o, ")");
    }
    h2b_buf_puts(o, "; results ");
    code(o, h2b__basename(r->path));
    h2b_buf_puts(o, ".");
    if (rep->n_runs > 1)
        h2b_buf_printf(o,
                       " The History section covers %zu runs; every other section "
                       "describes the last one.",
                       rep->n_runs);
    h2b_buf_puts(o, "\n");
    if (!rep->charts_rendered)
        h2b_buf_printf(o,
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

/* Anything else the producer recorded in env, so no fingerprint field is silently lost: the
 * scalar fields of env as the model writes it (its table's order, then the keys it does not
 * know, in the file's order), less those method() shows on lines of their own. */
static void also_recorded(const struct h2b_results_env *env, struct h2b_buf *o)
{
#define SHOWN(member) offsetof(struct h2b_results_env, member)
    static const size_t shown[] = {
        SHOWN(cpu_model), SHOWN(cpus),    SHOWN(kernel),        SHOWN(compiler), SHOWN(build_type),
        SHOWN(nghttp2),   SHOWN(openssl), SHOWN(perf_counters), SHOWN(pinning),  SHOWN(warnings)};
#undef SHOWN
    json_t *all = NULL;
    if (h2b_model_to_json(&h2b_results_env_model, env, &all) != H2B_OK) {
        o->err = o->err ? o->err : H2B_ERR_NOMEM;
        return;
    }
    const char *key;
    json_t *v;
    bool first = true;
    json_object_foreach(all, key, v)
    {
        bool is_shown = false;
        for (size_t k = 0; k < sizeof(shown) / sizeof(shown[0]); k++)
            is_shown =
                is_shown || strcmp(h2b_model_key_at(&h2b_results_env_model, shown[k]), key) == 0;
        if (is_shown || !(json_is_string(v) || json_is_number(v) || json_is_boolean(v)))
            continue;
        h2b_buf_puts(o, first ? "- **Also recorded:** " : ", ");
        txt(o, key);
        h2b_buf_puts(o, " ");
        if (json_is_string(v))
            code(o, json_string_value(v));
        else if (json_is_integer(v))
            h2b_buf_printf(o, "%lld", (long long)json_integer_value(v));
        else if (json_is_real(v))
            h2b_buf_printf(o, "%g", json_real_value(v));
        else
            h2b_buf_puts(o, json_is_true(v) ? "true" : "false");
        first = false;
    }
    if (!first)
        h2b_buf_puts(o, ".\n");
    json_decref(all);
}

/* "Server I/O": each bundled or floor target's I/O backend as its cells recorded it
 * (server_io), with the reason of a fallback from io_uring, so that a run on epoll by choice is
 * told from one that fell back. Left out when no cell says. */
static void server_io(const struct h2b__report *rep, struct h2b_buf *o)
{
    const struct h2b_rdata_results *r = rep->head;
    bool any = false;
    for (size_t t = 0; t < rep->n_targets; t++) {
        const struct h2b_results_cell *e = NULL;
        for (size_t i = 0; i < r->n_cells && !e; i++)
            if (r->cells[i].e->server_io && strcmp(r->cells[i].target, rep->targets[t]) == 0)
                e = r->cells[i].e;
        if (!e)
            continue;
        h2b_buf_puts(o, any ? "; " : "- **Server I/O:** ");
        any = true;
        txt(o, rep->targets[t]);
        h2b_buf_puts(o, " ");
        txt(o, e->server_io);
        if (e->server_io_fallback) {
            h2b_buf_puts(o, " (io_uring unavailable: ");
            txt(o, e->server_io_fallback);
            h2b_buf_puts(o, ")");
        }
    }
    if (any)
        h2b_buf_puts(o, ".\n");
}

static void method(const struct h2b__report *rep, struct h2b_buf *o)
{
    const struct h2b_rdata_results *r = rep->head;
    const struct h2b_results_env *env = r->env;
    h2b_buf_puts(o, "\n## Method\n\n");
    h2b_buf_puts(o, "- **Scenario:** ");
    if (r->scenario->name)
        code(o, r->scenario->name);
    else if (r->n_cells == 0)
        h2b_buf_puts(o, "none (`h2bench micro --json` runs no scenario file)");
    else
        h2b_buf_puts(o, "none recorded in the results file");
    if (r->scenario->file) {
        h2b_buf_puts(o, " from ");
        code(o, r->scenario->file);
    }
    if (r->scenario->sha256) {
        char sha[13];
        snprintf(sha, sizeof sha, "%.12s", r->scenario->sha256);
        h2b_buf_puts(o, " (sha256 ");
        code(o, sha);
        h2b_buf_puts(o, ")");
    }
    h2b_buf_puts(o, ", measured ");
    txt(o, r->model->created);
    h2b_buf_puts(o, ".\n");
    double cpus = env->cpus;
    h2b_buf_puts(o, "- **Machine:** ");
    txt(o, env->cpu_model ? env->cpu_model : "unknown CPU");
    if (cpus > 0)
        h2b_buf_printf(o, ", %.0f CPU%s", cpus, cpus == 1 ? "" : "s");
    if (env->kernel) {
        h2b_buf_puts(o, strncmp(env->kernel, "Linux", 5) == 0 ? ", " : ", Linux ");
        txt(o, env->kernel);
    }
    h2b_buf_puts(o, ".\n");
    const char *bt = env->build_type;
    h2b_buf_puts(o, "- **Build:** ");
    txt(o, env->compiler ? env->compiler : "unknown compiler");
    h2b_buf_puts(o, ", ");
    txt(o, bt ? bt : "unknown");
    h2b_buf_puts(o, " build");
    if (env->nghttp2) {
        h2b_buf_puts(o, "; nghttp2 ");
        txt(o, env->nghttp2);
    }
    if (env->openssl) {
        h2b_buf_puts(o, ", OpenSSL ");
        txt(o, env->openssl);
    }
    h2b_buf_puts(o, ".");
    if (bt && strcmp(bt, "Release") != 0)
        h2b_buf_printf(o, " **Not a Release build: these numbers do not count for gates.**");
    h2b_buf_puts(o, "\n");
    const struct h2b_results_pinning *pin = &env->pinning;
    if (pin->server && pin->client) {
        h2b_buf_puts(o, "- **Pinning:** servers on CPU ");
        txt(o, pin->server);
        h2b_buf_puts(o, ", the client on CPU ");
        txt(o, pin->client);
        h2b_buf_puts(o, ".\n");
    } else
        h2b_buf_puts(o, "- **Pinning:** not recorded in the results file (the scenario file "
                        "names the CPUs of each target and of the client).\n");
    server_io(rep, o);
    if (env->perf_counters != H2B_MODEL_NULL_BOOL)
        h2b_buf_printf(o, "- **Hardware counters:** %s.\n",
                       env->perf_counters ? "available (instructions/op from perf_event_open)"
                                          : "not available on this machine; instructions/op "
                                            "only where callgrind measured them");
    if (r->n_cells > 0) {
        long reps = count_repeats(r);
        h2b_buf_printf(o,
                       "- **Repeats:** each matrix cell measured %ld time%s, targets "
                       "alternating within each cell%s.\n",
                       reps, reps == 1 ? "" : "s",
                       reps > 1 ? "; tables show the median of the repeats" : "");
    }
    if (r->n_micro > 0) {
        double fmin = -1, fmax = -1;
        for (size_t i = 0; i < r->n_micro; i++) {
            double f = r->micro[i].forks;
            if (f > 0 && (fmin < 0 || f < fmin))
                fmin = f;
            if (f > fmax)
                fmax = f;
        }
        if (fmin > 0 && fmin == fmax)
            h2b_buf_printf(o,
                           "- **Forks:** every component benchmark ran in %.0f fresh "
                           "process%s; percentiles merged across forks from histograms, "
                           "never averaged.\n",
                           fmin, fmin == 1 ? "" : "es");
        else if (fmin > 0)
            h2b_buf_printf(o,
                           "- **Forks:** %.0f to %.0f fresh processes per component "
                           "benchmark; percentiles merged across forks from histograms.\n",
                           fmin, fmax);
    }
    also_recorded(env, o);
    for (size_t i = 0; i < env->warnings.n; i++) {
        h2b_buf_puts(o, "- **Warning:** ");
        txt(o, env->warnings.v[i]);
        h2b_buf_puts(o, "\n");
    }
    h2b_buf_printf(o, "\n> Absolute numbers hold for this machine only");
    if (cpus > 0)
        h2b_buf_printf(o, " (%.0f CPU%s, shared with whatever else ran)", cpus,
                       cpus == 1 ? "" : "s");
    h2b_buf_puts(o, ". Compare ratios measured side by side in one run; do not compare these "
                    "numbers with another machine's.\n");
}

/* The next clause of a note: producers join "field: text" clauses with "; ". Returns the length
 * of the clause starting at p and sets *next to the following one (NULL at the end). */
static size_t note_clause(const char *p, const char **next)
{
    for (const char *q = strstr(p, "; "); q; q = strstr(q + 2, "; ")) {
        const char *k = q + 2;
        while ((*k >= 'a' && *k <= 'z') || (*k >= '0' && *k <= '9') || *k == '_')
            k++;
        if (k > q + 2 && k[0] == ':' && k[1] == ' ') {
            *next = q + 2;
            return (size_t)(q - p);
        }
    }
    *next = NULL;
    return strlen(p);
}

/* True when note contains the clause c (len bytes) as one of its clauses. */
static bool note_has(const char *note, const char *c, size_t len)
{
    for (const char *p = note, *next; p; p = next) {
        size_t n = note_clause(p, &next);
        if (n == len && memcmp(p, c, len) == 0)
            return true;
    }
    return false;
}

/* Each distinct clause of notes[0..n) once: with its owner's label when one entry has it, else
 * with how many of the n entries (noun) carry it. A producer repeats machine-wide notes (no
 * hardware counters) on every entry; printing them once keeps the specific ones visible. */
static void grouped_notes(struct h2b_buf *o, const char *heading, const char *const *notes,
                          const char *const *labels, bool code_labels, size_t n, const char *noun)
{
    bool header = false;
    for (size_t i = 0; i < n; i++) {
        if (notes[i] == NULL)
            continue;
        for (const char *p = notes[i], *next; p; p = next) {
            size_t len = note_clause(p, &next);
            bool seen = false;
            for (size_t j = 0; j < i && !seen; j++)
                seen = notes[j] && note_has(notes[j], p, len);
            for (const char *q = notes[i], *qn; q < p && !seen; q = qn) {
                size_t ql = note_clause(q, &qn);
                seen = ql == len && memcmp(q, p, len) == 0;
            }
            if (seen || len == 0)
                continue;
            size_t count = 0, owner = i;
            for (size_t j = i; j < n; j++)
                count += notes[j] && note_has(notes[j], p, len);
            if (!header)
                h2b_buf_puts(o, heading);
            header = true;
            if (count == 1) {
                h2b_buf_puts(o, "- ");
                (code_labels ? code : txt)(o, labels[owner]);
                h2b_buf_puts(o, ": ");
            } else {
                h2b_buf_printf(o, "- %zu of %zu %s: ", count, n, noun);
            }
            txt_n(o, p, len);
            h2b_buf_puts(o, "\n");
        }
    }
}

static void micro(const struct h2b__report *rep, struct h2b_buf *o)
{
    const struct h2b_rdata_results *r = rep->head;
    if (r->n_micro == 0)
        return;
    h2b_buf_puts(o, "\n## Component results\n\n");
    h2b_buf_printf(o,
                   "%zu benchmark%s. ns/op is the median over timed epochs; B/op and "
                   "allocs/op are exact counts from the counting allocator; p50, p99 and "
                   "p99.9 are per-operation latencies.\n\n",
                   r->n_micro, r->n_micro == 1 ? "" : "s");
    h2b_buf_puts(o, "| Benchmark | ns/op | B/op | allocs/op | p50 | p99 | p99.9 | "
                    "instructions/op | forks |\n"
                    "|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    bool notes = false;
    for (size_t i = 0; i < r->n_micro; i++) {
        const struct h2b_results_micro *m = &r->micro[i];
        B(a);
        B(b);
        B(c);
        B(d);
        B(e);
        B(f);
        B(g);
        h2b_buf_puts(o, "| ");
        code(o, m->name);
        h2b_buf_printf(o, " | %s | %s | %s | %s | %s | %s | %s | ", h2b_fmt_ns(m->ns_per_op, a, 64),
                       h2b_fmt_count(m->bytes_per_op, b, 64),
                       h2b_fmt_count(m->allocs_per_op, c, 64), h2b_fmt_ns(m->p50_ns, d, 64),
                       h2b_fmt_ns(m->p99_ns, e, 64), h2b_fmt_ns(m->p999_ns, f, 64),
                       h2b_fmt_count(m->instructions_per_op, g, 64));
        if (m->forks > 0)
            h2b_buf_printf(o, "%.0f |\n", m->forks);
        else
            h2b_buf_puts(o, "n/a |\n");
        notes = notes || m->note || m->error;
    }
    if (notes) {
        const char **texts = calloc(r->n_micro, sizeof(*texts));
        char(*labels)[160] = calloc(r->n_micro, sizeof(*labels));
        const char **lp = calloc(r->n_micro, sizeof(*lp));
        bool failed = false;
        for (size_t i = 0; i < r->n_micro && texts && labels && lp; i++) {
            const struct h2b_results_micro *m = &r->micro[i];
            if (m->error) {
                if (!failed)
                    h2b_buf_puts(o, "\nFailed benchmarks:\n\n");
                failed = true;
                h2b_buf_puts(o, "- ");
                code(o, m->name);
                h2b_buf_puts(o, ": ");
                txt(o, m->error);
                h2b_buf_puts(o, "\n");
            }
            texts[i] = m->note;
            snprintf(labels[i], sizeof(labels[i]), "%s", m->name);
            lp[i] = labels[i];
        }
        if (texts && labels && lp)
            grouped_notes(o, "\nNotes from the results file:\n\n", texts, lp, true, r->n_micro,
                          "benchmarks");
        free(texts);
        free(labels);
        free(lp);
    }
    h2b__report_chart(rep, o, H2B__CHART_MICRO);
}

static void fmt_metric(enum h2b_metric m, double v, char *buf, size_t n)
{
    if (m == H2B_METRIC_P99_NS)
        h2b_fmt_ns(v, buf, n);
    else
        h2b_fmt_count(v, buf, n);
}

/* The gate's own words for a status (core/verdict.h), as "icon phrase". */
static void gate_verdict(const struct h2b_gate_row *r, char *buf, size_t n)
{
    const struct h2b_verdict_words *w = h2b_gate_words(r->status, r->failing);
    snprintf(buf, n, "%s %s", w->icon, w->phrase);
}

/* The verdict of the gate engine (h2bench gate without its confirmation re-runs), so the report
 * and the CI gate never disagree about what passes. */
static void gates(const struct h2b__report *rep, struct h2b_buf *o)
{
    const struct h2b_gate_report *g = rep->gate;
    if (g == NULL)
        return;
    h2b_buf_puts(o, "\n## Gated hot paths\n\n");
    if (g->invalid_reason) {
        h2b_buf_printf(o, "**%s These results cannot be gated: ",
                       h2b_gate_words(H2B_GATE_INVALID, true)->icon);
        txt(o, g->invalid_reason);
        h2b_buf_puts(o, ".** Ceilings from ");
        code(o, h2b__basename(rep->opt->ceilings));
        h2b_buf_puts(o, ".\n");
        return;
    }
    int total = g->passed + g->failed + g->missing + g->invalid;
    bool failed = g->failed + g->missing + g->invalid;
    h2b_buf_printf(o, "**%s %d of %d ceilings hold",
                   h2b_verdict_words(failed ? H2B_VERDICT_FAIL : H2B_VERDICT_PASS, true)->icon,
                   g->passed, total);
    if (g->failed)
        h2b_buf_printf(o, ", %d exceeded", g->failed);
    if (g->missing)
        h2b_buf_printf(o, ", %d missing from the results", g->missing);
    if (g->invalid)
        h2b_buf_printf(o, ", %d cannot be judged", g->invalid);
    h2b_buf_puts(o, ".** Ceilings from ");
    code(o, h2b__basename(rep->opt->ceilings));
    h2b_buf_puts(o, ", failing rows first.\n\n");
    h2b_buf_puts(o, "Verdicts are those of `h2bench gate` on these results: allocation "
                    "ceilings are exact, p99 is the best fork's p99. In CI the gate also "
                    "re-runs a breached p99 before it fails.\n\n");
    h2b_buf_puts(o, "| Benchmark | Metric | Ceiling | Current | Headroom | Verdict | Why |\n"
                    "|---|---|---:|---:|---:|---|---|\n");
    bool ungated = false;
    for (size_t i = 0; i < g->count; i++) {
        const struct h2b_gate_row *r = &g->rows[i];
        if (r->status == H2B_GATE_UNGATED) {
            ungated = true;
            continue;
        }
        const struct h2b_ceiling_bench *cb = h2b_ceilings_find(rep->ceil, r->bench);
        B(lim);
        B(cur);
        char head[48] = "—";
        const char *why = "";
        /* metric -1: a benchmark's every ceiling (missing), or a matrix cell's row (cells.c:
         * its metric is in its name, its why in the evidence) */
        const char *label = r->metric >= 0 ? h2b_metric_label(r->metric)
                            : cb           ? "every ceiling"
                                           : "cell";
        snprintf(lim, sizeof(lim), "—");
        snprintf(cur, sizeof(cur), "%s", r->status == H2B_GATE_MISSING ? "missing" : "n/a");
        bool cell = r->metric < 0 && !cb;
        if (r->metric >= 0 || cell) {
            if (r->has_ceiling)
                fmt_metric(r->metric, r->ceiling, lim, sizeof(lim));
            if (r->has_current)
                fmt_metric(r->metric, r->current, cur, sizeof(cur));
            if (r->has_ceiling && r->has_current && r->ceiling > 0)
                snprintf(head, sizeof(head), "%s%.1f%%", r->current > r->ceiling ? "−" : "",
                         fabs(r->ceiling - r->current) / r->ceiling * 100.0);
            else if (r->has_ceiling && r->has_current)
                snprintf(head, sizeof(head), "%s", r->current > r->ceiling ? "exceeded" : "exact");
        }
        if (cell)
            why = r->evidence ? r->evidence : "";
        else if (r->metric >= 0 && cb && cb->metric[r->metric].set)
            why = cb->metric[r->metric].why;
        for (int m = 0; r->metric < 0 && cb && m < H2B_METRIC_COUNT && !why[0]; m++)
            why = cb->metric[m].set ? cb->metric[m].why : "";
        char verdict[128];
        gate_verdict(r, verdict, sizeof(verdict));
        h2b_buf_puts(o, "| ");
        code(o, r->bench);
        h2b_buf_printf(o, " | %s | %s | %s%s | %s | %s | ", label, lim, cur,
                       r->metric == H2B_METRIC_P99_NS && r->has_current ? " (best fork)" : "", head,
                       verdict);
        txt(o, why);
        h2b_buf_puts(o, " |\n");
    }
    if (ungated) {
        h2b_buf_puts(o, "\nNo ceiling (reported, not gated):");
        bool first = true;
        for (size_t i = 0; i < g->count; i++) {
            if (g->rows[i].status == H2B_GATE_UNGATED) {
                h2b_buf_puts(o, first ? " " : ", ");
                code(o, g->rows[i].bench);
                first = false;
            }
        }
        h2b_buf_puts(o, ".\n");
    }
}

/* "100/40", or per target when the targets' servers advertised different limits. */
static void streams_label(const struct h2b__report *rep, struct h2b__cellkey k, char *buf, size_t n)
{
    long eff[64] = {0};
    size_t nt = rep->n_targets < 64 ? rep->n_targets : 64;
    bool same = true;
    for (size_t t = 0; t < nt; t++) {
        eff[t] = -1;
        for (size_t i = 0; i < rep->head->n_cells; i++) {
            const struct h2b_rdata_cell *c = &rep->head->cells[i];
            if (c->connections == k.connections && c->streams_requested == k.streams &&
                !c->skipped && strcmp(c->target, rep->targets[t]) == 0) {
                eff[t] = (long)c->e->streams_effective;
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
    for (size_t t = 0; t < nt && o < n; t++) {
        if (eff[t] < 0) /* skipped or absent: it never ran at this point */
            continue;
        o += (size_t)snprintf(buf + o, n - o, "%s%ld/%ld (%s)", o ? ", " : "", k.streams, eff[t],
                              rep->targets[t]);
    }
}

/* "| connections | requested/effective |": the first two columns of every matrix table. */
static void row_start(const struct h2b__report *rep, struct h2b_buf *o, struct h2b__cellkey k)
{
    char sl[256];
    streams_label(rep, k, sl, sizeof(sl));
    h2b_buf_printf(o, "| %ld | ", k.connections);
    txt(o, sl);
    h2b_buf_puts(o, " |");
}

/* The header of a matrix table with two columns per target ("h2ref p50 | h2ref p99"), numbers
 * right-aligned. */
static void pair_header(const struct h2b__report *rep, struct h2b_buf *o, const char *first,
                        const char *second)
{
    h2b_buf_puts(o, "| Connections | Requested/effective streams |");
    for (size_t t = 0; t < rep->n_targets; t++) {
        h2b_buf_puts(o, " ");
        txt(o, rep->targets[t]);
        h2b_buf_printf(o, " %s | ", first);
        txt(o, rep->targets[t]);
        h2b_buf_printf(o, " %s |", second);
    }
    h2b_buf_puts(o, "\n|---:|---:|");
    for (size_t t = 0; t < 2 * rep->n_targets; t++)
        h2b_buf_puts(o, "---:|");
    h2b_buf_puts(o, "\n");
}

/* The cells of target at k that did not measure: failed or skipped (*skipped of them: the target
 * cannot serve that point; NULL: not asked), out of *all. */
static size_t failed_in_group(const struct h2b_rdata_results *r, const char *target,
                              struct h2b__cellkey k, size_t *all, size_t *skipped)
{
    size_t f = 0, sk = 0;
    *all = 0;
    for (size_t i = 0; i < r->n_cells; i++) {
        const struct h2b_rdata_cell *c = &r->cells[i];
        if (c->connections != k.connections || c->streams_requested != k.streams ||
            strcmp(c->target, target) != 0)
            continue;
        (*all)++;
        f += c->failed;
        sk += c->skipped;
    }
    if (skipped)
        *skipped = sk;
    return f;
}

/* Server CPU per request and peak RSS: what each target spent for its throughput. Left out when
 * the results carry neither. */
static void resources(const struct h2b__report *rep, struct h2b_buf *o)
{
    const struct h2b_rdata_results *r = rep->head;
    bool any = false;
    for (size_t i = 0; i < r->n_cells && !any; i++)
        any = !isnan(r->cells[i].e->server_cpu_s) || !isnan(r->cells[i].e->server_rss_kib);
    if (!any)
        return;
    h2b_buf_puts(o, "\n### Server resources\n\nServer CPU time per request and the server's "
                    "peak resident memory (median of the repeats).\n\n");
    pair_header(rep, o, "CPU/request", "RSS");
    for (size_t k = 0; k < rep->n_keys; k++) {
        row_start(rep, o, rep->keys[k]);
        for (size_t t = 0; t < rep->n_targets; t++) {
            double v[MAX_REPEATS];
            size_t n = h2b__report_group(r, rep->targets[t], rep->keys[k],
                                         H2B__GROUP_SERVER_NS_PER_REQ, v, MAX_REPEATS);
            B(a);
            h2b_buf_printf(o, " %s |", n ? h2b_fmt_ns(h2b_stats_median(v, n), a, 64) : "—");
            n = h2b__report_group(r, rep->targets[t], rep->keys[k], H2B__GROUP_SERVER_RSS_KIB, v,
                                  MAX_REPEATS);
            if (n)
                h2b_buf_printf(o, " %.1f MiB |", h2b_stats_median(v, n) / 1024.0);
            else
                h2b_buf_puts(o, " — |");
        }
        h2b_buf_puts(o, "\n");
    }
}

/* Failed cells and cells with failed requests one by one; skipped cells (a target that cannot
 * serve the point, such as the floor past one stream) each reason once with how many cells it
 * skipped; then each distinct note once with how many cells carry it (a producer repeats a
 * machine-wide note, such as missing counters, on every cell). */
static void failures_and_notes(const struct h2b_rdata_results *r, struct h2b_buf *o)
{
    bool header = false;
    for (size_t i = 0; i < r->n_cells; i++) {
        const struct h2b_rdata_cell *c = &r->cells[i];
        if (c->skipped || !(c->failed || c->e->failed > 0 || c->e->errors > 0))
            continue;
        if (!header)
            h2b_buf_puts(o, "\n### Failures and errors\n\n");
        header = true;
        h2b_buf_puts(o, "- ");
        txt(o, c->target);
        h2b_buf_printf(o, " at %ld connection%s × %ld stream%s, repeat %ld: ", c->connections,
                       c->connections == 1 ? "" : "s", c->streams_requested,
                       c->streams_requested == 1 ? "" : "s", c->repeat);
        B(a);
        B(b);
        if (c->failed) {
            h2b_buf_puts(o, "**cell failed**: ");
            txt(o, c->e->reason);
            h2b_buf_puts(o, "\n");
        } else
            h2b_buf_printf(o, "%s failed requests, %s errors\n",
                           h2b_fmt_count(isnan(c->e->failed) ? 0 : c->e->failed, a, 64),
                           h2b_fmt_count(isnan(c->e->errors) ? 0 : c->e->errors, b, 64));
    }
    const char **texts = calloc(r->n_cells ? r->n_cells : 1, sizeof(*texts));
    char(*labels)[160] = calloc(r->n_cells ? r->n_cells : 1, sizeof(*labels));
    const char **lp = calloc(r->n_cells ? r->n_cells : 1, sizeof(*lp));
    if (texts && labels && lp) {
        for (size_t i = 0; i < r->n_cells; i++) {
            const struct h2b_rdata_cell *c = &r->cells[i];
            texts[i] = c->skipped ? c->e->reason : NULL;
            snprintf(labels[i], sizeof(labels[i]), "%s at %ld × %ld, repeat %ld", c->target,
                     c->connections, c->streams_requested, c->repeat);
            lp[i] = labels[i];
        }
        grouped_notes(o, "\n### Skipped cells\n\n", texts, lp, false, r->n_cells, "cells");
        for (size_t i = 0; i < r->n_cells; i++)
            texts[i] = r->cells[i].e->note;
        grouped_notes(o, "\n### Notes from the results file\n\n", texts, lp, false, r->n_cells,
                      "cells");
    }
    free(texts);
    free(labels);
    free(lp);
}

/* Whether the report's target t is a kernel's floor (its cells say "target_type": "floor"). */
static bool is_floor(const struct h2b__report *rep, size_t t)
{
    for (size_t i = 0; i < rep->head->n_cells; i++)
        if (rep->head->cells[i].floor && strcmp(rep->head->cells[i].target, rep->targets[t]) == 0)
            return true;
    return false;
}

/* The median of a group, NAN when it has no measured repeat. */
static double group_median(const struct h2b__report *rep, size_t t, struct h2b__cellkey k,
                           enum h2b__group_metric what)
{
    double v[MAX_REPEATS];
    size_t n = h2b__report_group(rep->head, rep->targets[t], k, what, v, MAX_REPEATS);
    return n ? h2b_stats_median(v, n) : NAN;
}

/* "Against the kernel's floor": every server's req/s and server CPU per request at each c x 1
 * cell as a fraction of a floor target's in the same cell (the same connections driven with the
 * same bytes per request over raw TCP). Left out when the results have no floor. */
static void floor_table(const struct h2b__report *rep, struct h2b_buf *o)
{
    size_t floors = 0;
    for (size_t f = 0; f < rep->n_targets; f++)
        floors += is_floor(rep, f);
    if (!floors)
        return;
    h2b_buf_puts(o, "\n### Against the kernel's floor\n\nThe floor is `h2bench floor-serve`: one "
                    "thread answering each request-sized read with one response-sized write over "
                    "raw TCP, driven by `h2bench load --raw` with the bytes an HTTP/2 request and "
                    "its response take, at the same connections, one request in flight each. "
                    "req/s ÷ floor near 1 means the server adds little to the kernel's work; "
                    "CPU/request ÷ floor is the server's CPU per request as a multiple of what the "
                    "kernel's TCP work alone costs.\n\n"
                    "| Target | Cell | req/s ÷ floor | server CPU/request ÷ floor |\n"
                    "|---|---:|---:|---:|\n");
    for (size_t f = 0; f < rep->n_targets; f++) {
        if (!is_floor(rep, f))
            continue;
        for (size_t k = 0; k < rep->n_keys; k++) {
            struct h2b__cellkey key = rep->keys[k];
            double rps = group_median(rep, f, key, H2B__GROUP_RPS);
            if (key.streams != 1 || isnan(rps))
                continue;
            double cpu = group_median(rep, f, key, H2B__GROUP_SERVER_NS_PER_REQ);
            for (size_t t = 0; t < rep->n_targets; t++) {
                if (is_floor(rep, t))
                    continue;
                B(a);
                B(b);
                h2b_buf_puts(o, "| ");
                txt(o, rep->targets[t]);
                if (floors > 1) {
                    h2b_buf_puts(o, " (floor: ");
                    txt(o, rep->targets[f]);
                    h2b_buf_puts(o, ")");
                }
                h2b_buf_printf(
                    o, " | %ld×1 | %s | %s |\n", key.connections,
                    h2b_fmt_ratio(group_median(rep, t, key, H2B__GROUP_RPS), rps, a, 64),
                    h2b_fmt_ratio(group_median(rep, t, key, H2B__GROUP_SERVER_NS_PER_REQ), cpu, b,
                                  64));
            }
        }
    }
}

/* A search step's percentiles, "p50 / p99", or a dash when it has none. */
static void step_latency(const struct h2b_results_search_step *st, char *buf, size_t n)
{
    B(a);
    B(b);
    if (!st->base.present || !st->latency_ns.base.present || isnan(st->latency_ns.p99))
        snprintf(buf, n, "—");
    else
        snprintf(buf, n, "%s / %s", h2b_fmt_ns(st->latency_ns.p50, a, 64),
                 h2b_fmt_ns(st->latency_ns.p99, b, 64));
}

/* "Capacity at SLO": every find_max cell's answer and its evidence, then the charts. */
static void capacity(const struct h2b__report *rep, struct h2b_buf *o)
{
    const struct h2b_rdata_results *r = rep->head;
    size_t n = 0;
    for (size_t i = 0; i < r->n_cells; i++) {
        const struct h2b_results_cell *c = h2b_results_doc_cell(r->model, i);
        if (!c || !c->search.base.present)
            continue;
        const struct h2b_results_search *s = &c->search;
        if (n++ == 0)
            h2b_buf_puts(o, "\n### Capacity at SLO\n\nThe highest open-loop rate at which every "
                            "objective held (`matrix.find_max`: the rate doubles until a step "
                            "fails, then bisects), with the evidence: the last passing and the "
                            "first failing step, each with its p50 / p99 from intended send "
                            "times.\n\n"
                            "| Target | Cell | Objectives | Capacity | Last pass: req/s, p50 / p99 "
                            "| First fail: req/s, p50 / p99 | Steps | Search |\n"
                            "|---|---:|---|---:|---:|---:|---:|---:|\n");
        const struct h2b_rdata_cell *rc = &r->cells[i];
        char lp[160], ff[160];
        B(cap);
        B(lr);
        B(fr);
        step_latency(&s->last_pass, lp, sizeof(lp));
        step_latency(&s->first_fail, ff, sizeof(ff));
        h2b_buf_puts(o, "| ");
        txt(o, rc->target);
        h2b_buf_printf(o, " | %ld×%ld | ", rc->connections, rc->streams_requested);
        code(o, s->slo ? s->slo : "?");
        if (isnan(s->capacity_per_s))
            h2b_buf_puts(o, " | none: the lowest step failed");
        else
            h2b_buf_printf(o, " | %s req/s", h2b_fmt_rate(s->capacity_per_s, cap, 64));
        if (s->last_pass.base.present)
            h2b_buf_printf(o, " | %s: %s", h2b_fmt_rate(s->last_pass.rate_per_s, lr, 64), lp);
        else
            h2b_buf_puts(o, " | —");
        if (s->first_fail.base.present)
            h2b_buf_printf(o, " | %s: %s", h2b_fmt_rate(s->first_fail.rate_per_s, fr, 64), ff);
        else
            h2b_buf_puts(o, " | none up to the limit");
        h2b_buf_printf(o, " | %zu | %.1f s |\n", s->steps.n, s->search_s);
    }
    if (n)
        h2b__report_chart(rep, o, H2B__CHART_CAPACITY);
}

/* "Over time": the shaped cells' load, interval by interval, then their charts. */
static void over_time(const struct h2b__report *rep, struct h2b_buf *o)
{
    const struct h2b_rdata_results *r = rep->head;
    size_t n = 0;
    for (size_t i = 0; i < r->n_cells; i++)
        n += h2b__report_over_time(r, i);
    if (n == 0)
        return;
    h2b_buf_puts(o, "\n### Over time\n\nCells whose load follows a shape (`matrix.stages`, "
                    "`matrix.step`), interval by interval: p50 and p99 from intended send "
                    "times (left axis), the rate the shape offered and the rate achieved (right "
                    "axis); dotted lines mark where a stage or a step ends.\n\n"
                    "| Target | Cell | Intervals | Boundaries (s) | Offered req/s, min - max "
                    "| Achieved req/s, min - max | Highest p99 |\n"
                    "|---|---:|---:|---|---:|---:|---:|\n");
    for (size_t i = 0; i < r->n_cells; i++) {
        if (!h2b__report_over_time(r, i))
            continue;
        const struct h2b_results_cell *c = h2b_results_doc_cell(r->model, i);
        double lo[2] = {INFINITY, INFINITY}, hi[2] = {-INFINITY, -INFINITY}, p99 = NAN;
        for (size_t j = 0; j < c->intervals.n; j++) {
            const struct h2b_results_cell_interval *e =
                h2b_model_array_at(&h2b_results_cell_interval_model, &c->intervals, j);
            const double v[2] = {e->offered_per_s, e->achieved_per_s};
            for (int k = 0; k < 2; k++) {
                lo[k] = isfinite(v[k]) && v[k] < lo[k] ? v[k] : lo[k];
                hi[k] = isfinite(v[k]) && v[k] > hi[k] ? v[k] : hi[k];
            }
            if (isfinite(e->p99_ns) && !(e->p99_ns <= p99))
                p99 = e->p99_ns;
        }
        const struct h2b_rdata_cell *rc = &r->cells[i];
        h2b_buf_puts(o, "| ");
        txt(o, rc->target);
        h2b_buf_printf(o, " | %ld×%ld | %zu | ", rc->connections, rc->streams_requested,
                       c->intervals.n);
        for (size_t j = 0; j < c->shape_bounds_s.n && j < 12; j++)
            h2b_buf_printf(o, "%s%.6g", j ? ", " : "", c->shape_bounds_s.v[j]);
        h2b_buf_puts(o, c->shape_bounds_s.n > 12 ? ", …" : c->shape_bounds_s.n ? "" : "—");
        for (int k = 0; k < 2; k++) {
            B(a);
            B(b);
            if (isfinite(lo[k]))
                h2b_buf_printf(o, " | %s - %s", h2b_fmt_rate(lo[k], a, 64),
                               h2b_fmt_rate(hi[k], b, 64));
            else
                h2b_buf_puts(o, " | —");
        }
        B(q);
        h2b_buf_printf(o, " | %s |\n", isfinite(p99) ? h2b_fmt_ns(p99, q, 64) : "—");
    }
    if (n > H2B__REPORT_MAX_OVER_TIME)
        h2b_buf_printf(o, "\nCharts for the first %d of %zu shaped cells.\n",
                       H2B__REPORT_MAX_OVER_TIME, n);
    h2b__report_chart(rep, o, H2B__CHART_OVER_TIME);
}

static void matrix(const struct h2b__report *rep, struct h2b_buf *o)
{
    const struct h2b_rdata_results *r = rep->head;
    if (r->n_cells == 0)
        return;
    h2b_buf_puts(o, "\n## End-to-end matrix\n\n");
    const char *client = r->cells[0].e->client;
    h2b_buf_printf(o, "%zu target%s (", rep->n_targets, rep->n_targets == 1 ? "" : "s");
    for (size_t t = 0; t < rep->n_targets; t++) {
        h2b_buf_puts(o, t ? ", " : "");
        txt(o, rep->targets[t]);
    }
    h2b_buf_printf(o, ") over %zu cells, load from ", rep->n_keys);
    txt(o, client ? client : "the client");
    h2b_buf_puts(o, ". Effective streams per connection = "
                    "min(requested, the server's SETTINGS_MAX_CONCURRENT_STREAMS, the "
                    "aggregate cap / connections).");
    if (rep->n_targets > 1) {
        h2b_buf_puts(o, " Ratios are against ");
        txt(o, rep->targets[0]);
        h2b_buf_puts(o, ", measured alternately in the same run.");
    }
    h2b_buf_puts(o, "\n\n### Throughput\n\n| Connections | Requested/effective streams |");
    for (size_t t = 0; t < rep->n_targets; t++) {
        h2b_buf_puts(o, " ");
        txt(o, rep->targets[t]);
        h2b_buf_puts(o, " req/s |");
    }
    for (size_t t = 1; t < rep->n_targets; t++) {
        h2b_buf_puts(o, " ");
        txt(o, rep->targets[t]);
        h2b_buf_puts(o, " / ");
        txt(o, rep->targets[0]);
        h2b_buf_puts(o, " |");
    }
    h2b_buf_puts(o, "\n|---:|---:|");
    for (size_t t = 0; t < 2 * rep->n_targets - 1; t++)
        h2b_buf_puts(o, "---:|");
    h2b_buf_puts(o, "\n");
    for (size_t k = 0; k < rep->n_keys; k++) {
        row_start(rep, o, rep->keys[k]);
        double first = NAN;
        for (size_t t = 0; t < rep->n_targets; t++) {
            double v[MAX_REPEATS];
            size_t n =
                h2b__report_group(r, rep->targets[t], rep->keys[k], H2B__GROUP_RPS, v, MAX_REPEATS);
            size_t all, sk, f = failed_in_group(r, rep->targets[t], rep->keys[k], &all, &sk);
            double med = h2b_stats_median(v, n);
            if (t == 0)
                first = med;
            B(a);
            if (n == 0)
                h2b_buf_puts(o, !all ? " — |" : sk == all ? " skipped |" : " failed |");
            else if (f)
                h2b_buf_printf(o, " %s (%zu of %zu repeats failed) |", h2b_fmt_rate(med, a, 64), f,
                               all);
            else
                h2b_buf_printf(o, " %s |", h2b_fmt_rate(med, a, 64));
        }
        for (size_t t = 1; t < rep->n_targets; t++) {
            double v[MAX_REPEATS];
            size_t n =
                h2b__report_group(r, rep->targets[t], rep->keys[k], H2B__GROUP_RPS, v, MAX_REPEATS);
            B(a);
            h2b_buf_printf(o, " %s |", h2b_fmt_ratio(h2b_stats_median(v, n), first, a, 64));
        }
        h2b_buf_puts(o, "\n");
    }
    h2b__report_chart(rep, o, H2B__CHART_RPS);

    h2b_buf_puts(o, "\n### Latency\n\n");
    pair_header(rep, o, "p50", "p99");
    bool any_merged = false, any_median = false;
    for (size_t k = 0; k < rep->n_keys; k++) {
        row_start(rep, o, rep->keys[k]);
        for (size_t t = 0; t < rep->n_targets; t++) {
            for (int q = 0; q < 2; q++) {
                bool merged;
                double v = h2b__report_group_latency(r, rep->targets[t], rep->keys[k],
                                                     q ? 99.0 : 50.0, &merged);
                B(a);
                h2b_buf_printf(o, " %s |", isnan(v) ? "—" : h2b_fmt_ns(v, a, 64));
                size_t all;
                size_t f = failed_in_group(r, rep->targets[t], rep->keys[k], &all, NULL);
                if (!isnan(v) && all - f > 1) {
                    any_merged = any_merged || merged;
                    any_median = any_median || !merged;
                }
            }
        }
        h2b_buf_puts(o, "\n");
    }
    if (any_merged || any_median) {
        h2b_buf_puts(o, "\nWith several repeats, ");
        if (any_merged)
            h2b_buf_puts(o, "percentiles come from the repeats' histograms merged (never "
                            "averaged)");
        if (any_merged && any_median)
            h2b_buf_puts(o, "; cells without histograms show ");
        else if (any_median)
            h2b_buf_puts(o, "cells show ");
        if (any_median)
            h2b_buf_puts(o, "the median of the repeats' percentiles (the results carry no "
                            "histograms to merge)");
        h2b_buf_puts(o, ".\n");
    }
    h2b__report_chart(rep, o, H2B__CHART_LATENCY);
    capacity(rep, o);
    over_time(rep, o);
    resources(rep, o);
    floor_table(rep, o);

    failures_and_notes(r, o);
}

static void ab(const struct h2b__report *rep, struct h2b_buf *o)
{
    const struct h2b_rdata_results *base = rep->base, *head = rep->head;
    if (base == NULL)
        return;
    h2b_buf_puts(o, "\n## A/B against the base\n\n");
    h2b_buf_puts(o, "Base ");
    run_line(o, base, " (");
    h2b_buf_puts(o, ") against head ");
    run_line(o, head, " (");
    h2b_buf_puts(o, "). The verdict of `h2bench compare` on these two files, row for row: ");
    h2b_ab_verdict_line(o, rep->compare, "");
    const char *bcpu = base->env->cpu_model, *hcpu = head->env->cpu_model;
    if (bcpu && hcpu && strcmp(bcpu, hcpu) != 0) {
        h2b_buf_puts(o, "\n**The two runs were measured on different CPUs (");
        txt(o, bcpu);
        h2b_buf_puts(o, " vs ");
        txt(o, hcpu);
        h2b_buf_puts(o, "): timing ratios mix code and machine.**\n");
    }
    h2b_buf_puts(o, "\n");
    if (h2b_ab_rows_md(o, rep->compare) != H2B_OK && !o->err)
        o->err = H2B_ERR_NOMEM;
}

size_t h2b__report_history_run(const struct h2b__report *rep, const struct h2b_histset_point *p)
{
    for (size_t r = 0; r < rep->n_runs; r++) {
        const struct h2b_rdata_results *x = rep->runs[r];
        if (x->model->created && x->tool->git_commit &&
            strcmp(x->model->created, p->created) == 0 &&
            strcmp(x->tool->git_commit, p->commit) == 0)
            return r;
    }
    return rep->n_runs;
}

/* The change points (`h2bench history`) that open in the last H2B__HISTORY_LAST runs. */
static void history_changes(const struct h2b__report *rep, struct h2b_buf *o)
{
    const struct h2b_histset *h = rep->hist;
    if (!h)
        return;
    struct h2b_history_opts opt;
    h2b_history_opts_default(&opt);
    size_t first = rep->n_runs > H2B__HISTORY_LAST ? rep->n_runs - H2B__HISTORY_LAST : 0;
    size_t testable = 0, rows = 0;
    for (size_t i = 0; i < h->n; i++)
        testable += !h->s[i].too_short;
    h2b_buf_puts(o, "\n### Change points\n\n");
    if (testable == 0) {
        h2b_buf_printf(o,
                       "Change points (`h2bench history`: E-divisive means, t-test p ≤ %g, a "
                       "change of the median ≥ %g %%) need at least %zu runs of a series; these "
                       "%zu are too few.\n",
                       opt.p_value, 100 * opt.min_change, 2 * opt.min_points, rep->n_runs);
        return;
    }
    for (size_t i = 0; i < h->n; i++) {
        const struct h2b_histset_series *s = &h->s[i];
        for (size_t k = 0; k < s->ncps; k++) {
            const struct h2b_history_cp *cp = &s->cps[k];
            size_t r = h2b__report_history_run(rep, &s->p[cp->index]);
            if (r >= rep->n_runs || r < first)
                continue;
            if (rows++ == 0)
                h2b_buf_puts(o, "| Series | Run | Commit | Before | After | Change | p |\n"
                                "|---|---:|---|---:|---:|---:|---:|\n");
            bool worse = s->bigger ? cp->after < cp->before : cp->after > cp->before;
            h2b_buf_puts(o, "| ");
            h2b_buf_md(o, s->name);
            h2b_buf_printf(o, " | %zu | ", r + 1);
            code(o, s->p[cp->index].commit);
            h2b_buf_printf(o, " | %.6g | %.6g | %+.1f %% %s | %.2g |\n", cp->before, cp->after,
                           100 * cp->change, worse ? "worse" : "better", cp->p);
        }
    }
    if (rows == 0)
        h2b_buf_printf(o, "No change point opens in the last %zu runs", rep->n_runs - first);
    h2b_buf_printf(o,
                   "%s(`h2bench history`: E-divisive means, t-test p ≤ %g, a change of the "
                   "median ≥ %g %%, %zu runs a side; %zu of %zu series long enough to test).\n",
                   rows ? "\n" : " ", opt.p_value, 100 * opt.min_change, opt.min_points, testable,
                   h->n);
}

static void history(const struct h2b__report *rep, struct h2b_buf *o)
{
    if (rep->n_runs < 2)
        return;
    h2b_buf_puts(o, "\n## History\n\n");
    h2b_buf_printf(o, "%zu runs, in the order given on the command line:\n\n", rep->n_runs);
    for (size_t r = 0; r < rep->n_runs; r++) {
        const struct h2b_rdata_results *x = rep->runs[r];
        h2b_buf_printf(o, "%zu. ", r + 1);
        run_line(o, x, ", ");
        h2b_buf_puts(o, "\n");
    }
    h2b_buf_puts(o, "\n| Series |");
    for (size_t r = 0; r < rep->n_runs; r++)
        h2b_buf_printf(o, " Run %zu |", r + 1);
    h2b_buf_puts(o, " Last / first |\n|---|");
    for (size_t r = 0; r <= rep->n_runs; r++)
        h2b_buf_puts(o, "---:|");
    h2b_buf_puts(o, "\n");
    const struct h2b_rdata_results *first = rep->runs[0];
    for (size_t i = 0; i < rep->head->n_micro; i++) {
        const char *name = rep->head->micro[i].name;
        h2b_buf_puts(o, "| ");
        code(o, name);
        h2b_buf_puts(o, " ns/op |");
        for (size_t r = 0; r < rep->n_runs; r++) {
            const struct h2b_results_micro *m = h2b_rdata_micro_find(rep->runs[r], name);
            B(a);
            h2b_buf_printf(o, " %s |", m ? h2b_fmt_ns(m->ns_per_op, a, 64) : "—");
        }
        const struct h2b_results_micro *m0 = h2b_rdata_micro_find(first, name);
        B(z);
        h2b_buf_printf(o, " %s |\n",
                       m0 ? h2b_fmt_ratio(rep->head->micro[i].ns_per_op, m0->ns_per_op, z, 64)
                          : "—");
    }
    /* Matrix: each target's best cell (median req/s over repeats) per run. */
    for (size_t t = 0; t < rep->n_targets; t++) {
        size_t nr = rep->n_runs < H2B__MAX_RUNS ? rep->n_runs : H2B__MAX_RUNS;
        double peak[H2B__MAX_RUNS];
        h2b_buf_puts(o, "| ");
        txt(o, rep->targets[t]);
        h2b_buf_puts(o, " peak req/s |");
        for (size_t r = 0; r < nr; r++) {
            peak[r] = h2b__report_run_peak_rps(rep->runs[r], rep->targets[t]);
            B(a);
            h2b_buf_printf(o, " %s |", isnan(peak[r]) ? "—" : h2b_fmt_rate(peak[r], a, 64));
        }
        B(z);
        h2b_buf_printf(o, " %s |\n", h2b_fmt_ratio(peak[nr - 1], peak[0], z, 64));
    }
    h2b__report_chart(rep, o, H2B__CHART_HISTORY);
    history_changes(rep, o);
}

/* A markdown table cell: '|' and line breaks escaped by the one markdown escaper. */
static void md_cell(struct h2b_buf *o, const char *text)
{
    h2b_buf_md(o, text);
}

/* "What a request costs each server": the per-request budgets (cell.budgets), one table per
 * matrix point, one column per target; a null shows its reason. Repeats carry the same budgets
 * (measured once per point), so the first cell of each target and point is the one shown. */
static void budgets(const struct h2b__report *rep, struct h2b_buf *o)
{
    const struct h2b_results_doc *doc = rep->head->model;
    bool any = false;
    for (size_t i = 0; doc && i < doc->matrix.n && !any; i++)
        any = h2b_results_doc_cell(doc, i)->budgets.base.present;
    if (!any)
        return;
    h2b_buf_puts(o, "\n## What a request costs each server\n\n"
                    "Per request, measured exactly as the difference between two fixed-count "
                    "phases on the same connections (docs/scenarios.md, `budgets`): "
                    "allocations and syscalls by the counting preload, instructions by "
                    "callgrind (two runs within 0.5 %), RSS per connection over many "
                    "connections that each did one request. A null names its reason.\n");
    for (size_t k = 0; k < rep->n_keys; k++) {
        const struct h2b_results_cell *col[64] = {0};
        size_t nt = rep->n_targets < 64 ? rep->n_targets : 64;
        bool row_any = false;
        for (size_t t = 0; t < nt; t++) {
            for (size_t i = 0; i < doc->matrix.n && !col[t]; i++) {
                const struct h2b_results_cell *c = h2b_results_doc_cell(doc, i);
                if (c->target && strcmp(c->target, rep->targets[t]) == 0 &&
                    c->connections == rep->keys[k].connections &&
                    c->streams_requested == rep->keys[k].streams && c->budgets.base.present)
                    col[t] = c;
            }
            row_any = row_any || col[t];
        }
        if (!row_any)
            continue;
        h2b_buf_printf(o, "\n### %ld connection%s × %ld stream%s\n\n| per request |",
                       rep->keys[k].connections, rep->keys[k].connections == 1 ? "" : "s",
                       rep->keys[k].streams, rep->keys[k].streams == 1 ? "" : "s");
        for (size_t t = 0; t < nt; t++) {
            h2b_buf_puts(o, " ");
            md_cell(o, rep->targets[t]);
            h2b_buf_puts(o, " |");
        }
        h2b_buf_puts(o, "\n|---|");
        for (size_t t = 0; t < nt; t++)
            h2b_buf_puts(o, "---:|");
        h2b_buf_puts(o, "\n");
        for (int m = 0; m < H2B_BUDGET_NMETRICS; m++) {
            const struct h2b_budget_metric_info *bm = &h2b_budget_metrics[m];
            h2b_buf_printf(o, "| %s |", bm->title);
            for (size_t t = 0; t < nt; t++) {
                char buf[600];
                double v = col[t] ? h2b_results_budget_get(&col[t]->budgets, m) : NAN;
                if (!col[t]) {
                    snprintf(buf, sizeof(buf), "—");
                } else if (isnan(v)) {
                    char why[500] = "not measured";
                    h2b_model_note_reason(col[t]->budgets.note, bm->key, why, sizeof(why));
                    snprintf(buf, sizeof(buf), "null: %s", why);
                } else {
                    snprintf(buf, sizeof(buf), "%.*f", bm->decimals, v);
                }
                h2b_buf_puts(o, " ");
                md_cell(o, buf);
                h2b_buf_puts(o, " |");
            }
            h2b_buf_puts(o, "\n");
        }
    }
}

int h2b__report_markdown(const struct h2b__report *rep, struct h2b_buf *out)
{
    title(rep, out);
    method(rep, out);
    micro(rep, out);
    gates(rep, out);
    matrix(rep, out);
    budgets(rep, out);
    ab(rep, out);
    h2b__report_profiles_md(rep, out);
    history(rep, out);
    return h2b_buf_error(out);
}
