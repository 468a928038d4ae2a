/*
 * output.c - the CLI's one way to write a rendered text (a markdown verdict, JUnit XML, a
 * proposal) to the file a flag names: atomically for a regular file, directly for "-" (stdout),
 * a device or a FIFO (h2b_file_write_atomic decides), and the diagnostic printed on failure.
 *
 * Rejected: each command keeping its own copy (cmd_ab.c's and cmd_compare.c's write_md,
 * cmd_gate.c's write_out: duplicates D113), which differed only in whether "-" was special-cased
 * before the library call that already handles it. The library writes "-" to fd 1 itself, so
 * stdout's buffer is flushed first: `compare --md -` printed its markdown before the tables it
 * had printf'd when stdout was a pipe.
 */
#include "commands.h"
#include "core/json.h"

#include <stdio.h>
#include <string.h>

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
