/*
 * abrun.c - `h2bench ab`: base and head built apart, measured interleaved, judged (abrun.h).
 *
 * Approach. Revisions are resolved with git rev-parse (a name that is not a commit is a usage
 * error naming it); each revision is checked out, detached, in a clone of its own in the work
 * directory (`git clone --shared --no-checkout`, then `git checkout --detach`) and built there by
 * the build command, so the user's work tree, index, build directory and worktree list are never
 * touched. A successful build is remembered (the `built` stamp holds the build command), so
 * repeated A/B runs against the same base pay for its build once. The head
 * is, by default, the work tree as it is: built out of tree into its own build directory.
 *
 * Measurement. Each side's benchmark executable is invoked `forks` times with --forks 1, in
 * the order A B B A A B B A ...: every round runs both sides back to back and the order flips
 * each round, so a slow drift of the machine (a build starting on the other core) lands on both
 * sides alike. Both are pinned to the same CPU. Every invocation writes its own results file;
 * the files of a side are merged (h2b_ab_merge_results, through the results model) into
 * base.json and head.json, and the
 * verdict is h2b_ab_judge on those two files, so `h2bench compare base.json head.json` gives the
 * same verdict and exit code. The merge is the one place here that copies results data: a merged
 * entry (its fork arrays joined, its medians taken) is derived from several files and written
 * out as a file of its own, so it cannot be a view of any one of them.
 *
 * Why a shared clone. `git worktree add` (what ab did first) registers the checkout in the
 * user's .git/worktrees: `git worktree list` shows it after every run, and an interrupted or
 * cleaned-up work directory leaves a stale entry behind. A `--shared` clone borrows the
 * repository's objects through objects/info/alternates and copies no history, yet nothing is
 * written into the user's repository; the checkout is still a git repository, so a build that
 * asks git for its commit (h2bench's own version stamp does) gets the right one. Rejected as
 * well: `git archive | tar` (no .git, so a build asking git for its commit would find a parent
 * directory's repository or none; export-ignore and export-subst rewrite the tree) and
 * `git --work-tree=DIR checkout` (it rewrites the user's index). A shared clone depends on the
 * user's objects: if they are pruned, the cached checkout's files are still whole, only git in
 * it fails, and removing --work's directory starts afresh.
 *
 * Also rejected: running both sides' forks inside one runner process (impossible: they are
 * different executables, and an executable measures itself); building the head in place (it
 * would change the user's build directory).
 */
#include "gates/abrun.h"
#include "core/error.h"
#include "core/check.h"
#include "core/fs.h"
#include "core/hist.h"
#include "core/proc.h"
#include "core/results.h"
#include "core/stats.h"
#include "run/scenario.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

extern char **environ;

#define BUILD_TIMEOUT_NS (3600ull * 1000000000ull)
#define RUN_TIMEOUT_NS (1800ull * 1000000000ull)
#define GIT_TIMEOUT_NS (300ull * 1000000000ull)

static const char default_build[] =
    "cmake -S \"$H2B_AB_SRC\" -B \"$H2B_AB_BUILD\" -DCMAKE_BUILD_TYPE=Release && "
    "cmake --build \"$H2B_AB_BUILD\" -j \"$(getconf _NPROCESSORS_ONLN)\"";

static int fail(struct h2b_diag *d, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int fail(struct h2b_diag *d, int code, const char *fmt, ...)
{
    memset(d, 0, sizeof(*d));
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(d->message, sizeof(d->message), fmt, ap);
    va_end(ap);
    return code;
}

/* buf = a + "/" + b; false (buf empty) when it does not fit. */
static bool join(char *buf, size_t size, const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    buf[0] = '\0';
    if (la + 1 + lb + 1 > size)
        return false;
    memcpy(buf, a, la);
    buf[la] = '/';
    memcpy(buf + la + 1, b, lb + 1);
    return true;
}

/* Runs argv; its first stdout line goes to line (may be NULL), stderr is discarded. Returns the
 * exit status (0..255), or a negative code when it could not run or was killed. */
static int run_capture(char *const argv[], const char *cwd, char *line, size_t size)
{
    struct h2b_proc_opts po = {.out = line ? H2B_PROC_PIPE : H2B_PROC_DEVNULL,
                               .err = H2B_PROC_DEVNULL,
                               .cwd = cwd,
                               .kill_on_parent_exit = true};
    struct h2b_proc *p;
    int rv = h2b_proc_spawn(&p, argv, &po);
    if (rv != H2B_OK)
        return rv;
    if (line) {
        line[0] = '\0';
        char skip[256];
        int n = h2b_proc_read_line(p, line, size, GIT_TIMEOUT_NS);
        if (n < 0)
            line[0] = '\0';
        while (h2b_proc_read_line(p, skip, sizeof(skip), GIT_TIMEOUT_NS) >= 0)
            ; /* drain, so the child never blocks on a full pipe */
    }
    int status = 0;
    rv = h2b_proc_wait(p, GIT_TIMEOUT_NS, &status);
    h2b_proc_del(p);
    if (rv != H2B_OK)
        return rv;
    return WIFEXITED(status) ? WEXITSTATUS(status) : H2B_ERR_SYS;
}

/* Runs argv with stdout and stderr written to log (truncated first); envp may be NULL. Returns the
 * exit status (0..255) or a negative code. */
static int run_logged(char *const argv[], const char *cwd, char *const envp[], const char *log,
                      uint64_t timeout_ns)
{
    struct h2b_proc_opts po = {.out = H2B_PROC_FILE,
                               .out_path = log,
                               .err_to_out = true,
                               .cwd = cwd,
                               .envp = envp,
                               .kill_on_parent_exit = true,
                               .new_process_group = true};
    struct h2b_proc *p;
    int rv = h2b_proc_spawn(&p, argv, &po);
    if (rv != H2B_OK)
        return rv;
    int status = 0;
    rv = h2b_proc_wait(p, timeout_ns, &status);
    h2b_proc_del(p);
    if (rv != H2B_OK)
        return rv;
    if (WIFSIGNALED(status))
        return 128 + WTERMSIG(status);
    return WIFEXITED(status) ? WEXITSTATUS(status) : H2B_ERR_SYS;
}

/* environ plus extra (NULL-terminated, may be NULL) and the H2B_AB_* variables; extra entries
 * replace inherited ones of the same name. *out is malloc'd, the strings partly so (free_env). */
struct env {
    char **v;
    size_t n;
    char *owned[2];
};

static bool env_named(const char *entry, const char *name_eq)
{
    return strncmp(entry, name_eq, strcspn(name_eq, "=") + 1) == 0;
}

static int make_env(struct env *e, char *const *extra, const char *src, const char *build)
{
    size_t n_env = 0, n_extra = 0;
    while (environ[n_env])
        n_env++;
    while (extra && extra[n_extra])
        n_extra++;
    memset(e, 0, sizeof(*e));
    e->v = calloc(n_env + n_extra + 3, sizeof(*e->v));
    if (!e->v)
        return H2B_ERR_NOMEM;
    size_t srclen = strlen(src) + sizeof("H2B_AB_SRC="),
           blen = strlen(build) + sizeof("H2B_AB_BUILD=");
    e->owned[0] = malloc(srclen);
    e->owned[1] = malloc(blen);
    if (!e->owned[0] || !e->owned[1]) {
        free(e->owned[0]);
        free(e->owned[1]);
        free(e->v);
        return H2B_ERR_NOMEM;
    }
    snprintf(e->owned[0], srclen, "H2B_AB_SRC=%s", src);
    snprintf(e->owned[1], blen, "H2B_AB_BUILD=%s", build);
    for (size_t i = 0; i < n_env; i++) {
        bool replaced =
            env_named(environ[i], "H2B_AB_SRC=") || env_named(environ[i], "H2B_AB_BUILD=");
        for (size_t j = 0; j < n_extra && !replaced; j++)
            replaced = env_named(environ[i], extra[j]);
        if (!replaced)
            e->v[e->n++] = environ[i];
    }
    for (size_t j = 0; j < n_extra; j++)
        e->v[e->n++] = extra[j];
    e->v[e->n++] = e->owned[0];
    e->v[e->n++] = e->owned[1];
    H2B_ASSERT(e->n < n_env + n_extra + 3); /* the slots calloc'd above, the NULL included */
    e->v[e->n] = NULL;
    return H2B_OK;
}

static void free_env(struct env *e)
{
    free(e->owned[0]);
    free(e->owned[1]);
    free(e->v);
}

/* ---------------------------------------------------------------- revisions and builds */

struct side {
    const char *label; /* "base" or "head" */
    const char *rev;   /* as given, or "worktree" */
    char commit[64];   /* full hash; "" for the work tree */
    char dir[PATH_MAX], src[PATH_MAX], build[PATH_MAX], log[PATH_MAX], exe[PATH_MAX];
    char *const *env;
};

static int resolve(const char *top, const char *rev, char *commit, size_t size, struct h2b_diag *d)
{
    if (rev[0] == '-' || strlen(rev) > 256)
        return fail(d, H2B_ERR_NOTFOUND, "'%s' is not a revision", rev);
    char spec[300];
    snprintf(spec, sizeof(spec), "%s^{commit}", rev);
    char *argv[] = {"git", "-C", (char *)top, "rev-parse", "--verify", "--quiet", spec, NULL};
    int rv = run_capture(argv, NULL, commit, size);
    if (rv < 0)
        return fail(d, H2B_ERR_SYS, "cannot run git: %s", h2b_strerror(rv));
    if (rv != 0 || strlen(commit) < 40)
        return fail(d, H2B_ERR_NOTFOUND, "revision '%s' does not name a commit in %s", rev, top);
    return H2B_OK;
}

/* True when the file at path holds exactly text. */
static bool file_has(const char *path, const char *text)
{
    size_t want = strlen(text), len;
    char *have;
    if (h2b_fs_read_file(path, want, &have, &len, NULL) != H2B_OK)
        return false; /* missing, unreadable or longer than text */
    bool same = len == want && memcmp(have, text, want) == 0;
    free(have);
    return same;
}

static int write_text(const char *path, const char *text, struct h2b_diag *d)
{
    return h2b_file_write_atomic(path, text, strlen(text), d);
}

/* 64-bit FNV-1a of s, for the work tree's build directory name. */
static uint64_t fnv1a(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 0x100000001b3ULL;
    }
    return h;
}

static int prepare_dirs(struct side *s, const char *work, const char *top, struct h2b_diag *d)
{
    char name[80];
    if (s->commit[0])
        snprintf(name, sizeof(name), "%s", s->commit);
    else
        snprintf(name, sizeof(name), "worktree-%016llx", (unsigned long long)fnv1a(top));
    if (!join(s->dir, sizeof(s->dir), work, name) ||
        !join(s->build, sizeof(s->build), s->dir, "build") ||
        !join(s->log, sizeof(s->log), s->dir, "build.log"))
        return fail(d, H2B_ERR_RANGE, "work directory path too long: %s", work);
    if (s->commit[0]) {
        if (!join(s->src, sizeof(s->src), s->dir, "src"))
            return fail(d, H2B_ERR_RANGE, "work directory path too long: %s", work);
    } else {
        snprintf(s->src, sizeof(s->src), "%s", top);
    }
    if (h2b_fs_mkdir_p(s->dir, 0755) != H2B_OK)
        return fail(d, H2B_ERR_IO, "cannot create %s: %s", s->dir, strerror(errno));
    return H2B_OK;
}

/* A detached checkout of s->commit at s->src, in a clone of its own (reused when it is already
 * that commit). The clone is made in src.partial and renamed to src once checked out, so an
 * interrupted checkout (Ctrl-C, SIGTERM, a full disk) leaves no src that looks finished; the
 * next run removes the partial one. A src that is a linked worktree (what earlier versions made
 * with `git worktree add`) is unregistered from the user's repository and made again. */
static int checkout(struct side *s, const char *top, struct h2b_diag *d)
{
    char have[64] = "", gitpath[PATH_MAX], partial[PATH_MAX], log[PATH_MAX];
    struct stat st;
    if (!join(gitpath, sizeof(gitpath), s->src, ".git") ||
        !join(partial, sizeof(partial), s->dir, "src.partial") ||
        !join(log, sizeof(log), s->dir, "checkout.log"))
        return fail(d, H2B_ERR_RANGE, "path too long");
    if (stat(s->src, &st) == 0) {
        if (lstat(gitpath, &st) == 0 && S_ISREG(st.st_mode)) {
            /* a linked worktree: `git worktree remove` drops both the registration and src */
            char *rm[] = {"git",     "-C", (char *)top, "worktree", "remove",
                          "--force", "--", s->src,      NULL};
            if (run_logged(rm, NULL, NULL, log, GIT_TIMEOUT_NS) != 0)
                return fail(d, H2B_ERR_EXISTS,
                            "%s is a git worktree of an older h2bench ab and `git worktree remove` "
                            "failed: see %s",
                            s->src, log);
        } else {
            char *argv[] = {"git", "-C", s->src, "rev-parse", "HEAD", NULL};
            if (run_capture(argv, NULL, have, sizeof(have)) == 0 && strcmp(have, s->commit) == 0)
                return H2B_OK;
            return fail(d, H2B_ERR_EXISTS,
                        "%s exists and is not a checkout of %s: remove it or use another --work",
                        s->src, s->commit);
        }
    }
    if (h2b_fs_remove_tree(partial) != H2B_OK)
        return fail(d, H2B_ERR_IO, "cannot remove %s: %s", partial, strerror(errno));
    /* --shared: the clone borrows the repository's objects (objects/info/alternates), so it
     * copies no history; "--": a --work path that starts with '-' is a path, not an option */
    char *clone[] = {"git", "clone",     "--quiet", "--shared", "--no-checkout", "--no-hardlinks",
                     "--",  (char *)top, partial,   NULL};
    char *co[] = {"git", "-C", partial, "checkout", "--quiet", "--detach", s->commit, NULL};
    int rv = run_logged(clone, NULL, NULL, log, GIT_TIMEOUT_NS);
    if (rv == 0)
        rv = run_logged(co, NULL, NULL, log, GIT_TIMEOUT_NS);
    if (rv != 0)
        return fail(d, H2B_ERR_UNSUPPORTED, "git checkout of %s %s failed: see %s", s->label,
                    s->commit, log);
    if (rename(partial, s->src) != 0)
        return fail(d, H2B_ERR_IO, "cannot rename %s to %s: %s", partial, s->src, strerror(errno));
    return H2B_OK;
}

static int build(struct side *s, const char *cmd, const struct h2b_ab_run_options *o,
                 struct h2b_diag *d)
{
    char stamp[PATH_MAX];
    if (!join(stamp, sizeof(stamp), s->dir, "built"))
        return fail(d, H2B_ERR_RANGE, "path too long");
    if (s->commit[0] && file_has(stamp, cmd)) {
        h2b_progress(o->progress, o->progress_arg, "%s %.12s: reusing the build in %s", s->label,
                     s->commit, s->build);
        return H2B_OK;
    }
    unlink(stamp);
    if (h2b_fs_mkdir_p(s->build, 0755) != H2B_OK)
        return fail(d, H2B_ERR_IO, "cannot create %s: %s", s->build, strerror(errno));
    h2b_progress(o->progress, o->progress_arg, "%s %s: building in %s (log: %s)", s->label,
                 s->commit[0] ? s->commit : "work tree", s->build, s->log);
    struct env e;
    int rv = make_env(&e, NULL, s->src, s->build);
    if (rv != H2B_OK)
        return fail(d, rv, "out of memory");
    char *argv[] = {"/bin/sh", "-c", (char *)cmd, NULL};
    rv = run_logged(argv, s->src, e.v, s->log, BUILD_TIMEOUT_NS);
    free_env(&e);
    if (rv != 0)
        return fail(d, H2B_ERR_UNSUPPORTED, "%s revision %s does not build (exit %d): see %s",
                    s->label, s->rev, rv, s->log);
    if (s->commit[0] && write_text(stamp, cmd, d) != H2B_OK)
        return H2B_ERR_IO;
    return H2B_OK;
}

static int find_exe(struct side *s, const char *bench, struct h2b_diag *d)
{
    int n = bench[0] == '/' ? snprintf(s->exe, sizeof(s->exe), "%s", bench)
                            : snprintf(s->exe, sizeof(s->exe), "%s/%s", s->build, bench);
    if (n < 0 || (size_t)n >= sizeof(s->exe))
        return fail(d, H2B_ERR_RANGE, "--bench path too long");
    if (access(s->exe, X_OK) != 0)
        return fail(d, H2B_ERR_UNSUPPORTED,
                    "%s: no benchmark executable %s after the build (log: %s)", s->label, s->exe,
                    s->log);
    return H2B_OK;
}

/* ---------------------------------------------------------------- interleaved runs */

static int invoke(struct side *s, const struct h2b_ab_run_options *o, bool h2bench, bool callgrind,
                  const char *json, const char *log, struct h2b_diag *d)
{
    char cpu[16];
    char *argv[32];
    int argc = 0;
    argv[argc++] = s->exe;
    if (h2bench)
        argv[argc++] = "micro";
    argv[argc++] = "--forks";
    argv[argc++] = "1";
    argv[argc++] = "--warmup";
    argv[argc++] = (char *)o->warmup;
    argv[argc++] = "--time";
    argv[argc++] = (char *)o->time;
    argv[argc++] = "--epochs";
    argv[argc++] = (char *)o->epochs;
    argv[argc++] = "--json";
    argv[argc++] = (char *)json;
    if (o->cpu >= 0) {
        snprintf(cpu, sizeof(cpu), "%d", o->cpu);
        argv[argc++] = "--cpu";
        argv[argc++] = cpu;
    }
    if (o->filter) {
        argv[argc++] = "--filter";
        argv[argc++] = (char *)o->filter;
    }
    if (callgrind)
        argv[argc++] = "--callgrind";
    H2B_ASSERT(argc < (int)(sizeof(argv) / sizeof(argv[0]))); /* room for the NULL */
    argv[argc] = NULL;
    struct env e;
    int rv = make_env(&e, s->env, s->src, s->build);
    if (rv != H2B_OK)
        return fail(d, rv, "out of memory");
    rv = run_logged(argv, s->build, e.v, log, RUN_TIMEOUT_NS);
    free_env(&e);
    if (rv != 0)
        return fail(d, H2B_ERR_UNSUPPORTED, "the %s benchmarks failed (exit %d): see %s", s->label,
                    rv, log);
    return H2B_OK;
}

static int merge_side(char **paths, size_t n, const char *out, struct h2b_diag *d)
{
    json_t *doc = NULL;
    int rv = h2b_ab_merge_results((const char *const *)paths, n, &doc, d);
    if (rv != H2B_OK)
        return rv;
    rv = h2b_results_write(out, doc, d);
    json_decref(doc);
    return rv;
}

/* ---------------------------------------------------------------- scenario suites */

/* Loads and validates the scenario before anything is built, so a bad one is a usage error
 * naming file:line:column (diag keeps the loader's location). With bench, the scenario must have
 * a command target for it to replace. *doc is the parsed document (json_decref). */
static int load_scenario(const char *path, bool bench, json_t **doc, struct h2b_diag *d)
{
    char *text = NULL;
    memset(d, 0, sizeof(*d));
    int rv = h2b_json_load(path, doc, &text, d);
    if (rv == H2B_ERR_IO || rv == H2B_ERR_RANGE) {
        if (!d->file[0])
            snprintf(d->file, sizeof(d->file), "%s", path);
        return H2B_ERR_NOTFOUND; /* --suite names a file that cannot be read: usage (exit 2) */
    }
    if (rv != H2B_OK)
        return rv;
    struct h2b_json_src src = {path, text};
    struct h2b_scenario *sc = NULL;
    rv = h2b_scenario_load(*doc, &src, NULL, &sc, d);
    free(text);
    if (rv == H2B_OK && !sc->has_matrix) {
        snprintf(d->file, sizeof(d->file), "%s", path);
        snprintf(d->message, sizeof(d->message),
                 "the scenario has no matrix: ab --suite compares its matrix cells");
        rv = H2B_ERR_INVAL;
    }
    bool command = false;
    for (size_t i = 0; rv == H2B_OK && i < sc->ntargets; i++)
        command = command || sc->targets[i].kind == H2B_TARGET_COMMAND;
    if (rv == H2B_OK && bench && !command) {
        snprintf(d->file, sizeof(d->file), "%s", path);
        snprintf(d->message, sizeof(d->message),
                 "--bench with --suite names the server inside the built tree, but the "
                 "scenario has no target of type \"command\" to run it as");
        rv = H2B_ERR_INVAL;
    }
    h2b_scenario_del(sc);
    if (rv != H2B_OK) {
        json_decref(*doc);
        *doc = NULL;
    }
    return rv;
}

/* The side's copy of the scenario: every command target's program (command[0]) is the side's
 * build of the server, s->exe. Written to path (the output directory). */
static int side_scenario(const json_t *doc, const struct side *s, const char *path,
                         struct h2b_diag *d)
{
    json_t *copy = json_deep_copy(doc);
    if (!copy)
        return fail(d, H2B_ERR_NOMEM, "out of memory");
    size_t i;
    json_t *t;
    int rv = H2B_OK;
    json_array_foreach(json_object_get(copy, "targets"), i, t)
    {
        const char *type = json_string_value(json_object_get(t, "type"));
        json_t *cmd = json_object_get(t, "command");
        if (type && strcmp(type, "command") == 0 && json_array_size(cmd) > 0 &&
            json_array_set_new(cmd, 0, json_string(s->exe)) != 0)
            rv = fail(d, H2B_ERR_NOMEM, "out of memory");
    }
    char *text = rv == H2B_OK ? json_dumps(copy, JSON_INDENT(2)) : NULL;
    json_decref(copy);
    if (rv == H2B_OK && !text)
        rv = fail(d, H2B_ERR_NOMEM, "out of memory");
    if (rv == H2B_OK)
        rv = write_text(path, text, d);
    free(text);
    return rv;
}

/* One invocation of the scenario for side s: `runner run SCENARIO --out json`, from the
 * caller's working directory (relative paths in the scenario mean what they mean to the user). */
static int invoke_suite(struct side *s, const char *runner, const char *scenario, const char *json,
                        const char *log, struct h2b_diag *d)
{
    char *argv[] = {(char *)runner, "run", (char *)scenario, "--out", (char *)json, NULL};
    struct env e;
    int rv = make_env(&e, s->env, s->src, s->build);
    if (rv != H2B_OK)
        return fail(d, rv, "out of memory");
    rv = run_logged(argv, NULL, e.v, log, RUN_TIMEOUT_NS);
    free_env(&e);
    if (rv != 0)
        return fail(d, H2B_ERR_UNSUPPORTED, "the %s suite failed (exit %d): see %s", s->label, rv,
                    log);
    return H2B_OK;
}

/* Every cell of every invocation of one side in one results file (the first file the
 * template), repeats renumbered so each cell's repeats stay distinct samples. */
static int merge_cells(char **paths, size_t n, const char *out, struct h2b_diag *d)
{
    struct h2b_results_doc **docs = calloc(n, sizeof(*docs));
    int rv = docs ? H2B_OK : fail(d, H2B_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < n && rv == H2B_OK; i++)
        rv = h2b_results_doc_load(paths[i], &docs[i], NULL, d);
    double next = 0;
    for (size_t i = 0; i < n && rv == H2B_OK; i++) {
        double base = next;
        size_t m = docs[i]->matrix.n;
        for (size_t j = 0; j < m && rv == H2B_OK; j++) {
            struct h2b_results_cell *c = h2b_results_doc_cell(docs[i], j), *to = c;
            double rep = isnan(c->repeat) ? 0 : c->repeat;
            if (i > 0) {
                void *e = NULL;
                rv = h2b_model_array_push(&h2b_results_cell_model, &docs[0]->matrix, &e);
                if (rv == H2B_OK) {
                    h2b_results_cell_free(e);
                    rv = h2b_model_copy(&h2b_results_cell_model, e, c);
                }
                to = e;
                if (rv != H2B_OK)
                    rv = fail(d, rv, "out of memory");
            }
            if (to) {
                to->repeat = base + rep;
                next = to->repeat + 1 > next ? to->repeat + 1 : next;
            }
        }
    }
    json_t *doc = NULL;
    if (rv == H2B_OK && h2b_model_to_json(&h2b_results_doc_model, docs[0], &doc) != H2B_OK)
        rv = fail(d, H2B_ERR_NOMEM, "out of memory");
    if (rv == H2B_OK)
        rv = h2b_results_write(out, doc, d);
    json_decref(doc);
    for (size_t i = 0; docs && i < n; i++)
        h2b_results_doc_del(docs[i]);
    free(docs);
    return rv;
}

/* Judges the merged files of the two sides' cells. */
static int judge_cell_files(const char *base, const char *head, const struct h2b_ab_options *j,
                            struct h2b_ab_report **out, struct h2b_diag *d)
{
    struct h2b_results_doc *a = NULL, *b = NULL;
    int rv = h2b_results_doc_load(base, &a, NULL, d);
    if (rv == H2B_OK)
        rv = h2b_results_doc_load(head, &b, NULL, d);
    if (rv == H2B_OK && (rv = h2b_ab_judge_cells(a, base, b, head, j, out)) != H2B_OK)
        fail(d, rv, "cannot judge %s against %s: %s", head, base, h2b_strerror(rv));
    h2b_results_doc_del(a);
    h2b_results_doc_del(b);
    return rv;
}

static void default_work(char *buf, size_t size)
{
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    if (xdg && xdg[0] == '/')
        snprintf(buf, size, "%s/h2bench/ab", xdg);
    else if (home && home[0] == '/')
        snprintf(buf, size, "%s/.cache/h2bench/ab", home);
    else
        snprintf(buf, size, "/tmp/h2bench-ab-%ld", (long)getuid());
}

static int ab_run(const struct h2b_ab_run_options *o, const struct h2b_ab_options *judge,
                  const json_t *scenario, struct h2b_ab_report **out, struct h2b_diag *diag);

int h2b_ab_run(const struct h2b_ab_run_options *o, const struct h2b_ab_options *judge,
               struct h2b_ab_report **out, struct h2b_diag *diag)
{
    if (!o->base || o->forks < 2 || o->forks > 1000 || !o->warmup || !o->time || !o->epochs)
        return fail(diag, H2B_ERR_INVAL, "a base revision and at least 2 forks are needed");
    bool suite = o->suite && strcmp(o->suite, "micro") != 0;
    json_t *scenario = NULL;
    int rv;
    if (suite && (rv = load_scenario(o->suite, o->bench != NULL, &scenario, diag)) != H2B_OK)
        return rv;
    rv = ab_run(o, judge, suite ? scenario : NULL, out, diag);
    json_decref(scenario);
    return rv;
}

/* Where a run works: the repository's top (top), the work directory, the output directory and
 * its runs/ (each PATH_MAX). */
struct ab_dirs {
    char top[PATH_MAX], work[PATH_MAX], outdir[PATH_MAX], runs[PATH_MAX];
};

static int ab_dirs(const struct h2b_ab_run_options *o, struct ab_dirs *d, struct h2b_diag *diag)
{
    const char *repo = o->repo ? o->repo : ".";
    char *top_argv[] = {"git", "-C", (char *)repo, "rev-parse", "--show-toplevel", NULL};
    d->top[0] = '\0';
    int rv = run_capture(top_argv, NULL, d->top, sizeof(d->top));
    if (rv < 0)
        return fail(diag, H2B_ERR_SYS, "cannot run git: %s", h2b_strerror(rv));
    if (rv != 0 || !d->top[0])
        return fail(diag, H2B_ERR_INVAL, "%s is not inside a git repository", repo);
    if (o->work_dir) {
        /* absolute: git runs with -C TOP, where a relative path would mean another place */
        if (h2b_fs_absolute(o->work_dir, d->work, sizeof(d->work)) != H2B_OK)
            return fail(diag, H2B_ERR_RANGE, "cannot make --work %s absolute", o->work_dir);
    } else {
        default_work(d->work, sizeof(d->work));
    }
    if (o->out_dir)
        snprintf(d->outdir, sizeof(d->outdir), "%s", o->out_dir);
    else if (!join(d->outdir, sizeof(d->outdir), d->work, "last"))
        return fail(diag, H2B_ERR_RANGE, "work directory path too long");
    if (!join(d->runs, sizeof(d->runs), d->outdir, "runs"))
        return fail(diag, H2B_ERR_RANGE, "output directory path too long");
    return H2B_OK;
}

/* Both sides resolved, checked out, built and found (sides[1] may be the worktree), and, for a
 * scenario suite, each side's scenario file (side_sc). */
static int ab_sides(const struct h2b_ab_run_options *o, const json_t *scenario,
                    const struct ab_dirs *d, struct side sides[2], char side_sc[2][PATH_MAX],
                    struct h2b_diag *diag)
{
    memset(sides, 0, 2 * sizeof(*sides));
    sides[0].label = "base";
    sides[0].rev = o->base;
    sides[0].env = o->base_env;
    sides[1].label = "head";
    sides[1].rev = o->head ? o->head : "worktree";
    sides[1].env = o->head_env;
    int rv;
    for (int i = 0; i < 2; i++) {
        if (i == 1 && strcmp(sides[1].rev, "worktree") == 0)
            continue;
        rv = resolve(d->top, sides[i].rev, sides[i].commit, sizeof(sides[i].commit), diag);
        if (rv != H2B_OK) {
            char msg[sizeof(diag->message)];
            memcpy(msg, diag->message, sizeof(msg));
            fail(diag, rv, "--%s: %.490s", sides[i].label, msg);
            return rv;
        }
    }
    if (h2b_fs_mkdir_p(d->work, 0755) != H2B_OK || h2b_fs_mkdir_p(d->runs, 0755) != H2B_OK)
        return fail(diag, H2B_ERR_IO, "cannot create %s: %s", d->runs, strerror(errno));
    const char *cmd = o->build_cmd ? o->build_cmd : default_build;
    const char *bench = o->bench ? o->bench : "bin/h2bench";
    for (int i = 0; i < 2; i++) {
        struct side *s = &sides[i];
        if ((rv = prepare_dirs(s, d->work, d->top, diag)) != H2B_OK)
            return rv;
        if (s->commit[0] && (rv = checkout(s, d->top, diag)) != H2B_OK)
            return rv;
        if ((rv = build(s, cmd, o, diag)) != H2B_OK)
            return rv;
        if ((rv = find_exe(s, bench, diag)) != H2B_OK)
            return rv;
        if (scenario && o->bench) {
            char name[32];
            snprintf(name, sizeof(name), "scenario-%s.json", s->label);
            if (!join(side_sc[i], PATH_MAX, d->outdir, name))
                return fail(diag, H2B_ERR_RANGE, "output directory path too long");
            if ((rv = side_scenario(scenario, s, side_sc[i], diag)) != H2B_OK)
                return rv;
        } else if (scenario) {
            snprintf(side_sc[i], PATH_MAX, "%s", o->suite);
        }
    }
    return H2B_OK;
}

/* The forks, interleaved A B B A: each side's result files into paths[side][round]. */
static int ab_rounds(const struct h2b_ab_run_options *o, bool scenario, const struct ab_dirs *d,
                     struct side sides[2], char side_sc[2][PATH_MAX], char **paths[2],
                     struct h2b_diag *diag)
{
    /* A scenario suite is run by this h2bench when --bench names the user's server in the
     * built tree, else (h2bench's own repository) by each side's own h2bench, so the bundled
     * server and the client are the side's. */
    char self[PATH_MAX] = "";
    int rv;
    if (scenario && o->bench && (rv = h2b_self_exe(self, sizeof(self))) != H2B_OK)
        return fail(diag, rv, "cannot find this h2bench: %s", h2b_strerror(rv));
    size_t n = o->forks;
    h2b_progress(o->progress, o->progress_arg,
                 "running %zu forks per side, interleaved A B B A on %s", n,
                 o->cpu >= 0 ? "one pinned CPU" : "unpinned CPUs");
    for (size_t round = 0; round < n; round++) {
        for (int k = 0; k < 2; k++) {
            int i = round % 2 == 0 ? k : 1 - k;
            struct side *s = &sides[i];
            char json[PATH_MAX], log[PATH_MAX], name[64];
            snprintf(name, sizeof(name), "%s-%03zu.json", s->label, round);
            if (!join(json, sizeof(json), d->runs, name))
                return fail(diag, H2B_ERR_RANGE, "path too long");
            snprintf(name, sizeof(name), "%s-%03zu.log", s->label, round);
            join(log, sizeof(log), d->runs, name);
            if (scenario)
                rv = invoke_suite(s, o->bench ? self : s->exe, side_sc[i], json, log, diag);
            else
                rv = invoke(s, o, o->bench == NULL, o->callgrind && round == 0, json, log, diag);
            if (rv != H2B_OK)
                return rv;
            if (!(paths[i][round] = strdup(json)))
                return fail(diag, H2B_ERR_NOMEM, "out of memory");
        }
        h2b_progress(o->progress, o->progress_arg, "round %zu of %zu done", round + 1, n);
    }
    return H2B_OK;
}

/* Each side's forks merged into OUTDIR/base.json and head.json, judged, and the verdict written
 * to OUTDIR/ab.md (a write failure there is reported, not fatal). */
static int ab_judge_sides(const struct h2b_ab_run_options *o, const struct h2b_ab_options *judge,
                          bool scenario, const struct ab_dirs *d, const struct side sides[2],
                          char **paths[2], struct h2b_ab_report **out, struct h2b_diag *diag)
{
    char merged[2][PATH_MAX];
    int rv;
    for (int i = 0; i < 2; i++) {
        char name[16];
        snprintf(name, sizeof(name), "%s.json", sides[i].label);
        if (!join(merged[i], sizeof(merged[i]), d->outdir, name))
            return fail(diag, H2B_ERR_RANGE, "path too long");
        rv = scenario ? merge_cells(paths[i], o->forks, merged[i], diag)
                      : merge_side(paths[i], o->forks, merged[i], diag);
        if (rv != H2B_OK)
            return rv;
    }
    if (scenario) {
        if ((rv = judge_cell_files(merged[0], merged[1], judge, out, diag)) != H2B_OK)
            return rv;
    } else {
        struct h2b_gate_set *set[2] = {NULL, NULL};
        const char *p0 = merged[0], *p1 = merged[1];
        rv = h2b_gate_set_load(&p0, 1, &set[0], diag);
        if (rv == H2B_OK)
            rv = h2b_gate_set_load(&p1, 1, &set[1], diag);
        if (rv == H2B_OK)
            rv = h2b_ab_judge(set[0], set[1], judge, out);
        h2b_gate_set_del(set[0]);
        h2b_gate_set_del(set[1]);
        if (rv != H2B_OK)
            return fail(diag, rv, "cannot judge %s against %s: %s", p1, p0, h2b_strerror(rv));
    }
    char *md = NULL, mdpath[PATH_MAX];
    if (join(mdpath, sizeof(mdpath), d->outdir, "ab.md") && h2b_ab_render_md(*out, &md) == H2B_OK) {
        struct h2b_diag wd;
        if (write_text(mdpath, md, &wd) != H2B_OK)
            h2b_progress(o->progress, o->progress_arg, "cannot write %s: %s", mdpath, wd.message);
        free(md);
    }
    h2b_progress(o->progress, o->progress_arg, "results: %s %s", merged[0], merged[1]);
    return H2B_OK;
}

static int ab_run(const struct h2b_ab_run_options *o, const struct h2b_ab_options *judge,
                  const json_t *scenario, struct h2b_ab_report **out, struct h2b_diag *diag)
{
    struct ab_dirs *d = calloc(1, sizeof(*d));
    struct side sides[2];
    char side_sc[2][PATH_MAX];
    char **paths[2] = {NULL, NULL};
    if (!d)
        return fail(diag, H2B_ERR_NOMEM, "out of memory");
    int rv = ab_dirs(o, d, diag);
    if (rv == H2B_OK)
        rv = ab_sides(o, scenario, d, sides, side_sc, diag);
    if (rv == H2B_OK) {
        paths[0] = calloc(o->forks, sizeof(char *));
        paths[1] = calloc(o->forks, sizeof(char *));
        if (!paths[0] || !paths[1])
            rv = fail(diag, H2B_ERR_NOMEM, "out of memory");
    }
    if (rv == H2B_OK)
        rv = ab_rounds(o, scenario != NULL, d, sides, side_sc, paths, diag);
    if (rv == H2B_OK)
        rv = ab_judge_sides(o, judge, scenario != NULL, d, sides, paths, out, diag);
    for (int i = 0; i < 2; i++) {
        for (size_t j = 0; paths[i] && j < o->forks; j++)
            free(paths[i][j]);
        free(paths[i]);
    }
    free(d);
    return rv;
}

/* ---------------------------------------------------------------- merging a side's files */

static const struct h2b_results_micro *find_entry(const struct h2b_results_doc *doc,
                                                  const char *name)
{
    for (size_t i = 0; i < doc->micro.n; i++) {
        const struct h2b_results_micro *e = h2b_results_doc_micro(doc, i);
        if (e->name && strcmp(e->name, name) == 0)
            return e;
    }
    return NULL;
}

/* Appends more's values to acc (malloc'd): the fork arrays of the entries being merged. */
static int append_nums(struct h2b_model_nums *acc, const struct h2b_model_nums *more)
{
    if (!more->v || more->n == 0)
        return H2B_OK;
    double *v = realloc(acc->v, (acc->n + more->n) * sizeof(*v));
    if (!v)
        return H2B_ERR_NOMEM;
    memcpy(v + acc->n, more->v, more->n * sizeof(*v));
    acc->v = v;
    acc->n += more->n;
    return H2B_OK;
}

static double median_nums(const struct h2b_model_nums *n)
{
    double *v = malloc(n->n * sizeof(*v));
    double m = v ? h2b_stats_median_of(n->v, n->n, v) : NAN;
    free(v);
    return m;
}

/* Merges entries[0..n) of one benchmark into *t (a copy of entries[0], modified). */
static int merge_entry(struct h2b_results_micro *t, const struct h2b_results_micro *const *entries,
                       size_t n, struct h2b_diag *d)
{
    struct h2b_model_nums p99 = {0}, ns = {0}, pids = {0};
    double forks = 0, samples = 0, ops = 0, first[2] = {NAN, NAN};
    bool det = true;
    struct h2b_hist *merged = NULL;
    bool hist_ok = true;
    int rv = H2B_OK;
    t->instructions_per_op = NAN;
    for (size_t i = 0; i < n && rv == H2B_OK; i++) {
        const struct h2b_results_micro *e = entries[i];
        /* a file without per-fork arrays counts as one fork with its own summary */
        struct h2b_model_nums one_p99 = {(double *)&e->p99_ns, isnan(e->p99_ns) ? 0 : 1};
        struct h2b_model_nums one_ns = {(double *)&e->ns_per_op, isnan(e->ns_per_op) ? 0 : 1};
        if ((rv = append_nums(&p99, e->fork_p99_ns.n ? &e->fork_p99_ns : &one_p99)) ||
            (rv = append_nums(&ns, e->fork_ns_per_op.n ? &e->fork_ns_per_op : &one_ns)) ||
            (rv = append_nums(&pids, &e->fork_pids)))
            break;
        forks += isnan(e->forks) ? 1 : e->forks;
        samples += e->samples;
        ops += e->ops;
        const double counts[2] = {e->allocs_per_op, e->bytes_per_op};
        double *dst[2] = {&t->allocs_per_op, &t->bytes_per_op};
        for (int c = 0; c < 2; c++) {
            if (isnan(counts[c]))
                continue;
            if (isnan(first[c]))
                first[c] = counts[c];
            else if (counts[c] != first[c])
                det = false;
            if (isnan(*dst[c]) || counts[c] > *dst[c])
                *dst[c] = counts[c]; /* the largest count seen (t starts as entries[0]) */
        }
        if (e->alloc_deterministic == 0)
            det = false;
        if (isnan(t->instructions_per_op) && !isnan(e->instructions_per_op)) {
            t->instructions_per_op = e->instructions_per_op;
            if ((rv = h2b_model_set_string(&t->instructions_source, e->instructions_source)))
                break;
        }
        struct h2b_hist *h = NULL;
        if (h2b_results_micro_hist(e, NULL, "micro", &h, d) != H2B_OK || !h) {
            hist_ok = false;
            continue;
        }
        if (!merged) {
            merged = h;
        } else {
            if (!h2b_hist_same_config(merged, h) || h2b_hist_merge(merged, h) != H2B_OK)
                hist_ok = false;
            h2b_hist_del(h);
        }
    }
    if (rv == H2B_OK && !(rv = h2b_model_set_nums(&t->fork_p99_ns, p99.v, p99.n)) &&
        !(rv = h2b_model_set_nums(&t->fork_ns_per_op, ns.v, ns.n)) &&
        !(rv = h2b_model_set_nums(&t->fork_pids, pids.v, pids.n))) {
        t->forks = forks;
        t->samples = samples;
        t->ops = ops;
        if (ns.n)
            t->ns_per_op = median_nums(&ns);
        if (!isnan(t->allocs_per_op))
            t->alloc_deterministic = det;
        if (merged && hist_ok) {
            char *enc = NULL;
            if ((rv = h2b_hist_encode(merged, &enc)) == H2B_OK)
                rv = h2b_model_set_string(&t->histogram, enc);
            free(enc);
            t->p50_ns = (double)h2b_hist_percentile(merged, 50);
            t->p90_ns = (double)h2b_hist_percentile(merged, 90);
            t->p99_ns = (double)h2b_hist_percentile(merged, 99);
            t->p999_ns = (double)h2b_hist_percentile(merged, 99.9);
            t->max_ns = (double)merged->max;
        }
    }
    h2b_hist_del(merged);
    free(p99.v);
    free(ns.v);
    free(pids.v);
    return rv;
}

int h2b_ab_merge_results(const char *const *paths, size_t n, json_t **out, struct h2b_diag *diag)
{
    if (n == 0)
        return fail(diag, H2B_ERR_INVAL, "nothing to merge");
    struct h2b_results_doc **docs = calloc(n, sizeof(*docs));
    const struct h2b_results_micro **entries = calloc(n, sizeof(*entries));
    int rv = docs && entries ? H2B_OK : fail(diag, H2B_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < n && rv == H2B_OK; i++)
        rv = h2b_results_doc_load(paths[i], &docs[i], NULL, diag);
    /* docs[0] is the template (tool, env): its entries are replaced by the merged ones */
    for (size_t i = 0; rv == H2B_OK && i < docs[0]->micro.n; i++) {
        struct h2b_results_micro *e = h2b_results_doc_micro(docs[0], i);
        size_t m = 0;
        for (size_t j = 0; j < n && e->name; j++) {
            const struct h2b_results_micro *x = find_entry(docs[j], e->name);
            if (x)
                entries[m++] = x;
        }
        struct h2b_results_micro merged;
        rv = h2b_model_copy(&h2b_results_micro_model, &merged, e);
        if (rv == H2B_OK)
            rv = merge_entry(&merged, entries, m, diag);
        if (rv != H2B_OK) {
            h2b_results_micro_free(&merged);
            fail(diag, rv, "cannot merge %s: %s", e->name ? e->name : "?", h2b_strerror(rv));
            break;
        }
        h2b_results_micro_free(e);
        *e = merged;
    }
    if (rv == H2B_OK && h2b_model_to_json(&h2b_results_doc_model, docs[0], out) != H2B_OK)
        rv = fail(diag, H2B_ERR_NOMEM, "out of memory");
    for (size_t j = 0; docs && j < n; j++)
        h2b_results_doc_del(docs[j]);
    free(docs);
    free(entries);
    return rv;
}
