/*
 * profile.h - `h2bench run --perf-record CELLS`: CPU profiles of the targets (and optionally the
 * client) during the cells a filter names, after their warm-up, bounded in time.
 *
 * The runner calls begin when a cell's client has started, tick from its poll loop (the
 * recording starts once the warm-up has passed), end when the client has finished, and
 * cell_json when it writes the cell. Artefacts (folded stacks, flame graph SVG) go into
 * RESULTS-STEM.profiles/ beside the results file; the cell's "profile" names them relative to
 * the results file's directory. Where perf cannot record, the cell's profile is null and
 * reason() says why; the cell itself is measured as usual. One thread uses a struct.
 */
#ifndef H2B_RUN_PROFILE_H
#define H2B_RUN_PROFILE_H

#include "run/expand.h"
#include "core/json.h"

#include <stdbool.h>
#include <stddef.h>

struct h2b_run_prof;

/* Which cells to profile: filter in the --filter syntax against s's targets, matched on the
 * expanded cells (ncells of them). client: record the client too. results_path: where the
 * results file will be written (NULL: only check the filter, as a dry run does). Returns H2B_OK,
 * H2B_ERR_PARSE (bad filter; d says why), H2B_ERR_NOTFOUND (the filter matches none of the cells;
 * d names it), H2B_ERR_IO (the artefact directory cannot be created) or H2B_ERR_NOMEM. *out
 * untouched on failure. */
int h2b_run_prof_new(struct h2b_run_prof **out, const struct h2b_scenario *s, const char *filter,
                     bool client, const struct h2b_cell *cells, size_t ncells,
                     const char *results_path, struct h2b_diag *d);

/* Frees p, stopping any recording (NULL allowed). */
void h2b_run_prof_del(struct h2b_run_prof *p);

/* Cell i's client has started. Records target_pid (0: none to record) and, if asked,
 * client_pid, delay_s after now, for at most max_s. A cell run twice (a timed cell extended)
 * keeps the last run's profile. */
void h2b_run_prof_begin(struct h2b_run_prof *p, size_t i, const struct h2b_cell *c,
                        const char *target_name, int target_pid, int client_pid, double delay_s,
                        double max_s);

/* Starts the recording when its delay has passed; call it from the poll loop. */
void h2b_run_prof_tick(struct h2b_run_prof *p);

/* The cell's client has finished (or was stopped): stops perf, folds the stacks, writes the
 * artefacts. */
void h2b_run_prof_end(struct h2b_run_prof *p);

/* Cell i's "profile" into out (initialised here; not present when cell i is not profiled):
 * server (and, when asked, client), each present when recorded. Returns H2B_OK or
 * H2B_ERR_NOMEM. */
struct h2b_results_cell_profile;
int h2b_run_prof_cell(const struct h2b_run_prof *p, size_t i, struct h2b_results_cell_profile *out);

/* Why cell i has no profile (or part of it) into buf; "" if it has one or is not profiled. */
void h2b_run_prof_reason(const struct h2b_run_prof *p, size_t i, char *buf, size_t size);

#endif
