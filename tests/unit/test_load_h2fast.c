/* test_load_h2fast.c - the fast client's decoded-response cache (h2fast.c's rblock): repeated
 * table-neutral response blocks are answered from it with the same fields the decoder gives,
 * a block that changes the table drops it, and with the cache off every block is decoded. */
#include "core/error.h"
#include "load/h2fast.h"
#include "test.h"

#include <stdint.h>

struct seen {
    uint32_t headers, closes, bad;
};

static void begin_headers(void *u, uint32_t slot)
{
    (void)u;
    (void)slot;
}

static int header(void *u, uint32_t slot, const uint8_t *name, size_t namelen, const uint8_t *value,
                  size_t valuelen)
{
    struct seen *s = u;
    (void)slot;
    s->headers++;
    bool ok = (namelen == 7 && memcmp(name, ":status", 7) == 0 && valuelen == 3 &&
               memcmp(value, "200", 3) == 0) ||
              (namelen == 14 && memcmp(name, "content-length", 14) == 0 && valuelen == 2 &&
               memcmp(value, "13", 2) == 0) ||
              (namelen == 5 && memcmp(name, "x-new", 5) == 0 && valuelen == 1 && value[0] == 'v');
    s->bad += !ok;
    return 0;
}

static int data_cb(void *u, uint32_t slot, const uint8_t *p, size_t n)
{
    (void)u;
    (void)slot;
    (void)p;
    (void)n;
    return 0;
}

static void noop(void *u)
{
    (void)u;
}

static void stream_close(void *u, uint32_t slot, uint32_t code)
{
    struct seen *s = u;
    (void)slot;
    s->closes += code == 0;
}

static const struct h2b_h2f_cb cb = {.begin_headers = begin_headers,
                                     .header = header,
                                     .data = data_cb,
                                     .settings = noop,
                                     .goaway = noop,
                                     .stream_close = stream_close};

static size_t frame(uint8_t *out, uint8_t type, uint8_t flags, uint32_t sid, const uint8_t *p,
                    size_t n)
{
    out[0] = (uint8_t)(n >> 16);
    out[1] = (uint8_t)(n >> 8);
    out[2] = (uint8_t)n;
    out[3] = type;
    out[4] = flags;
    out[5] = (uint8_t)(sid >> 24);
    out[6] = (uint8_t)(sid >> 16);
    out[7] = (uint8_t)(sid >> 8);
    out[8] = (uint8_t)sid;
    if (n)
        memcpy(out + 9, p, n);
    return 9 + n;
}

/* Eight responses on streams 1, 3, ..., 15, one request at a time: a neutral block (:status 200
 * indexed, content-length 13 without indexing) four times, then one that inserts x-new: v into
 * the table, then the neutral block three times. Returns the cache's hits. */
static uint64_t run(bool cache, struct seen *s)
{
    static const nghttp2_nv nva[] = {
        {(uint8_t *)":method", (uint8_t *)"GET", 7, 3, 0},
        {(uint8_t *)":scheme", (uint8_t *)"http", 7, 4, 0},
        {(uint8_t *)":authority", (uint8_t *)"localhost", 10, 9, 0},
        {(uint8_t *)":path", (uint8_t *)"/", 5, 1, 0},
    };
    static const uint8_t neutral[] = {0x88, 0x0f, 0x0d, 0x02, '1', '3'};
    static const uint8_t inserts[] = {0x88, 0x0f, 0x0d, 0x02, '1', '3',  0x40, 0x05,
                                      'x',  '-',  'n',  'e',  'w', 0x01, 'v'};
    const struct h2b_h2f_req req = {nva, 4};
    struct h2b_h2f f;
    memset(s, 0, sizeof(*s));
    CHECK_EQ_INT(h2b_h2f_init(&f, &cb, s, NULL, &req, 1, NULL, 0), H2B_OK);
    if (!cache)
        h2b_h2f_rblock_off(&f);
    struct h2b_h2f_settings set = {65535, 1u << 20, 4096, 4096, 16384};
    CHECK_EQ_INT(h2b_h2f_start(&f, &set), H2B_OK);
    CHECK_EQ_INT(h2b_h2f_slots(&f, 1), H2B_OK);
    uint8_t buf[64];
    CHECK_EQ_INT(h2b_h2f_recv(&f, buf, frame(buf, 4, 0, 0, NULL, 0)), 0); /* SETTINGS */
    for (int i = 0; i < 8; i++) {
        int32_t sid = h2b_h2f_submit(&f, 0, 0);
        CHECK(sid == 2 * i + 1);
        const uint8_t *b = i == 4 ? inserts : neutral;
        size_t n = i == 4 ? sizeof(inserts) : sizeof(neutral);
        CHECK_EQ_INT(h2b_h2f_recv(&f, buf, frame(buf, 1, 0x5, (uint32_t)sid, b, n)), 0);
    }
    uint64_t hits = f.rblock_hits;
    h2b_h2f_free(&f);
    return hits;
}

int main(void)
{
    struct seen on, off;
    /* decoded: 1 (kept), hits 2-4; 5 changes the table (decoded, drops it); 6 decoded and
     * kept again; hits 7-8 */
    CHECK_EQ_U64(run(true, &on), 5);
    CHECK_EQ_U64(run(false, &off), 0);
    CHECK_EQ_U64(on.headers, 8 * 2 + 1);
    CHECK_EQ_U64(on.closes, 8);
    CHECK_EQ_U64(on.bad, 0);
    CHECK_EQ_U64(off.headers, on.headers);
    CHECK_EQ_U64(off.closes, on.closes);
    CHECK_EQ_U64(off.bad, 0);
    return test_report();
}
