/*
 * test_pool.c - the one pool (harness/core/pool.h): size classes, large pass-through, realloc,
 * calloc, the stats hook, and free lists of one size with their bound and malloc/free flags.
 * Under sanitizers (H2B_SANITIZED) blocks are never reused; the checks that depend on reuse
 * say so.
 */
#include "core/pool.h"
#include "test.h"

static void test_classes(void)
{
    struct h2b_pool p;
    h2b_pool_init(&p);
    uint64_t calls = 0;
    h2b_pool_count_into(&p, &calls);
    static const size_t sizes[] = {0, 1, 15, 16, 17, 48, 64, 100, 512, 1000, 4064, 4065, 70000};
    void *b[sizeof sizes / sizeof sizes[0]];
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        b[i] = h2b_pool_malloc(sizes[i], &p);
        CHECK(b[i] != NULL);
        CHECK(((uintptr_t)b[i] & 15) == 0); /* 16-byte aligned, as malloc's */
        memset(b[i], (int)i, sizes[i]);
    }
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        const unsigned char *q = b[i];
        size_t bad = 0;
        for (size_t k = 0; k < sizes[i]; k++)
            bad += q[k] != (unsigned char)i;
        CHECK_EQ_U64(bad, 0); /* no block overlaps another */
    }
    CHECK_EQ_U64(calls, sizeof sizes / sizeof sizes[0]);
    h2b_pool_release(b[6], &p); /* 64 bytes */
    void *again = h2b_pool_malloc(60, &p);
#ifndef H2B_SANITIZED
    CHECK(again == b[6]); /* same class: the freed block comes back */
#endif
    b[6] = again;
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        h2b_pool_release(b[i], &p);
    h2b_pool_release(NULL, &p);
    h2b_pool_free(&p);
}

static void test_realloc_calloc(void)
{
    struct h2b_pool p;
    h2b_pool_init(&p);
    uint64_t calls = 0;
    h2b_pool_count_into(&p, &calls);
    unsigned char *a = h2b_pool_realloc(NULL, 10, &p);
    CHECK(a != NULL);
    if (!a)
        return;
    memcpy(a, "0123456789", 10);
    unsigned char *b = h2b_pool_realloc(a, 12, &p); /* fits its class */
    CHECK(b != NULL && memcmp(b, "0123456789", 10) == 0);
    unsigned char *c = h2b_pool_realloc(b, 3000, &p);
    CHECK(c != NULL && memcmp(c, "0123456789", 10) == 0);
    unsigned char *d = h2b_pool_realloc(c, 100000, &p); /* to a large block */
    CHECK(d != NULL && memcmp(d, "0123456789", 10) == 0);
    if (!d)
        return;
    d[99999] = 7;
    unsigned char *e = h2b_pool_realloc(d, 200000, &p); /* a large block grows */
    CHECK(e != NULL && memcmp(e, "0123456789", 10) == 0 && e[99999] == 7);
    h2b_pool_release(e, &p);
    CHECK(calls >= 3);
    unsigned char *z = h2b_pool_calloc(7, 9, &p);
    CHECK(z != NULL);
    if (!z)
        return;
    size_t nonzero = 0;
    for (size_t i = 0; i < 63; i++)
        nonzero += z[i] != 0;
    CHECK_EQ_U64(nonzero, 0);
    h2b_pool_release(z, &p);
    CHECK(h2b_pool_calloc(SIZE_MAX / 2, 3, &p) == NULL); /* n * size overflows */
    h2b_pool_count_into(&p, NULL);
    uint64_t before = calls;
    h2b_pool_release(h2b_pool_malloc(8, &p), &p);
    CHECK_EQ_U64(calls, before); /* the hook is off */
    h2b_pool_free(&p);
}

static void test_many(void)
{
    /* more than one slab of one class, freed and taken again */
    struct h2b_pool p;
    h2b_pool_init(&p);
    enum { N = 5000 };
    static void *v[N];
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < N; i++) {
            v[i] = h2b_pool_malloc(100 + (size_t)(i % 7) * 50, &p);
            CHECK(v[i] != NULL);
            memset(v[i], i & 0xff, 100);
        }
        size_t bad = 0;
        for (int i = 0; i < N; i++)
            bad += ((unsigned char *)v[i])[99] != (unsigned char)(i & 0xff);
        CHECK_EQ_U64(bad, 0);
        for (int i = 0; i < N; i++)
            h2b_pool_release(v[i], &p);
    }
    h2b_pool_free(&p);
}

static void test_freelist(void)
{
    struct h2b_freelist f;
    h2b_freelist_init(&f, 100, 2);
    bool fresh = false;
    void *a = h2b_freelist_get(&f, &fresh);
    CHECK(a != NULL && fresh);
    void *b = h2b_freelist_get(&f, &fresh);
    void *c = h2b_freelist_get(&f, &fresh);
    CHECK(b != NULL && c != NULL && fresh);
    if (!c)
        return;
    memset(c, 1, 100);
#ifndef H2B_SANITIZED
    CHECK(!h2b_freelist_put(&f, a)); /* kept */
    CHECK(!h2b_freelist_put(&f, b)); /* kept */
    CHECK(h2b_freelist_put(&f, c));  /* over the bound: freed */
    CHECK_EQ_U64(f.n, 2);
    void *d = h2b_freelist_get(&f, &fresh);
    CHECK(d == b && !fresh); /* the last one kept comes back first */
    CHECK(!h2b_freelist_put(&f, d));
    void *e = malloc(100);
    CHECK(e != NULL && !h2b_freelist_keep(&f, e)); /* full: left to the caller */
    CHECK_EQ_U64(f.n, 2);
    free(e);
#else
    CHECK(h2b_freelist_put(&f, a)); /* sanitizers: every block is freed */
    CHECK(h2b_freelist_put(&f, b));
    CHECK(h2b_freelist_put(&f, c));
    CHECK_EQ_U64(f.n, 0);
    void *e = malloc(100);
    CHECK(e != NULL && !h2b_freelist_keep(&f, e)); /* sanitizers: never kept */
    free(e);
#endif
    h2b_freelist_free(&f);
    CHECK(f.head == NULL && f.n == 0);
    struct h2b_freelist tiny;
    h2b_freelist_init(&tiny, 1, 4); /* a block holds at least the link */
    CHECK(tiny.size == sizeof(void *));
    h2b_freelist_free(&tiny);
}

int main(void)
{
    test_classes();
    test_realloc_calloc();
    test_many();
    test_freelist();
    return test_report();
}
