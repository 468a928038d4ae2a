/*
 * gate.h - check microbenchmark results against stored ceilings; propose ceilings from runs.
 *
 * The gate reads `micro` entries of `h2bench.result/1` files into an observation set (views of
 * the results model's entries, in documents the set keeps), evaluates every ceiling of a
 * `struct h2b_ceilings`, confirms p99 breaches by re-running only the breached benchmarks, and
 * renders the verdict as a terminal table, markdown and JUnit XML.
 *
 * Policy (docs/gates.md has the reasoning):
 *   - bytes_per_op, allocs_per_op, instructions_per_op: exact. current > max fails (one byte
 *     more per op fails). With several results files the largest value is checked.
 *   - p99_ns: the best (lowest) p99 among the forks, across all results files, is checked;
 *     noise from other processes only pushes a fork's tail up, so the best fork is the statistic
 *     noise can push up least. A breach is re-measured `confirm` times with only the breached
 *     benchmarks; it fails only if every confirmation breaches too.
 *   - a benchmark named in the ceilings but absent from the results fails; a benchmark with no
 *     ceiling is reported and fails only with strict.
 *   - a measurement that cannot be judged (sanitizer or non-Release build, a ceiling on a counter
 *     that was not measured) makes the verdict "invalid" (exit 3), never a pass.
 *
 * Nothing here is thread-safe; one gate run per thread.
 */
#ifndef H2B_GATES_GATE_H
#define H2B_GATES_GATE_H

#include "gates/ceilings.h"
#include "core/results.h"
#include "core/verdict.h"

#include <jansson.h>
#include <math.h>
#include <regex.h>

#include <stdbool.h>
#include <stddef.h>

/* One benchmark's numbers from one results file: a view of a micro entry of a document that the
 * set keeps alive, never a copy. Every number, string and per-fork array is read from the entry
 * (o->e->name, o->e->note, o->e->error, o->e->instructions_source, o->e->fork_p99_ns, ...);
 * what the gate derives from it (a metric by its enum, the fork count, the robust p99) comes
 * from the accessors below, so nothing is stored twice. Valid while the set lives. */
struct h2b_gate_obs {
    const struct h2b_results_micro *e; /* the entry (owned by a document of the set) */
    const char *source;                /* the results file (owned by the set) */
};

/* The value of metric m (p99_ns: the merged p99; h2b_gate_robust_p99 is what the gate checks);
 * NAN when the entry has it null ("not measured here"). */
static inline double h2b_gate_obs_value(const struct h2b_gate_obs *o, enum h2b_metric m)
{
    return h2b_metric_value(o->e, m);
}

/* Whether the entry measured metric m (it is not null). */
static inline bool h2b_gate_obs_has(const struct h2b_gate_obs *o, enum h2b_metric m)
{
    return !isnan(h2b_gate_obs_value(o, m));
}

/* The entry's fork count; 0 when it has none. */
int h2b_gate_obs_forks(const struct h2b_gate_obs *o);

/* Whether the runner flagged the entry's allocations as not deterministic
 * ("alloc_deterministic": false; null is not a flag). */
static inline bool h2b_gate_obs_nondeterministic(const struct h2b_gate_obs *o)
{
    return o->e->alloc_deterministic == 0;
}

/* The micro entries of one or more results files, as views (struct h2b_gate_obs) of the
 * documents, which the set holds: docs[i] was read from sources[i]. A document the set loaded or
 * was given (h2b_gate_set_take) is freed with the set; one it borrows (h2b_gate_set_add) must
 * outlive it. */
struct h2b_gate_set {
    size_t count;
    struct h2b_gate_obs *obs;
    size_t n_sources;
    char **sources;
    const struct h2b_results_doc **docs; /* n_sources of them */
    struct h2b_results_doc **owned;      /* n_sources: docs[i] when the set frees it, else NULL */
    char *invalid; /* why these results cannot be gated (sanitizers, build type), or NULL */
    const struct h2b_results_env *env; /* where the first results file with an env was
                                          measured (a view of its document's), or NULL */
};

/* An empty set. */
int h2b_gate_set_new(struct h2b_gate_set **out);

/* Adds the micro entries of the decoded document doc, loaded from path (copied), as views: doc
 * is borrowed and must outlive s. Returns H2B_OK or H2B_ERR_NOMEM. */
int h2b_gate_set_add(struct h2b_gate_set *s, const char *path, const struct h2b_results_doc *doc);

/* As h2b_gate_set_add, but s owns doc from the call on, whatever it returns (freed with s). */
int h2b_gate_set_take(struct h2b_gate_set *s, const char *path, struct h2b_results_doc *doc);

/* Reads the micro entries of every file in paths (h2b_results_doc_load); the set keeps the
 * documents. A malformed file
 * returns H2B_ERR_PARSE with diag at file:line:column; an unreadable one H2B_ERR_IO. Results
 * measured in a sanitizer or non-Release build load fine but set (*out)->invalid. *out
 * untouched on failure; caller owns it (h2b_gate_set_del). */
int h2b_gate_set_load(const char *const *paths, size_t n, struct h2b_gate_set **out,
                      struct h2b_diag *diag);

/* Frees s and the documents it owns (NULL is fine). */
void h2b_gate_set_del(struct h2b_gate_set *s);

/* Where s was measured (a view of s->env, unset when no file had an env): nothing to free. */
void h2b_gate_set_fingerprint(const struct h2b_gate_set *s, struct h2b_fingerprint *fp);

/* The p99 the gate checks for one observation: the best fork's p99, or p99_ns without forks. */
double h2b_gate_robust_p99(const struct h2b_gate_obs *o);

/* Re-measures names (count of them) and returns, per name, the robust p99 in p99_out[i] (NaN
 * when the name is absent from the re-run). Returns H2B_OK or a negative code (the verdict then
 * becomes invalid: a confirmation that cannot run is not a pass). */
typedef int (*h2b_gate_rerun_fn)(void *arg, const char *const *names, size_t count,
                                 double *p99_out);

/* The default rerun: spawn `runner micro --filter '^(names)$' --profile PROFILE --json TMP`,
 * the runner's stdout going to stderr, then read TMP. */
struct h2b_gate_runner {
    const char *path;     /* executable; NULL: h2bench next to /proc/self/exe */
    const char *profile;  /* NULL: "ci" */
    const char *cpu;      /* passed as --cpu (pin the runner and its forks), or NULL */
    bool callgrind;       /* pass --callgrind (instructions counted) */
    char *const *envp;    /* the runner's environment (an injected regression); NULL: ours */
    bool quiet;           /* the runner's table is discarded instead of sent to stderr */
    struct h2b_diag diag; /* h2b_gate_runner_rerun: why the last re-run failed ("" if none) */
};
int h2b_gate_runner_rerun(void *runner, const char *const *names, size_t count, double *p99_out);

/* Runs `runner micro --profile PROFILE --json out_path [--cpu N] [--callgrind] [--filter filter]`
 * once, in r->envp. Returns
 * H2B_OK, H2B_ERR_SYS (spawn failed) or H2B_ERR_UNSUPPORTED (the runner exited non-zero or was
 * killed), diag saying which. */
int h2b_gate_runner_run(const struct h2b_gate_runner *r, const char *filter, const char *out_path,
                        struct h2b_diag *diag);

/* Resolves the runner path into buf (r->path or the h2bench beside /proc/self/exe). */
int h2b_gate_runner_path(const struct h2b_gate_runner *r, char *buf, size_t size);

struct h2b_gate_options {
    bool strict;             /* benchmarks without a ceiling fail */
    int confirm;             /* confirmation re-runs of p99 breaches (0: fail on first breach) */
    h2b_gate_rerun_fn rerun; /* NULL: breaches fail without confirmation */
    void *rerun_arg;
    const regex_t *filter; /* only benchmarks whose names match (a partial run), or NULL */
};

/* A gate row's status is a verdict (core/verdict.h: its words, icon and phrase). */
enum h2b_gate_status {
    H2B_GATE_PASS = H2B_VERDICT_PASS,
    H2B_GATE_FAIL = H2B_VERDICT_FAIL,       /* a ceiling exceeded (confirmed for p99) */
    H2B_GATE_MISSING = H2B_VERDICT_MISSING, /* a benchmark with ceilings is absent */
    H2B_GATE_UNGATED = H2B_VERDICT_UNGATED, /* a benchmark without ceilings (fails with strict) */
    H2B_GATE_INVALID = H2B_VERDICT_INVALID, /* cannot be judged: counter unmeasured,
                                               confirmation could not run */
    H2B_GATE_NA = H2B_VERDICT_NA /* not applicable: an absolute p99 set on another machine,
                                    instructions counted with another build (fails, as
                                    invalid, only with strict) */
};

/* One gate: one (benchmark, metric), or one benchmark for MISSING/UNGATED rows (metric -1). */
struct h2b_gate_row {
    char *bench;
    int metric; /* enum h2b_metric, or -1 */
    enum h2b_gate_status status;
    bool failing; /* counts against the verdict (FAIL, MISSING, UNGATED with strict, INVALID) */
    bool has_baseline, has_ceiling, has_current;
    double baseline, ceiling, current;
    char *evidence;
};

struct h2b_gate_report {
    size_t count;
    struct h2b_gate_row *rows; /* failing rows first, then in ceilings order */
    int passed, failed, missing, ungated, invalid, not_applicable;
    int confirm_runs;     /* confirmation re-runs performed */
    char *invalid_reason; /* set when the whole measurement is invalid */
    int exit_code;        /* 0 pass, 1 failed, 3 invalid */
    char started[32];     /* UTC time the check started, ISO 8601 (JUnit timestamp) */
    double elapsed_s;     /* how long the check took, confirmation re-runs included */
};

/* Whether absolute timings measured on `have` may be judged by ceilings set on `want`: the
 * same machine (h2b_fingerprint_same_machine). Either way na gets the row's evidence for the
 * other case, "not applicable (set on <cpu model>; <what differs>)". Used by the micro p99
 * gate and by the cells' p99_ms (cells.c). */
bool h2b_gate_machine_applies(const struct h2b_fingerprint *want,
                              const struct h2b_fingerprint *have, char *na, size_t size);

/* Evaluates every ceiling of c against s. Returns H2B_OK with *out (caller frees with
 * h2b_gate_report_del) or H2B_ERR_NOMEM; *out untouched on failure. When s->invalid is set the
 * report has no rows, invalid_reason set and exit code 3. */
int h2b_gate_check(const struct h2b_ceilings *c, const struct h2b_gate_set *s,
                   const struct h2b_gate_options *opt, struct h2b_gate_report **out);

void h2b_gate_report_del(struct h2b_gate_report *r);

/* A gate status's words (word for terminals, icon for markdown, phrase for prose): the one
 * vocabulary of core/verdict.h, for every renderer of gate rows (the gate's table, markdown and
 * JUnit, and the report, report/md.c). */
static inline const struct h2b_verdict_words *h2b_gate_words(enum h2b_gate_status s, bool failing)
{
    return h2b_verdict_words((enum h2b_verdict)s, failing);
}

/* Renderers: a malloc'd string in *out (caller frees). H2B_OK or H2B_ERR_NOMEM. */
int h2b_gate_render_table(const struct h2b_gate_report *r, char **out);
int h2b_gate_render_md(const struct h2b_gate_report *r, char **out);
int h2b_gate_render_junit(const struct h2b_gate_report *r, char **out);

/* A fork's p99 is gated only when it rests on at least this many samples: n * (1 - 0.99) >= 100
 * samples above it. Fewer, and the tail is scheduler noise. */
#define H2B_GATE_MIN_P99_SAMPLES 10000

struct h2b_gate_propose_options {
    double headroom;  /* 0.35: p99 ceiling = worst observed robust p99 * (1 + headroom) */
    const char *date; /* "2026-11-30" for the why lines; NULL: today (UTC) */
    const char *tool; /* e.g. "h2bench 0.1.0 abc123", in the why lines; may be NULL */
    /* h2b_gate_propose_from: "proposal run 2 of 5" lines; may be NULL */
    void (*progress)(void *arg, const char *line);
    void *progress_arg;
};

/* Proposes ceilings from runs (one results file per run, count >= 1): per benchmark, an exact
 * bytes/allocs ceiling (the largest observed; the next whole unit when the runner flags it not
 * deterministic), a p99 ceiling (worst robust p99 over the runs plus headroom, rounded up to a
 * whole ns; none, with a baseline note, when a run had fewer than H2B_GATE_MIN_P99_SAMPLES
 * samples per fork), instructions when measured, each with a why line, and baselines (medians
 * over the runs). Returns H2B_OK, H2B_ERR_INVAL (no runs) or H2B_ERR_NOMEM. */
int h2b_gate_propose(const struct h2b_gate_set *const *runs, size_t count,
                     const struct h2b_gate_propose_options *opt, struct h2b_ceilings **out);

/* The whole `h2bench gate --propose` workflow: the micro entries of the results files (paths,
 * n of them) plus `runs` fresh runs of runner (h2b_gate_runner_run with filter, each in a
 * private temporary directory, removed after), then h2b_gate_propose over all of them. A run
 * measured in a sanitizer or non-Release build cannot propose ceilings. Returns H2B_OK with *out,
 * H2B_ERR_INVAL (nothing to propose from), the loaders' codes (diag at file:line:column),
 * H2B_ERR_UNSUPPORTED (a run failed or is invalid: diag says which), H2B_ERR_SYS, NOMEM. */
int h2b_gate_propose_from(const char *const *paths, size_t n, unsigned runs,
                          const struct h2b_gate_runner *runner, const char *filter,
                          const struct h2b_gate_propose_options *opt, struct h2b_ceilings **out,
                          struct h2b_diag *diag);

#endif
