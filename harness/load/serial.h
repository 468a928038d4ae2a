/*
 * serial.h - a TCP (or TLS) connection with one request in flight at a time, as the HTTP/1.1
 * engine (h1load.c) and the raw TCP engine (rawload.c) run theirs (internal to h2bench::load).
 *
 * serial.c owns the connection's life: connect, TLS and ALPN, writing a request, reading
 * response bytes, counting the outcome, the close and the reconnect, --timeout (the connection
 * goes: one request cannot be cancelled otherwise) and every hook of the engine interface but
 * init and free. The engine says what a request's bytes are and what the response's bytes mean
 * (struct h2b__serial_ops); its connection struct begins with a struct h2b__serial_conn and its
 * worker state (w->es) with a struct h2b__serial_set.
 */
#ifndef H2B_LOAD_SERIAL_H
#define H2B_LOAD_SERIAL_H

#include "load/engine.h"

#define H2B__SERIAL_RX (64 * 1024) /* bytes per read */

enum h2b__serial_state {
    H2B__SERIAL_IDLE,
    H2B__SERIAL_CONNECTING,
    H2B__SERIAL_HANDSHAKE,
    H2B__SERIAL_READY,
    H2B__SERIAL_DONE,
    H2B__SERIAL_DEAD
};

struct h2b__serial_conn;

struct h2b__serial_ops {
    const char *alpn; /* over TLS the server must choose it, or nothing */
    const char *app;  /* h2load's "Application protocol:" */
    /* c's next request goes out: set c->out and c->out_len, reset the response's state. */
    void (*begin)(struct h2b__serial_conn *c);
    /* Response bytes p[0..n) while c is ready (more may follow): the engine ends the request
     * with h2b__serial_done or h2b__serial_broken. */
    void (*bytes)(struct h2b__serial_conn *c, const uint8_t *p, size_t n);
    /* The server closed c with a request in flight: true when the close ends its response (a
     * body delimited by the close). May be NULL (never). */
    bool (*eof)(const struct h2b__serial_conn *c);
};

struct h2b__serial_conn {
    struct h2b__load_worker *w;
    enum h2b__serial_state state;
    int fd;
    SSL *ssl;
    struct h2b__load_uio *uio; /* --io uring: the connect's operations (uring.h); NULL on epoll */
    uint32_t events;
    struct h2b__load_life life;
    uint64_t t_tcp;
    struct h2b__load_req req; /* the request in flight (req.busy) */
    bool first_byte;          /* of its response: the TTFB was taken */
    bool close_after;         /* the response says the connection ends with it */
    const uint8_t *out;       /* its bytes */
    size_t out_len, out_off;
};

/* The head of an engine's worker state: its hooks, the read buffer and its connections (an
 * array of stride-byte structs, each beginning with a struct h2b__serial_conn). */
struct h2b__serial_set {
    const struct h2b__serial_ops *ops;
    char *conns;
    size_t stride;
    uint8_t rx[H2B__SERIAL_RX];
};

/* Sets s up over the engine's conns (w->nconns of stride bytes, zeroed) and each connection's
 * share of the work; the engine then points w->es at the struct s begins. */
void h2b__serial_init(struct h2b__serial_set *s, struct h2b__load_worker *w,
                      const struct h2b__serial_ops *ops, void *conns, size_t stride,
                      uint32_t first_conn, uint64_t requests);

/* Closes every connection of s (the engine's free). */
void h2b__serial_free(struct h2b__serial_set *s, const struct h2b__load_worker *w);

/* The first response byte of c's request arrived now: the TTFB. */
void h2b__serial_first_byte(struct h2b__serial_conn *c);

/* c's response is whole (req.status set): counted; the connection goes on or closes. */
void h2b__serial_done(struct h2b__serial_conn *c);

/* c's response broke the protocol (or bytes came with no request): counted; c closes. */
void h2b__serial_broken(struct h2b__serial_conn *c);

/* The engine-interface hooks for a serial engine's table. */
void h2b__serial_start(struct h2b__load_worker *w, uint32_t i);
void h2b__serial_on_event(void *conn, uint32_t events);
void h2b__serial_on_input(void *conn, const uint8_t *p, ssize_t n);
enum h2b__load_phase h2b__serial_phase(const struct h2b__load_worker *w, uint32_t i);
bool h2b__serial_can_take(const struct h2b__load_worker *w, uint32_t i);
bool h2b__serial_submit(struct h2b__load_worker *w, uint32_t i, uint64_t t);
void h2b__serial_timeouts(struct h2b__load_worker *w);
uint64_t h2b__serial_deadline(const struct h2b__load_worker *w);
const struct h2b__load_life *h2b__serial_stop(struct h2b__load_worker *w, uint32_t i);
struct h2b__load_life *h2b__serial_life(const struct h2b__load_worker *w, uint32_t i);

#define H2B__SERIAL_HOOKS                                                                          \
    .start = h2b__serial_start, .on_event = h2b__serial_on_event,                                  \
    .on_input = h2b__serial_on_input,                                                              \
    .rate = {h2b__serial_phase, h2b__serial_can_take, h2b__serial_submit},                         \
    .timeouts = h2b__serial_timeouts, .deadline = h2b__serial_deadline, .stop = h2b__serial_stop,  \
    .life = h2b__serial_life

#endif
