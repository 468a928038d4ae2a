/*
 * pool.h - a per-worker size-class allocator for nghttp2 (nghttp2_mem).
 *
 * nghttp2 allocates and frees several small blocks per request (stream, outbound item, header
 * copies, rcbufs). With tens of streams completing per read, glibc's per-thread cache overflows
 * and malloc/free became a fifth of the client's CPU. This pool keeps a free list per 32-byte
 * size class, carved from 64 KiB slabs, with no locks: one pool belongs to one worker thread and
 * only that thread's sessions use it. Memory is returned when the pool is freed, so it holds the
 * run's peak (bounded by connections and in-flight streams). Blocks above 4 KiB go to malloc.
 *
 * Under sanitizers (H2B_SANITIZED) the pool passes every call through to malloc/free so that
 * AddressSanitizer still sees each block.
 */
#ifndef H2B_LOAD_POOL_H
#define H2B_LOAD_POOL_H

#include <nghttp2/nghttp2.h>
#include <stddef.h>

#define H2B_POOL_CLASSES 128

struct h2b_pool {
    void *free[H2B_POOL_CLASSES];
    unsigned char *cur, *end; /* bump region of the newest slab */
    void *slabs;              /* singly linked through each slab's first word */
};

/* Caller-storage pool; h2b_pool_free releases every slab (all blocks must be dead by then). */
void h2b_pool_init(struct h2b_pool *p);
void h2b_pool_free(struct h2b_pool *p);

void *h2b_pool_malloc(size_t size, void *pool);
void h2b_pool_release(void *ptr, void *pool);
void *h2b_pool_calloc(size_t n, size_t size, void *pool);
void *h2b_pool_realloc(void *ptr, size_t size, void *pool);

/* An nghttp2_mem that allocates from p (p must outlive every session using it). */
nghttp2_mem h2b_pool_nghttp2_mem(struct h2b_pool *p);

#endif
