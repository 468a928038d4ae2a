/*
 * gate_propose.c - proposed ceilings from runs (gate.h): exact counts as observed, p99 with
 * headroom over the worst robust p99, instructions when measured, each with its why line; and
 * the proposal workflow of `h2bench gate --propose` (results files and fresh runner runs).
 *
 * Approach: a proposal is data for a human to review, never written over the ceilings file;
 * medians over the runs become baselines. Rejected: proposing from one run only (the p99
 * headroom would rest on a single fork set).
 */
#include "gates/gate.h"
#include "gates/gate_int.h"
#include "core/buf.h"
#include "core/error.h"
#include "core/clock.h"
#include "core/stats.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The observation of name in run s (the first, if a file repeats a name), or NULL. */
static const struct h2b_gate_obs *find_obs(const struct h2b_gate_set *s, const char *name)
{
    for (size_t i = 0; i < s->count; i++) {
        if (strcmp(s->obs[i].e->name, name) == 0)
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
        tmp[i] = m == BASE_P50    ? obs[i]->e->p50_ns
                 : m == BASE_P999 ? obs[i]->e->p999_ns
                                  : h2b_gate_obs_value(obs[i], (enum h2b_metric)m);
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
        if (!h2b_gate_obs_has(obs[i], (enum h2b_metric)m))
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
    /* the why lines read in the singular for one run: "in 1 run", not "in each of 1 runs" */
    const bool one = n == 1;
    const char *runs_s = one ? "" : "s", *each_of = one ? "" : "each of ";
    bool flagged = false; /* the runner saw forks or repeats disagree */
    for (size_t i = 0; i < n; i++)
        flagged = flagged || h2b_gate_obs_nondeterministic(obs[i]);
    for (int m = H2B_METRIC_BYTES_PER_OP; m <= H2B_METRIC_ALLOCS_PER_OP; m++) {
        if (!all_have(obs, n, m))
            continue; /* not measured (sanitizer build, counting unavailable): no ceiling */
        bool varies;
        double lowest, hi = h2b__gate_exact_value(obs, n, m, &varies, &lowest);
        if (varies || flagged) {
            /* Amortised growth (a buffer doubling every k ops) makes the ratio wobble in its
             * decimals. The next whole unit above the largest value still fails one more byte or
             * allocation per op, and never fails on the wobble. */
            snprintf(why, sizeof(why),
                     "%s: NOT deterministic (the runner flags it): %.10g to %.10g in %zu run%s%s; "
                     "ceiling rounded up to the next whole %s, so one more per op still fails; %s",
                     date, lowest, hi, n, runs_s, partial,
                     m == H2B_METRIC_BYTES_PER_OP ? "byte" : "allocation", tool);
            hi = floor(hi) + 1;
        } else {
            snprintf(why, sizeof(why), "%s: exact, %.15g in %s%zu run%s%s; %s", date, hi, each_of,
                     n, runs_s, partial, tool);
        }
        rv = h2b_ceilings_set(b, m, hi, why);
        if (rv != H2B_OK)
            return rv;
    }
    double fewest = INFINITY; /* samples per fork, in the sparsest run */
    for (size_t i = 0; i < n; i++) {
        int forks = h2b_gate_obs_forks(obs[i]);
        double per_fork = obs[i]->e->samples / (forks > 0 ? forks : 1);
        fewest = per_fork < fewest ? per_fork : fewest; /* NAN (unknown) never wins */
    }
    if (fewest < H2B_GATE_MIN_P99_SAMPLES) {
        snprintf(why, sizeof(why),
                 "p99 not gated: %.0f samples per fork in %s%zu run%s, a p99 needs "
                 "%d (100 above it); at this operation's length its tail is scheduler noise",
                 fewest, one ? "" : "the sparsest of ", n, runs_s, H2B_GATE_MIN_P99_SAMPLES);
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
                 "%s: %s%zu run%s best-fork p99 (%.0f..%.0f ns) + %.0f%% headroom%s; %s", date,
                 one ? "the " : "worst of ", n, one ? "'s" : "s'", best_run, worst,
                 opt->headroom * 100.0, partial, tool);
        rv = h2b_ceilings_set(b, H2B_METRIC_P99_NS, ceil(worst * (1.0 + opt->headroom)), why);
        if (rv != H2B_OK)
            return rv;
    }
    if (all_have(obs, n, H2B_METRIC_INSTRUCTIONS_PER_OP)) {
        bool varies;
        double lowest,
            hi = h2b__gate_exact_value(obs, n, H2B_METRIC_INSTRUCTIONS_PER_OP, &varies, &lowest);
        const char *src =
            obs[0]->e->instructions_source ? obs[0]->e->instructions_source : "counters";
        if (varies)
            snprintf(why, sizeof(why),
                     "%s: %s instructions/op NOT identical over %zu runs (%.15g..%.15g): the "
                     "largest; %s",
                     date, src, n, lowest, hi, tool);
        else
            snprintf(why, sizeof(why),
                     "%s: exact, %s counts %.15g in %s%zu run%s (deterministic for one "
                     "binary and its libraries, so no tolerance: any increase fails; another "
                     "build is reported not applicable); %s",
                     date, src, hi, each_of, n, runs_s, tool);
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
            const char *name = runs[r]->obs[i].e->name;
            if (!h2b_ceilings_find(c, name))
                rv = propose_bench(c, name, runs, count, opt, date, tmp);
        }
    }
    /* where and with which build the runs were measured: p99 ceilings hold only there */
    if (rv == H2B_OK) {
        /* a copy: the proposal outlives the runs it came from */
        struct h2b_fingerprint measured;
        h2b_gate_set_fingerprint(runs[0], &measured);
        rv = h2b_fingerprint_copy(&c->fingerprint, &measured);
    }
    for (size_t i = 0; rv == H2B_OK && i < runs[0]->count && !c->fingerprint.instructions_source;
         i++) {
        const char *src = runs[0]->obs[i].e->instructions_source;
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

int h2b_gate_propose_from(const char *const *paths, size_t n, unsigned runs,
                          const struct h2b_gate_runner *runner, const char *filter,
                          const struct h2b_gate_propose_options *opt, struct h2b_ceilings **out,
                          struct h2b_diag *diag)
{
    memset(diag, 0, sizeof(*diag));
    if (n + runs == 0) {
        snprintf(diag->message, sizeof(diag->message), "nothing to propose from");
        return H2B_ERR_INVAL;
    }
    struct h2b_gate_set **sets = calloc(n + runs, sizeof(*sets));
    size_t n_sets = 0;
    char tmpdir[] = "/tmp/h2b-propose-XXXXXX";
    bool made_tmp = false;
    int rv = sets ? H2B_OK : H2B_ERR_NOMEM;
    for (size_t i = 0; i < n && rv == H2B_OK; i++) {
        if ((rv = h2b_gate_set_load(&paths[i], 1, &sets[n_sets], diag)) == H2B_OK)
            n_sets++;
    }
    if (rv == H2B_OK && runs) {
        if (!mkdtemp(tmpdir)) {
            snprintf(diag->message, sizeof(diag->message), "mkdtemp %s: %s", tmpdir,
                     strerror(errno));
            rv = H2B_ERR_SYS;
        }
        made_tmp = rv == H2B_OK;
    }
    for (unsigned i = 0; i < runs && rv == H2B_OK; i++) {
        char path[sizeof(tmpdir) + 32];
        snprintf(path, sizeof(path), "%s/run-%u.json", tmpdir, i + 1);
        h2b_progress(opt->progress, opt->progress_arg, "proposal run %u of %u", i + 1, runs);
        rv = h2b_gate_runner_run(runner, filter, path, diag);
        if (rv == H2B_OK) {
            const char *p = path;
            rv = h2b_gate_set_load(&p, 1, &sets[n_sets], diag);
        }
        unlink(path);
        if (rv != H2B_OK) {
            char why[sizeof(diag->message)];
            memcpy(why, diag->message, sizeof(why));
            snprintf(diag->message, sizeof(diag->message), "proposal run %u failed: %.400s", i + 1,
                     why[0] ? why : h2b_strerror(rv));
        } else {
            n_sets++;
        }
    }
    for (size_t i = 0; i < n_sets && rv == H2B_OK; i++) {
        if (sets[i]->invalid) {
            snprintf(diag->message, sizeof(diag->message), "cannot propose ceilings: %.450s",
                     sets[i]->invalid);
            rv = H2B_ERR_UNSUPPORTED;
        }
    }
    if (rv == H2B_OK)
        rv = h2b_gate_propose((const struct h2b_gate_set *const *)sets, n_sets, opt, out);
    if (made_tmp)
        rmdir(tmpdir);
    for (size_t i = 0; sets && i < n_sets; i++)
        h2b_gate_set_del(sets[i]);
    free(sets);
    return rv;
}
