/*
 * output.c - what the commands print the same way: a rendered text (a markdown verdict, JUnit
 * XML, a proposal) written to the file a flag names (atomically for a regular file, directly for
 * "-" (stdout), a device or a FIFO: h2b_file_write_atomic decides), the diagnostic printed on
 * failure; and the usage error for an option getopt_long did not accept.
 *
 * Rejected: each command keeping its own copy (cmd_ab.c's and cmd_compare.c's write_md,
 * cmd_gate.c's write_out: duplicates D113), which differed only in whether "-" was special-cased
 * before the library call that already handles it. The library writes "-" to fd 1 itself, so
 * stdout's buffer is flushed first: `compare --md -` printed its markdown before the tables it
 * had printf'd when stdout was a pipe. The option error was written out in every command, in two
 * wordings ("unknown or incomplete option", "unknown option or missing value") for one case;
 * a helper in core/cli.c was rejected: libraries do not print (STYLE.md 17). The error is
 * h2load's shape: one line, "Did you mean --x?" (core/cli.c finds x), and where the options
 * are; the 20 to 80 lines of a command's usage buried the one line that mattered.
 *
 * Output paths are checked when the options are read, before the work (a load, a suite, a
 * build): h2b_fs_output_check (core/fs.c) says what is wrong, this prints it as a usage error.
 */
#include "commands.h"
#include "core/cli.h"
#include "core/fs.h"
#include "core/json.h"

#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int h2b_cmd_write_text(const char *path, const char *text)
{
    struct h2b_diag d;
    fflush(stdout); /* "-" is written to fd 1 directly: what was printf'd comes first */
    if (h2b_file_write_atomic(path, text, strlen(text), &d) != H2B_OK) {
        h2b_diag_print(&d, stderr);
        return H2B_EXIT_RUNTIME;
    }
    return H2B_EXIT_OK;
}

int h2b_cmd_bad_option(const char *cmd, const char *arg, const struct option *opts)
{
    bool needs_value = false;
    const char *near = h2b_cli_suggest(arg, opts, &needs_value);
    arg = arg ? arg : "";
    if (needs_value)
        fprintf(stderr, "h2bench %s: option '--%s' needs a value\n", cmd, near);
    else if (near)
        fprintf(stderr, "h2bench %s: unknown option '%s'\nDid you mean --%s?\n", cmd, arg, near);
    else
        fprintf(stderr, "h2bench %s: unknown option '%s'\n", cmd, arg);
    fprintf(stderr, "Run 'h2bench %s --help' for the options.\n", cmd);
    return H2B_EXIT_USAGE;
}

int h2b_cmd_getopt(const char *cmd, int argc, char **argv, const struct option *longopts, int lo,
                   int hi, void (*usage)(FILE *), int (*on_option)(void *ctx, int c, char *arg),
                   void *ctx)
{
    int c;
    optind = 0;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        if (c == 'h') {
            usage(stdout);
            return H2B_EXIT_OK;
        }
        if (c < lo || c > hi)
            return h2b_cmd_bad_option(cmd, argv[optind - 1], longopts);
        int ec = on_option(ctx, c, optarg);
        if (ec >= 0)
            return ec;
    }
    return -1;
}

int h2b_cmd_check_output(const char *cmd, const char *flag, const char *path,
                         enum h2b_fs_output kind)
{
    struct h2b_diag d = {0};
    if (!path || h2b_fs_output_check(path, kind, &d) == H2B_OK)
        return H2B_EXIT_OK;
    fprintf(stderr, "h2bench %s: %s %s: %s\n", cmd, flag, path, d.message);
    return H2B_EXIT_USAGE;
}

int h2b_cmd_check_input(const char *cmd, const char *flag, const char *path)
{
    if (!path || access(path, R_OK) == 0)
        return H2B_EXIT_OK;
    fprintf(stderr, "h2bench %s: %s %s: %s\n", cmd, flag, path, strerror(errno));
    return H2B_EXIT_USAGE;
}
