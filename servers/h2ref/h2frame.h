/*
 * h2frame.h - the reference server's own-framing HTTP/2 engine (`h2bench serve --engine fast`).
 *
 * struct h2b_h2s is one server-side HTTP/2 connection whose frames are read and written by our
 * code (h2frame.c), with libnghttp2 used only for HPACK decoding. It is driven exactly like
 * struct h2b_conn (conn.h): conn.c owns one in place of an nghttp2_session when the
 * configuration asks for H2B_ENGINE_FAST and forwards its API calls here, so the server loop,
 * TLS and the h2c/HTTP/1.1 detection above it do not know which engine runs. struct
 * h2b_h2s_ctx is per thread (timers, free lists), owned by the h2b_conn_ctx.
 */
#ifndef H2B_H2REF_H2FRAME_H
#define H2B_H2REF_H2FRAME_H

#include "h2ref/conn.h"
#include "h2ref/stats.h"

#include <nghttp2/nghttp2.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

struct h2b_h2s;
struct h2b_h2s_ctx;

/* Creates the per-thread context. stats, date (a NUL-terminated IMF-fixdate of 29 characters
 * that the owner keeps current) and mem (the allocator of the HPACK decoders: the owner's
 * size-class pool) are borrowed for the ctx's life. Returns H2B_OK or H2B_ERR_NOMEM. */
int h2b_h2s_ctx_new(struct h2b_h2s_ctx **out, const struct h2b_conn_config *cfg,
                    struct h2b_stats *stats, const char *date, nghttp2_mem *mem);
void h2b_h2s_ctx_del(struct h2b_h2s_ctx *ctx);
void h2b_h2s_ctx_set_stats_fn(struct h2b_h2s_ctx *ctx, h2b_conn_stats_fn fn, void *arg);

/* Runs due timers (/delay responses, idle and slow-client timeouts); connections that gained
 * output or finished are marked dirty through their owner (h2b_conn_mark_dirty). */
void h2b_h2s_ctx_tick(struct h2b_h2s_ctx *ctx, uint64_t now_ns);
uint64_t h2b_h2s_ctx_next_deadline(const struct h2b_h2s_ctx *ctx);

/* A connection; owner is the h2b_conn that forwards to it. The server preface (SETTINGS and
 * the connection WINDOW_UPDATE) is queued at once. */
int h2b_h2s_new(struct h2b_h2s **out, struct h2b_h2s_ctx *ctx, struct h2b_conn *owner);
void h2b_h2s_del(struct h2b_h2s *h);

/* As h2b_conn_recv/output/sent/done/fatal/input_closed/shutdown. */
int h2b_h2s_recv(struct h2b_h2s *h, const uint8_t *data, size_t len);
int h2b_h2s_output(struct h2b_h2s *h, const struct iovec **iov);
void h2b_h2s_sent(struct h2b_h2s *h, size_t n);
bool h2b_h2s_done(const struct h2b_h2s *h);
bool h2b_h2s_fatal(const struct h2b_h2s *h);
void h2b_h2s_input_closed(struct h2b_h2s *h);
void h2b_h2s_shutdown(struct h2b_h2s *h);

#endif
