/*
 * tls.h - the server's TLS context: TLS 1.2/1.3, ALPN "h2" only, and a self-signed
 * certificate generated in memory when no files are given.
 */
#ifndef H2B_H2REF_TLS_H
#define H2B_H2REF_TLS_H

#include "core/json.h"

#include <openssl/ssl.h>

/* Creates a server SSL_CTX. cert_file and key_file are PEM paths, or both NULL for a fresh
 * self-signed ECDSA P-256 certificate for "localhost" and 127.0.0.1 (valid 30 days). On failure
 * returns NULL and d says why (naming the file). The SSL_CTX is shared read-only by
 * every worker; free it with SSL_CTX_free(). */
SSL_CTX *h2b_tls_ctx_new(const char *cert_file, const char *key_file, struct h2b_diag *d);

#endif
