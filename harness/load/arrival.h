/*
 * arrival.h - the open-loop arrival schedule: when each request is meant to be sent.
 *
 * A schedule hands out intended send times in ns, in order, independent of how the server
 * answers. Latency in --rate mode is measured from these times, so a stalled server cannot hide
 * the requests it delayed (coordinated omission). Constant arrivals are start + k * interval,
 * computed from k (no accumulated rounding drift); Poisson arrivals add exponential gaps drawn
 * from a seeded splitmix64 generator, so a run is reproducible from its seed.
 *
 * A schedule is plain caller-owned data; one per worker thread, never shared.
 */
#ifndef H2B_LOAD_ARRIVAL_H
#define H2B_LOAD_ARRIVAL_H

#include <stdint.h>

struct h2b_shape;

enum h2b_arrival_kind { H2B_ARRIVAL_CONSTANT = 0, H2B_ARRIVAL_POISSON = 1 };

struct h2b_arrival {
    enum h2b_arrival_kind kind;
    uint64_t start_ns;  /* first intended time (constant) or origin of the gaps (poisson) */
    double interval_ns; /* mean gap between arrivals */
    uint64_t k;         /* arrivals handed out so far */
    double offset_ns;   /* poisson: offset of next_ns from start_ns */
    uint64_t rng;       /* splitmix64 state */
    uint64_t next_ns;   /* intended time of the next arrival */
    /* shaped (h2b_arrival_init_shaped): the arrivals' positions in the shape's integral */
    const struct h2b_shape *shape; /* NULL: a constant rate */
    double pos;                    /* the next arrival's index in the whole run's stream */
    double stride;                 /* workers sharing the shape: this one takes every stride-th */
};

/* Starts a schedule of rate_per_s arrivals per second (> 0) from start_ns. seed only matters for
 * H2B_ARRIVAL_POISSON. Returns H2B_OK or H2B_ERR_INVAL (bad rate or kind; *a untouched). */
int h2b_arrival_init(struct h2b_arrival *a, enum h2b_arrival_kind kind, double rate_per_s,
                     uint64_t start_ns, uint64_t seed);

/* Starts a schedule that follows shape (borrowed; it must outlive the schedule) from start_ns:
 * this worker takes the arrivals phase, phase + stride, phase + 2 stride, ... of the run's stream
 * (constant), or a Poisson process of 1/stride of the shape's rate (poisson: gaps of mean stride
 * in the integral's units, a time change of a unit-rate process). An arrival's time is
 * start_ns + h2b_shape_time_of(position); past the shape's end it is UINT64_MAX. Returns H2B_OK
 * or H2B_ERR_INVAL (stride < 1, phase < 0, bad kind; *a untouched). */
int h2b_arrival_init_shaped(struct h2b_arrival *a, enum h2b_arrival_kind kind,
                            const struct h2b_shape *shape, double stride, double phase,
                            uint64_t start_ns, uint64_t seed);

/* Intended time of the next arrival, without consuming it. */
static inline uint64_t h2b_arrival_peek(const struct h2b_arrival *a)
{
    return a->next_ns;
}

/* Returns the intended time of the next arrival and advances the schedule. */
uint64_t h2b_arrival_pop(struct h2b_arrival *a);

/* "constant" or "poisson" into *out. Returns H2B_OK or H2B_ERR_PARSE (*out untouched). */
int h2b_arrival_parse_kind(const char *text, enum h2b_arrival_kind *out);

/* The name parsed by h2b_arrival_parse_kind. */
const char *h2b_arrival_kind_name(enum h2b_arrival_kind kind);

#endif
