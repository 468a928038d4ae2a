/*
 * cmd_compare.c - `h2bench compare A.json B.json [--md FILE]`: A/B two results files.
 *
 * Thin: the verdict is `h2bench ab`'s (gates/ab.c h2b_ab_judge_files: one statistic, the
 * bootstrap interval of the head/base ratio of medians, and the exact counts), laid out by the
 * one A/B table (gates/abtable.c), one verdict per row; the exit code follows it. So `h2bench
 * compare base.json head.json` on the files ab wrote exits as ab did, and the report's "A/B
 * against the base" shows the same rows.
 *
 * Rejected: a second table of Welch t intervals beside the verdict (what compare printed until
 * issue 30): the two statistics disagreed on the same row ("same" in one, "faster" in the
 * other) and only one of them set the exit code.
 */
#include "gates/ab.h"
#include "core/cli.h"
#include "commands.h"
#include "core/error.h"
#include "core/json.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *f)
{
    fprintf(f, "usage: h2bench compare A.json B.json [--md FILE] [--threshold F]\n\n"
               "Compares two results files (h2bench.result/1: micro --json, run, load --json,\n"
               "merge) and judges B (head) against A (base), one verdict per row, as h2bench ab\n"
               "does: time rows (ns/op, p99, req/s) by the head/base ratio of the medians over\n"
               "forks or repeats with a bootstrap interval; an interval wholly beyond\n"
               "1 + threshold is slower (fails) or faster; exact counts (allocations, bytes,\n"
               "instructions) fail when they grow. Matrix cells match on target,\n"
               "connections x streams and their sweep axes.\n\n"
               "options:\n"
               "  --md FILE         also write the verdict as markdown (- = stdout)\n"
               "  --threshold F     fail above 1 + F (default 0.10)\n"
               "  --confidence F    of the bootstrap interval (default 0.99)\n"
               "  -h, --help        this text\n\n"
               "Exit codes: 0 no regression, 1 a regression, 2 usage or malformed input\n"
               "(file:line:column), 3 a side cannot be judged (sanitizer or non-Release build,\n"
               "a failed benchmark, nothing to compare).\n");
}

int h2b_cmd_compare(int argc, char **argv)
{
    static const struct option longopts[] = {{"md", required_argument, NULL, 'm'},
                                             {"threshold", required_argument, NULL, 't'},
                                             {"confidence", required_argument, NULL, 'c'},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    const char *md = NULL;
    struct h2b_ab_options ab = {.threshold = 0.10, .confidence = 0.99};
    int c;
    optind = 0;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (c) {
        case 'm':
            md = optarg;
            break;
        case 't':
            if (h2b_cli_parse_double(optarg, 0, 10, &ab.threshold) != H2B_OK) {
                fprintf(stderr,
                        "h2bench compare: --threshold wants a fraction in [0, 10], "
                        "got '%s'\n",
                        optarg);
                return H2B_EXIT_USAGE;
            }
            break;
        case 'c':
            if (h2b_cli_parse_double(optarg, 0.5, 0.9999, &ab.confidence) != H2B_OK) {
                fprintf(stderr,
                        "h2bench compare: --confidence wants a fraction in [0.5, 0.9999], "
                        "got '%s'\n",
                        optarg);
                return H2B_EXIT_USAGE;
            }
            break;
        case 'h':
            usage(stdout);
            return H2B_EXIT_OK;
        default:
            return h2b_cmd_bad_option("compare", argv[optind - 1], longopts);
        }
    }
    if (argc - optind != 2) {
        fprintf(stderr, "h2bench compare: expected two results files\n\n");
        usage(stderr);
        return H2B_EXIT_USAGE;
    }
    if (h2b_cmd_check_output("compare", "--md", md, H2B_FS_OUT_FILE) != H2B_EXIT_OK)
        return H2B_EXIT_USAGE;
    struct h2b_ab_report *v = NULL;
    struct h2b_diag d = {0};
    int rv = h2b_ab_judge_files(argv[optind], argv[optind + 1], &ab, &v, &d);
    if (rv != H2B_OK) {
        if (d.message[0])
            h2b_diag_print(&d, stderr);
        return h2b_exit_code(rv);
    }
    v->command = "compare";
    char *table = NULL, *text = NULL, *text_md = NULL;
    int code = H2B_EXIT_RUNTIME;
    if (h2b_ab_render_table(v, &table) != H2B_OK)
        goto out;
    /* the two files named first, escaped for where they land (core/buf.h) */
    struct h2b_buf t = {0}, m = {0};
    h2b_buf_puts(&t, "base (A): ");
    h2b_buf_term(&t, argv[optind]);
    h2b_buf_puts(&t, "\nhead (B): ");
    h2b_buf_term(&t, argv[optind + 1]);
    h2b_buf_printf(&t, "\n\n%s", table);
    if (md) {
        h2b_ab_verdict_line(&m, v, "## ");
        h2b_buf_puts(&m, "\nBase (A) ");
        h2b_buf_md_code(&m, argv[optind]);
        h2b_buf_puts(&m, " against head (B) ");
        h2b_buf_md_code(&m, argv[optind + 1]);
        h2b_buf_puts(&m, ".\n\n");
        if (h2b_ab_rows_md(&m, v) != H2B_OK && !m.err)
            m.err = H2B_ERR_NOMEM;
    }
    if (h2b_buf_finish(&t, &text) != H2B_OK || (md && h2b_buf_finish(&m, &text_md) != H2B_OK)) {
        h2b_buf_free(&m);
        goto out;
    }
    fputs(text, stdout);
    code = v->exit_code;
    if (md && h2b_cmd_write_text(md, text_md) != H2B_EXIT_OK)
        code = H2B_EXIT_RUNTIME;
out:
    free(table);
    free(text);
    free(text_md);
    h2b_ab_report_del(v);
    return code;
}
