/*
 * tcp.c - TCP and TLS connections for the engines that run over TCP (h2load.c, h1load.c,
 * rawload.c): a non-blocking connect registered with the worker's epoll (or, on --io uring,
 * polled through the worker's ring: uring.h), the set-up one event at a time (connect result,
 * TLS handshake, ALPN), what the connection waits for (h2b__load_tcp_watch, _ready), the close,
 * and the run's TLS context with its record counting (engine.h). Bytes in and out are
 * engine.h's inline h2b__load_tcp_recv/_send (and _conn_send, which on io_uring copies into the
 * connection's send buffer); on io_uring a cleartext connection's input comes through the
 * engine's on_input instead of reads.
 *
 * Approach: every engine calls the same helpers, so a connect, a handshake and a failed one are
 * counted alike whatever protocol runs on top. Rejected: a TCP connection struct of its own
 * (each engine keeps fd and ssl in its connection, beside its protocol state).
 */
#include "load/engine.h"

#include "core/error.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/evp.h>
#include <openssl/objects.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>

#define TLS_READ_BUF (128 * 1024) /* the read-ahead buffer of a TLS connection */

/* Counts the TLS records that carry application data to us. TLS 1.3 hides the real type: every
 * protected record says application_data outside, so the inner content type OpenSSL reports after
 * decryption decides (a post-handshake NewSessionTicket is not a response record); TLS 1.2 says it
 * in the record header. Rejected: counting SSL_read calls (one read can drain many records, one
 * record can take many reads) and kTLS-only counters (the kernel would hide records from us). */
static void tls_msg(int write_p, int version, int content_type, const void *buf, size_t len,
                    SSL *ssl, void *arg)
{
    (void)version;
    struct h2b_load_stats *st = arg;
    if (write_p || !st || len < 1 || ((const unsigned char *)buf)[0] != SSL3_RT_APPLICATION_DATA)
        return;
    int v = SSL_version(ssl);
    if (content_type != (v == TLS1_3_VERSION ? SSL3_RT_INNER_CONTENT_TYPE : SSL3_RT_HEADER))
        return;
    st->tls_records++;
    if (!st->tls_version) {
        st->tls_version = v;
        st->tls_cipher = SSL_CIPHER_get_name(SSL_get_current_cipher(ssl));
    }
}

SSL *h2b__load_tls_new(const struct h2b__load_shared *sh, int fd, struct h2b_load_stats *st)
{
    SSL *ssl = SSL_new(sh->ssl_ctx);
    if (!ssl || SSL_set_fd(ssl, fd) != 1) {
        SSL_free(ssl);
        return NULL;
    }
    SSL_set_msg_callback_arg(ssl, st);
    SSL_set_connect_state(ssl);
    const char *host = sh->cfg->uris[0].host; /* SNI names a host, never an address */
    if (!strchr(host, ':') && strspn(host, "0123456789.") != strlen(host))
        SSL_set_tlsext_host_name(ssl, host);
    return ssl;
}

SSL_CTX *h2b__load_tls_context(const struct h2b_load_config *cfg)
{
    SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
    if (!ctx)
        return NULL;
    /* A benchmark talks to test servers with self-signed certificates: no verification, as in
     * h2load. */
    SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, NULL);
    SSL_CTX_set_msg_callback(ctx, tls_msg); /* a no-op until h2b__load_tls_attach */
    SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
    SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER |
                              SSL_MODE_RELEASE_BUFFERS);
    /* Read-ahead: one read(2) takes what the socket holds, up to TLS_READ_BUF, where OpenSSL
     * would read each record's 5-byte header and then its body (two system calls per 16 KiB
     * record of a bulk response). SSL_read still hands out a record at a time: the engines read
     * on while SSL_has_pending (h2b__load_tcp_drained). Not with --ktls: bytes read ahead
     * past the handshake would keep the kernel from taking over the receive side. */
    if (!cfg->ktls) {
        SSL_CTX_set_read_ahead(ctx, 1);
        SSL_CTX_set_default_read_buffer_len(ctx, TLS_READ_BUF);
    }
    /* validated by the parser already */
    if ((cfg->ciphers && SSL_CTX_set_cipher_list(ctx, cfg->ciphers) != 1) ||
        (cfg->tls13_ciphers && SSL_CTX_set_ciphersuites(ctx, cfg->tls13_ciphers) != 1) ||
        (cfg->groups && SSL_CTX_set1_groups_list(ctx, cfg->groups) != 1)) {
        SSL_CTX_free(ctx);
        return NULL;
    }
#ifdef SSL_OP_ENABLE_KTLS
    if (cfg->ktls)
        SSL_CTX_set_options(ctx, SSL_OP_ENABLE_KTLS);
#endif
    static const unsigned char h2[] = "\x02h2", h1[] = "\x08http/1.1";
    const unsigned char *alpn = cfg->h1 ? h1 : cfg->alpn ? cfg->alpn : h2;
    size_t alpn_len = cfg->h1 ? sizeof h1 - 1 : cfg->alpn ? cfg->alpn_len : sizeof h2 - 1;
    if (SSL_CTX_set_alpn_protos(ctx, alpn, (unsigned)alpn_len) != 0) {
        SSL_CTX_free(ctx);
        return NULL;
    }
    return ctx;
}

/* "TLS Protocol:", "Cipher:", "Server Temp Key:" after the first handshake */
void h2b__load_report_tls(struct h2b__load_worker *w, SSL *ssl)
{
    if (w->id != 0 || w->tls_reported || !w->sh->info)
        return;
    w->tls_reported = true;
    h2b__load_info(w, "TLS Protocol: %s\nCipher: %s\n", h2b__load_tls_name(SSL_version(ssl)),
                   SSL_CIPHER_get_name(SSL_get_current_cipher(ssl)));
    EVP_PKEY *key = NULL;
    if (!SSL_get_peer_tmp_key(ssl, &key))
        return;
    int id = EVP_PKEY_id(key);
    if (id == EVP_PKEY_RSA) {
        h2b__load_info(w, "Server Temp Key: RSA %d bits\n", EVP_PKEY_bits(key));
    } else if (id == EVP_PKEY_DH) {
        h2b__load_info(w, "Server Temp Key: DH %d bits\n", EVP_PKEY_bits(key));
    } else if (id == EVP_PKEY_EC) {
        char curve[64];
        if (!EVP_PKEY_get_utf8_string_param(key, "group", curve, sizeof(curve), NULL))
            snprintf(curve, sizeof(curve), "<unknown>");
        h2b__load_info(w, "Server Temp Key: ECDH %s %d bits\n", curve, EVP_PKEY_bits(key));
    } else {
        h2b__load_info(w, "Server Temp Key: %s %d bits\n", OBJ_nid2sn(id), EVP_PKEY_bits(key));
    }
    EVP_PKEY_free(key);
}

int h2b__load_tcp_open(struct h2b__load_worker *w, void *ptr, int *fd, struct h2b__load_uio **uio)
{
    const struct h2b__load_shared *sh = w->sh;
    *fd = socket(sh->addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (*fd < 0)
        return -1;
    int one = 1;
    setsockopt(*fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    int rv = connect(*fd, (const struct sockaddr *)&sh->addr, sh->addrlen);
    if (rv != 0 && errno != EINPROGRESS) {
        w->stats.conn_errno = w->stats.conn_errno ? w->stats.conn_errno : errno;
        return -1;
    }
    if (w->ring) {
        if (h2b__load_uio_open(w, ptr, *fd, uio) != H2B_OK)
            return -1;
    } else {
        struct epoll_event ev = {.events = EPOLLOUT, .data.ptr = ptr};
        if (epoll_ctl(w->epfd, EPOLL_CTL_ADD, *fd, &ev) != 0)
            return -1;
    }
    return rv == 0 ? 0 : 1;
}

void h2b__load_tcp_watch(struct h2b__load_worker *w, int fd, struct h2b__load_uio *uio, void *ptr,
                         uint32_t events)
{
    if (uio) {
        h2b__load_uio_watch(uio, events);
        return;
    }
    struct epoll_event ev = {.events = events, .data.ptr = ptr};
    epoll_ctl(w->epfd, EPOLL_CTL_MOD, fd, &ev);
}

void h2b__load_tcp_ready(struct h2b__load_worker *w, int fd, SSL *ssl, struct h2b__load_uio *uio,
                         void *ptr)
{
    if (uio && !ssl)
        h2b__load_uio_stream(uio);
    else
        h2b__load_tcp_watch(w, fd, uio, ptr, EPOLLIN);
}

void h2b__load_tcp_close(int *fd, SSL **ssl, struct h2b__load_uio **uio)
{
    if (*ssl) {
        SSL_free(*ssl);
        *ssl = NULL;
    }
    if (*uio) { /* the socket goes with the connection's last operation (uring.h) */
        h2b__load_uio_close(uio);
        *fd = -1;
    }
    if (*fd >= 0) {
        close(*fd); /* also leaves the epoll set */
        *fd = -1;
    }
}

int h2b__load_tcp_setup(struct h2b__load_worker *w, int fd, SSL **ssl, uint64_t *t_tcp,
                        const char *alpn, bool alpn_optional, uint32_t *events)
{
    if (!*ssl) {
        *t_tcp = w->now;
        int err = 0;
        socklen_t len = sizeof(err);
        if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0 || err != 0) {
            w->stats.conn_errno = w->stats.conn_errno ? w->stats.conn_errno : err ? err : errno;
            return -1;
        }
        if (!w->sh->ssl_ctx)
            return 0;
        if (!(*ssl = h2b__load_tls_new(w->sh, fd, &w->stats)))
            return -1;
    }
    ERR_clear_error();
    int rv = SSL_do_handshake(*ssl);
    if (rv == 1) {
        const unsigned char *got = NULL;
        unsigned gotlen = 0;
        size_t want = strlen(alpn);
        SSL_get0_alpn_selected(*ssl, &got, &gotlen);
        if (gotlen == 0 && alpn_optional)
            return 0;
        return gotlen == want && memcmp(got, alpn, want) == 0 ? 0 : -1;
    }
    int e = SSL_get_error(*ssl, rv);
    ERR_clear_error();
    if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
        *events = e == SSL_ERROR_WANT_READ ? EPOLLIN : EPOLLOUT;
        return 1;
    }
    return -1;
}
