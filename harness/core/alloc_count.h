/*
 * alloc_count.h - the counter arithmetic shared by the interposer (alloc.c) and the nghttp2_mem
 * adapter (alloc_nghttp2.c). Internal to h2bench::alloc.
 *
 * The callers pass the usable size because the two files reach glibc's malloc_usable_size by
 * different routes (the interposer must not call its own interposed symbol before it resolved
 * glibc's; the adapter simply calls malloc_usable_size, which under sanitizers is theirs).
 */
#ifndef H2B_CORE_ALLOC_COUNT_H
#define H2B_CORE_ALLOC_COUNT_H

#include "core/alloc.h"

#include <stddef.h>
#include <string.h>

static inline void h2b__alloc_count_alloc(struct h2b_alloc_stats *c, size_t requested,
                                          size_t usable)
{
    c->allocs++;
    c->bytes += requested;
    c->usable_bytes += usable;
    c->live_bytes += (int64_t)usable;
    if (c->live_bytes > 0 && (uint64_t)c->live_bytes > c->peak_bytes)
        c->peak_bytes = (uint64_t)c->live_bytes;
}

static inline void h2b__alloc_count_free(struct h2b_alloc_stats *c, size_t usable)
{
    c->frees++;
    c->frees_bytes += usable;
    c->live_bytes -= (int64_t)usable;
}

/* Counts realloc(ptr, size) that returned p: old is the usable size of ptr taken before the call,
 * usable that of p. A failure (NULL, ptr untouched) counts nothing; realloc(ptr, 0) returning
 * NULL freed ptr. */
static inline void h2b__alloc_count_realloc(struct h2b_alloc_stats *c, const void *ptr, size_t old,
                                            const void *p, size_t size, size_t usable)
{
    if (p == NULL && !(ptr != NULL && size == 0))
        return;
    if (ptr != NULL)
        h2b__alloc_count_free(c, old);
    if (p != NULL)
        h2b__alloc_count_alloc(c, size, usable);
}

#endif
