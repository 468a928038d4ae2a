/*
 * ab.h - judge a head against a base measured in the same job (`h2bench ab`, `h2bench compare`).
 *
 * Inputs are two observation sets (gate.h): the base's micro entries and the head's, each
 * carrying one value per fork (p99_ns_forks / fork_p99_ns, ns_per_op_forks / fork_ns_per_op).
 * For every benchmark present on both sides and every metric:
 *
 *   time (ns/op, p99): ratio = median(head forks) / median(base forks), with a percentile
 *       bootstrap confidence interval (forks of each side resampled independently, a fixed seed
 *       so the same files give the same verdict). The benchmark FAILS when the whole interval
 *       lies above 1 + threshold; it is FASTER when the whole interval lies below
 *       1 / (1 + threshold); anything else is "same" (within noise or within the threshold).
 *       A p99 that rests on fewer than H2B_GATE_MIN_P99_SAMPLES samples per fork is not judged.
 *   exact (allocs/op, B/op, instructions/op): any increase FAILS. Where the runner flagged an
 *       allocation count as not deterministic (amortised growth: 10.0311..10.0313), whole units
 *       are compared (ceil), so the wobble never fails and one more allocation still does.
 *
 * The same function gives `h2bench ab` and `h2bench compare A B` their verdict and exit code.
 * Nothing here is thread-safe; one report per thread.
 */
#ifndef H2B_GATES_AB_H
#define H2B_GATES_AB_H

#include "core/verdict.h"
#include "gates/abtable.h"
#include "gates/gate.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A ratio head/base with its confidence interval. */
struct h2b_ab_ci {
    bool has;      /* false: too few samples (fewer than 2 on a side) or a zero base */
    double ratio;  /* statistic(head) / statistic(base) */
    double lo, hi; /* the interval at the requested confidence */
    size_t na, nb; /* samples on each side */
};

/* Percentile bootstrap of median(b) / median(a): resamples a and b independently `resamples`
 * times with a xorshift generator seeded by seed; the interval is the (1-conf)/2 and (1+conf)/2
 * quantiles of the resampled ratios. Needs na >= 2, nb >= 2 and a positive base median; otherwise
 * out->has is false. Returns H2B_OK or H2B_ERR_NOMEM. */
int h2b_ab_bootstrap_ratio(const double *a, size_t na, const double *b, size_t nb, double conf,
                           unsigned resamples, uint64_t seed, struct h2b_ab_ci *out);

struct h2b_ab_options {
    double threshold;   /* 0.10: fail when the interval lies wholly above 1.10 */
    double confidence;  /* 0.99 */
    unsigned resamples; /* 0: 4000 */
    uint64_t seed;      /* 0: a fixed default */
};

/* A row's status is a verdict (core/verdict.h: its words and icon); failing rows print in the
 * failing form (SLOWER, MORE). */
enum h2b_ab_status {
    H2B_AB_SAME = H2B_VERDICT_SAME,     /* within noise or within the threshold */
    H2B_AB_SLOWER = H2B_VERDICT_SLOWER, /* time: interval wholly above 1 + threshold (fails) */
    H2B_AB_FASTER = H2B_VERDICT_FASTER, /* time: interval wholly below 1 / (1 + threshold) */
    H2B_AB_INCREASE = H2B_VERDICT_MORE, /* exact count grew (fails) */
    H2B_AB_DECREASE = H2B_VERDICT_LESS, /* exact count shrank */
    H2B_AB_NA = H2B_VERDICT_NA,         /* not judged: too few samples, or measured on one side
                                           only (note says) */
    H2B_AB_ONLY = H2B_VERDICT_ONLY      /* the benchmark exists on one side only (metric NULL) */
};

struct h2b_ab_row {
    char *bench;        /* a benchmark, or a matrix cell's key ("srv:1x1") */
    const char *metric; /* "ns/op", "p99", "allocs/op", "B/op", "instr/op"; cells: "p99",
                           "req/s", "allocs/req", "B/req", "reads/req", "writes/req",
                           "instr/req"; NULL for ONLY */
    bool exact;
    bool higher_better; /* req/s: the regression is a fall (SLOWER: interval wholly below
                           1 / (1 + threshold)) */
    enum h2b_ab_status status;
    bool failing;
    double base, head; /* medians of the forks (time) or the counts (exact); NAN when absent */
    struct h2b_ab_ci ci;
    char *note; /* why not judged, which side a benchmark is on, ...; or NULL */
};

struct h2b_ab_report {
    size_t count;
    struct h2b_ab_row *rows; /* failing rows first, then in the base's order */
    int slower, faster, increased, decreased, same, not_judged, only;
    double threshold, confidence;
    char *invalid_reason; /* set when a side cannot be judged (sanitizers, non-Release) */
    int exit_code;        /* 0 pass, 1 a regression, 3 invalid */
    const char *command;  /* the verdict line's name: "compare" or NULL ("ab") */
};

/* Judges head against base. Returns H2B_OK with *out (h2b_ab_report_del) or H2B_ERR_NOMEM /
 * H2B_ERR_INVAL (a threshold or confidence out of range); *out untouched on failure. */
int h2b_ab_judge(const struct h2b_gate_set *base, const struct h2b_gate_set *head,
                 const struct h2b_ab_options *opt, struct h2b_ab_report **out);

/* The same verdict on the matrix cells of two results documents (`h2bench ab --suite
 * SCENARIO`, `h2bench compare` on run results). A cell is identified by TARGET:CONNSxSTREAMS
 * and its sweep axes; its samples are its repeats (every invocation of a side, merged). Per
 * cell: p99 (latency_ns.p99) and req/s with the bootstrap interval of the median ratio (req/s
 * fails when the interval lies wholly below 1 / (1 + threshold)); the budgets it carries
 * (allocs, bytes, reads, writes per request: an increase of half a unit or more fails;
 * instructions per request: more than 0.5 % fails), medians over the repeats. The paths name
 * the documents in the notes. Returns as h2b_ab_judge. */
int h2b_ab_judge_cells(const struct h2b_results_doc *base, const char *base_path,
                       const struct h2b_results_doc *head, const char *head_path,
                       const struct h2b_ab_options *opt, struct h2b_ab_report **out);

/* The verdict on two results files, whatever they hold (`h2bench compare A B`, the report's
 * "A/B against the base"): their micro benchmarks (h2b_ab_judge) and their matrix cells
 * (h2b_ab_judge_cells: run, load --json and merge output alike) in one report, each kind judged
 * where either file has it. A side that cannot be judged makes the whole report invalid (exit
 * 3); files with neither kind too. Malformed input: H2B_ERR_PARSE with diag at
 * file:line:column; unreadable: H2B_ERR_NOTFOUND or H2B_ERR_IO; H2B_ERR_NOMEM, H2B_ERR_INVAL
 * (options). *out untouched on failure. */
int h2b_ab_judge_files(const char *base_path, const char *head_path,
                       const struct h2b_ab_options *opt, struct h2b_ab_report **out,
                       struct h2b_diag *diag);

/* As h2b_ab_judge_files, on two documents the caller has read already (the report's runs):
 * borrowed for the call; the paths name them in the notes. Returns H2B_OK, H2B_ERR_NOMEM or
 * H2B_ERR_INVAL (options). */
int h2b_ab_judge_docs(const struct h2b_results_doc *base, const char *base_path,
                      const struct h2b_results_doc *head, const char *head_path,
                      const struct h2b_ab_options *opt, struct h2b_ab_report **out);

void h2b_ab_report_del(struct h2b_ab_report *r);

/* A row as the one A/B table shows it (gates/abtable.h); v points into row. */
void h2b_ab_row_view(const struct h2b_ab_row *row, struct h2b_abtable_row *v);

/* Renderers, through gates/abtable.h: a malloc'd string in *out (caller frees). H2B_OK or
 * H2B_ERR_NOMEM. The markdown starts with the verdict line, for a CI job summary or a
 * pull-request comment. */
int h2b_ab_render_table(const struct h2b_ab_report *r, char **out);
int h2b_ab_render_md(const struct h2b_ab_report *r, char **out);

/* Their parts, appended to b, for a document of its own around them (compare --md, the
 * report's A/B section): the verdict line ("h2bench ab: PASS: ...", after prefix, e.g. "## ")
 * and the markdown table of the rows (nothing when the report is invalid). h2b_ab_rows_md
 * returns H2B_OK or H2B_ERR_NOMEM. */
void h2b_ab_verdict_line(struct h2b_buf *b, const struct h2b_ab_report *r, const char *prefix);
int h2b_ab_rows_md(struct h2b_buf *b, const struct h2b_ab_report *r);

#endif
