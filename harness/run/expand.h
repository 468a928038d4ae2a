/*
 * expand.h - matrix expansion: a scenario's matrix into the ordered list of cells to run.
 *
 * Effective streams per connection = max(1, min(requested, the server's advertised
 * SETTINGS_MAX_CONCURRENT_STREAMS, floor(aggregate_cap / connections))) (DESIGN.md). The list is
 * in run order: with order "alternate" every point of the matrix runs each target in turn, the
 * target order reversed on every other point (A B, B A, ...) so slow drift of the machine does
 * not favour whichever target always goes first. Protocol and TLS are the innermost axes of a
 * point, so h1 and h2, cleartext and TLS, of one connections x streams point run next to each
 * other. HTTP/1.1 cells have one stream per connection whatever the matrix asks (h2load --h1);
 * with matrix.tls [false, true] an h3 point has only its TLS cell (QUIC is always TLS).
 */
#ifndef H2B_RUN_EXPAND_H
#define H2B_RUN_EXPAND_H

#include "run/scenario.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct h2b_cell {
    size_t target;               /* index into the scenario's targets */
    uint32_t connections;        /* connections the client opens */
    uint32_t streams_requested;  /* streams per connection the matrix asks for */
    uint32_t streams_effective;  /* what the client is told to use (see above) */
    uint32_t server_max_streams; /* the server's advertised (or configured) maximum */
    uint32_t frame_size;         /* client SETTINGS_MAX_FRAME_SIZE, 0 = client default */
    uint32_t window_bits;        /* client window 2^N-1, 0 = client default */
    uint32_t repeat;             /* 0-based repetition */
    enum h2b_protocol protocol;  /* matrix.protocol (h1: one request in flight per connection) */
    bool tls;                    /* matrix.tls */
};

/* One --filter term: [TARGET:]CONNECTIONSxSTREAMS or TARGET; 0 stands for "*" (any). */
struct h2b_cell_filter {
    int target; /* target index or -1 for any */
    uint32_t connections;
    uint32_t streams;
};

/* max(1, min(requested, server_max, floor(aggregate_cap / connections))); server_max 0 means
 * "no limit advertised". */
uint32_t h2b_expand_effective(uint32_t requested, uint32_t server_max, uint32_t aggregate_cap,
                              uint32_t connections);

/* Expands s->matrix for every target into *out (malloc'd, caller frees) in run order.
 * server_max[i] is target i's advertised max streams (0 = unlimited). extra_repeats multiplies
 * the matrix's repeats (--repeat). filters (nfilters, may be 0) keep only matching cells.
 * Returns H2B_OK or H2B_ERR_NOMEM; *out and *n untouched on failure. */
int h2b_expand_matrix(const struct h2b_scenario *s, const uint32_t *server_max,
                      uint32_t extra_repeats, const struct h2b_cell_filter *filters,
                      size_t nfilters, struct h2b_cell **out, size_t *n);

/* True if c matches any of filters (nfilters 0: every cell matches). */
bool h2b_expand_cell_matches(const struct h2b_cell *c, const struct h2b_cell_filter *filters,
                             size_t nfilters);

/* The objectives (--slo text) of cell c: matrix.slo as a string, or the first of its rules that
 * matches c; NULL when c has none. Borrowed from s. */
const char *h2b_expand_cell_slo(const struct h2b_scenario *s, const struct h2b_cell *c);

/* Parses a comma-separated --filter argument ("1000x*,h2o:100x100,nghttpd") against s's target
 * names into *out (malloc'd). Returns H2B_OK, H2B_ERR_PARSE (d says why) or H2B_ERR_NOMEM. */
int h2b_expand_parse_filter(const struct h2b_scenario *s, const char *text,
                            struct h2b_cell_filter **out, size_t *n, struct h2b_diag *d);

#endif
