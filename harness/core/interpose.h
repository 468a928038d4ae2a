/*
 * interpose.h - the malloc-family entry points whose definition is the same in both interposers
 * of the project: the counting allocator linked into our executables (alloc.c) and the budget
 * preload injected into targets we did not build (budget_preload.c). Internal to h2bench::alloc
 * and the preload; the preload cannot link core, so this is a header.
 *
 * reallocarray is realloc with an overflow-checked size: it goes through the file's own
 * (interposed, counting) realloc, so a block is counted once whichever entry allocated it.
 */
#ifndef H2B_CORE_INTERPOSE_H
#define H2B_CORE_INTERPOSE_H

#include <errno.h>
#include <stdlib.h>

#define H2B_INTERPOSE_REALLOCARRAY()                                                               \
    void *reallocarray(void *ptr, size_t nmemb, size_t size)                                       \
    {                                                                                              \
        size_t total;                                                                              \
        if (__builtin_mul_overflow(nmemb, size, &total)) {                                         \
            errno = ENOMEM;                                                                        \
            return NULL;                                                                           \
        }                                                                                          \
        return realloc(ptr, total);                                                                \
    }

#endif
