/*
 * slo.h - service level objectives for `h2bench load --slo`: parsed once, judged over every
 * window as it completes (from the per-interval results) and over the whole run.
 *
 * `--slo 'p99<5ms,p999<20ms,errors<0.1%,rps>0.98*offered'`: clauses joined by commas, each
 * METRIC OP VALUE with OP one of < <= > >=. Metrics: pNN (p50, p99, p999 = 99.9, p99.5 ...),
 * max and mean (durations with a unit: 5ms, 250us, 1s), errors (failed / ended, as a percentage
 * with % or a ratio) and rps (ended per second: a rate, or K*offered, a share of the rate the
 * schedule intended). A figure the span cannot show is "not evaluable", never a pass: a
 * percentile needs a sample above it (p99.9 needs 1000 requests), errors and rps need a request
 * or an intended rate.
 *
 * Not thread-safe: one run's SLO is used on the thread that runs the load (the interval hook)
 * and then by the caller.
 */
#ifndef H2B_LOAD_SLO_H
#define H2B_LOAD_SLO_H

#include "core/hist.h"
#include "core/model.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct h2b_diag;
struct h2b_results_interval;
struct h2b_results_latency;

enum h2b_slo_metric { H2B_SLO_PCT, H2B_SLO_MAX, H2B_SLO_MEAN, H2B_SLO_ERRORS, H2B_SLO_RPS };
enum h2b_slo_op { H2B_SLO_LT, H2B_SLO_LE, H2B_SLO_GT, H2B_SLO_GE };

struct h2b_slo_clause {
    char text[64]; /* as written (trimmed) */
    enum h2b_slo_metric metric;
    double pct; /* H2B_SLO_PCT: the percentile, 0 < pct < 100 */
    enum h2b_slo_op op;
    double limit;      /* ns for latency, a ratio for errors, req/s for rps (0 with offered) */
    double of_offered; /* rps: K of K*offered; 0: limit is absolute */
};

/* What one span measured: the figures every clause is judged on. */
struct h2b_slo_span {
    double start_s, end_s; /* of the measurement */
    const struct h2b_hist *latency;
    double ended, errors;
    double offered; /* requests the schedule intended in it; NAN: closed loop */
};

#define H2B_SLO_MAX_CLAUSES 32

struct h2b_slo {
    struct h2b_slo_clause clause[H2B_SLO_MAX_CLAUSES];
    size_t n;
    uint64_t window_ns; /* --slo-window, 0: the run only */
    bool abort;         /* --slo-abort: stop the run at the first breached window */
    uint64_t grace_ns;  /* --slo-grace: no abort before this much of the measurement */
    /* judged so far: verdicts of struct h2b_results_slo, windows in order, the run last */
    struct h2b_model_array verdicts;
    size_t failed, not_evaluable;         /* counts over verdicts */
    size_t run_failed, run_not_evaluable; /* of the whole run's verdicts */
    bool aborted;                         /* h2b_load_stop() was called for a breach */
    bool run_judged;                      /* verdicts from run_at on are the run's */
    size_t run_at;
    /* the window being filled */
    struct h2b_hist *w_latency;
    double w_start, w_end, w_ended, w_errors, w_offered;
    bool w_open;
    int rc; /* H2B_OK or the first H2B_ERR_NOMEM the interval hook met */
};

/* Parses --slo text into s (zeroed by the caller; window, abort and grace are set apart).
 * H2B_OK, H2B_ERR_PARSE (d: file "--slo", line 1, the 1-based column, what was expected) or
 * H2B_ERR_NOMEM. */
int h2b_slo_parse(struct h2b_slo *s, const char *text, struct h2b_diag *d);
void h2b_slo_free(struct h2b_slo *s);

/* Judges every clause over span, appending one verdict each; true when none failed. */
bool h2b_slo_judge(struct h2b_slo *s, const struct h2b_slo_span *span, bool run);

/* The load's interval hook (struct h2b_load_config's on_interval, ctx = the struct h2b_slo):
 * adds the interval to the window and judges the window when it is whole; with abort, a breach
 * after the grace stops the run (h2b_load_stop). */
void h2b_slo_on_interval(void *ctx, const struct h2b_results_interval *row,
                         const struct h2b_hist *latency);

/* The windows judged after the run from its merged intervals (an MPI job's rank 0: the ranks'
 * intervals merged exactly), as the interval hook would have judged them live; never aborts
 * (the run is over). A row whose histogram does not decode sets s->rc. */
void h2b_slo_replay(struct h2b_slo *s, const struct h2b_results_interval *rows, size_t n);

/* The whole run's span of res (run with cfg): its histogram, counts and offered requests. */
struct h2b_load_config;
struct h2b_load_result;
void h2b_slo_run_span(struct h2b_slo_span *sp, const struct h2b_load_config *cfg,
                      const struct h2b_load_result *res);

/* After the run: judges the window left open (a shorter last one) and the whole run. */
void h2b_slo_finish(struct h2b_slo *s, const struct h2b_slo_span *run);

/* Why the SLO does not hold, into buf: the first breach ("SLO breached: p99<5ms in window
 * 3.0-4.0s: 12.300ms, limit 5.000ms; 2 breaches") or the run's objectives not evaluable. */
void h2b_slo_first_breach(const struct h2b_slo *s, char *buf, size_t n);

/* One line per verdict that is not a pass in a window, and every verdict of the run:
 * "slo: p99<5ms run 0.0-10.0s: pass (3.21ms)". */
void h2b_slo_report_text(FILE *f, const struct h2b_slo *s);

#endif
