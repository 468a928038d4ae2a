/*
 * cmd_export.c - `h2bench export --format bmf|gab|gab-bigger|gbench FILE`: a results file (micro,
 * run) or an `h2bench load --json` document in a tracker's format, on standard output or into
 * --out FILE (written atomically).
 *
 * Thin: the conversion is core/export.c, the same one `h2bench micro --format` uses.
 */
#include "commands.h"
#include "core/error.h"
#include "core/export.h"
#include "core/json.h"
#include "core/results.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *f)
{
    fprintf(f, "usage: h2bench export --format FMT FILE [--out OUT]\n\n"
               "Writes a results file (h2bench.result/1: micro entries and matrix cells) or an\n"
               "h2bench load --json document (h2bench.load/1) in a tracker's format:\n"
               "  bmf         Bencher Metric Format (bencher run --adapter json)\n"
               "  gab         github-action-benchmark customSmallerIsBetter (latencies, B/op,\n"
               "              allocs/op, instructions, per-request budgets)\n"
               "  gab-bigger  github-action-benchmark customBiggerIsBetter (req/s, ops/s)\n"
               "  gbench      Google Benchmark JSON (its compare.py): per benchmark ns/op per\n"
               "              fork, per cell ns/request (1/req/s) per repeat, each with a /p99\n"
               "              family and mean/median/stddev rows\n"
               "Repeats of a matrix cell become one series: their median, with min and max as\n"
               "BMF's bounds. Null metrics (not measured) are left out.\n\n"
               "options:\n"
               "  --format FMT   bmf, gab, gab-bigger or gbench\n"
               "  --out OUT      write to OUT instead of standard output\n"
               "  -h, --help     this text\n\n"
               "Exit codes: 0 written, 2 usage or malformed input (file:line:column), 3 the\n"
               "output cannot be written.\n");
}

int h2b_cmd_export(int argc, char **argv)
{
    static const struct option longopts[] = {{"format", required_argument, NULL, 'f'},
                                             {"out", required_argument, NULL, 'o'},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    const char *format = NULL, *out = NULL;
    int c;
    optind = 0;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (c) {
        case 'f':
            format = optarg;
            break;
        case 'o':
            out = optarg;
            break;
        case 'h':
            usage(stdout);
            return H2B_EXIT_OK;
        default:
            return h2b_cmd_bad_option("export", argv[optind - 1], longopts);
        }
    }
    if (!format || (strcmp(format, "bmf") != 0 && strcmp(format, "gab") != 0 &&
                    strcmp(format, "gab-bigger") != 0 && strcmp(format, "gbench") != 0)) {
        fprintf(stderr, "h2bench export: --format wants bmf, gab, gab-bigger or gbench%s%s\n",
                format ? ", got " : "", format ? format : "");
        return H2B_EXIT_USAGE;
    }
    if (argc - optind != 1) {
        fprintf(stderr, "h2bench export: expected one input file\n\n");
        usage(stderr);
        return H2B_EXIT_USAGE;
    }
    if (h2b_cmd_check_output("export", "--out", out, H2B_FS_OUT_FILE) != H2B_EXIT_OK)
        return H2B_EXIT_USAGE;
    const char *path = argv[optind];
    json_t *doc = NULL;
    char *text = NULL;
    struct h2b_diag d = {0};
    int rv = h2b_json_load(path, &doc, &text, &d);
    if (rv != H2B_OK) {
        h2b_diag_print(&d, stderr);
        return rv == H2B_ERR_NOMEM ? H2B_EXIT_RUNTIME : H2B_EXIT_USAGE;
    }
    const char *schema = json_string_value(json_object_get(doc, "schema"));
    struct h2b_json_src src = {.file = path, .text = text};
    int code = H2B_EXIT_USAGE;
    if (schema && strcmp(schema, H2B_RESULTS_SCHEMA) == 0) {
        if (h2b_results_validate(doc, &src, &d) != H2B_OK) {
            h2b_diag_print(&d, stderr);
            goto out;
        }
    } else if (!schema || strcmp(schema, "h2bench.load/1") != 0) {
        fprintf(stderr, "%s: schema: expected \"%s\" or \"h2bench.load/1\", got %s%s%s\n", path,
                H2B_RESULTS_SCHEMA, schema ? "\"" : "", schema ? schema : "none",
                schema ? "\"" : "");
        goto out;
    }
    json_t *x = NULL;
    if (strcmp(format, "bmf") == 0)
        rv = h2b_export_bmf(doc, &x);
    else if (strcmp(format, "gbench") == 0)
        rv = h2b_export_gbench(doc, &x);
    else
        rv = h2b_export_gab(doc, strcmp(format, "gab-bigger") == 0, &x);
    if (rv != H2B_OK) {
        fprintf(stderr, "h2bench export: %s: %s\n", path,
                rv == H2B_ERR_INVAL ? "no micro entries, matrix cells or load numbers"
                                    : h2b_strerror(rv));
        code = rv == H2B_ERR_INVAL ? H2B_EXIT_USAGE : H2B_EXIT_RUNTIME;
        goto out;
    }
    code = H2B_EXIT_OK;
    if (out) {
        if (h2b_json_write_atomic(out, x, &d) != H2B_OK) {
            h2b_diag_print(&d, stderr);
            code = H2B_EXIT_RUNTIME;
        }
    } else if (json_dumpf(x, stdout, JSON_INDENT(2)) != 0 || fputc('\n', stdout) == EOF) {
        code = H2B_EXIT_RUNTIME;
    }
    json_decref(x);
out:
    json_decref(doc);
    free(text);
    return code;
}
