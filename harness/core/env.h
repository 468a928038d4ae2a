/*
 * env.h - the environment fingerprint stored with every result (the "env" block).
 *
 * Numbers are only comparable between runs on the same machine, build and library versions, so
 * each results file records them; h2bench compare and the gates read them to warn about
 * apples-to-oranges comparisons.
 */
#ifndef H2B_CORE_ENV_H
#define H2B_CORE_ENV_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* Builds the env object: cpu_model, cpus, cpus_allowed, kernel, compiler, compiler_flags,
 * build_type, sanitizers (array), nghttp2, openssl, jansson (runtime library versions),
 * git_commit, hostname, perf_counters (bool), perf_counters_reason ("" when usable) and
 * warnings (array of strings: everything that makes numbers from this run less comparable).
 * Fields that cannot be determined are null with a warning. Written through the results model
 * (struct h2b_results_env, core/results.h), the table every reader of env decodes with. On
 * success *out owns a new object. Returns H2B_OK or H2B_ERR_NOMEM. Thread-safe. */
int h2b_env_collect(json_t **out);

/* Probes whether a user-space hardware instruction counter can be opened and counts
 * (perf_event_open, PERF_COUNT_HW_INSTRUCTIONS, exclude_kernel). Returns true if so (reason
 * gets ""), false with the reason (the errno text and what it usually means) otherwise. */
bool h2b_env_perf_counters(char *reason, size_t size);

#endif
