/*
 * fuzz_load_h2fast.c - the fast HTTP/2 client engine's framing (harness/load/h2fast.c) on
 * arbitrary server bytes.
 *
 * Input: byte 0 picks the slot count (1..8), byte 1 the options (bit 0: requests carry a body;
 * bit 1: the header callback rejects :status values starting with '5', as worker.c does for
 * broken ones; bit 2: the data callback rejects every DATA frame; bits 3-4: our encoder's table
 * limit 4096, 0, 256 or 65536; bit 5: the second request carries a 17,000-byte header, so its
 * block needs CONTINUATION and overflows the block cache; bit 6: the two requests go in pairs,
 * 0 0 1 1 0 0 ..., instead of alternating, so a block cached for one is followed by an encode
 * of the other that changes the table), byte 2 the size of the
 * pieces the rest is fed in (0: all at once, else 1..255, so frames split anywhere). The rest
 * is what the server sends. Every slot gets a request at the start and a new one whenever its
 * stream closes (as worker.c's fill does, from inside the callback), the output is "written"
 * after every piece. Requests go to two URIs. Beyond memory safety it checks: open
 * streams never exceed the slots, a closed slot is reported once per request, the output offsets
 * stay inside the buffer, once the codec says the connection is over it stays over, and what the
 * codec wrote is what a server reads: the output is parsed as whole frames and every request
 * header block (HEADERS + CONTINUATION) is decoded by a separate libnghttp2 inflater playing the
 * server, whose table limit follows the server's SETTINGS_HEADER_TABLE_SIZE from our ACK of it
 * on, and must decode without error to exactly the header list of the request sent on that
 * stream (so cached blocks, the generation counter and the size updates are all checked).
 * Each input runs twice, with the decoded-response cache (h2fast.c's rblock) and without it:
 * the callbacks (slot, header names and values, DATA sizes, stream closes and codes) must be
 * the same sequence, or the cache changed what the caller sees.
 */
#include "core/error.h"
#include "load/h2fast.h"

#include <nghttp2/nghttp2.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_SLOTS 8
#define MAX_SIDS 16384  /* stream ids up to 2 * MAX_SIDS: more than 10,000 requests + slots */
#define BLOCK_MAX 65536 /* a request header block as the shadow server collects it */

struct ctx {
    struct h2b_h2f f;
    uint64_t trace; /* FNV-1a over every callback the caller saw */
    uint8_t opts;
    uint32_t nslots;
    bool open[MAX_SLOTS];
    uint64_t submitted, closed;
    uint32_t nsub;
    uint8_t req_of[MAX_SIDS]; /* stream id >> 1 -> request index + 1 */
    /* the shadow server: its decoder, and the output stream parsed as whole frames */
    nghttp2_hd_inflater *shadow;
    size_t preface_left;
    uint8_t block[BLOCK_MAX];
    size_t blen;
    int32_t block_sid;
};

static uint8_t long_value[17000];
static nghttp2_nv nva0[] = {
    {(uint8_t *)":method", (uint8_t *)"GET", 7, 3, 0},
    {(uint8_t *)":scheme", (uint8_t *)"http", 7, 4, 0},
    {(uint8_t *)":authority", (uint8_t *)"127.0.0.1:8080", 10, 14, 0},
    {(uint8_t *)":path", (uint8_t *)"/", 5, 1, 0},
    {(uint8_t *)"user-agent", (uint8_t *)"h2bench/fuzz", 10, 12, 0},
};
static nghttp2_nv nva1[] = {
    {(uint8_t *)":method", (uint8_t *)"GET", 7, 3, 0},
    {(uint8_t *)":scheme", (uint8_t *)"http", 7, 4, 0},
    {(uint8_t *)":authority", (uint8_t *)"127.0.0.1:8080", 10, 14, 0},
    {(uint8_t *)":path", (uint8_t *)"/second", 5, 7, 0},
    {(uint8_t *)"user-agent", (uint8_t *)"h2bench/fuzz", 10, 12, 0},
    {(uint8_t *)"x-h", (uint8_t *)"v", 3, 1, 0},
};
static const uint8_t body[40000];

static void mix(struct ctx *x, const void *p, size_t n)
{
    const uint8_t *b = p;
    for (size_t i = 0; i < n; i++)
        x->trace = (x->trace ^ b[i]) * 0x100000001b3ULL;
}

static void mix_u64(struct ctx *x, uint64_t v)
{
    mix(x, &v, sizeof v);
}

static void submit(struct ctx *x, uint32_t slot)
{
    if (x->closed > 10000)
        return; /* bounded work per input */
    uint32_t req = (x->opts & 64) ? (x->nsub >> 1) & 1 : x->nsub & 1;
    int32_t sid = h2b_h2f_submit(&x->f, slot, req);
    if (sid > 0) {
        x->nsub++;
        if ((uint32_t)sid >> 1 < MAX_SIDS)
            x->req_of[(uint32_t)sid >> 1] = (uint8_t)(req + 1);
        if (x->open[slot])
            abort(); /* the codec accepted a slot that was still busy */
        x->open[slot] = true;
        x->submitted++;
    }
}

static void begin_headers(void *u, uint32_t slot)
{
    struct ctx *x = u;
    if (slot >= x->nslots || !x->open[slot])
        abort();
}

static int header(void *u, uint32_t slot, const uint8_t *name, size_t namelen, const uint8_t *value,
                  size_t valuelen)
{
    struct ctx *x = u;
    if (slot != H2B_H2F_NO_SLOT && (slot >= x->nslots || !x->open[slot]))
        abort();
    if (!name || !value)
        abort();
    mix_u64(x, 1 + (uint64_t)slot);
    mix_u64(x, namelen);
    mix(x, name, namelen);
    mix_u64(x, valuelen);
    mix(x, value, valuelen);
    return slot != H2B_H2F_NO_SLOT && (x->opts & 2) && namelen == 7 &&
           memcmp(name, ":status", 7) == 0 && valuelen > 0 && value[0] == '5';
}

static void header_bytes(void *u, size_t n)
{
    (void)u;
    if (n > 16777215)
        abort();
}

static int data_cb(void *u, uint32_t slot, const uint8_t *p, size_t n)
{
    struct ctx *x = u;
    if (slot != H2B_H2F_NO_SLOT && (slot >= x->nslots || !x->open[slot]))
        abort();
    if (n > 16777215)
        abort();
    if (n > 0) { /* the bytes are the frame's: ASan sees a read past them */
        volatile uint8_t edge = (uint8_t)(p[0] ^ p[n - 1]);
        (void)edge;
    }
    mix_u64(x, 2 + (uint64_t)slot);
    mix_u64(x, n);
    return slot != H2B_H2F_NO_SLOT && (x->opts & 4);
}

static void written(struct ctx *x);

static void settings(void *u)
{
    /* our ACK was just queued: "write" now, so the shadow server reads it while f->peer_table is
     * the size it acknowledges (the worker writes only between reads; the codec does not care) */
    written(u);
}

/* The shadow server decodes one whole request header block: it must be the request's list. */
static void shadow_block(struct ctx *x)
{
    uint32_t k = (uint32_t)x->block_sid >> 1;
    if (k >= MAX_SIDS || x->req_of[k] == 0)
        abort(); /* HEADERS on a stream we did not submit */
    const nghttp2_nv *want = x->req_of[k] == 1 ? nva0 : nva1;
    size_t nwant =
        x->req_of[k] == 1 ? sizeof(nva0) / sizeof(nva0[0]) : sizeof(nva1) / sizeof(nva1[0]);
    size_t off = 0, fields = 0;
    for (;;) {
        nghttp2_nv nv;
        int fl = 0;
        ssize_t n = nghttp2_hd_inflate_hd2(x->shadow, &nv, &fl, x->block + off, x->blen - off, 1);
        if (n < 0)
            abort(); /* the server could not decode our block */
        off += (size_t)n;
        if (fl & NGHTTP2_HD_INFLATE_EMIT) {
            if (fields >= nwant || nv.namelen != want[fields].namelen ||
                nv.valuelen != want[fields].valuelen ||
                memcmp(nv.name, want[fields].name, nv.namelen) != 0 ||
                (nv.valuelen && memcmp(nv.value, want[fields].value, nv.valuelen) != 0))
                abort(); /* decoded to another header list */
            fields++;
        }
        if (fl & NGHTTP2_HD_INFLATE_FINAL)
            break;
        if (n == 0 && !(fl & NGHTTP2_HD_INFLATE_EMIT))
            abort();
    }
    nghttp2_hd_inflate_end_headers(x->shadow);
    if (fields != nwant || off != x->blen)
        abort();
    x->req_of[k] = 0;
}

/* What the codec queued since the last write, read as the server reads it. */
static void shadow_read(struct ctx *x, const uint8_t *p, size_t n)
{
    size_t k = x->preface_left < n ? x->preface_left : n;
    x->preface_left -= k;
    p += k;
    n -= k;
    while (n > 0) {
        if (n < 9)
            abort(); /* the codec queues whole frames */
        size_t len = (size_t)p[0] << 16 | (size_t)p[1] << 8 | p[2];
        uint8_t type = p[3], flags = p[4];
        int32_t sid =
            (int32_t)((uint32_t)p[5] << 24 | (uint32_t)p[6] << 16 | (uint32_t)p[7] << 8 | p[8]);
        if (len > n - 9)
            abort();
        if (type == 1 || type == 9) { /* HEADERS, CONTINUATION */
            if (type == 1) {
                x->blen = 0;
                x->block_sid = sid;
            } else if (sid != x->block_sid) {
                abort();
            }
            if (len > BLOCK_MAX - x->blen)
                abort();
            memcpy(x->block + x->blen, p + 9, len);
            x->blen += len;
            if (flags & 0x4)
                shadow_block(x);
        } else if (type == 4 && (flags & 1)) { /* our SETTINGS ACK: read from settings() */
            if (nghttp2_hd_inflate_change_table_size(x->shadow, x->f.peer_table) != 0)
                abort();
        }
        p += 9 + len;
        n -= 9 + len;
    }
}

static void written(struct ctx *x)
{
    shadow_read(x, x->f.out + x->f.ooff, x->f.olen - x->f.ooff);
    x->f.ooff = x->f.olen;
}

static void goaway(void *u)
{
    (void)u;
}

static void stream_close(void *u, uint32_t slot, uint32_t code)
{
    struct ctx *x = u;
    if (slot >= x->nslots || !x->open[slot])
        abort(); /* closed twice, or never opened */
    mix_u64(x, 3 + (uint64_t)slot);
    mix_u64(x, code);
    x->open[slot] = false;
    x->closed++;
    submit(x, slot); /* worker.c tops the connection up from inside this callback */
}

static const struct h2b_h2f_cb cb = {
    .begin_headers = begin_headers,
    .header = header,
    .header_bytes = header_bytes,
    .data = data_cb,
    .settings = settings,
    .goaway = goaway,
    .stream_close = stream_close,
};

static uint64_t run_once(const uint8_t *data, size_t size, bool rblock)
{
    struct ctx x;
    memset(&x, 0, sizeof(x));
    x.trace = 0xcbf29ce484222325ULL;
    x.nslots = (uint32_t)(data[0] % MAX_SLOTS) + 1;
    x.opts = data[1];
    size_t piece = data[2];
    data += 3;
    size -= 3;
    nva1[5].value = (x.opts & 32) ? long_value : (uint8_t *)"v";
    nva1[5].valuelen = (x.opts & 32) ? sizeof(long_value) : 1;
    if (long_value[0] == 0)
        memset(long_value, 'a', sizeof(long_value));
    const struct h2b_h2f_req reqs[2] = {{nva0, sizeof(nva0) / sizeof(nva0[0])},
                                        {nva1, sizeof(nva1) / sizeof(nva1[0])}};
    static const uint32_t enc_tables[4] = {4096, 0, 256, 65536};
    if (h2b_h2f_init(&x.f, &cb, &x, NULL, reqs, 2, body, (x.opts & 1) ? sizeof(body) : 0) != H2B_OK)
        return 0;
    if (!rblock)
        h2b_h2f_rblock_off(&x.f);
    struct h2b_h2f_settings s = {.initial_window = 65535,
                                 .conn_window = 1U << 20,
                                 .header_table = 4096,
                                 .encoder_table = enc_tables[(x.opts >> 3) & 3],
                                 .max_frame = 16384};
    if (nghttp2_hd_inflate_new(&x.shadow) != 0)
        abort();
    x.preface_left = 24;
    if (h2b_h2f_start(&x.f, &s) != H2B_OK || h2b_h2f_slots(&x.f, x.nslots) != H2B_OK) {
        h2b_h2f_free(&x.f);
        nghttp2_hd_inflate_del(x.shadow);
        return 0;
    }
    for (uint32_t i = 0; i < x.nslots; i++)
        submit(&x, i);
    bool over = false;
    size_t off = 0;
    while (off < size) {
        size_t n = piece == 0 || piece > size - off ? size - off : piece;
        int rv = h2b_h2f_recv(&x.f, data + off, n);
        if (over && rv == 0)
            abort(); /* a dead connection came back */
        if (rv < 0)
            over = true;
        off += n;
        if (x.f.nopen > x.nslots || x.f.ooff > x.f.olen || x.f.olen > x.f.ocap)
            abort();
        written(&x);
        if (over)
            break;
    }
    uint32_t open = 0;
    for (uint32_t i = 0; i < x.nslots; i++)
        open += x.open[i];
    if (open != x.f.nopen || x.submitted - x.closed != open)
        abort();
    /* a reset of every open slot closes each exactly once */
    for (uint32_t i = 0; i < x.nslots; i++)
        if (x.open[i]) {
            x.closed = 20000; /* no resubmission */
            h2b_h2f_reset(&x.f, i, 8);
            if (x.open[i])
                abort();
        }
    h2b_h2f_free(&x.f);
    nghttp2_hd_inflate_del(x.shadow);
    return x.trace;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 3)
        return 0;
    if (run_once(data, size, true) != run_once(data, size, false))
        abort(); /* the decoded-response cache changed what the caller saw */
    return 0;
}
