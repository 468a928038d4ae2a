/*
 * arrival.c - constant and Poisson arrival schedules (see arrival.h).
 *
 * Constant times come from the index (start + round(k * interval)), not from adding the interval
 * repeatedly, so a million arrivals at a fractional-ns interval land exactly where they should.
 * Poisson gaps are -ln(U) * mean with U uniform in (0, 1] from splitmix64: small, fast, seedable,
 * and good enough for inter-arrival times (this is not cryptography). The Poisson offset is kept
 * as a double; at 1e6 arrivals/s its 53-bit mantissa keeps ns resolution for over 100 days.
 * A shaped schedule keeps its position in the shape's integral instead (an index, exact in a
 * double up to 2^53 requests) and asks the shape for the time (shape.c).
 */
#include "load/arrival.h"
#include "load/shape.h"
#include "core/error.h"

#include <math.h>
#include <stdbool.h>
#include <string.h>

static uint64_t splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* Uniform in (0, 1]: never 0, so the logarithm stays finite. */
static double uniform01(uint64_t *state)
{
    return (double)((splitmix64(state) >> 11) + 1) * (1.0 / 9007199254740992.0);
}

static double exp_gap(struct h2b_arrival *a)
{
    return -log(uniform01(&a->rng)) * a->interval_ns;
}

/* The common start of both schedules; false (a untouched) for an unknown kind. */
static bool start(struct h2b_arrival *a, enum h2b_arrival_kind kind, uint64_t start_ns,
                  uint64_t seed)
{
    if (kind != H2B_ARRIVAL_CONSTANT && kind != H2B_ARRIVAL_POISSON)
        return false;
    memset(a, 0, sizeof(*a));
    a->kind = kind;
    a->start_ns = start_ns;
    a->rng = seed;
    return true;
}

int h2b_arrival_init(struct h2b_arrival *a, enum h2b_arrival_kind kind, double rate_per_s,
                     uint64_t start_ns, uint64_t seed)
{
    if (!(rate_per_s > 0) || !isfinite(rate_per_s) || !start(a, kind, start_ns, seed))
        return H2B_ERR_INVAL;
    a->interval_ns = 1e9 / rate_per_s;
    if (kind == H2B_ARRIVAL_POISSON)
        a->offset_ns = exp_gap(a);
    a->next_ns = start_ns + (uint64_t)llround(a->offset_ns);
    return H2B_OK;
}

static uint64_t shaped_time(const struct h2b_arrival *a)
{
    uint64_t off = h2b_shape_time_of(a->shape, a->pos);
    return off == UINT64_MAX ? UINT64_MAX : a->start_ns + off;
}

int h2b_arrival_init_shaped(struct h2b_arrival *a, enum h2b_arrival_kind kind,
                            const struct h2b_shape *shape, double stride, double phase,
                            uint64_t start_ns, uint64_t seed)
{
    if (!shape || !(stride >= 1) || !(phase >= 0) || !isfinite(stride) || !isfinite(phase) ||
        !start(a, kind, start_ns, seed))
        return H2B_ERR_INVAL;
    a->shape = shape;
    a->stride = stride;
    a->interval_ns = stride; /* exp_gap's mean, in requests of the integral */
    a->pos = kind == H2B_ARRIVAL_POISSON ? exp_gap(a) : phase;
    a->next_ns = shaped_time(a);
    return H2B_OK;
}

uint64_t h2b_arrival_pop(struct h2b_arrival *a)
{
    uint64_t t = a->next_ns;
    a->k++;
    if (a->shape) {
        a->pos += a->kind == H2B_ARRIVAL_CONSTANT ? a->stride : exp_gap(a);
        a->next_ns = shaped_time(a);
        return t;
    }
    if (a->kind == H2B_ARRIVAL_CONSTANT)
        a->offset_ns = (double)a->k * a->interval_ns;
    else
        a->offset_ns += exp_gap(a);
    a->next_ns = a->start_ns + (uint64_t)llround(a->offset_ns);
    return t;
}

int h2b_arrival_parse_kind(const char *text, enum h2b_arrival_kind *out)
{
    if (text && strcmp(text, "constant") == 0)
        *out = H2B_ARRIVAL_CONSTANT;
    else if (text && strcmp(text, "poisson") == 0)
        *out = H2B_ARRIVAL_POISSON;
    else
        return H2B_ERR_PARSE;
    return H2B_OK;
}

const char *h2b_arrival_kind_name(enum h2b_arrival_kind kind)
{
    return kind == H2B_ARRIVAL_POISSON ? "poisson" : "constant";
}
