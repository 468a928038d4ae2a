/*
 * handlers.h - the reference server's routes and what each one answers, for any engine.
 *
 * The routes: / and /hello, /bytes/N, /sink, /echo, /status/N, /delay/MS, /stats, the gRPC
 * methods (grpc.h), and files under --docroot. This module knows the one route table and what each
 * route responds with (status, content-type, content-length, where the body comes from); it knows
 * nothing of a protocol. An engine (h2_fast.c and h2_nghttp2.c for HTTP/2, h1.c for HTTP/1.1, the
 * HTTP/3 server) parses its frames, fills a struct h2b_request while the request arrives, asks
 * h2b_handle() what to answer, and produces the body from the source named there (a static buffer,
 * the pattern, the request body for /echo, the stats it renders, a file).
 *
 * Every function here is pure or touches only caller storage and read-only statics: any
 * thread may call any of them at any time.
 */
#ifndef H2B_H2REF_HANDLERS_H
#define H2B_H2REF_HANDLERS_H

#include "core/pool.h"
#include "h2ref/conn.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define H2B_MAX_DELAY_MS 60000 /* the largest /delay/MS */
#define H2B_PATTERN_STEP 16384 /* the longest run one h2b_pattern_at() pointer may cover */
#define H2B_TEXT_MAX 24        /* bytes of the per-request text buffer (/sink's count) */

enum h2b_route {
    H2B_ROUTE_NONE, /* no :path yet */
    H2B_ROUTE_HELLO,
    H2B_ROUTE_BYTES,
    H2B_ROUTE_SINK,
    H2B_ROUTE_ECHO,
    H2B_ROUTE_STATUS,
    H2B_ROUTE_DELAY,
    H2B_ROUTE_STATS,
    H2B_ROUTE_FILE, /* set by the engine when h2b_docroot_open() found the file */
    H2B_ROUTE_NOTFOUND,
    H2B_ROUTE_BAD,  /* a route whose argument is malformed or out of range: 400 */
    H2B_ROUTE_GRPC, /* a gRPC method's path (grpc.h): arg is enum h2b_grpc_method */
};

enum h2b_method {
    H2B_METHOD_NONE,
    H2B_METHOD_GET,
    H2B_METHOD_HEAD,
    H2B_METHOD_POST,
    H2B_METHOD_PUT,
    H2B_METHOD_OTHER
};

/* Where a response body comes from. */
enum h2b_body {
    H2B_BODY_NONE,
    H2B_BODY_MEM,     /* mem[0..len), static or the caller's text buffer */
    H2B_BODY_PATTERN, /* len bytes of the pattern: byte i of the body is i & 0xff */
    H2B_BODY_ECHO,    /* the request body, streamed back as it arrives; length unknown */
    H2B_BODY_STATS,   /* the engine renders its /stats JSON; ct and status are set */
    H2B_BODY_FILE,    /* the opened docroot file, len bytes (file_len) */
    H2B_BODY_DELAY,   /* nothing yet: answer as /hello after arg ms (h2b_handle again then) */
    H2B_BODY_GRPC,    /* a gRPC call: messages and trailers as the stream's struct h2b_grpc says */
};

/* A request as an engine collects it. Zero it when the stream opens. */
struct h2b_request {
    uint8_t route;     /* enum h2b_route, from h2b_route_parse() */
    uint8_t method;    /* enum h2b_method, from h2b_method_parse() */
    uint8_t file_type; /* H2B_ROUTE_FILE: its content-type, by extension (handlers.c) */
    uint8_t grpc;      /* H2B_GRPC_RQ_* bits (grpc.h) */
    uint64_t arg;      /* /bytes N, /status code, /delay ms */
    uint64_t rx;       /* request body bytes received */
    uint64_t file_len; /* H2B_ROUTE_FILE: the file's size */
};

/* What to answer. Headers, in this order: :status, server (h2b_server_name), date,
 * content-type, then content-length: len when has_cl. */
/* Which of the four content-types the routes send ct is, so an engine can index them (the own
 * engine's encoder table) without comparing strings; OTHER for any other (docroot files). */
enum h2b_ct { H2B_CT_OTHER, H2B_CT_TEXT, H2B_CT_OCTET, H2B_CT_JSON, H2B_CT_GRPC };

struct h2b_response {
    unsigned status;   /* 200..599 */
    uint8_t body;      /* enum h2b_body */
    bool headers_only; /* HEAD: the headers as for GET (content-length included), no body */
    bool has_cl;
    uint8_t ct_id;  /* enum h2b_ct: ct's identity */
    const char *ct; /* content-type, static, ct_len bytes */
    size_t ct_len;
    const uint8_t *mem; /* H2B_BODY_MEM */
    uint64_t len;       /* body bytes (content-length); 0 for echo */
};

extern const char h2b_server_name[]; /* "h2bench" */
#define H2B_SERVER_NAME_LEN 7

/* The route of a request target p[0..n) (a query string is ignored); *arg gets the number of
 * /bytes/N (N <= max_body), /status/N (200..599) and /delay/MS (MS <= H2B_MAX_DELAY_MS). An
 * unknown path is H2B_ROUTE_NOTFOUND: the engine may try h2b_docroot_open() then. */
enum h2b_route h2b_route_parse(const uint8_t *p, size_t n, uint64_t max_body, uint64_t *arg);

/* The decimal number p[0..n) into *out: digits only (no sign, no space), one to 19 of them, value
 * at most max. False otherwise, *out untouched. For route arguments and content-length. */
bool h2b_parse_digits(const uint8_t *p, size_t n, uint64_t max, uint64_t *out);

/* The method named by p[0..n) (case-sensitive, as HTTP methods are). */
enum h2b_method h2b_method_parse(const uint8_t *p, size_t n);

/* True for POST and PUT: the methods /sink and /echo accept. */
static inline bool h2b_method_upload(uint8_t method)
{
    return method == H2B_METHOD_POST || method == H2B_METHOD_PUT;
}

/* What rq answers, into *rs. text (H2B_TEXT_MAX bytes, living as long as the response) holds
 * /sink's count, which rs->mem then points to. Call when the request is complete, or for an
 * upload to /echo as soon as its headers are in. A /delay gives H2B_BODY_DELAY: the engine
 * waits, sets rq->route = H2B_ROUTE_HELLO and calls again. */
void h2b_handle(const struct h2b_request *rq, char *text, struct h2b_response *rs);

/* Turns *rs into an empty text/plain response with this status, content-length 0 (an engine
 * that cannot serve a /delay or /stats: 503, 500); headers_only is kept. */
void h2b_response_status(struct h2b_response *rs, unsigned status);

/* The three digits of status into out[0..3), NUL at out[3]. Inline, as the two below: they
 * run on every response. */
static inline void h2b_status_digits(char out[4], unsigned status)
{
    out[0] = (char)('0' + status / 100);
    out[1] = (char)('0' + status / 10 % 10);
    out[2] = (char)('0' + status % 10);
    out[3] = '\0';
}

/* Decimal digits of v into buf (at least 21 bytes), NUL-terminated; returns the length.
 * snprintf cost ~700 instructions per call here, a tenth of a /hello response. */
static inline size_t h2b_fmt_u64(char *buf, uint64_t v)
{
    char tmp[20];
    size_t n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    for (size_t i = 0; i < n; i++)
        buf[i] = tmp[n - 1 - i];
    buf[n] = '\0';
    return n;
}

/* The pattern (byte i is i & 0xff), long enough that any offset's run covers a DATA frame. */
extern const uint8_t h2b_pattern[256 + H2B_PATTERN_STEP];

/* The pattern bytes of a body from offset off on: valid for H2B_PATTERN_STEP bytes. */
static inline const uint8_t *h2b_pattern_at(uint64_t off)
{
    return h2b_pattern + (off & 0xff);
}

/* Opens the file that the request target p[0..n) (a query string is ignored) names under the
 * directory dfd, never leaving it and following no symlink (walk: the O_NOFOLLOW walk even where
 * openat2 exists, for tests). Returns the fd of a regular file (the caller closes it) and its size
 * in *len, or -1: no such file, not a regular file, or a path that is refused (empty, "." or ".."
 * segments, a decoded NUL or '/', a malformed escape). */
int h2b_docroot_open(int dfd, bool walk, const uint8_t *p, size_t n, uint64_t *len);

#define H2B_FILES_PER_CONN 32 /* docroot files one connection holds open at once */
#define H2B_FPATH_MAX 768     /* bytes of a docroot :path kept until the request completes */

void h2b__docroot_keep(char **fpath, uint16_t *fpath_len, const uint8_t *p, size_t n,
                       struct h2b_freelist *paths);

/* The route of :path p[0..n) into rq (route, arg): the table (h2b_route_parse), then for an
 * unknown path with a --docroot (cfg->docroot_fd >= 0) that could name a file, a copy of the
 * path in *fpath (*fpath_len bytes, in a block of H2B_FPATH_MAX from paths, the worker's free
 * list, so a warm worker does not malloc per request; h2b_docroot_take or _close puts it back):
 * no file is opened while a request is decoded, so requests that never complete hold no
 * descriptor. The route stays H2B_ROUTE_NOTFOUND until h2b_docroot_take. Inline: it runs for
 * every HTTP/2 request, in both engines. */
static inline void h2b_route_path(struct h2b_request *rq, char **fpath, uint16_t *fpath_len,
                                  const uint8_t *p, size_t n, const struct h2b_conn_config *cfg,
                                  struct h2b_freelist *paths)
{
    rq->route = (uint8_t)h2b_route_parse(p, n, cfg->max_body, &rq->arg);
    if (rq->route == H2B_ROUTE_NOTFOUND && cfg->docroot_fd >= 0)
        h2b__docroot_keep(fpath, fpath_len, p, n, paths);
}

/* At the end of a request (before h2b_handle): opens the docroot file *fpath names (frees
 * *fpath, sets it NULL), within the descriptor budgets: at most H2B_FILES_PER_CONN per
 * connection (*conn_open, the connection's count) and cfg->files->max server-wide. Found:
 * H2B_ROUTE_FILE, rq->file_len and *fd, counted in both budgets until h2b_docroot_close. Over a
 * budget: /status/503 and true (the caller counts the refusal). No such file: the route stays
 * NOTFOUND. Nothing to do when *fpath is NULL. */
bool h2b__docroot_take(struct h2b_request *rq, int *fd, char **fpath, uint16_t fpath_len,
                       uint32_t *conn_open, const struct h2b_conn_config *cfg,
                       struct h2b_freelist *paths);
/* Inline, as the test for the common case (no docroot path) runs for every request: out of
 * line, the call alone cost h2ref/route-and-respond 58 instructions per request. */
static inline bool h2b_docroot_take(struct h2b_request *rq, int *fd, char **fpath,
                                    uint16_t fpath_len, uint32_t *conn_open,
                                    const struct h2b_conn_config *cfg, struct h2b_freelist *paths)
{
    return *fpath && h2b__docroot_take(rq, fd, fpath, fpath_len, conn_open, cfg, paths);
}

/* Closes a stream's docroot file (*fd >= 0, then -1) and returns its budget slots; frees a path
 * h2b_docroot_take never took. Inline for the same reason. */
void h2b__docroot_close(int *fd, char **fpath, uint32_t *conn_open,
                        const struct h2b_conn_config *cfg, struct h2b_freelist *paths);
static inline void h2b_docroot_close(int *fd, char **fpath, uint32_t *conn_open,
                                     const struct h2b_conn_config *cfg, struct h2b_freelist *paths)
{
    if (*fpath || *fd >= 0)
        h2b__docroot_close(fd, fpath, conn_open, cfg, paths);
}

/* p[0..n) is the string lit (a header name or value against a literal). */
static inline bool h2b_lit_eq(const uint8_t *p, size_t n, const char *lit)
{
    size_t l = strlen(lit);
    return n == l && memcmp(p, lit, l) == 0;
}

/* The deliberate regression of tests/integration/profile.sh (H2B_INJECT_SLOW=h2ref): burns
 * about as much CPU as a request costs, in a function of its own for the flame graph. */
void h2b_inject_slow_respond(void);

/* Whether the environment injects a regression into h2ref's responses: H2B_INJECT_SLOW=h2ref
 * (h2b_inject_slow_respond), H2B_INJECT_ALLOC=h2ref (one more allocation, 16 bytes, per
 * request), H2B_INJECT_INSTR=h2ref with H2B_INJECT_INSTR_COUNT=C (C more instructions per
 * request: `h2bench gate --calibrate`). Read once per process; thread-safe. */
bool h2b_inject_wanted(void);

/* Applies the injected regressions h2b_inject_wanted() found, once per response. */
void h2b_inject_respond(void);

#endif
