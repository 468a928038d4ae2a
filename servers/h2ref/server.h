/*
 * server.h - the reference HTTP/2 server: listener, worker threads, epoll loops, TLS.
 *
 * One process, N worker threads. Each worker owns an epoll instance, a struct h2b_conn_ctx and
 * every connection handed to it; nothing on the hot path is shared. The calling thread accepts
 * and hands connections out round-robin (a per-worker queue plus an eventfd), so they spread
 * evenly whatever the 4-tuple hash would say. The HTTP/2 logic itself lives in conn.h.
 */
#ifndef H2B_H2REF_SERVER_H
#define H2B_H2REF_SERVER_H

#include "core/json.h"
#include "h2ref/conn.h"

#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* How workers move bytes: epoll readiness and recv/send, or io_uring completions. */
enum h2b_io { H2B_IO_EPOLL, H2B_IO_URING };

struct h2b_server_config {
    struct h2b_conn_config conn; /* protocol settings, limits and timeouts */
    const char *host;            /* address to bind (default "127.0.0.1") */
    uint16_t port;               /* 0 = ephemeral */
    int threads;                 /* workers (default: online CPUs, or CPUs in cpus) */
    bool pin;                    /* pin worker i to the i-th CPU of cpus */
    cpu_set_t cpus;
    uint32_t max_connections;        /* open connections at once; more are refused (default 4096) */
    uint32_t max_connections_per_ip; /* open connections per source address; 0: no limit */
    bool tls;                        /* TLS with ALPN h2 */
    const char *cert_file;           /* PEM; NULL with key_file NULL: self-signed in memory */
    const char *key_file;
    const char *docroot;     /* directory for static files, or NULL */
    uint32_t max_open_files; /* docroot files open at once server-wide; 0: 1024, less if the
                              * descriptor limit leaves fewer beside max_connections + 128 */
    uint64_t drain_ns;       /* graceful shutdown: wait this long for in-flight streams */
    FILE *ready;             /* the "listening on" line goes here (cmd_serve: stdout); NULL: none */
    FILE *notice;            /* the io_uring fallback line goes here (cmd_serve: stderr); NULL */
    enum h2b_io io;          /* default epoll; uring falls back to epoll when io_uring is refused
                              * (an "io:" line before the ready line and one on stderr say so) */
};

/* Fills cfg with the defaults (including h2b_conn_config_defaults). */
void h2b_server_config_defaults(struct h2b_server_config *cfg);

/* Runs the server until SIGTERM or SIGINT, then shuts down gracefully: GOAWAY to every
 * connection, in-flight streams get up to drain_ns, then everything is closed. Prints
 * "listening on http[s]://HOST:PORT" (flushed) to cfg->ready once it accepts connections.
 * Blocks SIGTERM/SIGINT in the calling thread and ignores SIGPIPE.
 * Returns H2B_OK after a clean shutdown; H2B_ERR_INVAL (bad configuration; d says why
 * for every failure),
 * H2B_ERR_SYS (bind, epoll, thread creation), H2B_ERR_IO (docroot, certificate files). */
int h2b_server_run(const struct h2b_server_config *cfg, struct h2b_diag *d);

#endif
