/*
 * gate_obs.c - the gate's observations: the micro entries of results files, read through the
 * core results model into a struct h2b_gate_set (gate.h).
 *
 * Approach: every file is loaded and validated by h2b_results_doc_load; the set copies what the
 * gate needs (per-metric values, the per-fork arrays, notes and errors) and records, once, why
 * the whole set cannot be gated (a sanitizer or non-Release build, fork arrays that contradict
 * the merged p99). Problems travel back in a struct h2b_diag; nothing here prints.
 * Rejected: gating straight off the JSON (every reader would spell the keys again).
 */
#include "gates/gate.h"
#include "gates/gate_int.h"
#include "core/buf.h"
#include "core/error.h"
#include "core/results.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
static int check_env(struct h2b_gate_set *s, const char *path, const struct h2b_results_env *env)
{
    const char *bt = env->build_type;
    char san[128], what[256];
    if (!env->sanitizers.v)
        return set_invalid(s, path,
                           "env.sanitizers is missing: cannot tell whether the numbers "
                           "come from a sanitizer build");
    h2b_results_env_sanitizers(env, san, sizeof(san));
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
    int rv = check_env(s, path, &doc->env);
    if (rv == H2B_OK && !s->env.set)
        rv = h2b_fingerprint_from_env(&doc->env, &s->env);
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

int h2b_gate_set_load(const char *const *paths, size_t n, struct h2b_gate_set **out,
                      struct h2b_diag *diag)
{
    struct h2b_gate_set *s;
    int rv = h2b_gate_set_new(&s);
    if (rv != H2B_OK)
        return rv;
    for (size_t i = 0; i < n && rv == H2B_OK; i++) {
        struct h2b_results_doc *doc = NULL;
        rv = h2b_results_doc_load(paths[i], &doc, NULL, diag);
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
