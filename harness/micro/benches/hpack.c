/*
 * hpack.c - HPACK through libnghttp2's public deflater and inflater.
 *
 *   hpack/decode-browser-request   one op decodes the header block of a browser's first
 *                                  navigation request on a connection (19 fields, Huffman
 *                                  literals with incremental indexing, as nghttp2's deflater
 *                                  encodes it). The same block decoded again by the same
 *                                  inflater inserts the same entries again: a steady state.
 *   hpack/encode-typical-response  one op encodes a typical 200 response's 11 fields with a
 *                                  deflater that has seen them before (mostly indexed), as on
 *                                  a busy connection.
 */
#include "h2bench/micro.h"

#include <nghttp2/nghttp2.h>
#include <stdlib.h>
#include <string.h>

#define NV(n, v)                                                                                   \
    {                                                                                              \
        (uint8_t *)(n), (uint8_t *)(v), sizeof(n) - 1, sizeof(v) - 1, NGHTTP2_NV_FLAG_NONE         \
    }

static const nghttp2_nv browser_request[] = {
    NV(":method", "GET"),
    NV(":authority", "www.example.com"),
    NV(":scheme", "https"),
    NV(":path", "/articles/2026/11/http2-performance.html?utm_source=newsletter&utm_medium=email"),
    NV("sec-ch-ua",
       "\"Chromium\";v=\"119\", \"Not?A_Brand\";v=\"24\", \"Google Chrome\";v=\"119\""),
    NV("sec-ch-ua-mobile", "?0"),
    NV("sec-ch-ua-platform", "\"Linux\""),
    NV("upgrade-insecure-requests", "1"),
    NV("user-agent", "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) "
                     "Chrome/119.0.0.0 Safari/537.36"),
    NV("accept", "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,"
                 "image/apng,*/*;q=0.8,application/signed-exchange;v=b3;q=0.7"),
    NV("sec-fetch-site", "same-origin"),
    NV("sec-fetch-mode", "navigate"),
    NV("sec-fetch-user", "?1"),
    NV("sec-fetch-dest", "document"),
    NV("referer", "https://www.example.com/"),
    NV("accept-encoding", "gzip, deflate, br"),
    NV("accept-language", "en-US,en;q=0.9,de;q=0.8"),
    NV("cookie", "session=8f14e45fceea167a5a36dedd4bea2543; theme=dark"),
    NV("cookie", "_ga=GA1.2.1234567890.1700000000; consent=yes"),
};
#define BROWSER_FIELDS (sizeof browser_request / sizeof browser_request[0])

struct decode {
    nghttp2_hd_inflater *inflater;
    uint8_t block[4096];
    size_t len;
};

static int decode_setup(struct h2b_micro_state *st)
{
    struct decode *d = calloc(1, sizeof *d);
    nghttp2_hd_deflater *def = NULL;
    if (!d || nghttp2_hd_deflate_new(&def, 4096) != 0)
        goto fail;
    ssize_t n =
        nghttp2_hd_deflate_hd(def, d->block, sizeof d->block, browser_request, BROWSER_FIELDS);
    nghttp2_hd_deflate_del(def);
    if (n <= 0 || nghttp2_hd_inflate_new(&d->inflater) != 0)
        goto fail;
    d->len = (size_t)n;
    h2b_micro_set_data(st, d);
    return 0;
fail:
    free(d);
    h2b_micro_fail(st, "cannot build the request header block");
    return -1;
}

static void decode_teardown(struct h2b_micro_state *st)
{
    struct decode *d = h2b_micro_data(st);
    if (!d)
        return;
    nghttp2_hd_inflate_del(d->inflater);
    free(d);
}

static void decode_run(struct h2b_micro_state *st, uint64_t n)
{
    struct decode *d = h2b_micro_data(st);
    for (uint64_t i = 0; i < n; i++) {
        const uint8_t *in = d->block;
        size_t left = d->len, fields = 0, bytes = 0;
        for (;;) {
            nghttp2_nv nv;
            int flags = 0;
            ssize_t rv = nghttp2_hd_inflate_hd2(d->inflater, &nv, &flags, in, left, 1);
            if (rv < 0) {
                h2b_micro_fail(st, "inflate: %s", nghttp2_strerror((int)rv));
                return;
            }
            in += rv;
            left -= (size_t)rv;
            if (flags & NGHTTP2_HD_INFLATE_EMIT) {
                fields++;
                bytes += nv.namelen + nv.valuelen;
            }
            if (flags & NGHTTP2_HD_INFLATE_FINAL) {
                nghttp2_hd_inflate_end_headers(d->inflater);
                break;
            }
            if (rv == 0 && left == 0 && !(flags & NGHTTP2_HD_INFLATE_EMIT)) {
                h2b_micro_fail(st, "inflate: block ended early");
                return;
            }
        }
        H2B_MICRO_KEEP(bytes);
        if (fields != BROWSER_FIELDS) {
            h2b_micro_fail(st, "decoded %zu fields, expected %zu", fields, BROWSER_FIELDS);
            return;
        }
    }
}

H2B_MICRO_BENCH(hpack_decode, .name = "hpack/decode-browser-request", .fn = decode_run,
                .setup = decode_setup, .teardown = decode_teardown)

static const nghttp2_nv typical_response[] = {
    NV(":status", "200"),
    NV("date", "Mon, 30 Nov 2026 08:00:00 GMT"),
    NV("content-type", "text/html; charset=utf-8"),
    NV("content-length", "18734"),
    NV("cache-control", "public, max-age=3600"),
    NV("etag", "\"4d2e-5f9a0c31b7e80\""),
    NV("last-modified", "Sun, 29 Nov 2026 17:42:11 GMT"),
    NV("vary", "accept-encoding"),
    NV("content-encoding", "br"),
    NV("strict-transport-security", "max-age=63072000; includeSubDomains"),
    NV("server", "h2bench"),
};

struct encode {
    nghttp2_hd_deflater *deflater;
    uint8_t out[4096];
};

static int encode_setup(struct h2b_micro_state *st)
{
    struct encode *e = calloc(1, sizeof *e);
    if (!e || nghttp2_hd_deflate_new(&e->deflater, 4096) != 0) {
        free(e);
        h2b_micro_fail(st, "cannot create the deflater");
        return -1;
    }
    h2b_micro_set_data(st, e);
    return 0;
}

static void encode_teardown(struct h2b_micro_state *st)
{
    struct encode *e = h2b_micro_data(st);
    if (!e)
        return;
    nghttp2_hd_deflate_del(e->deflater);
    free(e);
}

static void encode_run(struct h2b_micro_state *st, uint64_t n)
{
    struct encode *e = h2b_micro_data(st);
    const size_t fields = sizeof typical_response / sizeof typical_response[0];
    for (uint64_t i = 0; i < n; i++) {
        ssize_t len =
            nghttp2_hd_deflate_hd(e->deflater, e->out, sizeof e->out, typical_response, fields);
        if (len <= 0) {
            h2b_micro_fail(st, "deflate: %s", nghttp2_strerror((int)len));
            return;
        }
        h2b_micro_escape(e->out);
        H2B_MICRO_KEEP(len);
    }
}

H2B_MICRO_BENCH(hpack_encode, .name = "hpack/encode-typical-response", .fn = encode_run,
                .setup = encode_setup, .teardown = encode_teardown)
