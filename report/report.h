/*
 * report.h - render h2bench.result/1 files into a markdown performance report with charts.
 *
 * h2b_report_write loads every input first (a malformed file stops it before anything is
 * written), renders the charts with gnuplot and REPORT.md into a temporary directory inside the
 * output directory, then renames the files into place, REPORT.md last. A failing run leaves the
 * output directory as it was. Not thread-safe (it spawns gnuplot and changes no global state,
 * but two reports into one directory race on the renames).
 */
#ifndef H2B_REPORT_REPORT_H
#define H2B_REPORT_REPORT_H

#include "core/json.h"

#include <stddef.h>

struct h2b_report_options {
    const char *const *results; /* results files, oldest first; the last is reported in full */
    size_t n_results;           /* >= 1 */
    const char *ceilings;       /* h2bench.ceilings/1 file for "Gated hot paths", or NULL */
    const char *compare;        /* base results file for the A/B section, or NULL */
    const char *out_dir;        /* created with its parents if missing */
    const char *gnuplot;        /* gnuplot binary; NULL: $H2B_GNUPLOT, else "gnuplot" in PATH */
};

/* Writes out_dir/REPORT.md, the charts (NAME.png, NAME.svg) and their sources (NAME.gp,
 * NAME.dat). When markdown is not NULL it receives a malloc'd summary (caller frees): REPORT.md
 * with the component suite and req/s charts as Mermaid xychart-beta blocks instead of PNG links,
 * the other charts named, for a page with no files beside it (a CI step summary).
 * Without gnuplot the report is written without charts and says so.
 * Returns H2B_OK; H2B_ERR_PARSE (malformed input; diag at file:line:column),
 * H2B_ERR_NOTFOUND (an input cannot be read), H2B_ERR_IO (the output cannot be written),
 * H2B_ERR_INVAL (bad options), H2B_ERR_SYS (gnuplot failed), H2B_ERR_NOMEM. diag always gets a
 * message on failure. */
int h2b_report_write(const struct h2b_report_options *opt, char **markdown, struct h2b_diag *diag);

#endif
