/*
 * gate_runner.c - the gate's micro runner: `h2bench micro --profile P --json FILE` spawned for
 * confirmation re-runs of breached p99s, for proposals from fresh runs and for calibration
 * trials (gate.h, calibrate.h).
 *
 * Approach: the runner is this h2bench (or --runner PATH), its table sent to stderr so the
 * gate's stdout carries only the verdict; a re-run names only the breached benchmarks in an
 * anchored, escaped --filter. Why a run failed goes into a struct h2b_diag (the runner's own
 * for re-runs, whose callback type has no room for one); nothing here prints.
 */
#include "gates/gate.h"
#include "gates/gate_int.h"
#include "core/buf.h"
#include "core/error.h"
#include "core/fs.h"
#include "core/proc.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int h2b_gate_runner_path(const struct h2b_gate_runner *r, char *buf, size_t size)
{
    if (r && r->path) {
        if (strlen(r->path) >= size)
            return H2B_ERR_RANGE;
        memcpy(buf, r->path, strlen(r->path) + 1);
        return H2B_OK;
    }
    char self[PATH_MAX];
    if (h2b_self_dir(self, sizeof(self)) != H2B_OK)
        return H2B_ERR_SYS;
    int len = snprintf(buf, size, "%s/h2bench", self);
    return len < 0 || (size_t)len >= size ? H2B_ERR_RANGE : H2B_OK;
}

int h2b_gate_runner_run(const struct h2b_gate_runner *r, const char *filter, const char *out_path,
                        struct h2b_diag *diag)
{
    memset(diag, 0, sizeof(*diag));
    char exe[PATH_MAX];
    int rv = h2b_gate_runner_path(r, exe, sizeof(exe));
    if (rv != H2B_OK)
        return rv;
    const char *profile = r && r->profile ? r->profile : "ci";
    char *argv[12] = {exe, "micro", "--profile", (char *)profile, "--json", (char *)out_path};
    int argc = 6;
    if (r && r->cpu) {
        argv[argc++] = "--cpu";
        argv[argc++] = (char *)r->cpu;
    }
    if (r && r->callgrind)
        argv[argc++] = "--callgrind";
    if (filter) {
        argv[argc++] = "--filter";
        argv[argc++] = (char *)filter;
    }
    argv[argc] = NULL;
    return h2b__gate_spawn(argv, r ? r->envp : NULL, r && r->quiet, diag);
}

int h2b__gate_spawn(char *const *argv, char *const *envp, bool quiet, struct h2b_diag *diag)
{
    const char *exe = argv[0];
    /* The runner's table goes to stderr: the gate's stdout carries only the gate's verdict. */
    struct h2b_proc_opts po = {.out = quiet ? H2B_PROC_DEVNULL : H2B_PROC_STDERR, .envp = envp};
    struct h2b_proc *p;
    int err = h2b_proc_spawn(&p, argv, &po);
    if (err != H2B_OK) {
        snprintf(diag->message, sizeof(diag->message), "cannot run %.400s: %s", exe,
                 err == H2B_ERR_NOTFOUND ? "not found" : strerror(errno));
        return H2B_ERR_SYS;
    }
    int status = 0;
    err = h2b_proc_wait(p, UINT64_MAX, &status);
    h2b_proc_del(p);
    if (err != H2B_OK)
        return H2B_ERR_SYS;
    if (WIFSIGNALED(status)) {
        snprintf(diag->message, sizeof(diag->message), "%.400s %s was killed by signal %d", exe,
                 argv[1], WTERMSIG(status));
        return H2B_ERR_UNSUPPORTED;
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        snprintf(diag->message, sizeof(diag->message), "%.400s %s exited with status %d", exe,
                 argv[1], WIFEXITED(status) ? WEXITSTATUS(status) : -1);
        return H2B_ERR_UNSUPPORTED;
    }
    return H2B_OK;
}

void h2b__gate_filter_for(struct h2b_buf *b, const char *const *names, size_t count)
{
    h2b_buf_printf(b, count > 1 ? "^(" : "^");
    for (size_t i = 0; i < count; i++) {
        if (i)
            h2b_buf_append(b, "|", 1);
        for (const char *c = names[i]; *c; c++) {
            if (strchr("\\^$.|?*+()[]{}", *c))
                h2b_buf_append(b, "\\", 1);
            h2b_buf_append(b, c, 1);
        }
    }
    h2b_buf_printf(b, count > 1 ? ")$" : "$");
}

int h2b_gate_runner_rerun(void *arg, const char *const *names, size_t count, double *p99_out)
{
    struct h2b_gate_runner *r = arg;
    memset(&r->diag, 0, sizeof(r->diag));
    char tmp[] = "/tmp/h2b-gate-confirm-XXXXXX.json";
    int fd = mkstemps(tmp, 5);
    if (fd < 0)
        return H2B_ERR_SYS;
    close(fd);
    struct h2b_buf fb = {0};
    char *filter = NULL;
    struct h2b_gate_set *s = NULL;
    h2b__gate_filter_for(&fb, names, count);
    int rv = h2b_buf_finish(&fb, &filter);
    if (rv != H2B_OK)
        goto out;
    rv = h2b_gate_runner_run(r, filter, tmp, &r->diag);
    if (rv != H2B_OK)
        goto out;
    const char *paths[] = {tmp};
    rv = h2b_gate_set_load(paths, 1, &s, &r->diag);
    if (rv != H2B_OK)
        goto out;
    if (s->invalid) {
        snprintf(r->diag.message, sizeof(r->diag.message), "confirmation run invalid: %.400s",
                 s->invalid);
        rv = H2B_ERR_UNSUPPORTED;
        goto out;
    }
    for (size_t i = 0; i < count; i++) {
        p99_out[i] = NAN;
        for (size_t j = 0; j < s->count; j++) {
            if (strcmp(s->obs[j].e->name, names[i]) == 0)
                p99_out[i] = h2b_gate_robust_p99(&s->obs[j]);
        }
    }
out:
    h2b_gate_set_del(s);
    free(filter);
    unlink(tmp);
    return rv;
}
