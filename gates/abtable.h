/*
 * abtable.h - the one A/B table: rows of a head measured against a base, as a terminal table and
 * as markdown, for `h2bench ab`, `h2bench compare` and the report's "A/B against the base".
 *
 * The verdict engine (gates/ab.c: ab, compare and the report alike) fills a view of each row
 * (h2b_ab_row_view in ab.h), so every A/B table has the same columns: status, benchmark,
 * metric, base, head, head/base, interval, note. The status is a verdict (core/verdict.h); numbers
 * print through core/fmt.h, as everywhere in the report. Not thread-safe per buffer; no allocation
 * of its own.
 */
#ifndef H2B_GATES_ABTABLE_H
#define H2B_GATES_ABTABLE_H

#include "core/buf.h"
#include "core/verdict.h"

#include <stdbool.h>
#include <stddef.h>

/* How a row's values print (core/fmt.h). */
enum h2b_abtable_unit {
    H2B_ABTABLE_NS,    /* a time: 812 ns, 1.65 µs */
    H2B_ABTABLE_RATE,  /* req/s: 123,457 */
    H2B_ABTABLE_COUNT, /* an exact count per op or per request: 3, 10.03, 1,234 */
};

/* What the interval column holds. */
enum h2b_abtable_interval {
    H2B_ABTABLE_NO_INTERVAL, /* "-" */
    H2B_ABTABLE_RATIO,       /* of head / base: [0.981, 1.020] (ab's bootstrap) */
    H2B_ABTABLE_DIFF, /* of head − base, in the row's unit: [+447 ns, +1.17 µs] (compare) */
};

struct h2b_abtable_row {
    enum h2b_verdict status;
    bool failing;       /* printed in the verdict's failing form, with its icon in markdown */
    const char *bench;  /* a benchmark or a cell; escaped for markdown here */
    const char *metric; /* "ns/op", "p99", "req/s", ...; NULL: the row is the whole benchmark */
    enum h2b_abtable_unit unit;
    double base, head; /* NAN: not on that side ("-"); the ratio is head / base */
    enum h2b_abtable_interval interval;
    double lo, hi;
    const char *note; /* or NULL */
};

/* Appends the rows as a terminal table: a header line, then one line per row, columns as wide
 * as their widest entry (UTF-8 counted by columns), numbers right-aligned. */
void h2b_abtable_text(struct h2b_buf *b, const struct h2b_abtable_row *rows, size_t n);

/* Appends the rows as a markdown table (header, alignment row, one line per row). */
void h2b_abtable_md(struct h2b_buf *b, const struct h2b_abtable_row *rows, size_t n);

#endif
