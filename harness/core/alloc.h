/*
 * alloc.h - exact allocation counting: a malloc-family interposer and an nghttp2_mem adapter.
 *
 * Link the library h2bench::alloc into an executable and every malloc, calloc, realloc, free,
 * posix_memalign, aligned_alloc, memalign, valloc, pvalloc, reallocarray and malloc_usable_size
 * call of the process (libc, libnghttp2.so, OpenSSL, our code) goes through it and on to glibc.
 * Counting is per thread and off by default: a thread arms it around the region it measures and
 * reads its own counters. Disarmed, a call costs one thread-local load and branch more than
 * glibc (scripts/bench/alloc_overhead.sh measures it).
 *
 * Semantics, for the calling thread while armed:
 *   allocs       +1 per successful malloc/calloc/realloc/aligned allocation (realloc to a new or
 *                the same block counts one allocation of the new size and one free of the old)
 *   frees        +1 per free of a non-NULL pointer (and per block released by realloc)
 *   bytes        sum of the sizes requested (calloc: nmemb * size)
 *   usable_bytes sum of malloc_usable_size of the blocks handed out
 *   frees_bytes  sum of malloc_usable_size of the blocks freed (free receives no size)
 *   live_bytes   usable_bytes - frees_bytes; negative when the thread frees blocks allocated
 *                before it armed or on another thread
 *   peak_bytes   highest live_bytes since the last reset (0 if it never went above 0)
 * Failed allocations and free(NULL) count nothing. Only the calling thread's events count;
 * other threads are never slowed or counted.
 *
 * Under sanitizers (H2B_SANITIZED, the asan/tsan presets) the interposer is not compiled: the
 * sanitizer owns malloc. Then h2b_alloc_counting_available() is false and arm/read are harmless
 * no-ops that read zeros. The nghttp2_mem adapter counts in every build.
 */
#ifndef H2B_CORE_ALLOC_H
#define H2B_CORE_ALLOC_H

#include <nghttp2/nghttp2.h>
#include <stdbool.h>
#include <stdint.h>

struct h2b_alloc_stats {
    uint64_t allocs;       /* successful allocations */
    uint64_t frees;        /* frees of non-NULL blocks */
    uint64_t bytes;        /* bytes requested by the allocations */
    uint64_t frees_bytes;  /* usable bytes of the freed blocks */
    int64_t live_bytes;    /* usable bytes allocated minus usable bytes freed */
    uint64_t peak_bytes;   /* maximum of live_bytes since the last reset */
    uint64_t usable_bytes; /* usable bytes of the allocations (>= bytes) */
};

/* True if the interposer is compiled in and calls made inside libc reach it (checked once by a
 * strdup). False under sanitizers or if the library was linked in a way that does not
 * interpose (for instance inside a dlopen'ed module). Thread-safe. */
bool h2b_alloc_counting_available(void);

/* The calling thread starts counting; its counters keep their values. Cost: none elsewhere. */
void h2b_alloc_arm(void);

/* The calling thread stops counting; its counters keep their values. */
void h2b_alloc_disarm(void);

/* True if the calling thread is counting. */
bool h2b_alloc_armed(void);

/* Zeroes the calling thread's counters (armed state unchanged). */
void h2b_alloc_reset(void);

/* Copies the calling thread's counters into *out (all zero when counting is unavailable). */
void h2b_alloc_read(struct h2b_alloc_stats *out);

/* An nghttp2_mem (static storage, never freed) whose functions allocate with malloc & co and
 * count nghttp2's allocations into per-thread counters separate from the interposer's, always
 * (no arming), in every build including sanitized ones. Pass it to nghttp2_session_*_new3,
 * nghttp2_hd_*_new2, ... Each event counts on the thread that performs it. */
nghttp2_mem *h2b_alloc_nghttp2_mem(void);

/* The calling thread's nghttp2_mem counters, same semantics as above. */
void h2b_alloc_nghttp2_read(struct h2b_alloc_stats *out);

/* Zeroes the calling thread's nghttp2_mem counters. */
void h2b_alloc_nghttp2_reset(void);

#endif
