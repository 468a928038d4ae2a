/*
 * commands.h - the subcommands of h2bench, one cmd_*.c each.
 *
 * Each takes argc/argv with argv[0] the subcommand name and returns the process exit code
 * (0 success, 1 check failed, 2 usage or input error, 3 runtime failure).
 */
#ifndef H2B_COMMANDS_H
#define H2B_COMMANDS_H

#include "core/error.h" /* enum h2b_exit, h2b_exit_code() */
#include "core/fs.h"    /* enum h2b_fs_output */

#include <stdio.h>

int h2b_cmd_report(int argc, char **argv);
int h2b_cmd_load(int argc, char **argv);
int h2b_cmd_merge(int argc, char **argv);
/* h2bench serve: the reference HTTP/2 server (cmd_serve.c). */
int h2b_cmd_serve(int argc, char **argv);
/* h2bench floor-serve: the kernel's floor, a raw-TCP request/response server (cmd_floor.c). */
int h2b_cmd_floor(int argc, char **argv);
int h2b_cmd_gate(int argc, char **argv);
int h2b_cmd_compare(int argc, char **argv);
/* h2bench history: change points over results, the history store (cmd_history.c). */
int h2b_cmd_history(int argc, char **argv);
int h2b_cmd_run(int argc, char **argv);
int h2b_cmd_micro(int argc, char **argv);
/* h2bench flame: flame graphs from folded stacks (cmd_flame.c). */
int h2b_cmd_flame(int argc, char **argv);
/* h2bench ab: base vs head built apart, run interleaved, judged (cmd_ab.c). */
int h2b_cmd_ab(int argc, char **argv);
/* h2bench export: results in BMF or github-action-benchmark format (cmd_export.c). */
int h2b_cmd_export(int argc, char **argv);

/* Writes text to path ("-" is stdout) atomically (output.c); on failure prints the diagnostic to
 * stderr. Returns H2B_EXIT_OK or H2B_EXIT_RUNTIME. */
int h2b_cmd_write_text(const char *path, const char *text);

/* The usage error for an option getopt_long returned as unknown or missing its value (arg: the
 * word it stopped at, argv[optind - 1]; opts: the command's long options): "h2bench CMD:
 * unknown option 'ARG'" (or "option '--X' needs a value"), "Did you mean --X?" when one is
 * near, and a pointer to CMD --help, to stderr (output.c). Returns H2B_EXIT_USAGE. */
struct option;
int h2b_cmd_bad_option(const char *cmd, const char *arg, const struct option *opts);

/* The option loop of a command whose options are codes lo..hi handled by one function
 * (output.c): getopt_long over argv with longopts; -h and --help (code 'h') print usage to
 * stdout and return H2B_EXIT_OK; a code outside lo..hi is h2b_cmd_bad_option's; every other goes
 * to on_option(ctx, code, optarg), which returns -1 to go on or the exit code to stop with.
 * Returns -1 with optind at the first operand, or the exit code. */
int h2b_cmd_getopt(const char *cmd, int argc, char **argv, const struct option *longopts, int lo,
                   int hi, void (*usage)(FILE *), int (*on_option)(void *ctx, int c, char *arg),
                   void *ctx);

/* An output path checked before the work starts (core/fs.h h2b_fs_output_check): H2B_EXIT_OK
 * (path NULL too), or "h2bench CMD: FLAG PATH: why" on stderr and H2B_EXIT_USAGE. */
int h2b_cmd_check_output(const char *cmd, const char *flag, const char *path,
                         enum h2b_fs_output kind);

/* An input file a flag names (a certificate, a key) checked before the work starts: readable,
 * H2B_EXIT_OK (path NULL too); else "h2bench CMD: FLAG PATH: why" and H2B_EXIT_USAGE. */
int h2b_cmd_check_input(const char *cmd, const char *flag, const char *path);

#endif
