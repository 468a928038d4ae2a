/*
 * mpi_job.c - one load job over many MPI ranks: exact split, synchronised start, exact merge.
 *
 * MPI is the distributed engine here, not a coordinator of our own: Open MPI already starts the
 * ranks on every host (ssh or a batch system), forwards signals and tears the job down when a
 * rank dies. All this file adds is what a load job needs on top, and only outside the run:
 *
 *  - split: every total (-c, -n, -t, the open-loop rate) becomes this rank's share; integer
 *    totals spread their remainder over the lowest ranks, so the shares add up exactly;
 *  - start: a barrier, then rank 0 broadcasts an instant 200 ms ahead on CLOCK_REALTIME and every
 *    rank sleeps until it. A rank's skew is its own lateness against that instant (its clock
 *    against itself, so it measures wake-up jitter; clocks of different hosts must agree, via
 *    NTP or PTP, for the instants to coincide — latency never depends on it, it is timed within
 *    one rank on CLOCK_MONOTONIC);
 *  - merge: each rank sends rank 0 its counters as one fixed-size record, its five histograms as
 *    their exact text encodings (h2b_hist_encode) and its per-connection rates; rank 0 decodes
 *    and merges them with h2b_load_stats_merge, the same code that merges the threads of one
 *    process. Percentiles are only read from the merged histograms, never averaged;
 *  - progress: the engine hands each interval's tick (counts, interval histogram) to a hook on
 *    the main thread instead of printing it; the hook sums the counts with MPI_Iallreduce on a
 *    duplicated communicator, gathers the interval histograms' encodings to rank 0, which prints
 *    the job's line. A rank whose run is over keeps joining with its final counts until a
 *    reduction finds no rank running, so every rank makes the same number of calls.
 *    Rejected: a blocking MPI_Reduce per interval. Ranks finish at different intervals, so the
 *    counts of calls would differ (a hang, or a reduction matched with the final gather), and
 *    Open MPI's blocking calls spin a core while they wait for the slowest rank.
 *
 * Rejected: MPI_Reduce over the raw bucket arrays. It would be exact too, but it ties the wire
 * format to the histogram's private layout; the encodings are already the stable, tested
 * exchange format (results files carry them, `h2bench merge` reads them).
 *
 * The fixed-size record is sent as bytes: all ranks must run the same h2bench build (the
 * usual MPI requirement), which the record's version stamp checks.
 */
#include "load/mpi_job.h"

#include "core/check.h"
#include "core/clock.h"
#include "core/error.h"
#include "core/fs.h"
#include "load/engine.h"
#include "core/json.h"
#include "core/results.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

bool h2b_load_mpi_detected(void)
{
    static const char *const vars[] = {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_SIZE",
                                       "MPI_LOCALNRANKS"};
    for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
        if (getenv(vars[i]))
            return true;
    return false;
}

#ifndef H2B_HAVE_MPI

bool h2b_load_mpi_built(void)
{
    return false;
}

int h2b_load_mpi_init(struct h2b_load_mpi_job *job, int *argc, char ***argv, struct h2b_diag *err)
{
    (void)argc;
    (void)argv;
    memset(job, 0, sizeof(*job));
    return h2b__load_errf(err, H2B_ERR_UNSUPPORTED,
                          "--mpi: this h2bench was built without MPI (-DH2B_MPI=OFF)");
}

int h2b_load_mpi_split(struct h2b_load_mpi_job *job, struct h2b_load_config *cfg,
                       struct h2b_diag *err)
{
    (void)job;
    (void)cfg;
    return h2b__load_errf(err, H2B_ERR_UNSUPPORTED, "built without MPI");
}

void h2b_load_mpi_split_text(const struct h2b_load_mpi_job *job,
                             const struct h2b_load_config *total, char *buf, size_t len)
{
    (void)job;
    (void)total;
    if (len)
        buf[0] = '\0';
}

int h2b_load_mpi_run(struct h2b_load_mpi_job *job, const struct h2b_load_config *cfg,
                     FILE *progress, const char *rank_json_prefix, struct h2b_load_result *res,
                     struct h2b_diag *err)
{
    (void)job;
    (void)rank_json_prefix;
    (void)cfg;
    (void)progress;
    memset(res, 0, sizeof(*res));
    return h2b__load_errf(err, H2B_ERR_UNSUPPORTED, "built without MPI");
}

int h2b_load_mpi_json(const struct h2b_load_mpi_job *job, json_t *doc)
{
    (void)job;
    (void)doc;
    return H2B_ERR_UNSUPPORTED;
}

void h2b_load_mpi_text(FILE *f, const struct h2b_load_mpi_job *job)
{
    (void)f;
    (void)job;
}

void h2b_load_mpi_finish(struct h2b_load_mpi_job *job)
{
    (void)job;
}

#else /* H2B_HAVE_MPI */

#include <mpi.h>

#define NHIST 5
#define WIRE_VERSION 0x68326d31u /* "h2m1" plus the record's size, checked on rank 0 */

/* One rank's run, as sent to rank 0. */
struct wire {
    uint32_t version;
    uint32_t size;
    struct h2b_load_stats s; /* histogram pointers zeroed: they travel as encodings */
    uint64_t wall_ns, measure_ns, cpu_user_ns, cpu_sys_ns;
    uint64_t start_wall_ns; /* its measurement's start, CLOCK_REALTIME (--hdr-log's StartTime) */
    int64_t start_rt_ns;    /* actual start, CLOCK_REALTIME */
    int64_t end_rt_ns;
    int64_t skew_ns;
    uint64_t nconn_rps;
    uint64_t requests;
    double rate;
    uint32_t connections, threads;
    int32_t rc;
    int32_t interrupted;
    int32_t has_stats;
    uint32_t enc_len[NHIST]; /* bytes of each encoding, NUL included */
    char host[64];
    char alpn[32];
    char engine[16]; /* "fast", "nghttp2", "h1", "h3": the job's `engine:` line */
};

/* This rank's share, kept for the run and the report. */
static struct {
    uint32_t connections, threads;
    uint64_t requests;
    double rate;
    bool threads_raised; /* -t was below the rank count: one thread per rank */
} mine;

bool h2b_load_mpi_built(void)
{
    return true;
}

static int64_t realtime_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static uint64_t share(uint64_t total, int rank, int size)
{
    return total / (uint64_t)size + ((uint64_t)rank < total % (uint64_t)size ? 1 : 0);
}

int h2b_load_mpi_init(struct h2b_load_mpi_job *job, int *argc, char ***argv, struct h2b_diag *err)
{
    memset(job, 0, sizeof(*job));
    int provided = 0;
    /* Only the main thread ever calls MPI, and only before and after the run. */
    if (MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS)
        return h2b__load_errf(err, H2B_ERR_SYS, "MPI_Init_thread failed");
    MPI_Comm_rank(MPI_COMM_WORLD, &job->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &job->size);
    job->active = true;
    return H2B_OK;
}

int h2b_load_mpi_split(struct h2b_load_mpi_job *job, struct h2b_load_config *cfg,
                       struct h2b_diag *err)
{
    int r = job->rank, n = job->size;
    if (n > 1 && cfg->conn_shape.nseg)
        return h2b__load_errf(err, H2B_ERR_INVAL,
                              "--conn-stages and --conn-step are not dealt over MPI ranks: run "
                              "them on one host");
    if ((uint64_t)n > cfg->connections)
        return h2b__load_errf(err, H2B_ERR_INVAL,
                              "%d MPI ranks but -c %u connections: every rank needs at least one "
                              "connection (-c is the job's total)",
                              n, cfg->connections);
    mine.connections = (uint32_t)share(cfg->connections, r, n);
    mine.threads_raised = cfg->threads < (uint32_t)n;
    mine.threads = mine.threads_raised ? 1 : (uint32_t)share(cfg->threads, r, n);
    if (mine.threads > mine.connections)
        mine.threads = mine.connections;
    mine.requests = cfg->duration_ns ? cfg->requests : share(cfg->requests, r, n);
    mine.rate = cfg->rate > 0 ? cfg->rate / n : 0;
    if (cfg->rate > 0 && mine.rate < mine.threads && !cfg->shape.nseg)
        return h2b__load_errf(
            err, H2B_ERR_INVAL,
            "--total-rps %g over %d ranks gives %g requests/s per rank, below its %u "
            "thread(s): each thread needs at least 1 request/s",
            cfg->rate, n, mine.rate, mine.threads);
    /* -r/--rate (h2load's ramp: connections started per period) is a job total too. */
    if (cfg->conn_rate > 0 && cfg->conn_rate < (uint32_t)n)
        return h2b__load_errf(err, H2B_ERR_INVAL,
                              "-r %u over %d ranks: every rank needs at least one new connection "
                              "per period (-r is the job's total)",
                              cfg->conn_rate, n);
    if (cfg->conn_rate > 0)
        cfg->conn_rate = (uint32_t)share(cfg->conn_rate, r, n);
    /* --log-file: hosts cannot share one file, so every rank writes its own rows to
     * PATH.rankN (concatenated they are the job's rows, in h2load's format). */
    if (cfg->log_fd >= 0) {
        char path[4096];
        close(cfg->log_fd);
        cfg->log_fd = -1;
        unlink(cfg->log_path); /* the parser created it on every host; ENOENT is fine */
        if ((size_t)snprintf(path, sizeof(path), "%s.rank%d", cfg->log_path, r) >= sizeof(path))
            return h2b__load_errf(err, H2B_ERR_INVAL, "--log-file: path too long");
        cfg->log_fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (cfg->log_fd < 0)
            return h2b__load_errf(err, H2B_ERR_INVAL, "--log-file: cannot open %s: %s", path,
                                  strerror(errno));
    }
    if (cfg->shape.nseg) { /* the job's arrival stream, dealt over every rank's workers */
        uint32_t base = 0, all = 0;
        for (int i = 0; i < n; i++) {
            uint32_t c = (uint32_t)share(cfg->connections, i, n);
            uint32_t t = mine.threads_raised ? 1 : (uint32_t)share(cfg->threads, i, n);
            t = t > c ? c : t;
            base += i < r ? t : 0;
            all += t;
        }
        cfg->job_workers = all;
        cfg->job_worker_base = base;
    }
    cfg->connections = mine.connections;
    cfg->threads = mine.threads;
    if (!cfg->duration_ns)
        cfg->requests = mine.requests;
    cfg->rate = mine.rate;
    cfg->seed += (uint64_t)r; /* Poisson schedules must not repeat across ranks */
    return H2B_OK;
}

/* "10" when every rank gets the same share, else "10-11" (shares differ by at most one). */
static void shares(char *buf, size_t len, uint64_t total, int n)
{
    uint64_t lo = share(total, n - 1, n), hi = share(total, 0, n);
    if (lo == hi)
        snprintf(buf, len, "%" PRIu64, lo);
    else
        snprintf(buf, len, "%" PRIu64 "-%" PRIu64, lo, hi);
}

void h2b_load_mpi_split_text(const struct h2b_load_mpi_job *job,
                             const struct h2b_load_config *total, char *buf, size_t len)
{
    int n = job->size;
    char c[48], t[48] = "1", r[48] = "";
    shares(c, sizeof(c), total->connections, n);
    if (total->threads >= (uint32_t)n)
        shares(t, sizeof(t), total->threads, n);
    if (!total->duration_ns)
        shares(r, sizeof(r), total->requests, n);
    size_t off = (size_t)snprintf(buf, len, "mpi: %d ranks; each rank: %s of %u connections, %s %s",
                                  n, c, total->connections, t,
                                  total->threads >= (uint32_t)n ? "threads" : "thread");
    if (off < len && total->threads < (uint32_t)n)
        off += (size_t)snprintf(buf + off, len - off, " (-t %u is below %d ranks: %d in all)",
                                total->threads, n, n);
    else if (off < len)
        off += (size_t)snprintf(buf + off, len - off, " of %u", total->threads);
    if (off < len && r[0])
        off += (size_t)snprintf(buf + off, len - off, ", %s of %" PRIu64 " requests", r,
                                total->requests);
    if (off < len && total->shape.nseg)
        snprintf(buf + off, len - off, ", its workers' share of the arrivals of the shape %s",
                 total->shape_text ? total->shape_text : "");
    else if (off < len && total->rate > 0)
        snprintf(buf + off, len - off, ", %.3f of %.3f req/s", total->rate / n, total->rate);
}

/* Barrier, agreed instant, sleep until it. Returns the actual start (CLOCK_REALTIME). */
static int64_t synchronised_start(int rank, int64_t *skew_ns)
{
    int64_t at = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        at = realtime_ns() + 200 * (int64_t)H2B_NS_PER_MS;
    MPI_Bcast(&at, 1, MPI_INT64_T, 0, MPI_COMM_WORLD);
    struct timespec ts = {.tv_sec = at / 1000000000, .tv_nsec = at % 1000000000};
    while (clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, &ts, NULL) == EINTR)
        ;
    int64_t now = realtime_ns();
    *skew_ns = now - at;
    return now;
}

static void wire_fill(struct wire *w, const struct h2b_load_result *res, int rc, char **enc)
{
    memset(w, 0, sizeof(*w));
    w->version = WIRE_VERSION;
    w->size = (uint32_t)sizeof(*w);
    w->rc = rc;
    w->connections = mine.connections;
    w->threads = mine.threads;
    w->requests = mine.requests;
    w->rate = mine.rate;
    if (gethostname(w->host, sizeof(w->host) - 1) != 0)
        snprintf(w->host, sizeof(w->host), "?");
    if (rc != H2B_OK)
        return;
    w->s = res->s;
    w->s.latency = w->s.service = w->s.ttfb = w->s.connect = w->s.tls = NULL;
    w->wall_ns = res->wall_ns;
    w->measure_ns = res->measure_ns;
    w->start_wall_ns = res->start_wall_ns;
    w->cpu_user_ns = res->cpu_user_ns;
    w->cpu_sys_ns = res->cpu_sys_ns;
    w->nconn_rps = res->nconn_rps;
    w->interrupted = res->interrupted;
    snprintf(w->alpn, sizeof(w->alpn), "%s", res->alpn);
    snprintf(w->engine, sizeof(w->engine), "%s", res->engine);
    const struct h2b_hist *h[NHIST] = {res->s.latency, res->s.service, res->s.ttfb, res->s.connect,
                                       res->s.tls};
    w->has_stats = 1;
    for (int i = 0; i < NHIST; i++) {
        if (h2b_hist_encode(h[i], &enc[i]) != H2B_OK) {
            w->has_stats = 0;
            return;
        }
        w->enc_len[i] = (uint32_t)strlen(enc[i]) + 1;
    }
}

/* Rank 0: decode one rank's histograms into a stats copy and merge it. */
static int merge_rank(struct h2b_load_stats *dst, const struct wire *w, const char *enc)
{
    struct h2b_load_stats s = w->s;
    struct h2b_hist **h[NHIST] = {&s.latency, &s.service, &s.ttfb, &s.connect, &s.tls};
    int rv = H2B_OK;
    size_t off = 0;
    for (int i = 0; i < NHIST; i++)
        *h[i] = NULL;
    for (int i = 0; i < NHIST && rv == H2B_OK; i++) {
        if (w->enc_len[i] == 0 || enc[off + w->enc_len[i] - 1] != '\0')
            rv = H2B_ERR_PARSE;
        else
            rv = h2b_hist_decode(enc + off, h[i]);
        off += w->enc_len[i];
    }
    if (rv == H2B_OK)
        rv = h2b_load_stats_merge(dst, &s);
    h2b_load_stats_free(&s);
    return rv;
}

/* Progress over the job (--progress): every rank takes part in one reduction per interval
 * (see the file comment), on its own communicator so it can never match the final gathers. */
struct job_progress {
    MPI_Comm comm;
    int rank, size;
    FILE *out;                                /* rank 0 */
    struct h2b_load_progress_printer printer; /* rank 0 */
    uint64_t base_ns;                         /* CLOCK_MONOTONIC at the agreed start */
    bool all_done;                            /* the last reduction found no rank running */
    struct h2b_hist *merged;                  /* rank 0: the job's interval histogram */
    int *lens, *displs;                       /* rank 0 */
};

/* Completes a non-blocking collective without spinning a core: Open MPI's blocking calls poll,
 * and a rank that waits here for a slower one must leave the CPU to the load. */
static void wait_gently(MPI_Request *req)
{
    int flag = 0;
    MPI_Test(req, &flag, MPI_STATUS_IGNORE);
    while (!flag) {
        h2b_clock_sleep_ns(H2B_NS_PER_MS);
        MPI_Test(req, &flag, MPI_STATUS_IGNORE);
    }
}

/* One interval of the job: counters summed on every rank (so every rank learns whether any
 * still runs), interval histograms gathered to rank 0 as exact encodings and merged there, and
 * rank 0 prints the one line. running is false once this rank's own run has ended. */
static void progress_reduce(struct job_progress *jp, const struct h2b_load_progress_tick *t,
                            bool running)
{
    uint64_t local[5] = {running ? 1 : 0, t->ended, t->errors, t->inflight, t->warmup ? 1 : 0};
    uint64_t sum[5] = {0};
    MPI_Request req;
    MPI_Iallreduce(local, sum, 5, MPI_UINT64_T, MPI_SUM, jp->comm, &req);
    wait_gently(&req);
    char *enc = NULL;
    if (h2b_hist_encode(t->interval, &enc) != H2B_OK)
        enc = NULL; /* this rank's interval is missing from the percentiles, not fatal */
    int len = enc ? (int)strlen(enc) + 1 : 0;
    MPI_Gather(&len, 1, MPI_INT, jp->lens, 1, MPI_INT, 0, jp->comm);
    char *all = NULL;
    int total = 0;
    if (jp->rank == 0) {
        /* h2b_load_mpi_run allocated them or aborted the job */
        H2B_ASSERT(jp->lens && jp->displs && jp->merged);
        for (int i = 0; i < jp->size; i++) {
            jp->displs[i] = total;
            total += jp->lens[i];
        }
        all = malloc(total ? (size_t)total : 1);
        if (!all)
            MPI_Abort(jp->comm, 3); /* rank 0 must receive to complete the collective */
    }
    MPI_Gatherv(enc, len, MPI_CHAR, all, jp->lens, jp->displs, MPI_CHAR, 0, jp->comm);
    free(enc);
    jp->all_done = sum[0] == 0;
    if (jp->rank != 0)
        return;
    h2b_hist_reset(jp->merged);
    for (int i = 0; i < jp->size; i++) {
        struct h2b_hist *h = NULL;
        if (jp->lens[i] > 0 && all[jp->displs[i] + jp->lens[i] - 1] == '\0' &&
            h2b_hist_decode(all + jp->displs[i], &h) == H2B_OK)
            h2b_hist_merge(jp->merged, h);
        h2b_hist_del(h);
    }
    free(all);
    if (jp->all_done)
        return; /* the run is over: no line, as in one process */
    struct h2b_load_progress_tick job = {.elapsed_ns = h2b_clock_now_ns() - jp->base_ns,
                                         .ended = sum[1],
                                         .errors = sum[2],
                                         .inflight = sum[3],
                                         .warmup = sum[4] > 0,
                                         .interval = jp->merged};
    h2b_load_progress_print(&jp->printer, jp->out, &job);
}

/* The engine's hook on every rank: this rank's tick joins the job's. */
static void progress_hook(void *ctx, struct h2b_load_progress_tick *t)
{
    progress_reduce(ctx, t, true);
}

/* This rank's own result, written before the merge (rank_json_prefix). */
static int write_rank_json(const char *prefix, int rank, const struct h2b_load_config *cfg,
                           const struct h2b_load_result *res, struct h2b_diag *err)
{
    char path[4096];
    if ((size_t)snprintf(path, sizeof(path), "%s.rank%d.json", prefix, rank) >= sizeof(path))
        return h2b__load_errf(err, H2B_ERR_INVAL, "--mpi-rank-json: path too long");
    json_t *doc = NULL;
    struct h2b_diag diag;
    memset(&diag, 0, sizeof(diag));
    int rv = h2b_load_report_json(cfg, res, &doc);
    if (rv == H2B_OK)
        rv = h2b_json_write_atomic(path, doc, &diag);
    json_decref(doc);
    if (rv != H2B_OK)
        h2b__load_errf(err, rv, "cannot write %s: %s", path,
                       diag.message[0] ? diag.message : h2b_strerror(rv));
    return rv;
}

/* This rank's intervals as NDJSON (--interval-json's lines) in *text, written also to
 * PREFIX.rankN.intervals.ndjson with rank_json_prefix (the input of an offline `h2bench merge
 * --interval-json`). *text stays NULL when the run has none or failed. */
static int rank_intervals(const char *prefix, int rank, const struct h2b_load_result *res,
                          char **text, size_t *len, struct h2b_diag *err)
{
    *text = NULL;
    *len = 0;
    if (h2b_load_intervals_ndjson(res, text, len) != H2B_OK || *len > INT_MAX / 2) {
        free(*text);
        *text = NULL, *len = 0;
        return h2b__load_errf(err, H2B_ERR_NOMEM, "intervals: out of memory");
    }
    if (!prefix)
        return H2B_OK;
    char path[4096];
    struct h2b_diag diag;
    memset(&diag, 0, sizeof(diag));
    if ((size_t)snprintf(path, sizeof(path), "%s.rank%d.intervals.ndjson", prefix, rank) >=
        sizeof(path))
        return h2b__load_errf(err, H2B_ERR_INVAL, "--mpi-rank-json: path too long");
    int rv = h2b_file_write_atomic(path, *text, *len, &diag);
    if (rv != H2B_OK)
        h2b__load_errf(err, rv, "cannot write %s: %s", path,
                       diag.message[0] ? diag.message : h2b_strerror(rv));
    return rv;
}

/* Every rank's intervals to rank 0, merged there interval by interval into res (rank 0's
 * result) with the same merge `h2bench merge --interval-json` runs offline. Collective; the
 * exchange is once, after the run: no MPI call while requests are in flight. */
static int gather_intervals(const struct h2b_load_mpi_job *job, const char *text, size_t len,
                            struct h2b_load_result *res, struct h2b_diag *err)
{
    int n = job->size, my_len = (int)len;
    int *lens = NULL, *displs = NULL;
    char *all = NULL;
    if (job->rank == 0) {
        lens = calloc((size_t)n, sizeof(*lens));
        displs = calloc((size_t)n, sizeof(*displs));
        if (!lens || !displs)
            MPI_Abort(MPI_COMM_WORLD, 3); /* rank 0 must receive to complete the collective */
    }
    MPI_Gather(&my_len, 1, MPI_INT, lens, 1, MPI_INT, 0, MPI_COMM_WORLD);
    size_t total = 0;
    if (job->rank == 0) {
        for (int i = 0; i < n; i++) {
            displs[i] = (int)total;
            total += (size_t)lens[i];
        }
        if (total > INT_MAX || !(all = malloc(total ? total : 1)))
            MPI_Abort(MPI_COMM_WORLD, 3);
    }
    MPI_Gatherv(text, my_len, MPI_CHAR, all, lens, displs, MPI_CHAR, 0, MPI_COMM_WORLD);
    if (job->rank != 0)
        return H2B_OK;
    struct h2b_results_interval **parts = calloc((size_t)n, sizeof(*parts));
    size_t *nparts = calloc((size_t)n, sizeof(*nparts));
    char(*names)[32] = calloc((size_t)n, sizeof(*names));
    const char **files = calloc((size_t)n, sizeof(*files));
    int rv = parts && nparts && names && files ? H2B_OK : H2B_ERR_NOMEM;
    struct h2b_diag d;
    memset(&d, 0, sizeof(d));
    for (int i = 0; i < n && rv == H2B_OK; i++) {
        snprintf(names[i], sizeof(names[i]), "rank %d's intervals", i);
        files[i] = names[i];
        if (lens[i] > 0)
            rv = h2b_load_intervals_parse(names[i], all + displs[i], (size_t)lens[i], &parts[i],
                                          &nparts[i], &d);
    }
    if (rv == H2B_OK)
        rv = h2b_load_intervals_merge(parts, nparts, files, (size_t)n, &res->intervals,
                                      &res->nintervals, &d);
    if (rv != H2B_OK)
        h2b__load_errf(err, rv, "merging the ranks' intervals: %s%s%s", d.file,
                       d.file[0] ? ": " : "", d.message);
    for (int i = 0; parts && nparts && i < n; i++)
        h2b_load_intervals_free(parts[i], nparts[i]);
    free(parts);
    free(nparts);
    free(names);
    free(files);
    free(all);
    free(lens);
    free(displs);
    return rv;
}

/* This rank's run, started with the others (synchronised_start: *start_rt and *skew) and ended
 * at *end_rt, showing the job's progress on rank 0's terminal when it has one. Returns the run's
 * code; *own holds its result when H2B_OK. */
static int run_rank(struct h2b_load_mpi_job *job, const struct h2b_load_config *cfg, FILE *progress,
                    struct h2b_load_result *own, int64_t *start_rt, int64_t *end_rt, int64_t *skew,
                    struct h2b_diag *err)
{
    /* Rank 0's terminal decides whether the job shows progress: every rank must agree, since
     * each one takes part in every interval's reduction. */
    int want_progress = job->rank == 0 && progress != NULL;
    MPI_Bcast(&want_progress, 1, MPI_INT, 0, MPI_COMM_WORLD);
    struct job_progress jp = {.rank = job->rank, .size = job->size, .out = progress};
    if (want_progress) {
        MPI_Comm_dup(MPI_COMM_WORLD, &jp.comm);
        bool ok = h2b_hist_new_default(&jp.merged) == H2B_OK;
        if (job->rank == 0) {
            jp.lens = calloc((size_t)job->size, sizeof(*jp.lens));
            jp.displs = calloc((size_t)job->size, sizeof(*jp.displs));
            ok = ok && jp.lens && jp.displs;
        }
        if (!ok)
            MPI_Abort(MPI_COMM_WORLD, 3); /* a rank that cannot take part would hang the job */
    }
    *start_rt = synchronised_start(job->rank, skew);
    jp.base_ns = h2b_clock_now_ns();
    int rc = h2b_load_run_hooked(cfg, want_progress ? progress_hook : NULL, &jp, NULL, own, err);
    *end_rt = realtime_ns();
    /* This rank is done (or never started): it keeps taking part, with its final counts, until
     * the reduction finds no rank running, so all ranks leave after the same interval. It posts
     * at once; the ranks still running complete the reduction at their next interval. */
    while (want_progress && !jp.all_done) {
        struct h2b_load_progress_tick t = {.interval = jp.merged};
        if (rc == H2B_OK) {
            t.ended = own->s.done + own->s.errored - own->s.not_sent;
            t.errors = own->s.failed;
        }
        h2b_hist_reset(jp.merged);
        progress_reduce(&jp, &t, false);
    }
    if (want_progress) {
        MPI_Comm_free(&jp.comm);
        h2b_hist_del(jp.merged);
        free(jp.lens);
        free(jp.displs);
    }
    return rc;
}

/* What rank 0 gathers from every rank: the wire records, their histograms (blobs, at displs,
 * lens bytes each) and their per-connection rates (rps, rps_total in all). */
struct gathered {
    struct wire *all;
    int *lens, *displs, *rps_counts, *rps_displs;
    char *blobs;
    double *rps;
    size_t rps_total;
};

static void gathered_free(struct gathered *g)
{
    free(g->all);
    free(g->lens);
    free(g->displs);
    free(g->rps_counts);
    free(g->rps_displs);
    free(g->blobs);
    free(g->rps);
}

/* Every rank's record, histograms (blob, enc_total bytes) and per-connection rates to rank 0 (g;
 * zeroed on the others). Every rank takes part in every collective, whatever happened to its own
 * run; rank 0 aborts the job if it cannot allocate what it receives into. */
static void gather_ranks(const struct h2b_load_mpi_job *job, const struct wire *w, const char *blob,
                         size_t enc_total, const double *conn_rps, struct gathered *g)
{
    int n = job->size;
    memset(g, 0, sizeof(*g));
    if (job->rank == 0) {
        g->all = calloc((size_t)n, sizeof(*g->all));
        g->lens = calloc((size_t)n, sizeof(*g->lens));
        g->displs = calloc((size_t)n, sizeof(*g->displs));
        g->rps_counts = calloc((size_t)n, sizeof(*g->rps_counts));
        g->rps_displs = calloc((size_t)n, sizeof(*g->rps_displs));
        if (!g->all || !g->lens || !g->displs || !g->rps_counts || !g->rps_displs) {
            /* Rank 0 cannot receive: it still has to complete the collectives with buffers,
             * so this is fatal for the job. */
            MPI_Abort(MPI_COMM_WORLD, 3);
        }
    }
    int my_len = (int)enc_total;
    int my_rps = w->has_stats ? (int)w->nconn_rps : 0;
    MPI_Gather(w, (int)sizeof(*w), MPI_BYTE, g->all, (int)sizeof(*w), MPI_BYTE, 0, MPI_COMM_WORLD);
    MPI_Gather(&my_len, 1, MPI_INT, g->lens, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Gather(&my_rps, 1, MPI_INT, g->rps_counts, 1, MPI_INT, 0, MPI_COMM_WORLD);
    size_t blobs_total = 0;
    if (job->rank == 0) {
        for (int i = 0; i < n; i++) {
            g->displs[i] = (int)blobs_total;
            blobs_total += (size_t)g->lens[i];
            g->rps_displs[i] = (int)g->rps_total;
            g->rps_total += (size_t)g->rps_counts[i];
        }
        g->blobs = malloc(blobs_total ? blobs_total : 1);
        g->rps = malloc((g->rps_total ? g->rps_total : 1) * sizeof(*g->rps));
        if (!g->blobs || !g->rps)
            MPI_Abort(MPI_COMM_WORLD, 3);
    }
    MPI_Gatherv(blob, my_len, MPI_CHAR, g->blobs, g->lens, g->displs, MPI_CHAR, 0, MPI_COMM_WORLD);
    MPI_Gatherv(w->has_stats ? conn_rps : NULL, my_rps, MPI_DOUBLE, g->rps, g->rps_counts,
                g->rps_displs, MPI_DOUBLE, 0, MPI_COMM_WORLD);
}

/* Rank 0: one rank's record into job->ranks[i] and the job's extremes; its counts and
 * histograms into res when its run succeeded. */
static int combine_rank(struct h2b_load_mpi_job *job, const struct gathered *g, int i,
                        struct h2b_load_result *res, int64_t *first, int64_t *last,
                        uint64_t *measure_max, struct h2b_diag *err)
{
    const struct wire *x = &g->all[i];
    struct h2b_load_mpi_rank *o = &job->ranks[i];
    if (x->version != WIRE_VERSION || x->size != sizeof(*x))
        return h2b__load_errf(err, H2B_ERR_PROTO,
                              "rank %d runs a different h2bench build (record %u bytes, "
                              "version %#x): every rank needs the same build",
                              i, x->size, x->version);
    snprintf(o->host, sizeof(o->host), "%s", x->host);
    o->connections = x->connections;
    o->threads = x->threads;
    o->requests = x->requests;
    o->rate = x->rate;
    o->skew_ns = x->skew_ns;
    o->rc = x->rc;
    o->interrupted = x->interrupted;
    int64_t a = x->skew_ns < 0 ? -x->skew_ns : x->skew_ns;
    if (a > job->skew_max_ns)
        job->skew_max_ns = a;
    if (x->start_rt_ns < *first)
        *first = x->start_rt_ns;
    if (x->end_rt_ns > *last)
        *last = x->end_rt_ns;
    if (x->rc != H2B_OK || !x->has_stats || x->s.conns_ok == 0)
        job->failed_ranks++;
    if (x->rc != H2B_OK || !x->has_stats)
        return H2B_OK;
    o->succeeded = x->s.succeeded;
    o->failed = x->s.failed;
    o->errored = x->s.errored;
    o->conns_ok = x->s.conns_ok;
    o->conns_failed = x->s.conns_failed;
    o->req_per_s = x->measure_ns ? (double)x->s.done / ((double)x->measure_ns / 1e9) : 0;
    int rv = merge_rank(&res->s, x, g->blobs + g->displs[i]);
    if (rv != H2B_OK)
        return h2b__load_errf(err, rv, "rank %d sent histograms that do not decode", i);
    res->cpu_user_ns += x->cpu_user_ns;
    res->cpu_sys_ns += x->cpu_sys_ns;
    if (x->interrupted)
        res->interrupted = true;
    if (x->measure_ns > *measure_max)
        *measure_max = x->measure_ns;
    if (!res->start_wall_ns || x->start_wall_ns < res->start_wall_ns)
        res->start_wall_ns = x->start_wall_ns; /* the job's: the earliest rank's */
    if (!res->alpn[0])
        snprintf(res->alpn, sizeof(res->alpn), "%.*s", (int)strnlen(x->alpn, sizeof(x->alpn)),
                 x->alpn);
    if (!res->engine[0])
        snprintf(res->engine, sizeof(res->engine), "%.*s",
                 (int)strnlen(x->engine, sizeof(x->engine)), x->engine);
    return H2B_OK;
}

/* Rank 0: the job's one result from every rank's (res holds the merged intervals already). */
static int combine_ranks(struct h2b_load_mpi_job *job, const struct h2b_load_config *cfg,
                         struct gathered *g, struct h2b_load_result *res, struct h2b_diag *err)
{
    int rv = h2b_load_stats_init(&res->s);
    job->ranks = calloc((size_t)job->size, sizeof(*job->ranks));
    if (rv == H2B_OK && !job->ranks)
        rv = H2B_ERR_NOMEM;
    int64_t first = INT64_MAX, last = INT64_MIN;
    uint64_t measure_max = 0;
    for (int i = 0; i < job->size && rv == H2B_OK; i++)
        rv = combine_rank(job, g, i, res, &first, &last, &measure_max, err);
    if (rv != H2B_OK)
        return rv;
    if (g->rps_total) {
        res->conn_rps = g->rps;
        res->nconn_rps = g->rps_total;
        g->rps = NULL;
    }
    if (res->s.streams_effective == UINT32_MAX) {
        res->s.streams_effective = 0;
        res->s.server_max_streams = 0;
    }
    /* The job's duration counts from the earliest start to the last end. */
    res->wall_ns = last > first ? (uint64_t)(last - first) : 0;
    if (!cfg->duration_ns)
        res->measure_ns = res->wall_ns ? res->wall_ns : 1;
    else if (res->interrupted)
        res->measure_ns = measure_max ? measure_max : 1;
    else
        res->measure_ns = cfg->duration_ns;
    return H2B_OK;
}

int h2b_load_mpi_run(struct h2b_load_mpi_job *job, const struct h2b_load_config *cfg,
                     FILE *progress, const char *rank_json_prefix, struct h2b_load_result *res,
                     struct h2b_diag *err)
{
    struct h2b_load_result mine_res;
    int64_t start = 0, end = 0, skew = 0;
    int rc = run_rank(job, cfg, progress, &mine_res, &start, &end, &skew, err);
    int local_rv = H2B_OK;
    if (rc == H2B_OK && rank_json_prefix)
        local_rv = write_rank_json(rank_json_prefix, job->rank, cfg, &mine_res, err);
    char *iv_text = NULL;
    size_t iv_len = 0;
    if (rc == H2B_OK && cfg->interval_ns && local_rv == H2B_OK)
        local_rv = rank_intervals(rank_json_prefix, job->rank, &mine_res, &iv_text, &iv_len, err);

    struct wire w;
    char *enc[NHIST] = {NULL};
    wire_fill(&w, &mine_res, rc, enc);
    w.start_rt_ns = start;
    w.end_rt_ns = end;
    w.skew_ns = skew;
    size_t enc_total = 0;
    for (int i = 0; i < NHIST; i++)
        enc_total += w.enc_len[i];
    char *blob = malloc(enc_total ? enc_total : 1);
    if (!blob && local_rv == H2B_OK)
        local_rv = H2B_ERR_NOMEM;
    if (!blob)
        w.has_stats = 0, enc_total = 0;
    for (size_t i = 0, off = 0; blob && i < NHIST; off += w.enc_len[i], i++)
        if (w.enc_len[i])
            memcpy(blob + off, enc[i], w.enc_len[i]);
    for (int i = 0; i < NHIST; i++)
        free(enc[i]);

    struct gathered g;
    gather_ranks(job, &w, blob, enc_total, rc == H2B_OK ? mine_res.conn_rps : NULL, &g);
    free(blob);
    if (rc == H2B_OK)
        h2b_load_result_free(&mine_res);

    memset(res, 0, sizeof(*res));
    int iv_rv = H2B_OK;
    if (cfg->interval_ns) /* the same on every rank: the same options */
        iv_rv = gather_intervals(job, iv_text, iv_len, res, err);
    free(iv_text);
    if (job->rank != 0) {
        gathered_free(&g);
        return rc != H2B_OK ? rc : local_rv;
    }
    /* Rank 0: the one result. */
    int rv = iv_rv != H2B_OK ? iv_rv : combine_ranks(job, cfg, &g, res, err);
    if (rv != H2B_OK)
        h2b_load_result_free(res);
    gathered_free(&g);
    return rv != H2B_OK ? rv : (rc != H2B_OK ? rc : local_rv);
}

int h2b_load_mpi_json(const struct h2b_load_mpi_job *job, json_t *doc)
{
    struct h2b_results_mpi m;
    h2b_model_init(&h2b_results_mpi_model, &m);
    m.base.present = true;
    m.ranks = job->size;
    m.start_skew_max_ns = (double)job->skew_max_ns;
    m.failed_ranks = job->failed_ranks;
    int rv = H2B_OK;
    for (int i = 0; i < job->size && job->ranks && rv == H2B_OK; i++) {
        const struct h2b_load_mpi_rank *r = &job->ranks[i];
        struct h2b_results_mpi_rank *o = NULL;
        if ((rv = h2b_model_array_push(&h2b_results_mpi_rank_model, &m.per_rank, (void **)&o)) !=
            H2B_OK)
            break;
        o->base.present = true;
        o->rank = i;
        o->connections = r->connections;
        o->threads = r->threads;
        o->requests = (double)r->requests;
        o->rate = r->rate;
        o->succeeded = (double)r->succeeded;
        o->failed = (double)r->failed;
        o->errored = (double)r->errored;
        o->conns_ok = (double)r->conns_ok;
        o->conns_failed = (double)r->conns_failed;
        o->req_per_s = r->req_per_s;
        o->start_skew_ns = r->skew_ns > 0 ? (double)r->skew_ns : 0;
        o->interrupted = r->interrupted;
        if (h2b_model_set_string(&o->host, r->host) != H2B_OK ||
            h2b_model_set_string(&o->error, r->rc == H2B_OK ? "" : h2b_strerror(r->rc)) != H2B_OK)
            rv = H2B_ERR_NOMEM;
    }
    if (rv == H2B_OK)
        rv = h2b_results_load_set_mpi(doc, &m);
    h2b_model_free(&h2b_results_mpi_model, &m);
    return rv;
}

void h2b_load_mpi_text(FILE *f, const struct h2b_load_mpi_job *job)
{
    fprintf(f, "mpi: %d ranks, start skew max %.3f ms\n", job->size,
            (double)job->skew_max_ns / 1e6);
    for (int i = 0; i < job->size && job->ranks; i++) {
        const struct h2b_load_mpi_rank *r = &job->ranks[i];
        fprintf(f,
                "  rank %d (%s): %u connections, %u thread%s, %.2f req/s, %" PRIu64
                " succeeded, %" PRIu64 " failed, %" PRIu64 " errored, skew %+.3f ms%s%s\n",
                i, r->host, r->connections, r->threads, r->threads == 1 ? "" : "s", r->req_per_s,
                r->succeeded, r->failed, r->errored, (double)r->skew_ns / 1e6,
                r->rc != H2B_OK ? ", run failed: " : "",
                r->rc != H2B_OK    ? h2b_strerror(r->rc)
                : r->conns_ok == 0 ? ", no connection could be made"
                                   : "");
    }
}

void h2b_load_mpi_finish(struct h2b_load_mpi_job *job)
{
    free(job->ranks);
    job->ranks = NULL;
    if (job->active) {
        int fin = 0;
        MPI_Finalized(&fin);
        if (!fin)
            MPI_Finalize();
        job->active = false;
    }
}

#endif /* H2B_HAVE_MPI */
