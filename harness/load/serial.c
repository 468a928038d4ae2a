/*
 * serial.c - the connection life of the engines with one request in flight per TCP connection
 * (h1load.c: HTTP/1.1 without pipelining, as h2load --h1 runs; rawload.c: REQ bytes out, RESP
 * bytes back): see serial.h.
 *
 * A connection connects (tcp.c; over TLS the handshake must end with the engine's ALPN or
 * none), then per request writes the engine's bytes (t_sent: the last byte went to the socket)
 * and hands what it reads to the engine until the engine says the response is whole or broken.
 * A whole one is counted and the next request goes out at once (closed loop) or when the
 * --total-rps release hands one over; a connection that has done its share, or whose response
 * said so (close_after), closes. Failure policy (as h2load.c): a connection that dies errors its
 * request in flight; one cut in the middle of a response counts it as a protocol error. It
 * reconnects if it got responses since its last connect, otherwise in -n mode its remaining
 * requests count as errored (not sent). --timeout closes the connection (one request cannot be
 * cancelled otherwise) and counts the request as timed out; the connection comes back.
 *
 * On --io uring (uring.h) a cleartext connection's response bytes come from the ring's receive
 * completions (on_input, the same conn_input a read feeds) and the request goes to its send
 * buffer: t_sent is when the buffer took the last byte.
 *
 * Rejected: a copy of this life in each engine (rawload.c was h1load.c's life with the parser
 * taken out, fourteen runs of the same lines); a protocol's names here (the engine's hooks
 * hold them).
 */
#include "load/serial.h"

#include "core/clock.h"

#include <string.h>
#include <sys/epoll.h>

static struct h2b__serial_set *set_of(const struct h2b__load_worker *w)
{
    return w->es;
}

static struct h2b__serial_conn *conn_at(const struct h2b__load_worker *w, uint32_t i)
{
    struct h2b__serial_set *s = set_of(w);
    return (struct h2b__serial_conn *)(s->conns + (size_t)i * s->stride);
}

static void set_events(struct h2b__serial_conn *c, uint32_t ev)
{
    if (c->events == ev)
        return;
    h2b__load_tcp_watch(c->w, c->fd, c->uio, c, ev);
    c->events = ev;
}

static void finish(struct h2b__serial_conn *c, enum h2b__load_outcome how)
{
    h2b__load_req_end(c->w, &c->req);
    h2b__load_finish(c->w, &c->life, &c->req, how);
}

static void conn_start(struct h2b__serial_conn *c);

static void req_release(void *c, uint32_t k)
{
    (void)k;
    struct h2b__serial_conn *h = c;
    h2b__load_req_end(h->w, &h->req);
}

/* Tears c down: the request in flight is errored (a timeout if timed_out), then it
 * reconnects, finishes or dies (worker.h h2b__load_closed). */
static void conn_close(struct h2b__serial_conn *c, bool timed_out)
{
    struct h2b__load_worker *w = c->w;
    if (c->state == H2B__SERIAL_IDLE || c->state >= H2B__SERIAL_DONE)
        return;
    bool reached = c->state == H2B__SERIAL_READY;
    struct h2b__load_slots one = {&c->req, sizeof c->req, 1, c};
    h2b__load_abandon(w, &c->life, &one, timed_out, req_release);
    h2b__load_tcp_close(&c->fd, &c->ssl, &c->uio);
    c->events = 0;
    enum h2b__load_next next = h2b__load_closed(w, &c->life, reached);
    c->state = (enum h2b__serial_state)h2b__load_state_after(next, H2B__SERIAL_READY);
    if (next == H2B__LOAD_RECONNECT)
        conn_start(c);
}

/* Writes what is left of the request; false when the connection failed. */
static bool conn_flush(struct h2b__serial_conn *c)
{
    struct h2b__load_worker *w = c->w;
    while (c->out_off < c->out_len) {
        ssize_t n = h2b__load_conn_send(c->fd, c->ssl, c->uio, c->out + c->out_off,
                                        c->out_len - c->out_off);
        if (n < 0) {
            conn_close(c, false);
            return false;
        }
        if (n == 0) {
            set_events(c, EPOLLIN | EPOLLOUT);
            return true;
        }
        c->out_off += (size_t)n;
        w->stats.bytes_sent += (uint64_t)n;
    }
    if (c->req.t_sent == 0)
        c->req.t_sent = h2b_clock_now_ns();
    set_events(c, EPOLLIN);
    return true;
}

/* Sends one request on c (ready, nothing in flight). */
static bool submit(struct h2b__serial_conn *c, uint64_t t_intended)
{
    set_of(c->w)->ops->begin(c);
    c->out_off = 0;
    c->first_byte = false;
    c->close_after = false;
    h2b__load_req_begin(c->w, &c->req, t_intended, 0);
    return conn_flush(c);
}

static void fill(struct h2b__serial_conn *c)
{
    struct h2b__load_worker *w = c->w;
    if (w->sh->rate_mode)
        return;
    if (c->state == H2B__SERIAL_READY && !c->req.busy && c->life.budget > 0 &&
        h2b__load_running(w)) {
        h2b__load_spend(&c->life);
        submit(c, w->now);
    }
}

void h2b__serial_first_byte(struct h2b__serial_conn *c)
{
    c->first_byte = true;
    if (c->req.measured && c->req.t_sent)
        h2b_hist_record(c->w->stats.ttfb, c->w->now - c->req.t_sent);
}

void h2b__serial_done(struct h2b__serial_conn *c)
{
    c->life.responses++;
    finish(c, H2B__LOAD_RESPONSE);
    if (c->close_after) {
        conn_close(c, false);
        return;
    }
    if (c->life.budget == 0 || !h2b__load_running(c->w)) {
        c->life.budget = c->life.budget == UINT64_MAX ? 0 : c->life.budget;
        conn_close(c, false);
        return;
    }
    fill(c);
}

void h2b__serial_broken(struct h2b__serial_conn *c)
{
    if (c->req.busy)
        finish(c, H2B__LOAD_PROTOCOL);
    conn_close(c, false);
}

/* n response bytes at p (n > 0), or the end (H2B__LOAD_EOF, H2B__LOAD_EIO). Returns false when
 * c was closed. */
static bool conn_input(struct h2b__serial_conn *c, const uint8_t *p, ssize_t n)
{
    struct h2b__load_worker *w = c->w;
    if (n < 0) {
        if (n == H2B__LOAD_EOF && c->req.busy && set_of(w)->ops->eof && set_of(w)->ops->eof(c)) {
            h2b__serial_done(c); /* a body delimited by the close (close_after is set) */
            return false;
        }
        if (c->req.busy && c->first_byte)
            h2b__serial_broken(c); /* cut in the middle of a response */
        else
            conn_close(c, false);
        return false;
    }
    w->now = h2b_clock_now_ns();
    w->stats.bytes_total += (uint64_t)n;
    c->life.last_read = w->now;
    set_of(w)->ops->bytes(c, p, (size_t)n);
    return true;
}

static void conn_read(struct h2b__serial_conn *c)
{
    struct h2b__serial_set *s = set_of(c->w);
    for (int i = 0; i < 16 && c->state == H2B__SERIAL_READY; i++) {
        ssize_t n = h2b__load_tcp_recv(c->fd, c->ssl, s->rx, H2B__SERIAL_RX);
        if (n == 0 || !conn_input(c, s->rx, n))
            return;
        if (h2b__load_tcp_drained(c->ssl, n, H2B__SERIAL_RX))
            return;
    }
}

static void ready(struct h2b__serial_conn *c)
{
    struct h2b__load_worker *w = c->w;
    h2b_hist_record(w->stats.connect, w->now - c->life.t_connect);
    if (c->ssl)
        h2b_hist_record(w->stats.tls, w->now - c->t_tcp);
    c->state = H2B__SERIAL_READY;
    c->life.responses = 0;
    c->life.last_read = w->now;
    w->stats.conns_ok++;
    w->stats.streams_effective = 1;
    w->stats.server_max_streams = 1;
    h2b__load_report_app(w, set_of(w)->ops->app);
    h2b__load_tcp_ready(w, c->fd, c->ssl, c->uio, c);
    c->events = EPOLLIN;
    fill(c);
}

/* The connect completed or the TLS handshake moved on. Like h2load --h1, a server that
 * negotiates no protocol is accepted; one that picks another than the one offered is broken. */
static void setup(struct h2b__serial_conn *c)
{
    uint32_t ev;
    int rv =
        h2b__load_tcp_setup(c->w, c->fd, &c->ssl, &c->t_tcp, set_of(c->w)->ops->alpn, true, &ev);
    if (rv < 0) {
        conn_close(c, false);
    } else if (rv == 0) {
        ready(c);
    } else {
        c->state = H2B__SERIAL_HANDSHAKE;
        set_events(c, ev);
    }
}

static void conn_start(struct h2b__serial_conn *c)
{
    struct h2b__load_worker *w = c->w;
    h2b__load_life_connect(&c->life, w);
    c->state = H2B__SERIAL_CONNECTING; /* so that conn_close counts a failure */
    int rv = h2b__load_tcp_open(w, c, &c->fd, &c->uio);
    if (rv < 0) {
        conn_close(c, false);
        return;
    }
    c->events = EPOLLOUT;
    if (rv == 0)
        setup(c);
}

/* ---- the engine interface's hooks ---- */

void h2b__serial_on_event(void *conn, uint32_t ev)
{
    struct h2b__serial_conn *c = conn;
    switch (c->state) {
    case H2B__SERIAL_CONNECTING:
    case H2B__SERIAL_HANDSHAKE:
        setup(c);
        break;
    case H2B__SERIAL_READY:
        if ((ev & EPOLLOUT) && c->req.busy && c->out_off < c->out_len && !conn_flush(c))
            return;
        if (ev & (EPOLLIN | EPOLLHUP | EPOLLERR))
            conn_read(c);
        break;
    default:
        break;
    }
}

void h2b__serial_on_input(void *conn, const uint8_t *p, ssize_t n)
{
    struct h2b__serial_conn *c = conn;
    if (c->state == H2B__SERIAL_READY)
        conn_input(c, p, n);
}

void h2b__serial_start(struct h2b__load_worker *w, uint32_t i)
{
    conn_start(conn_at(w, i));
}

enum h2b__load_phase h2b__serial_phase(const struct h2b__load_worker *w, uint32_t i)
{
    return h2b__load_phase_of(conn_at(w, i)->state, H2B__SERIAL_READY);
}

void h2b__serial_timeouts(struct h2b__load_worker *w)
{
    const struct h2b_load_config *cfg = w->sh->cfg;
    uint64_t now = w->now;
    for (uint32_t i = 0; i < w->nconns; i++) {
        struct h2b__serial_conn *c = conn_at(w, i);
        if (h2b__load_conn_expired(w, &c->life, h2b__serial_phase(w, i), c->req.busy)) {
            conn_close(c, true);
        } else if (c->state == H2B__SERIAL_READY && c->req.busy && cfg->timeout_ns &&
                   now - c->req.t_submit >= cfg->timeout_ns) {
            /* one request cannot be cancelled: the connection goes, and comes back (the server
             * lives) */
            c->life.responses = c->life.responses ? c->life.responses : 1;
            conn_close(c, true);
        }
    }
}

/* --total-rps: worker.c's h2b__load_release, one request per free connection */
bool h2b__serial_can_take(const struct h2b__load_worker *w, uint32_t i)
{
    const struct h2b__serial_conn *c = conn_at(w, i);
    return c->state == H2B__SERIAL_READY && !c->req.busy;
}

bool h2b__serial_submit(struct h2b__load_worker *w, uint32_t i, uint64_t t)
{
    submit(conn_at(w, i), t); /* taken even when the write fails (the close counts it) */
    return true;
}

/* --total-rps: poll every millisecond while waiting for the connections to settle */
uint64_t h2b__serial_deadline(const struct h2b__load_worker *w)
{
    bool settling = w->sh->rate_mode && !w->sched_started;
    return settling ? w->now + H2B_NS_PER_MS : UINT64_MAX;
}

struct h2b__load_life *h2b__serial_life(const struct h2b__load_worker *w, uint32_t i)
{
    return &conn_at(w, i)->life;
}

const struct h2b__load_life *h2b__serial_stop(struct h2b__load_worker *w, uint32_t i)
{
    struct h2b__serial_conn *c = conn_at(w, i);
    if (c->state >= H2B__SERIAL_CONNECTING && c->state <= H2B__SERIAL_READY) {
        c->life.budget = 0;
        conn_close(c, false);
    }
    return &c->life;
}

void h2b__serial_init(struct h2b__serial_set *s, struct h2b__load_worker *w,
                      const struct h2b__serial_ops *ops, void *conns, size_t stride,
                      uint32_t first_conn, uint64_t requests)
{
    s->ops = ops;
    s->conns = conns;
    s->stride = stride;
    for (uint32_t i = 0; i < w->nconns; i++) {
        struct h2b__serial_conn *c = (struct h2b__serial_conn *)(s->conns + (size_t)i * stride);
        c->w = w;
        c->fd = -1;
        h2b__load_life_init(&c->life, w, first_conn, i, requests);
    }
}

void h2b__serial_free(struct h2b__serial_set *s, const struct h2b__load_worker *w)
{
    for (uint32_t i = 0; s->conns && i < w->nconns; i++) {
        struct h2b__serial_conn *c = (struct h2b__serial_conn *)(s->conns + (size_t)i * s->stride);
        h2b__load_tcp_close(&c->fd, &c->ssl, &c->uio);
    }
}
