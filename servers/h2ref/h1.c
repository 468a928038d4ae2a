/*
 * h1.c - the reference server's HTTP/1.1 side: keep-alive, one request at a time (pipelined
 * requests wait their turn in order), the same routes as HTTP/2 (handlers.c): /, /hello, /bytes/N,
 * /echo, /sink, /status/N, /delay/N, /stats.
 *
 * Approach:
 * - Heads are parsed by harness/core/h1parse.c (strict: smuggling pairs are refused). Input is
 *   parsed in place from the read buffer; only a partial head or body bytes that cannot move on
 *   yet are copied into a per-connection input buffer (IBUF_SIZE, from a per-thread free list,
 *   returned as soon as it empties), so an idle keep-alive connection holds no buffer.
 * - Output goes into one pooled 64 KiB buffer; /bytes bodies reference a static pattern by
 *   iovec (copied instead when copy_bodies is set, for TLS), produced as the socket drains, so
 *   a 1 GiB body costs no memory. /echo streams the request body back as it arrives, with the
 *   request's Content-Length or chunked when the request was chunked.
 * - Backpressure: a new request is only parsed when the previous response is fully queued and
 *   the output buffer has room; echo bytes move only into output room. What waits stays in the
 *   input buffer; a client that fills it while not reading its responses is cut off
 *   (guard_outq), and the slow-client timeout catches one that stops reading altogether.
 * - Limits: request line over 8 KiB is 414, a head over the header budget (max_header_list,
 *   at most IBUF_SIZE) is 431; errors are answered with Connection: close and the connection
 *   ends once the answer is out.
 * - Timers: one heap node per connection (harness/core/heap.h), keyed by its next deadline:
 *   idle keep-alive (idle_timeout, closed quietly), a head must complete within slow_timeout of
 *   its first byte (no extension for trickled bytes: slowloris), a body or unsent output must
 *   progress within slow_timeout, and a /delay response is due. Deadlines that move later are
 *   corrected lazily when they come up, as in the HTTP/2 engines.
 * - The peer's FIN (h2b_h1_input_closed): with no request in progress the connection is done at
 *   once; the requests already read are answered first. Without it a client that closes without
 *   "Connection: close" left a CLOSE-WAIT socket holding a --max-connections slot for the idle
 *   timeout.
 * - Routes and what they answer are handlers.c's (h2b_route_parse, h2b_handle), as for HTTP/2
 *   and HTTP/3; this file writes the answer as an HTTP/1.1 head and body.
 * Rejected: pipelined responses generated ahead (they would need a queue of bodies for little gain,
 * and no client we measure pipelines by default).
 */
#include "h2ref/h1.h"

#include "core/check.h"

#include "core/clock.h"
#include "core/error.h"
#include "core/h1parse.h"
#include "h2ref/handlers.h"
#include "core/heap.h"
#include "h2ref/ctimer.h"
#include "core/pool.h"
#include "h2ref/engine.h"

#include <stdlib.h>
#include <string.h>

#define BUF_SIZE (64 * 1024) /* output and input buffers */
#define KEEP_BUFS 64
#define MAX_LINE 8192
#define HEAD_ROOM (16 * 1024 + 1024) /* output room a response head plus /stats needs */
#define PAT_IOV 16384
#define OUT_IOV_MAX 40
#define OUT_PENDING_MAX (512 * 1024)
#define MAX_TRAILERS 8192

_Static_assert(PAT_IOV <= H2B_PATTERN_STEP, "an iovec's pattern run is in the array");

enum state { S_HEAD, S_BODY, S_DELAY };

struct h1ctx {
    struct h2b_conn_config cfg;
    struct h2b_stats *stats;
    const char *date;
    struct h2b_engine_env *env; /* the core's, borrowed */
    struct h2b_heap timers;
    uint64_t now;
    struct h2b_freelist bufs; /* input and output buffers (harness/core/pool.h) */
    struct h2b_h1_limits lim;
};

struct h1conn {
    struct h1ctx *ctx;
    struct h2b_dirty *owner; /* the core's connection, in the dirty queue */
    struct h2b_heap_node tnode;
    /* input waiting to be processed */
    uint8_t *ibuf;
    size_t ilen;
    /* output: obuf[ooff..olen), then pat_left bytes of the pattern from pat_off */
    uint8_t *obuf;
    size_t olen, ooff;
    uint64_t pat_left, pat_off;
    struct iovec iov[OUT_IOV_MAX];
    /* the request in progress */
    uint8_t state;
    uint8_t route;   /* enum h2b_route */
    uint8_t method;  /* enum h2b_method */
    bool head_req;   /* HEAD */
    bool upload;     /* POST or PUT */
    bool chunked_in; /* the request body is chunked */
    bool close_after;
    bool http10;
    bool echo_started; /* the echo response head is out */
    uint64_t arg;
    uint64_t body_left; /* Content-Length bytes still to come */
    uint64_t rx;        /* request body bytes */
    struct h2b_h1_chunked ch;
    uint64_t delay_until;
    /* connection */
    bool closing; /* no more requests: done once the output is out */
    bool fatal;
    bool shut;           /* graceful shutdown asked */
    bool input_closed;   /* the peer's FIN: no more input will come */
    uint64_t head_since; /* first byte of the pending head */
    uint64_t last;       /* last progress */
};

/* ---- buffers ---- */

static uint8_t *buf_get(struct h1ctx *ctx)
{
    bool fresh;
    return h2b_freelist_get(&ctx->bufs, &fresh);
}

static void buf_put(struct h1ctx *ctx, uint8_t *p)
{
    h2b_freelist_put(&ctx->bufs, p);
}

/* ---- context ---- */

static int h1_ctx_new(void **out, struct h2b_engine_env *env)
{
    const struct h2b_conn_config *cfg = env->cfg;
    struct h1ctx *ctx = calloc(1, sizeof *ctx);
    if (!ctx)
        return H2B_ERR_NOMEM;
    h2b_freelist_init(&ctx->bufs, BUF_SIZE, KEEP_BUFS);
    ctx->cfg = *cfg;
    ctx->env = env;
    ctx->stats = env->stats;
    ctx->date = env->date;
    ctx->now = h2b_clock_now_ns();
    h2b_heap_init(&ctx->timers);
    ctx->lim.max_line = MAX_LINE;
    ctx->lim.max_head = cfg->max_header_list < BUF_SIZE ? cfg->max_header_list : BUF_SIZE;
    if (ctx->lim.max_head < 1024)
        ctx->lim.max_head = 1024;
    *out = ctx;
    return H2B_OK;
}

static void h1_ctx_del(void *ectx)
{
    struct h1ctx *ctx = ectx;
    if (!ctx)
        return;
    h2b_freelist_free(&ctx->bufs);
    h2b_heap_free(&ctx->timers);
    free(ctx);
}

/* ---- output ---- */

static size_t out_room(const struct h1conn *h)
{
    return h->obuf ? BUF_SIZE - h->olen : BUF_SIZE;
}

static bool out_pending(const struct h1conn *h)
{
    return h->olen > h->ooff || h->pat_left > 0;
}

/* Appends n bytes (the caller checked the room); false without memory. */
static bool out_put(struct h1conn *h, const void *p, size_t n)
{
    if (!h->obuf) {
        h->obuf = buf_get(h->ctx);
        if (!h->obuf)
            return false;
        h->olen = h->ooff = 0;
    }
    H2B_ASSERT(n <= BUF_SIZE - h->olen); /* every caller checked out_room */
    memcpy(h->obuf + h->olen, p, n);
    h->olen += n;
    return true;
}

static size_t put_str(char *dst, const char *s)
{
    size_t n = strlen(s);
    memcpy(dst, s, n);
    return n;
}

static size_t put_u64(char *dst, uint64_t v, unsigned base)
{
    char tmp[20];
    size_t n = 0;
    do {
        tmp[n++] = "0123456789abcdef"[v % base];
        v /= base;
    } while (v);
    for (size_t i = 0; i < n; i++)
        dst[i] = tmp[n - 1 - i];
    return n;
}

static const char *reason(unsigned status)
{
    switch (status) {
    case 200:
        return "OK";
    case 201:
        return "Created";
    case 204:
        return "No Content";
    case 304:
        return "Not Modified";
    case 400:
        return "Bad Request";
    case 404:
        return "Not Found";
    case 405:
        return "Method Not Allowed";
    case 414:
        return "URI Too Long";
    case 431:
        return "Request Header Fields Too Large";
    case 500:
        return "Internal Server Error";
    case 501:
        return "Not Implemented";
    case 503:
        return "Service Unavailable";
    case 505:
        return "HTTP Version Not Supported";
    default:
        return "";
    }
}

/* Queues a response head. clen < 0: chunked (echo of a chunked request) or, for 204/304, no
 * length at all. */
static bool put_head(struct h1conn *h, unsigned status, const char *ct, int64_t clen)
{
    char b[512];
    size_t n = put_str(b, "HTTP/1.1 ");
    n += put_u64(b + n, status, 10);
    b[n++] = ' ';
    n += put_str(b + n, reason(status));
    n += put_str(b + n, "\r\nServer: h2bench\r\nDate: ");
    n += put_str(b + n, h->ctx->date);
    if (ct) {
        n += put_str(b + n, "\r\nContent-Type: ");
        n += put_str(b + n, ct);
    }
    if (clen >= 0) {
        n += put_str(b + n, "\r\nContent-Length: ");
        n += put_u64(b + n, (uint64_t)clen, 10);
    } else if (status != 204 && status != 304) {
        n += put_str(b + n, "\r\nTransfer-Encoding: chunked");
    }
    if (h->close_after || h->shut)
        n += put_str(b + n, "\r\nConnection: close");
    else if (h->http10)
        n += put_str(b + n, "\r\nConnection: keep-alive");
    n += put_str(b + n, "\r\n\r\n");
    h2b_stats_add(h->ctx->stats, H2B_STAT_REQUESTS, 1);
    h2b_stats_status(h->ctx->stats, status);
    return out_put(h, b, n);
}

/* ---- timers ---- */

static bool busy(const struct h1conn *h)
{
    return h->state != S_HEAD || h->ilen > 0 || out_pending(h) || h->closing;
}

static uint64_t deadline(const struct h1conn *h)
{
    const struct h2b_conn_config *cfg = &h->ctx->cfg;
    if (h->state == S_DELAY)
        return h->delay_until;
    if (h->state == S_HEAD && h->ilen > 0 && !out_pending(h) && !h->closing)
        return h->head_since + cfg->slow_timeout_ns;
    if (busy(h))
        return h->last + cfg->slow_timeout_ns;
    return h->last + cfg->idle_timeout_ns;
}

static void retime(struct h1conn *h)
{
    struct h2b_heap *t = &h->ctx->timers;
    if (h->fatal) {
        h2b_heap_remove(t, &h->tnode);
        return;
    }
    h2b_ctimer_arm(t, &h->tnode, deadline(h)); /* room reserved in h2b_h1_new */
}

static void fail(struct h1conn *h, enum h2b_stat why)
{
    if (!h->fatal)
        h2b_stats_add(h->ctx->stats, why, 1);
    h->fatal = true;
    h2b_heap_remove(&h->ctx->timers, &h->tnode);
}

/* ---- requests ---- */

static void next_request(struct h1conn *h)
{
    H2B_ASSERT(h->state != S_DELAY); /* a delayed request is answered by its timer first */
    h->state = S_HEAD;
    if (h->close_after || h->shut)
        h->closing = true;
}

/* Queues a complete response with a small body from memory. */
static void respond_mem(struct h1conn *h, unsigned status, const char *ct, const void *body,
                        size_t n)
{
    if (!put_head(h, status, ct, (int64_t)n) || (!h->head_req && n > 0 && !out_put(h, body, n)))
        fail(h, H2B_STAT_ERR_PROTOCOL);
}

/* Renders /stats (status and content-type from rs) behind the head; false when the
 * connection failed before an answer was queued. */
static bool respond_stats(struct h1conn *h, const struct h2b_response *rs)
{
    struct h1ctx *ctx = h->ctx;
    if (!h->obuf && !out_put(h, "", 0)) {
        fail(h, H2B_STAT_ERR_PROTOCOL);
        return false;
    }
    /* render after the head's room: the head goes first, so render into the tail and move it
     * behind the head */
    char *dst = (char *)h->obuf + h->olen + 512;
    size_t cap = BUF_SIZE - h->olen - 512;
    int n = ctx->env->stats_fn ? ctx->env->stats_fn(ctx->env->stats_arg, dst, cap)
                               : h2b_stats_json(ctx->stats, false, dst, cap);
    if (n < 0) {
        respond_mem(h, 500, "text/plain", NULL, 0);
        return true;
    }
    size_t before = h->olen;
    if (!put_head(h, rs->status, rs->ct, n) || h->olen - before > 512) {
        fail(h, H2B_STAT_ERR_PROTOCOL);
        return false;
    }
    if (!h->head_req) {
        memmove(h->obuf + h->olen, dst, (size_t)n);
        h->olen += (size_t)n;
    }
    return true;
}

/* The response of a request whose body (if any) has all arrived; echo's is already out. */
static void respond(struct h1conn *h)
{
    H2B_ASSERT(h->state != S_DELAY); /* answered once: the timer leaves S_DELAY first */
    struct h1ctx *ctx = h->ctx;
    struct h2b_request rq = {.route = h->route, .method = h->method, .arg = h->arg, .rx = h->rx};
    struct h2b_response rs;
    char text[H2B_TEXT_MAX];
    h2b_handle(&rq, text, &rs);
    switch (rs.body) {
    case H2B_BODY_PATTERN:
        if (!put_head(h, rs.status, rs.ct, (int64_t)rs.len)) {
            fail(h, H2B_STAT_ERR_PROTOCOL);
            return;
        }
        if (!h->head_req) {
            h->pat_left = rs.len;
            h->pat_off = 0;
        }
        break;
    case H2B_BODY_ECHO:
        if (!h->echo_started)
            respond_mem(h, rs.status, rs.ct, NULL, 0); /* no body came: content-length 0 */
        else if (h->chunked_in && !out_put(h, "0\r\n\r\n", 5))
            fail(h, H2B_STAT_ERR_PROTOCOL);
        break;
    case H2B_BODY_DELAY:
        h->state = S_DELAY;
        h->delay_until = ctx->now + h->arg * H2B_NS_PER_MS;
        return; /* answered by the timer */
    case H2B_BODY_STATS:
        if (!respond_stats(h, &rs))
            return;
        break;
    case H2B_BODY_MEM:
        respond_mem(h, rs.status, rs.ct, rs.mem, (size_t)rs.len);
        break;
    default:
        if (rs.has_cl)
            respond_mem(h, rs.status, rs.ct, NULL, 0);
        else if (!put_head(h, rs.status, rs.ct, -1))
            fail(h, H2B_STAT_ERR_PROTOCOL);
        break;
    }
    next_request(h);
}

/* Answers a rejected head and ends the connection once the answer is out. */
static void reject(struct h1conn *h, int err)
{
    h->close_after = true;
    h->head_req = false;
    h->http10 = false;
    respond_mem(h, h2b_h1_err_status(err), "text/plain", NULL, 0);
    h->closing = true;
    h->state = S_HEAD;
}

/* A head parsed: set up the request. */
static void begin(struct h1conn *h, const struct h2b_h1_head *hd)
{
    H2B_ASSERT(h->state == S_HEAD); /* a head is parsed only between requests */
    h->method = (uint8_t)h2b_method_parse(hd->method.p, hd->method.n);
    h->head_req = h->method == H2B_METHOD_HEAD;
    h->upload = h2b_method_upload(h->method);
    h->http10 = hd->minor == 0;
    h->close_after = hd->close;
    h->chunked_in = hd->chunked;
    h->body_left = hd->content_length > 0 ? (uint64_t)hd->content_length : 0;
    h->rx = 0;
    h->echo_started = false;
    h2b_h1_chunked_init(&h->ch);
    if (hd->target.n == 1 && hd->target.p[0] == '*')
        h->route = H2B_ROUTE_NOTFOUND;
    else
        h->route =
            (uint8_t)h2b_route_parse(hd->target.p, hd->target.n, h->ctx->cfg.max_body, &h->arg);
    bool body = h->chunked_in || h->body_left > 0;
    if (!body) {
        respond(h);
        return;
    }
    h->state = S_BODY;
    if (hd->expect_continue && !out_put(h, "HTTP/1.1 100 Continue\r\n\r\n", 25)) {
        fail(h, H2B_STAT_ERR_PROTOCOL);
        return;
    }
    if (h->route == H2B_ROUTE_ECHO && h->upload) {
        h->echo_started = true;
        if (!put_head(h, 200, "application/octet-stream",
                      h->chunked_in ? -1 : (int64_t)h->body_left))
            fail(h, H2B_STAT_ERR_PROTOCOL);
    }
}

/* Body bytes p[0..n) of the request; echo copies them out (the caller bounded n by the room). */
static void body_bytes(struct h1conn *h, const uint8_t *p, size_t n)
{
    h->rx += n;
    if (h->route != H2B_ROUTE_ECHO || !h->upload || n == 0)
        return;
    if (h->chunked_in) {
        char b[24];
        size_t k = put_u64(b, n, 16);
        b[k++] = '\r';
        b[k++] = '\n';
        if (!out_put(h, b, k) || !out_put(h, p, n) || !out_put(h, "\r\n", 2))
            fail(h, H2B_STAT_ERR_PROTOCOL);
    } else if (!out_put(h, p, n)) {
        fail(h, H2B_STAT_ERR_PROTOCOL);
    }
}

/* How many body bytes may be taken now (echo: what fits in the output). */
static size_t body_room(const struct h1conn *h)
{
    if (h->route != H2B_ROUTE_ECHO || !h->upload)
        return SIZE_MAX;
    size_t room = out_room(h);
    return room > 32 ? room - 32 : 0;
}

/* Processes input p[0..n); returns the bytes consumed (the rest must wait). */
static size_t take(struct h1conn *h, const uint8_t *p, size_t n)
{
    size_t used = 0;
    while (used < n && !h->fatal && !h->closing) {
        if (h->state == S_DELAY)
            break;
        if (h->state == S_HEAD) {
            if (h->pat_left > 0)
                break;
            if (h->obuf && h->ooff > 0 && out_room(h) < HEAD_ROOM) {
                memmove(h->obuf, h->obuf + h->ooff, h->olen - h->ooff);
                h->olen -= h->ooff;
                h->ooff = 0;
            }
            if (out_room(h) < HEAD_ROOM)
                break;
            struct h2b_h1_head hd;
            int rv = h2b_h1_parse_request(p + used, n - used, &h->ctx->lim, &hd);
            if (rv == H2B_H1_INCOMPLETE)
                break;
            if (rv < 0) {
                reject(h, rv);
                return n;
            }
            used += (size_t)rv;
            h->last = h->ctx->now;
            begin(h, &hd);
            continue;
        }
        /* S_BODY */
        size_t room = body_room(h);
        if (room == 0)
            break;
        size_t avail = n - used < room ? n - used : room;
        if (!h->chunked_in) {
            size_t k = avail < h->body_left ? avail : (size_t)h->body_left;
            body_bytes(h, p + used, k);
            used += k;
            h->body_left -= k;
            h->last = h->ctx->now;
            if (h->body_left == 0)
                respond(h);
            continue;
        }
        size_t u = 0;
        const uint8_t *d = NULL;
        size_t dl = 0;
        int rv = h2b_h1_chunked_next(&h->ch, p + used, avail, MAX_TRAILERS, &u, &d, &dl);
        if (rv < 0) {
            if (h->echo_started) {
                fail(h, H2B_STAT_ERR_PROTOCOL); /* the 200 head is out: only a cut is left */
                return n;
            }
            reject(h, rv);
            return n;
        }
        used += u;
        h->last = h->ctx->now;
        if (rv == 1)
            body_bytes(h, d, dl);
        else if (rv == 2)
            respond(h);
    }
    return used;
}

/* Runs take() over the buffered input and keeps what is left. */
static void drain_ibuf(struct h1conn *h)
{
    if (h->ilen == 0)
        return;
    size_t used = take(h, h->ibuf, h->ilen);
    H2B_ASSERT(used <= h->ilen);
    if (h->closing || h->fatal)
        used = h->ilen; /* nothing more is read */
    memmove(h->ibuf, h->ibuf + used, h->ilen - used);
    h->ilen -= used;
    if (h->ilen == 0) {
        buf_put(h->ctx, h->ibuf);
        h->ibuf = NULL;
    }
}

/* Keeps p[0..n) in the input buffer; false when it does not fit. */
static bool keep(struct h1conn *h, const uint8_t *p, size_t n)
{
    if (n == 0)
        return true;
    if (!h->ibuf) {
        h->ibuf = buf_get(h->ctx);
        if (!h->ibuf)
            return false;
        h->ilen = 0;
    }
    if (BUF_SIZE - h->ilen < n)
        return false;
    if (h->ilen == 0 && h->state == S_HEAD)
        h->head_since = h->ctx->now;
    memcpy(h->ibuf + h->ilen, p, n);
    h->ilen += n;
    return true;
}

static int h1_recv(void *e, const uint8_t *data, size_t len)
{
    struct h1conn *h = e;
    if (h->fatal)
        return H2B_ERR_PROTO;
    while (len > 0 && !h->closing && !h->fatal) {
        if (h->ilen == 0) {
            size_t used = take(h, data, len);
            data += used;
            len -= used;
            if (len == 0 || h->closing || h->fatal)
                break;
        }
        size_t room = h->ibuf ? BUF_SIZE - h->ilen : BUF_SIZE;
        size_t k = len < room ? len : room;
        if (!keep(h, data, k)) {
            fail(h, H2B_STAT_ERR_PROTOCOL);
            break;
        }
        data += k;
        len -= k;
        size_t before = h->ilen;
        drain_ibuf(h);
        if (len > 0 && h->ilen == before && h->ilen == BUF_SIZE) {
            if (h->state == S_HEAD && !out_pending(h))
                reject(h, H2B_H1_TOO_LARGE);
            else
                fail(h, H2B_STAT_GUARD_OUTQ); /* sends on while not reading its responses */
            break;
        }
    }
    retime(h);
    return h->fatal ? H2B_ERR_PROTO : H2B_OK;
}

/* ---- output to the caller ---- */

static int h1_output(void *e, const struct iovec **iov)
{
    struct h1conn *h = e;
    if (h->fatal)
        return H2B_ERR_PROTO;
    bool copy = h->ctx->cfg.copy_bodies;
    if (copy && h->pat_left > 0) {
        if (!h->obuf && !out_put(h, "", 0)) {
            fail(h, H2B_STAT_ERR_PROTOCOL);
            return H2B_ERR_PROTO;
        }
        if (h->ooff == h->olen)
            h->ooff = h->olen = 0;
        while (h->pat_left > 0 && out_room(h) > 0) {
            size_t k = out_room(h) < PAT_IOV ? out_room(h) : PAT_IOV;
            if (k > h->pat_left)
                k = (size_t)h->pat_left;
            memcpy(h->obuf + h->olen, h2b_pattern_at(h->pat_off), k);
            h->olen += k;
            h->pat_off += k;
            h->pat_left -= k;
        }
    }
    int n = 0;
    size_t pending = 0;
    if (h->olen > h->ooff) {
        h->iov[n++] = (struct iovec){h->obuf + h->ooff, h->olen - h->ooff};
        pending = h->olen - h->ooff;
    }
    if (!copy) {
        uint64_t off = h->pat_off, left = h->pat_left;
        while (left > 0 && n < OUT_IOV_MAX && pending < OUT_PENDING_MAX) {
            size_t k = left < PAT_IOV ? (size_t)left : PAT_IOV;
            h->iov[n++] = (struct iovec){(void *)(uintptr_t)h2b_pattern_at(off), k};
            off += k;
            left -= k;
            pending += k;
        }
    }
    *iov = h->iov;
    return n;
}

static void h1_sent(void *e, size_t n)
{
    struct h1conn *h = e;
    if (n == 0)
        return;
    h2b_stats_add(h->ctx->stats, H2B_STAT_BYTES_OUT, n);
    size_t k = h->olen - h->ooff < n ? h->olen - h->ooff : n;
    h->ooff += k;
    n -= k;
    if (h->obuf && h->ooff == h->olen) {
        buf_put(h->ctx, h->obuf);
        h->obuf = NULL;
        h->olen = h->ooff = 0;
    }
    if (n > 0 && !h->ctx->cfg.copy_bodies) {
        h->pat_off += n;
        h->pat_left -= n < h->pat_left ? n : h->pat_left;
    }
    h->last = h->ctx->now;
    /* room again: requests waiting in the input may proceed */
    if (h->ilen > 0 && !h->fatal && !h->closing) {
        drain_ibuf(h);
        h2b_engine_mark_dirty(h->ctx->env, h->owner);
    }
    retime(h);
}

/* After the peer's FIN: input is consumed as soon as output room allows (take() on receipt,
 * drain_ibuf() in h2b_h1_sent), so once the output is out whatever is left can never become a
 * response, except a /delay waiting for its timer. */
static bool eof_idle(const struct h1conn *h)
{
    return h->input_closed && h->state != S_DELAY;
}

static bool h1_done(const void *e)
{
    const struct h1conn *h = e;
    return h->fatal || ((h->closing || eof_idle(h)) && !out_pending(h));
}

static void h1_input_closed(void *e)
{
    struct h1conn *h = e;
    h->input_closed = true;
    h2b_engine_mark_dirty(h->ctx->env, h->owner);
}

static bool h1_fatal(const void *e)
{
    const struct h1conn *h = e;
    return h->fatal;
}

static void h1_shutdown(void *e)
{
    struct h1conn *h = e;
    h->shut = true;
    if (h->state == S_HEAD && h->ilen == 0)
        h->closing = true;
    h2b_engine_mark_dirty(h->ctx->env, h->owner);
}

/* ---- timers ---- */

static void h1_tick(void *ectx, uint64_t now_ns)
{
    struct h1ctx *ctx = ectx;
    ctx->now = now_ns;
    struct h2b_heap_node *top;
    while ((top = h2b_heap_top(&ctx->timers)) != NULL && top->key <= now_ns) {
        struct h1conn *h = (struct h1conn *)(void *)((char *)top - offsetof(struct h1conn, tnode));
        uint64_t d = deadline(h);
        if (d > now_ns) {
            h2b_heap_rekey(&ctx->timers, top, d);
            continue;
        }
        if (h->state == S_DELAY) {
            h->state = S_HEAD;
            h->route = H2B_ROUTE_HELLO;
            respond(h);
            h->last = now_ns;
            drain_ibuf(h); /* a pipelined request may follow */
        } else if (!busy(h)) {
            h2b_stats_add(ctx->stats, H2B_STAT_GUARD_IDLE, 1);
            h->closing = true;
            h->last = now_ns;
        } else {
            fail(h, H2B_STAT_GUARD_SLOW);
        }
        if (h2b_heap_contains(top))
            h2b_heap_rekey(&ctx->timers, top, deadline(h));
        h2b_engine_mark_dirty(h->ctx->env, h->owner);
    }
}

static uint64_t h1_next_deadline(const void *ectx)
{
    const struct h1ctx *ctx = ectx;
    const struct h2b_heap_node *top = h2b_heap_top(&ctx->timers);
    return top ? top->key : UINT64_MAX;
}

/* ---- connection ---- */

static int h1_conn_new(void **out, void *ectx, struct h2b_dirty *owner)
{
    struct h1ctx *ctx = ectx;
    struct h1conn *h = calloc(1, sizeof *h);
    if (!h)
        return H2B_ERR_NOMEM;
    if (h2b_heap_reserve(&ctx->timers, 1) != H2B_OK) {
        free(h);
        return H2B_ERR_NOMEM;
    }
    h->ctx = ctx;
    h->owner = owner;
    h->last = h->head_since = ctx->now;
    retime(h);
    *out = h;
    return H2B_OK;
}

static void h1_del(void *e)
{
    struct h1conn *h = e;
    if (!h)
        return;
    h2b_heap_remove(&h->ctx->timers, &h->tnode);
    if (h->obuf)
        buf_put(h->ctx, h->obuf);
    if (h->ibuf)
        buf_put(h->ctx, h->ibuf);
    free(h);
}

const struct h2b_engine h2b_h1_engine = {
    .name = "http/1.1",
    .ctx_new = h1_ctx_new,
    .ctx_del = h1_ctx_del,
    .tick = h1_tick,
    .next_deadline = h1_next_deadline,
    .conn_new = h1_conn_new,
    .del = h1_del,
    .recv = h1_recv,
    .output = h1_output,
    .sent = h1_sent,
    .done = h1_done,
    .fatal = h1_fatal,
    .input_closed = h1_input_closed,
    .shutdown = h1_shutdown,
};
