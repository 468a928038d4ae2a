/*
 * scenario.h - scenario files: what `h2bench run` measures.
 *
 * A scenario is a JSON document (docs/scenarios.md) naming the targets to start or reach, the
 * client that drives them, the connection x stream matrix and the micro suites to run. Loading
 * validates every field; the first problem is reported with the core JSON diagnostics as
 * file:line:column, the field path ("matrix.connections[2]") and what was expected.
 *
 * Ownership: h2b_scenario_load returns a scenario the caller frees with h2b_scenario_del; every
 * string in it is owned by the scenario. Not thread-safe; nothing here is on a hot path.
 */
#ifndef H2B_RUN_SCENARIO_H
#define H2B_RUN_SCENARIO_H

#include "core/json.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum h2b_target_kind {
    H2B_TARGET_BUNDLED, /* h2bench serve, started by the runner */
    H2B_TARGET_PEER,    /* nghttpd, h2o or nginx from servers/peers/, started by the runner */
    H2B_TARGET_URL,     /* already running somewhere; only probed */
    H2B_TARGET_COMMAND, /* the user's own server: a command line with the peers' placeholders */
    H2B_TARGET_FLOOR    /* the kernel's floor (h2bench floor-serve), driven by load --raw */
};

/* The floor target's default sizes: the bytes h2bench load (the fast engine) writes for one
 * GET /hello once its HPACK table is warm (a 9-byte frame header and an 11-byte header block)
 * and the bytes h2ref answers it with (HEADERS 18 + DATA 22), measured from traffic.sent and
 * traffic.total of h2bench load -c 1 -m 1 against h2bench serve (docs/scenarios.md). */
#define H2B_FLOOR_DEFAULT_REQUEST 20
#define H2B_FLOOR_DEFAULT_RESPONSE 40
#define H2B_FLOOR_BYTES_MAX (1U << 20) /* request_bytes, response_bytes: floor-serve's limit */

struct h2b_cell_filter;
enum h2b_client_kind { H2B_CLIENT_H2BENCH, H2B_CLIENT_H2LOAD };

/* matrix.protocol: what a cell speaks (zero, as in a zeroed cell or target env, is h2). Bit
 * (1u << p) in a target's protocol mask. */
enum h2b_protocol { H2B_PROTO_H2 = 0, H2B_PROTO_H1 = 1, H2B_PROTO_H3 = 2, H2B_PROTO_COUNT = 3 };

/* "h1", "h2", "h3". */
const char *h2b_protocol_name(enum h2b_protocol p);

enum h2b_order {
    H2B_ORDER_ALTERNATE, /* within each cell every target in turn, order reversed every other cell
                          */
    H2B_ORDER_SEQUENTIAL /* all cells of the first target, then the next target */
};

struct h2b_target_spec {
    char *name;                /* unique; the "target" of every result cell */
    enum h2b_target_kind kind; /* what to start */
    char *peer;                /* H2B_TARGET_PEER: key in servers/peers/peers.json */
    char *url;                 /* H2B_TARGET_URL: scheme://host:port, no path */
    char *cpus;                /* CPU list the server is pinned to (default "0") */
    uint32_t threads;          /* server worker threads (default 1) */
    uint32_t max_streams;      /* SETTINGS_MAX_CONCURRENT_STREAMS to configure; 0 = default */
    char **args;               /* extra command-line arguments, NULL-terminated */
    size_t nargs;
    double ready_timeout_s; /* readiness probe deadline (default 10 s) */
    char **command;         /* H2B_TARGET_COMMAND: argument templates, NULL-terminated */
    size_t ncommand;
    char **env; /* H2B_TARGET_COMMAND: "NAME=value" added to the environment, NULL-terminated */
    size_t nenv;
    char *cwd;          /* H2B_TARGET_COMMAND: working directory (placeholders allowed), or NULL */
    int stop_signal;    /* sent to stop the target (default SIGTERM), then SIGKILL after 5 s */
    unsigned protocols; /* command and url targets: "protocols" as a mask of (1u << protocol);
                           default h2 only. Bundled and peer targets: 0 (the runner knows). */
    bool name_given;    /* the document named the target (command targets must) */
    /* H2B_TARGET_FLOOR: bytes of one request and of its response (request_bytes,
     * response_bytes); 0 for the other kinds */
    uint32_t floor_request, floor_response;
    bool floor_uring; /* H2B_TARGET_FLOOR: "io": "uring" (floor-serve --io uring) */
};

struct h2b_client_spec {
    enum h2b_client_kind kind; /* default h2bench */
    char *command;             /* executable; default "h2load", or this h2bench for h2bench */
    char *cpus;                /* CPU list the client is pinned to (default "1") */
    uint32_t threads;          /* client threads (-t, default 1) */
    bool latency_log;          /* h2load: --log-file for exact percentiles (default false) */
    double timeout_s;          /* a cell's client is killed after this (default 120 s) */
    char **args;               /* extra arguments before the URL, NULL-terminated */
    size_t nargs;
    /* client.mpi: every cell's client is one MPI job of np ranks (docs/distributed.md) */
    struct h2b_client_mpi {
        uint32_t np;    /* 0 = not distributed */
        char *hostfile; /* mpirun --hostfile, NULL = none (local ranks) */
        char **mpirun;  /* the launcher and its options, NULL-terminated; default: mpirun
                           --bind-to none (+ --allow-run-as-root as root) */
        size_t nmpirun;
    } mpi;
};

struct h2b_matrix_spec {
    uint32_t *connections; /* at least one, each >= 1 */
    size_t nconnections;
    uint32_t *streams; /* requested streams per connection, each >= 1 */
    size_t nstreams;
    uint32_t *frame_sizes; /* client SETTINGS_MAX_FRAME_SIZE sweep (bytes); empty = default */
    size_t nframe_sizes;
    uint32_t *window_bits; /* client stream and connection window 2^N-1 sweep; empty = default */
    size_t nwindow_bits;
    char *path; /* request path (default "/hello") */
    /* matrix.grpc: every request a gRPC call (h2bench load --grpc METHOD --grpc-size SIZE
     * --grpc-messages MESSAGES); grpc_method NULL: plain HTTP requests */
    char *grpc_method;
    uint64_t grpc_size;
    uint32_t grpc_messages;
    char *method;           /* "GET" (default) or "POST" */
    uint64_t body_bytes;    /* POST body size (0 for GET) */
    uint64_t min_requests;  /* a cell must complete at least this many (default 1000) */
    uint64_t requests;      /* count mode: requests per cell (default: min_requests) */
    double duration_s;      /* > 0: timed mode (-D) instead of count mode */
    double warmup_s;        /* timed mode only: unmeasured warm-up */
    double rate;            /* > 0: open loop, this many requests/s in total per cell */
    uint32_t aggregate_cap; /* streams across all connections (default 4096) */
    uint32_t repeats;       /* each cell this many times (default 1) */
    enum h2b_protocol protocols[H2B_PROTO_COUNT]; /* matrix.protocol, in order (default h2) */
    size_t nprotocols;
    bool tls[2]; /* matrix.tls, in order (default [false]) */
    size_t ntls;
    enum h2b_order order;
    /* Load shapes, objectives and the capacity search of every cell (docs/scenarios.md), as
     * text h2bench load parses again: validated here with its own parsers (load/shape.h,
     * load/slo.h), passed on as --stages, --step, --slo, --slo-window and --find-max-*. */
    char *stages; /* --stages, or NULL */
    char *step;   /* --step, or NULL */
    char *slo;    /* --slo of every cell, or NULL */
    /* matrix.slo as an object: per cell, the objectives of the first rule whose --filter terms
     * match it (h2b_expand_cell_slo); a cell no rule matches has none */
    struct h2b_slo_rule {
        struct h2b_cell_filter *filters; /* nfilters terms, any of which matches */
        size_t nfilters;
        char *slo;
    } * slo_rules;
    size_t nslo_rules;
    double slo_window_s; /* --slo-window; 0: the run only */
    struct h2b_find_max_spec {
        bool enabled;
        /* each NAN (retries -1) when not given: h2bench load's default */
        double step_s, warmup_s, start, limit, precision_pct;
        int retries;
    } find_max;
};

/* Per-request budgets (docs/scenarios.md "Benchmark your own server"): each matrix point of
 * each started target measured again, exactly, in passes of their own. */
struct h2b_budgets_spec {
    bool enabled;             /* the scenario has a "budgets" block */
    uint64_t warmup_requests; /* N1: first phase, not counted (default 1000) */
    uint64_t requests;        /* N2: the measured phase (default 2000) */
    bool instructions;        /* the callgrind pass (default true) */
    uint32_t rss_connections; /* connections of the RSS measurement; 0 = skip (default 1000) */
};

struct h2b_micro_spec {
    bool enabled;  /* the scenario has a "micro" block */
    char *filter;  /* regular expression over benchmark names (default ".") */
    char *profile; /* quick, ci or precise (default "ci") */
    uint32_t cpu;  /* the runner and its forks are pinned here (default 0) */
};

/* "perf_record": CPU profiles of the targets during some cells (docs/profiles.md). */
struct h2b_perf_record_spec {
    char *cells; /* the --filter syntax; NULL: no perf_record block */
    bool client; /* profile the client too (default false) */
};

struct h2b_scenario {
    char *name;
    char *description;
    struct h2b_target_spec *targets;
    size_t ntargets;
    struct h2b_client_spec client;
    bool has_matrix;
    struct h2b_matrix_spec matrix;
    struct h2b_budgets_spec budgets;
    struct h2b_micro_spec micro;
    struct h2b_perf_record_spec perf_record;
};

/* Builds a scenario from a parsed JSON document. src (may be NULL) locates errors: on a document
 * that is not a valid scenario, diag gets "file:line:column: field.path: what was expected".
 * Peer names are checked against known_peers (NULL-terminated; NULL skips the check).
 * Returns H2B_OK, H2B_ERR_PARSE or H2B_ERR_NOMEM. *out is untouched on failure. */
int h2b_scenario_load(const json_t *doc, const struct h2b_json_src *src,
                      const char *const *known_peers, struct h2b_scenario **out,
                      struct h2b_diag *diag);

/* Frees a scenario (NULL is fine). */
void h2b_scenario_del(struct h2b_scenario *s);

/* Index of the target called name, or -1. */
int h2b_scenario_find_target(const struct h2b_scenario *s, const char *name);

#endif
