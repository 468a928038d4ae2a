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
 * The connection life is serial.c's, shared with h1load.c (connect, write, read, close,
 * reconnect, --timeout): this file says what a request's bytes are (REQ zeros) and when a
 * response is whole (RESP bytes). Rejected: TLS (the floor is the kernel's TCP work; --raw with
 * https:// is refused).
 */
#include "load/serial.h"

#include "core/error.h"

#include <stdlib.h>

struct rawc {
    struct h2b__serial_conn s; /* first: serial.c's connection */
    size_t in;                 /* response bytes read */
};

struct raww {
    struct h2b__serial_set set; /* first: w->es is serial.c's too */
    uint8_t *msg;               /* REQ zero bytes */
    size_t req_len, resp_len;
    struct rawc conns[]; /* w->nconns */
};

static void begin(struct h2b__serial_conn *sc)
{
    const struct raww *rw = sc->w->es;
    sc->out = rw->msg;
    sc->out_len = rw->req_len;
    ((struct rawc *)sc)->in = 0;
}

/* n response bytes arrived: they complete the request in flight, or break the protocol. */
static void on_bytes(struct h2b__serial_conn *sc, const uint8_t *p, size_t n)
{
    (void)p;
    struct rawc *c = (struct rawc *)sc;
    const struct raww *rw = sc->w->es;
    size_t want = rw->resp_len - c->in;
    if (!sc->req.busy || n > want) {
        h2b__serial_broken(sc);
        return;
    }
    if (c->in == 0)
        h2b__serial_first_byte(sc);
    c->in += n;
    sc->w->stats.bytes_data += n;
    if (c->in == rw->resp_len) {
        sc->req.status = 200;
        h2b__serial_done(sc);
    }
}

static const struct h2b__serial_ops ops = {
    .alpn = "", .app = "tcp", .begin = begin, .bytes = on_bytes};

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
    h2b__serial_init(&rw->set, w, &ops, rw->conns, sizeof rw->conns[0], first_conn, requests);
    return H2B_OK;
}

static void engine_free(struct h2b__load_worker *w)
{
    struct raww *rw = w->es;
    if (!rw)
        return;
    h2b__serial_free(&rw->set, w);
    free(rw->msg);
    free(rw);
    w->es = NULL;
}

const struct h2b__load_engine h2b__raw_engine = {
    .tag = "rawload", .naps = true, .init = engine_init, .free = engine_free, H2B__SERIAL_HOOKS};
