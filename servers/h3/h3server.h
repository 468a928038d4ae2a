/*
 * h3server.h - the reference server's HTTP/3 listener (QUIC over UDP: ngtcp2 0.12, nghttp3 0.8,
 * GnuTLS).
 *
 * One thread owns one UDP socket, bound to the same port number as the TCP listener, and every
 * QUIC connection on it. It serves the endpoints of the HTTP/2 server (/ and /hello, /bytes/N,
 * POST /sink, POST /echo, /status/NNN, /delay/MS) plus /stats with its own counters.
 * Thread-safety: h2b_h3_server_start and h2b_h3_server_stop are called from one thread; the
 * server thread blocks every signal, so the caller's signalfd keeps receiving them.
 */
#ifndef H2B_H3_H3SERVER_H
#define H2B_H3_H3SERVER_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct h2b_h3_server;
struct h2b_diag; /* core/json.h */

struct h2b_h3_server_config {
    const char *host;      /* address to bind (default "127.0.0.1") */
    uint16_t port;         /* 0: pick a port free for both UDP and TCP */
    const char *cert_file; /* PEM; both NULL: self-signed in memory */
    const char *key_file;
    uint32_t max_connections;      /* QUIC connections at once; more are refused (4096) */
    uint32_t max_streams;          /* concurrent request streams per connection (256) */
    uint32_t stream_window;        /* request body receive window per stream, bytes (256 KiB);
                                    * also the most an /echo stream buffers (its ring) */
    uint64_t echo_conn_max;        /* /echo ring bytes one connection may hold (4 MiB); an /echo
                                    * whose ring would pass it is answered 503 */
    uint64_t memory_budget;        /* /echo ring bytes the server may hold, counted in
                                    * *memory_used (1 GiB, 0: no budget); past it, 503 */
    _Atomic uint64_t *memory_used; /* the count, shared with the HTTP/2 workers' (h2ref's
                                    * memory_used) so --memory-budget is one server-wide budget;
                                    * NULL: the HTTP/3 server's own. Must outlive the server */
    uint32_t conn_window;          /* connection receive window, bytes (16 MiB) */
    uint64_t idle_timeout_ns;      /* QUIC max_idle_timeout (60 s) */
    uint64_t handshake_timeout_ns; /* connections not established by then are dropped (10 s) */
    uint64_t max_body;             /* largest /bytes/N (1 GiB) */
    uint64_t drain_ns;             /* on stop: GOAWAY, then wait this long for streams (3 s) */
    bool retry;                    /* address validation: every new connection needs a Retry
                                    * token first (default true) */
    int cpu;                       /* pin the server thread to this CPU; -1: not pinned */
};

/* Fills cfg with the defaults above. */
void h2b_h3_server_config_defaults(struct h2b_h3_server_config *cfg);

/* Binds the UDP socket (when cfg->port is 0, a port that is also free for TCP, written to
 * *port), loads or makes the certificate and starts the server thread. Returns H2B_OK,
 * H2B_ERR_INVAL (host does not resolve), H2B_ERR_SYS (socket, bind, thread), H2B_ERR_IO
 * (certificate files), H2B_ERR_UNSUPPORTED (no self-signed certificate) or H2B_ERR_NOMEM, and
 * diag (may be NULL) says why (it may be left empty for H2B_ERR_NOMEM); *out is untouched on
 * failure. */
int h2b_h3_server_start(struct h2b_h3_server **out, const struct h2b_h3_server_config *cfg,
                        uint16_t *port, struct h2b_diag *diag);

/* Graceful stop: HTTP/3 GOAWAY to every connection, in-flight streams get drain_ns, then
 * CONNECTION_CLOSE; joins the thread and frees everything. Accepts NULL. */
void h2b_h3_server_stop(struct h2b_h3_server *srv);

#endif
