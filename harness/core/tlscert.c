/*
 * tlscert.c - a self-signed ECDSA P-256 certificate, in memory or as PEM files.
 *
 * ECDSA P-256 because its handshake is several times cheaper than RSA-2048, which matters when
 * 1000 connections ramp up at once (the server's side of a TLS cell should measure serving, not
 * signing). Generated through the OpenSSL library, not the openssl command: no process to spawn
 * and no second copy of the parameters in a shell script. Rejected: a certificate committed to
 * the repository (it expires, and a private key in a repository gets copied into places it
 * should not go).
 */
#include "core/tlscert.h"

#include "core/error.h"

#include <fcntl.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>
#include <stdio.h>
#include <unistd.h>

static int add_ext(X509 *crt, int nid, const char *value)
{
    X509V3_CTX v3;
    X509V3_set_ctx_nodb(&v3);
    X509V3_set_ctx(&v3, crt, crt, NULL, NULL, 0);
    X509_EXTENSION *ext = X509V3_EXT_conf_nid(NULL, &v3, nid, value);
    if (!ext)
        return 0;
    int ok = X509_add_ext(crt, ext, -1);
    X509_EXTENSION_free(ext);
    return ok;
}

int h2b_tlscert_new(EVP_PKEY **key_out, X509 **crt_out)
{
    EVP_PKEY *key = EVP_EC_gen("P-256");
    X509 *crt = X509_new();
    if (!key || !crt)
        goto out_free;
    X509_set_version(crt, 2);
    ASN1_INTEGER_set(X509_get_serialNumber(crt), 1);
    X509_gmtime_adj(X509_getm_notBefore(crt), -3600);
    X509_gmtime_adj(X509_getm_notAfter(crt), 30L * 24 * 3600);
    X509_set_pubkey(crt, key);
    X509_NAME *name = X509_get_subject_name(crt);
    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (const unsigned char *)"localhost", -1, -1,
                               0);
    X509_set_issuer_name(crt, name);
    if (!add_ext(crt, NID_subject_alt_name, "DNS:localhost,IP:127.0.0.1") ||
        !add_ext(crt, NID_basic_constraints, "critical,CA:FALSE") ||
        X509_sign(crt, key, EVP_sha256()) == 0)
        goto out_free;
    *key_out = key;
    *crt_out = crt;
    return H2B_OK;
out_free:
    X509_free(crt);
    EVP_PKEY_free(key);
    return H2B_ERR_UNSUPPORTED;
}

static int write_pem(const char *path, mode_t mode, EVP_PKEY *key, X509 *crt)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f) {
        if (fd >= 0)
            close(fd);
        return H2B_ERR_IO;
    }
    int ok = key ? PEM_write_PrivateKey(f, key, NULL, NULL, 0, NULL, NULL) : PEM_write_X509(f, crt);
    if (fclose(f) != 0)
        ok = 0;
    return ok ? H2B_OK : H2B_ERR_IO;
}

int h2b_tlscert_write(const char *cert_path, const char *key_path)
{
    EVP_PKEY *key = NULL;
    X509 *crt = NULL;
    int rc = h2b_tlscert_new(&key, &crt);
    if (rc != H2B_OK)
        return rc;
    rc = write_pem(cert_path, 0644, NULL, crt);
    if (rc == H2B_OK)
        rc = write_pem(key_path, 0600, key, NULL);
    X509_free(crt);
    EVP_PKEY_free(key);
    return rc;
}
