/*
 * h3tls.c - GnuTLS credentials for QUIC: load PEM files or make a self-signed certificate.
 *
 * Approach: ngtcp2 0.12 on Debian ships only the GnuTLS crypto backend, so the HTTP/3 side has
 * its own credentials. Without files a P-256 key and a certificate for localhost, 127.0.0.1 and
 * ::1 are generated in memory, as the TCP listener does with OpenSSL (servers/h2ref/tls.c).
 * Rejected: exporting the OpenSSL certificate to PEM and importing it here; it would tie this
 * module to the h2ref server's internals for no gain (clients do not verify either certificate).
 */
#include "core/h3tls.h"

#include "core/error.h"
#include "core/json.h"

#include <arpa/inet.h>
#include <gnutls/crypto.h>
#include <gnutls/x509.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

const char h2b_h3tls_priority[] =
    "NORMAL:-VERS-ALL:+VERS-TLS1.3:-CIPHER-ALL:+AES-128-GCM:+AES-256-GCM:+CHACHA20-POLY1305:"
    "+AES-128-CCM:-GROUP-ALL:+GROUP-X25519:+GROUP-SECP256R1:+GROUP-SECP384R1:"
    "%DISABLE_TLS13_COMPAT_MODE";

static int self_signed(gnutls_certificate_credentials_t cred, struct h2b_diag *diag)
{
    gnutls_x509_privkey_t key = NULL;
    gnutls_x509_crt_t crt = NULL;
    int rv = gnutls_x509_privkey_init(&key);
    if (rv == 0)
        rv = gnutls_x509_privkey_generate(key, GNUTLS_PK_ECDSA,
                                          GNUTLS_CURVE_TO_BITS(GNUTLS_ECC_CURVE_SECP256R1), 0);
    if (rv == 0)
        rv = gnutls_x509_crt_init(&crt);
    time_t now = time(NULL);
    unsigned char serial[8] = {0};
    if (rv == 0)
        rv = gnutls_rnd(GNUTLS_RND_NONCE, serial, sizeof serial);
    serial[0] &= 0x7f;
    if (rv == 0)
        rv = gnutls_x509_crt_set_version(crt, 3);
    if (rv == 0)
        rv = gnutls_x509_crt_set_serial(crt, serial, sizeof serial);
    if (rv == 0)
        rv = gnutls_x509_crt_set_activation_time(crt, now - 3600);
    if (rv == 0)
        rv = gnutls_x509_crt_set_expiration_time(crt, now + 30 * 86400);
    if (rv == 0)
        rv = gnutls_x509_crt_set_dn_by_oid(crt, GNUTLS_OID_X520_COMMON_NAME, 0, "localhost",
                                           strlen("localhost"));
    if (rv == 0)
        rv = gnutls_x509_crt_set_subject_alt_name(crt, GNUTLS_SAN_DNSNAME, "localhost",
                                                  strlen("localhost"), GNUTLS_FSAN_APPEND);
    unsigned char v4[4], v6[16];
    inet_pton(AF_INET, "127.0.0.1", v4);
    inet_pton(AF_INET6, "::1", v6);
    if (rv == 0)
        rv = gnutls_x509_crt_set_subject_alt_name(crt, GNUTLS_SAN_IPADDRESS, v4, sizeof v4,
                                                  GNUTLS_FSAN_APPEND);
    if (rv == 0)
        rv = gnutls_x509_crt_set_subject_alt_name(crt, GNUTLS_SAN_IPADDRESS, v6, sizeof v6,
                                                  GNUTLS_FSAN_APPEND);
    if (rv == 0)
        rv = gnutls_x509_crt_set_key(crt, key);
    if (rv == 0)
        rv = gnutls_x509_crt_sign2(crt, crt, key, GNUTLS_DIG_SHA256, 0);
    if (rv == 0)
        rv = gnutls_certificate_set_x509_key(cred, &crt, 1, key);
    if (rv != 0)
        h2b_diag_at(diag, NULL, 0, 0, "cannot make a self-signed certificate: %s",
                    gnutls_strerror(rv));
    if (crt)
        gnutls_x509_crt_deinit(crt);
    if (key)
        gnutls_x509_privkey_deinit(key);
    return rv == 0 ? H2B_OK : H2B_ERR_UNSUPPORTED;
}

int h2b_h3tls_server_cred(gnutls_certificate_credentials_t *out, const char *cert_file,
                          const char *key_file, struct h2b_diag *diag)
{
    gnutls_certificate_credentials_t cred;
    if (gnutls_certificate_allocate_credentials(&cred) != 0) {
        h2b_diag_at(diag, NULL, 0, 0, "cannot allocate GnuTLS credentials");
        return H2B_ERR_NOMEM;
    }
    int rc = H2B_OK;
    if (cert_file || key_file) {
        int rv = gnutls_certificate_set_x509_key_file(
            cred, cert_file ? cert_file : "", key_file ? key_file : "", GNUTLS_X509_FMT_PEM);
        if (rv < 0) {
            h2b_diag_at(diag, NULL, 0, 0, "%s / %s: %s", cert_file ? cert_file : "(none)",
                        key_file ? key_file : "(none)", gnutls_strerror(rv));
            rc = H2B_ERR_IO;
        }
    } else {
        rc = self_signed(cred, diag);
    }
    if (rc != H2B_OK) {
        gnutls_certificate_free_credentials(cred);
        return rc;
    }
    *out = cred;
    return H2B_OK;
}
