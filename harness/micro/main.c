/*
 * main.c - h2b_micro_main: the runner's command line, shared by "h2bench micro" and by every
 * user benchmark executable linked with h2bench::micro.
 *
 * Options are parsed the same way in the parent and in its forks (a fork re-executes the same
 * command line; see fork.c), so a fork measures with exactly the parent's settings. Profiles
 * set defaults and explicit flags override them whatever their order.
 */
#include "core/cli.h"
#include "core/clock.h"
#include "core/cpu.h"
#include "core/env.h"
#include "core/error.h"
#include "core/export.h"
#include "core/fs.h"
#include "core/json.h"
#include "core/results.h"
#include "micro/runner.h"
#include "core/stats.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef H2B_MICRO_VERSION
#define H2B_MICRO_VERSION "0"
#endif

enum format { FORMAT_TABLE, FORMAT_GBENCH, FORMAT_GAB, FORMAT_GAB_BIGGER, FORMAT_BMF };

struct profile {
    const char *name;
    unsigned forks, epochs;
    uint64_t warmup_ns, time_ns;
};

/* time_ns is per pass (time and sample) per fork. */
static const struct profile profiles[] = {
    {"quick", 1, 7, 50 * H2B_NS_PER_MS, 100 * H2B_NS_PER_MS},
    {"ci", 3, 15, 100 * H2B_NS_PER_MS, 300 * H2B_NS_PER_MS},
    {"precise", 5, 25, 1000 * H2B_NS_PER_MS, 2000 * H2B_NS_PER_MS},
};

static void usage(FILE *f, const char *prog)
{
    fprintf(f,
            "usage: %s [options]\n"
            "\n"
            "Runs component microbenchmarks: ns/op (median of epochs), per-op latency\n"
            "percentiles, exact B/op and allocs/op, instructions/op.\n"
            "\n"
            "  --list               print the benchmark names and exit\n"
            "  --filter REGEX       run the benchmarks whose name matches (POSIX extended)\n"
            "  --profile NAME       quick (default: 1 fork, 50ms warm-up, 100ms per pass),\n"
            "                       ci (3 forks, 100ms, 300ms) or precise (5 forks, 1s, 2s)\n"
            "  --forks N            fresh processes per benchmark (0: in this process)\n"
            "  --warmup DURATION    warm-up per fork (e.g. 100ms)\n"
            "  --time DURATION      measuring time of the time pass and of the sample pass\n"
            "  --epochs N           epochs of the time pass (1..%d)\n"
            "  --callgrind          also count instructions/op under valgrind --tool=callgrind\n"
            "  --callgrind-calls N  calls in the callgrind pass (it runs N and 4N; default 8)\n"
            "                       (valgrind from PATH, or $H2B_VALGRIND)\n"
            "  --sample-per-call    time every call on its own in the sample pass (no batches)\n"
            "  --cpu N              pin the runner and its forks to CPU N\n"
            "  --seed N             seed of the epoch-size jitter\n"
            "  --json FILE          write the results as h2bench.result/1 (the \"micro\" entries)\n"
            "  --perf-record NAME   also profile benchmark NAME: one extra fork under perf\n"
            "                       record (cpu-clock, DWARF stacks) after its warm-up\n"
            "  --perf-dir DIR       where the profile goes (default: --json's directory, or .)\n"
            "  --format FMT         standard output: table (default), gbench (Google Benchmark\n"
            "                       JSON: a row per fork, then mean/median/stddev rows), gab\n"
            "                       (github-action-benchmark customSmallerIsBetter), gab-bigger\n"
            "                       (customBiggerIsBetter: ops/s) or bmf (Bencher Metric\n"
            "                       Format); with any but table the table goes to standard error\n"
            "  --gbench-aggregates both|only|none  gbench rows: forks and aggregates (default),\n"
            "                       aggregates only (one row per statistic), forks only\n"
            "  --help               this text\n"
            "\n"
            "Exit codes: 0 ok, 2 usage error, 3 a benchmark failed or could not be measured.\n",
            prog, H2B_MICRO_MAX_EPOCHS);
}

struct options {
    struct h2b_micro_config cfg;
    const char *filter, *json, *profile;
    enum format format;
    int gbench_aggregates; /* 0 both, 1 only, 2 none */
    bool list;
};

enum {
    O_LIST = 256,
    O_FILTER,
    O_PROFILE,
    O_FORKS,
    O_WARMUP,
    O_TIME,
    O_EPOCHS,
    O_CALLGRIND,
    O_CALLGRIND_CALLS,
    O_CPU,
    O_SEED,
    O_JSON,
    O_FORMAT,
    O_GBENCH_AGG,
    O_PERF_RECORD,
    O_PERF_DIR,
    O_SAMPLE_PER_CALL,
    O_HELP
};
static const struct option longopts[] = {
    {"list", no_argument, NULL, O_LIST},
    {"filter", required_argument, NULL, O_FILTER},
    {"profile", required_argument, NULL, O_PROFILE},
    {"forks", required_argument, NULL, O_FORKS},
    {"warmup", required_argument, NULL, O_WARMUP},
    {"time", required_argument, NULL, O_TIME},
    {"epochs", required_argument, NULL, O_EPOCHS},
    {"callgrind", no_argument, NULL, O_CALLGRIND},
    {"sample-per-call", no_argument, NULL, O_SAMPLE_PER_CALL},
    {"callgrind-calls", required_argument, NULL, O_CALLGRIND_CALLS},
    {"cpu", required_argument, NULL, O_CPU},
    {"seed", required_argument, NULL, O_SEED},
    {"json", required_argument, NULL, O_JSON},
    {"format", required_argument, NULL, O_FORMAT},
    {"gbench-aggregates", required_argument, NULL, O_GBENCH_AGG},
    {"perf-record", required_argument, NULL, O_PERF_RECORD},
    {"perf-dir", required_argument, NULL, O_PERF_DIR},
    {"help", no_argument, NULL, O_HELP},
    {NULL, 0, NULL, 0},
};
/* Explicit --forks, --warmup, --time and --epochs (UINT64_MAX: the profile's). */
struct overrides {
    uint64_t forks, warmup, time, epochs;
};

/* One of names (NULL-terminated) as its index into *out. False: none matches. */
static bool word(const char *arg, const char *const *names, int *out)
{
    for (int i = 0; names[i]; i++) {
        if (strcmp(arg, names[i]) == 0) {
            *out = i;
            return true;
        }
    }
    return false;
}

/* Applies option c to o and ov. Returns NULL, or what arg should have been. */
static const char *micro_option(struct options *o, struct overrides *ov, int c, const char *arg)
{
    static const char *const formats[] = {"table", "gbench", "gab", "gab-bigger", "bmf", NULL};
    static const char *const aggregates[] = {"both", "only", "none", NULL};
    uint64_t v;
    int i;
    switch (c) {
    case O_LIST:
        o->list = true;
        return NULL;
    case O_FILTER:
        o->filter = arg;
        return NULL;
    case O_PROFILE:
        o->profile = arg;
        return NULL;
    case O_FORKS:
        return h2b_cli_parse_u64(arg, 0, H2B_MICRO_MAX_FORKS, &ov->forks) != H2B_OK
                   ? "--forks wants 0..32"
                   : NULL;
    case O_WARMUP:
        return h2b_cli_parse_duration_ns(arg, 0, 600 * H2B_NS_PER_SEC, &ov->warmup) != H2B_OK
                   ? "--warmup wants a duration like 100ms (at most 10m)"
                   : NULL;
    case O_TIME:
        return h2b_cli_parse_duration_ns(arg, H2B_NS_PER_US, 600 * H2B_NS_PER_SEC, &ov->time) !=
                       H2B_OK
                   ? "--time wants a duration like 300ms (1us..10m)"
                   : NULL;
    case O_EPOCHS:
        return h2b_cli_parse_u64(arg, 1, H2B_MICRO_MAX_EPOCHS, &ov->epochs) != H2B_OK
                   ? "--epochs wants 1..64"
                   : NULL;
    case O_CALLGRIND:
        o->cfg.callgrind = true;
        return NULL;
    case O_SAMPLE_PER_CALL:
        o->cfg.sample_per_call = true;
        return NULL;
    case O_CALLGRIND_CALLS:
        return h2b_cli_parse_u64(arg, 1, 1000000, &o->cfg.callgrind_calls) != H2B_OK
                   ? "--callgrind-calls wants 1..1000000"
                   : NULL;
    case O_CPU:
        if (h2b_cli_parse_u64(arg, 0, CPU_SETSIZE - 1, &v) != H2B_OK)
            return "--cpu wants a CPU number";
        o->cfg.cpu = (int)v;
        return NULL;
    case O_SEED:
        return h2b_cli_parse_u64(arg, 0, UINT64_MAX, &o->cfg.seed) != H2B_OK
                   ? "--seed wants an unsigned integer"
                   : NULL;
    case O_JSON:
        o->json = arg;
        return NULL;
    case O_PERF_RECORD:
        o->cfg.perf_record = arg;
        return NULL;
    case O_PERF_DIR:
        o->cfg.perf_dir = arg;
        return NULL;
    case O_FORMAT:
        if (!word(arg, formats, &i))
            return "--format wants table, gbench, gab, gab-bigger or bmf";
        o->format = (enum format)i;
        return NULL;
    default: /* O_GBENCH_AGG */
        if (!word(arg, aggregates, &i))
            return "--gbench-aggregates wants both, only or none";
        o->gbench_aggregates = i;
        return NULL;
    }
}

/* h2load's shape for an unknown option or one missing its value: the one line, a suggestion,
 * where the options are. */
static int bad_option(const char *prog, const char *arg)
{
    bool needs_value;
    const char *near = h2b_cli_suggest(arg, longopts, &needs_value);
    if (needs_value)
        fprintf(stderr, "%s: option '--%s' needs a value\n", prog, near);
    else
        fprintf(stderr, "%s: unknown option '%s'\n", prog, arg);
    if (near && !needs_value)
        fprintf(stderr, "Did you mean --%s?\n", near);
    fprintf(stderr, "Run '%s --help' for the options.\n", prog);
    return H2B_ERR_INVAL;
}

/* Parses argv into o. Returns H2B_OK, 1 for --help, or H2B_ERR_INVAL (said on stderr). */
static int parse_options(int argc, char **argv, struct options *o)
{
    struct overrides ov = {UINT64_MAX, UINT64_MAX, UINT64_MAX, UINT64_MAX};
    memset(o, 0, sizeof *o);
    o->cfg.cpu = -1;
    o->cfg.seed = 1;
    o->cfg.callgrind_calls = 8;
    o->profile = "quick";
    optind = 0; /* full re-initialisation: the runner may be entered more than once */
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, "+h", longopts, NULL)) != -1) {
        if (c == 'h' || c == O_HELP) {
            usage(stdout, argv[0]);
            return 1;
        }
        if (c < O_LIST || c > O_HELP)
            return bad_option(argv[0], argv[optind - 1]);
        const char *bad = micro_option(o, &ov, c, optarg);
        if (bad) {
            fprintf(stderr, "%s: %s, got '%s'\n\n", argv[0], bad, optarg);
            usage(stderr, argv[0]);
            return H2B_ERR_INVAL;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "%s: unexpected argument '%s'\n\n", argv[0], argv[optind]);
        usage(stderr, argv[0]);
        return H2B_ERR_INVAL;
    }
    const struct profile *p = NULL;
    for (size_t i = 0; i < sizeof profiles / sizeof profiles[0]; i++) {
        if (strcmp(profiles[i].name, o->profile) == 0)
            p = &profiles[i];
    }
    if (!p) {
        fprintf(stderr, "%s: --profile wants quick, ci or precise, got '%s'\n\n", argv[0],
                o->profile);
        usage(stderr, argv[0]);
        return H2B_ERR_INVAL;
    }
    o->cfg.forks = ov.forks != UINT64_MAX ? (unsigned)ov.forks : p->forks;
    o->cfg.warmup_ns = ov.warmup != UINT64_MAX ? ov.warmup : p->warmup_ns;
    o->cfg.time_ns = ov.time != UINT64_MAX ? ov.time : p->time_ns;
    o->cfg.epochs = ov.epochs != UINT64_MAX ? (unsigned)ov.epochs : p->epochs;
    return H2B_OK;
}

/* The h2bench.result/1 document (core/results.c) with one "micro" entry per benchmark. */
static int results_doc(const struct h2b_micro_result *r, size_t n, json_t **out)
{
    json_t *doc = NULL;
    int rc = h2b_results_new(&doc, NULL, NULL);
    for (size_t i = 0; i < n && rc == H2B_OK; i++) {
        struct h2b_results_micro e;
        rc = h2b__micro_result_entry(&r[i], &e);
        if (rc == H2B_OK)
            rc = h2b_results_append_micro(doc, &e);
        h2b_results_micro_free(&e);
    }
    if (rc != H2B_OK) {
        fprintf(stderr, "micro: cannot build the results: %s\n", h2b_strerror(rc));
        json_decref(doc);
        return rc;
    }
    *out = doc;
    return H2B_OK;
}

/* The results document, validated and written atomically. */
static int write_results(const char *path, const json_t *doc)
{
    struct h2b_diag diag = {0};
    int rc = h2b_results_write(path, doc, &diag);
    if (rc != H2B_OK)
        fprintf(stderr, "micro: cannot write %s: %s%s%s\n", path, h2b_strerror(rc),
                diag.message[0] ? ": " : "", diag.message);
    return rc;
}

static int print_json(json_t *doc)
{
    if (!doc || json_dumpf(doc, stdout, JSON_INDENT(2)) != 0)
        return H2B_ERR_IO;
    fputc('\n', stdout);
    return H2B_OK;
}

/* The benchmarks --filter selects (all without it) into run[]; their count, or -1 for a
 * --filter that is not a regular expression (said on stderr). */
static long micro_select(const struct options *o, const char *prog,
                         const struct h2b_micro_instance **run)
{
    regex_t re;
    if (o->filter && regcomp(&re, o->filter, REG_EXTENDED | REG_NOSUB) != 0) {
        fprintf(stderr, "%s: --filter: invalid regular expression '%s'\n", prog, o->filter);
        return -1;
    }
    size_t total = h2b__micro_instance_count(), selected = 0;
    for (size_t i = 0; i < total; i++) {
        const struct h2b_micro_instance *in = h2b__micro_instance(i);
        if (!o->filter || regexec(&re, in->name, 0, NULL, 0) == 0)
            run[selected++] = in;
    }
    if (o->filter)
        regfree(&re);
    return (long)selected;
}

/* What can be checked before any benchmark runs, so a mistyped path or name wastes no run.
 * Returns 0 to go on, or the exit code. */
static int micro_preflight(struct options *o, const char *prog,
                           const struct h2b_micro_instance **run, size_t selected)
{
    if (o->json) {
        struct h2b_diag d = {0};
        if (h2b_fs_output_check(o->json, H2B_FS_OUT_FILE, &d) != H2B_OK) {
            fprintf(stderr, "%s: --json %s: %s\n", prog, o->json, d.message);
            return 2;
        }
    }
    static char perf_dir[4096];
    if (o->cfg.perf_record) {
        bool found = false;
        for (size_t i = 0; i < selected; i++)
            found = found || strcmp(run[i]->name, o->cfg.perf_record) == 0;
        if (!found) {
            fprintf(stderr, "%s: --perf-record: no benchmark named '%s'%s\n", prog,
                    o->cfg.perf_record, o->filter ? " among those --filter selects" : "");
            return 2;
        }
        if (!o->cfg.perf_dir) {
            const char *slash = o->json ? strrchr(o->json, '/') : NULL;
            snprintf(perf_dir, sizeof perf_dir, "%.*s", slash ? (int)(slash - o->json) : 1,
                     slash ? o->json : ".");
            o->cfg.perf_dir = perf_dir;
        }
    }
    if (selected == 0) {
        fprintf(stderr, "%s: no benchmark matches%s%s\n", prog, o->filter ? " " : "",
                o->filter ? o->filter : "");
        return 2;
    }
#ifdef H2B_SANITIZED
    if (o->cfg.callgrind) {
        fprintf(stderr, "%s: --callgrind cannot run a sanitizer build under valgrind\n", prog);
        return 3;
    }
#endif
    if (o->cfg.cpu >= 0 && h2b_cpu_pin_self_to(o->cfg.cpu) != H2B_OK) {
        fprintf(stderr, "%s: --cpu %d: cannot pin: %s\n", prog, o->cfg.cpu, strerror(errno));
        return 3;
    }
    return 0;
}

/* The run's header lines: what runs, how, and why instructions/op may be missing. */
static void micro_header(FILE *table, const struct options *o, size_t selected)
{
    char perf_reason[H2B_MICRO_REASON_MAX] = "";
    bool perf = h2b_env_perf_counters(perf_reason, sizeof perf_reason);
    fprintf(table,
            "# %zu benchmark%s, %u fork%s, warm-up %.0f ms, %.0f ms per pass, %u epoch%s%s\n",
            selected, selected == 1 ? "" : "s", o->cfg.forks, o->cfg.forks == 1 ? "" : "s",
            (double)o->cfg.warmup_ns / 1e6, (double)o->cfg.time_ns / 1e6, o->cfg.epochs,
            o->cfg.epochs == 1 ? "" : "s", o->cfg.callgrind ? ", callgrind" : "");
    if (!perf && !o->cfg.callgrind)
        fprintf(table, "# instructions/op: %s\n", perf_reason);
    h2b__micro_print_table_header(table);
    fflush(table);
}

/* Measures one benchmark into r (forks, then callgrind and perf when asked) and prints its row.
 * False: it failed (r->error says why). */
static bool micro_measure(const struct options *o, const struct h2b_micro_instance *in,
                          struct h2b_micro_result *r, FILE *table)
{
    r->inst = in;
    r->forks = o->cfg.forks ? o->cfg.forks : 1;
    int rc = h2b__micro_run_forks(in, &o->cfg, r->fork);
    if (rc == H2B_OK)
        rc = h2b__micro_result_merge(r);
    if (rc != H2B_OK && !r->error[0])
        snprintf(r->error, sizeof r->error, "measurement failed: %s", h2b_strerror(rc));
    if (!r->error[0] && o->cfg.callgrind) {
        struct h2b_micro_maybe ins = {0};
        if (h2b__micro_run_callgrind(in, &o->cfg, &ins) == H2B_OK) {
            r->instructions_per_op = ins;
            r->instructions_source = "callgrind";
        } else {
            snprintf(r->error, sizeof r->error, "%s", ins.reason);
        }
    }
    if (!r->error[0] && o->cfg.perf_record && strcmp(in->name, o->cfg.perf_record) == 0 &&
        h2b__micro_run_perf(in, &o->cfg, r) != H2B_OK)
        fprintf(table, "# %s: no profile: %s\n", in->name, r->profile_reason);
    h2b__micro_print_table_row(table, r);
    fflush(table);
    return !r->error[0];
}

/* The median timer overhead over the benchmarks that measured, as the table's last line. */
static void micro_overhead_line(FILE *table, const struct h2b_micro_result *results, size_t n)
{
    double ov[H2B_MICRO_MAX_INSTANCES];
    size_t no = 0;
    for (size_t i = 0; i < n; i++) {
        if (!results[i].error[0])
            ov[no++] = (double)results[i].timer_overhead_ns;
    }
    if (no)
        fprintf(table, "# timer overhead: %.0f ns per sample (median over benchmarks)\n",
                h2b_stats_median(ov, no));
}

/* The results file (--json) and the --format document on stdout. Returns 0 or 3. */
static int micro_outputs(const struct options *o, const char *prog,
                         const struct h2b_micro_result *results, size_t n)
{
    int exit_code = 0;
    json_t *rdoc = NULL;
    if ((o->json || o->format == FORMAT_GAB || o->format == FORMAT_GAB_BIGGER ||
         o->format == FORMAT_BMF) &&
        results_doc(results, n, &rdoc) != H2B_OK)
        exit_code = 3;
    if (o->json && (!rdoc || write_results(o->json, rdoc) != H2B_OK))
        exit_code = 3;
    if (o->format != FORMAT_TABLE) {
        json_t *doc = NULL;
        if (o->format == FORMAT_GBENCH)
            doc = h2b__micro_gbench_json(results, n, prog, o->gbench_aggregates != 2,
                                         o->gbench_aggregates != 1);
        else if (rdoc && o->format == FORMAT_BMF)
            h2b_export_bmf(rdoc, &doc);
        else if (rdoc)
            h2b_export_gab(rdoc, o->format == FORMAT_GAB_BIGGER, &doc);
        if (print_json(doc) != H2B_OK)
            exit_code = 3;
        json_decref(doc);
    }
    json_decref(rdoc);
    return exit_code;
}

int h2b_micro_main(int argc, char **argv)
{
    const char *prog = argc > 0 ? argv[0] : "micro";
    struct options o;
    int rc = parse_options(argc, argv, &o);
    if (rc == 1)
        return 0; /* --help */
    if (rc != H2B_OK)
        return 2;
    if (h2b__micro_registry_load() != H2B_OK)
        return 2;
    int child_exit;
    if (h2b__micro_child(&o.cfg, &child_exit))
        return child_exit;
    h2b__micro_set_command_line(argc, argv);

    static const struct h2b_micro_instance *run[H2B_MICRO_MAX_INSTANCES];
    long nsel = micro_select(&o, prog, run);
    if (nsel < 0)
        return 2;
    size_t selected = (size_t)nsel;
    if (o.list) {
        for (size_t i = 0; i < selected; i++)
            printf("%s\n", run[i]->name);
        return 0;
    }
    int pre = micro_preflight(&o, prog, run, selected);
    if (pre != 0)
        return pre;
    FILE *table = o.format == FORMAT_TABLE ? stdout : stderr;
    micro_header(table, &o, selected);
    struct h2b_micro_result *results = calloc(selected, sizeof *results);
    if (!results) {
        fprintf(stderr, "%s: out of memory\n", prog);
        return 3;
    }
    int exit_code = 0;
    for (size_t i = 0; i < selected; i++) {
        if (!micro_measure(&o, run[i], &results[i], table))
            exit_code = 3;
    }
    micro_overhead_line(table, results, selected);
    if (micro_outputs(&o, prog, results, selected) != 0)
        exit_code = 3;
    for (size_t i = 0; i < selected; i++)
        h2b__micro_result_free(&results[i]);
    free(results);
    return exit_code;
}
