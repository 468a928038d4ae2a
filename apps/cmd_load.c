/*
 * cmd_load.c - `h2bench load`: parse the options, run the engine, print and write the results.
 *
 * Ctrl-C (SIGINT) or SIGTERM stops the run through h2b_load_stop(); the partial results are still
 * printed and written. A -D run that ended before its deadline (every connection closed or
 * failed: the server died) is a failed measurement too: a warning on stderr, exit 3, and
 * "ended_early" in --json. h2load ends such a run silently with exit 0; a rate over a shorter
 * span than asked for is not the measurement the user asked for.
 *
 * The shape of every command: load_join (the MPI job, if any) and load_parse(argv) -> struct
 * load_cmd, load_run(it) -> the exit code (load_print, load_write_files, load_verdict).
 */
#include "commands.h"
#include "core/error.h"
#include "core/fs.h"
#include "core/json.h"
#include "load/load.h"
#include "load/mpi_job.h"
#include "load/search.h"
#include "load/slo.h"
#include "core/results.h"
#include "core/version.h"

#include <nghttp2/nghttp2.h>
#include <openssl/crypto.h>

#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void on_signal(int sig)
{
    (void)sig;
    h2b_load_stop();
}

static const char mpi_usage[] =
    "\nDistributed load (docs/distributed.md):\n"
    "      --mpi               run as one job over the ranks of mpirun (implied when mpirun\n"
    "                          started this process): -c, -n, -t and --rate are job totals,\n"
    "                          split exactly; rank 0 prints and writes the merged result\n"
    "      --mpi-rank-json=P   also write each rank's own result to P.rankN.json (and, with\n"
    "                          intervals on, its intervals to P.rankN.intervals.ndjson)\n"
    "  Shapes, --interval-json, --hdr-log and --slo work on the job (the ranks' intervals\n"
    "  merged on rank 0 after the run); --slo-abort and --find-max are refused\n";

/* Takes `--mpi` and `--mpi-rank-json=P` / `--mpi-rank-json P` out of argv (they are the CLI's,
 * not the engine's). Returns false on a missing value. */
static bool take_mpi_flags(int *argc, char **argv, bool *mpi, const char **rank_json)
{
    int out = 1;
    for (int i = 1; i < *argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--") == 0) {
            while (i < *argc)
                argv[out++] = argv[i++];
            break;
        }
        if (strcmp(a, "--mpi") == 0) {
            *mpi = true;
        } else if (strncmp(a, "--mpi-rank-json=", 16) == 0 && a[16]) {
            *rank_json = a + 16;
        } else if (strcmp(a, "--mpi-rank-json") == 0) {
            if (i + 1 >= *argc)
                return false;
            *rank_json = argv[++i];
        } else {
            argv[out++] = argv[i];
        }
    }
    *argc = out;
    argv[out] = NULL;
    return true;
}

/* "h2bench load: WHAT" and the diagnostic ("file:line:column: message" when it has a place). */
static void print_diag(const char *what, const struct h2b_diag *d)
{
    fprintf(stderr, "h2bench load: %s", what);
    h2b_diag_print(d, stderr);
}

/* Writes the text make builds from res to path (atomically); false: said why on stderr. */
static bool write_text(const char *path,
                       int (*make)(const struct h2b_load_result *, char **, size_t *),
                       const struct h2b_load_result *res)
{
    char *text = NULL;
    size_t len = 0;
    struct h2b_diag diag;
    memset(&diag, 0, sizeof(diag));
    int rv = make(res, &text, &len);
    if (rv == H2B_OK)
        rv = h2b_file_write_atomic(path, text, len, &diag);
    else
        snprintf(diag.message, sizeof(diag.message), "%s", h2b_strerror(rv));
    free(text);
    if (rv != H2B_OK) {
        fprintf(stderr, "h2bench load: cannot write %s: ", path);
        h2b_diag_print(&diag, stderr);
    }
    return rv == H2B_OK;
}

static void latency_text(char *buf, size_t n, const struct h2b_results_search_step *st)
{
    const struct h2b_results_latency *l = &st->latency_ns;
    if (!l->base.present)
        snprintf(buf, n, "no request ended");
    else
        snprintf(buf, n, "p50 %.3fms p90 %.3fms p99 %.3fms p99.9 %.3fms max %.3fms", l->p50 / 1e6,
                 l->p90 / 1e6, l->p99 / 1e6, l->p999 / 1e6, l->max / 1e6);
}

static void print_step(void *ctx, size_t i, const struct h2b_results_search_step *st)
{
    (void)ctx;
    char lat[160];
    latency_text(lat, sizeof(lat), st);
    printf("step %zu: %.1f req/s offered, %.1f achieved, %.0f errors: %s (%s)\n", i + 1,
           st->rate_per_s, st->achieved_per_s, st->errors, st->verdict, lat);
    fflush(stdout);
}

/* --find-max: the search, its lines, its --json; the exit code. */
static int find_max(struct h2b_load_config *cfg)
{
    struct h2b_results_search out;
    struct h2b_diag err = {0};
    printf("searching the highest rate at which '%s' holds: steps of %.1fs after a %.1fs "
           "warm-up, from %.1f req/s\n",
           cfg->slo_text, (double)cfg->find_max_step_ns / 1e9,
           (double)cfg->find_max_warmup_ns / 1e9, cfg->find_max_start);
    fflush(stdout);
    int rv = h2b_load_find_max(cfg, print_step, NULL, &out, &err);
    int code = H2B_EXIT_OK;
    char lat[160];
    if (rv != H2B_OK && rv != H2B_ERR_INTERRUPTED) {
        fprintf(stderr, "h2bench load: ");
        h2b_diag_print(&err, stderr);
        code = H2B_EXIT_RUNTIME;
    } else if (isnan(out.capacity_per_s)) {
        latency_text(lat, sizeof(lat), &out.first_fail);
        printf("capacity: none: the lowest step, %.1f req/s, fails (%s)\n",
               out.first_fail.rate_per_s, lat);
        code = H2B_EXIT_FAIL;
    } else {
        latency_text(lat, sizeof(lat), &out.last_pass);
        printf("capacity: %.1f req/s at '%s'\n  last pass:  %.1f req/s (%s)\n", out.capacity_per_s,
               cfg->slo_text, out.last_pass.rate_per_s, lat);
        if (out.first_fail.base.present) {
            latency_text(lat, sizeof(lat), &out.first_fail);
            printf("  first fail: %.1f req/s (%s)\n", out.first_fail.rate_per_s, lat);
        } else {
            printf("  first fail: none up to --find-max-limit %.1f req/s\n", cfg->find_max_limit);
        }
    }
    printf("search: %zu steps in %.1fs%s\n", out.steps.n, out.search_s,
           rv == H2B_ERR_INTERRUPTED ? " (interrupted)" : "");
    if (rv == H2B_ERR_INTERRUPTED)
        code = H2B_EXIT_RUNTIME;
    json_t *doc = NULL;
    struct h2b_diag diag = {0};
    if (cfg->json_path && code != H2B_EXIT_RUNTIME) {
        int w = h2b_model_to_json(&h2b_results_search_model, &out, &doc);
        if (w == H2B_OK)
            w = h2b_json_write_atomic(cfg->json_path, doc, &diag);
        else
            snprintf(diag.message, sizeof(diag.message), "%s", h2b_strerror(w));
        if (w != H2B_OK) {
            fprintf(stderr, "h2bench load: cannot write %s: ", cfg->json_path);
            h2b_diag_print(&diag, stderr);
            code = H2B_EXIT_RUNTIME;
        }
    }
    json_decref(doc);
    h2b_model_free(&h2b_results_search_model, &out);
    return code;
}

/* One `h2bench load`: the options, the MPI job (inactive on one host), and the job's totals. */
struct load_cmd {
    struct h2b_load_config cfg;
    struct h2b_load_config total; /* the job's totals (shallow: only numbers are read) */
    struct h2b_load_mpi_job job;
    const char *rank_json;
    char split[512];
    bool root, progress;
};

/* Joins an MPI job when asked for or started by mpirun. Returns -1 to go on, or the exit code. */
static int load_join(struct load_cmd *lc, int *argc, char ***argv)
{
    struct h2b_diag err = {0};
    bool want_mpi = false;
    if (!take_mpi_flags(argc, *argv, &want_mpi, &lc->rank_json)) {
        fprintf(stderr, "h2bench load: --mpi-rank-json needs a path prefix\n");
        return H2B_EXIT_USAGE;
    }
    if (!want_mpi && !h2b_load_mpi_detected())
        return -1;
    if (!h2b_load_mpi_built()) {
        fprintf(stderr,
                "h2bench load: %s: this h2bench was built without MPI "
                "(-DH2B_MPI=OFF)\n",
                want_mpi ? "--mpi is unavailable" : "started by mpirun, but MPI is unavailable");
        return H2B_EXIT_USAGE;
    }
    if (h2b_load_mpi_init(&lc->job, argc, argv, &err) != H2B_OK) {
        print_diag("", &err);
        return H2B_EXIT_RUNTIME;
    }
    return -1;
}

/* Parses argv into lc (after load_join) and checks everything that can be checked before the
 * run. Returns -1 to go on, or the exit code (--help, --version, bad input). */
static int load_parse(struct load_cmd *lc, int argc, char **argv)
{
    struct h2b_load_config *cfg = &lc->cfg;
    struct h2b_load_mpi_job *job = &lc->job;
    struct h2b_diag err = {0};
    lc->root = !job->active || job->rank == 0;
    int rv = h2b_load_config_parse(cfg, argc, argv, &err);
    cfg->trace = stderr;  /* -v's frame lines */
    cfg->notice = stderr; /* --io uring's fallback line */
    if (rv == H2B_OK && cfg->help) {
        if (lc->root) {
            h2b_load_usage(stdout);
            fputs(mpi_usage, stdout);
        }
        return H2B_EXIT_OK;
    }
    if (rv == H2B_OK && cfg->version) {
        /* h2load prints "h2load nghttp2/1.52.0" */
        printf("h2bench load %s (%s) nghttp2/%s %s\n", h2b_version(), h2b_version_git_commit(),
               nghttp2_version(0)->version_str, OpenSSL_version(OPENSSL_VERSION));
        return H2B_EXIT_OK;
    }
    if (rv != H2B_OK) {
        if (lc->root) {
            print_diag("", &err);
            fputs("Run 'h2bench load --help' for the options.\n", stderr);
        }
        return h2b_exit_code(rv);
    }
    /* the output files checked before the run (a mistyped directory wastes no load), on every
     * rank of an MPI job so that all of them stop; the root says why */
    const struct {
        const char *flag, *path;
    } outs[] = {{"--json", cfg->json_path},
                {"--interval-json", cfg->interval_json_path},
                {"--hdr-log", cfg->hdr_log_path}};
    for (size_t i = 0; i < sizeof(outs) / sizeof(outs[0]); i++) {
        struct h2b_diag out_d = {0};
        if (lc->root
                ? h2b_cmd_check_output("load", outs[i].flag, outs[i].path, H2B_FS_OUT_FILE) != 0
                : outs[i].path && h2b_fs_output_check(outs[i].path, H2B_FS_OUT_FILE, &out_d))
            return H2B_EXIT_USAGE;
    }
    if (lc->rank_json && !job->active) {
        fprintf(stderr, "h2bench load: --mpi-rank-json needs --mpi (or mpirun)\n");
        return H2B_EXIT_USAGE;
    }
    lc->total = *cfg;
    if (job->active) {
        h2b_load_mpi_split_text(job, &lc->total, lc->split, sizeof(lc->split));
        if (h2b_load_mpi_split(job, cfg, &err) != H2B_OK) {
            if (lc->root)
                print_diag("", &err);
            return H2B_EXIT_USAGE;
        }
    }
    lc->progress = cfg->progress == H2B_LOAD_PROGRESS_ON ||
                   (cfg->progress == H2B_LOAD_PROGRESS_AUTO && isatty(STDERR_FILENO));
    /* Under MPI the ranks exchange their intervals once, after the run (no MPI call near the
     * request loop), so rank 0 judges windows only then: nothing can stop the job live. */
    if (job->active && (cfg->find_max || (cfg->slo && cfg->slo->abort))) {
        if (lc->root)
            fprintf(stderr,
                    "h2bench load: %s is not available under MPI: the ranks merge their intervals "
                    "after the run, so %s\n",
                    cfg->find_max ? "--find-max" : "--slo-abort",
                    cfg->find_max ? "no rank can learn a step's verdict before the next step; run "
                                    "--find-max on one host"
                                  : "no window is judged while the job runs; --slo and "
                                    "--slo-window judge the merged windows at the end");
        return H2B_EXIT_USAGE;
    }
    return -1;
}

/* The job's figures in place of rank 0's share, and the SLO judged on them. */
static void load_job_totals(struct load_cmd *lc, struct h2b_load_result *res)
{
    struct h2b_load_config *cfg = &lc->cfg;
    if (lc->job.active) { /* report the job, not rank 0's share */
        cfg->connections = lc->total.connections;
        cfg->requests = lc->total.requests;
        cfg->rate = lc->total.rate;
        cfg->seed = lc->total.seed;
        cfg->job_workers = cfg->job_worker_base = 0; /* a shape's offered requests: the job's */
        cfg->threads = 0;
        for (int i = 0; i < lc->job.size; i++)
            cfg->threads += lc->job.ranks[i].threads;
    }
    if (cfg->slo && lc->job.active) /* the job's windows, from the ranks' merged intervals */
        h2b_slo_replay(cfg->slo, res->intervals, res->nintervals);
    if (cfg->slo) {
        struct h2b_slo_span run;
        h2b_slo_run_span(&run, cfg, res);
        h2b_slo_finish(cfg->slo, &run);
    }
}

/* h2load's text, then the SLO, MPI and spectrum blocks, on stdout. */
static void load_print(const struct load_cmd *lc, const struct h2b_load_result *res)
{
    const struct h2b_load_config *cfg = &lc->cfg;
    if (lc->job.active && res->alpn[0]) /* the ranks' workers print no info lines */
        printf("Application protocol: %s\n", res->alpn);
    h2b_load_report_text(stdout, cfg, res);
    if (cfg->slo)
        h2b_slo_report_text(stdout, cfg->slo);
    if (lc->job.active)
        h2b_load_mpi_text(stdout, &lc->job);
    if (cfg->latency_spectrum) {
        printf("\n");
        h2b_load_spectrum(stdout, res->s.latency,
                          cfg->rate > 0 || cfg->rps > 0 || cfg->nscript
                              ? "latency from intended send time"
                              : "latency from submission");
    }
    fflush(stdout);
}

/* --hdr-log, --interval-json and --json. False: one could not be written (said on stderr). */
static bool load_write_files(struct load_cmd *lc, struct h2b_load_result *res)
{
    const struct h2b_load_config *cfg = &lc->cfg;
    if ((cfg->hdr_log_path && !write_text(cfg->hdr_log_path, h2b_load_hdr_log, res)) ||
        (cfg->interval_json_path &&
         !write_text(cfg->interval_json_path, h2b_load_intervals_ndjson, res)))
        return false;
    if (!cfg->json_path)
        return true;
    json_t *doc = NULL;
    struct h2b_diag diag;
    memset(&diag, 0, sizeof(diag));
    int rv = h2b_load_report_json(cfg, res, &doc);
    if (rv == H2B_OK && lc->job.active)
        rv = h2b_load_mpi_json(&lc->job, doc);
    if (rv == H2B_OK)
        rv = h2b_json_write_atomic(cfg->json_path, doc, &diag);
    else
        snprintf(diag.message, sizeof(diag.message), "%s", h2b_strerror(rv));
    json_decref(doc);
    if (rv != H2B_OK) {
        fprintf(stderr, "h2bench load: cannot write %s: ", cfg->json_path);
        h2b_diag_print(&diag, stderr);
        return false;
    }
    return true;
}

/* The run's exit code, with the reason on stderr: failed ranks, no connection, an SLO breach,
 * an interrupted or short run, --fail-on-error. */
static int load_verdict(const struct load_cmd *lc, const struct h2b_load_result *res)
{
    const struct h2b_load_config *cfg = &lc->cfg;
    if (res->ended_early && res->s.conns_ok > 0) /* none: said below */
        fprintf(
            stderr, "h2bench load: warning: run ended after %.2f s of the %.2f s asked for: %s\n",
            (double)res->measure_ns / 1e9, (double)cfg->duration_ns / 1e9, res->ended_early_reason);
    if (lc->job.active && lc->job.failed_ranks > 0) {
        fprintf(stderr, "h2bench load: %u of %d ranks failed (see the per-rank lines)\n",
                lc->job.failed_ranks, lc->job.size);
        return H2B_EXIT_RUNTIME;
    }
    if (res->s.conns_ok == 0) {
        fprintf(stderr, "h2bench load: no connection to %s could be made%s%s\n",
                cfg->uris[0].authority, res->s.conn_errno ? ": " : "",
                res->s.conn_errno ? strerror(res->s.conn_errno) : "");
        return H2B_EXIT_RUNTIME;
    }
    if (cfg->slo && cfg->slo->rc != H2B_OK) {
        fprintf(stderr, "h2bench load: --slo: %s\n", h2b_strerror(cfg->slo->rc));
        return H2B_EXIT_RUNTIME;
    }
    if (cfg->slo && (cfg->slo->failed || cfg->slo->run_not_evaluable)) {
        char why[256];
        h2b_slo_first_breach(cfg->slo, why, sizeof(why));
        fprintf(stderr, "h2bench load: %s\n", why);
        return H2B_EXIT_FAIL;
    }
    if (res->interrupted || res->ended_early)
        return H2B_EXIT_RUNTIME;
    if (cfg->fail_on_error && res->s.failed > 0) {
        fprintf(stderr, "h2bench load: %llu of %llu requests failed (--fail-on-error)\n",
                (unsigned long long)res->s.failed,
                (unsigned long long)(res->s.done + res->s.errored));
        return H2B_EXIT_FAIL;
    }
    return H2B_EXIT_OK;
}

/* Runs the load (one host, or this rank's share of the job) and reports it. Returns the exit
 * code. */
static int load_run(struct load_cmd *lc)
{
    struct h2b_load_config *cfg = &lc->cfg;
    struct h2b_diag err = {0};
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    if (cfg->find_max)
        return find_max(cfg);
    if (cfg->slo && cfg->slo->window_ns && !lc->job.active) {
        cfg->on_interval = h2b_slo_on_interval;
        cfg->on_interval_ctx = cfg->slo;
    }
    struct h2b_load_result res;
    if (lc->root) {
        printf("starting benchmark...\n");
        if (lc->split[0])
            printf("%s\n", lc->split);
        fflush(stdout);
    }
    FILE *progress = lc->progress ? stderr : NULL;
    int rv;
    if (lc->job.active) {
        rv = h2b_load_mpi_run(&lc->job, cfg, progress, lc->rank_json, &res, &err);
        if (!lc->root) {
            /* Rank 0 speaks for the job; this rank's failure is in its breakdown. */
            if (rv == H2B_OK)
                h2b_load_result_free(&res);
            return rv == H2B_OK ? H2B_EXIT_OK : H2B_EXIT_RUNTIME;
        }
    } else {
        rv = h2b_load_run(cfg, progress, stdout, &res, &err);
    }
    if (rv != H2B_OK && !(lc->job.active && res.s.latency)) {
        print_diag("", &err);
        return H2B_EXIT_RUNTIME;
    }
    if (rv != H2B_OK) /* rank 0's own run failed, the others' merged results still stand */
        print_diag("rank 0: ", &err);
    load_job_totals(lc, &res);
    load_print(lc, &res);
    int code = load_write_files(lc, &res) ? load_verdict(lc, &res) : H2B_EXIT_RUNTIME;
    h2b_load_result_free(&res);
    return code;
}

int h2b_cmd_load(int argc, char **argv)
{
    struct load_cmd lc;
    memset(&lc, 0, sizeof(lc));
    h2b_load_config_init(&lc.cfg);
    int code = load_join(&lc, &argc, &argv);
    if (code < 0)
        code = load_parse(&lc, argc, argv);
    if (code < 0)
        code = load_run(&lc);
    h2b_load_mpi_finish(&lc.job);
    h2b_load_config_free(&lc.cfg);
    return code;
}
