/*
 * tlscert.h - the one self-signed certificate generator: ECDSA P-256 for "localhost" and
 * 127.0.0.1, valid 30 days. h2bench serve --tls uses it in memory; h2bench run writes it as PEM
 * files into the run directory for peers (nginx, h2o, nghttpd) to serve TLS with.
 */
#ifndef H2B_CORE_TLSCERT_H
#define H2B_CORE_TLSCERT_H

#include <openssl/evp.h>
#include <openssl/x509.h>

/* A fresh key and certificate into *key and *crt (the caller frees both with EVP_PKEY_free and
 * X509_free). Returns H2B_OK or H2B_ERR_UNSUPPORTED (OpenSSL failed; its error queue says why);
 * *key and *crt untouched on failure. */
int h2b_tlscert_new(EVP_PKEY **key, X509 **crt);

/* Generates one and writes it as PEM: the certificate to cert_path, the key to key_path
 * (mode 0600). Returns H2B_OK, H2B_ERR_IO (a file cannot be written) or H2B_ERR_UNSUPPORTED. */
int h2b_tlscert_write(const char *cert_path, const char *key_path);

#endif
