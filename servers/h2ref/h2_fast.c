/*
 * h2_fast.c - the reference server's own-framing HTTP/2 engine (`h2bench serve --engine fast`):
 * our frame reader and writer, stream state machine and flow control; libnghttp2 only for
 * HPACK decoding (nghttp2_hd_inflate_hd2).
 *
 * Why: with an nghttp2_session per connection, h2ref spent ~9,340 instructions per request at
 * 10 connections x 10 streams, ~7,900 of them (83 %) inside libnghttp2 (stream objects and
 * their map, the priority tree, the outbound frame queue, five allocations a request), and an
 * idle connection held 15.8 KiB, 13.2 KiB of it the session. h2o does its own framing and HPACK
 * and spends ~6,200 in total at 3.2 KiB per connection. The load client took the same step
 * (harness/load/h2fast.c: 3,258 vs 6,957 instructions per request).
 *
 * What: the server side of RFC 9113 for the routes h2ref serves, nothing else.
 * - Input: an incremental frame reader that handles any split of the byte stream (a frame
 *   header, a padding length, a SETTINGS entry or a header block may end in one read and go on
 *   in the next). No input buffer: fixed prefixes (at most 8 bytes) are collected in the
 *   connection, header block fragments stream into the HPACK decoder, DATA payloads go to the
 *   stream as they arrive.
 * - Frames: preface; SETTINGS (every parameter validated, RFC 9113 6.5.2; ACKed), SETTINGS ACK;
 *   HEADERS and CONTINUATION (interleaving refused, compressed block bounded, CONTINUATION
 *   count bounded); DATA (padding, flow control on the connection and the stream); PRIORITY
 *   (validated, then ignored); RST_STREAM; PING (ACKed); GOAWAY; WINDOW_UPDATE (zero increment
 *   and overflow refused); PUSH_PROMISE refused; unknown types ignored.
 * - Streams, RFC 9113 5.1: ids odd and increasing (a lower never-opened id is PROTOCOL_ERROR,
 *   one already closed STREAM_CLOSED); idle, open, half-closed (remote), closed; more than
 *   MAX_CONCURRENT_STREAMS (or the memory budget spent) is REFUSED_STREAM; frames on streams we
 *   reset are ignored (5.4.2), those on streams otherwise closed answered with STREAM_CLOSED.
 *   Streams live in one list per connection with a last-hit cache: a GET workload never looks
 *   one up (a new request's HEADERS has a new id), and the list is bounded by max_streams.
 * - Request checks that nghttp2's HTTP messaging did (RFC 9113 8.2-8.3), field by field as the
 *   decoder emits them (h2_reqcheck.h); a malformed request is RST_STREAM PROTOCOL_ERROR. The
 *   header list is bounded by max_header_list (ENHANCE_YOUR_CALM).
 * - Responses: what handlers.c answers (the routes of every engine). Header blocks are
 *   encoded by h2_hpack.h with a mirror of our own insertions into the peer's table: server,
 *   the content-types and the date are one byte each after the first response.
 * - Output: one pooled 64 KiB buffer per connection while it has unsent bytes; large static
 *   bodies referenced by iovec (copied with copy_bodies, for TLS); files pread into the
 *   buffer. Control frames (ACKs, RST_STREAM, WINDOW_UPDATE, GOAWAY) are written as they arise
 *   into a reserve at the buffer's end that responses never use; a peer that makes us answer
 *   without reading is cut off when the reserve is full (guard_outq). Responses are written
 *   by fast_output from a round-robin queue of streams with something to send.
 * - Guards as in h2_nghttp2.c, from the same code: the flood budget (the same charges) and
 * stream-id window (guard.h), idle and slow-client timeouts (ctimer.h), echo buffer caps and the
 * memory budget (wmem.h).
 * - Memory: per connection this struct, the HPACK decoder from the first header block on (its
 *   table holds what the client indexed) and, while output is unsent, the output buffer (our
 *   SETTINGS wait for the first output, so an accepted connection holds no buffer); streams
 *   and echo chunks come from per-ctx free lists (bypassed under sanitizers). Nothing is
 *   allocated per request here: the decoder's buffers for literal fields come from the core's
 *   size-class pool (its nghttp2_mem). docs/serve.md has the byte count.
 * Rejected: nghttp2_session with fewer callbacks (the session's own costs are the measured
 * problem); nghttp2_hd_deflate for responses (a deflater per connection is ~2 KiB and a deflate
 * per response; the mirror above gives the same one-byte fields for the fixed set we send); a
 * hash of stream ids (an idle connection would carry the table; the list is short); RFC 7540
 * priorities (deprecated by RFC 9113, responses here are small); server push.
 */
#include "h2ref/h2_fast.h"

#include "core/alloc.h"
#include "core/check.h"
#include "core/clock.h"
#include "core/error.h"
#include "core/h2wire.h"
#include "h2ref/handlers.h"
#include "h2ref/grpc.h"
#include "core/heap.h"
#include "core/list.h"
#include "h2ref/ctimer.h"
#include "h2ref/guard.h"
#include "h2ref/h2_hpack.h"
#include "h2ref/h2_reqcheck.h"
#include "h2ref/outbuf.h"
#include "h2ref/wmem.h"
#include "core/pool.h"
#include "core/pool_nghttp2.h"
#include "h2ref/engine.h"

#include <nghttp2/nghttp2.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CTL_RESERVE 4096 /* the end of the output buffer: control frames only */
#define HEAD_ROOM 256    /* a response HEADERS frame fits in this, gRPC's trailers-only too */
#define DATA_MAX 16384
#define REF_MIN 1024
#define MAX_CONTINUATIONS 8
#define MAX_WIN 0x7fffffffLL
#define GRPC_ROOM 96 /* a gRPC status block (grpc-status, grpc-message) fits in this */

static const uint8_t preface[] = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
#define PREFACE_LEN 24

/* what the header block being decoded is */
enum block { HB_NONE, HB_REQUEST, HB_TRAILERS, HB_DISCARD };

struct fstream {
    struct fstream *qnext; /* the send queue: singly linked, not core/list.h (list.h says why) */
    struct h2b_list link;  /* the connection's streams */
    struct fconn *conn;
    struct h2b_heap_node dnode; /* /delay: in ctx->delays */
    uint32_t id;
    struct h2b_request req;    /* route, method, arg, body bytes received (rx) */
    struct h2b_response rs;    /* once responded */
    uint8_t body;              /* enum h2b_body: what is left to send (NONE for HEAD) */
    struct h2b_h2_reqcheck rc; /* the request checks so far (h2_reqcheck.h) */
    bool malformed;
    bool oversize;
    bool eof_in;    /* request END_STREAM seen */
    bool responded; /* response chosen */
    bool hdr_sent;
    bool done_out; /* response END_STREAM queued */
    bool queued;   /* in the send queue */
    bool blocked;  /* waits for send window */
    bool delayed;
    bool dropped; /* echo reset for memory */
    uint32_t hdr_bytes;
    int64_t swin;          /* send window */
    uint32_t rused;        /* received bytes not yet credited back */
    uint32_t consumed;     /* of those, consumed (credit due) */
    uint64_t len, off;     /* response body length and bytes sent */
    struct h2b_shold hold; /* echo chunks or /stats JSON, docroot path and file (wmem.h) */
    char text[H2B_TEXT_MAX];
    struct h2b_grpc g; /* not cleared at open: grpc.h initialises it for a gRPC request */
};

struct fctx {
    struct h2b_conn_config cfg;
    struct h2b_engine_env *env; /* the core's, borrowed */
    struct h2b_stats *stats;    /* env->stats */
    const char *date;           /* env->date */
    nghttp2_mem mem;            /* the HPACK decoders' allocator (the env's pool) */
    char date_seen[32];
    uint32_t date_gen;
    bool inject_slow;
    struct h2b_heap timers, delays;
    uint64_t now;
    uint8_t preface[9 + 5 * 6 + 13]; /* SETTINGS and the connection WINDOW_UPDATE */
    uint8_t preface_len;
    struct h2b_wmem wm; /* free lists and the memory budget (wmem.h) */
};

struct fconn {
    struct fctx *ctx;
    struct h2b_dirty *owner; /* the core's connection, in the dirty queue */
    nghttp2_hd_inflater *inf;
    struct h2b_list streams; /* of fstream.link, newest first */
    struct fstream *last_st;
    struct fstream *q_head, *q_tail; /* the send queue, through fstream.qnext */
    struct h2b_ctimer tm;            /* idle and slow-client timer, in ctx->timers (ctimer.h) */
    struct h2b_outbuf out;           /* outbuf.h */
    /* state */
    bool fatal, terminated, shut, peer_goaway, input_closed, calm;
    bool iwin_due;     /* the SETTINGS frame being read carries INITIAL_WINDOW_SIZE ... */
    uint32_t iwin_new; /* ... this one, applied at the frame's end (apply_iwin) */
    bool got_frame, got_settings, settings_acked;
    bool preface_due; /* our SETTINGS are not in the output yet (no buffer until output) */
    uint8_t preface_have;
    /* the frame being read */
    uint8_t fh[9], fh_have;
    uint8_t ftype, fflags;
    uint32_t fid, flen;
    uint32_t left;      /* payload bytes of this frame not yet read */
    uint32_t body_left; /* of those, payload proper (before padding) */
    uint8_t pb[8], pb_have, pb_need;
    bool in_frame;
    struct fstream *fst; /* the DATA frame's stream (NULL once released) */
    /* the header block being decoded */
    uint8_t hb;
    bool hb_end_stream;
    uint8_t hb_conts;
    uint32_t hb_id, hb_err, hb_bytes;
    struct fstream *hb_st;
    /* flow control */
    int64_t conn_swin;   /* our send window on the connection */
    int64_t peer_iwin;   /* peer's SETTINGS_INITIAL_WINDOW_SIZE */
    uint32_t conn_rused; /* bytes received on the connection not credited back */
    uint32_t conn_consumed;
    /* client stream ids */
    struct h2b_sidwin sids; /* opened, reset (guard.h) */
    uint32_t ndelayed;
    struct h2b_chold held;  /* open streams, their files and echo bytes (wmem.h) */
    struct h2b_flood flood; /* guard.h */
    struct h2b_h2_hpack hp; /* our HPACK encoder's view of the peer's table (h2_hpack.h) */
};

_Static_assert(DATA_MAX <= H2B_PATTERN_STEP, "a DATA frame's pattern run is in the array");

/* gRPC calls (their section is below the frame reader they hook into) */
static void grpc_begin(struct fconn *h, struct fstream *st, bool answer);
static void grpc_settle(struct fconn *h, struct fstream *st);
static void grpc_release(struct fconn *h, struct fstream *st);
static size_t grpc_status_fields(struct fconn *h, struct fstream *st, uint8_t *p);
static void grpc_out_done(struct fconn *h, struct fstream *st);

/* ---- memory: streams, chunks and output buffers from the worker's free lists, counted in the
 * server's memory budget (wmem.h) ---- */

static struct fstream *stream_get(struct fctx *ctx)
{
    struct fstream *st = h2b_wmem_stream_get(&ctx->wm, offsetof(struct fstream, text));
    if (st)
        st->hold.fd = -1;
    return st;
}

/* ---- output ---- */

/* Our SETTINGS, first in the first buffer a connection takes. */
static __attribute__((noinline, cold)) void out_preface(struct fconn *h)
{
    h->preface_due = false;
    memcpy(h2b_outbuf_append(&h->out, h->ctx->preface_len), h->ctx->preface, h->ctx->preface_len);
}

/* The output buffer, taken when the first byte is written. */
static bool out_ensure(struct fconn *h)
{
    if (!h->out.buf) {
        if (!h2b_wmem_out_attach(&h->ctx->wm, &h->out))
            return false;
        if (h->preface_due)
            out_preface(h);
    }
    return true;
}

static void out_reset(struct fconn *h)
{
    h2b_wmem_out_detach(&h->ctx->wm, &h->out);
}

/* Room for responses (the control reserve excluded). */
static size_t resp_room(const struct fconn *h)
{
    size_t used = h->out.buf ? h->out.len : 0;
    return used >= H2B_OUTBUF_SIZE - CTL_RESERVE ? 0 : H2B_OUTBUF_SIZE - CTL_RESERVE - used;
}

static void fail(struct fconn *h, enum h2b_stat why)
{
    if (!h->fatal)
        h2b_stats_add(h->ctx->stats, why, 1);
    h->fatal = true;
    h2b_heap_remove(&h->ctx->timers, &h->tm.node);
}

/* Writes a control frame (any room, the reserve included); a peer that keeps us answering
 * without reading fills it and is cut off. Returns false then. */
static bool ctl(struct fconn *h, const uint8_t *p, size_t n)
{
    if (h->fatal)
        return false;
    if (!out_ensure(h)) {
        fail(h, H2B_STAT_ERR_PROTOCOL);
        return false;
    }
    if (H2B_OUTBUF_SIZE - h->out.len < n || h->out.niov >= H2B_OUT_IOV_MAX) {
        fail(h, H2B_STAT_GUARD_OUTQ);
        return false;
    }
    memcpy(h2b_outbuf_append(&h->out, n), p, n);
    return true;
}

/* ---- flood budget (the charges of h2_nghttp2.c) ---- */

static void charge(struct fconn *h, double n)
{
    const struct h2b_conn_config *cfg = &h->ctx->cfg;
    if (h2b_flood_charge(&h->flood, n, h->ctx->now, cfg->flood_rate, cfg->flood_burst))
        h->calm = true;
}

/* ---- connection-level frames ---- */

/* Ends the connection with GOAWAY(code); further input is discarded. */
static void conn_error(struct fconn *h, uint32_t code)
{
    if (h->terminated || h->fatal)
        return;
    uint8_t f[17];
    h2b_h2wire_hd_put(f, 8, H2B_F_GOAWAY, 0, 0);
    h2b_h2wire_put32(f + 9, h->sids.max_id);
    h2b_h2wire_put32(f + 13, code);
    h->terminated = true;
    if (ctl(h, f, sizeof f))
        h2b_stats_add(h->ctx->stats, H2B_STAT_GOAWAY_SENT, 1);
}

static void window_update(struct fconn *h, uint32_t id, uint32_t inc)
{
    uint8_t f[13];
    h2b_h2wire_hd_put(f, 4, H2B_F_WINUP, 0, id);
    h2b_h2wire_put32(f + 9, inc);
    ctl(h, f, sizeof f);
}

/* n received bytes of stream st (NULL: a stream gone) are done with: credit them back when
 * half a window is due. */
static void consume(struct fconn *h, struct fstream *st, uint32_t n)
{
    const struct h2b_conn_config *cfg = &h->ctx->cfg;
    h->conn_consumed += n;
    H2B_ASSERT(h->conn_consumed <= h->conn_rused); /* only what was received is credited */
    if (h->conn_consumed >= cfg->conn_window / 2 && !h->terminated) {
        window_update(h, 0, h->conn_consumed);
        h->conn_rused -= h->conn_consumed;
        h->conn_consumed = 0;
    }
    if (st && !st->eof_in) {
        st->consumed += n;
        H2B_ASSERT(st->consumed <= st->rused);
        if (st->consumed >= cfg->window / 2 && !h->terminated) {
            window_update(h, st->id, st->consumed);
            st->rused -= st->consumed;
            st->consumed = 0;
        }
    }
}

/* ---- streams ---- */

static bool is_echo_upload(const struct fstream *st)
{
    return st->req.route == H2B_ROUTE_ECHO && h2b_method_upload(st->req.method);
}

static struct fstream *find(struct fconn *h, uint32_t id)
{
    if (h->last_st && h->last_st->id == id)
        return h->last_st;
    struct h2b_list *pos;
    H2B_LIST_FOREACH(pos, &h->streams)
    {
        struct fstream *st = H2B_LIST_ENTRY(pos, struct fstream, link);
        if (st->id == id)
            return h->last_st = st;
    }
    return NULL;
}

static void q_push(struct fconn *h, struct fstream *st)
{
    if (st->queued || st->done_out || st->delayed || !st->responded)
        return;
    st->queued = true;
    st->blocked = false;
    st->qnext = NULL;
    if (h->q_tail)
        h->q_tail->qnext = st;
    else
        h->q_head = st;
    h->q_tail = st;
}

/* Takes a queued stream out of the send queue, at its release (a reset or the connection's end
 * while its response waited for room or window): a walk from the head, off the request path. */
static void q_unlink(struct fconn *h, struct fstream *st)
{
    struct fstream **pp = &h->q_head, *prev = NULL;
    while (*pp != st) {
        H2B_ASSERT(*pp != NULL); /* a queued stream is in the queue */
        prev = *pp;
        pp = &(*pp)->qnext;
    }
    *pp = st->qnext;
    if (h->q_tail == st)
        h->q_tail = prev;
    st->queued = false;
}

/* The connection's window opened: every stream that waited for it goes back in the queue. */
static void unblock_all(struct fconn *h)
{
    struct h2b_list *pos, *tmp;
    H2B_LIST_FOREACH_SAFE(pos, tmp, &h->streams)
    {
        struct fstream *st = H2B_LIST_ENTRY(pos, struct fstream, link);
        if (st->blocked && st->swin > 0)
            q_push(h, st);
    }
}

static void stream_release(struct fconn *h, struct fstream *st)
{
    if (st->queued)
        q_unlink(h, st);
    if (st->delayed) {
        h2b_heap_remove(&h->ctx->delays, &st->dnode);
        H2B_ASSERT(h->ndelayed > 0);
        h->ndelayed--;
    }
    if (st->req.grpc & H2B_GRPC_RQ_CALL)
        grpc_release(h, st);
    if (h->last_st == st)
        h->last_st = NULL;
    if (h->fst == st)
        h->fst = NULL;
    if (h->hb_st == st) {
        h->hb_st = NULL;
        h->hb = HB_DISCARD;
    }
    bool echo = st->body == H2B_BODY_ECHO || is_echo_upload(st);
    if (echo && st->hold.chunks.bytes > 0)
        consume(h, NULL, (uint32_t)st->hold.chunks.bytes);
    h2b_list_unlink(&st->link);
    h2b_wmem_stream_release(&h->ctx->wm, st, &st->hold, &h->held, echo, &h->ctx->cfg,
                            h->ctx->stats);
}

/* Resets stream id with code (st: its stream, released); true once the frame is in the output. */
static bool rst_frame(struct fconn *h, uint32_t id, struct fstream *st, uint32_t code)
{
    uint8_t f[13];
    h2b_h2wire_hd_put(f, 4, H2B_F_RST, 0, id);
    h2b_h2wire_put32(f + 9, code);
    h2b_sidwin_mark_reset(&h->sids, id);
    if (st)
        stream_release(h, st);
    if (!ctl(h, f, sizeof f))
        return false;
    h2b_stats_add(h->ctx->stats, H2B_STAT_RST_SENT, 1);
    return true;
}

/* As rst_frame, for a reset the peer provoked: those ("MadeYouReset") spend its flood budget. */
static void rst(struct fconn *h, uint32_t id, struct fstream *st, uint32_t code)
{
    if (rst_frame(h, id, st, code))
        charge(h, 1);
}

/* ---- responses ---- */

/* Chooses the response for st (handlers.c) and queues it: the status and headers go out as
 * HEADERS when the send queue reaches it. */
static void respond(struct fconn *h, struct fstream *st)
{
    struct fctx *ctx = h->ctx;
    if (st->responded)
        return;
    if (ctx->inject_slow)
        h2b_inject_respond();
    struct h2b_response *rs = &st->rs;
    if (h2b_docroot_take(&st->req, &st->hold.fd, &st->hold.fpath, st->hold.fpath_len,
                         &h->held.files_open, &ctx->cfg, &ctx->wm.paths))
        h2b_stats_add(ctx->stats, H2B_STAT_GUARD_FILES, 1);
    h2b_handle(&st->req, st->text, rs);
    if (rs->body == H2B_BODY_DELAY) {
        if (h2b_heap_push(&ctx->delays, &st->dnode, ctx->now + st->req.arg * H2B_NS_PER_MS) ==
            H2B_OK) {
            st->delayed = true;
            h->ndelayed++;
            return;
        }
        h2b_response_status(rs, 503);
    } else if (rs->body == H2B_BODY_STATS) {
        h2b_wmem_stats_body(&ctx->wm, &st->hold.chunks, rs, ctx->env->stats_fn, ctx->env->stats_arg,
                            ctx->stats);
    }
    st->body = rs->headers_only ? H2B_BODY_NONE : rs->body;
    st->len = rs->len;
    if (st->body == H2B_BODY_GRPC) {
        if (!(st->req.grpc & H2B_GRPC_RQ_CALL))
            grpc_begin(h, st, false);
        if (st->eof_in)
            h2b_grpc_end(&st->g);
        st->body = st->g.echo ? H2B_BODY_ECHO : H2B_BODY_GRPC;
        st->len = st->g.total;
    }
    st->off = 0;
    st->responded = true;
    h2b_stats_add(ctx->stats, H2B_STAT_REQUESTS, 1);
    h2b_stats_status(ctx->stats, rs->status);
    q_push(h, st);
}

/* The encoder's table entry for a content-type, H2B_HPACK_K_COUNT for one it does not index: by the
 * handler's enum h2b_ct, not the string (a docroot type can be as long as an indexed one). */
static unsigned ct_kind(const struct h2b_response *rs)
{
    static const uint8_t kind[] = {
        [H2B_CT_OTHER] = H2B_HPACK_K_COUNT,    [H2B_CT_TEXT] = H2B_HPACK_K_CT_TEXT,
        [H2B_CT_OCTET] = H2B_HPACK_K_CT_OCTET, [H2B_CT_JSON] = H2B_HPACK_K_CT_JSON,
        [H2B_CT_GRPC] = H2B_HPACK_K_CT_GRPC,
    };
    return kind[rs->ct_id];
}

/* What writing a frame of a response did: no room (try again later), nothing to send now
 * (blocked by flow control or waiting for echo input), written with more to come, or the
 * response is complete (the stream may be released). */
enum { W_ROOM = -1, W_IDLE = 0, W_MORE = 1, W_DONE = 2 };

/* The response is out (END_STREAM queued): the stream closes once the request is complete. */
static void out_done(struct fconn *h, struct fstream *st)
{
    if (H2B_CHECK_SLOW) /* O(1), but on every request: the budgets gate could not carry it */
        H2B_ASSERT(!st->done_out); /* -> half-closed (local), once: one END_STREAM a stream */
    st->done_out = true;
    h->tm.progress = true;
    if (st->eof_in)
        stream_release(h, st);
}

/* Writes the HEADERS frame of st's response. */
static int write_headers(struct fconn *h, struct fstream *st)
{
    if (resp_room(h) < HEAD_ROOM || h->out.niov >= H2B_OUT_IOV_MAX - 2)
        return W_ROOM;
    if (!out_ensure(h)) {
        fail(h, H2B_STAT_ERR_PROTOCOL);
        return W_ROOM;
    }
    const struct h2b_response *rs = &st->rs;
    char cl[24];
    size_t cl_len = rs->has_cl ? h2b_fmt_u64(cl, st->len) : 0;
    bool body =
        st->body != H2B_BODY_NONE && (st->len > 0 || st->body == H2B_BODY_ECHO ||
                                      st->body == H2B_BODY_STATS || st->body == H2B_BODY_GRPC);
    uint8_t *f = h->out.buf + h->out.len;
    size_t n =
        h2b_h2_hpack_response(&h->hp, f + 9, rs->status, ct_kind(rs), rs->ct, rs->ct_len,
                              rs->has_cl ? cl : NULL, cl_len, h->ctx->date, h->ctx->date_gen);
    /* a gRPC call (its messages: no length yet): trailers-only when the status is known before
     * any message; a body with a length is no gRPC call's */
    if (st->len == 0 && (st->req.grpc & H2B_GRPC_RQ_CALL)) {
        body = !h2b_grpc_body_done(&st->g, st->hold.chunks.bytes, st->off, st->eof_in);
        if (!body)
            n += grpc_status_fields(h, st, f + 9 + n);
    }
    h2b_h2wire_hd_put(f, (uint32_t)n, H2B_F_HEADERS,
                      (uint8_t)(H2B_FL_END_HEADERS | (body ? 0 : H2B_FL_END_STREAM)), st->id);
    h2b_outbuf_append(&h->out, 9 + n);
    st->hdr_sent = true;
    h->tm.progress = true;
    if (!body) {
        if (st->req.grpc & H2B_GRPC_RQ_CALL)
            grpc_out_done(h, st);
        else
            out_done(h, st);
        return W_DONE;
    }
    return W_MORE;
}

/* A gRPC call's status fields (h2_hpack.h) at p; returns their length (GRPC_ROOM at most). */
static __attribute__((noinline)) size_t grpc_status_fields(struct fconn *h, struct fstream *st,
                                                           uint8_t *p)
{
    char code[3];
    size_t cl = h2b_grpc_status_str(code, st->g.status);
    return h2b_h2_hpack_trailers(&h->hp, p, code, cl, st->g.msg);
}

/* The call's status is out: the stream closes; a request still arriving is reset with
 * NO_ERROR (RFC 9113 8.1: the response is complete, the rest of the request is not needed). */
static __attribute__((noinline)) void grpc_out_done(struct fconn *h, struct fstream *st)
{
    bool request_open = !st->eof_in;
    out_done(h, st); /* releases st when the request is complete */
    if (request_open)
        rst_frame(h, st->id, st, H2B_E_NO_ERROR);
}

/* The trailers of a gRPC call: its status, END_STREAM. */
static __attribute__((noinline)) int write_trailers(struct fconn *h, struct fstream *st)
{
    if (resp_room(h) < 9 + GRPC_ROOM || h->out.niov >= H2B_OUT_IOV_MAX - 2)
        return W_ROOM;
    if (!out_ensure(h)) {
        fail(h, H2B_STAT_ERR_PROTOCOL);
        return W_ROOM;
    }
    uint8_t *f = h->out.buf + h->out.len;
    size_t n = grpc_status_fields(h, st, f + 9);
    h2b_h2wire_hd_put(f, (uint32_t)n, H2B_F_HEADERS, H2B_FL_END_HEADERS | H2B_FL_END_STREAM,
                      st->id);
    h2b_outbuf_append(&h->out, 9 + n);
    h->tm.progress = true;
    grpc_out_done(h, st);
    return W_DONE;
}

/* Writes one DATA frame of st's body (grpc: of a gRPC call's messages). */
static inline __attribute__((always_inline)) int data_frame(struct fconn *h, struct fstream *st,
                                                            bool grpc)
{
    bool echo = st->body == H2B_BODY_ECHO;
    uint64_t avail = echo || st->body == H2B_BODY_STATS ? st->hold.chunks.bytes : st->len - st->off;
    bool eof_possible = !grpc && (!echo || st->eof_in); /* a gRPC call ends with trailers */
    if (avail == 0 && !eof_possible)
        return W_IDLE; /* the echo waits for input */
    size_t n = avail < DATA_MAX ? (size_t)avail : DATA_MAX;
    int64_t win = h->conn_swin < st->swin ? h->conn_swin : st->swin;
    if ((int64_t)n > win) {
        if (win <= 0) {
            st->blocked = true;
            return W_IDLE;
        }
        n = (size_t)win;
    }
    bool ref = !h->ctx->cfg.copy_bodies && n >= REF_MIN &&
               (st->body == H2B_BODY_PATTERN || st->body == H2B_BODY_MEM);
    size_t room = 9 + (ref ? 0 : n);
    if (resp_room(h) < room || h->out.niov > H2B_OUT_IOV_MAX - 3 ||
        (h->out.pending > 0 && h->out.pending + 9 + n > H2B_OUT_PENDING_MAX))
        return W_ROOM;
    if (!out_ensure(h)) {
        fail(h, H2B_STAT_ERR_PROTOCOL);
        return W_ROOM;
    }
    bool end = n == avail && eof_possible;
    if (st->body == H2B_BODY_FILE && n > 0 &&
        pread(st->hold.fd, h->out.buf + h->out.len + 9, n, (off_t)st->off) != (ssize_t)n) {
        rst(h, st->id, st, H2B_E_INTERNAL); /* the file shrank or failed: the stream cannot go on */
        return W_DONE;
    }
    uint8_t *f = h2b_outbuf_append(&h->out, 9);
    h2b_h2wire_hd_put(f, (uint32_t)n, H2B_F_DATA, end ? H2B_FL_END_STREAM : 0, st->id);
    switch (st->body) {
    case H2B_BODY_MEM:
        if (ref)
            h2b_outbuf_ref(&h->out, st->rs.mem + st->off, n);
        else
            memcpy(h2b_outbuf_append(&h->out, n), st->rs.mem + st->off, n);
        break;
    case H2B_BODY_PATTERN:
        if (ref)
            h2b_outbuf_ref(&h->out, h2b_pattern_at(st->off), n);
        else
            memcpy(h2b_outbuf_append(&h->out, n), h2b_pattern_at(st->off), n);
        break;
    case H2B_BODY_ECHO:
    case H2B_BODY_STATS:
        /* an echo keeps its last chunk: the request body may go on into it */
        h2b_wmem_chunks_take(&h->ctx->wm, &st->hold.chunks, &h->out, n, echo);
        if (echo) { /* after the frame: the credit may write a WINDOW_UPDATE */
            H2B_ASSERT(h->held.echo_bytes >= n);
            h->held.echo_bytes -= n;
            consume(h, st, (uint32_t)n);
        }
        break;
    case H2B_BODY_FILE: /* pread above, in place */
        if (n)
            h2b_outbuf_append(&h->out, n);
        break;
    case H2B_BODY_GRPC:
        h2b_grpc_gen(&st->g, st->off, h2b_outbuf_append(&h->out, n), n);
        break;
    default:
        break;
    }
    st->off += n;
    h->conn_swin -= (int64_t)n;
    st->swin -= (int64_t)n;
    H2B_ASSERT(h->conn_swin >= 0 && st->swin >= 0); /* n was cut to the smaller window */
    h->tm.progress = true;
    if (end) {
        out_done(h, st);
        return W_DONE;
    }
    return W_MORE;
}

/* A gRPC call's next frame: a DATA frame of its messages, or its trailers once they are all
 * out. Out of line, so write_data tests for gRPC once. */
static __attribute__((noinline)) int grpc_write_data(struct fconn *h, struct fstream *st)
{
    if (h2b_grpc_body_done(&st->g, st->hold.chunks.bytes, st->off, st->eof_in))
        return write_trailers(h, st);
    return data_frame(h, st, true);
}

/* Writes one DATA frame of st's body. */
static int write_data(struct fconn *h, struct fstream *st)
{
    if (st->req.grpc & H2B_GRPC_RQ_CALL)
        return grpc_write_data(h, st);
    return data_frame(h, st, false);
}

/* Writes queued responses while there is room: round robin, one frame per stream a turn. */
static void fill(struct fconn *h)
{
    while (h->q_head && !h->fatal) {
        struct fstream *st = h->q_head;
        h->q_head = st->qnext;
        if (!h->q_head)
            h->q_tail = NULL;
        st->queued = false;
        int rv = !st->hdr_sent ? write_headers(h, st) : write_data(h, st);
        if (rv < 0) { /* no room: back to the front */
            st->queued = true;
            st->qnext = h->q_head;
            h->q_head = st;
            if (!h->q_tail)
                h->q_tail = st;
            break;
        }
        if (rv == W_MORE)
            q_push(h, st);
    }
}

/* ---- timers ---- */

static bool busy(const struct fconn *h)
{
    return !h->got_frame || h->held.nstreams > 0 || h2b_outbuf_pending(&h->out) || h->terminated ||
           h->in_frame || h->hb != HB_NONE;
}

/* The connection's timer (ctimer.h). */
static void retime(struct fconn *h)
{
    struct fctx *ctx = h->ctx;
    h2b_ctimer_retime(&h->tm, &ctx->timers, ctx->now, h->fatal, busy(h), &ctx->cfg);
}

/* ---- request header fields ---- */

/* One decoded field. As with nghttp2's HTTP messaging, a malformed field ends the request's
 * field processing and is not counted against the header list budget (tests/unit/
 * test_hpack_corpus.c predicts the budget that way). */
static void on_field(struct fconn *h, const uint8_t *name, size_t nlen, const uint8_t *value,
                     size_t vlen)
{
    struct fstream *st = h->hb_st;
    if (!st || st->oversize || st->malformed)
        return;
    if (!h2b_h2_reqcheck_field(&st->rc, h->hb == HB_REQUEST, &st->req, &st->hold.fpath,
                               &st->hold.fpath_len, &h->ctx->cfg, &h->ctx->wm.paths, &st->g, name,
                               nlen, value, vlen)) {
        st->malformed = true;
        return;
    }
    st->hdr_bytes += (uint32_t)(nlen + vlen + 32);
    if (st->hdr_bytes > h->ctx->cfg.max_header_list) {
        st->oversize = true;
        h2b_stats_add(h->ctx->stats, H2B_STAT_GUARD_HEADERS, 1);
        charge(h, 10);
    }
}

/* The HPACK decoder, made for the first header block (~1.3 KiB from the pool that a
 * connection which never sends a request does not hold). */
static __attribute__((noinline, cold)) bool inf_make(struct fconn *h)
{
    if (nghttp2_hd_inflate_new2(&h->inf, &h->ctx->mem) != 0) {
        h->inf = NULL;
        fail(h, H2B_STAT_ERR_PROTOCOL);
        return false;
    }
    if (h->settings_acked && h->ctx->cfg.header_table_size != 4096)
        nghttp2_hd_inflate_change_table_size(h->inf, h->ctx->cfg.header_table_size);
    return true;
}

/* Feeds header block bytes to the decoder; final: the block ends here. False on a fatal
 * decoding error (the connection is ended with COMPRESSION_ERROR). */
static bool hb_feed(struct fconn *h, const uint8_t *p, size_t n, bool final)
{
    static const uint8_t none[1];
    if (!p)
        p = none;
    for (;;) {
        nghttp2_nv nv;
        int fl = 0;
        ssize_t k = nghttp2_hd_inflate_hd2(h->inf, &nv, &fl, p, n, final);
        if (k < 0) {
            conn_error(h, H2B_E_COMPRESSION);
            return false;
        }
        p += k;
        n -= (size_t)k;
        if (fl & NGHTTP2_HD_INFLATE_EMIT)
            on_field(h, nv.name, nv.namelen, nv.value, nv.valuelen);
        if (fl & NGHTTP2_HD_INFLATE_FINAL) {
            nghttp2_hd_inflate_end_headers(h->inf);
            return true;
        }
        if (n == 0 && !(fl & NGHTTP2_HD_INFLATE_EMIT))
            return true;
    }
}

/* The request is complete (END_STREAM): check the body length, answer it. */
static void request_end(struct fconn *h, struct fstream *st)
{
    /* open -> half-closed (remote), once: a frame on a half-closed stream was refused at its
     * start (begin_headers, begin_data); checked where out_done's check is */
    if (H2B_CHECK_SLOW)
        H2B_ASSERT(!st->eof_in);
    st->eof_in = true;
    if (!h2b_h2_reqcheck_body(&st->rc, st->req.rx, true)) {
        rst(h, st->id, st, H2B_E_PROTOCOL);
        return;
    }
    if (st->done_out) {
        stream_release(h, st);
        return;
    }
    if (st->responded) {
        if (st->req.grpc & H2B_GRPC_RQ_CALL)
            grpc_settle(h, st); /* its status, its trailers */
        else
            q_push(h, st); /* an echo: its end goes out */
    } else {
        respond(h, st); /* a gRPC call's status is decided there (h2b_grpc_end) */
    }
}

/* The header block ended (END_HEADERS). */
static void hb_done(struct fconn *h)
{
    uint8_t kind = h->hb;
    struct fstream *st = h->hb_st;
    uint32_t id = h->hb_id, err = h->hb_err;
    bool end = h->hb_end_stream;
    h->hb = HB_NONE;
    h->hb_st = NULL;
    if (kind == HB_DISCARD || !st) {
        if (err)
            rst(h, id, NULL, err);
        return;
    }
    h->tm.progress = true;
    if (err || st->malformed) {
        rst(h, id, st, err ? err : H2B_E_PROTOCOL);
        return;
    }
    if (st->oversize) {
        rst(h, id, st, H2B_E_CALM);
        return;
    }
    if (kind == HB_REQUEST) {
        if (!h2b_h2_reqcheck_head(&st->rc)) {
            rst(h, id, st, H2B_E_PROTOCOL);
            return;
        }
        if (st->rc.connect)
            st->req.route = H2B_ROUTE_NOTFOUND;
    }
    if (end) {
        request_end(h, st); /* a gRPC call: respond() begins it */
    } else if (kind == HB_REQUEST) {
        if (h2b_grpc_is_call(&st->req))
            grpc_begin(h, st, true); /* its DATA goes to grpc.c from the first byte */
        else if (is_echo_upload(st))
            respond(h, st); /* stream the echo from the first byte */
    }
}

/* ---- frames ---- */

static void apply_setting(struct fconn *h, uint16_t id, uint32_t v)
{
    switch (id) {
    case 1: { /* HEADER_TABLE_SIZE */
        h2b_h2_hpack_set_max(&h->hp, v);
        break;
    }
    case 2: /* ENABLE_PUSH */
    case 8: /* ENABLE_CONNECT_PROTOCOL */
    case 9: /* NO_RFC7540_PRIORITIES */
        if (v > 1)
            conn_error(h, H2B_E_PROTOCOL);
        break;
    case 4: /* INITIAL_WINDOW_SIZE: the last one of the frame is applied at its end, once */
        if (v > MAX_WIN) {
            conn_error(h, H2B_E_FLOW);
            return;
        }
        h->iwin_due = true;
        h->iwin_new = v;
        break;
    case 5: /* MAX_FRAME_SIZE */
        if (v < 16384 || v > 16777215)
            conn_error(h, H2B_E_PROTOCOL);
        break;
    default: /* MAX_CONCURRENT_STREAMS, MAX_HEADER_LIST_SIZE (we never push; responses are
              * small), unknown parameters: ignored */
        break;
    }
}

/* A PRIORITY frame's stream error (code): RST_STREAM, except on a stream never opened, where
 * RST_STREAM is not allowed (RFC 9113 5.1, and nghttp2 as a client ends the connection on one):
 * the error is the connection's then. */
static void prio_error(struct fconn *h, uint32_t id, uint32_t code)
{
    if (id > h->sids.max_id || !(id & 1))
        conn_error(h, code);
    else
        rst(h, id, find(h, id), code);
}

/* A SETTINGS frame's INITIAL_WINDOW_SIZE (the last of the frame, RFC 9113 6.5.3 processes them
 * in order, so only the last one's value stays): one walk over the streams per frame, not per
 * entry, so the work per byte received stays bounded whatever the number of entries. */
static void apply_iwin(struct fconn *h)
{
    h->iwin_due = false;
    int64_t delta = (int64_t)h->iwin_new - h->peer_iwin;
    h->peer_iwin = h->iwin_new;
    if (delta == 0)
        return;
    struct h2b_list *pos, *tmp;
    H2B_LIST_FOREACH_SAFE(pos, tmp, &h->streams)
    {
        struct fstream *st = H2B_LIST_ENTRY(pos, struct fstream, link);
        st->swin += delta;
        if (st->swin > MAX_WIN) {
            conn_error(h, H2B_E_FLOW);
            return;
        }
        /* a send leaves the window >= 0 and INITIAL_WINDOW_SIZE is 0..2^31-1, so no change of
         * it takes a stream's window below -(2^31-1) (RFC 9113 6.9.2) */
        H2B_ASSERT(st->swin >= -MAX_WIN);
        if (st->blocked && st->swin > 0)
            q_push(h, st);
    }
}

/* A HEADERS frame opens stream id (above every id seen): a new request, or refused. */
static void open_stream(struct fconn *h, uint32_t id)
{
    const struct h2b_conn_config *cfg = &h->ctx->cfg;
    struct fstream *st;
    h2b_sidwin_open(&h->sids, id);
    h->hb = HB_DISCARD;
    if (h->held.nstreams >= cfg->max_streams) {
        h->hb_err = H2B_E_REFUSED;
    } else if (h2b_wmem_over(&h->ctx->wm)) {
        h2b_stats_add(h->ctx->stats, H2B_STAT_GUARD_MEMORY, 1);
        h->hb_err = H2B_E_REFUSED; /* no work started: the client may retry (8.7) */
    } else if ((st = stream_get(h->ctx)) == NULL) {
        h->hb_err = H2B_E_REFUSED;
    } else {
        st->conn = h;
        st->id = id;
        st->swin = h->peer_iwin;
        h2b_list_insert_head(&h->streams, &st->link);
        h->held.nstreams++;
        h2b_stats_add(h->ctx->stats, H2B_STAT_STREAMS_OPEN, 1);
        h2b_stats_add(h->ctx->stats, H2B_STAT_STREAMS_TOTAL, 1);
        h->hb = HB_REQUEST;
        h->hb_st = st;
    }
}

/* frame_begin for DATA. */
static void begin_data(struct fconn *h, uint32_t id, uint32_t len, uint8_t flags)
{
    const struct h2b_conn_config *cfg = &h->ctx->cfg;
    if (id == 0) {
        conn_error(h, H2B_E_PROTOCOL);
        return;
    }
    if (len == 0 && !(flags & H2B_FL_END_STREAM))
        charge(h, 1);
    struct fstream *st = find(h, id);
    if (!st && (id > h->sids.max_id || !(id & 1))) {
        conn_error(h, H2B_E_PROTOCOL); /* DATA on an idle stream */
        return;
    }
    if ((uint64_t)h->conn_rused + len > cfg->conn_window) {
        conn_error(h, H2B_E_FLOW);
        return;
    }
    h->conn_rused += len;
    if (!st || st->eof_in) {
        /* closed or half-closed (remote): the bytes count, then are dropped */
        consume(h, NULL, len);
        charge(h, 1);
        if (st)
            rst(h, id, st, H2B_E_STREAM_CLOSED);
        else if (!h2b_sidwin_was_reset(&h->sids, id))
            rst(h, id, NULL, H2B_E_STREAM_CLOSED); /* one reset: later frames are ignored */
        h->body_left = 0;
        return;
    }
    uint32_t limit = h->settings_acked || cfg->window >= 65535 ? cfg->window : 65535;
    if ((uint64_t)st->rused + len > limit) {
        consume(h, NULL, len);
        rst(h, id, st, H2B_E_FLOW);
        return;
    }
    st->rused += len;
    h->fst = st;
    if (flags & H2B_FL_PADDED)
        h->pb_need = 1;
    else
        h->body_left = len;
    h->tm.progress = true;
}

/* frame_begin for HEADERS: a new request, trailers, or a block decoded only to be ignored. */
static void begin_headers(struct fconn *h, uint32_t id, uint32_t len, uint8_t flags)
{
    if (id == 0 || !(id & 1)) {
        conn_error(h, H2B_E_PROTOCOL);
        return;
    }
    h->pb_need = (uint8_t)((flags & H2B_FL_PADDED ? 1 : 0) + (flags & H2B_FL_PRIO ? 5 : 0));
    if (len < h->pb_need) {
        conn_error(h, H2B_E_FRAME_SIZE);
        return;
    }
    if (!h->inf && !inf_make(h))
        return;
    h->hb_end_stream = flags & H2B_FL_END_STREAM;
    h->hb_err = 0;
    h->hb_bytes = 0;
    h->hb_conts = 0;
    h->hb_id = id;
    h->hb_st = NULL;
    struct fstream *st = find(h, id);
    if (st) {
        if (st->eof_in) {
            conn_error(h, H2B_E_STREAM_CLOSED); /* half-closed (remote) */
            return;
        }
        h->hb = HB_TRAILERS;
        h->hb_st = st;
        if (!h->hb_end_stream)
            h->hb_err = H2B_E_PROTOCOL; /* trailers must end the stream (8.1) */
    } else if (id <= h->sids.max_id) {
        charge(h, 1);
        if (h2b_sidwin_was_reset(&h->sids, id)) {
            h->hb = HB_DISCARD; /* a stream we reset: decoded and ignored (5.4.2) */
        } else {
            conn_error(h, h2b_sidwin_skipped(&h->sids, id) ? H2B_E_PROTOCOL : H2B_E_STREAM_CLOSED);
            return;
        }
    } else if (h->shut || h->peer_goaway) {
        /* After a GOAWAY either way: recorded as opened, so its later DATA, RST_STREAM or
         * WINDOW_UPDATE find a stream we reset, not an idle one (a connection error that
         * would lose the streams in flight), and refused: the client may retry it on a new
         * connection (RFC 9113 6.8), as nghttp2 does. */
        h2b_sidwin_open(&h->sids, id);
        h->hb = HB_DISCARD;
        h->hb_err = H2B_E_REFUSED;
    } else {
        open_stream(h, id);
    }
    if (!h->pb_need)
        h->body_left = len;
}

/* frame_begin for the frames other than DATA and HEADERS: checks of the header alone, and the
 * fixed prefix to collect (pb_need). */
static void begin_other(struct fconn *h, uint8_t type, uint32_t id, uint32_t len, uint8_t flags)
{
    switch (type) {
    case H2B_F_CONT:
        if (h->hb == HB_NONE) {
            conn_error(h, H2B_E_PROTOCOL);
            return;
        }
        if (len == 0)
            charge(h, 1);
        if (++h->hb_conts > MAX_CONTINUATIONS) {
            h2b_stats_add(h->ctx->stats, H2B_STAT_ERR_CONTINUATION, 1);
            conn_error(h, H2B_E_CALM);
            return;
        }
        h->body_left = len;
        return;
    case H2B_F_PRIORITY:
        charge(h, 1);
        if (id == 0) {
            conn_error(h, H2B_E_PROTOCOL);
            return;
        }
        if (len != 5) {
            prio_error(h, id, H2B_E_FRAME_SIZE);
            return;
        }
        h->pb_need = 5;
        return;
    case H2B_F_RST:
        if (id == 0) {
            conn_error(h, H2B_E_PROTOCOL);
            return;
        }
        if (len != 4) {
            conn_error(h, H2B_E_FRAME_SIZE);
            return;
        }
        if (id > h->sids.max_id || !(id & 1)) {
            conn_error(h, H2B_E_PROTOCOL); /* idle stream */
            return;
        }
        h->pb_need = 4;
        return;
    case H2B_F_SETTINGS:
        if (id != 0) {
            conn_error(h, H2B_E_PROTOCOL);
            return;
        }
        if ((flags & H2B_FL_ACK) ? len != 0 : len % 6 != 0) {
            conn_error(h, H2B_E_FRAME_SIZE);
            return;
        }
        if (len / 6 > H2B_SETTINGS_MAX_ENTRIES) {
            conn_error(h, H2B_E_CALM); /* as nghttp2: legitimate peers send a handful */
            return;
        }
        if (!(flags & H2B_FL_ACK)) {
            charge(h, h2b_settings_cost(len));
            h->got_settings = true;
            if (len)
                h->pb_need = 6;
        }
        return;
    case H2B_F_PING:
        charge(h, 1);
        if (id != 0) {
            conn_error(h, H2B_E_PROTOCOL);
            return;
        }
        if (len != 8) {
            conn_error(h, H2B_E_FRAME_SIZE);
            return;
        }
        h->pb_need = 8;
        return;
    case H2B_F_GOAWAY:
        if (id != 0) {
            conn_error(h, H2B_E_PROTOCOL);
            return;
        }
        if (len < 8) {
            conn_error(h, H2B_E_FRAME_SIZE);
            return;
        }
        h->pb_need = 8;
        return;
    case H2B_F_WINUP:
        if (len != 4) {
            conn_error(h, H2B_E_FRAME_SIZE);
            return;
        }
        if (id != 0 && (id > h->sids.max_id || !(id & 1))) {
            conn_error(h, H2B_E_PROTOCOL); /* idle stream */
            return;
        }
        h->pb_need = 4;
        return;
    case H2B_F_PUSH:
        conn_error(h, H2B_E_PROTOCOL); /* clients do not push (8.4) */
        return;
    default:
        charge(h, 1); /* unknown types are ignored (4.1), but not without limit */
        return;
    }
}

/* A new frame header is complete in h->fh. Sets up the payload phases. */
static void frame_begin(struct fconn *h)
{
    const struct h2b_conn_config *cfg = &h->ctx->cfg;
    struct h2b_h2wire_hd hd = h2b_h2wire_hd_get(h->fh);
    uint32_t len = hd.len, id = hd.id;
    uint8_t type = hd.type, flags = hd.flags;
    h->ftype = type;
    h->fflags = flags;
    h->fid = id;
    h->flen = h->left = len;
    h->body_left = 0;
    h->pb_have = h->pb_need = 0;
    h->fst = NULL;
    h->in_frame = true;
    if (h->hb != HB_NONE && (type != H2B_F_CONT || id != h->hb_id)) {
        conn_error(h, H2B_E_PROTOCOL); /* a header block must not be interleaved (RFC 9113 6.10) */
        return;
    }
    if (len > cfg->frame_size) {
        conn_error(h, H2B_E_FRAME_SIZE);
        return;
    }
    if (!h->got_settings && (type != H2B_F_SETTINGS || (flags & H2B_FL_ACK))) {
        conn_error(h, H2B_E_PROTOCOL); /* the preface's SETTINGS comes first (3.4) */
        return;
    }
    h->got_frame = true;
    if (type == H2B_F_DATA)
        begin_data(h, id, len, flags);
    else if (type == H2B_F_HEADERS)
        begin_headers(h, id, len, flags);
    else
        begin_other(h, type, id, len, flags);
}

/* The fixed prefix h->pb (pb_need bytes) of the current frame is complete. */
static void frame_prefix(struct fconn *h)
{
    uint8_t *p = h->pb;
    uint32_t id = h->fid;
    switch (h->ftype) {
    case H2B_F_DATA: { /* pad length */
        if (p[0] >= h->flen) {
            conn_error(h, H2B_E_PROTOCOL);
            return;
        }
        h->body_left = h->flen - 1 - p[0];
        consume(h, h->fst, 1u + p[0]); /* padding is flow-controlled, and done with at once */
        return;
    }
    case H2B_F_HEADERS: {
        uint32_t pad = 0;
        size_t off = 0;
        if (h->fflags & H2B_FL_PADDED)
            pad = p[off++];
        if (h->fflags & H2B_FL_PRIO) {
            uint32_t dep = h2b_h2wire_get32(p + off) & 0x7fffffffu;
            if (dep == id && !h->hb_err)
                h->hb_err = H2B_E_PROTOCOL; /* depends on itself (5.3.1) */
        }
        uint32_t pre = (uint32_t)off + (h->fflags & H2B_FL_PRIO ? 5 : 0);
        if (pad > h->flen - pre) {
            conn_error(h, H2B_E_PROTOCOL);
            return;
        }
        h->body_left = h->flen - pre - pad;
        return;
    }
    case H2B_F_PRIORITY: {
        uint32_t dep = h2b_h2wire_get32(p) & 0x7fffffffu;
        if (dep == id)
            prio_error(h, id, H2B_E_PROTOCOL); /* depends on itself (5.3.1) */
        return;
    }
    case H2B_F_RST: {
        h2b_stats_add(h->ctx->stats, H2B_STAT_RST_RECV, 1);
        charge(h, 1);
        struct fstream *st = find(h, id);
        if (st)
            stream_release(h, st);
        return;
    }
    case H2B_F_SETTINGS:
        apply_setting(h, (uint16_t)(p[0] << 8 | p[1]), h2b_h2wire_get32(p + 2));
        if (h->left >= 6) {
            h->pb_need = 6;
            h->pb_have = 0;
        }
        return;
    case H2B_F_PING:
        if (!(h->fflags & H2B_FL_ACK)) {
            uint8_t f[17];
            h2b_h2wire_hd_put(f, 8, H2B_F_PING, H2B_FL_ACK, 0);
            memcpy(f + 9, p, 8);
            ctl(h, f, sizeof f);
        }
        return;
    case H2B_F_GOAWAY:
        h->peer_goaway = true;
        return;
    case H2B_F_WINUP: {
        uint32_t inc = h2b_h2wire_get32(p) & 0x7fffffffu;
        if (inc < 1024)
            charge(h, 1);
        if (id == 0) {
            if (inc == 0) {
                conn_error(h, H2B_E_PROTOCOL);
                return;
            }
            if (h->conn_swin + inc > MAX_WIN) {
                conn_error(h, H2B_E_FLOW);
                return;
            }
            bool was = h->conn_swin <= 0;
            h->conn_swin += inc;
            /* SETTINGS never change the connection's window: it is >= 0 before the update */
            H2B_ASSERT(h->conn_swin > 0 && h->conn_swin <= MAX_WIN);
            if (was && h->conn_swin > 0)
                unblock_all(h);
            return;
        }
        struct fstream *st = find(h, id);
        if (!st)
            return; /* closed: ignored */
        if (inc == 0) {
            rst(h, id, st, H2B_E_PROTOCOL);
            return;
        }
        if (st->swin + inc > MAX_WIN) {
            rst(h, id, st, H2B_E_FLOW);
            return;
        }
        st->swin += inc;
        H2B_ASSERT(st->swin > -MAX_WIN && st->swin <= MAX_WIN);
        if (st->blocked && st->swin > 0 && h->conn_swin > 0)
            q_push(h, st);
        return;
    }
    default:
        return;
    }
}

/* Holds n request bytes p of an echo in st's chunks (*k of them held); 0, or the stream error
 * that ends the echo: a client that sends and does not read has its echo cut, not buffered
 * without end (ENHANCE_YOUR_CALM), and no memory is INTERNAL_ERROR. */
static uint32_t echo_hold(struct fconn *h, struct fstream *st, const uint8_t *p, size_t n,
                          size_t *k)
{
    const struct h2b_conn_config *cfg = &h->ctx->cfg;
    *k = 0;
    if (st->hold.chunks.bytes + n > cfg->echo_stream_max ||
        h->held.echo_bytes + n > cfg->echo_conn_max || h2b_wmem_over(&h->ctx->wm)) {
        h2b_stats_add(h->ctx->stats, H2B_STAT_GUARD_MEMORY, 1);
        return H2B_E_CALM;
    }
    *k = h2b_wmem_chunks_append(&h->ctx->wm, &st->hold.chunks, p, n);
    h->held.echo_bytes += *k;
    return *k < n ? H2B_E_INTERNAL : 0;
}

/* ---- gRPC calls (grpc.c) ---- */

/* A gRPC call begins: its state and its deadline, when its request headers are complete
 * (answer: then also its response, at once for the echo methods and a status already known),
 * or when respond() finds a call whose headers ended the request. */
static __attribute__((noinline)) void grpc_begin(struct fconn *h, struct fstream *st, bool answer)
{
    struct fctx *ctx = h->ctx;
    h2b_grpc_prepare(&st->req, &st->g);
    /* an unknown path's gRPC call is never a docroot file */
    h2b_docroot_close(&st->hold.fd, &st->hold.fpath, &h->held.files_open, &ctx->cfg,
                      &ctx->wm.paths);
    st->req.grpc |= H2B_GRPC_RQ_CALL;
    bool now = h2b_grpc_start(&st->req, &st->g);
    if (st->g.timeout_ns && st->g.status == H2B_GRPC_PENDING &&
        h2b_heap_push(&ctx->delays, &st->dnode, ctx->now + st->g.timeout_ns) == H2B_OK)
        st->req.grpc |= H2B_GRPC_RQ_TIMER;
    if (now && answer)
        respond(h, st);
}

/* The call's status may have changed: answer it, or send what is due. */
static __attribute__((noinline)) void grpc_settle(struct fconn *h, struct fstream *st)
{
    if (st->eof_in && st->g.status == H2B_GRPC_PENDING)
        h2b_grpc_end(&st->g); /* the request ended: its status */
    if (st->g.echo && st->eof_in && st->g.pfx_have) {
        consume(h, NULL, st->g.pfx_have); /* a prefix cut by the request's end: never echoed */
        st->g.pfx_have = 0;
    }
    if (st->g.status == H2B_GRPC_PENDING)
        return;
    if (!st->responded)
        respond(h, st);
    else if (!st->blocked || h2b_grpc_body_done(&st->g, st->hold.chunks.bytes, st->off, st->eof_in))
        q_push(h, st);
}

struct grpc_emit {
    struct fconn *h;
    struct fstream *st;
    size_t held;  /* bytes held for the echo */
    uint32_t err; /* the stream error that stopped it */
};

static bool grpc_emit(void *arg, const uint8_t *p, size_t n)
{
    struct grpc_emit *e = arg;
    size_t k;
    e->err = echo_hold(e->h, e->st, p, n, &k);
    e->held += k;
    return e->err == 0;
}

/* n request DATA bytes of a gRPC call. Flow control: what the echo holds is credited when it
 * is sent, a prefix being collected when it is complete, the rest at once. */
static __attribute__((noinline)) void grpc_data(struct fconn *h, struct fstream *st,
                                                const uint8_t *p, size_t n)
{
    struct grpc_emit e = {h, st, 0, 0};
    size_t before = st->g.echo ? st->g.pfx_have : 0;
    h2b_grpc_rx(&st->g, p, n, grpc_emit, &e);
    size_t after = st->g.echo ? st->g.pfx_have : 0; /* consumed when echoed, or at release */
    consume(h, st, (uint32_t)(before + n - e.held - after));
    if (e.err) {
        rst(h, st->id, st, e.err);
        return;
    }
    if (e.held && !st->blocked)
        q_push(h, st);
    grpc_settle(h, st);
}

/* The deadline passed: DEADLINE_EXCEEDED, unless the status is out already; the echo bytes
 * still held are not sent. */
static __attribute__((noinline)) void grpc_deadline(struct fconn *h, struct fstream *st)
{
    h2b_grpc_expire(&st->g);
    uint64_t held = st->hold.chunks.bytes;
    if (held && !st->done_out) {
        H2B_ASSERT(h->held.echo_bytes >= held);
        h->held.echo_bytes -= held;
        h2b_wmem_chunks_free(&h->ctx->wm, &st->hold.chunks);
        consume(h, st, (uint32_t)held);
    }
    grpc_settle(h, st);
}

/* A gRPC stream goes: its deadline, and a prefix never echoed. */
static __attribute__((noinline)) void grpc_release(struct fconn *h, struct fstream *st)
{
    if (st->req.grpc & H2B_GRPC_RQ_TIMER) {
        h2b_heap_remove(&h->ctx->delays, &st->dnode);
        st->req.grpc &= (uint8_t)~H2B_GRPC_RQ_TIMER;
    }
    if (st->g.echo && st->g.pfx_have) {
        consume(h, NULL, st->g.pfx_have);
        st->g.pfx_have = 0;
    }
}

/* n payload bytes of the current frame (after its prefix, before its padding). */
static void frame_body(struct fconn *h, const uint8_t *p, size_t n)
{
    if (h->ftype == H2B_F_HEADERS || h->ftype == H2B_F_CONT) {
        h->hb_bytes += (uint32_t)n;
        if (h->hb_bytes > 2 * h->ctx->cfg.max_header_list) {
            h2b_stats_add(h->ctx->stats, H2B_STAT_GUARD_HEADERS, 1);
            conn_error(h, H2B_E_CALM);
            return;
        }
        hb_feed(h, p, n, false);
        return;
    }
    if (h->ftype != H2B_F_DATA)
        return; /* GOAWAY debug data, unknown frames */
    struct fstream *st = h->fst;
    if (!st) {
        consume(h, NULL, (uint32_t)n);
        return;
    }
    st->req.rx += n;
    if (!h2b_h2_reqcheck_body(&st->rc, st->req.rx, false)) {
        consume(h, NULL, (uint32_t)n);
        rst(h, st->id, st, H2B_E_PROTOCOL);
        return;
    }
    if (st->req.grpc & H2B_GRPC_RQ_CALL) {
        grpc_data(h, st, p, n);
        return;
    }
    if (!is_echo_upload(st) || st->dropped) {
        consume(h, st, (uint32_t)n);
        return;
    }
    size_t k = 0;
    uint32_t err = echo_hold(h, st, p, n, &k);
    if (err) {
        consume(h, NULL, (uint32_t)(n - k));
        rst(h, st->id, st, err);
        return;
    }
    if (!st->blocked)
        q_push(h, st);
}

/* The current frame's payload is all read. */
static void frame_end(struct fconn *h)
{
    h->in_frame = false;
    switch (h->ftype) {
    case H2B_F_DATA:
        if (h->fst && (h->fflags & H2B_FL_END_STREAM))
            request_end(h, h->fst);
        h->fst = NULL;
        return;
    case H2B_F_HEADERS:
    case H2B_F_CONT:
        if (h->hb == HB_NONE || !(h->fflags & H2B_FL_END_HEADERS))
            return;
        if (hb_feed(h, NULL, 0, true))
            hb_done(h);
        return;
    case H2B_F_SETTINGS:
        if (h->fflags & H2B_FL_ACK) {
            if (!h->settings_acked && h->inf && h->ctx->cfg.header_table_size != 4096)
                nghttp2_hd_inflate_change_table_size(h->inf, h->ctx->cfg.header_table_size);
            h->settings_acked = true;
        } else {
            if (h->iwin_due)
                apply_iwin(h);
            uint8_t f[9];
            h2b_h2wire_hd_put(f, 0, H2B_F_SETTINGS, H2B_FL_ACK, 0);
            ctl(h, f, sizeof f);
        }
        return;
    default:
        return;
    }
}

/* Reads frames from data; stops at a connection error. */
static void parse(struct fconn *h, const uint8_t *data, size_t len)
{
    size_t i = 0;
    while (h->preface_have < PREFACE_LEN && i < len) {
        if (data[i] != preface[h->preface_have]) {
            fail(h, H2B_STAT_ERR_PREFACE);
            return;
        }
        h->preface_have++;
        i++;
    }
    while (i < len && !h->terminated && !h->fatal && !h->calm) {
        if (!h->in_frame) {
            while (h->fh_have < 9 && i < len)
                h->fh[h->fh_have++] = data[i++];
            if (h->fh_have < 9)
                break;
            h->fh_have = 0;
            frame_begin(h);
            if (h->terminated || h->fatal)
                break;
            if (h->left == 0) {
                frame_end(h);
                continue;
            }
        }
        /* prefix */
        if (h->pb_have < h->pb_need) {
            while (h->pb_have < h->pb_need && i < len) {
                h->pb[h->pb_have++] = data[i++];
                h->left--;
            }
            if (h->pb_have < h->pb_need)
                break;
            h->pb_need = 0;
            h->pb_have = 0;
            frame_prefix(h);
            if (h->terminated || h->fatal)
                break;
            if (h->pb_need) /* the next SETTINGS entry */
                continue;
        }
        /* payload, then padding */
        size_t avail = len - i;
        if (h->body_left > 0 && avail > 0) {
            size_t k = avail < h->body_left ? avail : h->body_left;
            h->body_left -= (uint32_t)k;
            h->left -= (uint32_t)k;
            frame_body(h, data + i, k);
            i += k;
            if (h->terminated || h->fatal)
                break;
            avail = len - i;
        }
        if (h->body_left == 0 && h->left > 0 && avail > 0) {
            size_t k = avail < h->left ? avail : h->left;
            h->left -= (uint32_t)k;
            i += k;
        }
        if (h->left == 0)
            frame_end(h);
    }
}

/* ---- context ---- */

/* The server preface every connection sends first: SETTINGS as h2_nghttp2.c sends them, then the
 * connection window. p has room for 9 + 5 * 6 + 13 bytes; returns the length. */
static size_t build_preface(uint8_t *p, const struct h2b_conn_config *cfg)
{
    size_t n = 9;
    uint16_t ids[5];
    uint32_t vals[5];
    size_t k = 0;
    ids[k] = 3, vals[k++] = cfg->max_streams;
    ids[k] = 4, vals[k++] = cfg->window;
    ids[k] = 6, vals[k++] = cfg->max_header_list;
    if (cfg->frame_size != 16384)
        ids[k] = 5, vals[k++] = cfg->frame_size;
    if (cfg->header_table_size != 4096)
        ids[k] = 1, vals[k++] = cfg->header_table_size;
    for (size_t i = 0; i < k; i++) {
        p[n] = (uint8_t)(ids[i] >> 8);
        p[n + 1] = (uint8_t)ids[i];
        h2b_h2wire_put32(p + n + 2, vals[i]);
        n += 6;
    }
    h2b_h2wire_hd_put(p, (uint32_t)(n - 9), H2B_F_SETTINGS, 0, 0);
    if (cfg->conn_window > 65535) {
        h2b_h2wire_hd_put(p + n, 4, H2B_F_WINUP, 0, 0);
        h2b_h2wire_put32(p + n + 9, cfg->conn_window - 65535);
        n += 13;
    }
    return n;
}

/* ---- context ---- */

static int fast_ctx_new(void **out, struct h2b_engine_env *env)
{
    struct fctx *ctx = calloc(1, sizeof *ctx);
    if (!ctx)
        return H2B_ERR_NOMEM;
    const struct h2b_conn_config *cfg = env->cfg;
    ctx->cfg = *cfg;
    ctx->env = env;
    ctx->stats = env->stats;
    ctx->date = env->date;
    ctx->mem = h2b_pool_nghttp2_mem(env->pool);
    memcpy(ctx->date_seen, ctx->date, 29);
    ctx->date_gen = 1;
    ctx->inject_slow = h2b_inject_wanted();
    ctx->now = h2b_clock_now_ns();
    h2b_heap_init(&ctx->timers);
    h2b_heap_init(&ctx->delays);
    h2b_wmem_init(&ctx->wm, sizeof(struct fstream), cfg->memory_budget, cfg->memory_used);
    ctx->preface_len = (uint8_t)build_preface(ctx->preface, cfg);
    *out = ctx;
    return H2B_OK;
}

static void fast_ctx_del(void *ectx)
{
    struct fctx *ctx = ectx;
    if (!ctx)
        return;
    h2b_wmem_free(&ctx->wm);
    h2b_heap_free(&ctx->timers);
    h2b_heap_free(&ctx->delays);
    free(ctx);
}

static void fast_tick(void *ectx, uint64_t now_ns)
{
    struct fctx *ctx = ectx;
    ctx->now = now_ns;
    if (memcmp(ctx->date_seen, ctx->date, 29) != 0) {
        memcpy(ctx->date_seen, ctx->date, 29);
        ctx->date_gen++;
    }
    struct h2b_heap_node *top;
    while ((top = h2b_heap_top(&ctx->delays)) != NULL && top->key <= now_ns) {
        struct fstream *st =
            (struct fstream *)(void *)((char *)top - offsetof(struct fstream, dnode));
        struct fconn *h = st->conn;
        h2b_heap_remove(&ctx->delays, top);
        if (st->req.grpc & H2B_GRPC_RQ_TIMER) { /* a gRPC call's grpc-timeout */
            st->req.grpc &= (uint8_t)~H2B_GRPC_RQ_TIMER;
            grpc_deadline(h, st);
            retime(h);
            h2b_engine_mark_dirty(h->ctx->env, h->owner);
            continue;
        }
        st->delayed = false;
        h->ndelayed--;
        st->responded = false;
        st->req.route = H2B_ROUTE_HELLO;
        respond(h, st);
        h->tm.progress = true;
        retime(h);
        h2b_engine_mark_dirty(h->ctx->env, h->owner);
    }
    while ((top = h2b_heap_top(&ctx->timers)) != NULL && top->key <= now_ns) {
        struct fconn *h = (struct fconn *)(void *)((char *)top - offsetof(struct fconn, tm.node));
        retime(h);
        switch (h2b_ctimer_due(&h->tm, &ctx->timers, now_ns, &ctx->cfg, ctx->stats, h->ndelayed > 0,
                               h->got_frame, h->terminated)) {
        case H2B_CTIMER_EARLY:
            continue;
        case H2B_CTIMER_IDLE:
            conn_error(h, H2B_E_NO_ERROR);
            retime(h);
            break;
        case H2B_CTIMER_WAIT:
            retime(h);
            break;
        case H2B_CTIMER_CUT:
            h->fatal = true;
            break;
        case H2B_CTIMER_SLOW:
            conn_error(h, H2B_E_CALM);
            break;
        }
        h2b_ctimer_settle(&h->tm, &ctx->timers, &ctx->cfg);
        h2b_engine_mark_dirty(h->ctx->env, h->owner);
    }
}

static uint64_t fast_next_deadline(const void *ectx)
{
    const struct fctx *ctx = ectx;
    return h2b_ctimer_next(&ctx->timers, &ctx->delays);
}

/* ---- connection ---- */

static int fast_conn_new(void **out, void *ectx, struct h2b_dirty *owner)
{
    struct fctx *ctx = ectx;
    const struct h2b_conn_config *cfg = &ctx->cfg;
    struct fconn *h = calloc(1, sizeof *h);
    if (!h)
        return H2B_ERR_NOMEM;
    h->ctx = ctx;
    h->owner = owner;
    h2b_list_init(&h->streams);
    h2b_flood_init(&h->flood, cfg->flood_burst, ctx->now);
    h2b_ctimer_init(&h->tm, ctx->now);
    h->conn_swin = 65535;
    h->peer_iwin = 65535;
    h2b_h2_hpack_init(&h->hp);
    if (h2b_heap_reserve(&ctx->timers, 1) != H2B_OK)
        goto out_free;
    h->preface_due = true;
    retime(h);
    *out = h;
    return H2B_OK;
out_free:
    free(h);
    return H2B_ERR_NOMEM;
}

static void fast_del(void *e)
{
    struct fconn *h = e;
    if (!h)
        return;
    h2b_heap_remove(&h->ctx->timers, &h->tm.node);
    for (struct fstream *st; (st = H2B_LIST_FIRST(&h->streams, struct fstream, link)) != NULL;)
        stream_release(h, st);
    if (h->inf)
        nghttp2_hd_inflate_del(h->inf);
    out_reset(h);
    free(h);
}

static int fast_recv(void *e, const uint8_t *data, size_t len)
{
    struct fconn *h = e;
    if (h->fatal)
        return H2B_ERR_PROTO;
    if (h->terminated)
        return H2B_OK; /* counted by the core (conn.c), discarded */
    parse(h, data, len);
    if (h->fatal)
        return H2B_ERR_PROTO;
    if (h->calm && !h->terminated) {
        h2b_stats_add(h->ctx->stats, H2B_STAT_GUARD_FLOOD, 1);
        conn_error(h, H2B_E_CALM);
    }
    if (h->fatal)
        return H2B_ERR_PROTO;
    retime(h);
    return H2B_OK;
}

static int fast_output(void *e, const struct iovec **iov)
{
    struct fconn *h = e;
    static const struct iovec none;
    *iov = &none;
    if (h->fatal)
        return H2B_ERR_PROTO;
    if (!h->terminated)
        fill(h);
    if (h->fatal)
        return H2B_ERR_PROTO;
    if (!h2b_outbuf_pending(&h->out)) {
        if (h->preface_due) { /* nothing else to send yet: our SETTINGS alone */
            if (!out_ensure(h)) {
                fail(h, H2B_STAT_ERR_PROTOCOL);
                return H2B_ERR_PROTO;
            }
        } else {
            if (h->out.buf)
                out_reset(h);
            return 0;
        }
    }
    return h2b_outbuf_iov(&h->out, iov);
}

static void fast_sent(void *e, size_t n)
{
    struct fconn *h = e;
    if (n == 0)
        return;
    h2b_stats_add(h->ctx->stats, H2B_STAT_BYTES_OUT, n);
    if (h2b_outbuf_sent(&h->out, n))
        out_reset(h);
    retime(h);
}

static bool fast_done(const void *e)
{
    const struct fconn *h = e;
    if (h->fatal)
        return true;
    if (h2b_outbuf_pending(&h->out) || (!h->terminated && h->q_head))
        return false;
    if (h->terminated)
        return true;
    if (h->input_closed || h->peer_goaway || h->shut)
        return h->held.nstreams == 0 && !h->preface_due;
    return false;
}

static bool fast_fatal(const void *e)
{
    const struct fconn *h = e;
    return h->fatal;
}

static void fast_input_closed(void *e)
{
    struct fconn *h = e;
    h->input_closed = true;
    /* A request whose END_STREAM has not arrived can never complete now: its stream is reset
     * (CANCEL; released at once if its response is already out), so the connection ends once
     * the complete requests are answered, not at the slow-client timeout. Not a flood charge:
     * the peer's FIN ends its input only once. */
    struct h2b_list *pos, *tmp;
    H2B_LIST_FOREACH_SAFE(pos, tmp, &h->streams)
    {
        struct fstream *st = H2B_LIST_ENTRY(pos, struct fstream, link);
        if (h->fatal)
            break;
        if (st->eof_in)
            continue;
        if (st->done_out)
            stream_release(h, st);
        else
            rst_frame(h, st->id, st, H2B_E_CANCEL);
    }
}

static void fast_shutdown(void *e)
{
    struct fconn *h = e;
    if (!h->fatal && !h->terminated && !h->shut) {
        uint8_t f[17];
        h2b_h2wire_hd_put(f, 8, H2B_F_GOAWAY, 0, 0);
        h2b_h2wire_put32(f + 9, h->sids.max_id);
        h2b_h2wire_put32(f + 13, H2B_E_NO_ERROR);
        h->shut = true;
        if (ctl(h, f, sizeof f))
            h2b_stats_add(h->ctx->stats, H2B_STAT_GOAWAY_SENT, 1);
    }
    h2b_engine_mark_dirty(h->ctx->env, h->owner);
}

const struct h2b_engine h2b_h2_fast_engine = {
    .name = "fast",
    .ctx_new = fast_ctx_new,
    .ctx_del = fast_ctx_del,
    .tick = fast_tick,
    .next_deadline = fast_next_deadline,
    .conn_new = fast_conn_new,
    .del = fast_del,
    .recv = fast_recv,
    .output = fast_output,
    .sent = fast_sent,
    .done = fast_done,
    .fatal = fast_fatal,
    .input_closed = fast_input_closed,
    .shutdown = fast_shutdown,
};
