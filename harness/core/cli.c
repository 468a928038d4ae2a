/*
 * cli.c - strict value parsers.
 *
 * strtoull/strtod are wrapped because on their own they accept leading spaces, signs on unsigned
 * numbers and trailing junk; each of those has turned a typo into a wrong benchmark elsewhere.
 */
#include "core/cli.h"
#include "core/error.h"

#include <ctype.h>
#include <getopt.h>
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

/* Optimal string alignment distance between a[0..na) and b[0..nb), capped: names are short
 * (at most 63 bytes are compared), so the three rows live on the stack. */
static size_t edit_distance(const char *a, size_t na, const char *b, size_t nb)
{
    enum { MAX = 64 };
    size_t prev2[MAX], prev[MAX], cur[MAX];
    na = na < MAX - 1 ? na : MAX - 1;
    nb = nb < MAX - 1 ? nb : MAX - 1;
    for (size_t j = 0; j <= nb; j++)
        prev[j] = j;
    for (size_t i = 1; i <= na; i++) {
        cur[0] = i;
        for (size_t j = 1; j <= nb; j++) {
            size_t cost = a[i - 1] != b[j - 1];
            size_t d = prev[j] + 1;
            d = cur[j - 1] + 1 < d ? cur[j - 1] + 1 : d;
            d = prev[j - 1] + cost < d ? prev[j - 1] + cost : d;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
                d = prev2[j - 2] + 1 < d ? prev2[j - 2] + 1 : d;
            cur[j] = d;
        }
        memcpy(prev2, prev, sizeof(prev));
        memcpy(prev, cur, sizeof(cur));
    }
    return prev[nb];
}

const char *h2b_cli_suggest(const char *arg, const struct option *opts, bool *needs_value)
{
    *needs_value = false;
    if (!arg || strncmp(arg, "--", 2) != 0 || !arg[2])
        return NULL;
    const char *word = arg + 2;
    size_t n = strcspn(word, "=");
    const char *best = NULL;
    size_t best_d = SIZE_MAX;
    for (const struct option *o = opts; o && o->name; o++) {
        size_t len = strlen(o->name);
        if (len == n && memcmp(o->name, word, n) == 0) {
            *needs_value = o->has_arg == required_argument && !word[n];
            return o->name;
        }
        size_t d = edit_distance(word, n, o->name, len);
        size_t limit = len / 3 > 1 ? len / 3 : 1;
        if (n >= 2 && n < len && memcmp(o->name, word, n) == 0)
            d = 1; /* an abbreviation getopt found ambiguous */
        if (d <= limit && d < best_d) {
            best = o->name;
            best_d = d;
        }
    }
    return best;
}
