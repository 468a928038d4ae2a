/*
 * array.c - doubling growth of a caller's array (array.h).
 *
 * Doubling keeps appends amortised O(1), with at most half the block unused. Rejected: a
 * generic vector type behind macros (h2o's H2O_VECTOR): every caller already keeps its own
 * typed pointer and counts, and reads better as plain C.
 */
#include "core/array.h"

#include <stdint.h>
#include <stdlib.h>

void *h2b_array_grow(void *arr, size_t *cap, size_t need, size_t elem, size_t first)
{
    size_t n = *cap ? *cap : first;
    if (n == 0 || elem == 0)
        return NULL;
    while (n < need) {
        if (n > SIZE_MAX / 2)
            return NULL;
        n *= 2;
    }
    if (n > SIZE_MAX / elem)
        return NULL;
    void *a = realloc(arr, n * elem);
    if (a)
        *cap = n;
    return a;
}
