/*
 * cmd_report.c - `h2bench report`: options in, h2b_report_write out.
 */
#include "commands.h"
#include "core/error.h"
#include "report/report.h"

#include <getopt.h>
#include <string.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

static void usage(FILE *f)
{
    fprintf(
        f, "usage: h2bench report RESULTS... -o DIR [--ceilings FILE] [--compare BASE.json]\n"
           "                      [--summary] [--gnuplot BIN]\n\n"
           "Render h2bench.result/1 files into DIR/REPORT.md with gnuplot charts (DIR/*.png,\n"
           "*.svg, and the *.gp scripts and *.dat data that draw them). With several RESULTS\n"
           "(oldest first) the last is reported in full and a History section covers all.\n\n"
           "  -o, --out DIR         output directory (created, with parents, if missing)\n"
           "      --ceilings FILE   h2bench.ceilings/1 file: adds the Gated hot paths section\n"
           "      --compare BASE    base results file: adds the A/B section (head = last RESULTS)\n"
           "      --summary         also print the markdown to stdout (CI step summary)\n"
           "      --gnuplot BIN     gnuplot binary (default: $H2B_GNUPLOT, else gnuplot in PATH);\n"
           "                        without gnuplot the report is written without charts\n"
           "  -h, --help            this help\n\n"
           "Exit codes: 0 written, 2 usage error or malformed input (file:line:column),\n"
           "3 runtime failure (gnuplot failed, output not writable). A failing run leaves\n"
           "DIR as it was.\n");
}

int h2b_cmd_report(int argc, char **argv)
{
    static const struct option opts[] = {{"out", required_argument, NULL, 'o'},
                                         {"ceilings", required_argument, NULL, 'c'},
                                         {"compare", required_argument, NULL, 'b'},
                                         {"summary", no_argument, NULL, 's'},
                                         {"gnuplot", required_argument, NULL, 'g'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    struct h2b_report_options o = {0};
    int summary = 0, c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
        switch (c) {
        case 'o': { /* "r/" is "r": no "r//REPORT.md" in what is printed and linked */
            size_t n = strlen(optarg);
            while (n > 1 && optarg[n - 1] == '/')
                optarg[--n] = '\0';
            o.out_dir = optarg;
            break;
        }
        case 'c':
            o.ceilings = optarg;
            break;
        case 'b':
            o.compare = optarg;
            break;
        case 's':
            summary = 1;
            break;
        case 'g':
            o.gnuplot = optarg;
            break;
        case 'h':
            usage(stdout);
            return H2B_EXIT_OK;
        default:
            return h2b_cmd_bad_option("report", argv[optind - 1], opts);
        }
    }
    if (optind >= argc || o.out_dir == NULL) {
        fprintf(stderr, "h2bench report: %s\n\n",
                optind >= argc ? "no results files given" : "-o DIR is required");
        usage(stderr);
        return H2B_EXIT_USAGE;
    }
    if (h2b_cmd_check_output("report", "-o", o.out_dir, H2B_FS_OUT_DIR) != H2B_EXIT_OK)
        return H2B_EXIT_USAGE;
    o.results = (const char *const *)(argv + optind);
    o.n_results = (size_t)(argc - optind);

    struct h2b_diag d = {0};
    char *md = NULL;
    int rc = h2b_report_write(&o, summary ? &md : NULL, &d);
    if (rc != H2B_OK) {
        fputs("h2bench report: ", stderr);
        h2b_diag_print(&d, stderr);
        return h2b_exit_code(rc);
    }
    if (md) {
        fputs(md, stdout);
        free(md);
    }
    fprintf(stderr, "h2bench report: wrote %s/REPORT.md\n", o.out_dir);
    return H2B_EXIT_OK;
}
