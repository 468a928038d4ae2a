/*
 * json.h - JSON files with errors that point at file:line:column, on top of jansson.
 *
 * Every reader of an h2bench file (scenarios, ceilings, results) loads it with h2b_json_load,
 * keeps the text, and validates fields with the typed getters below; a bad field becomes
 * "scenarios/x.json:12:20: matrix.connections[2]: expected an integer in [1, 1000], got 0".
 * Paths name a value in a document: keys joined by '.', array indexes in brackets
 * ("targets[0].name", "matrix.connections[2]", "" for the root). Keys in paths may not contain
 * '.', '[' or ']'.
 *
 * Writers use h2b_json_write_atomic: a reader never sees a half-written file (fs.h's
 * h2b_file_write_atomic under it). The diagnostics type is diag.h's.
 */
#ifndef H2B_CORE_JSON_H
#define H2B_CORE_JSON_H

#include "core/diag.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Where a document came from, for locating paths in diagnostics. Both may be NULL (a document
 * built in memory): diagnostics then name the path without a line. Borrowed. */
struct h2b_json_src {
    const char *file;
    const char *text;
};

/* Largest file h2b_json_load reads (bytes). */
#define H2B_JSON_MAX_FILE (64u << 20)

/* Reads and parses the file at path (duplicate keys are an error). On success *out owns the
 * document (json_decref it) and, if text_out is not NULL, *text_out a malloc'ed NUL-terminated
 * copy of the file's text (free it). On failure both are untouched and diag (may be NULL) says
 * why, with jansson's line:column for syntax errors.
 * Returns H2B_OK, H2B_ERR_IO (cannot open/read), H2B_ERR_RANGE (larger than H2B_JSON_MAX_FILE),
 * H2B_ERR_PARSE (not JSON), H2B_ERR_NOMEM. */
int h2b_json_load(const char *path, json_t **out, char **text_out, struct h2b_diag *diag);

/* Finds where the value at path starts in text (1-based line, column in characters).
 * Returns H2B_OK, H2B_ERR_NOTFOUND (no such value), H2B_ERR_INVAL (malformed path) or
 * H2B_ERR_PARSE (text is not well-formed JSON up to that value). */
int h2b_json_locate(const char *text, const char *path, int *line, int *column);

/* Fills d: file (NULL: ""), message "<path>: <fmt...>" (just fmt when path is NULL or ""),
 * located at path in text or, if that value is missing, at its nearest existing ancestor
 * (so "missing field" points at the object that lacks it). text NULL: line and column 0. */
void h2b_diag_set(struct h2b_diag *d, const char *file, const char *text, const char *path,
                  const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* Writes doc to path atomically: a temporary file in the same directory, fsync, rename over
 * path, fsync of the directory (a path that is not a regular file: see h2b_file_write_atomic).
 * Indent 2, keys in insertion order, reals with 15 significant digits, trailing newline, mode 0644.
 * On any failure path is unchanged and no temporary is left behind. Returns H2B_OK, H2B_ERR_INVAL,
 * H2B_ERR_NOMEM or H2B_ERR_IO (diag says which step failed and why). */
int h2b_json_write_atomic(const char *path, const json_t *doc, struct h2b_diag *diag);

/* Path building: parent + "." + key, or parent + "[index]" (parent "" or NULL: the root).
 * Truncates safely to size. */
void h2b_json_path_key(char *buf, size_t size, const char *parent, const char *key);
void h2b_json_path_index(char *buf, size_t size, const char *parent, size_t index);

/*
 * Typed checks. h2b_json_check_* validate a value (NULL: absent) found at path; h2b_json_get_*
 * look key up in the object obj (found at path) and check it. flags:
 *   H2B_JSON_REQUIRED  absent or null is an error ("missing required field", "must not be null")
 *   H2B_JSON_OPTIONAL  absent is fine
 *   H2B_JSON_NULLABLE  null is fine ("not measured here")
 * Return H2B_OK with *out set, H2B_JSON_ABSENT (1) when absent/null was allowed (*out untouched),
 * or H2B_ERR_PARSE with d filled ("expected a positive integer, got -3" at the value).
 * Strings and containers are borrowed from the document.
 */
#define H2B_JSON_REQUIRED 0u
#define H2B_JSON_OPTIONAL 1u
#define H2B_JSON_NULLABLE 2u
#define H2B_JSON_ABSENT 1

int h2b_json_check_u64(const struct h2b_json_src *src, const json_t *value, const char *path,
                       unsigned flags, uint64_t min, uint64_t max, uint64_t *out,
                       struct h2b_diag *d);
int h2b_json_check_double(const struct h2b_json_src *src, const json_t *value, const char *path,
                          unsigned flags, double min, double max, double *out, struct h2b_diag *d);
int h2b_json_check_bool(const struct h2b_json_src *src, const json_t *value, const char *path,
                        unsigned flags, bool *out, struct h2b_diag *d);
/* A string of at least one character. */
int h2b_json_check_string(const struct h2b_json_src *src, const json_t *value, const char *path,
                          unsigned flags, const char **out, struct h2b_diag *d);
int h2b_json_check_object(const struct h2b_json_src *src, const json_t *value, const char *path,
                          unsigned flags, json_t **out, struct h2b_diag *d);
int h2b_json_check_array(const struct h2b_json_src *src, const json_t *value, const char *path,
                         unsigned flags, json_t **out, struct h2b_diag *d);

int h2b_json_get_u64(const struct h2b_json_src *src, const json_t *obj, const char *path,
                     const char *key, unsigned flags, uint64_t min, uint64_t max, uint64_t *out,
                     struct h2b_diag *d);
int h2b_json_get_double(const struct h2b_json_src *src, const json_t *obj, const char *path,
                        const char *key, unsigned flags, double min, double max, double *out,
                        struct h2b_diag *d);
int h2b_json_get_bool(const struct h2b_json_src *src, const json_t *obj, const char *path,
                      const char *key, unsigned flags, bool *out, struct h2b_diag *d);
int h2b_json_get_string(const struct h2b_json_src *src, const json_t *obj, const char *path,
                        const char *key, unsigned flags, const char **out, struct h2b_diag *d);
int h2b_json_get_object(const struct h2b_json_src *src, const json_t *obj, const char *path,
                        const char *key, unsigned flags, json_t **out, struct h2b_diag *d);
int h2b_json_get_array(const struct h2b_json_src *src, const json_t *obj, const char *path,
                       const char *key, unsigned flags, json_t **out, struct h2b_diag *d);

/* Rejects keys of obj (found at path) that are not in allowed (NULL-terminated): catches typos
 * such as "conections". Returns H2B_OK or H2B_ERR_PARSE with d at the first unknown key's value
 * ("unknown field 'conections'; expected one of: connections, streams"). */
int h2b_json_check_keys(const struct h2b_json_src *src, const json_t *obj, const char *path,
                        const char *const *allowed, struct h2b_diag *d);

#endif
