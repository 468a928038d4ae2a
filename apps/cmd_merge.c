/*
 * cmd_merge.c - `h2bench merge A.json B.json ... --json OUT`: one load result from the results
 * of the parts of a distributed run (harness/load/merge.c does the merging).
 */
#include "commands.h"
#include "core/error.h"
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
            "\n"
            "Merges `h2bench load --json` results of parts that ran side by side (one\n"
            "distributed run) into one result, exactly: counts and rates add, durations take\n"
            "the longest, histograms merge bin for bin and every percentile is read from the\n"
            "merged histogram.\n"
            "\n"
            "  --json OUT   the merged result (written atomically; '-' is stdout)\n"
            "  -h, --help   this text\n"
            "\n"
            "Exit codes: 0 ok, 2 usage error or a bad input file (file:line:column), 3 OUT could\n"
            "not be written.\n");
}

int h2b_cmd_merge(int argc, char **argv)
{
    static const struct option opts[] = {
        {"json", required_argument, NULL, 'j'}, {"help", no_argument, NULL, 'h'}, {0}};
    const char *out_path = NULL;
    optind = 0;
    opterr = 0;
    for (;;) {
        int c = getopt_long(argc, argv, ":h", opts, NULL);
        if (c == -1)
            break;
        if (c == 'j') {
            out_path = optarg;
        } else if (c == 'h') {
            usage(stdout);
            return H2B_EXIT_OK;
        } else {
            return h2b_cmd_bad_option("merge", argv[optind - 1], opts);
        }
    }
    size_t n = argc > optind ? (size_t)(argc - optind) : 0;
    if (!out_path || n < 1) {
        fprintf(stderr, "h2bench merge: %s\n\n",
                !out_path ? "--json OUT is required" : "no input file given");
        usage(stderr);
        return H2B_EXIT_USAGE;
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
