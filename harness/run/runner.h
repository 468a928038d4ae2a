/*
 * runner.h - `h2bench run`: a scenario file in, one h2bench.result/1 file out.
 *
 * The runner loads and validates the scenario, starts its targets (pinned), probes each for
 * SETTINGS_MAX_CONCURRENT_STREAMS, expands the matrix, runs every cell with the client as a
 * pinned child process, records per-cell metrics beside the server's CPU time and RSS, runs the
 * micro suites, and writes the results atomically. A target that dies fails its cells with the
 * reason and the run goes on (unless fail_fast).
 */
#ifndef H2B_RUN_RUNNER_H
#define H2B_RUN_RUNNER_H

#include "core/json.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct h2b_run_options {
    const char *scenario;    /* scenario file path */
    const char *out;         /* results path; NULL = results/runs/<name>-<UTC stamp>.json */
    const char *filter;      /* --filter terms or NULL */
    const char *perf_record; /* --perf-record cells (the --filter syntax) or NULL: the
                                scenario's perf_record.cells, if any */
    bool perf_record_client; /* --perf-record-client: profile the client too */
    uint32_t repeat;         /* --repeat multiplier (>= 1) */
    bool dry_run;            /* print the expanded cells and stop */
    bool fail_fast;          /* stop at the first failed cell */
    bool progress;           /* progress bar on stderr */
    const char *self;        /* this h2bench executable (bundled server and h2bench client) */
    const char *peers_dir;   /* servers/peers; NULL = $H2B_PEERS_DIR or the build's source tree */
    FILE *report;            /* where cell lines and the summary table go (stdout) */
    FILE *log;               /* where warnings and the progress bar go (stderr); NULL = nowhere:
                                the library prints only to the streams its caller hands it */
};

/* What a run produced. */
struct h2b_run_summary {
    size_t cells;         /* cells in the plan */
    size_t cells_ok;      /* cells measured */
    size_t cells_failed;  /* cells failed (target died, client failed, too few requests) */
    size_t cells_skipped; /* cells their target cannot serve (matrix.protocol, matrix.tls) */
    bool micro_failed;    /* the micro suites did not run */
    bool interrupted;     /* SIGINT stopped the run early (the results hold the cells done) */
    char out[4096];       /* the results file written ("" for a dry run) */
};

/* Runs o->scenario. Returns H2B_OK when every cell and suite ran (failed requests inside a cell
 * are data, not a failure), H2B_ERR_PARSE / H2B_ERR_INVAL for a malformed scenario or option
 * (diag names file:line:column and the field), H2B_ERR_IO when the results cannot be written,
 * or H2B_ERR_INTERRUPTED / H2B_ERR_CLOSED when cells failed (the results file is still written
 * and sum says how many). */
int h2b_run(const struct h2b_run_options *o, struct h2b_run_summary *sum, struct h2b_diag *diag);

#endif
