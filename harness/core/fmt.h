/*
 * fmt.h - numbers as a reader wants them in a table: the one formatting of times, counts, rates
 * and ratios for the report, the A/B tables of `h2bench ab` and `h2bench compare` (gates/abtable.h)
 * and anything else that prints a number for a person rather than for a program.
 *
 * Every function writes into the caller's buffer (truncating to n bytes, always terminated) and
 * returns it. NAN prints as "n/a". Output is UTF-8 (µs, ×, the minus sign U+2212); width() gives
 * the columns it takes on a terminal. Thread-safe.
 */
#ifndef H2B_CORE_FMT_H
#define H2B_CORE_FMT_H

#include <stddef.h>

const char *h2b_fmt_ns(double ns, char *buf, size_t n);   /* 812 ns, 12.3 µs, 4.56 ms, 2.50 s */
const char *h2b_fmt_count(double v, char *buf, size_t n); /* 1,234,567 or 3.50 or 123.4 */
const char *h2b_fmt_rate(double v, char *buf, size_t n);  /* 123,457 (rounded) */
const char *h2b_fmt_ratio(double head, double base, char *buf, size_t n); /* 1.04×, —, new */
const char *h2b_fmt_signed_ns(double ns, char *buf, size_t n);  /* +1.20 µs, −50.0 ns */
const char *h2b_fmt_signed_rate(double v, char *buf, size_t n); /* +1,234, −56 */

/* The columns s takes on a terminal: its UTF-8 code points (NULL counts as empty). Every
 * character these functions print is one column wide. */
size_t h2b_fmt_width(const char *s);

#endif
