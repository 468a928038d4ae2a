/*
 * proc.c - spawning and supervising child processes.
 *
 * fork + execve rather than posix_spawn: the child must call sched_setaffinity (and optionally
 * setpgid and PR_SET_PDEATHSIG) between fork and exec, which posix_spawn cannot express in
 * glibc 2.36. The parent resolves the program in PATH and prepares every descriptor before
 * fork, so the child only makes async-signal-safe system calls (the parent may have threads
 * and an interposed malloc). An exec failure travels back over a close-on-exec pipe: reading
 * zero bytes from it means exec succeeded, so spawn reports "no such program" synchronously
 * instead of as a mysterious exit status 127.
 *
 * Children inherit no descriptors besides 0-2 (close_range(CLOSE_RANGE_CLOEXEC) in the child):
 * a server child holding a copy of our listening socket or of another child's pipe would keep
 * ports busy and pipes open after we close them.
 *
 * Waiting uses a pidfd (poll wakes exactly at exit) and falls back to short sleeps where the
 * kernel has none. Output is read through a small per-stream line buffer; for FILE outputs
 * the reader tails the file (regular files are always "readable", so it sleeps briefly at EOF
 * until the child writes more or exits).
 */
#include "core/proc.h"
#include "core/fs.h"
#include "core/clock.h"
#include "core/error.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

extern char **environ;

#define LINE_BUF 4096

struct stream {
    int fd;       /* read end of the pipe, or a read descriptor on the file; -1: none */
    bool is_file; /* tail a regular file instead of polling a pipe */
    bool eof;
    bool skipping; /* discarding the rest of an overlong line */
    size_t len;
    char data[LINE_BUF];
};

struct h2b_proc {
    pid_t pid;
    int pidfd; /* -1 when the kernel has no pidfd_open */
    bool group;
    bool reaped;
    int status;
    struct rusage usage;
    struct stream out, err;
};

/* ---- spawning ---------------------------------------------------------------------------- */

/* Prepares one output of the child: *child_fd is what the child dup2s onto 1 or 2 (-1:
 * inherit), s->fd what the parent reads. */
static int open_output(enum h2b_proc_io io, const char *file, int *child_fd, struct stream *s)
{
    int fds[2];
    switch (io) {
    case H2B_PROC_INHERIT:
        return H2B_OK;
    case H2B_PROC_DEVNULL:
        *child_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
        return *child_fd >= 0 ? H2B_OK : H2B_ERR_SYS;
    case H2B_PROC_STDERR:
        *child_fd = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);
        return *child_fd >= 0 ? H2B_OK : H2B_ERR_SYS;
    case H2B_PROC_PIPE:
        if (pipe2(fds, O_CLOEXEC) != 0)
            return H2B_ERR_SYS;
        s->fd = fds[0];
        *child_fd = fds[1];
        return H2B_OK;
    case H2B_PROC_FILE:
        if (file == NULL)
            return H2B_ERR_INVAL;
        *child_fd = open(file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (*child_fd < 0)
            return H2B_ERR_IO;
        s->fd = open(file, O_RDONLY | O_CLOEXEC);
        s->is_file = true;
        return s->fd >= 0 ? H2B_OK : H2B_ERR_IO;
    }
    return H2B_ERR_INVAL;
}

/* Reports a failure in the child to the parent and exits. Async-signal-safe. */
__attribute__((noreturn)) static void child_fail(int report_fd)
{
    int err = errno;
    ssize_t ignored = write(report_fd, &err, sizeof(err));
    (void)ignored;
    _exit(127);
}

/* Runs in the child between fork and exec: async-signal-safe calls only. */
__attribute__((noreturn)) static void child_exec(const char *path, char *const argv[],
                                                 const struct h2b_proc_opts *o, pid_t parent,
                                                 int in_fd, int out_fd, int err_fd, int report_fd)
{
    if (o->kill_on_parent_exit) {
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0)
            child_fail(report_fd);
        if (getppid() != parent) /* the parent died before the prctl took effect */
            _exit(127);
    }
    if (o->new_process_group && setpgid(0, 0) != 0)
        child_fail(report_fd);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    signal(SIGPIPE, SIG_DFL);
    if (o->cpus && sched_setaffinity(0, sizeof(*o->cpus), o->cpus) != 0)
        child_fail(report_fd);
    if (dup2(in_fd, 0) < 0 || (out_fd >= 0 && dup2(out_fd, 1) < 0) ||
        (o->err_to_out && dup2(1, 2) < 0) || (!o->err_to_out && err_fd >= 0 && dup2(err_fd, 2) < 0))
        child_fail(report_fd);
    (void)syscall(SYS_close_range, 3U, ~0U, CLOSE_RANGE_CLOEXEC);
    if (o->pass_fd_as >= 3) {
        if (report_fd == o->pass_fd_as && (report_fd = fcntl(report_fd, F_DUPFD_CLOEXEC, 3)) < 0)
            _exit(127);
        /* dup2 onto itself would leave the descriptor close-on-exec */
        if (o->pass_fd == o->pass_fd_as ? fcntl(o->pass_fd, F_SETFD, 0) != 0
                                        : dup2(o->pass_fd, o->pass_fd_as) < 0)
            child_fail(report_fd);
    }
    if (o->cwd && chdir(o->cwd) != 0)
        child_fail(report_fd);
    execve(path, argv, o->envp ? o->envp : environ);
    child_fail(report_fd);
}

static void close_fd(int *fd)
{
    if (*fd >= 0)
        close(*fd);
    *fd = -1;
}

int h2b_proc_spawn(struct h2b_proc **out, char *const argv[], const struct h2b_proc_opts *opts)
{
    static const struct h2b_proc_opts defaults;
    const struct h2b_proc_opts *o = opts ? opts : &defaults;
    if (argv == NULL || argv[0] == NULL)
        return H2B_ERR_INVAL;
    char path[4096];
    /* the program to exec: argv[0] itself if it has a '/', else its first match in PATH */
    int rv = h2b_find_program(argv[0], path, sizeof(path));
    if (rv != H2B_OK) {
        errno = ENOENT;
        return H2B_ERR_NOTFOUND;
    }
    struct h2b_proc *p = calloc(1, sizeof(*p));
    if (p == NULL)
        return H2B_ERR_NOMEM;
    p->pid = -1;
    p->pidfd = -1;
    p->out.fd = p->err.fd = -1;
    p->group = o->new_process_group;
    int in_fd = -1, out_fd = -1, err_fd = -1, report[2] = {-1, -1};
    if ((in_fd = open("/dev/null", O_RDONLY | O_CLOEXEC)) < 0) {
        rv = H2B_ERR_SYS;
        goto out_close;
    }
    if ((rv = open_output(o->out, o->out_path, &out_fd, &p->out)) != H2B_OK)
        goto out_close;
    if (!o->err_to_out && (rv = open_output(o->err, o->err_path, &err_fd, &p->err)) != H2B_OK)
        goto out_close;
    if (pipe2(report, O_CLOEXEC) != 0) {
        rv = H2B_ERR_SYS;
        goto out_close;
    }
    pid_t parent = getpid();
    p->pid = fork();
    if (p->pid < 0) {
        rv = H2B_ERR_SYS;
        goto out_close;
    }
    if (p->pid == 0)
        child_exec(path, argv, o, parent, in_fd, out_fd, err_fd, report[1]);

    close_fd(&report[1]);
    int child_errno = 0;
    ssize_t n;
    do {
        n = read(report[0], &child_errno, sizeof(child_errno));
    } while (n < 0 && errno == EINTR);
    if (n > 0) {
        /* exec (or a step before it) failed; the child exits 127 right away. */
        waitpid(p->pid, NULL, 0);
        p->pid = -1;
        errno = child_errno;
        rv = child_errno == ENOENT ? H2B_ERR_NOTFOUND : H2B_ERR_SYS;
        goto out_close;
    }
    p->pidfd = (int)syscall(SYS_pidfd_open, p->pid, 0);
    rv = H2B_OK;

out_close:;
    int saved = errno;
    close_fd(&report[0]);
    close_fd(&report[1]);
    close_fd(&in_fd);
    close_fd(&out_fd);
    close_fd(&err_fd);
    if (rv != H2B_OK) {
        close_fd(&p->out.fd);
        close_fd(&p->err.fd);
        free(p);
    } else {
        *out = p;
    }
    errno = saved;
    return rv;
}

/* ---- reaping ----------------------------------------------------------------------------- */

/* Waits until fd is readable or ns (capped at 1 s, so callers re-check their state) passed.
 * Returns ppoll's result. */
static int poll_in(int fd, uint64_t ns)
{
    struct pollfd pfd = {.fd = fd, .events = POLLIN};
    uint64_t slice = ns < H2B_NS_PER_SEC ? ns : H2B_NS_PER_SEC;
    struct timespec ts = {(time_t)(slice / H2B_NS_PER_SEC), (long)(slice % H2B_NS_PER_SEC)};
    return ppoll(&pfd, 1, &ts, NULL);
}

/* Reaps the child if it has exited (or, with block, once it exits). True if reaped. */
static bool reap(struct h2b_proc *p, bool block)
{
    if (p->reaped)
        return true;
    for (;;) {
        pid_t r = wait4(p->pid, &p->status, block ? 0 : WNOHANG, &p->usage);
        if (r == p->pid) {
            p->reaped = true;
            close_fd(&p->pidfd);
            return true;
        }
        if (r < 0 && errno == EINTR)
            continue;
        return false;
    }
}

bool h2b_proc_exited(struct h2b_proc *p, int *status)
{
    bool done = reap(p, false);
    if (done && status)
        *status = p->status;
    return done;
}

int h2b_proc_signal(struct h2b_proc *p, int sig)
{
    if (p->reaped)
        return H2B_ERR_NOTFOUND;
    return kill(p->group ? -p->pid : p->pid, sig) == 0 ? H2B_OK : H2B_ERR_SYS;
}

int h2b_proc_wait(struct h2b_proc *p, uint64_t timeout_ns, int *status)
{
    uint64_t start = h2b_clock_now_ns();
    uint64_t nap = 1 * H2B_NS_PER_MS;
    int rv = H2B_OK;
    while (!reap(p, false)) {
        uint64_t now = h2b_clock_now_ns(), waited = now - start;
        if (timeout_ns != UINT64_MAX && waited >= timeout_ns) {
            kill(p->group ? -p->pid : p->pid, SIGKILL);
            if (!reap(p, true))
                return H2B_ERR_SYS;
            rv = H2B_ERR_TIMEOUT;
            break;
        }
        uint64_t left = timeout_ns == UINT64_MAX ? UINT64_MAX : timeout_ns - waited;
        if (p->pidfd >= 0) {
            (void)poll_in(p->pidfd, left);
        } else {
            h2b_clock_sleep_ns(nap < left ? nap : left);
            if (nap < 20 * H2B_NS_PER_MS)
                nap *= 2;
        }
    }
    if (status)
        *status = p->status;
    return rv;
}

/* ---- output ------------------------------------------------------------------------------ */

/* Takes the next line out of s->data if one is complete (or must be cut). Returns its length,
 * or -1 if more data is needed. */
static int take_line(struct stream *s, char *buf, size_t size)
{
    for (;;) {
        char *nl = memchr(s->data, '\n', s->len);
        if (nl == NULL && s->len < sizeof(s->data) && !(s->eof && s->len > 0))
            return -1;
        size_t line = nl ? (size_t)(nl - s->data) : s->len;
        size_t used = nl ? line + 1 : line;
        bool was_skipping = s->skipping;
        /* A line cut at the buffer's end continues in the next read: skip that part. */
        s->skipping = nl == NULL && !s->eof;
        if (!was_skipping) {
            size_t n = line < size - 1 ? line : size - 1;
            memcpy(buf, s->data, n);
            if (n > 0 && buf[n - 1] == '\r')
                n--;
            buf[n] = '\0';
            memmove(s->data, s->data + used, s->len - used);
            s->len -= used;
            return (int)n;
        }
        memmove(s->data, s->data + used, s->len - used);
        s->len -= used;
    }
}

static int read_line_from(struct h2b_proc *p, struct stream *s, char *buf, size_t size,
                          uint64_t timeout_ns)
{
    if (s->fd < 0 || size == 0)
        return H2B_ERR_INVAL;
    uint64_t deadline = h2b_clock_now_ns() + timeout_ns;
    if (deadline < timeout_ns)
        deadline = UINT64_MAX;
    for (;;) {
        int n = take_line(s, buf, size);
        if (n >= 0)
            return n;
        if (s->eof)
            return H2B_ERR_CLOSED;
        uint64_t now = h2b_clock_now_ns();
        if (now >= deadline)
            return H2B_ERR_TIMEOUT;
        uint64_t left = deadline - now;
        /* A file is at its end for good only once the writer is gone: check that first, so
         * a write made just before exit is still read below. */
        bool gone = s->is_file && h2b_proc_exited(p, NULL);
        if (!s->is_file) {
            int r = poll_in(s->fd, left);
            if (r < 0 && errno != EINTR)
                return H2B_ERR_SYS;
            if (r <= 0)
                continue;
        }
        ssize_t r = read(s->fd, s->data + s->len, sizeof(s->data) - s->len);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return H2B_ERR_SYS;
        if (r > 0) {
            s->len += (size_t)r;
        } else if (!s->is_file || gone) {
            s->eof = true;
        } else {
            uint64_t nap = 2 * H2B_NS_PER_MS;
            h2b_clock_sleep_ns(nap < left ? nap : left);
        }
    }
}

int h2b_proc_read_line(struct h2b_proc *p, char *buf, size_t size, uint64_t timeout_ns)
{
    return read_line_from(p, &p->out, buf, size, timeout_ns);
}

int h2b_proc_read_err_line(struct h2b_proc *p, char *buf, size_t size, uint64_t timeout_ns)
{
    return read_line_from(p, &p->err, buf, size, timeout_ns);
}

/* ---- accounting -------------------------------------------------------------------------- */

static uint64_t timeval_ns(struct timeval tv)
{
    return (uint64_t)tv.tv_sec * H2B_NS_PER_SEC + (uint64_t)tv.tv_usec * H2B_NS_PER_US;
}

/* A /proc stat file (a process's or a thread's) read into text: what follows the command name,
 * from the space before field 3 (state) on, or NULL. The name (field 2) may contain spaces and
 * parentheses, so fields are counted from the last ')'. */
static const char *stat_fields(const char *path, char *text, size_t size)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    ssize_t n = read(fd, text, size - 1);
    close(fd);
    if (n <= 0)
        return NULL;
    text[n] = '\0';
    const char *q = strrchr(text, ')');
    return q && q[1] == ' ' ? q + 1 : NULL;
}

/* CPU time of process pid in ns. The process's CPU-time clock (clock_getcpuclockid) counts
 * every thread, exited ones included, to the nanosecond; utime + stime from /proc/PID/stat is
 * the fallback, in clock ticks (10 ms at USER_HZ 100: a requests-per-CPU-second figure of a
 * short cell computed from it is mostly quantisation). */
static int stat_cpu_ns(pid_t pid, uint64_t *out)
{
    clockid_t clk;
    struct timespec ts;
    if (clock_getcpuclockid(pid, &clk) == 0 && clock_gettime(clk, &ts) == 0) {
        *out = (uint64_t)ts.tv_sec * H2B_NS_PER_SEC + (uint64_t)ts.tv_nsec;
        return H2B_OK;
    }
    char path[64], text[1024];
    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    const char *q = stat_fields(path, text, sizeof(text));
    if (q == NULL)
        return H2B_ERR_SYS;
    /* After ")": fields 3 (state) to 13 are skipped as tokens; utime and stime are 14, 15. */
    unsigned long long utime, stime;
    if (sscanf(q + 1, "%*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %llu %llu", &utime, &stime) != 2)
        return H2B_ERR_SYS;
    long hz = sysconf(_SC_CLK_TCK);
    if (hz <= 0)
        hz = 100;
    *out = (utime + stime) * (H2B_NS_PER_SEC / (uint64_t)hz);
    return H2B_OK;
}

int h2b_proc_cpu_ns(struct h2b_proc *p, uint64_t *cpu_ns)
{
    if (!p->reaped && stat_cpu_ns(p->pid, cpu_ns) == H2B_OK)
        return H2B_OK;
    if (!reap(p, false))
        return H2B_ERR_SYS;
    *cpu_ns = timeval_ns(p->usage.ru_utime) + timeval_ns(p->usage.ru_stime);
    return H2B_OK;
}

int h2b_proc_threads_look(pid_t pid, struct h2b_proc_threads *out)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
    DIR *d = opendir(path);
    if (!d)
        return H2B_ERR_SYS;
    memset(out, 0, sizeof(*out));
    int rc = H2B_OK;
    for (struct dirent *e; rc == H2B_OK && (e = readdir(d)) != NULL;) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9')
            continue;
        char file[128], text[1024];
        snprintf(file, sizeof file, "/proc/%d/task/%.20s/stat", (int)pid, e->d_name);
        const char *q = stat_fields(file, text, sizeof(text));
        if (q == NULL)
            continue; /* the thread exited meanwhile */
        out->threads++;
        out->sleeping += q[1] == 'S';
        out->stopped += q[1] == 'T' || q[1] == 't';
        snprintf(file, sizeof file, "/proc/%d/task/%.20s/schedstat", (int)pid, e->d_name);
        FILE *f = fopen(file, "re");
        unsigned long long ns = 0;
        if (f) {
            if (fscanf(f, "%llu", &ns) != 1)
                rc = H2B_ERR_SYS;
            fclose(f);
        }
        out->run_ns += ns;
    }
    closedir(d);
    return rc;
}

/* VmRSS and VmHWM from /proc/PID/status; false if either is missing (a zombie has neither). */
static bool status_rss(pid_t pid, uint64_t *rss, uint64_t *hwm)
{
    char path[64], line[256];
    snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
    FILE *f = fopen(path, "re");
    if (f == NULL)
        return false;
    int found = 0;
    while (fgets(line, sizeof(line), f)) {
        unsigned long long v;
        if (sscanf(line, "VmRSS: %llu kB", &v) == 1) {
            *rss = v;
            found |= 1;
        } else if (sscanf(line, "VmHWM: %llu kB", &v) == 1) {
            *hwm = v;
            found |= 2;
        }
    }
    fclose(f);
    /* The kernel sums per-CPU RSS counters separately for the two lines, so they can disagree
     * by a few pages; a peak below the current value is never meaningful. */
    if (*hwm < *rss)
        *hwm = *rss;
    return found == 3;
}

int h2b_proc_rss_kib(struct h2b_proc *p, uint64_t *rss_kib, uint64_t *hwm_kib)
{
    uint64_t rss = 0, hwm = 0;
    if (p->reaped || !status_rss(p->pid, &rss, &hwm)) {
        /* No memory lines: the child is exiting. Its rusage is final within moments. */
        for (int i = 0; i < 200 && !reap(p, false); i++)
            h2b_clock_sleep_ns(H2B_NS_PER_MS);
        if (!p->reaped)
            return H2B_ERR_SYS;
        rss = 0;
        hwm = (uint64_t)p->usage.ru_maxrss;
    }
    if (rss_kib)
        *rss_kib = rss;
    if (hwm_kib)
        *hwm_kib = hwm;
    return H2B_OK;
}

int h2b_proc_pid(const struct h2b_proc *p)
{
    return (int)p->pid;
}

void h2b_proc_del(struct h2b_proc *p)
{
    if (p == NULL)
        return;
    if (!reap(p, false)) {
        kill(p->group ? -p->pid : p->pid, SIGKILL);
        reap(p, true);
    }
    close_fd(&p->pidfd);
    close_fd(&p->out.fd);
    close_fd(&p->err.fd);
    free(p);
}
