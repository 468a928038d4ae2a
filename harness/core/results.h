/*
 * results.h - h2bench.result/1 documents: create, validate, read, write.
 *
 * The format is the contract in DESIGN.md ("Results file"). Readers accept any extra fields
 * (fields are added without a schema bump) and check the types of the contract's fields; a
 * metric may be null ("not measured here"), identifiers may not. Writing is atomic.
 */
#ifndef H2B_RESULTS_H
#define H2B_RESULTS_H

#include "json.h"

#define H2B_RESULTS_SCHEMA "h2bench.result/1"

/* Builds a new results document: schema, created (UTC now), tool {name, version, git_commit},
 * scenario {name, file, sha256 of the file's bytes} (each null when the argument is NULL), env
 * (h2b_env_collect) and empty micro and matrix arrays. *out owns it on success.
 * Returns H2B_OK, H2B_ERR_IO (the scenario file cannot be read) or H2B_ERR_NOMEM. */
int h2b_results_new(json_t **out, const char *scenario_name, const char *scenario_file);

/* Appends entry to the document's "micro" or "matrix" array (section), taking ownership of
 * entry in every case. Returns H2B_OK, H2B_ERR_INVAL (no such array) or H2B_ERR_NOMEM. */
int h2b_results_append(json_t *doc, const char *section, json_t *entry);

/* Checks doc against the schema: schema string, created, tool, scenario, env, and each micro and
 * matrix entry's fields and types. src locates errors (may be NULL). Returns H2B_OK or
 * H2B_ERR_PARSE with diag filled. */
int h2b_results_validate(const json_t *doc, const struct h2b_json_src *src, struct h2b_diag *diag);

/* Loads and validates the results file at path. *out owns the document on success.
 * Returns H2B_OK or the codes of h2b_json_load and h2b_results_validate (diag says why). */
int h2b_results_read(const char *path, json_t **out, struct h2b_diag *diag);

/* Validates doc, then writes it atomically to path (h2b_json_write_atomic). An invalid document
 * is not written (H2B_ERR_INVAL, diag names the field). */
int h2b_results_write(const char *path, const json_t *doc, struct h2b_diag *diag);

/* SHA-256 of the file's bytes as 64 lowercase hex digits (OpenSSL EVP). Returns H2B_OK,
 * H2B_ERR_IO or H2B_ERR_NOMEM. */
int h2b_results_file_sha256(const char *path, char hex[65]);

#endif
