/*
 * gate.c - evaluate ceilings, confirm p99 breaches, render verdicts, propose ceilings.
 *
 * Approach: every (benchmark, metric) pair with a ceiling becomes one row; rows are computed in
 * a first pass, p99 breaches are collected and re-measured in one runner invocation per
 * confirmation round (only the breached benchmarks, so a round costs seconds, not the suite),
 * and a breach fails only if every round breaches too. Renderers work on the finished rows, so
 * the table, markdown and JUnit outputs can never disagree about the verdict.
 *
 * Why the best fork's p99: interference from other processes (a compiler on the other core, a
 * timer interrupt storm) only ever adds latency, so across independent forks the lowest p99 is the
 * one least contaminated. A real regression raises every fork, so it raises the minimum too.
 * Rejected: the merged p99 (one disturbed fork drags it up), the mean of forks (same problem),
 * and relative thresholds against the previous run (a comparison against the wrong base).
 */
#include "gate.h"
#include "buf.h"
#include "clock.h"
#include "error.h"
#include "fs.h"
#include "stats.h"
#include "results.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* Exact metrics are compared with this absolute slack, far below one byte or one allocation per
 * op, so that 192.00000000000003 (a ratio computed in floating point) still equals 192. */
#define EXACT_SLACK 1e-6

double h2b_gate_robust_p99(const struct h2b_gate_obs *o)
{
    if (o->n_p99_forks == 0)
        return o->value[H2B_METRIC_P99_NS];
    double best = o->p99_forks[0];
    for (size_t i = 1; i < o->n_p99_forks; i++) {
        if (o->p99_forks[i] < best)
            best = o->p99_forks[i];
    }
    return best;
}

/* ---------------------------------------------------------------- observations */

void h2b_gate_set_del(struct h2b_gate_set *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->count; i++) {
        free(s->obs[i].name);
        free(s->obs[i].note);
        free(s->obs[i].error);
        free(s->obs[i].instructions_source);
        free(s->obs[i].p99_forks);
        free(s->obs[i].ns_forks);
    }
    free(s->obs);
    for (size_t i = 0; i < s->n_sources; i++)
        free(s->sources[i]);
    free(s->sources);
    free(s->invalid);
    h2b_fingerprint_free(&s->env);
    free(s);
}

int h2b_gate_set_new(struct h2b_gate_set **out)
{
    struct h2b_gate_set *s = calloc(1, sizeof(*s));
    if (!s)
        return H2B_ERR_NOMEM;
    *out = s;
    return H2B_OK;
}

int h2b_gate_results_load(const char *path, struct h2b_results_doc **doc)
{
    struct h2b_diag diag;
    int rv = h2b_results_doc_load(path, doc, NULL, &diag);
    if (rv != H2B_OK)
        h2b_diag_print(&diag, stderr);
    return rv;
}

/* Records why a results file cannot be gated (the first reason wins). */
static int set_invalid(struct h2b_gate_set *s, const char *path, const char *what)
{
    if (s->invalid)
        return H2B_OK;
    struct h2b_buf b = {0};
    h2b_buf_printf(&b, "%s: %s", path, what);
    return h2b_buf_finish(&b, &s->invalid);
}

/* Gate numbers come only from Release builds without sanitizers (STYLE.md rule 12). */
static int check_env(struct h2b_gate_set *s, const char *path, const json_t *env)
{
    const char *bt;
    char san[128], what[256];
    const json_t *sv = json_object_get(env, "sanitizers");
    if (!json_is_array(sv) && !json_is_string(sv))
        return set_invalid(s, path,
                           "env.sanitizers is missing: cannot tell whether the numbers "
                           "come from a sanitizer build");
    h2b_results_env_build(env, &bt, san, sizeof(san));
    if (san[0]) {
        snprintf(what, sizeof(what), "measured in a build with sanitizers (%s)", san);
        return set_invalid(s, path, what);
    }
    if (!bt || strcmp(bt, "Release") != 0) {
        snprintf(what, sizeof(what), "measured in a %s build, not Release", bt ? bt : "unknown");
        return set_invalid(s, path, what);
    }
    return H2B_OK;
}

static int copy_nums(const struct h2b_model_nums *from, double **out, size_t *n)
{
    if (!from->v || from->n == 0)
        return H2B_OK;
    if (!(*out = malloc(from->n * sizeof(**out))))
        return H2B_ERR_NOMEM;
    memcpy(*out, from->v, from->n * sizeof(**out));
    *n = from->n;
    return H2B_OK;
}

/* An entry whose per-fork values contradict its own summary was not written by the runner (or
 * was edited): its numbers cannot be trusted, so the results cannot be gated. The merged p99 of
 * several forks' histograms lies between the smallest and the largest fork p99 (a quantile of a
 * mixture lies between the components' quantiles), and there is one value per fork. */
static int check_forks(struct h2b_gate_set *s, const char *path, size_t i,
                       const struct h2b_gate_obs *o)
{
    char what[512];
    const char *name = o->name;
    if ((o->n_p99_forks && (size_t)o->forks != o->n_p99_forks) ||
        (o->n_ns_forks && (size_t)o->forks != o->n_ns_forks)) {
        snprintf(what, sizeof(what),
                 "micro[%zu] (%.128s): forks is %d but it has %zu fork p99 and %zu fork ns/op "
                 "values",
                 i, name, o->forks, o->n_p99_forks, o->n_ns_forks);
        return set_invalid(s, path, what);
    }
    if (o->n_p99_forks && o->has[H2B_METRIC_P99_NS]) {
        double lo = o->p99_forks[0], hi = o->p99_forks[0];
        for (size_t k = 1; k < o->n_p99_forks; k++) {
            lo = o->p99_forks[k] < lo ? o->p99_forks[k] : lo;
            hi = o->p99_forks[k] > hi ? o->p99_forks[k] : hi;
        }
        double p99 = o->value[H2B_METRIC_P99_NS];
        if (p99 < lo || p99 > hi) {
            snprintf(what, sizeof(what),
                     "micro[%zu] (%.128s): p99_ns %.0f lies outside its forks' p99 (%.0f..%.0f): "
                     "the merged p99 of the forks must lie between them",
                     i, name, p99, lo, hi);
            return set_invalid(s, path, what);
        }
    }
    return H2B_OK;
}

int h2b_gate_set_add(struct h2b_gate_set *s, const char *path, const struct h2b_results_doc *doc)
{
    char **grown = realloc(s->sources, (s->n_sources + 1) * sizeof(*grown));
    if (!grown)
        return H2B_ERR_NOMEM;
    s->sources = grown;
    const char *source = s->sources[s->n_sources] = strdup(path);
    if (!source)
        return H2B_ERR_NOMEM;
    s->n_sources++;
    int rv = check_env(s, path, doc->env);
    if (rv == H2B_OK && !s->env.set)
        rv = h2b_fingerprint_from_env(doc->env, &s->env);
    if (rv != H2B_OK)
        return rv;
    size_t n = doc->micro.n;
    if (n) {
        struct h2b_gate_obs *more = realloc(s->obs, (s->count + n) * sizeof(*more));
        if (!more)
            return H2B_ERR_NOMEM;
        s->obs = more;
    }
    for (size_t i = 0; i < n; i++) {
        const struct h2b_results_micro *e = h2b_results_doc_micro(doc, i);
        struct h2b_gate_obs *o = &s->obs[s->count];
        memset(o, 0, sizeof(*o));
        o->source = source;
        o->name = strdup(e->name);
        if (!o->name)
            return H2B_ERR_NOMEM;
        s->count++; /* owned by the set from here on */
        for (int m = 0; m < H2B_METRIC_COUNT; m++) {
            bool found;
            o->value[m] = h2b_model_number(&h2b_results_micro_model, e, h2b_metric_key(m), &found);
            o->has[m] = found && !isnan(o->value[m]);
        }
        o->ns_per_op = e->ns_per_op;
        o->p50_ns = e->p50_ns;
        o->p999_ns = e->p999_ns;
        o->forks = isnan(e->forks) ? 0 : (int)e->forks;
        o->samples = e->samples;
        if ((e->note && !(o->note = strdup(e->note))) ||
            (e->error && !(o->error = strdup(e->error))) ||
            (e->instructions_source && !(o->instructions_source = strdup(e->instructions_source))))
            return H2B_ERR_NOMEM;
        o->alloc_nondeterministic = e->alloc_deterministic == 0;
        if ((rv = copy_nums(&e->fork_p99_ns, &o->p99_forks, &o->n_p99_forks)) ||
            (rv = copy_nums(&e->fork_ns_per_op, &o->ns_forks, &o->n_ns_forks)) ||
            (rv = check_forks(s, path, i, o)))
            return rv;
    }
    return H2B_OK;
}

int h2b_gate_set_load(const char *const *paths, size_t n, struct h2b_gate_set **out)
{
    struct h2b_gate_set *s;
    int rv = h2b_gate_set_new(&s);
    if (rv != H2B_OK)
        return rv;
    for (size_t i = 0; i < n && rv == H2B_OK; i++) {
        struct h2b_results_doc *doc = NULL;
        rv = h2b_gate_results_load(paths[i], &doc);
        if (rv == H2B_OK)
            rv = h2b_gate_set_add(s, paths[i], doc);
        h2b_results_doc_del(doc);
    }
    if (rv != H2B_OK) {
        h2b_gate_set_del(s);
        return rv;
    }
    *out = s;
    return H2B_OK;
}

/* ---------------------------------------------------------------- the runner */

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

int h2b_gate_runner_run(const struct h2b_gate_runner *r, const char *filter, const char *out_path)
{
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
    if (filter) {
        argv[argc++] = "--filter";
        argv[argc++] = (char *)filter;
    }
    argv[argc] = NULL;
    posix_spawn_file_actions_t fa;
    if (posix_spawn_file_actions_init(&fa) != 0)
        return H2B_ERR_NOMEM;
    /* The runner's table goes to stderr: the gate's stdout carries only the gate's verdict. */
    posix_spawn_file_actions_adddup2(&fa, STDERR_FILENO, STDOUT_FILENO);
    pid_t pid;
    int err = posix_spawn(&pid, exe, &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (err != 0) {
        fprintf(stderr, "h2bench gate: cannot run %s: %s\n", exe, strerror(err));
        return H2B_ERR_SYS;
    }
    int status;
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR)
            return H2B_ERR_SYS;
    }
    if (WIFSIGNALED(status)) {
        fprintf(stderr, "h2bench gate: %s micro was killed by signal %d\n", exe, WTERMSIG(status));
        return H2B_ERR_UNSUPPORTED;
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "h2bench gate: %s micro exited with status %d\n", exe,
                WIFEXITED(status) ? WEXITSTATUS(status) : -1);
        return H2B_ERR_UNSUPPORTED;
    }
    return H2B_OK;
}

/* Appends "^(a|b)$" with regex metacharacters in names escaped. */
static void filter_for(struct h2b_buf *b, const char *const *names, size_t count)
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
    const struct h2b_gate_runner *r = arg;
    char tmp[] = "/tmp/h2b-gate-confirm-XXXXXX.json";
    int fd = mkstemps(tmp, 5);
    if (fd < 0)
        return H2B_ERR_SYS;
    close(fd);
    struct h2b_buf fb = {0};
    char *filter = NULL;
    struct h2b_gate_set *s = NULL;
    filter_for(&fb, names, count);
    int rv = h2b_buf_finish(&fb, &filter);
    if (rv != H2B_OK)
        goto out;
    rv = h2b_gate_runner_run(r, filter, tmp);
    if (rv != H2B_OK)
        goto out;
    const char *paths[] = {tmp};
    rv = h2b_gate_set_load(paths, 1, &s);
    if (rv != H2B_OK)
        goto out;
    if (s->invalid) {
        fprintf(stderr, "h2bench gate: confirmation run invalid: %s\n", s->invalid);
        rv = H2B_ERR_UNSUPPORTED;
        goto out;
    }
    for (size_t i = 0; i < count; i++) {
        p99_out[i] = NAN;
        for (size_t j = 0; j < s->count; j++) {
            if (strcmp(s->obs[j].name, names[i]) == 0)
                p99_out[i] = h2b_gate_robust_p99(&s->obs[j]);
        }
    }
out:
    h2b_gate_set_del(s);
    free(filter);
    unlink(tmp);
    return rv;
}

/* ---------------------------------------------------------------- evaluation */

void h2b_gate_report_del(struct h2b_gate_report *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->count; i++) {
        free(r->rows[i].bench);
        free(r->rows[i].evidence);
    }
    free(r->rows);
    free(r->invalid_reason);
    free(r);
}

static struct h2b_gate_row *add_row(struct h2b_gate_report *r, const char *bench, int metric)
{
    struct h2b_gate_row *rows = realloc(r->rows, (r->count + 1) * sizeof(*rows));
    if (!rows)
        return NULL;
    r->rows = rows;
    struct h2b_gate_row *row = &rows[r->count];
    memset(row, 0, sizeof(*row));
    row->metric = metric;
    row->bench = strdup(bench);
    if (!row->bench)
        return NULL;
    r->count++;
    return row;
}

/* The value of exact metric m across every observation of a benchmark: the largest. Sets
 * *varies when the observations disagree (a non-deterministic allocation). */
static double exact_value(const struct h2b_gate_obs *const *obs, size_t n, int m, bool *varies,
                          double *lowest)
{
    double hi = -INFINITY, lo = INFINITY;
    for (size_t i = 0; i < n; i++) {
        double v = obs[i]->value[m];
        hi = v > hi ? v : hi;
        lo = v < lo ? v : lo;
    }
    *varies = hi - lo > EXACT_SLACK;
    *lowest = lo;
    return hi;
}

static void fmt_forks(struct h2b_buf *b, const struct h2b_gate_obs *const *obs, size_t n)
{
    size_t total = 0;
    for (size_t i = 0; i < n; i++)
        total += obs[i]->n_p99_forks ? obs[i]->n_p99_forks : 1;
    h2b_buf_printf(b, "best of %zu fork p99s (", total);
    const char *sep = "";
    for (size_t i = 0; i < n; i++) {
        if (!obs[i]->n_p99_forks) {
            h2b_buf_printf(b, "%s%.0f merged", sep, obs[i]->value[H2B_METRIC_P99_NS]);
            sep = ", ";
        }
        for (size_t k = 0; k < obs[i]->n_p99_forks; k++) {
            h2b_buf_printf(b, "%s%.0f", sep, obs[i]->p99_forks[k]);
            sep = ", ";
        }
    }
    h2b_buf_printf(b, " ns)");
}

static int finish_evidence(struct h2b_gate_row *row, struct h2b_buf *b)
{
    free(row->evidence);
    row->evidence = NULL;
    return h2b_buf_finish(b, &row->evidence);
}

static bool baseline_of(const struct h2b_baseline *bl, int m, double *v)
{
    switch (m) {
    case H2B_METRIC_BYTES_PER_OP:
        *v = bl->bytes_per_op;
        return bl->has_bytes;
    case H2B_METRIC_ALLOCS_PER_OP:
        *v = bl->allocs_per_op;
        return bl->has_allocs;
    case H2B_METRIC_P99_NS:
        *v = bl->p99_ns;
        return bl->has_p99;
    default:
        return false;
    }
}

/* A p99 breach waiting for confirmation. */
struct pending {
    size_t row;
    const char *name;
};

/* Whether the ceilings' fingerprint matches the results': absolute p99 ceilings need the same
 * machine, instruction ceilings the same build (and the same instruction source). */
struct applies {
    bool machine, build;
    char machine_why[400], build_why[400];
    const struct h2b_fingerprint *want;
};

bool h2b_gate_machine_applies(const struct h2b_fingerprint *want,
                              const struct h2b_fingerprint *have, char *na, size_t size)
{
    char why[256] = "";
    bool same = h2b_fingerprint_same_machine(want, have, why, sizeof(why));
    snprintf(na, size, "not applicable (set on %.120s%s%.200s)",
             want->cpu_model ? want->cpu_model : "another machine", same ? "" : "; ", why);
    return same;
}

static void fingerprint_verdict(const struct h2b_ceilings *c, const struct h2b_gate_set *s,
                                struct applies *a)
{
    char why[256] = "";
    const struct h2b_fingerprint *fp = &c->fingerprint;
    a->want = fp;
    a->machine = h2b_gate_machine_applies(fp, &s->env, a->machine_why, sizeof(a->machine_why));
    a->build = h2b_fingerprint_same_build(fp, &s->env, why, sizeof(why));
    snprintf(a->build_why, sizeof(a->build_why),
             "not applicable (counted with %.60s %.20s, nghttp2 %.20s; %.200s)",
             fp->compiler ? fp->compiler : "another compiler", fp->build_type ? fp->build_type : "",
             fp->nghttp2 ? fp->nghttp2 : "?", why);
}

static int evaluate_bench(struct h2b_gate_report *r, const struct h2b_ceiling_bench *cb,
                          const struct h2b_gate_obs *const *obs, size_t n, struct pending *pend,
                          size_t *n_pend, const struct applies *ap, bool strict)
{
    if (n == 0) {
        struct h2b_gate_row *row = add_row(r, cb->name, -1);
        if (!row)
            return H2B_ERR_NOMEM;
        row->status = H2B_GATE_MISSING;
        row->failing = true;
        struct h2b_buf b = {0};
        h2b_buf_printf(&b, "named in the ceilings but absent from the results");
        return finish_evidence(row, &b);
    }
    for (int m = 0; m < H2B_METRIC_COUNT; m++) {
        const struct h2b_ceiling *c = &cb->metric[m];
        if (!c->set)
            continue;
        struct h2b_gate_row *row = add_row(r, cb->name, m);
        if (!row)
            return H2B_ERR_NOMEM;
        row->has_ceiling = true;
        row->ceiling = c->max;
        row->has_baseline = baseline_of(&cb->baseline, m, &row->baseline);
        struct h2b_buf b = {0};
        /* An absolute p99 set on another machine, or an instruction count from another build
         * (or another counter), says nothing here: reported as such, never as pass or fail. */
        const char *na = NULL;
        char src_why[256];
        if (m == H2B_METRIC_P99_NS && !ap->machine)
            na = ap->machine_why;
        if (m == H2B_METRIC_INSTRUCTIONS_PER_OP && !ap->build)
            na = ap->build_why;
        for (size_t i = 0; !na && m == H2B_METRIC_INSTRUCTIONS_PER_OP && i < n; i++) {
            const char *want = ap->want->instructions_source, *have = obs[i]->instructions_source;
            if (want && have && strcmp(want, have) != 0) {
                snprintf(src_why, sizeof(src_why),
                         "not applicable (counted with %.30s; %.30s in %.150s)", want, have,
                         obs[i]->source);
                na = src_why;
            }
        }
        if (na) {
            row->status = H2B_GATE_NA;
            row->failing = strict;
            h2b_buf_printf(&b, "%s%s", na, strict ? " (--strict: invalid)" : "");
            int rv = finish_evidence(row, &b);
            if (rv != H2B_OK)
                return rv;
            continue;
        }
        /* A benchmark that failed, or a ceiling on a metric this run did not measure, cannot
         * pass. */
        for (size_t i = 0; i < n && row->status != H2B_GATE_INVALID; i++) {
            if (obs[i]->error) {
                row->status = H2B_GATE_INVALID;
                row->failing = true;
                h2b_buf_printf(&b, "the benchmark failed in %s: %s", obs[i]->source, obs[i]->error);
            } else if (!obs[i]->has[m]) {
                row->status = H2B_GATE_INVALID;
                row->failing = true;
                h2b_buf_printf(&b, "%s is null in %s: %s", h2b_metric_key(m), obs[i]->source,
                               obs[i]->note ? obs[i]->note : "no reason given");
            }
        }
        if (row->status == H2B_GATE_INVALID) {
            int rv = finish_evidence(row, &b);
            if (rv != H2B_OK)
                return rv;
            continue;
        }
        if (m == H2B_METRIC_P99_NS) {
            double best = INFINITY;
            for (size_t i = 0; i < n; i++) {
                double v = h2b_gate_robust_p99(obs[i]);
                best = v < best ? v : best;
            }
            row->has_current = true;
            row->current = best;
            fmt_forks(&b, obs, n);
            if (best > c->max) {
                row->status = H2B_GATE_FAIL;
                row->failing = true;
                pend[*n_pend].row = r->count - 1;
                pend[*n_pend].name = cb->name;
                (*n_pend)++;
            }
        } else {
            bool varies;
            double lowest;
            row->has_current = true;
            row->current = exact_value(obs, n, m, &varies, &lowest);
            h2b_buf_printf(&b, "exact");
            for (size_t i = 0; i < n; i++) {
                if (obs[i]->alloc_nondeterministic && m != H2B_METRIC_INSTRUCTIONS_PER_OP) {
                    h2b_buf_printf(&b, "; runner flags it not deterministic");
                    break;
                }
            }
            if (varies)
                h2b_buf_printf(&b, "; not deterministic: %.15g to %.15g across results files",
                               lowest, row->current);
            if (row->current > c->max + EXACT_SLACK) {
                row->status = H2B_GATE_FAIL;
                row->failing = true;
                h2b_buf_printf(&b, "; %.15g over the ceiling", row->current - c->max);
            }
        }
        int rv = finish_evidence(row, &b);
        if (rv != H2B_OK)
            return rv;
    }
    return H2B_OK;
}

/* Re-measures pending breaches; a breach that any round does not reproduce passes. */
static int confirm(struct h2b_gate_report *r, const struct h2b_gate_options *opt,
                   struct pending *pend, size_t n_pend)
{
    const char **names = malloc((n_pend ? n_pend : 1) * sizeof(*names));
    double *p99 = malloc((n_pend ? n_pend : 1) * sizeof(*p99));
    int rv = H2B_OK;
    if (!names || !p99) {
        rv = H2B_ERR_NOMEM;
        goto out;
    }
    size_t live = n_pend;
    for (int round = 1; round <= opt->confirm && live > 0 && opt->rerun; round++) {
        size_t k = 0;
        for (size_t i = 0; i < n_pend; i++) {
            if (pend[i].name)
                names[k++] = pend[i].name;
        }
        r->confirm_runs++;
        rv = opt->rerun(opt->rerun_arg, names, k, p99);
        if (rv != H2B_OK) {
            for (size_t i = 0; i < n_pend; i++) {
                if (!pend[i].name)
                    continue;
                struct h2b_gate_row *row = &r->rows[pend[i].row];
                row->status = H2B_GATE_INVALID;
                struct h2b_buf b = {0};
                h2b_buf_printf(&b, "%s; confirmation run %d could not run (%s)", row->evidence,
                               round, h2b_strerror(rv));
                rv = finish_evidence(row, &b);
                if (rv != H2B_OK)
                    goto out;
            }
            goto out;
        }
        k = 0;
        for (size_t i = 0; i < n_pend; i++) {
            if (!pend[i].name)
                continue;
            struct h2b_gate_row *row = &r->rows[pend[i].row];
            double v = p99[k++];
            struct h2b_buf b = {0};
            if (isnan(v)) {
                row->status = H2B_GATE_INVALID;
                h2b_buf_printf(&b, "%s; absent from confirmation run %d", row->evidence, round);
                pend[i].name = NULL;
                live--;
            } else if (v <= row->ceiling) {
                row->status = H2B_GATE_PASS;
                row->failing = false;
                h2b_buf_printf(&b, "%s; breach not confirmed: re-run %d p99 %.0f ns", row->evidence,
                               round, v);
                pend[i].name = NULL;
                live--;
            } else {
                h2b_buf_printf(&b, "%s; confirmed by re-run %d: %.0f ns", row->evidence, round, v);
            }
            rv = finish_evidence(row, &b);
            if (rv != H2B_OK)
                goto out;
        }
    }
    for (size_t i = 0; i < n_pend; i++) {
        if (!pend[i].name)
            continue;
        struct h2b_gate_row *row = &r->rows[pend[i].row];
        if (opt->confirm == 0 || !opt->rerun) {
            struct h2b_buf b = {0};
            h2b_buf_printf(&b, "%s; no confirmation re-run", row->evidence);
            rv = finish_evidence(row, &b);
            if (rv != H2B_OK)
                goto out;
        }
    }
out:
    free(names);
    free(p99);
    return rv;
}

static int severity(const struct h2b_gate_row *row)
{
    if (row->status == H2B_GATE_INVALID)
        return 0;
    if (row->failing)
        return 1;
    if (row->status == H2B_GATE_UNGATED)
        return 2;
    return 3;
}

/* Stable sort by severity (insertion sort: reports have tens of rows). */
static void sort_rows(struct h2b_gate_report *r)
{
    for (size_t i = 1; i < r->count; i++) {
        struct h2b_gate_row row = r->rows[i];
        size_t j = i;
        while (j > 0 && severity(&r->rows[j - 1]) > severity(&row)) {
            r->rows[j] = r->rows[j - 1];
            j--;
        }
        r->rows[j] = row;
    }
}

static bool selected(const struct h2b_gate_options *opt, const char *name)
{
    return !opt->filter || regexec(opt->filter, name, 0, NULL, 0) == 0;
}

int h2b_gate_check(const struct h2b_ceilings *c, const struct h2b_gate_set *s,
                   const struct h2b_gate_options *opt, struct h2b_gate_report **out)
{
    struct h2b_gate_report *r = calloc(1, sizeof(*r));
    const struct h2b_gate_obs **obs = malloc((s->count ? s->count : 1) * sizeof(*obs));
    struct pending *pend = malloc((c->count ? c->count : 1) * sizeof(*pend));
    size_t n_pend = 0;
    int rv = H2B_ERR_NOMEM;
    uint64_t t0 = h2b_clock_now_ns();
    if (!r || !obs || !pend)
        goto out_err;
    h2b_clock_utc_string(r->started, sizeof(r->started));
    if (s->invalid) {
        r->invalid_reason = strdup(s->invalid);
        if (!r->invalid_reason)
            goto out_err;
        r->exit_code = 3;
        goto out_ok;
    }
    struct applies ap;
    fingerprint_verdict(c, s, &ap);
    for (size_t i = 0; i < c->count; i++) {
        if (!selected(opt, c->benches[i].name))
            continue;
        size_t n = 0;
        for (size_t j = 0; j < s->count; j++) {
            if (strcmp(s->obs[j].name, c->benches[i].name) == 0)
                obs[n++] = &s->obs[j];
        }
        rv = evaluate_bench(r, &c->benches[i], obs, n, pend, &n_pend, &ap, opt->strict);
        if (rv != H2B_OK)
            goto out_err;
    }
    if (n_pend) {
        rv = confirm(r, opt, pend, n_pend);
        if (rv != H2B_OK)
            goto out_err;
    }
    for (size_t j = 0; j < s->count; j++) {
        const char *name = s->obs[j].name;
        bool seen = h2b_ceilings_find(c, name) != NULL || !selected(opt, name);
        for (size_t k = 0; k < j && !seen; k++)
            seen = strcmp(s->obs[k].name, name) == 0;
        if (seen)
            continue;
        struct h2b_gate_row *row = add_row(r, name, -1);
        if (!row) {
            rv = H2B_ERR_NOMEM;
            goto out_err;
        }
        row->status = H2B_GATE_UNGATED;
        row->failing = opt->strict;
        struct h2b_buf b = {0};
        h2b_buf_printf(&b,
                       "no ceiling in the ceilings file%s; B/op %.15g, allocs/op %.15g, p99 "
                       "%.0f ns",
                       opt->strict ? " (--strict)" : "", s->obs[j].value[H2B_METRIC_BYTES_PER_OP],
                       s->obs[j].value[H2B_METRIC_ALLOCS_PER_OP], h2b_gate_robust_p99(&s->obs[j]));
        rv = finish_evidence(row, &b);
        if (rv != H2B_OK)
            goto out_err;
    }
    for (size_t i = 0; i < r->count; i++) {
        switch (r->rows[i].status) {
        case H2B_GATE_PASS:
            r->passed++;
            break;
        case H2B_GATE_FAIL:
            r->failed++;
            break;
        case H2B_GATE_MISSING:
            r->missing++;
            break;
        case H2B_GATE_UNGATED:
            r->ungated++;
            break;
        case H2B_GATE_INVALID:
            r->invalid++;
            break;
        case H2B_GATE_NA:
            r->not_applicable++;
            break;
        }
    }
    sort_rows(r);
    if (r->invalid || (opt->strict && r->not_applicable))
        r->exit_code = 3;
    else if (r->failed || r->missing || (opt->strict && r->ungated))
        r->exit_code = 1;
out_ok:
    r->elapsed_s = (double)(h2b_clock_now_ns() - t0) / 1e9;
    free(obs);
    free(pend);
    *out = r;
    return H2B_OK;
out_err:
    free(obs);
    free(pend);
    h2b_gate_report_del(r);
    return rv;
}

/* ---------------------------------------------------------------- rendering */

static const char *status_word(const struct h2b_gate_row *row)
{
    switch (row->status) {
    case H2B_GATE_PASS:
        return "PASS";
    case H2B_GATE_FAIL:
        return "FAIL";
    case H2B_GATE_MISSING:
        return "MISSING";
    case H2B_GATE_UNGATED:
        return row->failing ? "UNGATED!" : "ungated";
    case H2B_GATE_NA:
        return row->failing ? "N/A!" : "n/a";
    default:
        return "INVALID";
    }
}

static const char *metric_label(const struct h2b_gate_row *row)
{
    return row->metric < 0 ? "-" : h2b_metric_label(row->metric);
}

static void fmt_value(char *buf, size_t size, bool has, double v, int metric)
{
    if (!has)
        snprintf(buf, size, "-");
    else if (metric == H2B_METRIC_P99_NS)
        snprintf(buf, size, "%.0f ns", v);
    else
        snprintf(buf, size, "%.10g", v);
}

static void fmt_delta(char *buf, size_t size, const struct h2b_gate_row *row)
{
    if (!row->has_baseline || !row->has_current)
        snprintf(buf, size, "-");
    else if (row->current == row->baseline)
        snprintf(buf, size, "0%%");
    else if (row->baseline == 0)
        snprintf(buf, size, row->current == 0 ? "0%%" : "+%.15g", row->current);
    else if (fabs(row->current - row->baseline) < 0.0005 * fabs(row->baseline))
        snprintf(buf, size, "0%%");
    else
        snprintf(buf, size, "%+.1f%%", (row->current - row->baseline) / row->baseline * 100.0);
}

static void verdict_line(struct h2b_buf *b, const struct h2b_gate_report *r, bool md)
{
    if (r->invalid_reason) {
        h2b_buf_printf(b, "%sINVALID: measurement cannot be gated: %s", md ? "⛔ " : "",
                       r->invalid_reason);
        return;
    }
    const char *word = r->exit_code == 0 ? "PASS" : r->exit_code == 1 ? "FAIL" : "INVALID";
    const char *icon = r->exit_code == 0 ? "✅ " : r->exit_code == 1 ? "❌ " : "⛔ ";
    h2b_buf_printf(b, "%s%s: %d passed, %d exceeded, %d missing, %d ungated, %d invalid",
                   md ? icon : "", word, r->passed, r->failed, r->missing, r->ungated, r->invalid);
    if (r->not_applicable)
        h2b_buf_printf(b, ", %d not applicable (ceilings set on another machine or build)",
                       r->not_applicable);
    if (r->confirm_runs)
        h2b_buf_printf(b, " (%d confirmation re-run%s)", r->confirm_runs,
                       r->confirm_runs == 1 ? "" : "s");
}

int h2b_gate_render_table(const struct h2b_gate_report *r, char **out)
{
    struct h2b_buf b = {0};
    size_t wb = strlen("benchmark");
    for (size_t i = 0; i < r->count; i++) {
        size_t n = strlen(r->rows[i].bench);
        wb = n > wb ? n : wb;
    }
    if (r->count) {
        h2b_buf_printf(&b, "%-8s  %-*s  %-9s  %10s  %10s  %10s  %8s  %s\n", "status", (int)wb,
                       "benchmark", "metric", "baseline", "ceiling", "current", "delta",
                       "evidence");
    }
    for (size_t i = 0; i < r->count; i++) {
        const struct h2b_gate_row *row = &r->rows[i];
        char base[32], ceil_[32], cur[32], delta[32];
        fmt_value(base, sizeof(base), row->has_baseline, row->baseline, row->metric);
        fmt_value(ceil_, sizeof(ceil_), row->has_ceiling, row->ceiling, row->metric);
        fmt_value(cur, sizeof(cur), row->has_current, row->current, row->metric);
        fmt_delta(delta, sizeof(delta), row);
        h2b_buf_printf(&b, "%-8s  %-*s  %-9s  %10s  %10s  %10s  %8s  %s\n", status_word(row),
                       (int)wb, row->bench, metric_label(row), base, ceil_, cur, delta,
                       row->evidence ? row->evidence : "");
    }
    verdict_line(&b, r, false);
    h2b_buf_printf(&b, "\n");
    return h2b_buf_finish(&b, out);
}

int h2b_gate_render_md(const struct h2b_gate_report *r, char **out)
{
    struct h2b_buf b = {0};
    h2b_buf_printf(&b, "## h2bench gate: ");
    verdict_line(&b, r, true);
    h2b_buf_printf(&b, "\n\n");
    if (r->count) {
        h2b_buf_printf(&b,
                       "| | Benchmark | Metric | Baseline | Ceiling | Current | Δ | Evidence |\n"
                       "|---|---|---|---:|---:|---:|---:|---|\n");
    }
    for (size_t i = 0; i < r->count; i++) {
        const struct h2b_gate_row *row = &r->rows[i];
        char base[32], ceil_[32], cur[32], delta[32];
        fmt_value(base, sizeof(base), row->has_baseline, row->baseline, row->metric);
        fmt_value(ceil_, sizeof(ceil_), row->has_ceiling, row->ceiling, row->metric);
        fmt_value(cur, sizeof(cur), row->has_current, row->current, row->metric);
        fmt_delta(delta, sizeof(delta), row);
        const char *icon = row->status == H2B_GATE_PASS                       ? "✅"
                           : row->status == H2B_GATE_UNGATED && !row->failing ? "➖"
                           : row->status == H2B_GATE_NA && !row->failing      ? "➖"
                           : row->status == H2B_GATE_INVALID                  ? "⛔"
                                                                              : "❌";
        h2b_buf_printf(&b, "| %s | `", icon);
        h2b_buf_md(&b, row->bench);
        h2b_buf_printf(&b, "` | %s | %s | %s | %s | %s | ", metric_label(row), base, ceil_, cur,
                       delta);
        h2b_buf_md(&b, row->evidence ? row->evidence : "");
        h2b_buf_printf(&b, " |\n");
    }
    if (r->exit_code == 1) {
        h2b_buf_printf(&b, "\nTo accept an intended change: `h2bench gate --propose --runs 5 "
                           "--write proposal.json`, review it, and copy the changed ceilings "
                           "into `gates/ceilings.json` with their why lines.\n");
    }
    return h2b_buf_finish(&b, out);
}

int h2b_gate_render_junit(const struct h2b_gate_report *r, char **out)
{
    struct h2b_buf b = {0};
    int failures = r->failed + r->missing + (r->invalid_reason ? 1 : 0);
    int errors = r->invalid;
    int skipped = 0;
    for (size_t i = 0; i < r->count; i++) {
        if (r->rows[i].status == H2B_GATE_UNGATED) {
            if (r->rows[i].failing)
                failures++;
            else
                skipped++;
        }
        if (r->rows[i].status == H2B_GATE_NA) {
            if (r->rows[i].failing)
                errors++;
            else
                skipped++;
        }
    }
    size_t tests = r->count + (r->invalid_reason ? 1 : 0);
    h2b_buf_printf(&b,
                   "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                   "<testsuites name=\"h2bench gate\" tests=\"%zu\" failures=\"%d\" errors=\"%d\" "
                   "skipped=\"%d\" time=\"%.3f\" timestamp=\"%s\">\n"
                   "  <testsuite name=\"h2bench.gate\" tests=\"%zu\" failures=\"%d\" "
                   "errors=\"%d\" skipped=\"%d\" time=\"%.3f\" timestamp=\"%s\">\n",
                   tests, failures, errors, skipped, r->elapsed_s, r->started, tests, failures,
                   errors, skipped, r->elapsed_s, r->started);
    if (r->invalid_reason) {
        h2b_buf_printf(&b, "    <testcase classname=\"h2bench.gate\" name=\"measurement\">\n"
                           "      <failure message=\"");
        h2b_buf_xml(&b, r->invalid_reason);
        h2b_buf_printf(&b, "\" type=\"invalid\"/>\n    </testcase>\n");
    }
    for (size_t i = 0; i < r->count; i++) {
        const struct h2b_gate_row *row = &r->rows[i];
        h2b_buf_printf(&b, "    <testcase classname=\"");
        h2b_buf_xml(&b, row->bench);
        /* the gate judges numbers measured before it ran: a row takes no time of its own */
        h2b_buf_printf(&b, "\" name=\"%s\" time=\"0.000\">",
                       row->metric < 0 ? "present" : h2b_metric_key(row->metric));
        char cur[32], ceil_[32];
        fmt_value(cur, sizeof(cur), row->has_current, row->current, row->metric);
        fmt_value(ceil_, sizeof(ceil_), row->has_ceiling, row->ceiling, row->metric);
        const char *tag = NULL, *type = NULL;
        if (row->status == H2B_GATE_INVALID || (row->status == H2B_GATE_NA && row->failing))
            tag = "error", type = row->status == H2B_GATE_NA ? "not-applicable" : "invalid";
        else if (row->failing)
            tag = "failure", type = row->status == H2B_GATE_MISSING   ? "missing"
                                    : row->status == H2B_GATE_UNGATED ? "ungated"
                                                                      : "exceeded";
        if (tag) {
            h2b_buf_printf(&b, "\n      <%s type=\"%s\" message=\"", tag, type);
            h2b_buf_xml(&b, row->bench);
            h2b_buf_printf(&b, " %s: current %s, ceiling %s\">", metric_label(row), cur, ceil_);
            h2b_buf_xml(&b, row->evidence ? row->evidence : "");
            h2b_buf_printf(&b, "</%s>\n    ", tag);
        } else if (row->status == H2B_GATE_UNGATED) {
            h2b_buf_printf(&b, "\n      <skipped message=\"no ceiling\"/>\n    ");
        } else if (row->status == H2B_GATE_NA) {
            h2b_buf_printf(&b, "\n      <skipped message=\"");
            h2b_buf_xml(&b, row->evidence ? row->evidence : "not applicable");
            h2b_buf_printf(&b, "\"/>\n    ");
        } else {
            h2b_buf_printf(&b, "\n      <system-out>");
            h2b_buf_printf(&b, "current %s, ceiling %s; ", cur, ceil_);
            h2b_buf_xml(&b, row->evidence ? row->evidence : "");
            h2b_buf_printf(&b, "</system-out>\n    ");
        }
        h2b_buf_printf(&b, "</testcase>\n");
    }
    h2b_buf_printf(&b, "  </testsuite>\n</testsuites>\n");
    return h2b_buf_finish(&b, out);
}

/* ---------------------------------------------------------------- proposals */

/* The observation of name in run s (the first, if a file repeats a name), or NULL. */
static const struct h2b_gate_obs *find_obs(const struct h2b_gate_set *s, const char *name)
{
    for (size_t i = 0; i < s->count; i++) {
        if (strcmp(s->obs[i].name, name) == 0)
            return &s->obs[i];
    }
    return NULL;
}

/* Observed values without ceilings, for median_of. */
enum { BASE_P50 = H2B_METRIC_COUNT, BASE_P999 };

/* The median over the runs of metric m (or BASE_P50/BASE_P999) into *out; false when some run
 * did not measure it. tmp holds n doubles. */
static bool median_of(const struct h2b_gate_obs *const *obs, size_t n, int m, double *tmp,
                      double *out)
{
    for (size_t i = 0; i < n; i++) {
        tmp[i] = m == BASE_P50    ? obs[i]->p50_ns
                 : m == BASE_P999 ? obs[i]->p999_ns
                 : obs[i]->has[m] ? obs[i]->value[m]
                                  : NAN;
        if (isnan(tmp[i]))
            return false;
    }
    if (n == 0)
        return false;
    *out = h2b_stats_median(tmp, n);
    return true;
}

/* True when every observation measured metric m (it is not null). */
static bool all_have(const struct h2b_gate_obs *const *obs, size_t n, int m)
{
    for (size_t i = 0; i < n; i++) {
        if (!obs[i]->has[m])
            return false;
    }
    return n > 0;
}

static int propose_bench(struct h2b_ceilings *c, const char *name,
                         const struct h2b_gate_set *const *runs, size_t count,
                         const struct h2b_gate_propose_options *opt, const char *date, double *tmp)
{
    struct h2b_ceiling_bench *b;
    int rv = h2b_ceilings_add(c, name, &b);
    if (rv != H2B_OK)
        return rv;
    const char *tool = opt->tool ? opt->tool : "h2bench";
    const struct h2b_gate_obs *obs[count];
    size_t n = 0;
    for (size_t i = 0; i < count; i++) {
        const struct h2b_gate_obs *o = find_obs(runs[i], name);
        if (o)
            obs[n++] = o;
    }
    char why[512];
    const char *partial = n < count ? " (absent from some runs)" : "";
    bool flagged = false; /* the runner saw forks or repeats disagree */
    for (size_t i = 0; i < n; i++)
        flagged = flagged || obs[i]->alloc_nondeterministic;
    for (int m = H2B_METRIC_BYTES_PER_OP; m <= H2B_METRIC_ALLOCS_PER_OP; m++) {
        if (!all_have(obs, n, m))
            continue; /* not measured (sanitizer build, counting unavailable): no ceiling */
        bool varies;
        double lowest, hi = exact_value(obs, n, m, &varies, &lowest);
        if (varies || flagged) {
            /* Amortised growth (a buffer doubling every k ops) makes the ratio wobble in its
             * decimals. The next whole unit above the largest value still fails one more byte or
             * allocation per op, and never fails on the wobble. */
            snprintf(why, sizeof(why),
                     "%s: NOT deterministic (the runner flags it): %.10g to %.10g in %zu runs%s; "
                     "ceiling rounded up to the next whole %s, so one more per op still fails; %s",
                     date, lowest, hi, n, partial,
                     m == H2B_METRIC_BYTES_PER_OP ? "byte" : "allocation", tool);
            hi = floor(hi) + 1;
        } else {
            snprintf(why, sizeof(why), "%s: exact, %.15g in each of %zu runs%s; %s", date, hi, n,
                     partial, tool);
        }
        rv = h2b_ceilings_set(b, m, hi, why);
        if (rv != H2B_OK)
            return rv;
    }
    double fewest = INFINITY; /* samples per fork, in the sparsest run */
    for (size_t i = 0; i < n; i++) {
        double per_fork = obs[i]->samples / (obs[i]->forks > 0 ? obs[i]->forks : 1);
        fewest = per_fork < fewest ? per_fork : fewest; /* NAN (unknown) never wins */
    }
    if (fewest < H2B_GATE_MIN_P99_SAMPLES) {
        snprintf(why, sizeof(why),
                 "p99 not gated: %.0f samples per fork in the sparsest of %zu runs, a p99 needs "
                 "%d (100 above it); at this operation's length its tail is scheduler noise",
                 fewest, n, H2B_GATE_MIN_P99_SAMPLES);
        if (!(b->baseline.note = strdup(why)))
            return H2B_ERR_NOMEM;
    } else if (all_have(obs, n, H2B_METRIC_P99_NS)) {
        double worst = 0, best_run = INFINITY;
        for (size_t i = 0; i < n; i++) {
            double v = h2b_gate_robust_p99(obs[i]);
            worst = v > worst ? v : worst;
            best_run = v < best_run ? v : best_run;
        }
        snprintf(why, sizeof(why),
                 "%s: worst of %zu runs' best-fork p99 (%.0f..%.0f ns) + %.0f%% headroom%s; %s",
                 date, n, best_run, worst, opt->headroom * 100.0, partial, tool);
        rv = h2b_ceilings_set(b, H2B_METRIC_P99_NS, ceil(worst * (1.0 + opt->headroom)), why);
        if (rv != H2B_OK)
            return rv;
    }
    if (all_have(obs, n, H2B_METRIC_INSTRUCTIONS_PER_OP)) {
        bool varies;
        double lowest, hi = exact_value(obs, n, H2B_METRIC_INSTRUCTIONS_PER_OP, &varies, &lowest);
        const char *src = obs[0]->instructions_source ? obs[0]->instructions_source : "counters";
        if (varies)
            snprintf(why, sizeof(why),
                     "%s: %s instructions/op NOT identical over %zu runs (%.15g..%.15g): the "
                     "largest; %s",
                     date, src, n, lowest, hi, tool);
        else
            snprintf(why, sizeof(why),
                     "%s: exact, %s counts %.15g in each of %zu runs (deterministic for one "
                     "binary and its libraries, so no tolerance: any increase fails; another "
                     "build is reported not applicable); %s",
                     date, src, hi, n, tool);
        rv = h2b_ceilings_set(b, H2B_METRIC_INSTRUCTIONS_PER_OP, hi, why);
        if (rv != H2B_OK)
            return rv;
    }
    /* Baselines: the median run of each observed value. */
    struct h2b_baseline *bl = &b->baseline;
    bl->runs = (int)n;
    bl->has_bytes = median_of(obs, n, H2B_METRIC_BYTES_PER_OP, tmp, &bl->bytes_per_op);
    bl->has_allocs = median_of(obs, n, H2B_METRIC_ALLOCS_PER_OP, tmp, &bl->allocs_per_op);
    bl->has_p99 = median_of(obs, n, H2B_METRIC_P99_NS, tmp, &bl->p99_ns);
    bl->has_p50 = median_of(obs, n, BASE_P50, tmp, &bl->p50_ns);
    bl->has_p999 = median_of(obs, n, BASE_P999, tmp, &bl->p999_ns);
    return H2B_OK;
}

int h2b_gate_propose(const struct h2b_gate_set *const *runs, size_t count,
                     const struct h2b_gate_propose_options *opt, struct h2b_ceilings **out)
{
    if (count == 0)
        return H2B_ERR_INVAL;
    char date[32];
    if (opt->date) {
        snprintf(date, sizeof(date), "%s", opt->date);
    } else {
        h2b_clock_utc_string(date, sizeof(date));
        date[10] = '\0'; /* the day is enough for a why line */
    }
    struct h2b_ceilings *c;
    double *tmp = malloc(count * sizeof(*tmp));
    int rv = tmp ? h2b_ceilings_new(&c) : H2B_ERR_NOMEM;
    if (rv != H2B_OK) {
        free(tmp);
        return rv;
    }
    for (size_t r = 0; r < count && rv == H2B_OK; r++) {
        for (size_t i = 0; i < runs[r]->count && rv == H2B_OK; i++) {
            const char *name = runs[r]->obs[i].name;
            if (!h2b_ceilings_find(c, name))
                rv = propose_bench(c, name, runs, count, opt, date, tmp);
        }
    }
    /* where and with which build the runs were measured: p99 ceilings hold only there */
    if (rv == H2B_OK)
        rv = h2b_fingerprint_copy(&c->fingerprint, &runs[0]->env);
    for (size_t i = 0; rv == H2B_OK && i < runs[0]->count && !c->fingerprint.instructions_source;
         i++) {
        const char *src = runs[0]->obs[i].instructions_source;
        if (src && !(c->fingerprint.instructions_source = strdup(src)))
            rv = H2B_ERR_NOMEM;
    }
    free(tmp);
    if (rv != H2B_OK) {
        h2b_ceilings_del(c);
        return rv;
    }
    *out = c;
    return H2B_OK;
}
