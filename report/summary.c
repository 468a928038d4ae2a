/*
 * summary.c - the charts of `h2bench report --summary`: Mermaid xychart-beta blocks in place of
 * the PNG links (h2b__report_mermaid).
 *
 * A CI step summary (GITHUB_STEP_SUMMARY) is one markdown page with no files beside it: the
 * report's `![...](NAME.png)` links show nothing there. GitHub renders ```mermaid fences, so the
 * summary draws the two charts a reader of a pull request looks at from the results themselves,
 * without gnuplot: the component suite's ns/op per benchmark (horizontal bars, one per
 * benchmark) and each target's req/s per matrix cell (one bar chart per target, its name in the
 * title: xychart-beta has no legend, so one series per chart is the only unambiguous form). The
 * latency spectra, history and DSO charts have log axes or many series that xychart-beta cannot
 * draw faithfully; the summary names their PNGs instead, which REPORT.md's directory holds.
 *
 * Every name from a results file enters a block through h2b_buf_mermaid (core/buf.h), numbers
 * in fixed notation (Mermaid's lexer reads no exponent). Rejected: Unicode text bars in a code
 * block (they render everywhere but carry no axis, and a long name misaligns them), and inline
 * SVG (GitHub strips it from markdown).
 */
#include "report/report_int.h"
#include "core/stats.h"

#include <math.h>
#include <stdio.h>

#define MAX_BARS 40   /* bars per chart: more are left out, and the summary says how many */
#define MAX_LABEL 32  /* bytes of a name on an axis */
#define MAX_TARGETS 8 /* req/s charts, one per target */
#define MAX_REPEATS 256

static void fence_open(struct h2b_buf *o, bool horizontal, const char *title)
{
    h2b_buf_printf(o, "\n```mermaid\nxychart-beta%s\n    title ", horizontal ? " horizontal" : "");
    h2b_buf_mermaid(o, title, 120);
    h2b_buf_puts(o, "\n");
}

static void micro_chart(const struct h2b__report *rep, struct h2b_buf *o)
{
    const struct h2b_rdata_results *r = rep->head;
    size_t shown = 0, have = 0;
    for (size_t i = 0; i < r->n_micro; i++)
        have += r->micro[i].ns_per_op > 0;
    if (have == 0)
        return;
    fence_open(o, true, "Component suite: ns/op per benchmark (median of epochs)");
    h2b_buf_puts(o, "    x-axis [");
    for (size_t i = 0; i < r->n_micro && shown < MAX_BARS; i++) {
        if (!(r->micro[i].ns_per_op > 0))
            continue;
        h2b_buf_puts(o, shown ? ", " : "");
        h2b_buf_mermaid(o, r->micro[i].name, MAX_LABEL);
        shown++;
    }
    h2b_buf_puts(o, "]\n    y-axis \"ns/op\"\n    bar [");
    shown = 0;
    for (size_t i = 0; i < r->n_micro && shown < MAX_BARS; i++) {
        if (!(r->micro[i].ns_per_op > 0))
            continue;
        h2b_buf_printf(o, "%s%.2f", shown ? ", " : "", r->micro[i].ns_per_op);
        shown++;
    }
    h2b_buf_puts(o, "]\n```\n");
    if (have > shown)
        h2b_buf_printf(o, "\nThe chart shows the first %zu of %zu benchmarks.\n", shown, have);
}

static void rps_charts(const struct h2b__report *rep, struct h2b_buf *o)
{
    size_t nt = rep->n_targets < MAX_TARGETS ? rep->n_targets : MAX_TARGETS;
    for (size_t t = 0; t < nt; t++) {
        double med[MAX_BARS];
        size_t key[MAX_BARS], n = 0;
        for (size_t k = 0; k < rep->n_keys && n < MAX_BARS; k++) {
            double v[MAX_REPEATS];
            size_t got = h2b__report_group(rep->head, rep->targets[t], rep->keys[k], H2B__GROUP_RPS,
                                           v, MAX_REPEATS);
            if (got == 0)
                continue;
            med[n] = h2b_stats_median(v, got);
            key[n++] = k;
        }
        if (n == 0)
            continue;
        struct h2b_buf title;
        h2b_buf_init(&title);
        h2b_buf_puts(&title, rep->targets[t]);
        h2b_buf_puts(&title, ": req/s per cell (connections x streams, median of repeats)");
        fence_open(o, false, h2b_buf_str(&title));
        h2b_buf_free(&title);
        h2b_buf_puts(o, "    x-axis [");
        for (size_t i = 0; i < n; i++)
            h2b_buf_printf(o, "%s\"%ldx%ld\"", i ? ", " : "", rep->keys[key[i]].connections,
                           rep->keys[key[i]].streams);
        h2b_buf_puts(o, "]\n    y-axis \"req/s\"\n    bar [");
        for (size_t i = 0; i < n; i++)
            h2b_buf_printf(o, "%s%.0f", i ? ", " : "", isfinite(med[i]) ? med[i] : 0.0);
        h2b_buf_puts(o, "]\n```\n");
    }
    if (rep->n_targets > nt)
        h2b_buf_printf(o, "\nCharts for the first %zu of %zu targets.\n", nt, rep->n_targets);
}

void h2b__report_mermaid(const struct h2b__report *rep, struct h2b_buf *o,
                         enum h2b__chart_kind kind)
{
    switch (kind) {
    case H2B__CHART_MICRO:
        micro_chart(rep, o);
        return;
    case H2B__CHART_RPS:
        rps_charts(rep, o);
        return;
    case H2B__CHART_LATENCY:
    case H2B__CHART_HISTORY:
    case H2B__CHART_DSO:
    case H2B__CHART_CAPACITY:
    case H2B__CHART_OVER_TIME:
        break;
    }
    if (!rep->charts_rendered)
        return;
    for (size_t i = 0; i < rep->n_charts; i++) {
        if (rep->charts[i].kind == kind)
            h2b_buf_printf(o, "\nChart in the report directory: `%s.png`.\n", rep->charts[i].name);
    }
}
