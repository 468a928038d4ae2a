/*
 * calibrate.c - `h2bench gate --calibrate N`: false-alarm and detection rates per gate row
 * (calibrate.h).
 *
 * Approach. A trial is the real measurement, spawned as CI spawns it (`h2bench micro`, `h2bench
 * run SCENARIO`) or run through the same library call (`h2b_ab_run`), then judged by the same
 * gate functions CI uses (h2b_gate_check with its confirmation re-runs, h2b_cell_gates_check,
 * the ab verdict). Each row's colour in each trial is tallied. First N A/A trials of the whole
 * selection: their rows define the units (benchmarks, cells) and so where injections go. Then,
 * per injection and per unit, N trials of that unit alone (--filter) with the regression in its
 * environment (H2B_INJECT_*, harness/micro/inject.c, servers/h2ref/handlers.c): one regression
 * at a time, so a row's detection rate is about its own benchmark's regression. The cost of a
 * unit's trials is the cost of that unit in a whole-suite run, so the total equals N runs of the
 * suite per injection (plus a process start per unit).
 *
 * What cannot be injected is said, per unit, and never counted: a scenario's command, peer or
 * URL target (h2bench cannot change the user's server), instructions without --callgrind or
 * without an instruction ceiling to take 1 % of. A/A counts an INVALID row as red (CI fails with
 * exit 3 as surely as with 1); detection counts only FAIL.
 *
 * Rejected: injecting every benchmark at once (one run per trial): one benchmark's regression
 * would raise another's shared costs, and inject.c wraps one instance per variable; simulating
 * trials from a model of the noise (CodSpeed's approach): the point is a measured rate.
 */
#include "gates/calibrate.h"
#include "core/check.h"
#include "gates/ab.h"
#include "gates/abrun.h"
#include "gates/cells.h"
#include "gates/ceilings.h"
#include "gates/gate.h"
#include "gates/gate_int.h"
#include "core/buf.h"
#include "core/clock.h"
#include "core/error.h"
#include "core/fs.h"
#include "core/results.h"
#include "core/stats.h"
#include "run/scenario.h"

#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern char **environ;

#define Z95 1.96
#define MAX_EXTRA 3

static const struct {
    const char *key, *label;
} kinds[H2B_CALIB_NINJECT] = {
    {"aa", "A/A false alarms"}, {"alloc", "+1 alloc"},    {"instr", "+1 % instr"},
    {"slow", "2x time"},        {"slow25", "+25 % time"},
};

const char *h2b_calib_inject_key(enum h2b_calib_inject i)
{
    return kinds[i].key;
}

const char *h2b_calib_inject_label(enum h2b_calib_inject i)
{
    return kinds[i].label;
}

int h2b_calib_inject_from_key(const char *key)
{
    for (int i = 0; i < H2B_CALIB_NINJECT; i++) {
        if (strcmp(kinds[i].key, key) == 0)
            return i;
    }
    return -1;
}

enum outcome { PASS, HIT, INVALID, NA, SKIP };

struct ctx {
    const struct h2b_calib_options *opt;
    struct h2b_ceilings *c;
    struct h2b_cell_gates *g;
    struct h2b_scenario *sc;
    struct h2b_calib_report *r;
    struct h2b_diag *d;
    char exe[PATH_MAX];
    char dir[64];
    unsigned seq;
};

/* ---- tallies ---- */

static struct h2b_calib_row *find_row(struct h2b_calib_report *r, const char *gate)
{
    for (size_t i = 0; i < r->count; i++) {
        if (strcmp(r->rows[i].gate, gate) == 0)
            return &r->rows[i];
    }
    return NULL;
}

static int record(struct ctx *x, int kind, const char *gate, const char *unit, enum outcome o,
                  const char *evidence, const char *only_unit)
{
    if (o == SKIP || (only_unit && strcmp(unit, only_unit) != 0))
        return H2B_OK;
    struct h2b_calib_report *r = x->r;
    struct h2b_calib_row *row = find_row(r, gate);
    if (!row) {
        struct h2b_calib_row *rows = realloc(r->rows, (r->count + 1) * sizeof(*rows));
        if (!rows)
            return H2B_ERR_NOMEM;
        r->rows = rows;
        row = &rows[r->count];
        memset(row, 0, sizeof(*row));
        row->gate = strdup(gate);
        row->unit = strdup(unit);
        if (!row->gate || !row->unit) {
            free(row->gate);
            free(row->unit);
            return H2B_ERR_NOMEM;
        }
        r->count++;
    }
    H2B_ASSERT(kind >= 0 && kind < H2B_CALIB_NINJECT);
    struct h2b_calib_count *k = &row->c[kind];
    k->trials++;
    k->hits += o == HIT;
    k->invalid += o == INVALID;
    k->na += o == NA;
    if (o == NA && !row->gate_na && evidence && !(row->gate_na = strdup(evidence)))
        return H2B_ERR_NOMEM;
    return H2B_OK;
}

static enum outcome gate_outcome(const struct h2b_gate_row *row)
{
    switch (row->status) {
    case H2B_GATE_PASS:
        return PASS;
    case H2B_GATE_FAIL:
        return HIT;
    case H2B_GATE_INVALID:
        return INVALID;
    case H2B_GATE_NA:
        return NA;
    default: /* MISSING: outside this trial's selection; UNGATED: no gate */
        return SKIP;
    }
}

/* The gate's rows of one trial, tallied under kind (only unit's when only_unit is set). */
static int record_gate(struct ctx *x, int kind, const struct h2b_gate_report *gr,
                       const char *only_unit)
{
    for (size_t i = 0; i < gr->count; i++) {
        const struct h2b_gate_row *row = &gr->rows[i];
        char gate[400], unit[300];
        if (row->metric >= 0) {
            snprintf(gate, sizeof(gate), "%s %s", row->bench, h2b_metric_key(row->metric));
            snprintf(unit, sizeof(unit), "%s", row->bench);
        } else {
            /* cells.c names a cell's row "KEY METRIC" */
            const char *sp = strrchr(row->bench, ' ');
            if (!sp)
                continue;
            snprintf(gate, sizeof(gate), "%s", row->bench);
            snprintf(unit, sizeof(unit), "%.*s", (int)(sp - row->bench), row->bench);
        }
        int rv = record(x, kind, gate, unit, gate_outcome(row), row->evidence, only_unit);
        if (rv != H2B_OK)
            return rv;
    }
    return H2B_OK;
}

static int record_ab(struct ctx *x, int kind, const struct h2b_ab_report *ar, const char *only_unit)
{
    for (size_t i = 0; i < ar->count; i++) {
        const struct h2b_ab_row *row = &ar->rows[i];
        if (!row->metric)
            continue;
        char gate[400];
        snprintf(gate, sizeof(gate), "%s %s", row->bench, row->metric);
        enum outcome o = row->failing ? HIT : row->status == H2B_AB_NA ? NA : PASS;
        int rv = record(x, kind, gate, row->bench, o, row->note, only_unit);
        if (rv != H2B_OK)
            return rv;
    }
    return H2B_OK;
}

/* ---- one trial ---- */

/* Our environment without any H2B_INJECT_* variable, plus extra (NULL-terminated). The array
 * is malloc'd, its strings borrowed. */
static char **env_with(char *const *extra)
{
    size_t n = 0, ne = 0;
    while (environ[n])
        n++;
    while (extra && extra[ne])
        ne++;
    char **env = calloc(n + ne + 1, sizeof(*env));
    if (!env)
        return NULL;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (strncmp(environ[i], "H2B_INJECT_", 11) != 0)
            env[k++] = environ[i];
    }
    for (size_t i = 0; i < ne; i++)
        env[k++] = extra[i];
    env[k] = NULL;
    return env;
}

/* An anchored --filter selecting exactly unit (micro, ab), malloc'd. */
static char *unit_filter(const char *unit)
{
    struct h2b_buf b = {0};
    char *out = NULL;
    h2b__gate_filter_for(&b, &unit, 1);
    return h2b_buf_finish(&b, &out) == H2B_OK ? out : NULL;
}

/* The trial's results as a gate set in *s; a set the gate cannot judge (a sanitizer or
 * non-Release build) stops the calibration. */
static int load_gated(struct ctx *x, const char *path, struct h2b_gate_set **s)
{
    const char *paths[] = {path};
    int rv = h2b_gate_set_load(paths, 1, s, x->d);
    if (rv == H2B_OK && (*s)->invalid) {
        snprintf(x->d->message, sizeof(x->d->message), "%.200s cannot be gated: %.280s", path,
                 (*s)->invalid);
        rv = H2B_ERR_UNSUPPORTED;
    }
    return rv;
}

static int trial_micro(struct ctx *x, int kind, const char *unit, char *const *envp)
{
    const struct h2b_calib_options *o = x->opt;
    char path[128];
    snprintf(path, sizeof(path), "%s/trial-%u.json", x->dir, ++x->seq);
    char *filter = unit ? unit_filter(unit) : NULL;
    if (unit && !filter)
        return H2B_ERR_NOMEM;
    const char *f = unit ? filter : o->filter;
    struct h2b_gate_runner runner = {.path = x->exe,
                                     .profile = o->profile,
                                     .cpu = o->cpu,
                                     .callgrind = o->callgrind,
                                     .envp = envp,
                                     .quiet = true};
    struct h2b_gate_set *s = NULL;
    struct h2b_gate_report *gr = NULL;
    regex_t re;
    bool have_re = false;
    int rv = h2b_gate_runner_run(&runner, f, path, x->d);
    if (rv != H2B_OK)
        goto out;
    if ((rv = load_gated(x, path, &s)) != H2B_OK)
        goto out;
    if (f) {
        if (regcomp(&re, f, REG_EXTENDED | REG_NOSUB) != 0) {
            snprintf(x->d->message, sizeof(x->d->message), "--filter: not a regular expression");
            rv = H2B_ERR_INVAL;
            goto out;
        }
        have_re = true;
    }
    struct h2b_gate_options gopt = {.confirm = o->confirm,
                                    .rerun = h2b_gate_runner_rerun,
                                    .rerun_arg = &runner,
                                    .filter = have_re ? &re : NULL};
    if ((rv = h2b_gate_check(x->c, s, &gopt, &gr)) != H2B_OK)
        goto out;
    rv = record_gate(x, kind, gr, unit);
out:
    if (have_re)
        regfree(&re);
    h2b_gate_report_del(gr);
    h2b_gate_set_del(s);
    free(filter);
    unlink(path);
    return rv;
}

static int trial_scenario(struct ctx *x, int kind, const char *unit, char *const *envp)
{
    const struct h2b_calib_options *o = x->opt;
    char path[128];
    snprintf(path, sizeof(path), "%s/trial-%u.json", x->dir, ++x->seq);
    const char *f = unit ? unit : o->filter;
    char *argv[10] = {x->exe, "run", (char *)o->scenario, "--no-progress", "--out", path};
    int argc = 6;
    if (f) {
        argv[argc++] = "--filter";
        argv[argc++] = (char *)f;
    }
    argv[argc] = NULL;
    struct h2b_gate_set *s = NULL;
    struct h2b_gate_report *gr = NULL;
    int rv = h2b__gate_spawn(argv, envp, true, x->d);
    if (rv != H2B_OK)
        goto out;
    if ((rv = load_gated(x, path, &s)) != H2B_OK)
        goto out;
    struct h2b_gate_options gopt = {0};
    if ((rv = h2b_gate_check(x->c, s, &gopt, &gr)) != H2B_OK)
        goto out;
    /* the cells are judged on the document the set loaded (one read of the file) */
    if (x->g) {
        rv = h2b_cell_gates_check(x->g, s->docs, (const char *const *)s->sources, s->n_sources,
                                  &x->c->fingerprint, false, gr);
        if (rv != H2B_OK)
            goto out;
    }
    rv = record_gate(x, kind, gr, unit);
out:
    h2b_gate_report_del(gr);
    h2b_gate_set_del(s);
    unlink(path);
    return rv;
}

static int trial_ab(struct ctx *x, int kind, const char *unit, char *const *extra)
{
    const struct h2b_calib_options *o = x->opt;
    char out_dir[128];
    snprintf(out_dir, sizeof(out_dir), "%s/ab-%u", x->dir, ++x->seq);
    char *filter = unit ? unit_filter(unit) : NULL;
    if (unit && !filter)
        return H2B_ERR_NOMEM;
    int cpu = o->cpu ? (int)strtol(o->cpu, NULL, 10) : 0;
    struct h2b_ab_run_options ro = {.base = o->base ? o->base : "HEAD",
                                    .build_cmd = o->build_cmd,
                                    .bench = o->bench,
                                    .work_dir = o->work_dir,
                                    .out_dir = out_dir,
                                    .filter = unit ? filter : o->filter,
                                    .forks = o->forks ? o->forks : 10,
                                    .warmup = "20ms",
                                    .time = "50ms",
                                    .epochs = "5",
                                    .cpu = cpu,
                                    .callgrind = o->callgrind,
                                    .head_env = extra};
    struct h2b_ab_options judge = {.threshold = 0.10, .confidence = 0.99};
    struct h2b_ab_report *ar = NULL;
    int rv = h2b_ab_run(&ro, &judge, &ar, x->d);
    if (rv == H2B_OK && ar->invalid_reason) {
        snprintf(x->d->message, sizeof(x->d->message), "ab cannot judge: %.400s",
                 ar->invalid_reason);
        rv = H2B_ERR_UNSUPPORTED;
    }
    if (rv == H2B_OK)
        rv = record_ab(x, kind, ar, unit);
    h2b_ab_report_del(ar);
    h2b_fs_remove_tree(out_dir);
    free(filter);
    return rv;
}

static int trial(struct ctx *x, int kind, const char *unit, char *const *extra)
{
    if (x->opt->measure == H2B_CALIB_AB)
        return trial_ab(x, kind, unit, extra);
    char **envp = env_with(extra);
    if (!envp)
        return H2B_ERR_NOMEM;
    int rv = x->opt->measure == H2B_CALIB_MICRO ? trial_micro(x, kind, unit, envp)
                                                : trial_scenario(x, kind, unit, envp);
    free(envp);
    return rv;
}

/* ---- injections ---- */

struct inject_env {
    char v[MAX_EXTRA][320];
    char *list[MAX_EXTRA + 1];
};

/* The instruction ceiling of unit, or NAN. */
static double instr_ceiling(const struct ctx *x, const char *unit)
{
    if (x->opt->measure == H2B_CALIB_SCENARIO) {
        for (size_t i = 0; x->g && i < x->g->count; i++) {
            const struct h2b_cell_ceiling *m = &x->g->cells[i].m[H2B_CELL_INSTRUCTIONS];
            if (strcmp(x->g->cells[i].key, unit) == 0 && m->set)
                return m->max;
        }
        return NAN;
    }
    const struct h2b_ceiling_bench *b = x->c ? h2b_ceilings_find(x->c, unit) : NULL;
    if (!b || !b->metric[H2B_METRIC_INSTRUCTIONS_PER_OP].set)
        return NAN;
    return b->metric[H2B_METRIC_INSTRUCTIONS_PER_OP].max;
}

/* Why kind cannot be injected into unit (a malloc'd sentence), or NULL with e filled. */
static char *inject_for(const struct ctx *x, int kind, const char *unit, struct inject_env *e)
{
    char why[300] = "";
    const char *name = unit;
    if (x->opt->measure == H2B_CALIB_SCENARIO) {
        const struct h2b_cell_gate *cg = NULL;
        for (size_t i = 0; x->g && i < x->g->count; i++) {
            if (strcmp(x->g->cells[i].key, unit) == 0)
                cg = &x->g->cells[i];
        }
        int t = cg ? h2b_scenario_find_target(x->sc, cg->target) : -1;
        if (t < 0)
            snprintf(why, sizeof(why), "target not in %s", x->opt->scenario);
        else if (x->sc->targets[t].kind == H2B_TARGET_COMMAND)
            snprintf(why, sizeof(why),
                     "a command target: h2bench cannot inject a regression into your server");
        else if (x->sc->targets[t].kind != H2B_TARGET_BUNDLED)
            snprintf(why, sizeof(why), "not h2bench's own server: nothing to inject into");
        name = "h2ref";
    }
    double ceil_instr = NAN;
    if (!why[0] && kind == H2B_CALIB_INSTR) {
        ceil_instr = instr_ceiling(x, unit);
        if (x->opt->measure != H2B_CALIB_SCENARIO && !x->opt->callgrind)
            snprintf(why, sizeof(why), "instructions are counted only with --callgrind");
        else if (isnan(ceil_instr))
            snprintf(why, sizeof(why), "no instruction ceiling to take 1 %% of");
    }
    if (why[0])
        return strdup(why);
    memset(e, 0, sizeof(*e));
    int n = 0;
    switch (kind) {
    case H2B_CALIB_ALLOC:
        snprintf(e->v[n++], sizeof(e->v[0]), "H2B_INJECT_ALLOC=%s", name);
        break;
    case H2B_CALIB_INSTR:
        snprintf(e->v[n++], sizeof(e->v[0]), "H2B_INJECT_INSTR=%s", name);
        snprintf(e->v[n++], sizeof(e->v[0]), "H2B_INJECT_INSTR_COUNT=%.0f",
                 ceil(ceil_instr * 0.01));
        break;
    case H2B_CALIB_SLOW:
        snprintf(e->v[n++], sizeof(e->v[0]), "H2B_INJECT_SLOW=%s", name);
        break;
    case H2B_CALIB_SLOW25:
        snprintf(e->v[n++], sizeof(e->v[0]), "H2B_INJECT_SLOW=%s", name);
        snprintf(e->v[n++], sizeof(e->v[0]), "H2B_INJECT_SLOW_PERCENT=25");
        break;
    default:
        break;
    }
    for (int i = 0; i < n; i++)
        e->list[i] = e->v[i];
    e->list[n] = NULL;
    return NULL;
}

/* Marks every row of unit: kind is not applicable there, for why (copied). */
static int set_na(struct h2b_calib_report *r, int kind, const char *unit, const char *why)
{
    for (size_t i = 0; i < r->count; i++) {
        if (strcmp(r->rows[i].unit, unit) != 0 || r->rows[i].na[kind])
            continue;
        if (!(r->rows[i].na[kind] = strdup(why)))
            return H2B_ERR_NOMEM;
    }
    return H2B_OK;
}

static int run_kind(struct ctx *x, int kind)
{
    struct h2b_calib_report *r = x->r;
    uint64_t t0 = h2b_clock_now_ns();
    int rv = H2B_OK;
    r->ran[kind] = true;
    if (kind == H2B_CALIB_AA) {
        for (unsigned t = 0; t < r->aa_trials && rv == H2B_OK; t++) {
            h2b_progress(x->opt->progress, x->opt->progress_arg, "%s: trial %u of %u",
                         kinds[kind].key, t + 1, r->aa_trials);
            rv = trial(x, kind, NULL, NULL);
            r->runs[kind]++;
        }
        goto out;
    }
    /* The units, in the order of the rows the A/A trials found. */
    size_t nrows = r->count;
    for (size_t i = 0; i < nrows && rv == H2B_OK; i++) {
        const char *unit = r->rows[i].unit;
        bool seen = false;
        for (size_t j = 0; j < i && !seen; j++)
            seen = strcmp(r->rows[j].unit, unit) == 0;
        if (seen)
            continue;
        struct inject_env e;
        char *why = inject_for(x, kind, unit, &e);
        if (why) {
            rv = set_na(r, kind, unit, why);
            free(why);
            continue;
        }
        for (unsigned t = 0; t < r->trials && rv == H2B_OK; t++) {
            h2b_progress(x->opt->progress, x->opt->progress_arg, "%s %s: trial %u of %u (%s%s%s)",
                         kinds[kind].key, unit, t + 1, r->trials, e.list[0], e.list[1] ? " " : "",
                         e.list[1] ? e.list[1] : "");
            rv = trial(x, kind, unit, e.list);
            r->runs[kind]++;
        }
    }
out:
    r->seconds[kind] = (double)(h2b_clock_now_ns() - t0) / 1e9;
    return rv;
}

/* ---- setup ---- */

static void keep_first(void *arg, const struct h2b_diag *d)
{
    struct h2b_diag *out = arg;
    if (!out->message[0])
        *out = *d;
}

static int load_scenario(struct ctx *x)
{
    json_t *doc = NULL;
    char *text = NULL;
    int rv = h2b_json_load(x->opt->scenario, &doc, &text, x->d);
    if (rv == H2B_OK) {
        struct h2b_json_src src = {x->opt->scenario, text};
        rv = h2b_scenario_load(doc, &src, NULL, &x->sc, x->d);
    }
    json_decref(doc);
    free(text);
    return rv;
}

static int describe(struct ctx *x)
{
    const struct h2b_calib_options *o = x->opt;
    struct h2b_buf b = {0};
    if (o->measure == H2B_CALIB_MICRO)
        h2b_buf_printf(&b, "h2bench micro --profile %s%s%s%s", o->profile ? o->profile : "ci",
                       o->callgrind ? " --callgrind" : "", o->cpu ? " --cpu " : "",
                       o->cpu ? o->cpu : "");
    else if (o->measure == H2B_CALIB_SCENARIO)
        h2b_buf_printf(&b, "h2bench run %s", o->scenario);
    else
        h2b_buf_printf(&b, "h2bench ab --base %s --forks %u%s%s%s", o->base ? o->base : "HEAD",
                       o->forks ? o->forks : 10, o->callgrind ? " --callgrind" : "",
                       o->bench ? " --bench " : "", o->bench ? o->bench : "");
    if (o->filter)
        h2b_buf_printf(&b, " --filter '%s'", o->filter);
    return h2b_buf_finish(&b, &x->r->command);
}

static int prepare(struct ctx *x)
{
    const struct h2b_calib_options *o = x->opt;
    struct h2b_diag *d = x->d;
    if (o->trials == 0) {
        snprintf(d->message, sizeof(d->message), "a calibration needs at least one trial");
        return H2B_ERR_INVAL;
    }
    if (!o->ceilings && o->measure != H2B_CALIB_AB) {
        snprintf(d->message, sizeof(d->message), "a calibration needs the ceilings file");
        return H2B_ERR_INVAL;
    }
    if (o->measure == H2B_CALIB_SCENARIO && !o->scenario) {
        snprintf(d->message, sizeof(d->message), "a scenario calibration needs the scenario");
        return H2B_ERR_INVAL;
    }
    if ((o->inject & (1u << H2B_CALIB_SLOW25)) && o->measure != H2B_CALIB_AB) {
        snprintf(d->message, sizeof(d->message),
                 "slow25 (+25 %% time) is calibrated with ab only: an absolute p99 ceiling "
                 "is not meant to see it");
        return H2B_ERR_INVAL;
    }
    int rv;
    if (o->ceilings) {
        struct h2b_diag first = {0};
        rv = h2b_ceilings_load(o->ceilings, &x->c, keep_first, &first);
        if (rv != H2B_OK) {
            *d = first;
            return rv;
        }
        if ((rv = h2b_cell_gates_load(o->ceilings, &x->g, d)) != H2B_OK)
            return rv;
        if (o->measure == H2B_CALIB_MICRO && !o->callgrind) {
            /* Without --callgrind the instruction rows could only be invalid (unmeasured
             * counter): they are left out, and the report says so for +1 % instructions. */
            for (size_t i = 0; i < x->c->count; i++)
                x->c->benches[i].metric[H2B_METRIC_INSTRUCTIONS_PER_OP].set = false;
        }
    }
    if (o->measure == H2B_CALIB_SCENARIO && (rv = load_scenario(x)) != H2B_OK)
        return rv;
    if ((rv = h2b_gate_runner_path(&(struct h2b_gate_runner){.path = o->runner}, x->exe,
                                   sizeof(x->exe))) != H2B_OK) {
        snprintf(d->message, sizeof(d->message), "cannot find the h2bench to run");
        return rv;
    }
    snprintf(x->dir, sizeof(x->dir), "/tmp/h2b-calibrate-XXXXXX");
    if (!mkdtemp(x->dir)) {
        snprintf(d->message, sizeof(d->message), "cannot create a temporary directory");
        x->dir[0] = 0;
        return H2B_ERR_SYS;
    }
    return H2B_OK;
}

int h2b_calib_run(const struct h2b_calib_options *opt, struct h2b_calib_report **out,
                  struct h2b_diag *diag)
{
    memset(diag, 0, sizeof(*diag));
    struct ctx x = {.opt = opt, .d = diag};
    struct h2b_calib_report *r = calloc(1, sizeof(*r));
    if (!r)
        return H2B_ERR_NOMEM;
    x.r = r;
    r->measure = opt->measure;
    r->trials = opt->trials;
    r->aa_trials = opt->aa_trials ? opt->aa_trials : opt->trials;
    int rv = prepare(&x);
    if (rv == H2B_OK)
        rv = describe(&x);
    if (rv == H2B_OK && opt->ceilings && !(r->ceilings = strdup(opt->ceilings)))
        rv = H2B_ERR_NOMEM;
    unsigned mask = opt->inject ? opt->inject | 1u : ~0u;
    if (opt->measure != H2B_CALIB_AB && !opt->inject)
        mask &= ~(1u << H2B_CALIB_SLOW25);
    bool measured = false; /* rv, if an error, came from a measurement */
    for (int k = 0; k < H2B_CALIB_NINJECT && rv == H2B_OK; k++) {
        if (mask & (1u << k)) {
            rv = run_kind(&x, k);
            measured = true;
        }
    }
    if (rv == H2B_OK && r->count == 0) {
        snprintf(diag->message, sizeof(diag->message),
                 "the measurement produced no gate row: nothing of %s was measured",
                 opt->ceilings ? opt->ceilings : "the selection");
        rv = H2B_ERR_INVAL;
    }
    if (x.dir[0])
        h2b_fs_remove_tree(x.dir);
    h2b_scenario_del(x.sc);
    h2b_cell_gates_del(x.g);
    h2b_ceilings_del(x.c);
    if (rv != H2B_OK && measured && r->count > 0) {
        /* a measurement failed after trials were tallied: hand back what they measured */
        r->stopped = strdup(diag->message[0] ? diag->message : h2b_strerror(rv));
        if (r->stopped) {
            *out = r;
            return rv;
        }
    }
    if (rv != H2B_OK) {
        h2b_calib_report_del(r);
        return rv;
    }
    *out = r;
    return H2B_OK;
}

void h2b_calib_report_del(struct h2b_calib_report *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->count; i++) {
        free(r->rows[i].gate);
        free(r->rows[i].unit);
        free(r->rows[i].gate_na);
        for (int k = 0; k < H2B_CALIB_NINJECT; k++)
            free(r->rows[i].na[k]);
    }
    free(r->rows);
    free(r->command);
    free(r->ceilings);
    free(r->stopped);
    free(r);
}

/* ---- rendering ---- */

/* k and n of a row's kind: A/A counts invalid trials as red; not-applicable trials are left out
 * of n. */
static void rate_of(const struct h2b_calib_row *row, int kind, uint32_t *k, uint32_t *n)
{
    const struct h2b_calib_count *c = &row->c[kind];
    *n = c->trials - c->na;
    *k = c->hits + (kind == H2B_CALIB_AA ? c->invalid : 0);
}

/* One table cell: "0/20 0% [0.0, 16.1]", "n/a", "-" (not run). */
static void fmt_cell(char *buf, size_t size, const struct h2b_calib_report *r,
                     const struct h2b_calib_row *row, int kind)
{
    uint32_t k, n;
    rate_of(row, kind, &k, &n);
    if (!r->ran[kind]) {
        snprintf(buf, size, "-");
        return;
    }
    if (row->na[kind] || n == 0) {
        snprintf(buf, size, "n/a");
        return;
    }
    double lo, hi;
    h2b_stats_wilson(k, n, Z95, &lo, &hi);
    int len = snprintf(buf, size, "%u/%u %.0f%% [%.1f, %.1f]", k, n, 100.0 * k / n, 100.0 * lo,
                       100.0 * hi);
    uint32_t inv = row->c[kind].invalid;
    if (inv && len > 0 && (size_t)len < size)
        snprintf(buf + len, size - (size_t)len, " (%u invalid)", inv);
}

/* Why a cell is n/a when the gate said so in every trial: its evidence. */
static const char *gate_na(const struct h2b_calib_row *row, int kind)
{
    const struct h2b_calib_count *c = &row->c[kind];
    if (row->na[kind] || !c->trials || c->na != c->trials)
        return NULL;
    return row->gate_na ? row->gate_na : "the gate says not applicable";
}

/* The notes under a table: each injection that a unit cannot take, once per unit; each row the
 * gate itself calls not applicable, once per row. */
static void render_notes(struct h2b_buf *b, const struct h2b_calib_report *r, bool md)
{
    bool any = false;
    for (size_t i = 0; i < r->count; i++) {
        const struct h2b_calib_row *row = &r->rows[i];
        for (int k = -1; k < H2B_CALIB_NINJECT; k++) {
            const char *why = NULL, *what = NULL, *label = NULL;
            if (k < 0) {
                for (int j = 0; j < H2B_CALIB_NINJECT && !why; j++)
                    why = r->ran[j] ? gate_na(row, j) : NULL;
                what = row->gate;
                label = "the gate";
            } else if (r->ran[k] && row->na[k]) {
                bool dup = false;
                for (size_t j = 0; j < i && !dup; j++)
                    dup = strcmp(r->rows[j].unit, row->unit) == 0 && r->rows[j].na[k];
                why = dup ? NULL : row->na[k];
                what = row->unit;
                label = kinds[k].label;
            }
            if (!why)
                continue;
            if (!any)
                h2b_buf_puts(b, md ? "\nNot applicable:\n\n" : "\nnot applicable:\n");
            any = true;
            if (md) {
                h2b_buf_puts(b, "- ");
                h2b_buf_md_code(b, what);
                h2b_buf_printf(b, ", %s: ", label);
                h2b_buf_md(b, why);
                h2b_buf_puts(b, "\n");
            } else {
                h2b_buf_puts(b, "  ");
                h2b_buf_term(b, what);
                h2b_buf_printf(b, ", %s: ", label);
                h2b_buf_term(b, why);
                h2b_buf_puts(b, "\n");
            }
        }
    }
}

static void render_header(struct h2b_buf *b, const struct h2b_calib_report *r, bool md)
{
    h2b_buf_printf(b, "%s%u A/A trials and %u per injection of ",
                   md ? "" : "h2bench gate --calibrate: ", r->aa_trials, r->trials);
    if (md)
        h2b_buf_md_code(b, r->command);
    else
        h2b_buf_term(b, r->command);
    if (r->ceilings) {
        h2b_buf_puts(b, ", gated by ");
        if (md)
            h2b_buf_md_code(b, r->ceilings);
        else
            h2b_buf_term(b, r->ceilings);
    }
    h2b_buf_puts(b, md ? ".\n" : "\n");
    if (r->stopped) {
        h2b_buf_puts(b, md ? "\n**Incomplete:** the calibration stopped when a measurement failed "
                             "(the counts below are the trials that ran): "
                           : "INCOMPLETE: the calibration stopped when a measurement failed "
                             "(the counts below are the trials that ran): ");
        if (md)
            h2b_buf_md(b, r->stopped);
        else
            h2b_buf_term(b, r->stopped);
        h2b_buf_puts(b, md ? "\n\n" : "\n");
    }
    h2b_buf_puts(b, md ? "Each cell: red trials / trials, the rate, and its 95 % Wilson interval "
                         "in %. A/A counts a failing or invalid row (CI red for nothing); "
                         "an injection counts a failing row (the regression caught).\n"
                       : "cells: red trials/trials rate [95% Wilson interval, %]; A/A: false "
                         "alarms (fail or invalid), injections: detections (fail)\n");
    h2b_buf_puts(b, md ? "\n" : "time:");
    for (int k = 0; k < H2B_CALIB_NINJECT && !md; k++) {
        if (r->ran[k])
            h2b_buf_printf(b, " %s %u runs %.0f s;", kinds[k].key, r->runs[k], r->seconds[k]);
    }
    if (!md)
        h2b_buf_puts(b, "\n\n");
}

int h2b_calib_render_table(const struct h2b_calib_report *r, char **out)
{
    struct h2b_buf b = {0};
    char cell[96];
    size_t wg = strlen("gate");
    for (size_t i = 0; i < r->count; i++)
        wg = h2b_buf_width(wg, r->rows[i].gate);
    render_header(&b, r, false);
    int last = 0; /* the last column is not padded: no trailing blanks */
    for (int k = 0; k < H2B_CALIB_NINJECT; k++)
        last = r->ran[k] ? k : last;
    h2b_buf_printf(&b, "%-*s", (int)wg, "gate");
    for (int k = 0; k < H2B_CALIB_NINJECT; k++) {
        if (r->ran[k])
            h2b_buf_printf(&b, "  %-*s", k == last ? 0 : 28, kinds[k].label);
    }
    h2b_buf_puts(&b, "\n");
    for (size_t i = 0; i < r->count; i++) {
        h2b_buf_term(&b, r->rows[i].gate);
        h2b_buf_pad(&b, wg - strlen(r->rows[i].gate));
        for (int k = 0; k < H2B_CALIB_NINJECT; k++) {
            if (!r->ran[k])
                continue;
            fmt_cell(cell, sizeof(cell), r, &r->rows[i], k);
            h2b_buf_printf(&b, "  %-*s", k == last ? 0 : 28, cell);
        }
        h2b_buf_puts(&b, "\n");
    }
    render_notes(&b, r, false);
    return h2b_buf_finish(&b, out);
}

int h2b_calib_render_md(const struct h2b_calib_report *r, char **out)
{
    struct h2b_buf b = {0};
    char cell[96];
    h2b_buf_puts(&b, "## h2bench gate --calibrate\n\n");
    render_header(&b, r, true);
    h2b_buf_puts(&b, "| gate |");
    for (int k = 0; k < H2B_CALIB_NINJECT; k++) {
        if (r->ran[k])
            h2b_buf_printf(&b, " %s |", kinds[k].label);
    }
    h2b_buf_puts(&b, "\n|---|");
    for (int k = 0; k < H2B_CALIB_NINJECT; k++) {
        if (r->ran[k])
            h2b_buf_puts(&b, "---|");
    }
    h2b_buf_puts(&b, "\n");
    for (size_t i = 0; i < r->count; i++) {
        h2b_buf_puts(&b, "| ");
        h2b_buf_md_code(&b, r->rows[i].gate);
        h2b_buf_puts(&b, " |");
        for (int k = 0; k < H2B_CALIB_NINJECT; k++) {
            if (!r->ran[k])
                continue;
            fmt_cell(cell, sizeof(cell), r, &r->rows[i], k);
            h2b_buf_printf(&b, " %s |", cell); /* our own digits and words */
        }
        h2b_buf_puts(&b, "\n");
    }
    render_notes(&b, r, true);
    h2b_buf_puts(&b, "\nTime:");
    for (int k = 0; k < H2B_CALIB_NINJECT; k++) {
        if (r->ran[k])
            h2b_buf_printf(&b, " %s %u measurements in %.0f s;", kinds[k].label, r->runs[k],
                           r->seconds[k]);
    }
    h2b_buf_puts(&b, "\n");
    return h2b_buf_finish(&b, out);
}

static json_t *count_json(const struct h2b_calib_report *r, const struct h2b_calib_row *row,
                          int kind)
{
    const char *why = row->na[kind] ? row->na[kind] : gate_na(row, kind);
    uint32_t k, n;
    rate_of(row, kind, &k, &n);
    if (why || n == 0)
        return json_pack("{s:s?}", "not_applicable", why ? why : "no trial judged the row");
    double lo, hi;
    h2b_stats_wilson(k, n, Z95, &lo, &hi);
    (void)r;
    return json_pack("{s:i, s:i, s:f, s:[f, f], s:i}", "red", (json_int_t)k, "trials",
                     (json_int_t)n, "rate", (double)k / n, "wilson95", lo, hi, "invalid",
                     (json_int_t)row->c[kind].invalid);
}

int h2b_calib_render_json(const struct h2b_calib_report *r, char **out)
{
    static const char *const measures[] = {"micro", "scenario", "ab"};
    json_t *doc = json_pack(
        "{s:s, s:s, s:s, s:s?, s:i, s:i, s:f}", "schema", "h2bench.calibration/1", "measurement",
        measures[r->measure], "command", r->command, "ceilings", r->ceilings, "aa_trials",
        (json_int_t)r->aa_trials, "trials_per_injection", (json_int_t)r->trials, "z", Z95);
    json_t *kj = json_object(), *rows = json_array();
    if (!doc || !kj || !rows)
        goto fail;
    for (int k = 0; k < H2B_CALIB_NINJECT; k++) {
        if (r->ran[k] && json_object_set_new(kj, kinds[k].key,
                                             json_pack("{s:s, s:i, s:f}", "label", kinds[k].label,
                                                       "measurements", (json_int_t)r->runs[k],
                                                       "seconds", r->seconds[k])) != 0)
            goto fail;
    }
    for (size_t i = 0; i < r->count; i++) {
        json_t *row = json_pack("{s:s, s:s}", "gate", r->rows[i].gate, "unit", r->rows[i].unit);
        if (!row || json_array_append_new(rows, row) != 0)
            goto fail;
        for (int k = 0; k < H2B_CALIB_NINJECT; k++) {
            if (r->ran[k] &&
                json_object_set_new(row, kinds[k].key, count_json(r, &r->rows[i], k)) != 0)
                goto fail;
        }
    }
    if (r->stopped && json_object_set_new(doc, "stopped", json_string(r->stopped)) != 0)
        goto fail;
    json_object_set_new(doc, "kinds", kj);
    json_object_set_new(doc, "rows", rows);
    *out = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    json_decref(doc);
    return *out ? H2B_OK : H2B_ERR_NOMEM;
fail:
    json_decref(kj);
    json_decref(rows);
    json_decref(doc);
    return H2B_ERR_NOMEM;
}
