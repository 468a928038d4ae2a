/*
 * h2_hpack.h - the own-framing HTTP/2 engine's response header encoder (h2_fast.c): HPACK
 * (RFC 7541) for the fixed set of fields h2ref answers with, and a mirror of what it put into
 * the peer's dynamic table.
 *
 * server, the content-type values and the date go into the peer's dynamic table once (the date
 * again when it changes, once a second), after that they are one byte each; :status is
 * static-indexed, content-length a literal. When the table would need an eviction, the block
 * starts with size updates 0 and max (the table empties), so the mirror never tracks
 * evictions. A peer's SETTINGS_HEADER_TABLE_SIZE change (h2b_h2_hpack_set_max) is signalled
 * the same way at the next block. No Huffman coding: the values are short and mostly indexed.
 * Static inline: the block is encoded once per response, on the hot path. One owner thread,
 * as the connection. Rejected: nghttp2_hd_deflate (a deflater per connection is ~2 KiB and a
 * deflate per response, for the same one-byte fields).
 */
#ifndef H2B_H2REF_H2_HPACK_H
#define H2B_H2REF_H2_HPACK_H

#include "h2ref/handlers.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define H2B_HPACK_MAX 4096 /* our encoder never uses a larger table */
#define H2B_HPACK_SLACK 256

/* fields the encoder puts in the peer's dynamic table */
enum {
    H2B_HPACK_K_SERVER,
    H2B_HPACK_K_CT_TEXT,
    H2B_HPACK_K_CT_OCTET,
    H2B_HPACK_K_CT_JSON,
    H2B_HPACK_K_CT_GRPC,
    H2B_HPACK_K_DATE,
    H2B_HPACK_K_GRPC_OK, /* grpc-status: 0 */
    H2B_HPACK_K_COUNT
};

/* One connection's encoder: its view of the peer's dynamic table. */
struct h2b_h2_hpack {
    uint32_t max, used, ins, date_gen;
    uint32_t seq[H2B_HPACK_K_COUNT]; /* insertion number of each field, 0: not in the table */
    bool update;                     /* a size update is due at the next block */
};

static inline void h2b_h2_hpack_init(struct h2b_h2_hpack *e)
{
    memset(e, 0, sizeof *e);
    e->max = H2B_HPACK_MAX;
}

/* The peer's SETTINGS_HEADER_TABLE_SIZE: we use at most H2B_HPACK_MAX of it. */
static inline void h2b_h2_hpack_set_max(struct h2b_h2_hpack *e, uint32_t v)
{
    uint32_t m = v < H2B_HPACK_MAX ? v : H2B_HPACK_MAX;
    if (m != e->max) {
        e->max = m;
        e->update = true;
    }
}

/* HPACK integer with an n-bit prefix; first holds the pattern bits. Returns bytes written. */
static inline size_t h2b_h2_hpack_int(uint8_t *p, uint8_t first, unsigned nbits, uint32_t v)
{
    uint32_t max = (1u << nbits) - 1;
    if (v < max) {
        p[0] = (uint8_t)(first | v);
        return 1;
    }
    size_t n = 0;
    p[n++] = (uint8_t)(first | max);
    v -= max;
    while (v >= 128) {
        p[n++] = (uint8_t)(v % 128 + 128);
        v /= 128;
    }
    p[n++] = (uint8_t)v;
    return n;
}

/* An HPACK string literal (no Huffman coding). */
static inline size_t h2b_h2_hpack_str(uint8_t *p, const char *s, size_t n)
{
    size_t k = h2b_h2_hpack_int(p, 0, 7, (uint32_t)n);
    memcpy(p + k, s, n);
    return k + n;
}

/* One field of the fixed set: indexed if our earlier insertion is still there (and, for the
 * date, current), else inserted when it fits, else a literal without indexing. name_idx is its
 * static-table name index, nlen the name's length. */
static inline size_t h2b_h2_hpack_field(struct h2b_h2_hpack *e, uint8_t *p, unsigned kind,
                                        unsigned name_idx, size_t nlen, const char *v, size_t vlen,
                                        uint32_t gen)
{
    if (e->seq[kind] && (kind != H2B_HPACK_K_DATE || e->date_gen == gen))
        return h2b_h2_hpack_int(p, 0x80, 7, 62 + e->ins - e->seq[kind]);
    uint32_t size = (uint32_t)(nlen + vlen + 32);
    if (e->used + size <= e->max) {
        e->used += size;
        e->seq[kind] = ++e->ins;
        if (kind == H2B_HPACK_K_DATE)
            e->date_gen = gen;
        size_t k = h2b_h2_hpack_int(p, 0x40, 6, name_idx);
        return k + h2b_h2_hpack_str(p + k, v, vlen);
    }
    size_t k = h2b_h2_hpack_int(p, 0x00, 4, name_idx);
    return k + h2b_h2_hpack_str(p + k, v, vlen);
}

/* A block's start: when a size update is due or the table is nearly full, empty the table (size
 * 0), then allow our size again. Returns the bytes written (0, or up to 4). */
static inline size_t h2b_h2_hpack_begin(struct h2b_h2_hpack *e, uint8_t *p)
{
    size_t n = 0;
    if (e->update || (e->max >= 2 * H2B_HPACK_SLACK && e->used > e->max - H2B_HPACK_SLACK)) {
        n += h2b_h2_hpack_int(p + n, 0x20, 5, 0);
        if (e->max > 0)
            n += h2b_h2_hpack_int(p + n, 0x20, 5, e->max);
        e->update = false;
        e->used = e->ins = 0;
        memset(e->seq, 0, sizeof e->seq);
    }
    return n;
}

/* Encodes the response header block into p (151 bytes suffice); date is the 29-character
 * Date value, date_gen a number that changes whenever it does. Returns the block's length. */
static inline size_t h2b_h2_hpack_response(struct h2b_h2_hpack *e, uint8_t *p, unsigned status,
                                           unsigned ct_kind, const char *ct, size_t ct_len,
                                           const char *cl, size_t cl_len, const char *date,
                                           uint32_t date_gen)
{
    size_t n = h2b_h2_hpack_begin(e, p);
    switch (status) {
    case 200:
        p[n++] = 0x88;
        break;
    case 204:
        p[n++] = 0x89;
        break;
    case 206:
        p[n++] = 0x8a;
        break;
    case 304:
        p[n++] = 0x8b;
        break;
    case 400:
        p[n++] = 0x8c;
        break;
    case 404:
        p[n++] = 0x8d;
        break;
    case 500:
        p[n++] = 0x8e;
        break;
    default: {
        char s[3] = {(char)('0' + status / 100), (char)('0' + status / 10 % 10),
                     (char)('0' + status % 10)};
        p[n++] = 0x08; /* literal without indexing, name :status (8) */
        n += h2b_h2_hpack_str(p + n, s, 3);
        break;
    }
    }
    n += h2b_h2_hpack_field(e, p + n, H2B_HPACK_K_SERVER, 54, 6, h2b_server_name,
                            H2B_SERVER_NAME_LEN, date_gen);
    n += h2b_h2_hpack_field(e, p + n, H2B_HPACK_K_DATE, 33, 4, date, 29, date_gen);
    if (ct_kind < H2B_HPACK_K_COUNT) {
        n += h2b_h2_hpack_field(e, p + n, ct_kind, 31, 12, ct, ct_len, date_gen);
    } else {
        n += h2b_h2_hpack_int(p + n, 0x00, 4, 31); /* content-type, literal without indexing */
        n += h2b_h2_hpack_str(p + n, ct, ct_len);
    }
    if (cl) {
        n += h2b_h2_hpack_int(p + n, 0x00, 4, 28); /* content-length, literal without indexing */
        n += h2b_h2_hpack_str(p + n, cl, cl_len);
    }
    return n;
}

/* A literal field with a literal name (no Huffman coding); first: 0x40 with incremental indexing,
 * 0x00 without. */
static inline size_t h2b_h2_hpack_lit(uint8_t *p, uint8_t first, const char *name, size_t nlen,
                                      const char *v, size_t vlen)
{
    p[0] = first;
    size_t n = 1 + h2b_h2_hpack_str(p + 1, name, nlen);
    return n + h2b_h2_hpack_str(p + n, v, vlen);
}

/* A gRPC status into p (grpc-status, then grpc-message when msg is not NULL; msg is plain ASCII
 * without '%', so needs no percent-encoding): "grpc-status: 0" goes into the peer's table once
 * and is one byte after that. st is the status's 1 or 2 digits. p needs 32 + the message's
 * length bytes. */
static inline size_t h2b_h2_hpack_grpc_status(struct h2b_h2_hpack *e, uint8_t *p, const char *st,
                                              size_t st_len, const char *msg)
{
    size_t n;
    if (st_len == 1 && st[0] == '0') {
        if (e->seq[H2B_HPACK_K_GRPC_OK]) {
            n = h2b_h2_hpack_int(p, 0x80, 7, 62 + e->ins - e->seq[H2B_HPACK_K_GRPC_OK]);
        } else if (e->used + 11 + 1 + 32 <= e->max) {
            e->used += 11 + 1 + 32;
            e->seq[H2B_HPACK_K_GRPC_OK] = ++e->ins;
            n = h2b_h2_hpack_lit(p, 0x40, "grpc-status", 11, st, 1);
        } else {
            n = h2b_h2_hpack_lit(p, 0x00, "grpc-status", 11, st, 1);
        }
    } else {
        n = h2b_h2_hpack_lit(p, 0x00, "grpc-status", 11, st, st_len);
    }
    if (msg)
        n += h2b_h2_hpack_lit(p + n, 0x00, "grpc-message", 12, msg, strlen(msg));
    return n;
}

/* A trailer block: a size update when due (as h2b_h2_hpack_response), then the gRPC status. */
static inline size_t h2b_h2_hpack_trailers(struct h2b_h2_hpack *e, uint8_t *p, const char *st,
                                           size_t st_len, const char *msg)
{
    size_t n = h2b_h2_hpack_begin(e, p);
    return n + h2b_h2_hpack_grpc_status(e, p + n, st, st_len, msg);
}

#endif
