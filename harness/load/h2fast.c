/*
 * h2fast.c - HTTP/2 client framing for `h2bench load --engine fast`: our own frame reader and
 * writer, libnghttp2's HPACK decoder, no nghttp2_session.
 *
 * What: everything a load client needs from HTTP/2 and nothing else. Requests go out as
 * prebuilt header blocks; responses come in through an incremental frame reader that handles
 * any split of the byte stream (a frame header, a padding length or a SETTINGS entry may end
 * in one read and continue in the next). Handled: SETTINGS (applied, ACKed), SETTINGS ACK
 * (our HEADER_TABLE_SIZE takes effect in the decoder then), PING (ACKed), WINDOW_UPDATE and
 * flow control in both directions on the connection and every stream (ours: WINDOW_UPDATE
 * once half a window is consumed, padding included; theirs: request bodies wait for window,
 * INITIAL_WINDOW_SIZE changes mid-connection move every open stream's window), GOAWAY
 * (streams above its last-stream-id are closed with REFUSED_STREAM), RST_STREAM,
 * CONTINUATION, padding on DATA and HEADERS, PRIORITY (ignored), unknown frame types
 * (ignored). The server's MAX_FRAME_SIZE bounds what we send (a large block is split into
 * CONTINUATION frames, bodies into DATA frames); its MAX_CONCURRENT_STREAMS is read by the
 * caller; its HEADER_TABLE_SIZE needs nothing from us (our blocks use no dynamic table).
 * Violations are connection errors (RFC 9113 section 5.4.1): we queue GOAWAY with the code
 * (PROTOCOL_ERROR, FRAME_SIZE_ERROR, FLOW_CONTROL_ERROR, COMPRESSION_ERROR), count it and the
 * connection ends; among them a first frame that is not SETTINGS, PUSH_PROMISE (we disable
 * push), frames on idle streams, an interleaved header block, oversized frames, bad padding,
 * DATA beyond a window, window overflow, a zero increment, a bad SETTINGS value.
 *
 * Request header blocks: each distinct request (one per URI) is encoded once, before the run,
 * by nghttp2_hd_deflate with a dynamic table of size 0: exact static-table matches become
 * indexed fields (":method: GET" is one byte), everything else a literal *without indexing*
 * (Huffman-coded where shorter). Such a block neither reads nor changes the server's decoder
 * table, so the same bytes are valid on every connection, at any point, forever: sending a
 * request is a 9-byte frame header and a memcpy. h2b_h2f_encode checks that property by
 * decoding the block (table still static-only). Rejected: a per-connection deflater whose
 * dynamic table indexes :authority and user-agent after the first request (what nghttp2 does;
 * ~20 fewer bytes per request) - the block then differs between the first and later requests
 * of each URI and between connections, and staying exact needs a deflate per request (the cost
 * we are removing) or tracking table state per connection; the few bytes are cheaper. The
 * server decodes a few literals per request instead of indexed fields: a difference from
 * h2load that docs/load.md states.
 *
 * Memory: per connection the output buffer (grows to the largest burst, then stays), the
 * per-slot stream array and an id map; nothing is allocated per request or per frame. Stream
 * ids map to slots through a direct table indexed by (id >> 1) (ids of one connection are
 * 1, 3, 5, ..., so in-flight ids rarely collide); a miss scans the slots.
 *
 * Rejected: nghttp2_session with fewer callbacks (its per-stream allocation, priority tree
 * and frame queue are what the issue measured); a full HTTP/2 state machine (server push,
 * priorities, server role) - a load client needs none.
 */
#include "h2fast.h"

#include "error.h"

#include <stdlib.h>
#include <string.h>

enum {
    F_DATA = 0,
    F_HEADERS = 1,
    F_PRIORITY = 2,
    F_RST = 3,
    F_SETTINGS = 4,
    F_PUSH = 5,
    F_PING = 6,
    F_GOAWAY = 7,
    F_WINUP = 8,
    F_CONT = 9
};
enum { FL_END_STREAM = 0x1, FL_ACK = 0x1, FL_END_HEADERS = 0x4, FL_PADDED = 0x8, FL_PRIO = 0x20 };
enum {
    E_NO_ERROR = 0,
    E_PROTOCOL = 1,
    E_FLOW = 3,
    E_STREAM_CLOSED = 5,
    E_FRAME_SIZE = 6,
    E_REFUSED = 7,
    E_CANCEL = 8,
    E_COMPRESSION = 9
};

#define MAX_WINDOW 0x7fffffffL
#define DEFAULT_WINDOW 65535U

static const uint8_t preface[] = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

static uint32_t get32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* ---- output ---------------------------------------------------------------------------- */

static uint8_t *reserve(struct h2b_h2f *f, size_t n)
{
    if (f->ooff == f->olen)
        f->ooff = f->olen = 0;
    if (f->olen + n > f->ocap) {
        size_t cap = f->ocap ? f->ocap : 4096;
        while (cap < f->olen + n)
            cap *= 2;
        uint8_t *nb = realloc(f->out, cap);
        if (!nb) {
            f->nomem = true;
            return NULL;
        }
        f->out = nb;
        f->ocap = cap;
    }
    uint8_t *p = f->out + f->olen;
    f->olen += n;
    return p;
}

/* Appends a frame header and reserves len payload bytes (returned). */
static uint8_t *frame(struct h2b_h2f *f, uint8_t type, uint8_t flags, int32_t sid, size_t len)
{
    uint8_t *p = reserve(f, 9 + len);
    if (!p)
        return NULL;
    p[0] = (uint8_t)(len >> 16);
    p[1] = (uint8_t)(len >> 8);
    p[2] = (uint8_t)len;
    p[3] = type;
    p[4] = flags;
    p[5] = (uint8_t)((uint32_t)sid >> 24);
    p[6] = (uint8_t)((uint32_t)sid >> 16);
    p[7] = (uint8_t)((uint32_t)sid >> 8);
    p[8] = (uint8_t)sid;
    if (f->cb->frame)
        f->cb->frame(f->u, true, type, flags, (uint32_t)len, sid);
    return p + 9;
}

static void put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

static void send_u32(struct h2b_h2f *f, uint8_t type, int32_t sid, uint32_t v)
{
    uint8_t *p = frame(f, type, 0, sid, 4);
    if (p)
        put32(p, v);
}

/* A connection error: GOAWAY with code, then nothing more is read or sent. */
static int conn_error(struct h2b_h2f *f, uint32_t code)
{
    if (f->dead)
        return -1;
    uint8_t *p = frame(f, F_GOAWAY, 0, 0, 8);
    if (p) {
        put32(p, 0); /* we process no server-initiated stream */
        put32(p + 4, code);
    }
    f->dead = true;
    f->error = code;
    f->conn_errors++;
    return -1;
}

/* ---- streams --------------------------------------------------------------------------- */

static uint32_t slot_of(const struct h2b_h2f *f, int32_t sid)
{
    uint32_t k = f->map ? f->map[((uint32_t)sid >> 1) & f->map_mask] : 0;
    if (k && f->st[k - 1].sid == sid)
        return k - 1;
    for (uint32_t i = 0; i < f->nst; i++)
        if (f->st[i].sid == sid)
            return i;
    return H2B_H2F_NO_SLOT;
}

/* Removes slot's stream and tells the caller (who may submit a new one on it at once). */
static void close_stream(struct h2b_h2f *f, uint32_t slot, uint32_t code)
{
    struct h2b_h2f_stream *s = &f->st[slot];
    if (s->sid == 0)
        return;
    if (s->body_pending)
        f->npending--;
    s->sid = 0;
    s->body_pending = false;
    f->nopen--;
    f->cb->stream_close(f->u, slot, code);
}

/* Sends as much of the pending request bodies as the windows allow. */
static void pump(struct h2b_h2f *f)
{
    for (uint32_t i = 0; i < f->nst && f->npending > 0 && f->send_conn_window > 0; i++) {
        struct h2b_h2f_stream *s = &f->st[i];
        while (s->body_pending && s->send_window > 0 && f->send_conn_window > 0) {
            size_t n = f->body_len - s->body_off;
            if (n > f->peer_max_frame)
                n = f->peer_max_frame;
            if (n > (size_t)s->send_window)
                n = (size_t)s->send_window;
            if (n > (size_t)f->send_conn_window)
                n = (size_t)f->send_conn_window;
            bool last = s->body_off + n == f->body_len;
            uint8_t *p = frame(f, F_DATA, last ? FL_END_STREAM : 0, s->sid, n);
            if (!p)
                return;
            memcpy(p, f->body + s->body_off, n);
            s->body_off += n;
            s->send_window -= (int32_t)n;
            f->send_conn_window -= (int64_t)n;
            if (last) {
                s->body_pending = false;
                f->npending--;
            }
        }
    }
}

/* ---- set-up ---------------------------------------------------------------------------- */

int h2b_h2f_encode(const nghttp2_nv *nva, size_t nvlen, uint8_t **out, size_t *outlen)
{
    nghttp2_hd_deflater *d = NULL;
    nghttp2_hd_inflater *inf = NULL;
    if (nghttp2_hd_deflate_new(&d, 0) != 0)
        return H2B_ERR_NOMEM;
    size_t cap = nghttp2_hd_deflate_bound(d, nva, nvlen);
    uint8_t *buf = malloc(cap);
    int rv = H2B_ERR_NOMEM;
    if (!buf)
        goto out;
    /* the first block carries the table size update to 0; the second is the steady one */
    ssize_t n = nghttp2_hd_deflate_hd(d, buf, cap, nva, nvlen);
    if (n >= 0)
        n = nghttp2_hd_deflate_hd(d, buf, cap, nva, nvlen);
    rv = H2B_ERR_PROTO;
    if (n < 0)
        goto out;
    /* check: the block decodes to the same fields and leaves a fresh decoder's table empty */
    if (nghttp2_hd_inflate_new(&inf) != 0) {
        rv = H2B_ERR_NOMEM;
        goto out;
    }
    size_t off = 0, fields = 0;
    for (;;) {
        nghttp2_nv nv;
        int fl = 0;
        ssize_t k = nghttp2_hd_inflate_hd2(inf, &nv, &fl, buf + off, (size_t)n - off, 1);
        if (k < 0)
            goto out;
        off += (size_t)k;
        if (fl & NGHTTP2_HD_INFLATE_EMIT) {
            if (fields >= nvlen || nv.namelen != nva[fields].namelen ||
                nv.valuelen != nva[fields].valuelen ||
                memcmp(nv.name, nva[fields].name, nv.namelen) != 0 ||
                memcmp(nv.value, nva[fields].value, nv.valuelen) != 0)
                goto out;
            fields++;
        }
        if (fl & NGHTTP2_HD_INFLATE_FINAL)
            break;
        if (k == 0 && off == (size_t)n)
            goto out;
    }
    if (fields != nvlen || nghttp2_hd_inflate_get_dynamic_table_size(inf) != 0)
        goto out;
    *out = buf;
    *outlen = (size_t)n;
    buf = NULL;
    rv = H2B_OK;
out:
    free(buf);
    if (inf)
        nghttp2_hd_inflate_del(inf);
    nghttp2_hd_deflate_del(d);
    return rv;
}

int h2b_h2f_init(struct h2b_h2f *f, const struct h2b_h2f_cb *cb, void *u, nghttp2_mem *mem,
                 const uint8_t *body, size_t body_len)
{
    memset(f, 0, sizeof(*f));
    f->cb = cb;
    f->u = u;
    f->mem = mem;
    f->body = body;
    f->body_len = body_len;
    f->ocap = 4096;
    f->out = malloc(f->ocap);
    return f->out ? H2B_OK : H2B_ERR_NOMEM;
}

void h2b_h2f_free(struct h2b_h2f *f)
{
    if (f->inf)
        nghttp2_hd_inflate_del(f->inf);
    free(f->out);
    free(f->st);
    free(f->map);
    memset(f, 0, sizeof(*f));
}

int h2b_h2f_slots(struct h2b_h2f *f, uint32_t n)
{
    uint32_t m = 4;
    while (m < 4 * (uint64_t)n && m < (1U << 20))
        m *= 2;
    struct h2b_h2f_stream *st = calloc(n ? n : 1, sizeof(*st));
    uint32_t *map = calloc(m, sizeof(*map));
    if (!st || !map) {
        free(st);
        free(map);
        return H2B_ERR_NOMEM;
    }
    free(f->st);
    free(f->map);
    f->st = st;
    f->nst = n;
    f->map = map;
    f->map_mask = m - 1;
    f->nopen = f->npending = 0;
    return H2B_OK;
}

int h2b_h2f_start(struct h2b_h2f *f, const struct h2b_h2f_settings *s)
{
    if (f->inf)
        nghttp2_hd_inflate_del(f->inf);
    f->inf = NULL;
    if (nghttp2_hd_inflate_new2(&f->inf, f->mem) != 0)
        return H2B_ERR_NOMEM;
    f->local = *s;
    for (uint32_t i = 0; i < f->nst; i++)
        f->st[i].sid = 0;
    f->nopen = f->npending = 0;
    f->ooff = f->olen = 0;
    f->peer_max_streams = UINT32_MAX;
    f->peer_window = DEFAULT_WINDOW;
    f->peer_max_frame = 16384;
    f->peer_table = 4096;
    f->send_conn_window = DEFAULT_WINDOW;
    f->recv_conn_unacked = 0;
    f->next_sid = 1;
    f->got_settings = f->acked = f->goaway = f->dead = f->nomem = false;
    f->error = 0;
    f->hn = 0;
    f->in_payload = false;
    f->hdr_sid = 0;
    f->hdr_cont = false;
    uint8_t *p = reserve(f, sizeof(preface) - 1);
    if (!p)
        return H2B_ERR_NOMEM;
    memcpy(p, preface, sizeof(preface) - 1);
    /* the same SETTINGS, in the same order, as the nghttp2 engine sends */
    static const uint16_t ids[4] = {
        NGHTTP2_SETTINGS_ENABLE_PUSH, NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE,
        NGHTTP2_SETTINGS_HEADER_TABLE_SIZE, NGHTTP2_SETTINGS_MAX_FRAME_SIZE};
    uint32_t vals[4] = {0, s->initial_window, s->header_table, s->max_frame};
    p = frame(f, F_SETTINGS, 0, 0, 24);
    if (!p)
        return H2B_ERR_NOMEM;
    for (int i = 0; i < 4; i++) {
        p[6 * i] = (uint8_t)(ids[i] >> 8);
        p[6 * i + 1] = (uint8_t)ids[i];
        put32(p + 6 * i + 2, vals[i]);
    }
    if (s->conn_window > DEFAULT_WINDOW)
        send_u32(f, F_WINUP, 0, s->conn_window - DEFAULT_WINDOW);
    return f->nomem ? H2B_ERR_NOMEM : H2B_OK;
}

/* ---- requests -------------------------------------------------------------------------- */

int32_t h2b_h2f_submit(struct h2b_h2f *f, uint32_t slot, const uint8_t *block, size_t blen)
{
    if (f->dead || f->goaway || f->next_sid < 0 || slot >= f->nst || f->st[slot].sid != 0)
        return -1;
    int32_t sid = f->next_sid;
    f->next_sid = sid <= 0x7ffffffd ? sid + 2 : -1;
    uint8_t end = f->body_len ? 0 : FL_END_STREAM;
    size_t first = blen < f->peer_max_frame ? blen : f->peer_max_frame;
    uint8_t *p =
        frame(f, F_HEADERS, (uint8_t)(end | (first == blen ? FL_END_HEADERS : 0)), sid, first);
    if (!p)
        return -1;
    memcpy(p, block, first);
    for (size_t off = first; off < blen;) {
        size_t n = blen - off < f->peer_max_frame ? blen - off : f->peer_max_frame;
        p = frame(f, F_CONT, off + n == blen ? FL_END_HEADERS : 0, sid, n);
        if (!p)
            return -1;
        memcpy(p, block + off, n);
        off += n;
    }
    struct h2b_h2f_stream *s = &f->st[slot];
    s->sid = sid;
    s->send_window = (int32_t)f->peer_window;
    s->recv_unacked = 0;
    s->body_off = 0;
    s->got_headers = false;
    s->body_pending = f->body_len > 0;
    f->map[((uint32_t)sid >> 1) & f->map_mask] = slot + 1;
    f->nopen++;
    if (s->body_pending) {
        f->npending++;
        pump(f);
    }
    return sid;
}

void h2b_h2f_reset(struct h2b_h2f *f, uint32_t slot, uint32_t code)
{
    if (slot >= f->nst || f->st[slot].sid == 0)
        return;
    if (!f->dead)
        send_u32(f, F_RST, f->st[slot].sid, code);
    close_stream(f, slot, code);
}

/* ---- reading --------------------------------------------------------------------------- */

/* The stream of an incoming frame: its slot, NO_SLOT for one we closed; an idle stream (never
 * opened by us, or even: server-initiated) is a connection error. */
static int frame_stream(struct h2b_h2f *f, uint32_t *slot)
{
    int32_t sid = f->fsid;
    if ((sid & 1) == 0 || (f->next_sid > 0 && sid >= f->next_sid))
        return conn_error(f, E_PROTOCOL);
    *slot = slot_of(f, sid);
    return 0;
}

/* Checks a frame header and decides how many prefix bytes its payload starts with. */
static int frame_begin(struct h2b_h2f *f)
{
    uint8_t t = f->ftype, fl = f->fflags;
    uint32_t len = f->flen;
    if (f->cb->frame)
        f->cb->frame(f->u, false, t, fl, len, f->fsid);
    f->preneed = 0;
    f->pren = 0;
    f->fbody_end = len;
    f->fslot = H2B_H2F_NO_SLOT;
    if (len > f->local.max_frame)
        return conn_error(f, E_FRAME_SIZE);
    if (!f->got_settings && !(t == F_SETTINGS && !(fl & FL_ACK)))
        return conn_error(f, E_PROTOCOL); /* the server's preface is a SETTINGS frame */
    if (f->hdr_cont && (t != F_CONT || f->fsid != f->hdr_sid))
        return conn_error(f, E_PROTOCOL);
    switch (t) {
    case F_DATA:
        if (f->fsid == 0)
            return conn_error(f, E_PROTOCOL);
        if (frame_stream(f, &f->fslot) < 0)
            return -1;
        /* connection flow control counts the whole payload, padding included */
        {
            uint64_t avail =
                f->local.conn_window > DEFAULT_WINDOW ? f->local.conn_window : DEFAULT_WINDOW;
            if ((uint64_t)f->recv_conn_unacked + len > avail)
                return conn_error(f, E_FLOW);
            f->recv_conn_unacked += len;
            if (f->fslot != H2B_H2F_NO_SLOT) {
                struct h2b_h2f_stream *s = &f->st[f->fslot];
                uint64_t sw = f->acked || f->local.initial_window > DEFAULT_WINDOW
                                  ? f->local.initial_window
                                  : DEFAULT_WINDOW;
                if ((uint64_t)s->recv_unacked + len > sw)
                    return conn_error(f, E_FLOW);
                s->recv_unacked += len;
                if (!s->got_headers)
                    return conn_error(f, E_PROTOCOL); /* DATA before the response HEADERS */
            }
        }
        f->preneed = fl & FL_PADDED ? 1 : 0;
        if (len < f->preneed)
            return conn_error(f, E_FRAME_SIZE);
        return 0;
    case F_HEADERS:
        if (f->fsid == 0)
            return conn_error(f, E_PROTOCOL);
        if (frame_stream(f, &f->fslot) < 0)
            return -1;
        f->preneed = (uint8_t)((fl & FL_PADDED ? 1 : 0) + (fl & FL_PRIO ? 5 : 0));
        if (len < f->preneed)
            return conn_error(f, E_FRAME_SIZE);
        f->hdr_sid = f->fsid;
        f->hdr_slot = f->fslot;
        f->hdr_end_stream = (fl & FL_END_STREAM) != 0;
        f->hdr_cont = !(fl & FL_END_HEADERS);
        if (f->fslot != H2B_H2F_NO_SLOT) {
            f->st[f->fslot].got_headers = true;
            f->cb->begin_headers(f->u, f->fslot);
        }
        return 0;
    case F_CONT:
        if (!f->hdr_cont)
            return conn_error(f, E_PROTOCOL);
        f->hdr_cont = !(fl & FL_END_HEADERS);
        return 0;
    case F_PRIORITY:
        if (f->fsid == 0)
            return conn_error(f, E_PROTOCOL);
        if (len != 5)
            return conn_error(f, E_FRAME_SIZE);
        f->fbody_end = 0; /* ignored */
        return 0;
    case F_RST:
        if (f->fsid == 0)
            return conn_error(f, E_PROTOCOL);
        if (len != 4)
            return conn_error(f, E_FRAME_SIZE);
        if (frame_stream(f, &f->fslot) < 0)
            return -1;
        f->preneed = 4;
        return 0;
    case F_SETTINGS:
        if (f->fsid != 0)
            return conn_error(f, E_PROTOCOL);
        if ((fl & FL_ACK) ? len != 0 : len % 6 != 0)
            return conn_error(f, E_FRAME_SIZE);
        return 0;
    case F_PUSH:
        return conn_error(f, E_PROTOCOL); /* SETTINGS_ENABLE_PUSH is 0 */
    case F_PING:
        if (f->fsid != 0)
            return conn_error(f, E_PROTOCOL);
        if (len != 8)
            return conn_error(f, E_FRAME_SIZE);
        f->preneed = 8;
        return 0;
    case F_GOAWAY:
        if (f->fsid != 0)
            return conn_error(f, E_PROTOCOL);
        if (len < 8)
            return conn_error(f, E_FRAME_SIZE);
        f->preneed = 8;
        return 0;
    case F_WINUP:
        if (len != 4)
            return conn_error(f, E_FRAME_SIZE);
        if (f->fsid != 0 && frame_stream(f, &f->fslot) < 0)
            return -1;
        f->preneed = 4;
        return 0;
    default:
        return 0; /* unknown types are ignored (RFC 9113 section 4.1) */
    }
}

/* The prefix is complete: padding lengths, fixed-size payloads. */
static int prefix_done(struct h2b_h2f *f)
{
    if (f->ftype == F_DATA || f->ftype == F_HEADERS) {
        uint32_t pad = (f->fflags & FL_PADDED) ? f->pre[0] : 0;
        if (pad > f->flen - f->preneed)
            return conn_error(f, E_PROTOCOL);
        f->fbody_end = f->flen - pad;
    } else if (f->ftype == F_GOAWAY) {
        f->fbody_end = f->flen; /* the debug data is skipped */
    }
    return 0;
}

static int apply_setting(struct h2b_h2f *f, const uint8_t *e)
{
    uint16_t id = (uint16_t)(e[0] << 8 | e[1]);
    uint32_t v = get32(e + 2);
    switch (id) {
    case NGHTTP2_SETTINGS_HEADER_TABLE_SIZE:
        f->peer_table = v; /* our blocks use no dynamic table: any size is obeyed */
        return 0;
    case NGHTTP2_SETTINGS_ENABLE_PUSH:
        return v > 1 ? conn_error(f, E_PROTOCOL) : 0;
    case NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS:
        f->peer_max_streams = v;
        return 0;
    case NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE: {
        if (v > MAX_WINDOW)
            return conn_error(f, E_FLOW);
        int64_t delta = (int64_t)v - (int64_t)f->peer_window;
        for (uint32_t i = 0; i < f->nst; i++) {
            struct h2b_h2f_stream *s = &f->st[i];
            if (s->sid == 0)
                continue;
            if ((int64_t)s->send_window + delta > MAX_WINDOW)
                return conn_error(f, E_FLOW);
            s->send_window = (int32_t)((int64_t)s->send_window + delta);
        }
        f->peer_window = v;
        return 0;
    }
    case NGHTTP2_SETTINGS_MAX_FRAME_SIZE:
        if (v < 16384 || v > 16777215)
            return conn_error(f, E_PROTOCOL);
        f->peer_max_frame = v;
        return 0;
    default:
        return 0;
    }
}

/* Payload bytes after the prefix, up to fbody_end. */
static int frame_chunk(struct h2b_h2f *f, const uint8_t *p, size_t n, bool final)
{
    switch (f->ftype) {
    case F_DATA: {
        uint32_t slot = f->fslot;
        int rv = f->cb->data(f->u, slot, n);
        if (rv != 0 && slot != H2B_H2F_NO_SLOT && f->st[slot].sid == f->fsid) {
            h2b_h2f_reset(f, slot, E_PROTOCOL);
            f->fslot = H2B_H2F_NO_SLOT;
        }
        return 0;
    }
    case F_HEADERS:
    case F_CONT: {
        bool in_final = final && !f->hdr_cont;
        while (n > 0 || in_final) {
            nghttp2_nv nv;
            int fl = 0;
            ssize_t k = nghttp2_hd_inflate_hd2(f->inf, &nv, &fl, p, n, in_final);
            if (k < 0)
                return conn_error(f, E_COMPRESSION);
            p += k;
            n -= (size_t)k;
            if (fl & NGHTTP2_HD_INFLATE_EMIT) {
                uint32_t slot = f->hdr_slot;
                if (slot != H2B_H2F_NO_SLOT && f->st[slot].sid != f->hdr_sid)
                    slot = f->hdr_slot = H2B_H2F_NO_SLOT;
                if (f->cb->header(f->u, slot, nv.name, nv.namelen, nv.value, nv.valuelen) != 0 &&
                    slot != H2B_H2F_NO_SLOT && f->st[slot].sid == f->hdr_sid) {
                    h2b_h2f_reset(f, slot, E_PROTOCOL);
                    f->hdr_slot = H2B_H2F_NO_SLOT;
                }
                if (f->dead)
                    return -1;
            }
            if (fl & NGHTTP2_HD_INFLATE_FINAL) {
                nghttp2_hd_inflate_end_headers(f->inf);
                if (n > 0)
                    return conn_error(f, E_COMPRESSION);
                break;
            }
            if (k == 0 && !(fl & NGHTTP2_HD_INFLATE_EMIT)) {
                if (in_final)
                    return conn_error(f, E_COMPRESSION); /* truncated block */
                break;
            }
        }
        return 0;
    }
    case F_SETTINGS:
        while (n > 0) {
            size_t k = 6 - (size_t)f->pren < n ? 6 - (size_t)f->pren : n;
            memcpy(f->pre + f->pren, p, k);
            f->pren = (uint8_t)(f->pren + k);
            p += k;
            n -= k;
            if (f->pren == 6) {
                f->pren = 0;
                if (apply_setting(f, f->pre) < 0)
                    return -1;
            }
        }
        return 0;
    default:
        return 0;
    }
}

static int frame_end(struct h2b_h2f *f)
{
    switch (f->ftype) {
    case F_DATA: {
        uint32_t half =
            f->local.conn_window > DEFAULT_WINDOW ? f->local.conn_window / 2 : DEFAULT_WINDOW / 2;
        if (f->recv_conn_unacked >= half) {
            send_u32(f, F_WINUP, 0, f->recv_conn_unacked);
            f->recv_conn_unacked = 0;
        }
        uint32_t slot = f->fslot;
        if (slot == H2B_H2F_NO_SLOT || f->st[slot].sid != f->fsid)
            return 0;
        if (f->fflags & FL_END_STREAM) {
            close_stream(f, slot, E_NO_ERROR);
        } else if (f->st[slot].recv_unacked >= f->local.initial_window / 2 &&
                   f->st[slot].recv_unacked > 0) {
            send_u32(f, F_WINUP, f->fsid, f->st[slot].recv_unacked);
            f->st[slot].recv_unacked = 0;
        }
        return 0;
    }
    case F_HEADERS:
    case F_CONT: {
        if (f->cb->header_bytes)
            f->cb->header_bytes(f->u, f->fbody_end - (f->ftype == F_HEADERS ? f->preneed : 0));
        if (f->hdr_cont)
            return 0;
        if (f->fbody_end == (f->ftype == F_HEADERS ? f->preneed : 0)) {
            /* an empty last fragment: finish the block */
            static const uint8_t none[1];
            if (frame_chunk(f, none, 0, true) < 0)
                return -1;
        }
        uint32_t slot = f->hdr_slot;
        f->hdr_sid = 0;
        if (f->hdr_end_stream && slot != H2B_H2F_NO_SLOT)
            close_stream(f, slot, E_NO_ERROR);
        return 0;
    }
    case F_RST:
        if (f->fslot != H2B_H2F_NO_SLOT)
            close_stream(f, f->fslot, get32(f->pre));
        return 0;
    case F_SETTINGS:
        if (f->fflags & FL_ACK) {
            if (!f->acked) {
                f->acked = true;
                /* our HEADER_TABLE_SIZE is in force once the server has it */
                if (nghttp2_hd_inflate_change_table_size(f->inf, f->local.header_table) != 0)
                    return conn_error(f, E_COMPRESSION);
            }
            return 0;
        }
        frame(f, F_SETTINGS, FL_ACK, 0, 0);
        f->got_settings = true;
        f->cb->settings(f->u);
        pump(f);
        return 0;
    case F_PING:
        if (!(f->fflags & FL_ACK)) {
            uint8_t *p = frame(f, F_PING, FL_ACK, 0, 8);
            if (p)
                memcpy(p, f->pre, 8);
        }
        return 0;
    case F_GOAWAY: {
        int32_t last = (int32_t)(get32(f->pre) & 0x7fffffffU);
        f->goaway = true;
        f->cb->goaway(f->u); /* first, as nghttp2 does: no new request from the closes below */
        for (uint32_t i = 0; i < f->nst; i++)
            if (f->st[i].sid > last)
                close_stream(f, i, E_REFUSED);
        return 0;
    }
    case F_WINUP: {
        uint32_t inc = get32(f->pre) & 0x7fffffffU;
        if (inc == 0)
            return conn_error(f, E_PROTOCOL);
        if (f->fsid == 0) {
            if (f->send_conn_window + inc > MAX_WINDOW)
                return conn_error(f, E_FLOW);
            f->send_conn_window += inc;
        } else if (f->fslot != H2B_H2F_NO_SLOT) {
            struct h2b_h2f_stream *s = &f->st[f->fslot];
            if ((int64_t)s->send_window + inc > MAX_WINDOW)
                return conn_error(f, E_FLOW);
            s->send_window += (int32_t)inc;
        }
        pump(f);
        return 0;
    }
    default:
        return 0;
    }
}

int h2b_h2f_recv(struct h2b_h2f *f, const uint8_t *data, size_t len)
{
    const uint8_t *p = data, *end = data + len;
    while (p < end && !f->dead) {
        if (!f->in_payload) {
            size_t k =
                9 - (size_t)f->hn < (size_t)(end - p) ? 9 - (size_t)f->hn : (size_t)(end - p);
            memcpy(f->hb + f->hn, p, k);
            f->hn = (uint8_t)(f->hn + k);
            p += k;
            if (f->hn < 9)
                break;
            f->hn = 0;
            f->flen = (uint32_t)f->hb[0] << 16 | (uint32_t)f->hb[1] << 8 | f->hb[2];
            f->ftype = f->hb[3];
            f->fflags = f->hb[4];
            f->fsid = (int32_t)(get32(f->hb + 5) & 0x7fffffffU);
            f->foff = 0;
            if (frame_begin(f) < 0)
                break;
            f->in_payload = true;
        }
        if (f->pren < f->preneed) {
            size_t k = (size_t)(f->preneed - f->pren) < (size_t)(end - p)
                           ? (size_t)(f->preneed - f->pren)
                           : (size_t)(end - p);
            memcpy(f->pre + f->pren, p, k);
            f->pren = (uint8_t)(f->pren + k);
            f->foff += (uint32_t)k;
            p += k;
            if (f->pren < f->preneed)
                break;
            if (prefix_done(f) < 0)
                break;
        }
        if (f->foff < f->fbody_end) {
            size_t k = f->fbody_end - f->foff < (size_t)(end - p) ? f->fbody_end - f->foff
                                                                  : (size_t)(end - p);
            f->foff += (uint32_t)k;
            if (frame_chunk(f, p, k, f->foff == f->fbody_end) < 0)
                break;
            p += k;
        }
        if (f->foff < f->flen && f->foff >= f->fbody_end) { /* padding, ignored payload */
            size_t k =
                f->flen - f->foff < (size_t)(end - p) ? f->flen - f->foff : (size_t)(end - p);
            f->foff += (uint32_t)k;
            p += k;
        }
        if (f->foff == f->flen) {
            f->in_payload = false;
            if (frame_end(f) < 0)
                break;
        }
    }
    if (f->nomem && !f->dead) {
        f->dead = true;
        f->error = 2; /* INTERNAL_ERROR: nothing could be queued */
    }
    return f->dead ? -1 : 0;
}
