/*
 * abtable.c - the one A/B table: the rows of a comparison (gates/compare.h) as markdown, for the
 * report's "A/B against the base" section (md.c) and for `h2bench compare --md`, and as the
 * plain-text table `h2bench compare` prints.
 *
 * Approach: the rows come from h2b_compare_files, judged once there (h2b_compare_row_verdict is
 * the one reading of a row's significance); this file only lays them out. One table per kind
 * (component benchmarks, end-to-end cells), a benchmark's name printed once over its metrics,
 * values in the report's units (fmt.c: 1.65 µs, 123,457 req/s), the ratio head / base, and a
 * significance column that carries its evidence: the 99.9 % interval of head − base and how many
 * forks or repeats it came from, or why there is none. compare's A is the base and its B the
 * head, so both outputs use one vocabulary.
 *
 * Rejected: two renderers, one in gates/compare.c and one in md.c, as it was. They printed the
 * same rows with different units, columns and wording, and the report's table did not escape a
 * benchmark name holding '|'. A renderer in gates/ would need the report's number formatting
 * moved below it; apps/ can call report/ directly, so the table lives beside its formatters.
 * The plain-text layout (a terminal's: fixed columns, A and B, the interval of B - A) was
 * gates/compare.c's; it is here so that one file lays out compare's rows, and both layouts take
 * the words from h2b_compare_row_verdict.
 */
#include "core/buf.h"
#include "gates/compare.h"
#include "core/error.h"
#include "report/report_int.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#define B(x) char x[64]

static void fmt_value(const struct h2b_compare_row *r, double v, char *buf, size_t n)
{
    if (strcmp(r->unit, "ns") == 0)
        h2b_fmt_ns(v, buf, n);
    else if (r->higher_better)
        h2b_fmt_rate(v, buf, n);
    else
        h2b_fmt_count(v, buf, n);
}

static void fmt_signed(const struct h2b_compare_row *r, double v, char *buf, size_t n)
{
    if (strcmp(r->unit, "ns") == 0)
        h2b_fmt_signed_ns(v, buf, n);
    else
        h2b_fmt_signed_rate(v, buf, n);
}

/* The significance column: the verdict, which way, and the evidence. */
static void significance(const struct h2b_compare_row *r, char *buf, size_t n)
{
    bool micro = strcmp(r->kind, "micro") == 0;
    const char *samples =
        micro ? (r->n_a == 1 ? "fork" : "forks") : (r->n_a == 1 ? "repeat" : "repeats");
    if (r->exact) {
        snprintf(buf, n, "%s",
                 r->sig == H2B_COMPARE_SIG_YES ? "**yes**: exact counts differ"
                                               : "no: exact counts, equal");
    } else if (r->sig == H2B_COMPARE_SIG_NA) {
        snprintf(buf, n, "n/a (%zu %s in base, %zu in head; needs 2 a side)", r->n_a, samples,
                 r->n_b);
    } else {
        B(lo);
        B(hi);
        fmt_signed(r, r->ci_lo, lo, sizeof(lo));
        fmt_signed(r, r->ci_hi, hi, sizeof(hi));
        const char *v = h2b_compare_row_verdict(r);
        snprintf(buf, n, "%s%s%s: 99.9%% CI of head − base [%s, %s], %zu+%zu %s",
                 r->sig == H2B_COMPARE_SIG_YES ? "**" : "", v,
                 r->sig == H2B_COMPARE_SIG_YES ? "**" : "", lo, hi, r->n_a, r->n_b, samples);
    }
}

static void rows(struct h2b_buf *o, const struct h2b_compare_report *c, const char *kind)
{
    bool micro = strcmp(kind, "micro") == 0, header = false;
    const char *prev = "";
    for (size_t i = 0; i < c->count; i++) {
        const struct h2b_compare_row *r = &c->rows[i];
        if (strcmp(r->kind, kind) != 0)
            continue;
        if (!header)
            h2b_buf_printf(o,
                           "\n### %s\n\n| %s | Metric | Base | Head | Ratio | "
                           "Significant? |\n|---|---|---:|---:|---:|---|\n",
                           micro ? "Component benchmarks" : "End-to-end cells",
                           micro ? "Benchmark" : "Cell");
        header = true;
        B(x);
        B(y);
        B(z);
        char sig[256];
        fmt_value(r, r->a, x, sizeof(x));
        fmt_value(r, r->b, y, sizeof(y));
        significance(r, sig, sizeof(sig));
        if (r->has_ratio)
            snprintf(z, sizeof(z), "%.2f×", r->ratio);
        else
            snprintf(z, sizeof(z), "%s", r->a == r->b ? "—" : "new (base 0)");
        if (strcmp(prev, r->item) == 0) {
            h2b_buf_puts(o, "| |");
        } else if (micro) {
            h2b_buf_puts(o, "| ");
            h2b__report_md_code(o, r->item);
            h2b_buf_puts(o, " |");
        } else {
            h2b_buf_puts(o, "| ");
            h2b_buf_md(o, r->item);
            h2b_buf_puts(o, " |");
        }
        h2b_buf_printf(o, " %s | %s | %s | %s | %s |\n", r->metric, x, y, z, sig);
        prev = r->item;
    }
}

void h2b__ab_tables(struct h2b_buf *o, const struct h2b_compare_report *c)
{
    rows(o, c, "micro");
    rows(o, c, "matrix");
    if (c->only_a || c->only_b)
        h2b_buf_printf(o, "\nOnly in base: %zu benchmarks or cells; only in head: %zu.\n",
                       c->only_a, c->only_b);
}

int h2b_report_compare_md(const struct h2b_compare_report *r, char **out)
{
    struct h2b_buf b = {0};
    size_t worse = 0, better = 0;
    for (size_t i = 0; i < r->count; i++) {
        const char *v = h2b_compare_row_verdict(&r->rows[i]);
        worse += strcmp(v, "yes, worse") == 0;
        better += strcmp(v, "yes, better") == 0;
    }
    h2b_buf_printf(&b,
                   "## h2bench compare: %zu significantly worse, %zu significantly better, "
                   "%zu rows\n\n",
                   worse, better, r->count);
    h2b_buf_puts(&b, "Base (A) ");
    h2b__report_md_code(&b, r->path_a);
    h2b_buf_puts(&b, " against head (B) ");
    h2b__report_md_code(&b, r->path_b);
    h2b_buf_puts(&b, ". Ratio is head / base; values are means over forks or repeats. A "
                     "difference is significant when the 99.9% Welch confidence interval of "
                     "head − base excludes zero; with fewer than two values a side there is "
                     "no test and the table says n/a. Allocation counts are exact, so any "
                     "difference in them is real.\n");
    h2b__ab_tables(&b, r);
    return h2b_buf_finish(&b, out);
}

/* ---- plain text (`h2bench compare` on a terminal) ---- */

static void text_num(char *buf, size_t size, double v, const char *unit)
{
    if (fabs(v) >= 100 || v == floor(v))
        snprintf(buf, size, "%.0f%s%s", v, unit[0] ? " " : "", unit);
    else
        snprintf(buf, size, "%.3g%s%s", v, unit[0] ? " " : "", unit);
}

static void text_ci(char *buf, size_t size, const struct h2b_compare_row *row)
{
    if (!row->has_ci) {
        snprintf(buf, size, "n/a (%zu vs %zu sample%s)", row->n_a, row->n_b,
                 row->n_a == 1 && row->n_b == 1 ? "" : "s");
        return;
    }
    if (row->exact) {
        snprintf(buf, size, "exact");
        return;
    }
    char lo[48], hi[48];
    text_num(lo, sizeof(lo), row->ci_lo, "");
    text_num(hi, sizeof(hi), row->ci_hi, row->unit);
    snprintf(buf, size, "[%s, %s]", lo, hi);
}

static void text_ratio(char *buf, size_t size, const struct h2b_compare_row *row)
{
    if (row->has_ratio)
        snprintf(buf, size, "%.3fx", row->ratio);
    else
        snprintf(buf, size, row->b == 0 ? "=" : "new");
}

/* The formatted cells of one row of the terminal table. */
struct text_cells {
    char a[48], b[48], ratio[32], ci[128];
};

static void text_cells(struct text_cells *c, const struct h2b_compare_row *row)
{
    text_num(c->a, sizeof(c->a), row->a, row->unit);
    text_num(c->b, sizeof(c->b), row->b, row->unit);
    text_ratio(c->ratio, sizeof(c->ratio), row);
    text_ci(c->ci, sizeof(c->ci), row);
}

int h2b_report_compare_text(const struct h2b_compare_report *r, char **out)
{
    struct h2b_buf b = {0};
    size_t w = strlen("benchmark / cell");
    for (size_t i = 0; i < r->count; i++)
        w = h2b_buf_width(w, r->rows[i].item);
    h2b_buf_printf(&b, "A: %s\nB: %s\n\n", r->path_a, r->path_b);
    h2b_buf_printf(&b, "%-*s  %-11s  %14s  %14s  %8s  %-30s  %s\n", (int)w, "benchmark / cell",
                   "metric", "A", "B", "B/A", "99.9% CI of B-A", "significant");
    for (size_t i = 0; i < r->count; i++) {
        const struct h2b_compare_row *row = &r->rows[i];
        struct text_cells c;
        text_cells(&c, row);
        h2b_buf_printf(&b, "%-*s  %-11s  %14s  %14s  %8s  %-30s  %s\n", (int)w, row->item,
                       row->metric, c.a, c.b, c.ratio, c.ci, h2b_compare_row_verdict(row));
    }
    h2b_buf_printf(&b, "\n%zu rows; %zu benchmarks/cells only in A, %zu only in B\n", r->count,
                   r->only_a, r->only_b);
    return h2b_buf_finish(&b, out);
}
