/*
 * compare.h - A/B two results files with confidence intervals (`h2bench compare A B`).
 *
 * Every micro benchmark present in both files (matched by name) and every matrix cell present in
 * both (matched by target, client, connections, streams_requested) gives one row per metric:
 * the two values, the ratio B/A, a 99.9% confidence interval of the difference B - A and whether
 * it is significant. Samples are the forks (micro: p99_ns_forks, ns_per_op_forks when present)
 * or the repeats (matrix cells with the same key and different "repeat"). With one sample on a
 * side the interval is "n/a", never a made-up number. Allocation counts are exact: any
 * difference is real.
 */
#ifndef H2B_GATES_COMPARE_H
#define H2B_GATES_COMPARE_H

#include "core/buf.h"
#include "core/json.h"
#include "core/verdict.h"

#include <stdbool.h>
#include <stddef.h>

/* Welch's two-sample t interval for mean(b) - mean(a) at confidence conf (0.999). Needs at least
 * two samples on each side: returns H2B_OK, or H2B_ERR_RANGE with *lo and *hi untouched. */
int h2b_compare_welch(const double *a, size_t na, const double *b, size_t nb, double conf,
                      double *lo, double *hi);

/* Mean and sample variance (n - 1; 0 for one sample) of v[0..n), n >= 1. */
void h2b_compare_mean_var(const double *v, size_t n, double *mean, double *var);

/* P(T <= t) for Student's t with df degrees of freedom (df > 0). */
double h2b_compare_t_cdf(double t, double df);

/* Quantile of Student's t distribution with df degrees of freedom (df > 0), 0 < p < 1. */
double h2b_compare_t_quantile(double p, double df);

enum h2b_compare_sig {
    H2B_COMPARE_SIG_NA, /* too few samples for an interval */
    H2B_COMPARE_SIG_NO,
    H2B_COMPARE_SIG_YES
};

struct h2b_abtable_row;

struct h2b_compare_row {
    char *item;         /* "hpack/decode-browser-request" or "h2ref h2bench c=100 s=100" */
    const char *kind;   /* "micro" or "matrix" */
    const char *metric; /* "ns/op", "p99", "B/op", "allocs/op", "req/s", "latency p50", ... */
    const char *unit;   /* "ns", "B", "", "req/s" */
    bool exact;         /* deterministic count: any difference is significant */
    bool higher_better; /* req/s; everything else is better lower */
    size_t n_a, n_b;
    double a, b; /* means of the samples */
    bool has_ratio;
    double ratio; /* b / a */
    bool has_ci;
    double ci_lo, ci_hi; /* 99.9% interval of b - a */
    enum h2b_compare_sig sig;
};

struct h2b_compare_report {
    char *path_a, *path_b;
    size_t count;
    struct h2b_compare_row *rows;
    size_t only_a, only_b; /* benchmarks and cells present in one file only */
};

/* Reads both files (h2b_results_doc_load) and compares them. Malformed input: H2B_ERR_PARSE
 * with diag at file:line:column; unreadable: H2B_ERR_IO; H2B_ERR_NOMEM. *out untouched on
 * failure. */
int h2b_compare_files(const char *path_a, const char *path_b, struct h2b_compare_report **out,
                      struct h2b_diag *diag);

void h2b_compare_report_del(struct h2b_compare_report *r);

/* A row's status (core/verdict.h), the one reading of its significance: n/a (no interval),
 * same (the interval holds zero), slower / faster (time; req/s: a fall is slower), more / less
 * (exact counts). Never failing: compare's significance is a reading aid, ab's verdict fails. */
enum h2b_verdict h2b_compare_row_status(const struct h2b_compare_row *row);

/* A row as the one A/B table shows it (gates/abtable.h): the interval of head − base, and a
 * note of the evidence written into note[0..n) (96 bytes are ample). v points into row and
 * note. */
void h2b_compare_row_view(const struct h2b_compare_row *row, struct h2b_abtable_row *v, char *note,
                          size_t n);

/* What the columns of compare's tables mean, one paragraph (both renderers print it; the
 * report's A/B section too). */
extern const char h2b_compare_legend[];

/* Renderers through gates/abtable.h, a malloc'd string in *out (caller frees); H2B_OK or
 * H2B_ERR_NOMEM. Text (`h2bench compare` on a terminal): the two files, the legend, one table,
 * a count of rows and of one-sided benchmarks. Markdown (`compare --md`): a heading with the
 * counts of significantly worse and better rows, the files and legend, then the tables. */
int h2b_compare_render_text(const struct h2b_compare_report *r, char **out);
int h2b_compare_render_md(const struct h2b_compare_report *r, char **out);

/* Appends the markdown tables alone (a "### Component benchmarks" table, a "### End-to-end
 * cells" table, the one-sided counts): what the report's "A/B against the base" section and
 * compare --md print. H2B_OK or H2B_ERR_NOMEM (b may hold part of the text). */
int h2b_compare_render_tables(struct h2b_buf *b, const struct h2b_compare_report *r);

#endif
