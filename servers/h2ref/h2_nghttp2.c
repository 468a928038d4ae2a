/*
 * h2_nghttp2.c - the reference server's HTTP/2 engine over a libnghttp2 session (`h2bench serve
 * --engine nghttp2`), one struct h2b_engine (engine.h) behind the connection core (conn.c).
 *
 * Approach:
 * - Input goes straight into nghttp2_session_mem_recv; nghttp2 consumes all of it, so there is
 *   no per-connection read buffer. Callbacks decide the route while headers are decoded (no
 *   copies of names or values; the route table and the responses are handlers.c's, shared
 *   with the other engines) and queue finished requests on a ready list; responses are
 *   submitted after mem_recv returns, so a request reset in the same batch costs no work.
 * - Output: nghttp2_session_mem_send frames are copied into one pooled 64 KiB buffer; large
 *   static bodies (the /bytes pattern) are referenced by iovec instead of copied
 *   (NGHTTP2_DATA_FLAG_NO_COPY + send_data_callback), so a flush is one writev of up to 512 KiB.
 *   A connection holds a buffer only while it has unsent bytes.
 * - Flow control is manual (no_auto_window_update): /echo consumes request bytes only when they
 *   leave as response DATA, so its memory is bounded by the stream window.
 * - Guards nghttp2 1.52 lacks: a header list budget, an idle and a slow-client timeout, a flood
 *   budget (token bucket charged for empty DATA, PRIORITY, PING, SETTINGS, tiny WINDOW_UPDATE,
 *   unknown frames, frames on closed streams, resets and invalid frames) and an outbound
 *   queue cap. Frame headers are walked ahead of nghttp2 (scan_input), because nghttp2 drops
 *   some frames without any callback; the same walk answers frames on closed streams and
 *   lower new stream ids, which nghttp2 ignores once closed streams are not retained.
 * - Timers: one min-heap of connection deadlines (idle or slow-client) and one of /delay
 *   responses (harness/core/heap.h), O(log n) whatever order deadlines come in (a sorted list
 *   scanned from its tail made decreasing /delay deadlines quadratic). A deadline that moves
 *   later stays in the heap at its old key until it comes up, so progress costs no heap work.
 *   Only application progress (requests, request bodies, response frames) moves a deadline.
 *   The connection timer's policy, the free lists with the memory budget, the flood budget and
 *   the stream-id window are h2_fast.c's too (ctimer.h, wmem.h, guard.h).
 * - Memory: nghttp2's own small blocks (5 allocations per request: stream, outbound items, the
 *   nv copy) come from the core's size-class pool (the env's, counted for /stats).
 * Rejected: a send_callback writing per frame (one syscall per frame); per-connection arenas
 * (connections live for millions of requests and nghttp2 frees objects one by one).
 */
#include "h2ref/h2_nghttp2.h"

#include "core/alloc.h"
#include "core/check.h"
#include "core/clock.h"
#include "core/error.h"
#include "core/h2wire.h"
#include "core/heap.h"
#include "core/list.h"
#include "core/pool_nghttp2.h"
#include "h2ref/ctimer.h"
#include "h2ref/engine.h"
#include "h2ref/grpc.h"
#include "h2ref/guard.h"
#include "h2ref/handlers.h"
#include "h2ref/outbuf.h"
#include "h2ref/wmem.h"

#include <nghttp2/nghttp2.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define OUT_MIN_ROOM 1024
#define DATA_MAX 16384 /* nghttp2 never sends larger DATA payloads without a length callback */
#define REF_MIN 1024   /* smaller static payloads are copied: cheaper than an iovec */

enum list { L_NONE, L_READY, L_DELAY };

struct stream {
    struct h2b_list rlink; /* the ready list, while list is L_READY */
    struct h2b_list link;  /* all streams of the connection */
    struct ngconn *conn;
    int32_t id;
    uint8_t list;
    uint8_t body;   /* enum h2b_body: where the response's DATA comes from */
    bool eof_in;    /* request END_STREAM seen */
    bool responded; /* response submitted */
    bool deferred;  /* data provider returned NGHTTP2_ERR_DEFERRED */
    bool dropped;   /* reset for memory: further request DATA is discarded */
    bool grpc;      /* a gRPC call: g holds its state */
    bool deadline;  /* its grpc-timeout is armed in ctx->delays (dnode) */
    uint32_t hdr_bytes;
    struct h2b_request req;     /* route, method, argument, body bytes (handlers.h) */
    struct h2b_heap_node dnode; /* /delay: in ctx->delays, keyed by the deadline (ns) */
    uint64_t len, off;          /* response body length and bytes sent */
    const uint8_t *mem;
    struct h2b_shold hold; /* echo chunks or /stats JSON, docroot path and file (wmem.h) */
    char status_str[4];
    char cl[24];
    char text[H2B_TEXT_MAX]; /* small bodies (/sink's count) */
    struct h2b_grpc g;       /* not cleared at open: grpc.h initialises it for a gRPC request */
};

struct ngconn {
    struct ngctx *ctx;
    struct h2b_dirty *owner; /* the core's connection, in the dirty queue */
    nghttp2_session *sess;
    struct h2b_list ready;   /* of stream.rlink, oldest first */
    struct h2b_list streams; /* of stream.link: every open stream, released on ng_del */
    /* the stream whose request headers are being decoded: on_header and on_frame_recv skip
     * nghttp2's stream map for it (a header block arrives in one piece, CONTINUATIONs next) */
    struct stream *hdr_st;
    struct h2b_ctimer tm; /* idle and slow-client timer, in ctx->timers (ctimer.h) */
    /* output */
    struct h2b_outbuf out; /* outbuf.h */
    bool hold; /* an iovec references nghttp2's frame buffer: no mem_send until it is sent */
    /* state */
    bool fatal;        /* unusable: close now */
    bool input_closed; /* the peer half-closed: no more input will come */
    bool terminated;   /* GOAWAY queued, input is discarded */
    bool got_frame;    /* the client preface and a first frame arrived */
    bool calm;         /* flood budget spent */
    bool goaway_sent;
    bool frame_open; /* a frame's header arrived, its payload has not all arrived */
    /* input framing, tracked ahead of nghttp2 (see scan_input) */
    uint8_t fh[9];
    uint8_t fh_have;
    uint8_t preface_left;
    uint32_t pay_left;
    struct h2b_sidwin sids; /* client stream ids: opened, reset (guard.h) */
    uint32_t ndelayed;
    struct h2b_chold held;  /* open streams, their files and echo bytes (wmem.h) */
    struct h2b_flood flood; /* guard.h */
};

struct ngctx {
    struct h2b_conn_config cfg;
    struct h2b_engine_env *env; /* the core's, borrowed */
    struct h2b_stats *stats;    /* env->stats */
    bool inject_slow;           /* an injected regression (handlers.c, h2b_inject_wanted()) */
    nghttp2_session_callbacks *cbs;
    nghttp2_option *opt;
    nghttp2_mem mem;        /* nghttp2's allocator: the env's pool */
    struct h2b_wmem wm;     /* free lists and the memory budget (wmem.h) */
    struct h2b_heap timers; /* every live connection's idle or slow-client deadline */
    struct h2b_heap delays; /* /delay streams by deadline */
    uint64_t now;
};

_Static_assert(DATA_MAX <= H2B_PATTERN_STEP, "a DATA frame's pattern run is in the array");

/* gRPC calls (their section is beside the callbacks they hook into) */
static ssize_t grpc_read(nghttp2_session *sess, struct stream *st, size_t length, uint32_t *flags);
static size_t grpc_status_nv(struct stream *st, nghttp2_nv *nv);
static void grpc_begin(struct ngconn *c, struct stream *st);
static void grpc_settle(struct ngconn *c, struct stream *st);

/* ---- memory: streams, chunks and output buffers from the worker's free lists, counted in the
 * server's memory budget (wmem.h); nghttp2's own small blocks (5 allocations per request:
 * stream, outbound items, the nv copy) from the env's size-class pool through ctx->mem ---- */

static struct stream *stream_get(struct ngctx *ctx)
{
    struct stream *st = h2b_wmem_stream_get(&ctx->wm, offsetof(struct stream, status_str));
    if (st)
        st->hold.fd = -1;
    return st;
}

/* ---- timers and dirty list ---- */

static bool conn_busy(const struct ngconn *c)
{
    return !c->got_frame || c->held.nstreams > 0 || h2b_outbuf_pending(&c->out) || c->terminated ||
           c->frame_open;
}

/* The connection's timer (ctimer.h): busy while no preface has come, a stream is open, output
 * is unsent, a GOAWAY is queued or a frame is half read. */
static void conn_retime(struct ngconn *c)
{
    struct ngctx *ctx = c->ctx;
    h2b_ctimer_retime(&c->tm, &ctx->timers, ctx->now, c->fatal, conn_busy(c), &ctx->cfg);
}

static void mark_dirty(struct ngconn *c)
{
    h2b_engine_mark_dirty(c->ctx->env, c->owner);
}

/* ---- flood budget ---- */

static void charge(struct ngconn *c, double n)
{
    const struct h2b_conn_config *cfg = &c->ctx->cfg;
    if (h2b_flood_charge(&c->flood, n, c->ctx->now, cfg->flood_rate, cfg->flood_burst))
        c->calm = true;
}

/* ---- output ---- */

static bool out_ensure(struct ngconn *c)
{
    return c->out.buf || h2b_wmem_out_attach(&c->ctx->wm, &c->out);
}

static size_t out_room(const struct ngconn *c)
{
    return c->out.buf ? H2B_OUTBUF_SIZE - c->out.len : H2B_OUTBUF_SIZE;
}

/* Copies n bytes to the buffer (the caller checked the room). */
static void out_copy(struct ngconn *c, const void *p, size_t n)
{
    memcpy(h2b_outbuf_append(&c->out, n), p, n);
}

static void out_reset(struct ngconn *c)
{
    c->hold = false;
    h2b_wmem_out_detach(&c->ctx->wm, &c->out);
}

static void fail(struct ngconn *c, enum h2b_stat why)
{
    if (!c->fatal)
        h2b_stats_add(c->ctx->stats, why, 1);
    c->fatal = true;
    h2b_heap_remove(&c->ctx->timers, &c->tm.node);
}

static void fill(struct ngconn *c)
{
    while (!c->hold && !c->fatal) {
        if (c->out.niov > H2B_OUT_IOV_MAX - 3 || c->out.pending >= H2B_OUT_PENDING_MAX ||
            out_room(c) < OUT_MIN_ROOM)
            break;
        const uint8_t *p;
        ssize_t n = nghttp2_session_mem_send(c->sess, &p);
        if (n < 0) {
            fail(c, H2B_STAT_ERR_PROTOCOL);
            return;
        }
        if (n == 0)
            break;
        if (!out_ensure(c)) {
            fail(c, H2B_STAT_ERR_PROTOCOL);
            return;
        }
        if ((size_t)n <= out_room(c)) {
            out_copy(c, p, (size_t)n);
        } else {
            h2b_outbuf_ref(&c->out, p,
                           (size_t)n); /* valid until the next mem_send: hold until sent */
            c->hold = true;
        }
    }
    if (!h2b_outbuf_pending(&c->out) && c->out.buf)
        out_reset(c);
}

static int ng_output(void *e, const struct iovec **iov)
{
    static const struct iovec none;
    struct ngconn *c = e;
    *iov = &none;
    if (c->fatal)
        return H2B_ERR_PROTO;
    fill(c);
    if (c->fatal)
        return H2B_ERR_PROTO;
    return h2b_outbuf_iov(&c->out, iov);
}

static void ng_sent(void *e, size_t n)
{
    struct ngconn *c = e;
    if (n == 0)
        return;
    h2b_stats_add(c->ctx->stats, H2B_STAT_BYTES_OUT, n);
    if (h2b_outbuf_sent(&c->out, n))
        out_reset(c);
    conn_retime(c);
}

/* ---- requests: the ready list, body sources, responses (what to answer: handlers.c) ---- */

static void ready_unlink(struct ngconn *c, struct stream *st)
{
    if (st->list == L_READY) {
        h2b_list_unlink(&st->rlink);
    } else if (st->list == L_DELAY) {
        h2b_heap_remove(&c->ctx->delays, &st->dnode);
        H2B_ASSERT(c->ndelayed > 0);
        c->ndelayed--;
    }
    st->list = L_NONE;
}

static void ready_push(struct ngconn *c, struct stream *st)
{
    if (st->list != L_NONE || st->responded)
        return;
    st->list = L_READY;
    h2b_list_insert_tail(&c->ready, &st->rlink);
}

/* Queues st until its /delay deadline; false when there is no memory for it. */
static bool delay_insert(struct ngconn *c, struct stream *st, uint64_t deadline)
{
    if (h2b_heap_push(&c->ctx->delays, &st->dnode, deadline) != H2B_OK)
        return false;
    st->list = L_DELAY;
    c->ndelayed++;
    return true;
}

static bool is_upload(const struct stream *st)
{
    return h2b_method_upload(st->req.method);
}

static ssize_t read_body(nghttp2_session *sess, int32_t id, uint8_t *buf, size_t length,
                         uint32_t *flags, nghttp2_data_source *src, void *ud)
{
    (void)sess, (void)id, (void)buf, (void)ud;
    struct stream *st = src->ptr;
    if (st->grpc)
        return grpc_read(sess, st, length, flags);
    if (st->req.route == H2B_ROUTE_ECHO) {
        if (st->hold.chunks.bytes == 0) {
            if (st->eof_in) {
                *flags |= NGHTTP2_DATA_FLAG_EOF;
                return 0;
            }
            st->deferred = true;
            return NGHTTP2_ERR_DEFERRED;
        }
        size_t n = st->hold.chunks.bytes < length ? (size_t)st->hold.chunks.bytes : length;
        *flags |= NGHTTP2_DATA_FLAG_NO_COPY;
        if (st->eof_in && n == st->hold.chunks.bytes)
            *flags |= NGHTTP2_DATA_FLAG_EOF;
        return (ssize_t)n;
    }
    uint64_t rem = st->len - st->off;
    size_t n = rem < length ? (size_t)rem : length;
    *flags |= NGHTTP2_DATA_FLAG_NO_COPY;
    if (n == rem)
        *flags |= NGHTTP2_DATA_FLAG_EOF;
    return (ssize_t)n;
}

static int send_data(nghttp2_session *sess, nghttp2_frame *frame, const uint8_t *framehd,
                     size_t length, nghttp2_data_source *src, void *ud)
{
    struct ngconn *c = ud;
    struct stream *st = src->ptr;
    if (frame->data.padlen > 0)
        return NGHTTP2_ERR_CALLBACK_FAILURE; /* we never ask for padding */
    bool ref = !c->ctx->cfg.copy_bodies && length >= REF_MIN &&
               (st->body == H2B_BODY_PATTERN || st->body == H2B_BODY_MEM);
    size_t copy = 9 + (ref ? 0 : length);
    if (c->out.niov > H2B_OUT_IOV_MAX - 2 || out_room(c) < copy ||
        (c->out.pending > 0 && c->out.pending + 9 + length > H2B_OUT_PENDING_MAX))
        return NGHTTP2_ERR_WOULDBLOCK;
    if (!out_ensure(c))
        return NGHTTP2_ERR_CALLBACK_FAILURE;
    out_copy(c, framehd, 9);
    switch (st->body) {
    case H2B_BODY_MEM:
        if (ref)
            h2b_outbuf_ref(&c->out, st->mem + st->off, length);
        else
            out_copy(c, st->mem + st->off, length);
        break;
    case H2B_BODY_PATTERN:
        if (ref)
            h2b_outbuf_ref(&c->out, h2b_pattern_at(st->off), length);
        else
            out_copy(c, h2b_pattern_at(st->off), length);
        break;
    case H2B_BODY_ECHO: /* the last chunk stays: the request body may go on into it */
        H2B_ASSERT(length <= st->hold.chunks.bytes && length <= c->held.echo_bytes);
        h2b_wmem_chunks_take(&c->ctx->wm, &st->hold.chunks, &c->out, length, true);
        c->held.echo_bytes -= length;
        nghttp2_session_consume(sess, st->id, length);
        break;
    case H2B_BODY_STATS:
        h2b_wmem_chunks_take(&c->ctx->wm, &st->hold.chunks, &c->out, length, false);
        break;
    case H2B_BODY_GRPC:
        h2b_grpc_gen(&st->g, st->off, h2b_outbuf_append(&c->out, length), length);
        break;
    case H2B_BODY_FILE: {
        ssize_t r = pread(st->hold.fd, c->out.buf + c->out.len, length, (off_t)st->off);
        if (r != (ssize_t)length)
            return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
        h2b_outbuf_append(&c->out, length); /* the bytes pread wrote in place, after the header */
        break;
    }
    default:
        return NGHTTP2_ERR_CALLBACK_FAILURE;
    }
    st->off += length;
    return 0;
}

#define NV(n, v, vl)                                                                               \
    {                                                                                              \
        (uint8_t *)(n), (uint8_t *)(v), sizeof(n) - 1, (vl),                                       \
            NGHTTP2_NV_FLAG_NO_COPY_NAME | NGHTTP2_NV_FLAG_NO_COPY_VALUE                           \
    }

/* Submits the response for st: what to answer comes from handlers.c; the body source, the
 * /delay timer and the /stats buffer are this engine's. */
static void respond(struct ngconn *c, struct stream *st)
{
    struct ngctx *ctx = c->ctx;
    if (ctx->inject_slow)
        h2b_inject_respond();
    struct h2b_response rs;
    if (h2b_docroot_take(&st->req, &st->hold.fd, &st->hold.fpath, st->hold.fpath_len,
                         &c->held.files_open, &ctx->cfg, &ctx->wm.paths))
        h2b_stats_add(ctx->stats, H2B_STAT_GUARD_FILES, 1);
    h2b_handle(&st->req, st->text, &rs);
    if (rs.body == H2B_BODY_DELAY) {
        if (delay_insert(c, st, ctx->now + st->req.arg * H2B_NS_PER_MS))
            return;
        h2b_response_status(&rs, 503);
    } else if (rs.body == H2B_BODY_STATS) {
        h2b_wmem_stats_body(&ctx->wm, &st->hold.chunks, &rs, ctx->env->stats_fn,
                            ctx->env->stats_arg, ctx->stats);
    }
    st->body = rs.headers_only ? H2B_BODY_NONE : rs.body;
    st->mem = rs.mem;
    st->len = rs.len;
    st->off = 0;
    h2b_status_digits(st->status_str, rs.status);
    nghttp2_nv nva[6] = {
        NV(":status", st->status_str, 3), NV("server", h2b_server_name, H2B_SERVER_NAME_LEN),
        NV("date", ctx->env->date, 29),   NV("content-type", rs.ct, rs.ct_len),
        NV("content-length", st->cl, 0),  NV("grpc-message", "", 0),
    };
    size_t nnv = 4;
    if (rs.has_cl) {
        nva[4].valuelen = h2b_fmt_u64(st->cl, st->len);
        nnv = 5;
    }
    nghttp2_data_provider prd = {.source.ptr = st, .read_callback = read_body};
    bool body = st->body != H2B_BODY_NONE &&
                (st->len > 0 || st->body == H2B_BODY_ECHO || st->body == H2B_BODY_STATS);
    if (st->body == H2B_BODY_GRPC) {
        st->body = st->g.echo ? H2B_BODY_ECHO : H2B_BODY_GRPC;
        st->len = st->g.total;
        /* trailers-only when the status is known before any message */
        body = !h2b_grpc_body_done(&st->g, st->hold.chunks.bytes, 0, st->eof_in);
        if (!body)
            nnv = 4 + grpc_status_nv(st, nva + 4);
    }
    st->responded = true;
    if (nghttp2_submit_response(c->sess, st->id, nva, nnv, body ? &prd : NULL) != 0)
        return;
    h2b_stats_add(ctx->stats, H2B_STAT_REQUESTS, 1);
    h2b_stats_status(ctx->stats, rs.status);
}

/* A gRPC call's status fields into nv[0..2) (values in st); returns how many. */
static size_t grpc_status_nv(struct stream *st, nghttp2_nv *nv)
{
    size_t n = h2b_grpc_status_str(st->cl, st->g.status);
    nghttp2_nv f[2] = {NV("grpc-status", st->cl, n), NV("grpc-message", "", 0)};
    nv[0] = f[0];
    if (!st->g.msg)
        return 1;
    f[1].value = (uint8_t *)(uintptr_t)st->g.msg;
    f[1].valuelen = strlen(st->g.msg);
    nv[1] = f[1];
    return 2;
}

/* The data source of a gRPC call: the echo's chunks or the generated messages, then the status
 * in trailers. */
static __attribute__((noinline)) ssize_t grpc_read(nghttp2_session *sess, struct stream *st,
                                                   size_t length, uint32_t *flags)
{
    if (h2b_grpc_body_done(&st->g, st->hold.chunks.bytes, st->off, st->eof_in)) {
        nghttp2_nv nv[2];
        size_t n = grpc_status_nv(st, nv);
        if (nghttp2_submit_trailer(sess, st->id, nv, n) != 0)
            return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
        *flags |= NGHTTP2_DATA_FLAG_EOF | NGHTTP2_DATA_FLAG_NO_END_STREAM;
        return 0;
    }
    uint64_t avail = st->body == H2B_BODY_ECHO ? st->hold.chunks.bytes : st->g.total - st->off;
    if (avail == 0) {
        st->deferred = true;
        return NGHTTP2_ERR_DEFERRED;
    }
    *flags |= NGHTTP2_DATA_FLAG_NO_COPY;
    return (ssize_t)(avail < length ? avail : length);
}

static void dispatch(struct ngconn *c)
{
    struct stream *st;
    while ((st = H2B_LIST_FIRST(&c->ready, struct stream, rlink)) != NULL) {
        ready_unlink(c, st);
        respond(c, st);
    }
}

/* ---- nghttp2 callbacks ---- */

static int on_begin_headers(nghttp2_session *sess, const nghttp2_frame *frame, void *ud)
{
    struct ngconn *c = ud;
    if (frame->hd.type != NGHTTP2_HEADERS || frame->headers.cat != NGHTTP2_HCAT_REQUEST)
        return 0;
    if (h2b_wmem_over(&c->ctx->wm)) { /* no work started: the client may retry it (RFC 9113 8.7) */
        h2b_stats_add(c->ctx->stats, H2B_STAT_GUARD_MEMORY, 1);
        nghttp2_submit_rst_stream(sess, NGHTTP2_FLAG_NONE, frame->hd.stream_id,
                                  NGHTTP2_REFUSED_STREAM);
        return 0;
    }
    struct stream *st = stream_get(c->ctx);
    if (!st)
        return NGHTTP2_ERR_CALLBACK_FAILURE;
    st->conn = c;
    st->id = frame->hd.stream_id;
    h2b_list_insert_head(&c->streams, &st->link);
    nghttp2_session_set_stream_user_data(sess, st->id, st);
    c->hdr_st = st;
    c->held.nstreams++;
    h2b_stats_add(c->ctx->stats, H2B_STAT_STREAMS_OPEN, 1);
    h2b_stats_add(c->ctx->stats, H2B_STAT_STREAMS_TOTAL, 1);
    return 0;
}

/* The stream of a HEADERS frame: the one being decoded, else nghttp2's map. */
static struct stream *headers_stream(nghttp2_session *sess, struct ngconn *c, int32_t id)
{
    if (c->hdr_st && c->hdr_st->id == id)
        return c->hdr_st;
    return nghttp2_session_get_stream_user_data(sess, id);
}

static int on_header(nghttp2_session *sess, const nghttp2_frame *frame, const uint8_t *name,
                     size_t namelen, const uint8_t *value, size_t valuelen, uint8_t flags, void *ud)
{
    (void)flags;
    struct ngconn *c = ud;
    if (frame->hd.type != NGHTTP2_HEADERS)
        return 0;
    struct stream *st = headers_stream(sess, c, frame->hd.stream_id);
    if (!st)
        return 0;
    st->hdr_bytes += (uint32_t)(namelen + valuelen + 32);
    if (st->hdr_bytes > c->ctx->cfg.max_header_list) {
        h2b_stats_add(c->ctx->stats, H2B_STAT_GUARD_HEADERS, 1);
        charge(c, 10);
        nghttp2_submit_rst_stream(sess, NGHTTP2_FLAG_NONE, st->id, NGHTTP2_ENHANCE_YOUR_CALM);
        return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
    }
    if (frame->headers.cat != NGHTTP2_HCAT_REQUEST || namelen == 0)
        return 0;
    if (name[0] != ':') {
        if (h2b_grpc_field_len(namelen) && h2b_grpc_fields_wanted(&st->req))
            h2b_grpc_field(&st->req, &st->g, name, namelen, value, valuelen);
        return 0;
    }
    if (h2b_lit_eq(name, namelen, ":method")) {
        st->req.method = (uint8_t)h2b_method_parse(value, valuelen);
    } else if (h2b_lit_eq(name, namelen, ":path") && st->req.route == H2B_ROUTE_NONE) {
        h2b_route_path(&st->req, &st->hold.fpath, &st->hold.fpath_len, value, valuelen,
                       &c->ctx->cfg, &c->ctx->wm.paths);
    }
    return 0;
}

static int on_frame_recv(nghttp2_session *sess, const nghttp2_frame *frame, void *ud)
{
    struct ngconn *c = ud;
    c->got_frame = true;
    switch (frame->hd.type) {
    case NGHTTP2_HEADERS:
    case NGHTTP2_DATA: {
        struct stream *st = frame->hd.type == NGHTTP2_HEADERS
                                ? headers_stream(sess, c, frame->hd.stream_id)
                                : nghttp2_session_get_stream_user_data(sess, frame->hd.stream_id);
        if (!st)
            break;
        c->tm.progress = true; /* a request or its body: application progress */
        bool end = frame->hd.flags & NGHTTP2_FLAG_END_STREAM;
        if (end)
            st->eof_in = true;
        if (frame->hd.type == NGHTTP2_HEADERS && !st->grpc && h2b_grpc_is_call(&st->req))
            grpc_begin(c, st);
        if (st->grpc) {
            if (end) {
                h2b_grpc_end(&st->g);
                grpc_settle(c, st);
            }
            break;
        }
        if (st->req.route == H2B_ROUTE_ECHO && is_upload(st)) {
            if (!st->responded)
                ready_push(c, st); /* stream the echo from the first byte */
            else if (end && st->deferred) {
                st->deferred = false;
                nghttp2_session_resume_data(sess, st->id);
            }
        } else if (end) {
            ready_push(c, st);
        }
        break;
    }
    case NGHTTP2_WINDOW_UPDATE:
        if (frame->window_update.window_size_increment < 1024)
            charge(c, 1);
        break;
    case NGHTTP2_RST_STREAM:
        h2b_stats_add(c->ctx->stats, H2B_STAT_RST_RECV, 1);
        charge(c, 1);
        break;
    default:
        break;
    }
    return 0;
}

static int on_invalid_frame(nghttp2_session *sess, const nghttp2_frame *frame, int err, void *ud)
{
    (void)sess, (void)frame, (void)err;
    charge(ud, 10);
    return 0;
}

static void consume(nghttp2_session *sess, int32_t id, size_t len)
{
    if (nghttp2_session_consume(sess, id, len) != 0)
        nghttp2_session_consume_connection(sess, len);
}

/* Holds len request bytes of an echo in st's chunks (*k of them: fewer when out of memory).
 * False when the echo is cut: a client that sends and does not read has its stream reset
 * (ENHANCE_YOUR_CALM), not its bytes buffered without end; further DATA is dropped. */
static bool echo_hold(struct ngconn *c, struct stream *st, const uint8_t *data, size_t len,
                      size_t *k)
{
    const struct h2b_conn_config *cfg = &c->ctx->cfg;
    *k = 0;
    if (st->hold.chunks.bytes + len > cfg->echo_stream_max ||
        c->held.echo_bytes + len > cfg->echo_conn_max || h2b_wmem_over(&c->ctx->wm)) {
        h2b_stats_add(c->ctx->stats, H2B_STAT_GUARD_MEMORY, 1);
        st->dropped = true;
        nghttp2_submit_rst_stream(c->sess, NGHTTP2_FLAG_NONE, st->id, NGHTTP2_ENHANCE_YOUR_CALM);
        return false;
    }
    *k = h2b_wmem_chunks_append(&c->ctx->wm, &st->hold.chunks, data, len);
    c->held.echo_bytes += *k;
    return true;
}

/* ---- gRPC calls (grpc.c) ---- */

/* The request headers of a gRPC call are complete: its state, its deadline, and its response
 * at once for the echo methods and a status already known. */
static __attribute__((noinline)) void grpc_begin(struct ngconn *c, struct stream *st)
{
    struct ngctx *ctx = c->ctx;
    h2b_grpc_prepare(&st->req, &st->g);
    /* an unknown path's gRPC call is never a docroot file */
    h2b_docroot_close(&st->hold.fd, &st->hold.fpath, &c->held.files_open, &ctx->cfg,
                      &ctx->wm.paths);
    st->grpc = true;
    bool now = h2b_grpc_start(&st->req, &st->g);
    if (st->g.timeout_ns && st->g.status == H2B_GRPC_PENDING &&
        h2b_heap_push(&ctx->delays, &st->dnode, ctx->now + st->g.timeout_ns) == H2B_OK)
        st->deadline = true;
    if (now)
        ready_push(c, st);
}

/* The call's status may have changed: answer it, or let its data source go on. */
static void grpc_settle(struct ngconn *c, struct stream *st)
{
    if (st->g.echo && st->eof_in && st->g.pfx_have) {
        /* a prefix cut by the request's end: never echoed */
        nghttp2_session_consume_connection(c->sess, st->g.pfx_have);
        st->g.pfx_have = 0;
    }
    if (st->g.status == H2B_GRPC_PENDING)
        return;
    if (!st->responded) {
        ready_push(c, st);
    } else if (st->deferred) {
        st->deferred = false;
        nghttp2_session_resume_data(c->sess, st->id);
    }
}

struct grpc_emit {
    struct ngconn *c;
    struct stream *st;
    size_t held; /* bytes held for the echo */
    bool cut;    /* the echo was cut (echo_hold) */
    bool nomem;  /* fewer bytes held than given: no memory */
};

static bool grpc_emit(void *arg, const uint8_t *p, size_t n)
{
    struct grpc_emit *e = arg;
    size_t k;
    if (!echo_hold(e->c, e->st, p, n, &k)) {
        e->cut = true;
        return false;
    }
    e->held += k;
    e->nomem = k < n;
    return !e->nomem;
}

/* len request DATA bytes of a gRPC call. Flow control: what the echo holds is consumed when
 * it is sent, a prefix being collected when it is complete, the rest at once. */
static __attribute__((noinline)) int grpc_data(struct ngconn *c, struct stream *st,
                                               const uint8_t *data, size_t len)
{
    if (st->dropped) {
        consume(c->sess, st->id, len);
        return 0;
    }
    struct grpc_emit e = {c, st, 0, false, false};
    size_t before = st->g.echo ? st->g.pfx_have : 0;
    h2b_grpc_rx(&st->g, data, len, grpc_emit, &e);
    size_t after = st->g.echo ? st->g.pfx_have : 0; /* consumed when echoed, or at close */
    consume(c->sess, st->id, before + len - e.held - after);
    if (e.cut)
        return 0;
    if (e.nomem)
        return NGHTTP2_ERR_CALLBACK_FAILURE;
    if (e.held && st->deferred) {
        st->deferred = false;
        nghttp2_session_resume_data(c->sess, st->id);
    }
    grpc_settle(c, st);
    return 0;
}

/* The deadline passed: DEADLINE_EXCEEDED, unless the status is out already; the echo bytes
 * still held are not sent. */
static void grpc_deadline(struct ngconn *c, struct stream *st)
{
    h2b_grpc_expire(&st->g);
    uint64_t held = st->hold.chunks.bytes;
    if (held) {
        H2B_ASSERT(c->held.echo_bytes >= held);
        c->held.echo_bytes -= held;
        h2b_wmem_chunks_free(&c->ctx->wm, &st->hold.chunks);
        consume(c->sess, st->id, (size_t)held);
    }
    if (!st->responded) {
        ready_unlink(c, st);
        respond(c, st);
    } else {
        grpc_settle(c, st);
    }
}

static int on_data_chunk(nghttp2_session *sess, uint8_t flags, int32_t id, const uint8_t *data,
                         size_t len, void *ud)
{
    (void)flags;
    struct ngconn *c = ud;
    c->tm.progress = true;
    struct stream *st = nghttp2_session_get_stream_user_data(sess, id);
    if (st && st->grpc) {
        st->req.rx += len;
        return grpc_data(c, st, data, len);
    }
    if (!st || st->req.route != H2B_ROUTE_ECHO || !is_upload(st)) {
        if (st)
            st->req.rx += len;
        consume(sess, id, len);
        return 0;
    }
    st->req.rx += len;
    if (st->dropped) {
        consume(sess, id, len);
        return 0;
    }
    size_t k;
    if (!echo_hold(c, st, data, len, &k)) {
        consume(sess, id, len);
        return 0;
    }
    if (k < len)
        return NGHTTP2_ERR_CALLBACK_FAILURE;
    if (st->deferred) {
        st->deferred = false;
        nghttp2_session_resume_data(sess, id);
    }
    return 0;
}

static void stream_release(struct ngconn *c, struct stream *st)
{
    ready_unlink(c, st);
    if (c->hdr_st == st)
        c->hdr_st = NULL;
    if (st->deadline) {
        h2b_heap_remove(&c->ctx->delays, &st->dnode);
        st->deadline = false;
    }
    h2b_list_unlink(&st->link);
    h2b_wmem_stream_release(&c->ctx->wm, st, &st->hold, &c->held,
                            st->req.route == H2B_ROUTE_ECHO || st->grpc, &c->ctx->cfg,
                            c->ctx->stats);
}

/* Always returns 0: a fatal error here leaks (CVE-2023-35945, unfixed in Debian's 1.52). */
static int on_stream_close(nghttp2_session *sess, int32_t id, uint32_t error_code, void *ud)
{
    (void)error_code;
    struct ngconn *c = ud;
    struct stream *st = nghttp2_session_get_stream_user_data(sess, id);
    if (!st)
        return 0;
    if ((st->req.route == H2B_ROUTE_ECHO || st->grpc) && st->hold.chunks.bytes > 0)
        nghttp2_session_consume_connection(sess, (size_t)st->hold.chunks.bytes);
    if (st->grpc && st->g.echo && st->g.pfx_have > 0) /* a prefix never echoed */
        nghttp2_session_consume_connection(sess, st->g.pfx_have);
    /* No set_stream_user_data(NULL) (one more map lookup): with closed streams not retained,
     * nghttp2 destroys the stream right after this callback and calls none for it again. */
    stream_release(c, st);
    return 0;
}

static int on_frame_send(nghttp2_session *sess, const nghttp2_frame *frame, void *ud)
{
    (void)sess;
    struct ngconn *c = ud;
    if (frame->hd.type == NGHTTP2_HEADERS || frame->hd.type == NGHTTP2_DATA) {
        c->tm.progress = true; /* a response frame left: application progress */
    } else if (frame->hd.type == NGHTTP2_RST_STREAM) {
        h2b_sidwin_mark_reset(&c->sids, (uint32_t)frame->hd.stream_id);
        h2b_stats_add(c->ctx->stats, H2B_STAT_RST_SENT, 1);
        charge(c, 1); /* resets the peer provokes ("MadeYouReset") spend its flood budget */
    } else if (frame->hd.type == NGHTTP2_GOAWAY) {
        h2b_stats_add(c->ctx->stats, H2B_STAT_GOAWAY_SENT, 1);
        c->goaway_sent = true;
    }
    return 0;
}

/* ---- context ---- */

static int ng_ctx_new(void **out, struct h2b_engine_env *env)
{
    struct ngctx *ctx = calloc(1, sizeof *ctx);
    if (!ctx)
        return H2B_ERR_NOMEM;
    ctx->cfg = *env->cfg;
    ctx->env = env;
    ctx->stats = env->stats;
    ctx->inject_slow = h2b_inject_wanted();
    if (nghttp2_session_callbacks_new(&ctx->cbs) != 0)
        goto out_free;
    nghttp2_session_callbacks *cb = ctx->cbs;
    nghttp2_session_callbacks_set_on_begin_headers_callback(cb, on_begin_headers);
    nghttp2_session_callbacks_set_on_header_callback(cb, on_header);
    nghttp2_session_callbacks_set_on_frame_recv_callback(cb, on_frame_recv);
    nghttp2_session_callbacks_set_on_invalid_frame_recv_callback(cb, on_invalid_frame);
    nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, on_data_chunk);
    nghttp2_session_callbacks_set_on_stream_close_callback(cb, on_stream_close);
    nghttp2_session_callbacks_set_on_frame_send_callback(cb, on_frame_send);
    nghttp2_session_callbacks_set_send_data_callback(cb, send_data);
    if (nghttp2_option_new(&ctx->opt) != 0)
        goto out_cbs;
    nghttp2_option_set_no_closed_streams(ctx->opt, 1);
    nghttp2_option_set_no_auto_window_update(ctx->opt, 1);
    /* Debian's 1.52 already defaults stream_reset_rate_limit to 1000 + 33/s and
     * max_continuations to 8 (backports of 1.57 and 1.61); the flood budget covers the rest. */
    h2b_wmem_init(&ctx->wm, sizeof(struct stream), ctx->cfg.memory_budget, ctx->cfg.memory_used);
    ctx->mem = h2b_pool_nghttp2_mem(env->pool);
    ctx->now = h2b_clock_now_ns();
    *out = ctx;
    return H2B_OK;
out_cbs:
    nghttp2_session_callbacks_del(ctx->cbs);
out_free:
    free(ctx);
    return H2B_ERR_NOMEM;
}

static void ng_ctx_del(void *ectx)
{
    struct ngctx *ctx = ectx;
    if (!ctx)
        return;
    h2b_wmem_free(&ctx->wm);
    h2b_heap_free(&ctx->timers);
    h2b_heap_free(&ctx->delays);
    nghttp2_option_del(ctx->opt);
    nghttp2_session_callbacks_del(ctx->cbs);
    free(ctx);
}

/* One connection's timer came up: carry out ctimer.h's verdict. */
static void timer_due(struct ngctx *ctx, struct ngconn *c, uint64_t now_ns)
{
    conn_retime(c);
    switch (h2b_ctimer_due(&c->tm, &ctx->timers, now_ns, &ctx->cfg, ctx->stats, c->ndelayed > 0,
                           c->got_frame, c->terminated)) {
    case H2B_CTIMER_EARLY:
        return;
    case H2B_CTIMER_IDLE:
        nghttp2_session_terminate_session(c->sess, NGHTTP2_NO_ERROR);
        c->terminated = true;
        conn_retime(c); /* now busy: a peer that never reads the GOAWAY is cut off later */
        break;
    case H2B_CTIMER_WAIT: /* waiting on us, not on the peer */
        conn_retime(c);
        break;
    case H2B_CTIMER_CUT:
        c->fatal = true;
        break;
    case H2B_CTIMER_SLOW:
        nghttp2_session_terminate_session(c->sess, NGHTTP2_ENHANCE_YOUR_CALM);
        c->terminated = true;
        break;
    }
    h2b_ctimer_settle(&c->tm, &ctx->timers, &ctx->cfg);
    mark_dirty(c);
}

static void ng_tick(void *ectx, uint64_t now_ns)
{
    struct ngctx *ctx = ectx;
    ctx->now = now_ns;
    struct h2b_heap_node *top;
    while ((top = h2b_heap_top(&ctx->delays)) != NULL && top->key <= now_ns) {
        struct stream *st = (struct stream *)(void *)((char *)top - offsetof(struct stream, dnode));
        struct ngconn *c = st->conn;
        if (st->deadline) { /* a gRPC call's grpc-timeout */
            h2b_heap_remove(&ctx->delays, &st->dnode);
            st->deadline = false;
            grpc_deadline(c, st);
            c->tm.progress = true;
            conn_retime(c);
            mark_dirty(c);
            continue;
        }
        ready_unlink(c, st);
        st->req.route = H2B_ROUTE_HELLO;
        respond(c, st);
        c->tm.progress = true;
        conn_retime(c);
        mark_dirty(c);
    }
    while ((top = h2b_heap_top(&ctx->timers)) != NULL && top->key <= now_ns)
        timer_due(ctx, (struct ngconn *)(void *)((char *)top - offsetof(struct ngconn, tm.node)),
                  now_ns);
}

static uint64_t ng_next_deadline(const void *ectx)
{
    const struct ngctx *ctx = ectx;
    return h2b_ctimer_next(&ctx->timers, &ctx->delays);
}

/* ---- connection ---- */

static int ng_conn_new(void **out, void *ectx, struct h2b_dirty *owner)
{
    struct ngctx *ctx = ectx;
    struct ngconn *c = calloc(1, sizeof *c);
    if (!c)
        return H2B_ERR_NOMEM;
    c->ctx = ctx;
    c->owner = owner;
    h2b_list_init(&c->ready);
    h2b_list_init(&c->streams);
    h2b_flood_init(&c->flood, ctx->cfg.flood_burst, ctx->now);
    h2b_ctimer_init(&c->tm, ctx->now);
    c->preface_left = (uint8_t)(sizeof NGHTTP2_CLIENT_MAGIC - 1);
    if (h2b_heap_reserve(&ctx->timers, 1) != H2B_OK)
        goto out_free;
    if (nghttp2_session_server_new3(&c->sess, ctx->cbs, c, ctx->opt, &ctx->mem) != 0)
        goto out_free;
    const struct h2b_conn_config *cfg = &ctx->cfg;
    nghttp2_settings_entry iv[5];
    size_t n = 0;
    iv[n++] = (nghttp2_settings_entry){NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, cfg->max_streams};
    iv[n++] = (nghttp2_settings_entry){NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, cfg->window};
    iv[n++] = (nghttp2_settings_entry){NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE, cfg->max_header_list};
    if (cfg->frame_size != 16384)
        iv[n++] = (nghttp2_settings_entry){NGHTTP2_SETTINGS_MAX_FRAME_SIZE, cfg->frame_size};
    if (cfg->header_table_size != 4096)
        iv[n++] =
            (nghttp2_settings_entry){NGHTTP2_SETTINGS_HEADER_TABLE_SIZE, cfg->header_table_size};
    if (nghttp2_submit_settings(c->sess, NGHTTP2_FLAG_NONE, iv, n) != 0)
        goto out_sess;
    if (cfg->conn_window > 65535 &&
        nghttp2_session_set_local_window_size(c->sess, NGHTTP2_FLAG_NONE, 0,
                                              (int32_t)cfg->conn_window) != 0)
        goto out_sess;
    conn_retime(c);
    *out = c;
    return H2B_OK;
out_sess:
    nghttp2_session_del(c->sess);
out_free:
    free(c);
    return H2B_ERR_NOMEM;
}

static void ng_del(void *e)
{
    struct ngconn *c = e;
    if (!c)
        return;
    h2b_heap_remove(&c->ctx->timers, &c->tm.node);
    /* nghttp2_session_del calls no stream-close callbacks: release our streams here. */
    for (struct stream *st; (st = H2B_LIST_FIRST(&c->streams, struct stream, link)) != NULL;)
        stream_release(c, st);
    nghttp2_session_del(c->sess);
    out_reset(c);
    free(c);
}

/* Feeds n bytes to nghttp2; false (the connection failed) on a fatal error. */
static bool feed(struct ngconn *c, const uint8_t *p, size_t n)
{
    if (n == 0 || c->terminated)
        return true;
    ssize_t rv = nghttp2_session_mem_recv(c->sess, p, n);
    if (rv >= 0)
        return true;
    enum h2b_stat why = H2B_STAT_ERR_PROTOCOL;
    if (rv == NGHTTP2_ERR_BAD_CLIENT_MAGIC)
        why = H2B_STAT_ERR_PREFACE;
    else if (rv == NGHTTP2_ERR_FLOODED)
        why = H2B_STAT_ERR_FLOODED;
    else if (rv == NGHTTP2_ERR_TOO_MANY_CONTINUATIONS)
        why = H2B_STAT_ERR_CONTINUATION;
    fail(c, why);
    return false;
}

/* Checks one frame header before nghttp2 sees the frame (nghttp2 has processed every frame
 * before it). Charges the flood budget for every frame kind a client can send without limit,
 * including those nghttp2 drops without a callback (unknown types, DATA on closed streams),
 * and answers what nghttp2 1.52 silently ignores without closed-stream retention:
 * - a HEADERS whose id is below the highest one and was never opened: PROTOCOL_ERROR
 *   (RFC 9113 5.1.1);
 * - a HEADERS or DATA on a stream the client closed, or that completed: STREAM_CLOSED (5.1),
 *   a connection error for HEADERS, a stream error for DATA. Frames on streams we reset are
 *   ignored, as 5.4.2 asks (the peer may not have seen the reset yet).
 * Returns the error code to end the connection with, or 0. */
static uint32_t check_frame(struct ngconn *c, const uint8_t *fh)
{
    struct h2b_h2wire_hd hd = h2b_h2wire_hd_get(fh);
    uint32_t len = hd.len, id = hd.id;
    uint8_t type = hd.type, flags = hd.flags;
    switch (type) {
    case NGHTTP2_DATA:
        if (len == 0 && !(flags & NGHTTP2_FLAG_END_STREAM))
            charge(c, 1);
        break;
    case NGHTTP2_HEADERS:
    case NGHTTP2_RST_STREAM:
    case NGHTTP2_WINDOW_UPDATE:
    case NGHTTP2_GOAWAY:
        break;
    case NGHTTP2_SETTINGS:
        if (!(flags & NGHTTP2_FLAG_ACK))
            charge(c, h2b_settings_cost(len));
        break;
    case NGHTTP2_CONTINUATION:
        if (len == 0)
            charge(c, 1);
        break;
    default: /* PRIORITY, PING (ACKs too: none is ever due), PUSH_PROMISE, unknown types */
        charge(c, 1);
        break;
    }
    if ((type != NGHTTP2_DATA && type != NGHTTP2_HEADERS) || !(id & 1))
        return 0;
    if (id > c->sids.max_id) {
        if (type == NGHTTP2_HEADERS)
            h2b_sidwin_open(&c->sids, id);
        return 0; /* DATA on an idle stream: nghttp2's PROTOCOL_ERROR */
    }
    if (nghttp2_session_find_stream(c->sess, (int32_t)id) != NULL)
        return 0; /* open or half-closed: nghttp2 knows what to do */
    charge(c, 1);
    if (h2b_sidwin_was_reset(&c->sids, id))
        return 0;
    if (type == NGHTTP2_HEADERS)
        return h2b_sidwin_skipped(&c->sids, id) ? NGHTTP2_PROTOCOL_ERROR : NGHTTP2_STREAM_CLOSED;
    nghttp2_submit_rst_stream(c->sess, NGHTTP2_FLAG_NONE, (int32_t)id, NGHTTP2_STREAM_CLOSED);
    h2b_sidwin_mark_reset(&c->sids, id); /* one reset per stream, however many frames follow */
    return 0;
}

/* Walks the input's frame headers ahead of nghttp2 and feeds it in pieces, so that each frame
 * header is checked (check_frame) with nghttp2's state just before that frame. Frames whose
 * check cannot depend on stream state are not split off. Returns false on a fatal error. */
static bool scan_input(struct ngconn *c, const uint8_t *data, size_t len)
{
    size_t i = 0, fed = 0;
    if (c->preface_left) {
        size_t k = len < c->preface_left ? len : c->preface_left;
        c->preface_left = (uint8_t)(c->preface_left - k);
        i = k;
    }
    while (i < len) {
        if (c->pay_left) {
            size_t k = len - i < c->pay_left ? len - i : c->pay_left;
            c->pay_left -= (uint32_t)k;
            i += k;
            continue;
        }
        size_t start = i; /* where this chunk's part of the frame header begins */
        while (c->fh_have < 9 && i < len)
            c->fh[c->fh_have++] = data[i++];
        if (c->fh_have < 9)
            break;
        c->fh_have = 0;
        struct h2b_h2wire_hd hd = h2b_h2wire_hd_get(c->fh);
        c->pay_left = hd.len;
        uint8_t type = hd.type;
        uint32_t id = hd.id;
        /* Only a frame on a stream id already used needs nghttp2's state (a new request's
         * HEADERS does not), so the common batch of new requests is fed in one call. */
        if ((type == NGHTTP2_DATA || type == NGHTTP2_HEADERS) && (id & 1) && id <= c->sids.max_id) {
            if (!feed(c, data + fed, start - fed))
                return false;
            fed = start;
        }
        uint32_t err = check_frame(c, c->fh);
        if (c->calm && !c->terminated)
            break; /* ng_recv ends it; nothing more is read */
        if (err) {
            nghttp2_session_terminate_session(c->sess, err);
            c->terminated = true;
            break;
        }
    }
    c->frame_open = c->fh_have > 0 || c->pay_left > 0;
    if (c->calm || c->terminated)
        return feed(c, data + fed, 0);
    return feed(c, data + fed, len - fed);
}

static int ng_recv(void *e, const uint8_t *data, size_t len)
{
    struct ngconn *c = e;
    struct ngctx *ctx = c->ctx;
    if (c->fatal)
        return H2B_ERR_PROTO;
    if (c->terminated)
        return H2B_OK;
    if (!scan_input(c, data, len))
        return H2B_ERR_PROTO;
    dispatch(c);
    if (c->calm) {
        h2b_stats_add(ctx->stats, H2B_STAT_GUARD_FLOOD, 1);
        nghttp2_session_terminate_session(c->sess, NGHTTP2_ENHANCE_YOUR_CALM);
        c->terminated = true;
    } else if (nghttp2_session_get_outbound_queue_size(c->sess) > ctx->cfg.max_outbound_queue) {
        h2b_stats_add(ctx->stats, H2B_STAT_GUARD_OUTQ, 1);
        nghttp2_session_terminate_session(c->sess, NGHTTP2_ENHANCE_YOUR_CALM);
        c->terminated = true;
    } else if (!nghttp2_session_want_read(c->sess)) {
        c->terminated = true; /* nghttp2 queued a GOAWAY for a protocol error */
    }
    conn_retime(c);
    return H2B_OK;
}

static bool ng_done(const void *e)
{
    const struct ngconn *c = e;
    if (c->fatal)
        return true;
    if (h2b_outbuf_pending(&c->out) || nghttp2_session_want_write(c->sess))
        return false;
    /* After the peer's FIN nothing more can arrive: done once every stream is answered. */
    return c->input_closed ? c->held.nstreams == 0 : !nghttp2_session_want_read(c->sess);
}

static bool ng_fatal(const void *e)
{
    return ((const struct ngconn *)e)->fatal;
}

static void ng_input_closed(void *e)
{
    struct ngconn *c = e;
    c->input_closed = true;
    if (c->fatal)
        return;
    /* A request whose END_STREAM has not arrived can never complete now: reset its stream
     * (CANCEL) so that the connection ends once the complete ones are answered, not at the
     * slow-client timeout (h2_fast.c does the same). nghttp2 closes the stream, and our
     * on_stream_close releases it, once the RST_STREAM is sent. */
    struct h2b_list *pos, *tmp;
    H2B_LIST_FOREACH_SAFE(pos, tmp, &c->streams)
    {
        const struct stream *st = H2B_LIST_ENTRY(pos, struct stream, link);
        if (!st->eof_in)
            nghttp2_submit_rst_stream(c->sess, NGHTTP2_FLAG_NONE, st->id, NGHTTP2_CANCEL);
    }
    mark_dirty(c);
}

static void ng_shutdown(void *e)
{
    struct ngconn *c = e;
    if (!c->fatal && !c->terminated)
        nghttp2_submit_goaway(c->sess, NGHTTP2_FLAG_NONE,
                              nghttp2_session_get_last_proc_stream_id(c->sess), NGHTTP2_NO_ERROR,
                              NULL, 0);
    mark_dirty(c);
}

const struct h2b_engine h2b_h2_nghttp2_engine = {
    .name = "nghttp2",
    .ctx_new = ng_ctx_new,
    .ctx_del = ng_ctx_del,
    .tick = ng_tick,
    .next_deadline = ng_next_deadline,
    .conn_new = ng_conn_new,
    .del = ng_del,
    .recv = ng_recv,
    .output = ng_output,
    .sent = ng_sent,
    .done = ng_done,
    .fatal = ng_fatal,
    .input_closed = ng_input_closed,
    .shutdown = ng_shutdown,
};
