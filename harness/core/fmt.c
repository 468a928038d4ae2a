/*
 * fmt.c - numbers as a reader wants them in a table (fmt.h).
 *
 * Times keep three significant digits in the largest unit that leaves at least 1 (812 ns,
 * 12.3 µs, 4.56 ms): percentiles carry about 1% error, more digits would be noise. Counts are
 * exact values (B/op, allocs/op, req/s) and print in full with thousands separators. Negative
 * signs are U+2212 so columns of deltas read cleanly.
 *
 * It lived in report/fmt.c, which gates/ cannot call (report links gates), so `h2bench ab` and
 * `h2bench compare` printed the same numbers their own ways (1650 ns, 1.65e+03 ns, 1.65 µs).
 * Rejected: keeping several formatters "for precision" where a table is read by a person; a
 * program reads the JSON, where every digit is kept.
 */
#include "core/fmt.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const char *three_digits(double v, const char *unit, char *buf, size_t n)
{
    if (v < 9.995)
        snprintf(buf, n, "%.2f %s", v, unit);
    else if (v < 99.95)
        snprintf(buf, n, "%.1f %s", v, unit);
    else
        snprintf(buf, n, "%.0f %s", v, unit);
    return buf;
}

const char *h2b_fmt_ns(double ns, char *buf, size_t n)
{
    if (isnan(ns)) {
        snprintf(buf, n, "n/a");
        return buf;
    }
    if (ns < 999.5)
        return three_digits(ns, "ns", buf, n);
    if (ns < 999.5e3)
        return three_digits(ns / 1e3, "µs", buf, n);
    if (ns < 999.5e6)
        return three_digits(ns / 1e6, "ms", buf, n);
    return three_digits(ns / 1e9, "s", buf, n);
}

/* Writes the integer part of v (>= 0) with comma separators. */
static void grouped(double v, char *buf, size_t n)
{
    char digits[64];
    snprintf(digits, sizeof(digits), "%.0f", v);
    size_t len = strlen(digits), o = 0;
    for (size_t i = 0; i < len && o + 2 < n; i++) {
        if (i > 0 && (len - i) % 3 == 0)
            buf[o++] = ',';
        buf[o++] = digits[i];
    }
    buf[o] = '\0';
}

const char *h2b_fmt_count(double v, char *buf, size_t n)
{
    if (isnan(v))
        snprintf(buf, n, "n/a");
    else if (v == floor(v) || v >= 1e4)
        grouped(v, buf, n);
    else if (v < 100)
        snprintf(buf, n, "%.2f", v);
    else
        snprintf(buf, n, "%.1f", v);
    return buf;
}

const char *h2b_fmt_rate(double v, char *buf, size_t n)
{
    if (isnan(v))
        snprintf(buf, n, "n/a");
    else
        grouped(v, buf, n);
    return buf;
}

const char *h2b_fmt_ratio(double head, double base, char *buf, size_t n)
{
    if (isnan(head) || isnan(base))
        snprintf(buf, n, "n/a");
    else if (base == 0 && head == 0)
        snprintf(buf, n, "—");
    else if (base == 0)
        snprintf(buf, n, "new (base 0)");
    else
        snprintf(buf, n, "%.2f×", head / base);
    return buf;
}

/* v's sign (U+2212 for a minus), then the magnitude as mag formats it. */
static const char *signed_of(double v, const char *(*mag)(double, char *, size_t), char *buf,
                             size_t n)
{
    char m[48];
    mag(fabs(v), m, sizeof(m));
    snprintf(buf, n, "%s%s", v < 0 ? "−" : "+", m);
    return buf;
}

const char *h2b_fmt_signed_ns(double ns, char *buf, size_t n)
{
    return signed_of(ns, h2b_fmt_ns, buf, n);
}

const char *h2b_fmt_signed_rate(double v, char *buf, size_t n)
{
    return signed_of(v, h2b_fmt_rate, buf, n);
}

size_t h2b_fmt_width(const char *s)
{
    size_t w = 0;
    for (; s && *s; s++)
        w += ((unsigned char)*s & 0xC0) != 0x80; /* continuation bytes take no column */
    return w;
}
