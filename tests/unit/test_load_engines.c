/*
 * test_load_engines.c - the load client's engines (engine.h's tables) through their interface,
 * run by the real runtime (worker.c) on one worker with one connection, against no server: the
 * test is the server. The worker's target address is a Unix socket the test listens on
 * (abstract namespace), so the engines' own connect (h2b__load_tcp_open) reaches it and the
 * test reads every byte an engine writes and writes a scripted byte stream back. No seam was
 * needed: struct h2b__load_shared is the engine's whole view of the run.
 *
 * Both HTTP/2 engines (h2b__h2_fast_engine, h2b__h2_engine) run the same cases and must give the
 * same answers: the client preface, SETTINGS and the request HEADERS (decoded with nghttp2's
 * inflater: the run's header list in its order); a 200 response with a body fed whole and one
 * byte at a time (one success, its status, body and header bytes counted);
 * SETTINGS_MAX_CONCURRENT_STREAMS 1 (never two streams open), and 0 raised to 2 later (nothing,
 * then two at once); RST_STREAM on a request (failed, the connection goes on); a bad :status
 * (the client resets the stream and ignores the DATA that follows) and a body shorter than its
 * content-length (protocol errors, the connection goes on); the server closing the connection
 * under a request (failed; a reconnect for what is owed); GOAWAY with a last-stream-id below
 * requests in flight (those are refused: failed as resets; the connection closes once the rest
 * has ended and reconnects for what it still owes); malformed frames (DATA
 * on stream 0, a SETTINGS whose length is not a multiple of 6: GOAWAY with the error, the
 * connection ends, the request fails); a body larger than the client's windows, plain and
 * padded (WINDOW_UPDATEs for the stream and the connection come back); a 100, then a header
 * block over HEADERS and CONTINUATION, a body and trailers, whole and byte by byte.
 * The HTTP/1.1 engine runs a Content-Length and a chunked response on one keep-alive connection
 * (whole and byte by byte), "Connection: close" after a 100 (a reconnect) and a body ended by
 * the close, and a malformed status line; the raw engine a request of REQ zero bytes answered
 * with RESP bytes, and a response too long.
 *
 * "One byte at a time" is exact: after each byte the test waits until the client has read it
 * (SIOCOUTQ of the Unix socket drops to 0), so every read the engine makes returns one byte.
 * Every assertion is a count or a byte the engine produced; waits are only guards against a
 * hang (a case that waits that long fails), or a quiet spell that gives a misbehaving engine
 * the chance to send what it must not.
 *
 * Not here: h3load.c's engine (h2b__h3_engine) speaks QUIC over UDP through ngtcp2 with TLS
 * 1.3, which a scripted byte stream cannot play; test_h3_engine.c runs it against the reference
 * server's HTTP/3 listener instead.
 */
#include "core/clock.h"
#include "core/error.h"
#include "core/h2wire.h"
#include "load/engine.h"
#include "load_rig.h"
#include "test.h"

#include <errno.h>
#include <nghttp2/nghttp2.h>
#include <poll.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <linux/sockios.h>

#define GUARD_MS 10000 /* a read or a write that waits this long fails the case */
#define QUIET_MS 20    /* a spell in which a well-behaved client sends no new stream */
#define PAYLOAD_MAX (64 * 1024)
#define URL "http://127.0.0.1:1/hello"
#define NO_LIMIT UINT32_MAX /* h2_accept: no SETTINGS_MAX_CONCURRENT_STREAMS */

static const uint8_t preface[] = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

struct frame {
    uint32_t len;
    uint8_t type, flags;
    uint32_t sid;
    uint8_t p[PAYLOAD_MAX];
};

/* One worker of one connection running engine eng, and the server end of that connection. */
struct rig {
    struct h2b_load_config cfg;
    nghttp2_nv nv[5];
    nghttp2_nv *nva[1];
    size_t nvlen[1];
    struct h2b__load_proto proto;
    struct h2b__load_shared sh;
    struct h2b__load_worker w;
    atomic_int stop;
    pthread_t th;
    bool running;
    int lfd, fd;      /* the listener and the accepted connection (the server's end) */
    uint64_t sent;    /* bytes the server wrote, every connection */
    uint64_t recvd;   /* bytes the server read, every connection */
    bool eof;         /* the client closed the connection */
    unsigned accepts; /* connections the client made */
    /* HTTP/2: the server's view of the connection */
    nghttp2_hd_deflater *def;
    nghttp2_hd_inflater *inf;
    bool got_preface;
    uint32_t peer_window;      /* the client's SETTINGS_INITIAL_WINDOW_SIZE */
    int64_t conn_win, str_win; /* what the server may still send on the connection, stream */
    unsigned winup_conn, winup_stream;
    unsigned open, max_open; /* streams the client opened that the server has not ended */
    unsigned headers;        /* request HEADERS frames, every connection */
    uint64_t block_bytes;    /* response header blocks the server wrote */
    uint32_t goaway_code;    /* of the client's GOAWAY; UINT32_MAX: none came */
    char names[8][16], values[8][64];
    size_t nfields;
};

/* The header list of the run, as load.c builds it (h2load's order) */
static void build_proto(struct rig *r)
{
    const struct h2b_load_uri *u = &r->cfg.uris[0];
    const char *nv[5][2] = {{":path", u->path},
                            {":scheme", u->scheme},
                            {":authority", u->authority},
                            {":method", "GET"},
                            {"user-agent", "h2bench/test"}};
    for (int i = 0; i < 5; i++)
        r->nv[i] = (nghttp2_nv){(uint8_t *)(uintptr_t)nv[i][0], (uint8_t *)(uintptr_t)nv[i][1],
                                strlen(nv[i][0]), strlen(nv[i][1]), NGHTTP2_NV_FLAG_NONE};
    r->nva[0] = r->nv;
    r->nvlen[0] = 5;
    r->proto = (struct h2b__load_proto){r->nva, r->nvlen};
}

/* Parses "load OPTS... URL", listens and starts the worker thread on eng. */
static void rig_open(struct rig *r, const struct h2b__load_engine *eng, const char *const *opts)
{
    static unsigned seq;
    memset(r, 0, sizeof *r);
    r->fd = -1;
    r->goaway_code = UINT32_MAX;
    char *argv[16] = {"load"};
    int argc = 1;
    while (*opts && argc < 14)
        argv[argc++] = (char *)(uintptr_t)*opts++;
    argv[argc++] = URL;
    h2b_load_config_init(&r->cfg);
    CHECK_EQ_INT(h2b_load_config_parse(&r->cfg, argc, argv, NULL), H2B_OK);
    r->cfg.coalesce_ns = 0;
    build_proto(r);
    struct sockaddr_un *un = (struct sockaddr_un *)&r->sh.addr;
    un->sun_family = AF_UNIX;
    int n = snprintf(un->sun_path + 1, sizeof un->sun_path - 1, "h2b-load-engines-%d-%u",
                     (int)getpid(), seq++);
    r->sh.addrlen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n);
    r->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    CHECK(r->lfd >= 0);
    CHECK_EQ_INT(bind(r->lfd, (struct sockaddr *)un, r->sh.addrlen), 0);
    CHECK_EQ_INT(listen(r->lfd, 4), 0);
    r->sh.cfg = &r->cfg;
    r->sh.engine = eng;
    r->sh.proto = &r->proto;
    r->sh.stop = &r->stop;
    r->sh.t0 = h2b_clock_now_ns();
    CHECK_EQ_INT(h2b__load_worker_init(&r->w, 0, &r->sh, 1, 0, r->cfg.requests), H2B_OK);
    r->running = pthread_create(&r->th, NULL, h2b__load_worker_main, &r->w) == 0;
    CHECK(r->running);
}

/* ---- the server's bytes ---------------------------------------------------------------- */

/* Accepts the client's next connection (the previous one, if any, is closed first). */
static bool srv_accept(struct rig *r)
{
    if (r->fd >= 0)
        close(r->fd);
    r->fd = -1;
    r->eof = false;
    struct pollfd p = {r->lfd, POLLIN, 0};
    if (poll(&p, 1, GUARD_MS) != 1)
        return false;
    r->fd = accept4(r->lfd, NULL, NULL, SOCK_CLOEXEC);
    if (r->fd < 0)
        return false;
    struct timeval tv = {.tv_sec = GUARD_MS / 1000};
    setsockopt(r->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(r->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    r->accepts++;
    return true;
}

/* Reads exactly n bytes. False at the client's close (r->eof) or when the guard ran out. */
static bool srv_read(struct rig *r, void *buf, size_t n)
{
    uint8_t *p = buf;
    while (n > 0) {
        ssize_t k = read(r->fd, p, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0) {
            r->eof = k == 0 || errno == ECONNRESET;
            return false;
        }
        r->recvd += (uint64_t)k;
        p += k;
        n -= (size_t)k;
    }
    return true;
}

/* Waits until the client has read everything written to it (the guard bounds the wait). */
static bool srv_drained(const struct rig *r)
{
    for (int i = 0; i < GUARD_MS * 10; i++) {
        int q = 0;
        if (ioctl(r->fd, SIOCOUTQ, &q) != 0)
            return false;
        if (q == 0)
            return true;
        struct timespec ts = {0, 100 * 1000};
        nanosleep(&ts, NULL);
    }
    return false;
}

/* Writes p[0..n): at once, or one byte at a time, each read by the client before the next. */
static bool srv_write(struct rig *r, const void *p, size_t n, bool bytewise)
{
    const uint8_t *b = p;
    while (n > 0) {
        size_t want = bytewise ? 1 : n;
        ssize_t k = send(r->fd, b, want, MSG_NOSIGNAL);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0 || (bytewise && !srv_drained(r)))
            return false;
        r->sent += (uint64_t)k;
        b += k;
        n -= (size_t)k;
    }
    return true;
}

/* Data from the client within ms? */
static bool srv_pending(const struct rig *r, int ms)
{
    struct pollfd p = {r->fd, POLLIN, 0};
    return poll(&p, 1, ms) == 1;
}

/* ---- HTTP/2: the server's frames ------------------------------------------------------- */

/* Appends one frame to out (which has room: the callers size it). Returns its size. */
static size_t put_frame(uint8_t *out, uint8_t type, uint8_t flags, uint32_t sid, const void *p,
                        uint32_t len)
{
    h2b_h2wire_hd_put(out, len, type, flags, sid);
    if (len)
        memcpy(out + 9, p, len);
    return 9 + (size_t)len;
}

static bool send_frame(struct rig *r, uint8_t type, uint8_t flags, uint32_t sid, const void *p,
                       uint32_t len)
{
    uint8_t buf[9 + 64];
    if (len > 64)
        return false;
    return srv_write(r, buf, put_frame(buf, type, flags, sid, p, len), false);
}

/* The request's header block: its fields in order into r->names/values. */
static void decode_request(struct rig *r, const uint8_t *p, size_t n)
{
    r->nfields = 0;
    for (;;) {
        nghttp2_nv nv;
        int fl = 0;
        ssize_t k = nghttp2_hd_inflate_hd2(r->inf, &nv, &fl, p, n, 1);
        if (k < 0) {
            CHECK(!"the request's header block decodes");
            return;
        }
        p += k;
        n -= (size_t)k;
        if ((fl & NGHTTP2_HD_INFLATE_EMIT) && r->nfields < 8) {
            snprintf(r->names[r->nfields], sizeof r->names[0], "%.*s", (int)nv.namelen,
                     (const char *)nv.name);
            snprintf(r->values[r->nfields], sizeof r->values[0], "%.*s", (int)nv.valuelen,
                     (const char *)nv.value);
            r->nfields++;
        }
        if (fl & NGHTTP2_HD_INFLATE_FINAL) {
            nghttp2_hd_inflate_end_headers(r->inf);
            return;
        }
        if (k == 0 && n == 0)
            return;
    }
}

/* The client's SETTINGS: its initial window; acknowledged. */
static void on_settings(struct rig *r, const struct frame *f)
{
    if (f->flags & H2B_FL_ACK)
        return;
    for (uint32_t i = 0; i + 6 <= f->len; i += 6)
        if ((f->p[i] << 8 | f->p[i + 1]) == NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE)
            r->peer_window = h2b_h2wire_get32(f->p + i + 2);
    send_frame(r, H2B_F_SETTINGS, H2B_FL_ACK, 0, NULL, 0);
}

/* The client's next frame, with the server's bookkeeping done (SETTINGS acknowledged, windows
 * and open streams followed, the request decoded). False at its close or after the guard. */
static bool h2_next(struct rig *r, struct frame *f)
{
    uint8_t hd[9];
    if (!srv_read(r, hd, 9))
        return false;
    struct h2b_h2wire_hd h = h2b_h2wire_hd_get(hd);
    f->len = h.len;
    f->type = h.type;
    f->flags = h.flags;
    f->sid = h.id;
    if (f->len > PAYLOAD_MAX || !srv_read(r, f->p, f->len)) {
        CHECK(f->len <= PAYLOAD_MAX);
        return false;
    }
    switch (f->type) {
    case H2B_F_SETTINGS:
        on_settings(r, f);
        break;
    case H2B_F_HEADERS:
        r->headers++;
        if (++r->open > r->max_open)
            r->max_open = r->open;
        CHECK_EQ_INT(f->flags & (H2B_FL_END_HEADERS | H2B_FL_END_STREAM),
                     H2B_FL_END_HEADERS | H2B_FL_END_STREAM);
        decode_request(r, f->p, f->len);
        break;
    case H2B_F_WINUP:
        if (f->sid == 0) {
            r->winup_conn++;
            r->conn_win += h2b_h2wire_get32(f->p) & 0x7fffffffU;
        } else {
            r->winup_stream++;
            r->str_win += h2b_h2wire_get32(f->p) & 0x7fffffffU;
        }
        break;
    case H2B_F_GOAWAY:
        if (f->len >= 8)
            r->goaway_code = h2b_h2wire_get32(f->p + 4);
        break;
    default:
        break;
    }
    return true;
}

/* Reads the client's frames until one of type comes (into f). */
static bool h2_until(struct rig *r, uint8_t type, struct frame *f)
{
    while (h2_next(r, f))
        if (f->type == type)
            return true;
    return false;
}

/* Reads everything the client sends until it closes the connection. */
static void h2_to_eof(struct rig *r)
{
    struct frame *f = malloc(sizeof *f);
    while (f && h2_next(r, f))
        ;
    free(f);
    CHECK(r->eof);
}

/* Accepts a connection and opens HTTP/2 on it: the server's SETTINGS (MAX_CONCURRENT_STREAMS
 * max_streams unless NO_LIMIT) at once, then the client's preface and SETTINGS (acknowledged). */
static bool h2_accept(struct rig *r, uint32_t max_streams)
{
    if (!srv_accept(r))
        return false;
    if (r->def)
        nghttp2_hd_deflate_del(r->def);
    if (r->inf)
        nghttp2_hd_inflate_del(r->inf);
    r->def = NULL;
    r->inf = NULL;
    if (nghttp2_hd_deflate_new(&r->def, 4096) != 0 || nghttp2_hd_inflate_new(&r->inf) != 0)
        return false;
    r->open = 0;
    r->conn_win = 65535;
    uint8_t iv[6] = {0, NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS};
    h2b_h2wire_put32(iv + 2, max_streams);
    if (!send_frame(r, H2B_F_SETTINGS, 0, 0, iv, max_streams != NO_LIMIT ? 6 : 0))
        return false;
    uint8_t got[sizeof preface - 1];
    r->got_preface = srv_read(r, got, sizeof got) && memcmp(got, preface, sizeof got) == 0;
    struct frame *f = malloc(sizeof *f);
    bool ok = r->got_preface && f && h2_next(r, f) && f->type == H2B_F_SETTINGS && f->sid == 0 &&
              !(f->flags & H2B_FL_ACK);
    free(f);
    r->str_win = r->peer_window;
    return ok;
}

/* The HEADERS of a response (:status, content-length clen) on sid into out. */
static size_t put_response_headers(struct rig *r, uint8_t *out, uint32_t sid, const char *status,
                                   size_t clen, bool end_stream)
{
    char cl[24];
    snprintf(cl, sizeof cl, "%zu", clen);
    nghttp2_nv nv[2] = {{(uint8_t *)":status", (uint8_t *)(uintptr_t)status, 7, strlen(status), 0},
                        {(uint8_t *)"content-length", (uint8_t *)cl, 14, strlen(cl), 0}};
    uint8_t block[128];
    ssize_t n = nghttp2_hd_deflate_hd(r->def, block, sizeof block, nv, 2);
    CHECK(n > 0);
    r->block_bytes += n > 0 ? (uint64_t)n : 0;
    return put_frame(out, H2B_F_HEADERS, H2B_FL_END_HEADERS | (end_stream ? H2B_FL_END_STREAM : 0),
                     sid, block, n > 0 ? (uint32_t)n : 0);
}

/* A 200 response with body (HEADERS, then one DATA frame), written whole or byte by byte. */
static bool h2_respond(struct rig *r, uint32_t sid, const char *body, bool bytewise)
{
    uint8_t out[512];
    size_t blen = strlen(body);
    size_t n = put_response_headers(r, out, sid, "200", blen, blen == 0);
    if (blen)
        n += put_frame(out + n, H2B_F_DATA, H2B_FL_END_STREAM, sid, body, (uint32_t)blen);
    r->open--;
    return srv_write(r, out, n, bytewise);
}

static void rig_free_h2(struct rig *r)
{
    if (r->def)
        nghttp2_hd_deflate_del(r->def);
    if (r->inf)
        nghttp2_hd_inflate_del(r->inf);
}

/* Waits for the worker to end by itself (a stop after the guard, and the case fails), then
 * checks its end is clean. */
static void unstick(void *arg)
{
    const struct rig *r = arg;
    if (r->fd >= 0)
        shutdown(r->fd, SHUT_RDWR);
}

static void rig_join(struct rig *r)
{
    if (!r->running)
        return;
    load_rig_join(r->th, &r->w, &r->stop, GUARD_MS / 1000, unstick, r);
    r->running = false;
}

static void rig_close(struct rig *r)
{
    rig_join(r);
    h2b__load_worker_free(&r->w);
    rig_free_h2(r);
    if (r->fd >= 0)
        close(r->fd);
    close(r->lfd);
    h2b_load_config_free(&r->cfg);
}

/* What a case's run must have counted: every count below is checked exactly. */
struct want {
    uint64_t started, done, succeeded; /* whole responses (done), 2xx or 3xx among them */
    uint64_t resets, protocol, died;   /* errored: reset or refused, broken HTTP, the connection */
    uint64_t conn_errors;              /* connections the client ended with GOAWAY(error) */
    uint64_t status200;                /* :status 200 counted; 0: one per response (done) */
    uint64_t data;                     /* DATA payload (HTTP/2) or body bytes */
    unsigned conns;                    /* connections that came up, each accepted by the server */
};

/* The worker's counts are x's, each connection after the first was a reconnect, every request
 * ended has its latency, and every byte each side wrote was read by the other. */
static void check_counts(const struct rig *r, const struct want *x)
{
    const struct h2b_load_stats *st = &r->w.stats;
    uint64_t errored = x->resets + x->protocol + x->died;
    CHECK_EQ_U64(st->started, x->started);
    CHECK_EQ_U64(st->done, x->done);
    CHECK_EQ_U64(st->succeeded, x->succeeded);
    CHECK_EQ_U64(st->errored, errored);
    CHECK_EQ_U64(st->failed, x->done - x->succeeded + errored);
    CHECK_EQ_U64(st->resets, x->resets);
    CHECK_EQ_U64(st->protocol_errors, x->protocol);
    CHECK_EQ_U64(st->timeouts + st->not_sent + st->unfinished + st->unsent, 0);
    CHECK_EQ_U64(st->conn_errors, x->conn_errors);
    CHECK_EQ_U64(st->status[200], x->status200 ? x->status200 : x->done);
    CHECK_EQ_U64(st->bytes_data, x->data);
    CHECK_EQ_U64(st->conns_ok, x->conns);
    CHECK_EQ_U64(st->reconnects, x->conns - 1);
    CHECK_EQ_U64(r->accepts, x->conns);
    CHECK_EQ_U64(st->latency->total, x->done + errored);
    CHECK_EQ_U64(st->bytes_total, r->sent);
    CHECK_EQ_U64(st->bytes_sent, r->recvd);
}

/* ---- the HTTP/2 cases, the same for both engines -------------------------------------- */

/* The preface, SETTINGS and GET /hello's HEADERS; a 200 with a 12-byte body, whole or byte by
 * byte: one success, status 200 counted, the body's bytes counted. */
static void h2_hello(const struct h2b__load_engine *eng, bool bytewise)
{
    struct rig r;
    rig_open(&r, eng, (const char *[]){"-n", "1", NULL});
    struct frame *f = malloc(sizeof *f);
    CHECK(h2_accept(&r, NO_LIMIT));
    CHECK(r.got_preface);
    CHECK(h2_until(&r, H2B_F_HEADERS, f));
    CHECK_EQ_INT(f->sid, 1);
    /* the run's header list, in its order: :path, :scheme, :authority, :method (h2load's) */
    CHECK_EQ_INT(r.nfields, 5);
    for (size_t i = 0; i < 5 && i < r.nfields; i++) {
        CHECK_STR(r.names[i], (const char *)r.nv[i].name);
        CHECK_STR(r.values[i], (const char *)r.nv[i].value);
    }
    CHECK_STR(r.values[0], "/hello");
    CHECK_STR(r.values[1], "http");
    CHECK_STR(r.values[2], "127.0.0.1:1");
    CHECK_STR(r.values[3], "GET");
    CHECK(h2_respond(&r, 1, "hello world\n", bytewise));
    h2_to_eof(&r);
    free(f);
    rig_join(&r);
    const struct h2b_load_stats *st = &r.w.stats;
    check_counts(&r,
                 &(struct want){.started = 1, .done = 1, .succeeded = 1, .data = 12, .conns = 1});
    CHECK_EQ_U64(st->bytes_headers, r.block_bytes);
    CHECK_EQ_U64(st->bytes_headers_decomp, 7 + 3 + 14 + 2); /* :status 200 content-length 12 */
    CHECK_EQ_INT(r.headers, 1);
    CHECK_EQ_INT(r.accepts, 1);
    rig_close(&r);
}

/* SETTINGS_MAX_CONCURRENT_STREAMS 1 with -m 4: never a second stream before the first ended. */
static void h2_one_stream(const struct h2b__load_engine *eng)
{
    struct rig r;
    rig_open(&r, eng, (const char *[]){"-n", "3", "-m", "4", NULL});
    struct frame *f = malloc(sizeof *f);
    CHECK(h2_accept(&r, 1));
    for (uint32_t k = 0; k < 3; k++) {
        CHECK(h2_until(&r, H2B_F_HEADERS, f));
        CHECK_EQ_INT(f->sid, 2 * k + 1);
        while (srv_pending(&r, QUIET_MS) && h2_next(&r, f)) /* a second HEADERS would come now */
            ;
        CHECK(h2_respond(&r, 2 * k + 1, "ok", false));
    }
    h2_to_eof(&r);
    free(f);
    rig_join(&r);
    CHECK_EQ_INT(r.max_open, 1);
    CHECK_EQ_INT(r.headers, 3);
    const struct h2b_load_stats *st = &r.w.stats;
    check_counts(&r,
                 &(struct want){.started = 3, .done = 3, .succeeded = 3, .data = 6, .conns = 1});
    CHECK_EQ_U64(st->server_max_streams, 1);
    CHECK_EQ_U64(st->streams_effective, 1);
    rig_close(&r);
}

/* RST_STREAM on the first request: it fails (a reset); the next goes on the same connection. */
static void h2_reset(const struct h2b__load_engine *eng)
{
    struct rig r;
    rig_open(&r, eng, (const char *[]){"-n", "2", "-m", "1", NULL});
    struct frame *f = malloc(sizeof *f);
    CHECK(h2_accept(&r, NO_LIMIT));
    CHECK(h2_until(&r, H2B_F_HEADERS, f));
    uint8_t code[4];
    h2b_h2wire_put32(code, NGHTTP2_INTERNAL_ERROR);
    CHECK(send_frame(&r, H2B_F_RST, 0, f->sid, code, 4));
    r.open--;
    CHECK(h2_until(&r, H2B_F_HEADERS, f));
    CHECK_EQ_INT(f->sid, 3);
    CHECK(h2_respond(&r, 3, "ok", false));
    h2_to_eof(&r);
    free(f);
    rig_join(&r);
    check_counts(&r,
                 &(struct want){
                     .started = 2, .done = 1, .succeeded = 1, .resets = 1, .data = 2, .conns = 1});
    rig_close(&r);
}

/* GOAWAY(last-stream-id 1) with streams 1, 3 and 5 open, then stream 1's response: 3 and 5 are
 * refused (failed, counted as resets, as nghttp2 closes them with REFUSED_STREAM and h2load
 * counts any stream closed with an error); the connection closes once stream 1 has ended and,
 * having had a response, reconnects for the fourth request. */
static void h2_goaway(const struct h2b__load_engine *eng)
{
    struct rig r;
    rig_open(&r, eng, (const char *[]){"-n", "4", "-m", "3", NULL});
    struct frame *f = malloc(sizeof *f);
    CHECK(h2_accept(&r, NO_LIMIT));
    while (r.headers < 3 && h2_until(&r, H2B_F_HEADERS, f))
        ;
    CHECK_EQ_INT(r.headers, 3);
    uint8_t ga[8];
    h2b_h2wire_put32(ga, 1);
    h2b_h2wire_put32(ga + 4, NGHTTP2_NO_ERROR);
    CHECK(send_frame(&r, H2B_F_GOAWAY, 0, 0, ga, 8));
    CHECK(h2_respond(&r, 1, "ok", false));
    h2_to_eof(&r);
    CHECK_EQ_INT(r.headers, 3); /* nothing new after GOAWAY */
    CHECK(h2_accept(&r, NO_LIMIT));
    CHECK(h2_until(&r, H2B_F_HEADERS, f));
    CHECK_EQ_INT(f->sid, 1);
    CHECK(h2_respond(&r, 1, "ok", false));
    h2_to_eof(&r);
    free(f);
    rig_join(&r);
    check_counts(&r,
                 &(struct want){
                     .started = 4, .done = 2, .succeeded = 2, .resets = 2, .data = 4, .conns = 2});
    rig_close(&r);
}

/* A malformed frame while a request is in flight: the client ends the connection with
 * GOAWAY(want), the request fails (the connection died), nothing reconnects. */
static void h2_malformed(const struct h2b__load_engine *eng, uint8_t type, uint32_t len,
                         uint32_t want)
{
    struct rig r;
    rig_open(&r, eng, (const char *[]){"-n", "1", NULL});
    struct frame *f = malloc(sizeof *f);
    CHECK(h2_accept(&r, NO_LIMIT));
    CHECK(h2_until(&r, H2B_F_HEADERS, f));
    uint8_t zero[8] = {0};
    CHECK(send_frame(&r, type, 0, 0, zero, len));
    h2_to_eof(&r);
    free(f);
    rig_join(&r);
    CHECK_EQ_U64(r.goaway_code, want);
    check_counts(&r, &(struct want){.started = 1, .died = 1, .conn_errors = 1, .conns = 1});
    rig_close(&r);
}

/* A body of 4 x 64 KiB with -w 16 -W 16 (65535-byte windows), the server never sending beyond
 * the client's windows (pad > 0: every DATA frame padded, padding counts against the windows):
 * WINDOW_UPDATEs for the stream and the connection let it all through; only the body's bytes
 * are counted as data. */
static void h2_flow(const struct h2b__load_engine *eng, uint8_t pad)
{
    enum { BODY = 4 * 65536, CHUNK = 16384 };
    static const uint8_t zeros[CHUNK + 256];
    struct rig r;
    rig_open(&r, eng, (const char *[]){"-n", "1", "-w", "16", "-W", "16", NULL});
    struct frame *f = malloc(sizeof *f);
    uint8_t *out = calloc(1, 9 + CHUNK + 256);
    CHECK(h2_accept(&r, NO_LIMIT));
    CHECK_EQ_INT(r.peer_window, 65535);
    CHECK(h2_until(&r, H2B_F_HEADERS, f));
    size_t n = put_response_headers(&r, out, 1, "200", BODY, false);
    CHECK(srv_write(&r, out, n, false));
    size_t left = BODY;
    bool ok = true;
    uint32_t over = pad ? pad + 1U : 0; /* the pad length byte and the padding */
    while (ok && left > 0) {
        int64_t room = (r.conn_win < r.str_win ? r.conn_win : r.str_win) - over;
        if (room <= 0) {
            ok = h2_next(&r, f); /* blocked: a WINDOW_UPDATE must come */
            continue;
        }
        uint32_t k = (uint32_t)(left < CHUNK - over ? left : CHUNK - over); /* max frame */
        if (k > room)
            k = (uint32_t)room;
        left -= k;
        r.conn_win -= k + over;
        r.str_win -= k + over;
        uint8_t fl = (uint8_t)((left == 0 ? H2B_FL_END_STREAM : 0) | (pad ? H2B_FL_PADDED : 0));
        n = put_frame(out, H2B_F_DATA, fl, 1, zeros, k + over);
        out[9] = pad ? pad : 0; /* the pad length (a zero byte of the body without padding) */
        ok = srv_write(&r, out, n, false);
    }
    CHECK(ok);
    CHECK_EQ_U64(left, 0);
    h2_to_eof(&r);
    free(out);
    free(f);
    rig_join(&r);
    CHECK(r.winup_conn > 0);
    CHECK(r.winup_stream > 0);
    check_counts(&r,
                 &(struct want){.started = 1, .done = 1, .succeeded = 1, .data = BODY, .conns = 1});
    rig_close(&r);
}

/* A 100 interim response, then the 200's header block split over HEADERS and CONTINUATION,
 * its body, and trailers that end the stream (whole or byte by byte): one success, status 200
 * only, 2 body bytes. */
static void h2_interim(const struct h2b__load_engine *eng, bool bytewise)
{
    struct rig r;
    rig_open(&r, eng, (const char *[]){"-n", "1", NULL});
    struct frame *f = malloc(sizeof *f);
    uint8_t out[512], block[128];
    CHECK(h2_accept(&r, NO_LIMIT));
    CHECK(h2_until(&r, H2B_F_HEADERS, f));
    nghttp2_nv nv[3] = {{(uint8_t *)":status", (uint8_t *)"100", 7, 3, 0},
                        {(uint8_t *)":status", (uint8_t *)"200", 7, 3, 0},
                        {(uint8_t *)"content-length", (uint8_t *)"2", 14, 1, 0}};
    ssize_t b1 = nghttp2_hd_deflate_hd(r.def, block, sizeof block, nv, 1);
    size_t n =
        put_frame(out, H2B_F_HEADERS, H2B_FL_END_HEADERS, 1, block, (uint32_t)(b1 > 0 ? b1 : 0));
    ssize_t b2 = nghttp2_hd_deflate_hd(r.def, block, sizeof block, nv + 1, 2);
    CHECK(b1 > 0 && b2 > 1);
    n += put_frame(out + n, H2B_F_HEADERS, 0, 1, block, 1);
    size_t cut = n; /* the CONTINUATION's frame header: out[cut, cut + 9) */
    n += put_frame(out + n, H2B_F_CONT, H2B_FL_END_HEADERS, 1, block + 1,
                   (uint32_t)(b2 > 1 ? b2 - 1 : 0));
    n += put_frame(out + n, H2B_F_DATA, 0, 1, "ok", 2);
    nghttp2_nv trailer = {(uint8_t *)"x-checksum", (uint8_t *)"1", 10, 1, 0};
    ssize_t b3 = nghttp2_hd_deflate_hd(r.def, block, sizeof block, &trailer, 1);
    CHECK(b3 > 0);
    n += put_frame(out + n, H2B_F_HEADERS, H2B_FL_END_HEADERS | H2B_FL_END_STREAM, 1, block,
                   (uint32_t)(b3 > 0 ? b3 : 0));
    /* The CONTINUATION's frame header goes whole: nghttp2 without the fix of its issue 2817
     * (PR 2818; Debian 12's 1.52.0 with the CVE-2024-28182 backport is one) counts every read
     * that ends inside that header as one more CONTINUATION and, at the ninth, fails the session
     * (NGHTTP2_ERR_TOO_MANY_CONTINUATIONS): nine one-byte reads would break nghttp2, not us. */
    CHECK(srv_write(&r, out, cut, bytewise));
    CHECK(srv_write(&r, out + cut, 9, false));
    CHECK(srv_write(&r, out + cut + 9, n - cut - 9, bytewise));
    h2_to_eof(&r);
    free(f);
    rig_join(&r);
    const struct h2b_load_stats *st = &r.w.stats;
    check_counts(&r,
                 &(struct want){.started = 1, .done = 1, .succeeded = 1, .data = 2, .conns = 1});
    CHECK_EQ_U64(st->status[100], 0);
    rig_close(&r);
}

/* Responses that break HTTP (nghttp2's HTTP checks are off; h2conn.h's hooks make them for
 * both engines): a :status that is not three digits (the client resets the stream), then a body
 * shorter than its content-length. Each is a protocol error; the connection goes on. */
static void h2_bad_response(const struct h2b__load_engine *eng)
{
    struct rig r;
    rig_open(&r, eng, (const char *[]){"-n", "3", "-m", "1", NULL});
    struct frame *f = malloc(sizeof *f);
    uint8_t out[256];
    CHECK(h2_accept(&r, NO_LIMIT));
    CHECK(h2_until(&r, H2B_F_HEADERS, f));
    CHECK(srv_write(&r, out, put_response_headers(&r, out, 1, "20", 0, true), false));
    r.open--;
    CHECK(h2_until(&r, H2B_F_RST, f));
    CHECK_EQ_INT(f->sid, 1);
    CHECK(h2_until(&r, H2B_F_HEADERS, f));
    CHECK_EQ_INT(f->sid, 3);
    size_t n = put_response_headers(&r, out, 3, "200", 5, false);
    n += put_frame(out + n, H2B_F_DATA, H2B_FL_END_STREAM, 3, "ok", 2);
    CHECK(srv_write(&r, out, n, false));
    r.open--;
    CHECK(h2_until(&r, H2B_F_HEADERS, f));
    CHECK_EQ_INT(f->sid, 5);
    CHECK(h2_respond(&r, 5, "ok", false));
    h2_to_eof(&r);
    free(f);
    rig_join(&r);
    check_counts(&r, &(struct want){.started = 3,
                                    .done = 1,
                                    .succeeded = 1,
                                    .protocol = 2,
                                    .status200 = 2,
                                    .data = 4,
                                    .conns = 1});
    rig_close(&r);
}

/* SETTINGS_MAX_CONCURRENT_STREAMS 0 holds every request back; a later SETTINGS that raises it
 * to 2 lets two streams open at once (the slots grow on an idle connection). */
static void h2_zero_streams(const struct h2b__load_engine *eng)
{
    struct rig r;
    rig_open(&r, eng, (const char *[]){"-n", "4", "-m", "4", NULL});
    struct frame *f = malloc(sizeof *f);
    CHECK(h2_accept(&r, 0));
    uint8_t iv[6] = {0, NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, 0, 0, 0, 2};
    while (srv_pending(&r, QUIET_MS) && h2_next(&r, f))
        ;
    CHECK_EQ_INT(r.headers, 0);
    CHECK(send_frame(&r, H2B_F_SETTINGS, 0, 0, iv, 6));
    for (uint32_t k = 0; k < 4; k++) {
        while (r.headers <= k && h2_until(&r, H2B_F_HEADERS, f))
            ;
        while (srv_pending(&r, QUIET_MS) && h2_next(&r, f)) /* a third would come now */
            ;
        CHECK(r.headers > k);
        CHECK(h2_respond(&r, 2 * k + 1, "ok", false));
    }
    h2_to_eof(&r);
    free(f);
    rig_join(&r);
    CHECK_EQ_INT(r.max_open, 2);
    const struct h2b_load_stats *st = &r.w.stats;
    check_counts(&r,
                 &(struct want){.started = 4, .done = 4, .succeeded = 4, .data = 8, .conns = 1});
    CHECK_EQ_U64(st->server_max_streams, 0);
    rig_close(&r);
}

/* After the client reset a stream for a bad :status, the rest of that response (its other
 * fields, DATA and trailers already on their way) is ignored and not counted: the connection
 * goes on and the next request succeeds. */
static void h2_after_reset(const struct h2b__load_engine *eng)
{
    struct rig r;
    rig_open(&r, eng, (const char *[]){"-n", "2", "-m", "1", NULL});
    struct frame *f = malloc(sizeof *f);
    uint8_t out[256];
    CHECK(h2_accept(&r, NO_LIMIT));
    CHECK(h2_until(&r, H2B_F_HEADERS, f));
    size_t n = put_response_headers(&r, out, 1, "2x0", 2, false);
    CHECK(srv_write(&r, out, n, false));
    CHECK(h2_until(&r, H2B_F_RST, f));
    r.open--;
    uint64_t counted = r.block_bytes; /* the broken block's */
    n = put_frame(out, H2B_F_DATA, 0, 1, "xx", 2);
    nghttp2_nv trailer = {(uint8_t *)"x-checksum", (uint8_t *)"1", 10, 1, 0};
    uint8_t block[64];
    ssize_t bn = nghttp2_hd_deflate_hd(r.def, block, sizeof block, &trailer, 1);
    CHECK(bn > 0);
    n += put_frame(out + n, H2B_F_HEADERS, H2B_FL_END_HEADERS | H2B_FL_END_STREAM, 1, block,
                   (uint32_t)(bn > 0 ? bn : 0));
    CHECK(srv_write(&r, out, n, false));
    CHECK(h2_until(&r, H2B_F_HEADERS, f));
    CHECK_EQ_INT(f->sid, 3);
    CHECK(h2_respond(&r, 3, "ok", false));
    h2_to_eof(&r);
    free(f);
    rig_join(&r);
    CHECK_EQ_U64(r.goaway_code, UINT32_MAX);
    /* what h2load counts (nghttp2's callbacks): the field that broke the response, then only
     * the next response; nothing of the reset stream's other fields, DATA or trailers */
    CHECK_EQ_U64(r.w.stats.bytes_headers, r.block_bytes - counted);
    CHECK_EQ_U64(r.w.stats.bytes_headers_decomp, 7 + 3 + 7 + 3 + 14 + 1);
    check_counts(
        &r, &(struct want){
                .started = 2, .done = 1, .succeeded = 1, .protocol = 1, .data = 2, .conns = 1});
    rig_close(&r);
}

/* The server closes the connection with a request in flight: it fails (the connection died);
 * having had a response, the connection reconnects for the request it still owes. */
static void h2_server_close(const struct h2b__load_engine *eng)
{
    struct rig r;
    rig_open(&r, eng, (const char *[]){"-n", "3", "-m", "1", NULL});
    struct frame *f = malloc(sizeof *f);
    CHECK(h2_accept(&r, NO_LIMIT));
    CHECK(h2_until(&r, H2B_F_HEADERS, f));
    CHECK(h2_respond(&r, 1, "ok", false));
    CHECK(h2_until(&r, H2B_F_HEADERS, f));
    CHECK_EQ_INT(f->sid, 3);
    CHECK(h2_accept(&r, NO_LIMIT)); /* closes the first connection, takes the client's next */
    CHECK(h2_until(&r, H2B_F_HEADERS, f));
    CHECK_EQ_INT(f->sid, 1);
    CHECK(h2_respond(&r, 1, "ok", false));
    h2_to_eof(&r);
    free(f);
    rig_join(&r);
    check_counts(
        &r,
        &(struct want){.started = 3, .done = 2, .succeeded = 2, .died = 1, .data = 4, .conns = 2});
    rig_close(&r);
}

static void h2_cases(const char *name, const struct h2b__load_engine *eng)
{
    printf("engine %s\n", name);
    h2_hello(eng, false);
    h2_hello(eng, true);
    h2_one_stream(eng);
    h2_reset(eng);
    h2_bad_response(eng);
    h2_goaway(eng);
    h2_zero_streams(eng);
    h2_server_close(eng);
    h2_after_reset(eng);
    h2_malformed(eng, H2B_F_DATA, 4, NGHTTP2_PROTOCOL_ERROR);       /* DATA on stream 0 */
    h2_malformed(eng, H2B_F_SETTINGS, 5, NGHTTP2_FRAME_SIZE_ERROR); /* not a multiple of 6 */
    h2_flow(eng, 0);
    h2_flow(eng, 200);
    h2_interim(eng, false);
    h2_interim(eng, true);
}

/* ---- HTTP/1.1 and raw ------------------------------------------------------------------- */

/* Reads a request head (to its blank line) into buf. */
static bool h1_head(struct rig *r, char *buf, size_t cap)
{
    size_t n = 0;
    while (n + 1 < cap && srv_read(r, buf + n, 1)) {
        buf[++n] = '\0';
        if (n >= 4 && memcmp(buf + n - 4, "\r\n\r\n", 4) == 0)
            return true;
    }
    return false;
}

/* Two GETs on one keep-alive connection: a Content-Length response and a chunked one (whole or
 * byte by byte), 12 body bytes each. */
static void h1_hello(bool bytewise)
{
    static const char *const resp[2] = {
        "HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\nhello world\n",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n7\r\n world\n\r\n"
        "0\r\n\r\n"};
    struct rig r;
    rig_open(&r, &h2b__h1_engine, (const char *[]){"--h1", "-n", "2", NULL});
    char head[1024];
    CHECK(srv_accept(&r));
    for (int k = 0; k < 2; k++) {
        CHECK(h1_head(&r, head, sizeof head));
        CHECK(strncmp(head, "GET /hello HTTP/1.1\r\nHost: 127.0.0.1:1\r\n", 40) == 0);
        CHECK(strstr(head, "\r\nuser-agent: h2bench/test\r\n") != NULL);
        CHECK(srv_write(&r, resp[k], strlen(resp[k]), bytewise));
    }
    char c;
    CHECK(!srv_read(&r, &c, 1) && r.eof);
    rig_join(&r);
    check_counts(&r,
                 &(struct want){.started = 2, .done = 2, .succeeded = 2, .data = 24, .conns = 1});
    rig_close(&r);
}

/* "Connection: close" after a 100 Continue and the response: the client closes and, owing a
 * request, reconnects; the next response has neither length nor chunks, its body ends with the
 * server's close. Both succeed. */
static void h1_close(void)
{
    static const char first[] = "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nConnection: "
                                "close\r\nContent-Length: 2\r\n\r\nok";
    static const char second[] = "HTTP/1.1 200 OK\r\n\r\nuntil the close";
    struct rig r;
    rig_open(&r, &h2b__h1_engine, (const char *[]){"--h1", "-n", "2", NULL});
    char head[1024];
    CHECK(srv_accept(&r));
    CHECK(h1_head(&r, head, sizeof head));
    CHECK(srv_write(&r, first, sizeof first - 1, false));
    CHECK(!srv_read(&r, head, 1) && r.eof);
    CHECK(srv_accept(&r));
    CHECK(h1_head(&r, head, sizeof head));
    CHECK(srv_write(&r, second, sizeof second - 1, true));
    shutdown(r.fd, SHUT_WR);
    CHECK(!srv_read(&r, head, 1) && r.eof);
    rig_join(&r);
    const struct h2b_load_stats *st = &r.w.stats;
    check_counts(
        &r, &(struct want){.started = 2, .done = 2, .succeeded = 2, .data = 2 + 15, .conns = 2});
    CHECK_EQ_U64(st->status[100], 0);
    rig_close(&r);
}

/* A response the engine cannot take: counted as a protocol error, the connection ends. */
static void serial_broken(const struct h2b__load_engine *eng, const char *const *opts,
                          size_t req_len, const char *resp)
{
    struct rig r;
    rig_open(&r, eng, opts);
    char req[1024];
    CHECK(srv_accept(&r));
    CHECK(req_len ? srv_read(&r, req, req_len) : h1_head(&r, req, sizeof req));
    CHECK(srv_write(&r, resp, strlen(resp), false));
    char c;
    CHECK(!srv_read(&r, &c, 1) && r.eof);
    rig_join(&r);
    check_counts(&r, &(struct want){.started = 1, .protocol = 1, .conns = 1});
    rig_close(&r);
}

/* --raw 10:20: each request is 10 zero bytes, each response 20 bytes (whole, then byte by
 * byte), a success with status 200. */
static void raw_hello(void)
{
    struct rig r;
    rig_open(&r, &h2b__raw_engine, (const char *[]){"--raw", "10:20", "-n", "2", NULL});
    uint8_t req[10], zero[10] = {0};
    char resp[21];
    memset(resp, 'x', 20);
    CHECK(srv_accept(&r));
    for (int k = 0; k < 2; k++) {
        CHECK(srv_read(&r, req, sizeof req));
        CHECK(memcmp(req, zero, sizeof req) == 0);
        CHECK(srv_write(&r, resp, 20, k == 1));
    }
    char c;
    CHECK(!srv_read(&r, &c, 1) && r.eof);
    rig_join(&r);
    check_counts(&r,
                 &(struct want){.started = 2, .done = 2, .succeeded = 2, .data = 40, .conns = 1});
    rig_close(&r);
}

int main(void)
{
    h2_cases("fast", &h2b__h2_fast_engine);
    h2_cases("nghttp2", &h2b__h2_engine);
    printf("engine h1\n");
    h1_hello(false);
    h1_hello(true);
    h1_close();
    serial_broken(&h2b__h1_engine, (const char *[]){"--h1", "-n", "1", NULL}, 0,
                  "HTTP/1.1 2x0 OK\r\nContent-Length: 0\r\n\r\n");
    printf("engine raw\n");
    raw_hello();
    serial_broken(&h2b__raw_engine, (const char *[]){"--raw", "10:20", "-n", "1", NULL}, 10,
                  "0123456789012345678901234");
    return test_report();
}
