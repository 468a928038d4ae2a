/*
 * h2wire.h - HTTP/2 wire constants and the 9-byte frame header (RFC 9113 section 4.1), for the
 * engines that do their own framing: the server's (servers/h2ref/h2_fast.c) and the load
 * client's (harness/load/h2fast.c).
 *
 * Approach: frame types, flags and error codes as enums, big-endian field access and the frame
 * header as static inline functions: they run on every frame of both engines, and a call per
 * field would cost more than the field. Names are RFC 9113's, shortened as the two engines had
 * them (H2B_F_WINUP is WINDOW_UPDATE, H2B_E_CALM is ENHANCE_YOUR_CALM).
 * Rejected: nghttp2's constants (NGHTTP2_DATA, ...): the load engine's framing does not depend
 * on nghttp2's session API, and its enums are ints of another width.
 */
#ifndef H2B_CORE_H2WIRE_H
#define H2B_CORE_H2WIRE_H

#include <stdint.h>

/* Frame types (RFC 9113 section 6). */
enum {
    H2B_F_DATA = 0,
    H2B_F_HEADERS = 1,
    H2B_F_PRIORITY = 2,
    H2B_F_RST = 3,
    H2B_F_SETTINGS = 4,
    H2B_F_PUSH = 5,
    H2B_F_PING = 6,
    H2B_F_GOAWAY = 7,
    H2B_F_WINUP = 8,
    H2B_F_CONT = 9
};

/* Frame flags: END_STREAM (DATA, HEADERS), ACK (SETTINGS, PING), END_HEADERS, PADDED, PRIORITY. */
enum {
    H2B_FL_END_STREAM = 0x1,
    H2B_FL_ACK = 0x1,
    H2B_FL_END_HEADERS = 0x4,
    H2B_FL_PADDED = 0x8,
    H2B_FL_PRIO = 0x20
};

/* Error codes (RFC 9113 section 7). */
enum {
    H2B_E_NO_ERROR = 0,
    H2B_E_PROTOCOL = 1,
    H2B_E_INTERNAL = 2,
    H2B_E_FLOW = 3,
    H2B_E_SETTINGS_TIMEOUT = 4,
    H2B_E_STREAM_CLOSED = 5,
    H2B_E_FRAME_SIZE = 6,
    H2B_E_REFUSED = 7,
    H2B_E_CANCEL = 8,
    H2B_E_COMPRESSION = 9,
    H2B_E_CONNECT = 10,
    H2B_E_CALM = 11,
    H2B_E_INADEQUATE_SECURITY = 12,
    H2B_E_HTTP_1_1_REQUIRED = 13
};

#define H2B_H2WIRE_HD_LEN 9

/* A frame header as read: the stream id without its reserved bit. */
struct h2b_h2wire_hd {
    uint32_t len; /* payload bytes, 24 bits */
    uint8_t type;
    uint8_t flags;
    uint32_t id;
};

static inline uint32_t h2b_h2wire_get24(const uint8_t *p)
{
    return (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
}

static inline uint32_t h2b_h2wire_get32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static inline void h2b_h2wire_put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

/* The 9-byte header at p (H2B_H2WIRE_HD_LEN bytes readable). */
static inline struct h2b_h2wire_hd h2b_h2wire_hd_get(const uint8_t *p)
{
    struct h2b_h2wire_hd hd = {
        .len = h2b_h2wire_get24(p),
        .type = p[3],
        .flags = p[4],
        .id = h2b_h2wire_get32(p + 5) & 0x7fffffffu,
    };
    return hd;
}

/* Writes a 9-byte header to p: len (below 2^24), type, flags, stream id (the reserved bit 0). */
static inline void h2b_h2wire_hd_put(uint8_t *p, uint32_t len, uint8_t type, uint8_t flags,
                                     uint32_t id)
{
    p[0] = (uint8_t)(len >> 16);
    p[1] = (uint8_t)(len >> 8);
    p[2] = (uint8_t)len;
    p[3] = type;
    p[4] = flags;
    h2b_h2wire_put32(p + 5, id & 0x7fffffffu);
}

#endif
