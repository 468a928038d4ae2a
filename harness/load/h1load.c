/*
 * h1load.c - the HTTP/1.1 engine of `h2bench load --h1` (and of -p http/1.1 on http://, or
 * an --npn-list the server answered with http/1.1): one worker's keep-alive TCP (or TLS)
 * connections in one epoll loop, one request in flight per connection, as h2load --h1 runs
 * without pipelining.
 *
 * The run around it is load.c's: the same shared state, threads, progress hand-off and merge,
 * and the same struct h2b_load_stats, so histograms, text, JSON, progress, warm-up and the
 * open-loop schedule are those of h2 (the release loop is h3load.c's, over connections with
 * no request in flight). Outcomes go through h2b__load_record() (worker.c).
 *
 * Approach: the request bytes (request line, Host, User-Agent, Content-Length, -H headers,
 * then the -d body) are rendered once per URI; submitting one is a write of those bytes. The
 * response is parsed by harness/core/h1parse.c (the server's strict parser): a head found in
 * the read buffer is parsed in place, only a head split across reads is copied (into a
 * per-connection buffer of the head limit, allocated once); bodies are counted, never copied
 * (Content-Length, chunked, or until close). A response with "Connection: close" (or an
 * HTTP/1.0 one without keep-alive) ends the connection after it; the connection reconnects
 * while it still owes requests, as h2load does. Bytes the server sends with no request in
 * flight, a malformed head or a body shorter than its length are protocol errors.
 * Latency, service, TTFB and connect/TLS histograms as in h2load.c: t_sent is when the last
 * request byte went to the socket; TTFB is to the first response byte.
 *
 * Failure policy (as h2load.c): a connection that dies errors its request in flight; it
 * reconnects if it got responses since its last connect, otherwise in -n mode its remaining
 * requests count as errored (not sent). --timeout closes the connection (HTTP/1.1 cannot
 * cancel one request otherwise) and counts the request as timed out.
 * Rejected: pipelining (-m > 1 is not honoured: effective streams per connection is 1; the
 * issue makes it optional and off by default, and no shipped scenario wants it); reusing
 * h2load.c's connection struct (its states and buffers are nghttp2's).
 */
#include "load/h1load.h"

#include "core/clock.h"
#include "core/error.h"
#include "core/h1parse.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <unistd.h>

#define RX_SIZE (64 * 1024)
#define HEAD_MAX (64 * 1024)
#define LINE_MAX_H1 (16 * 1024)
#define TRAILERS_MAX (16 * 1024)

enum h1state { S_IDLE, S_CONNECTING, S_HANDSHAKE, S_READY, S_DONE, S_DEAD };

enum rstate { R_HEAD, R_LENGTH, R_CHUNKED, R_EOF };

struct h1c {
    struct h2b__load_worker *w;
    struct h1w *hw;
    enum h1state state;
    int fd;
    SSL *ssl;
    uint32_t events;
    struct h2b__load_life life;
    uint64_t t_tcp;
    /* the request in flight (req.busy), and its bytes */
    struct h2b__load_req req;
    bool first_byte;
    const uint8_t *out;
    size_t out_len, out_off;
    /* its response */
    enum rstate rs;
    uint64_t left;
    struct h2b_h1_chunked ch;
    bool close_after;
    uint8_t *hbuf; /* a head split across reads */
    size_t hlen;
};

struct h1w {
    uint8_t *msgs;     /* every URI's whole request, one after the other */
    struct iovec *msg; /* per URI: its request in msgs */
    struct h2b_h1_limits lim;
    uint8_t rx[RX_SIZE];
    struct h1c conns[]; /* w->nconns */
};

static void set_events(struct h1c *c, uint32_t ev)
{
    if (c->events == ev)
        return;
    struct epoll_event e = {.events = ev, .data.ptr = c};
    if (epoll_ctl(c->w->epfd, EPOLL_CTL_MOD, c->fd, &e) == 0)
        c->events = ev;
}

static void finish(struct h1c *c, enum h2b__load_outcome how)
{
    h2b__load_req_end(c->w, &c->req);
    h2b__load_finish(c->w, &c->life, &c->req, how);
}

/* ---- connections ---- */

static void conn_start(struct h1c *c);

static void conn_teardown(struct h1c *c)
{
    h2b__load_tcp_close(&c->fd, &c->ssl);
    c->events = 0;
    c->hlen = 0;
}

static void req_release(void *c, uint32_t k)
{
    (void)k;
    struct h1c *h = c;
    h2b__load_req_end(h->w, &h->req);
}

/* At the end: teardown and the buffer kept over reconnects */
static void conn_free(struct h1c *c)
{
    conn_teardown(c);
    free(c->hbuf);
}

/* Tears c down: the request in flight is errored (a timeout if timed_out), then it
 * reconnects, finishes or dies (see the file comment). */
static void conn_close(struct h1c *c, bool timed_out)
{
    struct h2b__load_worker *w = c->w;
    if (c->state == S_IDLE || c->state >= S_DONE)
        return;
    bool reached = c->state == S_READY;
    struct h2b__load_slots one = {&c->req, sizeof c->req, 1, c};
    h2b__load_abandon(w, &c->life, &one, timed_out, req_release);
    conn_teardown(c);
    enum h2b__load_next next = h2b__load_closed(w, &c->life, reached);
    c->state = next == H2B__LOAD_RECONNECT ? S_IDLE : next == H2B__LOAD_FINISHED ? S_DONE : S_DEAD;
    if (next == H2B__LOAD_RECONNECT)
        conn_start(c);
}

/* Writes what is left of the request; false when the connection failed. */
static bool conn_flush(struct h1c *c)
{
    struct h2b__load_worker *w = c->w;
    while (c->out_off < c->out_len) {
        ssize_t n = h2b__load_tcp_send(c->fd, c->ssl, c->out + c->out_off, c->out_len - c->out_off);
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
static bool submit(struct h1c *c, uint64_t t_intended)
{
    struct h2b__load_worker *w = c->w;
    const struct h2b__load_shared *sh = w->sh;
    struct h1w *hw = c->hw;
    uint32_t u = h2b__load_next_uri(&c->life, sh->cfg);
    c->out = hw->msg[u].iov_base;
    c->out_len = hw->msg[u].iov_len;
    c->out_off = 0;
    c->first_byte = false;
    c->rs = R_HEAD;
    c->hlen = 0;
    c->close_after = false;
    h2b__load_req_begin(w, &c->req, t_intended, 0);
    return conn_flush(c);
}

static void fill(struct h1c *c)
{
    struct h2b__load_worker *w = c->w;
    if (w->sh->rate_mode)
        return;
    if (c->state == S_READY && !c->req.busy && c->life.budget > 0 && h2b__load_running(w)) {
        h2b__load_spend(&c->life);
        submit(c, w->now);
    }
}

/* The response is complete: count it, then keep the connection or close it. */
static void response_done(struct h1c *c)
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

static void protocol_error(struct h1c *c)
{
    if (c->req.busy)
        finish(c, H2B__LOAD_PROTOCOL);
    conn_close(c, false);
}

/* A head of hl bytes parsed into h: choose how the body ends. */
static void begin_body(struct h1c *c, const struct h2b_h1_head *h, size_t hl)
{
    struct h2b_load_stats *st = &c->w->stats;
    st->bytes_headers += hl;
    st->bytes_headers_decomp += hl;
    c->req.status = (uint16_t)h->status;
    c->close_after = h->close;
    if (h2b_h1_no_body(h->status, c->w->sh->method_head)) {
        c->rs = R_LENGTH;
        c->left = 0;
    } else if (h->chunked) {
        c->rs = R_CHUNKED;
        h2b_h1_chunked_init(&c->ch);
    } else if (h->content_length >= 0) {
        c->rs = R_LENGTH;
        c->left = (uint64_t)h->content_length;
    } else {
        c->rs = R_EOF;
        c->close_after = true;
    }
}

/* Response bytes p[0..n). */
static void on_bytes(struct h1c *c, const uint8_t *p, size_t n)
{
    struct h2b__load_worker *w = c->w;
    struct h1w *hw = c->hw;
    while (n > 0 && c->state == S_READY) {
        if (!c->req.busy) {
            protocol_error(c); /* bytes nobody asked for */
            return;
        }
        if (!c->first_byte) {
            c->first_byte = true;
            if (c->req.measured && c->req.t_sent)
                h2b_hist_record(w->stats.ttfb, w->now - c->req.t_sent);
        }
        if (c->rs == R_HEAD) {
            struct h2b_h1_head h;
            int rv;
            size_t used;
            if (c->hlen == 0) {
                rv = h2b_h1_parse_response(p, n, &hw->lim, &h);
                used = rv > 0 ? (size_t)rv : 0;
            } else {
                size_t k = n < HEAD_MAX - c->hlen ? n : HEAD_MAX - c->hlen;
                memcpy(c->hbuf + c->hlen, p, k);
                rv = h2b_h1_parse_response(c->hbuf, c->hlen + k, &hw->lim, &h);
                used = rv > 0 ? (size_t)rv - c->hlen : k;
                if (rv == H2B_H1_INCOMPLETE)
                    c->hlen += k;
            }
            if (rv < 0) {
                protocol_error(c);
                return;
            }
            if (rv == H2B_H1_INCOMPLETE) {
                if (c->hlen == 0) {
                    if (!c->hbuf && !(c->hbuf = malloc(HEAD_MAX))) {
                        protocol_error(c);
                        return;
                    }
                    memcpy(c->hbuf, p, n); /* n < HEAD_MAX, or the parser said too large */
                    c->hlen = n;
                }
                return;
            }
            c->hlen = 0;
            p += used;
            n -= used;
            if (h.status < 200) {
                if (h.status == 101) {
                    protocol_error(c); /* we never ask to upgrade */
                    return;
                }
                w->stats.bytes_headers += (size_t)rv;
                continue; /* 100 Continue and the like: the final head follows */
            }
            begin_body(c, &h, (size_t)rv);
            if (c->rs == R_LENGTH && c->left == 0) {
                if (n > 0) {
                    protocol_error(c); /* nothing may follow: we do not pipeline */
                    return;
                }
                response_done(c);
                return;
            }
            continue;
        }
        if (c->rs == R_LENGTH) {
            size_t k = n < c->left ? n : (size_t)c->left;
            w->stats.bytes_data += k;
            c->left -= k;
            p += k;
            n -= k;
            if (c->left == 0) {
                if (n > 0) {
                    protocol_error(c);
                    return;
                }
                response_done(c);
                return;
            }
            continue;
        }
        if (c->rs == R_EOF) {
            w->stats.bytes_data += n;
            return;
        }
        size_t used = 0, dl = 0;
        const uint8_t *d = NULL;
        int rv = h2b_h1_chunked_next(&c->ch, p, n, TRAILERS_MAX, &used, &d, &dl);
        if (rv < 0) {
            protocol_error(c);
            return;
        }
        if (rv == 1)
            w->stats.bytes_data += dl;
        p += used;
        n -= used;
        if (rv == 2) {
            if (n > 0) {
                protocol_error(c);
                return;
            }
            response_done(c);
            return;
        }
    }
}

static void conn_read(struct h1c *c)
{
    struct h2b__load_worker *w = c->w;
    struct h1w *hw = c->hw;
    for (int i = 0; i < 16 && c->state == S_READY; i++) {
        ssize_t n = h2b__load_tcp_recv(c->fd, c->ssl, hw->rx, RX_SIZE);
        if (n == 0)
            return;
        if (n < 0) {
            if (n == H2B__LOAD_EOF && c->req.busy && c->rs == R_EOF) {
                response_done(c); /* a body delimited by the close (close_after is set) */
                return;
            }
            if (c->req.busy && c->first_byte)
                protocol_error(c); /* cut in the middle of a response */
            else
                conn_close(c, false);
            return;
        }
        w->now = h2b_clock_now_ns();
        w->stats.bytes_total += (uint64_t)n;
        c->life.last_read = w->now;
        on_bytes(c, hw->rx, (size_t)n);
        if ((size_t)n < RX_SIZE && !(c->ssl && SSL_pending(c->ssl) > 0))
            return;
    }
}

static void ready(struct h1c *c)
{
    struct h2b__load_worker *w = c->w;
    h2b_hist_record(w->stats.connect, w->now - c->life.t_connect);
    if (c->ssl)
        h2b_hist_record(w->stats.tls, w->now - c->t_tcp);
    c->state = S_READY;
    c->life.responses = 0;
    c->life.last_read = w->now;
    w->stats.conns_ok++;
    w->stats.streams_effective = 1;
    w->stats.server_max_streams = 1;
    h2b__load_report_app(w, "http/1.1");
    set_events(c, EPOLLIN);
    fill(c);
}

/* The connect completed or the TLS handshake moved on. h2load --h1 accepts a server that
 * negotiates no protocol; one that picks another than the http/1.1 we offered is broken. */
static void setup(struct h1c *c)
{
    uint32_t ev;
    int rv = h2b__load_tcp_setup(c->w, c->fd, &c->ssl, &c->t_tcp, "http/1.1", true, &ev);
    if (rv < 0) {
        conn_close(c, false);
    } else if (rv == 0) {
        ready(c);
    } else {
        c->state = S_HANDSHAKE;
        set_events(c, ev);
    }
}

static void conn_start(struct h1c *c)
{
    struct h2b__load_worker *w = c->w;
    h2b__load_life_connect(&c->life, w);
    c->state = S_CONNECTING; /* so that conn_close counts a failure */
    int rv = h2b__load_tcp_open(w, c, &c->fd);
    if (rv < 0) {
        conn_close(c, false);
        return;
    }
    c->events = EPOLLOUT;
    if (rv == 0)
        setup(c);
}

static void on_event(struct h1c *c, uint32_t ev)
{
    switch (c->state) {
    case S_CONNECTING:
    case S_HANDSHAKE:
        setup(c);
        break;
    case S_READY:
        if ((ev & EPOLLOUT) && c->req.busy && c->out_off < c->out_len && !conn_flush(c))
            return;
        if (ev & (EPOLLIN | EPOLLHUP | EPOLLERR))
            conn_read(c);
        break;
    default:
        break;
    }
}

/* ---- the engine's hooks (worker.h) ---- */

static void start(struct h2b__load_worker *w, uint32_t i)
{
    conn_start(&((struct h1w *)w->es)->conns[i]);
}

static void on_event_any(void *c, uint32_t ev)
{
    on_event(c, ev);
}

static enum h2b__load_phase conn_phase(const struct h2b__load_worker *w, uint32_t i)
{
    const struct h1w *hw = w->es;
    return h2b__load_phase_of(hw->conns[i].state, S_READY);
}

static void check_timeouts(struct h2b__load_worker *w)
{
    const struct h2b_load_config *cfg = w->sh->cfg;
    struct h1w *hw = w->es;
    uint64_t now = w->now;
    for (uint32_t i = 0; i < w->nconns; i++) {
        struct h1c *c = &hw->conns[i];
        if (h2b__load_conn_expired(w, &c->life, conn_phase(w, i), c->req.busy)) {
            conn_close(c, true);
        } else if (c->state == S_READY && c->req.busy && cfg->timeout_ns &&
                   now - c->req.t_submit >= cfg->timeout_ns) {
            /* HTTP/1.1 cannot cancel one request: the connection goes, and comes back (the
             * server lives) */
            c->life.responses = c->life.responses ? c->life.responses : 1;
            conn_close(c, true);
        }
    }
}

/* --total-rps: worker.c's h2b__load_release, one request per free connection */

static bool rate_can_take(const struct h2b__load_worker *w, uint32_t i)
{
    const struct h1w *hw = w->es;
    return hw->conns[i].state == S_READY && !hw->conns[i].req.busy;
}

static bool rate_submit(struct h2b__load_worker *w, uint32_t i, uint64_t t)
{
    struct h1w *hw = w->es;
    submit(&hw->conns[i], t); /* taken even when the write fails (the close counts it) */
    return true;
}

/* --total-rps: poll every millisecond while waiting for the connections to settle */
static uint64_t deadline(const struct h2b__load_worker *w)
{
    bool settling = w->sh->rate_mode && !w->sched_started;
    return settling ? w->now + H2B_NS_PER_MS : UINT64_MAX;
}

static const struct h2b__load_life *stop(struct h2b__load_worker *w, uint32_t i)
{
    struct h1c *c = &((struct h1w *)w->es)->conns[i];
    if (c->state >= S_CONNECTING && c->state <= S_READY) {
        c->life.budget = 0;
        conn_close(c, false);
    }
    return &c->life;
}

/* ---- set-up ---- */

int h2b__h1_probe_alpn(const struct h2b__load_shared *sh, char *out, size_t cap)
{
    int rv = H2B_ERR_IO;
    int fd = socket(sh->addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return rv;
    struct timeval tv = {.tv_sec = 10};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    SSL *ssl = NULL;
    if (connect(fd, (const struct sockaddr *)&sh->addr, sh->addrlen) != 0)
        goto out;
    ssl = SSL_new(sh->ssl_ctx);
    if (!ssl || SSL_set_fd(ssl, fd) != 1)
        goto out;
    const char *host = sh->cfg->uris[0].host;
    if (!strchr(host, ':') && strspn(host, "0123456789.") != strlen(host))
        SSL_set_tlsext_host_name(ssl, host);
    ERR_clear_error();
    if (SSL_connect(ssl) != 1)
        goto out;
    const unsigned char *alpn = NULL;
    unsigned alpnlen = 0;
    SSL_get0_alpn_selected(ssl, &alpn, &alpnlen);
    if (alpnlen >= cap)
        alpnlen = (unsigned)cap - 1;
    memcpy(out, alpn ? (const char *)alpn : "", alpnlen);
    out[alpnlen] = '\0';
    SSL_shutdown(ssl);
    rv = H2B_OK;
out:
    ERR_clear_error();
    SSL_free(ssl);
    close(fd);
    return rv;
}

struct sbuf {
    uint8_t *p;
    size_t n, cap;
};

static bool sb_put(struct sbuf *b, const void *p, size_t n)
{
    if (b->n + n > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->n + n)
            cap *= 2;
        uint8_t *q = realloc(b->p, cap);
        if (!q)
            return false;
        b->p = q;
        b->cap = cap;
    }
    memcpy(b->p + b->n, p, n);
    b->n += n;
    return true;
}

static bool sb_str(struct sbuf *b, const char *s)
{
    return sb_put(b, s, strlen(s));
}

/* Appends the request of URI u to b: the h2 header list (sh->proto) rendered as HTTP/1.1, then
 * the body.
 * Returns H2B_OK, H2B_ERR_NOMEM or H2B_ERR_INVAL (a CR or LF in a name or value). */
static int render(const struct h2b__load_shared *sh, size_t u, struct sbuf *b)
{
    const nghttp2_nv *nv = sh->proto->nva[u];
    size_t nn = sh->proto->nvlen[u];
    const nghttp2_nv *method = NULL, *path = NULL, *auth = NULL;
    for (size_t k = 0; k < nn; k++) {
        if (nv[k].namelen == 7 && memcmp(nv[k].name, ":method", 7) == 0)
            method = &nv[k];
        else if (nv[k].namelen == 5 && memcmp(nv[k].name, ":path", 5) == 0)
            path = &nv[k];
        else if (nv[k].namelen == 10 && memcmp(nv[k].name, ":authority", 10) == 0)
            auth = &nv[k];
    }
    if (!method || !path || !auth)
        return H2B_ERR_INVAL;
    bool ok = sb_put(b, method->value, method->valuelen) && sb_str(b, " ") &&
              sb_put(b, path->value, path->valuelen) && sb_str(b, " HTTP/1.1\r\nHost: ") &&
              sb_put(b, auth->value, auth->valuelen) && sb_str(b, "\r\n");
    for (size_t k = 0; ok && k < nn; k++) {
        if (nv[k].namelen > 0 && nv[k].name[0] == ':')
            continue;
        /* names and values come from the command line: no CR or LF may smuggle a line */
        if (memchr(nv[k].name, '\r', nv[k].namelen) || memchr(nv[k].name, '\n', nv[k].namelen) ||
            memchr(nv[k].value, '\r', nv[k].valuelen) || memchr(nv[k].value, '\n', nv[k].valuelen))
            return H2B_ERR_INVAL;
        ok = sb_put(b, nv[k].name, nv[k].namelen) && sb_str(b, ": ") &&
             sb_put(b, nv[k].value, nv[k].valuelen) && sb_str(b, "\r\n");
    }
    ok = ok && sb_str(b, "\r\n");
    if (ok && sh->cfg->body_len)
        ok = sb_put(b, sh->cfg->body, sh->cfg->body_len);
    return ok ? H2B_OK : H2B_ERR_NOMEM;
}

static int engine_init(struct h2b__load_worker *w, uint32_t first_conn, uint64_t requests)
{
    const struct h2b_load_config *cfg = w->sh->cfg;
    struct h1w *hw = calloc(1, sizeof *hw + (size_t)w->nconns * sizeof hw->conns[0]);
    if (!hw || !(hw->msg = calloc(cfg->nuris, sizeof *hw->msg))) {
        free(hw);
        return H2B_ERR_NOMEM;
    }
    w->es = hw;
    for (uint32_t i = 0; i < w->nconns; i++) { /* first: h2b__h1_worker_free closes them */
        hw->conns[i] = (struct h1c){.w = w, .hw = hw, .fd = -1};
        h2b__load_life_init(&hw->conns[i].life, w, first_conn, i, requests);
    }
    hw->lim.max_line = LINE_MAX_H1;
    hw->lim.max_head = HEAD_MAX;
    struct sbuf b = {0};
    for (size_t u = 0; u < cfg->nuris; u++) {
        hw->msg[u].iov_len = b.n; /* its start, until msgs stops moving */
        int rv = render(w->sh, u, &b);
        if (rv != H2B_OK) {
            free(b.p);
            return rv;
        }
    }
    hw->msgs = b.p;
    for (size_t u = 0; u < cfg->nuris; u++) {
        size_t end = u + 1 < cfg->nuris ? hw->msg[u + 1].iov_len : b.n;
        hw->msg[u].iov_base = hw->msgs + hw->msg[u].iov_len;
        hw->msg[u].iov_len = end - hw->msg[u].iov_len;
    }
    return H2B_OK;
}

static void engine_free(struct h2b__load_worker *w)
{
    struct h1w *hw = w->es;
    if (!hw)
        return;
    for (uint32_t i = 0; i < w->nconns; i++)
        conn_free(&hw->conns[i]);
    free(hw->msgs);
    free(hw->msg);
    free(hw);
    w->es = NULL;
}

const struct h2b__load_engine h2b__h1_engine = {
    .tag = "h1load",
    .init = engine_init,
    .free = engine_free,
    .start = start,
    .on_event = on_event_any,
    .rate = {conn_phase, rate_can_take, rate_submit},
    .timeouts = check_timeouts,
    .deadline = deadline,
    .stop = stop,
};
