/*
 * check.c - the failure path of H2B_ASSERT (check.h).
 *
 * It writes with write(2) in pieces, no stdio and no allocation, so it works from a signal
 * handler, with the heap corrupted, or with stderr's FILE locked by the thread that failed.
 * Rejected: assert(3), which NDEBUG removes from Release builds (the ones that run in CI gates
 * and for users) and whose message does not say which program failed.
 */
#include "core/check.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void put(const char *s)
{
    size_t n = strlen(s);
    while (n > 0) {
        ssize_t w = write(STDERR_FILENO, s, n);
        if (w <= 0)
            return;
        s += w;
        n -= (size_t)w;
    }
}

_Noreturn void h2b__assert_fail(const char *expr, const char *file, int line, const char *func)
{
    char num[16];
    size_t i = sizeof(num) - 1;
    unsigned v = line > 0 ? (unsigned)line : 0;
    num[i] = '\0';
    do {
        num[--i] = (char)('0' + v % 10);
        v /= 10;
    } while (v && i > 0);
    put("h2bench: internal error: ");
    put(file);
    put(":");
    put(num + i);
    put(": ");
    put(func);
    put(": assertion '");
    put(expr);
    put("' failed\n");
    abort();
}
