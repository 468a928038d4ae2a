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
 * caller; its HEADER_TABLE_SIZE bounds our encoder's dynamic table (below).
 * Violations are connection errors (RFC 9113 section 5.4.1): we queue GOAWAY with the code
 * (PROTOCOL_ERROR, FRAME_SIZE_ERROR, FLOW_CONTROL_ERROR, COMPRESSION_ERROR), count it and the
 * connection ends; among them a first frame that is not SETTINGS, PUSH_PROMISE (we disable
 * push), frames on idle streams, an interleaved header block, oversized frames, bad padding,
 * DATA beyond a window, window overflow, a zero increment, a bad SETTINGS value.
 *
 * Request header blocks: one nghttp2_hd_deflater per connection (what an nghttp2 session, and
 * so h2load, has), its dynamic table limited to --encoder-header-table-size and to the server's
 * SETTINGS_HEADER_TABLE_SIZE: the first request of a connection indexes :authority, user-agent
 * and -H fields incrementally, later ones refer to them with one byte each (:path, as nghttp2
 * decides, stays a literal without indexing), so the server decodes what it decodes under
 * h2load. Deflating per request is the cost this engine removes, so blocks are cached per
 * (connection, request): a block that leaves the table as it found it (only indexed fields and
 * literals without or never indexing, no incremental indexing, no size update: table_neutral
 * reads the representation bytes) is valid verbatim for as long as the table does not change, and
 * the table changes only through our own encodes. A generation counter is bumped by every encode
 * that was not neutral, by a table size change and by a new connection; a cached block of the
 * current generation is sent as is (a memcpy), any other is deflated again. In steady state a
 * request is a 9-byte frame header and a memcpy, as before. A change of the server's
 * HEADER_TABLE_SIZE reaches the deflater right after our SETTINGS ACK is queued (the server's
 * new limit holds from that ACK on), and the deflater emits the size update(s) RFC 7541 section
 * 4.2 asks for at the start of the next block. The cache is direct-mapped (request index modulo
 * its entries) within CACHE_BYTES per connection: beyond that many distinct requests a miss
 * deflates, as nghttp2 does for every request. Rejected: a 0-size table with literals without
 * indexing, shared by all connections (the previous design: exact without per-connection state,
 * but the server Huffman-decodes :authority and user-agent on every request: 14.7 % more server
 * instructions per request than under h2load, a worse instrument for server benchmarks);
 * detecting
 * table changes from the deflater's entry count and size (an insert that evicts an entry of the
 * same size changes neither).
 *
 * Response header blocks, the mirror image: a server's steady-state responses are the same
 * block again and again (indexed :status, server, date and content-type, a literal
 * content-length), and decoding them was 15-19 % of this client's CPU. The last block that
 * arrived whole in one HEADERS frame and was table_neutral is kept with its decoded fields
 * (struct h2b_h2f_rblock, RBLOCK_* bytes); the same bytes again are answered from it without
 * the decoder. That is exact: a neutral block changes nothing in the decoder, so decoding it
 * again would give the same fields, as long as the table is what it was; and the table changes
 * only through the decoder, so every block the decoder reads (and a table size change, and a
 * new connection) drops the kept one. A block of more than RBLOCK_BYTES bytes or fields, split
 * across reads or continued, is decoded as before. Rejected: keying on the decoder's entry count
 * and size (as above, an evicting insert can leave both as they were).
 *
 * Memory: per connection the output buffer (grows to the largest burst, then stays; at most
 * OUT_MAX unsent, and at most MAX_ACKS PING and SETTINGS ACKs queued while it is backed up,
 * beyond which the connection ends with ENHANCE_YOUR_CALM: a server that floods PINGs and never
 * reads cannot grow it without bound), the
 * per-slot stream array, an id map, the deflater and the block cache; nothing is allocated per
 * request or per frame (a cache miss deflates, and libnghttp2 takes one small buffer chain and
 * any new table entry from the worker's pool). Stream
 * ids map to slots through a direct table indexed by (id >> 1) (ids of one connection are
 * 1, 3, 5, ..., so in-flight ids rarely collide); a miss scans the slots.
 *
 * Rejected: nghttp2_session with fewer callbacks (its per-stream allocation, priority tree
 * and frame queue are what the issue measured); a full HTTP/2 state machine (server push,
 * priorities, server role) - a load client needs none.
 */
#include "load/h2fast.h"

#include "core/error.h"
#include "core/h2wire.h"

#include <stdlib.h>
#include <string.h>

#define MAX_WINDOW 0x7fffffffL
#define CACHE_BYTES 16384 /* request block cache per connection (direct-mapped) */
#define RBLOCK_BYTES 256  /* the longest response header block kept decoded */
#define RBLOCK_TEXT 1024  /* its names and values */
#define RBLOCK_FIELDS 32

struct h2b_h2f_rblock {
    uint32_t len; /* bytes[0..len): the block; 0: none kept */
    uint32_t nf, tlen;
    struct {
        uint16_t name, namelen, value, valuelen; /* offsets into text */
    } f[RBLOCK_FIELDS];
    uint8_t bytes[RBLOCK_BYTES];
    uint8_t text[RBLOCK_TEXT];
};
#define DEFAULT_WINDOW 65535U
#define MAX_ACKS 1000              /* ACKs queued while the output is backed up (nghttp2's limit) */
#define OUT_MAX (64 * 1024 * 1024) /* unsent output per connection, whatever queued it */

static const uint8_t preface[] = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

/* ---- output ---------------------------------------------------------------------------- */

static uint8_t *reserve(struct h2b_h2f *f, size_t n)
{
    if (f->ooff == f->olen)
        f->ooff = f->olen = 0;
    if (f->olen - f->ooff + n > OUT_MAX) {
        f->nomem = true; /* the peer stopped reading: the connection ends */
        return NULL;
    }
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

/* An ACK (PING or SETTINGS) is about to be queued. True when MAX_ACKS have been queued since
 * the output last drained: the server sends control frames and does not read our answers, so
 * queueing more would grow the output without bound (nghttp2 ends such a session, ERR_FLOODED,
 * at the same count). The caller ends the connection with ENHANCE_YOUR_CALM. */
static bool ack_flood(struct h2b_h2f *f)
{
    if (f->ooff == f->olen)
        f->acks = 0;
    return ++f->acks > MAX_ACKS;
}

/* Appends a frame header and reserves len payload bytes (returned). */
static uint8_t *frame(struct h2b_h2f *f, uint8_t type, uint8_t flags, int32_t sid, size_t len)
{
    uint8_t *p = reserve(f, 9 + len);
    if (!p)
        return NULL;
    h2b_h2wire_hd_put(p, (uint32_t)len, type, flags, (uint32_t)sid);
    if (f->cb->frame)
        f->cb->frame(f->u, true, type, flags, (uint32_t)len, sid);
    return p + 9;
}

static void send_u32(struct h2b_h2f *f, uint8_t type, int32_t sid, uint32_t v)
{
    uint8_t *p = frame(f, type, 0, sid, 4);
    if (p)
        h2b_h2wire_put32(p, v);
}

/* A connection error: GOAWAY with code, then nothing more is read or sent. */
static int conn_error(struct h2b_h2f *f, uint32_t code)
{
    if (f->dead)
        return -1;
    uint8_t *p = frame(f, H2B_F_GOAWAY, 0, 0, 8);
    if (p) {
        h2b_h2wire_put32(p, 0); /* we process no server-initiated stream */
        h2b_h2wire_put32(p + 4, code);
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
            uint8_t *p = frame(f, H2B_F_DATA, last ? H2B_FL_END_STREAM : 0, s->sid, n);
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

/* ---- request header blocks ----------------------------------------------------------- */

/* Skips an HPACK integer with an N-bit prefix at p[*i]; false if it runs past n or overflows. */
static bool skip_int(const uint8_t *p, size_t n, size_t *i, unsigned bits, uint32_t *v)
{
    uint32_t mask = (1U << bits) - 1, x = p[*i] & mask;
    (*i)++;
    if (x == mask) {
        for (unsigned shift = 0;; shift += 7) {
            if (*i >= n || shift > 21)
                return false;
            uint8_t b = p[(*i)++];
            x += (uint32_t)(b & 0x7f) << shift;
            if (!(b & 0x80))
                break;
        }
    }
    *v = x;
    return true;
}

/* Skips a string literal (H bit, 7-bit length prefix, bytes). */
static bool skip_str(const uint8_t *p, size_t n, size_t *i)
{
    uint32_t len;
    if (*i >= n || !skip_int(p, n, i, 7, &len) || len > n - *i)
        return false;
    *i += len;
    return true;
}

/* Whether a header block leaves the decoder's dynamic table as it found it (RFC 7541 section
 * 6): indexed fields (1xxxxxxx) and literals without (0000xxxx) or never (0001xxxx) indexing
 * only; a literal with incremental indexing (01xxxxxx) or a size update (001xxxxx) changes it.
 * A block that cannot be read to its end counts as changing it. */
static bool table_neutral(const uint8_t *p, size_t n)
{
    size_t i = 0;
    while (i < n) {
        uint8_t b = p[i];
        uint32_t idx;
        if (b & 0x80) {
            if (!skip_int(p, n, &i, 7, &idx))
                return false;
            continue;
        }
        if (b & 0xe0)
            return false;
        if (!skip_int(p, n, &i, 4, &idx) || (idx == 0 && !skip_str(p, n, &i)) ||
            !skip_str(p, n, &i))
            return false;
    }
    return true;
}

/* A cache miss: deflates request req and caches the block in e when it is neutral. NULL: the
 * deflater failed (the connection is over). Kept out of line: the hit path is a few loads. */
static __attribute__((noinline)) const uint8_t *
request_block_miss(struct h2b_h2f *f, uint32_t req, struct h2b_h2f_hblk *e, size_t *blen)
{
    const struct h2b_h2f_req *r = &f->reqs[req];
    ssize_t n = nghttp2_hd_deflate_hd(f->def, f->scratch, f->cstride, r->nva, r->nvlen);
    f->encodes++;
    if (n < 0) {
        f->nomem = f->dead = true; /* the deflater's table may be half-updated: unusable */
        f->error = 2;              /* INTERNAL_ERROR */
        return NULL;
    }
    *blen = (size_t)n;
    if (!table_neutral(f->scratch, (size_t)n)) {
        f->gen++; /* every cached block may refer to entries that moved */
        return f->scratch;
    }
    memcpy(e->bytes, f->scratch, (size_t)n);
    e->gen = f->gen;
    e->req = req;
    e->len = (uint32_t)n;
    return e->bytes;
}

/* The header block for request req: the cached one if the encoder's table has not changed since
 * it was encoded, else a fresh deflate. */
static inline const uint8_t *request_block(struct h2b_h2f *f, uint32_t req, size_t *blen)
{
    struct h2b_h2f_hblk *e = &f->cache[req < f->ncache ? req : req % f->ncache];
    if (e->gen == f->gen && e->req == req) {
        *blen = e->len;
        return e->bytes;
    }
    return request_block_miss(f, req, e, blen);
}

/* Sizes the cache for f's requests (once): a stride of the largest block's bound. */
static int cache_alloc(struct h2b_h2f *f)
{
    size_t stride = 0;
    for (uint32_t u = 0; u < f->nreqs; u++) {
        size_t b = nghttp2_hd_deflate_bound(f->def, f->reqs[u].nva, f->reqs[u].nvlen);
        if (b > stride)
            stride = b;
    }
    if (stride > UINT32_MAX)
        return H2B_ERR_NOMEM;
    uint32_t n = stride * f->nreqs <= CACHE_BYTES ? f->nreqs : (uint32_t)(CACHE_BYTES / stride);
    if (n == 0)
        n = 1;
    f->cache = calloc(n, sizeof(*f->cache));
    f->cbytes = malloc(stride * n);
    f->scratch = malloc(stride);
    if (!f->cache || !f->cbytes || !f->scratch)
        return H2B_ERR_NOMEM;
    for (uint32_t k = 0; k < n; k++)
        f->cache[k].bytes = f->cbytes + (size_t)k * stride;
    f->ncache = n;
    f->cstride = stride;
    return H2B_OK;
}

int h2b_h2f_init(struct h2b_h2f *f, const struct h2b_h2f_cb *cb, void *u, nghttp2_mem *mem,
                 const struct h2b_h2f_req *reqs, uint32_t nreqs, const uint8_t *body,
                 size_t body_len)
{
    memset(f, 0, sizeof(*f));
    if (nreqs == 0)
        return H2B_ERR_PROTO;
    f->cb = cb;
    f->u = u;
    f->mem = mem;
    f->reqs = reqs;
    f->nreqs = nreqs;
    f->gen = 1; /* cache entries start at generation 0: invalid */
    f->body = body;
    f->body_len = body_len;
    f->ocap = 4096;
    f->out = malloc(f->ocap);
    f->rblock = calloc(1, sizeof(*f->rblock));
    return f->out && f->rblock ? H2B_OK : H2B_ERR_NOMEM;
}

void h2b_h2f_rblock_off(struct h2b_h2f *f)
{
    free(f->rblock);
    f->rblock = NULL;
}

void h2b_h2f_free(struct h2b_h2f *f)
{
    if (f->inf)
        nghttp2_hd_inflate_del(f->inf);
    if (f->def)
        nghttp2_hd_deflate_del(f->def);
    free(f->cache);
    free(f->cbytes);
    free(f->scratch);
    free(f->out);
    free(f->st);
    free(f->map);
    free(f->rblock);
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
    if (f->rblock)
        f->rblock->len = 0; /* a new decoder table */
    /* a new connection: a fresh encoder table, and no cached block refers to it */
    if (f->def)
        nghttp2_hd_deflate_del(f->def);
    f->def = NULL;
    if (nghttp2_hd_deflate_new2(&f->def, s->encoder_table, f->mem) != 0)
        return H2B_ERR_NOMEM;
    if (!f->cache && cache_alloc(f) != H2B_OK)
        return H2B_ERR_NOMEM;
    f->gen++;
    f->table_pending = false;
    f->local = *s;
    for (uint32_t i = 0; i < f->nst; i++)
        f->st[i].sid = 0;
    f->nopen = f->npending = 0;
    f->ooff = f->olen = 0;
    f->acks = 0;
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
    p = frame(f, H2B_F_SETTINGS, 0, 0, 24);
    if (!p)
        return H2B_ERR_NOMEM;
    for (int i = 0; i < 4; i++) {
        p[6 * i] = (uint8_t)(ids[i] >> 8);
        p[6 * i + 1] = (uint8_t)ids[i];
        h2b_h2wire_put32(p + 6 * i + 2, vals[i]);
    }
    if (s->conn_window > DEFAULT_WINDOW)
        send_u32(f, H2B_F_WINUP, 0, s->conn_window - DEFAULT_WINDOW);
    return f->nomem ? H2B_ERR_NOMEM : H2B_OK;
}

/* ---- requests -------------------------------------------------------------------------- */

int32_t h2b_h2f_submit(struct h2b_h2f *f, uint32_t slot, uint32_t req)
{
    if (f->dead || f->goaway || f->next_sid < 0 || slot >= f->nst || f->st[slot].sid != 0 ||
        req >= f->nreqs)
        return -1;
    size_t blen;
    const uint8_t *block = request_block(f, req, &blen);
    if (!block)
        return -1;
    int32_t sid = f->next_sid;
    f->next_sid = sid <= 0x7ffffffd ? sid + 2 : -1;
    uint8_t end = f->body_len ? 0 : H2B_FL_END_STREAM;
    size_t first = blen < f->peer_max_frame ? blen : f->peer_max_frame;
    uint8_t *p = frame(f, H2B_F_HEADERS, (uint8_t)(end | (first == blen ? H2B_FL_END_HEADERS : 0)),
                       sid, first);
    if (!p)
        return -1;
    memcpy(p, block, first);
    for (size_t off = first; off < blen;) {
        size_t n = blen - off < f->peer_max_frame ? blen - off : f->peer_max_frame;
        p = frame(f, H2B_F_CONT, off + n == blen ? H2B_FL_END_HEADERS : 0, sid, n);
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
        send_u32(f, H2B_F_RST, f->st[slot].sid, code);
    close_stream(f, slot, code);
}

/* ---- reading --------------------------------------------------------------------------- */

/* The stream of an incoming frame: its slot, NO_SLOT for one we closed; an idle stream (never
 * opened by us, or even: server-initiated) is a connection error. */
static int frame_stream(struct h2b_h2f *f, uint32_t *slot)
{
    int32_t sid = f->fsid;
    if ((sid & 1) == 0 || (f->next_sid > 0 && sid >= f->next_sid))
        return conn_error(f, H2B_E_PROTOCOL);
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
        return conn_error(f, H2B_E_FRAME_SIZE);
    if (!f->got_settings && !(t == H2B_F_SETTINGS && !(fl & H2B_FL_ACK)))
        return conn_error(f, H2B_E_PROTOCOL); /* the server's preface is a SETTINGS frame */
    if (f->hdr_cont && (t != H2B_F_CONT || f->fsid != f->hdr_sid))
        return conn_error(f, H2B_E_PROTOCOL);
    switch (t) {
    case H2B_F_DATA:
        if (f->fsid == 0)
            return conn_error(f, H2B_E_PROTOCOL);
        if (frame_stream(f, &f->fslot) < 0)
            return -1;
        /* connection flow control counts the whole payload, padding included */
        {
            uint64_t avail =
                f->local.conn_window > DEFAULT_WINDOW ? f->local.conn_window : DEFAULT_WINDOW;
            if ((uint64_t)f->recv_conn_unacked + len > avail)
                return conn_error(f, H2B_E_FLOW);
            f->recv_conn_unacked += len;
            if (f->fslot != H2B_H2F_NO_SLOT) {
                struct h2b_h2f_stream *s = &f->st[f->fslot];
                uint64_t sw = f->acked || f->local.initial_window > DEFAULT_WINDOW
                                  ? f->local.initial_window
                                  : DEFAULT_WINDOW;
                if ((uint64_t)s->recv_unacked + len > sw)
                    return conn_error(f, H2B_E_FLOW);
                s->recv_unacked += len;
                if (!s->got_headers)
                    return conn_error(f, H2B_E_PROTOCOL); /* DATA before the response HEADERS */
            }
        }
        f->preneed = fl & H2B_FL_PADDED ? 1 : 0;
        if (len < f->preneed)
            return conn_error(f, H2B_E_FRAME_SIZE);
        return 0;
    case H2B_F_HEADERS:
        if (f->fsid == 0)
            return conn_error(f, H2B_E_PROTOCOL);
        if (frame_stream(f, &f->fslot) < 0)
            return -1;
        f->preneed = (uint8_t)((fl & H2B_FL_PADDED ? 1 : 0) + (fl & H2B_FL_PRIO ? 5 : 0));
        if (len < f->preneed)
            return conn_error(f, H2B_E_FRAME_SIZE);
        f->hdr_sid = f->fsid;
        f->hdr_slot = f->fslot;
        f->hdr_end_stream = (fl & H2B_FL_END_STREAM) != 0;
        f->hdr_cont = !(fl & H2B_FL_END_HEADERS);
        if (f->fslot != H2B_H2F_NO_SLOT) {
            f->st[f->fslot].got_headers = true;
            f->cb->begin_headers(f->u, f->fslot);
        }
        return 0;
    case H2B_F_CONT:
        if (!f->hdr_cont)
            return conn_error(f, H2B_E_PROTOCOL);
        f->hdr_cont = !(fl & H2B_FL_END_HEADERS);
        return 0;
    case H2B_F_PRIORITY:
        if (f->fsid == 0)
            return conn_error(f, H2B_E_PROTOCOL);
        if (len != 5)
            return conn_error(f, H2B_E_FRAME_SIZE);
        f->fbody_end = 0; /* ignored */
        return 0;
    case H2B_F_RST:
        if (f->fsid == 0)
            return conn_error(f, H2B_E_PROTOCOL);
        if (len != 4)
            return conn_error(f, H2B_E_FRAME_SIZE);
        if (frame_stream(f, &f->fslot) < 0)
            return -1;
        f->preneed = 4;
        return 0;
    case H2B_F_SETTINGS:
        if (f->fsid != 0)
            return conn_error(f, H2B_E_PROTOCOL);
        if ((fl & H2B_FL_ACK) ? len != 0 : len % 6 != 0)
            return conn_error(f, H2B_E_FRAME_SIZE);
        return 0;
    case H2B_F_PUSH:
        return conn_error(f, H2B_E_PROTOCOL); /* SETTINGS_ENABLE_PUSH is 0 */
    case H2B_F_PING:
        if (f->fsid != 0)
            return conn_error(f, H2B_E_PROTOCOL);
        if (len != 8)
            return conn_error(f, H2B_E_FRAME_SIZE);
        f->preneed = 8;
        return 0;
    case H2B_F_GOAWAY:
        if (f->fsid != 0)
            return conn_error(f, H2B_E_PROTOCOL);
        if (len < 8)
            return conn_error(f, H2B_E_FRAME_SIZE);
        f->preneed = 8;
        return 0;
    case H2B_F_WINUP:
        if (len != 4)
            return conn_error(f, H2B_E_FRAME_SIZE);
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
    if (f->ftype == H2B_F_DATA || f->ftype == H2B_F_HEADERS) {
        uint32_t pad = (f->fflags & H2B_FL_PADDED) ? f->pre[0] : 0;
        if (pad > f->flen - f->preneed)
            return conn_error(f, H2B_E_PROTOCOL);
        f->fbody_end = f->flen - pad;
    } else if (f->ftype == H2B_F_GOAWAY) {
        f->fbody_end = f->flen; /* the debug data is skipped */
    }
    return 0;
}

static int apply_setting(struct h2b_h2f *f, const uint8_t *e)
{
    uint16_t id = (uint16_t)(e[0] << 8 | e[1]);
    uint32_t v = h2b_h2wire_get32(e + 2);
    switch (id) {
    case NGHTTP2_SETTINGS_HEADER_TABLE_SIZE:
        /* applied to the deflater once our ACK is queued (frame_end): the server's new limit
         * holds from the ACK on, blocks queued before it are read under the old one */
        if (v != f->peer_table)
            f->table_pending = true;
        f->peer_table = v;
        return 0;
    case NGHTTP2_SETTINGS_ENABLE_PUSH:
        return v > 1 ? conn_error(f, H2B_E_PROTOCOL) : 0;
    case NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS:
        f->peer_max_streams = v;
        return 0;
    case NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE: {
        if (v > MAX_WINDOW)
            return conn_error(f, H2B_E_FLOW);
        int64_t delta = (int64_t)v - (int64_t)f->peer_window;
        for (uint32_t i = 0; i < f->nst; i++) {
            struct h2b_h2f_stream *s = &f->st[i];
            if (s->sid == 0)
                continue;
            if ((int64_t)s->send_window + delta > MAX_WINDOW)
                return conn_error(f, H2B_E_FLOW);
            s->send_window = (int32_t)((int64_t)s->send_window + delta);
        }
        f->peer_window = v;
        return 0;
    }
    case NGHTTP2_SETTINGS_MAX_FRAME_SIZE:
        if (v < 16384 || v > 16777215)
            return conn_error(f, H2B_E_PROTOCOL);
        f->peer_max_frame = v;
        return 0;
    default:
        return 0;
    }
}

/* One decoded response field to the caller, for the stream of the block being read; -1 once
 * the connection is dead. */
static int emit_header(struct h2b_h2f *f, const uint8_t *name, size_t namelen, const uint8_t *value,
                       size_t valuelen)
{
    uint32_t slot = f->hdr_slot;
    if (slot != H2B_H2F_NO_SLOT && f->st[slot].sid != f->hdr_sid)
        slot = f->hdr_slot = H2B_H2F_NO_SLOT;
    if (f->cb->header(f->u, slot, name, namelen, value, valuelen) != 0 && slot != H2B_H2F_NO_SLOT &&
        f->st[slot].sid == f->hdr_sid) {
        h2b_h2f_reset(f, slot, H2B_E_PROTOCOL);
        f->hdr_slot = H2B_H2F_NO_SLOT;
    }
    return f->dead ? -1 : 0;
}

/* Adds a decoded field to the block being kept; false when it does not fit (nothing kept). */
static bool rblock_add(struct h2b_h2f_rblock *rb, const nghttp2_nv *nv)
{
    if (rb->nf == RBLOCK_FIELDS || nv->namelen + nv->valuelen > RBLOCK_TEXT - rb->tlen)
        return false;
    rb->f[rb->nf].name = (uint16_t)rb->tlen;
    rb->f[rb->nf].namelen = (uint16_t)nv->namelen;
    memcpy(rb->text + rb->tlen, nv->name, nv->namelen);
    rb->tlen += (uint32_t)nv->namelen;
    rb->f[rb->nf].value = (uint16_t)rb->tlen;
    rb->f[rb->nf].valuelen = (uint16_t)nv->valuelen;
    memcpy(rb->text + rb->tlen, nv->value, nv->valuelen);
    rb->tlen += (uint32_t)nv->valuelen;
    rb->nf++;
    return true;
}

/* Payload bytes after the prefix, up to fbody_end. */
static int frame_chunk(struct h2b_h2f *f, const uint8_t *p, size_t n, bool final)
{
    switch (f->ftype) {
    case H2B_F_DATA: {
        uint32_t slot = f->fslot;
        int rv = f->cb->data(f->u, slot, p, n);
        if (rv != 0 && slot != H2B_H2F_NO_SLOT && f->st[slot].sid == f->fsid) {
            h2b_h2f_reset(f, slot, H2B_E_PROTOCOL);
            f->fslot = H2B_H2F_NO_SLOT;
        }
        return 0;
    }
    case H2B_F_HEADERS:
    case H2B_F_CONT: {
        bool in_final = final && !f->hdr_cont;
        struct h2b_h2f_rblock *rb = f->rblock;
        /* the whole block in this one piece: a HEADERS frame read at once, no CONTINUATION */
        bool whole =
            rb && in_final && f->ftype == H2B_F_HEADERS && n == (size_t)(f->fbody_end - f->preneed);
        if (whole && n > 0 && rb->len == n && memcmp(rb->bytes, p, n) == 0) {
            f->rblock_hits++;
            for (uint32_t i = 0; i < rb->nf; i++)
                if (emit_header(f, rb->text + rb->f[i].name, rb->f[i].namelen,
                                rb->text + rb->f[i].value, rb->f[i].valuelen) < 0)
                    return -1;
            return 0;
        }
        bool keep = whole && n > 0 && n <= RBLOCK_BYTES && table_neutral(p, n);
        const uint8_t *block = p;
        size_t block_len = n;
        if (rb) {
            rb->len = 0; /* the decoder reads this block: its table may change */
            rb->nf = rb->tlen = 0;
        }
        while (n > 0 || in_final) {
            nghttp2_nv nv;
            int fl = 0;
            ssize_t k = nghttp2_hd_inflate_hd2(f->inf, &nv, &fl, p, n, in_final);
            if (k < 0)
                return conn_error(f, H2B_E_COMPRESSION);
            p += k;
            n -= (size_t)k;
            if (fl & NGHTTP2_HD_INFLATE_EMIT) {
                if (keep)
                    keep = rblock_add(rb, &nv);
                if (emit_header(f, nv.name, nv.namelen, nv.value, nv.valuelen) < 0)
                    return -1;
            }
            if (fl & NGHTTP2_HD_INFLATE_FINAL) {
                nghttp2_hd_inflate_end_headers(f->inf);
                if (n > 0)
                    return conn_error(f, H2B_E_COMPRESSION);
                if (keep) {
                    memcpy(rb->bytes, block, block_len);
                    rb->len = (uint32_t)block_len;
                }
                break;
            }
            if (k == 0 && !(fl & NGHTTP2_HD_INFLATE_EMIT)) {
                if (in_final)
                    return conn_error(f, H2B_E_COMPRESSION); /* truncated block */
                break;
            }
        }
        return 0;
    }
    case H2B_F_SETTINGS:
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
    case H2B_F_DATA: {
        uint32_t half =
            f->local.conn_window > DEFAULT_WINDOW ? f->local.conn_window / 2 : DEFAULT_WINDOW / 2;
        if (f->recv_conn_unacked >= half) {
            send_u32(f, H2B_F_WINUP, 0, f->recv_conn_unacked);
            f->recv_conn_unacked = 0;
        }
        uint32_t slot = f->fslot;
        if (slot == H2B_H2F_NO_SLOT || f->st[slot].sid != f->fsid)
            return 0;
        if (f->fflags & H2B_FL_END_STREAM) {
            close_stream(f, slot, H2B_E_NO_ERROR);
        } else if (f->st[slot].recv_unacked >= f->local.initial_window / 2 &&
                   f->st[slot].recv_unacked > 0) {
            send_u32(f, H2B_F_WINUP, f->fsid, f->st[slot].recv_unacked);
            f->st[slot].recv_unacked = 0;
        }
        return 0;
    }
    case H2B_F_HEADERS:
    case H2B_F_CONT: {
        if (f->cb->header_bytes && f->hdr_slot != H2B_H2F_NO_SLOT) /* see h2fast.h */
            f->cb->header_bytes(f->u, f->fbody_end - (f->ftype == H2B_F_HEADERS ? f->preneed : 0));
        if (f->hdr_cont)
            return 0;
        if (f->fbody_end == (f->ftype == H2B_F_HEADERS ? f->preneed : 0)) {
            /* an empty last fragment: finish the block */
            static const uint8_t none[1];
            if (frame_chunk(f, none, 0, true) < 0)
                return -1;
        }
        uint32_t slot = f->hdr_slot;
        f->hdr_sid = 0;
        if (f->hdr_end_stream && slot != H2B_H2F_NO_SLOT)
            close_stream(f, slot, H2B_E_NO_ERROR);
        return 0;
    }
    case H2B_F_RST:
        if (f->fslot != H2B_H2F_NO_SLOT)
            close_stream(f, f->fslot, h2b_h2wire_get32(f->pre));
        return 0;
    case H2B_F_SETTINGS:
        if (f->fflags & H2B_FL_ACK) {
            if (!f->acked) {
                f->acked = true;
                /* our HEADER_TABLE_SIZE is in force once the server has it */
                if (f->rblock)
                    f->rblock->len = 0; /* the next block must carry the size update */
                if (nghttp2_hd_inflate_change_table_size(f->inf, f->local.header_table) != 0)
                    return conn_error(f, H2B_E_COMPRESSION);
            }
            return 0;
        }
        if (ack_flood(f))
            return conn_error(f, H2B_E_CALM);
        frame(f, H2B_F_SETTINGS, H2B_FL_ACK, 0, 0);
        if (f->table_pending) {
            f->table_pending = false;
            if (nghttp2_hd_deflate_change_table_size(f->def, f->peer_table) != 0) {
                f->nomem = true;
                return -1;
            }
            f->gen++; /* the next block starts with a size update */
        }
        f->got_settings = true;
        f->cb->settings(f->u);
        pump(f);
        return 0;
    case H2B_F_PING:
        if (!(f->fflags & H2B_FL_ACK)) {
            if (ack_flood(f))
                return conn_error(f, H2B_E_CALM);
            uint8_t *p = frame(f, H2B_F_PING, H2B_FL_ACK, 0, 8);
            if (p)
                memcpy(p, f->pre, 8);
        }
        return 0;
    case H2B_F_GOAWAY: {
        int32_t last = (int32_t)(h2b_h2wire_get32(f->pre) & 0x7fffffffU);
        f->goaway = true;
        f->cb->goaway(f->u); /* first, as nghttp2 does: no new request from the closes below */
        for (uint32_t i = 0; i < f->nst; i++)
            if (f->st[i].sid > last)
                close_stream(f, i, H2B_E_REFUSED);
        return 0;
    }
    case H2B_F_WINUP: {
        uint32_t inc = h2b_h2wire_get32(f->pre) & 0x7fffffffU;
        if (inc == 0)
            return conn_error(f, H2B_E_PROTOCOL);
        if (f->fsid == 0) {
            if (f->send_conn_window + inc > MAX_WINDOW)
                return conn_error(f, H2B_E_FLOW);
            f->send_conn_window += inc;
        } else if (f->fslot != H2B_H2F_NO_SLOT) {
            struct h2b_h2f_stream *s = &f->st[f->fslot];
            if ((int64_t)s->send_window + inc > MAX_WINDOW)
                return conn_error(f, H2B_E_FLOW);
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
            struct h2b_h2wire_hd hd = h2b_h2wire_hd_get(f->hb);
            f->flen = hd.len;
            f->ftype = hd.type;
            f->fflags = hd.flags;
            f->fsid = (int32_t)hd.id;
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
