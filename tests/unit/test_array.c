/*
 * test_array.c - h2b_array_grow (harness/core/array.h): the first capacity, doubling until the
 * need fits, elements kept across the realloc, and the refusals (zero sizes, a count or a byte
 * size past SIZE_MAX) that leave the caller's block and capacity untouched.
 */
#include "core/array.h"
#include "test.h"

#include <stdint.h>
#include <stdlib.h>

int main(void)
{
    /* From nothing: the first capacity, or first doubled until need fits. */
    size_t cap = 0;
    uint32_t *a = h2b_array_grow(NULL, &cap, 1, sizeof *a, 16);
    CHECK(a != NULL);
    CHECK_EQ_U64(cap, 16);
    for (uint32_t i = 0; i < 16; i++)
        a[i] = i * 7u;
    uint32_t *b = h2b_array_grow(a, &cap, 17, sizeof *b, 16);
    CHECK(b != NULL);
    CHECK_EQ_U64(cap, 32);
    bool kept = true;
    for (uint32_t i = 0; i < 16; i++)
        kept = kept && b[i] == i * 7u;
    CHECK(kept);
    a = b;
    b = h2b_array_grow(a, &cap, 200, sizeof *b, 16); /* 32 -> 64 -> 128 -> 256 */
    CHECK(b != NULL);
    CHECK_EQ_U64(cap, 256);
    b[255] = 1; /* the whole capacity is writable (ASan checks it) */
    free(b);

    size_t cap2 = 0;
    void *c = h2b_array_grow(NULL, &cap2, 100, 8, 4); /* 4 -> ... -> 128 */
    CHECK(c != NULL);
    CHECK_EQ_U64(cap2, 128);
    free(c);

    /* Refusals: NULL, the caller's block and capacity untouched. */
    size_t cap3 = 0;
    CHECK(h2b_array_grow(NULL, &cap3, 1, 8, 0) == NULL); /* no first capacity */
    CHECK_EQ_U64(cap3, 0);
    CHECK(h2b_array_grow(NULL, &cap3, 1, 0, 8) == NULL); /* zero-size elements */
    CHECK_EQ_U64(cap3, 0);
    size_t cap4 = 8;
    unsigned char *d = malloc(8);
    CHECK(d != NULL);
    if (!d)
        return test_report();
    d[7] = 42;
    CHECK(h2b_array_grow(d, &cap4, SIZE_MAX, 1, 8) == NULL); /* doubling would pass SIZE_MAX */
    CHECK_EQ_U64(cap4, 8);
    CHECK(h2b_array_grow(d, &cap4, 9, SIZE_MAX / 8, 8) == NULL); /* 16 elements' bytes overflow */
    CHECK_EQ_U64(cap4, 8);
    CHECK_EQ_INT(d[7], 42); /* still the caller's, intact */
    free(d);
    return test_report();
}
