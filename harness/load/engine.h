/*
 * engine.h - what the client engines share beside the runtime (worker.h): the request header
 * lists the run builds once (load.c), TCP and TLS connections (tcp.c), and the engine tables
 * load.c chooses from (one per protocol engine file).
 *
 * Not installed, not for users of the library: the public surface is load.h.
 */
#ifndef H2B_LOAD_ENGINE_H
#define H2B_LOAD_ENGINE_H

#include "load/uring.h"
#include "load/worker.h"

#include <errno.h>
#include <nghttp2/nghttp2.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <sys/socket.h>
#include <unistd.h>

/* The request of each URI as a header list (load.c builds it once per run, read-only during
 * it): the HTTP/2 engines send it, h1load.c renders it as HTTP/1.1, h3load.c as nghttp3's. */
struct h2b__load_proto {
    nghttp2_nv **nva; /* per URI, names and values point into cfg (NO_COPY) */
    size_t *nvlen;
};

/* The engines (load.c picks one per run; h3load.c's only when built with HTTP/3). */
extern const struct h2b__load_engine h2b__h2_engine;      /* h2load.c: nghttp2's session */
extern const struct h2b__load_engine h2b__h2_fast_engine; /* h2load.c over h2fast.c */
extern const struct h2b__load_engine h2b__h1_engine;      /* h1load.c */
extern const struct h2b__load_engine h2b__raw_engine;     /* rawload.c */
extern const struct h2b__load_engine h2b__h3_engine;      /* h3load.c */

/* Opens a non-blocking TCP socket (TCP_NODELAY) to the target into *fd, starts connecting and
 * registers it with the worker's epoll for EPOLLOUT (data.ptr = ptr), or on io_uring (w->ring)
 * makes *uio for it, polling for EPOLLOUT (on_event(ptr, ...)). Returns 0 connected at once, 1
 * connecting, -1 failed (*fd, if opened, is the caller's to close). */
int h2b__load_tcp_open(struct h2b__load_worker *w, void *ptr, int *fd, struct h2b__load_uio **uio);

/* The events (EPOLLIN, EPOLLOUT) the connection ptr waits for on fd: epoll's registration, or
 * on io_uring uio's poll (or, streaming, its wait for the send buffer to drain). */
void h2b__load_tcp_watch(struct h2b__load_worker *w, int fd, struct h2b__load_uio *uio, void *ptr,
                         uint32_t events);

/* The connection ptr is set up (HTTP may start): from now on it waits for EPOLLIN, or on
 * io_uring over cleartext it streams (its input comes to the engine's on_input). */
void h2b__load_tcp_ready(struct h2b__load_worker *w, int fd, SSL *ssl, struct h2b__load_uio *uio,
                         void *ptr);

/* A TCP connection's set-up after h2b__load_tcp_open, one event at a time (the HTTP/1.1 and
 * HTTP/2 engines): while *ssl is NULL, fd's connect has completed (SO_ERROR; *t_tcp = w->now),
 * and over TLS *ssl is made (the caller frees it); then each call is a step of the TLS
 * handshake, which must end with the server choosing alpn (or, if alpn_optional, nothing).
 * Returns 0: set up, HTTP may start; 1: the handshake goes on when *events (EPOLLIN or
 * EPOLLOUT) is ready; -1: the connect, the handshake or the ALPN failed. */
int h2b__load_tcp_setup(struct h2b__load_worker *w, int fd, SSL **ssl, uint64_t *t_tcp,
                        const char *alpn, bool alpn_optional, uint32_t *events);

/* Ends a TCP connection of either engine: frees *ssl, closes *fd (which leaves the epoll set), or
 * on io_uring closes *uio, which cancels its operations and closes fd after the last one; all are
 * marked gone (NULL, -1). */
void h2b__load_tcp_close(int *fd, SSL **ssl, struct h2b__load_uio **uio);

/* Bytes in and out of a TCP connection, through ssl when it is TLS (the HTTP/1.1 and HTTP/2
 * engines). Both return the bytes moved (> 0), 0 when the socket or TLS must wait, or below 0:
 * H2B__LOAD_EOF the server closed it (TLS: close_notify), H2B__LOAD_EIO it failed. Inline: they
 * are on every request's path. */
#define H2B__LOAD_EOF (-1)
#define H2B__LOAD_EIO (-2)
#define H2B__LOAD_TLS_CHUNK (1U << 30) /* SSL_read/SSL_write count in int */

/* What a socket call's errno, or an SSL_read/SSL_write that returned r <= 0, means. */
static inline ssize_t h2b__load_sock_fail(int err)
{
    return err == EAGAIN || err == EWOULDBLOCK || err == EINTR ? 0 : H2B__LOAD_EIO;
}
static inline ssize_t h2b__load_tls_fail(SSL *ssl, int r)
{
    int e = SSL_get_error(ssl, r);
    if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE)
        return 0;
    return e == SSL_ERROR_ZERO_RETURN ? H2B__LOAD_EOF : H2B__LOAD_EIO;
}

static inline ssize_t h2b__load_tcp_recv(int fd, SSL *ssl, uint8_t *buf, size_t len)
{
    if (!ssl) {
        ssize_t n = read(fd, buf, len);
        return n > 0 ? n : n == 0 ? H2B__LOAD_EOF : h2b__load_sock_fail(errno);
    }
    ERR_clear_error();
    int r = SSL_read(ssl, buf, (int)(len > H2B__LOAD_TLS_CHUNK ? H2B__LOAD_TLS_CHUNK : len));
    return r > 0 ? r : h2b__load_tls_fail(ssl, r);
}

/* After a read of n of len bytes: true when the connection has nothing more to give this turn
 * (a short read, and over TLS no received bytes wait inside OpenSSL: with read-ahead one read
 * takes many records, and SSL_read returns one at a time). */
static inline bool h2b__load_tcp_drained(SSL *ssl, ssize_t n, size_t len)
{
    return (size_t)n < len && !(ssl && SSL_has_pending(ssl));
}

static inline ssize_t h2b__load_tcp_send(int fd, SSL *ssl, const uint8_t *buf, size_t len)
{
    if (ssl) {
        ERR_clear_error();
        int r = SSL_write(ssl, buf, (int)(len > H2B__LOAD_TLS_CHUNK ? H2B__LOAD_TLS_CHUNK : len));
        return r > 0 ? r : h2b__load_tls_fail(ssl, r);
    }
    ssize_t n = send(fd, buf, len, MSG_NOSIGNAL);
    return n >= 0 ? n : h2b__load_sock_fail(errno);
}

/* h2b__load_tcp_send, or on a streaming io_uring connection (uio set, cleartext) into its send
 * buffer (uring.h): the same returns. */
static inline ssize_t h2b__load_conn_send(int fd, SSL *ssl, struct h2b__load_uio *uio,
                                          const uint8_t *buf, size_t len)
{
    if (uio && !ssl)
        return h2b__load_uio_send(uio, buf, len);
    return h2b__load_tcp_send(fd, ssl, buf, len);
}

/* The run's TLS client context (the ALPN list of cfg: --h1, --npn-list or h2), with the record
 * counting h2b__load_tls_new points at a worker's stats. NULL: OpenSSL failed. */
SSL_CTX *h2b__load_tls_context(const struct h2b_load_config *cfg);

/* A TLS client on fd for sh->ssl_ctx (SNI: the URI's host unless it is an address), its
 * record counting (application_data records received: st->tls_records, the first one sets
 * st->tls_version and st->tls_cipher) pointed at st, which belongs to the thread that drives it. */
SSL *h2b__load_tls_new(const struct h2b__load_shared *sh, int fd, struct h2b_load_stats *st);

/* "TLSv1.3", "TLSv1.2", ... for an OpenSSL protocol version ("unknown" otherwise). Inline: the
 * report (report.c) names versions too, and a call would tie it to tcp.c's file. */
static inline const char *h2b__load_tls_name(int v)
{
    switch (v) {
    case TLS1_3_VERSION:
        return "TLSv1.3";
    case TLS1_2_VERSION:
        return "TLSv1.2";
    case TLS1_1_VERSION:
        return "TLSv1.1";
    case TLS1_VERSION:
        return "TLSv1";
    default:
        return "unknown";
    }
}

/* h2load's "TLS Protocol:", "Cipher:", "Server Temp Key:" lines, once, by worker 0 after its
 * first handshake. */
void h2b__load_report_tls(struct h2b__load_worker *w, SSL *ssl);

#endif
