/*
 * test_h2ref_engines.c - the reference server's protocol engines through their one interface
 * (servers/h2ref/engine.h), no sockets and no connection core: a scripted client byte stream
 * goes in through recv, the frames that come out of output are parsed and checked.
 *
 * Both HTTP/2 engines (h2b_h2_fast_engine, h2b_h2_nghttp2_engine) run the same cases and must
 * give the same answers: the server preface, GET /hello (status 200 and its body, fed whole and
 * one byte at a time), PING answered with the same payload, a HEADERS frame on an even stream id
 * (GOAWAY PROTOCOL_ERROR), a bad preface (the connection fails), a graceful shutdown (GOAWAY
 * NO_ERROR, then done) and the peer's FIN. The HTTP/1.1 engine runs GET /hello through the same
 * calls. Rejected: driving the engines through conn.h (test_h2ref_conn.c does, with an nghttp2
 * client; this file is about the table every engine fills).
 */
#include "core/error.h"
#include "core/pool.h"
#include "h2ref/engine.h"
#include "h2ref/h1.h"
#include "h2ref/h2_fast.h"
#include "h2ref/h2_nghttp2.h"
#include "test.h"

#include <nghttp2/nghttp2.h>
#include <stdbool.h>
#include <string.h>

#define OUT_MAX (256 * 1024)

static const uint8_t preface[] = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

/* One engine under test: its context on an env of our own. */
struct rig {
    const struct h2b_engine *eng;
    struct h2b_conn_config cfg;
    struct h2b_stats stats;
    struct h2b_pool pool;
    struct h2b_engine_env env;
    struct h2b_dirty dirty; /* the connection's place in env.dirty */
    void *ectx;
    void *e;
    uint8_t out[OUT_MAX]; /* everything output gave, in order */
    size_t out_len;
};

static void rig_open(struct rig *r, const struct h2b_engine *eng)
{
    memset(r, 0, sizeof *r);
    r->eng = eng;
    h2b_conn_config_defaults(&r->cfg);
    h2b_pool_init(&r->pool);
    r->env = (struct h2b_engine_env){.cfg = &r->cfg,
                                     .stats = &r->stats,
                                     .date = "Fri, 04 Dec 2026 23:00:00 GMT",
                                     .pool = &r->pool};
    h2b_list_init(&r->env.dirty);
    CHECK_EQ_INT(eng->ctx_new(&r->ectx, &r->env), H2B_OK);
    CHECK_EQ_INT(eng->conn_new(&r->e, r->ectx, &r->dirty), H2B_OK);
}

static void rig_close(struct rig *r)
{
    r->eng->del(r->e);
    r->eng->ctx_del(r->ectx);
    h2b_pool_free(&r->pool);
}

/* Takes all the output the engine has, as a socket that writes everything would. */
static void drain(struct rig *r)
{
    for (int guard = 0; guard < 64; guard++) {
        const struct iovec *iov;
        int n = r->eng->output(r->e, &iov);
        if (n <= 0)
            return;
        size_t total = 0;
        for (int i = 0; i < n; i++) {
            if (r->out_len + iov[i].iov_len <= OUT_MAX) {
                memcpy(r->out + r->out_len, iov[i].iov_base, iov[i].iov_len);
                r->out_len += iov[i].iov_len;
            }
            total += iov[i].iov_len;
        }
        r->eng->sent(r->e, total);
    }
}

static int feed(struct rig *r, const uint8_t *p, size_t n, bool bytewise)
{
    int rv = H2B_OK;
    if (!bytewise)
        return r->eng->recv(r->e, p, n);
    for (size_t i = 0; i < n && rv == H2B_OK; i++)
        rv = r->eng->recv(r->e, p + i, 1);
    return rv;
}

/* ---- a client's bytes ---- */

static size_t frame(uint8_t *p, uint8_t type, uint8_t flags, uint32_t id, const void *pay,
                    uint32_t len)
{
    p[0] = (uint8_t)(len >> 16), p[1] = (uint8_t)(len >> 8), p[2] = (uint8_t)len;
    p[3] = type, p[4] = flags;
    p[5] = (uint8_t)(id >> 24), p[6] = (uint8_t)(id >> 16), p[7] = (uint8_t)(id >> 8);
    p[8] = (uint8_t)id;
    if (len)
        memcpy(p + 9, pay, len);
    return 9 + len;
}

/* The client preface and an empty SETTINGS. */
static size_t client_start(uint8_t *p)
{
    memcpy(p, preface, 24);
    return 24 + frame(p + 24, NGHTTP2_SETTINGS, 0, 0, NULL, 0);
}

/* HEADERS for GET /hello on stream id: :method GET (static 2), :scheme http (6), :path
 * "/hello" (literal, name index 4), :authority "t" (literal, name index 1). */
static size_t get_hello(uint8_t *p, uint32_t id)
{
    static const uint8_t block[] = {0x82, 0x86, 0x04, 6,    '/', 'h', 'e',
                                    'l',  'l',  'o',  0x01, 1,   't'};
    return frame(p, NGHTTP2_HEADERS, NGHTTP2_FLAG_END_HEADERS | NGHTTP2_FLAG_END_STREAM, id, block,
                 sizeof block);
}

/* ---- the server's frames ---- */

struct seen {
    bool settings, settings_ack, ping_ack, goaway, headers, data_end, bad_framing;
    uint32_t max_streams;  /* from the server's SETTINGS */
    uint32_t goaway_error; /* the GOAWAY's error code */
    uint8_t ping[8];
    int status;     /* :status of stream 1's response */
    char body[256]; /* stream 1's DATA */
    size_t body_len;
};

static void decode_status(struct seen *s, nghttp2_hd_inflater *inf, const uint8_t *p, size_t n)
{
    for (;;) {
        nghttp2_nv nv;
        int fl = 0;
        ssize_t k = nghttp2_hd_inflate_hd2(inf, &nv, &fl, p, n, 1);
        if (k < 0) {
            s->bad_framing = true;
            return;
        }
        p += k, n -= (size_t)k;
        if ((fl & NGHTTP2_HD_INFLATE_EMIT) && nv.namelen == 7 &&
            memcmp(nv.name, ":status", 7) == 0 && nv.valuelen == 3)
            s->status = (nv.value[0] - '0') * 100 + (nv.value[1] - '0') * 10 + (nv.value[2] - '0');
        if (fl & NGHTTP2_HD_INFLATE_FINAL) {
            nghttp2_hd_inflate_end_headers(inf);
            return;
        }
        if (k == 0 && n == 0)
            return;
    }
}

static void one_frame(struct seen *s, nghttp2_hd_inflater *inf, const uint8_t *f, uint32_t len)
{
    uint8_t type = f[3], flags = f[4];
    uint32_t id =
        ((uint32_t)(f[5] & 0x7f) << 24) | ((uint32_t)f[6] << 16) | (uint32_t)f[7] << 8 | f[8];
    const uint8_t *p = f + 9;
    if (type == NGHTTP2_SETTINGS && (flags & NGHTTP2_FLAG_ACK)) {
        s->settings_ack = true;
    } else if (type == NGHTTP2_SETTINGS) {
        s->settings = true;
        for (uint32_t i = 0; i + 6 <= len; i += 6)
            if (((p[i] << 8) | p[i + 1]) == NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS)
                s->max_streams = (uint32_t)p[i + 2] << 24 | (uint32_t)p[i + 3] << 16 |
                                 (uint32_t)p[i + 4] << 8 | p[i + 5];
    } else if (type == NGHTTP2_PING && (flags & NGHTTP2_FLAG_ACK) && len == 8) {
        s->ping_ack = true;
        memcpy(s->ping, p, 8);
    } else if (type == NGHTTP2_GOAWAY && len >= 8) {
        s->goaway = true;
        s->goaway_error = (uint32_t)p[4] << 24 | (uint32_t)p[5] << 16 | (uint32_t)p[6] << 8 | p[7];
    } else if (type == NGHTTP2_HEADERS && id == 1) {
        s->headers = true;
        decode_status(s, inf, p, len);
    } else if (type == NGHTTP2_DATA && id == 1) {
        if (s->body_len + len <= sizeof s->body) {
            memcpy(s->body + s->body_len, p, len);
            s->body_len += len;
        }
        if (flags & NGHTTP2_FLAG_END_STREAM)
            s->data_end = true;
    }
}

/* Parses the server's frames in r->out. */
static struct seen parse(const struct rig *r)
{
    struct seen s;
    memset(&s, 0, sizeof s);
    nghttp2_hd_inflater *inf;
    if (nghttp2_hd_inflate_new(&inf) != 0) {
        s.bad_framing = true;
        return s;
    }
    size_t i = 0;
    while (i + 9 <= r->out_len) {
        const uint8_t *f = r->out + i;
        uint32_t len = (uint32_t)f[0] << 16 | (uint32_t)f[1] << 8 | f[2];
        if (i + 9 + len > r->out_len)
            break;
        one_frame(&s, inf, f, len);
        i += 9 + len;
    }
    if (i != r->out_len)
        s.bad_framing = true; /* a frame cut off */
    nghttp2_hd_inflate_del(inf);
    return s;
}

/* ---- cases, each run against both HTTP/2 engines ---- */

static void case_hello(const struct h2b_engine *eng, bool bytewise)
{
    static struct rig r;
    rig_open(&r, eng);
    uint8_t in[256];
    size_t n = client_start(in);
    n += get_hello(in + n, 1);
    CHECK_EQ_INT(feed(&r, in, n, bytewise), H2B_OK);
    drain(&r);
    struct seen s = parse(&r);
    CHECK(!s.bad_framing);
    CHECK(s.settings);
    CHECK_EQ_U64(s.max_streams, r.cfg.max_streams);
    CHECK(s.settings_ack);
    CHECK(s.headers);
    CHECK_EQ_INT(s.status, 200);
    CHECK(s.data_end);
    CHECK_EQ_U64(s.body_len, 13);
    CHECK(memcmp(s.body, "Hello, World!", 13) == 0);
    CHECK(!s.goaway);
    CHECK(!eng->fatal(r.e));
    CHECK(!eng->done(r.e)); /* the client may send more */
    CHECK_EQ_U64(r.stats.v[H2B_STAT_REQUESTS], 1);
    CHECK_EQ_U64(r.stats.v[H2B_STAT_STREAMS_OPEN], 0); /* released once answered */
    /* The peer's FIN: nothing in flight, so the connection is done. */
    eng->input_closed(r.e);
    drain(&r);
    CHECK(eng->done(r.e));
    rig_close(&r);
}

static void case_ping(const struct h2b_engine *eng)
{
    static struct rig r;
    rig_open(&r, eng);
    uint8_t in[128];
    size_t n = client_start(in);
    n += frame(in + n, NGHTTP2_PING, 0, 0, "abcdefgh", 8);
    CHECK_EQ_INT(feed(&r, in, n, false), H2B_OK);
    drain(&r);
    struct seen s = parse(&r);
    CHECK(!s.bad_framing);
    CHECK(s.ping_ack);
    CHECK(memcmp(s.ping, "abcdefgh", 8) == 0);
    rig_close(&r);
}

static void case_even_stream(const struct h2b_engine *eng)
{
    static struct rig r;
    rig_open(&r, eng);
    uint8_t in[256];
    size_t n = client_start(in);
    n += get_hello(in + n, 2); /* clients open odd ids only (RFC 9113 5.1.1) */
    feed(&r, in, n, false);
    drain(&r);
    struct seen s = parse(&r);
    CHECK(s.goaway || eng->fatal(r.e));
    if (s.goaway)
        CHECK_EQ_U64(s.goaway_error, NGHTTP2_PROTOCOL_ERROR);
    CHECK(!s.headers);
    CHECK(eng->done(r.e));
    rig_close(&r);
}

static void case_bad_preface(const struct h2b_engine *eng)
{
    static struct rig r;
    rig_open(&r, eng);
    static const uint8_t junk[] = "PRI * HTTP/1.1\r\n\r\nXX\r\n\r\n";
    feed(&r, junk, sizeof junk - 1, false);
    drain(&r);
    struct seen s = parse(&r);
    CHECK(eng->fatal(r.e) || (s.goaway && s.goaway_error == NGHTTP2_PROTOCOL_ERROR));
    CHECK(!s.headers);
    CHECK(eng->done(r.e));
    rig_close(&r);
}

static void case_shutdown(const struct h2b_engine *eng)
{
    static struct rig r;
    rig_open(&r, eng);
    uint8_t in[128];
    size_t n = client_start(in);
    CHECK_EQ_INT(feed(&r, in, n, false), H2B_OK);
    drain(&r);
    CHECK(h2b_list_empty(&r.env.dirty));
    eng->shutdown(r.e);
    CHECK(r.env.dirty.next == &r.dirty.link); /* marked for the core to flush */
    CHECK(h2b_list_linked(&r.dirty.link));
    drain(&r);
    struct seen s = parse(&r);
    CHECK(s.goaway);
    CHECK_EQ_U64(s.goaway_error, NGHTTP2_NO_ERROR);
    CHECK(!eng->fatal(r.e));
    CHECK(eng->done(r.e));
    rig_close(&r);
}

/* HTTP/1.1 through the same table. */
static void case_h1_hello(void)
{
    static struct rig r;
    rig_open(&r, &h2b_h1_engine);
    static const char req[] = "GET /hello HTTP/1.1\r\nHost: t\r\n\r\n";
    CHECK_EQ_INT(feed(&r, (const uint8_t *)req, sizeof req - 1, true), H2B_OK);
    drain(&r);
    r.out[r.out_len < OUT_MAX ? r.out_len : OUT_MAX - 1] = 0;
    const char *text = (const char *)r.out;
    CHECK(strncmp(text, "HTTP/1.1 200 ", 13) == 0);
    CHECK(strstr(text, "\r\n\r\nHello, World!") != NULL);
    CHECK(!h2b_h1_engine.fatal(r.e));
    h2b_h1_engine.input_closed(r.e);
    drain(&r);
    CHECK(h2b_h1_engine.done(r.e));
    rig_close(&r);
}

int main(void)
{
    const struct h2b_engine *h2[] = {&h2b_h2_fast_engine, &h2b_h2_nghttp2_engine};
    for (size_t i = 0; i < sizeof h2 / sizeof h2[0]; i++) {
        int before = test_failed;
        case_hello(h2[i], false);
        case_hello(h2[i], true);
        case_ping(h2[i]);
        case_even_stream(h2[i]);
        case_bad_preface(h2[i]);
        case_shutdown(h2[i]);
        if (test_failed != before)
            fprintf(stderr, "engine %s failed\n", h2[i]->name);
    }
    case_h1_hello();
    return test_report();
}
