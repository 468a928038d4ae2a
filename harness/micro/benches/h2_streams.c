/*
 * h2_streams.c - server-side stream work through a real nghttp2 session, no sockets:
 *
 *   h2/stream-lifecycle         GET HEADERS in, response HEADERS + 32-byte body out, stream
 *                               closed and its pooled state returned; one op = one stream.
 *   h2/post-1k-lifecycle        the same with a POST carrying 1 KiB of DATA (the session sends
 *                               WINDOW_UPDATEs for the received data as a server would).
 *   h2/stream-1mib-response     GET in, a 1 MiB response streamed out in 16 KiB DATA frames
 *                               (with the client's WINDOW_UPDATE that pays for it).
 *   h2/response-encoding/N      N live streams with streaming responses; one op = one encoding
 *                               pass writing a 256-byte DATA frame on each of the N streams.
 *
 * The client's bytes are canned once in setup (stateless HPACK) and only the stream id is
 * patched per op, so every op does the same work. Connection flow-control credit is topped up
 * in one frame when it runs low, far less often than once per op, except where paying for the
 * data is part of the op (1 MiB response).
 */
#include "h2bench/micro.h"
#include "micro/benches/h2conn.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

enum kind { GET_SMALL, POST_1K, GET_1MIB };

struct streams {
    struct h2c_conn conn;
    enum kind kind;
    uint8_t req[2048]; /* [WINDOW_UPDATE] HEADERS [DATA] */
    size_t req_len;
    size_t headers_at, data_at; /* offsets of the frames whose stream id is patched */
    uint64_t credit;            /* connection window the client has left to give */
};

#define MIB (1024u * 1024u)
#define CREDIT_TOPUP (1u << 29)

static int streams_setup(struct h2b_micro_state *st)
{
    enum kind kind = (enum kind)(intptr_t)h2b_micro_arg(st);
    struct streams *s = calloc(1, sizeof *s);
    if (!s) {
        h2b_micro_fail(st, "out of memory");
        return -1;
    }
    s->kind = kind;
    uint64_t body = kind == GET_1MIB ? MIB : 32;
    if (h2c_open(&s->conn, 0x7fffffff, body, H2C_BODY_FIXED) != 0) {
        free(s);
        h2b_micro_fail(st, "cannot open the nghttp2 session");
        return -1;
    }
    size_t n = 0;
    if (kind == GET_1MIB) {
        h2c_window_update(s->req, 0, MIB);
        n = 13;
    }
    s->headers_at = n;
    size_t h = h2c_request_headers(s->req + n, sizeof s->req - n, kind == POST_1K ? "POST" : "GET",
                                   kind == POST_1K ? "/upload" : "/index.html",
                                   kind == POST_1K ? 1024 : 0);
    n += h;
    if (kind == POST_1K) {
        s->data_at = n;
        h2c_frame_header(s->req + n, 1024, NGHTTP2_DATA, NGHTTP2_FLAG_END_STREAM, 1);
        memset(s->req + n + 9, 'x', 1024);
        n += 9 + 1024;
    }
    s->req_len = n;
    s->credit = (1u << 30) - 65535;
    h2b_micro_set_data(st, s);
    return 0;
}

static void streams_teardown(struct h2b_micro_state *st)
{
    struct streams *s = h2b_micro_data(st);
    if (!s)
        return;
    h2c_close(&s->conn);
    free(s);
}

static void streams_run(struct h2b_micro_state *st, uint64_t n)
{
    struct streams *s = h2b_micro_data(st);
    struct h2c_conn *c = &s->conn;
    uint64_t per_op_body = s->kind == GET_1MIB ? 0 : c->response_body;
    for (uint64_t i = 0; i < n; i++) {
        int32_t id = c->next_stream_id;
        if (id > 0x7ffffff0) {
            h2b_micro_fail(st, "stream ids exhausted");
            return;
        }
        c->next_stream_id += 2;
        h2c_set_stream(s->req + s->headers_at, id);
        if (s->data_at)
            h2c_set_stream(s->req + s->data_at, id);
        uint64_t closed = c->closed;
        if (h2c_feed(c, s->req, s->req_len) != 0 || h2c_drain(c) != 0 || c->closed != closed + 1) {
            h2b_micro_fail(st, "stream %d did not complete", (int)id);
            return;
        }
        s->credit -= per_op_body;
        if (s->credit < CREDIT_TOPUP) {
            uint8_t wu[13];
            h2c_window_update(wu, 0, CREDIT_TOPUP);
            if (h2c_feed(c, wu, sizeof wu) != 0) {
                h2b_micro_fail(st, "WINDOW_UPDATE rejected");
                return;
            }
            s->credit += CREDIT_TOPUP;
        }
    }
}

H2B_MICRO_BENCH(stream_lifecycle, .name = "h2/stream-lifecycle", .fn = streams_run,
                .setup = streams_setup, .teardown = streams_teardown, .arg = (void *)GET_SMALL)
H2B_MICRO_BENCH(post_1k, .name = "h2/post-1k-lifecycle", .fn = streams_run, .setup = streams_setup,
                .teardown = streams_teardown, .arg = (void *)POST_1K)
H2B_MICRO_BENCH(stream_1mib, .name = "h2/stream-1mib-response", .fn = streams_run,
                .setup = streams_setup, .teardown = streams_teardown, .arg = (void *)GET_1MIB)

/* --- h2/response-encoding/N ------------------------------------------------------------------ */

#define CHUNK 256

struct encoding {
    struct h2c_conn conn;
    int live;
    uint8_t credit_frame[13]; /* connection WINDOW_UPDATE paying for one pass */
    uint8_t *stream_credit;   /* live stream WINDOW_UPDATEs, for the rare top-up */
    uint64_t stream_spent;    /* bytes sent per stream since the last top-up */
};

static int encoding_setup(struct h2b_micro_state *st)
{
    int live = (int)h2b_micro_param(st);
    struct encoding *e = calloc(1, sizeof *e);
    uint8_t *req = malloc(512);
    if (!e || !req || live < 1 || live > H2C_POOL)
        goto fail;
    e->live = live;
    e->stream_credit = malloc((size_t)live * 13);
    if (!e->stream_credit || h2c_open(&e->conn, 0x7fffffff, 0, H2C_BODY_DEFERRED) != 0)
        goto fail;
    size_t len = h2c_request_headers(req, 512, "GET", "/events", 0);
    for (int i = 0; i < live; i++) {
        int32_t id = 1 + 2 * i;
        h2c_set_stream(req, id);
        if (len == 0 || h2c_feed(&e->conn, req, len) != 0)
            goto fail_conn;
        h2c_window_update(e->stream_credit + 13 * i, id, 1u << 30);
    }
    if (h2c_drain(&e->conn) != 0 || e->conn.requests != (uint64_t)live)
        goto fail_conn;
    h2c_window_update(e->credit_frame, 0, (uint32_t)(live * CHUNK));
    free(req);
    h2b_micro_set_data(st, e);
    return 0;
fail_conn:
    h2c_close(&e->conn);
fail:
    if (e)
        free(e->stream_credit);
    free(e);
    free(req);
    h2b_micro_fail(st, "cannot open %d live streams", live);
    return -1;
}

static void encoding_teardown(struct h2b_micro_state *st)
{
    struct encoding *e = h2b_micro_data(st);
    if (!e)
        return;
    h2c_close(&e->conn);
    free(e->stream_credit);
    free(e);
}

static void encoding_run(struct h2b_micro_state *st, uint64_t n)
{
    struct encoding *e = h2b_micro_data(st);
    struct h2c_conn *c = &e->conn;
    const uint64_t expect = (uint64_t)e->live * (9 + CHUNK);
    for (uint64_t i = 0; i < n; i++) {
        uint64_t before = c->out_bytes;
        for (int k = 0; k < e->live; k++) {
            if (h2c_push_body(c, 1 + 2 * k, CHUNK) != 0) {
                h2b_micro_fail(st, "stream %d is gone", 1 + 2 * k);
                return;
            }
        }
        if (h2c_drain(c) != 0 || c->out_bytes - before != expect ||
            h2c_feed(c, e->credit_frame, sizeof e->credit_frame) != 0) {
            h2b_micro_fail(st, "encoding pass wrote %llu bytes, expected %llu",
                           (unsigned long long)(c->out_bytes - before), (unsigned long long)expect);
            return;
        }
        e->stream_spent += CHUNK;
        if (e->stream_spent >= (1u << 30)) {
            if (h2c_feed(c, e->stream_credit, (size_t)e->live * 13) != 0) {
                h2b_micro_fail(st, "stream WINDOW_UPDATE rejected");
                return;
            }
            e->stream_spent = 0;
        }
    }
}

H2B_MICRO_BENCH(response_encoding, .name = "h2/response-encoding", .params = "1,8,64,256",
                .fn = encoding_run, .setup = encoding_setup, .teardown = encoding_teardown)
