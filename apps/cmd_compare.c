/*
 * cmd_compare.c - `h2bench compare A.json B.json [--md FILE]`: A/B two results files.
 *
 * Thin: the comparison and its statistics live in the gate library (gates/compare.c: the
 * reading aid, every metric with a Welch interval) and gates/ab.c (the verdict). The verdict on
 * the micro benchmarks is the one `h2bench ab` gives (the same function on the same fields), so
 * `h2bench compare base.json head.json` on the files ab wrote exits as ab did: 1 when a time
 * interval lies wholly above 1 + threshold or an allocation/instruction count grew.
 */
#include "gates/ab.h"
#include "core/cli.h"
#include "commands.h"
#include "gates/compare.h"
#include "core/error.h"
#include "core/json.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *f)
{
    fprintf(f,
            "usage: h2bench compare A.json B.json [--md FILE] [--threshold F]\n\n"
            "Compares two results files (h2bench.result/1): every micro benchmark and matrix\n"
            "cell present in both, with the ratio B/A, a 99.9%% confidence interval of B - A\n"
            "from forks or repeats (Welch t; n/a with one sample) and whether the difference\n"
            "is significant. Matrix cells match on target, client, connections and\n"
            "streams_requested.\n\n"
            "Then the verdict of h2bench ab on the micro benchmarks (B against base A): the\n"
            "head/base ratio of the fork medians of ns/op and p99 with a bootstrap interval;\n"
            "an interval wholly above 1 + threshold, or more allocations or instructions per\n"
            "op, fails.\n\n"
            "options:\n"
            "  --md FILE         also write the comparison and the verdict as markdown\n"
            "                    (- = stdout)\n"
            "  --threshold F     fail above 1 + F (default 0.10)\n"
            "  --confidence F    of the bootstrap interval (default 0.99)\n"
            "  -h, --help        this text\n\n"
            "Exit codes: 0 no regression, 1 a regression in the micro benchmarks (files without\n"
            "any: in the matrix cells, p99, req/s and budgets), 2 usage or\n"
            "malformed input (file:line:column), 3 a side cannot be judged (sanitizer or\n"
            "non-Release build, a failed benchmark).\n");
}

static char *concat(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    char *s = malloc(la + 1 + lb + 1);
    if (!s)
        return NULL;
    memcpy(s, a, la);
    s[la] = '\n';
    memcpy(s + la + 1, b, lb + 1);
    return s;
}

/* The ab verdict on the micro entries of both files, or, when neither has any, on their
 * matrix cells (what `h2bench ab --suite SCENARIO` judged); *out stays NULL when neither has
 * either. */
static int judge(const char *a, const char *b, const struct h2b_ab_options *opt,
                 struct h2b_ab_report **out)
{
    struct h2b_gate_set *sa = NULL, *sb = NULL;
    struct h2b_results_doc *da = NULL, *db = NULL;
    struct h2b_diag d = {0};
    int rv = h2b_gate_set_load(&a, 1, &sa, &d);
    if (rv == H2B_OK)
        rv = h2b_gate_set_load(&b, 1, &sb, &d);
    if (rv == H2B_OK && (sa->count || sb->count)) {
        rv = h2b_ab_judge(sa, sb, opt, out);
    } else if (rv == H2B_OK) {
        rv = h2b_results_doc_load(a, &da, NULL, &d);
        if (rv == H2B_OK)
            rv = h2b_results_doc_load(b, &db, NULL, &d);
        if (rv == H2B_OK && (da->matrix.n || db->matrix.n))
            rv = h2b_ab_judge_cells(da, a, db, b, opt, out);
    }
    if (rv != H2B_OK && d.message[0])
        h2b_diag_print(&d, stderr);
    h2b_results_doc_del(da);
    h2b_results_doc_del(db);
    h2b_gate_set_del(sa);
    h2b_gate_set_del(sb);
    return rv;
}

/* The comparison's markdown, then the verdict's (may be NULL), to md ("-" is stdout). */
static int write_md(const char *md, const struct h2b_compare_report *r, const char *verdict_md)
{
    char *text = NULL, *both = NULL;
    if (h2b_compare_render_md(r, &text) != H2B_OK)
        return H2B_EXIT_RUNTIME;
    if (verdict_md) {
        both = concat(text, verdict_md);
        free(text);
        if (!both)
            return H2B_EXIT_RUNTIME;
        text = both;
    }
    int code = h2b_cmd_write_text(md, text);
    free(text);
    return code;
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
            return h2b_cmd_bad_option("compare", argv[optind - 1], usage);
        }
    }
    if (argc - optind != 2) {
        fprintf(stderr, "h2bench compare: expected two results files\n\n");
        usage(stderr);
        return H2B_EXIT_USAGE;
    }
    struct h2b_compare_report *r = NULL;
    struct h2b_diag d = {0};
    int rv = h2b_compare_files(argv[optind], argv[optind + 1], &r, &d);
    if (rv != H2B_OK) {
        if (d.message[0])
            h2b_diag_print(&d, stderr);
        return h2b_exit_code(rv);
    }
    char *text = NULL, *verdict = NULL, *verdict_md = NULL;
    int code = H2B_EXIT_RUNTIME;
    struct h2b_ab_report *v = NULL;
    if (judge(argv[optind], argv[optind + 1], &ab, &v) != H2B_OK)
        goto out;
    if (h2b_compare_render_text(r, &text) != H2B_OK)
        goto out;
    fputs(text, stdout);
    free(text);
    text = NULL;
    if (v &&
        (h2b_ab_render_table(v, &verdict) != H2B_OK || h2b_ab_render_md(v, &verdict_md) != H2B_OK))
        goto out;
    if (verdict)
        printf("\n%s", verdict);
    else
        printf("\nno micro benchmarks or matrix cells on either side: no verdict\n");
    code = v ? v->exit_code : H2B_EXIT_OK;
    if (md && write_md(md, r, verdict_md) != H2B_EXIT_OK)
        code = H2B_EXIT_RUNTIME;
out:
    free(text);
    free(verdict);
    free(verdict_md);
    h2b_ab_report_del(v);
    h2b_compare_report_del(r);
    return code;
}
