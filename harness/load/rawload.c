/*
 * rawload.c - the raw TCP engine of `h2bench load --raw REQ:RESP`: one worker's TCP
 * connections in one epoll loop, one request in flight per connection. A request is REQ bytes
 * written (zeros), its response is the next RESP bytes read; nothing is parsed. It drives the
 * kernel's floor (`h2bench floor-serve`, servers/floor) with the bytes an HTTP/2 request and
 * its response take, so a matrix cell can be set beside the same TCP work with no HTTP/2.
 *
 * The run around it is load.c's, as for h1load.c: the same shared state, threads, progress,
 * merge and struct h2b_load_stats, so -c, -n/-D, --warm-up, --total-rps, --timeout and the
 * latency, service and TTFB histograms mean what they mean for the other engines (t_sent: the
 * last request byte went to the socket; TTFB: the first response byte). A whole response
 * counts as a success (status 200: there is no status on the wire); bytes with no request in
 * flight, or more than RESP for one, are a protocol error and close the connection.
 *
 * This file is h1load.c's connection life with the HTTP/1.1 parser taken out; it shares the
 * engine-neutral parts (worker.h: abandon, close, release, the loop; tcp.c: connect) and keeps its
 * own connection struct because it holds three counters where h1load.c holds a parser state.
 * Rejected: TLS (the floor is the kernel's TCP work; --raw with https:// is refused).
 */
#include "load/engine.h"

#include "core/clock.h"
#include "core/error.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#define RX_SIZE (64 * 1024)

enum rstate { S_IDLE, S_CONNECTING, S_READY, S_DONE, S_DEAD };

struct rawc {
    struct h2b__load_worker *w;
    struct raww *rw;
    enum rstate state;
    int fd;
    SSL *ssl; /* always NULL: the shared TCP helpers take one */
    uint32_t events;
    struct h2b__load_life life;
    uint64_t t_tcp;
    struct h2b__load_req req;
    size_t out_off; /* request bytes written */
    size_t in;      /* response bytes read */
};

struct raww {
    uint8_t *msg; /* REQ zero bytes */
    size_t req_len, resp_len;
    uint8_t rx[RX_SIZE];
    struct rawc conns[]; /* w->nconns */
};

static void set_events(struct rawc *c, uint32_t ev)
{
    if (c->events == ev)
        return;
    struct epoll_event e = {.events = ev, .data.ptr = c};
    if (epoll_ctl(c->w->epfd, EPOLL_CTL_MOD, c->fd, &e) == 0)
        c->events = ev;
}

static void conn_start(struct rawc *c);

static void req_release(void *c, uint32_t k)
{
    (void)k;
    struct rawc *r = c;
    h2b__load_req_end(r->w, &r->req);
}

/* Tears c down: the request in flight is errored (a timeout if timed_out), then it
 * reconnects, finishes or dies (worker.h h2b__load_closed). */
static void conn_close(struct rawc *c, bool timed_out)
{
    struct h2b__load_worker *w = c->w;
    if (c->state == S_IDLE || c->state >= S_DONE)
        return;
    bool reached = c->state == S_READY;
    struct h2b__load_slots one = {&c->req, sizeof c->req, 1, c};
    h2b__load_abandon(w, &c->life, &one, timed_out, req_release);
    h2b__load_tcp_close(&c->fd, &c->ssl);
    c->events = 0;
    enum h2b__load_next next = h2b__load_closed(w, &c->life, reached);
    c->state = next == H2B__LOAD_RECONNECT ? S_IDLE : next == H2B__LOAD_FINISHED ? S_DONE : S_DEAD;
    if (next == H2B__LOAD_RECONNECT)
        conn_start(c);
}

/* Writes what is left of the request; false when the connection failed. */
static bool conn_flush(struct rawc *c)
{
    struct h2b__load_worker *w = c->w;
    struct raww *rw = c->rw;
    while (c->out_off < rw->req_len) {
        ssize_t n = h2b__load_tcp_send(c->fd, NULL, rw->msg + c->out_off, rw->req_len - c->out_off);
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

static bool submit(struct rawc *c, uint64_t t_intended)
{
    c->out_off = 0;
    c->in = 0;
    h2b__load_req_begin(c->w, &c->req, t_intended, 0);
    return conn_flush(c);
}

static void fill(struct rawc *c)
{
    struct h2b__load_worker *w = c->w;
    if (w->sh->rate_mode)
        return;
    if (c->state == S_READY && !c->req.busy && c->life.budget > 0 && h2b__load_running(w)) {
        h2b__load_spend(&c->life);
        submit(c, w->now);
    }
}

static void response_done(struct rawc *c)
{
    c->life.responses++;
    c->req.status = 200;
    h2b__load_req_end(c->w, &c->req);
    h2b__load_finish(c->w, &c->life, &c->req, H2B__LOAD_RESPONSE);
    if (c->life.budget == 0 || !h2b__load_running(c->w)) {
        c->life.budget = c->life.budget == UINT64_MAX ? 0 : c->life.budget;
        conn_close(c, false);
        return;
    }
    fill(c);
}

static void protocol_error(struct rawc *c)
{
    if (c->req.busy) {
        h2b__load_req_end(c->w, &c->req);
        h2b__load_finish(c->w, &c->life, &c->req, H2B__LOAD_PROTOCOL);
    }
    conn_close(c, false);
}

/* n response bytes arrived: they complete the request in flight, or break the protocol. */
static void on_bytes(struct rawc *c, size_t n)
{
    struct h2b__load_worker *w = c->w;
    size_t want = c->rw->resp_len - c->in;
    if (!c->req.busy || n > want) {
        protocol_error(c);
        return;
    }
    if (c->in == 0 && c->req.measured && c->req.t_sent)
        h2b_hist_record(w->stats.ttfb, w->now - c->req.t_sent);
    c->in += n;
    w->stats.bytes_data += n;
    if (c->in == c->rw->resp_len)
        response_done(c);
}

static void conn_read(struct rawc *c)
{
    struct h2b__load_worker *w = c->w;
    struct raww *rw = c->rw;
    for (int i = 0; i < 16 && c->state == S_READY; i++) {
        ssize_t n = h2b__load_tcp_recv(c->fd, NULL, rw->rx, RX_SIZE);
        if (n == 0)
            return;
        if (n < 0) {
            if (c->req.busy && c->in > 0)
                protocol_error(c); /* cut in the middle of a response */
            else
                conn_close(c, false);
            return;
        }
        w->now = h2b_clock_now_ns();
        w->stats.bytes_total += (uint64_t)n;
        c->life.last_read = w->now;
        on_bytes(c, (size_t)n);
        if ((size_t)n < RX_SIZE)
            return;
    }
}

static void ready(struct rawc *c)
{
    struct h2b__load_worker *w = c->w;
    h2b_hist_record(w->stats.connect, w->now - c->life.t_connect);
    c->state = S_READY;
    c->life.responses = 0;
    c->life.last_read = w->now;
    w->stats.conns_ok++;
    w->stats.streams_effective = 1;
    w->stats.server_max_streams = 1;
    h2b__load_report_app(w, "tcp");
    set_events(c, EPOLLIN);
    fill(c);
}

static void setup(struct rawc *c)
{
    uint32_t ev;
    int rv = h2b__load_tcp_setup(c->w, c->fd, &c->ssl, &c->t_tcp, "", true, &ev);
    if (rv == 0)
        ready(c);
    else
        conn_close(c, false); /* no TLS here: 1 cannot happen, -1 is a failed connect */
}

static void conn_start(struct rawc *c)
{
    struct h2b__load_worker *w = c->w;
    h2b__load_life_connect(&c->life, w);
    c->state = S_CONNECTING;
    int rv = h2b__load_tcp_open(w, c, &c->fd);
    if (rv < 0) {
        conn_close(c, false);
        return;
    }
    c->events = EPOLLOUT;
    if (rv == 0)
        setup(c);
}

static void on_event(void *p, uint32_t ev)
{
    struct rawc *c = p;
    if (c->state == S_CONNECTING) {
        setup(c);
    } else if (c->state == S_READY) {
        if ((ev & EPOLLOUT) && c->req.busy && c->out_off < c->rw->req_len && !conn_flush(c))
            return;
        if (ev & (EPOLLIN | EPOLLHUP | EPOLLERR))
            conn_read(c);
    }
}

/* ---- the loop ---- */

static enum h2b__load_phase conn_phase(const struct h2b__load_worker *w, uint32_t i)
{
    const struct raww *rw = w->es;
    return h2b__load_phase_of(rw->conns[i].state, S_READY);
}

static void check_timeouts(struct h2b__load_worker *w)
{
    const struct h2b_load_config *cfg = w->sh->cfg;
    struct raww *rw = w->es;
    for (uint32_t i = 0; i < w->nconns; i++) {
        struct rawc *c = &rw->conns[i];
        if (h2b__load_conn_expired(w, &c->life, conn_phase(w, i), c->req.busy)) {
            conn_close(c, true);
        } else if (c->state == S_READY && c->req.busy && cfg->timeout_ns &&
                   w->now - c->req.t_submit >= cfg->timeout_ns) {
            /* a raw request cannot be cancelled: the connection goes and comes back */
            c->life.responses = c->life.responses ? c->life.responses : 1;
            conn_close(c, true);
        }
    }
}

static bool rate_can_take(const struct h2b__load_worker *w, uint32_t i)
{
    const struct raww *rw = w->es;
    return rw->conns[i].state == S_READY && !rw->conns[i].req.busy;
}

static bool rate_submit(struct h2b__load_worker *w, uint32_t i, uint64_t t)
{
    struct raww *rw = w->es;
    submit(&rw->conns[i], t); /* taken even when the write fails (the close counts it) */
    return true;
}

/* --total-rps: poll every millisecond while waiting for the connections to settle */
static uint64_t deadline(const struct h2b__load_worker *w)
{
    bool settling = w->sh->rate_mode && !w->sched_started;
    return settling ? w->now + H2B_NS_PER_MS : UINT64_MAX;
}

static void start(struct h2b__load_worker *w, uint32_t i)
{
    conn_start(&((struct raww *)w->es)->conns[i]);
}

static const struct h2b__load_life *stop(struct h2b__load_worker *w, uint32_t i)
{
    struct rawc *c = &((struct raww *)w->es)->conns[i];
    if (c->state >= S_CONNECTING && c->state <= S_READY) {
        c->life.budget = 0;
        conn_close(c, false);
    }
    return &c->life;
}

/* ---- set-up ---- */

static int engine_init(struct h2b__load_worker *w, uint32_t first_conn, uint64_t requests)
{
    const struct h2b_load_config *cfg = w->sh->cfg;
    struct raww *rw = calloc(1, sizeof *rw + (size_t)w->nconns * sizeof rw->conns[0]);
    if (!rw || !(rw->msg = calloc(1, cfg->raw_request))) {
        free(rw);
        return H2B_ERR_NOMEM;
    }
    rw->req_len = cfg->raw_request;
    rw->resp_len = cfg->raw_response;
    w->es = rw;
    for (uint32_t i = 0; i < w->nconns; i++) {
        rw->conns[i] = (struct rawc){.w = w, .rw = rw, .fd = -1};
        h2b__load_life_init(&rw->conns[i].life, w, first_conn, i, requests);
    }
    return H2B_OK;
}

static void engine_free(struct h2b__load_worker *w)
{
    struct raww *rw = w->es;
    if (!rw)
        return;
    for (uint32_t i = 0; i < w->nconns; i++)
        h2b__load_tcp_close(&rw->conns[i].fd, &rw->conns[i].ssl);
    free(rw->msg);
    free(rw);
    w->es = NULL;
}

const struct h2b__load_engine h2b__raw_engine = {
    .tag = "rawload",
    .naps = true,
    .init = engine_init,
    .free = engine_free,
    .start = start,
    .on_event = on_event,
    .rate = {conn_phase, rate_can_take, rate_submit},
    .timeouts = check_timeouts,
    .deadline = deadline,
    .stop = stop,
};
