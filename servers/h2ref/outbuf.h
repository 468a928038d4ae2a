/*
 * outbuf.h - the output of an HTTP/2 connection, one copy for both engines (h2_nghttp2.c and
 * h2_fast.c): a pooled block of bytes and an iovec array, written
 * out with one writev (or SSL_write per entry) per flush.
 *
 * The block (H2B_OUTBUF_ALLOC bytes from the engine's free list) holds H2B_OUTBUF_SIZE bytes of
 * frames and, at its end, the H2B_OUT_IOV_MAX iovec entries of the flush, so an idle connection
 * holds neither: the engine attaches a block when it first writes and detaches it once
 * everything is sent. Bytes appended to the block extend the last entry when they follow it;
 * large static bodies are referenced (an entry of their own) instead of copied.
 *
 * Static inline: these run for every frame written. The engine keeps the policy: when to write,
 * how much room a kind of frame may take, where blocks come from and how they are counted.
 * One owner thread, as the connection.
 */
#ifndef H2B_H2REF_OUTBUF_H
#define H2B_H2REF_OUTBUF_H

#include "core/check.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#define H2B_OUTBUF_SIZE (64 * 1024) /* bytes of frames in a block */
#define H2B_OUT_IOV_MAX 64
#define H2B_OUTBUF_ALLOC (H2B_OUTBUF_SIZE + H2B_OUT_IOV_MAX * sizeof(struct iovec))
#define H2B_OUT_PENDING_MAX (512 * 1024) /* bytes queued at most, references included */

struct h2b_outbuf {
    uint8_t *buf;      /* the block while bytes are unsent, else NULL */
    struct iovec *iov; /* H2B_OUT_IOV_MAX entries at the block's end; NULL without buf */
    size_t len;        /* bytes of buf used */
    size_t pending;    /* bytes queued and not yet sent (copied and referenced) */
    int niov, ifirst;  /* iov[ifirst..niov) is unsent */
};

static inline bool h2b_outbuf_pending(const struct h2b_outbuf *o)
{
    return o->niov > o->ifirst;
}

/* Takes block (H2B_OUTBUF_ALLOC bytes) as the buffer; the outbuf holds none. */
static inline void h2b_outbuf_attach(struct h2b_outbuf *o, uint8_t *block)
{
    o->buf = block;
    o->iov = (struct iovec *)(void *)(block + H2B_OUTBUF_SIZE);
}

/* Empties the outbuf; returns its block for the caller to free (NULL: it held none). */
static inline uint8_t *h2b_outbuf_detach(struct h2b_outbuf *o)
{
    uint8_t *b = o->buf;
    o->niov = o->ifirst = 0;
    o->len = o->pending = 0;
    o->buf = NULL;
    o->iov = NULL;
    return b;
}

/* Appends n bytes at the buffer's end and returns where they go (the caller checked the room
 * and an iovec entry, and fills them). */
static inline uint8_t *h2b_outbuf_append(struct h2b_outbuf *o, size_t n)
{
    if (H2B_CHECK_SLOW) /* per frame: the budgets gate could not carry these two */
        H2B_ASSERT(n <= H2B_OUTBUF_SIZE - o->len); /* the caller checked the room */
    uint8_t *dst = o->buf + o->len;
    struct iovec *last = h2b_outbuf_pending(o) ? &o->iov[o->niov - 1] : NULL;
    if (last && (uint8_t *)last->iov_base + last->iov_len == dst) {
        last->iov_len += n;
    } else {
        if (H2B_CHECK_SLOW)
            H2B_ASSERT(o->niov < H2B_OUT_IOV_MAX); /* ... and an entry */
        o->iov[o->niov++] = (struct iovec){.iov_base = dst, .iov_len = n};
    }
    o->len += n;
    o->pending += n;
    return dst;
}

/* Queues n bytes at p that stay valid until they are sent (the caller checked an entry). */
static inline void h2b_outbuf_ref(struct h2b_outbuf *o, const void *p, size_t n)
{
    H2B_ASSERT(o->niov < H2B_OUT_IOV_MAX);
    o->iov[o->niov++] = (struct iovec){.iov_base = (void *)p, .iov_len = n};
    o->pending += n;
}

/* The count of unsent entries, and in *iov the first (untouched when there are none). */
static inline int h2b_outbuf_iov(const struct h2b_outbuf *o, const struct iovec **iov)
{
    if (!h2b_outbuf_pending(o))
        return 0;
    *iov = o->iov + o->ifirst;
    return o->niov - o->ifirst;
}

/* n bytes of the unsent entries went out. Returns true when nothing is left (the caller detaches
 * the block then). */
static inline bool h2b_outbuf_sent(struct h2b_outbuf *o, size_t n)
{
    H2B_ASSERT(n <= o->pending); /* the caller wrote no more than it was given */
    o->pending -= n;
    while (n > 0 && o->ifirst < o->niov) {
        struct iovec *v = &o->iov[o->ifirst];
        if (n >= v->iov_len) {
            n -= v->iov_len;
            o->ifirst++;
        } else {
            v->iov_base = (uint8_t *)v->iov_base + n;
            v->iov_len -= n;
            n = 0;
        }
    }
    H2B_ASSERT(n == 0); /* pending counted every byte of the entries */
    return o->ifirst == o->niov;
}

#endif
