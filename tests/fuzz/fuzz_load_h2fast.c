/*
 * fuzz_load_h2fast.c - the fast HTTP/2 client engine's framing (harness/load/h2fast.c) on
 * arbitrary server bytes.
 *
 * Input: byte 0 picks the slot count (1..8), byte 1 the options (bit 0: requests carry a body;
 * bit 1: the header callback rejects :status values starting with '5', as worker.c does for
 * broken ones; bit 2: the data callback rejects every DATA frame), byte 2 the size of the
 * pieces the rest is fed in (0: all at once, else 1..255, so frames split anywhere). The rest
 * is what the server sends. Every slot gets a request at the start and a new one whenever its
 * stream closes (as worker.c's fill does, from inside the callback), the output is "written"
 * after every piece. Beyond memory safety it checks: open streams never exceed the slots, a
 * closed slot is reported once per request, the output offsets stay inside the buffer, and once
 * the codec says the connection is over it stays over.
 */
#include "error.h"
#include "h2fast.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_SLOTS 8

struct ctx {
    struct h2b_h2f f;
    uint8_t opts;
    uint32_t nslots;
    bool open[MAX_SLOTS];
    uint64_t submitted, closed;
};

static const uint8_t block[] = {0x82, 0x86, 0x84, 0x41, 0x09, '1', '2',
                                '7',  '.',  '0',  '.',  '0',  '.', '1'}; /* GET http / :authority */
static const uint8_t body[40000];

static void submit(struct ctx *x, uint32_t slot)
{
    if (x->closed > 10000)
        return; /* bounded work per input */
    if (h2b_h2f_submit(&x->f, slot, block, sizeof(block)) > 0) {
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
    return slot != H2B_H2F_NO_SLOT && (x->opts & 2) && namelen == 7 &&
           memcmp(name, ":status", 7) == 0 && valuelen > 0 && value[0] == '5';
}

static void header_bytes(void *u, size_t n)
{
    (void)u;
    if (n > 16777215)
        abort();
}

static int data_cb(void *u, uint32_t slot, size_t n)
{
    struct ctx *x = u;
    if (slot != H2B_H2F_NO_SLOT && (slot >= x->nslots || !x->open[slot]))
        abort();
    if (n > 16777215)
        abort();
    return slot != H2B_H2F_NO_SLOT && (x->opts & 4);
}

static void settings(void *u)
{
    struct ctx *x = u;
    (void)x;
}

static void goaway(void *u)
{
    (void)u;
}

static void stream_close(void *u, uint32_t slot, uint32_t code)
{
    struct ctx *x = u;
    (void)code;
    if (slot >= x->nslots || !x->open[slot])
        abort(); /* closed twice, or never opened */
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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 3)
        return 0;
    struct ctx x;
    memset(&x, 0, sizeof(x));
    x.nslots = (uint32_t)(data[0] % MAX_SLOTS) + 1;
    x.opts = data[1];
    size_t piece = data[2];
    data += 3;
    size -= 3;
    if (h2b_h2f_init(&x.f, &cb, &x, NULL, body, (x.opts & 1) ? sizeof(body) : 0) != H2B_OK)
        return 0;
    struct h2b_h2f_settings s = {
        .initial_window = 65535, .conn_window = 1U << 20, .header_table = 4096, .max_frame = 16384};
    if (h2b_h2f_start(&x.f, &s) != H2B_OK || h2b_h2f_slots(&x.f, x.nslots) != H2B_OK) {
        h2b_h2f_free(&x.f);
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
        x.f.ooff = x.f.olen; /* written */
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
    return 0;
}
