/*
 * alloc.c - the malloc-family interposer with per-thread counters.
 *
 * Approach: strong definitions of the whole malloc family in this object. ELF symbol lookup
 * searches the executable first, so once this object is linked into an executable every caller
 * in the process - libc's own strdup, libnghttp2.so, libssl - binds to these definitions. Each
 * forwards to glibc's exported __libc_* entry point, so the heap, its performance and its
 * malloc_usable_size stay glibc's, and adds one initial-exec thread-local check: disarmed that
 * is the whole cost (no atomics, no shared cache lines); armed, the thread's own counters are
 * bumped.
 *
 * Routes to glibc for the functions without a public __libc_ alias (glibc 2.36):
 *   posix_memalign   validates the alignment as POSIX says (EINVAL), then __libc_memalign
 *   aligned_alloc    __libc_memalign (glibc's aligned_alloc is the same function)
 *   reallocarray     overflow check (ENOMEM), then our realloc (__libc_reallocarray is
 *                    GLIBC_PRIVATE, not an interface to link against)
 *   malloc_usable_size  glibc's, found once with dlsym(RTLD_NEXT) in a constructor. dlsym may
 *                    allocate; that is safe because malloc here never depends on dlsym.
 *
 * Rejected: a size header in front of each block (frees would know the requested size, but
 * blocks allocated by libc internals or before main would be misread, and every aligned entry
 * point would need its own layout); dlsym(RTLD_NEXT) for malloc itself (dlsym allocates, which
 * needs a bootstrap arena); -Wl,--wrap (misses calls made inside shared libraries); glibc's
 * __malloc_hook (removed in 2.34).
 *
 * Budget page: an executable that links this interposer shadows the malloc of an LD_PRELOAD
 * library (the executable comes first in symbol lookup), so the budget preload could never
 * count h2bench serve. When $H2B_BUDGET_PAGE names a budget page (budget_page.h) this file
 * therefore counts every thread's allocations into it too, process-wide, and says so in the
 * page. Otherwise the page pointer stays NULL and the fast path tests it beside the armed flag.
 *
 * Under sanitizers (H2B_SANITIZED) none of the interposer is compiled: the sanitizer runtime
 * owns malloc and two definitions would collide. The API then reads zeros.
 */
#include "core/alloc.h"
#include "core/alloc_count.h"
#include "core/budget_page.h"
#include "core/interpose.h"

#include <string.h>

struct thread_counters {
    bool armed;
    struct h2b_alloc_stats stats;
};

#ifndef H2B_SANITIZED

#include <dlfcn.h>
#include <errno.h>
#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>

/* glibc's exported entry points (GLIBC_2.2.5); no header declares them. */
extern void *__libc_malloc(size_t size);
extern void __libc_free(void *ptr);
extern void *__libc_calloc(size_t nmemb, size_t size);
extern void *__libc_realloc(void *ptr, size_t size);
extern void *__libc_memalign(size_t alignment, size_t size);
extern void *__libc_valloc(size_t size);
extern void *__libc_pvalloc(size_t size);

/* Initial-exec: a fixed offset from the thread pointer, no __tls_get_addr call (which could
 * itself allocate) and valid from the first malloc of the process. Zero-initialised, so every
 * thread starts disarmed. */
static __thread struct thread_counters counters __attribute__((tls_model("initial-exec")));

typedef size_t (*usable_size_fn)(void *);
static usable_size_fn glibc_usable_size;

static usable_size_fn resolve_usable_size(void)
{
    usable_size_fn fn = __atomic_load_n(&glibc_usable_size, __ATOMIC_ACQUIRE);
    if (fn == NULL) {
        /* dlsym returns void *; converting through uintptr_t is how POSIX says to get a
         * function pointer out of it. */
        fn = (usable_size_fn)(uintptr_t)dlsym(RTLD_NEXT, "malloc_usable_size");
        __atomic_store_n(&glibc_usable_size, fn, __ATOMIC_RELEASE);
    }
    return fn;
}

/* The budget page of a process measured by the runner, or NULL (nearly always). */
static struct h2b_budget_page *process_page;

__attribute__((constructor(101))) static void resolve_at_startup(void)
{
    (void)resolve_usable_size();
    struct h2b_budget_page *p = h2b__budget_page_attach();
    if (p != NULL) {
        p->alloc_why[0] = '\0';
        __atomic_store_n(&p->alloc_source, H2B_BUDGET_ALLOC_INTERPOSER, __ATOMIC_RELEASE);
        __atomic_store_n(&process_page, p, __ATOMIC_RELEASE);
    }
}

static size_t usable_size(void *p)
{
    usable_size_fn fn = resolve_usable_size();
    return fn ? fn(p) : 0;
}

#define ARMED() __builtin_expect(counters.armed | (process_page != NULL), 0)

/* Disarmed, each entry point is a thread-local test and a tail call into glibc; the counting
 * paths are out of line so that the fast path needs no stack frame. */
__attribute__((noinline)) static void *counted(void *p, size_t requested)
{
    if (p != NULL && counters.armed)
        h2b__alloc_count_alloc(&counters.stats, requested, usable_size(p));
    if (p != NULL && process_page != NULL) {
        h2b__budget_add(&process_page->c.allocs, 1);
        h2b__budget_add(&process_page->c.bytes, requested);
    }
    return p;
}

__attribute__((noinline)) static void count_free(void *p)
{
    if (p != NULL && counters.armed)
        h2b__alloc_count_free(&counters.stats, usable_size(p));
    if (p != NULL && process_page != NULL)
        h2b__budget_add(&process_page->c.frees, 1);
}

void *malloc(size_t size)
{
    if (!ARMED())
        return __libc_malloc(size);
    return counted(__libc_malloc(size), size);
}

void free(void *ptr)
{
    if (ARMED())
        count_free(ptr);
    __libc_free(ptr);
}

void *calloc(size_t nmemb, size_t size)
{
    if (!ARMED())
        return __libc_calloc(nmemb, size);
    /* nmemb * size cannot overflow when glibc succeeded (it returns NULL otherwise). */
    return counted(__libc_calloc(nmemb, size), nmemb * size);
}

void *realloc(void *ptr, size_t size)
{
    if (!ARMED())
        return __libc_realloc(ptr, size);
    /* The old block's size is only knowable before the call. */
    size_t old = ptr && counters.armed ? usable_size(ptr) : 0;
    void *p = __libc_realloc(ptr, size);
    if (counters.armed)
        h2b__alloc_count_realloc(&counters.stats, ptr, old, p, size, p ? usable_size(p) : 0);
    if (process_page != NULL && (p != NULL || (ptr != NULL && size == 0))) {
        if (ptr != NULL)
            h2b__budget_add(&process_page->c.frees, 1);
        if (p != NULL) {
            h2b__budget_add(&process_page->c.allocs, 1);
            h2b__budget_add(&process_page->c.bytes, size);
        }
    }
    return p;
}

H2B_INTERPOSE_REALLOCARRAY()

void *memalign(size_t alignment, size_t size)
{
    if (!ARMED())
        return __libc_memalign(alignment, size);
    return counted(__libc_memalign(alignment, size), size);
}

void *aligned_alloc(size_t alignment, size_t size)
{
    return memalign(alignment, size);
}

int posix_memalign(void **memptr, size_t alignment, size_t size)
{
    if (alignment % sizeof(void *) != 0 || (alignment & (alignment - 1)) != 0 || alignment == 0)
        return EINVAL;
    int saved = errno; /* posix_memalign reports through its result and leaves errno alone */
    void *p = memalign(alignment, size);
    errno = saved;
    if (p == NULL)
        return ENOMEM;
    *memptr = p;
    return 0;
}

void *valloc(size_t size)
{
    if (!ARMED())
        return __libc_valloc(size);
    return counted(__libc_valloc(size), size);
}

void *pvalloc(size_t size)
{
    if (!ARMED())
        return __libc_pvalloc(size);
    return counted(__libc_pvalloc(size), size);
}

size_t malloc_usable_size(void *ptr)
{
    return ptr ? usable_size(ptr) : 0;
}

static int self_test_result; /* 0 unknown, 1 interposing, -1 not */

bool h2b_alloc_counting_available(void)
{
    int r = __atomic_load_n(&self_test_result, __ATOMIC_ACQUIRE);
    if (r == 0) {
        /* strdup allocates inside libc: it reaches this file only if interposition works.
         * The volatile pointer keeps the compiler from folding strdup into a malloc here. */
        char *(*volatile dup)(const char *) = strdup;
        struct thread_counters saved = counters;
        memset(&counters, 0, sizeof(counters));
        counters.armed = true;
        char *s = dup("h2bench");
        uint64_t seen = counters.stats.allocs;
        counters = saved;
        free(s);
        r = seen == 1 ? 1 : -1;
        __atomic_store_n(&self_test_result, r, __ATOMIC_RELEASE);
    }
    return r == 1;
}

void h2b_alloc_arm(void)
{
    counters.armed = true;
}

void h2b_alloc_disarm(void)
{
    counters.armed = false;
}

bool h2b_alloc_armed(void)
{
    return counters.armed;
}

void h2b_alloc_reset(void)
{
    memset(&counters.stats, 0, sizeof(counters.stats));
}

void h2b_alloc_read(struct h2b_alloc_stats *out)
{
    *out = counters.stats;
}

#else /* H2B_SANITIZED: the sanitizer owns malloc; the API is inert. */

bool h2b_alloc_counting_available(void)
{
    return false;
}

void h2b_alloc_arm(void)
{
}

void h2b_alloc_disarm(void)
{
}

bool h2b_alloc_armed(void)
{
    return false;
}

void h2b_alloc_reset(void)
{
}

void h2b_alloc_read(struct h2b_alloc_stats *out)
{
    memset(out, 0, sizeof(*out));
}

#endif
