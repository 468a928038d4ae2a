/*
 * h1parse.h - a small strict HTTP/1.1 message-head parser and chunked-body decoder (RFC 9112),
 * shared by the reference server (requests) and the load generator (responses).
 *
 * Heads are parsed whole: the caller keeps the bytes received so far and calls
 * h2b_h1_parse_request()/h2b_h1_parse_response(), which either find a complete head (ending in
 * CRLF CRLF) and return its length, say that more bytes are needed, or reject the head. Names and
 * values point into the caller's buffer (no copies). The chunked decoder is incremental: it takes
 * whatever bytes arrived and hands back the body bytes in place.
 */
#ifndef H2B_CORE_H1PARSE_H
#define H2B_CORE_H1PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Rejections; the HTTP status a server should answer with is h2b_h1_err_status(). */
enum h2b_h1_err {
    H2B_H1_INCOMPLETE = 0,    /* no complete head yet: read more */
    H2B_H1_BAD = -1,          /* malformed: 400 */
    H2B_H1_URI_TOO_LONG = -2, /* request line over the limit: 414 */
    H2B_H1_TOO_LARGE = -3,    /* head over the limit: 431 */
    H2B_H1_UNSUPPORTED = -4,  /* a transfer coding other than chunked: 501 */
    H2B_H1_VERSION = -5,      /* not HTTP/1.0 or HTTP/1.1: 505 */
    H2B_H1_SMUGGLE = -6,      /* Content-Length with Transfer-Encoding, or two lengths: 400 */
};

struct h2b_h1_limits {
    size_t max_line; /* request line or status line bytes, CRLF excluded */
    size_t max_head; /* whole head, CRLF CRLF included */
};

struct h2b_h1_span {
    const uint8_t *p;
    size_t n;
};

struct h2b_h1_head {
    struct h2b_h1_span method; /* requests */
    struct h2b_h1_span target; /* requests: origin-form (an absolute-form's path) or "*";
                                  points into buf, except the static "/" of an
                                  absolute-form target with no path */
    unsigned status;           /* responses: 100..999 */
    unsigned minor;            /* HTTP/1.<minor>: 0 or 1 */
    int64_t content_length;    /* -1: none */
    bool chunked;              /* Transfer-Encoding: chunked */
    bool close;                /* the connection ends after this message */
    bool expect_continue;      /* Expect: 100-continue (requests) */
    bool has_host;             /* requests */
    unsigned nheaders;
};

/* The status to answer a rejected request with (400, 414, 431, 501, 505). */
unsigned h2b_h1_err_status(int err);

/* Parses a request head at the start of buf[0..len). Returns the head's length (> 0), 0 when
 * it is incomplete and within the limits, or a negative enum h2b_h1_err. Up to 4 empty lines
 * before the request line are skipped (counted in the length and against max_head). Strict:
 * CRLF line ends, one SP between request-line parts, origin-form targets, absolute-form ones
 * (http or https: target is then their path, "/" for none), or "*" for OPTIONS, token names with no
 * space before the colon, no obs-fold, no control characters in values, one Host for HTTP/1.1,
 * Content-Length digits only and given once, Transfer-Encoding exactly "chunked" (HTTP/1.1 only)
 * and never with Content-Length. "Connection: close" (or HTTP/1.0 without keep-alive) sets close.
 */
int h2b_h1_parse_request(const uint8_t *buf, size_t len, const struct h2b_h1_limits *lim,
                         struct h2b_h1_head *out);

/* Parses a response head the same way (status line "HTTP/1.x NNN reason"). */
int h2b_h1_parse_response(const uint8_t *buf, size_t len, const struct h2b_h1_limits *lim,
                          struct h2b_h1_head *out);

/* True when the response to a request has no body whatever its headers say (1xx, 204, 304, or
 * the request was HEAD). */
bool h2b_h1_no_body(unsigned status, bool head_request);

/* Incremental chunked-body decoder. Zero-initialise (or h2b_h1_chunked_init) per body. */
struct h2b_h1_chunked {
    uint8_t state;
    uint8_t digits;
    uint64_t left;   /* bytes of chunk data still to come */
    size_t line;     /* bytes of the current size or trailer line */
    size_t trailers; /* trailer bytes so far */
};

void h2b_h1_chunked_init(struct h2b_h1_chunked *c);

/* Decodes from p[0..n): sets *used to the bytes consumed and, when the result is 1, *data and
 * *dlen to body bytes found in place (inside p). Returns 1 (body bytes; call again with the
 * rest), 0 (all of p consumed, no body bytes in it, need more), 2 (the last chunk and trailers
 * ended; *used stops right after them) or H2B_H1_BAD / H2B_H1_TOO_LARGE (chunk size over 2^60,
 * chunk extensions or trailers over max_trailers bytes, bad framing). */
int h2b_h1_chunked_next(struct h2b_h1_chunked *c, const uint8_t *p, size_t n, size_t max_trailers,
                        size_t *used, const uint8_t **data, size_t *dlen);

#endif
