/*
 * cli.c - strict value parsers.
 *
 * strtoull/strtod are wrapped because on their own they accept leading spaces, signs on unsigned
 * numbers and trailing junk; each of those has turned a typo into a wrong benchmark elsewhere.
 */
#include "core/cli.h"
#include "core/error.h"

#include <ctype.h>
#include <stdbool.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* The leading number of text: an unsigned decimal integer into *u, or (real) a finite decimal
 * into *d; *end after it. Only a digit (for a real also '.' or '-') may start it: strtoull and
 * strtod would skip spaces and take a sign on an unsigned number. */
static int parse_number(const char *text, bool real, const char **end, uint64_t *u, double *d)
{
    if (text == NULL ||
        !(isdigit((unsigned char)*text) || (real && (*text == '.' || *text == '-'))))
        return H2B_ERR_PARSE;
    errno = 0;
    char *e;
    if (real)
        *d = strtod(text, &e);
    else
        *u = strtoull(text, &e, 10);
    if (e == text)
        return H2B_ERR_PARSE;
    if (errno == ERANGE || (real && !isfinite(*d)))
        return H2B_ERR_RANGE;
    *end = e;
    return H2B_OK;
}

/* The range a whole-string number must be in: [umin, umax], or (real) [dmin, dmax]. */
struct limits {
    bool real;
    uint64_t umin, umax;
    double dmin, dmax;
};

/* text is one number within lim and nothing else; *u or *d written only then. */
static int parse_whole(const char *text, const struct limits *lim, uint64_t *u, double *d)
{
    const char *end;
    uint64_t uv = 0;
    double dv = 0;
    int rv = parse_number(text, lim->real, &end, &uv, &dv);
    if (rv != H2B_OK)
        return rv;
    if (*end != '\0')
        return H2B_ERR_PARSE;
    if (lim->real ? dv < lim->dmin || dv > lim->dmax : uv < lim->umin || uv > lim->umax)
        return H2B_ERR_RANGE;
    if (lim->real)
        *d = dv;
    else
        *u = uv;
    return H2B_OK;
}

int h2b_cli_parse_u64(const char *text, uint64_t min, uint64_t max, uint64_t *out)
{
    struct limits lim = {.umin = min, .umax = max};
    return parse_whole(text, &lim, out, NULL);
}

int h2b_cli_parse_size(const char *text, uint64_t min, uint64_t max, uint64_t *out)
{
    const char *end;
    uint64_t v;
    int rv = parse_number(text, false, &end, &v, NULL);
    if (rv != H2B_OK)
        return rv;
    unsigned shift = 0;
    switch (*end) {
    case '\0':
        break;
    case 'k':
    case 'K':
        shift = 10;
        break;
    case 'm':
    case 'M':
        shift = 20;
        break;
    case 'g':
    case 'G':
        shift = 30;
        break;
    default:
        return H2B_ERR_PARSE;
    }
    if (shift != 0 && end[1] != '\0')
        return H2B_ERR_PARSE;
    if (shift != 0 && v > (UINT64_MAX >> shift))
        return H2B_ERR_RANGE;
    v <<= shift;
    if (v < min || v > max)
        return H2B_ERR_RANGE;
    *out = v;
    return H2B_OK;
}

int h2b_cli_parse_double(const char *text, double min, double max, double *out)
{
    struct limits lim = {.real = true, .dmin = min, .dmax = max};
    return parse_whole(text, &lim, NULL, out);
}

int h2b_cli_parse_duration_ns(const char *text, uint64_t min_ns, uint64_t max_ns, uint64_t *out)
{
    static const struct {
        const char *unit;
        double ns;
    } units[] = {{"", 1e9},  {"ns", 1.0}, {"us", 1e3},  {"ms", 1e6},
                 {"s", 1e9}, {"m", 60e9}, {"h", 3600e9}};
    const char *end;
    double v;
    int rv = parse_number(text, true, &end, NULL, &v);
    if (rv != H2B_OK)
        return rv;
    if (v < 0)
        return H2B_ERR_RANGE;
    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
        if (strcmp(end, units[i].unit) != 0)
            continue;
        double ns = v * units[i].ns;
        if (ns > (double)max_ns || ns < (double)min_ns)
            return H2B_ERR_RANGE;
        *out = (uint64_t)llround(ns);
        return H2B_OK;
    }
    return H2B_ERR_PARSE;
}
