/*
 * url.h - the one parser of http:// and https:// URLs (targets, load URIs, probes, budgets).
 *
 * Accepts scheme://host[:port][path][?query][#fragment] with
 *  - scheme "http" or "https" (any case; stored lower-case; tls set for https),
 *  - host a name or IPv4 address (letters, digits, '-', '.', '_', '~') or an IPv6 literal in
 *    brackets, optionally with an RFC 6874 zone ("[fe80::1%25lo]": host "fe80::1%lo", the form
 *    getaddrinfo takes),
 *  - port 1-65535, defaulted from the scheme (80, 443) when not written,
 *  - path and query: printable ASCII (no space, no control or non-ASCII byte), the fragment
 *    dropped; an empty path is "/".
 * Userinfo ("user:pass@host") is rejected: a benchmark URL carries no credentials, and the '@'
 * would otherwise silently move the host.
 * Pure: no allocation, no I/O, no locale. Thread-safe.
 */
#ifndef H2B_CORE_URL_H
#define H2B_CORE_URL_H

#include "core/json.h" /* struct h2b_diag */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define H2B_URL_HOST_MAX 255      /* bytes of a host name (RFC 1035: 253 plus slack) */
#define H2B_URL_AUTHORITY_MAX 300 /* bytes of host[:port] as written (brackets, "%25" zone) */

/* h2b_url_parse flags */
#define H2B_URL_ORIGIN 1u /* scheme://host[:port] only: a path, query or fragment is an error */

struct h2b_url {
    bool tls;                                  /* scheme https */
    bool ipv6;                                 /* host is an IPv6 literal (written in brackets) */
    bool port_given;                           /* the port was written, not defaulted */
    uint16_t port;                             /* 1-65535 */
    char scheme[6];                            /* "http" or "https" */
    char host[H2B_URL_HOST_MAX + 1];           /* without brackets, zone decoded ("fe80::1%lo") */
    char port_str[6];                          /* port in decimal, no leading zeros */
    char authority[H2B_URL_AUTHORITY_MAX + 1]; /* host[:port] exactly as written */
    const char *path; /* into the parsed text: path and query, fragment excluded; NULL when
                       * none was written (the request path is then "/") */
    size_t path_len;  /* bytes at path; 0 when path is NULL */
};

/* Parses the NUL-terminated text into *out (flags: H2B_URL_ORIGIN or 0). out->path borrows
 * text, so text must outlive it. Returns H2B_OK or H2B_ERR_PARSE; on error *out is untouched and
 * diag (may be NULL) gets a message naming the problem and what was expected, ending in "(byte N
 * of the URL)", N 1-based, also in diag->column (diag->line 0, diag->file ""). */
int h2b_url_parse(const char *text, unsigned flags, struct h2b_url *out, struct h2b_diag *diag);

/* Parses n bytes of an authority alone, "host[:port]" or "[v6]:port" (the port stays 0 and
 * port_str "" when not written: the caller's default applies). Fills host, ipv6, port,
 * port_given, port_str and authority; the scheme fields are left empty. Returns H2B_OK or
 * H2B_ERR_PARSE with diag as above (bytes count from the authority's first). */
int h2b_url_parse_authority(const char *text, size_t n, struct h2b_url *out, struct h2b_diag *diag);

/* Writes the origin "scheme://authority" (brackets kept) into buf; returns H2B_OK or
 * H2B_ERR_RANGE when it does not fit (buf then holds a truncated, NUL-terminated copy). */
int h2b_url_origin(const struct h2b_url *u, char *buf, size_t size);

#endif
