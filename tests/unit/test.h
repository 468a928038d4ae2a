/*
 * test.h - the few macros the unit tests share.
 *
 * CHECK records a failure and goes on, so one run shows every broken expectation; a test binary
 * exits non-zero if any check failed and prints "N passed, M failed" last.
 */
#ifndef H2B_TEST_H
#define H2B_TEST_H

#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int test_passed, test_failed;

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (cond) {                                                                                \
            test_passed++;                                                                         \
        } else {                                                                                   \
            test_failed++;                                                                         \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);               \
        }                                                                                          \
    } while (0)

#define CHECK_EQ_U64(a, b)                                                                         \
    do {                                                                                           \
        uint64_t a_ = (uint64_t)(a), b_ = (uint64_t)(b);                                           \
        if (a_ == b_) {                                                                            \
            test_passed++;                                                                         \
        } else {                                                                                   \
            test_failed++;                                                                         \
            fprintf(stderr, "%s:%d: CHECK failed: %s == %s (%" PRIu64 " != %" PRIu64 ")\n",        \
                    __FILE__, __LINE__, #a, #b, a_, b_);                                           \
        }                                                                                          \
    } while (0)

#define CHECK_EQ_INT(a, b)                                                                         \
    do {                                                                                           \
        long long a_ = (long long)(a), b_ = (long long)(b);                                        \
        if (a_ == b_) {                                                                            \
            test_passed++;                                                                         \
        } else {                                                                                   \
            test_failed++;                                                                         \
            fprintf(stderr, "%s:%d: CHECK failed: %s == %s (%lld != %lld)\n", __FILE__, __LINE__,  \
                    #a, #b, a_, b_);                                                               \
        }                                                                                          \
    } while (0)

#define CHECK_STR(a, b)                                                                            \
    do {                                                                                           \
        const char *a_ = (a), *b_ = (b);                                                           \
        if (a_ && b_ && strcmp(a_, b_) == 0) {                                                     \
            test_passed++;                                                                         \
        } else {                                                                                   \
            test_failed++;                                                                         \
            fprintf(stderr, "%s:%d: CHECK failed: %s == %s (\"%s\" != \"%s\")\n", __FILE__,        \
                    __LINE__, #a, #b, a_ ? a_ : "(null)", b_ ? b_ : "(null)");                     \
        }                                                                                          \
    } while (0)

/* Writes text to path, replacing the file. Returns 0 or -1. */
static inline int test_write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (f == NULL)
        return -1;
    int rv = fputs(text, f) < 0 ? -1 : 0;
    return fclose(f) != 0 ? -1 : rv;
}

/* Runs fn in a child process with its stderr discarded; true when the child died of SIGABRT (a
 * failed H2B_ASSERT), false when it returned or died otherwise. */
static inline bool test_aborts(void (*fn)(void))
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        int devnull = open("/dev/null", O_WRONLY);
        if (devnull >= 0)
            dup2(devnull, STDERR_FILENO);
        fn();
        _exit(0);
    }
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) != pid)
        return false;
    return WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT;
}

/* A check that want occurs in text (NULL: it does not); on failure both are printed. */
static inline void check_has(const char *text, const char *want)
{
    if (!text || !strstr(text, want)) {
        fprintf(stderr, "\"%s\" not in:\n%s\n", want, text ? text : "(null)");
        CHECK(false);
    } else {
        CHECK(true);
    }
}

/* The closing line and the exit status; a test that made no check fails (it tested nothing). */
static inline int test_report(void)
{
    if (test_passed == 0 && test_failed == 0) {
        fprintf(stderr, "no check was made\n");
        test_failed = 1;
    }
    printf("%d passed, %d failed\n", test_passed, test_failed);
    return test_failed ? 1 : 0;
}

#endif
