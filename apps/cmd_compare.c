/*
 * cmd_compare.c - `h2bench compare A.json B.json [--md FILE]`: A/B two results files.
 *
 * Thin: the comparison and its statistics live in the gate library (gates/compare.c). Compare
 * is a reading aid, not a gate: it exits 0 whatever the differences are (use `h2bench gate` to
 * fail a build), 2 on malformed input.
 */
#include "commands.h"
#include "compare.h"
#include "error.h"
#include "json.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *f)
{
    fprintf(f, "usage: h2bench compare A.json B.json [--md FILE]\n\n"
               "Compares two results files (h2bench.result/1): every micro benchmark and matrix\n"
               "cell present in both, with the ratio B/A, a 99.9%% confidence interval of B - A\n"
               "from forks or repeats (Welch t; n/a with one sample) and whether the difference\n"
               "is significant. Matrix cells match on target, client, connections and\n"
               "streams_requested.\n\n"
               "options:\n"
               "  --md FILE    also write the comparison as markdown (- = stdout)\n"
               "  -h, --help   this text\n\n"
               "Exit codes: 0 compared, 2 usage or malformed input (file:line:column),\n"
               "3 runtime failure.\n");
}

int h2b_cmd_compare(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"md", required_argument, NULL, 'm'}, {"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};
    const char *md = NULL;
    int c;
    optind = 0;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (c) {
        case 'm':
            md = optarg;
            break;
        case 'h':
            usage(stdout);
            return H2B_EXIT_OK;
        default:
            fprintf(stderr, "h2bench compare: unknown or incomplete option '%s'\n\n",
                    argv[optind - 1]);
            usage(stderr);
            return H2B_EXIT_USAGE;
        }
    }
    if (argc - optind != 2) {
        fprintf(stderr, "h2bench compare: expected two results files\n\n");
        usage(stderr);
        return H2B_EXIT_USAGE;
    }
    struct h2b_compare_report *r = NULL;
    int rv = h2b_compare_files(argv[optind], argv[optind + 1], &r);
    if (rv != H2B_OK)
        return rv == H2B_ERR_NOMEM ? H2B_EXIT_RUNTIME : H2B_EXIT_USAGE;
    char *text = NULL;
    int code = H2B_EXIT_RUNTIME;
    if (h2b_compare_render_table(r, &text) != H2B_OK)
        goto out;
    fputs(text, stdout);
    free(text);
    text = NULL;
    code = H2B_EXIT_OK;
    if (md) {
        if (h2b_compare_render_md(r, &text) != H2B_OK) {
            code = H2B_EXIT_RUNTIME;
        } else if (strcmp(md, "-") == 0) {
            fputs(text, stdout);
        } else {
            struct h2b_diag d;
            if (h2b_file_write_atomic(md, text, strlen(text), &d) != H2B_OK) {
                h2b_diag_print(&d, stderr);
                code = H2B_EXIT_RUNTIME;
            }
        }
    }
out:
    free(text);
    h2b_compare_report_del(r);
    return code;
}
