/*
 * h2conn.c - see h2conn.h. The server side answers every complete request with a response
 * built from constant headers and a body read from a static buffer (copied by nghttp2's data
 * provider, as a simple server does). A stream's application state is taken from the pool in
 * on_begin_headers and returned in on_stream_close.
 */
#include "micro/benches/h2conn.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static const uint8_t body_bytes[16384] = {'h', '2', 'b'};

static void pool_init(struct h2c_conn *c)
{
    c->free_list = NULL;
    for (size_t i = H2C_POOL; i-- > 0;) {
        c->pool[i].next_free = c->free_list;
        c->free_list = &c->pool[i];
    }
}

static ssize_t read_body(nghttp2_session *session, int32_t id, uint8_t *buf, size_t length,
                         uint32_t *flags, nghttp2_data_source *source, void *user)
{
    (void)session;
    (void)id;
    struct h2c_conn *c = user;
    struct h2c_stream *s = source->ptr;
    if (s->body_left == 0) {
        if (c->body_mode == H2C_BODY_DEFERRED)
            return NGHTTP2_ERR_DEFERRED;
        *flags |= NGHTTP2_DATA_FLAG_EOF;
        return 0;
    }
    size_t n = length < s->body_left ? length : (size_t)s->body_left;
    if (n > sizeof body_bytes)
        n = sizeof body_bytes;
    memcpy(buf, body_bytes, n);
    s->body_left -= n;
    if (s->body_left == 0 && c->body_mode == H2C_BODY_FIXED)
        *flags |= NGHTTP2_DATA_FLAG_EOF;
    return (ssize_t)n;
}

static int respond(struct h2c_conn *c, struct h2c_stream *s)
{
    char len[24];
    snprintf(len, sizeof len, "%" PRIu64, c->response_body);
    nghttp2_nv nva[] = {
        {(uint8_t *)":status", (uint8_t *)"200", 7, 3, NGHTTP2_NV_FLAG_NONE},
        {(uint8_t *)"content-type", (uint8_t *)"application/octet-stream", 12, 24,
         NGHTTP2_NV_FLAG_NONE},
        {(uint8_t *)"content-length", (uint8_t *)len, 14, strlen(len), NGHTTP2_NV_FLAG_NONE},
        {(uint8_t *)"server", (uint8_t *)"h2bench", 6, 7, NGHTTP2_NV_FLAG_NONE},
    };
    size_t nvlen = c->body_mode == H2C_BODY_DEFERRED ? 2 : 4; /* streaming: no length */
    if (c->body_mode == H2C_BODY_DEFERRED)
        nva[1] = nva[3];
    s->body_left = c->body_mode == H2C_BODY_FIXED ? c->response_body : 0;
    nghttp2_data_provider prd = {.source = {.ptr = s}, .read_callback = read_body};
    return nghttp2_submit_response(c->session, s->id, nva, nvlen, &prd) == 0
               ? 0
               : NGHTTP2_ERR_CALLBACK_FAILURE;
}

static int on_begin_headers(nghttp2_session *session, const nghttp2_frame *frame, void *user)
{
    struct h2c_conn *c = user;
    if (frame->hd.type != NGHTTP2_HEADERS || frame->headers.cat != NGHTTP2_HCAT_REQUEST)
        return 0;
    struct h2c_stream *s = c->free_list;
    if (!s)
        return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE; /* pool exhausted: reset the stream */
    c->free_list = s->next_free;
    s->id = frame->hd.stream_id;
    s->body_left = 0;
    s->request_body = 0;
    return nghttp2_session_set_stream_user_data(session, s->id, s) == 0
               ? 0
               : NGHTTP2_ERR_CALLBACK_FAILURE;
}

static int on_data_chunk(nghttp2_session *session, uint8_t flags, int32_t id, const uint8_t *data,
                         size_t len, void *user)
{
    (void)flags;
    (void)data;
    (void)user;
    struct h2c_stream *s = nghttp2_session_get_stream_user_data(session, id);
    if (s)
        s->request_body += len;
    return 0;
}

static int on_frame_recv(nghttp2_session *session, const nghttp2_frame *frame, void *user)
{
    struct h2c_conn *c = user;
    if ((frame->hd.type != NGHTTP2_HEADERS && frame->hd.type != NGHTTP2_DATA) ||
        !(frame->hd.flags & NGHTTP2_FLAG_END_STREAM))
        return 0;
    struct h2c_stream *s = nghttp2_session_get_stream_user_data(session, frame->hd.stream_id);
    if (!s)
        return 0;
    c->requests++;
    return respond(c, s);
}

static int on_stream_close(nghttp2_session *session, int32_t id, uint32_t error_code, void *user)
{
    (void)error_code;
    struct h2c_conn *c = user;
    struct h2c_stream *s = nghttp2_session_get_stream_user_data(session, id);
    if (s) {
        s->next_free = c->free_list;
        c->free_list = s;
    }
    c->closed++;
    return 0;
}

int h2c_feed(struct h2c_conn *c, const uint8_t *p, size_t len)
{
    ssize_t n = nghttp2_session_mem_recv(c->session, p, len);
    return n == (ssize_t)len ? 0 : -1;
}

int h2c_drain(struct h2c_conn *c)
{
    for (;;) {
        const uint8_t *data;
        ssize_t n = nghttp2_session_mem_send(c->session, &data);
        if (n < 0)
            return -1;
        if (n == 0)
            return 0;
        c->out_bytes += (uint64_t)n;
    }
}

int h2c_push_body(struct h2c_conn *c, int32_t id, uint64_t len)
{
    struct h2c_stream *s = nghttp2_session_get_stream_user_data(c->session, id);
    if (!s)
        return -1;
    s->body_left += len;
    return nghttp2_session_resume_data(c->session, id) == 0 ? 0 : -1;
}

void h2c_frame_header(uint8_t *out, uint32_t len, uint8_t type, uint8_t flags, int32_t stream)
{
    out[0] = (uint8_t)(len >> 16);
    out[1] = (uint8_t)(len >> 8);
    out[2] = (uint8_t)len;
    out[3] = type;
    out[4] = flags;
    h2c_set_stream(out, stream);
}

void h2c_set_stream(uint8_t *frame, int32_t stream)
{
    uint32_t s = (uint32_t)stream & 0x7fffffffu;
    frame[5] = (uint8_t)(s >> 24);
    frame[6] = (uint8_t)(s >> 16);
    frame[7] = (uint8_t)(s >> 8);
    frame[8] = (uint8_t)s;
}

void h2c_window_update(uint8_t *out, int32_t stream, uint32_t increment)
{
    h2c_frame_header(out, 4, NGHTTP2_WINDOW_UPDATE, 0, stream);
    out[9] = (uint8_t)((increment >> 24) & 0x7f);
    out[10] = (uint8_t)(increment >> 16);
    out[11] = (uint8_t)(increment >> 8);
    out[12] = (uint8_t)increment;
}

/* HPACK integer with an n-bit prefix; first carries the pattern bits above the prefix. */
static size_t hpack_int(uint8_t *out, size_t size, uint8_t first, unsigned prefix, uint64_t v)
{
    uint64_t max = (1u << prefix) - 1;
    size_t n = 0;
    if (size == 0)
        return 0;
    if (v < max) {
        out[n++] = (uint8_t)(first | v);
        return n;
    }
    out[n++] = (uint8_t)(first | max);
    v -= max;
    while (v >= 128) {
        if (n == size)
            return 0;
        out[n++] = (uint8_t)(0x80 | (v & 0x7f));
        v >>= 7;
    }
    if (n == size)
        return 0;
    out[n++] = (uint8_t)v;
    return n;
}

size_t h2c_hpack_indexed(uint8_t *out, size_t size, unsigned index)
{
    return hpack_int(out, size, 0x80, 7, index);
}

size_t h2c_hpack_literal(uint8_t *out, size_t size, unsigned name_index, const char *value)
{
    size_t vlen = strlen(value);
    size_t a = hpack_int(out, size, 0x00, 4, name_index); /* literal without indexing */
    if (a == 0)
        return 0;
    size_t b = hpack_int(out + a, size - a, 0x00, 7, vlen); /* no Huffman */
    if (b == 0 || a + b + vlen > size)
        return 0;
    memcpy(out + a + b, value, vlen);
    return a + b + vlen;
}

size_t h2c_request_headers(uint8_t *out, size_t size, const char *method, const char *path,
                           uint64_t post_len)
{
    /* static table: 2 :method GET, 3 :method POST, 7 :scheme https, 1 :authority, 4 :path,
     * 58 user-agent, 19 accept, 16 accept-encoding "gzip, deflate", 28 content-length,
     * 31 content-type */
    if (size < 9)
        return 0;
    uint8_t *p = out + 9, *end = out + size;
    size_t n;
    bool post = strcmp(method, "POST") == 0;
#define PUT(expr)                                                                                  \
    do {                                                                                           \
        if ((n = (expr)) == 0)                                                                     \
            return 0;                                                                              \
        p += n;                                                                                    \
    } while (0)
    PUT(h2c_hpack_indexed(p, (size_t)(end - p), post ? 3 : 2));
    PUT(h2c_hpack_indexed(p, (size_t)(end - p), 7));
    PUT(h2c_hpack_literal(p, (size_t)(end - p), 1, "bench.example"));
    PUT(h2c_hpack_literal(p, (size_t)(end - p), 4, path));
    PUT(h2c_hpack_literal(p, (size_t)(end - p), 58, "h2bench-client/0.1"));
    PUT(h2c_hpack_literal(p, (size_t)(end - p), 19, "*/*"));
    PUT(h2c_hpack_indexed(p, (size_t)(end - p), 16));
    if (post) {
        char len[24];
        snprintf(len, sizeof len, "%" PRIu64, post_len);
        PUT(h2c_hpack_literal(p, (size_t)(end - p), 28, len));
        PUT(h2c_hpack_literal(p, (size_t)(end - p), 31, "application/octet-stream"));
    }
#undef PUT
    size_t block = (size_t)(p - out) - 9;
    uint8_t flags = NGHTTP2_FLAG_END_HEADERS | (post ? 0 : NGHTTP2_FLAG_END_STREAM);
    h2c_frame_header(out, (uint32_t)block, NGHTTP2_HEADERS, flags, 1);
    return (size_t)(p - out);
}

int h2c_open(struct h2c_conn *c, uint32_t initial_window, uint64_t response_body,
             enum h2c_body mode)
{
    memset(c, 0, sizeof *c);
    pool_init(c);
    c->response_body = response_body;
    c->body_mode = mode;
    c->next_stream_id = 1;
    nghttp2_session_callbacks *cbs;
    nghttp2_option *opt;
    if (nghttp2_session_callbacks_new(&cbs) != 0)
        return -1;
    if (nghttp2_option_new(&opt) != 0) {
        nghttp2_session_callbacks_del(cbs);
        return -1;
    }
    nghttp2_session_callbacks_set_on_begin_headers_callback(cbs, on_begin_headers);
    nghttp2_session_callbacks_set_on_frame_recv_callback(cbs, on_frame_recv);
    nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cbs, on_data_chunk);
    nghttp2_session_callbacks_set_on_stream_close_callback(cbs, on_stream_close);
    nghttp2_option_set_no_closed_streams(opt, 1);
    int rv = nghttp2_session_server_new2(&c->session, cbs, c, opt);
    nghttp2_session_callbacks_del(cbs);
    nghttp2_option_del(opt);
    if (rv != 0)
        return -1;
    nghttp2_settings_entry iv[] = {{NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, H2C_POOL}};
    if (nghttp2_submit_settings(c->session, NGHTTP2_FLAG_NONE, iv, 1) != 0)
        goto fail;

    uint8_t pre[128];
    size_t n = 0;
    memcpy(pre, NGHTTP2_CLIENT_MAGIC, NGHTTP2_CLIENT_MAGIC_LEN);
    n += NGHTTP2_CLIENT_MAGIC_LEN;
    h2c_frame_header(pre + n, 12, NGHTTP2_SETTINGS, 0, 0);
    n += 9;
    const uint16_t ids[2] = {NGHTTP2_SETTINGS_ENABLE_PUSH, NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE};
    const uint32_t vals[2] = {0, initial_window};
    for (int i = 0; i < 2; i++) {
        pre[n++] = (uint8_t)(ids[i] >> 8);
        pre[n++] = (uint8_t)ids[i];
        pre[n++] = (uint8_t)(vals[i] >> 24);
        pre[n++] = (uint8_t)(vals[i] >> 16);
        pre[n++] = (uint8_t)(vals[i] >> 8);
        pre[n++] = (uint8_t)vals[i];
    }
    h2c_window_update(pre + n, 0, (1u << 30) - 65535);
    n += 13;
    if (h2c_feed(c, pre, n) != 0 || h2c_drain(c) != 0)
        goto fail;
    h2c_frame_header(pre, 0, NGHTTP2_SETTINGS, NGHTTP2_FLAG_ACK, 0);
    if (h2c_feed(c, pre, 9) != 0 || h2c_drain(c) != 0)
        goto fail;
    return 0;
fail:
    nghttp2_session_del(c->session);
    c->session = NULL;
    return -1;
}

void h2c_close(struct h2c_conn *c)
{
    nghttp2_session_del(c->session);
    c->session = NULL;
}
