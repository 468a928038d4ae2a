/*
 * h2_reqcheck.h - the own-framing HTTP/2 engine's request checks (h2_fast.c): what nghttp2's
 * HTTP messaging checks of a request's fields, RFC 9113 8.2-8.3, one field at a time as the
 * HPACK decoder emits them.
 *
 * Field names lowercase token characters; values without NUL, CR or LF and without outer
 * whitespace; pseudo-headers known, unique, before every regular field and absent from
 * trailers; :method a token; :path absolute ("/...") or "*" (OPTIONS only); :method, :scheme
 * and :path present (CONNECT: :method and :authority, no :scheme or :path); no
 * connection-specific fields; TE only "trailers"; content-length digits, equal when repeated,
 * and equal to the DATA received (h2b_h2_reqcheck_body). A failed check makes the request
 * malformed: the engine resets its stream with PROTOCOL_ERROR. :method and :path also fill the
 * request the route table answers (handlers.h).
 *
 * Static inline: it runs for every field of every request. One owner thread, as the stream.
 * Rejected: a table of field names (five comparisons against a length-checked literal are
 * fewer instructions than a hash for the handful of fields a request carries).
 */
#ifndef H2B_H2REF_H2_REQCHECK_H
#define H2B_H2REF_H2_REQCHECK_H

#include "core/pool.h"
#include "core/token.h"
#include "h2ref/grpc.h"
#include "h2ref/handlers.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* pseudo-header bits */
enum { H2B_RC_METHOD = 1, H2B_RC_SCHEME = 2, H2B_RC_PATH = 4, H2B_RC_AUTHORITY = 8 };

/* One request's checks so far; zero is the state before its first field. */
struct h2b_h2_reqcheck {
    uint8_t pseudo;        /* H2B_RC_* seen */
    bool regular;          /* a regular field seen */
    bool connect, options; /* :method CONNECT, OPTIONS */
    bool star;             /* :path is "*" */
    bool has_clen;
    uint64_t clen; /* content-length */
};

static inline bool h2b_h2_reqcheck_value(const uint8_t *v, size_t n)
{
    if (n > 0 && (v[0] == ' ' || v[0] == '\t' || v[n - 1] == ' ' || v[n - 1] == '\t'))
        return false;
    for (size_t i = 0; i < n; i++)
        if (v[i] == 0 || v[i] == '\r' || v[i] == '\n')
            return false;
    return true;
}

/* A pseudo-header field (name starts with ':'); see h2b_h2_reqcheck_field. */
static inline bool h2b_h2_reqcheck_pseudo(struct h2b_h2_reqcheck *rc, bool request,
                                          struct h2b_request *req, char **fpath,
                                          uint16_t *fpath_len, const struct h2b_conn_config *cfg,
                                          struct h2b_freelist *paths, const uint8_t *name,
                                          size_t nlen, const uint8_t *value, size_t vlen)
{
    unsigned bit = h2b_lit_eq(name, nlen, ":method")      ? H2B_RC_METHOD
                   : h2b_lit_eq(name, nlen, ":scheme")    ? H2B_RC_SCHEME
                   : h2b_lit_eq(name, nlen, ":path")      ? H2B_RC_PATH
                   : h2b_lit_eq(name, nlen, ":authority") ? H2B_RC_AUTHORITY
                                                          : 0;
    if (!request || rc->regular || bit == 0 || (rc->pseudo & bit))
        return false;
    rc->pseudo |= (uint8_t)bit;
    if (bit == H2B_RC_METHOD) {
        if (vlen == 0)
            return false;
        for (size_t i = 0; i < vlen; i++)
            if (!h2b_token_char(value[i]))
                return false;
        req->method = (uint8_t)h2b_method_parse(value, vlen);
        rc->connect = h2b_lit_eq(value, vlen, "CONNECT");
        rc->options = h2b_lit_eq(value, vlen, "OPTIONS");
    } else if (bit == H2B_RC_PATH) {
        if (vlen == 0 || !(value[0] == '/' || (vlen == 1 && value[0] == '*')))
            return false;
        if (value[0] == '/') {
            h2b_route_path(req, fpath, fpath_len, value, vlen, cfg, paths);
        } else {
            rc->star = true;
            req->route = H2B_ROUTE_NOTFOUND;
        }
    }
    return true;
}

/* Checks and applies one field of a request's header block (request: the block opens the
 * request; false: trailers). req, fpath and fpath_len are the stream's (h2b_route_path fills
 * them from :path, with cfg and paths); g its gRPC state, for the fields a gRPC call reads
 * (grpc.h: a length compare for any other field, in the chain of names compared anyway).
 * Returns false when the field makes the request malformed. */
static inline bool h2b_h2_reqcheck_field(struct h2b_h2_reqcheck *rc, bool request,
                                         struct h2b_request *req, char **fpath, uint16_t *fpath_len,
                                         const struct h2b_conn_config *cfg,
                                         struct h2b_freelist *paths, struct h2b_grpc *g,
                                         const uint8_t *name, size_t nlen, const uint8_t *value,
                                         size_t vlen)
{
    if (nlen == 0 || !h2b_h2_reqcheck_value(value, vlen))
        return false;
    if (name[0] == ':')
        return h2b_h2_reqcheck_pseudo(rc, request, req, fpath, fpath_len, cfg, paths, name, nlen,
                                      value, vlen);
    rc->regular = true;
    for (size_t i = 0; i < nlen; i++)
        if (!h2b_token_lower(name[i])) /* uppercase is refused */
            return false;
    if (h2b_lit_eq(name, nlen, "connection") || h2b_lit_eq(name, nlen, "keep-alive") ||
        h2b_lit_eq(name, nlen, "proxy-connection") || h2b_lit_eq(name, nlen, "transfer-encoding") ||
        h2b_lit_eq(name, nlen, "upgrade") ||
        (h2b_lit_eq(name, nlen, "te") && !h2b_lit_eq(value, vlen, "trailers"))) {
        return false;
    } else if (h2b_lit_eq(name, nlen, "content-length")) {
        uint64_t v;
        if (!request || !h2b_parse_digits(value, vlen, UINT64_MAX / 2, &v) ||
            (rc->has_clen && rc->clen != v))
            return false;
        rc->has_clen = true;
        rc->clen = v;
    } else if (h2b_grpc_field_len(nlen) && request && h2b_grpc_fields_wanted(req)) {
        h2b_grpc_field(req, g, name, nlen, value, vlen);
    }
    return true;
}

/* The request's header block ended: are the pseudo-headers it needs there? */
static inline bool h2b_h2_reqcheck_head(const struct h2b_h2_reqcheck *rc)
{
    unsigned need = rc->connect ? (H2B_RC_METHOD | H2B_RC_AUTHORITY)
                                : (H2B_RC_METHOD | H2B_RC_SCHEME | H2B_RC_PATH);
    if ((rc->pseudo & need) != need)
        return false;
    if (rc->connect && (rc->pseudo & (H2B_RC_SCHEME | H2B_RC_PATH)))
        return false;
    return !rc->star || rc->options;
}

/* rx bytes of body have arrived (end: the request ended): within its content-length? */
static inline bool h2b_h2_reqcheck_body(const struct h2b_h2_reqcheck *rc, uint64_t rx, bool end)
{
    return !rc->has_clen || (end ? rx == rc->clen : rx <= rc->clen);
}

#endif
