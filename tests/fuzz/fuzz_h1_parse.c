/*
 * fuzz_h1_parse.c - the HTTP/1.1 head parser and chunked decoder (harness/core/h1parse.c) on
 * arbitrary bytes: as a request head, as a response head, and as a chunked body fed in pieces.
 * Beyond memory safety it checks the contracts: a parsed head's length is within the input,
 * its spans point inside it (the target may also be the parser's own "/" for an absolute-form
 * target with no path), and the decoder never reports more consumed bytes than it got or
 * body bytes outside its input.
 */
#include "core/h1parse.h"

#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_span(struct h2b_h1_span s, const uint8_t *data, size_t len)
{
    if (s.p && (s.p < data || s.p + s.n > data + len))
        abort();
}

/* A request target: inside the input, or the parser's own "/" for an absolute-form target with
 * no path (h1parse.h: "http://x" is routed as "/"). */
static void check_target(struct h2b_h1_span s, const uint8_t *data, size_t len)
{
    if (s.p && s.n == 1 && s.p[0] == '/' && (s.p < data || s.p >= data + len))
        return;
    check_span(s, data, len);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct h2b_h1_limits lim = {.max_line = 256, .max_head = 2048};
    struct h2b_h1_head h;
    int rv = h2b_h1_parse_request(data, size, &lim, &h);
    if (rv > 0) {
        if ((size_t)rv > size || (size_t)rv > lim.max_head)
            abort();
        check_span(h.method, data, size);
        check_target(h.target, data, size);
        if (h.chunked && h.content_length >= 0)
            abort(); /* a smuggling pair got through */
    }
    (void)h2b_h1_err_status(rv);
    rv = h2b_h1_parse_response(data, size, &lim, &h);
    if (rv > 0 && ((size_t)rv > size || h.status < 100 || h.status > 999))
        abort();
    /* chunked, in pieces of growing size */
    struct h2b_h1_chunked c;
    h2b_h1_chunked_init(&c);
    size_t off = 0, piece = 1;
    while (off < size) {
        size_t n = size - off < piece ? size - off : piece;
        size_t used = 0, dlen = 0;
        const uint8_t *d = NULL;
        rv = h2b_h1_chunked_next(&c, data + off, n, 64, &used, &d, &dlen);
        if (rv < 0 || rv == 2)
            break;
        if (used > n || (rv == 0 && used != n))
            abort();
        if (rv == 1 && (d < data + off || d + dlen > data + off + used))
            abort();
        off += used;
        if (rv == 0)
            piece = piece * 2 + 1;
    }
    return 0;
}
