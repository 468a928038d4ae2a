/*
 * grpc.c - `h2bench load --grpc METHOD`'s request body and status codes (grpc.h).
 *
 * Approach: a call is one HTTP/2 POST whose body is the same bytes every time, so the body is
 * built once, before the run, and the engines send it as they send -d's: nothing is encoded or
 * allocated per call. The messages are written by hand (core/grpcwire.h's varint and prefix,
 * which the server's gRPC code writes with too): an EchoMessage is one bytes field, a
 * StreamRequest two varints. The response is not decoded: a call succeeds on grpc-status 0
 * in its trailers (h2conn.h reads it in both engines), and where the body was built here and
 * the method is h2bench.Echo's, what came back is checked against what the echo service
 * answers: its length (of the request's messages for Unary and Bidi, of the StreamSummary for
 * ClientStream, of `count` generated messages for ServerStream) at the stream's end, and its
 * bytes as they arrive, compared with a reply known before the run (h2b_load_grpc_reply: the
 * request body itself for the echoes, one generated message that ServerStream repeats, the
 * summary with its hash computed once): a memcmp per DATA chunk, nothing decoded, nothing
 * allocated per call.
 * Rejected: a hash of every response byte compared at the end (the same pass over the bytes,
 * and a mismatch found only after the last one); protobuf-c (a library and mallocs for two
 * fields).
 */
#include "load/grpc.h"

#include "core/error.h"
#include "core/grpcwire.h"

#include <stdlib.h>
#include <string.h>

static const char *const code_names[H2B_LOAD_GRPC_COUNTS] = {
    "OK",
    "CANCELLED",
    "UNKNOWN",
    "INVALID_ARGUMENT",
    "DEADLINE_EXCEEDED",
    "NOT_FOUND",
    "ALREADY_EXISTS",
    "PERMISSION_DENIED",
    "RESOURCE_EXHAUSTED",
    "FAILED_PRECONDITION",
    "ABORTED",
    "OUT_OF_RANGE",
    "UNIMPLEMENTED",
    "INTERNAL",
    "UNAVAILABLE",
    "DATA_LOSS",
    "UNAUTHENTICATED",
    "other",
    "missing",
};

const char *h2b_load_grpc_code_name(unsigned i)
{
    return i < H2B_LOAD_GRPC_COUNTS ? code_names[i] : NULL;
}

uint8_t h2b_load_grpc_status_index(const uint8_t *v, size_t n)
{
    if (n == 0 || n > 2)
        return H2B_LOAD_GRPC_OTHER;
    unsigned x = 0;
    for (size_t i = 0; i < n; i++) {
        if (v[i] < '0' || v[i] > '9')
            return H2B_LOAD_GRPC_OTHER;
        x = x * 10 + (unsigned)(v[i] - '0');
    }
    if (n == 2 && v[0] == '0')
        return H2B_LOAD_GRPC_OTHER; /* "07": not how a status is written */
    return x <= 16 ? (uint8_t)x : H2B_LOAD_GRPC_OTHER;
}

static bool name_ok(const char *p, size_t n)
{
    if (n == 0)
        return false;
    for (size_t i = 0; i < n; i++)
        if (p[i] <= ' ' || p[i] > '~' || p[i] == '/' || p[i] == '?' || p[i] == '#')
            return false;
    return true;
}

int h2b_load_grpc_method(const char *method, char **path, enum h2b_load_grpc_kind *kind)
{
    static const struct {
        const char *name;
        enum h2b_load_grpc_kind kind;
    } echo[] = {
        {"/h2bench.Echo/Unary", H2B_LOAD_GRPC_UNARY},
        {"/h2bench.Echo/ServerStream", H2B_LOAD_GRPC_SERVER_STREAM},
        {"/h2bench.Echo/ClientStream", H2B_LOAD_GRPC_CLIENT_STREAM},
        {"/h2bench.Echo/Bidi", H2B_LOAD_GRPC_BIDI},
    };
    const char *m = method[0] == '/' ? method + 1 : method;
    const char *slash = strchr(m, '/');
    if (!slash || !name_ok(m, (size_t)(slash - m)) || !name_ok(slash + 1, strlen(slash + 1)))
        return H2B_ERR_PARSE;
    size_t n = strlen(m);
    char *p = malloc(n + 2);
    if (!p)
        return H2B_ERR_NOMEM;
    p[0] = '/';
    memcpy(p + 1, m, n + 1);
    *kind = H2B_LOAD_GRPC_GENERIC;
    for (size_t i = 0; i < sizeof echo / sizeof echo[0]; i++)
        if (strcmp(p, echo[i].name) == 0)
            *kind = echo[i].kind;
    *path = p;
    return H2B_OK;
}

/* An EchoMessage of `size` pattern bytes at p (NULL: only its length). proto3 writes no field
 * for an empty payload. */
static uint64_t echo_message(uint8_t *p, uint64_t size)
{
    if (size == 0)
        return 0;
    uint64_t n = 1 + h2b_pb_varint_len(size) + size;
    if (p) {
        size_t h = 0;
        p[h++] = 0x0a; /* field 1, length-delimited */
        h += h2b_pb_varint_put(p + h, size);
        for (uint64_t i = 0; i < size; i++)
            p[h + i] = (uint8_t)i;
    }
    return n;
}

/* The response bytes h2bench.Echo answers a successful call with, or -1 when an encoder may
 * write it otherwise (see grpc.h). */
static int64_t expected(enum h2b_load_grpc_kind kind, uint64_t size, uint32_t messages,
                        uint64_t body_len, uint64_t msg_len)
{
    switch (kind) {
    case H2B_LOAD_GRPC_UNARY:
    case H2B_LOAD_GRPC_BIDI:
        return (int64_t)body_len; /* the request's own framed messages */
    case H2B_LOAD_GRPC_SERVER_STREAM:
        if (size == 0)
            return -1;
        return (int64_t)(messages * (H2B_GRPC_PREFIX + echo_message(NULL, size)));
    case H2B_LOAD_GRPC_CLIENT_STREAM: {
        if (size == 0)
            return -1;
        uint8_t m[H2B_GRPC_SUMMARY_MAX]; /* the hash does not change the length: 0 stands in */
        return (int64_t)(H2B_GRPC_PREFIX +
                         h2b_grpc_summary_put(m, messages, msg_len * messages, 0));
    }
    default:
        return -1;
    }
}

int h2b_load_grpc_body(enum h2b_load_grpc_kind kind, const uint8_t *msg, size_t msg_len,
                       uint64_t size, uint32_t messages, size_t max, uint8_t **body, size_t *len,
                       int64_t *expect)
{
    uint8_t sreq[2 + 2 * H2B_PB_VARINT_MAX];
    bool sstream = !msg && kind == H2B_LOAD_GRPC_SERVER_STREAM;
    uint32_t copies = sstream ? 1 : messages;
    uint64_t mlen = msg ? msg_len : echo_message(NULL, size);
    if (sstream) { /* StreamRequest{count: messages, size: size}, zero fields left out */
        size_t n = 0;
        sreq[n++] = 0x08;
        n += h2b_pb_varint_put(sreq + n, messages);
        if (size) {
            sreq[n++] = 0x10;
            n += h2b_pb_varint_put(sreq + n, size);
        }
        msg = sreq;
        mlen = n;
    }
    if (mlen > UINT32_MAX || copies == 0 || (H2B_GRPC_PREFIX + mlen) > max / copies)
        return H2B_ERR_RANGE;
    size_t one = H2B_GRPC_PREFIX + (size_t)mlen, total = one * copies;
    uint8_t *b = malloc(total ? total : 1);
    if (!b)
        return H2B_ERR_NOMEM;
    h2b_grpc_prefix_put(b, (uint32_t)mlen);
    if (msg)
        memcpy(b + H2B_GRPC_PREFIX, msg, (size_t)mlen);
    else
        echo_message(b + H2B_GRPC_PREFIX, size);
    for (uint32_t i = 1; i < copies; i++)
        memcpy(b + i * one, b, one);
    *expect = msg && !sstream ? -1 : expected(kind, size, messages, total, mlen);
    *body = b;
    *len = total;
    return H2B_OK;
}

int h2b_load_grpc_reply(enum h2b_load_grpc_kind kind, uint64_t size, uint32_t messages,
                        const uint8_t *body, size_t body_len, int64_t expect,
                        struct h2b_load_grpc_reply *out)
{
    *out = (struct h2b_load_grpc_reply){0};
    if (expect < 0 || body_len == 0)
        return H2B_OK;
    if (kind == H2B_LOAD_GRPC_UNARY || kind == H2B_LOAD_GRPC_BIDI) {
        out->unit = body; /* the echo: the request's bytes */
        out->unit_len = body_len;
        return H2B_OK;
    }
    size_t n;
    uint8_t *u;
    if (kind == H2B_LOAD_GRPC_SERVER_STREAM) { /* each message of the stream the same */
        n = H2B_GRPC_PREFIX + (size_t)echo_message(NULL, size);
        if (!(u = malloc(n)))
            return H2B_ERR_NOMEM;
        h2b_grpc_prefix_put(u, (uint32_t)(n - H2B_GRPC_PREFIX));
        echo_message(u + H2B_GRPC_PREFIX, size);
    } else { /* ClientStream: the summary of the body's messages, prefixes left out */
        size_t one = body_len / messages;
        uint64_t h = H2B_FNV_BASIS;
        for (uint32_t i = 0; i < messages; i++)
            h = h2b_fnv1a(h, body + i * one + H2B_GRPC_PREFIX, one - H2B_GRPC_PREFIX);
        if (!(u = malloc(H2B_GRPC_PREFIX + H2B_GRPC_SUMMARY_MAX)))
            return H2B_ERR_NOMEM;
        n = h2b_grpc_summary_put(u + H2B_GRPC_PREFIX, messages,
                                 (uint64_t)(one - H2B_GRPC_PREFIX) * messages, h);
        h2b_grpc_prefix_put(u, (uint32_t)n);
        n += H2B_GRPC_PREFIX;
    }
    out->unit = out->own = u;
    out->unit_len = n;
    return H2B_OK;
}

void h2b_load_grpc_reply_free(struct h2b_load_grpc_reply *r)
{
    free(r->own);
    *r = (struct h2b_load_grpc_reply){0};
}
