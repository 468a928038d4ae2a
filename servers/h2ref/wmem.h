/*
 * wmem.h - a worker's memory for the two HTTP/2 engines, one copy (h2_nghttp2.c,
 * h2_fast.c): the server-wide memory budget count and the free lists of
 * streams, body chunks and output buffers (harness/core/pool.h's h2b_freelist, bypassed under
 * sanitizers).
 *
 * Budget: body chunks and output buffers are counted from malloc to free (kept blocks
 * included, so the count is what the buffers really take) into one counter shared by every
 * worker (--memory-budget). A worker adds to it in H2B_WMEM_GRANT steps, so the shared cache
 * line is touched about once per MiB rather than per buffer; the shared count is above what the
 * worker holds by at most two steps, so the budget refuses early, never late. Streams are not
 * counted (bounded by max_streams per connection).
 *
 * Static inline: stream, chunk and buffer get/put run for every request or response, and each
 * engine embeds the struct in its per-thread context. One owner thread; only the shared counter
 * is touched by others (relaxed atomics). Rejected: an atomic add per buffer (h2_fast.c's old
 * way: exact, but every worker's malloc of a buffer wrote the shared line); a separate list
 * header per engine (the logic is the same; only the stream type differs, so streams are
 * blocks of a size given at init and the engine clears its own fields).
 */
#ifndef H2B_H2REF_WMEM_H
#define H2B_H2REF_WMEM_H

#include "core/alloc.h"
#include "core/check.h"
#include "core/pool.h"
#include "h2ref/handlers.h"
#include "h2ref/outbuf.h"
#include "h2ref/stats.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define H2B_CHUNK_SIZE 16384       /* bytes of request body (/echo) in a chunk */
#define H2B_WMEM_GRANT (1u << 20)  /* the shared count moves in steps of this */
#define H2B_WMEM_KEEP_STREAMS 4096 /* free blocks kept for reuse, per list */
#define H2B_WMEM_KEEP_CHUNKS 256
#define H2B_WMEM_KEEP_BUFS 64
#define H2B_WMEM_KEEP_PATHS 256

/* A piece of a request body held for its response (/echo). */
struct h2b_chunk {
    struct h2b_chunk *next;
    size_t len; /* bytes stored */
    size_t off; /* bytes already taken */
    uint8_t data[H2B_CHUNK_SIZE];
};

/* A stream's chunks, oldest first. */
struct h2b_chunks {
    struct h2b_chunk *head, *tail;
    uint64_t bytes; /* bytes held (received, not yet taken) */
};

struct h2b_wmem {
    struct h2b_freelist streams, chunks, bufs;
    struct h2b_freelist paths; /* docroot :paths kept until their request ends (handlers.h) */
    uint64_t budget;           /* bytes (0: no budget) */
    _Atomic uint64_t *used;    /* the shared count, or &own_used */
    _Atomic uint64_t own_used; /* the count without a shared one */
    uint64_t held, granted;    /* bytes this worker holds; bytes of it added to *used */
};

/* Caller storage. stream_size: the engine's stream struct. used: the server-wide count, NULL for
 * the worker's own; budget in bytes, 0: none. */
static inline void h2b_wmem_init(struct h2b_wmem *m, size_t stream_size, uint64_t budget,
                                 _Atomic uint64_t *used)
{
    h2b_freelist_init(&m->streams, stream_size, H2B_WMEM_KEEP_STREAMS);
    h2b_freelist_init(&m->chunks, sizeof(struct h2b_chunk), H2B_WMEM_KEEP_CHUNKS);
    h2b_freelist_init(&m->bufs, H2B_OUTBUF_ALLOC, H2B_WMEM_KEEP_BUFS);
    h2b_freelist_init(&m->paths, H2B_FPATH_MAX, H2B_WMEM_KEEP_PATHS);
    m->budget = budget;
    atomic_init(&m->own_used, 0);
    m->used = used ? used : &m->own_used;
    m->held = m->granted = 0;
}

/* Frees the kept blocks and takes this worker's grant out of the shared count (every stream,
 * chunk and buffer must be back by then). */
static inline void h2b_wmem_free(struct h2b_wmem *m)
{
    h2b_freelist_free(&m->streams);
    h2b_freelist_free(&m->chunks);
    h2b_freelist_free(&m->bufs);
    h2b_freelist_free(&m->paths);
    atomic_fetch_sub_explicit(m->used, m->granted, memory_order_relaxed);
    m->held = m->granted = 0;
}

/* n bytes were allocated. Cold and out of line (also give and drop): they run when a free list
 * was empty or full, and inlined they cost the hot get/put paths registers and spills. */
static __attribute__((noinline, cold, unused)) void h2b_wmem_take(struct h2b_wmem *m, size_t n)
{
    m->held += n;
    while (m->held > m->granted) {
        atomic_fetch_add_explicit(m->used, H2B_WMEM_GRANT, memory_order_relaxed);
        m->granted += H2B_WMEM_GRANT;
    }
}

/* n bytes were freed. */
static __attribute__((noinline, cold, unused)) void h2b_wmem_give(struct h2b_wmem *m, size_t n)
{
    m->held -= n;
    while (m->granted - m->held > 2 * H2B_WMEM_GRANT) {
        atomic_fetch_sub_explicit(m->used, H2B_WMEM_GRANT, memory_order_relaxed);
        m->granted -= H2B_WMEM_GRANT;
    }
}

/* Frees block b of n counted bytes (its free list is full). */
static __attribute__((noinline, cold, unused)) void h2b_wmem_drop(struct h2b_wmem *m, void *b,
                                                                  size_t n)
{
    h2b_wmem_give(m, n);
    free(b);
}

/* True when the server holds its whole budget: new streams are refused, echo input dropped. */
static inline bool h2b_wmem_over(const struct h2b_wmem *m)
{
    return m->budget && atomic_load_explicit(m->used, memory_order_relaxed) >= m->budget;
}

/* A stream block with its first clear bytes zeroed (the rest undefined); NULL: no memory. */
static inline void *h2b_wmem_stream_get(struct h2b_wmem *m, size_t clear)
{
    bool fresh;
    void *st = h2b_freelist_get(&m->streams, &fresh);
    if (st)
        memset(st, 0, clear);
    return st;
}

static inline void h2b_wmem_stream_put(struct h2b_wmem *m, void *st)
{
    h2b_freelist_put(&m->streams, st);
}

/* An empty chunk, counted; NULL: no memory. */
static inline struct h2b_chunk *h2b_wmem_chunk_get(struct h2b_wmem *m)
{
    bool fresh;
    struct h2b_chunk *ch = h2b_freelist_get(&m->chunks, &fresh);
    if (ch) {
        if (fresh)
            h2b_wmem_take(m, sizeof *ch);
        ch->next = NULL;
        ch->len = ch->off = 0;
    }
    return ch;
}

/* Kept, else counted and freed. */
static inline void h2b_wmem_chunk_put(struct h2b_wmem *m, struct h2b_chunk *ch)
{
    if (!h2b_freelist_keep(&m->chunks, ch))
        h2b_wmem_drop(m, ch, sizeof *ch);
}

/* An output block of H2B_OUTBUF_ALLOC bytes (outbuf.h), counted; NULL: no memory. */
static inline uint8_t *h2b_wmem_buf_get(struct h2b_wmem *m)
{
    bool fresh;
    uint8_t *b = h2b_freelist_get(&m->bufs, &fresh);
    if (b && fresh)
        h2b_wmem_take(m, H2B_OUTBUF_ALLOC);
    return b;
}

static inline void h2b_wmem_buf_put(struct h2b_wmem *m, uint8_t *b)
{
    if (!h2b_freelist_keep(&m->bufs, b))
        h2b_wmem_drop(m, b, H2B_OUTBUF_ALLOC);
}

/* Gives o (holding no block) a block of its own; false: no memory. */
static inline bool h2b_wmem_out_attach(struct h2b_wmem *m, struct h2b_outbuf *o)
{
    uint8_t *b = h2b_wmem_buf_get(m);
    if (!b)
        return false;
    h2b_outbuf_attach(o, b);
    return true;
}

/* Empties o and puts its block (if any) back. */
static inline void h2b_wmem_out_detach(struct h2b_wmem *m, struct h2b_outbuf *o)
{
    uint8_t *b = h2b_outbuf_detach(o);
    if (b)
        h2b_wmem_buf_put(m, b);
}

/* Appends n bytes at p to q, in new chunks as the last fills. Returns the bytes stored: fewer
 * than n when a chunk could not be had (no memory). */
static inline size_t h2b_wmem_chunks_append(struct h2b_wmem *m, struct h2b_chunks *q,
                                            const uint8_t *p, size_t n)
{
    size_t done = 0;
    while (done < n) {
        struct h2b_chunk *ch = q->tail;
        if (!ch || ch->len == H2B_CHUNK_SIZE) {
            ch = h2b_wmem_chunk_get(m);
            if (!ch)
                break;
            if (q->tail)
                q->tail->next = ch;
            else
                q->head = ch;
            q->tail = ch;
        }
        size_t k = H2B_CHUNK_SIZE - ch->len;
        if (k > n - done)
            k = n - done;
        memcpy(ch->data + ch->len, p + done, k);
        ch->len += k;
        q->bytes += k;
        done += k;
    }
    return done;
}

/* Copies n bytes (at most q->bytes) from q's front into o, which has the room and an iovec
 * entry (outbuf.h); chunks emptied are put back, except the last when keep_tail (an /echo body
 * still arriving fills it further). */
static inline void h2b_wmem_chunks_take(struct h2b_wmem *m, struct h2b_chunks *q,
                                        struct h2b_outbuf *o, size_t n, bool keep_tail)
{
    H2B_ASSERT(n <= q->bytes);
    q->bytes -= n;
    while (n > 0) {
        struct h2b_chunk *ch = q->head;
        size_t k = ch->len - ch->off;
        if (k > n)
            k = n;
        memcpy(h2b_outbuf_append(o, k), ch->data + ch->off, k);
        ch->off += k;
        n -= k;
        if (ch->off == ch->len && (ch->next || !keep_tail || ch->len == H2B_CHUNK_SIZE)) {
            q->head = ch->next;
            if (!q->head)
                q->tail = NULL;
            h2b_wmem_chunk_put(m, ch);
        }
    }
}

static __attribute__((noinline, unused)) void h2b_wmem_chunks_free_all(struct h2b_wmem *m,
                                                                       struct h2b_chunks *q)
{
    while (q->head) {
        struct h2b_chunk *ch = q->head;
        q->head = ch->next;
        h2b_wmem_chunk_put(m, ch);
    }
    q->tail = NULL;
    q->bytes = 0;
}

/* Puts back every chunk of q (empty after). Out of line when there are any: a stream's release
 * runs for every request, and most hold none. */
static inline void h2b_wmem_chunks_free(struct h2b_wmem *m, struct h2b_chunks *q)
{
    if (q->head)
        h2b_wmem_chunks_free_all(m, q);
}

/* What one stream holds until it ends, whatever the HTTP/2 engine: its echo chunks or /stats
 * JSON, and a docroot path and file (handlers.h). Cleared with the stream (zero is "nothing",
 * except fd, which the engine sets to -1). */
struct h2b_shold {
    struct h2b_chunks chunks; /* echo: received, not yet sent; /stats: the JSON */
    char *fpath;              /* docroot :path kept until the request completes (handlers.h) */
    uint16_t fpath_len;
    int fd;
};

/* What a connection's streams hold together. */
struct h2b_chold {
    uint32_t nstreams;   /* open streams */
    uint32_t files_open; /* docroot files its streams hold (handlers.h's budgets) */
    uint64_t echo_bytes; /* /echo bytes held by all its streams */
};

/* The end of a stream, for both HTTP/2 engines (the engine has unlinked st from its lists
 * first): its chunks (counted out of echo_bytes when echo), its file and path, its place in the
 * open count, and st itself back to m's free list. */
static inline void h2b_wmem_stream_release(struct h2b_wmem *m, void *st, struct h2b_shold *sh,
                                           struct h2b_chold *ch, bool echo,
                                           const struct h2b_conn_config *cfg,
                                           struct h2b_stats *stats)
{
    if (echo) {
        H2B_ASSERT(ch->echo_bytes >= sh->chunks.bytes);
        ch->echo_bytes -= sh->chunks.bytes;
    }
    h2b_wmem_chunks_free(m, &sh->chunks);
    h2b_docroot_close(&sh->fd, &sh->fpath, &ch->files_open, cfg, &m->paths);
    H2B_ASSERT(ch->nstreams > 0);
    ch->nstreams--;
    h2b_stats_sub(stats, H2B_STAT_STREAMS_OPEN, 1);
    h2b_wmem_stream_put(m, st);
}

/* The /stats response body into q, one chunk: fn(arg) renders it (the server-wide JSON), or,
 * without fn, this worker's stats. Sets rs's length, or its status to 500 (rendering failed)
 * or 503 (no memory for the chunk). Out of line: /stats is rare. */
static __attribute__((noinline, unused)) void
h2b_wmem_stats_body(struct h2b_wmem *m, struct h2b_chunks *q, struct h2b_response *rs,
                    h2b_conn_stats_fn fn, void *arg, const struct h2b_stats *stats)
{
    struct h2b_chunk *ch = h2b_wmem_chunk_get(m);
    int n = !ch  ? H2B_ERR_NOMEM
            : fn ? fn(arg, (char *)ch->data, H2B_CHUNK_SIZE)
                 : h2b_stats_json(stats, h2b_alloc_counting_available(), (char *)ch->data,
                                  H2B_CHUNK_SIZE);
    if (n >= 0) {
        H2B_ASSERT((size_t)n <= H2B_CHUNK_SIZE);
        ch->len = (size_t)n;
        q->head = q->tail = ch;
        q->bytes = (uint64_t)n;
        rs->len = (uint64_t)n;
    } else {
        if (ch)
            h2b_wmem_chunk_put(m, ch);
        h2b_response_status(rs, ch ? 500 : 503);
    }
}

#endif
