/*
 * pool_nghttp2.h - a struct h2b_pool (pool.h) as nghttp2's allocator, for the load generator's
 * and the reference server's sessions. Header-only, so core itself does not depend on nghttp2.
 */
#ifndef H2B_CORE_POOL_NGHTTP2_H
#define H2B_CORE_POOL_NGHTTP2_H

#include "core/pool.h"

#include <nghttp2/nghttp2.h>

/* An nghttp2_mem that allocates from p (p must outlive every session using it). */
static inline nghttp2_mem h2b_pool_nghttp2_mem(struct h2b_pool *p)
{
    nghttp2_mem m = {p, h2b_pool_malloc, h2b_pool_release, h2b_pool_calloc, h2b_pool_realloc};
    return m;
}

#endif
