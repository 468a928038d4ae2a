/*
 * ceilings.h - the stored ceilings a gate checks (`h2bench.ceilings/1`, gates/ceilings.json).
 *
 * Shape (the report engine renders the same file; keep it):
 *
 *   {"schema": "h2bench.ceilings/1",
 *    "fingerprint": {"cpu_model": "...", "cpus": 2, "kernel": "...",      (optional: where and
 *                    "compiler": "GNU 12.2.0", "build_type": "Release",   with which build the
 *                    "nghttp2": "1.52.0", "instructions_source": "callgrind"},  ceilings were set)
 *    "benchmarks": {
 *      "<name>": {"bytes_per_op": {"max": N, "why": "..."},
 *                 "allocs_per_op": {"max": N, "why": "..."},
 *                 "p99_ns": {"max": N, "why": "..."},
 *                 "instructions_per_op": {"max": N, "why": "..."},      (optional)
 *                 "baseline": {"bytes_per_op": N, "allocs_per_op": N,   (optional, observed)
 *                              "p50_ns": N, "p99_ns": N, "p999_ns": N, "runs": N,
 *                              "note": "..."}}}}
 *
 * Every metric is optional per benchmark; an unknown key is an error, not silently ignored, so a
 * typo ("p99" for "p99_ns") cannot turn a gate off. The gate never writes this file: proposals go
 * to a file named by the user (h2bench gate --propose --write FILE).
 */
#ifndef H2B_GATES_CEILINGS_H
#define H2B_GATES_CEILINGS_H

#include "core/json.h"

#include <stdbool.h>
#include <stddef.h>

#define H2B_CEILINGS_SCHEMA "h2bench.ceilings/1"

/* The metrics a ceiling can bound. Exact metrics are deterministic counts: one more fails. */
enum h2b_metric {
    H2B_METRIC_BYTES_PER_OP,
    H2B_METRIC_ALLOCS_PER_OP,
    H2B_METRIC_P99_NS,
    H2B_METRIC_INSTRUCTIONS_PER_OP,
    H2B_METRIC_COUNT
};

/* JSON key of m ("bytes_per_op"); NULL for an out-of-range m. */
const char *h2b_metric_key(enum h2b_metric m);

/* Short label for tables ("B/op", "allocs/op", "p99", "instr/op"). */
const char *h2b_metric_label(enum h2b_metric m);

/* Unit suffix for values of m ("B", "", "ns", ""). */
const char *h2b_metric_unit(enum h2b_metric m);

/* Looks a key up: the metric, or -1 when key names no metric. */
int h2b_metric_from_key(const char *key);

/* The value of metric m in the micro entry e, read from the member the metric names (the one
 * whose results key is h2b_metric_key(m)): NAN when it is null or m is out of range. */
struct h2b_results_micro;
double h2b_metric_value(const struct h2b_results_micro *e, enum h2b_metric m);

struct h2b_ceiling {
    bool set;
    double max; /* the largest passing value, in the metric's unit */
    char *why;  /* owned; never NULL when set */
};

/* Observed values recorded with the ceilings (for BASELINES.md and the "baseline" column). */
struct h2b_baseline {
    bool has_bytes, has_allocs, has_p50, has_p99, has_p999;
    double bytes_per_op, allocs_per_op, p50_ns, p99_ns, p999_ns;
    int runs;   /* 0 when not recorded */
    char *note; /* owned, or NULL: e.g. why p99 has no ceiling (too few samples per fork) */
};

struct h2b_ceiling_bench {
    char *name; /* owned */
    struct h2b_ceiling metric[H2B_METRIC_COUNT];
    struct h2b_baseline baseline;
};

/* Where ceilings were set (and where results were measured: h2b_fingerprint_view). The
 * machine part (cpu_model, cpus, kernel) plus the build part decide whether absolute p99
 * ceilings apply; the build part (compiler, build_type, nghttp2, instructions_source) whether
 * instruction counts are comparable. A NULL string or cpus 0 is "not recorded". */
struct h2b_fingerprint {
    bool set;
    /* owned, except in a view of a results file's env (h2b_fingerprint_view) */
    char *cpu_model, *kernel, *compiler, *build_type, *nghttp2, *instructions_source;
    int cpus;
};

/* Fills fp as a view of a results file's env (set: env was present; instructions_source left
 * NULL): its strings are env's own, not copies. It is valid while env lives and is never passed
 * to h2b_fingerprint_free (it owns nothing); for comparing (h2b_fingerprint_same_*) and printing
 * a results file's fingerprint without allocating. A fingerprint that must outlive env (a
 * proposal's) is h2b_fingerprint_copy of the view. */
struct h2b_results_env;
void h2b_fingerprint_view(const struct h2b_results_env *env, struct h2b_fingerprint *fp);

/* Frees fp's strings and clears it. */
void h2b_fingerprint_free(struct h2b_fingerprint *fp);

/* Copies from into *to (to is freed first). H2B_OK or NOMEM. */
int h2b_fingerprint_copy(struct h2b_fingerprint *to, const struct h2b_fingerprint *from);

/* Whether results measured with `have` may be judged by ceilings set with `want`: machine
 * (cpu_model, cpus, kernel and the build) or build only (compiler, build_type, nghttp2). Fields
 * want does not record match anything. On a mismatch why gets "cpu_model 'X' here" etc. */
bool h2b_fingerprint_same_machine(const struct h2b_fingerprint *want,
                                  const struct h2b_fingerprint *have, char *why, size_t size);
bool h2b_fingerprint_same_build(const struct h2b_fingerprint *want,
                                const struct h2b_fingerprint *have, char *why, size_t size);

struct h2b_ceilings {
    size_t count;
    struct h2b_ceiling_bench *benches;  /* in file order */
    struct h2b_fingerprint fingerprint; /* set: false for files without one */
};

/* Validates a parsed ceilings document. src gives the file name and its text, so that every
 * problem (wrong schema, wrong type, unknown metric, negative or missing max, empty why) goes to
 * report(arg, diag) located at file:line:column with its path; all problems are reported, not
 * just the first (report may be NULL; nothing is printed here). Returns H2B_OK, H2B_ERR_PARSE
 * or H2B_ERR_NOMEM; *out untouched on failure; the caller owns *out. (The fuzz target feeds
 * json_loadb output here.) */
int h2b_ceilings_from_json(const json_t *root, const struct h2b_json_src *src,
                           struct h2b_ceilings **out, h2b_diag_fn report, void *arg);

/* Reads, parses and validates path (a syntax error reported as file:line:column too). Returns
 * H2B_OK, H2B_ERR_NOTFOUND (cannot be read), H2B_ERR_RANGE (file too large), H2B_ERR_PARSE or
 * H2B_ERR_NOMEM. */
int h2b_ceilings_load(const char *path, struct h2b_ceilings **out, h2b_diag_fn report, void *arg);

/* An empty set of ceilings to fill with h2b_ceilings_add (for proposals). */
int h2b_ceilings_new(struct h2b_ceilings **out);

/* Appends a benchmark named name with no ceilings; returns it through *bench (owned by c). */
int h2b_ceilings_add(struct h2b_ceilings *c, const char *name, struct h2b_ceiling_bench **bench);

/* Sets one ceiling of b (why copied). Returns H2B_OK or H2B_ERR_NOMEM. */
int h2b_ceilings_set(struct h2b_ceiling_bench *b, enum h2b_metric m, double max, const char *why);

/* Frees c (NULL is fine). */
void h2b_ceilings_del(struct h2b_ceilings *c);

/* The benchmark named name, or NULL. */
const struct h2b_ceiling_bench *h2b_ceilings_find(const struct h2b_ceilings *c, const char *name);

/* Serialises c as an indented `h2bench.ceilings/1` document ending in a newline. Returns H2B_OK
 * or H2B_ERR_NOMEM; *out is malloc'd (caller frees). */
int h2b_ceilings_to_json(const struct h2b_ceilings *c, char **out);

/* Renders BASELINES.md from c (Benchmark | B/op | p50 | p99 | p999 | CI p99 ceiling), a pure
 * function of c so a test can check the committed file is current. source is the ceilings path
 * printed in the header. Returns H2B_OK or H2B_ERR_NOMEM; *out malloc'd (caller frees). */
int h2b_ceilings_baselines_md(const struct h2b_ceilings *c, const char *source, char **out);

#endif
