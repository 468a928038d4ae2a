/*
 * histset.h - the series of `h2bench history`: results files and the history store read into
 * one series per benchmark (or matrix cell) x metric x fingerprint, their change points
 * (gates/history.h), and the text, markdown and JSON views of them.
 *
 * A point is one run's value: its commit (tool.git_commit) and when it was measured (the
 * results file's "created"; a load --json document has none, so the file's modification time).
 * Points are ordered by that time, then by commit. The series are the exports' (core/export.h
 * GAB names: "hpack/decode-browser-request - ns/op", "h2ref h2bench c=10 s=10 - req/s"); a
 * value measured on another machine or build (h2b_fingerprint_view: cpu, cpus, kernel,
 * compiler, build type, nghttp2) starts a series of its own, never mixed.
 *
 * The store (docs/history.md) is a directory of per-branch files, BRANCH.jsonl, one line per run
 * per series (struct h2b_results_hline). Appending rewrites the file atomically with the new
 * lines at the end, skipping a run already in it; a corrupt line is reported with file:line and
 * the rest is read.
 */
#ifndef H2B_GATES_HISTSET_H
#define H2B_GATES_HISTSET_H

#include "core/buf.h"
#include "core/json.h"
#include "gates/history.h"

#include <stdbool.h>
#include <stddef.h>

struct h2b_histset_point {
    char *commit, *created; /* owned */
    double value;
};

struct h2b_histset_series {
    char *name;        /* owned: "<benchmark or cell> - <metric>" */
    char *fingerprint; /* owned */
    bool bigger;       /* higher is better */
    struct h2b_histset_point *p;
    size_t n, cap;
    /* filled by h2b_histset_detect */
    bool too_short;
    struct h2b_history_cp *cps; /* owned */
    size_t ncps;
};

struct h2b_histset {
    struct h2b_histset_series *s;
    size_t n, cap;
    size_t hint; /* where the next line's series is looked for first */
};

void h2b_histset_init(struct h2b_histset *h);
void h2b_histset_free(struct h2b_histset *h);

/* Adds the run of a results file (h2bench.result/1) or a load --json document (h2bench.load/1):
 * one point per metric it measured. Returns H2B_OK, H2B_ERR_PARSE / H2B_ERR_IO (d says
 * file:line:column and what was expected), H2B_ERR_INVAL (neither kind of document) or NOMEM. */
int h2b_histset_add_file(struct h2b_histset *h, const char *path, struct h2b_diag *d);

/* Adds every good line of the store file at path; each corrupt one goes to report(arg, diag)
 * (file:line:column; may be NULL) and is skipped, *bad counts them. Returns H2B_OK, H2B_ERR_IO
 * (cannot read it: d says why) or NOMEM. */
int h2b_histset_read_store(struct h2b_histset *h, const char *path, h2b_diag_fn report, void *arg,
                           size_t *bad, struct h2b_diag *d);

/* Adds what a path names: a store file (*.jsonl), a results file, or a directory's *.jsonl and
 * *.json files in name order. Codes as above. */
int h2b_histset_add_path(struct h2b_histset *h, const char *path, h2b_diag_fn report, void *arg,
                         size_t *bad, struct h2b_diag *d);

/* Keeps the series whose name contains filter (NULL: all) and whose metric, the part after the
 * last " - ", is metric (NULL: all). */
void h2b_histset_select(struct h2b_histset *h, const char *filter, const char *metric);

/* Orders the points of each series by time, then commit, and the series by name, then
 * fingerprint, so the answer does not depend on the order of the inputs. */
void h2b_histset_sort(struct h2b_histset *h);

/* The most runs of one series h2b_histset_detect tests: the last ones (the detector costs the
 * square of a segment's length; 10,000 runs take about a second). */
#define H2B_HISTSET_MAX_TESTED 10000

/* Runs the detector over each series, its last H2B_HISTSET_MAX_TESTED runs at most (too short
 * ones are marked). H2B_OK, INVAL (options) or NOMEM. */
int h2b_histset_detect(struct h2b_histset *h, const struct h2b_history_opts *o);

/* The three views of the detected set. text: one row per change point, a row per series
 * without one; md: the same as a markdown table; json: *out owns the document. */
void h2b_histset_render_text(const struct h2b_histset *h, const struct h2b_history_opts *o,
                             struct h2b_buf *out);
void h2b_histset_render_md(const struct h2b_histset *h, const struct h2b_history_opts *o,
                           struct h2b_buf *out);
int h2b_histset_to_json(const struct h2b_histset *h, const struct h2b_history_opts *o,
                        json_t **out);

/* Appends the runs of the results files paths[0..n) to the store DIR/BRANCH.jsonl (created with
 * its directory when missing), atomically. *added counts new lines, *skipped the lines of runs
 * the store already held. branch: letters, digits, '.', '_', '-', not starting with '.'
 * (H2B_ERR_INVAL otherwise). Codes as h2b_histset_add_file, plus H2B_ERR_IO and H2B_ERR_EXISTS
 * (another append holds the store's lock, BRANCH.jsonl.lock). */
int h2b_histset_append(const char *dir, const char *branch, const char *const *paths, size_t n,
                       size_t *added, size_t *skipped, struct h2b_diag *d);

/* The gate's check over a set read from a store: every series whose newest point belongs to the
 * newest run of the set and opens a change point (h2b_history_newest) that moves the wrong way
 * (up for lower-is-better, down for higher-is-better) by at least o->min_change goes to
 * fail(arg, series, cp); *checked counts the series looked at. Returns H2B_OK, INVAL, NOMEM. */
typedef void (*h2b_histset_fail_fn)(void *arg, const struct h2b_histset_series *s,
                                    const struct h2b_history_cp *cp);
int h2b_histset_gate(const struct h2b_histset *h, const struct h2b_history_opts *o,
                     h2b_histset_fail_fn fail, void *arg, size_t *checked, size_t *failed);

#endif
