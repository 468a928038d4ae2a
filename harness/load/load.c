/*
 * load.c - one run: resolve the target, set up TLS and nghttp2 once, start the workers, print
 * progress while they run, join them and merge what they measured.
 *
 * Shared read-only state (address, SSL_CTX, callbacks, prebuilt header arrays) is built before
 * the threads start. The only cross-thread traffic during the run is the stop flag and, with
 * progress on, a once-a-second snapshot hand-off per worker (see engine.h); nothing per request.
 * Workers block SIGINT/SIGTERM, so the caller's handler runs on the main thread and only calls
 * h2b_load_stop().
 */
#include "core/check.h"
#include "core/clock.h"
#include "core/cpu.h"
#include "load/engine.h"
#include "core/results.h"
#include "core/error.h"
#include "load/h1load.h"

#include <inttypes.h>
#include <netdb.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/un.h>
#include <time.h>

static atomic_int stop_flag;

void h2b_load_stop(void)
{
    atomic_store(&stop_flag, 1);
}

static nghttp2_nv make_nv(const char *name, const char *value)
{
    nghttp2_nv nv = {(uint8_t *)(uintptr_t)name, (uint8_t *)(uintptr_t)value, strlen(name),
                     strlen(value), NGHTTP2_NV_FLAG_NO_COPY_NAME | NGHTTP2_NV_FLAG_NO_COPY_VALUE};
    return nv;
}

/* Request headers per URI: the pseudo-headers and user-agent, then -H (a -H with the name of one
 * of those replaces it; "host" replaces :authority, as in h2load). The pseudo-headers go in
 * h2load's order (:path, :scheme, :authority, :method), so that with the same user-agent the
 * header blocks are h2load's byte for byte, first request and later ones (the dynamic table's
 * entries are inserted in the same order): tests/integration/load_neutral.sh. */
static int build_nva(struct h2b__load_proto *sh, const struct h2b_load_config *cfg,
                     char *content_length)
{
    sh->nva = calloc(cfg->nuris, sizeof(*sh->nva));
    sh->nvlen = calloc(cfg->nuris, sizeof(*sh->nvlen));
    if (!sh->nva || !sh->nvlen)
        return H2B_ERR_NOMEM;
    for (size_t u = 0; u < cfg->nuris; u++) {
        const struct h2b_load_uri *uri = &cfg->uris[u];
        nghttp2_nv *nv = calloc(6 + cfg->nheaders, sizeof(*nv));
        if (!nv)
            return H2B_ERR_NOMEM;
        size_t n = 0;
        nv[n++] = make_nv(":path", uri->path);
        nv[n++] = make_nv(":scheme", cfg->uris[0].scheme);
        nv[n++] = make_nv(":authority", cfg->uris[0].authority);
        nv[n++] = make_nv(":method", cfg->body ? "POST" : "GET");
        nv[n++] = make_nv("user-agent", "h2bench/" H2B_LOAD_VERSION);
        if (cfg->body)
            nv[n++] = make_nv("content-length", content_length);
        for (size_t h = 0; h < cfg->nheaders; h++) {
            const char *name = cfg->headers[h].name;
            if (strcmp(name, "host") == 0)
                name = ":authority";
            size_t k = 0;
            while (k < n && strcmp((const char *)nv[k].name, name) != 0)
                k++;
            nv[k] = make_nv(name, cfg->headers[h].value);
            if (k == n)
                n++;
        }
        sh->nva[u] = nv;
        sh->nvlen[u] = n;
    }
    return H2B_OK;
}

static int resolve(struct h2b__load_shared *sh, struct h2b_diag *err)
{
    const struct h2b_load_config *cfg = sh->cfg;
    const struct h2b_load_uri *u = &cfg->uris[0];
    if (cfg->base_unix) { /* -B unix:PATH (length checked by the parser) */
        struct sockaddr_un *un = (struct sockaddr_un *)&sh->addr;
        memset(un, 0, sizeof(*un));
        un->sun_family = AF_UNIX;
        snprintf(un->sun_path, sizeof(un->sun_path), "%s", cfg->base_unix);
        sh->addrlen = sizeof(*un);
        return H2B_OK;
    }
    /* --connect-to replaces where we connect, not what we ask for */
    const char *host = cfg->connect_host ? cfg->connect_host : u->host;
    const char *port = cfg->connect_host && cfg->connect_port ? cfg->connect_port : u->port;
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
    struct addrinfo *res;
    int rv = getaddrinfo(host, port, &hints, &res);
    if (rv != 0)
        return h2b__load_errf(err, H2B_ERR_NOTFOUND, "cannot resolve %s:%s: %s", host, port,
                              gai_strerror(rv));
    memcpy(&sh->addr, res->ai_addr, res->ai_addrlen);
    sh->addrlen = res->ai_addrlen;
    freeaddrinfo(res);
    return H2B_OK;
}

static void shared_free(struct h2b__load_shared *sh, struct h2b__load_proto *p)
{
    if (p->nva)
        for (size_t u = 0; u < sh->cfg->nuris; u++)
            free(p->nva[u]);
    free(p->nva);
    free(p->nvlen);
    if (sh->ssl_ctx)
        SSL_CTX_free(sh->ssl_ctx);
}

static void format_ms(char *buf, size_t n, uint64_t ns)
{
    if (ns >= 10 * H2B_NS_PER_SEC)
        snprintf(buf, n, "%.1fs", (double)ns / 1e9);
    else if (ns >= H2B_NS_PER_MS)
        snprintf(buf, n, "%.2fms", (double)ns / 1e6);
    else
        snprintf(buf, n, "%.0fus", (double)ns / 1e3);
}

void h2b_load_progress_print(struct h2b_load_progress_printer *p, FILE *f,
                             const struct h2b_load_progress_tick *t)
{
    double dt = (double)(t->elapsed_ns - p->last_ns) / 1e9;
    char p50[32], p99[32];
    format_ms(p50, sizeof(p50), h2b_hist_percentile(t->interval, 50));
    format_ms(p99, sizeof(p99), h2b_hist_percentile(t->interval, 99));
    fprintf(f,
            "progress: %.1fs, %llu ended, %.0f req/s, %llu in flight, %llu errors, interval p50 %s "
            "p99 %s%s\n",
            (double)t->elapsed_ns / 1e9, (unsigned long long)t->ended,
            dt > 0 && t->ended >= p->last_ended ? (double)(t->ended - p->last_ended) / dt : 0.0,
            (unsigned long long)t->inflight, (unsigned long long)t->errors, p50, p99,
            t->warmup ? " (warm-up)" : "");
    fflush(f);
    p->last_ns = t->elapsed_ns;
    p->last_ended = t->ended;
}

struct progress {
    h2b_load_progress_fn hook;
    void *ctx;
    struct h2b_hist *interval;
    struct h2b__load_snapshot *last; /* per worker: its last answer, for one that is late */
};

/* One progress tick: collect every running worker's snapshot (bounded wait: a worker notices the
 * request within one loop turn, at most ~100 ms), merge the retired interval histograms and hand
 * the tick to the hook. */
static void progress_tick(struct progress *p, struct h2b__load_worker *w, uint32_t nw,
                          const struct h2b__load_shared *sh)
{
    unsigned req[1024];
    H2B_ASSERT(nw <= 1024); /* h2b_load_run refuses more workers */
    for (uint32_t i = 0; i < nw; i++) {
        req[i] = atomic_load(&w[i].snap_req) + 1;
        atomic_store_explicit(&w[i].snap_req, req[i], memory_order_release);
    }
    struct h2b_load_progress_tick t = {.interval = p->interval};
    for (uint32_t i = 0; i < nw; i++) {
        uint64_t deadline = h2b_clock_now_ns() + 250 * H2B_NS_PER_MS;
        while (atomic_load_explicit(&w[i].snap_ack, memory_order_acquire) != req[i] &&
               !atomic_load_explicit(&w[i].finished, memory_order_acquire) &&
               h2b_clock_now_ns() < deadline)
            h2b_clock_sleep_ns(H2B_NS_PER_MS);
        if (atomic_load_explicit(&w[i].snap_ack, memory_order_acquire) != req[i]) {
            /* A worker that has finished answers no more requests; its counters are final (the
             * acquire above pairs with its release). One that is late (a busy CPU) counts with
             * its last answer. Either way the cumulative counts never go back. */
            if (atomic_load_explicit(&w[i].finished, memory_order_acquire)) {
                const struct h2b_load_stats *st = &w[i].stats;
                p->last[i].ended = st->done + st->errored - st->not_sent;
                p->last[i].errors = st->failed;
                p->last[i].inflight = 0;
                h2b_hist_merge(p->interval, w[i].ival[w[i].ival_active]);
                h2b_hist_reset(w[i].ival[w[i].ival_active]);
            }
            t.ended += p->last[i].ended;
            t.errors += p->last[i].errors;
            t.inflight += p->last[i].inflight;
            continue;
        }
        p->last[i] = w[i].snap;
        t.ended += w[i].snap.ended;
        t.errors += w[i].snap.errors;
        t.inflight += w[i].snap.inflight;
        int retired = w[i].ival_retired;
        h2b_hist_merge(p->interval, w[i].ival[retired]);
        h2b_hist_reset(w[i].ival[retired]);
    }
    uint64_t now = h2b_clock_now_ns();
    t.elapsed_ns = now - sh->t0;
    t.warmup = sh->t_measure > now;
    p->hook(p->ctx, &t);
    h2b_hist_reset(p->interval);
}

/* The single-process hook: print the tick. */
struct print_ctx {
    FILE *out;
    struct h2b_load_progress_printer printer;
};

static void print_tick(void *ctx, struct h2b_load_progress_tick *t)
{
    struct print_ctx *pc = ctx;
    h2b_load_progress_print(&pc->printer, pc->out, t);
}

static bool all_finished(struct h2b__load_worker *w, uint32_t nw)
{
    for (uint32_t i = 0; i < nw; i++)
        if (!atomic_load_explicit(&w[i].finished, memory_order_acquire))
            return false;
    return true;
}

/* h2load's "spawning thread" line for worker i (src/h2load.cc, create_worker) */
static void spawn_line(FILE *f, const struct h2b_load_config *cfg, uint32_t i, uint32_t nc,
                       uint64_t nr)
{
    if (cfg->duration_ns) {
        fprintf(f,
                "spawning thread #%u: %u total client(s). Timing-based test with %gs of warm-up "
                "time and %gs of main duration for measurements.\n",
                i, nc, (double)cfg->warmup_ns / 1e9, (double)cfg->duration_ns / 1e9);
        return;
    }
    fprintf(f, "spawning thread #%u: %u total client(s). ", i, nc);
    uint32_t rate = cfg->conn_rate / cfg->threads + (i < cfg->conn_rate % cfg->threads ? 1 : 0);
    if (cfg->conn_rate && nc > rate) {
        uint64_t p = cfg->rate_period_ns;
        if (p % 1000000000ULL == 0)
            fprintf(f, "Up to %u client(s) will be created every %llus ", rate,
                    (unsigned long long)(p / 1000000000ULL));
        else
            fprintf(f, "Up to %u client(s) will be created every %llums ", rate,
                    (unsigned long long)(p / 1000000ULL));
    }
    fprintf(f, "%llu total requests\n", (unsigned long long)nr);
}

int h2b_load_run(const struct h2b_load_config *cfg, FILE *progress, FILE *info,
                 struct h2b_load_result *res, struct h2b_diag *err)
{
    struct print_ctx pc = {.out = progress};
    return h2b_load_run_hooked(cfg, progress ? print_tick : NULL, &pc, info, res, err);
}

/* TLS, the --npn-list probe and the engine: h2 (fast or nghttp2), HTTP/1.1, raw or h3. *h1 says
 * whether the server's ALPN choice (or -h1) made it HTTP/1.1. */
static int pick_engine(struct h2b__load_shared *sh, bool *h1, struct h2b_diag *err)
{
    const struct h2b_load_config *cfg = sh->cfg;
    if (cfg->uris[0].tls && !cfg->h3 && !(sh->ssl_ctx = h2b__load_tls_context(cfg)))
        return h2b__load_errf(err, H2B_ERR_UNSUPPORTED, "cannot set up TLS (OpenSSL)");
    sh->tls = sh->ssl_ctx != NULL;
    *h1 = cfg->h1;
    if (sh->ssl_ctx && !cfg->h1 && cfg->alpn) {
        /* --npn-list: the protocol the server picks decides the engine, as in h2load */
        char proto[256];
        if (h2b__h1_probe_alpn(sh, proto, sizeof proto) != H2B_OK)
            return h2b__load_errf(err, H2B_ERR_IO, "no connection to %s:%s could be made",
                                  cfg->uris[0].host, cfg->uris[0].port);
        if (strcmp(proto, "http/1.1") == 0)
            *h1 = true;
        else if (strcmp(proto, "h2") != 0)
            return h2b__load_errf(
                err, H2B_ERR_UNSUPPORTED,
                "the server chose %s%s%s from --npn-list: neither h2 nor http/1.1",
                *proto ? "'" : "no protocol", proto, *proto ? "'" : "");
    }
    sh->engine = cfg->engine == H2B_LOAD_ENGINE_FAST ? &h2b__h2_fast_engine : &h2b__h2_engine;
    if (*h1)
        sh->engine = &h2b__h1_engine;
    if (cfg->raw_request)
        sh->engine = &h2b__raw_engine;
#ifdef H2B_HAVE_H3
    if (cfg->h3)
        sh->engine = &h2b__h3_engine;
#endif
    return H2B_OK;
}

/* The run's clock: its start (monotonic and wall), the warm-up and end deadlines, and the
 * interval grid. Returns the wall-clock start in ns. */
static uint64_t start_clock(struct h2b__load_shared *sh)
{
    const struct h2b_load_config *cfg = sh->cfg;
    atomic_store(&stop_flag, 0);
    sh->t0 = h2b_clock_now_ns();
    struct timespec wall;
    clock_gettime(CLOCK_REALTIME, &wall);
    sh->wall0_us = (uint64_t)wall.tv_sec * 1000000ULL + (uint64_t)wall.tv_nsec / 1000;
    sh->t_measure = cfg->duration_ns ? sh->t0 + cfg->warmup_ns : 0;
    sh->t_end = cfg->duration_ns ? sh->t0 + cfg->warmup_ns + cfg->duration_ns : 0;
    if (cfg->interval_ns) {
        sh->i_len = cfg->interval_ns;
        sh->i_origin = sh->t_measure ? sh->t_measure : sh->t0;
        sh->i_last = sh->t_end ? (sh->t_end - sh->i_origin - 1) / sh->i_len : UINT64_MAX;
    }
    return (uint64_t)wall.tv_sec * 1000000000ULL + (uint64_t)wall.tv_nsec;
}

/* Set up the nw workers, the connections and requests shared out as evenly as they go, and print
 * h2load's "spawning thread" lines. On failure none is left set up. */
static int init_workers(struct h2b__load_worker *w, uint32_t nw, struct h2b__load_shared *sh,
                        FILE *info, struct h2b_diag *err)
{
    const struct h2b_load_config *cfg = sh->cfg;
    uint32_t first = 0;
    for (uint32_t i = 0; i < nw; i++) {
        uint32_t nc = cfg->connections / nw + (i < cfg->connections % nw ? 1 : 0);
        uint64_t nr = cfg->requests / nw + (i < cfg->requests % nw ? 1 : 0);
        int rv = h2b__load_worker_init(&w[i], (int)i, sh, nc, first, nr);
        if (rv != H2B_OK) {
            h2b__load_errf(err, rv, "cannot set up worker %u: %s", i, h2b_strerror(rv));
            for (uint32_t k = 0; k < i; k++)
                h2b__load_worker_free(&w[k]);
            return rv;
        }
        if (info)
            spawn_line(info, cfg, i, nc, nr);
        first += nc;
    }
    if (info)
        fflush(info);
    return H2B_OK;
}

/* --io: a ring per worker (uring.c), or none, every worker on epoll, with the reason in res
 * (io_uring refused, or an engine without on_input: HTTP/3 runs on its UDP epoll path). */
static void pick_io(struct h2b__load_worker *w, uint32_t nw, const struct h2b__load_shared *sh,
                    struct h2b_load_result *res)
{
    snprintf(res->io, sizeof(res->io), "epoll");
    if (sh->cfg->io != H2B_LOAD_IO_URING)
        return;
    char why[128];
    if (!sh->engine->on_input)
        snprintf(res->io_fallback, sizeof(res->io_fallback),
                 "the HTTP/3 engine runs on its UDP epoll path");
    for (uint32_t i = 0; i < nw && !res->io_fallback[0]; i++) {
        if (h2b__load_ring_new(&w[i], why, sizeof(why)) != H2B_OK) {
            for (uint32_t k = 0; k < i; k++)
                h2b__load_ring_del(&w[k]);
            snprintf(res->io_fallback, sizeof(res->io_fallback), "%s", why);
            break;
        }
    }
    if (res->io_fallback[0]) {
        if (sh->cfg->notice)
            fprintf(sh->cfg->notice, "h2bench load: --io uring: %s; using epoll\n",
                    res->io_fallback);
        return;
    }
    snprintf(res->io, sizeof(res->io), "uring");
}

/* Start the worker threads with SIGINT and SIGTERM blocked (the caller's handler runs on this
 * thread). *started says how many run; a failure stops those. */
static int start_workers(struct h2b__load_worker *w, uint32_t nw, uint32_t *started,
                         struct h2b_diag *err)
{
    sigset_t block, old;
    sigemptyset(&block);
    sigaddset(&block, SIGINT);
    sigaddset(&block, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &block, &old);
    int rv = H2B_OK;
    for (*started = 0; *started < nw; (*started)++) {
        if (pthread_create(&w[*started].thread, NULL, h2b__load_worker_main, &w[*started]) != 0) {
            rv = h2b__load_errf(err, H2B_ERR_SYS, "cannot start worker thread");
            atomic_store(&stop_flag, 1);
            break;
        }
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return rv;
}

/* While the workers run: collect finished intervals and, once a second, a progress tick. */
static void watch_workers(struct h2b__load_worker *w, uint32_t nw,
                          const struct h2b__load_shared *sh, struct h2b__load_iagg *iagg,
                          h2b_load_progress_fn hook, void *ctx)
{
    struct progress p = {.hook = hook, .ctx = ctx, .last = calloc(nw, sizeof(*p.last))};
    if (hook && (!p.last || h2b_hist_new_default(&p.interval) != H2B_OK))
        p.hook = NULL; /* no progress lines, the run goes on */
    uint64_t next = sh->t0 + H2B_NS_PER_SEC;
    while (!all_finished(w, nw)) {
        h2b_clock_sleep_ns(20 * H2B_NS_PER_MS);
        if (iagg && h2b__load_iagg_poll(iagg, w, false, 0) != H2B_OK)
            atomic_store(&stop_flag, 1); /* out of memory: end the run, say so below */
        if (p.hook && h2b_clock_now_ns() >= next && !all_finished(w, nw)) {
            progress_tick(&p, w, nw, sh);
            next += H2B_NS_PER_SEC;
        }
    }
    h2b_hist_del(p.interval);
    free(p.last);
}

/* Merge the joined workers' counts into res, and say how the run ended, which protocol it spoke
 * and with which engine. t_end is when the last worker was joined. */
static int merge_workers(struct h2b_load_result *res, struct h2b__load_worker *w, uint32_t nw,
                         const struct h2b__load_shared *sh, bool h1, uint64_t t_end,
                         struct h2b_diag *err)
{
    const struct h2b_load_config *cfg = sh->cfg;
    int rv = h2b_load_stats_init(&res->s);
    if (rv != H2B_OK)
        return h2b__load_errf(err, rv, "out of memory");
    res->conn_rps = calloc(cfg->connections, sizeof(*res->conn_rps));
    for (uint32_t i = 0; i < nw && rv == H2B_OK; i++) {
        rv = h2b_load_stats_merge(&res->s, &w[i].stats);
        if (w[i].interrupted)
            res->interrupted = true;
        if (w[i].rc != H2B_OK)
            rv = h2b__load_errf(err, w[i].rc, "worker %u failed: %s", i, h2b_strerror(w[i].rc));
        if (res->conn_rps) {
            memcpy(res->conn_rps + res->nconn_rps, w[i].conn_rps, w[i].nconns * sizeof(double));
            res->nconn_rps += w[i].nconns;
        }
    }
    /* No SETTINGS from any connection (no connection reached HTTP/2): neither value is
     * known. A server that sent SETTINGS without MAX_CONCURRENT_STREAMS keeps UINT32_MAX,
     * the protocol's "unlimited"; one that sent 0 has 0 and counts in conns_ok. */
    if (res->s.conns_ok == 0) {
        res->s.streams_effective = 0;
        res->s.server_max_streams = 0;
    }
    if (!cfg->duration_ns)
        res->measure_ns = res->wall_ns;
    else if (res->interrupted || t_end < sh->t_end)
        res->measure_ns = t_end > sh->t_measure ? t_end - sh->t_measure : 1;
    else
        res->measure_ns = cfg->duration_ns;
    /* -D: workers end before the deadline only when none of their connections is left
     * (a server that died or closed them all); h2load too stops then, but says nothing */
    if (cfg->duration_ns && !res->interrupted && t_end < sh->t_end && rv == H2B_OK) {
        res->ended_early = true;
        snprintf(res->ended_early_reason, sizeof(res->ended_early_reason),
                 "every connection closed or failed (%" PRIu64 " connected, %" PRIu64
                 " connection attempts failed)",
                 res->s.conns_ok, res->s.conns_failed);
    }
    snprintf(res->alpn, sizeof(res->alpn), "%s",
             cfg->h3            ? "h3"
             : cfg->raw_request ? "tcp"
             : h1               ? "http/1.1"
             : sh->ssl_ctx      ? "h2"
                                : "h2c");
    snprintf(res->engine, sizeof(res->engine), "%s",
             cfg->h3                              ? "h3"
             : cfg->raw_request                   ? "raw"
             : h1                                 ? "h1"
             : sh->engine == &h2b__h2_fast_engine ? "fast"
                                                  : "nghttp2");
    return rv;
}

int h2b_load_run_hooked(const struct h2b_load_config *cfg, h2b_load_progress_fn hook, void *ctx,
                        FILE *info, struct h2b_load_result *res, struct h2b_diag *err)
{
    struct h2b__load_proto hdrs = {0};
    struct h2b__load_shared sh = {.cfg = cfg, .stop = &stop_flag, .info = info, .proto = &hdrs};
    struct h2b__load_worker *w = NULL;
    struct h2b__load_iagg *iagg = NULL;
    uint32_t nw = cfg->threads, started = 0;
    char content_length[32];
    bool h1 = false;
    int rv;
    memset(res, 0, sizeof(*res));
    if (cfg->nuris == 0 || cfg->connections == 0 || nw == 0 || nw > cfg->connections || nw > 1024)
        return h2b__load_errf(err, H2B_ERR_INVAL, "invalid configuration");
    snprintf(content_length, sizeof(content_length), "%zu", cfg->body_len);
    sh.rate_mode = cfg->rate > 0;
    sh.paced = cfg->rps > 0 || cfg->nscript > 0;
    for (size_t h = 0; h < cfg->nheaders; h++)
        if (strcmp(cfg->headers[h].name, ":method") == 0)
            sh.method_head = strcmp(cfg->headers[h].value, "HEAD") == 0;
    sh.progress = hook != NULL;
    sh.grpc = cfg->grpc_method != NULL;
    if ((rv = resolve(&sh, err)) != H2B_OK)
        return rv;
    if ((rv = pick_engine(&sh, &h1, err)) != H2B_OK)
        goto out;
    if (build_nva(&hdrs, cfg, content_length) != H2B_OK || !(w = calloc(nw, sizeof(*w)))) {
        rv = h2b__load_errf(err, H2B_ERR_NOMEM, "out of memory");
        goto out;
    }
    uint64_t rl = 0, rh = 0;
    struct rlimit lim;
    if (getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur < cfg->connections + 64ULL &&
        lim.rlim_cur < lim.rlim_max) {
        lim.rlim_cur = lim.rlim_max; /* 1000 connections need more than the usual 1024 fds */
        setrlimit(RLIMIT_NOFILE, &lim);
    }
    uint64_t start_wall_ns = start_clock(&sh);
    if (cfg->interval_ns && (rv = h2b__load_iagg_new(&iagg, &sh, nw)) != H2B_OK) {
        rv = h2b__load_errf(err, rv, "out of memory");
        goto out;
    }
    if ((rv = init_workers(w, nw, &sh, info, err)) != H2B_OK)
        goto out;
    pick_io(w, nw, &sh, res);
    h2b_clock_rusage_ns(&rl, &rh, NULL);
    rv = start_workers(w, nw, &started, err);
    if ((hook || iagg) && rv == H2B_OK)
        watch_workers(w, nw, &sh, iagg, hook, ctx);
    for (uint32_t i = 0; i < started; i++)
        pthread_join(w[i].thread, NULL);
    uint64_t t_end = h2b_clock_now_ns();
    int irv = iagg && rv == H2B_OK ? h2b__load_iagg_poll(iagg, w, true, t_end) : H2B_OK;
    uint64_t ul = 0, uh = 0;
    h2b_clock_rusage_ns(&ul, &uh, NULL);
    res->cpu_user_ns = ul - rl;
    res->cpu_sys_ns = uh - rh;
    res->wall_ns = t_end - sh.t0;
    res->start_wall_ns = start_wall_ns + (sh.t_measure > sh.t0 ? sh.t_measure - sh.t0 : 0);
    if (rv == H2B_OK) {
        rv = merge_workers(res, w, nw, &sh, h1, t_end, err);
        if (rv == H2B_OK && irv != H2B_OK)
            rv = h2b__load_errf(err, irv, "out of memory for the interval results");
        if (rv == H2B_OK && iagg)
            h2b__load_iagg_take(iagg, res);
        if (rv != H2B_OK)
            h2b_load_result_free(res);
    }
    for (uint32_t i = 0; i < nw; i++)
        h2b__load_worker_free(&w[i]);
out:
    h2b__load_iagg_del(iagg);
    free(w);
    shared_free(&sh, &hdrs);
    return rv;
}

void h2b_load_result_free(struct h2b_load_result *res)
{
    h2b_load_stats_free(&res->s);
    free(res->conn_rps);
    res->conn_rps = NULL;
    res->nconn_rps = 0;
    for (size_t i = 0; i < res->nintervals; i++)
        h2b_model_free(&h2b_results_interval_model, &res->intervals[i]);
    free(res->intervals);
    res->intervals = NULL;
    res->nintervals = 0;
}
