/*
 * h2nghttp2.c - the HTTP/2 client engine over nghttp2's session (`h2bench load --engine
 * nghttp2`, h2b__h2_engine): the session behind h2conn.h's struct h2b__h2_session and nghttp2's
 * callbacks, which hand what the server sent to h2conn.h's hooks (the same checks and counts as
 * the fast framing's). The connection's life, slots, pacing and I/O are h2load.c's.
 *
 * nghttp2's HTTP checks are off (the option below): the ones that decide h2load's counts are
 * the hooks', once for both framings. Per worker: one set of callbacks and options, and the
 * worker's size-class pool as nghttp2's allocator.
 * Rejected: nghttp2's own writes from inside its callbacks (h2load's way): the frames are pulled
 * with nghttp2_session_mem_send into the connection's buffer, one write per loop turn.
 */
#include "load/h2conn.h"

#include "core/error.h"

#include <stdlib.h>

static ssize_t body_read(nghttp2_session *session, int32_t stream_id, uint8_t *buf, size_t length,
                         uint32_t *data_flags, nghttp2_data_source *source, void *user_data)
{
    (void)session;
    (void)stream_id;
    struct h2b__load_conn *c = user_data;
    struct slot *s = source->ptr;
    const struct h2b_load_config *cfg = c->w->sh->cfg;
    size_t n = cfg->body_len - s->body_off;
    if (n > length)
        n = length;
    memcpy(buf, cfg->body + s->body_off, n);
    s->body_off += n;
    if (s->body_off == cfg->body_len)
        *data_flags |= NGHTTP2_DATA_FLAG_EOF;
    return (ssize_t)n;
}

/* ---- nghttp2 callbacks ---------------------------------------------------------------- */

/* The slot of a stream: our direct map first (stream ids of one connection are 1, 3, 5, ...,
 * so in-flight ids rarely collide), nghttp2's stream map (a hash lookup that misses the cache
 * at many connections) only on a miss. */
static struct slot *slot_of(struct h2b__load_conn *c, nghttp2_session *session, int32_t id)
{
    struct slot *s = c->by_id ? c->by_id[((uint32_t)id >> 1) & c->id_mask] : NULL;
    if (s && s->stream_id == id)
        return s;
    return nghttp2_session_get_stream_user_data(session, id);
}

static int on_begin_headers(nghttp2_session *session, const nghttp2_frame *frame, void *user_data)
{
    struct h2b__load_conn *c = user_data;
    if (frame->hd.type != NGHTTP2_HEADERS ||
        (frame->headers.cat != NGHTTP2_HCAT_RESPONSE && frame->headers.cat != NGHTTP2_HCAT_HEADERS))
        return 0; /* every block of a response: interim, final and trailers */
    hook_begin_headers(c, slot_of(c, session, frame->hd.stream_id));
    return 0;
}

static int on_header(nghttp2_session *session, const nghttp2_frame *frame, const uint8_t *name,
                     size_t namelen, const uint8_t *value, size_t valuelen, uint8_t flags,
                     void *user_data)
{
    (void)flags;
    struct h2b__load_conn *c = user_data;
    if (frame->hd.type != NGHTTP2_HEADERS) {
        if (h2b__load_measuring(c->w))
            c->w->stats.bytes_headers_decomp += namelen + valuelen;
        return 0;
    }
    struct slot *s = slot_of(c, session, frame->hd.stream_id);
    if (s && s->stream_id != frame->hd.stream_id)
        s = NULL;
    /* broken: RST_STREAM, then stream close */
    return hook_header(c, s, name, namelen, value, valuelen) ? NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE
                                                             : 0;
}

static int on_frame_recv(nghttp2_session *session, const nghttp2_frame *frame, void *user_data)
{
    (void)session;
    struct h2b__load_conn *c = user_data;
    if (c->w->sh->cfg->verbose)
        h2b__h2_verbose_frame(c, "recv", &frame->hd);
    switch (frame->hd.type) {
    case NGHTTP2_HEADERS: {
        size_t len = frame->hd.length - frame->headers.padlen;
        if (frame->hd.flags & NGHTTP2_FLAG_PRIORITY)
            len -= 5;
        if (h2b__load_measuring(c->w))
            c->w->stats.bytes_headers += len;
        break;
    }
    case NGHTTP2_SETTINGS:
        if (!(frame->hd.flags & NGHTTP2_FLAG_ACK))
            h2b__h2_settings(c, nghttp2_session_get_remote_settings(
                                    c->session, NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS));
        break;
    case NGHTTP2_GOAWAY:
        c->draining = true;
        break;
    default:
        break;
    }
    return 0;
}

static int on_data_chunk(nghttp2_session *session, uint8_t flags, int32_t stream_id,
                         const uint8_t *data, size_t len, void *user_data)
{
    (void)flags;
    struct h2b__load_conn *c = user_data;
    struct slot *s = slot_of(c, session, stream_id);
    if (s && s->stream_id != stream_id)
        s = NULL;
    if (hook_data(c, s, data, len)) {
        nghttp2_submit_rst_stream(session, NGHTTP2_FLAG_NONE, stream_id, NGHTTP2_PROTOCOL_ERROR);
        mark_dirty(c);
    }
    return 0;
}

static int on_frame_send(nghttp2_session *session, const nghttp2_frame *frame, void *user_data)
{
    struct h2b__load_conn *c = user_data;
    if (c->w->sh->cfg->verbose)
        h2b__h2_verbose_frame(c, "send", &frame->hd);
    if (frame->hd.type == NGHTTP2_HEADERS && frame->headers.cat == NGHTTP2_HCAT_REQUEST) {
        struct slot *s = slot_of(c, session, frame->hd.stream_id);
        if (s)
            s->req.t_sent = c->w->now;
    } else if (frame->hd.type == NGHTTP2_GOAWAY && frame->goaway.error_code != NGHTTP2_NO_ERROR) {
        c->w->stats.conn_errors++; /* nghttp2 ended the connection: the server broke HTTP/2 */
    }
    return 0;
}

static int on_stream_close(nghttp2_session *session, int32_t stream_id, uint32_t error_code,
                           void *user_data)
{
    struct h2b__load_conn *c = user_data;
    struct slot *s = slot_of(c, session, stream_id);
    if (!s || s->stream_id != stream_id)
        return 0;
    h2b__h2_stream_close(c, s, error_code);
    return 0;
}

static int callbacks_new(nghttp2_session_callbacks **out)
{
    nghttp2_session_callbacks *cb;
    if (nghttp2_session_callbacks_new(&cb) != 0)
        return H2B_ERR_NOMEM;
    nghttp2_session_callbacks_set_on_begin_headers_callback(cb, on_begin_headers);
    nghttp2_session_callbacks_set_on_header_callback(cb, on_header);
    nghttp2_session_callbacks_set_on_frame_recv_callback(cb, on_frame_recv);
    nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, on_data_chunk);
    nghttp2_session_callbacks_set_on_frame_send_callback(cb, on_frame_send);
    nghttp2_session_callbacks_set_on_stream_close_callback(cb, on_stream_close);
    *out = cb;
    return H2B_OK;
}

/* ---- the session (struct h2b__h2_session) ---- */

static int ng_start(struct h2b__load_conn *c)
{
    const struct h2b_load_config *cfg = c->w->sh->cfg;
    struct h2w *hw = c->hw;
    if (nghttp2_session_client_new3(&c->session, hw->callbacks, c, hw->option, &hw->mem) != 0)
        return -1;
    nghttp2_settings_entry iv[4] = {
        {NGHTTP2_SETTINGS_ENABLE_PUSH, 0},
        {NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, (1U << cfg->window_bits) - 1},
        {NGHTTP2_SETTINGS_HEADER_TABLE_SIZE, cfg->header_table_size},
        {NGHTTP2_SETTINGS_MAX_FRAME_SIZE, cfg->max_frame_size},
    };
    int32_t cw = (int32_t)((1U << cfg->conn_window_bits) - 1);
    nghttp2_submit_settings(c->session, NGHTTP2_FLAG_NONE, iv, 4);
    if (cw > NGHTTP2_INITIAL_CONNECTION_WINDOW_SIZE)
        nghttp2_session_set_local_window_size(c->session, NGHTTP2_FLAG_NONE, 0, cw);
    return 0;
}

static void ng_del(struct h2b__load_conn *c)
{
    nghttp2_session_del(c->session);
    c->session = NULL;
}

static int32_t ng_submit(struct h2b__load_conn *c, struct slot *s, uint32_t u)
{
    const struct h2b__load_shared *sh = c->w->sh;
    nghttp2_data_provider prd = {.source.ptr = s, .read_callback = body_read};
    return nghttp2_submit_request(c->session, NULL, sh->proto->nva[u], sh->proto->nvlen[u],
                                  sh->cfg->body ? &prd : NULL, s);
}

static void ng_cancel(struct h2b__load_conn *c, int32_t stream_id)
{
    nghttp2_submit_rst_stream(c->session, NGHTTP2_FLAG_NONE, stream_id, NGHTTP2_CANCEL);
}

static ssize_t ng_recv(struct h2b__load_conn *c, const uint8_t *p, size_t n)
{
    return nghttp2_session_mem_recv(c->session, p, n);
}

static ssize_t ng_send(struct h2b__load_conn *c, const uint8_t **data)
{
    return nghttp2_session_mem_send(c->session, data);
}

static bool ng_want_write(const struct h2b__load_conn *c)
{
    return nghttp2_session_want_write(c->session);
}

/* nghttp2 has ended the session by itself (it sent GOAWAY for a protocol error, e.g. a
 * PUSH_PROMISE we disabled, or the server's GOAWAY left no stream): nothing more can be read
 * or sent. */
static bool ng_over(const struct h2b__load_conn *c)
{
    return !nghttp2_session_want_read(c->session) && !nghttp2_session_want_write(c->session);
}

static const struct h2b__h2_session session = {
    .start = ng_start,
    .del = ng_del,
    .submit = ng_submit,
    .cancel = ng_cancel,
    .recv = ng_recv,
    .send = ng_send,
    .want_write = ng_want_write,
    .over = ng_over,
};

/* ---- the engine ---- */

static int init(struct h2b__load_worker *w, uint32_t first_conn, uint64_t requests)
{
    int rv = h2b__h2_init(w, first_conn, requests, &session);
    struct h2w *hw = w->es;
    if (rv != H2B_OK)
        return rv;
    if (callbacks_new(&hw->callbacks) != H2B_OK || nghttp2_option_new(&hw->option) != 0)
        return H2B_ERR_NOMEM;
    /* We measure the server, we do not police it: skip nghttp2's HTTP semantic checks on every
     * header (framing and HPACK are still fully validated; h2conn.h's hooks make the checks
     * h2load counts with). */
    nghttp2_option_set_no_http_messaging(hw->option, 1);
    nghttp2_option_set_max_deflate_dynamic_table_size(hw->option, w->sh->cfg->encoder_table_size);
    return H2B_OK;
}

static void engine_free(struct h2b__load_worker *w)
{
    struct h2w *hw = w->es;
    nghttp2_session_callbacks *cb = hw ? hw->callbacks : NULL;
    nghttp2_option *opt = hw ? hw->option : NULL;
    h2b__h2_free(w); /* the sessions first: they hold the callbacks */
    if (cb)
        nghttp2_session_callbacks_del(cb);
    if (opt)
        nghttp2_option_del(opt);
}

const struct h2b__load_engine h2b__h2_engine = {H2B__H2_HOOKS, .init = init, .free = engine_free};
