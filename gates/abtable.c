/*
 * abtable.c - the one A/B table (abtable.h): `h2bench ab`'s verdict, `h2bench compare`'s rows
 * and the report's "A/B against the base" all lay their rows out here.
 *
 * Approach: an engine judges a row and fills a small view of it (status, the two values, the
 * interval it has, a note); this file formats the cells once (format_row) and lays them out
 * twice: fixed columns for a terminal (widths measured in columns, since µs, × and − are
 * multi-byte) and a markdown table. The ratio is always head / base of the two values shown,
 * so a reader can check it; the interval says what it is an interval of by its form (a ratio
 * interval is unsigned, a difference carries signs and the unit).
 *
 * Rejected: one renderer per engine, as it was: ab.c printed "1650 ns" and "2.012", compare's
 * terminal table "1650 ns" and "1.964x", the report "1.65 µs" and "1.96×", with three column
 * sets and three vocabularies for one question (is head worse than base?). Rejected: a
 * renderer in report/ (where compare's tables had moved): gates/ab.c cannot call it, since
 * report links gates.
 */
#include "gates/abtable.h"
#include "core/fmt.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

enum { C_STATUS, C_BENCH, C_METRIC, C_BASE, C_HEAD, C_RATIO, C_INTERVAL, C_NOTE, C_COUNT };

static const char *const headers[C_COUNT] = {
    "status", "benchmark", "metric", "base", "head", "head/base", "interval", "note",
};
static const bool right[C_COUNT] = {[C_BASE] = true, [C_HEAD] = true, [C_RATIO] = true};

/* A row's cells as text. The strings of the view (bench, metric, note) are pointed at. */
struct cells {
    const char *s[C_COUNT];
    char base[48], head[48], ratio[32], interval[112];
};

static const char *value(const struct h2b_abtable_row *r, double v, char *buf, size_t n)
{
    if (isnan(v) || !r->metric)
        snprintf(buf, n, "-");
    else if (r->unit == H2B_ABTABLE_NS)
        h2b_fmt_ns(v, buf, n);
    else if (r->unit == H2B_ABTABLE_RATE)
        h2b_fmt_rate(v, buf, n);
    else
        h2b_fmt_count(v, buf, n);
    return buf;
}

static const char *signed_value(const struct h2b_abtable_row *r, double v, char *buf, size_t n)
{
    return r->unit == H2B_ABTABLE_NS ? h2b_fmt_signed_ns(v, buf, n)
                                     : h2b_fmt_signed_rate(v, buf, n);
}

static void format_row(const struct h2b_abtable_row *r, struct cells *c)
{
    c->s[C_STATUS] = h2b_verdict_words(r->status, r->failing)->word;
    c->s[C_BENCH] = r->bench ? r->bench : "";
    c->s[C_METRIC] = r->metric ? r->metric : "-";
    c->s[C_BASE] = value(r, r->base, c->base, sizeof(c->base));
    c->s[C_HEAD] = value(r, r->head, c->head, sizeof(c->head));
    if (isnan(r->base) || isnan(r->head) || !r->metric)
        snprintf(c->ratio, sizeof(c->ratio), "-");
    else
        h2b_fmt_ratio(r->head, r->base, c->ratio, sizeof(c->ratio));
    c->s[C_RATIO] = c->ratio;
    if (r->interval == H2B_ABTABLE_RATIO) {
        snprintf(c->interval, sizeof(c->interval), "[%.3f, %.3f]", r->lo, r->hi);
    } else if (r->interval == H2B_ABTABLE_DIFF) {
        char lo[48], hi[48];
        snprintf(c->interval, sizeof(c->interval), "[%s, %s]",
                 signed_value(r, r->lo, lo, sizeof(lo)), signed_value(r, r->hi, hi, sizeof(hi)));
    } else {
        snprintf(c->interval, sizeof(c->interval), "-");
    }
    c->s[C_INTERVAL] = c->interval;
    c->s[C_NOTE] = r->note ? r->note : "";
}

static void text_line(struct h2b_buf *b, const char *const s[C_COUNT], const size_t w[C_COUNT])
{
    size_t last = C_COUNT - 1;
    while (last > 0 && !s[last][0])
        last--; /* no trailing blanks for an empty note */
    for (size_t k = 0; k <= last; k++) {
        size_t fill = w[k] - h2b_fmt_width(s[k]);
        if (k)
            h2b_buf_puts(b, "  ");
        if (right[k])
            h2b_buf_pad(b, fill);
        h2b_buf_term(b, s[k]);
        if (!right[k] && k < last)
            h2b_buf_pad(b, fill);
    }
    h2b_buf_puts(b, "\n");
}

void h2b_abtable_text(struct h2b_buf *b, const struct h2b_abtable_row *rows, size_t n)
{
    size_t w[C_COUNT];
    for (size_t k = 0; k < C_COUNT; k++)
        w[k] = h2b_fmt_width(headers[k]);
    for (size_t i = 0; i < n; i++) {
        struct cells c;
        format_row(&rows[i], &c);
        for (size_t k = 0; k < C_COUNT; k++) {
            size_t cw = h2b_fmt_width(c.s[k]);
            w[k] = cw > w[k] ? cw : w[k];
        }
    }
    text_line(b, headers, w);
    for (size_t i = 0; i < n; i++) {
        struct cells c;
        format_row(&rows[i], &c);
        text_line(b, c.s, w);
    }
}

void h2b_abtable_md(struct h2b_buf *b, const struct h2b_abtable_row *rows, size_t n)
{
    h2b_buf_puts(b, "| Status | Benchmark | Metric | Base | Head | Head/base | Interval | Note |\n"
                    "|---|---|---|---:|---:|---:|---|---|\n");
    for (size_t i = 0; i < n; i++) {
        const struct h2b_abtable_row *r = &rows[i];
        struct cells c;
        format_row(r, &c);
        h2b_buf_puts(b, "| ");
        if (r->failing)
            h2b_buf_printf(b, "%s ", h2b_verdict_words(r->status, true)->icon);
        h2b_buf_printf(b, "%s | ", c.s[C_STATUS]);
        h2b_buf_md(b, c.s[C_BENCH]);
        h2b_buf_printf(b, " | %s | %s | %s | %s | %s | ", c.s[C_METRIC], c.s[C_BASE], c.s[C_HEAD],
                       c.s[C_RATIO], c.s[C_INTERVAL]);
        h2b_buf_md(b, c.s[C_NOTE]);
        h2b_buf_puts(b, " |\n");
    }
}
