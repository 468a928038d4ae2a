/*
 * h1load.c - the HTTP/1.1 engine of `h2bench load --h1` (and of -p http/1.1 on http://, or
 * an --npn-list the server answered with http/1.1): one worker's keep-alive TCP (or TLS)
 * connections in one epoll loop, one request in flight per connection, as h2load --h1 runs
 * without pipelining.
 *
 * The run around it is the runtime's (worker.c) and the connection life serial.c's, shared
 * with rawload.c (connect, TLS, write, read, close, reconnect, --timeout): this file says what a
 * request's bytes are and what the response's bytes mean. Outcomes go through
 * h2b__load_record() as every engine's do.
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
 * Failure policy: serial.c's (--timeout closes the connection: HTTP/1.1 cannot cancel one
 * request otherwise).
 * Rejected: pipelining (-m > 1 is not honoured: effective streams per connection is 1; the
 * issue makes it optional and off by default, and no shipped scenario wants it); reusing
 * h2load.c's connection struct (its states and buffers are nghttp2's).
 */
#include "load/h1load.h"
#include "load/serial.h"

#include "core/error.h"
#include "core/h1parse.h"

#include <openssl/err.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <unistd.h>

#define HEAD_MAX (64 * 1024)
#define LINE_MAX_H1 (16 * 1024)
#define TRAILERS_MAX (16 * 1024)

enum rstate { R_HEAD, R_LENGTH, R_CHUNKED, R_EOF };

struct h1c {
    struct h2b__serial_conn s; /* first: serial.c's connection */
    /* the response of the request in flight */
    enum rstate rs;
    uint64_t left;
    struct h2b_h1_chunked ch;
    uint8_t *hbuf; /* a head split across reads */
    size_t hlen;
};

struct h1w {
    struct h2b__serial_set set; /* first: w->es is serial.c's too */
    uint8_t *msgs;              /* every URI's whole request, one after the other */
    struct iovec *msg;          /* per URI: its request in msgs */
    struct h2b_h1_limits lim;
    struct h1c conns[]; /* w->nconns */
};

/* The next request: the next URI's bytes, a fresh response state. */
static void begin(struct h2b__serial_conn *sc)
{
    struct h1c *c = (struct h1c *)sc;
    const struct h1w *hw = sc->w->es;
    uint32_t u = h2b__load_next_uri(&sc->life, sc->w->sh->cfg);
    sc->out = hw->msg[u].iov_base;
    sc->out_len = hw->msg[u].iov_len;
    c->rs = R_HEAD;
    c->hlen = 0;
}

/* A head of hl bytes parsed into h: choose how the body ends. */
static void begin_body(struct h1c *c, const struct h2b_h1_head *h, size_t hl)
{
    struct h2b_load_stats *st = &c->s.w->stats;
    st->bytes_headers += hl;
    st->bytes_headers_decomp += hl;
    c->s.req.status = (uint16_t)h->status;
    c->s.close_after = h->close;
    if (h2b_h1_no_body(h->status, c->s.w->sh->method_head)) {
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
        c->s.close_after = true;
    }
}

/* Response bytes p[0..n). */
static void on_bytes(struct h2b__serial_conn *sc, const uint8_t *p, size_t n)
{
    struct h1c *c = (struct h1c *)sc;
    struct h2b__load_worker *w = sc->w;
    struct h1w *hw = w->es;
    while (n > 0 && sc->state == H2B__SERIAL_READY) {
        if (!sc->req.busy) {
            h2b__serial_broken(sc); /* bytes nobody asked for */
            return;
        }
        if (!sc->first_byte)
            h2b__serial_first_byte(sc);
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
                h2b__serial_broken(sc);
                return;
            }
            if (rv == H2B_H1_INCOMPLETE) {
                if (c->hlen == 0) {
                    if (!c->hbuf && !(c->hbuf = malloc(HEAD_MAX))) {
                        h2b__serial_broken(sc);
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
                    h2b__serial_broken(sc); /* we never ask to upgrade */
                    return;
                }
                w->stats.bytes_headers += (size_t)rv;
                continue; /* 100 Continue and the like: the final head follows */
            }
            begin_body(c, &h, (size_t)rv);
            if (c->rs == R_LENGTH && c->left == 0) {
                if (n > 0) {
                    h2b__serial_broken(sc); /* nothing may follow: we do not pipeline */
                    return;
                }
                h2b__serial_done(sc);
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
                    h2b__serial_broken(sc);
                    return;
                }
                h2b__serial_done(sc);
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
            h2b__serial_broken(sc);
            return;
        }
        if (rv == 1)
            w->stats.bytes_data += dl;
        p += used;
        n -= used;
        if (rv == 2) {
            if (n > 0) {
                h2b__serial_broken(sc);
                return;
            }
            h2b__serial_done(sc);
            return;
        }
    }
}

/* A body delimited by the close ends with it. */
static bool eof(const struct h2b__serial_conn *sc)
{
    return ((const struct h1c *)sc)->rs == R_EOF;
}

static const struct h2b__serial_ops ops = {
    .alpn = "http/1.1", .app = "http/1.1", .begin = begin, .bytes = on_bytes, .eof = eof};

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
    w->es = hw; /* first: engine_free closes the connections */
    h2b__serial_init(&hw->set, w, &ops, hw->conns, sizeof hw->conns[0], first_conn, requests);
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
    h2b__serial_free(&hw->set, w);
    for (uint32_t i = 0; i < w->nconns; i++)
        free(hw->conns[i].hbuf);
    free(hw->msgs);
    free(hw->msg);
    free(hw);
    w->es = NULL;
}

const struct h2b__load_engine h2b__h1_engine = {
    .tag = "h1load", .init = engine_init, .free = engine_free, H2B__SERIAL_HOOKS};
