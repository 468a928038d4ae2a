/*
 * search.h - `h2bench load --find-max --slo ...`: the highest open-loop rate at which the SLO
 * still holds, with its evidence (the last passing and the first failing step).
 *
 * Each step is a whole load run at one --total-rps: a warm-up (not judged) then the step's hold,
 * judged on the run's own histogram against every objective (a step passes only if each one is
 * shown to pass: not evaluable is not a pass); a failing step is tried again
 * (--find-max-retries, 1 by default) and fails only if every try does. The rate doubles from the
 * start until a step fails (or halves until one passes), then bisects until the failing rate is
 * within precision of the passing one.
 */
#ifndef H2B_LOAD_SEARCH_H
#define H2B_LOAD_SEARCH_H

#include "load/load.h"

struct h2b_results_search;
struct h2b_results_search_step;

/* Called after each step (index from 0), on the caller's thread. */
typedef void (*h2b_load_search_fn)(void *ctx, size_t index,
                                   const struct h2b_results_search_step *step);

/* Runs the search for cfg (its --find-max-* settings and its SLO, cfg->slo not NULL) and fills
 * *out (initialised here; free with h2b_model_free(&h2b_results_search_model, out)). Returns
 * H2B_OK (out->capacity_per_s null when even the lowest step failed), H2B_ERR_INTERRUPTED
 * (h2b_load_stop: out holds the steps so far) or a step's h2b_load_run error (err says which). */
int h2b_load_find_max(const struct h2b_load_config *cfg, h2b_load_search_fn each, void *ctx,
                      struct h2b_results_search *out, struct h2b_diag *err);

#endif
