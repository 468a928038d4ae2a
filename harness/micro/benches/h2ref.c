/*
 * h2ref.c - h2ref/route-and-respond: the reference server's own request-to-response path
 * (servers/h2ref/conn.c, socket-free), exactly the code `h2bench serve` runs per request.
 *
 * One op feeds a GET /hello HEADERS frame through h2b_conn_recv (nghttp2 decode, the server's
 * header callbacks and router, response submission), gathers the output iovecs the server
 * would write and reports them sent. Each op checks that the server answered (its request
 * counter advanced) and that the stream is closed again (no streams open). The server clock is
 * set once in setup, so the Date header, and with it the work per op, is constant.
 */
#include "core/clock.h"
#include "h2ref/conn.h"
#include "h2bench/micro.h"
#include "micro/benches/h2conn.h"

#include <stdlib.h>
#include <string.h>

struct route {
    struct h2b_conn_ctx *ctx;
    struct h2b_conn *conn;
    uint8_t req[512];
    size_t req_len;
    int32_t next_id;
    uint64_t credit;
};

/* Takes everything the server wants to send; returns the byte count or -1. */
static long long drain(struct h2b_conn *c)
{
    long long total = 0;
    for (;;) {
        const struct iovec *iov;
        int n = h2b_conn_output(c, &iov);
        if (n < 0)
            return -1;
        if (n == 0)
            return total;
        size_t bytes = 0;
        for (int i = 0; i < n; i++)
            bytes += iov[i].iov_len;
        h2b_conn_sent(c, bytes);
        total += (long long)bytes;
    }
}

static void route_teardown(struct h2b_micro_state *st)
{
    struct route *r = h2b_micro_data(st);
    if (!r)
        return;
    h2b_conn_del(r->conn);
    h2b_conn_ctx_del(r->ctx);
    free(r);
}

static int route_setup(struct h2b_micro_state *st)
{
    struct route *r = calloc(1, sizeof *r);
    if (!r)
        goto fail;
    h2b_micro_set_data(st, r);
    struct h2b_conn_config cfg;
    h2b_conn_config_defaults(&cfg);
    if (h2b_conn_ctx_new(&r->ctx, &cfg) != 0)
        goto fail;
    h2b_conn_ctx_tick(r->ctx, h2b_clock_now_ns());
    if (h2b_conn_new(&r->conn, r->ctx, NULL) != 0)
        goto fail;
    /* client preface, SETTINGS (initial window 1 GiB), connection WINDOW_UPDATE, SETTINGS ACK */
    uint8_t pre[128];
    size_t n = strlen(NGHTTP2_CLIENT_MAGIC);
    memcpy(pre, NGHTTP2_CLIENT_MAGIC, n);
    h2c_frame_header(pre + n, 6, NGHTTP2_SETTINGS, 0, 0);
    const uint8_t window[6] = {0, NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, 0x40, 0, 0, 0};
    memcpy(pre + n + 9, window, 6);
    n += 15;
    h2c_window_update(pre + n, 0, (1u << 30) - 65535);
    n += 13;
    h2c_frame_header(pre + n, 0, NGHTTP2_SETTINGS, NGHTTP2_FLAG_ACK, 0);
    n += 9;
    if (h2b_conn_recv(r->conn, pre, n) != 0 || drain(r->conn) <= 0)
        goto fail;
    r->req_len = h2c_request_headers(r->req, sizeof r->req, "GET", "/hello", 0);
    if (r->req_len == 0)
        goto fail;
    r->next_id = 1;
    r->credit = (1u << 30) - 65535;
    return 0;
fail:
    route_teardown(st);
    h2b_micro_fail(st, "cannot set up a reference server connection");
    return -1;
}

static void route_run(struct h2b_micro_state *st, uint64_t n)
{
    struct route *r = h2b_micro_data(st);
    const struct h2b_stats *stats = h2b_conn_ctx_stats(r->ctx);
    for (uint64_t i = 0; i < n; i++) {
        if (r->next_id > 0x7ffffff0) {
            h2b_micro_fail(st, "stream ids exhausted");
            return;
        }
        h2c_set_stream(r->req, r->next_id);
        r->next_id += 2;
        uint64_t answered = stats->v[H2B_STAT_REQUESTS];
        long long out;
        if (h2b_conn_recv(r->conn, r->req, r->req_len) != 0 || (out = drain(r->conn)) <= 0 ||
            stats->v[H2B_STAT_REQUESTS] != answered + 1 || stats->v[H2B_STAT_STREAMS_OPEN] != 0) {
            h2b_micro_fail(st, "GET /hello on stream %d was not answered and closed",
                           (int)(r->next_id - 2));
            return;
        }
        /* the response body is flow-controlled: give the credit back when it runs low */
        r->credit -= (uint64_t)out;
        if (r->credit < (1u << 29)) {
            uint8_t wu[13];
            h2c_window_update(wu, 0, 1u << 29);
            if (h2b_conn_recv(r->conn, wu, sizeof wu) != 0) {
                h2b_micro_fail(st, "WINDOW_UPDATE rejected");
                return;
            }
            r->credit += 1u << 29;
        }
    }
}

H2B_MICRO_BENCH(route_and_respond, .name = "h2ref/route-and-respond", .fn = route_run,
                .setup = route_setup, .teardown = route_teardown)
