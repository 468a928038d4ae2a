/*
 * abrun.h - `h2bench ab`: build a base revision in its own checkout and build directory,
 * run the base's and the head's benchmarks interleaved on the same CPUs, and judge (ab.h).
 *
 * Layout of the work directory (default $XDG_CACHE_HOME/h2bench/ab, else ~/.cache/h2bench/ab):
 *
 *   <work>/<commit>/src         checkout of the revision (detached, in a `git clone --shared`:
 *                               nothing is registered in the user's repository)
 *   <work>/<commit>/build       its build directory ($H2B_AB_BUILD)
 *   <work>/<commit>/build.log   the build's output; <work>/<commit>/built: the build command
 *                               of the last successful build (a second run reuses it)
 *   <work>/worktree-<hash>/     build directory and log for --head worktree (the user's
 *                               uncommitted tree, built out of tree; never built in place)
 *   <out>/base.json head.json   each side's forks merged into one h2bench.result/1 file
 *   <out>/ab.md, <out>/runs/    the verdict as markdown; every invocation's results and log
 *
 * Nothing is written inside the user's work tree or build directory. The build command runs
 * under /bin/sh -c with the working directory the source tree and H2B_AB_SRC, H2B_AB_BUILD set;
 * the benchmark executable (bench, relative to the build directory unless absolute) is one
 * built with the micro API (h2b_micro_main), or h2bench itself, run as `h2bench micro`.
 */
#ifndef H2B_GATES_ABRUN_H
#define H2B_GATES_ABRUN_H

#include "gates/ab.h"
#include "core/json.h"

#include <stdbool.h>
#include <stddef.h>

struct h2b_ab_run_options {
    const char *repo;      /* a directory inside the repository; NULL: the working directory */
    const char *base;      /* revision of the base (required) */
    const char *head;      /* revision of the head, or NULL / "worktree": the work tree as is */
    const char *build_cmd; /* NULL: CMake Release build of $H2B_AB_SRC into $H2B_AB_BUILD */
    const char *suite;     /* NULL or "micro": the micro benchmarks; else a scenario file
                              whose matrix cells are compared (h2b_ab_judge_cells) */
    const char *bench;     /* micro: the benchmark executable (NULL: bin/h2bench, run as
                              "h2bench micro"); scenario: the server inside the built tree,
                              the program of the scenario's command targets (NULL: each
                              side's bin/h2bench runs the scenario as it is) */
    const char *work_dir;  /* NULL: the default cache directory above */
    const char *out_dir;   /* NULL: <work>/last */
    const char *filter;    /* --filter for the benchmarks (POSIX ERE), or NULL */
    unsigned forks;        /* invocations per side (>= 2) */
    const char *warmup;    /* per invocation, passed through ("20ms") */
    const char *time;      /* per pass per invocation ("50ms") */
    const char *epochs;    /* epochs of the time pass ("5") */
    int cpu;               /* pin both sides to this CPU; -1: not pinned */
    bool callgrind;        /* also count instructions (one callgrind invocation per side) */
    char *const *base_env; /* extra NAME=VALUE for the base's invocations (NULL-terminated) */
    char *const *head_env; /* the same for the head's (an injected regression, a config) */
    /* Progress lines ("building base 1a2b3c4d ..."); may be NULL. */
    void (*progress)(void *arg, const char *line);
    void *progress_arg;
};

/* Runs the whole A/B. On success (whatever the verdict) *out holds the report and the files of
 * the layout above exist. Returns:
 *   H2B_OK
 *   H2B_ERR_NOTFOUND   a revision does not exist (diag names it)
 *   H2B_ERR_INVAL      not a git repository, a bad option (diag says which)
 *   H2B_ERR_UNSUPPORTED a revision does not build (diag names build.log), the build made no
 *                      bench executable, or a benchmark invocation failed (diag names its log)
 *   H2B_ERR_IO, H2B_ERR_SYS, H2B_ERR_NOMEM
 * *out untouched on failure. */
int h2b_ab_run(const struct h2b_ab_run_options *o, const struct h2b_ab_options *judge,
               struct h2b_ab_report **out, struct h2b_diag *diag);

/* Merges the micro entries of several results files of one side (one fork each, or several)
 * into one document: per benchmark the forks' p99 and ns/op arrays concatenated, histograms
 * merged (percentiles recomputed from the merged histogram), ns/op the median of the forks,
 * counts the largest seen (alloc_deterministic only if every file agrees), instructions from
 * the file that measured them. The first file is the template (env, tool). *out owns the new
 * document. Returns H2B_OK, the codes of h2b_results_doc_load (diag says why), H2B_ERR_NOMEM. */
int h2b_ab_merge_results(const char *const *paths, size_t n, json_t **out, struct h2b_diag *diag);

#endif
