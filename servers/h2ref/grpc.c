/*
 * grpc.c - the reference server's gRPC calls (grpc.h): the methods of grpc/echo.proto
 * (h2bench.Echo: Unary, ServerStream, ClientStream, Bidi) and grpc.health.v1.Health/Check,
 * on the same port and the same HTTP/2 engines as every other route.
 *
 * Approach:
 * - No protobuf library on the request path: the messages are a hand-written encoder and
 *   decoder for the few fixed fields of echo.proto and health.proto. Unary and Bidi answer a
 *   request message with the same bytes (EchoMessage in, EchoMessage out): the request's own
 *   5-byte prefix and message are echoed as they arrive through the engine's /echo chunks, so a
 *   4 MiB message is never held whole (the stream window bounds what is held, as for /echo),
 *   and nothing is decoded. ServerStream and Health decode one small request (at most
 *   H2B_GRPC_SMALL bytes, in the stream); ServerStream's replies are generated (the payload is
 *   the /bytes pattern), ClientStream hashes what arrives and answers one summary. So a call
 *   allocates nothing beyond the echo chunks every engine already pools, and costs no
 *   allocation when warm. protobuf-c (Debian's libprotobuf-c) was the packaged choice: it would
 *   unpack every message into malloc'ed structs (a 4 MiB bytes field copied whole before the
 *   echo could start), and is a library on the request path, which issue 35 rules out; the
 *   fields here are five varints, one fixed64 and one bytes field. The varint and the message
 *   prefix are core/grpcwire.h's, which `h2bench load --grpc` writes its requests with.
 * - Framing, as gRPC over HTTP/2 specifies it: a message is a compressed-flag byte, a 32-bit
 *   big-endian length and the message. A compressed message is UNIMPLEMENTED (no
 *   grpc-encoding is ever accepted), other flag bits INTERNAL, a length over H2B_GRPC_MAX_MSG
 *   RESOURCE_EXHAUSTED (before any of it is read), a request that ends inside a prefix or a
 *   message INTERNAL, a unary-request method with no message or more than one INTERNAL.
 * - Statuses go in trailers (grpc-status, grpc-message) after the messages, or alone in a
 *   trailers-only response when the status is known before any message (unknown method, bad
 *   request). Once a status is final the call's further request bytes are dropped.
 * - Deadlines: grpc-timeout (1-8 digits and a unit, H M S m u n) arms a timer in the engine;
 *   when it fires before the status is final the call ends with DEADLINE_EXCEEDED.
 * - Health/Check: "" and "h2bench.Echo" are SERVING, any other service NOT_FOUND, as gRPC's
 *   health service answers.
 * Rejected: a generic protobuf walker with descriptors (there are four message types, each
 * with fixed fields); buffering whole messages to echo them (a 4 MiB message would need a 4 MiB
 * window and 4 MiB held per stream).
 */
#include "h2ref/grpc.h"

#include "core/grpcwire.h"

#include <string.h>

/* ---- header fields ---- */

void h2b_grpc_init(struct h2b_request *rq, struct h2b_grpc *g)
{
    memset(g, 0, offsetof(struct h2b_grpc, small));
    g->status = H2B_GRPC_PENDING;
    rq->grpc |= H2B_GRPC_RQ_INIT;
}

/* grpc-timeout: 1 to 8 digits and a unit; 0 when malformed. */
static uint64_t parse_timeout(const uint8_t *v, size_t n)
{
    if (n < 2 || n > 9)
        return 0;
    uint64_t x;
    if (!h2b_parse_digits(v, n - 1, 99999999, &x))
        return 0;
    uint64_t unit;
    switch (v[n - 1]) {
    case 'H':
        unit = 3600000000000ull;
        break;
    case 'M':
        unit = 60000000000ull;
        break;
    case 'S':
        unit = 1000000000ull;
        break;
    case 'm':
        unit = 1000000ull;
        break;
    case 'u':
        unit = 1000ull;
        break;
    case 'n':
        unit = 1ull;
        break;
    default:
        return 0;
    }
    uint64_t ns = x * unit;
    return ns ? ns : 1; /* "0n": already past */
}

void h2b_grpc_field(struct h2b_request *rq, struct h2b_grpc *g, const uint8_t *name, size_t nlen,
                    const uint8_t *value, size_t vlen)
{
    if (h2b_lit_eq(name, nlen, "content-type")) {
        /* application/grpc, or with a +subtype or parameters, as gRPC accepts it */
        static const char ct[] = "application/grpc";
        size_t l = sizeof ct - 1;
        bool grpc = vlen >= l && memcmp(value, ct, l) == 0 &&
                    (vlen == l || value[l] == '+' || value[l] == ';');
        rq->grpc |= grpc ? H2B_GRPC_RQ_CT : H2B_GRPC_RQ_CT_OTHER;
        if (rq->grpc & H2B_GRPC_RQ_CT_OTHER)
            rq->grpc &= (uint8_t)~H2B_GRPC_RQ_CT; /* two content-types: not gRPC's */
    } else if (h2b_lit_eq(name, nlen, "grpc-timeout")) {
        h2b_grpc_prepare(rq, g);
        g->timeout_ns = parse_timeout(value, vlen);
        if (!g->timeout_ns && g->status == H2B_GRPC_PENDING) {
            g->status = H2B_GRPC_INTERNAL;
            g->msg = "malformed grpc-timeout";
        }
    } else if (h2b_lit_eq(name, nlen, "grpc-encoding")) {
        h2b_grpc_prepare(rq, g);
        if (!h2b_lit_eq(value, vlen, "identity") && g->status == H2B_GRPC_PENDING) {
            g->status = H2B_GRPC_UNIMPLEMENTED;
            g->msg = "grpc-encoding not supported";
        }
    }
}

bool h2b_grpc_start(const struct h2b_request *rq, struct h2b_grpc *g)
{
    g->method = (uint8_t)(rq->route == H2B_ROUTE_GRPC ? rq->arg : H2B_GRPC_UNKNOWN);
    if (g->method == H2B_GRPC_UNKNOWN && g->status == H2B_GRPC_PENDING) {
        g->status = H2B_GRPC_UNIMPLEMENTED;
        g->msg = "unknown method";
    }
    g->echo = g->method == H2B_GRPC_UNARY || g->method == H2B_GRPC_BIDI;
    g->fnv = H2B_FNV_BASIS;
    return g->echo || g->status != H2B_GRPC_PENDING;
}

/* ---- request messages ---- */

static void fail(struct h2b_grpc *g, uint8_t status, const char *msg)
{
    if (g->status == H2B_GRPC_PENDING) {
        g->status = status;
        g->msg = msg;
    }
}

static bool unary_request(const struct h2b_grpc *g)
{
    return g->method != H2B_GRPC_CLIENT_STREAM && g->method != H2B_GRPC_BIDI;
}

/* A complete prefix in g->pfx: the message it announces begins. False: the call failed. */
static bool msg_begin(struct h2b_grpc *g, h2b_grpc_emit_fn emit, void *arg)
{
    uint8_t flag = g->pfx[0];
    uint32_t len = (uint32_t)g->pfx[1] << 24 | (uint32_t)g->pfx[2] << 16 |
                   (uint32_t)g->pfx[3] << 8 | g->pfx[4];
    if (flag == 1) {
        fail(g, H2B_GRPC_UNIMPLEMENTED, "compressed messages are not supported");
        return false;
    }
    if (flag != 0) {
        fail(g, H2B_GRPC_INTERNAL, "malformed message prefix");
        return false;
    }
    if (len > H2B_GRPC_MAX_MSG) {
        fail(g, H2B_GRPC_RESOURCE_EXHAUSTED, "message larger than 4194304 bytes");
        return false;
    }
    if (unary_request(g) && g->nmsg > 0) {
        fail(g, H2B_GRPC_INTERNAL, "more than one request message");
        return false;
    }
    g->nmsg++;
    g->in_msg = true;
    g->msg_left = len;
    g->small_len = 0;
    g->small_over = false;
    if (g->echo && !emit(arg, g->pfx, 5))
        return false;
    return true;
}

/* n bytes of the current message. */
static bool msg_bytes(struct h2b_grpc *g, const uint8_t *p, size_t n, h2b_grpc_emit_fn emit,
                      void *arg)
{
    if (g->echo)
        return emit(arg, p, n);
    if (g->method == H2B_GRPC_CLIENT_STREAM) {
        g->bytes += n;
        g->fnv = h2b_fnv1a(g->fnv, p, n);
    } else if (!g->small_over && g->small_len + n <= H2B_GRPC_SMALL) {
        memcpy(g->small + g->small_len, p, n);
        g->small_len = (uint8_t)(g->small_len + n);
    } else {
        g->small_over = true;
    }
    return true;
}

void h2b_grpc_rx(struct h2b_grpc *g, const uint8_t *p, size_t n, h2b_grpc_emit_fn emit, void *arg)
{
    size_t i = 0;
    while (i < n && g->status == H2B_GRPC_PENDING) {
        if (!g->in_msg) {
            while (g->pfx_have < 5 && i < n)
                g->pfx[g->pfx_have++] = p[i++];
            if (g->pfx_have < 5)
                return;
            g->pfx_have = 0;
            if (!msg_begin(g, emit, arg))
                return;
        }
        size_t k = n - i < g->msg_left ? n - i : g->msg_left;
        if (k && !msg_bytes(g, p + i, k, emit, arg))
            return;
        i += k;
        g->msg_left -= (uint32_t)k;
        if (g->msg_left == 0)
            g->in_msg = false;
    }
}

/* ---- protobuf, the few fields used ---- */

/* A varint at p[*i..n) into *v; false when truncated or longer than 10 bytes. */
static bool varint_get(const uint8_t *p, size_t n, size_t *i, uint64_t *v)
{
    uint64_t x = 0;
    for (unsigned shift = 0; shift < 70 && *i < n; shift += 7) {
        uint8_t b = p[(*i)++];
        x |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *v = x;
            return true;
        }
    }
    return false;
}

/* Walks message p[0..n): each field's number, wire type, and its varint value or its bytes.
 * Unknown fields are skipped, as protobuf parsers do. False when malformed. */
struct pb_field {
    uint32_t num;
    uint8_t type;
    uint64_t v;
    const uint8_t *b;
    size_t blen;
};

static bool pb_next(const uint8_t *p, size_t n, size_t *i, struct pb_field *f)
{
    uint64_t tag;
    if (!varint_get(p, n, i, &tag) || tag >> 3 == 0 || tag >> 3 > 0x1fffffff)
        return false;
    f->num = (uint32_t)(tag >> 3);
    f->type = (uint8_t)(tag & 7);
    switch (f->type) {
    case 0:
        return varint_get(p, n, i, &f->v);
    case 1:
    case 5: {
        size_t w = f->type == 1 ? 8 : 4;
        if (n - *i < w)
            return false;
        *i += w;
        return true;
    }
    case 2:
        if (!varint_get(p, n, i, &f->v) || f->v > n - *i)
            return false;
        f->b = p + *i;
        f->blen = (size_t)f->v;
        *i += f->blen;
        return true;
    default:
        return false;
    }
}

/* A reply message msg[0..n) with its prefix, in g->small, sent by h2b_grpc_gen. */
static void reply_small(struct h2b_grpc *g, const uint8_t *msg, size_t n)
{
    h2b_grpc_prefix_put(g->small, (uint32_t)n);
    memmove(g->small + 5, msg, n);
    g->total = 5 + n;
}

static void end_server_stream(struct h2b_grpc *g)
{
    size_t i = 0;
    struct pb_field f;
    uint64_t count = 0, size = 0;
    while (i < g->small_len) {
        if (!pb_next(g->small, g->small_len, &i, &f)) {
            fail(g, H2B_GRPC_INTERNAL, "malformed StreamRequest");
            return;
        }
        if (f.type == 0 && f.num == 1)
            count = f.v;
        else if (f.type == 0 && f.num == 2)
            size = f.v;
    }
    if (count > H2B_GRPC_MAX_COUNT || size > H2B_GRPC_MAX_MSG - 16) {
        fail(g, H2B_GRPC_INVALID_ARGUMENT, "count over 1000000 or size over 4194288");
        return;
    }
    g->count = (uint32_t)count;
    g->size = (uint32_t)size;
    g->total = g->count * (uint64_t)(6 + h2b_pb_varint_len(size) + size);
}

static void end_health(struct h2b_grpc *g)
{
    size_t i = 0;
    struct pb_field f;
    const uint8_t *svc = (const uint8_t *)"";
    size_t svc_len = 0;
    while (i < g->small_len) {
        if (!pb_next(g->small, g->small_len, &i, &f)) {
            fail(g, H2B_GRPC_INTERNAL, "malformed HealthCheckRequest");
            return;
        }
        if (f.type == 2 && f.num == 1) {
            svc = f.b;
            svc_len = f.blen;
        }
    }
    if (svc_len != 0 && !h2b_lit_eq(svc, svc_len, "h2bench.Echo")) {
        fail(g, H2B_GRPC_NOT_FOUND, "unknown service");
        return;
    }
    static const uint8_t serving[] = {0x08, 0x01}; /* status: SERVING */
    reply_small(g, serving, sizeof serving);
}

static void end_client_stream(struct h2b_grpc *g)
{
    uint8_t m[H2B_GRPC_SUMMARY_MAX];
    size_t n = h2b_grpc_summary_put(m, g->nmsg, g->bytes, g->fnv);
    reply_small(g, m, n);
}

void h2b_grpc_end(struct h2b_grpc *g)
{
    if (g->status != H2B_GRPC_PENDING)
        return;
    if (g->in_msg || g->pfx_have > 0) {
        fail(g, H2B_GRPC_INTERNAL, "request ended inside a message");
        return;
    }
    if (unary_request(g) && g->nmsg == 0) {
        fail(g, H2B_GRPC_INTERNAL, "no request message");
        return;
    }
    if ((g->method == H2B_GRPC_SERVER_STREAM || g->method == H2B_GRPC_HEALTH) && g->small_over) {
        fail(g, H2B_GRPC_INVALID_ARGUMENT, "request message over 64 bytes");
        return;
    }
    switch (g->method) {
    case H2B_GRPC_SERVER_STREAM:
        end_server_stream(g);
        break;
    case H2B_GRPC_HEALTH:
        end_health(g);
        break;
    case H2B_GRPC_CLIENT_STREAM:
        end_client_stream(g);
        break;
    default:
        break;
    }
    if (g->status == H2B_GRPC_PENDING)
        g->status = H2B_GRPC_OK;
}

void h2b_grpc_expire(struct h2b_grpc *g)
{
    fail(g, H2B_GRPC_DEADLINE_EXCEEDED, "deadline exceeded");
}

/* ---- response messages ---- */

void h2b_grpc_gen(const struct h2b_grpc *g, uint64_t off, uint8_t *dst, size_t n)
{
    if (g->method != H2B_GRPC_SERVER_STREAM) {
        memcpy(dst, g->small + off, n);
        return;
    }
    /* count messages of: prefix, tag 1 (bytes), the size varint, size pattern bytes */
    uint8_t head[5 + 1 + 10];
    size_t hl = 5;
    head[hl++] = 0x0a;
    hl += h2b_pb_varint_put(head + hl, g->size);
    uint32_t mlen = (uint32_t)(hl - 5 + g->size);
    h2b_grpc_prefix_put(head, mlen);
    uint64_t m = hl + g->size;
    while (n > 0) {
        uint64_t r = off % m;
        size_t k;
        if (r < hl) {
            k = hl - r < n ? (size_t)(hl - r) : n;
            memcpy(dst, head + r, k);
        } else {
            uint64_t po = r - hl;
            uint64_t left = g->size - po;
            k = left < n ? (size_t)left : n;
            if (k > H2B_PATTERN_STEP)
                k = H2B_PATTERN_STEP;
            memcpy(dst, h2b_pattern_at(po), k);
        }
        dst += k;
        off += k;
        n -= k;
    }
}
