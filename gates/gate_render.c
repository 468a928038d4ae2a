/*
 * gate_render.c - the gate's verdict as a terminal table, markdown and JUnit XML (gate.h), in
 * the one vocabulary of verdicts (core/verdict.h) the report, ab and compare use too.
 *
 * Approach: renderers are pure functions of a finished struct h2b_gate_report, so the three
 * outputs cannot disagree about the verdict. Strings from results and ceilings files pass
 * through the escaping function of their consumer (h2b_buf_md, h2b_buf_md_code, h2b_buf_xml,
 * h2b_buf_term).
 * Rejected: each consumer naming the statuses itself (the report said "cannot judge" where the
 * gate said "INVALID").
 */
#include "gates/gate.h"
#include "gates/gate_int.h"
#include "core/buf.h"
#include "core/error.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *status_word(const struct h2b_gate_row *row)
{
    return h2b_gate_words(row->status, row->failing)->word;
}

static const char *metric_label(const struct h2b_gate_row *row)
{
    return row->metric < 0 ? "-" : h2b_metric_label(row->metric);
}

static void fmt_value(char *buf, size_t size, bool has, double v, int metric)
{
    if (!has)
        snprintf(buf, size, "-");
    else if (metric == H2B_METRIC_P99_NS)
        snprintf(buf, size, "%.0f ns", v);
    else
        snprintf(buf, size, "%.10g", v);
}

static void fmt_delta(char *buf, size_t size, const struct h2b_gate_row *row)
{
    if (!row->has_baseline || !row->has_current)
        snprintf(buf, size, "-");
    else if (row->current == row->baseline)
        snprintf(buf, size, "0%%");
    else if (row->baseline == 0)
        snprintf(buf, size, row->current == 0 ? "0%%" : "+%.15g", row->current);
    else if (fabs(row->current - row->baseline) < 0.0005 * fabs(row->baseline))
        snprintf(buf, size, "0%%");
    else
        snprintf(buf, size, "%+.1f%%", (row->current - row->baseline) / row->baseline * 100.0);
}

/* A row's numbers as text, shared by the table and the markdown. */
struct row_text {
    char base[32], ceil[32], cur[32], delta[32];
};

static void row_text(const struct h2b_gate_row *row, struct row_text *t)
{
    fmt_value(t->base, sizeof(t->base), row->has_baseline, row->baseline, row->metric);
    fmt_value(t->ceil, sizeof(t->ceil), row->has_ceiling, row->ceiling, row->metric);
    fmt_value(t->cur, sizeof(t->cur), row->has_current, row->current, row->metric);
    fmt_delta(t->delta, sizeof(t->delta), row);
}

static void verdict_line(struct h2b_buf *b, const struct h2b_gate_report *r, bool md)
{
    if (r->invalid_reason) {
        const struct h2b_verdict_words *w = h2b_verdict_words(H2B_VERDICT_INVALID, true);
        h2b_buf_printf(b, "%s%s%s: measurement cannot be gated: %s", md ? w->icon : "",
                       md ? " " : "", w->word, r->invalid_reason);
        return;
    }
    const struct h2b_verdict_words *w = h2b_verdict_words(h2b_verdict_of_exit(r->exit_code), true);
    h2b_buf_printf(b, "%s%s%s: %d passed, %d exceeded, %d missing, %d ungated, %d invalid",
                   md ? w->icon : "", md ? " " : "", w->word, r->passed, r->failed, r->missing,
                   r->ungated, r->invalid);
    if (r->not_applicable)
        h2b_buf_printf(b, ", %d not applicable (ceilings set on another machine or build)",
                       r->not_applicable);
    if (r->confirm_runs)
        h2b_buf_printf(b, " (%d confirmation re-run%s)", r->confirm_runs,
                       r->confirm_runs == 1 ? "" : "s");
}

int h2b_gate_render_table(const struct h2b_gate_report *r, char **out)
{
    struct h2b_buf b = {0};
    size_t wb = strlen("benchmark");
    for (size_t i = 0; i < r->count; i++)
        wb = h2b_buf_width(wb, r->rows[i].bench);
    if (r->count) {
        h2b_buf_printf(&b, "%-8s  %-*s  %-9s  %10s  %10s  %10s  %8s  %s\n", "status", (int)wb,
                       "benchmark", "metric", "baseline", "ceiling", "current", "delta",
                       "evidence");
    }
    for (size_t i = 0; i < r->count; i++) {
        const struct h2b_gate_row *row = &r->rows[i];
        struct row_text t;
        row_text(row, &t);
        h2b_buf_printf(&b, "%-8s  ", status_word(row));
        h2b_buf_term(&b, row->bench);
        h2b_buf_pad(&b, wb - strlen(row->bench));
        h2b_buf_printf(&b, "  %-9s  %10s  %10s  %10s  %8s  ", metric_label(row), t.base, t.ceil,
                       t.cur, t.delta);
        h2b_buf_term(&b, row->evidence ? row->evidence : "");
        h2b_buf_puts(&b, "\n");
    }
    verdict_line(&b, r, false);
    h2b_buf_printf(&b, "\n");
    return h2b_buf_finish(&b, out);
}

int h2b_gate_render_md(const struct h2b_gate_report *r, char **out)
{
    struct h2b_buf b = {0};
    h2b_buf_printf(&b, "## h2bench gate: ");
    verdict_line(&b, r, true);
    h2b_buf_printf(&b, "\n\n");
    if (r->count) {
        h2b_buf_printf(&b,
                       "| | Benchmark | Metric | Baseline | Ceiling | Current | Δ | Evidence |\n"
                       "|---|---|---|---:|---:|---:|---:|---|\n");
    }
    for (size_t i = 0; i < r->count; i++) {
        const struct h2b_gate_row *row = &r->rows[i];
        struct row_text t;
        row_text(row, &t);
        const char *icon = h2b_gate_words(row->status, row->failing)->icon;
        h2b_buf_printf(&b, "| %s | ", icon);
        h2b_buf_md_code(&b, row->bench);
        h2b_buf_printf(&b, " | %s | %s | %s | %s | %s | ", metric_label(row), t.base, t.ceil, t.cur,
                       t.delta);
        h2b_buf_md(&b, row->evidence ? row->evidence : "");
        h2b_buf_printf(&b, " |\n");
    }
    if (r->exit_code == 1) {
        h2b_buf_printf(&b, "\nTo accept an intended change: `h2bench gate --propose --runs 5 "
                           "--write proposal.json`, review it, and copy the changed ceilings "
                           "into `gates/ceilings.json` with their why lines.\n");
    }
    return h2b_buf_finish(&b, out);
}

int h2b_gate_render_junit(const struct h2b_gate_report *r, char **out)
{
    struct h2b_buf b = {0};
    int failures = r->failed + r->missing + (r->invalid_reason ? 1 : 0);
    int errors = r->invalid;
    int skipped = 0;
    for (size_t i = 0; i < r->count; i++) {
        if (r->rows[i].status == H2B_GATE_UNGATED) {
            if (r->rows[i].failing)
                failures++;
            else
                skipped++;
        }
        if (r->rows[i].status == H2B_GATE_NA) {
            if (r->rows[i].failing)
                errors++;
            else
                skipped++;
        }
    }
    size_t tests = r->count + (r->invalid_reason ? 1 : 0);
    h2b_buf_printf(&b,
                   "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                   "<testsuites name=\"h2bench gate\" tests=\"%zu\" failures=\"%d\" errors=\"%d\" "
                   "skipped=\"%d\" time=\"%.3f\" timestamp=\"%s\">\n"
                   "  <testsuite name=\"h2bench.gate\" tests=\"%zu\" failures=\"%d\" "
                   "errors=\"%d\" skipped=\"%d\" time=\"%.3f\" timestamp=\"%s\">\n",
                   tests, failures, errors, skipped, r->elapsed_s, r->started, tests, failures,
                   errors, skipped, r->elapsed_s, r->started);
    if (r->invalid_reason) {
        h2b_buf_printf(&b, "    <testcase classname=\"h2bench.gate\" name=\"measurement\">\n"
                           "      <failure message=\"");
        h2b_buf_xml(&b, r->invalid_reason);
        h2b_buf_printf(&b, "\" type=\"invalid\"/>\n    </testcase>\n");
    }
    for (size_t i = 0; i < r->count; i++) {
        const struct h2b_gate_row *row = &r->rows[i];
        h2b_buf_printf(&b, "    <testcase classname=\"");
        h2b_buf_xml(&b, row->bench);
        /* the gate judges numbers measured before it ran: a row takes no time of its own */
        h2b_buf_printf(&b, "\" name=\"%s\" time=\"0.000\">",
                       row->metric < 0 ? "present" : h2b_metric_key(row->metric));
        char cur[32], ceil_[32];
        fmt_value(cur, sizeof(cur), row->has_current, row->current, row->metric);
        fmt_value(ceil_, sizeof(ceil_), row->has_ceiling, row->ceiling, row->metric);
        const char *tag = NULL, *type = NULL;
        if (row->status == H2B_GATE_INVALID || (row->status == H2B_GATE_NA && row->failing))
            tag = "error", type = row->status == H2B_GATE_NA ? "not-applicable" : "invalid";
        else if (row->failing)
            tag = "failure", type = row->status == H2B_GATE_MISSING   ? "missing"
                                    : row->status == H2B_GATE_UNGATED ? "ungated"
                                                                      : "exceeded";
        if (tag) {
            h2b_buf_printf(&b, "\n      <%s type=\"%s\" message=\"", tag, type);
            h2b_buf_xml(&b, row->bench);
            h2b_buf_printf(&b, " %s: current %s, ceiling %s\">", metric_label(row), cur, ceil_);
            h2b_buf_xml(&b, row->evidence ? row->evidence : "");
            h2b_buf_printf(&b, "</%s>\n    ", tag);
        } else if (row->status == H2B_GATE_UNGATED) {
            h2b_buf_printf(&b, "\n      <skipped message=\"no ceiling\"/>\n    ");
        } else if (row->status == H2B_GATE_NA) {
            h2b_buf_printf(&b, "\n      <skipped message=\"");
            h2b_buf_xml(&b, row->evidence ? row->evidence : "not applicable");
            h2b_buf_printf(&b, "\"/>\n    ");
        } else {
            h2b_buf_printf(&b, "\n      <system-out>");
            h2b_buf_printf(&b, "current %s, ceiling %s; ", cur, ceil_);
            h2b_buf_xml(&b, row->evidence ? row->evidence : "");
            h2b_buf_printf(&b, "</system-out>\n    ");
        }
        h2b_buf_printf(&b, "</testcase>\n");
    }
    h2b_buf_printf(&b, "  </testsuite>\n</testsuites>\n");
    return h2b_buf_finish(&b, out);
}
