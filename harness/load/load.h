/*
 * load.h - the load generator engine behind `h2bench load`.
 *
 * A run opens `connections` HTTP/2 connections (h2c prior knowledge for http://, TLS with ALPN
 * "h2" for https://), split evenly over `threads` pthread workers. Each worker owns one epoll
 * loop, its connections, its nghttp2 sessions, its counters and its histograms; nothing is shared
 * per request. Results are merged after the workers are joined.
 *
 * Two load models:
 *  - closed loop (h2load's): every connection keeps min(-m, server's MAX_CONCURRENT_STREAMS)
 *    requests in flight; latency runs from submission to stream close;
 *  - open loop (--rate R): requests get intended send times from an arrival schedule and
 *    latency runs from the intended time, so a stalled server is charged for every request it
 *    delayed (no coordinated omission). The time from the actual send is kept beside it
 *    ("service"), never mixed in.
 *
 * Memory grows with connections and in-flight streams, never with the number of requests.
 */
#ifndef H2B_LOAD_LOAD_H
#define H2B_LOAD_LOAD_H

#include "load/arrival.h"
#include "load/grpc.h"
#include "load/shape.h"
#include "core/hist.h"
#include "core/json.h"

#include <jansson.h>
#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Status codes 0..H2B_LOAD_STATUS_MAX-1 are counted exactly; others go to status_other. */
#define H2B_LOAD_STATUS_MAX 600

struct h2b_load_uri {
    char *scheme;    /* "http" or "https" */
    char *host;      /* without brackets for IPv6 literals */
    char *port;      /* decimal, defaulted from the scheme */
    char *authority; /* host[:port] as written in the URI */
    char *path;      /* path and query, "/" when empty */
    bool tls;
};

struct h2b_load_header {
    char *name; /* lower-cased */
    char *value;
};

enum h2b_load_progress {
    H2B_LOAD_PROGRESS_AUTO = 0, /* on when stderr is a terminal */
    H2B_LOAD_PROGRESS_ON = 1,
    H2B_LOAD_PROGRESS_OFF = 2
};

/* How the workers move bytes (--io). */
enum h2b_load_io {
    H2B_LOAD_IO_EPOLL = 0, /* epoll readiness, read/send (the default) */
    H2B_LOAD_IO_URING = 1  /* io_uring (uring.c); falls back to epoll where refused */
};

/* The HTTP/2 client engine (--engine). */
enum h2b_load_engine {
    H2B_LOAD_ENGINE_FAST = 0,   /* h2fast.c: our framing, nghttp2's HPACK */
    H2B_LOAD_ENGINE_NGHTTP2 = 1 /* one nghttp2_session per connection */
};

struct h2b_results_interval;
struct h2b_slo;

struct h2b_load_config {
    struct h2b_load_uri *uris; /* round-robin per connection; the first one's authority counts */
    size_t nuris;
    uint64_t requests;               /* -n, total over all connections (ignored with -D) */
    uint32_t connections;            /* -c */
    uint32_t streams;                /* -m, requested; clamped per connection to the server's */
    uint32_t threads;                /* -t */
    uint64_t duration_ns;            /* -D, 0 = count mode */
    uint64_t warmup_ns;              /* --warm-up-time, only with -D */
    struct h2b_load_header *headers; /* -H, added or overriding */
    size_t nheaders;
    char *data_path; /* -d */
    uint8_t *body;   /* the -d file, read once */
    size_t body_len;
    uint64_t conn_active_timeout_ns;     /* -T, 0 = none: longest life of a connection */
    uint64_t conn_inactivity_timeout_ns; /* -N, 0 = none: longest silence with streams open */
    uint64_t timeout_ns;                 /* --timeout per request, 0 = none */
    uint64_t coalesce_ns; /* --coalesce: nap before an epoll sleep in the closed loop, 0 = never */
    int window_bits;      /* -w: stream window 2^w - 1 */
    int conn_window_bits; /* -W: connection window 2^W - 1 */
    uint32_t header_table_size;  /* --header-table-size (decoder), bytes */
    uint32_t encoder_table_size; /* --encoder-header-table-size, bytes */
    uint32_t max_frame_size;     /* -f: SETTINGS_MAX_FRAME_SIZE we accept */
    double rate;                 /* --total-rps, req/s over all workers; 0 = closed loop */
    double rps;                  /* --rps, req/s per connection (h2load), CO-free; 0 = off */
    uint32_t conn_rate;          /* -r/--rate: connections started per period; 0 = all */
    uint64_t rate_period_ns;     /* --rate-period (default 1 s) */
    uint64_t *script_ns;         /* --timing-script-file: offset of line i (its URI is uris[i]) */
    size_t nscript;              /* lines; 0 = no script */
    char *script_path;
    bool requests_given; /* -n was on the command line (the script's default is its length) */
    char *base_unix;     /* -B unix:PATH: connect to this UNIX socket */
    char *base_uri;      /* -B as given */
    char *connect_host;  /* --connect-to HOST[:PORT]: connect here, keep :authority and SNI */
    char *connect_port;
    char *log_path;      /* --log-file: h2load's TSV, one row per measured request */
    int log_fd;          /* opened by the parser (so an unwritable path is a usage error), -1 */
    bool verbose;        /* -v: one line per frame, to trace */
    FILE *trace;         /* where -v writes (set by the caller, not parsed: cmd_load gives
                            stderr); NULL = nowhere: the library prints only where told */
    FILE *notice;        /* where --io uring's fallback to epoll is said, one line, as the run
                            starts (set by the caller: cmd_load gives stderr); NULL = nowhere */
    bool version;        /* --version */
    char *ciphers;       /* --ciphers (TLS <= 1.2) */
    char *tls13_ciphers; /* --tls13-ciphers */
    char *groups;        /* --groups */
    bool ktls;           /* --ktls: OpenSSL's SSL_OP_ENABLE_KTLS */
    enum h2b_load_io io; /* --io */
    enum h2b_arrival_kind arrival; /* --arrival */
    uint64_t seed;                 /* --seed */
    bool pin;                      /* --cpus given */
    cpu_set_t cpus;                /* --cpus: worker i runs on the i-th CPU of the list */
    char *cpus_text;
    char *json_path;                 /* --json */
    char *hdr_log_path;              /* --hdr-log: HdrHistogram interval log */
    bool latency_spectrum;           /* --latency: wrk2-style percentile spectrum */
    bool fail_on_error;              /* --fail-on-error */
    enum h2b_load_progress progress; /* --progress / --no-progress */
    bool help;                       /* --help was given */
    bool h3;                         /* --h3: HTTP/3 over QUIC (h3load.c) */
    bool h1; /* --h1 (or -p http/1.1 on http://): HTTP/1.1 (h1load.c), ALPN http/1.1 */
    /* --raw REQ:RESP (rawload.c): REQ bytes out, RESP bytes back per request, no HTTP; 0: off */
    uint32_t raw_request, raw_response;
#define H2B_LOAD_RAW_MAX (1U << 20) /* the largest --raw REQ or RESP */
    uint8_t *alpn; /* --npn-list/--alpn-list in ALPN wire format; NULL: "h2" (or http/1.1) */
    size_t alpn_len;
    enum h2b_load_engine engine; /* --engine (HTTP/2 only) */
    /* One rank of an MPI job (mpi_job.c sets them; 0: this process is the whole job): the
     * job's workers and this rank's first worker's place among them. A shape's arrival stream
     * is the job's, dealt to every worker of every rank in turn (worker w takes arrivals
     * job_worker_base + w, + job_workers, ...), so the ranks together follow the shape. */
    uint32_t job_workers, job_worker_base;
    /* --stages / --step: the open-loop rate over time (nseg 0: none). Its origin is the run's
     * start; with a shape, rate is its mean rate (what the report calls the target). */
    struct h2b_shape shape;
    char *shape_text; /* --stages or --step as given */
    /* --conn-stages / --conn-step: the number of connections doing requests over time (closed
     * loop); connections is the maximum. Empty (nseg 0) without one. */
    struct h2b_shape conn_shape;
    char *conn_shape_text; /* as given */
    /* per-interval results: on when interval_ns > 0 (--interval, default 1 s when
     * --interval-json, --hdr-log, --stages/--step or --slo-window asks for them) */
    uint64_t interval_ns;
    char *interval_json_path; /* --interval-json: NDJSON, one line per interval */
    /* Called on the thread that runs the load as each interval completes, with the interval's
     * merged latency histogram (borrowed for the call). Set by the caller, not parsed; NULL:
     * none. It may call h2b_load_stop(). */
    void (*on_interval)(void *ctx, const struct h2b_results_interval *row,
                        const struct h2b_hist *latency);
    void *on_interval_ctx;
    struct h2b_slo *slo; /* --slo (with --slo-window, --slo-abort, --slo-grace); NULL: none */
    /* --find-max (search.c): steps of find_max_step_ns after a find_max_warmup_ns warm-up, from
     * find_max_start req/s, until the failing rate is within find_max_precision (a ratio) of
     * the passing one, at most find_max_limit req/s */
    bool find_max;
    uint64_t find_max_step_ns, find_max_warmup_ns;
    double find_max_start, find_max_precision, find_max_limit;
    uint32_t find_max_retries; /* a failing step is tried again this many times (default 1) */
    char *slo_text;            /* --slo as given */
    /* --grpc METHOD (grpc.h): every request is a call of this method, a POST whose body (body,
     * built by the parser) is grpc_messages length-prefixed messages; it succeeds only with
     * grpc-status 0. NULL: off. */
    char *grpc_method; /* the :path, with its leading '/' */
    enum h2b_load_grpc_kind grpc_kind;
    char *grpc_data_path;   /* --grpc-data FILE: one encoded message; NULL: --grpc-size */
    uint64_t grpc_size;     /* --grpc-size: EchoMessage payload bytes (default 0) */
    uint32_t grpc_messages; /* --grpc-messages (default 1) */
    int64_t grpc_expect;    /* response DATA bytes of a call with status 0; -1: unchecked */
    struct h2b_load_grpc_reply grpc_reply; /* and those bytes (unit NULL: unchecked) */
};

/* Everything a run measured. Counts follow h2load: succeeded = 2xx/3xx; failed = everything
 * else that ended (non-2xx/3xx responses and errors); errored = no valid response (reset,
 * protocol error, connection lost, timed out, never sent); timeouts is a subset of errored.
 * Status codes are counted when the response headers arrive, also for a request that errors
 * later (h2load counts them so). Every ended request, failed or not, is in the latency
 * histogram. */
struct h2b_load_stats {
    uint64_t started;   /* requests submitted */
    uint64_t done;      /* requests that got a whole response (any status) */
    uint64_t succeeded; /* done with status 2xx or 3xx */
    uint64_t failed;    /* ended without success: non-2xx/3xx responses + errored */
    uint64_t errored;   /* ended without a response */
    uint64_t timeouts;  /* errored because --timeout, -T or -N expired */
    uint64_t resets;    /* errored because the server reset the stream (RST_STREAM) */
    /* errored because the response broke HTTP semantics (a :status that is not 3 digits, a body
     * longer or shorter than its content-length): nghttp2's checks are off, these are ours */
    uint64_t protocol_errors;
    uint64_t not_sent;   /* errored because their connection died before they were submitted */
    uint64_t unfinished; /* still in flight when the run ended (-D deadline or stop): not ended */
    uint64_t unsent;     /* --rate: intended before the end but never submitted (backlog) */
    uint64_t status[H2B_LOAD_STATUS_MAX];
    uint64_t status_other;
    /* --grpc: the calls whose response ended, by grpc-status (0..16, H2B_LOAD_GRPC_OTHER,
     * H2B_LOAD_GRPC_MISSING); only status 0 succeeds, every other one is failed (not errored:
     * the response was valid HTTP/2) */
    uint64_t grpc_status[H2B_LOAD_GRPC_COUNTS];
    uint64_t grpc_mismatch; /* status 0, but not grpc_expect response bytes: failed too */
    uint64_t grpc_wrong;    /* status 0 and the length right, but other bytes than grpc_reply */
    uint64_t bytes_total;   /* bytes received (after TLS decryption) */
    uint64_t bytes_headers; /* HEADERS payload received (compressed) */
    uint64_t bytes_headers_decomp; /* sum of received header name + value lengths */
    uint64_t bytes_data;           /* DATA payload received */
    uint64_t bytes_sent;           /* bytes written (before TLS encryption) */
    uint64_t conns_ok;             /* connections that reached HTTP/2 */
    uint64_t conns_failed;         /* connection attempts that failed */
    int conn_errno;                /* why the first TCP connect failed (ECONNREFUSED...), or 0 */
    uint64_t reconnects;
    uint64_t conn_errors; /* connections we ended with GOAWAY(code): the server broke HTTP/2 */
    /* --rate: worst lateness behind an intended time (a release's, or the backlog's at the end) */
    uint64_t sched_lag_max_ns;
    /* TLS (h2 and h1 over OpenSSL): application_data records received (TLS 1.3: by inner
     * content type) on every connection, warm-up included, and the whole responses received
     * over TLS in the same span (warm-up included), so records / responses is the server's
     * records per response; version and cipher of the first connection that carried data
     * (0 / NULL: no TLS data seen). Counted by one OpenSSL message callback (load.c). */
    uint64_t tls_records;
    uint64_t tls_responses;
    int tls_version;             /* TLS1_3_VERSION, ... */
    const char *tls_cipher;      /* OpenSSL's static name of the cipher */
    uint32_t server_max_streams; /* smallest SETTINGS_MAX_CONCURRENT_STREAMS seen */
    uint32_t streams_effective;  /* smallest effective streams per connection */
    struct h2b_hist *latency;    /* intended (closed loop: submitted) -> ended, ns */
    struct h2b_hist *service;    /* HEADERS sent -> ended, ns: the actual-send-time view */
    struct h2b_hist *ttfb;       /* HEADERS sent -> first response byte, per request, ns */
    struct h2b_hist *connect;    /* connect start -> HTTP/2 ready (TCP + TLS), per connection */
    struct h2b_hist *tls;        /* TLS handshake alone, per TLS connection */
};

struct h2b_load_result {
    struct h2b_load_stats s;
    double *conn_rps; /* per connection: completed requests / its active time */
    size_t nconn_rps;
    uint64_t wall_ns;       /* start to end, connection setup and warm-up included */
    uint64_t start_wall_ns; /* CLOCK_REALTIME at the start (the --hdr-log StartTime) */
    uint64_t measure_ns;    /* the divisor of the rates: -D duration, else wall_ns */
    uint64_t cpu_user_ns;   /* client process CPU during the run */
    uint64_t cpu_sys_ns;
    bool interrupted; /* h2b_load_stop() ended the run early */
    /* -D: the run ended before its deadline without a stop (every connection closed or failed);
     * ended_early_reason says so in one line ("" when it did not) */
    bool ended_early;
    char ended_early_reason[160];
    struct h2b_results_interval *intervals; /* cfg->interval_ns > 0: every interval, in order */
    size_t nintervals;
    char alpn[32];   /* "h2" (TLS, ALPN) or "h2c" (prior knowledge) */
    char engine[16]; /* "fast", "nghttp2" (HTTP/2), "h1", "h3" */
    char io[8];      /* the backend that ran: "epoll" or "uring" */
    /* --io uring that ran on epoll: why, in one line ("" when it did not fall back) */
    char io_fallback[160];
};

/* Sets the defaults h2load has (-n 1 -c 1 -m 1 -t 1 -w 30 -W 30 -f 16K, header tables 4K) plus ours
 * (--timeout 30s, --arrival constant, --seed 1). Free with h2b_load_config_free. */
void h2b_load_config_init(struct h2b_load_config *cfg);
void h2b_load_config_free(struct h2b_load_config *cfg);

/* Parses `h2bench load` arguments (argv[0] is the command name) into cfg, which must come from
 * h2b_load_config_init. Reads -d and -i files. On error writes a one-line message into err and
 * returns H2B_ERR_INVAL (bad flag or value), H2B_ERR_NOTFOUND (unreadable -d or -i file). Not
 * thread-safe (getopt). */
int h2b_load_config_parse(struct h2b_load_config *cfg, int argc, char **argv, struct h2b_diag *err);

/* Writes the option summary for --help. */
void h2b_load_usage(FILE *f);

/* Parses an absolute http:// or https:// URI with the core parser (url.h). Returns H2B_OK,
 * H2B_ERR_PARSE (diag, may be NULL, says what was expected and where) or H2B_ERR_NOMEM; free
 * with h2b_load_uri_free. */
struct h2b_diag;
int h2b_load_uri_parse(const char *text, struct h2b_load_uri *out, struct h2b_diag *diag);
void h2b_load_uri_free(struct h2b_load_uri *u);

/* Runs the load. progress, when not NULL, gets one line a second. info, when not NULL, gets
 * h2load's live lines, byte for byte: "spawning thread #i: ...", "TLS Protocol:", "Cipher:",
 * "Server Temp Key:", "Application protocol:", "progress: N% done" (or "% of clients started"
 * with -r) and the -D phase lines. Fills *res (free with
 * h2b_load_result_free) also when the run was interrupted. Returns H2B_OK, H2B_ERR_NOTFOUND
 * (host does not resolve), H2B_ERR_NOMEM, H2B_ERR_SYS (threads, epoll) or H2B_ERR_UNSUPPORTED
 * (TLS set-up); on error *res holds nothing to free. Errors of single connections and requests
 * are counted in *res, not returned. One run at a time per process. */
int h2b_load_run(const struct h2b_load_config *cfg, FILE *progress, FILE *info,
                 struct h2b_load_result *res, struct h2b_diag *err);

/* One progress interval as this process measured it: what the progress line is made of. */
struct h2b_load_progress_tick {
    uint64_t elapsed_ns; /* since the run's start */
    uint64_t ended;      /* requests ended so far (done + errored, not never-sent), cumulative */
    uint64_t errors;     /* failed so far, cumulative */
    uint64_t inflight;
    bool warmup;               /* inside -D's warm-up */
    struct h2b_hist *interval; /* latencies recorded in this interval (the engine's; a hook may
                                * merge into it, the engine resets it afterwards) */
};

/* Called on the thread that called h2b_load_run_hooked, once a second while the run's workers
 * run, instead of printing. Must not stop the run; may block briefly (the workers carry on). */
typedef void (*h2b_load_progress_fn)(void *ctx, struct h2b_load_progress_tick *tick);

/* h2b_load_run with the progress lines handed to hook (with ctx) instead of printed (progress
 * off when hook is NULL). Same returns as h2b_load_run. */
int h2b_load_run_hooked(const struct h2b_load_config *cfg, h2b_load_progress_fn hook, void *ctx,
                        FILE *info, struct h2b_load_result *res, struct h2b_diag *err);

/* The progress line's printer: keeps the previous tick to turn cumulative counts into the
 * interval's req/s. Zero-initialise, then call h2b_load_progress_print once per tick. */
struct h2b_load_progress_printer {
    uint64_t last_ns;
    uint64_t last_ended;
};

/* Prints "progress: 2.0s, 800 ended, 400 req/s, 3 in flight, 0 errors, interval p50 … p99 …"
 * (plus " (warm-up)") and flushes f. */
void h2b_load_progress_print(struct h2b_load_progress_printer *p, FILE *f,
                             const struct h2b_load_progress_tick *tick);

/* Asks a running h2b_load_run to stop: in-flight requests are reported as unfinished. Async-
 * signal-safe (one atomic store); call it from a SIGINT handler. */
void h2b_load_stop(void);

void h2b_load_result_free(struct h2b_load_result *res);

/* The h2load 1.52-compatible text block followed by h2bench's extra lines. */
void h2b_load_report_text(FILE *f, const struct h2b_load_config *cfg,
                          const struct h2b_load_result *res);

/* The results as one matrix-cell-shaped JSON object (DESIGN.md's fields first, then counts,
 * traffic, per-metric percentiles, the configuration, the encoded histograms, tool and env).
 * Fields not measured here are null and named in "note". *out owns the object.
 * Returns H2B_OK or H2B_ERR_NOMEM. */
int h2b_load_report_json(const struct h2b_load_config *cfg, const struct h2b_load_result *res,
                         json_t **out);

/* The histogram h in HdrHistogram's V2 compressed encoding, base64 (what HdrHistogram's
 * decodeFromCompressedBase64 reads), into a malloc'd string. H2B_ERR_UNSUPPORTED unless lowest
 * is 1 and sub_bits is 4, 7, 10 or 14 (1-4 significant figures); H2B_ERR_NOMEM. */
int h2b_load_hdr_encode(const struct h2b_hist *h, char **out);

/* --hdr-log: an HdrHistogram interval log (format 1.3) with one Tag= line per non-empty
 * histogram of res (latency, service, ttfb, connect, tls_handshake) spanning the measurement;
 * with per-interval results (res->intervals), latency has one line per non-empty interval.
 * *out is malloc'd, *outlen its length. H2B_OK, H2B_ERR_NOMEM, H2B_ERR_UNSUPPORTED. */
int h2b_load_hdr_log(const struct h2b_load_result *res, char **out, size_t *outlen);

/* --latency: wrk2's layout, p50..p99.99 then HdrHistogram's percentile spectrum (value in ms,
 * percentile, total count, 1/(1-p)) and its Mean/Max/Buckets footer. */
void h2b_load_spectrum(FILE *f, const struct h2b_hist *h, const char *title);

/* A latency summary (min, p50 ... p99.99, max, mean, count) of h into l; l stays not present
 * (null) when h has no samples. */
struct h2b_results_latency;
void h2b_load_latency_of(struct h2b_results_latency *l, const struct h2b_hist *h);

/* `h2bench merge`: n load results (docs[i] read from srcs[i], for file:line:column) of parts
 * that ran side by side merged into *out: counts and rates add, durations the longest, stream
 * limits the smallest, histograms bin for bin (every percentile read from the merged ones).
 * H2B_OK, H2B_ERR_PARSE (d: which file, where, what), H2B_ERR_NOMEM. */
struct h2b_json_src;
struct h2b_diag;
int h2b_load_merge(json_t *const *docs, const struct h2b_json_src *srcs, size_t n, json_t **out,
                   struct h2b_diag *d);

/* Requests the open-loop schedule of cfg intends in [from_ns, to_ns) of the measurement (after
 * the warm-up): the shape's integral, or --total-rps times the length; NAN in the closed loop
 * and for --rps and --timing-script-file (per-connection schedules). */
double h2b_load_offered(const struct h2b_load_config *cfg, uint64_t from_ns, uint64_t to_ns);

/* --interval-json: res's intervals as NDJSON, one compact JSON object per line (the interval
 * model of core/results.h), into a malloc'd *out of *outlen bytes. H2B_OK or H2B_ERR_NOMEM. */
int h2b_load_intervals_ndjson(const struct h2b_load_result *res, char **out, size_t *outlen);

/* Parses --interval-json NDJSON text of file (one interval a line, indexes increasing, each
 * with its latency_histogram) into a malloc'd *rows (free with h2b_load_intervals_free).
 * H2B_OK, H2B_ERR_PARSE (d: file:line:column and what was expected) or H2B_ERR_NOMEM. */
int h2b_load_intervals_parse(const char *file, const char *text, size_t len,
                             struct h2b_results_interval **rows, size_t *nrows, struct h2b_diag *d);

/* The per-interval results of n parts that ran side by side (the ranks of an MPI job, or
 * --interval-json files of runs started together) merged interval by interval into *out: rows
 * of one index add their counts and offered requests, span the widest, and read their
 * percentiles from the histograms merged bin for bin. files name the parts in diagnostics.
 * H2B_OK, H2B_ERR_PARSE (a histogram that does not decode or merge) or H2B_ERR_NOMEM. */
int h2b_load_intervals_merge(struct h2b_results_interval *const *parts, const size_t *nparts,
                             const char *const *files, size_t n, struct h2b_results_interval **out,
                             size_t *nout, struct h2b_diag *d);

/* h2b_load_intervals_parse of the file at path (at most H2B_JSON_MAX_FILE bytes); a file that
 * cannot be read is H2B_ERR_PARSE too, with d naming it. */
int h2b_load_intervals_read(const char *path, struct h2b_results_interval **rows, size_t *nrows,
                            struct h2b_diag *d);

void h2b_load_intervals_free(struct h2b_results_interval *rows, size_t n);

/* Stats helpers shared by the engine, the report and the tests. */
int h2b_load_stats_init(struct h2b_load_stats *s);
void h2b_load_stats_free(struct h2b_load_stats *s);
int h2b_load_stats_merge(struct h2b_load_stats *dst, const struct h2b_load_stats *src);

#endif
