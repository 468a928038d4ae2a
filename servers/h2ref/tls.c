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
#include <stdio.h>
#include <string.h>

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
    if (SSL_CTX_set_cipher_list(ctx, "ECDHE+AESGCM:ECDHE+CHACHA20") != 1 ||
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
