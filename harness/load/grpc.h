/*
 * grpc.h - `h2bench load --grpc METHOD`: the request body of every call, built once before the
 * run, the response length a successful call of h2ref's echo service must have, and the gRPC
 * status codes a run counts (grpc.c has the design; docs/load.md the flags).
 */
#ifndef H2B_LOAD_GRPC_H
#define H2B_LOAD_GRPC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* The status counts of a run: grpc-status 0..16 (gRPC's codes), then two more. */
#define H2B_LOAD_GRPC_OTHER 17   /* a grpc-status that is not one of 0..16 */
#define H2B_LOAD_GRPC_MISSING 18 /* a response with no grpc-status where the spec puts one */
#define H2B_LOAD_GRPC_COUNTS 19
#define H2B_LOAD_GRPC_NONE 0xff /* a call's status before one was read */

#define H2B_LOAD_GRPC_MAX_MESSAGES 1000000u /* --grpc-messages */

/* The methods of h2ref's h2bench.Echo whose request and reply h2bench knows (echo.proto). */
enum h2b_load_grpc_kind {
    H2B_LOAD_GRPC_GENERIC = 0, /* any other method: N EchoMessage-shaped messages, not checked */
    H2B_LOAD_GRPC_UNARY,
    H2B_LOAD_GRPC_SERVER_STREAM,
    H2B_LOAD_GRPC_CLIENT_STREAM,
    H2B_LOAD_GRPC_BIDI
};

/* gRPC's name of count index i ("OK", "CANCELLED", ... "UNAUTHENTICATED", "other", "missing"),
 * or NULL past H2B_LOAD_GRPC_COUNTS. */
const char *h2b_load_grpc_code_name(unsigned i);

/* A grpc-status value (v[0..n), not NUL-terminated) as a count index: 0..16, or
 * H2B_LOAD_GRPC_OTHER for any other value (empty, not decimal digits, above 16). */
uint8_t h2b_load_grpc_status_index(const uint8_t *v, size_t n);

/* METHOD as --grpc takes it ("/svc.Name/Method" or "svc.Name/Method": a service and a method
 * name of printable ASCII without '/', spaces or '?') into *path (malloc'd, with its leading
 * '/'), and which of h2bench.Echo's methods it is. H2B_OK, H2B_ERR_PARSE or H2B_ERR_NOMEM. */
int h2b_load_grpc_method(const char *method, char **path, enum h2b_load_grpc_kind *kind);

/* The request body of one call: `messages` length-prefixed messages, each msg[0..msg_len) when
 * msg is not NULL (--grpc-data: an already-encoded message, sent as it is), else an
 * EchoMessage whose payload (field 1) is `size` bytes, byte i being i mod 256 (--grpc-size).
 * ServerStream's one request is a StreamRequest{count: messages, size: size} instead (msg
 * NULL). *body is malloc'd, at most max bytes (else H2B_ERR_RANGE). *expect: the response
 * DATA bytes a call that ends with grpc-status 0 carries from h2ref's echo service (and the
 * gRPC peers built from the same echo.proto), -1 when it is not known (a message from a file,
 * a generic method, a zero-length payload that encoders write differently). Returns H2B_OK,
 * H2B_ERR_RANGE or H2B_ERR_NOMEM; *body is untouched on failure. */
int h2b_load_grpc_body(enum h2b_load_grpc_kind kind, const uint8_t *msg, size_t msg_len,
                       uint64_t size, uint32_t messages, size_t max, uint8_t **body, size_t *len,
                       int64_t *expect);

/* The response a call of h2bench.Echo with status 0 must carry, byte for byte: byte k of its
 * DATA is unit[k % unit_len], for k below the expected length (h2b_load_grpc_body's *expect):
 * the request body itself for Unary and Bidi, one generated message for ServerStream, the
 * StreamSummary for ClientStream. unit NULL: not checked. */
struct h2b_load_grpc_reply {
    const uint8_t *unit; /* the body (not owned), or own */
    size_t unit_len;     /* > 0 when unit is set */
    uint8_t *own;        /* unit when built here (malloc'd), freed by h2b_load_grpc_reply_free */
};

/* The reply of a call whose request body is body[0..body_len) as h2b_load_grpc_body built it
 * from the same kind, size and messages with its expect (-1, or a message from a file: *out
 * left unchecked, unit NULL). body must outlive *out. Returns H2B_OK or H2B_ERR_NOMEM (*out
 * then unchecked). */
int h2b_load_grpc_reply(enum h2b_load_grpc_kind kind, uint64_t size, uint32_t messages,
                        const uint8_t *body, size_t body_len, int64_t expect,
                        struct h2b_load_grpc_reply *out);

void h2b_load_grpc_reply_free(struct h2b_load_grpc_reply *r);

/* Are p[0..n), the response DATA bytes at offset off of a call, what r says they must be?
 * r->unit must be set. No allocation, one memcmp per piece of the unit they cover. */
static inline bool h2b_load_grpc_reply_match(const struct h2b_load_grpc_reply *r, uint64_t off,
                                             const uint8_t *p, size_t n)
{
    size_t k = (size_t)(off % r->unit_len);
    while (n > 0) {
        size_t m = r->unit_len - k < n ? r->unit_len - k : n;
        if (memcmp(p, r->unit + k, m) != 0)
            return false;
        p += m;
        n -= m;
        k = 0;
    }
    return true;
}

#endif
