/*
 * url.c - the one parser of http:// and https:// URLs (url.h has the accepted grammar).
 *
 * Approach: one left-to-right pass over the text that cuts it into scheme, authority and path,
 * then the authority into host and port. IPv6 literals are checked with inet_pton, so what is
 * accepted is exactly what the socket layer will take; a zone ("%25lo") is cut off before that
 * check and decoded to the "%lo" form getaddrinfo expects. Results land in fixed-size fields of
 * the caller's struct and the path borrows the input, so parsing allocates nothing and a caller
 * never has a half-built URL to free.
 *
 * Every error names what was expected and the 1-based column of the offending byte, and never
 * quotes the input: a URL comes from a scenario file or a flag, and its bytes are not fit for a
 * terminal as they are.
 *
 * Rejected:
 *  - three parsers, one per caller (the load generator, the probe, the scenario validator, as
 *    it was): they drifted, and the probe split "http://[::1]:8080" at the bracket while the
 *    validator accepted it;
 *  - libcurl's URL API (curl_url): it accepts schemes, userinfo and whitespace we must refuse,
 *    and its messages say nothing of where in the text the problem is;
 *  - accepting userinfo and ignoring it: "http://a@b/" would go to b while the user read a.
 */
#include "core/url.h"

#include "core/error.h"

#include <arpa/inet.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

__attribute__((format(printf, 3, 4))) static int fail(struct h2b_diag *diag, size_t offset,
                                                      const char *fmt, ...)
{
    if (diag) {
        char msg[sizeof(diag->message) - 24];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        h2b_diag_at(diag, NULL, 0, (int)offset + 1, "%s (byte %zu of the URL)", msg, offset + 1);
    }
    return H2B_ERR_PARSE;
}

static char lower(char c)
{
    return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

static bool is_alnum(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* RFC 3986 "unreserved": what a host name and a zone id may hold here. */
static bool is_unreserved(char c)
{
    return is_alnum(c) || c == '-' || c == '.' || c == '_' || c == '~';
}

/* Whether n bytes at s equal the lower-case word w, ignoring case. */
static bool word_eq(const char *s, size_t n, const char *w)
{
    if (strlen(w) != n)
        return false;
    for (size_t i = 0; i < n; i++)
        if (lower(s[i]) != w[i])
            return false;
    return true;
}

/* The port after ':' at p (n bytes, offset off in the caller's text). */
static int parse_port(const char *p, size_t n, size_t off, struct h2b_url *u, struct h2b_diag *diag)
{
    if (n == 0)
        return fail(diag, off, "expected a port number (1-65535) after ':'");
    unsigned v = 0;
    for (size_t i = 0; i < n; i++) {
        if (p[i] < '0' || p[i] > '9')
            return fail(diag, off + i,
                        p[i] == ':' ? "expected a port number (1-65535) after ':'; an IPv6 "
                                      "address is written in brackets, [addr]:port"
                                    : "expected a port number (1-65535) after ':'");
        v = v * 10 + (unsigned)(p[i] - '0');
        if (v > 65535)
            return fail(diag, off, "port out of range (expected 1-65535)");
    }
    if (v == 0)
        return fail(diag, off, "port 0 (expected 1-65535)");
    u->port = (uint16_t)v;
    u->port_given = true;
    snprintf(u->port_str, sizeof(u->port_str), "%u", v);
    return H2B_OK;
}

/* "[addr]" or "[addr%25zone]" at p, n bytes up to and including ']'. */
static int parse_ipv6(const char *p, size_t n, size_t off, struct h2b_url *u, struct h2b_diag *diag)
{
    const char *in = p + 1;
    size_t inlen = n - 2;
    if (inlen == 0)
        return fail(diag, off + 1, "expected an IPv6 address inside the brackets");
    const char *pct = memchr(in, '%', inlen);
    size_t alen = pct ? (size_t)(pct - in) : inlen;
    if (pct) {
        size_t zoff = (size_t)(pct - in);
        if (inlen - zoff < 3 || pct[1] != '2' || pct[2] != '5')
            return fail(diag, off + 1 + zoff,
                        "expected \"%%25\" before the zone id ([fe80::1%%25eth0], RFC 6874)");
        if (inlen - zoff == 3)
            return fail(diag, off + 1 + zoff + 3, "expected a zone id after \"%%25\"");
        for (size_t i = zoff + 3; i < inlen; i++)
            if (!is_unreserved(in[i]))
                return fail(diag, off + 1 + i,
                            "expected a zone id of letters, digits, '-', '.', '_' or '~'");
    }
    char addr[INET6_ADDRSTRLEN];
    struct in6_addr a6;
    if (alen == 0 || alen >= sizeof(addr))
        return fail(diag, off + 1, "expected an IPv6 address inside the brackets");
    memcpy(addr, in, alen);
    addr[alen] = '\0';
    if (inet_pton(AF_INET6, addr, &a6) != 1)
        return fail(diag, off + 1, "expected an IPv6 address inside the brackets");
    /* host: the address, then "%zone" (the "25" of the encoding dropped) */
    size_t zlen = pct ? inlen - alen - 3 : 0;
    if (alen + (pct ? 1 + zlen : 0) > H2B_URL_HOST_MAX)
        return fail(diag, off, "host longer than %d bytes", H2B_URL_HOST_MAX);
    memcpy(u->host, in, alen);
    size_t h = alen;
    if (pct) {
        u->host[h++] = '%';
        memcpy(u->host + h, pct + 3, zlen);
        h += zlen;
    }
    u->host[h] = '\0';
    u->ipv6 = true;
    return H2B_OK;
}

/* The authority at p (n bytes), which starts at offset off of the caller's text. */
static int authority(const char *p, size_t n, size_t off, struct h2b_url *u, struct h2b_diag *diag)
{
    if (n == 0)
        return fail(diag, off, "expected a host");
    const char *at = memchr(p, '@', n);
    if (at)
        return fail(diag, off + (size_t)(at - p),
                    "user information (user@host) is not supported: expected host[:port]");
    if (n > H2B_URL_AUTHORITY_MAX)
        return fail(diag, off, "authority longer than %d bytes (expected host[:port])",
                    H2B_URL_AUTHORITY_MAX);
    size_t hend; /* bytes of the host part, brackets included */
    if (p[0] == '[') {
        const char *close = memchr(p, ']', n);
        if (!close)
            return fail(diag, off + n, "expected ']' closing the IPv6 address");
        hend = (size_t)(close - p) + 1;
        if (hend < n && p[hend] != ':')
            return fail(diag, off + hend, "expected ':' and a port, or the end, after ']'");
        int rc = parse_ipv6(p, hend, off, u, diag);
        if (rc)
            return rc;
    } else {
        hend = 0;
        while (hend < n && p[hend] != ':') {
            if (!is_unreserved(p[hend]))
                return fail(diag, off + hend,
                            "expected a host name, an IPv4 address or [an IPv6 address] "
                            "(letters, digits, '-', '.', '_', '~')");
            hend++;
        }
        if (hend == 0)
            return fail(diag, off, "expected a host before ':'");
        if (hend > H2B_URL_HOST_MAX)
            return fail(diag, off, "host longer than %d bytes", H2B_URL_HOST_MAX);
        memcpy(u->host, p, hend);
        u->host[hend] = '\0';
        u->ipv6 = false;
    }
    if (hend < n) { /* p[hend] == ':' */
        int rc = parse_port(p + hend + 1, n - hend - 1, off + hend + 1, u, diag);
        if (rc)
            return rc;
    }
    memcpy(u->authority, p, n);
    u->authority[n] = '\0';
    return H2B_OK;
}

int h2b_url_parse_authority(const char *text, size_t n, struct h2b_url *out, struct h2b_diag *diag)
{
    struct h2b_url u = {0};
    const char *nul = memchr(text, '\0', n);
    if (nul)
        return fail(diag, (size_t)(nul - text), "expected host[:port], not a NUL byte");
    int rc = authority(text, n, 0, &u, diag);
    if (rc)
        return rc;
    *out = u;
    return H2B_OK;
}

int h2b_url_parse(const char *text, unsigned flags, struct h2b_url *out, struct h2b_diag *diag)
{
    struct h2b_url u = {0};
    const char *sep = strstr(text, "://");
    size_t slen = sep ? (size_t)(sep - text) : 0;
    if (!sep || slen == 0 || strcspn(text, "/?#") < slen)
        return fail(diag, 0, "expected http:// or https:// at the start");
    if (word_eq(text, slen, "http")) {
        u.tls = false;
    } else if (word_eq(text, slen, "https")) {
        u.tls = true;
    } else {
        return fail(diag, 0, "unsupported scheme (expected http:// or https://)");
    }
    snprintf(u.scheme, sizeof(u.scheme), "%s", u.tls ? "https" : "http");
    size_t aoff = slen + 3;
    const char *a = text + aoff;
    size_t alen = strcspn(a, "/?#");
    int rc = authority(a, alen, aoff, &u, diag);
    if (rc)
        return rc;
    if (!u.port_given) {
        u.port = u.tls ? 443 : 80;
        snprintf(u.port_str, sizeof(u.port_str), "%u", u.port);
    }
    size_t poff = aoff + alen;
    const char *p = text + poff;
    if (*p && (flags & H2B_URL_ORIGIN))
        return fail(diag, poff, "expected scheme://host[:port] without a path, query or fragment");
    size_t plen = strcspn(p, "#");
    for (size_t i = 0; i < plen; i++) {
        unsigned char c = (unsigned char)p[i];
        if (c <= 0x20 || c >= 0x7f)
            return fail(diag, poff + i,
                        "expected printable ASCII in the path (percent-encode spaces, control "
                        "and non-ASCII bytes)");
    }
    u.path = plen ? p : NULL;
    u.path_len = plen;
    *out = u;
    return H2B_OK;
}

int h2b_url_origin(const struct h2b_url *u, char *buf, size_t size)
{
    int n = snprintf(buf, size, "%s://%s", u->scheme, u->authority);
    return n >= 0 && (size_t)n < size ? H2B_OK : H2B_ERR_RANGE;
}
