/*
 * conn.h - the reference server's connection core: one client connection, whatever protocol it
 * speaks, without sockets.
 *
 * A struct h2b_conn is one server-side connection: HTTP/2 (our own framing by default, or a
 * libnghttp2 session: enum h2b_conn_engine) or HTTP/1.1, with everything the server does on it:
 * requests (routed and answered by handlers.h), flow-controlled bodies, guards and timeouts.
 * Each protocol is an engine behind one interface (engine.h: h2_fast.c, h2_nghttp2.c, h1.c);
 * this API is the same whichever runs. It never touches a file descriptor of the network: the
 * caller feeds it received bytes and collects the bytes it wants to send. The epoll server
 * (server.h) is one caller; the microbenchmark suite (route-and-respond) and the fuzz targets
 * are others, driving the real engines in memory.
 *
 * Objects and threads
 *   struct h2b_conn_ctx is per thread: configuration, the engines' contexts (free lists of
 *   streams, body chunks and output buffers, timer heaps), counters and the cached Date header.
 *   Every h2b_conn belongs to one ctx and must only be used on the thread that uses the ctx.
 *   Nothing here locks. The only cross-thread access is reading a ctx's counters
 *   (h2b_conn_ctx_stats).
 *
 * Driving a connection
 *   1. h2b_conn_new(): HTTP/2's server preface (SETTINGS) is queued at once.
 *   2. h2b_conn_recv(data, len) for every chunk received. The engine parses it, routes the
 *      requests and queues the responses that became ready.
 *   3. h2b_conn_output() gathers pending output into iovecs (one syscall's worth); write them,
 *      then report how many bytes went out with h2b_conn_sent(). Repeat until it returns 0.
 *   4. h2b_conn_done() says when the connection has nothing left to do (close it then), and
 *      h2b_conn_fatal() whether it ended abnormally (close without lingering).
 *   Time: the caller sets the ctx clock with h2b_conn_ctx_tick(now) once per loop turn; that
 *   runs due timers (/delay responses, idle and slow-client timeouts). Connections that gained
 *   output or finished outside h2b_conn_recv() are queued; take them with
 *   h2b_conn_ctx_pop_dirty() and flush them. h2b_conn_ctx_next_deadline() is when to tick next.
 *
 * Memory: no allocation per request in this code. Streams, echo chunks and output buffers come
 * from per-ctx free lists (built with H2B_SANITIZED, the free lists are bypassed so that the
 * sanitizer sees every free). libnghttp2 (the session of the nghttp2 engine, the HPACK decoder
 * of the own framing) allocates through the ctx's nghttp2_mem: 32-byte size classes up to
 * 4 KiB (harness/core/pool.h), every call counted in the stats (nghttp2_allocs), the memory
 * held until the ctx is deleted. Each tick also copies the ticking thread's interposer count
 * (h2bench::alloc, when linked and armed) into worker_allocs; a thread should
 * h2b_alloc_reset() before it creates its connections.
 */
#ifndef H2B_H2REF_CONN_H
#define H2B_H2REF_CONN_H

#include "h2ref/stats.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

struct h2b_conn;
struct h2b_conn_ctx;

/* Which HTTP/2 engine a connection runs: libnghttp2's session (h2_nghttp2.c) or our own
 * framing (h2_fast.c, libnghttp2 only for HPACK decoding). Both serve the same routes. */
enum h2b_conn_engine { H2B_ENGINE_NGHTTP2, H2B_ENGINE_FAST };

/* Protocol configuration; sizes in bytes, times in ns. Fill with h2b_conn_config_defaults(). */
/* Docroot files open at once: the server-wide count, shared by every worker, against max
 * (h2b_conn_config.files; the server sizes max from its descriptor limit). */
struct h2b_files {
    _Atomic uint32_t open;
    uint32_t max;
};

struct h2b_conn_config {
    enum h2b_conn_engine engine;   /* HTTP/2 engine (default H2B_ENGINE_FAST) */
    uint32_t max_streams;          /* SETTINGS_MAX_CONCURRENT_STREAMS (default 256) */
    uint32_t window;               /* SETTINGS_INITIAL_WINDOW_SIZE (default 1 MiB) */
    uint32_t conn_window;          /* connection receive window (default 16 MiB) */
    uint32_t frame_size;           /* SETTINGS_MAX_FRAME_SIZE we accept (default 16384) */
    uint32_t header_table_size;    /* SETTINGS_HEADER_TABLE_SIZE (default 4096) */
    uint32_t max_header_list;      /* per request, sum of name + value + 32 (default 64 KiB) */
    uint64_t idle_timeout_ns;      /* no stream open, nothing pending: GOAWAY (default 60 s) */
    uint64_t slow_timeout_ns;      /* preface, request or unread output without progress (10 s) */
    uint32_t flood_burst;          /* flood budget: suspicious frames allowed at once (1000) */
    uint32_t flood_rate;           /* flood budget refill per second (100) */
    uint32_t max_outbound_queue;   /* nghttp2 outbound queue items before closing (5000) */
    uint64_t max_body;             /* largest /bytes/N (default 1 GiB) */
    uint64_t echo_stream_max;      /* /echo bytes held for one stream (default 1 MiB) */
    uint64_t echo_conn_max;        /* /echo bytes held for one connection (default 4 MiB) */
    uint64_t memory_budget;        /* bytes of body and output buffers held (default 1 GiB,
                                    * 0: no budget), counted in *memory_used */
    _Atomic uint64_t *memory_used; /* shared by every ctx of a server; NULL: this ctx's own (in
                                    * h2b_server_config: a count shared with the HTTP/3
                                    * listener's, NULL: the server's own) */
    int docroot_fd;                /* directory fd for static files, or -1 (not owned) */
    bool docroot_walk;             /* open files by the O_NOFOLLOW walk, not openat2 (tests) */
    struct h2b_files *files;       /* server-wide open docroot files (not owned); NULL: no
                                    * server-wide budget, H2B_FILES_PER_CONN still holds */
    bool copy_bodies;              /* true: never reference bodies from iovecs (TLS wants one
                                    * contiguous buffer per flush) */
};

/* Fills cfg with the defaults above. */
void h2b_conn_config_defaults(struct h2b_conn_config *cfg);

/* Renders the server-wide /stats JSON into buf; returns its length or a negative H2B_ERR_*. */
typedef int (*h2b_conn_stats_fn)(void *arg, char *buf, size_t cap);

/* Creates a per-thread context. cfg is copied. Returns H2B_OK, H2B_ERR_NOMEM or H2B_ERR_INVAL;
 * *out is untouched on failure. */
int h2b_conn_ctx_new(struct h2b_conn_ctx **out, const struct h2b_conn_config *cfg);

/* Destroys ctx. All its connections must have been deleted. Accepts NULL. */
void h2b_conn_ctx_del(struct h2b_conn_ctx *ctx);

/* Routes /stats to fn(arg) (the server sums all workers there). Without a hook, /stats shows
 * this ctx's counters only. */
void h2b_conn_ctx_set_stats_fn(struct h2b_conn_ctx *ctx, h2b_conn_stats_fn fn, void *arg);

/* This ctx's counters. The owning thread writes them; any thread may read them with
 * h2b_stats_accumulate(). Valid until h2b_conn_ctx_del(). */
const struct h2b_stats *h2b_conn_ctx_stats(const struct h2b_conn_ctx *ctx);

/* Counts a connection the caller refused (--max-connections) in this ctx's stats. */
void h2b_conn_ctx_count(struct h2b_conn_ctx *ctx, enum h2b_stat which);

/* Sets the ctx clock to now_ns (CLOCK_MONOTONIC ns) and runs every timer due by then: delayed
 * responses, idle and slow-client timeouts. Connections that gained output become dirty. */
void h2b_conn_ctx_tick(struct h2b_conn_ctx *ctx, uint64_t now_ns);

/* When to tick next (monotonic ns): no later than the earliest pending timer, possibly
 * earlier (a deadline that moved later is corrected when its old time comes); UINT64_MAX when
 * none is armed. */
uint64_t h2b_conn_ctx_next_deadline(const struct h2b_conn_ctx *ctx);

/* Takes one connection that has output to flush or has finished since it was last flushed
 * (by a timer, a shutdown or a flush cut short); NULL when none. Each is returned once per
 * marking. */
struct h2b_conn *h2b_conn_ctx_pop_dirty(struct h2b_conn_ctx *ctx);

/* True when some connection is waiting in the dirty queue (poll with a zero timeout then). */
bool h2b_conn_ctx_has_dirty(const struct h2b_conn_ctx *ctx);

/* Creates a connection in ctx; user is the caller's handle (h2b_conn_user). The server preface
 * is queued for output. Returns H2B_OK or H2B_ERR_NOMEM; *out is untouched on failure. */
int h2b_conn_new(struct h2b_conn **out, struct h2b_conn_ctx *ctx, void *user);

/* Which protocol a connection speaks. H2B_PROTO_H2 (the default after h2b_conn_new): HTTP/2
 * with prior knowledge or ALPN "h2". H2B_PROTO_H1: HTTP/1.1 (ALPN "http/1.1"; see h1.h).
 * H2B_PROTO_DETECT: the first bytes decide (the HTTP/2 client preface or an HTTP/1.1 request);
 * nothing is sent until then. Call before the first h2b_conn_recv/h2b_conn_output. Returns
 * H2B_OK or H2B_ERR_NOMEM. */
enum h2b_conn_proto { H2B_PROTO_H2, H2B_PROTO_H1, H2B_PROTO_DETECT };
int h2b_conn_set_proto(struct h2b_conn *c, enum h2b_conn_proto proto);

/* Frees c and everything it holds (streams, buffers, open files). Accepts NULL. */
void h2b_conn_del(struct h2b_conn *c);

/* The user pointer given to h2b_conn_new(). */
void *h2b_conn_user(const struct h2b_conn *c);

/* Feeds len received bytes (data is only read during the call). Returns H2B_OK, or
 * H2B_ERR_PROTO when the connection failed fatally (bad preface, flood, callback failure): the
 * caller should close the connection at once. After a graceful termination (GOAWAY queued) the
 * input is counted and discarded. */
int h2b_conn_recv(struct h2b_conn *c, const uint8_t *data, size_t len);

/* Gathers pending output. On return *iov points to the conn's iovec array (valid until the next
 * h2b_conn_output/h2b_conn_sent/h2b_conn_del); the memory it references stays valid and
 * unchanged until those bytes are reported sent. Returns the iovec count (0: nothing to send)
 * or H2B_ERR_PROTO when the session failed (close the connection). */
int h2b_conn_output(struct h2b_conn *c, const struct iovec **iov);

/* Reports that n bytes from the front of the last h2b_conn_output() were written. */
void h2b_conn_sent(struct h2b_conn *c, size_t n);

/* True when the connection has nothing more to do: the session neither wants to read (or the
 * input was closed and no stream is left) nor to write and no output is pending, or it
 * failed. The caller closes it then. */
bool h2b_conn_done(const struct h2b_conn *c);

/* The peer closed its side (read() returned 0): the responses to the requests already read
 * still go out, then h2b_conn_done() turns true. HTTP/2: a stream whose request is incomplete
 * is reset (CANCEL), it can never complete; HTTP/1.1 (h1.h's h2b_h1_input_closed): an
 * incomplete request ends the connection. */
void h2b_conn_input_closed(struct h2b_conn *c);

/* True when the connection failed or was cut off without a GOAWAY the peer could read (no point
 * in a lingering close). */
bool h2b_conn_fatal(const struct h2b_conn *c);

/* Starts a graceful shutdown: GOAWAY(NO_ERROR, last processed stream); in-flight streams finish.
 * Marks the connection dirty. */
void h2b_conn_shutdown(struct h2b_conn *c);

/* Marks c dirty (the caller cut a flush short and wants to resume it next turn). */
void h2b_conn_mark_dirty(struct h2b_conn *c);

#endif
