/*
 * array.h - growing a caller's array of fixed-size elements by doubling.
 *
 * The caller keeps the pointer, the count and the capacity in its own struct (typed, so no
 * generic container and no macro); this is the one growth policy and the one overflow check.
 * Not thread-safe; the caller owns the block.
 */
#ifndef H2B_CORE_ARRAY_H
#define H2B_CORE_ARRAY_H

#include <stddef.h>

/* Room for need elements of elem bytes in arr, which holds *cap of them (arr NULL when *cap is
 * 0); call it only when need > *cap. The new capacity is first (when *cap is 0) or *cap,
 * doubled until it holds need. Returns the realloc'd block, its elements kept, and sets *cap;
 * NULL when out of memory or the size passes SIZE_MAX, with arr (still the caller's to free)
 * and *cap untouched. */
void *h2b_array_grow(void *arr, size_t *cap, size_t need, size_t elem, size_t first);

#endif
