/*
 * test_load_grpc.c - `h2bench load --grpc`'s pure parts (harness/load/grpc.c): METHOD's two
 * spellings and what is refused, the body of every kind of call byte for byte (prefixes,
 * EchoMessage, StreamRequest, a file's message sent as is), the response length h2bench.Echo
 * must answer with, the limit on the body, the reply its bytes are checked against (and the
 * check, piece by piece across the reply's repeats), and grpc-status values as count indexes.
 */
#include "load/grpc.h"
#include "core/error.h"
#include "core/grpcwire.h"
#include "test.h"

#include <stdlib.h>
#include <string.h>

static void methods(void)
{
    char *p = NULL;
    enum h2b_load_grpc_kind k;
    CHECK_EQ_INT(h2b_load_grpc_method("/h2bench.Echo/Unary", &p, &k), H2B_OK);
    CHECK_STR(p, "/h2bench.Echo/Unary");
    CHECK_EQ_INT(k, H2B_LOAD_GRPC_UNARY);
    free(p);
    CHECK_EQ_INT(h2b_load_grpc_method("h2bench.Echo/ServerStream", &p, &k), H2B_OK);
    CHECK_STR(p, "/h2bench.Echo/ServerStream");
    CHECK_EQ_INT(k, H2B_LOAD_GRPC_SERVER_STREAM);
    free(p);
    CHECK_EQ_INT(h2b_load_grpc_method("/pkg.Svc/Do", &p, &k), H2B_OK);
    CHECK_EQ_INT(k, H2B_LOAD_GRPC_GENERIC);
    free(p);
    const char *bad[] = {"", "/", "Unary", "/a/", "//b", "/a/b/c", "/a b/c", "/a/b?x", "/a/\x7f"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        p = NULL;
        CHECK_EQ_INT(h2b_load_grpc_method(bad[i], &p, &k), H2B_ERR_PARSE);
        CHECK(p == NULL);
    }
}

static void bodies(void)
{
    uint8_t *b = NULL;
    size_t n = 0;
    int64_t want = 0;
    /* Unary, 3 payload bytes: prefix (0, length 5), tag 0x0a, length 3, bytes 0 1 2 */
    CHECK_EQ_INT(h2b_load_grpc_body(H2B_LOAD_GRPC_UNARY, NULL, 0, 3, 1, 1 << 20, &b, &n, &want),
                 H2B_OK);
    static const uint8_t unary[] = {0, 0, 0, 0, 5, 0x0a, 3, 0, 1, 2};
    CHECK_EQ_U64(n, sizeof unary);
    CHECK(memcmp(b, unary, n) == 0);
    CHECK_EQ_INT((int)want, (int)n); /* the echo: the same bytes back */
    free(b);
    /* Bidi, 2 messages of 200 bytes: a two-byte length varint; each message framed */
    CHECK_EQ_INT(h2b_load_grpc_body(H2B_LOAD_GRPC_BIDI, NULL, 0, 200, 2, 1 << 20, &b, &n, &want),
                 H2B_OK);
    CHECK_EQ_U64(n, 2 * (5 + 1 + 2 + 200));
    CHECK(b[4] == 203 && b[5] == 0x0a && b[6] == (200 | 0x80) && b[7] == 1 && b[8 + 199] == 199);
    CHECK(memcmp(b, b + n / 2, n / 2) == 0);
    CHECK_EQ_INT((int)want, (int)n);
    free(b);
    /* an empty payload is an empty message (proto3 writes no field for it) */
    CHECK_EQ_INT(h2b_load_grpc_body(H2B_LOAD_GRPC_UNARY, NULL, 0, 0, 1, 64, &b, &n, &want), H2B_OK);
    CHECK_EQ_U64(n, 5);
    CHECK(memcmp(b, "\0\0\0\0\0", 5) == 0);
    free(b);
    /* ServerStream: one StreamRequest{count 3, size 10}; the answer 3 x (5 + 1 + 1 + 10) */
    CHECK_EQ_INT(h2b_load_grpc_body(H2B_LOAD_GRPC_SERVER_STREAM, NULL, 0, 10, 3, 64, &b, &n, &want),
                 H2B_OK);
    static const uint8_t sreq[] = {0, 0, 0, 0, 4, 0x08, 3, 0x10, 10};
    CHECK_EQ_U64(n, sizeof sreq);
    CHECK(memcmp(b, sreq, n) == 0);
    CHECK_EQ_INT((int)want, 51);
    free(b);
    /* ServerStream of empty payloads: size left out, the answer's length not checked */
    CHECK_EQ_INT(h2b_load_grpc_body(H2B_LOAD_GRPC_SERVER_STREAM, NULL, 0, 0, 2, 64, &b, &n, &want),
                 H2B_OK);
    CHECK_EQ_U64(n, 7);
    CHECK(b[5] == 0x08 && b[6] == 2);
    CHECK_EQ_INT((int)want, -1);
    free(b);
    /* ClientStream, 3 x 10 bytes: the summary is 0x08 3 0x10 36 0x19 + 8 bytes, prefixed */
    CHECK_EQ_INT(
        h2b_load_grpc_body(H2B_LOAD_GRPC_CLIENT_STREAM, NULL, 0, 10, 3, 256, &b, &n, &want),
        H2B_OK);
    CHECK_EQ_U64(n, 3 * 17);
    CHECK_EQ_INT((int)want, 5 + 2 + 2 + 9);
    free(b);
    /* 200 messages of 200 bytes: the summary's bytes (200 x 203) take a three-byte varint */
    CHECK_EQ_INT(
        h2b_load_grpc_body(H2B_LOAD_GRPC_CLIENT_STREAM, NULL, 0, 200, 200, 1 << 20, &b, &n, &want),
        H2B_OK);
    CHECK_EQ_INT((int)want, 5 + 1 + 2 + 1 + 3 + 9);
    free(b);
    /* a file's message, sent as it is, twice; nothing to check it against */
    static const uint8_t msg[] = {0x0a, 1, 'x', 0x10};
    CHECK_EQ_INT(h2b_load_grpc_body(H2B_LOAD_GRPC_UNARY, msg, sizeof msg, 0, 2, 64, &b, &n, &want),
                 H2B_OK);
    CHECK_EQ_U64(n, 18);
    CHECK(b[4] == 4 && memcmp(b + 5, msg, 4) == 0 && memcmp(b + 9, b, 9) == 0);
    CHECK_EQ_INT((int)want, -1);
    free(b);
    /* a generic method: EchoMessage-shaped, not checked */
    CHECK_EQ_INT(h2b_load_grpc_body(H2B_LOAD_GRPC_GENERIC, NULL, 0, 1, 1, 64, &b, &n, &want),
                 H2B_OK);
    CHECK_EQ_INT((int)want, -1);
    free(b);
    /* the limit: 4 x (5 + 3 + 20) = 112 bytes is over 100; *body untouched */
    b = (uint8_t *)"untouched";
    CHECK_EQ_INT(h2b_load_grpc_body(H2B_LOAD_GRPC_BIDI, NULL, 0, 20, 4, 100, &b, &n, &want),
                 H2B_ERR_RANGE);
    CHECK_STR((char *)b, "untouched");
}

/* Builds kind's body and reply; checks the reply's unit against want[0..want_len). */
static void reply_of(enum h2b_load_grpc_kind kind, uint64_t size, uint32_t messages,
                     const uint8_t *want, size_t want_len)
{
    uint8_t *b = NULL;
    size_t n = 0;
    int64_t expect = 0;
    struct h2b_load_grpc_reply r;
    CHECK_EQ_INT(h2b_load_grpc_body(kind, NULL, 0, size, messages, 1 << 20, &b, &n, &expect),
                 H2B_OK);
    CHECK_EQ_INT(h2b_load_grpc_reply(kind, size, messages, b, n, expect, &r), H2B_OK);
    CHECK(r.unit != NULL && r.unit_len == want_len && memcmp(r.unit, want, want_len) == 0);
    /* the whole expected response matches, in any pieces; one flipped byte does not */
    uint8_t whole[512];
    CHECK(expect > 0 && (size_t)expect <= sizeof whole);
    for (int64_t k = 0; k < expect; k++)
        whole[k] = r.unit[(size_t)k % r.unit_len];
    CHECK(h2b_load_grpc_reply_match(&r, 0, whole, (size_t)expect));
    bool pieces = true;
    for (int64_t k = 0; k < expect; k += 7)
        pieces &= h2b_load_grpc_reply_match(&r, (uint64_t)k, whole + k,
                                            (size_t)(expect - k < 7 ? expect - k : 7));
    CHECK(pieces);
    whole[expect - 1] ^= 1;
    CHECK(!h2b_load_grpc_reply_match(&r, 0, whole, (size_t)expect));
    CHECK(!h2b_load_grpc_reply_match(&r, (uint64_t)expect - 1, whole + expect - 1, 1));
    h2b_load_grpc_reply_free(&r);
    CHECK(r.unit == NULL && r.own == NULL);
    free(b);
}

static void replies(void)
{
    /* Unary and Bidi: the request body itself */
    static const uint8_t unary[] = {0, 0, 0, 0, 5, 0x0a, 3, 0, 1, 2};
    reply_of(H2B_LOAD_GRPC_UNARY, 3, 1, unary, sizeof unary);
    static const uint8_t bidi[] = {0, 0, 0, 0, 4, 0x0a, 2, 0, 1, 0, 0, 0, 0, 4, 0x0a, 2, 0, 1};
    reply_of(H2B_LOAD_GRPC_BIDI, 2, 2, bidi, sizeof bidi);
    /* ServerStream: one generated message, repeated count times */
    static const uint8_t sstream[] = {0, 0, 0, 0, 6, 0x0a, 4, 0, 1, 2, 3};
    reply_of(H2B_LOAD_GRPC_SERVER_STREAM, 4, 3, sstream, sizeof sstream);
    /* ClientStream of 2 x 1 byte: messages 2, bytes 6, FNV-1a of 0a 01 00 0a 01 00 */
    static const uint8_t m2[] = {0x0a, 1, 0, 0x0a, 1, 0};
    uint64_t h = h2b_fnv1a(H2B_FNV_BASIS, m2, sizeof m2);
    uint8_t cstream[5 + 5 + 8] = {0, 0, 0, 0, 13, 0x08, 2, 0x10, 6, 0x19};
    for (int k = 0; k < 8; k++)
        cstream[10 + k] = (uint8_t)(h >> (8 * k));
    reply_of(H2B_LOAD_GRPC_CLIENT_STREAM, 1, 2, cstream, 5 + 5 + 8);
    /* FNV-1a's published value for "a" */
    CHECK_EQ_U64(h2b_fnv1a(H2B_FNV_BASIS, (const uint8_t *)"a", 1), 0xaf63dc4c8601ec8cull);
    /* unchecked (expect -1): no reply */
    struct h2b_load_grpc_reply r;
    CHECK_EQ_INT(h2b_load_grpc_reply(H2B_LOAD_GRPC_GENERIC, 1, 1, unary, sizeof unary, -1, &r),
                 H2B_OK);
    CHECK(r.unit == NULL);
    h2b_load_grpc_reply_free(&r);
}

static void statuses(void)
{
    struct {
        const char *v;
        unsigned want;
    } t[] = {{"0", 0}, {"4", 4},   {"12", 12}, {"16", 16}, {"17", H2B_LOAD_GRPC_OTHER},
             {"", 17}, {"07", 17}, {"-1", 17}, {"1 ", 17}, {"100", H2B_LOAD_GRPC_OTHER}};
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        CHECK_EQ_INT(h2b_load_grpc_status_index((const uint8_t *)t[i].v, strlen(t[i].v)),
                     (int)t[i].want);
    CHECK_STR(h2b_load_grpc_code_name(0), "OK");
    CHECK_STR(h2b_load_grpc_code_name(4), "DEADLINE_EXCEEDED");
    CHECK_STR(h2b_load_grpc_code_name(16), "UNAUTHENTICATED");
    CHECK_STR(h2b_load_grpc_code_name(H2B_LOAD_GRPC_OTHER), "other");
    CHECK_STR(h2b_load_grpc_code_name(H2B_LOAD_GRPC_MISSING), "missing");
    CHECK(h2b_load_grpc_code_name(H2B_LOAD_GRPC_COUNTS) == NULL);
}

int main(void)
{
    methods();
    bodies();
    replies();
    statuses();
    return test_report();
}
