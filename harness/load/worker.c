/*
 * worker.c - one load worker: an epoll loop driving its share of HTTP/2 client connections.
 *
 * Each loop turn: wait (epoll_pwait2, ns timeout), read every ready connection into one shared
 * buffer and feed it to nghttp2 (stream closes submit the next request in closed-loop mode),
 * release due arrivals in --rate mode, check timers at a coarse tick, then flush every connection
 * that has output with one write each. Batching writes per turn is most of what makes this
 * cheaper than h2load, which writes from inside its callbacks; reads are level-triggered and stop
 * at a short read, so there is no read() that only returns EAGAIN.
 *
 * Time: one clock read after epoll returns and one after each read(); every callback of that
 * batch shares it. Per request state lives in a fixed slot array per connection (sized to the
 * effective stream count once the server's SETTINGS arrive), so the request count never grows
 * memory. Slots are stream user data; a free list links the idle ones.
 *
 * Failure policy: a connection that dies records its in-flight requests as errored (their
 * latency up to now is kept). It reconnects if it had received responses since its last connect;
 * otherwise it is dead and, in -n mode, the requests it still owed count as errored (not sent).
 * A run against a dead or silent server therefore ends within --timeout/-N/-T, never hangs; so
 * does one against a server that allows 0 streams (given up after one --timeout) or whose
 * session nghttp2 ends by itself (closed at once: see session_over).
 *
 * HTTP checks: nghttp2's are off (load.c), so those that decide h2load's counts are made here,
 * once for both HTTP/2 engines: a :status that is not three digits, a body that does not match
 * its content-length, and the field rules of nghttp2's HTTP messaging (field_ok: pseudo-headers
 * in trailers or after regular fields, unknown or repeated pseudo-headers, uppercase names,
 * connection-specific fields) make the request a protocol error (failed and errored, as h2load
 * counts them).
 */
#include "core/clock.h"
#include "core/cpu.h"
#include "core/token.h"
#include "load/engine.h"
#include "core/error.h"

#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/objects.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#define RBUF_SIZE (64 * 1024)
#define WBUF_FILL (32 * 1024)             /* stop pulling frames from nghttp2 beyond this */
#define MAX_WAIT_NS (100 * H2B_NS_PER_MS) /* stop flag and progress are noticed this fast */
#define NO_SLOT UINT32_MAX
#define LOGBUF_SIZE (64 * 1024)  /* --log-file rows per write(2) */
#define NAP_BACKOFF_MAX 1024     /* turns without a nap after naps that found nothing */
#define NAP_START_NS (20 * 1000) /* --coalesce: the first nap */
#define NAP_MIN_NS (5 * 1000)    /* --coalesce: the shortest nap */

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
    uint8_t block; /* the header block being read: BLOCK_* (hook_begin_headers, hook_header) */
};

enum {
    BLOCK_TRAILERS = 1, /* after the final :status: no pseudo-header allowed */
    BLOCK_STATUS = 2,   /* this block carried :status */
    BLOCK_REGULAR = 4,  /* this block carried a regular field: no pseudo-header may follow */
};

struct h2b__load_conn {
    struct h2b__load_worker *w;
    enum conn_state state;
    int fd;
    SSL *ssl;
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

/* ---- small helpers ---------------------------------------------------------------------- */

static void record_latency(struct h2b__load_worker *w, uint64_t ns)
{
    h2b_hist_record(w->stats.latency, ns);
    if (w->sh->progress)
        h2b_hist_record(w->ival[w->ival_active], ns);
}

static void log_flush(struct h2b__load_worker *w)
{
    size_t off = 0;
    while (off < w->loglen) {
        ssize_t n = write(w->sh->cfg->log_fd, w->logbuf + off, w->loglen - off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break; /* a full disk loses rows, never the run */
        off += (size_t)n;
    }
    w->loglen = 0;
}

/* One --log-file row, h2load's: start of the request (HEADERS sent) in us since the epoch,
 * status (-1 if the request failed without a response), duration in us (sent -> closed). */
static void log_row(struct h2b__load_worker *w, uint64_t t_sent, int status)
{
    if (w->loglen + 64 > LOGBUF_SIZE)
        log_flush(w);
    uint64_t start = w->sh->wall0_us + (t_sent - w->sh->t0) / 1000;
    uint64_t dur = w->now > t_sent ? (w->now - t_sent) / 1000 : 0;
    int n = snprintf(w->logbuf + w->loglen, LOGBUF_SIZE - w->loglen, "%llu\t%d\t%llu\n",
                     (unsigned long long)start, status, (unsigned long long)dur);
    if (n > 0)
        w->loglen += (size_t)n;
}

/* ---- h2load's live lines (worker 0 only, as in h2load; the -D phase lines per worker) ---- */

static void info_line(const struct h2b__load_worker *w, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void info_line(const struct h2b__load_worker *w, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfprintf(w->sh->info, fmt, ap);
    va_end(ap);
    fflush(w->sh->info);
}

/* "TLS Protocol:", "Cipher:", "Server Temp Key:" after the first handshake */
static void report_tls(struct h2b__load_worker *w, SSL *ssl)
{
    if (w->id != 0 || w->tls_reported || !w->sh->info)
        return;
    w->tls_reported = true;
    info_line(w, "TLS Protocol: %s\nCipher: %s\n", h2b__load_tls_name(SSL_version(ssl)),
              SSL_CIPHER_get_name(SSL_get_current_cipher(ssl)));
    EVP_PKEY *key = NULL;
    if (!SSL_get_peer_tmp_key(ssl, &key))
        return;
    int id = EVP_PKEY_id(key);
    if (id == EVP_PKEY_RSA) {
        info_line(w, "Server Temp Key: RSA %d bits\n", EVP_PKEY_bits(key));
    } else if (id == EVP_PKEY_DH) {
        info_line(w, "Server Temp Key: DH %d bits\n", EVP_PKEY_bits(key));
    } else if (id == EVP_PKEY_EC) {
        char curve[64];
        if (!EVP_PKEY_get_utf8_string_param(key, "group", curve, sizeof(curve), NULL))
            snprintf(curve, sizeof(curve), "<unknown>");
        info_line(w, "Server Temp Key: ECDH %s %d bits\n", curve, EVP_PKEY_bits(key));
    } else {
        info_line(w, "Server Temp Key: %s %d bits\n", OBJ_nid2sn(id), EVP_PKEY_bits(key));
    }
    EVP_PKEY_free(key);
}

void h2b__load_report_app(struct h2b__load_worker *w, const char *proto)
{
    if (!w->sh->info || w->id != 0 || w->app_reported)
        return;
    w->app_reported = true;
    info_line(w, "Application protocol: %s\n", proto);
}

static void report_ready(struct h2b__load_worker *w)
{
    h2b__load_report_app(w, w->sh->ssl_ctx ? "h2" : "h2c");
}

/* -D phase changes, checked once per loop turn */
static void report_phase(struct h2b__load_worker *w)
{
    const struct h2b__load_shared *sh = w->sh;
    if (!sh->info || !sh->cfg->duration_ns)
        return;
    if (w->phase == 1 && w->now >= sh->t_measure) {
        w->phase = 2;
        info_line(w,
                  "Warm-up phase is over for thread #%d.\nMain benchmark duration is started for "
                  "thread #%d.\n",
                  w->id, w->id);
    }
}

/* h2load's "progress: N% done", every tenth of worker 0's requests (count mode only) */
static void report_progress(struct h2b__load_worker *w)
{
    const struct h2b__load_shared *sh = w->sh;
    w->ended++;
    if (w->id != 0 || !sh->info || sh->cfg->duration_ns || w->todo == 0 || sh->cfg->conn_rate)
        return;
    uint64_t every = w->todo / 10 ? w->todo / 10 : 1;
    if (w->ended % every == 0)
        info_line(w, "progress: %" PRIu64 "%% done\n", w->ended * 100 / w->todo);
}

/* Past the warm-up: only then do bytes count (requests carry their own "measured" flag). */
static inline bool measuring(const struct h2b__load_worker *w)
{
    return w->now >= w->sh->t_measure;
}

static void mark_dirty(struct h2b__load_conn *c)
{
    if (!c->dirty) {
        c->dirty = true;
        c->w->dirty[c->w->ndirty++] = c;
    }
}

static int epoll_set(struct h2b__load_conn *c, int op, uint32_t events)
{
    struct epoll_event ev = {.events = events, .data.ptr = c};
    return epoll_ctl(c->w->epfd, op, c->fd, &ev);
}

static void want_out(struct h2b__load_conn *c, bool on)
{
    if (c->want_out != on) {
        c->want_out = on;
        epoll_set(c, EPOLL_CTL_MOD, EPOLLIN | (on ? EPOLLOUT : 0));
    }
}

/* ---- request outcomes ----------------------------------------------------------------- */

#define OUT_RESPONSE H2B__LOAD_RESPONSE
#define OUT_RESET H2B__LOAD_RESET
#define OUT_PROTOCOL H2B__LOAD_PROTOCOL
#define OUT_ERROR H2B__LOAD_ERROR
#define OUT_TIMEOUT H2B__LOAD_TIMEOUT

bool h2b__load_record(struct h2b__load_worker *w, const struct h2b__load_req *r,
                      enum h2b__load_outcome how)
{
    struct h2b_load_stats *st = &w->stats;
    if (how == OUT_RESPONSE && w->sh->ssl_ctx)
        st->tls_responses++; /* the divisor of tls_records, warm-up included like them */
    if (!r->measured)
        return false;
    uint64_t t_intended = r->t_intended, t_sent = r->t_sent;
    uint16_t status = r->status;
    uint64_t now = w->now;
    uint64_t latency = now > t_intended ? now - t_intended : 0;
    record_latency(w, latency);
    if (w->islot)
        h2b__load_ival_note(w, latency, how == OUT_RESPONSE && status >= 200 && status < 400);
    if (t_sent)
        h2b_hist_record(st->service, now > t_sent ? now - t_sent : 0);
    report_progress(w);
    if (w->logbuf) /* h2load's row: from the send (the intended time if never sent) */
        log_row(w, t_sent ? t_sent : (t_intended > w->sh->t0 ? t_intended : w->sh->t0),
                how == OUT_RESPONSE && status != 0 ? (int)status : -1);
    if (status != 0) {
        /* counted whatever happens to the rest of the response, as h2load does */
        if (status < H2B_LOAD_STATUS_MAX)
            st->status[status]++;
        else
            st->status_other++;
    }
    if (how == OUT_RESPONSE && status != 0) {
        st->done++;
        if (status >= 200 && status < 400)
            st->succeeded++;
        else
            st->failed++;
        return true;
    }
    st->errored++;
    st->failed++;
    if (how == OUT_RESET)
        st->resets++;
    else if (how == OUT_PROTOCOL)
        st->protocol_errors++;
    else if (how == OUT_TIMEOUT)
        st->timeouts++;
    return true;
}

/* Out of line on purpose: the hooks that end a request tail-call it rather than keep c live
 * across h2b__load_record (a push, a pop and a reload per request when it was inlined) */
__attribute__((noinline)) static void finish_request(struct h2b__load_conn *c, struct slot *s,
                                                     enum h2b__load_outcome how)
{
    h2b__load_finish(c->w, &c->life, &s->req, how);
}

static void slot_release(struct h2b__load_conn *c, struct slot *s)
{
    h2b__load_req_end(c->w, &s->req); /* first: s is still at hand (one instruction less) */
    s->stream_id = 0;
    s->next_free = c->free_head;
    c->free_head = (uint32_t)(s - c->slots);
    if (--c->inflight == 0)
        c->w->busy_conns--;
}

/* ---- submitting ----------------------------------------------------------------------- */

static ssize_t body_read(nghttp2_session *session, int32_t stream_id, uint8_t *buf, size_t length,
                         uint32_t *data_flags, nghttp2_data_source *source, void *user_data)
{
    (void)session;
    (void)stream_id;
    struct h2b__load_conn *c = user_data;
    struct slot *s = source->ptr;
    const struct h2b_load_config *cfg = c->w->sh->cfg;
    size_t n = cfg->body_len - s->body_off;
    if (n > length)
        n = length;
    memcpy(buf, cfg->body + s->body_off, n);
    s->body_off += n;
    if (s->body_off == cfg->body_len)
        *data_flags |= NGHTTP2_DATA_FLAG_EOF;
    return (ssize_t)n;
}

/* Submits one request on c (which has a free slot). Returns false if the session refused. */
static bool submit(struct h2b__load_conn *c, uint64_t t_intended)
{
    struct h2b__load_worker *w = c->w;
    const struct h2b__load_shared *sh = w->sh;
    uint32_t i = c->free_head;
    struct slot *s = &c->slots[i];
    uint32_t u = h2b__load_next_uri(&c->life, sh->cfg);
    int32_t id;
    if (c->fast) {
        id = h2b_h2f_submit(c->fast, i, u);
    } else {
        nghttp2_data_provider prd = {.source.ptr = s, .read_callback = body_read};
        id = nghttp2_submit_request(c->session, NULL, sh->nva[u], sh->nvlen[u],
                                    sh->cfg->body ? &prd : NULL, s);
    }
    if (id < 0) {
        c->draining = true; /* stream ids exhausted or session closing: reconnect */
        return false;
    }
    c->free_head = s->next_free;
    c->by_id[((uint32_t)id >> 1) & c->id_mask] = s;
    /* fast: the HEADERS frame is in the output buffer, written before this loop turn ends */
    h2b__load_req_begin(w, &s->req, t_intended, c->fast ? w->now : 0);
    s->t_first = 0;
    s->body_off = 0;
    s->content_length = -1;
    s->body_recv = 0;
    s->block = 0;
    s->stream_id = id;
    if (c->inflight++ == 0)
        w->busy_conns++;
    mark_dirty(c);
    return true;
}

/* Closed loop: keep m_eff requests in flight while the budget lasts. */
static uint64_t due_time(const struct h2b__load_conn *c)
{
    const struct h2b__load_shared *sh = c->w->sh;
    const struct h2b_load_config *cfg = sh->cfg;
    if (cfg->nscript) {
        /* the script in order; under -D it starts over, each round at the last line's offset */
        uint64_t round = c->paced_n / cfg->nscript;
        return c->t_pace0 + round * cfg->script_ns[cfg->nscript - 1] +
               cfg->script_ns[c->paced_n % cfg->nscript];
    }
    return c->t_pace0 + (uint64_t)((double)c->paced_n * 1e9 / cfg->rps);
}

/* --rps / --timing-script-file: release what is due on c, each with its intended time as the
 * latency origin (a request that waits for a free stream keeps it: no coordinated omission). */
static void pace(struct h2b__load_conn *c)
{
    struct h2b__load_worker *w = c->w;
    const struct h2b__load_shared *sh = w->sh;
    while (c->state == CONN_READY && !c->draining && c->inflight < c->m_eff && c->life.budget > 0 &&
           h2b__load_running(w)) {
        uint64_t t = due_time(c);
        if (t > w->now || (sh->t_end && t >= sh->t_end))
            break;
        if (sh->cfg->nscript)
            c->life.uri_next = (uint32_t)(c->paced_n % sh->cfg->nscript);
        if (!submit(c, t))
            break;
        c->paced_n++;
        h2b__load_spend(&c->life);
    }
    if (c->state == CONN_READY && c->life.budget > 0 && c->inflight < c->m_eff) {
        uint64_t t = due_time(c);
        if (t < w->next_pace)
            w->next_pace = t;
    }
}

static void fill(struct h2b__load_conn *c)
{
    if (c->w->sh->paced) {
        pace(c);
        return;
    }
    if (c->w->sh->rate_mode)
        return; /* --total-rps: release() decides when requests go out */
    while (c->state == CONN_READY && !c->draining && c->inflight < c->m_eff && c->life.budget > 0 &&
           h2b__load_running(c->w)) {
        if (!submit(c, c->w->now))
            break;
        h2b__load_spend(&c->life);
    }
}

/* ---- nghttp2 callbacks ---------------------------------------------------------------- */

/* The slot of a stream: our direct map first (stream ids of one connection are 1, 3, 5, ...,
 * so in-flight ids rarely collide), nghttp2's stream map (a hash lookup that misses the cache
 * at many connections) only on a miss. */
static struct slot *slot_of(struct h2b__load_conn *c, nghttp2_session *session, int32_t id)
{
    struct slot *s = c->by_id ? c->by_id[((uint32_t)id >> 1) & c->id_mask] : NULL;
    if (s && s->stream_id == id)
        return s;
    return nghttp2_session_get_stream_user_data(session, id);
}

/* ---- what the server sent, whichever engine read it (nghttp2's callbacks below, h2fast.c's
 * further down): the request's counts, status, body length checks ---- */

/* A HEADERS block of s's stream starts (every one: interim, final, trailers). The first is
 * the TTFB. */
static void hook_begin_headers(struct h2b__load_conn *c, struct slot *s)
{
    if (s)
        s->block = s->req.status != 0 ? BLOCK_TRAILERS : 0;
    if (s && s->t_first == 0) {
        s->t_first = c->w->now;
        if (s->req.measured && s->req.t_sent)
            h2b_hist_record(c->w->stats.ttfb, c->w->now - s->req.t_sent);
    }
}

/* One response header field of s (NULL: a stream no longer ours). Returns 1 when the response
 * is broken (the request is counted as a protocol error; the engine resets the stream). */
/* The field rules of nghttp2's HTTP messaging for a response (off in the nghttp2 engine, see
 * load.c, so both engines apply them here, and h2load resets the stream for each): a name is
 * lowercase token characters (':' first only for pseudo-headers); the only pseudo-header is
 * :status, once per block and before every regular field, and none in trailers;
 * connection-specific fields are not HTTP/2's. False: the response is malformed. */
static bool field_ok(struct slot *s, const uint8_t *name, size_t namelen)
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

static int hook_header(struct h2b__load_conn *c, struct slot *s, const uint8_t *name,
                       size_t namelen, const uint8_t *value, size_t valuelen)
{
    if (measuring(c->w))
        c->w->stats.bytes_headers_decomp += namelen + valuelen;
    if (s && !s->req.recorded && !field_ok(s, name, namelen)) {
        finish_request(c, s, OUT_PROTOCOL);
        return 1;
    }
    if (namelen == 7 && name[0] == ':' && memcmp(name, ":status", 7) == 0) {
        if (!s || s->req.recorded)
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
    } else if (namelen == 14 && memcmp(name, "content-length", 14) == 0) {
        if (!s || s->req.recorded)
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

static bool body_complete(const struct h2b__load_conn *c, const struct slot *s);

/* len DATA payload bytes of s (NULL: not ours). Returns 1 when the body overran its
 * content-length (counted as a protocol error; the engine resets the stream). */
static int hook_data(struct h2b__load_conn *c, struct slot *s, size_t len)
{
    if (measuring(c->w))
        c->w->stats.bytes_data += len;
    if (!s || s->req.recorded)
        return 0;
    s->body_recv += len;
    if (s->content_length >= 0 && s->body_recv > (uint64_t)s->content_length &&
        !body_complete(c, s) && s->req.status != 0) {
        /* more than content-length: the response is broken, stop receiving it */
        finish_request(c, s, OUT_PROTOCOL);
        return 1;
    }
    return 0;
}

/* s's stream ended (error_code 0: normally). Frees the slot and tops the connection up. */
static void hook_stream_close(struct h2b__load_conn *c, struct slot *s, uint32_t error_code)
{
    if (!s->req.recorded) {
        enum h2b__load_outcome how = OUT_RESPONSE;
        if (error_code != NGHTTP2_NO_ERROR)
            how = OUT_RESET; /* RST_STREAM, REFUSED_STREAM after GOAWAY, or a stream error */
        else if (s->req.status == 0 || !body_complete(c, s))
            how = OUT_PROTOCOL; /* no final :status, or a body shorter than content-length */
        finish_request(c, s, how);
        if (s->req.status)
            c->life.responses++;
    }
    slot_release(c, s);
    fill(c);
}

static int on_begin_headers(nghttp2_session *session, const nghttp2_frame *frame, void *user_data)
{
    struct h2b__load_conn *c = user_data;
    if (frame->hd.type != NGHTTP2_HEADERS ||
        (frame->headers.cat != NGHTTP2_HCAT_RESPONSE && frame->headers.cat != NGHTTP2_HCAT_HEADERS))
        return 0; /* every block of a response: interim, final and trailers */
    hook_begin_headers(c, slot_of(c, session, frame->hd.stream_id));
    return 0;
}

static int on_header(nghttp2_session *session, const nghttp2_frame *frame, const uint8_t *name,
                     size_t namelen, const uint8_t *value, size_t valuelen, uint8_t flags,
                     void *user_data)
{
    (void)flags;
    struct h2b__load_conn *c = user_data;
    if (frame->hd.type != NGHTTP2_HEADERS) {
        if (measuring(c->w))
            c->w->stats.bytes_headers_decomp += namelen + valuelen;
        return 0;
    }
    struct slot *s = slot_of(c, session, frame->hd.stream_id);
    if (s && s->stream_id != frame->hd.stream_id)
        s = NULL;
    /* broken: RST_STREAM, then stream close */
    return hook_header(c, s, name, namelen, value, valuelen) ? NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE
                                                             : 0;
}

/* Does the body of a response that ended normally match its content-length? (RFC 9110 8.6: not
 * for HEAD, 1xx, 204, 304.) */
static bool body_complete(const struct h2b__load_conn *c, const struct slot *s)
{
    if (s->content_length < 0 || c->w->sh->method_head || s->req.status == 204 ||
        s->req.status == 304)
        return true;
    return s->body_recv == (uint64_t)s->content_length;
}

static void settings_received(struct h2b__load_conn *c, uint32_t server_max)
{
    struct h2b__load_worker *w = c->w;
    uint32_t m = w->sh->cfg->streams;
    if (server_max < m)
        m = server_max;
    if (server_max < w->stats.server_max_streams)
        w->stats.server_max_streams = server_max;
    /* Slots are stream user data, so they can only move while no stream is open: at the first
     * SETTINGS, or when a later one raises the limit of an idle connection (a server that
     * started at 0 streams). */
    bool regrow = c->state == CONN_READY && c->inflight == 0 && c->nslots < m;
    if (c->state == CONN_SETTINGS || regrow) {
        if (c->nslots < m || !c->by_id) {
            uint32_t n = 4;
            while (n < 4 * (uint64_t)m && n < (1U << 20))
                n *= 2;
            struct slot *ns = realloc(c->slots, (size_t)(m ? m : 1) * sizeof(*ns));
            struct slot **nb = ns ? calloc(n, sizeof(*nb)) : NULL;
            if (!nb) {
                if (ns)
                    c->slots = ns;
                c->broken = true;
                return;
            }
            c->slots = ns;
            if (c->fast && h2b_h2f_slots(c->fast, m) != H2B_OK) {
                free(nb);
                c->broken = true;
                return;
            }
            c->nslots = m;
            free(c->by_id);
            c->by_id = nb;
            c->id_mask = n - 1;
        }
        memset(c->slots, 0, (size_t)c->nslots * sizeof(*c->slots));
        c->free_head = c->nslots ? 0 : NO_SLOT;
        for (uint32_t i = 0; i < c->nslots; i++)
            c->slots[i].next_free = i + 1 < c->nslots ? i + 1 : NO_SLOT;
        if (c->state == CONN_SETTINGS) {
            w->stats.conns_ok++;
            report_ready(w);
            if (c->t_pace0 == 0) {
                c->t_pace0 = w->now;
                w->next_pace = w->now;
            }
        }
        c->state = CONN_READY;
        c->m_eff = m;
        w->all_busy = false;
    } else {
        /* a later SETTINGS may lower (or raise, up to the slots we have) the limit */
        c->m_eff = m < c->nslots ? m : c->nslots;
    }
    if (c->m_eff == 0)
        c->t_blocked = w->now; /* check_timeouts gives up on it after the request timeout */
    if (c->m_eff < w->stats.streams_effective)
        w->stats.streams_effective = c->m_eff;
}

static const char *const frame_names[] = {"DATA",          "HEADERS",      "PRIORITY", "RST_STREAM",
                                          "SETTINGS",      "PUSH_PROMISE", "PING",     "GOAWAY",
                                          "WINDOW_UPDATE", "CONTINUATION"};

/* -v: one line per frame, nghttp's shape ("[  0.012] recv SETTINGS frame <length=6, ...>") */
static void verbose_frame(const struct h2b__load_conn *c, const char *dir,
                          const nghttp2_frame_hd *hd)
{
    const struct h2b__load_worker *w = c->w;
    FILE *f = w->sh->cfg->trace;
    if (!f)
        return;
    double t = (double)(h2b_clock_now_ns() - w->sh->t0) / 1e9;
    if (hd->type < sizeof(frame_names) / sizeof(frame_names[0]))
        fprintf(f, "[%3d.%03d] [conn %u] %s %s frame <length=%zu, flags=0x%02x, stream_id=%d>\n",
                (int)t, (int)((t - (int)t) * 1000), c->life.index, dir, frame_names[hd->type],
                hd->length, hd->flags, hd->stream_id);
    else
        fprintf(f,
                "[%3d.%03d] [conn %u] %s frame of type %u <length=%zu, flags=0x%02x, "
                "stream_id=%d>\n",
                (int)t, (int)((t - (int)t) * 1000), c->life.index, dir, hd->type, hd->length,
                hd->flags, hd->stream_id);
}

static int on_frame_recv(nghttp2_session *session, const nghttp2_frame *frame, void *user_data)
{
    (void)session;
    struct h2b__load_conn *c = user_data;
    if (c->w->sh->cfg->verbose)
        verbose_frame(c, "recv", &frame->hd);
    switch (frame->hd.type) {
    case NGHTTP2_HEADERS: {
        size_t len = frame->hd.length - frame->headers.padlen;
        if (frame->hd.flags & NGHTTP2_FLAG_PRIORITY)
            len -= 5;
        if (measuring(c->w))
            c->w->stats.bytes_headers += len;
        break;
    }
    case NGHTTP2_SETTINGS:
        if (!(frame->hd.flags & NGHTTP2_FLAG_ACK))
            settings_received(c, nghttp2_session_get_remote_settings(
                                     c->session, NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS));
        break;
    case NGHTTP2_GOAWAY:
        c->draining = true;
        break;
    default:
        break;
    }
    return 0;
}

static int on_data_chunk(nghttp2_session *session, uint8_t flags, int32_t stream_id,
                         const uint8_t *data, size_t len, void *user_data)
{
    (void)flags;
    (void)data;
    struct h2b__load_conn *c = user_data;
    struct slot *s = slot_of(c, session, stream_id);
    if (s && s->stream_id != stream_id)
        s = NULL;
    if (hook_data(c, s, len)) {
        nghttp2_submit_rst_stream(session, NGHTTP2_FLAG_NONE, stream_id, NGHTTP2_PROTOCOL_ERROR);
        mark_dirty(c);
    }
    return 0;
}

static int on_frame_send(nghttp2_session *session, const nghttp2_frame *frame, void *user_data)
{
    struct h2b__load_conn *c = user_data;
    if (c->w->sh->cfg->verbose)
        verbose_frame(c, "send", &frame->hd);
    if (frame->hd.type == NGHTTP2_HEADERS && frame->headers.cat == NGHTTP2_HCAT_REQUEST) {
        struct slot *s = slot_of(c, session, frame->hd.stream_id);
        if (s)
            s->req.t_sent = c->w->now;
    } else if (frame->hd.type == NGHTTP2_GOAWAY && frame->goaway.error_code != NGHTTP2_NO_ERROR) {
        c->w->stats.conn_errors++; /* nghttp2 ended the connection: the server broke HTTP/2 */
    }
    return 0;
}

static int on_stream_close(nghttp2_session *session, int32_t stream_id, uint32_t error_code,
                           void *user_data)
{
    struct h2b__load_conn *c = user_data;
    struct slot *s = slot_of(c, session, stream_id);
    if (!s || s->stream_id != stream_id)
        return 0;
    hook_stream_close(c, s, error_code);
    return 0;
}

int h2b__load_callbacks_new(nghttp2_session_callbacks **out)
{
    nghttp2_session_callbacks *cb;
    if (nghttp2_session_callbacks_new(&cb) != 0)
        return H2B_ERR_NOMEM;
    nghttp2_session_callbacks_set_on_begin_headers_callback(cb, on_begin_headers);
    nghttp2_session_callbacks_set_on_header_callback(cb, on_header);
    nghttp2_session_callbacks_set_on_frame_recv_callback(cb, on_frame_recv);
    nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, on_data_chunk);
    nghttp2_session_callbacks_set_on_frame_send_callback(cb, on_frame_send);
    nghttp2_session_callbacks_set_on_stream_close_callback(cb, on_stream_close);
    *out = cb;
    return H2B_OK;
}

/* ---- h2fast.c's callbacks (--engine fast): the same hooks, the slot given by index ------ */

static struct slot *fast_slot(struct h2b__load_conn *c, uint32_t slot)
{
    return slot == H2B_H2F_NO_SLOT || slot >= c->nslots ? NULL : &c->slots[slot];
}

static void fast_begin_headers(void *u, uint32_t slot)
{
    struct h2b__load_conn *c = u;
    hook_begin_headers(c, fast_slot(c, slot));
}

static int fast_header(void *u, uint32_t slot, const uint8_t *name, size_t namelen,
                       const uint8_t *value, size_t valuelen)
{
    struct h2b__load_conn *c = u;
    return hook_header(c, fast_slot(c, slot), name, namelen, value, valuelen);
}

static void fast_header_bytes(void *u, size_t n)
{
    struct h2b__load_conn *c = u;
    if (measuring(c->w))
        c->w->stats.bytes_headers += n;
}

static int fast_data(void *u, uint32_t slot, size_t n)
{
    struct h2b__load_conn *c = u;
    return hook_data(c, fast_slot(c, slot), n);
}

static void fast_settings(void *u)
{
    struct h2b__load_conn *c = u;
    settings_received(c, c->fast->peer_max_streams);
}

static void fast_goaway(void *u)
{
    struct h2b__load_conn *c = u;
    c->draining = true;
}

static void fast_stream_close(void *u, uint32_t slot, uint32_t code)
{
    struct h2b__load_conn *c = u;
    struct slot *s = fast_slot(c, slot);
    if (s && s->stream_id != 0) {
        mark_dirty(c); /* RST_STREAM, WINDOW_UPDATE or the next request may be queued */
        hook_stream_close(c, s, code);
    }
}

static void fast_frame(void *u, bool sent, uint8_t type, uint8_t flags, uint32_t length,
                       int32_t sid)
{
    struct h2b__load_conn *c = u;
    nghttp2_frame_hd hd = {.length = length, .stream_id = sid, .type = type, .flags = flags};
    verbose_frame(c, sent ? "send" : "recv", &hd);
}

/* -v adds the frame hook; without it h2fast.c skips the call (one list for both) */
#define FAST_CB                                                                                    \
    .begin_headers = fast_begin_headers, .header = fast_header, .header_bytes = fast_header_bytes, \
    .data = fast_data, .settings = fast_settings, .goaway = fast_goaway,                           \
    .stream_close = fast_stream_close
static const struct h2b_h2f_cb fast_cb = {FAST_CB};
static const struct h2b_h2f_cb fast_cb_verbose = {FAST_CB, .frame = fast_frame};
#undef FAST_CB

/* ---- connection life ------------------------------------------------------------------ */

static void conn_start(struct h2b__load_conn *c);

/* The session, TLS and socket of c go (the slots and buffers stay for a reconnect). */
static void conn_teardown(struct h2b__load_conn *c)
{
    if (c->session) {
        nghttp2_session_del(c->session);
        c->session = NULL;
    }
    h2b__load_tcp_close(&c->fd, &c->ssl);
    c->woff = c->wlen = 0;
}

static void slot_release_at(void *c, uint32_t k)
{
    struct h2b__load_conn *h = c;
    slot_release(h, &h->slots[k]);
}

/* Tears c down. Unrecorded in-flight requests are errored (timeouts if timed_out). Then the
 * connection reconnects, finishes or dies (see the file comment). */
static void conn_close(struct h2b__load_conn *c, bool timed_out)
{
    struct h2b__load_worker *w = c->w;
    bool was_open = c->state >= CONN_CONNECTING && c->state <= CONN_READY;
    if (!was_open)
        return;
    bool reached_h2 = c->state == CONN_READY;
    struct h2b__load_slots slots = {c->slots, sizeof *c->slots, c->nslots, c};
    h2b__load_abandon(w, &c->life, &slots, timed_out, slot_release_at);
    conn_teardown(c);
    c->want_out = false;
    c->broken = false;
    c->timed_out = false;
    c->draining = false;
    enum h2b__load_next next = h2b__load_closed(w, &c->life, reached_h2);
    c->state = next == H2B__LOAD_RECONNECT  ? CONN_IDLE
               : next == H2B__LOAD_FINISHED ? CONN_DONE
                                            : CONN_DEAD;
    if (next == H2B__LOAD_RECONNECT)
        conn_start(c);
}

static void conn_fail(struct h2b__load_conn *c)
{
    conn_close(c, false);
}

/* nghttp2 has ended the session by itself (it sent GOAWAY for a protocol error, e.g. a
 * PUSH_PROMISE we disabled, or the server's GOAWAY left no stream): nothing more can be read
 * or sent, so the connection must go, with whatever it still had in flight. */
static bool session_over(const struct h2b__load_conn *c)
{
    if (c->fast)
        return c->fast->dead;
    return c->session && !nghttp2_session_want_read(c->session) &&
           !nghttp2_session_want_write(c->session);
}

static void session_start(struct h2b__load_conn *c)
{
    struct h2b__load_worker *w = c->w;
    const struct h2b_load_config *cfg = w->sh->cfg;
    if (c->fast) {
        struct h2b_h2f_settings st = {
            .initial_window = (1U << cfg->window_bits) - 1,
            .conn_window = (1U << cfg->conn_window_bits) - 1,
            .header_table = cfg->header_table_size,
            .encoder_table = cfg->encoder_table_size,
            .max_frame = cfg->max_frame_size,
        };
        if (h2b_h2f_start(c->fast, &st) != H2B_OK) {
            conn_fail(c);
            return;
        }
    } else if (nghttp2_session_client_new3(&c->session, w->sh->callbacks, c, w->sh->option,
                                           &w->mem) != 0) {
        conn_fail(c);
        return;
    }
    nghttp2_settings_entry iv[4] = {
        {NGHTTP2_SETTINGS_ENABLE_PUSH, 0},
        {NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, (1U << cfg->window_bits) - 1},
        {NGHTTP2_SETTINGS_HEADER_TABLE_SIZE, cfg->header_table_size},
        {NGHTTP2_SETTINGS_MAX_FRAME_SIZE, cfg->max_frame_size},
    };
    int32_t cw = (int32_t)((1U << cfg->conn_window_bits) - 1);
    if (c->session) {
        nghttp2_submit_settings(c->session, NGHTTP2_FLAG_NONE, iv, 4);
        if (cw > NGHTTP2_INITIAL_CONNECTION_WINDOW_SIZE)
            nghttp2_session_set_local_window_size(c->session, NGHTTP2_FLAG_NONE, 0, cw);
    }
    h2b_hist_record(w->stats.connect, w->now - c->life.t_connect);
    if (c->ssl)
        h2b_hist_record(w->stats.tls, w->now - c->t_tcp);
    c->life.responses = 0;
    c->state = CONN_SETTINGS;
    c->life.last_read = w->now;
    epoll_set(c, EPOLL_CTL_MOD, EPOLLIN);
    mark_dirty(c);
}

/* The connect completed or the TLS handshake moved on; over TLS the server must choose h2. */
static void setup(struct h2b__load_conn *c)
{
    uint32_t ev;
    int rv = h2b__load_tcp_setup(c->w, c->fd, &c->ssl, &c->t_tcp, "h2", false, &ev);
    if (rv < 0) {
        conn_fail(c);
    } else if (rv == 0) {
        if (c->ssl)
            report_tls(c->w, c->ssl);
        session_start(c);
    } else {
        c->state = CONN_HANDSHAKE;
        epoll_set(c, EPOLL_CTL_MOD, ev);
    }
}

static void conn_start(struct h2b__load_conn *c)
{
    struct h2b__load_worker *w = c->w;
    h2b__load_life_connect(&c->life, w);
    c->state = CONN_CONNECTING; /* so that conn_close counts a failure */
    int rv = h2b__load_tcp_open(w, c, &c->fd);
    if (rv < 0)
        conn_fail(c);
    else if (rv == 0)
        setup(c);
}

/* ---- I/O ------------------------------------------------------------------------------ */

/* Writes up to len bytes and counts them: the bytes taken (0: the socket is full), or -1 when
 * the connection failed (it is closed). */
static ssize_t conn_write(struct h2b__load_conn *c, const uint8_t *buf, size_t len)
{
    ssize_t n = h2b__load_tcp_send(c->fd, c->ssl, buf, len);
    if (n < 0) {
        conn_fail(c);
        return -1;
    }
    if (measuring(c->w))
        c->w->stats.bytes_sent += (uint64_t)n;
    return n;
}

static void conn_flush(struct h2b__load_conn *c);

static void conn_read(struct h2b__load_conn *c)
{
    struct h2b__load_worker *w = c->w;
    for (int round = 0; round < 8; round++) {
        ssize_t n = h2b__load_tcp_recv(c->fd, c->ssl, w->rbuf, RBUF_SIZE);
        if (n == 0)
            break;
        w->now = h2b_clock_now_ns();
        if (n < 0) {
            conn_fail(c);
            return;
        }
        if (measuring(w))
            w->stats.bytes_total += (uint64_t)n;
        c->life.last_read = w->now;
        if (c->fast) {
            if (h2b_h2f_recv(c->fast, w->rbuf, (size_t)n) < 0) {
                /* a connection error: GOAWAY(code) goes out (best effort), then the end */
                if (c->fast->error != 0 && !c->fast->nomem)
                    w->stats.conn_errors++;
                conn_flush(c);
                if (c->state >= CONN_SETTINGS && c->state <= CONN_READY)
                    conn_fail(c);
                return;
            }
            if (c->broken) {
                conn_close(c, c->timed_out);
                return;
            }
            if (n < RBUF_SIZE && !(c->ssl && SSL_pending(c->ssl) > 0))
                break;
            continue;
        }
        ssize_t rv = nghttp2_session_mem_recv(c->session, w->rbuf, (size_t)n);
        if (rv < 0 || c->broken) {
            conn_close(c, c->timed_out);
            return;
        }
        if (session_over(c)) {
            conn_fail(c);
            return;
        }
        /* TLS may hold decrypted bytes that epoll cannot see; a plain short read is the end */
        if (n < RBUF_SIZE && !(c->ssl && SSL_pending(c->ssl) > 0))
            break;
    }
    if (c->fast ? h2b_h2f_want_write(c->fast) : nghttp2_session_want_write(c->session))
        mark_dirty(c);
}

/* Sends what nghttp2 has queued: pull frames into wbuf up to WBUF_FILL, write once, repeat
 * while the socket takes everything. */
static void conn_flush(struct h2b__load_conn *c)
{
    struct h2b__load_worker *w = c->w;
    if (c->fast) {
        /* everything of this turn is in one buffer: one write */
        struct h2b_h2f *f = c->fast;
        if (f->olen > f->ooff) {
            ssize_t n = conn_write(c, f->out + f->ooff, f->olen - f->ooff);
            if (n < 0)
                return;
            f->ooff += (size_t)n;
        }
        want_out(c, f->olen > f->ooff);
        if (f->dead)
            return; /* conn_read ends it */
        if (c->state == CONN_READY && c->inflight == 0 &&
            (c->life.budget == 0 || c->draining || !h2b__load_running(w)) && f->olen == f->ooff)
            conn_close(c, false);
        return;
    }
    for (;;) {
        if (c->wlen == c->woff) {
            c->woff = c->wlen = 0;
            while (c->wlen < WBUF_FILL) {
                const uint8_t *data;
                ssize_t n = nghttp2_session_mem_send(c->session, &data);
                if (n < 0) {
                    conn_fail(c);
                    return;
                }
                if (n == 0)
                    break;
                if (c->wlen + (size_t)n > c->wcap) {
                    size_t cap = c->wcap * 2;
                    while (cap < c->wlen + (size_t)n)
                        cap *= 2;
                    uint8_t *nb = realloc(c->wbuf, cap);
                    if (!nb) {
                        conn_fail(c);
                        return;
                    }
                    c->wbuf = nb;
                    c->wcap = cap;
                }
                memcpy(c->wbuf + c->wlen, data, (size_t)n);
                c->wlen += (size_t)n;
            }
            if (c->wlen == 0) {
                want_out(c, false);
                break;
            }
        }
        ssize_t n = conn_write(c, c->wbuf + c->woff, c->wlen - c->woff);
        if (n < 0)
            return;
        c->woff += (size_t)n;
        if (c->woff < c->wlen) {
            want_out(c, true);
            break;
        }
    }
    if (session_over(c))
        conn_fail(c);
    else if (c->state == CONN_READY && c->inflight == 0 &&
             (c->life.budget == 0 || c->draining || !h2b__load_running(w)) &&
             !nghttp2_session_want_write(c->session))
        conn_close(c, false);
}

static void conn_event(struct h2b__load_conn *c, uint32_t events)
{
    switch (c->state) {
    case CONN_CONNECTING:
    case CONN_HANDSHAKE:
        c->w->now = h2b_clock_now_ns(); /* connect times are per connection, not per batch */
        setup(c);
        return;
    case CONN_SETTINGS:
    case CONN_READY:
        if (events & (EPOLLIN | EPOLLERR | EPOLLHUP))
            conn_read(c);
        if (c->state < CONN_SETTINGS || c->state > CONN_READY)
            return;
        if (events & EPOLLOUT)
            mark_dirty(c);
        fill(c);
        if (c->inflight == 0)
            mark_dirty(c); /* conn_flush closes a connection that has finished its work */
        /* Send the next requests now rather than after the whole batch: the server gets work
         * while we read the other connections (same number of writes; the end-of-turn pass
         * finds nothing left). */
        if (c->dirty)
            conn_flush(c);
        return;
    default:
        return;
    }
}

/* ---- timers --------------------------------------------------------------------------- */

/* --timeout: the request in slot k is counted; its stream is reset */
static void cancel_slot(void *c, uint32_t k)
{
    struct h2b__load_conn *h = c;
    if (h->fast)
        h2b_h2f_reset(h->fast, k, NGHTTP2_CANCEL); /* closes the stream: slot free */
    else
        nghttp2_submit_rst_stream(h->session, NGHTTP2_FLAG_NONE, h->slots[k].stream_id,
                                  NGHTTP2_CANCEL);
    mark_dirty(h);
}

static void check_timeouts(struct h2b__load_worker *w)
{
    const struct h2b_load_config *cfg = w->sh->cfg;
    uint64_t now = w->now;
    for (uint32_t i = 0; i < w->nconns; i++) {
        struct h2b__load_conn *c = &w->conns[i];
        if (h2b__load_conn_expired(w, &c->life, h2b__load_phase_of(c->state, CONN_READY),
                                   c->inflight > 0)) {
            conn_close(c, true);
            continue;
        }
        if (c->state != CONN_READY)
            continue;
        if (c->m_eff == 0 && c->inflight == 0 && c->life.budget > 0) {
            /* the server allows no stream (SETTINGS_MAX_CONCURRENT_STREAMS 0) and has not
             * raised the limit within a request timeout: what this connection owes cannot be
             * sent */
            uint64_t limit = cfg->timeout_ns ? cfg->timeout_ns : cfg->conn_inactivity_timeout_ns;
            if (limit && now - c->t_blocked >= limit)
                conn_close(c, true);
            continue;
        }
        if (c->inflight == 0)
            continue;
        struct h2b__load_slots slots = {c->slots, sizeof *c->slots, c->nslots, c};
        if (h2b__load_time_out(w, &c->life, &slots, cancel_slot))
            conn_close(c, true);
    }
}

/* ---- open loop ------------------------------------------------------------------------ */

/* ---- what every engine's connections and requests share (engine.h) ------------------- */

/* A connection's share of -n: its slice of requests over nconns (remainders first), -n per
 * client with --timing-script-file (h2load's way), unbounded under --total-rps or -D. */
static uint64_t budget_of(const struct h2b__load_shared *sh, uint64_t requests, uint32_t nconns,
                          uint32_t i)
{
    const struct h2b_load_config *cfg = sh->cfg;
    if (cfg->nscript && !cfg->duration_ns)
        return cfg->requests / cfg->connections; /* -n per client, as in h2load */
    if (sh->rate_mode || cfg->duration_ns)
        return UINT64_MAX;
    return requests / nconns + (i < requests % nconns ? 1 : 0);
}

void h2b__load_life_init(struct h2b__load_life *l, const struct h2b__load_worker *w,
                         uint32_t first_conn, uint32_t i, uint64_t requests)
{
    memset(l, 0, sizeof *l);
    l->index = first_conn + i;
    l->uri_next = (uint32_t)(l->index % w->sh->cfg->nuris);
    l->budget = budget_of(w->sh, requests, w->nconns, i);
}

void h2b__load_life_connect(struct h2b__load_life *l, const struct h2b__load_worker *w)
{
    l->t_connect = w->now;
    if (l->t_first_start == 0)
        l->t_first_start = w->now;
}

void h2b__load_abandon(struct h2b__load_worker *w, struct h2b__load_life *l,
                       const struct h2b__load_slots *s, bool timed_out,
                       void (*release)(void *conn, uint32_t k))
{
    for (uint32_t k = 0; k < s->n; k++) {
        struct h2b__load_req *r = (struct h2b__load_req *)((char *)s->slots + k * s->size);
        if (!r->busy)
            continue;
        if (!r->recorded) {
            if (h2b__load_running(w))
                h2b__load_finish(w, l, r, timed_out ? OUT_TIMEOUT : OUT_ERROR);
            else if (r->measured)
                w->stats.unfinished++;
        }
        release(s->conn, k);
    }
}

bool h2b__load_time_out(struct h2b__load_worker *w, struct h2b__load_life *l,
                        const struct h2b__load_slots *s, void (*cancel)(void *conn, uint32_t k))
{
    uint64_t limit = w->sh->cfg->timeout_ns, now = w->now;
    if (!limit)
        return false;
    for (uint32_t k = 0; k < s->n; k++) {
        struct h2b__load_req *r = (struct h2b__load_req *)((char *)s->slots + k * s->size);
        if (!r->busy || r->recorded || now - r->t_submit < limit)
            continue;
        /* silent for a whole timeout: the server is gone, not slow; give up on the connection
         * instead of timing its requests out one by one */
        if (now - l->last_read >= limit)
            return true;
        h2b__load_finish(w, l, r, OUT_TIMEOUT);
        cancel(s->conn, k);
    }
    return false;
}

bool h2b__load_conn_expired(const struct h2b__load_worker *w, const struct h2b__load_life *l,
                            enum h2b__load_phase phase, bool busy)
{
    const struct h2b_load_config *cfg = w->sh->cfg;
    uint64_t now = w->now;
    bool ready = phase == H2B__LOAD_READY;
    if (!ready && phase != H2B__LOAD_OPENING)
        return false;
    if (cfg->conn_active_timeout_ns && now - l->t_connect >= cfg->conn_active_timeout_ns)
        return true;
    if (!ready) {
        uint64_t limit = cfg->timeout_ns ? cfg->timeout_ns : cfg->conn_inactivity_timeout_ns;
        return limit && now - l->t_connect >= limit;
    }
    return cfg->conn_inactivity_timeout_ns && busy &&
           now - l->last_read >= cfg->conn_inactivity_timeout_ns;
}

double h2b__load_conn_rps(const struct h2b__load_worker *w, const struct h2b__load_life *l)
{
    const struct h2b__load_shared *sh = w->sh;
    /* its active time inside the measurement: the warm-up is not part of it */
    uint64_t end = l->t_last_end ? l->t_last_end : w->now;
    if (sh->t_end && end > sh->t_end)
        end = sh->t_end;
    uint64_t begin = l->t_first_start > sh->t_measure ? l->t_first_start : sh->t_measure;
    double secs = l->t_first_start && end > begin ? (double)(end - begin) / 1e9 : 0;
    return secs > 0 ? (double)l->completed / secs : 0;
}

void h2b__load_drain(struct h2b__load_worker *w)
{
    const struct h2b__load_shared *sh = w->sh;
    if (!sh->rate_mode || !w->sched_started)
        return;
    uint64_t end = sh->t_end && sh->t_end < w->now ? sh->t_end : w->now;
    while (w->sched_left > 0 && h2b_arrival_peek(&w->sched) < end) {
        if (h2b_arrival_peek(&w->sched) >= sh->t_measure)
            w->stats.unsent++;
        h2b_arrival_pop(&w->sched);
        if (w->sched_left != UINT64_MAX)
            w->sched_left--;
    }
}

void h2b__load_thread_start(struct h2b__load_worker *w, const char *tag)
{
    const struct h2b__load_shared *sh = w->sh;
    const struct h2b_load_config *cfg = sh->cfg;
    char name[16];
    snprintf(name, sizeof(name), "h2b-%s-%d", tag, w->id);
    pthread_setname_np(pthread_self(), name);
    if (cfg->pin)
        h2b_cpu_pin_self_to(h2b_cpu_nth(&cfg->cpus, w->id));
    /* ~20 us wake-ups instead of ~75 us; the HTTP/1.1 and HTTP/3 engines do not nap */
    if (sh->rate_mode || (cfg->coalesce_ns && !w->h1 && !w->h3))
        prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
    w->now = h2b_clock_now_ns();
    w->next_tick = w->now + w->tick_ns;
}

void h2b__load_thread_end(struct h2b__load_worker *w)
{
    if (w->logbuf)
        log_flush(w);
    if (w->sh->progress)
        h2b__load_snapshot(w);
    atomic_store_explicit(&w->finished, 1, memory_order_release);
}

static enum h2b__load_phase conn_phase(const struct h2b__load_worker *w, uint32_t i)
{
    return h2b__load_phase_of(w->conns[i].state, CONN_READY);
}

static bool rate_can_take(const struct h2b__load_worker *w, uint32_t i)
{
    const struct h2b__load_conn *c = &w->conns[i];
    return c->state == CONN_READY && !c->draining && c->inflight < c->m_eff;
}

static bool rate_submit(struct h2b__load_worker *w, uint32_t i, uint64_t t)
{
    return submit(&w->conns[i], t);
}

static const struct h2b__load_rate rate_hooks = {conn_phase, rate_can_take, rate_submit};

void h2b__load_release(struct h2b__load_worker *w, const struct h2b__load_rate *r)
{
    const struct h2b__load_shared *sh = w->sh;
    if (!w->sched_started) {
        for (uint32_t i = 0; i < w->nconns; i++)
            if (r->phase(w, i) < H2B__LOAD_READY)
                return;
        const struct h2b_load_config *cfg = sh->cfg;
        uint64_t seed = cfg->seed + (uint64_t)w->id * 0x9e3779b97f4a7c15ULL;
        if (cfg->shape.nseg) {
            /* one stream for the run, from its start: worker i takes arrivals i, i + t, ...
             * (under MPI the job's stream, over every rank's workers) */
            double stride = cfg->job_workers ? cfg->job_workers : cfg->threads;
            h2b_arrival_init_shaped(&w->sched, cfg->arrival, &cfg->shape, stride,
                                    (double)cfg->job_worker_base + w->id, sh->t0, seed);
        } else {
            uint64_t start = w->now + (uint64_t)((double)w->id * 1e9 / cfg->rate);
            h2b_arrival_init(&w->sched, cfg->arrival, cfg->rate / cfg->threads, start, seed);
        }
        w->sched_started = true;
    }
    while (w->sched_left > 0 && !w->all_busy && h2b_arrival_peek(&w->sched) <= w->now) {
        if (sh->t_end && h2b_arrival_peek(&w->sched) >= sh->t_end)
            break;
        uint32_t i = UINT32_MAX;
        for (uint32_t k = 0; k < w->nconns && i == UINT32_MAX; k++) {
            if (r->can_take(w, w->rr))
                i = w->rr;
            w->rr = w->rr + 1 == w->nconns ? 0 : w->rr + 1;
        }
        if (i == UINT32_MAX) {
            w->all_busy = true;
            break;
        }
        uint64_t t = h2b_arrival_peek(&w->sched);
        if (!r->submit(w, i, t))
            continue;
        h2b_arrival_pop(&w->sched);
        if (w->sched_left != UINT64_MAX)
            w->sched_left--;
        if (t >= sh->t_measure && w->now - t > w->stats.sched_lag_max_ns)
            w->stats.sched_lag_max_ns = w->now - t;
    }
}

/* ---- connection ramp (-r) and pacing ------------------------------------------------- */

/* Starts the next -r batch (all connections at once without -r). */
static void ramp(struct h2b__load_worker *w)
{
    const struct h2b__load_shared *sh = w->sh;
    uint32_t n = w->ramp_batch ? w->ramp_batch : w->nconns;
    if (sh->info && sh->cfg->duration_ns && w->phase == 0) {
        w->phase = 1; /* h2load says so when its first client connects */
        info_line(w, "Warm-up started for thread #%d.\n", w->id);
    }
    for (uint32_t k = 0; k < n && w->ramp_started < w->nconns; k++) {
        conn_start(&w->conns[w->ramp_started++]);
        /* h2load's -r and -D progress: every tenth of this worker's clients started */
        uint32_t every = w->nconns / 10 ? w->nconns / 10 : 1;
        if ((w->ramp_batch || sh->cfg->duration_ns) && w->id == 0 && sh->info &&
            w->ramp_started % every == 0)
            info_line(w, "progress: %u%% of clients started\n", w->ramp_started * 100 / w->nconns);
    }
    w->next_ramp = w->now + w->sh->cfg->rate_period_ns;
}

static void pace_all(struct h2b__load_worker *w)
{
    w->next_pace = UINT64_MAX;
    for (uint32_t i = 0; i < w->nconns; i++)
        pace(&w->conns[i]);
}

/* ---- the loop ------------------------------------------------------------------------- */

void h2b__load_snapshot(struct h2b__load_worker *w)
{
    unsigned req = atomic_load_explicit(&w->snap_req, memory_order_acquire);
    if (req == w->snap_seen)
        return;
    w->snap_seen = req;
    w->ival_retired = w->ival_active;
    w->ival_active ^= 1;
    w->snap.ended = w->stats.done + w->stats.errored - w->stats.not_sent;
    w->snap.errors = w->stats.failed;
    w->snap.inflight = w->inflight;
    atomic_store_explicit(&w->snap_ack, req, memory_order_release);
}

/* Sleeps in epoll for at most ns: epoll_pwait2 (ns timeout), or epoll_wait rounded up to a
 * millisecond where the kernel or valgrind lacks it (ENOSYS, remembered per worker). */
static int sleep_wait(struct h2b__load_worker *w, struct epoll_event *events, int max, uint64_t ns)
{
    int n = -1;
    if (!w->no_pwait2) {
        struct timespec ts = {.tv_sec = (time_t)(ns / H2B_NS_PER_SEC),
                              .tv_nsec = (long)(ns % H2B_NS_PER_SEC)};
        n = epoll_pwait2(w->epfd, events, max, &ts, NULL);
        if (n < 0 && errno == ENOSYS)
            w->no_pwait2 = true; /* valgrind 3.19, kernels before 5.11 */
    }
    if (w->no_pwait2) {
        uint64_t ms = (ns + H2B_NS_PER_MS - 1) / H2B_NS_PER_MS;
        n = epoll_wait(w->epfd, events, max, ms > 1000 ? 1000 : (int)ms);
    }
    return n;
}

/* Waits at most ns for events. In the closed loop with requests in flight, a turn that finds
 * nothing ready first naps for --coalesce (a timer sleep, not on the epoll set) and then looks
 * again: a server that writes while we nap does not have to wake us (on a VM whose idle vCPU
 * halts, waking a sleeper is an IPI: several microseconds of the server's CPU per wake-up, 6-11 %
 * of nghttpd's throughput at -c 10 -m 10), and one wake-up collects several connections'
 * responses. The nap's length adapts between NAP_MIN_NS and --coalesce: a nap after which more
 * than half of the connections with requests in flight are ready was long enough for the server
 * to run short of work (it halves), a shorter haul lengthens it by half. A nap that finds fewer
 * than two connections ready (the server is slower than the nap, or there is one connection:
 * -c 1 -m 1, where the nap's three syscalls only replace one sleep), or a shortest nap that
 * still finds more than half ready (too few requests in flight for any nap to pay: the sleep
 * itself lasts tens of microseconds on a VM) makes the next ones wait: 1,
 * 2, 4, ... up to NAP_BACKOFF_MAX turns sleep in epoll before the next try; one that finds two
 * or more resets that. */
static int wait_events(struct h2b__load_worker *w, struct epoll_event *events, int max, uint64_t ns)
{
    const struct h2b__load_shared *sh = w->sh;
    uint64_t nap_max = sh->cfg->coalesce_ns;
    if (nap_max == 0 || w->inflight == 0 || sh->rate_mode || sh->paced || w->h1 || w->h3)
        return sleep_wait(w, events, max, ns);
    if (w->nap_ns == 0 || w->nap_ns > nap_max)
        w->nap_ns = nap_max < NAP_START_NS ? nap_max : NAP_START_NS;
    uint64_t nap = w->nap_ns;
    if (ns <= nap)
        return sleep_wait(w, events, max, ns);
    if (w->nap_skip > 0) {
        w->nap_skip--;
        return sleep_wait(w, events, max, ns);
    }
    int n = epoll_wait(w->epfd, events, max, 0);
    if (n != 0)
        return n; /* ready already: no nap */
    struct timespec ts = {.tv_sec = 0, .tv_nsec = (long)nap};
    nanosleep(&ts, NULL);
    n = epoll_wait(w->epfd, events, max, 0);
    bool drained = (uint64_t)n * 2 > w->busy_conns;
    if (n >= 2 && !(drained && nap <= NAP_MIN_NS)) {
        w->nap_backoff = 0; /* it collected several connections' events: nap again */
        if (drained)
            w->nap_ns = nap / 2 < NAP_MIN_NS ? NAP_MIN_NS : nap / 2;
        else
            w->nap_ns = nap + nap / 2 > nap_max ? nap_max : nap + nap / 2;
        return n;
    }
    /* nothing yet, or one connection's events (a plain sleep would have done as well, and
     * cheaper: one syscall instead of three), or even the shortest nap let the server run dry
     * (few requests in flight: -c 10 -m 1) */
    w->nap_backoff = w->nap_backoff ? w->nap_backoff * 2 : 1;
    if (w->nap_backoff > NAP_BACKOFF_MAX)
        w->nap_backoff = NAP_BACKOFF_MAX;
    w->nap_skip = w->nap_backoff;
    return n != 0 ? n : sleep_wait(w, events, max, ns - nap);
}

bool h2b__load_turn(struct h2b__load_worker *w, uint64_t ns, const struct h2b__load_turn *t)
{
    const struct h2b__load_shared *sh = w->sh;
    struct epoll_event events[256];
    int n = wait_events(w, events, 256, ns);
    if (n < 0 && errno != EINTR) {
        w->rc = H2B_ERR_SYS;
        return false;
    }
    w->now = h2b_clock_now_ns();
    for (int i = 0; i < n; i++)
        t->on_event(events[i].data.ptr, events[i].events);
    if (atomic_load_explicit(sh->stop, memory_order_relaxed))
        w->interrupted = true;
    if (t->after_events)
        t->after_events(w);
    if (sh->rate_mode && t->rate && !w->interrupted && (sh->t_end == 0 || w->now < sh->t_end))
        h2b__load_release(w, t->rate);
    if (t->after_release)
        t->after_release(w);
    if (w->now >= w->next_tick) {
        if (t->timeouts)
            t->timeouts(w);
        w->next_tick = w->now + w->tick_ns;
    }
    if (w->islot && w->now >= w->i_end)
        h2b__load_ival_roll(w); /* an interval with nothing ended in it is one all the same */
    if (sh->progress)
        h2b__load_snapshot(w);
    return true;
}

bool h2b__load_worker_done(const struct h2b__load_worker *w, h2b__load_phase_fn phase)
{
    if (!h2b__load_running(w))
        return true;
    if (w->sh->rate_mode && w->sched_left == 0 && w->inflight == 0)
        return true;
    for (uint32_t i = 0; i < w->nconns; i++)
        if (phase(w, i) != H2B__LOAD_OVER)
            return false;
    return true;
}

uint64_t h2b__load_wait_ns(const struct h2b__load_worker *w, uint64_t until)
{
    const struct h2b__load_shared *sh = w->sh;
    if (w->now + MAX_WAIT_NS < until)
        until = w->now + MAX_WAIT_NS;
    if (w->next_tick < until)
        until = w->next_tick;
    if (sh->t_end && sh->t_end < until)
        until = sh->t_end;
    if (sh->rate_mode && w->sched_started && w->sched_left > 0 && !w->all_busy &&
        h2b_arrival_peek(&w->sched) < until)
        until = h2b_arrival_peek(&w->sched);
    return until > w->now ? until - w->now : 0;
}

int h2b__load_tcp_open(struct h2b__load_worker *w, void *ptr, int *fd)
{
    const struct h2b__load_shared *sh = w->sh;
    *fd = socket(sh->addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (*fd < 0)
        return -1;
    int one = 1;
    setsockopt(*fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    int rv = connect(*fd, (const struct sockaddr *)&sh->addr, sh->addrlen);
    if (rv != 0 && errno != EINPROGRESS) {
        w->stats.conn_errno = w->stats.conn_errno ? w->stats.conn_errno : errno;
        return -1;
    }
    struct epoll_event ev = {.events = EPOLLOUT, .data.ptr = ptr};
    if (epoll_ctl(w->epfd, EPOLL_CTL_ADD, *fd, &ev) != 0)
        return -1;
    return rv == 0 ? 0 : 1;
}

void h2b__load_tcp_close(int *fd, SSL **ssl)
{
    if (*ssl) {
        SSL_free(*ssl);
        *ssl = NULL;
    }
    if (*fd >= 0) {
        close(*fd); /* also leaves the epoll set */
        *fd = -1;
    }
}

int h2b__load_tcp_setup(struct h2b__load_worker *w, int fd, SSL **ssl, uint64_t *t_tcp,
                        const char *alpn, bool alpn_optional, uint32_t *events)
{
    if (!*ssl) {
        *t_tcp = w->now;
        int err = 0;
        socklen_t len = sizeof(err);
        if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0 || err != 0) {
            w->stats.conn_errno = w->stats.conn_errno ? w->stats.conn_errno : err ? err : errno;
            return -1;
        }
        if (!w->sh->ssl_ctx)
            return 0;
        if (!(*ssl = h2b__load_tls_new(w->sh, fd, &w->stats)))
            return -1;
    }
    ERR_clear_error();
    int rv = SSL_do_handshake(*ssl);
    if (rv == 1) {
        const unsigned char *got = NULL;
        unsigned gotlen = 0;
        size_t want = strlen(alpn);
        SSL_get0_alpn_selected(*ssl, &got, &gotlen);
        if (gotlen == 0 && alpn_optional)
            return 0;
        return gotlen == want && memcmp(got, alpn, want) == 0 ? 0 : -1;
    }
    int e = SSL_get_error(*ssl, rv);
    ERR_clear_error();
    if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
        *events = e == SSL_ERROR_WANT_READ ? EPOLLIN : EPOLLOUT;
        return 1;
    }
    return -1;
}

enum h2b__load_next h2b__load_closed(struct h2b__load_worker *w, struct h2b__load_life *l,
                                     bool reached)
{
    l->t_last_end = w->now;
    if (!reached)
        w->stats.conns_failed++;
    if (l->budget > 0 && h2b__load_running(w) && l->responses > 0) {
        l->responses = 0; /* one more try: it must get a response to earn the next */
        w->stats.reconnects++;
        return H2B__LOAD_RECONNECT;
    }
    enum h2b__load_next next = l->budget == 0 ? H2B__LOAD_FINISHED : H2B__LOAD_DEAD;
    if (l->budget != UINT64_MAX && l->budget > 0 && h2b__load_running(w)) {
        /* -n mode: what this connection still owed can never be sent */
        w->stats.not_sent += l->budget;
        w->stats.errored += l->budget;
        w->stats.failed += l->budget;
        l->budget = 0;
    }
    return next;
}

/* the engine's own deadlines: --rps/--timing-script-file pacing and the -r ramp */
static uint64_t wait_ns(const struct h2b__load_worker *w)
{
    uint64_t until = UINT64_MAX;
    if (w->sh->paced && w->next_pace < until)
        until = w->next_pace;
    if (w->ramp_started < w->nconns && w->next_ramp < until)
        until = w->next_ramp;
    return h2b__load_wait_ns(w, until);
}

static void end_of_run(struct h2b__load_worker *w)
{
    const struct h2b__load_shared *sh = w->sh;
    h2b__load_drain(w);
    uint64_t stop_at = sh->t_end && sh->t_end < w->now ? sh->t_end : w->now;
    for (uint32_t i = 0; i < w->nconns; i++) {
        struct h2b__load_conn *c = &w->conns[i];
        /* paced: due before the end but never sent (the backlog a stall left) */
        while (sh->paced && c->t_pace0 && c->life.budget > 0 && due_time(c) < stop_at) {
            if (due_time(c) >= sh->t_measure)
                w->stats.unsent++;
            c->paced_n++;
            h2b__load_spend(&c->life);
        }
        if (c->state >= CONN_CONNECTING && c->state <= CONN_READY) {
            c->life.budget = 0; /* no reconnect, nothing owed */
            conn_close(c, false);
        }
        w->conn_rps[i] = h2b__load_conn_rps(w, &c->life);
    }
}

static void conn_event_any(void *c, uint32_t events)
{
    conn_event(c, events);
}

/* after the release: --rps/--timing-script-file pacing and the -r ramp */
static void pace_and_ramp(struct h2b__load_worker *w)
{
    if (w->sh->paced && w->now >= w->next_pace)
        pace_all(w);
    if (w->ramp_started < w->nconns && w->now >= w->next_ramp)
        ramp(w);
}

void *h2b__load_worker_main(void *arg)
{
    struct h2b__load_worker *w = arg;
    const struct h2b__load_shared *sh = w->sh;
    const struct h2b_load_config *cfg = sh->cfg;
    static const struct h2b__load_turn turn = {.on_event = conn_event_any,
                                               .rate = &rate_hooks,
                                               .after_release = pace_and_ramp,
                                               .timeouts = check_timeouts};
    h2b__load_thread_start(w, "load");
    ramp(w);
    while (!h2b__load_worker_done(w, conn_phase)) {
        /* Pop, never index: a flush can put connections (itself included: a stream closed by
         * our RST_STREAM submits the next request) back on the list, and "on the list iff
         * c->dirty" is what bounds it by nconns. */
        while (w->ndirty > 0) {
            struct h2b__load_conn *c = w->dirty[--w->ndirty];
            c->dirty = false;
            if (c->state >= CONN_SETTINGS && c->state <= CONN_READY)
                conn_flush(c);
        }
        if (h2b__load_worker_done(w, conn_phase))
            break;
        if (!h2b__load_turn(w, wait_ns(w), &turn))
            break;
        report_phase(w);
    }
    w->now = h2b_clock_now_ns();
    bool said_over = sh->info && cfg->duration_ns && w->phase >= 1;
    if (said_over)
        info_line(w, "Main benchmark duration is over for thread #%d. Stopping all clients.\n",
                  w->id);
    end_of_run(w);
    if (said_over)
        info_line(w, "Stopped all clients for thread #%d\n", w->id);
    h2b__load_thread_end(w);
    return NULL;
}

int h2b__load_worker_init(struct h2b__load_worker *w, int id, const struct h2b__load_shared *sh,
                          uint32_t nconns, uint32_t first_conn, uint64_t requests)
{
    const struct h2b_load_config *cfg = sh->cfg;
    memset(w, 0, sizeof(*w));
    w->id = id;
    w->sh = sh;
    w->nconns = nconns;
    w->epfd = -1;
    h2b_pool_init(&w->pool);
    w->mem = h2b_pool_nghttp2_mem(&w->pool);
    int rv = h2b_load_stats_init(&w->stats);
    if (rv != H2B_OK)
        return rv;
    w->conns = calloc(nconns, sizeof(*w->conns));
    w->dirty = calloc(nconns, sizeof(*w->dirty));
    w->conn_rps = calloc(nconns, sizeof(*w->conn_rps));
    w->rbuf = malloc(RBUF_SIZE);
    if (!w->conns || !w->dirty || !w->conn_rps || !w->rbuf)
        goto out_nomem;
    if (cfg->log_fd >= 0 && !(w->logbuf = malloc(LOGBUF_SIZE)))
        goto out_nomem;
    if (cfg->conn_rate) /* h2load: the rate is spread over the threads, remainders first */
        w->ramp_batch =
            cfg->conn_rate / cfg->threads + ((uint32_t)id < cfg->conn_rate % cfg->threads ? 1 : 0);
    w->next_pace = UINT64_MAX;
    w->todo = requests;
    if (sh->progress) {
        if (h2b_hist_new_default(&w->ival[0]) != H2B_OK ||
            h2b_hist_new_default(&w->ival[1]) != H2B_OK)
            goto out_nomem;
    }
    if (sh->i_len && h2b__load_ival_init(w) != H2B_OK)
        goto out_nomem;
    /* -n is split as h2load splits it: per worker, then per connection, remainders first */
    for (uint32_t i = 0; i < nconns; i++) {
        struct h2b__load_conn *c = &w->conns[i];
        c->w = w;
        c->fd = -1;
        c->free_head = NO_SLOT;
        h2b__load_life_init(&c->life, w, first_conn, i, requests);
        c->wcap = 4096; /* grows while a burst needs it */
        c->wbuf = malloc(c->wcap);
        if (!c->wbuf)
            goto out_nomem;
        if (sh->fast) {
            c->fast = malloc(sizeof(*c->fast));
            if (!c->fast)
                goto out_nomem;
            if (h2b_h2f_init(c->fast, cfg->verbose ? &fast_cb_verbose : &fast_cb, c, &w->mem,
                             sh->reqs, (uint32_t)cfg->nuris, cfg->body, cfg->body_len) != H2B_OK) {
                free(c->fast);
                c->fast = NULL;
                goto out_nomem;
            }
        }
    }
    w->sched_left = sh->rate_mode && !cfg->duration_ns ? requests : UINT64_MAX;
    uint64_t smallest = UINT64_MAX;
    if (cfg->timeout_ns)
        smallest = cfg->timeout_ns;
    if (cfg->conn_inactivity_timeout_ns && cfg->conn_inactivity_timeout_ns < smallest)
        smallest = cfg->conn_inactivity_timeout_ns;
    if (cfg->conn_active_timeout_ns && cfg->conn_active_timeout_ns < smallest)
        smallest = cfg->conn_active_timeout_ns;
    w->tick_ns = smallest / 20;
    if (w->tick_ns < 5 * H2B_NS_PER_MS)
        w->tick_ns = 5 * H2B_NS_PER_MS;
    if (w->tick_ns > MAX_WAIT_NS)
        w->tick_ns = MAX_WAIT_NS;
    w->epfd = epoll_create1(EPOLL_CLOEXEC);
    if (w->epfd < 0) {
        h2b__load_worker_free(w);
        return H2B_ERR_SYS;
    }
    return H2B_OK;
out_nomem:
    h2b__load_worker_free(w);
    return H2B_ERR_NOMEM;
}

void h2b__load_worker_free(struct h2b__load_worker *w)
{
    for (uint32_t i = 0; w->conns && i < w->nconns; i++) {
        struct h2b__load_conn *c = &w->conns[i];
        conn_teardown(c);
        if (c->fast) {
            h2b_h2f_free(c->fast);
            free(c->fast);
        }
        free(c->slots);
        free(c->by_id);
        free(c->wbuf);
    }
    h2b_pool_free(&w->pool); /* after every session of this worker is deleted */
    free(w->conns);
    free(w->dirty);
    free(w->conn_rps);
    free(w->rbuf);
    free(w->logbuf);
    h2b_hist_del(w->ival[0]);
    h2b_hist_del(w->ival[1]);
    h2b__load_ival_free(w);
    h2b_load_stats_free(&w->stats);
    if (w->epfd >= 0)
        close(w->epfd);
    w->conns = NULL;
    w->epfd = -1;
}
