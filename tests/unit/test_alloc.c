/*
 * test_alloc.c - the counting allocator: exact counts of a known pattern, allocations made inside
 * libc and libnghttp2.so, every malloc-family entry point, per-thread isolation, and the
 * nghttp2_mem adapter agreeing with the interposer.
 *
 * Built with -fno-builtin so the compiler cannot fold away the malloc/free pairs under test.
 * Under sanitizers the interposer is absent: its checks are skipped with a printed reason and
 * the adapter's checks still run.
 */
#include "core/alloc.h"
#include "test.h"

#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static struct h2b_alloc_stats measured;

static void begin(void)
{
    h2b_alloc_reset();
    h2b_alloc_arm();
}

static void end(void)
{
    h2b_alloc_disarm();
    h2b_alloc_read(&measured);
}

static void check_balanced(const struct h2b_alloc_stats *s)
{
    CHECK_EQ_U64(s->frees, s->allocs);
    CHECK_EQ_INT(s->live_bytes, 0);
    CHECK_EQ_U64(s->frees_bytes, s->usable_bytes);
    CHECK(s->usable_bytes >= s->bytes);
}

static void test_known_pattern(void)
{
    void *blocks[15];
    begin();
    for (int i = 0; i < 10; i++)
        blocks[i] = malloc(100);
    for (int i = 10; i < 15; i++)
        blocks[i] = calloc(4, 25);
    struct h2b_alloc_stats mid;
    h2b_alloc_read(&mid);
    for (int i = 0; i < 15; i++)
        free(blocks[i]);
    free(NULL); /* not counted */
    end();
    CHECK_EQ_U64(mid.allocs, 15);
    CHECK_EQ_U64(mid.frees, 0);
    CHECK_EQ_U64(mid.bytes, 1500);
    CHECK(mid.live_bytes >= 1500);
    CHECK_EQ_U64(measured.allocs, 15);
    CHECK_EQ_U64(measured.bytes, 1500);
    CHECK_EQ_U64(measured.peak_bytes, (uint64_t)mid.live_bytes);
    check_balanced(&measured);
    printf("known pattern: 15 allocs, 1500 bytes requested, %" PRIu64 " usable, peak %" PRIu64 "\n",
           measured.usable_bytes, measured.peak_bytes);
}

static void test_disarmed_not_counted(void)
{
    h2b_alloc_reset();
    CHECK(!h2b_alloc_armed());
    void *p = malloc(64);
    char *s = strdup("not counted");
    free(s);
    free(p);
    h2b_alloc_read(&measured);
    CHECK_EQ_U64(measured.allocs, 0);
    CHECK_EQ_U64(measured.frees, 0);
    CHECK_EQ_U64(measured.bytes, 0);

    /* Arming keeps the counters; disarming stops them where they are. */
    begin();
    free(malloc(8));
    h2b_alloc_disarm();
    free(malloc(8));
    h2b_alloc_arm();
    free(malloc(8));
    end();
    CHECK_EQ_U64(measured.allocs, 2);
    CHECK_EQ_U64(measured.bytes, 16);
}

static void test_inside_libc(void)
{
    begin();
    char *s = strdup("hello");
    end();
    CHECK_EQ_U64(measured.allocs, 1);
    CHECK_EQ_U64(measured.bytes, 6);
    begin();
    free(s);
    end();
    CHECK_EQ_U64(measured.frees, 1);
    CHECK(measured.live_bytes < 0); /* freed a block allocated in an earlier window */
}

static void test_inside_nghttp2(void)
{
    nghttp2_hd_deflater *deflater = NULL;
    begin();
    int rv = nghttp2_hd_deflate_new(&deflater, 4096);
    end();
    CHECK_EQ_INT(rv, 0);
    CHECK(measured.allocs >= 1);
    CHECK(measured.bytes >= 64);
    uint64_t allocs = measured.allocs;
    begin();
    nghttp2_hd_deflate_del(deflater);
    end();
    CHECK_EQ_U64(measured.frees, allocs);
    printf("nghttp2_hd_deflate_new: %" PRIu64 " allocs, %" PRIu64 " bytes (via libnghttp2.so)\n",
           allocs, measured.frees_bytes);
}

static void test_entry_points(void)
{
    /* realloc: a NULL pointer allocates, growing counts one alloc and one free, size 0 frees. */
    begin();
    char *p = realloc(NULL, 10);
    p = realloc(p, 1000);
    char *q = realloc(p, 0); /* glibc: frees p, returns NULL */
    end();
    CHECK(q == NULL);
    CHECK_EQ_U64(measured.allocs, 2);
    CHECK_EQ_U64(measured.frees, 2);
    CHECK_EQ_U64(measured.bytes, 1010);
    CHECK_EQ_INT(measured.live_bytes, 0);

    /* reallocarray: counted like realloc; overflow fails with ENOMEM and counts nothing. */
    begin();
    void *r = reallocarray(NULL, 10, 10);
    errno = 0;
    volatile size_t huge = SIZE_MAX / 2; /* volatile: the compiler would reject the constant */
    void *overflow = reallocarray(NULL, huge, 3);
    int overflow_errno = errno;
    free(r);
    end();
    CHECK(overflow == NULL);
    CHECK_EQ_INT(overflow_errno, ENOMEM);
    CHECK_EQ_U64(measured.allocs, 1);
    CHECK_EQ_U64(measured.bytes, 100);
    check_balanced(&measured);

    /* The aligned family. */
    void *pm = NULL, *bad = NULL;
    begin();
    int pm_rv = posix_memalign(&pm, 64, 100);
    int bad_rv = posix_memalign(&bad, 3, 100);
    void *aa = aligned_alloc(128, 256);
    void *ma = memalign(32, 48);
    void *va = valloc(10);
    void *pv = pvalloc(20);
    struct h2b_alloc_stats mid;
    h2b_alloc_read(&mid);
    free(pm);
    free(aa);
    free(ma);
    free(va);
    free(pv);
    end();
    CHECK_EQ_INT(pm_rv, 0);
    CHECK_EQ_INT(bad_rv, EINVAL);
    CHECK(bad == NULL);
    CHECK(pm && ((uintptr_t)pm % 64) == 0);
    CHECK(aa && ((uintptr_t)aa % 128) == 0);
    CHECK(ma && ((uintptr_t)ma % 32) == 0);
    CHECK(va && ((uintptr_t)va % 4096) == 0);
    CHECK(pv && ((uintptr_t)pv % 4096) == 0);
    CHECK_EQ_U64(mid.allocs, 5);
    CHECK_EQ_U64(mid.bytes, 100 + 256 + 48 + 10 + 20);
    check_balanced(&measured);

    /* malloc_usable_size reaches glibc's; calloc zeroes; free keeps errno. */
    char *u = calloc(3, 7);
    CHECK(malloc_usable_size(u) >= 21);
    CHECK(u && u[0] == 0 && u[20] == 0);
    CHECK_EQ_U64(malloc_usable_size(NULL), 0);
    begin();
    errno = 42;
    free(u);
    end();
    CHECK_EQ_INT(errno, 42);
    CHECK_EQ_U64(measured.frees, 1);
}

struct thread_arg {
    pthread_barrier_t *barrier;
    struct h2b_alloc_stats seen;
};

static void *other_thread(void *argp)
{
    struct thread_arg *arg = argp;
    void *blocks[7];
    pthread_barrier_wait(arg->barrier);
    h2b_alloc_arm();
    for (int i = 0; i < 7; i++)
        blocks[i] = malloc(1000);
    for (int i = 0; i < 7; i++)
        free(blocks[i]);
    h2b_alloc_disarm();
    h2b_alloc_read(&arg->seen);
    pthread_barrier_wait(arg->barrier);
    return NULL;
}

static void test_per_thread(void)
{
    pthread_barrier_t barrier;
    pthread_barrier_init(&barrier, NULL, 2);
    struct thread_arg arg = {.barrier = &barrier};
    pthread_t t;
    CHECK_EQ_INT(pthread_create(&t, NULL, other_thread, &arg), 0);
    begin();
    pthread_barrier_wait(&barrier);
    void *mine[3];
    for (int i = 0; i < 3; i++)
        mine[i] = malloc(10);
    for (int i = 0; i < 3; i++)
        free(mine[i]);
    pthread_barrier_wait(&barrier);
    end();
    pthread_join(t, NULL);
    pthread_barrier_destroy(&barrier);
    CHECK_EQ_U64(arg.seen.allocs, 7);
    CHECK_EQ_U64(arg.seen.bytes, 7000);
    CHECK_EQ_U64(measured.allocs, 3);
    CHECK_EQ_U64(measured.bytes, 30);
}

/* Deflates one request header block; every allocation goes through the deflater's mem. */
static int deflate_once(nghttp2_mem *mem, struct h2b_alloc_stats *adapter_out)
{
    static const nghttp2_nv nva[] = {
        {(uint8_t *)":method", (uint8_t *)"GET", 7, 3, 0},
        {(uint8_t *)":path", (uint8_t *)"/index.html", 5, 11, 0},
        {(uint8_t *)"user-agent", (uint8_t *)"h2bench-test/1", 10, 14, 0},
    };
    uint8_t out[256];
    nghttp2_hd_deflater *deflater = NULL;
    h2b_alloc_nghttp2_reset();
    int rv = mem ? nghttp2_hd_deflate_new2(&deflater, 4096, mem)
                 : nghttp2_hd_deflate_new(&deflater, 4096);
    if (rv != 0)
        return rv;
    ssize_t n = nghttp2_hd_deflate_hd(deflater, out, sizeof(out), (nghttp2_nv *)nva, 3);
    nghttp2_hd_deflate_del(deflater);
    h2b_alloc_nghttp2_read(adapter_out);
    return n > 0 ? 0 : -1;
}

static void test_nghttp2_adapter(bool interposing)
{
    nghttp2_mem *mem = h2b_alloc_nghttp2_mem();

    /* The adapter's own arithmetic on a known pattern. */
    h2b_alloc_nghttp2_reset();
    void *a = mem->malloc(100, mem->mem_user_data);
    void *b = mem->calloc(2, 50, mem->mem_user_data);
    a = mem->realloc(a, 300, mem->mem_user_data);
    mem->free(a, mem->mem_user_data);
    mem->free(b, mem->mem_user_data);
    struct h2b_alloc_stats s;
    h2b_alloc_nghttp2_read(&s);
    CHECK_EQ_U64(s.allocs, 3);
    CHECK_EQ_U64(s.bytes, 100 + 100 + 300);
    check_balanced(&s);

    struct h2b_alloc_stats via_adapter, ignored;
    begin();
    CHECK_EQ_INT(deflate_once(mem, &via_adapter), 0);
    end();
    CHECK(via_adapter.allocs >= 1);
    check_balanced(&via_adapter);
    printf("deflater via nghttp2_mem: %" PRIu64 " allocs, %" PRIu64 " bytes\n", via_adapter.allocs,
           via_adapter.bytes);
    if (!interposing)
        return;
    /* Everything the adapter saw, the interposer saw, and nothing else happened in between. */
    CHECK_EQ_U64(measured.allocs, via_adapter.allocs);
    CHECK_EQ_U64(measured.bytes, via_adapter.bytes);
    CHECK_EQ_U64(measured.frees, via_adapter.frees);
    /* And the same work through nghttp2's default allocator costs the same. */
    begin();
    CHECK_EQ_INT(deflate_once(NULL, &ignored), 0);
    end();
    CHECK_EQ_U64(ignored.allocs, 0);
    CHECK_EQ_U64(measured.allocs, via_adapter.allocs);
    CHECK_EQ_U64(measured.bytes, via_adapter.bytes);
}

int main(void)
{
    bool interposing = h2b_alloc_counting_available();
    if (interposing) {
        test_known_pattern();
        test_disarmed_not_counted();
        test_inside_libc();
        test_inside_nghttp2();
        test_entry_points();
        test_per_thread();
    } else {
#ifndef H2B_SANITIZED
        CHECK(interposing); /* a plain build must interpose */
#endif
        printf("SKIP interposer checks: counting allocator unavailable in this build "
               "(sanitizers own malloc)\n");
        /* The API must stay harmless. */
        h2b_alloc_arm();
        free(malloc(10));
        h2b_alloc_disarm();
        h2b_alloc_read(&measured);
        CHECK_EQ_U64(measured.allocs, 0);
    }
    test_nghttp2_adapter(interposing);
    return test_report();
}
