/*
 * pool.c - size-class free lists over bump-allocated slabs (see pool.h).
 *
 * Every block has a 16-byte header in front (keeping 16-byte alignment) holding its class, or
 * LARGE and its size for malloc'd blocks. The stats hook is one relaxed load and store per
 * allocating call (the pool's thread is the only writer). Rejected: a general allocator
 * (jemalloc-style) is not a Debian dependency we want, and glibc tunables (tcache count)
 * cannot be set per thread; classes in powers of two (the server's first pool) waste up to
 * half of each block, 32-byte steps at most 31 bytes; blocks malloc'd one by one and freed
 * beyond a bound (also the server's first pool) cost a malloc header each and gain nothing in
 * a thread whose peak comes back every run.
 */
#include "core/pool.h"

#include <string.h>

#define HDR 16
#define STEP 32
#define SMALL_MAX (H2B_POOL_CLASSES * STEP) /* block size, header included */
#define SLAB (64 * 1024)
#define LARGE UINT32_MAX

struct hdr {
    uint32_t cls;
    uint32_t pad;
    uint64_t size; /* LARGE blocks: the usable size */
};

void h2b_pool_init(struct h2b_pool *p)
{
    memset(p, 0, sizeof(*p));
}

void h2b_pool_count_into(struct h2b_pool *p, uint64_t *calls)
{
    p->calls = calls;
}

void h2b_pool_free(struct h2b_pool *p)
{
    void *s = p->slabs;
    while (s) {
        void *next = *(void **)s;
        free(s);
        s = next;
    }
    memset(p, 0, sizeof(*p));
}

static void count(struct h2b_pool *p)
{
    if (p->calls)
        __atomic_store_n(p->calls, __atomic_load_n(p->calls, __ATOMIC_RELAXED) + 1,
                         __ATOMIC_RELAXED);
}

#ifndef H2B_SANITIZED

void *h2b_pool_malloc(size_t size, void *pool)
{
    struct h2b_pool *p = pool;
    count(p);
    if (size > SMALL_MAX - HDR) {
        struct hdr *h = malloc(HDR + size);
        if (!h)
            return NULL;
        h->cls = LARGE;
        h->size = size;
        return (unsigned char *)h + HDR;
    }
    uint32_t cls = (uint32_t)((size + HDR - 1) / STEP);
    void *b = p->free[cls];
    if (b) {
        p->free[cls] = *(void **)b;
        return b;
    }
    size_t bytes = (size_t)(cls + 1) * STEP;
    if ((size_t)(p->end - p->cur) < bytes) {
        unsigned char *slab = malloc(SLAB);
        if (!slab)
            return NULL;
        *(void **)slab = p->slabs;
        p->slabs = slab;
        p->cur = slab + HDR; /* the link word sits in the first header-sized slot */
        p->end = slab + SLAB;
    }
    struct hdr *h = (struct hdr *)p->cur;
    p->cur += bytes;
    h->cls = cls;
    return (unsigned char *)h + HDR;
}

void h2b_pool_release(void *ptr, void *pool)
{
    struct h2b_pool *p = pool;
    if (!ptr)
        return;
    struct hdr *h = (struct hdr *)((unsigned char *)ptr - HDR);
    if (h->cls == LARGE) {
        free(h);
        return;
    }
    *(void **)ptr = p->free[h->cls];
    p->free[h->cls] = ptr;
}

void *h2b_pool_realloc(void *ptr, size_t size, void *pool)
{
    if (!ptr)
        return h2b_pool_malloc(size, pool);
    if (size == 0) {
        h2b_pool_release(ptr, pool);
        return NULL;
    }
    struct hdr *h = (struct hdr *)((unsigned char *)ptr - HDR);
    size_t have = h->cls == LARGE ? h->size : (size_t)(h->cls + 1) * STEP - HDR;
    if (size <= have)
        return ptr;
    if (h->cls == LARGE) {
        count(pool);
        struct hdr *n = realloc(h, HDR + size);
        if (!n)
            return NULL;
        n->size = size;
        return (unsigned char *)n + HDR;
    }
    void *n = h2b_pool_malloc(size, pool);
    if (!n)
        return NULL;
    memcpy(n, ptr, have);
    h2b_pool_release(ptr, pool);
    return n;
}

#else /* sanitizers: every block is a malloc block */

void *h2b_pool_malloc(size_t size, void *pool)
{
    count(pool);
    return malloc(size);
}

void h2b_pool_release(void *ptr, void *pool)
{
    (void)pool;
    free(ptr);
}

void *h2b_pool_realloc(void *ptr, size_t size, void *pool)
{
    count(pool);
    return realloc(ptr, size);
}

#endif

void *h2b_pool_calloc(size_t n, size_t size, void *pool)
{
    if (size && n > SIZE_MAX / size)
        return NULL;
    void *b = h2b_pool_malloc(n * size, pool);
    if (b)
        memset(b, 0, n * size);
    return b;
}
