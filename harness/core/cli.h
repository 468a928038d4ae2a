/*
 * cli.h - strict parsers for command-line values, shared by every subcommand.
 *
 * Each parser accepts the whole string or fails: "10x" is not 10. Failing parsers leave *out
 * untouched and return H2B_ERR_PARSE (not a number) or H2B_ERR_RANGE (outside [min, max]).
 */
#ifndef H2B_CORE_CLI_H
#define H2B_CORE_CLI_H

#include <stdbool.h>
#include <stdint.h>

struct option;

/* Unsigned decimal integer, digits only (sizes with suffixes: h2b_cli_parse_size). */
int h2b_cli_parse_u64(const char *text, uint64_t min, uint64_t max, uint64_t *out);

/* Size in bytes: digits with an optional suffix K, M or G (powers of 1024, case-insensitive). */
int h2b_cli_parse_size(const char *text, uint64_t min, uint64_t max, uint64_t *out);

/* Duration: a decimal number with an optional unit ns, us, ms, s (default), m, h.
 * "1.5s", "250ms", "10". Result in ns. */
int h2b_cli_parse_duration_ns(const char *text, uint64_t min_ns, uint64_t max_ns, uint64_t *out);

/* Floating-point number in [min, max] (finite). */
int h2b_cli_parse_double(const char *text, double min, double max, double *out);

/* For a word getopt_long did not accept (arg: "--jsn", "--md" with no value after it, "--md=x"),
 * the long option of opts the user most likely meant: the one named exactly (then *needs_value
 * is set: getopt stopped because its value was missing), else the nearest by edit distance
 * (insertions, deletions, substitutions and swaps of adjacent letters) within a third of its
 * length, at least 1, or the one arg begins. NULL when nothing is that near or arg is a short
 * option. Thread-safe. */
const char *h2b_cli_suggest(const char *arg, const struct option *opts, bool *needs_value);

#endif
