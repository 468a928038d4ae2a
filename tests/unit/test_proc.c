/*
 * test_proc.c - child processes with /bin/sh: reading a readiness line, timeouts, exit
 * statuses, signals, wait-then-SIGKILL, CPU pinning, CPU time and RSS, file and stderr
 * outputs, long lines, spawn failures that leave nothing behind, a passed result descriptor
 * and stdout sent to the parent's stderr.
 */
#include "core/clock.h"
#include "core/cpu.h"
#include "core/error.h"
#include "core/proc.h"
#include "test.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define SEC H2B_NS_PER_SEC
#define MS H2B_NS_PER_MS

static struct h2b_proc *sh(const char *script, const struct h2b_proc_opts *opts)
{
    char *argv[] = {"sh", "-c", (char *)script, NULL};
    struct h2b_proc *p = NULL;
    int rv = h2b_proc_spawn(&p, argv, opts);
    CHECK_EQ_INT(rv, H2B_OK);
    return rv == H2B_OK ? p : NULL;
}

static void test_ready_line_and_signal(void)
{
    struct h2b_proc_opts o = {.out = H2B_PROC_PIPE, .kill_on_parent_exit = true};
    struct h2b_proc *p = sh("echo 'starting'; echo 'listening on http://127.0.0.1:4321'; "
                            "exec sleep 30",
                            &o);
    if (p == NULL)
        return;
    char line[128];
    CHECK_EQ_INT(h2b_proc_read_line(p, line, sizeof(line), 5 * SEC), 8);
    CHECK_STR(line, "starting");
    int n = h2b_proc_read_line(p, line, sizeof(line), 5 * SEC);
    CHECK_EQ_INT(n, (int)strlen("listening on http://127.0.0.1:4321"));
    CHECK_STR(line, "listening on http://127.0.0.1:4321");
    CHECK(!h2b_proc_exited(p, NULL));
    CHECK_EQ_INT(h2b_proc_read_line(p, line, sizeof(line), 50 * MS), H2B_ERR_TIMEOUT);
    CHECK_EQ_INT(h2b_proc_signal(p, SIGTERM), H2B_OK);
    int status = 0;
    CHECK_EQ_INT(h2b_proc_wait(p, 5 * SEC, &status), H2B_OK);
    CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM);
    CHECK_EQ_INT(h2b_proc_read_line(p, line, sizeof(line), 1 * SEC), H2B_ERR_CLOSED);
    CHECK_EQ_INT(h2b_proc_signal(p, SIGTERM), H2B_ERR_NOTFOUND);
    h2b_proc_del(p);
}

static void test_exit_status(void)
{
    struct h2b_proc_opts o = {.out = H2B_PROC_PIPE};
    struct h2b_proc *p = sh("printf 'no newline at the end'; exit 3", &o);
    if (p == NULL)
        return;
    char line[64];
    CHECK_EQ_INT(h2b_proc_read_line(p, line, sizeof(line), 5 * SEC), 21);
    CHECK_STR(line, "no newline at the end");
    CHECK_EQ_INT(h2b_proc_read_line(p, line, sizeof(line), 5 * SEC), H2B_ERR_CLOSED);
    int status = -1;
    CHECK_EQ_INT(h2b_proc_wait(p, 5 * SEC, &status), H2B_OK);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 3);
    CHECK(h2b_proc_exited(p, &status));
    h2b_proc_del(p);
}

static void test_wait_kills_after_timeout(void)
{
    /* The shell ignores SIGTERM and so does the sleep it execs: only SIGKILL stops it. */
    struct h2b_proc_opts o = {.out = H2B_PROC_DEVNULL, .new_process_group = true};
    struct h2b_proc *p = sh("trap '' TERM; exec sleep 30", &o);
    if (p == NULL)
        return;
    h2b_clock_sleep_ns(50 * MS); /* let the trap be installed */
    CHECK_EQ_INT(h2b_proc_signal(p, SIGTERM), H2B_OK);
    int status = 0;
    uint64_t t0 = h2b_clock_now_ns();
    CHECK_EQ_INT(h2b_proc_wait(p, 200 * MS, &status), H2B_ERR_TIMEOUT);
    uint64_t waited = h2b_clock_now_ns() - t0;
    CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    CHECK(waited >= 200 * MS && waited < 10 * SEC);
    h2b_proc_del(p);

    /* del kills and reaps a child that still runs. */
    p = sh("exec sleep 30", NULL);
    if (p == NULL)
        return;
    pid_t pid = h2b_proc_pid(p);
    h2b_proc_del(p);
    CHECK(kill(pid, 0) != 0);
}

static void test_pinning(void)
{
    int cpu = h2b_cpu_online() > 1 ? 1 : 0;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    struct h2b_proc_opts o = {.cpus = &set, .out = H2B_PROC_PIPE};
    struct h2b_proc *p = sh("grep Cpus_allowed_list /proc/self/status", &o);
    if (p == NULL)
        return;
    char line[128], want[64];
    snprintf(want, sizeof(want), "Cpus_allowed_list:\t%d", cpu);
    CHECK(h2b_proc_read_line(p, line, sizeof(line), 5 * SEC) > 0);
    CHECK_STR(line, want);
    int status;
    CHECK_EQ_INT(h2b_proc_wait(p, 5 * SEC, &status), H2B_OK);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    h2b_proc_del(p);
}

static void test_cpu_and_rss(void)
{
    struct h2b_proc_opts o = {.out = H2B_PROC_PIPE};
    struct h2b_proc *p = sh("i=0; while [ $i -lt 150000 ]; do i=$((i+1)); done; echo spun; "
                            "exec sleep 30",
                            &o);
    if (p == NULL)
        return;
    char line[64];
    CHECK_EQ_INT(h2b_proc_read_line(p, line, sizeof(line), 60 * SEC), 4);
    uint64_t alive_cpu = 0, rss = 0, hwm = 0;
    CHECK_EQ_INT(h2b_proc_cpu_ns(p, &alive_cpu), H2B_OK);
    CHECK_EQ_INT(h2b_proc_rss_kib(p, &rss, &hwm), H2B_OK);
    printf("busy shell: cpu %.3f s while alive, rss %" PRIu64 " KiB, hwm %" PRIu64 " KiB\n",
           (double)alive_cpu / 1e9, rss, hwm);
    CHECK(alive_cpu >= 10 * MS); /* at least one clock tick of spinning */
    CHECK(rss > 0 && hwm >= rss);
    int status;
    CHECK_EQ_INT(h2b_proc_signal(p, SIGTERM), H2B_OK);
    CHECK_EQ_INT(h2b_proc_wait(p, 5 * SEC, &status), H2B_OK);
    CHECK(WIFSIGNALED(status));
    uint64_t reaped_cpu = 0;
    CHECK_EQ_INT(h2b_proc_cpu_ns(p, &reaped_cpu), H2B_OK);
    CHECK(reaped_cpu + 10 * MS >= alive_cpu);
    CHECK_EQ_INT(h2b_proc_rss_kib(p, &rss, &hwm), H2B_OK);
    CHECK_EQ_U64(rss, 0);
    CHECK(hwm > 0);
    h2b_proc_del(p);
}

static void test_file_and_stderr(void)
{
    char dir[] = "/tmp/h2b_test_proc.XXXXXX";
    if (mkdtemp(dir) == NULL)
        return;
    char out[128];
    snprintf(out, sizeof(out), "%s/out.log", dir);
    struct h2b_proc_opts o = {.out = H2B_PROC_FILE, .out_path = out, .err_to_out = true};
    struct h2b_proc *p = sh("sleep 0.2; echo first; echo second >&2; exec sleep 30", &o);
    if (p != NULL) {
        char line[64];
        CHECK_EQ_INT(h2b_proc_read_line(p, line, sizeof(line), 5 * SEC), 5);
        CHECK_STR(line, "first");
        CHECK_EQ_INT(h2b_proc_read_line(p, line, sizeof(line), 5 * SEC), 6);
        CHECK_STR(line, "second");
        CHECK_EQ_INT(h2b_proc_read_line(p, line, sizeof(line), 50 * MS), H2B_ERR_TIMEOUT);
        CHECK_EQ_INT(h2b_proc_read_err_line(p, line, sizeof(line), 0), H2B_ERR_INVAL);
        h2b_proc_del(p);
    }
    unlink(out);
    rmdir(dir);

    struct h2b_proc_opts e = {.out = H2B_PROC_DEVNULL, .err = H2B_PROC_PIPE};
    p = sh("echo hidden; echo 'oops' >&2", &e);
    if (p != NULL) {
        char line[64];
        CHECK_EQ_INT(h2b_proc_read_err_line(p, line, sizeof(line), 5 * SEC), 4);
        CHECK_STR(line, "oops");
        CHECK_EQ_INT(h2b_proc_read_line(p, line, sizeof(line), 0), H2B_ERR_INVAL);
        h2b_proc_del(p);
    }
}

static void test_long_lines(void)
{
    /* 5000 characters (longer than the 4 KiB line buffer), then a short line. */
    struct h2b_proc_opts o = {.out = H2B_PROC_PIPE};
    struct h2b_proc *p = sh("i=0; while [ $i -lt 500 ]; do printf 'abcdefghij'; i=$((i+1)); "
                            "done; printf '\\r\\nnext\\r\\n'",
                            &o);
    if (p == NULL)
        return;
    char line[16];
    CHECK_EQ_INT(h2b_proc_read_line(p, line, sizeof(line), 10 * SEC), 15);
    CHECK_STR(line, "abcdefghijabcde");
    CHECK_EQ_INT(h2b_proc_read_line(p, line, sizeof(line), 10 * SEC), 4);
    CHECK_STR(line, "next");
    CHECK_EQ_INT(h2b_proc_read_line(p, line, sizeof(line), 10 * SEC), H2B_ERR_CLOSED);
    h2b_proc_del(p);
}

static void test_spawn_failures(void)
{
    struct h2b_proc *p = (struct h2b_proc *)&p;
    char *missing[] = {"/nonexistent/h2bench-no-such-program", NULL};
    CHECK_EQ_INT(h2b_proc_spawn(&p, missing, NULL), H2B_ERR_NOTFOUND);
    char *not_in_path[] = {"h2bench-no-such-program", NULL};
    CHECK_EQ_INT(h2b_proc_spawn(&p, not_in_path, NULL), H2B_ERR_NOTFOUND);
    char *empty[] = {NULL};
    CHECK_EQ_INT(h2b_proc_spawn(&p, empty, NULL), H2B_ERR_INVAL);
    struct h2b_proc_opts bad_file = {.out = H2B_PROC_FILE, .out_path = "/nonexistent/dir/x"};
    char *ok[] = {"true", NULL};
    CHECK_EQ_INT(h2b_proc_spawn(&p, ok, &bad_file), H2B_ERR_IO);
    /* Pinning to a CPU that does not exist fails in the child, before exec. */
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(CPU_SETSIZE - 1, &set);
    struct h2b_proc_opts bad_cpu = {.cpus = &set};
    CHECK_EQ_INT(h2b_proc_spawn(&p, ok, &bad_cpu), H2B_ERR_SYS);
    CHECK(p == (struct h2b_proc *)&p);
    /* No child was left behind: nothing to reap. */
    CHECK(waitpid(-1, NULL, WNOHANG) < 0);
    h2b_proc_del(NULL);
}

/* pass_fd/pass_fd_as: the child writes to descriptor 3 (a pipe's write end the parent made),
 * and no other descriptor of the parent's leaks into it; H2B_PROC_STDERR: the child's stdout
 * lands on the parent's stderr (here a pipe the test reads). */
static void test_pass_fd_and_stdout_to_stderr(void)
{
    int res[2], fake_err[2];
    CHECK_EQ_INT(pipe(res), 0);
    CHECK_EQ_INT(pipe(fake_err), 0);
    int leak = dup(res[0]); /* a parent descriptor the child must not see */
    int saved_err = dup(STDERR_FILENO);
    CHECK(dup2(fake_err[1], STDERR_FILENO) == STDERR_FILENO);
    close(fake_err[1]);
    char script[128];
    snprintf(script, sizeof(script),
             "echo result >&3; echo table; if [ -e /proc/self/fd/%d ]; then echo leaked >&3; fi",
             leak);
    struct h2b_proc_opts o = {.out = H2B_PROC_STDERR, .pass_fd = res[1], .pass_fd_as = 3};
    struct h2b_proc *p = sh(script, &o);
    dup2(saved_err, STDERR_FILENO);
    close(saved_err);
    close(res[1]);
    int status = -1;
    if (p) {
        CHECK_EQ_INT(h2b_proc_wait(p, 10 * SEC, &status), H2B_OK);
        CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        h2b_proc_del(p);
    }
    char buf[64] = "";
    ssize_t n = read(res[0], buf, sizeof(buf) - 1);
    buf[n > 0 ? n : 0] = '\0';
    CHECK_STR(buf, "result\n");
    n = read(fake_err[0], buf, sizeof(buf) - 1);
    buf[n > 0 ? n : 0] = '\0';
    CHECK_STR(buf, "table\n");
    close(res[0]);
    close(fake_err[0]);
    close(leak);
}

/* Polls threads_look until pred holds or 10 s pass (the scheduler decides when a state shows). */
static bool look_until(pid_t pid, bool (*pred)(const struct h2b_proc_threads *),
                       struct h2b_proc_threads *t)
{
    for (int i = 0; i < 1000; i++) {
        if (h2b_proc_threads_look(pid, t) == H2B_OK && pred(t))
            return true;
        h2b_clock_sleep_ns(10 * MS);
    }
    return false;
}
static bool all_asleep(const struct h2b_proc_threads *t)
{
    return t->threads == 1 && t->sleeping == 1;
}
static bool all_stopped(const struct h2b_proc_threads *t)
{
    return t->threads == 1 && t->stopped == 1;
}

static void test_threads_look(void)
{
    struct h2b_proc_opts o = {.out = H2B_PROC_PIPE};
    struct h2b_proc *p = sh("echo up; exec sleep 30", &o);
    if (p == NULL)
        return;
    char line[16];
    CHECK_EQ_INT(h2b_proc_read_line(p, line, sizeof(line), 60 * SEC), 2);
    pid_t pid = h2b_proc_pid(p);
    struct h2b_proc_threads t;
    CHECK(look_until(pid, all_asleep, &t));
    CHECK_EQ_INT(t.stopped, 0);
    uint64_t ran = t.run_ns;
    CHECK_EQ_INT(h2b_proc_threads_look(pid, &t), H2B_OK);
    CHECK_EQ_U64(t.run_ns, ran); /* asleep: no CPU time between two looks */
    CHECK_EQ_INT(h2b_proc_signal(p, SIGSTOP), H2B_OK);
    CHECK(look_until(pid, all_stopped, &t));
    CHECK_EQ_INT(t.sleeping, 0);
    CHECK_EQ_INT(h2b_proc_signal(p, SIGCONT), H2B_OK);
    CHECK(look_until(pid, all_asleep, &t));
    h2b_proc_del(p);
    CHECK_EQ_INT(h2b_proc_threads_look(pid, &t), H2B_ERR_SYS); /* gone */
}

int main(void)
{
    test_ready_line_and_signal();
    test_exit_status();
    test_wait_kills_after_timeout();
    test_pinning();
    test_cpu_and_rss();
    test_file_and_stderr();
    test_long_lines();
    test_spawn_failures();
    test_pass_fd_and_stdout_to_stderr();
    test_threads_look();
    return test_report();
}
