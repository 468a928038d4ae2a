/*
 * pool.h - the one pool: per-thread size classes for small blocks, and free lists of one
 * size for large ones, both without locks and bypassed under sanitizers.
 *
 * struct h2b_pool: a free list per 32-byte size class up to 4 KiB, carved from 64 KiB slabs.
 * It serves an nghttp2_mem (pool_nghttp2.h): nghttp2 allocates and frees several small blocks
 * per request (stream, outbound items, header copies, rcbufs), and glibc's per-thread cache
 * overflows when tens of streams complete per read (malloc/free were a fifth of the load
 * generator's CPU; ~120 instructions each way in the server, ~15 from a free list). Memory
 * goes back to malloc when the pool is freed, so a pool holds its peak. Blocks above 4 KiB
 * pass through to malloc. A stats hook counts the allocating calls.
 *
 * struct h2b_freelist: blocks of one size (a server's streams, body chunks, output buffers)
 * kept for reuse up to a bound, the rest freed; get and put say when they called malloc or
 * free, so a caller can keep a memory count.
 *
 * Threads: a pool or free list belongs to one thread; only the hook's counter may be read by
 * others (relaxed atomics). Under sanitizers (H2B_SANITIZED) every call goes to malloc/free so
 * that AddressSanitizer still sees each block and each free.
 */
#ifndef H2B_CORE_POOL_H
#define H2B_CORE_POOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#define H2B_POOL_CLASSES 128

struct h2b_pool {
    void *free[H2B_POOL_CLASSES];
    unsigned char *cur, *end; /* bump region of the newest slab */
    void *slabs;              /* singly linked through each slab's first word */
    uint64_t *calls;          /* stats hook, or NULL (h2b_pool_count_into) */
};

/* Caller-storage pool; h2b_pool_free releases every slab (all blocks must be dead by then). */
void h2b_pool_init(struct h2b_pool *p);
void h2b_pool_free(struct h2b_pool *p);

/* The stats hook: every allocating call (malloc, calloc, a realloc that moves or grows a large
 * block) adds 1 to *calls, written by the pool's thread with relaxed atomics so that another
 * thread may read it. NULL turns it off. */
void h2b_pool_count_into(struct h2b_pool *p, uint64_t *calls);

/* The malloc family over pool (a struct h2b_pool *), in nghttp2_mem's shape. */
void *h2b_pool_malloc(size_t size, void *pool);
void h2b_pool_release(void *ptr, void *pool);
void *h2b_pool_calloc(size_t n, size_t size, void *pool);
void *h2b_pool_realloc(void *ptr, size_t size, void *pool);

struct h2b_freelist {
    void *head; /* singly linked through each block's first word */
    size_t n;   /* blocks on the list */
    size_t keep;
    size_t size;
};

/* Caller storage: blocks of size bytes (at least a pointer), at most keep kept for reuse. */
static inline void h2b_freelist_init(struct h2b_freelist *f, size_t size, size_t keep)
{
    f->head = NULL;
    f->n = 0;
    f->keep = keep;
    f->size = size < sizeof(void *) ? sizeof(void *) : size;
}

/* A block (contents undefined), or NULL when malloc failed. *fresh: it came from malloc. */
static inline void *h2b_freelist_get(struct h2b_freelist *f, bool *fresh)
{
#ifndef H2B_SANITIZED
    void *b = f->head;
    if (b) {
        f->head = *(void **)b;
        f->n--;
        *fresh = false;
        return b;
    }
#endif
    *fresh = true;
    return malloc(f->size);
}

/* Keeps b for reuse when the list has room: true. False leaves b to the caller (the list is
 * full, or under sanitizers), to free after its own accounting: with the free first, as in
 * h2b_freelist_put, a caller's count after it keeps the caller's state live across the call. */
static inline bool h2b_freelist_keep(struct h2b_freelist *f, void *b)
{
#ifndef H2B_SANITIZED
    if (f->n < f->keep) {
        *(void **)b = f->head;
        f->head = b;
        f->n++;
        return true;
    }
#else
    (void)f, (void)b;
#endif
    return false;
}

/* Takes b back; true when it went to free() (the list was full, or under sanitizers). */
static inline bool h2b_freelist_put(struct h2b_freelist *f, void *b)
{
    if (h2b_freelist_keep(f, b))
        return false;
    free(b);
    return true;
}

/* Frees every kept block. */
static inline void h2b_freelist_free(struct h2b_freelist *f)
{
    while (f->head) {
        void *b = f->head;
        f->head = *(void **)b;
        free(b);
    }
    f->n = 0;
}

#endif
