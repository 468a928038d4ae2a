/*
 * alloc_nghttp2.c - an nghttp2_mem that counts what libnghttp2 allocates.
 *
 * nghttp2 routes every allocation of a session or HPACK context through the nghttp2_mem given to
 * its *_new2/_new3 constructors, so counting there gives library-scoped numbers that exclude the
 * harness, OpenSSL and test scaffolding, and works under sanitizers where the interposer cannot.
 * The functions call plain malloc & co., so with the interposer linked and armed both count the
 * same events. Counters are per thread (the thread that performs the call), always on: a
 * counted block costs two thread-local updates and a malloc_usable_size call.
 */
#include "core/alloc.h"
#include "core/alloc_count.h"

#include <malloc.h>
#include <stdlib.h>
#include <string.h>

static __thread struct h2b_alloc_stats ng_counters __attribute__((tls_model("initial-exec")));

static void *ng_malloc(size_t size, void *user_data)
{
    (void)user_data;
    void *p = malloc(size);
    if (p != NULL)
        h2b__alloc_count_alloc(&ng_counters, size, malloc_usable_size(p));
    return p;
}

static void ng_free(void *ptr, void *user_data)
{
    (void)user_data;
    if (ptr != NULL)
        h2b__alloc_count_free(&ng_counters, malloc_usable_size(ptr));
    free(ptr);
}

static void *ng_calloc(size_t nmemb, size_t size, void *user_data)
{
    (void)user_data;
    void *p = calloc(nmemb, size);
    if (p != NULL)
        h2b__alloc_count_alloc(&ng_counters, nmemb * size, malloc_usable_size(p));
    return p;
}

static void *ng_realloc(void *ptr, size_t size, void *user_data)
{
    (void)user_data;
    size_t old = ptr ? malloc_usable_size(ptr) : 0;
    void *p = realloc(ptr, size);
    h2b__alloc_count_realloc(&ng_counters, ptr, old, p, size, p ? malloc_usable_size(p) : 0);
    return p;
}

static nghttp2_mem ng_mem = {
    .mem_user_data = NULL,
    .malloc = ng_malloc,
    .free = ng_free,
    .calloc = ng_calloc,
    .realloc = ng_realloc,
};

nghttp2_mem *h2b_alloc_nghttp2_mem(void)
{
    return &ng_mem;
}

void h2b_alloc_nghttp2_read(struct h2b_alloc_stats *out)
{
    *out = ng_counters;
}

void h2b_alloc_nghttp2_reset(void)
{
    memset(&ng_counters, 0, sizeof(ng_counters));
}
