/*
 * results.h - the results model: h2bench.result/1 documents, their micro entries and matrix
 * cells, the budgets of a cell, and the h2bench.load/1 document `h2bench load --json` writes.
 *
 * The format is the contract in DESIGN.md ("Results file"). Each part is a struct with one key
 * table (results.c) and one from_json/to_json; every reader and writer goes through them, so a
 * key is spelt once. To add a field: a member here and a line in the table in results.c.
 *
 * Readers keep keys they do not know (base.extra, written back unchanged) and read the legacy
 * per-fork keys "p99_ns_forks" / "ns_per_op_forks" as fork_p99_ns / fork_ns_per_op (model.h).
 * A metric may be null ("not measured here": NAN, NULL or H2B_MODEL_NULL_BOOL, with the reason
 * in the entry's note); identifiers may not. Writing is atomic.
 */
#ifndef H2B_CORE_RESULTS_H
#define H2B_CORE_RESULTS_H

#include "core/json.h"
#include "core/model.h"

#define H2B_RESULTS_SCHEMA "h2bench.result/1"
#define H2B_RESULTS_LOAD_SCHEMA "h2bench.load/1"

/* A latency summary in ns ("latency_ns", and load's service_ns, ttfb_ns, ...). */
struct h2b_results_latency {
    struct h2b_model_base base;
    double min, p50, p90, p99, p999, p9999, max, mean, count;
};

/* Per-request budgets of a cell's target process, each null with its reason in note. */
struct h2b_results_budgets {
    struct h2b_model_base base;
    double allocs_per_request, bytes_per_request, reads_per_request, writes_per_request;
    double writes_per_read, instructions_per_request;
    char *instructions_source; /* "perf", "callgrind", or NULL */
    double rss_per_connection_kib;
    char *alloc_source;                      /* "preload", "interposer", or NULL (not counted) */
    double warmup_requests;                  /* N1 of the two-phase measurement */
    double measured_requests;                /* N2: the divisor of every per-request budget */
    struct h2b_model_nums instructions_runs; /* the two callgrind runs, per request */
    char *note;                              /* "metric: reason; ..." for the null ones */
};

/* The per-request budget metrics of a cell, in one table (results.c): each metric's results key
 * in cell.budgets (also the ceilings' key for it), its labels and its member. The measurement
 * (harness/run/budget.c), the console table, the cells gate, A/B and the report take them from
 * here; none spells a metric's key. */
enum h2b_budget_metric {
    H2B_BUDGET_ALLOCS,
    H2B_BUDGET_BYTES,
    H2B_BUDGET_READS,
    H2B_BUDGET_WRITES,
    H2B_BUDGET_WRITES_PER_READ,
    H2B_BUDGET_INSTRUCTIONS,
    H2B_BUDGET_RSS_PER_CONN,
    H2B_BUDGET_NMETRICS
};

struct h2b_budget_metric_info {
    const char *key;   /* "allocs_per_request" */
    const char *unit;  /* short, for table columns and A/B rows: "allocs/req" */
    const char *title; /* for the report's rows: "allocations" */
    int decimals;      /* the report's precision */
    size_t offset;     /* of its double in struct h2b_results_budgets */
};

extern const struct h2b_budget_metric_info h2b_budget_metrics[H2B_BUDGET_NMETRICS];

/* The metric whose results key is key, or -1. */
int h2b_budget_metric_find(const char *key);

/* The value of metric m in b: NAN when it is null, when b is not present, or m is out of range. */
double h2b_results_budget_get(const struct h2b_results_budgets *b, enum h2b_budget_metric m);

/* Sets metric m of b (NAN: null). m out of range: nothing. */
void h2b_results_budget_set(struct h2b_results_budgets *b, enum h2b_budget_metric m, double v);

/* A CPU profile's summary (harness/prof, docs/profiles.md): samples, the DSO split (its six
 * classes add up to 100), the top symbols by self share, and the artefacts beside the results. */
struct h2b_results_dso_pct {
    struct h2b_model_base base;
    double kernel, nghttp2, tls, libc, own, other; /* % of the samples */
};
struct h2b_results_symbol {
    struct h2b_model_base base;
    char *symbol, *dso, *class_;
    double self_pct, total_pct;
};
struct h2b_results_profile {
    struct h2b_model_base base;
    double samples;
    struct h2b_results_dso_pct dso_pct;
    struct h2b_model_array top; /* of struct h2b_results_symbol, by self share */
    char *exe;                  /* basename of the profiled executable (the "own" class) */
    double recorded_s;
    char *folded, *svg; /* relative to the results file's directory */
};
/* A matrix cell's "profile": the server's (null when perf could not record it: the cell's note
 * says why) and, with --perf-record-client, the client's. */
struct h2b_results_cell_profile {
    struct h2b_model_base base;
    struct h2b_results_profile server, client;
};

/* One "micro" entry: a benchmark merged over its forks. */
struct h2b_results_micro {
    struct h2b_model_base base;
    char *name;
    double ops, ops_per_call, ns_per_op, ns_per_op_mdape, ns_per_op_min, cpu_ns_per_op;
    double bytes_per_op, allocs_per_op;
    int alloc_deterministic;
    double p50_ns, p90_ns, p99_ns, p999_ns, max_ns, samples, sample_batch, timer_overhead_ns;
    double instructions_per_op;
    char *instructions_source;
    double forks;
    struct h2b_model_nums fork_pids, fork_p99_ns, fork_ns_per_op;
    char *histogram;      /* h2b_hist_encode text of the merged histogram */
    json_t *insufficient; /* array of the percentile keys resting on too few samples */
    struct h2b_results_profile profile; /* micro --perf-record (docs/profiles.md) */
    char *note, *error;
};

/* What one fork of a micro benchmark (a child process) sends its parent over a pipe
 * (harness/micro/fork.c): an interchange between two processes of the same binary, modelled here
 * so that its keys are spelt once like the results' own. A metric that could not be measured is
 * null with its reason in the *_note beside it. */
struct h2b_results_fork {
    struct h2b_model_base base;
    double pid;
    struct h2b_model_nums epoch_ns_per_op;
    double ops, cpu_ns_per_op;
    char *hist; /* h2b_hist_encode text */
    double batch, timer_overhead_ns;
    double allocs_per_op;
    char *allocs_note;
    double bytes_per_op;
    char *bytes_note;
    int alloc_deterministic;
    double instructions_per_op;
    char *instructions_note;
    char *error; /* NULL: the benchmark ran */
};

extern const struct h2b_model h2b_results_fork_model;

/* One SLO verdict (`h2bench load --slo`): an objective over the run or one window. */
struct h2b_results_slo {
    struct h2b_model_base base;
    char *objective;       /* the clause as written: "p99<5ms" */
    double start_s, end_s; /* the span judged (the run: the whole measurement) */
    char *verdict;         /* "pass", "fail" or "not_evaluable" */
    double value, limit;   /* measured and allowed, in the objective's unit (ns, ratio, req/s) */
    char *reason;          /* why not evaluable; null otherwise */
    char *scope;           /* "run" (the whole measurement) or "window" (--slo-window) */
};

/* One step of `h2bench load --find-max`. */
struct h2b_results_search_step {
    struct h2b_model_base base;
    double rate_per_s, achieved_per_s, ended, errors;
    struct h2b_results_latency latency_ns;
    char *verdict; /* "pass", "fail" or "not_evaluable" */
};

/* What --find-max found (its --json document): the last passing and the first failing step,
 * and every step. */
struct h2b_results_search {
    struct h2b_model_base base;
    double capacity_per_s; /* the last passing step's rate; null: even the first step failed */
    char *slo;             /* the objectives every step was judged on, as given */
    double step_s, warm_up_s, precision, search_s; /* precision: (fail - pass) / pass at the end */
    struct h2b_results_search_step last_pass, first_fail;
    struct h2b_model_array steps; /* of struct h2b_results_search_step, in the order run */
};

extern const struct h2b_model h2b_results_interval_model, h2b_results_slo_model,
    h2b_results_search_model, h2b_results_search_step_model;

/* One interval of a shaped cell (matrix[].intervals): the client's --interval-json line cut to
 * what the report draws over time. Seconds from the start of the measurement, rates in req/s. */
struct h2b_results_cell_interval {
    struct h2b_model_base base;
    double start_s, end_s;
    double offered_per_s;  /* what the shape intended in it, per second; null: closed loop */
    double achieved_per_s; /* requests ended in it, per second */
    double errors;         /* failed requests that ended in it */
    double p50_ns, p99_ns; /* latency from intended send times; null: no request ended in it */
};

extern const struct h2b_model h2b_results_cell_interval_model;

/* Most intervals and stage boundaries a cell may carry (a day of 1 s intervals): a results file
 * with more is refused (h2b_results_cell_check), and the runner records none beyond it. */
#define H2B_RESULTS_MAX_INTERVALS 86400
#define H2B_RESULTS_MAX_SHAPE_BOUNDS 100000

/* One "matrix" cell (also the first part of an h2bench.load/1 document). */
struct h2b_results_cell {
    struct h2b_model_base base;
    char *target, *client;
    char *target_type; /* "floor": the kernel's floor (h2bench floor-serve); absent otherwise */
    char *protocol;    /* matrix.protocol: "h1", "h2" or "h3" (a load document: its own "protocol",
                          "h2c", "h2", "http/1.1" or "h3", which shares the key) */
    int tls;           /* matrix.tls: the cell ran over TLS (null: not a runner cell) */
    double connections, streams_requested, streams_effective, server_max_streams;
    char *server_max_streams_source; /* "probe" or "configured" */
    double frame_size, window_bits;
    char *path;
    double repeat;
    char *status, *reason; /* "ok", "failed" or "skipped" (both with the reason) */
    double requests, succeeded, failed, errors, duration_s, req_per_s, bytes_per_s;
    double rate; /* open-loop requests/s the client was told to keep (matrix.rate), or null */
    struct h2b_results_latency latency_ns;
    char *latency_histogram; /* h2b_hist_encode text */
    double client_cpu_s, server_cpu_s, server_rss_kib, server_instructions_per_request;
    /* TLS cells: what the client negotiated, and the TLS records carrying application data it
     * received per whole response (a server cost: few large records or many small ones) */
    char *tls_version, *tls_cipher;
    double tls_records_per_response;
    /* The target's I/O backend, as its ready line said (bundled and floor targets; absent for
     * the others): "epoll" or "uring", and after a fallback from --io uring to epoll its reason */
    char *server_io, *server_io_fallback;
    struct h2b_results_budgets budgets;
    struct h2b_results_cell_profile profile; /* --perf-record (harness/run/profile.c) */
    char *note;
    /* Objectives (matrix.slo, load --slo): every verdict, windows in order, the run's last; not
     * present (left out): no objectives. A load document's own "slo" is this member. */
    struct h2b_model_array slo; /* of struct h2b_results_slo */
    /* matrix.find_max: what the capacity search found (the cell's metrics are its last passing
     * step's); not present otherwise */
    struct h2b_results_search search;
    /* matrix.stages / matrix.step: the load over time (of struct h2b_results_cell_interval, in
     * order; absent: the cell was not shaped) and the shape's boundaries in seconds from the
     * start of the measurement (where a stage or a step ends inside it) */
    struct h2b_model_array intervals;
    struct h2b_model_nums shape_bounds_s;
};

struct h2b_results_tool {
    struct h2b_model_base base;
    char *name, *version, *git_commit;
};

struct h2b_results_scenario {
    struct h2b_model_base base;
    char *name, *file, *sha256;
};

/* A request header of a load run's configuration. */
struct h2b_results_header {
    struct h2b_model_base base;
    char *name, *value;
};

/* One MPI rank of a distributed `h2bench load` (harness/load/mpi_job.c). */
struct h2b_results_mpi_rank {
    struct h2b_model_base base;
    double rank;
    char *host;
    double connections, threads, requests, rate, succeeded, failed, errored, conns_ok, conns_failed,
        req_per_s, start_skew_ns;
    int interrupted;
    char *error; /* "" when its run worked */
};

/* The "mpi" object of a distributed load result: present only under MPI. */
struct h2b_results_mpi {
    struct h2b_model_base base;
    double ranks, start_skew_max_ns, failed_ranks;
    struct h2b_model_array per_rank; /* of struct h2b_results_mpi_rank */
};

/* One interval of a load run (`h2bench load --interval-json`, one NDJSON line each): what ended
 * in [start_s, end_s) of the measurement, merged over the workers. */
struct h2b_results_interval {
    struct h2b_model_base base;
    double index, start_s, end_s;
    double offered_per_s;  /* the schedule's intended requests / the length; null: closed loop */
    double achieved_per_s; /* requests ended in it / its length */
    double ended, succeeded, errors; /* errors: failed (non-2xx/3xx and no response) */
    struct h2b_results_latency latency_ns;
    char *latency_histogram; /* h2b_hist_encode text: merges exactly, offline */
    double coalesced;        /* intervals a lagging reader folded into this one (left out when 0) */
    double connections;      /* --conn-stages: connections open at its end (left out without one) */
};

/* What `h2bench load --json` writes: a matrix cell and the load generator's own fields. */
struct h2b_results_load {
    struct h2b_model_base base;
    char *schema; /* H2B_RESULTS_LOAD_SCHEMA */
    struct h2b_results_cell cell;
    double goodput_per_s, wall_s, started, done, timeouts, resets, protocol_errors, not_sent;
    double unfinished, unsent;
    int interrupted;
    int ended_early;          /* -D: the run ended before its deadline (every connection over) */
    char *ended_early_reason; /* why, one line; null when it did not */
    json_t *status_codes;     /* {"200": N, ..., "other": N} */
    struct h2b_results_traffic {
        struct h2b_model_base base;
        double total, headers, headers_decompressed, data, sent;
    } traffic;
    struct h2b_results_latency service_ns, ttfb_ns, connect_ns, tls_handshake_ns;
    double client_cpu_user_s, client_cpu_sys_s;
    char *protocol; /* "h2" or "h2c" */
    char *engine;   /* "fast" or "nghttp2" (HTTP/2), "h1", "h3"; null in older files */
    /* the I/O backend that ran, "epoll" or "uring" (options.io says what was asked for), and
     * why --io uring fell back to epoll (null: it did not); both absent in older files */
    char *io, *io_fallback;
    double server_max_concurrent_streams, connections_up, connections_failed, reconnects;
    double connection_errors; /* connections the client ended: the server broke HTTP/2 */
    struct h2b_results_open_loop {
        struct h2b_model_base base;
        double target_per_s;
        char *arrival;
        double seed, achieved_per_s, max_release_lag_ns;
    } open_loop; /* not present: closed loop (null) */
    struct h2b_results_load_config {
        struct h2b_model_base base;
        json_t *uris;                   /* array of "scheme://authority/path" */
        struct h2b_model_array headers; /* of struct h2b_results_header */
        struct h2b_results_load_options {
            struct h2b_model_base base;
            double requests, connections, streams, threads, duration_s, warm_up_s;
            char *data;
            double connection_active_timeout_s, connection_inactivity_timeout_s, timeout_s;
            double window_bits, connection_window_bits, header_table_size, rate;
            char *arrival;
            double seed;
            char *cpus;
            int fail_on_error;
            double encoder_header_table_size, max_frame_size;
            /* h2load's rate and connection options (rate above is --total-rps) */
            double rps, connection_rate, rate_period_s;
            char *timing_script_file, *base_uri, *connect_to, *log_file;
            int ktls;
            /* --coalesce: the closed loop's longest nap before an epoll sleep (HTTP/2 engines;
             * 0 = never). Absent in results written before it existed. */
            double coalesce_s;
            char *io; /* --io asked for: "epoll" or "uring"; absent in older results */
        } options;
    } config; /* the options of the run */
    struct h2b_results_histograms {
        struct h2b_model_base base;
        char *latency, *service, *ttfb, *connect, *tls_handshake;
    } histograms;
    struct h2b_results_tool tool;
    json_t *env; /* as h2b_env_collect built it (the load command writes it); readers decode it
                    with h2b_results_load_env */
    struct h2b_results_mpi mpi; /* not present: not an MPI job (left out) */
    /* `h2bench load --grpc`: the calls and their gRPC statuses; not present (left out) without */
    struct h2b_results_grpc {
        struct h2b_model_base base;
        char *method;         /* the :path, "/h2bench.Echo/Unary" */
        double messages;      /* --grpc-messages */
        double size;          /* --grpc-size; null with --grpc-data */
        char *data;           /* --grpc-data FILE; null with --grpc-size */
        double expect_bytes;  /* response bytes a call with status 0 must carry; null: unchecked */
        json_t *status_codes; /* {"0": N, ..., "16": N, "other": N, "missing": N}, non-zero only */
        double length_mismatches; /* status 0, but not expect_bytes of response: failed */
        /* status 0 and expect_bytes, but other bytes than the echo's: failed; null where the
         * bytes are not checked */
        double content_mismatches;
    } grpc;
};

/* env.pinning: the CPUs the runner pinned the servers and the client to (cpu lists, "0-1,4"). */
struct h2b_results_pinning {
    struct h2b_model_base base;
    char *server, *client;
};

/* The "env" section: the fingerprint of the machine, the build and the libraries a result was
 * measured with (h2b_env_collect writes it; env.h says what each field holds). Every field may
 * be null or absent (a fact that could not be determined, with a line in warnings saying so, or
 * a file written before the field existed); keys the table does not know stay in base.extra, in
 * the file's order, so a reader can still show them. */
struct h2b_results_env {
    struct h2b_model_base base;
    char *cpu_model;
    double cpus; /* CPUs online */
    char *cpus_allowed, *kernel, *compiler, *compiler_flags, *build_type;
    struct h2b_model_strs sanitizers; /* absent: cannot tell whether it was a sanitizer build */
    char *nghttp2, *openssl, *jansson, *git_commit, *hostname;
    int perf_counters;                  /* hardware instruction counters usable */
    char *perf_counters_reason;         /* why not ("" when usable) */
    struct h2b_model_strs warnings;     /* what makes these numbers less comparable */
    struct h2b_results_pinning pinning; /* the runner's; not present: not recorded */
};

extern const struct h2b_model h2b_results_env_model;

/* A whole h2bench.result/1 document. */
struct h2b_results_doc {
    struct h2b_model_base base;
    char *schema, *created;
    struct h2b_results_tool tool;
    struct h2b_results_scenario scenario;
    struct h2b_results_env env;
    struct h2b_model_array micro;  /* of struct h2b_results_micro */
    struct h2b_model_array matrix; /* of struct h2b_results_cell */
};

/* One line of the history store (`h2bench history --append`, docs/history.md): one run's value
 * of one series, a JSON object per line. */
struct h2b_results_hline {
    struct h2b_model_base base;
    char *series;      /* "<benchmark or cell> - <metric>", as the exports name it */
    char *fingerprint; /* the machine and build it was measured on (values of different ones
                          are never one series) */
    int bigger;        /* higher is better (req/s, ops/s); otherwise lower is */
    char *commit;      /* tool.git_commit of the run */
    char *created;     /* when the run was measured (UTC, ISO 8601) */
    double value;
};

extern const struct h2b_model h2b_results_hline_model;

/* The tables, for the generic h2b_model_* functions (init, free, copy, array_push). */
extern const struct h2b_model h2b_results_mpi_model, h2b_results_mpi_rank_model;

/* Sets doc's "mpi" member (a load result object) from m. Returns H2B_OK or H2B_ERR_NOMEM. */
int h2b_results_load_set_mpi(json_t *doc, const struct h2b_results_mpi *m);

extern const struct h2b_model h2b_results_profile_model, h2b_results_cell_profile_model,
    h2b_results_symbol_model;

extern const struct h2b_model h2b_results_micro_model, h2b_results_cell_model,
    h2b_results_budgets_model, h2b_results_latency_model, h2b_results_load_model,
    h2b_results_header_model, h2b_results_doc_model, h2b_results_histograms_model;

/* Init/free/decode/encode per part. from_json: obj at path of src (may be NULL); mode
 * H2B_MODEL_CONTRACT checks the results file's required fields (0 reads leniently, as a cell of
 * a load document may lack them). Returns H2B_OK, H2B_ERR_PARSE (d says where) or NOMEM; on
 * failure *out is left initialised. to_json: *out owns a new object; H2B_OK or NOMEM. */
void h2b_results_micro_init(struct h2b_results_micro *e);
void h2b_results_micro_free(struct h2b_results_micro *e);
int h2b_results_micro_from_json(const json_t *obj, const struct h2b_json_src *src, const char *path,
                                unsigned mode, struct h2b_results_micro *out, struct h2b_diag *d);
int h2b_results_micro_to_json(const struct h2b_results_micro *e, json_t **out);

void h2b_results_cell_init(struct h2b_results_cell *c);
void h2b_results_cell_free(struct h2b_results_cell *c);
int h2b_results_cell_from_json(const json_t *obj, const struct h2b_json_src *src, const char *path,
                               unsigned mode, struct h2b_results_cell *out, struct h2b_diag *d);
int h2b_results_cell_to_json(const struct h2b_results_cell *c, json_t **out);

void h2b_results_load_init(struct h2b_results_load *l);
void h2b_results_load_free(struct h2b_results_load *l);
int h2b_results_load_from_json(const json_t *obj, const struct h2b_json_src *src,
                               struct h2b_results_load *out, struct h2b_diag *d);
int h2b_results_load_to_json(const struct h2b_results_load *l, json_t **out);

/* Decodes l's "env" (src: l's file, may be NULL) into *out (initialised here; not present when
 * l has none). Returns H2B_OK, H2B_ERR_PARSE (d says where) or H2B_ERR_NOMEM. */
int h2b_results_load_env(const struct h2b_results_load *l, const struct h2b_json_src *src,
                         struct h2b_results_env *out, struct h2b_diag *d);

/* Checks what a reader that renders cells relies on beyond the types: "status" is "ok",
 * "failed" or "skipped", a failed or skipped cell has a reason, a measured one has req_per_s,
 * its intervals (at most H2B_RESULTS_MAX_INTERVALS) have start_s and end_s with end_s >= start_s
 * and starts that never go back, its shape_bounds_s (at most H2B_RESULTS_MAX_SHAPE_BOUNDS)
 * increase. path
 * is the cell's path. Returns H2B_OK or H2B_ERR_PARSE with d located. */
int h2b_results_cell_check(const struct h2b_results_cell *c, const struct h2b_json_src *src,
                           const char *path, struct h2b_diag *d);

/* True when the cell was measured ("status" absent or "ok"). */
bool h2b_results_cell_ok(const struct h2b_results_cell *c);

/* True when the cell was not run because its target cannot serve it ("status": "skipped"; the
 * reason says why). Not ok either: readers that only want measurements need no change. */
bool h2b_results_cell_skipped(const struct h2b_results_cell *c);

/* Decodes a micro entry's or a cell's encoded histogram (NULL when it has none) with a located
 * diagnostic on a bad encoding. path is the entry's path. Returns H2B_OK, H2B_ERR_PARSE, NOMEM. */
struct h2b_hist;
int h2b_results_micro_hist(const struct h2b_results_micro *e, const struct h2b_json_src *src,
                           const char *path, struct h2b_hist **out, struct h2b_diag *d);
int h2b_results_cell_hist(const struct h2b_results_cell *c, const struct h2b_json_src *src,
                          const char *path, struct h2b_hist **out, struct h2b_diag *d);

/* Loads, validates and decodes the results file at path. *out (caller frees with
 * h2b_results_doc_del) is untouched on failure; text_out (may be NULL) gets the file's text
 * for later located diagnostics. Returns H2B_OK, H2B_ERR_NOTFOUND (cannot be opened or read),
 * H2B_ERR_RANGE (too large), H2B_ERR_PARSE or H2B_ERR_NOMEM. */
int h2b_results_doc_load(const char *path, struct h2b_results_doc **out, char **text_out,
                         struct h2b_diag *diag);
void h2b_results_doc_del(struct h2b_results_doc *doc);
struct h2b_results_micro *h2b_results_doc_micro(const struct h2b_results_doc *doc, size_t i);
struct h2b_results_cell *h2b_results_doc_cell(const struct h2b_results_doc *doc, size_t i);

/* Builds a new results document: schema, created (UTC now), tool {name, version, git_commit},
 * scenario {name, file, sha256 of the file's bytes} (each null when the argument is NULL), env
 * (h2b_env_collect) and empty micro and matrix arrays. *out owns it on success.
 * Returns H2B_OK, H2B_ERR_IO (the scenario file cannot be read) or H2B_ERR_NOMEM. */
int h2b_results_new(json_t **out, const char *scenario_name, const char *scenario_file);

/* Appends an entry to the document's "micro" or "matrix" array (encoded with the model).
 * Returns H2B_OK, H2B_ERR_INVAL (doc has no such array) or H2B_ERR_NOMEM. */
int h2b_results_append_micro(json_t *doc, const struct h2b_results_micro *e);
int h2b_results_append_cell(json_t *doc, const struct h2b_results_cell *c);

/* The number of micro entries / matrix cells in doc, and entry i decoded into *out (lenient;
 * the document was built by the model). Returns H2B_OK, H2B_ERR_RANGE (no entry i) or
 * H2B_ERR_NOMEM. */
size_t h2b_results_micro_count(const json_t *doc);
size_t h2b_results_cell_count(const json_t *doc);
int h2b_results_get_cell(const json_t *doc, size_t i, struct h2b_results_cell *out);

/* Sets the "budgets" of matrix entry i (replacing any). Returns H2B_OK, H2B_ERR_RANGE (no entry
 * i) or H2B_ERR_NOMEM. */
int h2b_results_set_cell_budgets(json_t *doc, size_t i, const struct h2b_results_budgets *b);

/* Sets env.pinning {server, client}. Returns H2B_OK, H2B_ERR_INVAL (no env) or NOMEM. */
int h2b_results_set_pinning(json_t *doc, const char *server, const char *client);

/* The sanitizers of env joined with "," into san ("" when none or not recorded). */
void h2b_results_env_sanitizers(const struct h2b_results_env *env, char *san, size_t size);

/* Checks doc against the schema: schema string, created, tool, scenario, env, and each micro and
 * matrix entry's fields and types. src locates errors (may be NULL). Returns H2B_OK or
 * H2B_ERR_PARSE with diag filled. */
int h2b_results_validate(const json_t *doc, const struct h2b_json_src *src, struct h2b_diag *diag);

/* Loads and validates the results file at path. *out owns the document on success.
 * Returns H2B_OK or the codes of h2b_json_load and h2b_results_validate (diag says why). */
int h2b_results_read(const char *path, json_t **out, struct h2b_diag *diag);

/* Validates doc, then writes it atomically to path (h2b_json_write_atomic). An invalid document
 * is not written (H2B_ERR_INVAL, diag names the field). */
int h2b_results_write(const char *path, const json_t *doc, struct h2b_diag *diag);

/* SHA-256 of the file's bytes as 64 lowercase hex digits (OpenSSL EVP). Returns H2B_OK,
 * H2B_ERR_IO or H2B_ERR_NOMEM. */
int h2b_results_file_sha256(const char *path, char hex[65]);

#endif
