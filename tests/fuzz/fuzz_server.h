/*
 * fuzz_server.h - drives the reference server's real connection code (servers/h2ref/conn.h) with
 * fuzz input: one connection per input in a context kept across inputs (as a worker keeps it),
 * the input fed in pieces, output drained as a socket would, and the clock advanced so that
 * timers (/delay, idle and slow-client timeouts) fire.
 */
#ifndef H2B_FUZZ_SERVER_H
#define H2B_FUZZ_SERVER_H

#include "h2ref/conn.h"
#include "core/error.h"

#include <stdlib.h>
#include <string.h>

static void fuzz_server_drain(struct h2b_conn *c)
{
    for (int turn = 0; turn < 64; turn++) {
        const struct iovec *iov;
        int n = h2b_conn_output(c, &iov);
        if (n <= 0)
            return;
        size_t total = 0;
        for (int i = 0; i < n; i++)
            total += iov[i].iov_len;
        h2b_conn_sent(c, total);
    }
}

/* The protocol each fresh connection is set to (fuzz_server_h1 picks H2B_PROTO_DETECT). */
static enum h2b_conn_proto fuzz_server_proto = H2B_PROTO_H2;

/* Feeds prefix (may be empty) then data to a fresh connection. */
static void fuzz_server_run(const uint8_t *prefix, size_t prefix_len, const uint8_t *data,
                            size_t size)
{
    static struct h2b_conn_ctx *ctx;
    static uint64_t now = 1000000000ULL;
    if (ctx == NULL) {
        struct h2b_conn_config cfg;
        h2b_conn_config_defaults(&cfg);
#ifdef H2B_FUZZ_ENGINE /* the HTTP/2 engine a target names (tests/fuzz/CMakeLists.txt) */
        cfg.engine = H2B_FUZZ_ENGINE;
#endif
        if (h2b_conn_ctx_new(&ctx, &cfg) != H2B_OK)
            abort();
    }
    h2b_conn_ctx_tick(ctx, now);
    struct h2b_conn *c;
    if (h2b_conn_new(&c, ctx, NULL) != H2B_OK)
        return;
    if (h2b_conn_set_proto(c, fuzz_server_proto) != H2B_OK) {
        h2b_conn_del(c);
        return;
    }
    int rv = prefix_len ? h2b_conn_recv(c, prefix, prefix_len) : H2B_OK;
    fuzz_server_drain(c);
    /* Pieces of varying size, as reads of a socket deliver them. */
    size_t off = 0, piece = 1;
    while (rv == H2B_OK && off < size && !h2b_conn_done(c)) {
        size_t n = size - off < piece ? size - off : piece;
        rv = h2b_conn_recv(c, data + off, n);
        off += n;
        piece = piece * 3 + 7;
        fuzz_server_drain(c);
    }
    /* Let timers run: /delay answers, then idle and slow-client timeouts. */
    for (int step = 0; rv == H2B_OK && step < 4 && !h2b_conn_done(c); step++) {
        now += 3000000000ULL;
        h2b_conn_ctx_tick(ctx, now);
        struct h2b_conn *d;
        while ((d = h2b_conn_ctx_pop_dirty(ctx)) != NULL)
            fuzz_server_drain(d);
    }
    now += 1000000ULL;
    h2b_conn_del(c);
    struct h2b_conn *stale;
    while ((stale = h2b_conn_ctx_pop_dirty(ctx)) != NULL)
        (void)stale; /* c was the only connection; nothing may point at it now */
}

#endif
