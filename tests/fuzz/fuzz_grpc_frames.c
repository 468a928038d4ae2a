/*
 * fuzz_grpc_frames.c - the server's gRPC message framing and its few protobuf fields
 * (servers/h2ref/grpc.c) on arbitrary request bodies, below the HTTP/2 engines: a method, an
 * optional grpc-timeout and grpc-encoding value, then the request DATA in pieces of fuzzed sizes,
 * the request's end (or the deadline), and the whole response generated.
 *
 * Input: byte 0 the method (Unary, ServerStream, ClientStream, Bidi, Health, or an unknown
 * path), byte 1 the piece sizes, byte 2 the length of a grpc-timeout value taken from the
 * input (0: none), byte 3 flags (a grpc-encoding field; the deadline instead of the end); the
 * rest is the body.
 *
 * Beyond memory safety it checks the contracts: what an echo method echoes is the request's own
 * bytes, in order, never more than arrived; after the request's end (or the deadline) the status
 * is final; a final status never changes; a method that does not echo echoes nothing; and the
 * generated response (h2b_grpc_gen, its first and last 4 KiB) stays inside what g->total says.
 */
#include "h2ref/grpc.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct echo {
    const uint8_t *body;
    size_t body_len, fed, emitted;
};

static bool on_emit(void *arg, const uint8_t *p, size_t n)
{
    struct echo *e = arg;
    if (e->emitted + n > e->fed || memcmp(p, e->body + e->emitted, n) != 0)
        abort(); /* echoed bytes that are not the request's own, in order */
    e->emitted += n;
    return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 4)
        return 0;
    static const uint8_t methods[] = {H2B_GRPC_UNARY,         H2B_GRPC_SERVER_STREAM,
                                      H2B_GRPC_CLIENT_STREAM, H2B_GRPC_BIDI,
                                      H2B_GRPC_HEALTH,        H2B_GRPC_UNKNOWN};
    uint8_t method = methods[data[0] % sizeof methods];
    size_t piece = (size_t)data[1] % 64 + 1, tlen = data[2] % 12;
    bool encoding = data[3] & 1, expire = data[3] & 2;
    data += 4;
    size -= 4;
    if (tlen > size)
        tlen = size;
    struct h2b_request rq = {.route =
                                 method == H2B_GRPC_UNKNOWN ? H2B_ROUTE_NOTFOUND : H2B_ROUTE_GRPC,
                             .method = H2B_METHOD_POST,
                             .arg = method};
    struct h2b_grpc g;
    h2b_grpc_prepare(&rq, &g);
    static const char ct[] = "application/grpc";
    h2b_grpc_field(&rq, &g, (const uint8_t *)"content-type", 12, (const uint8_t *)ct,
                   sizeof ct - 1);
    if (tlen)
        h2b_grpc_field(&rq, &g, (const uint8_t *)"grpc-timeout", 12, data, tlen);
    if (encoding)
        h2b_grpc_field(&rq, &g, (const uint8_t *)"grpc-encoding", 13, (const uint8_t *)"gzip", 4);
    data += tlen;
    size -= tlen;
    if (!h2b_grpc_is_call(&rq))
        abort(); /* an application/grpc POST is a call */
    h2b_grpc_start(&rq, &g);

    struct echo e = {.body = data, .body_len = size};
    uint8_t final = H2B_GRPC_PENDING;
    size_t off = 0;
    while (off < size) {
        size_t n = size - off < piece ? size - off : piece;
        e.fed = off + n;
        h2b_grpc_rx(&g, data + off, n, on_emit, &e);
        if (final != H2B_GRPC_PENDING && g.status != final)
            abort(); /* a final status changed */
        final = g.status;
        off += n;
        piece = piece * 3 % 257 + 1;
    }
    if (expire)
        h2b_grpc_expire(&g);
    else
        h2b_grpc_end(&g);
    if (g.status == H2B_GRPC_PENDING || (final != H2B_GRPC_PENDING && g.status != final))
        abort();
    if (!g.echo && e.emitted)
        abort(); /* only Unary and Bidi echo */
    if (g.status == H2B_GRPC_OK && !g.echo && g.total) {
        static uint8_t out[4096];
        size_t n = g.total < sizeof out ? (size_t)g.total : sizeof out;
        h2b_grpc_gen(&g, 0, out, n);
        h2b_grpc_gen(&g, g.total - n, out, n);
    }
    return 0;
}
