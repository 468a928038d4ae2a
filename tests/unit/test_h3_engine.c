/*
 * test_h3_engine.c - the load client's HTTP/3 engine (h3load.c, h2b__h3_engine) through its
 * interface, run by the real runtime (worker.c) on one worker, against the reference server's
 * HTTP/3 listener started in this process (servers/h3, a self-signed certificate, Retry on).
 *
 * test_load_engines.c plays the server byte by byte for the TCP engines; a QUIC peer cannot be
 * scripted that way (every packet is encrypted with keys from the handshake), so here the peer is
 * a real one whose answers are known exactly: /hello's 13 bytes, /bytes/N's N, /status/NNN, POST
 * /echo returning the body, and a server that limits concurrent streams or goes away. Every
 * count the worker keeps is checked exactly: requests started, done, succeeded, errored, the
 * status codes, the body bytes, the connections, and one latency per ended request.
 *
 * Cases: one GET; 60 GETs over 3 connections of 10 streams each; a server that allows 2
 * streams at a time under -m 10 (all succeed, the client waits for stream credit); 2 MiB bodies
 * through a 64 KiB stream window (-w 16: flow-control credit is returned, nothing stalls);
 * 404s (done, not succeeded, counted by status); POST /echo of a 100,000-byte body (the
 * response is the body); a server stopped under a request that has not answered (the request
 * errors, the worker ends by itself); and a port nobody serves (the connection fails, the
 * requests it owed are errored, the worker ends).
 */
#include "core/clock.h"
#include "core/error.h"
#include "core/json.h"
#include "h3/h3server.h"
#include "load/engine.h"
#include "load_rig.h"
#include "test.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

#define GUARD_S 30 /* a worker that has not ended by then fails the case (a hang) */
#define HELLO_LEN 13

struct rig {
    struct h2b_load_config cfg;
    nghttp2_nv nv[6];
    nghttp2_nv *nva[1];
    size_t nvlen[1];
    char clen[24];
    struct h2b__load_proto proto;
    struct h2b__load_shared sh;
    struct h2b__load_worker w;
    atomic_int stop;
    pthread_t th;
    bool running;
};

static nghttp2_nv nv_of(const char *name, const char *value)
{
    return (nghttp2_nv){(uint8_t *)(uintptr_t)name, (uint8_t *)(uintptr_t)value, strlen(name),
                        strlen(value), NGHTTP2_NV_FLAG_NONE};
}

/* Starts an HTTP/3 server on 127.0.0.1 (max_streams: its concurrent streams per connection;
 * 0: the default). */
static struct h2b_h3_server *server_start(uint32_t max_streams, uint16_t *port)
{
    struct h2b_h3_server_config c;
    h2b_h3_server_config_defaults(&c);
    c.port = 0;
    c.drain_ns = 100 * 1000 * 1000;
    if (max_streams)
        c.max_streams = max_streams;
    struct h2b_h3_server *srv = NULL;
    struct h2b_diag d = {0};
    int rv = h2b_h3_server_start(&srv, &c, port, &d);
    CHECK_EQ_INT(rv, H2B_OK);
    if (rv != H2B_OK)
        fprintf(stderr, "h3 server: %s\n", d.message);
    return srv;
}

/* Parses "load --h3 OPTS... https://127.0.0.1:PORT/PATH" and starts one worker on the HTTP/3
 * engine with the run's connections (-c). */
static bool rig_open(struct rig *r, uint16_t port, const char *path, const char *const *opts)
{
    memset(r, 0, sizeof *r);
    char url[128];
    snprintf(url, sizeof url, "https://127.0.0.1:%u%s", port, path);
    char *argv[20] = {"load", "--h3"};
    int argc = 2;
    while (*opts && argc < 18)
        argv[argc++] = (char *)(uintptr_t)*opts++;
    argv[argc++] = url;
    h2b_load_config_init(&r->cfg);
    struct h2b_diag d = {0};
    int rv = h2b_load_config_parse(&r->cfg, argc, argv, &d);
    CHECK_EQ_INT(rv, H2B_OK);
    if (rv != H2B_OK) {
        fprintf(stderr, "load config: %s\n", d.message);
        return false;
    }
    const struct h2b_load_uri *u = &r->cfg.uris[0];
    size_t n = 0;
    r->nv[n++] = nv_of(":path", u->path);
    r->nv[n++] = nv_of(":scheme", u->scheme);
    r->nv[n++] = nv_of(":authority", u->authority);
    r->nv[n++] = nv_of(":method", r->cfg.body ? "POST" : "GET");
    r->nv[n++] = nv_of("user-agent", "h2bench/test");
    if (r->cfg.body) {
        snprintf(r->clen, sizeof r->clen, "%zu", r->cfg.body_len);
        r->nv[n++] = nv_of("content-length", r->clen);
    }
    r->nva[0] = r->nv;
    r->nvlen[0] = n;
    r->proto = (struct h2b__load_proto){r->nva, r->nvlen};
    struct sockaddr_in *in = (struct sockaddr_in *)&r->sh.addr;
    in->sin_family = AF_INET;
    in->sin_port = htons(port);
    in->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    r->sh.addrlen = sizeof *in;
    r->sh.cfg = &r->cfg;
    r->sh.engine = &h2b__h3_engine;
    r->sh.proto = &r->proto;
    r->sh.stop = &r->stop;
    r->sh.t0 = h2b_clock_now_ns();
    rv = h2b__load_worker_init(&r->w, 0, &r->sh, r->cfg.connections, 0, r->cfg.requests);
    CHECK_EQ_INT(rv, H2B_OK);
    if (rv != H2B_OK)
        return false;
    r->running = pthread_create(&r->th, NULL, h2b__load_worker_main, &r->w) == 0;
    CHECK(r->running);
    return r->running;
}

/* Waits for the worker to end by itself (after GUARD_S it is stopped, and the case fails). */
static void rig_join(struct rig *r)
{
    if (!r->running)
        return;
    load_rig_join(r->th, &r->w, &r->stop, GUARD_S, NULL, NULL);
    r->running = false;
}

static void rig_close(struct rig *r)
{
    rig_join(r);
    h2b__load_worker_free(&r->w);
    h2b_load_config_free(&r->cfg);
}

/* What a case's run must have counted, each exactly. */
struct want {
    uint64_t started, done, succeeded, errored;
    unsigned status;   /* the one status every done request had */
    uint64_t data;     /* body bytes */
    uint64_t conns_ok; /* connections that reached HTTP/3 */
};

static void check_counts(const struct rig *r, const struct want *x)
{
    const struct h2b_load_stats *st = &r->w.stats;
    CHECK_EQ_U64(st->started, x->started);
    CHECK_EQ_U64(st->done, x->done);
    CHECK_EQ_U64(st->succeeded, x->succeeded);
    CHECK_EQ_U64(st->errored, x->errored);
    CHECK_EQ_U64(st->failed, x->done - x->succeeded + x->errored);
    if (x->done)
        CHECK_EQ_U64(st->status[x->status], x->done);
    CHECK_EQ_U64(st->bytes_data, x->data);
    CHECK_EQ_U64(st->conns_ok, x->conns_ok);
    CHECK_EQ_U64(st->latency->total, x->done + x->errored);
    CHECK_EQ_U64(st->unfinished + st->unsent + st->timeouts, 0);
}

/* The run against a fresh server: the worker's counts must be x's. */
static void run_case(const char *name, uint32_t max_streams, const char *path,
                     const char *const *opts, const struct want *x)
{
    fprintf(stderr, "case %s\n", name);
    uint16_t port = 0;
    struct h2b_h3_server *srv = server_start(max_streams, &port);
    if (!srv)
        return;
    struct rig r;
    if (rig_open(&r, port, path, opts)) {
        rig_join(&r);
        check_counts(&r, x);
    }
    rig_close(&r);
    h2b_h3_server_stop(srv);
}

/* A request the server has not answered when it stops: the request errors, and the worker ends
 * by itself (nothing is owed after -n 1). */
static void server_gone(void)
{
    fprintf(stderr, "case server_gone\n");
    uint16_t port = 0;
    struct h2b_h3_server *srv = server_start(0, &port);
    if (!srv)
        return;
    struct rig r;
    if (rig_open(&r, port, "/delay/20000", (const char *[]){"-n", "1", NULL})) {
        /* stop once the request is out: the connection is up and the stream open */
        for (int i = 0; i < 2000 && atomic_load(&r.w.stats.started) == 0; i++)
            usleep(5000);
        CHECK_EQ_U64(r.w.stats.started, 1);
        h2b_h3_server_stop(srv);
        srv = NULL;
        rig_join(&r);
        const struct h2b_load_stats *st = &r.w.stats;
        CHECK_EQ_U64(st->conns_ok, 1);
        CHECK_EQ_U64(st->done, 0);
        CHECK_EQ_U64(st->succeeded, 0);
        CHECK_EQ_U64(st->errored, 1);
        CHECK_EQ_U64(st->failed, 1);
        CHECK_EQ_U64(st->latency->total, 1);
    }
    rig_close(&r);
    h2b_h3_server_stop(srv);
}

/* A port with no server behind it: the connection never comes up, the 3 requests it owed are
 * errored, and the worker ends by itself. */
static void nobody_there(void)
{
    fprintf(stderr, "case nobody_there\n");
    uint16_t port = 0;
    struct h2b_h3_server *srv = server_start(0, &port);
    if (!srv)
        return;
    h2b_h3_server_stop(srv); /* the port is free again, and nothing answers on it */
    struct rig r;
    if (rig_open(&r, port, "/hello", (const char *[]){"-n", "3", NULL})) {
        rig_join(&r);
        const struct h2b_load_stats *st = &r.w.stats;
        CHECK_EQ_U64(st->conns_ok, 0);
        CHECK(st->conns_failed >= 1);
        CHECK_EQ_U64(st->done, 0);
        CHECK_EQ_U64(st->succeeded, 0);
        CHECK_EQ_U64(st->errored, 3);
    }
    rig_close(&r);
}

static char body_path[64];

/* A file of n bytes of a pattern, for -d. */
static bool write_body(size_t n)
{
    snprintf(body_path, sizeof body_path, "/tmp/h2b-h3-engine-%d.body", (int)getpid());
    FILE *f = fopen(body_path, "wb");
    if (!f)
        return false;
    for (size_t i = 0; i < n; i++)
        fputc('a' + (int)(i % 26), f);
    return fclose(f) == 0;
}

int main(void)
{
    run_case("hello", 0, "/hello", (const char *[]){"-n", "1", NULL},
             &(struct want){1, 1, 1, 0, 200, HELLO_LEN, 1});
    run_case("multiplexed", 0, "/hello", (const char *[]){"-n", "60", "-c", "3", "-m", "10", NULL},
             &(struct want){60, 60, 60, 0, 200, 60 * HELLO_LEN, 3});
    run_case("stream_credit", 2, "/hello", (const char *[]){"-n", "40", "-m", "10", NULL},
             &(struct want){40, 40, 40, 0, 200, 40 * HELLO_LEN, 1});
    run_case("flow_control", 0, "/bytes/2097152",
             (const char *[]){"-n", "3", "-m", "2", "-w", "16", NULL},
             &(struct want){3, 3, 3, 0, 200, 3 * 2097152ULL, 1});
    run_case("status_404", 0, "/status/404", (const char *[]){"-n", "5", "-m", "5", NULL},
             &(struct want){5, 5, 0, 0, 404, 0, 1});
    /* /status/404's body, if any, counts: the want above says none, as the server sends none */
    if (write_body(100000)) {
        run_case("post_echo", 0, "/echo",
                 (const char *[]){"-n", "4", "-m", "2", "-d", body_path, NULL},
                 &(struct want){4, 4, 4, 0, 200, 4 * 100000ULL, 1});
        unlink(body_path);
    } else {
        CHECK(!"the request body file is written");
    }
    server_gone();
    nobody_there();
    return test_report();
}
