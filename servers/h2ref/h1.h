/*
 * h1.h - the reference server's HTTP/1.1 connection, without sockets.
 *
 * struct h2b_h1 is driven exactly like struct h2b_conn (conn.h): feed received bytes with
 * h2b_h1_recv, collect output with h2b_h1_output/h2b_h1_sent, close when h2b_h1_done. conn.c
 * owns one when the first bytes of a cleartext connection are not the HTTP/2 client preface,
 * or when TLS negotiated ALPN "http/1.1", and forwards its API calls here; the server loop does
 * not know which protocol a connection speaks. struct h2b_h1_ctx is per thread (timers,
 * buffer free list), owned by the h2b_conn_ctx.
 */
#ifndef H2B_H2REF_H1_H
#define H2B_H2REF_H1_H

#include "h2ref/conn.h"
#include "h2ref/stats.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

struct h2b_h1;
struct h2b_h1_ctx;

/* Creates the per-thread context. stats and date (a NUL-terminated IMF-fixdate that the
 * owner keeps current) are borrowed for the ctx's life. Returns H2B_OK or H2B_ERR_NOMEM. */
int h2b_h1_ctx_new(struct h2b_h1_ctx **out, const struct h2b_conn_config *cfg,
                   struct h2b_stats *stats, const char *date);
void h2b_h1_ctx_del(struct h2b_h1_ctx *ctx);
void h2b_h1_ctx_set_stats_fn(struct h2b_h1_ctx *ctx, h2b_conn_stats_fn fn, void *arg);

/* Runs due timers (/delay responses, idle and slow-client timeouts); connections that gained
 * output or finished are marked dirty through their owner (h2b_conn_mark_dirty). */
void h2b_h1_ctx_tick(struct h2b_h1_ctx *ctx, uint64_t now_ns);
uint64_t h2b_h1_ctx_next_deadline(const struct h2b_h1_ctx *ctx);

/* A connection; owner is the h2b_conn that forwards to it (marked dirty on timer output). */
int h2b_h1_new(struct h2b_h1 **out, struct h2b_h1_ctx *ctx, struct h2b_conn *owner);
void h2b_h1_del(struct h2b_h1 *h);

/* As h2b_conn_recv/output/sent/done/fatal/shutdown. */
int h2b_h1_recv(struct h2b_h1 *h, const uint8_t *data, size_t len);
int h2b_h1_output(struct h2b_h1 *h, const struct iovec **iov);
void h2b_h1_sent(struct h2b_h1 *h, size_t n);
bool h2b_h1_done(const struct h2b_h1 *h);
bool h2b_h1_fatal(const struct h2b_h1 *h);
void h2b_h1_shutdown(struct h2b_h1 *h);
/* The peer closed its side (conn.h's h2b_conn_input_closed): with no request in progress the
 * connection is done at once; a request already read is answered first (a /delay waits for its
 * timer, pipelined complete requests are answered in order), then it is done. A head or body
 * left incomplete can never complete, so it ends the connection once the output is out. */
void h2b_h1_input_closed(struct h2b_h1 *h);

#endif
