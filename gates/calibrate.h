/*
 * calibrate.h - `h2bench gate --calibrate N`: the measured false-alarm and detection rates of
 * every gate row.
 *
 * A calibration re-runs the real measurement behind a ceilings file (the micro suite, a
 * scenario's cells, or `h2bench ab`) N times on unchanged code (A/A) and N times with each
 * regression h2bench can inject, judges every trial with the gate itself, and counts per gate
 * row how often it went red: on unchanged code that is the false-alarm rate, with an injected
 * regression the detection rate, each with a 95 % Wilson interval (h2b_stats_wilson).
 *
 * Not thread-safe; one calibration per process (it spawns the measurements).
 */
#ifndef H2B_GATES_CALIBRATE_H
#define H2B_GATES_CALIBRATE_H

#include "core/error.h"
#include "core/json.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The trials' kinds: unchanged code, then each injected regression. */
enum h2b_calib_inject {
    H2B_CALIB_AA,    /* unchanged code (A/A) */
    H2B_CALIB_ALLOC, /* +1 allocation (16 B) per op / per request (H2B_INJECT_ALLOC) */
    H2B_CALIB_INSTR, /* +1 % of the row's instruction ceiling per op / request (H2B_INJECT_INSTR) */
    H2B_CALIB_SLOW,  /* twice the work per op; h2ref: about one request's CPU more per request */
    H2B_CALIB_SLOW25, /* +25 % time per op (H2B_INJECT_SLOW_PERCENT=25): ab only */
    H2B_CALIB_NINJECT
};

/* "aa", "alloc", "instr", "slow", "slow25": the --inject words and the JSON keys. */
const char *h2b_calib_inject_key(enum h2b_calib_inject i);
/* Column headings: "A/A false alarms", "+1 alloc", "+1 % instr", "2x time", "+25 % time". */
const char *h2b_calib_inject_label(enum h2b_calib_inject i);
/* The bit of i in h2b_calib_options.inject; -1 for an unknown word. */
int h2b_calib_inject_from_key(const char *key);

enum h2b_calib_measure {
    H2B_CALIB_MICRO,    /* h2bench micro --profile P [--callgrind] [--filter F] */
    H2B_CALIB_SCENARIO, /* h2bench run SCENARIO [--filter F] */
    H2B_CALIB_AB        /* h2bench ab --base REV (the micro suite), head with the injection */
};

struct h2b_calib_options {
    enum h2b_calib_measure measure;
    const char *ceilings;     /* micro, scenario: required; ab: optional (instruction counts) */
    const char *scenario;     /* H2B_CALIB_SCENARIO: the scenario file */
    const char *filter;       /* micro, ab: benchmarks (ERE); scenario: run's --filter terms */
    unsigned trials;          /* N >= 1 per injection (and per benchmark or cell) */
    unsigned aa_trials;       /* A/A trials; 0: trials */
    unsigned inject;          /* bits (1 << enum h2b_calib_inject) to run; 0: every one */
    bool callgrind;           /* micro, ab: count instructions (the instruction rows) */
    const char *runner;       /* the h2bench to run; NULL: the one beside /proc/self/exe */
    const char *profile;      /* micro: profile (NULL: ci) */
    const char *cpu;          /* micro: --cpu; ab: the CPU both sides run on (NULL: 0) */
    int confirm;              /* micro: the gate's confirmation re-runs of a p99 breach */
    const char *base;         /* ab: the base revision (NULL: HEAD) */
    unsigned forks;           /* ab: invocations per side (0: 10) */
    const char *work_dir;     /* ab: its --work (NULL: its default cache) */
    const char *build_cmd;    /* ab: its --build (NULL: h2bench's own CMake build) */
    const char *bench;        /* ab: its --bench, the user's benchmark executable (NULL: h2bench
                                 micro of each side's build) */
    h2b_progress_fn progress; /* "aa: trial 3 of 20" lines; may be NULL */
    void *progress_arg;
};

/* One kind's tally for one row. A trial counts once per row: hits are trials in which the row
 * was red (FAIL; for A/A also INVALID, which makes CI as red), invalid those in which it could
 * not be judged, na those in which the gate said not applicable. */
struct h2b_calib_count {
    uint32_t trials, hits, invalid, na;
};

struct h2b_calib_row {
    char *gate; /* "hpack/encode-typical-response allocs_per_op", "h2ref:1x1 allocs_per_request" */
    char *unit; /* the benchmark or cell the row belongs to, where injections are aimed */
    struct h2b_calib_count c[H2B_CALIB_NINJECT];
    char *na[H2B_CALIB_NINJECT]; /* why kind i cannot be injected into unit, or NULL */
    char *gate_na; /* the gate's evidence the first time it said not applicable, or NULL */
};

struct h2b_calib_report {
    enum h2b_calib_measure measure;
    char *command;      /* the measurement, as a user would type it */
    char *ceilings;     /* the ceilings file, or NULL (ab without one) */
    unsigned trials;    /* N per injection */
    unsigned aa_trials; /* A/A trials */
    bool ran[H2B_CALIB_NINJECT];
    double seconds[H2B_CALIB_NINJECT]; /* wall time of each kind's trials */
    unsigned runs[H2B_CALIB_NINJECT];  /* measurements run for each kind */
    size_t count;
    struct h2b_calib_row *rows; /* in the order the gate first reported them */
    char *stopped; /* why the calibration ended before its last trial, or NULL (complete) */
};

/* Runs the calibration. Returns H2B_OK with *out (h2b_calib_report_del), or:
 *   H2B_ERR_INVAL        bad options (no trials, no ceilings, an injection the measurement has
 *                        no way to apply: +25 % outside ab), diag says which
 *   H2B_ERR_PARSE, H2B_ERR_IO  the ceilings or scenario file (diag at file:line:column)
 *   H2B_ERR_UNSUPPORTED  a measurement failed or its results cannot be gated (sanitizer or
 *                        non-Release build): diag says which
 *   H2B_ERR_SYS, H2B_ERR_NOMEM
 * A measurement that fails after some trials were tallied still hands back what they measured:
 * *out holds the partial report, its `stopped` the diag's reason, beside the error code (hours
 * of trials are not thrown away for the last one). Otherwise *out is untouched on failure. */
int h2b_calib_run(const struct h2b_calib_options *opt, struct h2b_calib_report **out,
                  struct h2b_diag *diag);

void h2b_calib_report_del(struct h2b_calib_report *r);

/* Renderers: a malloc'd string in *out (caller frees). H2B_OK or H2B_ERR_NOMEM. The JSON is
 * "schema": "h2bench.calibration/1" (docs/gates.md, Calibration). */
int h2b_calib_render_table(const struct h2b_calib_report *r, char **out);
int h2b_calib_render_md(const struct h2b_calib_report *r, char **out);
int h2b_calib_render_json(const struct h2b_calib_report *r, char **out);

#endif
