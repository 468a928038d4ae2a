/*
 * tls.c - OpenSSL 3 server context for h2 (and http/1.1): versions, ciphers, ALPN, certificates.
 *
 * TLS 1.2 is limited to ECDHE with AEAD ciphers (RFC 9113 section 9.2.2; anything else would
 * earn INADEQUATE_SECURITY from a strict client). The generated certificate is ECDSA P-256: its
 * handshake is several times cheaper than RSA-2048, which matters when 1000 connections ramp up
 * at once (the generator is core/tlscert.c). Buffers are released on idle connections
 * (SSL_MODE_RELEASE_BUFFERS).
 */
#include "h2ref/tls.h"

#include "core/error.h"
#include "core/tlscert.h"

#include <nghttp2/nghttp2.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#define READ_BUF (64 * 1024) /* a connection's read-ahead buffer, while it holds bytes */

static int alpn_select(SSL *ssl, const unsigned char **out, unsigned char *outlen,
                       const unsigned char *in, unsigned int inlen, void *arg)
{
    (void)ssl, (void)arg;
    /* nghttp2_select_next_protocol takes non-const out pointers on 1.52; it prefers "h2" and
     * returns 0 for "http/1.1" (served by h1.c). */
    if (nghttp2_select_next_protocol((unsigned char **)out, outlen, in, inlen) < 0)
        return SSL_TLSEXT_ERR_ALERT_FATAL; /* neither offered: no_application_protocol */
    return SSL_TLSEXT_ERR_OK;
}

static void ssl_error(struct h2b_diag *d, const char *what, const char *file)
{
    char buf[256];
    ERR_error_string_n(ERR_get_error(), buf, sizeof buf);
    h2b_diag_at(d, NULL, 0, 0, "%s%s%s: %s", what, file ? " " : "", file ? file : "", buf);
}

/* The certificate of core/tlscert.c (one generator for the server and the runner's peers). */
static int self_signed(SSL_CTX *ctx)
{
    EVP_PKEY *key = NULL;
    X509 *crt = NULL;
    if (h2b_tlscert_new(&key, &crt) != H2B_OK)
        return 0;
    int ok = SSL_CTX_use_certificate(ctx, crt) == 1 && SSL_CTX_use_PrivateKey(ctx, key) == 1;
    X509_free(crt);
    EVP_PKEY_free(key);
    return ok;
}

SSL_CTX *h2b_tls_ctx_new(const char *cert_file, const char *key_file, struct h2b_diag *d)
{
    SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
    if (!ctx) {
        ssl_error(d, "SSL_CTX_new", NULL);
        return NULL;
    }
    SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
    SSL_CTX_set_options(ctx, SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION |
                                 SSL_OP_CIPHER_SERVER_PREFERENCE);
    SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER |
                              SSL_MODE_RELEASE_BUFFERS);
    /* Read-ahead: one read(2) takes what the socket holds, up to READ_BUF, instead of a
     * record's header and then its body (two system calls per record of an upload); the workers
     * read on until SSL_read wants more. */
    SSL_CTX_set_read_ahead(ctx, 1);
    SSL_CTX_set_default_read_buffer_len(ctx, READ_BUF);
    /* AES-128-GCM first (as h2o and nginx pick it): a bulk response costs the AES rounds of
     * 128-bit keys, not 256, and both clients and servers are measured on it */
    if (SSL_CTX_set_cipher_list(ctx, "ECDHE+AESGCM+AES128:ECDHE+AESGCM:ECDHE+CHACHA20") != 1 ||
        SSL_CTX_set_ciphersuites(ctx, "TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:"
                                      "TLS_CHACHA20_POLY1305_SHA256") != 1 ||
        SSL_CTX_set1_groups_list(ctx, "X25519:P-256") != 1) {
        ssl_error(d, "TLS configuration", NULL);
        goto out_free;
    }
    SSL_CTX_set_alpn_select_cb(ctx, alpn_select, NULL);
    if (cert_file || key_file) {
        if (!cert_file || !key_file) {
            h2b_diag_at(d, NULL, 0, 0, "--cert and --key go together");
            goto out_free;
        }
        if (SSL_CTX_use_certificate_chain_file(ctx, cert_file) != 1) {
            ssl_error(d, "cannot load certificate", cert_file);
            goto out_free;
        }
        if (SSL_CTX_use_PrivateKey_file(ctx, key_file, SSL_FILETYPE_PEM) != 1) {
            ssl_error(d, "cannot load key", key_file);
            goto out_free;
        }
        if (SSL_CTX_check_private_key(ctx) != 1) {
            ssl_error(d, "key does not match certificate", key_file);
            goto out_free;
        }
    } else if (!self_signed(ctx)) {
        ssl_error(d, "cannot generate a self-signed certificate", NULL);
        goto out_free;
    }
    return ctx;
out_free:
    SSL_CTX_free(ctx);
    return NULL;
}

/* ---- the gathering write BIO (tls.h) ----
 * Why a BIO of our own: OpenSSL's socket BIO writes each record as it is made, and BIO_f_buffer
 * would keep a buffer per connection for its whole life. Here a connection holds a buffer only
 * from its first unsent byte to its last, and the server decides when bytes go (a push per
 * flush, or when the room left is less than a record). A write takes what fits and returns the
 * count (OpenSSL writes the rest of its record next); with no room at all it sends first, and if
 * the socket is full it asks OpenSSL to retry (SSL_ERROR_WANT_WRITE), keeping the record. */

#define POOL_KEEP 4 /* free buffers a worker keeps */

struct tls_out {
    int fd;
    struct h2b_tls_pool *pool;
    uint8_t *buf; /* NULL while nothing waits */
    size_t head, len;
};

void h2b_tls_pool_init(struct h2b_tls_pool *p, _Atomic uint64_t *mem_used)
{
    h2b_freelist_init(&p->bufs, H2B_TLS_OUT_SIZE, POOL_KEEP);
    p->mem_used = mem_used;
}

void h2b_tls_pool_free(struct h2b_tls_pool *p)
{
    h2b_freelist_free(&p->bufs);
}

/* The connection's buffer, empty; false: out of memory. */
static bool out_take(struct tls_out *o)
{
    bool fresh;
    if (!(o->buf = h2b_freelist_get(&o->pool->bufs, &fresh)))
        return false;
    o->head = o->len = 0;
    if (o->pool->mem_used)
        atomic_fetch_add_explicit(o->pool->mem_used, H2B_TLS_OUT_SIZE, memory_order_relaxed);
    return true;
}

static void out_give(struct tls_out *o)
{
    if (o->pool->mem_used)
        atomic_fetch_sub_explicit(o->pool->mem_used, H2B_TLS_OUT_SIZE, memory_order_relaxed);
    h2b_freelist_put(&o->pool->bufs, o->buf);
    o->buf = NULL;
    o->head = o->len = 0;
}

/* 1 all sent (buffer returned), 0 socket full, -1 failed */
static int out_push(struct tls_out *o)
{
    while (o->buf && o->head < o->len) {
        ssize_t n = send(o->fd, o->buf + o->head, o->len - o->head, MSG_NOSIGNAL);
        if (n > 0) {
            o->head += (size_t)n;
        } else if (n < 0 && errno == EINTR) {
            continue;
        } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            return 0;
        } else {
            if (n == 0)
                errno = EPIPE;
            return -1;
        }
    }
    if (o->buf)
        out_give(o);
    return 1;
}

static int out_write(BIO *b, const char *data, int n)
{
    struct tls_out *o = BIO_get_data(b);
    BIO_clear_retry_flags(b);
    if (n <= 0)
        return 0;
    if (o->buf && o->len == H2B_TLS_OUT_SIZE) { /* full: send first */
        if (out_push(o) < 0)
            return -1;
        if (o->buf && o->head == 0) { /* the socket took nothing: OpenSSL keeps the record */
            BIO_set_retry_write(b);
            return -1;
        }
        if (o->buf) { /* sent in part: make room at the end */
            memmove(o->buf, o->buf + o->head, o->len - o->head);
            o->len -= o->head;
            o->head = 0;
        }
    }
    if (!o->buf && !out_take(o))
        return -1;
    size_t k = H2B_TLS_OUT_SIZE - o->len;
    if (k > (size_t)n)
        k = (size_t)n;
    memcpy(o->buf + o->len, data, k);
    o->len += k;
    return (int)k;
}

static long out_ctrl(BIO *b, int cmd, long num, void *ptr)
{
    (void)num, (void)ptr;
    struct tls_out *o = BIO_get_data(b);
    switch (cmd) {
    case BIO_CTRL_FLUSH: { /* the handshake's flights, alerts */
        BIO_clear_retry_flags(b);
        int r = out_push(o);
        if (r == 0)
            BIO_set_retry_write(b);
        return r > 0 ? 1 : r == 0 ? 0 : -1;
    }
    case BIO_CTRL_WPENDING:
        return (long)(o->len - o->head);
    case BIO_CTRL_PENDING:
        return 0;
    default:
        return 0;
    }
}

static int out_destroy(BIO *b)
{
    struct tls_out *o = BIO_get_data(b);
    if (o) {
        if (o->buf)
            out_give(o);
        free(o);
        BIO_set_data(b, NULL);
    }
    return 1;
}

static BIO_METHOD *out_method;
static pthread_once_t out_once = PTHREAD_ONCE_INIT;

static void out_method_init(void)
{
    int idx = BIO_get_new_index();
    BIO_METHOD *m = idx < 0 ? NULL : BIO_meth_new(idx | BIO_TYPE_SOURCE_SINK, "h2ref tls out");
    if (m && BIO_meth_set_write(m, out_write) == 1 && BIO_meth_set_ctrl(m, out_ctrl) == 1 &&
        BIO_meth_set_destroy(m, out_destroy) == 1) {
        out_method = m;
        return;
    }
    BIO_meth_free(m);
}

bool h2b_tls_out_attach(SSL *ssl, int fd, struct h2b_tls_pool *pool)
{
    pthread_once(&out_once, out_method_init);
    struct tls_out *o = calloc(1, sizeof *o);
    BIO *rb = BIO_new_socket(fd, BIO_NOCLOSE);
    BIO *wb = out_method ? BIO_new(out_method) : NULL;
    if (!o || !rb || !wb) {
        free(o);
        BIO_free(rb);
        BIO_free(wb);
        return false;
    }
    o->fd = fd;
    o->pool = pool;
    BIO_set_data(wb, o);
    BIO_set_init(wb, 1);
    SSL_set_bio(ssl, rb, wb); /* ssl owns both now */
    return true;
}

static struct tls_out *out_of(SSL *ssl)
{
    return BIO_get_data(SSL_get_wbio(ssl));
}

int h2b_tls_out_push(SSL *ssl)
{
    return out_push(out_of(ssl));
}

size_t h2b_tls_out_pending(SSL *ssl)
{
    struct tls_out *o = out_of(ssl);
    return o->len - o->head;
}

size_t h2b_tls_out_room(SSL *ssl)
{
    struct tls_out *o = out_of(ssl);
    return o->buf ? H2B_TLS_OUT_SIZE - o->len : H2B_TLS_OUT_SIZE;
}
