/*
 * cmd_flame.c - `h2bench flame PROFILE -o OUT.svg`: a flame graph (or, with --diff A, a
 * differential one) from folded stacks or `perf script` text, plus the summary a results cell
 * carries. Thin: reading, folding, summarising and drawing live in harness/prof.
 */
#include "commands.h"
#include "core/error.h"
#include "core/json.h"
#include "prof/prof.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *f)
{
    fprintf(f,
            "usage: h2bench flame [options] PROFILE -o OUT.svg\n\n"
            "Draws a flame graph of PROFILE (folded stacks, 'FRAME;FRAME;... COUNT' with each\n"
            "FRAME 'SYMBOL [DSO]', as h2bench run writes them) as an SVG that a browser can\n"
            "zoom and search and a markdown viewer shows as a picture.\n\n"
            "options:\n"
            "  -o, --out FILE      the SVG to write (required)\n"
            "      --diff A        differential graph: A is the baseline, PROFILE is B;\n"
            "                      red = larger share of the samples in B, blue = smaller\n"
            "      --title TEXT    the graph's title (default: PROFILE)\n"
            "      --own EXE       the profiled program's executable, for the 'own' colour\n"
            "      --perf-script   PROFILE (and A) are 'perf script -F comm,tid,period,ip,\n"
            "                      sym,dso' output instead of folded stacks\n"
            "      --folded FILE   also write PROFILE's folded stacks\n"
            "      --summary FILE  also write the summary (samples, top symbols, DSO split)\n"
            "                      as JSON (- = stdout)\n"
            "  -h, --help          this text\n\n"
            "Exit codes: 0 written, 2 usage or malformed input (file:line), 3 runtime failure.\n");
}

static int load(const char *path, const char *own, bool script, struct h2b_prof **out,
                struct h2b_diag *d)
{
    struct h2b_prof *p = NULL;
    int rc = h2b_prof_new(&p, own);
    if (rc)
        return rc;
    if (script) {
        rc = h2b_prof_read_script(p, path, d);
    } else {
        rc = h2b_prof_read_folded(p, path, d);
    }
    if (rc == H2B_OK && h2b_prof_samples(p) == 0) {
        h2b_diag_at(d, path, 0, 0, "no samples");
        rc = H2B_ERR_PARSE;
    }
    if (rc) {
        h2b_prof_del(p);
        return rc;
    }
    *out = p;
    return H2B_OK;
}

int h2b_cmd_flame(int argc, char **argv)
{
    static const struct option longopts[] = {{"out", required_argument, NULL, 'o'},
                                             {"diff", required_argument, NULL, 'd'},
                                             {"title", required_argument, NULL, 't'},
                                             {"own", required_argument, NULL, 'e'},
                                             {"perf-script", no_argument, NULL, 's'},
                                             {"folded", required_argument, NULL, 'f'},
                                             {"summary", required_argument, NULL, 'S'},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    const char *out = NULL, *diff = NULL, *title = NULL, *own = NULL, *folded = NULL,
               *summary = NULL;
    bool script = false;
    int c;
    optind = 0;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "ho:", longopts, NULL)) != -1) {
        switch (c) {
        case 'o':
            out = optarg;
            break;
        case 'd':
            diff = optarg;
            break;
        case 't':
            title = optarg;
            break;
        case 'e':
            own = optarg;
            break;
        case 's':
            script = true;
            break;
        case 'f':
            folded = optarg;
            break;
        case 'S':
            summary = optarg;
            break;
        case 'h':
            usage(stdout);
            return H2B_EXIT_OK;
        default:
            return h2b_cmd_bad_option("flame", argv[optind - 1], longopts);
        }
    }
    if (argc - optind != 1 || !out) {
        fprintf(stderr, "h2bench flame: expected one PROFILE and -o OUT.svg\n\n");
        usage(stderr);
        return H2B_EXIT_USAGE;
    }
    if (h2b_cmd_check_output("flame", "--out", out, H2B_FS_OUT_FILE) != H2B_EXIT_OK ||
        h2b_cmd_check_output("flame", "--summary", summary, H2B_FS_OUT_FILE) != H2B_EXIT_OK)
        return H2B_EXIT_USAGE;
    const char *path = argv[optind];
    struct h2b_diag d = {0};
    struct h2b_prof *b = NULL, *a = NULL;
    int rc = load(path, own, script, &b, &d);
    if (rc == H2B_OK && diff)
        rc = load(diff, own, script, &a, &d);
    if (rc) {
        h2b_diag_print(&d, stderr);
        h2b_prof_del(b);
        return h2b_exit_code(rc);
    }
    int code = H2B_EXIT_OK;
    if (!title)
        title = path;
    rc = a ? h2b_prof_diff_svg(a, b, title, out, &d) : h2b_prof_flame_svg(b, title, out, &d);
    if (rc == H2B_OK && folded)
        rc = h2b_prof_write_folded(b, folded, &d);
    if (rc == H2B_OK && summary) {
        json_t *s = NULL;
        rc = h2b_prof_summary_json(b, 20, &s);
        if (rc == H2B_OK && strcmp(summary, "-") == 0) {
            char *text = json_dumps(s, JSON_INDENT(2) | JSON_REAL_PRECISION(15));
            if (text)
                puts(text);
            rc = text ? H2B_OK : H2B_ERR_NOMEM;
            free(text);
        } else if (rc == H2B_OK) {
            rc = h2b_json_write_atomic(summary, s, &d);
        }
        json_decref(s);
    }
    if (rc) {
        h2b_diag_print(&d, stderr);
        code = H2B_EXIT_RUNTIME;
    }
    h2b_prof_del(a);
    h2b_prof_del(b);
    return code;
}
