/*
 * cmd_ab.c - `h2bench ab --base REV`: judge the head against a base measured in the same job.
 *
 * Thin: parses options and calls the gate library (gates/abrun.c builds and runs, gates/ab.c
 * judges): ab_parse(argv) -> struct ab_opts, ab_run(opts) -> the exit code. Exit codes: 0 no
 * regression, 1 a regression (time interval wholly above 1 + threshold, or more allocations or
 * instructions), 2 usage (a revision that does not exist), 3 runtime (a revision that does not
 * build, a benchmark that fails).
 */
#include "gates/ab.h"
#include "gates/abrun.h"
#include "core/cli.h"
#include "commands.h"
#include "core/error.h"
#include "core/json.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ENV 32

static void usage(FILE *f)
{
    fprintf(
        f, "usage: h2bench ab --base REV [--head REV|worktree] [--suite micro|SCENARIO]\n"
           "                  [options]\n\n"
           "Builds REV in its own checkout and build directory, runs the base's and the\n"
           "head's micro benchmarks (or a scenario's matrix cells) interleaved on the same CPUs\n"
           "(A B B A ...), and reports per benchmark the head/base ratio of ns/op and p99 (per\n"
           "cell: p99 and req/s) with a bootstrap confidence interval. Fails when an interval\n"
           "lies wholly on the wrong side of 1 + threshold, or on any increase in allocations\n"
           "(or, with --callgrind, instructions) per op, or in a cell's per-request budgets.\n\n"
           "options:\n"
           "  --base REV         the base revision (for example origin/main)\n"
           "  --head REV         the head revision, or worktree (default: the work tree as it\n"
           "                     is, built out of tree; nothing in it is changed)\n"
           "  --suite micro      the micro benchmarks (default)\n"
           "  --suite SCENARIO   a scenario file (docs/scenarios.md): each fork is one\n"
           "                     `h2bench run SCENARIO` per side, its cells' repeats the samples\n"
           "  --repo DIR         the repository (default: the working directory)\n"
           "  --build CMD        how to build a revision: run by /bin/sh -c in the source tree\n"
           "                     with $H2B_AB_SRC and $H2B_AB_BUILD set (default: CMake\n"
           "                     Release of $H2B_AB_SRC into $H2B_AB_BUILD)\n"
           "  --bench PATH       the benchmark executable built with the micro API, relative\n"
           "                     to the build directory (default: bin/h2bench, run as\n"
           "                     'h2bench micro'); with --suite SCENARIO: the server in the\n"
           "                     built tree, run as the program of the scenario's command\n"
           "                     targets (default: each side's bin/h2bench runs the scenario)\n"
           "  --filter REGEX     only the benchmarks matching REGEX\n"
           "  --forks N          invocations per side (default 10; 5 with --suite SCENARIO)\n"
           "  --warmup DURATION  warm-up per invocation (default 20ms)\n"
           "  --time DURATION    time of the time and sample passes per invocation (default 50ms)\n"
           "  --epochs N         epochs of the time pass (default 5)\n"
           "  --cpu N            pin both sides to CPU N (default 0); --cpu none: not pinned\n"
           "  --callgrind        also compare instructions/op (one callgrind run per side)\n"
           "  --threshold F      fail above 1 + F (default 0.10)\n"
           "  --confidence F     of the bootstrap interval (default 0.99)\n"
           "  --base-env N=V     set N=V for the base's benchmarks (repeatable)\n"
           "  --head-env N=V     set N=V for the head's benchmarks, e.g. an injected\n"
           "                     regression (H2B_INJECT_SLOW=NAME; repeatable)\n"
           "  --work DIR         checkouts and builds (default ~/.cache/h2bench/ab; reused)\n"
           "  --out DIR          base.json, head.json, ab.md, runs/ (default WORK/last)\n"
           "  --md FILE          also write the verdict as markdown (- = stdout)\n"
           "  -h, --help         this text\n\n"
           "Exit codes: 0 no regression, 1 a regression, 2 usage (a revision that does not\n"
           "exist), 3 runtime failure (a revision that does not build: the message names the\n"
           "build log).\n");
}

static void on_progress(void *arg, const char *line)
{
    (void)arg;
    fprintf(stderr, "ab: %s\n", line);
}

static bool valid_env(const char *s)
{
    const char *eq = strchr(s, '=');
    if (!eq || eq == s)
        return false;
    for (const char *p = s; p < eq; p++) {
        if (!(*p == '_' || (*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') ||
              (p > s && *p >= '0' && *p <= '9')))
            return false;
    }
    return true;
}

/* The verdict as markdown into md ("-" is stdout). */
static int write_md(const char *md, const struct h2b_ab_report *r)
{
    char *text = NULL;
    if (h2b_ab_render_md(r, &text) != H2B_OK)
        return H2B_EXIT_RUNTIME;
    int code = h2b_cmd_write_text(md, text);
    free(text);
    return code;
}

enum {
    O_BASE = 256,
    O_HEAD,
    O_SUITE,
    O_REPO,
    O_BUILD,
    O_BENCH,
    O_FILTER,
    O_FORKS,
    O_WARMUP,
    O_TIME,
    O_EPOCHS,
    O_CPU,
    O_CALLGRIND,
    O_THRESHOLD,
    O_CONFIDENCE,
    O_BASE_ENV,
    O_HEAD_ENV,
    O_WORK,
    O_OUT,
    O_MD
};
static const struct option longopts[] = {
    {"base", required_argument, NULL, O_BASE},
    {"head", required_argument, NULL, O_HEAD},
    {"suite", required_argument, NULL, O_SUITE},
    {"repo", required_argument, NULL, O_REPO},
    {"build", required_argument, NULL, O_BUILD},
    {"bench", required_argument, NULL, O_BENCH},
    {"filter", required_argument, NULL, O_FILTER},
    {"forks", required_argument, NULL, O_FORKS},
    {"warmup", required_argument, NULL, O_WARMUP},
    {"time", required_argument, NULL, O_TIME},
    {"epochs", required_argument, NULL, O_EPOCHS},
    {"cpu", required_argument, NULL, O_CPU},
    {"callgrind", no_argument, NULL, O_CALLGRIND},
    {"threshold", required_argument, NULL, O_THRESHOLD},
    {"confidence", required_argument, NULL, O_CONFIDENCE},
    {"base-env", required_argument, NULL, O_BASE_ENV},
    {"head-env", required_argument, NULL, O_HEAD_ENV},
    {"work", required_argument, NULL, O_WORK},
    {"out", required_argument, NULL, O_OUT},
    {"md", required_argument, NULL, O_MD},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};
/* What the command line asks for: the runner's options, the judge's, and the outputs. */
struct ab_opts {
    struct h2b_ab_run_options run;
    struct h2b_ab_options judge;
    char *base_env[MAX_ENV + 1], *head_env[MAX_ENV + 1];
    size_t n_base_env, n_head_env;
    const char *md;
    bool forks_given;
};

/* Applies option c to o. Returns NULL, or what arg should have been. */
static const char *ab_option(struct ab_opts *a, int c, char *arg)
{
    struct h2b_ab_run_options *o = &a->run;
    uint64_t v;
    switch (c) {
    case O_BASE:
        o->base = arg;
        return NULL;
    case O_HEAD:
        o->head = arg;
        return NULL;
    case O_SUITE:
        o->suite = arg;
        return arg[0] ? NULL : "--suite wants micro or a scenario file";
    case O_REPO:
        o->repo = arg;
        return NULL;
    case O_BUILD:
        o->build_cmd = arg;
        return NULL;
    case O_BENCH:
        o->bench = arg;
        return NULL;
    case O_FILTER:
        o->filter = arg;
        return NULL;
    case O_FORKS:
        a->forks_given = true;
        if (h2b_cli_parse_u64(arg, 2, 1000, &v) != H2B_OK)
            return "--forks wants 2..1000";
        o->forks = (unsigned)v;
        return NULL;
    case O_WARMUP:
        o->warmup = arg;
        return h2b_cli_parse_duration_ns(arg, 0, 600000000000ull, &v) != H2B_OK
                   ? "--warmup wants a duration like 20ms"
                   : NULL;
    case O_TIME:
        o->time = arg;
        return h2b_cli_parse_duration_ns(arg, 1000, 600000000000ull, &v) != H2B_OK
                   ? "--time wants a duration like 50ms"
                   : NULL;
    case O_EPOCHS:
        o->epochs = arg;
        return h2b_cli_parse_u64(arg, 1, 64, &v) != H2B_OK ? "--epochs wants 1..64" : NULL;
    case O_CPU:
        if (strcmp(arg, "none") == 0)
            o->cpu = -1;
        else if (h2b_cli_parse_u64(arg, 0, 1023, &v) != H2B_OK)
            return "--cpu wants a CPU number or none";
        else
            o->cpu = (int)v;
        return NULL;
    case O_CALLGRIND:
        o->callgrind = true;
        return NULL;
    case O_THRESHOLD:
        return h2b_cli_parse_double(arg, 0, 10, &a->judge.threshold) != H2B_OK
                   ? "--threshold wants a fraction in [0, 10], e.g. 0.10"
                   : NULL;
    case O_CONFIDENCE:
        return h2b_cli_parse_double(arg, 0.5, 0.9999, &a->judge.confidence) != H2B_OK
                   ? "--confidence wants a fraction in [0.5, 0.9999], e.g. 0.99"
                   : NULL;
    case O_BASE_ENV:
    case O_HEAD_ENV:
        if (!valid_env(arg))
            return "--base-env/--head-env want NAME=VALUE";
        if ((c == O_BASE_ENV ? a->n_base_env : a->n_head_env) >= MAX_ENV)
            return "too many --base-env/--head-env (at most 32 each)";
        if (c == O_BASE_ENV)
            a->base_env[a->n_base_env++] = arg;
        else
            a->head_env[a->n_head_env++] = arg;
        return NULL;
    case O_WORK:
        o->work_dir = arg;
        return NULL;
    case O_OUT:
        o->out_dir = arg;
        return NULL;
    default: /* O_MD */
        a->md = arg;
        return NULL;
    }
}

/* One option for h2b_cmd_getopt: ab_option's complaint, if any, is the usage error. */
static int ab_take(void *ctx, int c, char *arg)
{
    const char *bad = ab_option(ctx, c, arg);
    if (!bad)
        return -1;
    fprintf(stderr, "h2bench ab: %s, got '%s'\n", bad, arg);
    return H2B_EXIT_USAGE;
}

/* Parses argv into a. Returns -1 to go on and run, or the exit code (help, bad input). */
static int ab_parse(int argc, char **argv, struct ab_opts *a)
{
    *a = (struct ab_opts){.run = {.forks = 10,
                                  .warmup = "20ms",
                                  .time = "50ms",
                                  .epochs = "5",
                                  .cpu = 0,
                                  .progress = on_progress},
                          .judge = {.threshold = 0.10, .confidence = 0.99}};
    int ec = h2b_cmd_getopt("ab", argc, argv, longopts, O_BASE, O_MD, usage, ab_take, a);
    if (ec >= 0)
        return ec;
    if (optind < argc) {
        fprintf(stderr, "h2bench ab: unexpected argument '%s'\n\n", argv[optind]);
        usage(stderr);
        return H2B_EXIT_USAGE;
    }
    struct h2b_ab_run_options *o = &a->run;
    if (!o->base) {
        fprintf(stderr, "h2bench ab: --base REV is required\n\n");
        usage(stderr);
        return H2B_EXIT_USAGE;
    }
    if (h2b_cmd_check_output("ab", "--md", a->md, H2B_FS_OUT_FILE) ||
        h2b_cmd_check_output("ab", "--out", o->out_dir, H2B_FS_OUT_DIR) ||
        h2b_cmd_check_output("ab", "--work", o->work_dir, H2B_FS_OUT_DIR))
        return H2B_EXIT_USAGE;
    if (!a->forks_given && o->suite && strcmp(o->suite, "micro") != 0)
        o->forks = 5; /* a fork is a whole scenario run; its repeats add samples */
    o->base_env = a->base_env;
    o->head_env = a->head_env;
    return -1;
}

/* Runs both sides, judges them and prints the verdict. Returns the exit code. */
static int ab_run(struct ab_opts *a)
{
    struct h2b_ab_report *r = NULL;
    struct h2b_diag d = {0};
    int rv = h2b_ab_run(&a->run, &a->judge, &r, &d);
    if (rv != H2B_OK) {
        fputs("h2bench ab: ", stderr);
        if (d.message[0])
            h2b_diag_print(&d, stderr); /* file:line:column for a scenario that does not parse */
        else
            fprintf(stderr, "%s\n", h2b_strerror(rv));
        return h2b_exit_code(rv);
    }
    char *text = NULL;
    int code = r->exit_code;
    if (h2b_ab_render_table(r, &text) == H2B_OK)
        fputs(text, stdout);
    else
        code = H2B_EXIT_RUNTIME;
    free(text);
    if (a->md && write_md(a->md, r) != H2B_EXIT_OK)
        code = H2B_EXIT_RUNTIME;
    h2b_ab_report_del(r);
    return code;
}

int h2b_cmd_ab(int argc, char **argv)
{
    struct ab_opts a;
    int ec = ab_parse(argc, argv, &a);
    return ec >= 0 ? ec : ab_run(&a);
}
