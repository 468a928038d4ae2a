/*
 * h3tls.h - GnuTLS credentials for the HTTP/3 server and client (ngtcp2's crypto backend on
 * Debian 12 is GnuTLS, so QUIC cannot reuse the OpenSSL context of the TCP listener).
 */
#ifndef H2B_CORE_H3TLS_H
#define H2B_CORE_H3TLS_H

#include <gnutls/gnutls.h>
#include <stddef.h>

struct h2b_diag; /* core/json.h */

/* Server credentials: the PEM certificate chain and key files, or (both NULL) a fresh
 * self-signed ECDSA P-256 certificate for "localhost" and 127.0.0.1/::1, valid 30 days, made in
 * memory. On success *out owns the credentials (gnutls_certificate_free_credentials). Returns
 * H2B_OK, H2B_ERR_NOMEM, H2B_ERR_IO (unreadable or invalid file) or H2B_ERR_UNSUPPORTED
 * (GnuTLS failed generating a key or certificate), and diag (may be NULL) says why, naming the
 * files; *out is untouched on failure. */
int h2b_h3tls_server_cred(gnutls_certificate_credentials_t *out, const char *cert_file,
                          const char *key_file, struct h2b_diag *diag);

/* The GnuTLS priority string for QUIC: TLS 1.3 only, the AEADs QUIC defines, no middlebox
 * compatibility mode (RFC 9001 section 8.4). */
extern const char h2b_h3tls_priority[];

#endif
