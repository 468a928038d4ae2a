/*
 * h2conn.h - the HTTP/2 client connection both framings share (internal to h2bench::load):
 * h2load.c owns its life (set-up, slots, pacing, reads and writes, close) and frames with
 * h2fast.c directly; h2nghttp2.c frames with nghttp2's session behind struct h2b__h2_session.
 * What the server sent is checked and counted by the inline hooks below, so each framing's
 * callbacks call them without a call across files on every header.
 */
#ifndef H2B_LOAD_H2CONN_H
#define H2B_LOAD_H2CONN_H

#include "core/pool_nghttp2.h" /* the size-class pool as an nghttp2_mem */
#include "core/token.h"
#include "load/engine.h"
#include "load/h2fast.h"

#include <string.h>

#define NO_SLOT UINT32_MAX

enum conn_state {
    CONN_IDLE,       /* not started, or waiting to reconnect */
    CONN_CONNECTING, /* TCP connect in progress */
    CONN_HANDSHAKE,  /* TLS handshake in progress */
    CONN_SETTINGS,   /* HTTP/2 preface sent, waiting for the server's SETTINGS */
    CONN_READY,      /* requests flow */
    CONN_DONE,       /* finished its work, closed */
    CONN_DEAD        /* failed for good */
};

struct slot {
    struct h2b__load_req req; /* first: t_sent is when the request HEADERS went to the socket */
    uint64_t t_first;
    size_t body_off;
    int64_t content_length; /* of the response, -1 when it has none */
    uint64_t body_recv;     /* response DATA payload so far */
    int32_t stream_id;      /* 0 when the slot is free */
    uint32_t next_free;
    uint8_t block;    /* the header block being read: BLOCK_* (hook_begin_headers, hook_header) */
    uint8_t grpc_hdr; /* --grpc: grpc-status of the response's header block (trailers-only) */
};

enum {
    BLOCK_TRAILERS = 1, /* after the final :status: no pseudo-header allowed */
    BLOCK_STATUS = 2,   /* this block carried :status */
    BLOCK_REGULAR = 4,  /* this block carried a regular field: no pseudo-header may follow */
};

struct h2w;
struct h2b__h2_session;

struct h2b__load_conn {
    struct h2b__load_worker *w;
    struct h2w *hw;
    enum conn_state state;
    int fd;
    SSL *ssl;
    struct h2b__load_uio *uio; /* --io uring: the connect's operations (uring.h); NULL on epoll */
    nghttp2_session *session;
    struct h2b_h2f *fast; /* --engine fast: the framing that replaces session */
    bool dirty;           /* on w->dirty */
    bool want_out;        /* EPOLLOUT registered */
    bool draining;        /* GOAWAY received or stream ids exhausted: no new requests */
    bool broken;          /* fatal error seen inside a callback: close after the callback returns */
    bool timed_out;       /* why it broke */
    uint32_t m_eff;       /* effective streams in flight */
    uint32_t inflight;
    struct slot *slots;
    uint32_t nslots;
    struct slot **by_id; /* direct map (stream_id / 2) & id_mask -> slot; misses fall back */
    uint32_t id_mask;
    uint32_t free_head;
    struct h2b__load_life life;
    uint64_t t_tcp;     /* TCP connected: the TLS handshake starts */
    uint64_t t_blocked; /* when the server's stream limit became 0 (m_eff == 0) */
    uint64_t t_pace0;   /* paced: start of this connection's schedule (first READY) */
    uint64_t paced_n;   /* paced: requests released so far (the next one's index) */
    uint8_t *wbuf;
    size_t wcap, woff, wlen;
};

/* A worker's HTTP/2 state (w->es) */
struct h2w {
    const struct h2b__h2_session *ng; /* nghttp2's session (h2nghttp2.c); NULL: h2fast.c */
    struct h2b_pool pool;             /* nghttp2's allocations for this worker's sessions */
    nghttp2_mem mem;
    nghttp2_session_callbacks *callbacks;
    nghttp2_option *option;
    struct h2b_h2f_req *reqs;      /* fast: per URI, its header list for h2fast.c's encoder */
    struct h2b__load_conn **dirty; /* connections with bytes to send this loop turn */
    uint32_t ndirty;
    uint8_t *rbuf;
    struct h2b__load_conn conns[]; /* w->nconns */
};

/* nghttp2's session behind a connection (h2nghttp2.c: h2b__h2_engine). */
struct h2b__h2_session {
    int (*start)(struct h2b__load_conn *c); /* c->session made, our SETTINGS queued: 0, or -1 */
    void (*del)(struct h2b__load_conn *c);  /* c->session goes (NULL) */
    /* Queues the request of URI u in slot s: its stream id, or < 0 (the session refused). */
    int32_t (*submit)(struct h2b__load_conn *c, struct slot *s, uint32_t u);
    void (*cancel)(struct h2b__load_conn *c, int32_t stream_id);           /* RST_STREAM(CANCEL) */
    ssize_t (*recv)(struct h2b__load_conn *c, const uint8_t *p, size_t n); /* < 0: fatal */
    ssize_t (*send)(struct h2b__load_conn *c, const uint8_t **data);       /* next bytes; 0: none */
    bool (*want_write)(const struct h2b__load_conn *c);
    bool (*over)(const struct h2b__load_conn *c); /* the session ended itself */
};

static inline void mark_dirty(struct h2b__load_conn *c)
{
    if (!c->dirty) {
        c->dirty = true;
        c->hw->dirty[c->hw->ndirty++] = c;
    }
}

#define OUT_RESPONSE H2B__LOAD_RESPONSE
#define OUT_RESET H2B__LOAD_RESET
#define OUT_PROTOCOL H2B__LOAD_PROTOCOL

/* Out of line on purpose: the hooks that end a request tail-call it rather than keep c live
 * across h2b__load_record (a push, a pop and a reload per request when it was inlined) */
__attribute__((noinline, unused)) static void
finish_request(struct h2b__load_conn *c, struct slot *s, enum h2b__load_outcome how)
{
    h2b__load_finish(c->w, &c->life, &s->req, how);
}

/* Does the body of a response that ended normally match its content-length? (RFC 9110 8.6: not
 * for HEAD, 1xx, 204, 304.) */
static inline bool body_complete(const struct h2b__load_conn *c, const struct slot *s)
{
    if (s->content_length < 0 || c->w->sh->method_head || s->req.status == 204 ||
        s->req.status == 304)
        return true;
    return s->body_recv == (uint64_t)s->content_length;
}

/* ---- what the server sent, whichever framing read it (h2nghttp2.c's callbacks, h2load.c's for
 * h2fast.c): the request's counts, status, body length checks. Inline: they are on every
 * response's path, in both files ---- */

/* A HEADERS block of s's stream starts (every one: interim, final, trailers). The first is
 * the TTFB. */
static inline void hook_begin_headers(struct h2b__load_conn *c, struct slot *s)
{
    if (s)
        s->block = s->req.status != 0 ? BLOCK_TRAILERS : 0;
    if (s && s->t_first == 0) {
        s->t_first = c->w->now;
        if (s->req.measured && s->req.t_sent)
            h2b_hist_record(c->w->stats.ttfb, c->w->now - s->req.t_sent);
    }
}

/* One response header field of s (NULL: a stream no longer ours, which h2fast.c still decodes
 * and nghttp2 does not report). Returns 1 when the response is broken (the request is counted
 * as a protocol error; the engine resets the stream). */
/* The field rules of nghttp2's HTTP messaging for a response (off in the nghttp2 engine, see
 * load.c, so both engines apply them here, and h2load resets the stream for each): a name is
 * lowercase token characters (':' first only for pseudo-headers); the only pseudo-header is
 * :status, once per block and before every regular field, and none in trailers;
 * connection-specific fields are not HTTP/2's. False: the response is malformed. */
static inline bool field_ok(struct slot *s, const uint8_t *name, size_t namelen)
{
    if (namelen == 0)
        return false;
    for (size_t i = name[0] == ':' ? 1 : 0; i < namelen; i++) {
        if (!h2b_token_lower(name[i]))
            return false; /* uppercase, separators, controls */
    }
    if (name[0] == ':') {
        if (s->block & (BLOCK_TRAILERS | BLOCK_STATUS | BLOCK_REGULAR))
            return false;
        if (namelen != 7 || memcmp(name, ":status", 7) != 0)
            return false;
        s->block |= BLOCK_STATUS;
        return true;
    }
    s->block |= BLOCK_REGULAR;
    /* The connection-specific fields, by length: most names have none of these lengths. */
    switch (namelen) {
    case 7:
        return memcmp(name, "upgrade", 7) != 0;
    case 10:
        return memcmp(name, "connection", 10) != 0 && memcmp(name, "keep-alive", 10) != 0;
    case 16:
        return memcmp(name, "proxy-connection", 16) != 0;
    case 17:
        return memcmp(name, "transfer-encoding", 17) != 0;
    default:
        return true;
    }
}

static inline int hook_header(struct h2b__load_conn *c, struct slot *s, const uint8_t *name,
                              size_t namelen, const uint8_t *value, size_t valuelen)
{
    if (!s)
        return 0; /* a stream we closed: uncounted, as nghttp2 (and so h2load) reports none */
    if (h2b__load_measuring(c->w))
        c->w->stats.bytes_headers_decomp += namelen + valuelen;
    if (!s->req.recorded && !field_ok(s, name, namelen)) {
        finish_request(c, s, OUT_PROTOCOL);
        return 1;
    }
    if (namelen == 7 && name[0] == ':' && memcmp(name, ":status", 7) == 0) {
        if (s->req.recorded)
            return 0;
        unsigned v = 0;
        bool valid = valuelen == 3;
        for (size_t i = 0; valid && i < 3; i++) {
            valid = value[i] >= '0' && value[i] <= '9';
            v = v * 10 + (unsigned)(value[i] - '0');
        }
        if (!valid || v < 100 || v == 101) {
            /* what nghttp2's HTTP checks (off here, see load.c) reset the stream for, and what
             * h2load therefore counts as failed and errored */
            finish_request(c, s, OUT_PROTOCOL);
            return 1;
        }
        /* 1xx are interim responses; the final status replaces them */
        if (v >= 200 && s->req.status == 0)
            s->req.status = (uint16_t)v;
    } else if (namelen == 11 && c->w->sh->grpc && memcmp(name, "grpc-status", 11) == 0) {
        if (!s || s->req.recorded)
            return 0;
        /* the trailers' status is the call's; the header block's counts only when nothing
         * follows it (a trailers-only response: grpc_end) */
        uint8_t code = h2b_load_grpc_status_index(value, valuelen);
        if (s->block & BLOCK_TRAILERS)
            s->req.grpc = code;
        else
            s->grpc_hdr = code;
    } else if (namelen == 14 && memcmp(name, "content-length", 14) == 0) {
        if (s->req.recorded)
            return 0;
        int64_t n = 0;
        bool valid = valuelen > 0 && valuelen <= 18;
        for (size_t i = 0; valid && i < valuelen; i++) {
            valid = value[i] >= '0' && value[i] <= '9';
            n = n * 10 + (value[i] - '0');
        }
        if (!valid || (s->content_length >= 0 && s->content_length != n)) {
            finish_request(c, s, OUT_PROTOCOL);
            return 1;
        }
        s->content_length = n;
    }
    return 0;
}

/* DATA payload bytes p[0..len) of s (NULL: a stream we closed, uncounted as in hook_header).
 * --grpc with a known reply: bytes other than the echo's mark the call (grpc_end counts it).
 * Returns 1 when the body overran its content-length (counted as a protocol error; the engine
 * resets the stream). */
static inline int hook_data(struct h2b__load_conn *c, struct slot *s, const uint8_t *p, size_t len)
{
    if (!s)
        return 0;
    if (h2b__load_measuring(c->w))
        c->w->stats.bytes_data += len;
    if (s->req.recorded)
        return 0;
    const struct h2b_load_config *cfg = c->w->sh->cfg;
    if (cfg->grpc_reply.unit && !s->req.grpc_wrong &&
        s->body_recv + len <= (uint64_t)cfg->grpc_expect) /* past it: a length mismatch */
        s->req.grpc_wrong = !h2b_load_grpc_reply_match(&cfg->grpc_reply, s->body_recv, p, len);
    s->body_recv += len;
    if (s->content_length >= 0 && s->body_recv > (uint64_t)s->content_length &&
        !body_complete(c, s) && s->req.status != 0) {
        /* more than content-length: the response is broken, stop receiving it */
        finish_request(c, s, OUT_PROTOCOL);
        return 1;
    }
    return 0;
}

/* --grpc: s's response ended whole. Its status is the one its trailers carried; without a
 * trailers block, the header block's when no DATA came (a trailers-only response), else none
 * (counted as missing). A status 0 whose response is not the length the echo service answers
 * with (cfg->grpc_expect) is a length mismatch; of that length but other bytes (hook_data), a
 * content mismatch. */
static inline void grpc_end(const struct h2b__load_conn *c, struct slot *s)
{
    if (!(s->block & BLOCK_TRAILERS))
        s->req.grpc = s->body_recv == 0 ? s->grpc_hdr : H2B_LOAD_GRPC_NONE;
    int64_t want = c->w->sh->cfg->grpc_expect;
    bool checked = s->req.grpc == 0 && want >= 0;
    s->req.grpc_mismatch = checked && s->body_recv != (uint64_t)want;
    s->req.grpc_wrong = checked && !s->req.grpc_mismatch && s->req.grpc_wrong;
}

/* s's stream ended (error_code 0: normally). Frees the slot and tops the connection up. */
void h2b__h2_stream_close(struct h2b__load_conn *c, struct slot *s, uint32_t error_code);

/* The server's SETTINGS arrived (server_max: its MAX_CONCURRENT_STREAMS, UINT32_MAX if none). */
void h2b__h2_settings(struct h2b__load_conn *c, uint32_t server_max);

/* -v: one line per frame, nghttp's shape. */
void h2b__h2_verbose_frame(const struct h2b__load_conn *c, const char *dir,
                           const nghttp2_frame_hd *hd);

/* Sets up w's HTTP/2 state (w->es) for its connections, framed by ng (NULL: h2fast.c). */
int h2b__h2_init(struct h2b__load_worker *w, uint32_t first_conn, uint64_t requests,
                 const struct h2b__h2_session *ng);

/* The engine-interface hooks both HTTP/2 engine tables share (h2load.c). */
void h2b__h2_free(struct h2b__load_worker *w);
void h2b__h2_start(struct h2b__load_worker *w, uint32_t i);
void h2b__h2_on_event(void *c, uint32_t events);
void h2b__h2_on_input(void *c, const uint8_t *p, ssize_t n);
bool h2b__h2_flush(struct h2b__load_worker *w);
enum h2b__load_phase h2b__h2_phase(const struct h2b__load_worker *w, uint32_t i);
bool h2b__h2_can_take(const struct h2b__load_worker *w, uint32_t i);
bool h2b__h2_submit(struct h2b__load_worker *w, uint32_t i, uint64_t t);
void h2b__h2_pace(struct h2b__load_worker *w);
void h2b__h2_timeouts(struct h2b__load_worker *w);
uint64_t h2b__h2_deadline(const struct h2b__load_worker *w);
const struct h2b__load_life *h2b__h2_stop(struct h2b__load_worker *w, uint32_t i);
struct h2b__load_life *h2b__h2_life(const struct h2b__load_worker *w, uint32_t i);

#define H2B__H2_HOOKS                                                                              \
    .tag = "load", .ramp = true, .naps = true, .start = h2b__h2_start,                             \
    .on_event = h2b__h2_on_event, .on_input = h2b__h2_on_input, .flush = h2b__h2_flush,            \
    .rate = {h2b__h2_phase, h2b__h2_can_take, h2b__h2_submit}, .after_release = h2b__h2_pace,      \
    .timeouts = h2b__h2_timeouts, .deadline = h2b__h2_deadline, .stop = h2b__h2_stop,              \
    .life = h2b__h2_life

#endif
