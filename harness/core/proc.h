/*
 * proc.h - child processes for targets and peers: spawn pinned, read their output, stop them,
 * and account for their CPU time and memory.
 *
 * Typical use (a server that prints its port):
 *
 *     struct h2b_proc_opts o = {.cpus = &cpu0, .out = H2B_PROC_PIPE,
 *                               .kill_on_parent_exit = true};
 *     h2b_proc_spawn(&p, argv, &o);
 *     h2b_proc_read_line(p, line, sizeof(line), 5 * H2B_NS_PER_SEC);  "listening on http://..."
 *     ... run the load ...
 *     h2b_proc_cpu_ns(p, &cpu); h2b_proc_rss_kib(p, &rss, &hwm);
 *     h2b_proc_signal(p, SIGTERM); h2b_proc_wait(p, 5 * H2B_NS_PER_SEC, &status);
 *     h2b_proc_del(p);
 *
 * A pipe holds 64 KiB: a child that keeps writing to a PIPE nobody reads blocks. For long-lived
 * chatty children use H2B_PROC_FILE (read_line then tails the file) or H2B_PROC_DEVNULL.
 * A struct h2b_proc is used by one thread at a time.
 */
#ifndef H2B_CORE_PROC_H
#define H2B_CORE_PROC_H

#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct h2b_proc;

enum h2b_proc_io {
    H2B_PROC_INHERIT = 0, /* the parent's stdout/stderr */
    H2B_PROC_PIPE,        /* a pipe the parent reads with h2b_proc_read_line / _read_err_line */
    H2B_PROC_FILE,        /* a file (created or truncated, 0644); read_line tails it */
    H2B_PROC_DEVNULL,     /* discarded */
    H2B_PROC_STDERR,      /* the parent's stderr (keeps a child's stdout off the parent's) */
};

struct h2b_proc_opts {
    const cpu_set_t *cpus;    /* sched_setaffinity in the child before exec; NULL: inherit */
    enum h2b_proc_io out;     /* the child's stdout */
    enum h2b_proc_io err;     /* the child's stderr (ignored when err_to_out) */
    const char *out_path;     /* for H2B_PROC_FILE */
    const char *err_path;     /* for H2B_PROC_FILE */
    bool err_to_out;          /* stderr goes wherever stdout goes */
    char *const *envp;        /* the child's environment; NULL: the parent's */
    const char *cwd;          /* the child's working directory; NULL: the parent's */
    bool kill_on_parent_exit; /* the child gets SIGKILL if the spawning thread dies */
    bool new_process_group;   /* the child leads a new process group; signals and the final
                                 SIGKILL go to the whole group (servers that fork workers) */
    int pass_fd;              /* with pass_fd_as >= 3: the child gets this descriptor of the */
    int pass_fd_as;           /* parent's as descriptor pass_fd_as (a result pipe); 0: none */
};

/* Starts argv[0] (searched in PATH when it has no '/') with argv; stdin is /dev/null, file
 * descriptors other than 0-2 (and pass_fd_as) are not inherited, SIGPIPE is reset to default and no
 * signal is blocked in the child. opts may be NULL (all defaults). On success *out owns the child.
 * Returns H2B_OK, H2B_ERR_NOTFOUND (no such program), H2B_ERR_IO (an output file cannot be
 * created), H2B_ERR_SYS (fork, pinning, exec failed; errno says why), H2B_ERR_NOMEM,
 * H2B_ERR_INVAL. *out is untouched on failure and no child is left running. */
int h2b_proc_spawn(struct h2b_proc **out, char *const argv[], const struct h2b_proc_opts *opts);

/* Reads the next line of the child's stdout (PIPE or FILE) into buf without the newline (and
 * without a trailing '\r'), NUL-terminated, waiting at most timeout_ns. A line longer than
 * size - 1 (or than the 4 KiB line buffer) is returned truncated and its rest skipped.
 * Returns the line's length (>= 0), H2B_ERR_TIMEOUT, H2B_ERR_CLOSED (end of output and nothing
 * left), H2B_ERR_INVAL (stdout is not PIPE or FILE), H2B_ERR_SYS. */
int h2b_proc_read_line(struct h2b_proc *p, char *buf, size_t size, uint64_t timeout_ns);

/* The same for the child's stderr. */
int h2b_proc_read_err_line(struct h2b_proc *p, char *buf, size_t size, uint64_t timeout_ns);

/* Sends sig to the child (its group with new_process_group). Returns H2B_OK, H2B_ERR_NOTFOUND
 * (already reaped: its pid may belong to someone else now) or H2B_ERR_SYS. */
int h2b_proc_signal(struct h2b_proc *p, int sig);

/* True if the child has exited (reaping it, non-blocking); *status (may be NULL) gets the
 * waitpid status. */
bool h2b_proc_exited(struct h2b_proc *p, int *status);

/* Waits up to timeout_ns for the child to exit (UINT64_MAX: forever); after that SIGKILLs it
 * and reaps it. *status (may be NULL) gets the waitpid status either way.
 * Returns H2B_OK (exited in time), H2B_ERR_TIMEOUT (had to be killed) or H2B_ERR_SYS. */
int h2b_proc_wait(struct h2b_proc *p, uint64_t timeout_ns, int *status);

/* CPU time (user + system, ns) of the child: from its CPU-time clock while it runs (ns
 * resolution; /proc/PID/stat's clock ticks where the clock cannot be read), from its rusage
 * once reaped (which then also includes
 * descendants it waited for). Returns H2B_OK or H2B_ERR_SYS. */
int h2b_proc_cpu_ns(struct h2b_proc *p, uint64_t *cpu_ns);

/* Memory of the child in KiB: resident now (VmRSS) and the peak (VmHWM) from /proc/PID/status
 * while it runs; once reaped, *rss_kib is 0 and *hwm_kib the rusage maximum RSS. Either
 * pointer may be NULL. Returns H2B_OK or H2B_ERR_SYS. */
int h2b_proc_rss_kib(struct h2b_proc *p, uint64_t *rss_kib, uint64_t *hwm_kib);

/* One look at every thread of process pid (any process, not only a child): how many there are,
 * how many are asleep (state S) and how many stopped (T or t), and their summed on-CPU time in
 * ns (/proc/PID/task/TID/stat and schedstat). A thread that exits during the look is not
 * counted. Returns H2B_OK, or H2B_ERR_SYS when the process or a schedstat cannot be read. */
struct h2b_proc_threads {
    unsigned threads, sleeping, stopped;
    uint64_t run_ns;
};
int h2b_proc_threads_look(pid_t pid, struct h2b_proc_threads *out);

/* The child's pid. */
int h2b_proc_pid(const struct h2b_proc *p);

/* Kills (SIGKILL) and reaps the child if it still runs, closes everything, frees p. NULL is
 * allowed. */
void h2b_proc_del(struct h2b_proc *p);

#endif
