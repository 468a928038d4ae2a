/*
 * tls.h - the server's TLS context: TLS 1.2/1.3, ALPN "h2" only, and a self-signed
 * certificate generated in memory when no files are given; and each connection's gathering
 * write BIO.
 */
#ifndef H2B_H2REF_TLS_H
#define H2B_H2REF_TLS_H

#include "core/json.h"
#include "core/pool.h"

#include <openssl/ssl.h>
#include <stdbool.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

/* Creates a server SSL_CTX. cert_file and key_file are PEM paths, or both NULL for a fresh
 * self-signed ECDSA P-256 certificate for "localhost" and 127.0.0.1 (valid 30 days). On failure
 * returns NULL and d says why (naming the file). The SSL_CTX is shared read-only by
 * every worker; free it with SSL_CTX_free(). */
SSL_CTX *h2b_tls_ctx_new(const char *cert_file, const char *key_file, struct h2b_diag *d);

/* ---- The write side of a server TLS connection ----
 * A BIO that gathers the records OpenSSL writes into one buffer, sent with one send(2) when
 * the server pushes (h2b_tls_out_push), instead of OpenSSL's socket BIO's one write(2) per
 * record (64 system calls per MiB of response). The buffer (H2B_TLS_OUT_SIZE) comes from the
 * worker's pool when the first byte is written and goes back when the last one is sent, so a
 * connection holds one only while its socket is full. The read side stays OpenSSL's socket
 * BIO. One worker thread uses a pool and its connections' BIOs. */
#define H2B_TLS_OUT_SIZE (256 * 1024)

struct h2b_tls_pool {
    struct h2b_freelist bufs;   /* free buffers of H2B_TLS_OUT_SIZE (core/pool.h) */
    _Atomic uint64_t *mem_used; /* the server's buffer count (--memory-budget): buffers held
                                 * by connections count in it */
};

/* A worker's pool, counting held buffers into *mem_used (NULL: not counted). */
void h2b_tls_pool_init(struct h2b_tls_pool *pool, _Atomic uint64_t *mem_used);

/* Sets ssl's read side to a socket BIO on fd and its write side to the gathering BIO with pool.
 * Returns false when OpenSSL cannot (no memory). */
bool h2b_tls_out_attach(SSL *ssl, int fd, struct h2b_tls_pool *pool);

/* Sends what ssl's write BIO holds: 1 everything went (the buffer is back in the pool), 0 the
 * socket is full and bytes wait (retry on writability), -1 the socket failed (errno). */
int h2b_tls_out_push(SSL *ssl);

/* Bytes written by OpenSSL and not yet sent; the room left for more before a push. */
size_t h2b_tls_out_pending(SSL *ssl);
size_t h2b_tls_out_room(SSL *ssl);

/* Frees the pool's free buffers (the worker's end; every connection is closed). */
void h2b_tls_pool_free(struct h2b_tls_pool *pool);

#endif
