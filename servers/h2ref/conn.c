/*
 * conn.c - the reference server's connection core: what a connection is whatever protocol it
 * speaks, driven without sockets.
 *
 * A struct h2b_conn is the caller's handle (h2b_conn_user), its place in the thread's dirty
 * queue, and one protocol engine (engine.h) with that engine's connection: HTTP/2 with our own
 * framing (h2_fast.c, the default), HTTP/2 over libnghttp2 (h2_nghttp2.c) or HTTP/1.1 (h1.c).
 * Every entry point of conn.h is one call through the engine's table; the core adds only what
 * holds for every protocol: the count of connections and input bytes, the h2c/HTTP/1.1
 * detection (the first four bytes choose the engine) and the state of a connection whose
 * protocol is not known yet.
 *
 * struct h2b_conn_ctx is per thread: the configuration, counters, the Date header (one
 * strftime a second, for every engine), nghttp2's size-class pool (counted for /stats), the
 * /stats hook, and one context of each engine the configuration can run (the HTTP/2 engine it
 * names, and HTTP/1.1), lent an struct h2b_engine_env.
 *
 * Rejected: a struct per protocol held by the core with an if-chain per entry point (what
 * this replaced: three engines' names in one file, and conn.c, h1.c and the own framing using
 * each other's names in a circle); engines calling back into conn.c to mark a connection
 * dirty (engine.h's inline queue keeps the names flowing one way).
 */
#include "h2ref/conn.h"

#include "core/alloc.h"
#include "core/check.h"
#include "core/clock.h"
#include "core/error.h"
#include "core/pool.h"
#include "h2ref/engine.h"
#include "h2ref/h1.h"
#include "h2ref/h2_fast.h"
#include "h2ref/h2_nghttp2.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The first four bytes of the HTTP/2 client preface (RFC 9113 3.4): no HTTP/1.1 method. */
static const uint8_t magic[] = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
#define SNIFF_LEN 4

struct h2b_conn {
    struct h2b_dirty dq; /* first: engines hold a pointer to it (engine.h) */
    struct h2b_conn_ctx *ctx;
    void *user;
    const struct h2b_engine *eng; /* the protocol's engine ... */
    void *e;                      /* ... and its connection */
    bool fatal;                   /* failed before an engine took over (detection) */
    bool input_closed;            /* the peer half-closed: no more input will come */
    bool sniffing;   /* H2B_PROTO_DETECT: nothing fed or sent until the protocol is known */
    uint8_t sniffed; /* preface bytes matched (and held) so far */
};

struct h2b_conn_ctx {
    struct h2b_conn_config cfg;
    struct h2b_stats stats;
    struct h2b_engine_env env; /* lent to the engines' contexts */
    time_t date_sec;
    char date[32];
    struct h2b_pool pool;        /* nghttp2's size classes, counted in stats.nghttp2_allocs */
    const struct h2b_engine *h2; /* the HTTP/2 engine cfg.engine names */
    void *h2ctx;
    void *h1ctx; /* h2b_h1_engine's */
    int nconns;
};

void h2b_conn_config_defaults(struct h2b_conn_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->engine = H2B_ENGINE_FAST;
    cfg->max_streams = 256;
    cfg->window = 1u << 20;
    cfg->conn_window = 16u << 20;
    cfg->frame_size = 16384;
    cfg->header_table_size = 4096;
    cfg->max_header_list = 64 * 1024;
    cfg->idle_timeout_ns = 60 * H2B_NS_PER_SEC;
    cfg->slow_timeout_ns = 10 * H2B_NS_PER_SEC;
    cfg->flood_burst = 1000;
    cfg->flood_rate = 100;
    cfg->max_outbound_queue = 5000;
    cfg->max_body = 1ull << 30;
    cfg->echo_stream_max = 1u << 20;
    cfg->echo_conn_max = 4u << 20;
    cfg->memory_budget = 1ull << 30;
    cfg->docroot_fd = -1;
}

static void update_date(struct h2b_conn_ctx *ctx)
{
    time_t t = time(NULL);
    if (t == ctx->date_sec)
        return;
    struct tm tm;
    gmtime_r(&t, &tm);
    /* Always 29 characters, so header values that still point here stay the same length. */
    size_t n = strftime(ctx->date, sizeof ctx->date, "%a, %d %b %Y %H:%M:%S GMT", &tm);
    H2B_ASSERT(n == 29);
    ctx->date_sec = t;
}

/* ---- context ---- */

int h2b_conn_ctx_new(struct h2b_conn_ctx **out, const struct h2b_conn_config *cfg)
{
    if (cfg->max_streams == 0 || cfg->window > 0x7fffffff || cfg->conn_window > 0x7fffffff ||
        cfg->frame_size < 16384 || cfg->frame_size > 16777215 || cfg->flood_burst == 0)
        return H2B_ERR_INVAL;
    struct h2b_conn_ctx *ctx = calloc(1, sizeof *ctx);
    if (!ctx)
        return H2B_ERR_NOMEM;
    ctx->cfg = *cfg;
    h2b_pool_init(&ctx->pool);
    h2b_pool_count_into(&ctx->pool, &ctx->stats.v[H2B_STAT_NGHTTP2_ALLOCS]);
    update_date(ctx);
    ctx->env = (struct h2b_engine_env){
        .cfg = &ctx->cfg, .stats = &ctx->stats, .date = ctx->date, .pool = &ctx->pool};
    h2b_list_init(&ctx->env.dirty);
    ctx->h2 = cfg->engine == H2B_ENGINE_FAST ? &h2b_h2_fast_engine : &h2b_h2_nghttp2_engine;
    if (h2b_h1_engine.ctx_new(&ctx->h1ctx, &ctx->env) != H2B_OK)
        goto out_free;
    if (ctx->h2->ctx_new(&ctx->h2ctx, &ctx->env) != H2B_OK)
        goto out_h1;
    *out = ctx;
    return H2B_OK;
out_h1:
    h2b_h1_engine.ctx_del(ctx->h1ctx);
out_free:
    h2b_pool_free(&ctx->pool);
    free(ctx);
    return H2B_ERR_NOMEM;
}

void h2b_conn_ctx_del(struct h2b_conn_ctx *ctx)
{
    if (!ctx)
        return;
    H2B_ASSERT(ctx->nconns == 0);
    h2b_h1_engine.ctx_del(ctx->h1ctx);
    ctx->h2->ctx_del(ctx->h2ctx);
    h2b_pool_free(&ctx->pool);
    free(ctx);
}

void h2b_conn_ctx_set_stats_fn(struct h2b_conn_ctx *ctx, h2b_conn_stats_fn fn, void *arg)
{
    ctx->env.stats_fn = fn;
    ctx->env.stats_arg = arg;
}

const struct h2b_stats *h2b_conn_ctx_stats(const struct h2b_conn_ctx *ctx)
{
    return &ctx->stats;
}

void h2b_conn_ctx_count(struct h2b_conn_ctx *ctx, enum h2b_stat which)
{
    h2b_stats_add(&ctx->stats, which, 1);
}

void h2b_conn_ctx_tick(struct h2b_conn_ctx *ctx, uint64_t now_ns)
{
    update_date(ctx);
    struct h2b_alloc_stats as;
    h2b_alloc_read(&as);
    __atomic_store_n(&ctx->stats.v[H2B_STAT_THREAD_ALLOCS], as.allocs, __ATOMIC_RELAXED);
    ctx->h2->tick(ctx->h2ctx, now_ns);
    h2b_h1_engine.tick(ctx->h1ctx, now_ns);
}

uint64_t h2b_conn_ctx_next_deadline(const struct h2b_conn_ctx *ctx)
{
    uint64_t d = ctx->h2->next_deadline(ctx->h2ctx);
    uint64_t d1 = h2b_h1_engine.next_deadline(ctx->h1ctx);
    return d1 < d ? d1 : d;
}

/* ---- dirty queue (engine.h's h2b_engine_mark_dirty puts connections in) ---- */

void h2b_conn_mark_dirty(struct h2b_conn *c)
{
    h2b_engine_mark_dirty(&c->ctx->env, &c->dq);
}

bool h2b_conn_ctx_has_dirty(const struct h2b_conn_ctx *ctx)
{
    return !h2b_list_empty(&ctx->env.dirty);
}

struct h2b_conn *h2b_conn_ctx_pop_dirty(struct h2b_conn_ctx *ctx)
{
    struct h2b_dirty *d = H2B_LIST_POP(&ctx->env.dirty, struct h2b_dirty, link);
    if (!d)
        return NULL;
    return (struct h2b_conn *)(void *)d; /* dq is the first member */
}

/* ---- connection ---- */

int h2b_conn_new(struct h2b_conn **out, struct h2b_conn_ctx *ctx, void *user)
{
    struct h2b_conn *c = calloc(1, sizeof *c);
    if (!c)
        return H2B_ERR_NOMEM;
    c->ctx = ctx;
    c->user = user;
    c->eng = ctx->h2;
    if (c->eng->conn_new(&c->e, ctx->h2ctx, &c->dq) != H2B_OK) {
        free(c);
        return H2B_ERR_NOMEM;
    }
    ctx->nconns++;
    h2b_stats_add(&ctx->stats, H2B_STAT_CONNS_OPEN, 1);
    h2b_stats_add(&ctx->stats, H2B_STAT_CONNS_TOTAL, 1);
    *out = c;
    return H2B_OK;
}

void h2b_conn_del(struct h2b_conn *c)
{
    if (!c)
        return;
    struct h2b_conn_ctx *ctx = c->ctx;
    if (h2b_list_linked(&c->dq.link))
        h2b_list_unlink(&c->dq.link);
    c->eng->del(c->e);
    H2B_ASSERT(ctx->nconns > 0);
    ctx->nconns--;
    h2b_stats_sub(&ctx->stats, H2B_STAT_CONNS_OPEN, 1);
    free(c);
}

void *h2b_conn_user(const struct h2b_conn *c)
{
    return c->user;
}

/* ---- protocol detection ---- */

/* Hands the connection to HTTP/1.1: the HTTP/2 engine's connection goes. */
static int become_h1(struct h2b_conn *c)
{
    void *e;
    if (h2b_h1_engine.conn_new(&e, c->ctx->h1ctx, &c->dq) != H2B_OK)
        return H2B_ERR_NOMEM;
    c->sniffing = false;
    c->eng->del(c->e);
    c->eng = &h2b_h1_engine;
    c->e = e;
    return H2B_OK;
}

int h2b_conn_set_proto(struct h2b_conn *c, enum h2b_conn_proto proto)
{
    c->sniffing = proto == H2B_PROTO_DETECT;
    return proto == H2B_PROTO_H1 ? become_h1(c) : H2B_OK;
}

/* The first bytes decide: "PRI " (the preface's first four) is HTTP/2, anything else that
 * differs from the preface within them is HTTP/1.1 (no HTTP/1.1 method is "PRI"). Matched
 * bytes are held (they are the preface's) and replayed to whichever engine takes over. */
static int sniff(struct h2b_conn *c, const uint8_t *data, size_t len)
{
    uint8_t held = c->sniffed;
    size_t i = 0;
    bool h1 = false;
    while (i < len && c->sniffed < SNIFF_LEN) {
        if (data[i] != magic[c->sniffed]) {
            h1 = true;
            break;
        }
        c->sniffed++;
        i++;
    }
    if (!h1 && c->sniffed < SNIFF_LEN)
        return H2B_OK; /* all matched so far: wait for more */
    if (h1 && become_h1(c) != H2B_OK) {
        h2b_stats_add(&c->ctx->stats, H2B_STAT_ERR_PROTOCOL, 1);
        c->fatal = true;
        return H2B_ERR_PROTO;
    }
    c->sniffing = false;
    int rv = held ? c->eng->recv(c->e, magic, held) : H2B_OK;
    return rv == H2B_OK ? c->eng->recv(c->e, data, len) : rv;
}

int h2b_conn_recv(struct h2b_conn *c, const uint8_t *data, size_t len)
{
    h2b_stats_add(&c->ctx->stats, H2B_STAT_BYTES_IN, len);
    if (c->fatal)
        return H2B_ERR_PROTO;
    if (c->sniffing)
        return sniff(c, data, len);
    return c->eng->recv(c->e, data, len);
}

int h2b_conn_output(struct h2b_conn *c, const struct iovec **iov)
{
    static const struct iovec none;
    if (c->sniffing || c->fatal) {
        *iov = &none;
        /* a client whose protocol is not known yet must not see our SETTINGS */
        return c->fatal ? H2B_ERR_PROTO : 0;
    }
    return c->eng->output(c->e, iov);
}

void h2b_conn_sent(struct h2b_conn *c, size_t n)
{
    c->eng->sent(c->e, n);
}

bool h2b_conn_done(const struct h2b_conn *c)
{
    if (c->fatal || c->sniffing)
        return c->fatal || c->input_closed; /* a FIN within the first four bytes: nothing to say */
    return c->eng->done(c->e);
}

void h2b_conn_input_closed(struct h2b_conn *c)
{
    c->input_closed = true;
    if (!c->fatal && !c->sniffing)
        c->eng->input_closed(c->e);
}

bool h2b_conn_fatal(const struct h2b_conn *c)
{
    return c->fatal || c->eng->fatal(c->e);
}

void h2b_conn_shutdown(struct h2b_conn *c)
{
    if (c->sniffing)
        c->fatal = true; /* nothing was said yet: just close */
    if (c->fatal)
        h2b_conn_mark_dirty(c);
    else
        c->eng->shutdown(c->e);
}
