/*
 * cmd_merge.c - `h2bench merge A.json B.json ... --json OUT`: one load result from the results
 * of the parts of a distributed run (harness/load/merge.c does the merging).
 */
#include "commands.h"
#include "core/error.h"
#include "core/fs.h"
#include "core/json.h"
#include "load/load.h"
#include "core/results.h"

#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A null figure prints as 0, as it did when this line read the JSON itself. */
static double or_zero(double v)
{
    return isnan(v) ? 0 : v;
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: h2bench merge A.json B.json ... --json OUT\n"
            "       h2bench merge A.ndjson B.ndjson ... --interval-json OUT\n"
            "\n"
            "Merges `h2bench load --json` results of parts that ran side by side (one\n"
            "distributed run) into one result, exactly: counts and rates add, durations take\n"
            "the longest, histograms merge bin for bin and every percentile is read from the\n"
            "merged histogram.\n"
            "\n"
            "  --json OUT   the merged result (written atomically; '-' is stdout)\n"
            "  --interval-json OUT\n"
            "               the inputs are per-interval results (`load --interval-json`, or an\n"
            "               MPI job's PREFIX.rankN.intervals.ndjson): merged interval by\n"
            "               interval (the same index), histograms bin for bin, into NDJSON\n"
            "  -h, --help   this text\n"
            "\n"
            "Exit codes: 0 ok, 2 usage error or a bad input file (file:line:column), 3 OUT could\n"
            "not be written.\n");
}

/* --interval-json OUT: the inputs' intervals merged interval by interval. */
static int merge_intervals(char *const *paths, size_t n, const char *out_path)
{
    struct h2b_results_interval **parts = calloc(n, sizeof(*parts));
    size_t *nparts = calloc(n, sizeof(*nparts));
    struct h2b_load_result res;
    memset(&res, 0, sizeof(res));
    struct h2b_diag d;
    memset(&d, 0, sizeof(d));
    int rv = parts && nparts ? H2B_OK : H2B_ERR_NOMEM;
    for (size_t i = 0; i < n && rv == H2B_OK; i++)
        rv = h2b_load_intervals_read(paths[i], &parts[i], &nparts[i], &d);
    if (rv == H2B_OK)
        rv = h2b_load_intervals_merge(parts, nparts, (const char *const *)paths, n, &res.intervals,
                                      &res.nintervals, &d);
    int code = H2B_EXIT_OK;
    if (rv != H2B_OK) {
        fprintf(stderr, "h2bench merge: ");
        if (rv == H2B_ERR_NOMEM && !d.message[0])
            snprintf(d.message, sizeof(d.message), "out of memory");
        h2b_diag_print(&d, stderr);
        code = rv == H2B_ERR_NOMEM ? H2B_EXIT_RUNTIME : H2B_EXIT_USAGE;
    }
    char *text = NULL;
    size_t len = 0;
    if (code == H2B_EXIT_OK) {
        rv = h2b_load_intervals_ndjson(&res, &text, &len);
        if (rv == H2B_OK)
            rv = h2b_file_write_atomic(out_path, text, len, &d);
        else
            snprintf(d.message, sizeof(d.message), "%s", h2b_strerror(rv));
        if (rv != H2B_OK) {
            fprintf(stderr, "h2bench merge: cannot write %s: ", out_path);
            h2b_diag_print(&d, stderr);
            code = H2B_EXIT_RUNTIME;
        } else if (strcmp(out_path, "-") != 0) {
            printf("merged the intervals of %zu results: %zu intervals -> %s\n", n, res.nintervals,
                   out_path);
        }
    }
    free(text);
    for (size_t i = 0; parts && nparts && i < n; i++)
        h2b_load_intervals_free(parts[i], nparts[i]);
    free(parts);
    free(nparts);
    h2b_load_intervals_free(res.intervals, res.nintervals);
    return code;
}

int h2b_cmd_merge(int argc, char **argv)
{
    static const struct option opts[] = {{"json", required_argument, NULL, 'j'},
                                         {"interval-json", required_argument, NULL, 'i'},
                                         {"help", no_argument, NULL, 'h'},
                                         {0}};
    const char *out_path = NULL, *iv_path = NULL;
    optind = 0;
    opterr = 0;
    for (;;) {
        int c = getopt_long(argc, argv, ":h", opts, NULL);
        if (c == -1)
            break;
        if (c == 'j') {
            out_path = optarg;
        } else if (c == 'i') {
            iv_path = optarg;
        } else if (c == 'h') {
            usage(stdout);
            return H2B_EXIT_OK;
        } else {
            return h2b_cmd_bad_option("merge", argv[optind - 1], opts);
        }
    }
    size_t n = argc > optind ? (size_t)(argc - optind) : 0;
    if ((!out_path == !iv_path) || n < 1) {
        fprintf(stderr, "h2bench merge: %s\n\n",
                out_path && iv_path     ? "--json and --interval-json: give one"
                : !out_path && !iv_path ? "--json OUT (or --interval-json OUT) is required"
                                        : "no input file given");
        usage(stderr);
        return H2B_EXIT_USAGE;
    }
    if (iv_path) {
        if (h2b_cmd_check_output("merge", "--interval-json", iv_path, H2B_FS_OUT_FILE) !=
            H2B_EXIT_OK)
            return H2B_EXIT_USAGE;
        return merge_intervals(argv + optind, n, iv_path);
    }
    if (h2b_cmd_check_output("merge", "--json", out_path, H2B_FS_OUT_FILE) != H2B_EXIT_OK)
        return H2B_EXIT_USAGE;
    json_t **docs = calloc(n, sizeof(*docs));
    char **texts = calloc(n, sizeof(*texts));
    struct h2b_json_src *srcs = calloc(n, sizeof(*srcs));
    int code = H2B_EXIT_OK;
    struct h2b_diag d;
    memset(&d, 0, sizeof(d));
    if (!docs || !texts || !srcs) {
        fprintf(stderr, "h2bench merge: out of memory\n");
        code = H2B_EXIT_RUNTIME;
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        if (h2b_json_load(argv[optind + (int)i], &docs[i], &texts[i], &d) != H2B_OK) {
            fprintf(stderr, "h2bench merge: ");
            h2b_diag_print(&d, stderr);
            code = H2B_EXIT_USAGE;
            goto out;
        }
        srcs[i].file = argv[optind + (int)i];
        srcs[i].text = texts[i];
    }
    json_t *merged = NULL;
    int rv = h2b_load_merge(docs, srcs, n, &merged, &d);
    if (rv != H2B_OK) {
        fprintf(stderr, "h2bench merge: ");
        h2b_diag_print(&d, stderr);
        code = rv == H2B_ERR_NOMEM ? H2B_EXIT_RUNTIME : H2B_EXIT_USAGE;
        goto out;
    }
    rv = h2b_json_write_atomic(out_path, merged, &d);
    if (rv != H2B_OK) {
        fprintf(stderr, "h2bench merge: cannot write %s: ", out_path);
        h2b_diag_print(&d, stderr);
        code = H2B_EXIT_RUNTIME;
    } else if (strcmp(out_path, "-") != 0) {
        /* read back through the results model, as any reader of a load document */
        struct h2b_results_load l;
        if (h2b_results_load_from_json(merged, NULL, &l, &d) == H2B_OK) {
            const struct h2b_results_latency *lat = &l.cell.latency_ns;
            printf("merged %zu results: %.0f requests, %.2f req/s, latency p50 %.0f ns, p99 %.0f "
                   "ns (%.0f samples) -> %s\n",
                   n, or_zero(l.cell.requests), or_zero(l.cell.req_per_s), or_zero(lat->p50),
                   or_zero(lat->p99), or_zero(lat->count), out_path);
        } else {
            printf("merged %zu results -> %s\n", n, out_path);
        }
        h2b_results_load_free(&l);
    }
    json_decref(merged);
out:
    for (size_t i = 0; docs && texts && i < n; i++) {
        json_decref(docs[i]);
        free(texts[i]);
    }
    free(docs);
    free(texts);
    free(srcs);
    return code;
}
