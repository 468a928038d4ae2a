/*
 * runner_int.h - internal to h2bench::run: the state of one `h2bench run`, shared by the
 * matrix driver (runner.c), the run directory (rundir.c) and the console tables (console.c).
 *
 * One struct for the three files, not three sets of parameters: the tables and the run
 * directory read the scenario, the expanded cells and the targets' probed maxima the driver
 * fills in, and passing those one by one would spell the run's shape three times.
 */
#ifndef H2B_RUN_RUNNER_INT_H
#define H2B_RUN_RUNNER_INT_H

#include "run/client.h"
#include "core/error.h"
#include "run/expand.h"
#include "run/peers.h"
#include "run/runner.h"
#include "run/scenario.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

struct h2b_target;
struct h2b_run_prof;

struct run {
    const struct h2b_run_options *o;
    struct h2b_diag *diag;
    json_t *doc;     /* the scenario document */
    json_t *results; /* the h2bench.result/1 document being built */
    char *text;      /* the scenario file's text, for diagnostics */
    struct h2b_scenario *s;
    struct h2b_peers *peers;
    /* Per instance (inst_of(): a target in one protocol and TLS setting, started on its own
     * with the configuration that serves it): */
    struct h2b_target **targets; /* NULL where the instance did not start */
    char (*target_why)[256];     /* why an instance is unavailable */
    char (*skip_why)[256];       /* why the target cannot serve such cells ("" = it can) */
    char cert[300], key[300];    /* the run's self-signed certificate (TLS cells), or "" */
    uint32_t *server_max;        /* advertised (or configured) max streams per target */
    bool *server_max_probed;
    struct h2b_cell *cells;
    size_t ncells;
    char dir[256]; /* private run directory (configs, logs, client outputs) */
    char docroot[300];
    char body_file[300];
    bool perf;
    char perf_reason[256];
    struct h2b_run_prof *prof; /* --perf-record, or NULL */
    uint64_t started_ns;
    size_t done;
    bool bar_shown;
};

/* What one cell gave: the client's metrics and what the runner observed beside them. */
struct cell_result {
    bool ok;
    bool skipped; /* the target cannot serve the cell (reason says why): not run, not failed */
    char reason[512];
    struct h2b_cell_metrics m;
    bool have_client_cpu, have_server;
    double client_cpu_s, server_cpu_s;
    uint64_t server_rss_kib;
    bool have_instructions;
    double instructions_per_request;
    char perf_note[160];  /* why instructions are missing although counters exist */
    char extra_note[160]; /* what the runner did differently for this cell */
};

/* Reasons are cut to their buffer (core/error.h). */
#define say h2b_reason

/* runner.c: whether this h2bench serves HTTP/3, and whether the scenario's client can drive
 * cell c (when not, diag, which may be NULL, says why). */
bool h2b__run_have_h3(void);
bool h2b__run_client_serves(const struct run *r, const struct h2b_cell *c, struct h2b_diag *diag);

/* ---- rundir.c: the run directory and the results path ---- */

/* Creates the private run directory in /tmp and, for a matrix, its docroot, certificate and
 * request body. H2B_OK or H2B_ERR_IO (r->diag says what). */
int h2b__run_dir_prepare(struct run *r);

/* Removes a run directory this runner created (nothing outside /tmp/h2bench-run-*). */
void h2b__run_dir_remove(const char *dir, FILE *log);

/* One warning line "h2bench run: ..." on o->log (nothing when it is NULL). */
void h2b__run_warn(const struct run *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The results path (--out or results/runs/NAME-STAMP.json) into buf, its directory created
 * and writable, and the file locked against a second run (*lock, -1 when nothing is locked:
 * stdout, a device or a FIFO). H2B_OK, H2B_ERR_IO or the lock's code; r->diag says why. */
int h2b__run_out_claim(const struct run *r, char *buf, size_t size, int *lock);

/* ---- console.c: what `h2bench run` prints (o->report, and the progress bar on stderr) ---- */

/* "h2", "h1+tls", ... */
void h2b__run_proto_label(char *buf, size_t size, enum h2b_protocol p, bool tls);

/* The progress bar for cell i (when o->progress), and its removal before a table line. */
void h2b__run_progress(struct run *r, size_t i);
void h2b__run_progress_clear(struct run *r);

/* The cell table's header and one line per finished cell. */
void h2b__run_print_header(const struct run *r);
void h2b__run_print_cell_line(const struct run *r, size_t i, const struct cell_result *res);

/* The dry run's plan: the expanded cells and the micro suites' command line. */
void h2b__run_print_plan(const struct run *r);

/* The per-point summary tables after the matrix (doc: the results being built). */
void h2b__run_print_summaries(const struct run *r, const json_t *doc);

/* "What a request costs each server": the budget table (doc: the results being built). */
void h2b__run_print_budgets(const struct run *r, const json_t *doc);

#endif
