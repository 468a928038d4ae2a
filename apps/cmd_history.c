/*
 * cmd_history.c - `h2bench history FILES|DIR...`: change points over stored results, and
 * `h2bench history --append DIR RESULTS...`: one run's lines into the history store.
 *
 * Thin: reading, detection and the views are gates/histset.c and gates/history.c.
 */
#include "commands.h"
#include "core/cli.h"
#include "core/error.h"
#include "gates/histset.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *f)
{
    fprintf(f,
            "usage: h2bench history [options] FILE|DIR...\n"
            "       h2bench history --append DIR [--branch NAME] RESULTS...\n\n"
            "Finds the runs where a benchmark's level changed (change points) across results\n"
            "files (micro, run, load --json) and history stores (*.jsonl). One series per\n"
            "benchmark or matrix cell x metric x fingerprint (machine and build: values from\n"
            "different ones are never mixed), ordered by the time each run was measured.\n"
            "E-divisive means with a Student's t-test: the same input gives the same output.\n\n"
            "options:\n"
            "  --min-change PCT  smallest change of the median kept (default %g)\n"
            "  --p-value P       largest t-test p-value kept (default %g)\n"
            "  --min-points N    fewest runs a segment may have (default %d, at least 2)\n"
            "  --metric NAME     only this metric (ns/op, p99, B/op, allocs/op, req/s, ...)\n"
            "  --filter TEXT     only series whose name contains TEXT\n"
            "  --json            the change points as JSON (h2bench.history/1)\n"
            "  --md              a markdown table\n"
            "  --out FILE        write there (atomically) instead of standard output\n"
            "  --append DIR      add the runs of RESULTS to the store DIR/BRANCH.jsonl\n"
            "  --branch NAME     the store's branch file (default main)\n"
            "  -h, --help        this text\n\n"
            "A corrupt store line is reported with file:line and the rest is read.\n"
            "Exit codes: 0 done, 2 usage or malformed input, 3 the output cannot be written.\n",
            100 * H2B_HISTORY_MIN_CHANGE, H2B_HISTORY_P_VALUE, H2B_HISTORY_MIN_POINTS);
}

static void print_bad(void *arg, const struct h2b_diag *d)
{
    (void)arg;
    h2b_diag_print(d, stderr);
}

static int append(const char *dir, const char *branch, char **paths, size_t n)
{
    if (n == 0) {
        fprintf(stderr, "h2bench history: --append wants at least one results file\n");
        return H2B_EXIT_USAGE;
    }
    struct h2b_diag d = {0};
    size_t added = 0, skipped = 0;
    int rv = h2b_histset_append(dir, branch, (const char *const *)paths, n, &added, &skipped, &d);
    if (rv != H2B_OK) {
        h2b_diag_print(&d, stderr);
        return rv == H2B_ERR_PARSE || rv == H2B_ERR_INVAL ? H2B_EXIT_USAGE : h2b_exit_code(rv);
    }
    printf("%s/%s.jsonl: %zu line(s) added, %zu already there\n", dir, branch, added, skipped);
    return H2B_EXIT_OK;
}

int h2b_cmd_history(int argc, char **argv)
{
    static const struct option longopts[] = {{"min-change", required_argument, NULL, 'c'},
                                             {"p-value", required_argument, NULL, 'p'},
                                             {"min-points", required_argument, NULL, 'n'},
                                             {"metric", required_argument, NULL, 'm'},
                                             {"filter", required_argument, NULL, 'f'},
                                             {"json", no_argument, NULL, 'j'},
                                             {"md", no_argument, NULL, 'k'},
                                             {"out", required_argument, NULL, 'o'},
                                             {"append", required_argument, NULL, 'a'},
                                             {"branch", required_argument, NULL, 'b'},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    struct h2b_history_opts o;
    h2b_history_opts_default(&o);
    const char *metric = NULL, *filter = NULL, *out = NULL, *store = NULL, *branch = "main";
    bool json = false, md = false;
    int c;
    optind = 0;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (c) {
        case 'c':
            if (h2b_cli_parse_double(optarg, 0, 1000, &o.min_change) != H2B_OK) {
                fprintf(stderr, "h2bench history: --min-change wants a percentage >= 0, got '%s'\n",
                        optarg);
                return H2B_EXIT_USAGE;
            }
            o.min_change /= 100;
            break;
        case 'p':
            if (h2b_cli_parse_double(optarg, 1e-300, 0.999999, &o.p_value) != H2B_OK) {
                fprintf(stderr, "h2bench history: --p-value wants a number in (0, 1), got '%s'\n",
                        optarg);
                return H2B_EXIT_USAGE;
            }
            break;
        case 'n': {
            uint64_t v;
            if (h2b_cli_parse_u64(optarg, 2, 1000, &v) != H2B_OK) {
                fprintf(stderr, "h2bench history: --min-points wants 2..1000, got '%s'\n", optarg);
                return H2B_EXIT_USAGE;
            }
            o.min_points = (size_t)v;
            break;
        }
        case 'm':
            metric = optarg;
            break;
        case 'f':
            filter = optarg;
            break;
        case 'j':
            json = true;
            break;
        case 'k':
            md = true;
            break;
        case 'o':
            out = optarg;
            break;
        case 'a':
            store = optarg;
            break;
        case 'b':
            branch = optarg;
            break;
        case 'h':
            usage(stdout);
            return H2B_EXIT_OK;
        default:
            return h2b_cmd_bad_option("history", argv[optind - 1], longopts);
        }
    }
    if (h2b_cmd_check_output("history", "--out", out, H2B_FS_OUT_FILE))
        return H2B_EXIT_USAGE;
    if (store)
        return append(store, branch, argv + optind, (size_t)(argc - optind));
    if (json && md) {
        fprintf(stderr, "h2bench history: --json and --md: choose one\n");
        return H2B_EXIT_USAGE;
    }
    if (optind >= argc) {
        fprintf(stderr, "h2bench history: expected results files, stores or directories\n\n");
        usage(stderr);
        return H2B_EXIT_USAGE;
    }
    struct h2b_histset h;
    h2b_histset_init(&h);
    struct h2b_diag d = {0};
    size_t bad = 0;
    int rv = H2B_OK;
    for (int i = optind; i < argc && rv == H2B_OK; i++)
        rv = h2b_histset_add_path(&h, argv[i], print_bad, NULL, &bad, &d);
    int code = H2B_EXIT_OK;
    if (rv != H2B_OK) {
        h2b_diag_print(&d, stderr);
        code = rv == H2B_ERR_NOMEM ? H2B_EXIT_RUNTIME : H2B_EXIT_USAGE;
        goto out;
    }
    h2b_histset_select(&h, filter, metric);
    h2b_histset_sort(&h);
    if ((rv = h2b_histset_detect(&h, &o)) != H2B_OK) {
        fprintf(stderr, "h2bench history: %s\n", h2b_strerror(rv));
        code = h2b_exit_code(rv);
        goto out;
    }
    if (h.n == 0)
        fprintf(stderr, "h2bench history: no series%s\n",
                metric || filter ? " match --metric / --filter" : "");
    struct h2b_buf b;
    h2b_buf_init(&b);
    if (json) {
        json_t *doc = NULL;
        rv = h2b_histset_to_json(&h, &o, &doc);
        char *text =
            rv == H2B_OK ? json_dumps(doc, JSON_INDENT(2) | JSON_REAL_PRECISION(10)) : NULL;
        if (text) {
            h2b_buf_puts(&b, text);
            h2b_buf_puts(&b, "\n");
        } else {
            h2b_buf_puts(&b, "");
            b.err = H2B_ERR_NOMEM;
        }
        free(text);
        json_decref(doc);
    } else if (md) {
        h2b_histset_render_md(&h, &o, &b);
    } else {
        h2b_histset_render_text(&h, &o, &b);
    }
    if (bad)
        fprintf(stderr, "h2bench history: %zu corrupt store line(s) skipped\n", bad);
    if (h2b_buf_error(&b) != H2B_OK) {
        fprintf(stderr, "h2bench history: %s\n", h2b_strerror(h2b_buf_error(&b)));
        code = H2B_EXIT_RUNTIME;
    } else {
        code = h2b_cmd_write_text(out ? out : "-", b.data ? b.data : "");
    }
    h2b_buf_free(&b);
out:
    h2b_histset_free(&h);
    return code;
}
