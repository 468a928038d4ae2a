/*
 * grpcwire.h - gRPC's message framing and the few protobuf encodings h2bench writes itself, for
 * the server's gRPC calls (servers/h2ref/grpc.c) and the load generator's request bodies
 * (harness/load/grpc.c): a protobuf varint, and the 5-byte prefix of a gRPC message (a
 * compressed-flag byte, then the message's length, 32-bit big-endian), and ClientStream's
 * summary with its hash, which the load generator checks the server's answer against.
 *
 * Approach: static inline, as h2wire.h keeps the HTTP/2 frame header: both users put a prefix
 * and a varint or two in front of every generated message, and a call per field would cost more
 * than the field. Decoding stays with the server, the only side that parses messages.
 */
#ifndef H2B_CORE_GRPCWIRE_H
#define H2B_CORE_GRPCWIRE_H

#include <stddef.h>
#include <stdint.h>

#define H2B_GRPC_PREFIX 5    /* compressed flag, 32-bit big-endian length */
#define H2B_PB_VARINT_MAX 10 /* the longest varint of a 64-bit value */

/* v as a protobuf varint at p (room for H2B_PB_VARINT_MAX bytes); returns its length. */
static inline size_t h2b_pb_varint_put(uint8_t *p, uint64_t v)
{
    size_t n = 0;
    while (v >= 0x80) {
        p[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    p[n++] = (uint8_t)v;
    return n;
}

/* The length of v as a protobuf varint. */
static inline size_t h2b_pb_varint_len(uint64_t v)
{
    size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

/* The prefix of an uncompressed message of len bytes at p (H2B_GRPC_PREFIX bytes). */
static inline void h2b_grpc_prefix_put(uint8_t *p, uint32_t len)
{
    p[0] = 0;
    p[1] = (uint8_t)(len >> 24);
    p[2] = (uint8_t)(len >> 16);
    p[3] = (uint8_t)(len >> 8);
    p[4] = (uint8_t)len;
}

/* The FNV-1a 64-bit hash of p[0..n) continued from h (start: H2B_FNV_BASIS): ClientStream's
 * summary hashes the messages it received with it. */
#define H2B_FNV_BASIS 0xcbf29ce484222325ull
static inline uint64_t h2b_fnv1a(uint64_t h, const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

/* ClientStream's answer, a StreamSummary{messages, bytes, fnv1a} (echo.proto: two varints and
 * a fixed64, all three written) at m (room for H2B_GRPC_SUMMARY_MAX bytes); returns its
 * length. */
#define H2B_GRPC_SUMMARY_MAX (1 + H2B_PB_VARINT_MAX + 1 + H2B_PB_VARINT_MAX + 1 + 8)
static inline size_t h2b_grpc_summary_put(uint8_t *m, uint64_t messages, uint64_t bytes,
                                          uint64_t fnv)
{
    size_t n = 0;
    m[n++] = 0x08; /* messages */
    n += h2b_pb_varint_put(m + n, messages);
    m[n++] = 0x10; /* bytes */
    n += h2b_pb_varint_put(m + n, bytes);
    m[n++] = 0x19; /* fnv1a, fixed64 */
    for (int k = 0; k < 8; k++)
        m[n++] = (uint8_t)(fnv >> (8 * k));
    return n;
}

#endif
