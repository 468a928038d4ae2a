/*
 * fork.c - every fork of a benchmark is a fresh process running the same command line.
 *
 * The parent re-executes its own executable (/proc/self/exe, with the command line it was
 * started with), so a fork gets a fresh address-space layout, allocator, caches and lazy state,
 * as JMH's forked JVMs do; fork() without exec would inherit the parent's warm heap. The job
 * travels in the environment variable H2B_MICRO_CHILD ("m:<fd>:<name>" for the measurement
 * passes, "c:<fd>:<calls>:<name>" for the callgrind pass) and the options in argv, which the
 * child parses exactly as the parent did. The child writes one JSON object (its numbers and its
 * histogram, encoded with h2b_hist_encode) to the pipe on <fd>; the parent decodes it. Histograms
 * travel whole so the parent merges percentiles exactly instead of averaging them.
 *
 * The child's environment is the parent's plus the job and its fork index (H2B_MICRO_FORK, read
 * by h2b_micro_fork_index()). The callgrind pass runs the child under valgrind (found on PATH,
 * or $H2B_VALGRIND) --tool=callgrind --instr-atstart=no; the
 * child brackets n and 4n calls with client requests and dumps twice, and the parent reads the
 * two dump files' totals: instructions/op = (Ir(4n) - Ir(n)) / 3n.
 */
#include "core/check.h"
#include "core/error.h"
#include "core/fs.h"
#include "core/proc.h"
#include "core/results.h"
#include "micro/runner.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#define CHILD_ENV "H2B_MICRO_CHILD"
#define FORK_ENV "H2B_MICRO_FORK"   /* the fork index, for h2b_micro_fork_index() */
#define PAD_ENV "H2B_MICRO_ENV_PAD" /* see spawn_and_read */
#define CHILD_FD 3
#define MAX_ARGS 256

/* The command line to re-execute: the process's own argv up to where h2b_micro_main's argv
 * starts (e.g. "h2bench"), then h2b_micro_main's argv ("micro --forks 3 ..."). */
static char *cmd_args[MAX_ARGS + 1];
static int cmd_argc;
static int cmd_prefix; /* leading words that select the runner ("h2bench micro") */

static int read_cmdline(char ***out, int *count)
{
    static char buf[65536];
    static char *args[MAX_ARGS];
    int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return H2B_ERR_SYS;
    size_t len = 0;
    ssize_t r;
    while (len < sizeof buf - 1 && (r = read(fd, buf + len, sizeof buf - 1 - len)) > 0)
        len += (size_t)r;
    close(fd);
    buf[len] = '\0';
    int n = 0;
    for (size_t i = 0; i < len && n < MAX_ARGS; i += strlen(buf + i) + 1)
        args[n++] = buf + i;
    *out = args;
    *count = n;
    return H2B_OK;
}

void h2b__micro_set_command_line(int argc, char **argv)
{
    char **proc;
    int nproc = 0;
    cmd_argc = 0;
    if (read_cmdline(&proc, &nproc) != H2B_OK || nproc == 0)
        return;
    /* The process ran "h2bench micro ARGS" and argv is "<name> ARGS" (h2bench micro), or it ran
     * "./bench ARGS" and argv is its own argv (a user's main): keep the process's words up to
     * ARGS, then ARGS. When argv does not end the process's command line (built by the
     * caller), re-execute the program with argv's ARGS. argv[0] is a display name only. */
    bool tail = argc > 0 && nproc >= argc;
    for (int i = 1; i < argc && tail; i++)
        tail = strcmp(proc[nproc - argc + i], argv[i]) == 0;
    int prefix = tail ? nproc - argc + 1 : 1;
    cmd_prefix = prefix < MAX_ARGS ? prefix : MAX_ARGS;
    for (int i = 0; i < prefix && cmd_argc < MAX_ARGS; i++)
        cmd_args[cmd_argc++] = proc[i];
    for (int i = 1; i < argc && cmd_argc < MAX_ARGS; i++)
        cmd_args[cmd_argc++] = argv[i];
    cmd_args[cmd_argc] = NULL;
}

/* --- fork results as JSON ------------------------------------------------------------------ */

/* The fork interchange is the core model's (struct h2b_results_fork): these copy between it and
 * the runner's struct. A metric that was not measured travels as null with its reason. */
static int put_maybe(double *value, char **note, const struct h2b_micro_maybe *m)
{
    *value = m->available ? m->value : NAN;
    return m->available ? H2B_OK : h2b_model_set_string(note, m->reason);
}

static void get_maybe(double value, const char *note, struct h2b_micro_maybe *m)
{
    m->available = !isnan(value);
    m->value = m->available ? value : 0;
    snprintf(m->reason, sizeof m->reason, "%s", m->available ? "" : note ? note : "not reported");
}

static double or_zero(double v)
{
    return isnan(v) ? 0 : v;
}

json_t *h2b__micro_fork_to_json(const struct h2b_micro_fork *f)
{
    struct h2b_results_fork m;
    double epochs[H2B_MICRO_MAX_EPOCHS];
    json_t *o = NULL;
    h2b_model_init(&h2b_results_fork_model, &m);
    m.pid = (double)f->pid;
    for (unsigned i = 0; i < f->epochs && i < H2B_MICRO_MAX_EPOCHS; i++)
        epochs[i] = f->epoch_ns_per_op[i];
    m.ops = (double)f->ops;
    m.cpu_ns_per_op = f->cpu_ns_per_op;
    m.batch = (double)f->batch;
    m.timer_overhead_ns = (double)f->timer_overhead_ns;
    m.alloc_deterministic = f->alloc_deterministic;
    char *enc = NULL;
    if (h2b_model_set_nums(&m.epoch_ns_per_op, epochs, f->epochs) ||
        (f->hist && (h2b_hist_encode(f->hist, &enc) || h2b_model_set_string(&m.hist, enc))) ||
        put_maybe(&m.allocs_per_op, &m.allocs_note, &f->allocs_per_op) ||
        put_maybe(&m.bytes_per_op, &m.bytes_note, &f->bytes_per_op) ||
        put_maybe(&m.instructions_per_op, &m.instructions_note, &f->instructions_per_op) ||
        (f->error[0] && h2b_model_set_string(&m.error, f->error)) ||
        h2b_model_to_json(&h2b_results_fork_model, &m, &o))
        o = NULL;
    free(enc);
    h2b_model_free(&h2b_results_fork_model, &m);
    return o;
}

int h2b__micro_fork_from_json(json_t *o, struct h2b_micro_fork *f)
{
    struct h2b_results_fork m;
    struct h2b_diag d = {0};
    if (!json_is_object(o))
        return H2B_ERR_PARSE;
    int rc = h2b_model_from_json(&h2b_results_fork_model, o, NULL, "fork", 0, &m, &d);
    if (rc != H2B_OK)
        return rc;
    f->pid = (long)or_zero(m.pid);
    f->epochs = 0;
    for (size_t i = 0; i < m.epoch_ns_per_op.n && i < H2B_MICRO_MAX_EPOCHS; i++)
        f->epoch_ns_per_op[f->epochs++] = m.epoch_ns_per_op.v[i];
    f->ops = (uint64_t)or_zero(m.ops);
    f->cpu_ns_per_op = or_zero(m.cpu_ns_per_op);
    if (m.hist)
        rc = h2b_hist_decode(m.hist, &f->hist);
    f->batch = (uint64_t)or_zero(m.batch);
    f->timer_overhead_ns = (uint64_t)or_zero(m.timer_overhead_ns);
    get_maybe(m.allocs_per_op, m.allocs_note, &f->allocs_per_op);
    get_maybe(m.bytes_per_op, m.bytes_note, &f->bytes_per_op);
    f->alloc_deterministic = m.alloc_deterministic == 1;
    get_maybe(m.instructions_per_op, m.instructions_note, &f->instructions_per_op);
    snprintf(f->error, sizeof f->error, "%s", m.error ? m.error : "");
    h2b_model_free(&h2b_results_fork_model, &m);
    return rc;
}

/* --- the child side ------------------------------------------------------------------------- */

static int write_all(int fd, const char *p, size_t len)
{
    while (len > 0) {
        ssize_t w = write(fd, p, len);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return H2B_ERR_IO;
        p += w;
        len -= (size_t)w;
    }
    return H2B_OK;
}

bool h2b__micro_child(const struct h2b_micro_config *cfg, int *exit_code)
{
    const char *job = getenv(CHILD_ENV);
    if (!job)
        return false;
    char mode = job[0];
    char *p;
    long fd = strtol(job + 2, &p, 10);
    uint64_t calls = 0;
    if ((mode != 'm' && mode != 'c') || job[1] != ':' || *p != ':') {
        fprintf(stderr, "micro: malformed %s='%s'\n", CHILD_ENV, job);
        *exit_code = 3;
        return true;
    }
    if (mode == 'c') {
        calls = strtoull(p + 1, &p, 10);
        if (*p != ':' || calls == 0) {
            fprintf(stderr, "micro: malformed %s='%s'\n", CHILD_ENV, job);
            *exit_code = 3;
            return true;
        }
    }
    const struct h2b_micro_instance *inst = h2b__micro_find(p + 1);
    if (!inst) {
        fprintf(stderr, "micro: child: no benchmark named '%s'\n", p + 1);
        *exit_code = 3;
        return true;
    }
    const char *fi = getenv(FORK_ENV);
    if (fi) {
        char *end;
        unsigned long v = strtoul(fi, &end, 10);
        h2b__micro_fork_index = *end == '\0' && v < 1000000 ? (int)v : 0;
    }
    struct h2b_micro_fork f;
    h2b__micro_fork_init(&f);
    int rc = mode == 'm' ? h2b__micro_measure(inst, cfg, &f)
                         : h2b__micro_measure_callgrind(inst, calls, &f);
    json_t *j = rc == H2B_OK ? h2b__micro_fork_to_json(&f) : NULL;
    char *text = j ? json_dumps(j, JSON_COMPACT) : NULL;
    *exit_code = text && write_all((int)fd, text, strlen(text)) == H2B_OK ? 0 : 3;
    free(text);
    json_decref(j);
    h2b__micro_fork_free(&f);
    close((int)fd);
    return true;
}

/* --- the parent side ------------------------------------------------------------------------ */

static bool env_is(const char *entry, const char *name)
{
    size_t n = strlen(name);
    return strncmp(entry, name, n) == 0 && entry[n] == '=';
}

/* Spawns argv (argv[0] is the program path) with the job and the fork index in the environment
 * and a pipe on CHILD_FD; reads everything the child writes there into *out (malloc'd,
 * NUL-terminated). The child keeps this process's environment: a benchmark may read it.
 * fixed_env (the callgrind pass) adds LD_BIND_NOW=1 and a padding variable that makes the
 * environment's footprint on the child's initial stack (its strings plus one pointer each) a
 * multiple of 4096 bytes, so the benchmark's stack sits at the same page offset whatever the
 * shell's environment holds, and instruction counts do not move with it. Rejected: a clean
 * environment (the earlier way to the same end), which took away what the benchmark reads. */
static int spawn_and_read(char *const argv[], const char *job, unsigned fork_index, bool fixed_env,
                          char **out, int *status)
{
    int pfd[2];
    if (pipe2(pfd, O_CLOEXEC) != 0)
        return H2B_ERR_SYS;
    int rc = H2B_ERR_SYS;
    char job_var[H2B_MICRO_NAME_MAX + 64], fork_var[48], bind_now[] = "LD_BIND_NOW=1";
    snprintf(job_var, sizeof job_var, "%s=%s", CHILD_ENV, job);
    snprintf(fork_var, sizeof fork_var, "%s=%u", FORK_ENV, fork_index);
    size_t nenv = 0;
    for (char **e = environ; *e; e++)
        nenv++;
    char **envp = calloc(nenv + 5, sizeof(*envp));
    char *pad = NULL;
    size_t k = 0;
    for (char **e = environ; envp && *e; e++)
        if (!env_is(*e, CHILD_ENV) && !env_is(*e, FORK_ENV) && !env_is(*e, PAD_ENV) &&
            !(fixed_env && env_is(*e, "LD_BIND_NOW")))
            envp[k++] = *e;
    if (envp) {
        envp[k++] = job_var;
        envp[k++] = fork_var;
        if (fixed_env)
            envp[k++] = bind_now;
    }
    if (envp && fixed_env) {
        size_t bytes = 0, head = strlen(PAD_ENV) + 2; /* "NAME=" and the NUL */
        for (size_t i = 0; i < k; i++)
            bytes += strlen(envp[i]) + 1 + sizeof(char *);
        bytes += head + sizeof(char *);
        size_t fill = (4096 - bytes % 4096) % 4096;
        pad = malloc(head + fill);
        if (pad) {
            memcpy(pad, PAD_ENV "=", head - 1);
            memset(pad + head - 1, 'x', fill);
            pad[head - 1 + fill] = '\0';
            envp[k++] = pad;
        }
    }
    if (!envp || (fixed_env && !pad)) {
        free(envp);
        close(pfd[0]);
        close(pfd[1]);
        return H2B_ERR_NOMEM;
    }
    H2B_ASSERT(k <= nenv + 4); /* envp has nenv + 5 slots: the kept ones, 4 added, NULL */
    envp[k] = NULL;
    struct h2b_proc_opts po = {.envp = envp, .pass_fd = pfd[1], .pass_fd_as = CHILD_FD};
    struct h2b_proc *child = NULL;
    int err = h2b_proc_spawn(&child, argv, &po);
    int saved = errno;
    free(envp);
    free(pad);
    close(pfd[1]);
    if (err != H2B_OK) {
        fprintf(stderr, "micro: cannot start %s: %s\n", argv[0],
                err == H2B_ERR_NOTFOUND ? "not found" : strerror(saved));
        close(pfd[0]);
        return H2B_ERR_SYS;
    }
    size_t len;
    char *buf = NULL;
    rc = h2b_fd_read_all(pfd[0], 64u << 20, 0, &buf, &len);
    close(pfd[0]);
    if (h2b_proc_wait(child, UINT64_MAX, status) != H2B_OK && rc == H2B_OK)
        rc = H2B_ERR_SYS;
    h2b_proc_del(child);
    if (rc == H2B_OK)
        *out = buf;
    else
        free(buf);
    return rc;
}

static int run_child(const struct h2b_micro_instance *inst, unsigned fork_index,
                     struct h2b_micro_fork *f)
{
    char exe[PATH_MAX], job[H2B_MICRO_NAME_MAX + 32];
    if (h2b_self_exe(exe, sizeof exe) != H2B_OK || cmd_argc == 0) {
        fprintf(stderr, "micro: cannot find this executable to start forks (use --forks 0)\n");
        return H2B_ERR_SYS;
    }
    char *argv[MAX_ARGS + 1];
    argv[0] = exe;
    for (int i = 1; i < cmd_argc; i++)
        argv[i] = cmd_args[i];
    argv[cmd_argc] = NULL;
    snprintf(job, sizeof job, "m:%d:%s", CHILD_FD, inst->name);
    char *text = NULL;
    int status = 0;
    int rc = spawn_and_read(argv, job, fork_index, false, &text, &status);
    if (rc != H2B_OK)
        return rc;
    json_error_t jerr;
    json_t *j = text[0] ? json_loads(text, 0, &jerr) : NULL;
    free(text);
    if (!j) {
        fprintf(stderr, "micro: %s: fork exited with status %d without a result\n", inst->name,
                WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
        return H2B_ERR_IO;
    }
    rc = h2b__micro_fork_from_json(j, f);
    json_decref(j);
    if (rc != H2B_OK)
        fprintf(stderr, "micro: %s: malformed result from fork\n", inst->name);
    return rc;
}

int h2b__micro_run_forks(const struct h2b_micro_instance *inst, const struct h2b_micro_config *cfg,
                         struct h2b_micro_fork *out)
{
    if (cfg->forks == 0) {
        h2b__micro_fork_init(&out[0]);
        return h2b__micro_measure(inst, cfg, &out[0]);
    }
    for (unsigned i = 0; i < cfg->forks; i++) {
        h2b__micro_fork_init(&out[i]);
        int rc = run_child(inst, i, &out[i]);
        if (rc != H2B_OK)
            return rc;
        if (out[i].error[0])
            return H2B_OK; /* the benchmark failed: no point in more forks */
    }
    return H2B_OK;
}

/* Reads the "totals:" (or "summary:") line of a callgrind dump: instructions executed. */
static int read_dump_total(const char *path, uint64_t *out)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return H2B_ERR_IO;
    char line[512];
    int rc = H2B_ERR_PARSE;
    while (fgets(line, sizeof line, f)) {
        const char *v = NULL;
        if (strncmp(line, "totals:", 7) == 0)
            v = line + 7;
        else if (strncmp(line, "summary:", 8) == 0)
            v = line + 8;
        if (v) {
            char *end;
            errno = 0;
            unsigned long long n = strtoull(v, &end, 10);
            if (errno == 0 && end != v) {
                *out = n;
                rc = H2B_OK;
            }
            break;
        }
    }
    fclose(f);
    return rc;
}

/* Finds the dump whose "desc: Trigger: Client Request: <trigger>" matches; callgrind numbers
 * dumps <out-file>.<n>. */
static int find_dump(const char *dir, const char *trigger, uint64_t *total)
{
    DIR *d = opendir(dir);
    if (!d)
        return H2B_ERR_IO;
    struct dirent *e;
    int rc = H2B_ERR_NOTFOUND;
    while (rc == H2B_ERR_NOTFOUND && (e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char path[PATH_MAX], line[512];
        int len = snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        FILE *f = len > 0 && (size_t)len < sizeof path ? fopen(path, "r") : NULL;
        if (!f)
            continue;
        bool match = false;
        while (fgets(line, sizeof line, f) && !match) {
            if (strncmp(line, "desc: Trigger:", 14) == 0 && strstr(line, trigger) &&
                strstr(line, trigger)[strlen(trigger)] == '\n')
                match = true;
            if (strncmp(line, "fn=", 3) == 0 || strncmp(line, "events:", 7) == 0)
                break;
        }
        fclose(f);
        if (match)
            rc = read_dump_total(path, total);
    }
    closedir(d);
    return rc;
}

static void remove_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (d) {
        struct dirent *e;
        while ((e = readdir(d))) {
            if (e->d_name[0] == '.')
                continue;
            char path[PATH_MAX];
            int len = snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            if (len > 0 && (size_t)len < sizeof path)
                unlink(path);
        }
        closedir(d);
    }
    rmdir(dir);
}

int h2b__micro_run_callgrind(const struct h2b_micro_instance *inst,
                             const struct h2b_micro_config *cfg, struct h2b_micro_maybe *out)
{
    char exe[PATH_MAX], dir[PATH_MAX], outfile[PATH_MAX + 32], job[H2B_MICRO_NAME_MAX + 64];
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/h2b-callgrind-XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
    if (h2b_self_exe(exe, sizeof exe) != H2B_OK || cmd_argc == 0 || !mkdtemp(dir)) {
        fprintf(stderr, "micro: callgrind: cannot prepare a run: %s\n", strerror(errno));
        return H2B_ERR_SYS;
    }
    /* valgrind from PATH, or H2B_VALGRIND (a path, or a name looked up on PATH) */
    char valgrind[PATH_MAX];
    const char *want = getenv("H2B_VALGRIND");
    if (h2b_find_program(want && *want ? want : "valgrind", valgrind, sizeof valgrind) != H2B_OK) {
        snprintf(out->reason, sizeof out->reason, "callgrind: %s%.180s%s",
                 want && *want ? "H2B_VALGRIND=" : "valgrind is not on PATH",
                 want && *want ? want : " (install valgrind, or set H2B_VALGRIND)",
                 want && *want ? " is not an executable program" : "");
        remove_dir(dir);
        return H2B_ERR_NOTFOUND;
    }
    snprintf(outfile, sizeof outfile, "--callgrind-out-file=%s/cg.out", dir);
    char *argv[MAX_ARGS + 8];
    int n = 0;
    char tool[] = "--tool=callgrind", atstart[] = "--instr-atstart=no", quiet[] = "-q",
         instr[] = "--dump-instr=no";
    argv[n++] = valgrind;
    argv[n++] = tool;
    argv[n++] = atstart;
    argv[n++] = instr;
    argv[n++] = quiet;
    argv[n++] = outfile;
    argv[n++] = exe;
    /* only the words that select the runner: options do not matter to this pass, and a
     * different command line would move the child's stack */
    for (int i = 1; i < cmd_prefix && n < MAX_ARGS + 7; i++)
        argv[n++] = cmd_args[i];
    argv[n] = NULL;
    uint64_t calls = cfg->callgrind_calls ? cfg->callgrind_calls : 8;
    snprintf(job, sizeof job, "c:%d:%" PRIu64 ":%s", CHILD_FD, calls, inst->name);
    char *text = NULL;
    int status = 0;
    int rc = spawn_and_read(argv, job, 0, true, &text, &status);
    struct h2b_micro_fork f;
    h2b__micro_fork_init(&f);
    json_error_t jerr;
    json_t *j = rc == H2B_OK && text[0] ? json_loads(text, 0, &jerr) : NULL;
    free(text);
    if (!j || h2b__micro_fork_from_json(j, &f) != H2B_OK) {
        snprintf(out->reason, sizeof out->reason, "callgrind run failed (valgrind exit status %d)",
                 WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
        rc = H2B_ERR_IO;
    } else if (f.error[0]) {
        snprintf(out->reason, sizeof out->reason, "callgrind run failed: %.200s", f.error);
        rc = H2B_ERR_IO;
    } else {
        uint64_t a = 0, b = 0;
        if (find_dump(dir, "h2bench-n", &a) != H2B_OK ||
            find_dump(dir, "h2bench-4n", &b) != H2B_OK || b < a) {
            snprintf(out->reason, sizeof out->reason, "callgrind dumps missing or unreadable");
            rc = H2B_ERR_IO;
        } else {
            out->available = true;
            out->value = (double)(b - a) / (3.0 * (double)calls * (double)inst->ops_per_call);
            out->reason[0] = '\0';
        }
    }
    json_decref(j);
    h2b__micro_fork_free(&f);
    remove_dir(dir);
    return rc;
}

/* --- the perf pass (--perf-record) ---------------------------------------------------------- */

static h2b_micro_profile_fn profile_hook;

void h2b_micro_set_profile_hook(h2b_micro_profile_fn fn)
{
    profile_hook = fn;
}

/* perf's path: $H2B_PERF, or the first executable "perf" in PATH. */
static bool find_perf(char *buf, size_t size)
{
    const char *env = getenv("H2B_PERF");
    if (env && *env) {
        snprintf(buf, size, "%s", env);
        return access(buf, X_OK) == 0;
    }
    if (h2b_find_program("perf", buf, size) == H2B_OK)
        return true;
    snprintf(buf, size, "perf");
    return false;
}

/* Runs argv with stdout into out_path (stderr into err_path); *status gets its wait status. */
static int run_to_file(char *const argv[], const char *out_path, const char *err_path, int *status)
{
    struct h2b_proc_opts po = {
        .out = H2B_PROC_FILE, .out_path = out_path, .err = H2B_PROC_FILE, .err_path = err_path};
    struct h2b_proc *p;
    int rc = h2b_proc_spawn(&p, argv, &po);
    if (rc != H2B_OK)
        return H2B_ERR_SYS;
    rc = h2b_proc_wait(p, UINT64_MAX, status);
    h2b_proc_del(p);
    return rc == H2B_OK ? H2B_OK : H2B_ERR_SYS;
}

int h2b__micro_run_perf(const struct h2b_micro_instance *inst, const struct h2b_micro_config *cfg,
                        struct h2b_micro_result *r)
{
    char perf[PATH_MAX], exe[PATH_MAX], stem[PATH_MAX], data[PATH_MAX + 16], txt[PATH_MAX + 16],
        errf[PATH_MAX + 16], delay[32], job[H2B_MICRO_NAME_MAX + 32];
    if (!find_perf(perf, sizeof perf)) {
        snprintf(r->profile_reason, sizeof r->profile_reason,
                 "%.200s not found (Debian package linux-perf)", perf);
        return H2B_ERR_UNSUPPORTED;
    }
    if (h2b_self_exe(exe, sizeof exe) != H2B_OK || cmd_argc == 0) {
        snprintf(r->profile_reason, sizeof r->profile_reason, "cannot find this executable");
        return H2B_ERR_SYS;
    }
    char safe[H2B_MICRO_NAME_MAX + 1];
    size_t k = 0;
    for (const char *p = inst->name; *p && k < sizeof safe - 1; p++)
        safe[k++] = (isalnum((unsigned char)*p) || *p == '-' || *p == '.') ? *p : '_';
    safe[k] = '\0';
    snprintf(stem, sizeof stem, "%s/micro-%s", cfg->perf_dir ? cfg->perf_dir : ".", safe);
    snprintf(data, sizeof data, "%s.perf.data", stem);
    snprintf(txt, sizeof txt, "%s.perf.txt", stem);
    snprintf(errf, sizeof errf, "%s.perf.err", stem);
    /* recording starts when the fork's warm-up ends (start-up takes a few ms more) */
    snprintf(delay, sizeof delay, "%" PRIu64, cfg->warmup_ns / 1000000 + 1);
    char *argv[MAX_ARGS + 24];
    char *pre[] = {perf,           "record",     "-q", "-N",  "-B", "-e", "cpu-clock", "-F", "499",
                   "--call-graph", "dwarf,8192", "-D", delay, "-o", data, "--",        exe};
    size_t n = 0;
    for (size_t i = 0; i < sizeof pre / sizeof pre[0]; i++)
        argv[n++] = pre[i];
    for (int i = 1; i < cmd_argc; i++)
        argv[n++] = cmd_args[i];
    argv[n] = NULL;
    snprintf(job, sizeof job, "m:%d:%s", CHILD_FD, inst->name);
    char *text = NULL;
    int status = 0;
    int rc = spawn_and_read(argv, job, 0, false, &text, &status);
    bool measured = rc == H2B_OK && text && text[0] == '{';
    free(text);
    struct stat st;
    if (!measured || stat(data, &st) != 0 || st.st_size == 0) {
        snprintf(r->profile_reason, sizeof r->profile_reason,
                 "perf record of the fork failed (exit status %d)%s",
                 WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status),
                 measured ? "" : ": see the messages above");
        unlink(data);
        return H2B_ERR_IO;
    }
    char *sargv[] = {perf, "script", "-i", data, "--no-inline", "-F", "comm,tid,period,ip,sym,dso",
                     NULL};
    rc = run_to_file(sargv, txt, errf, &status);
    unlink(data);
    unlink(errf);
    if (rc != H2B_OK || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        snprintf(r->profile_reason, sizeof r->profile_reason, "perf script failed");
        unlink(txt);
        return H2B_ERR_IO;
    }
    if (!profile_hook) {
        json_t *o = json_pack("{s:s}", "perf_script", txt);
        r->profile = o ? json_dumps(o, JSON_COMPACT) : NULL;
        json_decref(o);
        return r->profile ? H2B_OK : H2B_ERR_NOMEM;
    }
    r->profile = profile_hook(txt, exe, stem, r->profile_reason, sizeof r->profile_reason);
    unlink(txt);
    return r->profile ? H2B_OK : H2B_ERR_IO;
}
