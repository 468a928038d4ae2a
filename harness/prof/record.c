/*
 * record.c - perf record beside a running process, then perf script into our parser.
 *
 * Approach: `perf record -e cpu-clock -F 499 --call-graph dwarf,8192 -p PID -- sleep MAX` as a
 * child in its own process group: the sleep bounds the recording even if we never come back,
 * SIGINT to the group ends it early (perf writes its file and exits). Then `perf script` turns
 * the data into text for fold.c. Before starting, one perf_event_open(2) of the same event on the
 * same pid tells "cannot record here" (paranoid setting, a container without the syscall) from
 * a perf failure, so the reason in the results is the real one.
 *
 * Why DWARF and not frame pointers: Debian 12 builds libnghttp2, libc and OpenSSL with
 * -fomit-frame-pointer (the x86-64 default at -O2). With `-g` (frame pointers) a stack ends at
 * the first frame inside those libraries: on h2ref under load, none of 1545 samples reached
 * start_thread and the frames above libnghttp2 were garbage addresses. With --call-graph dwarf
 * (unwinding from the .eh_frame tables every Debian library ships) and an 8 KiB stack copy,
 * every sample reached start_thread; 4 KiB cut 30 % of them short. The cost is the copy per
 * sample, so the rate is 499 Hz rather than perf's 4000 (docs/profiles.md has the overhead).
 *
 * Rejected: perf_event_open and our own unwinder (libunwind over copied stacks is what perf
 * already does well); `perf record --duration` (not in Debian 12's perf 6.1); `perf report` for
 * the folding (see fold.c).
 */
#include "prof/prof_int.h"

#include "core/error.h"
#include "core/fs.h"
#include "core/proc.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define STOP_WAIT_NS (30ull * 1000000000ull)    /* perf writing its file after SIGINT */
#define SCRIPT_WAIT_NS (120ull * 1000000000ull) /* perf script on a few seconds of samples */

struct h2b_prof_rec {
    struct h2b_proc *perf;
    char perf_prog[1024];
    char data[1024], text[1024], err[1024];
};

static const char *perf_program(const char *perf)
{
    if (perf && *perf)
        return perf;
    const char *env = getenv("H2B_PERF");
    return env && *env ? env : "perf";
}

/* One perf_event_open of cpu-clock on pid (0: this process): the check perf itself will make.
 * False when it fails, and diag (may be NULL) says why. */
static bool can_open(int pid, struct h2b_diag *diag)
{
    struct perf_event_attr attr;
    memset(&attr, 0, sizeof(attr));
    attr.size = sizeof(attr);
    attr.type = PERF_TYPE_SOFTWARE;
    attr.config = PERF_COUNT_SW_CPU_CLOCK;
    attr.disabled = 1;
    attr.exclude_kernel = geteuid() != 0;
    long fd = syscall(SYS_perf_event_open, &attr, pid, -1, -1, 0);
    if (fd >= 0) {
        close((int)fd);
        return true;
    }
    int e = errno;
    if (e == ENOSYS) {
        h2b_diag_at(diag, NULL, 0, 0, "perf_event_open is not available (kernel or container)");
    } else if (e == EACCES || e == EPERM) {
        char level[32] = "?";
        FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "r");
        if (f) {
            if (!fgets(level, sizeof(level), f))
                snprintf(level, sizeof(level), "?");
            level[strcspn(level, "\n")] = '\0';
            fclose(f);
        }
        h2b_diag_at(diag, NULL, 0, 0,
                    "perf_event_open refused (%s): kernel.perf_event_paranoid is %s; run as root, "
                    "lower it, or allow the syscall in the container",
                    strerror(e), level);
    } else if (e == ESRCH) {
        h2b_diag_at(diag, NULL, 0, 0, "process %d does not exist", pid);
    } else {
        h2b_diag_at(diag, NULL, 0, 0, "perf_event_open failed: %s", strerror(e));
    }
    return false;
}

/* Runs argv to completion with stdout to out_path and stderr to err_path; 0 on exit status 0. */
static int run_tool(char *const argv[], const char *out_path, const char *err_path,
                    uint64_t timeout_ns, int *status)
{
    struct h2b_proc *p = NULL;
    struct h2b_proc_opts o = {.out = out_path ? H2B_PROC_FILE : H2B_PROC_DEVNULL,
                              .out_path = out_path,
                              .err = H2B_PROC_FILE,
                              .err_path = err_path,
                              .kill_on_parent_exit = true};
    int rc = h2b_proc_spawn(&p, argv, &o);
    if (rc)
        return rc;
    rc = h2b_proc_wait(p, timeout_ns, status);
    h2b_proc_del(p);
    return rc;
}

bool h2b_prof_available(const char *perf, struct h2b_diag *diag)
{
    char *argv[] = {(char *)perf_program(perf), "--version", NULL};
    int status = 0;
    int rc = run_tool(argv, NULL, "/dev/null", 10ull * 1000000000ull, &status);
    if (rc == H2B_ERR_NOTFOUND) {
        h2b_diag_at(diag, NULL, 0, 0, "%s not found (Debian package linux-perf)", argv[0]);
        return false;
    }
    if (rc || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        h2b_diag_at(diag, NULL, 0, 0, "'%s --version' failed: no perf for this kernel?", argv[0]);
        return false;
    }
    return can_open(0, diag);
}

int h2b_prof_rec_start(struct h2b_prof_rec **out, const struct h2b_prof_rec_opts *o,
                       struct h2b_diag *diag)
{
    if (o->pid <= 0 || !(o->max_s > 0) || o->max_s > 3600 || !o->dir || !o->name) {
        h2b_diag_at(diag, NULL, 0, 0, "perf record: needs a pid, a bound of (0, 3600] s, a dir");
        return H2B_ERR_INVAL;
    }
    if (!can_open(o->pid, diag))
        return H2B_ERR_UNSUPPORTED;
    struct h2b_prof_rec *r = calloc(1, sizeof(*r));
    if (!r)
        return H2B_ERR_NOMEM;
    snprintf(r->perf_prog, sizeof(r->perf_prog), "%s", perf_program(o->perf));
    int n1 = snprintf(r->data, sizeof(r->data), "%s/%s.perf.data", o->dir, o->name);
    int n2 = snprintf(r->text, sizeof(r->text), "%s/%s.perf.txt", o->dir, o->name);
    int n3 = snprintf(r->err, sizeof(r->err), "%s/%s.perf.err", o->dir, o->name);
    if (n1 < 0 || n2 < 0 || n3 < 0 || (size_t)n1 >= sizeof(r->data) ||
        (size_t)n2 >= sizeof(r->text) || (size_t)n3 >= sizeof(r->err)) {
        free(r);
        h2b_diag_at(diag, NULL, 0, 0, "perf record: the output path is too long");
        return H2B_ERR_INVAL;
    }
    char pid[32], freq[32], secs[32], cg[64];
    snprintf(pid, sizeof(pid), "%d", o->pid);
    snprintf(freq, sizeof(freq), "%u", o->freq ? o->freq : H2B_PROF_FREQ);
    snprintf(secs, sizeof(secs), "%.3f", o->max_s);
    snprintf(cg, sizeof(cg), "dwarf,%d", (int)H2B_PROF_STACK);
    char *argv[] = {r->perf_prog, "record", "-q",           "-N", "-B", "-e", "cpu-clock",
                    "-F",         freq,     "--call-graph", cg,   "-p", pid,  "-o",
                    r->data,      "--",     "sleep",        secs, NULL};
    struct h2b_proc_opts po = {.cpus = o->cpus,
                               .out = H2B_PROC_DEVNULL,
                               .err = H2B_PROC_FILE,
                               .err_path = r->err,
                               .kill_on_parent_exit = true,
                               .new_process_group = true};
    int rc = h2b_proc_spawn(&r->perf, argv, &po);
    if (rc) {
        if (rc == H2B_ERR_NOTFOUND) {
            h2b_diag_at(diag, NULL, 0, 0, "%s not found (Debian package linux-perf)", r->perf_prog);
            rc = H2B_ERR_UNSUPPORTED;
        } else {
            h2b_diag_at(diag, NULL, 0, 0, "cannot start %s: %s", r->perf_prog, h2b_strerror(rc));
        }
        free(r);
        return rc;
    }
    *out = r;
    return H2B_OK;
}

void h2b_prof_rec_cancel(struct h2b_prof_rec *rec)
{
    if (!rec)
        return;
    h2b_proc_del(rec->perf); /* SIGKILL to the group */
    unlink(rec->data);
    free(rec);
}

int h2b_prof_rec_stop(struct h2b_prof_rec *rec, const char *own_exe, struct h2b_prof **out,
                      struct h2b_diag *diag)
{
    int status = 0, rc;
    char tail[256];
    struct stat st;
    h2b_proc_signal(rec->perf, SIGINT);
    rc = h2b_proc_wait(rec->perf, STOP_WAIT_NS, &status);
    h2b_proc_del(rec->perf);
    rec->perf = NULL;
    if (stat(rec->data, &st) != 0 || st.st_size == 0) {
        h2b_fs_last_line(rec->err, tail, sizeof(tail));
        h2b_diag_at(diag, NULL, 0, 0, "perf record wrote no data%s%s%s",
                    rc == H2B_ERR_TIMEOUT ? " (killed: it did not stop)" : "", tail[0] ? ": " : "",
                    tail);
        rc = H2B_ERR_UNSUPPORTED;
        goto out;
    }
    char *argv[] = {rec->perf_prog,
                    "script",
                    "-i",
                    rec->data,
                    "--no-inline",
                    "-F",
                    "comm,tid,period,ip,sym,dso",
                    NULL};
    rc = run_tool(argv, rec->text, rec->err, SCRIPT_WAIT_NS, &status);
    if (rc || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        h2b_fs_last_line(rec->err, tail, sizeof(tail));
        h2b_diag_at(diag, NULL, 0, 0, "perf script failed%s%s", tail[0] ? ": " : "", tail);
        rc = H2B_ERR_UNSUPPORTED;
        goto out;
    }
    char *text;
    size_t len;
    if ((rc = h2b_fs_read_file(rec->text, H2B_PROF_MAX_TEXT, &text, &len, diag)))
        goto out;
    struct h2b_prof *p = NULL;
    if ((rc = h2b_prof_new(&p, own_exe)) == H2B_OK &&
        (rc = h2b_prof_parse_script(p, text, len, rec->text, diag)) == H2B_OK &&
        h2b_prof_samples(p) == 0) {
        h2b_diag_at(diag, NULL, 0, 0, "perf recorded no samples (the process was idle)");
        rc = H2B_ERR_UNSUPPORTED;
    }
    free(text);
    if (rc == H2B_OK)
        *out = p;
    else
        h2b_prof_del(p);
out:
    unlink(rec->data);
    free(rec);
    return rc;
}
