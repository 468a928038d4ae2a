/*
 * gate_obs.c - the gate's observations: the micro entries of results files, read through the
 * core results model into a struct h2b_gate_set (gate.h).
 *
 * Approach: every file is loaded and validated by h2b_results_doc_load and the set keeps the
 * decoded document; an observation is a view (a pointer to the model's micro entry and to the
 * file's name), and what the gate derives from an entry (a metric by its enum, the fork count,
 * the best fork's p99, the fingerprint of the env) is computed by accessors when asked, so the
 * gate reads the model and holds no second copy of it. The set records, once, why the whole
 * set cannot be gated (a sanitizer or non-Release build, fork arrays that contradict the merged
 * p99). Problems travel back in a struct h2b_diag; nothing here prints.
 * Rejected: gating straight off the JSON (every reader would spell the keys again); copying the
 * entries' fields into the observation (the shape the set had until issue 31: a second
 * in-memory form of the same data, which every new field had to be added to).
 */
#include "gates/gate.h"
#include "gates/gate_int.h"
#include "core/buf.h"
#include "core/check.h"
#include "core/error.h"
#include "core/results.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

double h2b_gate_robust_p99(const struct h2b_gate_obs *o)
{
    const struct h2b_model_nums *f = &o->e->fork_p99_ns;
    if (!f->v || f->n == 0)
        return o->e->p99_ns;
    double best = f->v[0];
    for (size_t i = 1; i < f->n; i++) {
        if (f->v[i] < best)
            best = f->v[i];
    }
    return best;
}

int h2b_gate_obs_forks(const struct h2b_gate_obs *o)
{
    double f = o->e->forks;
    /* the model keeps it an integer >= 1 (or null); one beyond int is no fork count */
    return isnan(f) || f < 1 || f > INT_MAX ? 0 : (int)f;
}

void h2b_gate_set_fingerprint(const struct h2b_gate_set *s, struct h2b_fingerprint *fp)
{
    memset(fp, 0, sizeof(*fp));
    if (s->env)
        h2b_fingerprint_view(s->env, fp);
}

void h2b_gate_set_del(struct h2b_gate_set *s)
{
    if (!s)
        return;
    free(s->obs);
    for (size_t i = 0; i < s->n_sources; i++) {
        free(s->sources[i]);
        h2b_results_doc_del(s->owned[i]);
    }
    free(s->sources);
    free(s->docs);
    free(s->owned);
    free(s->invalid);
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

/* An entry whose per-fork values contradict its own summary was not written by the runner (or
 * was edited): its numbers cannot be trusted, so the results cannot be gated. The merged p99 of
 * several forks' histograms lies between the smallest and the largest fork p99 (a quantile of a
 * mixture lies between the components' quantiles), and there is one value per fork. */
static int check_forks(struct h2b_gate_set *s, const char *path, size_t i,
                       const struct h2b_gate_obs *o)
{
    char what[512];
    const struct h2b_results_micro *e = o->e;
    const char *name = e->name;
    size_t n_p99 = e->fork_p99_ns.v ? e->fork_p99_ns.n : 0;
    size_t n_ns = e->fork_ns_per_op.v ? e->fork_ns_per_op.n : 0;
    int forks = h2b_gate_obs_forks(o);
    if ((n_p99 && (size_t)forks != n_p99) || (n_ns && (size_t)forks != n_ns)) {
        snprintf(what, sizeof(what),
                 "micro[%zu] (%.128s): forks is %d but it has %zu fork p99 and %zu fork ns/op "
                 "values",
                 i, name, forks, n_p99, n_ns);
        return set_invalid(s, path, what);
    }
    if (n_p99 && h2b_gate_obs_has(o, H2B_METRIC_P99_NS)) {
        const double *v = e->fork_p99_ns.v;
        double lo = v[0], hi = v[0];
        for (size_t k = 1; k < n_p99; k++) {
            lo = v[k] < lo ? v[k] : lo;
            hi = v[k] > hi ? v[k] : hi;
        }
        double p99 = e->p99_ns;
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

/* Records doc (read from path) in s: docs[i] and sources[i], and owned[i] when s frees it. */
static int add_source(struct h2b_gate_set *s, const char *path, const struct h2b_results_doc *doc,
                      struct h2b_results_doc *owned)
{
    size_t n = s->n_sources + 1;
    char **sources = realloc(s->sources, n * sizeof(*sources));
    if (sources)
        s->sources = sources;
    const struct h2b_results_doc **docs = realloc(s->docs, n * sizeof(*docs));
    if (docs)
        s->docs = docs;
    struct h2b_results_doc **own = realloc(s->owned, n * sizeof(*own));
    if (own)
        s->owned = own;
    char *copy = sources && docs && own ? strdup(path) : NULL;
    if (!copy)
        return H2B_ERR_NOMEM;
    s->sources[s->n_sources] = copy;
    s->docs[s->n_sources] = doc;
    s->owned[s->n_sources] = owned;
    s->n_sources = n;
    return H2B_OK;
}

/* The views of doc's micro entries, doc being the set's last source. */
static int add_entries(struct h2b_gate_set *s, const struct h2b_results_doc *doc)
{
    H2B_ASSERT(s->n_sources > 0 && s->docs[s->n_sources - 1] == doc);
    const char *path = s->sources[s->n_sources - 1];
    int rv = check_env(s, path, &doc->env);
    if (rv != H2B_OK)
        return rv;
    if (!s->env && doc->env.base.present)
        s->env = &doc->env;
    size_t n = doc->micro.n;
    if (n) {
        struct h2b_gate_obs *more = realloc(s->obs, (s->count + n) * sizeof(*more));
        if (!more)
            return H2B_ERR_NOMEM;
        s->obs = more;
    }
    for (size_t i = 0; i < n; i++) {
        struct h2b_gate_obs *o = &s->obs[s->count++];
        o->e = h2b_results_doc_micro(doc, i);
        o->source = path;
        if ((rv = check_forks(s, path, i, o)))
            return rv;
    }
    return H2B_OK;
}

int h2b_gate_set_add(struct h2b_gate_set *s, const char *path, const struct h2b_results_doc *doc)
{
    int rv = add_source(s, path, doc, NULL);
    return rv == H2B_OK ? add_entries(s, doc) : rv;
}

int h2b_gate_set_take(struct h2b_gate_set *s, const char *path, struct h2b_results_doc *doc)
{
    int rv = add_source(s, path, doc, doc);
    if (rv != H2B_OK) {
        h2b_results_doc_del(doc);
        return rv;
    }
    return add_entries(s, doc);
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
            rv = h2b_gate_set_take(s, paths[i], doc);
    }
    if (rv != H2B_OK) {
        h2b_gate_set_del(s);
        return rv;
    }
    *out = s;
    return H2B_OK;
}
