/*
 * cmd_gate.c - `h2bench gate`: check results against ceilings, or propose ceilings.
 *
 * Thin: parses options, loads the files through the gate library, prints and writes what the
 * library renders, and maps the verdict to the exit code. Output files are written atomically
 * (temporary file + rename) so a failing gate never leaves half a report behind.
 */
#include "core/buf.h"
#include "gates/calibrate.h"
#include "gates/evaluate.h"
#include "gates/ceilings.h"
#include "core/cli.h"
#include "commands.h"
#include "core/error.h"
#include "gates/gate.h"
#include "gates/histset.h"
#include "h2b_version.h"
#include "core/json.h"

#include <getopt.h>
#include <limits.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_RESULTS H2B_GATE_EVAL_MAX_RESULTS
#define MAX_RUNS 50

static void usage(FILE *f)
{
    fprintf(f,
            "usage: h2bench gate --ceilings FILE --results FILE... [options]\n"
            "       h2bench gate --propose (--results FILE... | --runs N) [--write FILE]\n"
            "       h2bench gate --ceilings FILE --baselines-md FILE\n"
            "       h2bench gate --calibrate N --ceilings FILE [--scenario FILE] [options]\n"
            "       h2bench gate --calibrate N --ab [--base REV] [--ceilings FILE] [options]\n"
            "       h2bench gate --history DIR [--min-change PCT] [--p-value P]\n\n"
            "Checks microbenchmark results (h2bench.result/1) against stored ceilings\n"
            "(h2bench.ceilings/1). Allocation ceilings are exact; p99 is checked as the best\n"
            "fork's p99 and a breach is re-measured before it fails (docs/gates.md). Matrix\n"
            "cells with SLO verdicts (matrix.slo) fail on a breach; a find_max cell fails\n"
            "when no step passed.\n\n"
            "options:\n"
            "  --ceilings FILE      the ceilings (for example gates/ceilings.json)\n"
            "  --results FILE       a results file; repeat, or list files after the options\n"
            "  --strict             benchmarks without a ceiling fail\n"
            "  --confirm N          confirmation re-runs of a p99 breach (default 1; 0 = none)\n"
            "  --runner PATH        h2bench executable for re-runs (default: the one beside\n"
            "                       this executable)\n"
            "  --profile NAME       micro profile for re-runs and --runs (default ci)\n"
            "  --cpu N              pin re-runs and --runs to CPU N (passed to h2bench micro)\n"
            "  --filter REGEX       only benchmarks matching REGEX (extended): the gate checks\n"
            "                       just those ceilings; with --runs, only those are run\n"
            "  --md FILE            write the verdict as markdown\n"
            "  --junit FILE         write one JUnit test case per gate\n"
            "  --propose            print proposed ceilings from the results (or --runs)\n"
            "  --runs N             with --propose: run the component suite N times\n"
            "  --headroom FRACTION  with --propose: p99 headroom (default 0.35)\n"
            "  --date YYYY-MM-DD    with --propose: date in the why lines (default today)\n"
            "  --write FILE         with --propose: also write the proposal to FILE (never the\n"
            "                       ceilings file itself)\n"
            "  --baselines-md FILE  render BASELINES.md from --ceilings into FILE (- = stdout)\n"
            "  --calibrate N        measure each gate row's false-alarm rate (N unchanged runs)\n"
            "                       and detection rate (N runs per injected regression and\n"
            "                       benchmark or cell), with 95 %% Wilson intervals; the\n"
            "                       measurement is h2bench micro (default), --scenario or --ab\n"
            "  --scenario FILE      with --calibrate: h2bench run FILE [--filter TERMS]\n"
            "  --ab                 with --calibrate: h2bench ab against --base (default HEAD)\n"
            "  --base REV, --forks N, --work DIR, --build CMD, --bench PATH\n"
            "                       with --ab: as h2bench ab's (--build and --bench: your own\n"
            "                       repository's build and micro-API benchmark executable)\n"
            "  --callgrind          with --calibrate: count instructions (instruction rows)\n"
            "  --inject LIST        with --calibrate: alloc,instr,slow[,slow25 with --ab]\n"
            "                       (default all that apply; A/A always runs)\n"
            "  --aa-trials M        with --calibrate: M unchanged trials (default N)\n"
            "  --json FILE          with --calibrate: write the rates as JSON\n"
            "  --history DIR        fail when the newest run of the history store DIR\n"
            "                       (h2bench history --append) opens a change point that moves a\n"
            "                       series the wrong way by --min-change PCT or more (default\n"
            "                       1) at --p-value P (default 0.0005); docs/history.md\n"
            "  -h, --help           this text\n\n"
            "Exit codes: 0 all gates pass, 1 a ceiling exceeded or a benchmark missing,\n"
            "2 usage or malformed input (file:line:column), 3 measurement invalid (sanitizer or\n"
            "non-Release build, counter unavailable, re-run failed). --calibrate exits 0 when it\n"
            "measured (whatever the rates), 2 on bad input, 3 when a measurement failed.\n");
}

static void print_diag(void *arg, const struct h2b_diag *d)
{
    h2b_diag_print(d, arg);
}

static void history_fail(void *arg, const struct h2b_histset_series *s,
                         const struct h2b_history_cp *cp)
{
    struct h2b_buf *o = arg;
    h2b_buf_puts(o, "FAIL  ");
    h2b_buf_term(o, s->name);
    h2b_buf_printf(o, ": a change point of %+.1f %% (median %.6g -> %.6g, p %.2g) opens at commit ",
                   100 * cp->change, cp->before, cp->after, cp->p);
    h2b_buf_term(o, s->p[cp->index].commit);
    h2b_buf_printf(o, " (run %zu of %zu), the first of the new segment\n", cp->index + 1, s->n);
}

/* gate --history DIR: the newest run of the store against the change points it opens. */
static int history_gate(const char *dir, const struct h2b_history_opts *o)
{
    struct h2b_histset h;
    h2b_histset_init(&h);
    struct h2b_diag d = {0};
    size_t bad = 0, checked = 0, failed = 0;
    int rv = h2b_histset_add_path(&h, dir, print_diag, stderr, &bad, &d);
    if (rv != H2B_OK) {
        h2b_diag_print(&d, stderr);
        h2b_histset_free(&h);
        return rv == H2B_ERR_NOMEM ? H2B_EXIT_RUNTIME : H2B_EXIT_USAGE;
    }
    h2b_histset_sort(&h);
    struct h2b_buf out;
    h2b_buf_init(&out);
    rv = h2b_histset_gate(&h, o, history_fail, &out, &checked, &failed);
    h2b_histset_free(&h);
    if (rv != H2B_OK) {
        h2b_buf_free(&out);
        fprintf(stderr, "h2bench gate: --history: %s\n", h2b_strerror(rv));
        return h2b_exit_code(rv);
    }
    fputs(out.data ? out.data : "", stdout);
    printf("%s  history: %zu series of the newest run checked, %zu open a change point worse "
           "than %g %%%s\n",
           failed ? "FAIL" : "PASS", checked, failed, 100 * o->min_change,
           bad ? " (corrupt store lines skipped: see above)" : "");
    h2b_buf_free(&out);
    return failed ? H2B_EXIT_FAIL : H2B_EXIT_OK;
}

/* The exit code of a loader's failure, its diagnostic (file:line:column) printed; d may be NULL
 * for loaders that reported through print_diag already. */
static int load_error(int rv, const struct h2b_diag *d)
{
    if (d && d->message[0])
        h2b_diag_print(d, stderr);
    else if (rv == H2B_ERR_NOMEM)
        fprintf(stderr, "h2bench gate: out of memory\n");
    return h2b_exit_code(rv);
}

/* True when a and b name the same file (so --write cannot overwrite the ceilings). */
static bool same_file(const char *a, const char *b)
{
    char ra[PATH_MAX], rb[PATH_MAX];
    if (strcmp(a, b) == 0)
        return true;
    if (!realpath(a, ra) || !realpath(b, rb))
        return false;
    return strcmp(ra, rb) == 0;
}

static void print_progress(void *arg, const char *line)
{
    fprintf(arg, "h2bench gate: %s\n", line);
}

static int propose(const char *const *results, size_t n_results, uint64_t runs,
                   struct h2b_gate_runner *runner, const char *filter, double headroom,
                   const char *date, const char *write, const char *ceilings_path)
{
    struct h2b_ceilings *proposal = NULL;
    char *text = NULL;
    struct h2b_diag d = {0};
    int code = H2B_EXIT_RUNTIME;

    if (write && ceilings_path && same_file(write, ceilings_path)) {
        fprintf(stderr,
                "h2bench gate: --write %s names the ceilings file; a proposal is never "
                "written in place (write it elsewhere and review the diff)\n",
                write);
        return H2B_EXIT_USAGE;
    }
    char tool[160];
    snprintf(tool, sizeof(tool), "h2bench %s %s, %s", H2B_VERSION, H2B_GIT_COMMIT, H2B_BUILD_TYPE);
    struct h2b_gate_propose_options popt = {.headroom = headroom,
                                            .date = date,
                                            .tool = tool,
                                            .progress = print_progress,
                                            .progress_arg = stderr};
    int rv = h2b_gate_propose_from(results, n_results, (unsigned)runs, runner, filter, &popt,
                                   &proposal, &d);
    if (rv == H2B_OK)
        rv = h2b_ceilings_to_json(proposal, &text);
    if (rv != H2B_OK) {
        if (!d.file[0])
            fputs("h2bench gate: ", stderr);
        if (d.message[0])
            h2b_diag_print(&d, stderr);
        else
            fprintf(stderr, "%s\n", h2b_strerror(rv));
        code = h2b_exit_code(rv);
        goto out;
    }
    fputs(text, stdout);
    code = write ? h2b_cmd_write_text(write, text) : H2B_EXIT_OK;
    if (code == H2B_EXIT_OK && write)
        fprintf(stderr,
                "h2bench gate: proposal written to %s (review, then copy into the "
                "ceilings by hand)\n",
                write);
out:
    h2b_ceilings_del(proposal);
    free(text);
    return code;
}

/* "alloc,instr" into bits of enum h2b_calib_inject. */
/* optarg as a count from lo to 1000 into *out; false after saying what opt expected. */
static bool count_arg(const char *opt, const char *expected, uint64_t lo, unsigned *out)
{
    uint64_t n;
    if (h2b_cli_parse_u64(optarg, lo, 1000, &n) != H2B_OK) {
        fprintf(stderr, "h2bench gate: %s: expected %s, got '%s'\n", opt, expected, optarg);
        return false;
    }
    *out = (unsigned)n;
    return true;
}

static int parse_inject(const char *list, unsigned *mask)
{
    char word[32];
    *mask = 0;
    for (const char *p = list;;) {
        size_t n = strcspn(p, ",");
        int k = -1;
        if (n < sizeof(word)) {
            memcpy(word, p, n);
            word[n] = 0;
            k = h2b_calib_inject_from_key(word);
        }
        if (k < 0) {
            fprintf(stderr,
                    "h2bench gate: --inject: expected a list of alloc, instr, slow, slow25 "
                    "(or aa), got '%s'\n",
                    list);
            return H2B_ERR_PARSE;
        }
        *mask |= 1u << k;
        if (!p[n])
            break;
        p += n + 1;
    }
    return H2B_OK;
}

static int calibrate(const struct h2b_calib_options *cal, const char *md_path,
                     const char *json_path)
{
    struct h2b_calib_options o = *cal;
    struct h2b_calib_report *r = NULL;
    struct h2b_diag d;
    char *text = NULL;
    o.progress = print_progress;
    o.progress_arg = stderr;
    int failed = h2b_calib_run(&o, &r, &d);
    if (failed != H2B_OK) {
        if (!d.file[0])
            fputs("h2bench gate: --calibrate: ", stderr);
        if (d.message[0])
            h2b_diag_print(&d, stderr);
        else
            fprintf(stderr, "%s\n", h2b_strerror(failed));
        if (!r) /* nothing measured; else the partial report is written, then the code */
            return h2b_exit_code(failed);
    }
    int rv = H2B_OK, code = H2B_EXIT_OK;
    if ((rv = h2b_calib_render_table(r, &text)) == H2B_OK)
        fputs(text, stdout);
    free(text);
    text = NULL;
    if (rv == H2B_OK && md_path && (rv = h2b_calib_render_md(r, &text)) == H2B_OK)
        code = h2b_cmd_write_text(md_path, text);
    free(text);
    text = NULL;
    if (rv == H2B_OK && code == H2B_EXIT_OK && json_path &&
        (rv = h2b_calib_render_json(r, &text)) == H2B_OK) {
        struct h2b_buf b = {0};
        char *doc = NULL;
        h2b_buf_printf(&b, "%s\n", text);
        if ((rv = h2b_buf_finish(&b, &doc)) == H2B_OK)
            code = h2b_cmd_write_text(json_path, doc);
        free(doc);
    }
    free(text);
    h2b_calib_report_del(r);
    if (rv != H2B_OK) {
        fprintf(stderr, "h2bench gate: %s\n", h2b_strerror(rv));
        return H2B_EXIT_RUNTIME;
    }
    return failed != H2B_OK ? h2b_exit_code(failed) : code;
}

static int baselines_md(const char *ceilings_path, const char *out_path)
{
    struct h2b_ceilings *c = NULL;
    char *md = NULL;
    int rv = h2b_ceilings_load(ceilings_path, &c, print_diag, stderr);
    if (rv != H2B_OK)
        return load_error(rv, NULL);
    rv = h2b_ceilings_baselines_md(c, ceilings_path, &md);
    int code = rv == H2B_OK ? h2b_cmd_write_text(out_path, md) : H2B_EXIT_RUNTIME;
    free(md);
    h2b_ceilings_del(c);
    return code;
}

/* Judges the results against the ceilings (gates/evaluate.h: benchmarks, cells, SLOs) and
 * prints the table, writing --md and --junit. Returns the exit code. */
static int check(const char *ceilings_path, const char *const *results, size_t n_results,
                 const struct h2b_gate_options *opt, const char *md_path, const char *junit_path,
                 const char *filter)
{
    struct h2b_gate_eval ev;
    struct h2b_diag d = {0};
    char *text = NULL;
    int code;
    int rv = h2b_gate_evaluate(ceilings_path, results, n_results, opt, print_diag, stderr, &ev, &d);
    if (rv == H2B_ERR_NOTFOUND && opt->filter && ev.ceilings && !d.message[0]) {
        fprintf(stderr,
                "h2bench gate: --filter '%s' matches no benchmark of %s or of the results: "
                "nothing would be checked\n",
                filter, ceilings_path);
        code = H2B_EXIT_USAGE;
        goto out;
    }
    if (rv == H2B_OK)
        rv = h2b_gate_render_table(ev.report, &text);
    if (rv != H2B_OK) {
        if (d.message[0])
            h2b_diag_print(&d, stderr);              /* file:line:column of the input that failed */
        else if (ev.ceilings || rv == H2B_ERR_NOMEM) /* the ceilings' own said theirs */
            fprintf(stderr, "h2bench gate: %s\n", h2b_strerror(rv));
        code = h2b_exit_code(rv);
        goto out;
    }
    const struct h2b_gate_report *r = ev.report;
    fputs(text, stdout);
    if (r->invalid_reason)
        fprintf(stderr, "h2bench gate: %s\n", r->invalid_reason);
    code = r->exit_code;
    free(text);
    text = NULL;
    if (md_path && h2b_gate_render_md(r, &text) == H2B_OK) {
        int wc = h2b_cmd_write_text(md_path, text);
        code = code == H2B_EXIT_OK ? wc : code;
        free(text);
        text = NULL;
    }
    if (junit_path && h2b_gate_render_junit(r, &text) == H2B_OK) {
        int wc = h2b_cmd_write_text(junit_path, text);
        code = code == H2B_EXIT_OK ? wc : code;
    }
out:
    free(text);
    h2b_gate_eval_free(&ev);
    return code;
}

enum {
    O_CEILINGS = 256,
    O_RESULTS,
    O_STRICT,
    O_CONFIRM,
    O_RUNNER,
    O_PROFILE,
    O_CPU,
    O_FILTER,
    O_MD,
    O_JUNIT,
    O_PROPOSE,
    O_RUNS,
    O_HEADROOM,
    O_DATE,
    O_WRITE,
    O_BASELINES_MD,
    O_CALIBRATE,
    O_SCENARIO,
    O_AB,
    O_BASE,
    O_FORKS,
    O_WORK,
    O_BUILD,
    O_BENCH,
    O_CALLGRIND,
    O_INJECT,
    O_JSON,
    O_AA_TRIALS,
    O_HISTORY,
    O_MIN_CHANGE,
    O_P_VALUE
};
static const struct option longopts[] = {{"ceilings", required_argument, NULL, O_CEILINGS},
                                         {"results", required_argument, NULL, O_RESULTS},
                                         {"strict", no_argument, NULL, O_STRICT},
                                         {"confirm", required_argument, NULL, O_CONFIRM},
                                         {"runner", required_argument, NULL, O_RUNNER},
                                         {"profile", required_argument, NULL, O_PROFILE},
                                         {"cpu", required_argument, NULL, O_CPU},
                                         {"filter", required_argument, NULL, O_FILTER},
                                         {"md", required_argument, NULL, O_MD},
                                         {"junit", required_argument, NULL, O_JUNIT},
                                         {"propose", no_argument, NULL, O_PROPOSE},
                                         {"runs", required_argument, NULL, O_RUNS},
                                         {"headroom", required_argument, NULL, O_HEADROOM},
                                         {"date", required_argument, NULL, O_DATE},
                                         {"write", required_argument, NULL, O_WRITE},
                                         {"baselines-md", required_argument, NULL, O_BASELINES_MD},
                                         {"calibrate", required_argument, NULL, O_CALIBRATE},
                                         {"scenario", required_argument, NULL, O_SCENARIO},
                                         {"ab", no_argument, NULL, O_AB},
                                         {"base", required_argument, NULL, O_BASE},
                                         {"forks", required_argument, NULL, O_FORKS},
                                         {"work", required_argument, NULL, O_WORK},
                                         {"build", required_argument, NULL, O_BUILD},
                                         {"bench", required_argument, NULL, O_BENCH},
                                         {"callgrind", no_argument, NULL, O_CALLGRIND},
                                         {"inject", required_argument, NULL, O_INJECT},
                                         {"json", required_argument, NULL, O_JSON},
                                         {"aa-trials", required_argument, NULL, O_AA_TRIALS},
                                         {"history", required_argument, NULL, O_HISTORY},
                                         {"min-change", required_argument, NULL, O_MIN_CHANGE},
                                         {"p-value", required_argument, NULL, O_P_VALUE},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
/* What the command line asks for: one of the gate's modes (check, --propose, --calibrate,
 * --baselines-md, --history) and its options. */
struct gate_opts {
    const char *ceilings, *md, *junit, *write, *date, *filter, *baselines, *json, *history;
    const char *results[MAX_RESULTS];
    size_t n_results;
    bool want_propose, want_calibrate, calib_only;
    uint64_t confirm, runs;
    double headroom;
    struct h2b_gate_runner runner;
    struct h2b_gate_options opt;
    struct h2b_calib_options cal;
    struct h2b_history_opts hopt;
    regex_t re; /* --filter, compiled for a check */
};

/* Applies option c to o. Returns -1 to go on, or the exit code of a bad value. */
static int gate_option(void *ctx, int c, char *arg)
{
    struct gate_opts *o = ctx;
    switch (c) {
    case O_CEILINGS:
        o->ceilings = arg;
        return -1;
    case O_RESULTS:
        if (o->n_results == MAX_RESULTS) {
            fprintf(stderr, "h2bench gate: at most %d results files\n", MAX_RESULTS);
            return H2B_EXIT_USAGE;
        }
        o->results[o->n_results++] = arg;
        return -1;
    case O_STRICT:
        o->opt.strict = true;
        return -1;
    case O_CONFIRM:
        if (h2b_cli_parse_u64(arg, 0, 10, &o->confirm) != H2B_OK) {
            fprintf(stderr, "h2bench gate: --confirm: expected 0 to 10, got '%s'\n", arg);
            return H2B_EXIT_USAGE;
        }
        return -1;
    case O_RUNNER:
        o->runner.path = arg;
        return -1;
    case O_PROFILE:
        o->runner.profile = arg;
        return -1;
    case O_CPU: {
        uint64_t cpu;
        if (h2b_cli_parse_u64(arg, 0, 1023, &cpu) != H2B_OK) {
            fprintf(stderr, "h2bench gate: --cpu: expected a CPU number, got '%s'\n", arg);
            return H2B_EXIT_USAGE;
        }
        o->runner.cpu = arg;
        return -1;
    }
    case O_FILTER:
        o->filter = arg;
        return -1;
    case O_MD:
        o->md = arg;
        return -1;
    case O_JUNIT:
        o->junit = arg;
        return -1;
    case O_PROPOSE:
        o->want_propose = true;
        return -1;
    case O_RUNS:
        if (h2b_cli_parse_u64(arg, 1, MAX_RUNS, &o->runs) != H2B_OK) {
            fprintf(stderr, "h2bench gate: --runs: expected 1 to %d, got '%s'\n", MAX_RUNS, arg);
            return H2B_EXIT_USAGE;
        }
        return -1;
    case O_HEADROOM:
        if (h2b_cli_parse_double(arg, 0, 10, &o->headroom) != H2B_OK) {
            fprintf(stderr,
                    "h2bench gate: --headroom: expected a fraction such as 0.35, "
                    "got '%s'\n",
                    arg);
            return H2B_EXIT_USAGE;
        }
        return -1;
    case O_DATE:
        o->date = arg;
        return -1;
    case O_WRITE:
        o->write = arg;
        return -1;
    case O_BASELINES_MD:
        o->baselines = arg;
        return -1;
    case O_CALIBRATE:
        if (!count_arg("--calibrate",
                       "the number of trials per kind, a whole number from 1 "
                       "to 1000",
                       1, &o->cal.trials))
            return H2B_EXIT_USAGE;
        o->want_calibrate = true;
        return -1;
    case O_AA_TRIALS:
        if (!count_arg("--aa-trials", "a whole number from 1 to 1000", 1, &o->cal.aa_trials))
            return H2B_EXIT_USAGE;
        o->calib_only = true;
        return -1;
    case O_SCENARIO:
        o->cal.scenario = arg;
        o->cal.measure = H2B_CALIB_SCENARIO;
        o->calib_only = true;
        return -1;
    case O_AB:
        o->cal.measure = H2B_CALIB_AB;
        o->calib_only = true;
        return -1;
    case O_BASE:
        o->cal.base = arg;
        o->calib_only = true;
        return -1;
    case O_FORKS:
        if (!count_arg("--forks", "2 to 1000", 2, &o->cal.forks))
            return H2B_EXIT_USAGE;
        o->calib_only = true;
        return -1;
    case O_WORK:
        o->cal.work_dir = arg;
        o->calib_only = true;
        return -1;
    case O_BUILD:
        o->cal.build_cmd = arg;
        o->calib_only = true;
        return -1;
    case O_BENCH:
        o->cal.bench = arg;
        o->calib_only = true;
        return -1;
    case O_CALLGRIND:
        o->cal.callgrind = true;
        o->calib_only = true;
        return -1;
    case O_INJECT:
        if (parse_inject(arg, &o->cal.inject) != H2B_OK)
            return H2B_EXIT_USAGE;
        o->calib_only = true;
        return -1;
    case O_JSON:
        o->json = arg;
        o->calib_only = true;
        return -1;
    case O_HISTORY:
        o->history = arg;
        return -1;
    case O_MIN_CHANGE:
        if (h2b_cli_parse_double(arg, 0, 1000, &o->hopt.min_change) != H2B_OK) {
            fprintf(stderr, "h2bench gate: --min-change wants a percentage >= 0, got '%s'\n", arg);
            return H2B_EXIT_USAGE;
        }
        o->hopt.min_change /= 100;
        return -1;
    case O_P_VALUE:
        if (h2b_cli_parse_double(arg, 1e-300, 0.999999, &o->hopt.p_value) != H2B_OK) {
            fprintf(stderr, "h2bench gate: --p-value wants a number in (0, 1), got '%s'\n", arg);
            return H2B_EXIT_USAGE;
        }
        return -1;
    default:
        return -1;
    }
}

/* Parses argv into o. Returns -1 to go on, or the exit code (help, bad input). */
static int gate_parse(int argc, char **argv, struct gate_opts *o)
{
    memset(o, 0, sizeof(*o));
    o->confirm = 1;
    o->headroom = 0.35;
    o->cal.confirm = 1;
    h2b_history_opts_default(&o->hopt);
    int ec =
        h2b_cmd_getopt("gate", argc, argv, longopts, O_CEILINGS, O_P_VALUE, usage, gate_option, o);
    if (ec >= 0)
        return ec;
    for (; optind < argc; optind++) {
        if (o->n_results == MAX_RESULTS) {
            fprintf(stderr, "h2bench gate: at most %d results files\n", MAX_RESULTS);
            return H2B_EXIT_USAGE;
        }
        o->results[o->n_results++] = argv[optind];
    }
    if (h2b_cmd_check_output("gate", "--md", o->md, H2B_FS_OUT_FILE) ||
        h2b_cmd_check_output("gate", "--junit", o->junit, H2B_FS_OUT_FILE) ||
        h2b_cmd_check_output("gate", "--json", o->json, H2B_FS_OUT_FILE) ||
        h2b_cmd_check_output("gate", "--write", o->write, H2B_FS_OUT_FILE) ||
        h2b_cmd_check_output("gate", "--baselines-md", o->baselines, H2B_FS_OUT_FILE))
        return H2B_EXIT_USAGE;
    return -1;
}

/* Runs the mode o asks for. Returns the exit code. */
static int gate_run(struct gate_opts *o)
{
    if (o->history) {
        if (o->ceilings || o->n_results || o->want_calibrate || o->calib_only || o->want_propose ||
            o->baselines) {
            fprintf(stderr, "h2bench gate: --history DIR takes only --min-change and --p-value\n");
            return H2B_EXIT_USAGE;
        }
        return history_gate(o->history, &o->hopt);
    }
    if (o->want_calibrate || o->calib_only) {
        if (!o->want_calibrate || o->want_propose || o->baselines || o->n_results || o->junit ||
            o->write || o->date || o->runs || (o->cal.scenario && o->cal.measure == H2B_CALIB_AB) ||
            ((o->cal.build_cmd || o->cal.bench) && o->cal.measure != H2B_CALIB_AB)) {
            fprintf(stderr,
                    "h2bench gate: --scenario, --ab, --base, --forks, --work, "
                    "--callgrind, --inject, --aa-trials and --json go with --calibrate N, which "
                    "takes no results files, --propose, --junit or --baselines-md "
                    "(and --scenario or --ab, not both; --build and --bench with --ab only)"
                    "\n\n");
            usage(stderr);
            return H2B_EXIT_USAGE;
        }
        o->cal.ceilings = o->ceilings;
        o->cal.filter = o->filter;
        o->cal.runner = o->runner.path;
        o->cal.profile = o->runner.profile;
        o->cal.cpu = o->runner.cpu;
        o->cal.confirm = (int)o->confirm;
        return calibrate(&o->cal, o->md, o->json);
    }
    if (o->baselines) {
        if (!o->ceilings || o->want_propose || o->n_results) {
            fprintf(stderr, "h2bench gate: --baselines-md takes only --ceilings\n\n");
            usage(stderr);
            return H2B_EXIT_USAGE;
        }
        return baselines_md(o->ceilings, o->baselines);
    }
    if (o->want_propose) {
        if ((o->n_results == 0) == (o->runs == 0) || o->n_results + o->runs > MAX_RUNS || o->md ||
            o->junit) {
            fprintf(stderr,
                    "h2bench gate: --propose takes results files or --runs N (not both, "
                    "at most %d in all), and no --md/--junit\n\n",
                    MAX_RUNS);
            usage(stderr);
            return H2B_EXIT_USAGE;
        }
        return propose(o->results, o->n_results, o->runs, &o->runner, o->filter, o->headroom,
                       o->date, o->write, o->ceilings);
    }
    if (!o->ceilings || o->n_results == 0 || o->runs || o->write || o->date) {
        fprintf(stderr, "h2bench gate: needs --ceilings and at least one results file "
                        "(--runs, --write and --date go with --propose)\n\n");
        usage(stderr);
        return H2B_EXIT_USAGE;
    }
    if (o->filter) {
        if (regcomp(&o->re, o->filter, REG_EXTENDED | REG_NOSUB) != 0) {
            fprintf(stderr, "h2bench gate: --filter: not a regular expression: '%s'\n", o->filter);
            return H2B_EXIT_USAGE;
        }
        o->opt.filter = &o->re;
    }
    o->opt.confirm = (int)o->confirm;
    o->opt.rerun = h2b_gate_runner_rerun;
    o->opt.rerun_arg = &o->runner;
    int code = check(o->ceilings, o->results, o->n_results, &o->opt, o->md, o->junit, o->filter);
    if (o->runner.diag.message[0])
        fprintf(stderr, "h2bench gate: %s\n", o->runner.diag.message);
    if (o->filter)
        regfree(&o->re);
    return code;
}

int h2b_cmd_gate(int argc, char **argv)
{
    static struct gate_opts o; /* MAX_RESULTS paths and the calibration's options */
    int ec = gate_parse(argc, argv, &o);
    return ec >= 0 ? ec : gate_run(&o);
}
