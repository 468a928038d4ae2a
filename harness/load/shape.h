/*
 * shape.h - a load shape: the open-loop request rate as a piecewise-linear function of time.
 *
 * `--stages 10s:1000,30s:5000,10s:0` ramps linearly from the start rate (0, or --total-rps) to
 * 1000 req/s over 10 s, to 5000 over the next 30 s, down to 0 over the last 10 s. `--step
 * 100+50/5s` holds 100 req/s for 5 s, then 150, 200, ... until -D ends (a staircase). The
 * arrival schedule asks the shape when the n-th request of the whole run is intended
 * (h2b_shape_time_of): the inverse of the shape's integral, so intended send times follow the
 * shape exactly and latency stays free of coordinated omission during a ramp.
 *
 * The same shapes give the number of open connections of a closed-loop run: `--conn-stages
 * 2s:8,2s:8,2s:2` (from 0) and `--conn-step 2+2/5s`; h2b_shape_share deals the value at t over the
 * workers.
 *
 * A shape is caller-owned, read-only once built, shared by every worker (no state changes).
 */
#ifndef H2B_LOAD_SHAPE_H
#define H2B_LOAD_SHAPE_H

#include <stddef.h>
#include <stdint.h>

struct h2b_diag;

/* Longest shape: stages plus steps. A growable list with a maximum (STYLE rule 7). */
#define H2B_SHAPE_MAX_SEGMENTS 100000

/* The largest value of a connection shape (-c's own limit). */
#define H2B_SHAPE_MAX_CONNS 1000000

struct h2b_shape_seg {
    uint64_t start_ns; /* offset of the segment's start from the shape's origin */
    uint64_t len_ns;   /* > 0 */
    double r0, r1;     /* rate at its start and its end, requests/s (>= 0), linear in between */
    double before;     /* requests intended before the segment (the integral up to start_ns) */
};

struct h2b_shape {
    struct h2b_shape_seg *seg; /* malloc'd, nseg entries */
    size_t nseg;
    uint64_t total_ns; /* the shape's length */
    double total;      /* requests intended over the whole shape */
};

/* Parses --stages text ("DUR:RATE,DUR:RATE,...": a duration as -D takes it, > 0, and a target
 * rate in req/s, >= 0), starting from start_rate. On error d says which stage, which field and
 * the 1-based column in text (file "--stages", line 1). Returns H2B_OK, H2B_ERR_PARSE (*s
 * untouched) or H2B_ERR_NOMEM. Free with h2b_shape_free. */
int h2b_shape_parse_stages(struct h2b_shape *s, const char *text, double start_rate,
                           struct h2b_diag *d);

/* Parses --conn-stages text ("DUR:N,...": N open connections in 0..H2B_SHAPE_MAX_CONNS), from 0,
 * as h2b_shape_parse_stages does (file "--conn-stages"). */
int h2b_shape_parse_conn_stages(struct h2b_shape *s, const char *text, struct h2b_diag *d);

/* Parses --step text "RATE+STEP/DUR" (RATE > 0, STEP >= 0 req/s, DUR > 0) into *rate, *step and
 * *dur_ns. H2B_OK or H2B_ERR_PARSE (d names the field and its column; outputs untouched). */
int h2b_shape_parse_step(const char *text, double *rate, double *step, uint64_t *dur_ns,
                         struct h2b_diag *d);

/* Parses --conn-step text "N+STEP/DUR" (N in 1..H2B_SHAPE_MAX_CONNS, STEP >= 0 connections) as
 * h2b_shape_parse_step does (file "--conn-step"). */
int h2b_shape_parse_conn_step(const char *text, double *n, double *step, uint64_t *dur_ns,
                              struct h2b_diag *d);

/* Builds the staircase: rate, rate+step, ... each held dur_ns, over total_ns (the last step cut
 * at total_ns). H2B_OK, H2B_ERR_INVAL (zero duration or rate, more than H2B_SHAPE_MAX_SEGMENTS
 * steps) or H2B_ERR_NOMEM. */
int h2b_shape_steps(struct h2b_shape *s, double rate, double step, uint64_t dur_ns,
                    uint64_t total_ns);

void h2b_shape_free(struct h2b_shape *s);

/* The rate at t_ns from the origin (0 outside the shape), req/s. */
double h2b_shape_rate_at(const struct h2b_shape *s, uint64_t t_ns);

/* Requests intended in [0, t_ns): the shape's integral (t_ns past the end: the total). */
double h2b_shape_count(const struct h2b_shape *s, uint64_t t_ns);

/* The offset (ns, rounded to nearest) at which the integral reaches n >= 0: when the request
 * with fractional index n is intended. UINT64_MAX when n >= the shape's total (past the end). */
uint64_t h2b_shape_time_of(const struct h2b_shape *s, double n);

/* The largest rate anywhere in the shape, req/s. */
double h2b_shape_peak(const struct h2b_shape *s);

/* A connection shape dealt over n > 0 workers: worker k's share of the value at t_ns, rounded
 * to the nearest whole connection (0 outside the shape), as -c is dealt (n_total / n each, the
 * first n_total % n one more). The n shares add up to the rounded value. */
uint32_t h2b_shape_share(const struct h2b_shape *s, uint64_t t_ns, uint32_t n, uint32_t k);

#endif
