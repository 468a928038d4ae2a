/*
 * test_check.c - H2B_ASSERT: a holding invariant costs nothing visible; a broken one aborts
 * (SIGABRT) with "h2bench: internal error: FILE:LINE: FUNC: assertion 'EXPR' failed" on stderr,
 * also in a Release build (NDEBUG defined here on purpose).
 */
#define NDEBUG 1
#include "core/check.h"
#include "test.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int holds(int x)
{
    H2B_ASSERT(x == 2);
    return x + 1;
}

static void broken(int x)
{
    H2B_ASSERT(x + 1 == 3);
}
static const int broken_line = __LINE__ - 2;

static void test_holds(void)
{
    CHECK_EQ_INT(holds(2), 3);
}

static void test_broken_aborts_with_message(void)
{
    int pfd[2];
    CHECK_EQ_INT(pipe(pfd), 0);
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(pfd[1], STDERR_FILENO);
        close(pfd[0]);
        broken(1);
        _exit(0); /* not reached */
    }
    close(pfd[1]);
    char buf[512];
    size_t len = 0;
    ssize_t r;
    while (len < sizeof(buf) - 1 && (r = read(pfd[0], buf + len, sizeof(buf) - 1 - len)) > 0)
        len += (size_t)r;
    buf[len] = '\0';
    close(pfd[0]);
    int status = 0;
    CHECK_EQ_INT(waitpid(pid, &status, 0), pid);
    CHECK_EQ_INT(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT, 1);
    CHECK_EQ_INT(strstr(buf, "h2bench: internal error: ") == buf, 1);
    char want[128];
    snprintf(want, sizeof(want), "test_check.c:%d: broken: assertion 'x + 1 == 3' failed\n",
             broken_line);
    CHECK_EQ_INT(strstr(buf, want) != NULL, 1);
}

int main(void)
{
    test_holds();
    test_broken_aborts_with_message();
    return test_report();
}
