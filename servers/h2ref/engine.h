/*
 * engine.h - the one interface between the reference server's connection core (conn.c) and
 * each protocol engine behind it: HTTP/2 with our own framing (h2_fast.c, the default), HTTP/2
 * over a libnghttp2 session (h2_nghttp2.c) and HTTP/1.1 (h1.c).
 *
 * The core owns the socket-side life of a connection (the user handle, the dirty queue, the
 * protocol choice of h2c/HTTP/1.1 detection, the counts of connections and input bytes) and the
 * per-thread things every engine borrows (struct h2b_engine_env: configuration, counters, the
 * Date header, the nghttp2 size-class pool, the /stats hook). An engine is one file that
 * exports one const struct h2b_engine: a per-thread context (timers, free lists) and
 * per-connection calls. Adding a protocol adds a file and a vtable; no other engine changes.
 *
 * An engine marks its connection dirty (it gained output or finished outside a recv call: a
 * timer, a shutdown) with h2b_engine_mark_dirty on the struct h2b_dirty it was given, which is
 * the first member of the core's connection. That is inline here so that no engine calls into
 * conn.c: the files use each other's names in one direction only (conn.c -> engines ->
 * handlers.c, stats.c).
 *
 * Rejected: one struct per protocol known to the core (an if-chain per entry point, the shape
 * this replaces); void-free typed engine pointers (each engine would need its own facade
 * functions in conn.c again). As curl's vtls keeps one file per TLS backend behind one table.
 */
#ifndef H2B_H2REF_ENGINE_H
#define H2B_H2REF_ENGINE_H

#include "core/list.h"
#include "core/pool.h"
#include "h2ref/conn.h"
#include "h2ref/stats.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

/* A connection's place in its thread's dirty queue (the core's struct h2b_conn starts with
 * one). */
struct h2b_dirty {
    struct h2b_list link; /* in the queue while linked */
};

/* What the core lends every engine context of one thread, for the context's life. */
struct h2b_engine_env {
    const struct h2b_conn_config *cfg; /* the thread's configuration */
    struct h2b_stats *stats;           /* the thread's counters */
    const char *date;                  /* IMF-fixdate, 29 characters, kept current by the core */
    struct h2b_pool *pool;             /* nghttp2's size-class allocator (HPACK, sessions) */
    h2b_conn_stats_fn stats_fn;        /* /stats: the server-wide JSON, or NULL */
    void *stats_arg;
    struct h2b_list dirty; /* the dirty queue (of struct h2b_dirty), newest first */
};

/* Queues d (once) for the core's h2b_conn_ctx_pop_dirty. */
static inline void h2b_engine_mark_dirty(struct h2b_engine_env *env, struct h2b_dirty *d)
{
    if (!h2b_list_linked(&d->link))
        h2b_list_insert_head(&env->dirty, &d->link);
}

/* One protocol engine. void *ectx is the engine's per-thread context, void *e one of its
 * connections; both are the engine's own types. The per-connection calls mean what conn.h's
 * h2b_conn_* of the same name mean; the core calls them only while the connection speaks this
 * protocol, and never after fatal() turned true except del. */
struct h2b_engine {
    const char *name;
    /* A context for one thread, borrowing env (kept by the core, valid until ctx_del). Returns
     * H2B_OK or H2B_ERR_NOMEM; *out untouched on failure. */
    int (*ctx_new)(void **out, struct h2b_engine_env *env);
    void (*ctx_del)(void *ectx); /* every connection deleted first; accepts NULL */
    /* Runs the timers due by now_ns (monotonic ns); connections that gained output or finished
     * are marked dirty. */
    void (*tick)(void *ectx, uint64_t now_ns);
    uint64_t (*next_deadline)(const void *ectx); /* UINT64_MAX: none armed */
    /* A connection; owner is its place in the dirty queue. H2B_OK or H2B_ERR_NOMEM. */
    int (*conn_new)(void **out, void *ectx, struct h2b_dirty *owner);
    void (*del)(void *e); /* frees the connection and everything it holds; accepts NULL */
    int (*recv)(void *e, const uint8_t *data, size_t len);
    int (*output)(void *e, const struct iovec **iov);
    void (*sent)(void *e, size_t n);
    bool (*done)(const void *e);
    bool (*fatal)(const void *e);
    void (*input_closed)(void *e);
    void (*shutdown)(void *e);
};

#endif
